"""The repository root: the nearest directory at or above the working one holding ``parity_configs/``.

Its own small module so that the command line finds the root (for the gate's early workers,
:mod:`rocke_py.parity.cli`) without importing discovery."""

from __future__ import annotations

from pathlib import Path

CONFIG_DIR = "parity_configs"


class RootNotFound(Exception):
    """No directory containing ``parity_configs/`` at or above the start directory."""


def find_root(start: Path | None = None) -> Path:
    """The nearest directory at or above ``start`` (default: cwd) that contains ``parity_configs/``."""
    here = (start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        if (d / CONFIG_DIR).is_dir():
            return d
    raise RootNotFound(f"no {CONFIG_DIR}/ directory in {here} or any parent (use --root)")


def resolve_root(given: str | None) -> Path | None:
    """The tree a command works on: ``--root``'s directory (resolved), else the one found from the
    working directory; None when none is found (the command reports that itself)."""
    try:
        return Path(given).resolve() if given else find_root()
    except (RootNotFound, OSError):
        return None
