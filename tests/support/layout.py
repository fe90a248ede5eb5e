"""Where things are: the repository root, for tests that read its files (tests/conftest.py puts
tests/support on the import path)."""

from __future__ import annotations

from pathlib import Path

#: The repository root.
REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"
