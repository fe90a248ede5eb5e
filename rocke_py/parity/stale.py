"""The stale-build guard, checked before a command loads the C engine: in a source checkout, a
C file newer than the built extension means the gate would compare an old C engine. That is a
setup error (exit 2) naming the command that rebuilds it — never a parity failure, and never in
the way of a command that needs only the Python engine (``emit --engine py``, ``check-llvm``).

The extension is found without importing it (the harness loads engines in its workers only).
``ROCKE_PARITY_ALLOW_STALE=1`` turns the guard off, as it does for ``rocke_py.cbridge``."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

from rocke_py.parity.engines import EngineSpec

_DEFAULT_C = EngineSpec().c_emit
_EXTENSION = "rocke_py._rocke_c"


def c_source_dir() -> Path:
    return Path(__file__).resolve().parents[2] / "rocke_c"


def newer_sources(src: Path, built_mtime: float) -> list[str]:
    """The C sources and headers under ``src`` changed after ``built_mtime``, as repository paths."""
    if not src.is_dir():
        return []
    files = [*src.glob("src/*.[ch]"), *src.glob("include/*.h")]
    return sorted(f.relative_to(src.parent).as_posix() for f in files if f.stat().st_mtime > built_mtime)


def stale_build(spec: EngineSpec) -> str | None:
    """Why the C engine of ``spec`` must be rebuilt first, or None (another engine, no extension, up to date)."""
    if spec.c_emit != _DEFAULT_C or os.environ.get("ROCKE_PARITY_ALLOW_STALE") == "1":
        return None
    try:
        found = importlib.util.find_spec(_EXTENSION)
    except (ImportError, ValueError):
        return None
    if found is None or not found.origin:
        return None
    src = c_source_dir()
    changed = newer_sources(src, Path(found.origin).stat().st_mtime)
    if not changed:
        return None
    return (
        f"the C engine extension is older than {changed[0]} ({len(changed)} file(s) changed since it was built): "
        f"rebuild it with `{sys.executable} -m pip install -e {src.parent}` "
        "(or set ROCKE_PARITY_ALLOW_STALE=1 to run the old build)"
    )
