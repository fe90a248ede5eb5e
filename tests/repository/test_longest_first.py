"""The suite's order: conftest.LONGEST_FIRST names real modules, and collection puts their tests
first (a renamed module would silently drop out of the list and run last again)."""

from __future__ import annotations

from pathlib import Path

import conftest
from layout import REPO


def test_every_listed_module_exists_once() -> None:
    assert len(set(conftest.LONGEST_FIRST)) == len(conftest.LONGEST_FIRST)
    for path in conftest.LONGEST_FIRST:
        assert (REPO / path).is_file(), path


def test_collection_runs_the_listed_modules_first() -> None:
    class Item:
        def __init__(self, path: str) -> None:
            self.path = REPO / path

    class Config:
        rootpath = REPO

    others = ["tests/engines/test_ops.py", "tests/parity/test_config_parity.py"]
    items = [Item(p) for p in [others[0], *reversed(conftest.LONGEST_FIRST), others[1]]]
    conftest.pytest_collection_modifyitems(Config(), items)  # type: ignore[arg-type]
    order = [Path(i.path).relative_to(REPO).as_posix() for i in items]
    assert order == [*conftest.LONGEST_FIRST, *others]
