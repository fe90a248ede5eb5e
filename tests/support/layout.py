"""Where things are: the repository root, for tests that read its files (tests/conftest.py puts
tests/support on the import path)."""

from __future__ import annotations

from pathlib import Path

#: The repository root.
REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"

#: The functions of rocke.h's public API (pinned: an addition is a reviewed change).
PUBLIC_API = frozenset(
    {
        "rocke_emit",
        "rocke_result_free",
        "rocke_implemented_modes",
        "rocke_version",
        "rocke_context_new",
        "rocke_emit_in",
        "rocke_context_free",
        "rocke_context_set_note",
    }
)
