"""One verdict per config (docs/gate-honesty.md): every mode gives the same verdict.

For every shipped config, for the whole bad-input corpus (tests/data/bad_configs/) and for a
few hundred generated specs (fixed seed), both engines run modes spec, ir and ll (each
flavor), and
- no engine raises (a build or lowering failure after validation is an engine bug, never a
  rejection: EngineFailure in Python, ROCKE_ERROR in C);
- the verdict — emit, or the rejection's code and message — is the same in every mode, in
  both engines.
The generated specs vary family, arch, tile, atom, vector sizes, epilogue (negative and
large values included), pipeline, async_dma, unroll_k, split_k, LDS layout and the problem,
around valid starting points, with modest problem sizes (docs/engine-contract.md §6.1 lists
the rules that keep such specs from validating and then failing to build). Each case is its
own test id, so a failure names its config."""

from __future__ import annotations

import random
from pathlib import Path

import engine_memo
import pytest
from layout import REPO
from two_engines import BASE_PROBLEM, config_text

from rocke_py import cbridge
from rocke_py import engine as py_engine
from rocke_py.engine.result import Emitted, Rejected
from rocke_py.facts import ARCHS

JOBS = (("spec", "llvm22"), ("ir", "llvm22"), ("ll", "llvm20"), ("ll", "llvm22"), ("ll", "llvm23"))
ENGINES = (("py", py_engine.emit), ("c", cbridge.emit))
# The shipped configs and the bad-input corpus take this worker's kept results: other modules
# run the same jobs (tests/support/engine_memo.py).
KEPT_ENGINES = (("py", engine_memo.py_emit), ("c", engine_memo.c_emit))
SEED = 20260517
COUNT = 300


def verdict(result: object) -> tuple:
    if isinstance(result, Emitted):
        return ("emit",)
    assert isinstance(result, Rejected), result
    return ("reject", result.code, result.message)


def check_one_verdict(data: bytes, engines: tuple = ENGINES) -> None:
    seen: dict[tuple, list[str]] = {}
    for mode, flavor in JOBS:
        for name, emit in engines:
            try:
                v = verdict(emit(data, mode, flavor))
            except Exception as e:  # noqa: BLE001 - an engine failure is what this test is for
                pytest.fail(f"{name} raised in mode {mode} {flavor}: {type(e).__name__}: {e}")
            seen.setdefault(v, []).append(f"{name}:{mode}/{flavor}")
    assert len(seen) == 1, "verdicts differ by mode or engine:\n" + "\n".join(
        f"  {v}: {', '.join(where)}" for v, where in seen.items()
    )


# ---- the shipped configs and the bad-input corpus ----

SHIPPED = sorted((REPO / "parity_configs").glob("*/*.toml"))
BAD = sorted(
    p
    for p in (REPO / "tests" / "data" / "bad_configs").iterdir()
    if p.is_file() and not p.name.startswith(".") and p.suffix in (".toml", ".bin")
)


@pytest.mark.parametrize("path", SHIPPED, ids=[f"{p.parent.name}/{p.stem}" for p in SHIPPED])
def test_shipped_config_has_one_verdict(path: Path) -> None:
    check_one_verdict(path.read_bytes(), KEPT_ENGINES)


@pytest.mark.parametrize("path", BAD, ids=[p.name for p in BAD])
def test_bad_config_has_one_verdict(path: Path) -> None:
    check_one_verdict(path.read_bytes(), KEPT_ENGINES)


# ---- generated specs ----

# Valid starting points: (arch, family, spec fields).
GFX1250_WAVE32 = {"wave_size": 32, "warp_tile_m": 16, "warp_tile_n": 16, "warp_tile_k": 32}
TEMPLATES = [
    ("gfx950", "fwd", {}),
    ("gfx950", "fwd", {"epilogue": "cshuffle"}),
    ("gfx950", "fwd", {"async_dma": True, "tile_k": 64}),
    ("gfx950", "fwd", {"pipeline": "basic", "tile_k": 32}),
    ("gfx942", "fwd", {"warp_tile_m": 16, "warp_tile_n": 16}),
    ("gfx942", "fwd", {"warp_tile_m": 16, "warp_tile_n": 16, "async_dma": True}),
    ("gfx950", "fwd", {"dtype_a": "fp32", "dtype_b": "fp32", "dtype_d": "fp32", "warp_tile_k": 2, "tile_k": 8}),
    ("gfx1201", "fwd", {"wave_size": 32, "warp_tile_m": 16, "warp_tile_n": 16}),
    ("gfx1250", "fwd", dict(GFX1250_WAVE32)),
    ("gfx950", "wgrad", {}),
    ("gfx950", "wgrad", {"epilogue": "cshuffle", "split_k": 2}),
    ("gfx950", "wgrad", {"lds_k_outer": True, "async_dma": True, "split_k": 4, "dtype_d": "fp32"}),
    ("gfx950", "wgrad", {"pipeline": "basic", "split_k": 4, "dtype_d": "fp32"}),
    ("gfx942", "wgrad", {"warp_tile_m": 16, "warp_tile_n": 16, "chiplet_swizzle": True}),
    ("gfx1250", "wgrad", {**GFX1250_WAVE32, "tile_m": 32, "tile_n": 32, "tile_k": 32, "lds_k_outer": "auto"}),
    ("gfx1151", "wgrad", {"wave_size": 32, "warp_tile_m": 16, "warp_tile_n": 16}),
    ("gfx950", "dgrad", {}),
    ("gfx950", "dgrad", {"epilogue": "cshuffle", "lds_k_outer": "auto"}),
    ("gfx950", "dgrad", {"split_k": 2, "epilogue": "cshuffle"}),
    ("gfx942", "dgrad", {"warp_tile_m": 16, "warp_tile_n": 16}),
    ("gfx950", "dgrad", {"dtype_a": "fp32", "dtype_b": "fp32", "dtype_d": "fp32", "warp_tile_k": 2}),
    ("gfx1250", "dgrad", {**GFX1250_WAVE32, "lds_k_outer": True}),
    ("gfx1201", "dgrad", {"wave_size": 32, "warp_tile_m": 16, "warp_tile_n": 16, "epilogue": "cshuffle"}),
]
SPEC_VALUES = {
    "tile_m": [16, 32, 64, 128],
    "tile_n": [16, 32, 64, 128],
    "tile_k": [2, 6, 8, 16, 32, 64, 128],
    "warp_m": [1, 2, 4],
    "warp_n": [1, 2, 4],
    "warp_tile_m": [16, 32],
    "warp_tile_n": [16, 32],
    "warp_tile_k": [2, 4, 8, 16, 32],
    "pipeline": ["mem", "compv3", "compv4", "basic"],
    "epilogue": ["default", "cshuffle"],
    "async_dma": [True, False],
    "unroll_k": [False, True],
    "lds_k_pad": [0, 4, 8],
    "lds_layout_pad": [0, 8],
    "lds_layout_xor": [0, 1, 4],
    "vector_size_a": [1, 2, 3, 4, 5, 6, 8, 16],
    "vector_size_b": [1, 2, 3, 4, 6, 8, 16],
    "vector_size_c": [1, 2, 3, 4, 6, 8, 16],
    "chiplet_swizzle": [True, False],
    "chiplet_wgm": [1, 4, 8],
    "waves_per_eu": [1, 2],
    "bias": [0, 3, -3, 999999, 1000000, -2147483648],
    "scale": [1, 2, -1, 1234567],
    "relu": [True, False],
    "clamp_min": [0, -5, 6],
    "clamp_max": [6, -1, 2147483647],
    "name": ["k", "my/kern", "1k", "_x"],
    "dtype_d": ["fp16", "bf16", "fp32"],
    "lds_k_outer": [True, False, "auto"],
    "split_k": [-1, 0, 1, 2, 3],
    "cshuffle_no_alias": [True, False],
}
FAMILY_KEYS = {
    "fwd": sorted(set(SPEC_VALUES) - {"lds_k_outer", "split_k", "cshuffle_no_alias"}),
    "wgrad": sorted(set(SPEC_VALUES) - {"cshuffle_no_alias"}),
    "dgrad": sorted(SPEC_VALUES),
}
PROBLEM_VALUES = {
    "N": [1, 2, 4],
    "Hi": [1, 7, 9, 14],
    "Wi": [1, 7, 9, 16],
    "C": [2, 3, 12, 16, 48, 64, 128],
    "K": [2, 3, 12, 16, 48, 64],
    "Y": [1, 2, 3],
    "X": [1, 3, 5],
    "sH": [1, 2, 3],
    "sW": [1, 2],
    "pH": [0, 1, 2],
    "pW": [0, 1],
    "dH": [1, 2],
    "dW": [1, 2],
    "groups": [1, 2, 4],
}


def generated() -> list[str]:
    rng = random.Random(SEED)
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < COUNT:
        arch, family, spec = rng.choice(TEMPLATES)
        spec = dict(spec)
        problem = dict(BASE_PROBLEM, N=2, Hi=14, Wi=14)
        for _ in range(rng.choice([1, 2, 2, 3, 4])):
            what = rng.random()
            if what < 0.05:
                arch = rng.choice(ARCHS)
            elif what < 0.3:
                key = rng.choice(sorted(PROBLEM_VALUES))
                problem[key] = rng.choice(PROBLEM_VALUES[key])
            else:
                key = rng.choice(FAMILY_KEYS[family])
                spec[key] = rng.choice(SPEC_VALUES[key])
        if spec.get("unroll_k"):  # keep unrolled loops short
            problem.update(C=min(problem["C"], 16), N=1, Hi=7, Wi=7)
        text = config_text(family, arch, problem, **spec)
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


GENERATED = generated()


@pytest.mark.parametrize("index", range(len(GENERATED)), ids=[f"gen{i:03d}" for i in range(len(GENERATED))])
def test_generated_spec_has_one_verdict(index: int) -> None:
    check_one_verdict(GENERATED[index].encode())


def test_generated_specs_reach_both_verdicts() -> None:
    """The generator is not vacuous: it makes specs that build and specs that are refused."""
    kinds = {verdict(py_engine.emit(text.encode(), "spec", "llvm22"))[0] for text in GENERATED}
    assert kinds == {"emit", "reject"}
