"""Wrapped real engines with one narrow seeded fault each, for the fuzzer's tests (as
tests/faults/fault_engines.py does for the gate).

A fault fires only for one combination of the *normalised* spec (the real engine's mode
``spec`` output), so that the fuzzer must draw it and the reducer must keep exactly what it
needs: ``differ`` changes one line of the C engine's spec output on gfx942 with epilogue
cshuffle and tile_k 32; ``segv`` kills the worker (a real SIGSEGV) in the C engine on gfx942
with the default epilogue and tile_k 64 (fwd's default is 128).
"""

from __future__ import annotations

import ctypes

from rocke_py import cbridge
from rocke_py import engine as py_engine
from rocke_py.engine.result import Emitted

DIFFER_WHEN = ("arch = gfx950", "epilogue = cshuffle", "tile_k = 32")
SEGV_WHEN = ("arch = gfx942", "epilogue = default", "tile_k = 64")


def implemented_modes() -> tuple[str, ...]:
    return ("spec", "ir", "ll")


def _hits(config: bytes, when: tuple[str, ...]) -> bool:
    out = cbridge.emit(config, "spec", "llvm22")
    if not isinstance(out, Emitted):
        return False
    lines = set(out.text.splitlines())
    return all(w in lines for w in when)


def real_py(config, mode, flavor):
    return py_engine.emit(config, mode, flavor)


def differ_c(config, mode, flavor):
    out = cbridge.emit(config, mode, flavor)
    if isinstance(out, Emitted) and _hits(config, DIFFER_WHEN):
        return Emitted(out.text.replace("\nlds_bytes = ", "\nlds_bytes = 1", 1))
    return out


def segv_c(config, mode, flavor):
    if _hits(config, SEGV_WHEN):
        ctypes.string_at(0)
    return cbridge.emit(config, mode, flavor)
