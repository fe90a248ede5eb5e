"""docs/gate-honesty.md's table of hostile inputs names tests that exist: a row whose test was
renamed or deleted would claim a fault is caught when nothing checks it."""

from __future__ import annotations

import re

from layout import REPO

DOC = REPO / "docs" / "gate-honesty.md"
SECTION = "## Hostile inputs and faults around the gate"


def hostile_rows(text: str) -> list[str]:
    """The table's rows (the lines that start with `|` after the section heading, up to the
    next heading)."""
    body = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    return [line for line in body.splitlines() if line.startswith("| ") and not line.startswith("| #")]


def named_tests(row: str) -> list[tuple[str, str | None]]:
    """(file, test name or None for the whole file) for each test the row's last cell names;
    `::name` alone continues the file named before it."""
    cell = row.rstrip(" |").rsplit(" | ", 1)[1]
    out: list[tuple[str, str | None]] = []
    for ref in re.findall(r"`([^`]+)`", cell):
        path, _, name = ref.partition("::")
        path = path or out[-1][0]
        out.append((path, name or None))
    return out


def missing(text: str) -> list[str]:
    problems = []
    for row in hostile_rows(text):
        refs = named_tests(row)
        if not refs:
            problems.append(f"names no test: {row[:80]}")
        for path, name in refs:
            file = REPO / path
            if not file.is_file():
                problems.append(f"no file {path}")
            elif name is not None and not re.search(rf"^def {re.escape(name)}\(", file.read_text(), re.MULTILINE):
                problems.append(f"no test {path}::{name}")
    return problems


def test_every_row_names_a_test_that_exists() -> None:
    text = DOC.read_text()
    assert len(hostile_rows(text)) >= 16
    assert missing(text) == []


def test_a_renamed_test_is_caught() -> None:
    text = DOC.read_text().replace("::test_a_deep_config_fails_its_family", "::test_a_deep_config_breaks_its_family")
    name = "test_a_deep_config_breaks_its_family_in_every_command_and_no_other"
    assert missing(text) == [f"no test tests/harness/test_hostile_readers.py::{name}"]
