"""Fixtures the harness tests share."""

from __future__ import annotations

import pytest
from cbuild import shared_library


@pytest.fixture(scope="module")
def crash_at_lower(tmp_path_factory) -> str:
    """The C engine built to crash (SIGSEGV) in its lower_kernel stage, as a shared library
    for tests/support/crashing_c_engine.py; skipped where no C compiler builds it."""
    out = tmp_path_factory.mktemp("crash-lower")
    try:
        return str(shared_library(out, defines=['-DROCKE_CRASH_AT_STAGE="lower_kernel"']))
    except FileNotFoundError as e:
        pytest.skip(str(e))
