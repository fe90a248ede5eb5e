"""A pytest plugin for scripts/seeded_faults.py: the tests likeliest to catch a fault run first.

``ROCKE_SEEDED_FIRST`` holds node-id prefixes (os.pathsep between them); the collected tests
whose id starts with one move to the front, in the order of the prefixes, the rest keeping
theirs. Under ``-x`` a caught fault then stops the run in seconds instead of after the suite's
slow modules; a fault nothing catches still runs every test, so the order never changes whether
the suite fails, only how soon it says so. Every xdist worker sorts the same collection the
same way, as xdist requires."""

from __future__ import annotations

import os

import pytest

ENV = "ROCKE_SEEDED_FIRST"


def prefixes() -> list[str]:
    return [p for p in os.environ.get(ENV, "").split(os.pathsep) if p]


def rank(nodeid: str, first: list[str]) -> int:
    return next((i for i, p in enumerate(first) if nodeid.startswith(p)), len(first))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    first = prefixes()
    if first:
        items.sort(key=lambda item: rank(item.nodeid, first))
