"""The suite's order: suite_order.LONGEST_FIRST names real modules, and collection puts their
tests first (a renamed module would silently drop out of the list and run last again)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from layout import REPO
from suite_order import LONGEST_FIRST, longest_first


def test_every_listed_module_exists_once() -> None:
    assert len(set(LONGEST_FIRST)) == len(LONGEST_FIRST)
    for path in LONGEST_FIRST:
        assert (REPO / path).is_file(), path


@dataclass
class Item:
    path: Path
    name: str = ""


def test_the_listed_modules_go_first_in_order_and_the_rest_keep_theirs() -> None:
    others = ["tests/engines/test_ops.py", "tests/parity/test_config_parity.py"]
    items = [Item(REPO / others[0], "a"), *(Item(REPO / p) for p in reversed(LONGEST_FIRST))]
    items += [Item(REPO / LONGEST_FIRST[0], "second test of the first module"), Item(REPO / others[1], "b")]
    longest_first(items, REPO)
    order = [(i.path.relative_to(REPO).as_posix(), i.name) for i in items]
    first = [(LONGEST_FIRST[0], ""), (LONGEST_FIRST[0], "second test of the first module")]
    assert order == [*first, *((p, "") for p in LONGEST_FIRST[1:]), (others[0], "a"), (others[1], "b")]
