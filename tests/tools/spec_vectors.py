"""Generate spec-stage test vectors from the Python engine (the normative side).

Each vector is a schema-valid set of fields (what rocke_c's schema stage would hand on) and
what the Python stages after schema (problem, dgrad candidate cap, dtypes, spec, deduce,
validate, print) make of it: the mode `spec` text, or (code, message). The C test
rocke_c/tests/test_spec.c replays them through the C stages, so every rule and every printed
line is compared without the parser in the way.

The grid: valid baseline specs per family and arch, each mutated in 0-4 fields drawn from a
table of interesting values (seeded, so a run is reproducible), plus hand-written vectors
that reach every rule code. The script fails if some rule code of validate.py is never hit.

    python3 tests/tools/spec_vectors.py OUT.txt [--count N] [--seed S] [--configs DIR]

--configs DIR also writes each vector as a config file DIR/<n>.toml (for a full-engine
comparison through rocke_emit, parse and schema included).

Vector file format (all lengths in bytes of the UTF-8 encoding):
    V <n_fields>
    <key> i <int> | <key> b <0|1> | <key> s <len>\\n<bytes>\\n
    E <len>\\n<text>\\n             the expected spec text
    R <code> <len>\\n<message>\\n   the expected rejection
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from rocke_py.configtext import config_scalar  # noqa: E402
from rocke_py.engine.config import parse_config  # noqa: E402
from rocke_py.engine.emit import emit  # noqa: E402
from rocke_py.engine.result import Emitted, Rejected  # noqa: E402
from rocke_py.engine.schema import check_schema  # noqa: E402
from rocke_py.engine.validate import RULES  # noqa: E402
from rocke_py.facts import ARCHS  # noqa: E402

BASE_PROBLEM = {"N": 8, "Hi": 56, "Wi": 56, "C": 64, "K": 64, "Y": 3, "X": 3, "pH": 1, "pW": 1}

# Valid starting points: (arch, family, spec fields).
TEMPLATES = [
    ("gfx950", "wgrad", {}),
    ("gfx950", "wgrad", {"lds_k_outer": True, "async_dma": True, "split_k": 4, "dtype_d": "fp32"}),
    ("gfx950", "wgrad", {"epilogue": "cshuffle", "lds_k_pad": 8}),
    ("gfx950", "wgrad", {"split_k": -1, "epilogue": "cshuffle", "lds_k_outer": "auto"}),
    ("gfx950", "wgrad", {"pipeline": "basic", "split_k": 8, "dtype_d": "fp32"}),
    ("gfx942", "wgrad", {"warp_tile_m": 16, "warp_tile_n": 16}),
    ("gfx942", "wgrad", {"warp_tile_m": 16, "warp_tile_n": 16, "split_k": -1, "epilogue": "cshuffle"}),
    (
        "gfx1250",
        "wgrad",
        {
            "wave_size": 32,
            "warp_tile_m": 16,
            "warp_tile_n": 16,
            "warp_tile_k": 32,
            "lds_k_outer": "auto",
            "tile_m": 32,
            "tile_n": 32,
            "tile_k": 32,
        },
    ),
    ("gfx1201", "wgrad", {"wave_size": 32, "warp_tile_m": 16, "warp_tile_n": 16}),
    ("gfx1151", "wgrad", {"wave_size": 32, "warp_tile_m": 16, "warp_tile_n": 16}),
    ("gfx950", "dgrad", {}),
    ("gfx950", "dgrad", {"lds_k_outer": "auto", "epilogue": "cshuffle"}),
    ("gfx950", "dgrad", {"split_k": 2, "epilogue": "cshuffle"}),
    ("gfx942", "dgrad", {"warp_tile_m": 16, "warp_tile_n": 16}),
    (
        "gfx1250",
        "dgrad",
        {"wave_size": 32, "warp_tile_m": 16, "warp_tile_n": 16, "warp_tile_k": 32, "lds_k_outer": True},
    ),
    ("gfx1151", "dgrad", {"wave_size": 32, "warp_tile_m": 16, "warp_tile_n": 16}),
    ("gfx950", "fwd", {}),
    ("gfx950", "fwd", {"async_dma": True, "tile_k": 64}),
    ("gfx950", "fwd", {"unroll_k": True, "bias": 3, "relu": True, "clamp_max": 6}),
    ("gfx942", "fwd", {"warp_tile_m": 16, "warp_tile_n": 16, "epilogue": "cshuffle", "vector_size_c": 4}),
    ("gfx1201", "fwd", {"wave_size": 32, "warp_tile_m": 16, "warp_tile_n": 16}),
    ("gfx1250", "fwd", {"wave_size": 32, "warp_tile_m": 16, "warp_tile_n": 16, "warp_tile_k": 32}),
]

STRIDED = [1, 2, 3]
PROBLEM_VALUES = {
    "N": [1, 2, 3, 8, 64],
    "Hi": [1, 7, 14, 28, 56, 9],
    "Wi": [1, 7, 14, 28, 56, 9],
    "C": [1, 2, 3, 8, 16, 48, 63, 64, 128],
    "K": [1, 2, 3, 8, 16, 48, 63, 64, 128],
    "Y": [1, 2, 3, 5, 7],
    "X": [1, 2, 3, 5, 7],
    "sH": STRIDED + [4],
    "sW": STRIDED + [4],
    "pH": [0, 1, 2, 3, 100],
    "pW": [0, 1, 2, 3],
    "dH": [1, 2, 3],
    "dW": [1, 2, 3],
    "groups": [1, 2, 4, 8, 64, 0, -1, 3],
}
# The 3-D fields, mostly set all at once (a partial set is one rule, reached quickly).
PROBLEM_3D = {"Di": [1, 4, 8], "Z": [1, 3], "sD": [1, 2], "pD": [0, 1], "dD": [1, 2]}
DTYPES = ["fp16", "f16", "bf16", "fp32", "int8", "fp8_e4m3", "a b", "x" * 17, "\u00e9"]
SPEC_VALUES = {
    "name": ["k", "my/kernel_v2", "A" * 64],
    "dtype_a": DTYPES,
    "dtype_b": DTYPES,
    "dtype_d": DTYPES,
    "tile_m": [16, 32, 64, 128, 256, 48, 96],
    "tile_n": [16, 32, 64, 128, 256, 48],
    "tile_k": [4, 8, 16, 32, 64, 128, 256],
    "warp_m": [1, 2, 4, 8],
    "warp_n": [1, 2, 4, 8, 32],
    "warp_tile_m": [8, 16, 32, 64],
    "warp_tile_n": [8, 16, 32, 64],
    "warp_tile_k": [2, 4, 8, 16, 32],
    "wave_size": [64, 32, 16],
    "pipeline": ["mem", "compv3", "compv4", "basic", "wavelet", "foo", "", "p" * 600],
    "epilogue": ["default", "cshuffle", "bar", "e\u00e9"],
    "async_dma": [True, False],
    "unroll_k": [True, False],
    "lds_k_pad": [0, 4, 8, 16],
    "lds_layout_pad": [0, 8],
    "lds_layout_xor": [0, 1, 4],
    "vector_size_a": [1, 2, 4, 8, 16, 3],
    "vector_size_b": [1, 2, 4, 8, 16, 3],
    "vector_size_c": [1, 2, 4, 8],
    "chiplet_swizzle": [True, False],
    "chiplet_wgm": [1, 8, 16],
    "chiplet_num_xcds": [1, 8],
    "chiplet_chunk_size": [32, 64],
    "waves_per_eu": [1, 2, 4],
    "bias": [0, 1, -3, 1000000, 2147483647, -2147483648, 123456],
    "scale": [1, 2, 0, -1, 123456789],
    "relu": [True, False],
    "clamp_min": [0, -5, 6, 1000000, -2147483648],
    "clamp_max": [0, -5, 6, 1000000, 2147483647],
    "lds_k_outer": [True, False, "auto"],
    "split_k": [-2, -1, 0, 1, 2, 3, 4, 8, 1000, -2147483648, 2147483647],
    "two_stage": [True, False],
    "force_deterministic": [True, False],
    "group_merge": [1, 2, 0],
    "num_load_waves": [1, 4, 8],
    "cshuffle_no_alias": [True, False],
}
FAMILY_KEYS = {
    "fwd": set(SPEC_VALUES)
    - {
        "lds_k_outer",
        "split_k",
        "two_stage",
        "force_deterministic",
        "group_merge",
        "num_load_waves",
        "cshuffle_no_alias",
    },
    "wgrad": set(SPEC_VALUES) - {"num_load_waves", "cshuffle_no_alias"},
    "dgrad": set(SPEC_VALUES) - {"two_stage", "force_deterministic", "group_merge"},
}

# Hand-written cases for rules and corners the random walk reaches rarely.
EXTRA = [
    ("gfx950", "wgrad", {}, {"groups": 0}),
    ("gfx950", "wgrad", {}, {"C": 63, "groups": 2}),
    ("gfx950", "wgrad", {}, {"K": 63, "groups": 2}),
    ("gfx950", "wgrad", {}, {"Di": 4, "sD": 1}),
    ("gfx950", "wgrad", {}, {"Di": 4, "Z": 3, "sD": 1, "pD": 1, "dD": 1}),
    ("gfx950", "fwd", {}, {"Di": 4, "Z": 3, "sD": 2, "pD": 1, "dD": 1, "groups": 2}),
    ("gfx950", "dgrad", {}, {"Di": 4, "Z": 3, "sD": 1, "pD": 1, "dD": 1}),
    ("gfx950", "wgrad", {}, {"Hi": 1, "pH": 0}),
    ("gfx950", "wgrad", {}, {"Hi": 2147483647, "pH": 2147483647, "Y": 1}),
    ("gfx950", "wgrad", {}, {"N": 2147483647}),
    ("gfx950", "wgrad", {}, {"N": 1, "Hi": 65536, "Wi": 65536, "pH": 0, "pW": 0, "Y": 1, "X": 1}),
    ("gfx950", "wgrad", {}, {"C": 2147483647, "K": 1}),
    ("gfx950", "wgrad", {}, {"K": 2147483647, "C": 1}),
    ("gfx950", "wgrad", {}, {"Di": 2147483647, "Z": 1, "sD": 1, "pD": 0, "dD": 1}),
    (
        "gfx950",
        "dgrad",
        {},
        {"sH": 100, "sW": 100, "Y": 100, "X": 100, "Hi": 200, "Wi": 200, "pH": 60, "pW": 60, "C": 8, "K": 8},
    ),
    (
        "gfx950",
        "dgrad",
        {},
        {"sH": 64, "sW": 64, "Y": 64, "X": 64, "Hi": 200, "Wi": 200, "pH": 40, "pW": 40, "C": 8, "K": 8},
    ),
    ("gfx950", "dgrad", {}, {"sH": 2, "sW": 3, "dH": 2, "dW": 1, "Y": 5, "X": 4, "pH": 3, "pW": 0}),
    ("gfx950", "dgrad", {"split_k": 3, "epilogue": "cshuffle"}, {"sH": 3, "sW": 2, "Y": 4, "X": 3}),
    ("gfx950", "dgrad", {}, {"Hi": 1, "Wi": 1, "pH": 2147483647, "pW": 2147483647, "Y": 1, "X": 1}),
    ("gfx950", "dgrad", {"dtype_a": "bogus"}, {"groups": 2, "C": 2, "K": 2}),
    ("gfx950", "dgrad", {}, {"groups": 2, "C": 2, "K": 2}),
    ("gfx950", "wgrad", {}, {"groups": 2, "Y": 1, "X": 1, "pH": 0, "pW": 0}),
    ("gfx950", "wgrad", {"pipeline": "basic", "tile_k": 16, "warp_tile_k": 16}, {}),
    ("gfx950", "fwd", {"pipeline": "basic", "tile_k": 16}, {"C": 1024}),
    ("gfx950", "wgrad", {"split_k": 0, "dtype_d": "fp32"}, {}),
    ("gfx950", "wgrad", {"split_k": 0, "dtype_d": "fp32", "unroll_k": True}, {}),
    ("gfx950", "wgrad", {"split_k": 0, "dtype_d": "fp32", "pipeline": "basic"}, {}),
    ("gfx950", "wgrad", {"force_deterministic": True, "split_k": 2, "dtype_d": "fp32"}, {}),
    ("gfx950", "wgrad", {"two_stage": True}, {}),
    ("gfx950", "wgrad", {"lds_k_outer": True, "async_dma": True, "lds_layout_pad": 8}, {}),
    ("gfx950", "wgrad", {"lds_k_outer": True, "async_dma": True, "lds_layout_xor": 0}, {}),
    ("gfx950", "fwd", {"async_dma": True, "tile_k": 64, "lds_k_pad": 8}, {}),
    ("gfx950", "fwd", {"async_dma": True, "tile_k": 64, "lds_k_pad": 0}, {}),
    ("gfx950", "fwd", {"async_dma": True, "tile_k": 64}, {"C": 3}),
    ("gfx950", "fwd", {"async_dma": True, "tile_k": 64, "vector_size_a": 2}, {}),
    ("gfx950", "wgrad", {"lds_k_outer": True, "warp_tile_m": 16, "warp_tile_n": 16, "warp_tile_k": 16}, {}),
    ("gfx950", "wgrad", {"lds_k_outer": True, "warp_tile_m": 32, "warp_tile_n": 32, "warp_tile_k": 8}, {}),
    ("gfx950", "wgrad", {"lds_k_outer": True, "warp_tile_m": 16, "warp_tile_n": 16, "warp_tile_k": 4}, {}),
    ("gfx950", "dgrad", {"lds_k_outer": True, "warp_tile_m": 32, "warp_tile_n": 16, "warp_tile_k": 4}, {}),
    ("gfx942", "wgrad", {"lds_k_outer": True}, {}),
    ("gfx950", "wgrad", {"lds_k_outer": True, "wave_size": 32}, {}),
    ("gfx1250", "wgrad", {"lds_k_outer": True, "wave_size": 64}, {}),
    (
        "gfx1250",
        "wgrad",
        {"lds_k_outer": True, "wave_size": 32, "warp_tile_m": 16, "warp_tile_n": 16, "warp_tile_k": 16},
        {},
    ),
    (
        "gfx1250",
        "dgrad",
        {"lds_k_outer": True, "wave_size": 32, "warp_tile_m": 16, "warp_tile_n": 32, "warp_tile_k": 32},
        {},
    ),
    ("gfx950", "wgrad", {"lds_k_outer": True, "wave_size": 16}, {}),
    ("gfx950", "wgrad", {"lds_k_outer": True, "lds_k_pad": 0}, {}),
    ("gfx950", "dgrad", {"lds_k_outer": True, "lds_layout_pad": 0}, {}),
    ("gfx950", "dgrad", {"lds_k_outer": True, "async_dma": True}, {}),
    ("gfx950", "dgrad", {"lds_k_outer": True, "pipeline": "wavelet"}, {}),
    ("gfx950", "dgrad", {"pipeline": "wavelet"}, {}),
    ("gfx950", "dgrad", {"async_dma": True, "lds_layout_xor": 4}, {}),
    ("gfx950", "dgrad", {"async_dma": True, "lds_k_pad": 8}, {}),
    ("gfx950", "dgrad", {"async_dma": True}, {}),
    ("gfx950", "dgrad", {"unroll_k": True}, {}),
    ("gfx950", "dgrad", {"chiplet_swizzle": True}, {}),
    (
        "gfx1201",
        "dgrad",
        {"split_k": 2, "wave_size": 32, "warp_tile_m": 16, "warp_tile_n": 16, "epilogue": "cshuffle"},
        {},
    ),
    ("gfx950", "dgrad", {"vector_size_c": 4}, {}),
    ("gfx950", "dgrad", {"vector_size_c": 4}, {"sH": 2}),
    ("gfx950", "dgrad", {"split_k": 0}, {}),
    ("gfx950", "dgrad", {"split_k": 2, "dtype_d": "fp32"}, {"C": 63}),
    ("gfx950", "dgrad", {"split_k": 2}, {"C": 63}),
    ("gfx950", "wgrad", {"split_k": 2, "epilogue": "cshuffle"}, {"C": 63}),
    ("gfx950", "wgrad", {"split_k": 2}, {}),
    ("gfx950", "wgrad", {"group_merge": 2}, {}),
    ("gfx950", "wgrad", {"async_dma": True}, {}),
    ("gfx950", "wgrad", {"tile_m": 48}, {}),
    ("gfx950", "wgrad", {"tile_n": 48}, {}),
    ("gfx950", "wgrad", {"tile_k": 8}, {}),
    ("gfx950", "wgrad", {"warp_m": 8, "warp_n": 4, "tile_m": 256, "tile_n": 256}, {}),
    ("gfx950", "wgrad", {"vector_size_c": 2}, {}),
    ("gfx950", "wgrad", {"wave_size": 32}, {}),
    ("gfx950", "wgrad", {"vector_size_a": 16}, {}),
    (
        "gfx950",
        "wgrad",
        {
            "vector_size_b": 5,
            "dtype_a": "fp32",
            "dtype_b": "fp32",
            "warp_tile_k": 4,
            "warp_tile_m": 16,
            "warp_tile_n": 16,
        },
        {},
    ),
    ("gfx950", "wgrad", {"vector_size_a": 8}, {"K": 12}),
    ("gfx950", "wgrad", {"vector_size_b": 8}, {"C": 12}),
    ("gfx950", "fwd", {"vector_size_a": 8}, {"C": 12}),
    ("gfx950", "wgrad", {"pipeline": "basic", "async_dma": True, "lds_k_outer": True}, {}),
    ("gfx950", "wgrad", {"pipeline": "basic", "unroll_k": True}, {}),
    ("gfx950", "wgrad", {"async_dma": True, "unroll_k": True, "lds_k_outer": True}, {}),
    ("gfx950", "wgrad", {"pipeline": "basic"}, {}),
    (
        "gfx950",
        "wgrad",
        {
            "tile_m": 256,
            "tile_n": 256,
            "tile_k": 256,
            "warp_m": 4,
            "warp_n": 4,
            "unroll_k": True,
            "epilogue": "cshuffle",
        },
        {},
    ),
    ("gfx1151", "wgrad", {"wave_size": 32, "warp_tile_m": 16, "warp_tile_n": 16, "epilogue": "cshuffle"}, {}),
    ("gfx1151", "wgrad", {"wave_size": 32, "warp_tile_m": 16, "warp_tile_n": 16, "chiplet_swizzle": True}, {}),
    ("gfx1151", "wgrad", {"wave_size": 32, "warp_tile_m": 16, "warp_tile_n": 16, "pipeline": "compv3"}, {}),
    (
        "gfx1250",
        "fwd",
        {"wave_size": 32, "warp_tile_m": 32, "warp_tile_n": 32, "warp_tile_k": 2, "dtype_a": "fp32", "dtype_b": "fp32"},
        {},
    ),
    ("gfx950", "wgrad", {"clamp_min": 7, "clamp_max": 6}, {}),
    ("gfx950", "dgrad", {"clamp_min": 7, "clamp_max": 6}, {}),
    ("gfx950", "fwd", {"clamp_min": 7, "clamp_max": 6}, {}),
    ("gfx950", "wgrad", {"dtype_a": "f16", "dtype_b": "bf16"}, {}),
    ("gfx950", "wgrad", {"dtype_d": "bad-dtype!"}, {}),
    ("gfx950", "wgrad", {"dtype_b": "fp8"}, {}),
    ("gfx950", "wgrad", {"pipeline": "wavelet"}, {}),
    ("gfx950", "fwd", {"epilogue": "fancy"}, {}),
    ("gfx950", "wgrad", {"name": "grp/kern"}, {"groups": 2}),
    ("gfx950", "wgrad", {"bias": 1000000, "scale": -2147483648, "relu": True, "clamp_min": -2147483648}, {}),
    ("gfx950", "wgrad", {"lds_layout_pad": 16, "lds_layout_xor": 2}, {}),
    ("gfx950", "wgrad", {"split_k": 2147483647, "dtype_d": "fp32", "pipeline": "basic"}, {}),
    ("gfx950", "wgrad", {"split_k": 100000, "dtype_d": "fp32"}, {}),
    ("gfx950", "wgrad", {"lds_k_outer": True, "warp_tile_m": 64, "warp_m": 1}, {}),
    ("gfx950", "wgrad", {"lds_k_outer": True, "warp_tile_n": 8, "warp_tile_m": 16}, {}),
    ("gfx950", "dgrad", {"lds_k_outer": True, "warp_tile_n": 64, "warp_n": 1}, {}),
    ("gfx950", "dgrad", {"warp_m": 8, "warp_n": 4, "tile_m": 256, "tile_n": 256}, {}),
    ("gfx950", "fwd", {"warp_m": 8, "warp_n": 4, "tile_m": 256, "tile_n": 256}, {}),
    ("gfx950", "fwd", {"pipeline": "basic", "async_dma": True}, {}),
    ("gfx950", "fwd", {"pipeline": "basic", "unroll_k": True}, {}),
    ("gfx950", "fwd", {"async_dma": True, "unroll_k": True}, {}),
    ("gfx950", "dgrad", {"lds_k_outer": True, "dtype_b": "fp32"}, {}),
    (
        "gfx942",
        "dgrad",
        {"tile_m": 256, "tile_n": 256, "warp_m": 4, "warp_n": 4, "warp_tile_m": 16, "warp_tile_n": 16},
        {},
    ),
    (
        "gfx942",
        "dgrad",
        {
            "tile_m": 128,
            "tile_n": 128,
            "tile_k": 128,
            "warp_tile_m": 16,
            "warp_tile_n": 16,
            "epilogue": "cshuffle",
            "cshuffle_no_alias": True,
        },
        {},
    ),
    ("gfx950", "dgrad", {"split_k": 2147483647, "dtype_d": "fp32"}, {"sH": 2}),
    ("gfx950", "fwd", {"tile_k": 65536, "warp_tile_k": 16}, {}),
    ("gfx950", "wgrad", {"tile_m": 65536, "warp_m": 65536, "warp_n": 65536, "wave_size": 65536}, {}),
    # the rules beyond the reference (docs/engine-contract.md §6.1)
    ("gfx950", "fwd", {"epilogue": "cshuffle", "vector_size_c": 16}, {}),
    ("gfx950", "fwd", {"epilogue": "cshuffle", "vector_size_c": 8, "dtype_d": "fp32"}, {}),
    ("gfx950", "fwd", {"epilogue": "cshuffle", "vector_size_c": 8}, {"K": 12}),
    ("gfx950", "fwd", {"vector_size_b": 6}, {"C": 48}),
    ("gfx950", "fwd", {"lds_layout_xor": 4}, {}),
    ("gfx942", "fwd", {"async_dma": True, "warp_tile_m": 16, "warp_tile_n": 16}, {}),
    ("gfx950", "wgrad", {"epilogue": "cshuffle", "vector_size_c": 16}, {}),
    ("gfx950", "wgrad", {"epilogue": "cshuffle", "vector_size_c": 8}, {"C": 12}),
    ("gfx950", "wgrad", {"epilogue": "cshuffle", "vector_size_c": 6}, {"C": 48}),
    ("gfx950", "wgrad", {"vector_size_a": 6}, {"K": 48}),
    ("gfx950", "dgrad", {"vector_size_a": 16}, {}),
    ("gfx950", "dgrad", {"vector_size_b": 3}, {}),
    ("gfx950", "dgrad", {"epilogue": "cshuffle", "vector_size_c": 65536}, {}),
    ("gfx950", "dgrad", {"epilogue": "cshuffle", "vector_size_c": 3}, {}),
    ("gfx950", "dgrad", {"vector_size_a": 6}, {"K": 48}),
    ("gfx950", "dgrad", {"split_k": 2, "dtype_d": "fp32", "vector_size_a": 4}, {}),
    ("gfx950", "dgrad", {"split_k": 2, "dtype_d": "fp32", "vector_size_c": 2}, {}),
    ("gfx950", "dgrad", {"lds_layout_xor": 1}, {}),
    ("gfx950", "fwd", {"bias": -3, "scale": 1234567, "clamp_max": 6, "name": "1k"}, {}),
    ("gfx950", "fwd", {"dtype_a": "fp32", "dtype_b": "fp32", "dtype_d": "fp32", "warp_tile_k": 2, "tile_k": 2}, {}),
    ("gfx950", "fwd", {"chiplet_wgm": 16}, {}),
    ("gfx950", "wgrad", {"chiplet_chunk_size": 32}, {}),
    ("gfx950", "dgrad", {"num_load_waves": 8}, {}),
    ("gfx950", "dgrad", {"cshuffle_no_alias": True}, {}),
    ("gfx950", "fwd", {"lds_layout_pad": 4, "lds_k_pad": 16}, {}),
    ("gfx950", "wgrad", {"lds_k_outer": True, "lds_layout_pad": 16}, {}),
]


def config_text(arch: str, family: str, spec: dict, problem: dict) -> str:
    lines = ["[target]", f"arch = {config_scalar(arch)}", "", "[problem]"]
    lines += [f"{k} = {config_scalar(v)}" for k, v in problem.items() if v is not None]
    lines += ["", "[spec]", f"family = {config_scalar(family)}"]
    lines += [f"{k} = {config_scalar(v)}" for k, v in spec.items()]
    return "\n".join(lines) + "\n"


def mutate(rng: random.Random, arch: str, family: str, spec: dict, problem: dict):
    spec, problem = dict(spec), dict(problem)
    for _ in range(rng.choice([0, 1, 1, 2, 2, 3, 4])):
        what = rng.random()
        if what < 0.08:
            arch = rng.choice(ARCHS)
        elif what < 0.12:
            keys = sorted(PROBLEM_3D) if rng.random() < 0.8 else rng.sample(sorted(PROBLEM_3D), 2)
            problem.update({k: rng.choice(PROBLEM_3D[k]) for k in keys})
        elif what < 0.35:
            key = rng.choice(sorted(PROBLEM_VALUES))
            problem[key] = rng.choice(PROBLEM_VALUES[key])
        else:
            key = rng.choice(sorted(FAMILY_KEYS[family]))
            spec[key] = rng.choice(SPEC_VALUES[key])
    return arch, family, spec, problem


def cases(count: int, seed: int):
    rng = random.Random(seed)
    for arch, family, spec in TEMPLATES:
        yield arch, family, spec, dict(BASE_PROBLEM)
    for arch, family, spec, extra in EXTRA:
        problem = dict(BASE_PROBLEM)
        problem.update(extra)
        yield arch, family, spec, problem
    for _ in range(count):
        arch, family, spec = rng.choice(TEMPLATES)
        yield mutate(rng, arch, family, spec, dict(BASE_PROBLEM))


def write_field(out, key: str, value) -> None:
    if isinstance(value, bool):
        out.write(f"{key} b {int(value)}\n".encode())
    elif isinstance(value, int):
        out.write(f"{key} i {value}\n".encode())
    else:
        data = value.encode()
        out.write(f"{key} s {len(data)}\n".encode() + data + b"\n")


def write_vector(out, values: dict, result) -> None:
    out.write(f"V {len(values)}\n".encode())
    for key, value in values.items():
        write_field(out, key, value)
    if isinstance(result, Emitted):
        data = result.text.encode()
        out.write(f"E {len(data)}\n".encode() + data + b"\n")
    else:
        data = result.message.encode()
        out.write(f"R {result.code} {len(data)}\n".encode() + data + b"\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--count", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--configs", type=Path)
    args = ap.parse_args()
    if args.configs:
        args.configs.mkdir(parents=True, exist_ok=True)
    codes: dict[str, int] = {}
    seen: set[str] = set()
    n = 0
    with open(args.out, "wb") as out:
        for arch, family, spec, problem in cases(args.count, args.seed):
            text = config_text(arch, family, spec, problem)
            if text in seen:
                continue
            seen.add(text)
            config = parse_config(text)
            fields = config if isinstance(config, Rejected) else check_schema(config)
            if isinstance(fields, Rejected):
                continue  # not schema-valid: not a spec-stage vector
            result = emit(text.encode(), "spec", "llvm22")
            write_vector(out, fields.values, result)
            key = "EMITTED" if isinstance(result, Emitted) else result.code
            codes[key] = codes.get(key, 0) + 1
            if args.configs:
                (args.configs / f"{n:05d}.toml").write_bytes(text.encode())
            n += 1
    rule_codes = {code for rules in RULES.values() for code, _, _ in rules}
    rule_codes |= {"CONV_GROUPS_INVALID", "CONV_3D_FIELDS_PARTIAL", "CONV_DTYPE_UNSUPPORTED", "E_RANGE", "EMITTED"}
    for code in sorted(codes):
        print(f"{codes[code]:6d} {code}")
    missing = sorted(rule_codes - set(codes))
    print(f"{n} vectors; codes never reached: {', '.join(missing) or 'none'}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
