"""CONV_INT32_RANGE (docs/engine-contract.md §8.2): every tensor byte size and every i32 the
kernel computes across its padded grid fits in an i32, in both engines alike. Each bound is
tried one knob step below (the bound holds) and one step above (the rule fires); a "below"
that another, later i32 check still rejects is marked so (those bounds are implied by a
later offset's, so their own message only ever comes first)."""

from __future__ import annotations

import re

import pytest
from two_engines import both, config_text

from rocke_py.engine.result import Emitted, Rejected

PW = {"N": 1, "Hi": 1, "Wi": 1, "C": 1, "K": 1, "Y": 1, "X": 1, "pH": 0, "pW": 0}
T16 = {"tile_m": 16, "tile_n": 16, "tile_k": 16, "warp_m": 1, "warp_n": 1, "warp_tile_m": 16, "warp_tile_n": 16}
DGRAD_BLOCK_X = {
    "Hi": 1,
    "Wi": 1,
    "C": 256,
    "K": 16,
    "Y": 2,
    "X": 1,
    "sH": 2,
    "sW": 1,
    "pH": 1048574,
    "pW": 0,
    "dH": 2097147,
    "dW": 1,
}
DGRAD_M = {"N": 2, "Hi": 1, "Wi": 1, "C": 64, "K": 64, "Y": 2, "X": 2, "sH": 2, "sW": 2, "pH": 65532, "dH": 131063}
TILE_48 = {"tile_m": 48, "warp_m": 3, "warp_tile_m": 16, "warp_tile_n": 16}
DX_ROW = {
    "N": 64,
    "Hi": 2049,
    "Wi": 3,
    "C": 64,
    "K": 2,
    "Y": 3,
    "X": 2,
    "sH": 2048,
    "sW": 1,
    "pW": 1,
    "dH": 8388609,
    "dW": 1,
}

# ((id, family, problem, spec), (knob, below, above, message prefix of the bound, below emits))
# knob: a problem key, or "spec.<key>"; for dgrad-m-index it sets pW (and dW = 2*pW - 1).
CASES = [
    (
        ("fwd-X-bytes", "fwd", {**PW, "Wi": 1024, "C": 1024, "K": 64}, {}),
        ("Hi", 1023, 1024, "X_bytes = N*Hi*Wi*C*2 exceeds", True),
    ),
    (("fwd-X-offset", "fwd", {**PW, "Hi": 3, "C": 16384}, {}), ("N", 21824, 21825, "the X byte offset", True)),
    (
        ("fwd-input-coordinate", "fwd", {**PW, "sH": 1048576}, {}),
        ("pH", 1073741823, 1073741824, "the input coordinate hi = ho*sH + y*dH - pH", True),
    ),
    (("fwd-W-offset", "fwd", {**PW, "K": 65}, {}), ("C", 8388608, 8388609, "the W byte offset", True)),
    (("fwd-Y-offset", "fwd", {**PW, "K": 49152}, {}), ("N", 21824, 21825, "the Y byte offset", True)),
    (("fwd-Y-bytes", "fwd", {**PW, "K": 65536}, {}), ("N", 16383, 16384, "Y_bytes = N*Ho*Wo*K*2 exceeds", True)),
    (
        ("fwd-chiplet-width", "fwd", {**PW, "K": 4194304}, {"chiplet_swizzle": True}),
        ("spec.chiplet_wgm", 32767, 32768, "the chiplet super-tile width", True),
    ),
    (
        ("wgrad-dW-bytes", "wgrad", {"N": 1, "Hi": 8, "Wi": 8, "K": 32768, "Y": 1, "X": 1, "pH": 0, "pW": 0}, {}),
        ("C", 32767, 32768, "dW_bytes = K*Y*X*cpg*2 exceeds", True),
    ),
    (
        ("wgrad-K-loop", "wgrad", {}, {"dtype_d": "fp32"}),
        ("spec.split_k", 33554431, 33554432, "the K loop runs to", False),
    ),
    (
        (
            "wgrad-grid-z",
            "wgrad",
            {"C": 129, "K": 129, "groups": 129},
            {"dtype_d": "fp32", "tile_k": 16, "warp_tile_k": 16},
        ),
        ("spec.split_k", 16647160, 16647161, "block_id z", False),
    ),
    (("wgrad-dY-offset", "wgrad", {**PW, "K": 49152}, {}), ("Wi", 21824, 21825, "the dY byte offset", True)),
    (("wgrad-X-pointwise", "wgrad", {**PW, "C": 49152}, {}), ("Wi", 21824, 21825, "the X byte offset (k*C + c)", True)),
    (
        ("wgrad-X-im2col", "wgrad", {**PW, "Hi": 3, "C": 16384, "sW": 2}, {}),
        ("N", 21824, 21825, "the X byte offset (((n*Hi + hi)", True),
    ),
    (
        ("wgrad-dW-offset", "wgrad", {"N": 1, "Hi": 8, "Wi": 8, "K": 65, "Y": 1, "X": 1, "pH": 0, "pW": 0}, {}),
        ("C", 8388608, 8388609, "the dW byte offset", True),
    ),
    (
        (
            "wgrad-dW-atomic-elements",
            "wgrad",
            {"N": 1, "Hi": 8, "Wi": 8, "K": 1, "Y": 1, "X": 1, "pH": 0, "pW": 0},
            {"split_k": 2, "dtype_d": "fp32", "tile_m": 1024, "warp_m": 2},
        ),
        ("C", 2097152, 2097153, "the dW element offset", True),
    ),
    (
        ("dgrad-dX-bytes", "dgrad", {"Hi": 64, "Wi": 64, "K": 32}, {}),
        ("N", 4095, 4096, "dX_bytes = N*Hi*Wi*C*2 exceeds", True),
    ),
    (("dgrad-m-index", "dgrad", DGRAD_M, TILE_48), ("pW", 65534, 65536, "sub-GEMM 0: the m index", True)),
    (("dgrad-block-x", "dgrad", DGRAD_BLOCK_X, T16), ("N", 2048, 2049, "block_id x", True)),
    (("dgrad-dY-row", "dgrad", {**PW, "Hi": 8}, {}), ("dH", 34087042, 34087043, "sub-GEMM 0: the dY row ho", False)),
    (("dgrad-dY-offset", "dgrad", {**PW, "K": 49152}, {}), ("N", 21824, 21825, "sub-GEMM 0: the dY byte offset", True)),
    (
        ("dgrad-filter-row", "dgrad", {**PW, "Hi": 2, "Y": 2}, {}),
        ("sH", 34087042, 34087043, "sub-GEMM 0: the filter row y", False),
    ),
    (("dgrad-W-offset", "dgrad", dict(PW), {}), ("C", 16777216, 16777217, "sub-GEMM 0: the W byte offset", True)),
    (("dgrad-dX-row", "dgrad", DX_ROW, {}), ("pH", 2147479552, 2147479553, "sub-GEMM 0: the dX row hi", False)),
    (
        ("dgrad-dX-offset", "dgrad", {**PW, "C": 49152, "K": 64}, {}),
        ("N", 21824, 21825, "sub-GEMM 0: the dX byte offset", True),
    ),
]


def config(family: str, problem: dict, spec: dict, knob: str, value: int) -> str:
    problem, spec = dict(problem), dict(spec)
    if knob.startswith("spec."):
        spec[knob[5:]] = value
    else:
        problem[knob] = value
        if knob == "pW" and family == "dgrad":
            problem["dW"] = 2 * value - 1
    return config_text(family, problem=problem, **spec)


INT_CONSTANT = re.compile(r"value = i:(-?\d+)")


@pytest.mark.parametrize("case", CASES, ids=[c[0][0] for c in CASES])
def test_bound_just_below_and_just_above(case) -> None:
    (_, family, problem, spec), (knob, below, above, prefix, below_emits) = case
    over = config(family, problem, spec, knob, above)
    for mode in ("spec", "ir", "ll"):
        out = both(over, mode)
        assert isinstance(out, Rejected) and out.code == "CONV_INT32_RANGE", out
        assert out.message.startswith(prefix), out.message
    under = both(config(family, problem, spec, knob, below))
    assert not (isinstance(under, Rejected) and under.message.startswith(prefix)), under
    if not below_emits:
        assert isinstance(under, Rejected) and under.code == "CONV_INT32_RANGE", under
        return
    assert isinstance(under, Emitted), under
    ir = both(config(family, problem, spec, knob, below), "ir")
    assert isinstance(ir, Emitted)
    assert all(-(2**31) <= int(v) < 2**31 for v in INT_CONSTANT.findall(ir.text))


def test_issue_example_message() -> None:
    """wgrad C = K = 65536: an 8 GiB dW whose byte size the kernel takes as an i32."""
    text = config_text(
        "wgrad", problem={"N": 1, "Hi": 8, "Wi": 8, "C": 65536, "K": 65536, "Y": 1, "X": 1, "pH": 0, "pW": 0}
    )
    for mode in ("spec", "ir", "ll"):
        out = both(text, mode)
        assert out == Rejected(
            "CONV_INT32_RANGE",
            "dW_bytes = K*Y*X*cpg*2 exceeds 2147483647 (K = 65536, Y = 1, X = 1, cpg = 65536, dtype_d = fp16)",
        )


@pytest.mark.parametrize("family", ["fwd", "wgrad", "dgrad"])
def test_3d_and_grouped_tensor_names(family: str) -> None:
    """The byte-size message names the dims the tensor has: depth in 3-D, cpg for the filter."""
    if family == "dgrad":
        text = config_text("dgrad", problem={"N": 4096, "Hi": 64, "Wi": 64, "C": 128, "K": 16, "groups": 2})
        expected = "dX_bytes = N*Hi*Wi*C*2 exceeds"
    elif family == "wgrad":
        text = config_text(
            "wgrad",
            problem={
                "N": 1,
                "Hi": 1,
                "Wi": 1,
                "C": 65536,
                "K": 65536,
                "groups": 2,
                "Y": 1,
                "X": 1,
                "pH": 0,
                "pW": 0,
                "Di": 1,
                "Z": 1,
                "sD": 1,
                "pD": 0,
                "dD": 1,
            },
        )
        expected = "dW_bytes = K*Z*Y*X*cpg*2 exceeds 2147483647 (K = 65536, Z = 1, Y = 1, X = 1, cpg = 32768"
    else:
        text = config_text(
            "fwd", problem={"N": 64, "Hi": 64, "Wi": 64, "C": 64, "K": 64, "Di": 64, "Z": 1, "sD": 1, "pD": 0, "dD": 1}
        )
        expected = "X_bytes = N*Di*Hi*Wi*C*2 exceeds 2147483647 (N = 64, Di = 64, Hi = 64, Wi = 64, C = 64"
    out = both(text)
    assert isinstance(out, Rejected) and out.code == "CONV_INT32_RANGE" and out.message.startswith(expected), out
