"""What every command takes from its parsed arguments: the engine pair and the root."""

from __future__ import annotations

import argparse
from pathlib import Path

from rocke_py.parity.judge.jobs import UsageError
from rocke_py.parity.run.engines import EngineSpec
from rocke_py.parity.run.root import find_root


def engines_of(args: argparse.Namespace, needs_c: bool = True) -> EngineSpec:
    """The engine pair; a C engine that does not build from the tree's sources is a setup error
    (exit 2) when the command runs it."""
    from rocke_py.parity.run.tree import ensure_c_engine

    try:
        spec = EngineSpec.parse(args.engines) if args.engines else EngineSpec()
    except ValueError as e:
        raise UsageError(str(e)) from None
    if needs_c:
        try:
            ensure_c_engine(spec.c_emit)
        except ImportError as e:
            raise UsageError(str(e)) from None
    return spec


def root_of(args: argparse.Namespace) -> Path:
    if args.root:
        return Path(args.root).resolve()
    return find_root()


def csv_items(text: str) -> list[str]:
    """The items of a comma-separated option, blanks dropped."""
    return [t.strip() for t in text.split(",") if t.strip()]
