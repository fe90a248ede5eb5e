"""A C engine that crashes where a test says: the real engine built by the test as a shared
library with ``-DROCKE_CRASH_AT_STAGE="STAGE"`` (rocke_c/src/emit.c raises SIGSEGV as that stage
starts), opened in cffi's ABI mode from the path in ROCKE_TEST_C_LIBRARY and run through the
bridge's own CEngine. Used as the C side of ``--engines`` by tests/harness/test_c_crash_note.py:

    rocke_py.engine:emit,tests/support/crashing_c_engine.py:emit
"""

from __future__ import annotations

import os
from pathlib import Path

from cffi import FFI

from rocke_py.cbridge import CEngine

ROOT = Path(__file__).resolve().parents[2]


def _declarations() -> str:
    from rocke_py.cbuild import public_declarations

    return public_declarations((ROOT / "rocke_c" / "include" / "rocke.h").read_text(encoding="utf-8"))


_ffi = FFI()
_ffi.cdef(_declarations())
_engine = CEngine(_ffi, _ffi.dlopen(os.environ["ROCKE_TEST_C_LIBRARY"]))

emit = _engine.emit
attach_note = _engine.attach_note
implemented_modes = _engine.implemented_modes
