"""``tomllib`` (Python 3.11+), or the ``tomli`` backport on 3.10. The harness may use it; the engines may not."""

from __future__ import annotations

try:
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

__all__ = ["tomllib"]
