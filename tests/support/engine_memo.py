"""Each engine's result for one (config bytes, mode, flavor), computed once per test process.

Several modules run the same job of a shipped config (test_config_parity, test_verdict_per_mode,
test_flavor_diff, test_mode_ir_parity, the bad-input corpus twice over); an engine is a pure
function of its input, so they share one result. test_config_parity checks that purity: it
compares the kept result with a fresh run of each engine. A raise is never kept (the next
call raises again), and a C result equal to the Python one is kept as that same object, so a
worker holds one copy of each text."""

from __future__ import annotations

from typing import Callable

from rocke_py import cbridge
from rocke_py import engine as py_engine
from rocke_py.engine.result import Emitted, Rejected

Result = Emitted | Rejected
_KEPT: dict[tuple[str, bytes, str, str], Result] = {}


def _kept(engine: str, fn: Callable[[bytes, str, str], Result], data: bytes, mode: str, flavor: str) -> Result:
    key = (engine, bytes(data), mode, flavor)
    out = _KEPT.get(key)
    if out is None:
        out = fn(key[1], mode, flavor)
        twin = _KEPT.get(("c" if engine == "py" else "py", key[1], mode, flavor))
        _KEPT[key] = twin if twin is not None and twin == out else out
        out = _KEPT[key]
    return out


def py_emit(data: bytes, mode: str, flavor: str) -> Result:
    """rocke_py.engine.emit(data, mode, flavor), once per process."""
    return _kept("py", py_engine.emit, data, mode, flavor)


def c_emit(data: bytes, mode: str, flavor: str) -> Result:
    """rocke_py.cbridge.emit(data, mode, flavor), once per process."""
    return _kept("c", cbridge.emit, data, mode, flavor)
