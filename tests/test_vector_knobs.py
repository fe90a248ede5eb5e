"""No vector knob is accepted and then ignored (docs/engine-contract.md §6.1).

vector_size_a, _b and _c are caps on the load and store widths (reference §3.1). For each
knob, on bases of every family (and the dgrad cases that force a width: split-K, a stride,
the default epilogue), each value either is rejected, in every mode, or gives an IR of its
own: two accepted values never build the same kernel. The accepted values are exactly the
powers of two within the cap that divide the operand's stride-1 run. Both engines, which
must agree (tests/engines.py)."""
from __future__ import annotations

import pytest

from engines import both, config_text
from rocke_py.engine.result import Emitted, Rejected

VALUES = (1, 2, 3, 4, 5, 6, 8, 16, 65536)

# (id, family, problem overrides, spec fields, {knob: the values that must be accepted}).
# cpg = kpg = 64 (fp16): the natural width is 8 for every operand.
BASES = [
    ("fwd", "fwd", {}, {}, {"vector_size_a": {1, 2, 4, 8}, "vector_size_b": {1, 2, 4, 8},
                            "vector_size_c": {1}}),
    ("fwd-cshuffle", "fwd", {}, {"epilogue": "cshuffle"}, {"vector_size_c": {1, 2, 4, 8}}),
    ("fwd-cshuffle-fp32d", "fwd", {}, {"epilogue": "cshuffle", "dtype_d": "fp32"},
     {"vector_size_c": {1, 2, 4}}),
    ("fwd-k12", "fwd", {"K": 12}, {"epilogue": "cshuffle"}, {"vector_size_c": {1, 2, 4}}),
    ("wgrad", "wgrad", {}, {}, {"vector_size_a": {1, 2, 4, 8}, "vector_size_b": {1, 2, 4, 8},
                                "vector_size_c": {1}}),
    ("wgrad-cshuffle", "wgrad", {}, {"epilogue": "cshuffle"}, {"vector_size_c": {1, 2, 4, 8}}),
    ("wgrad-c48", "wgrad", {"C": 48, "K": 48}, {"epilogue": "cshuffle"},
     {"vector_size_a": {1, 2, 4, 8}, "vector_size_b": {1, 2, 4, 8}, "vector_size_c": {1, 2, 4, 8}}),
    ("wgrad-split-k", "wgrad", {}, {"split_k": 2, "epilogue": "cshuffle"},
     {"vector_size_a": {1, 2, 4, 8}, "vector_size_c": {1, 2, 4, 8}}),
    ("dgrad", "dgrad", {}, {}, {"vector_size_a": {1, 2, 4, 8}, "vector_size_b": {1, 2, 4, 8},
                                "vector_size_c": {1}}),
    ("dgrad-cshuffle", "dgrad", {}, {"epilogue": "cshuffle"}, {"vector_size_c": {1, 2, 4, 8}}),
    ("dgrad-k48", "dgrad", {"C": 48, "K": 48}, {"epilogue": "cshuffle"},
     {"vector_size_a": {1, 2, 4, 8}, "vector_size_b": {1, 2, 4, 8}, "vector_size_c": {1, 2, 4, 8}}),
    ("dgrad-kouter", "dgrad", {}, {"lds_k_outer": True}, {"vector_size_b": {1, 2, 4, 8}}),
    ("dgrad-split-k", "dgrad", {}, {"split_k": 2, "dtype_d": "fp32"},
     {"vector_size_a": {1}, "vector_size_b": {1, 2, 4, 8}, "vector_size_c": {1}}),
    ("dgrad-split-k-cshuffle", "dgrad", {}, {"split_k": 2, "epilogue": "cshuffle"},
     {"vector_size_a": {1}, "vector_size_c": {1, 2, 4, 8}}),
    ("dgrad-stride2", "dgrad", {"sH": 2, "sW": 2}, {}, {"vector_size_a": {1, 2, 4, 8},
                                                         "vector_size_c": {1}}),
    ("dgrad-fp32", "dgrad", {}, {"dtype_a": "fp32", "dtype_b": "fp32", "dtype_d": "fp32",
                                 "warp_tile_k": 2},
     {"vector_size_a": {1, 2, 4}, "vector_size_b": {1, 2, 4}}),
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
    zeros = {line.split(" : ")[0].strip() for line in ir_text.splitlines()
             if "arith.constant" in line and "value = i:0 }" in line}
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
    assert any("n = i:2" in line for line in loads)       # A along k (and fwd's B)
    if family == "fwd":
        assert all("n = i:4" not in line for line in loads)   # dgrad's B runs along mn: 4 is fine
