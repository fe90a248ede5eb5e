"""``fuzz --numerics``: the executor's oracle (rocke_py/numerics/fuzzcheck.py) passes a correct
kernel and names what is wrong with a broken one."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rocke_py.fuzz import oracles
from rocke_py.numerics import check as numerics_check
from rocke_py.numerics import fuzz_check
from rocke_py.numerics.variants import small_variant

ROOT = Path(__file__).resolve().parents[2]
CONFIG = (ROOT / "parity_configs" / "wgrad" / "11-kouter-cshuffle.toml").read_bytes()


def test_the_fuzzer_loads_the_check() -> None:
    assert oracles.load_numerics() is fuzz_check


def test_a_correct_kernel_passes() -> None:
    assert fuzz_check(CONFIG, "") is None


def test_swapped_mma_operands_are_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    emit = numerics_check.emit_text

    def broken(config: str, mode: str, engine: str, *flavor: str) -> str:
        text = emit(config, mode, engine, *flavor)
        return re.sub(r"tile\.mma \( (%\w+), (%\w+), ", r"tile.mma ( \2, \1, ", text) if mode == "ir" else text

    monkeypatch.setattr(numerics_check, "emit_text", broken)
    problem = fuzz_check(CONFIG, "")
    assert problem is not None and "wrong" in problem


def test_a_broken_lowering_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The ll of one flavor with A and B of its first MFMA exchanged: the ll level catches it
    and names the flavor and the lockstep departure."""
    emit = numerics_check.emit_text

    def broken(config: str, mode: str, engine: str, *flavor: str) -> str:
        text = emit(config, mode, engine, *flavor)
        if mode != "ll" or flavor != ("llvm23",):
            return text
        return re.sub(r"(f16\(<8 x half> )(%[\w.]+)(, <8 x half> )(%[\w.]+)", r"\1\4\3\2", text, count=1)

    monkeypatch.setattr(numerics_check, "emit_text", broken)
    problem = fuzz_check(CONFIG, "")
    assert problem is not None and "ll llvm23" in problem and "lockstep" in problem


def test_a_small_variant_the_engines_reject_is_no_failure() -> None:
    text = CONFIG.decode().replace("Y = 3", "Y = 11")  # wider than the shrunk input (9): rejected
    small = numerics_check.check_config("small", small_variant(text))
    assert small.error is not None and "rejected" in small.error
    assert fuzz_check(text.encode(), "") is None
