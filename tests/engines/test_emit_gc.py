"""The Python engine pauses the cyclic collector for one emit call (rocke_py/engine/emit.py) and
leaves it as it found it: on, off, after an output, a rejection, and an engine failure."""

from __future__ import annotations

import gc
import importlib
from pathlib import Path

import pytest

from rocke_py import engine
from rocke_py.engine.result import EngineFailure

emit_module = importlib.import_module("rocke_py.engine.emit")  # the module (the package exports emit())

CONFIG = (Path(__file__).resolve().parents[2] / "parity_configs" / "fwd" / "00-baseline.toml").read_bytes()


@pytest.mark.parametrize("start", [True, False])
def test_collector_state_restored(start: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    was = gc.isenabled()
    try:
        gc.enable() if start else gc.disable()
        seen: list[bool] = []
        real = emit_module.print_ir

        def spy(kernel):  # the collector is paused while the kernel is printed
            seen.append(gc.isenabled())
            return real(kernel)

        monkeypatch.setattr(emit_module, "print_ir", spy)
        assert engine.emit(CONFIG, "ir", "llvm22").text
        assert seen == [False] and gc.isenabled() == start
        assert engine.emit(CONFIG, "asm", "llvm22").code == "E_MODE"
        assert gc.isenabled() == start

        def broken(kernel):
            raise EngineFailure("injected")

        monkeypatch.setattr(emit_module, "print_ir", broken)
        with pytest.raises(EngineFailure):
            engine.emit(CONFIG, "ir", "llvm22")
        assert gc.isenabled() == start
    finally:
        gc.enable() if was else gc.disable()
