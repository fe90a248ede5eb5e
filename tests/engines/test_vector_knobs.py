"""No knob is accepted and then ignored (docs/engine-contract.md §6.1).

vector_size_a, _b and _c are caps on the load and store widths
(docs/reference/conv-semantics.md §3.1). For each knob, on bases of every family (and the dgrad
cases that force a width: split-K, a stride, the default epilogue), each value either is
rejected, in every mode, or gives an IR of its own: two accepted values never build the same
kernel. The accepted values are exactly the powers of two within the cap that divide the
operand's stride-1 run. Then every other spec field: set to a value other than its default, it
changes the kernel or is rejected. Both engines, which must agree (tests/support/two_engines.py)."""

from __future__ import annotations

import pytest
from two_engines import both, config_text

from rocke_py.engine.result import Emitted, Rejected

VALUES = (1, 2, 3, 4, 5, 6, 8, 16, 65536)

# (id, family, problem overrides, spec fields, {knob: the values that must be accepted}).
# cpg = kpg = 64 (fp16): the natural width is 8 for every operand.
VA, VB, VC = "vector_size_a", "vector_size_b", "vector_size_c"
W1, W4, W8 = frozenset({1}), frozenset({1, 2, 4}), frozenset({1, 2, 4, 8})  # the accepted widths
BASES = [
    ("fwd", "fwd", {}, {}, {VA: W8, VB: W8, VC: W1}),
    ("fwd-cshuffle", "fwd", {}, {"epilogue": "cshuffle"}, {VC: W8}),
    ("fwd-cshuffle-fp32d", "fwd", {}, {"epilogue": "cshuffle", "dtype_d": "fp32"}, {VC: W4}),
    ("fwd-k12", "fwd", {"K": 12}, {"epilogue": "cshuffle"}, {VC: W4}),
    ("wgrad", "wgrad", {}, {}, {VA: W8, VB: W8, VC: W1}),
    ("wgrad-cshuffle", "wgrad", {}, {"epilogue": "cshuffle"}, {VC: W8}),
    ("wgrad-c48", "wgrad", {"C": 48, "K": 48}, {"epilogue": "cshuffle"}, {VA: W8, VB: W8, VC: W8}),
    ("wgrad-split-k", "wgrad", {}, {"split_k": 2, "epilogue": "cshuffle"}, {VA: W8, VC: W8}),
    ("dgrad", "dgrad", {}, {}, {VA: W8, VB: W8, VC: W1}),
    ("dgrad-cshuffle", "dgrad", {}, {"epilogue": "cshuffle"}, {VC: W8}),
    ("dgrad-k48", "dgrad", {"C": 48, "K": 48}, {"epilogue": "cshuffle"}, {VA: W8, VB: W8, VC: W8}),
    ("dgrad-kouter", "dgrad", {}, {"lds_k_outer": True}, {VB: W8}),
    ("dgrad-split-k", "dgrad", {}, {"split_k": 2, "dtype_d": "fp32"}, {VA: W1, VB: W8, VC: W1}),
    ("dgrad-split-k-cshuffle", "dgrad", {}, {"split_k": 2, "epilogue": "cshuffle"}, {VA: W1, VC: W8}),
    ("dgrad-stride2", "dgrad", {"sH": 2, "sW": 2}, {}, {VA: W8, VC: W1}),
    # runs of 12: a power of two over the run's widest divisor (8 > 4) would only be capped
    ("fwd-c12", "fwd", {"C": 12}, {}, {VA: W4, VB: W4}),
    ("wgrad-c12", "wgrad", {"C": 12, "K": 12}, {}, {VA: W4, VB: W4}),
    ("dgrad-c12", "dgrad", {"C": 12, "K": 12}, {}, {VA: W4, VB: W4}),
    (
        "dgrad-fp32",
        "dgrad",
        {},
        {"dtype_a": "fp32", "dtype_b": "fp32", "dtype_d": "fp32", "warp_tile_k": 2},
        {VA: W4, VB: W4},
    ),
]

CASES = [(base, knob) for base in BASES for knob in sorted(base[4])]


@pytest.mark.parametrize("base,knob", CASES, ids=[f"{b[0]}-{k}" for b, k in CASES])
def test_each_accepted_vector_size_builds_its_own_kernel(base, knob) -> None:
    _, family, problem, spec, accepted = base
    irs: dict[str, int] = {}
    emitted = set()
    for value in VALUES:
        text = config_text(family, problem=problem, **spec, **{knob: value})
        verdict = both(text, "spec")
        ir = both(text, "ir")
        assert type(ir) is type(verdict), (knob, value, verdict, ir)
        if isinstance(verdict, Rejected):
            assert ir == verdict, (knob, value)
            continue
        assert isinstance(ir, Emitted)
        emitted.add(value)
        assert ir.text not in irs, f"{knob} = {value} builds the same kernel as {knob} = {irs.get(ir.text)}"
        irs[ir.text] = value
    assert emitted == accepted[knob]


def zero_divisors(ir_text: str) -> list[str]:
    """The arith.div / arith.mod ops of the IR whose divisor is an i32 constant 0."""
    zeros = {
        line.split(" : ")[0].strip()
        for line in ir_text.splitlines()
        if "arith.constant" in line and "value = i:0 }" in line
    }
    ops = []
    for line in ir_text.splitlines():
        if " = arith.div (" in line or " = arith.mod (" in line:
            divisor = line.split("(")[1].split(")")[0].split(",")[1].strip()
            if divisor in zeros:
                ops.append(line.strip())
    return ops


@pytest.mark.parametrize("family", ["fwd", "dgrad"])
@pytest.mark.parametrize("tile_k", [2, 6, 10])
def test_load_width_along_k_fits_the_tile(family: str, tile_k: int) -> None:
    """fp32 with the 32x32x2 atom: the default width 4 along k does not divide tile_k, so the
    loader takes 2 (docs/kernels.md §5); it used to divide chunks by tile_k/4 (0 at tile_k = 2)."""
    text = config_text(family, dtype_a="fp32", dtype_b="fp32", dtype_d="fp32", warp_tile_k=2, tile_k=tile_k)
    ir = both(text, "ir")
    assert isinstance(ir, Emitted), ir
    assert not zero_divisors(ir.text)
    loads = [line for line in ir.text.splitlines() if "tile.buffer_load" in line and 'elem = s:"f32"' in line]
    assert any("n = i:2" in line for line in loads)  # A along k (and fwd's B)
    if family == "fwd":
        assert all("n = i:4" not in line for line in loads)  # dgrad's B runs along mn: 4 is fine


# One non-default value per spec field (conv-semantics §3.1, §11). Every one must change the IR of
# the family's baseline or be rejected, in every mode.
FIELD_VALUES = {
    "name": "kx",
    "dtype_a": "bf16",
    "dtype_b": "bf16",
    "dtype_d": "fp32",
    "tile_m": 128,
    "tile_n": 128,
    "tile_k": 32,
    "warp_m": 1,
    "warp_n": 1,
    "warp_tile_m": 16,
    "warp_tile_n": 16,
    "warp_tile_k": 8,
    "wave_size": 32,
    "pipeline": "compv3",
    "epilogue": "cshuffle",
    "async_dma": True,
    "unroll_k": True,
    "lds_k_pad": 4,
    "lds_layout_pad": 4,
    "lds_layout_xor": 4,
    "vector_size_a": 4,
    "vector_size_b": 4,
    "vector_size_c": 4,
    "chiplet_swizzle": True,
    "chiplet_wgm": 4,
    "chiplet_num_xcds": 4,
    "chiplet_chunk_size": 32,
    "waves_per_eu": 2,
    "bias": -2,
    "scale": 3,
    "relu": True,
    "clamp_min": -1,
    "clamp_max": 6,
    "lds_k_outer": True,
    "split_k": 2,
    "two_stage": True,
    "force_deterministic": True,
    "group_merge": 2,
    "num_load_waves": 8,
    "cshuffle_no_alias": True,
}
FAMILY_ONLY = {
    "lds_k_outer": ("wgrad", "dgrad"),
    "split_k": ("wgrad", "dgrad"),
    "two_stage": ("wgrad",),
    "force_deterministic": ("wgrad",),
    "group_merge": ("wgrad",),
    "num_load_waves": ("dgrad",),
    "cshuffle_no_alias": ("dgrad",),
}
# Baselines: each family's default, and the states that make other fields moot (K-outer, an
# explicit layout, the swizzle on, cshuffle).
FIELD_BASES = [
    ("fwd", {}),
    ("wgrad", {}),
    ("dgrad", {}),
    ("wgrad", {"lds_k_outer": True}),
    ("dgrad", {"lds_k_outer": True}),
    ("fwd", {"lds_layout_pad": 16}),
    ("dgrad", {"lds_layout_pad": 16}),
    ("wgrad", {"chiplet_swizzle": True}),
    ("fwd", {"epilogue": "cshuffle"}),
    ("dgrad", {"epilogue": "cshuffle"}),
]
# Fields whose reference meaning is conditional, so that on a baseline they change nothing.
CONDITIONAL = {
    # promoted to two-stage only when split_k > 1 (conv-semantics §4.1); at split_k = 1 the kernel is deterministic
    "force_deterministic": lambda spec: True,
    # the XCD step applies only when the grid is a multiple of num_xcds*chunk (docs/kernels.md §3);
    # the baseline's 9-tile grid is not
    "chiplet_num_xcds": lambda spec: spec.get("chiplet_swizzle", False),
    "chiplet_chunk_size": lambda spec: spec.get("chiplet_swizzle", False),
}
FIELD_CASES = [
    (family, base, key)
    for family, base in FIELD_BASES
    for key in FIELD_VALUES
    if family in FAMILY_ONLY.get(key, (family,))
    and key not in base
    and not (key in CONDITIONAL and CONDITIONAL[key](base))
]


def base_id(family: str, base: dict) -> str:
    return "-".join([family] + [f"{k}={v}" for k, v in base.items()])


@pytest.mark.parametrize("family,base,key", FIELD_CASES, ids=[f"{base_id(f, b)}-{k}" for f, b, k in FIELD_CASES])
def test_each_field_changes_the_kernel_or_is_rejected(family: str, base: dict, key: str) -> None:
    start = both(config_text(family, **base), "ir")
    assert isinstance(start, Emitted), start
    text = config_text(family, **base, **{key: FIELD_VALUES[key]})
    verdict = both(text, "spec")
    ir = both(text, "ir")
    if isinstance(verdict, Rejected):
        assert ir == verdict
        return
    assert isinstance(ir, Emitted), ir
    if key == "name":  # the name is all that name changes
        assert ir.text != start.text
        return
    body, start_body = ir.text.split("{", 1)[1], start.text.split("{", 1)[1]  # past the kernel name
    assert body != start_body, f"{key} = {FIELD_VALUES[key]} is accepted and builds the baseline's kernel"
