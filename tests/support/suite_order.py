"""The order the suite's tests are handed to xdist's workers (tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, Sequence

#: The modules whose tests take longest (--durations, on 2 workers), longest first. They run
#: first, so that xdist does not end the run with one worker alone on them while the other is
#: idle (collection order put most of them last: tests/repository/). Whole modules move, so
#: their module-scoped fixtures are still set up once per worker.
LONGEST_FIRST = (
    "tests/repository/test_doc_commands.py",
    "tests/repository/test_ci_runners.py",
    "tests/harness/test_shards_merge.py",
    "tests/harness/test_gate_faults.py",
    "tests/harness/test_hostile_reports.py",
    "tests/repository/test_wheel_install.py",
    "tests/engines/test_kernel_limits.py",
    "tests/harness/test_known_gap_pins.py",
    "tests/repository/test_engine_coverage.py",
    "tests/numerics/test_ll_level.py",
)


class HasPath(Protocol):
    path: Path


def longest_first(items: list, root: Path, listed: Sequence[str] = LONGEST_FIRST) -> None:
    """Sorts `items` (pytest items: anything with a .path) in place: the listed modules' first,
    in the list's order; stable, so the order within a module and among the rest is kept."""
    rank = {path: i for i, path in enumerate(listed)}

    def key(item: HasPath) -> int:
        return rank.get(Path(str(item.path)).relative_to(root).as_posix(), len(rank))

    items.sort(key=key)
