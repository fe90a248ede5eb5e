"""K-outer is bitwise M-outer: per K-outer config, the same config with
lds_k_outer = false gives bitwise the same output on real-valued inputs, and both kernels
feed identical per-lane operands to every tile.mma (so the equality does not rest on the
order in which the hardware sums)."""

from __future__ import annotations

import numpy as np
import pytest
from numerics_kit import REPO, config_path

from rocke_py.exec.executor import run_kernel
from rocke_py.exec.fp import to_f64
from rocke_py.exec.spec_text import spec_fields
from rocke_py.numerics.check import emit_text
from rocke_py.numerics.inputs import build_case, runtime_degrees
from rocke_py.numerics.problem import read_problem
from rocke_py.numerics.run import select
from rocke_py.numerics.variants import small_variant
from rocke_py.parity.commands.newconfig import set_value


def k_outer_configs() -> list[str]:
    """The emitting configs whose spec deduces lds_k_outer = true, but for the async ones
    (async_dma needs K-outer: no M-outer twin)."""
    out = []
    for cfg in select(REPO, []):
        fields = spec_fields(emit_text(cfg.data.decode(), "spec", "py"))
        if fields.get("lds_k_outer") == "true" and fields.get("async_dma") != "true":
            out.append(cfg.id)
    return out


K_OUTER = k_outer_configs()


def test_the_k_outer_configs_are_found() -> None:
    named = [f"dgrad/{n}" for n in ("11-kouter-cshuffle", "12-kouter-atom16x16x16", "13-gfx1250-kouter")] + [
        f"wgrad/{n}" for n in ("11-kouter-cshuffle", "13-kouter-atom16x16x16", "15-gfx1250-kouter-fp32")
    ]
    assert set(named) <= set(K_OUTER)


def run(text: str):
    """(output as float64, [(block ids, A, B) per tile.mma call], the IR)."""
    ir = emit_text(text, "ir", "py")
    p = read_problem(text)
    degree = runtime_degrees(p)[0] if p.split_k == 0 else None  # a runtime split-K kernel's launch degree
    case = build_case(p, real=True, seed=7, degree=degree)
    seen: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    result = run_kernel(
        ir,
        case.buffers,
        case.scalars,
        split_degree=case.split_degree,
        on_mma=lambda op, blocks, a, b: seen.append((blocks, a, b)),
    )
    assert result.ok, [h.message() for h in result.hazards]
    return to_f64(result.buffers[case.output], case.out_elem), seen, ir


@pytest.mark.parametrize("cid", K_OUTER)
def test_k_outer_is_bitwise_m_outer(cid: str) -> None:
    k_outer = small_variant(config_path(cid).read_text(), {"N": 1, "Hi": 6, "Wi": 6})
    m_outer = set_value(k_outer, "spec", "lds_k_outer", "false")
    got_k, mma_k, ir_k = run(k_outer)
    got_m, mma_m, ir_m = run(m_outer)
    assert "ds_read_tr16" in ir_k and "ds_read_tr16" not in ir_m
    assert np.array_equal(got_k, got_m, equal_nan=False)
    assert len(mma_k) == len(mma_m) > 0
    for (bk, ak, bk_), (bm, am, bm_) in zip(mma_k, mma_m):
        assert np.array_equal(bk, bm) and np.array_equal(ak, am) and np.array_equal(bk_, bm_)
