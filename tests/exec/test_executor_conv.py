"""End to end: every emitting config, on a small variant of its problem (batch ≤ 2, input
≤ 9×9, depth ≤ 4; every kernel knob as shipped), run by the executor over its whole grid,
equals the float64 NumPy convolution rounded to dtype_d, bitwise on small-integer inputs,
with no hazard. Non-atomic outputs start as NaN, so an unwritten element fails; dgrad and
split-K outputs start as zero (dgrad with stride > 1 does not yet write the dX positions no
tap reaches, issue 10 item 6)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from kit import emit, emitting_configs, run_conv, small_variant

CONFIGS = emitting_configs()


def test_the_configs_are_found() -> None:
    assert len(CONFIGS) >= 40


@pytest.mark.parametrize("path", CONFIGS, ids=[f"{p.parent.name}/{p.stem}" for p in CONFIGS])
def test_small_variant_matches_reference(path) -> None:
    run = run_conv(small_variant(path))
    assert [h.message() for h in run.result.hazards] == []
    bad = ~(run.got == run.want)
    assert not bad.any(), f"{int(bad.sum())} of {bad.size} elements differ (NaN: {int(np.isnan(run.got).sum())})"


def test_the_c_engine_ir_runs_the_same() -> None:
    text = small_variant(next(p for p in CONFIGS if p.stem == "13-gfx1250-kouter"))
    py, c = run_conv(text, engine="py"), run_conv(text, engine="c")
    assert np.array_equal(py.got, c.got) and np.array_equal(c.got, c.want) and c.result.ok


def config(name: str, n: int = 2) -> str:
    return small_variant(next(p for p in CONFIGS if f"{p.parent.name}/{p.stem}" == name), n=n)


def test_dropped_barrier_is_a_race() -> None:
    text = config("fwd/00-baseline")
    ir = emit(text, "ir")
    first = ir.index("        tile.sync (  )\n")  # the one between the loads and the MMA phase
    run = run_conv(text, ir=ir[:first] + ir[first + len("        tile.sync (  )\n") :])
    assert "lds-race" in {h.kind for h in run.result.hazards}


def test_weakened_async_wait_is_caught() -> None:
    text = config("wgrad/12-kouter-async-split-k4-fp32", n=8)  # two K steps per slice
    assert run_conv(text).result.ok
    ir = re.sub(r"tile.s_waitcnt \(  \) \{ vmcnt = i:\d+ \}", "tile.s_waitcnt (  ) { vmcnt = i:99 }", emit(text, "ir"))
    run = run_conv(text, ir=ir)
    assert "async-early" in {h.kind for h in run.result.hazards}


def test_swapped_mma_operands_give_wrong_numbers() -> None:
    text = config("wgrad/00-baseline")
    ir = re.sub(r"tile\.mma \( (%\w+), (%\w+), ", r"tile.mma ( \2, \1, ", emit(text, "ir"))
    run = run_conv(text, ir=ir)
    assert run.result.ok and not np.array_equal(run.got, run.want)
