"""The facts the engines, the harness, the fuzzer, coverage and the tests share, each kept here
once: the archs, the families, the modes and flavors, the config tables and their keys, and the
rule for a config's file name. It imports nothing of rocke_py, so the harness reads them without
loading an engine. The C engine keeps its keys in one X-macro (RK_KEYS, rocke_c/src/internal.h)
and its lists in its own tables; tests/engines/test_facts.py holds them to these.

The Python engine is built from this file too: it counts in the engine's build id
(rocke_py/parity/run/version.py) and a change to it reruns every config (rocke_py/parity/inputs/changes.py)."""

from __future__ import annotations

import re

#: the GPU targets, in the order of the [target] arch rule's message
ARCHS = ("gfx942", "gfx950", "gfx1151", "gfx1201", "gfx1250")
#: the convolution families, in the order of enum rk_family
FAMILIES = ("fwd", "wgrad", "dgrad")
#: what an engine emits: the normalised spec, the kernel IR, the LLVM IR
MODES = ("spec", "ir", "ll")
#: the modes whose output does not depend on the LLVM flavor
FLAVORLESS_MODES = ("spec", "ir")
#: the LLVM versions mode ll is written for
FLAVORS = ("llvm20", "llvm22", "llvm23")
#: a config file's tables, in the order a file lists them
TABLES = ("parity", "target", "problem", "spec")
#: the keys the engines read, by table, in the order of their key table (rocke_py/engine/schema.py
#: KEYS, the C engine's RK_KEYS); [parity] is the harness's alone
KEYS: dict[str, tuple[str, ...]] = {
    "target": ("arch",),
    "problem": tuple("N Hi Wi C K Y X sH sW pH pW dH dW groups Di Z sD pD dD".split()),
    "spec": tuple(
        (
            "family name dtype_a dtype_b dtype_d tile_m tile_n tile_k warp_m warp_n warp_tile_m warp_tile_n "
            "warp_tile_k wave_size pipeline epilogue async_dma unroll_k lds_k_pad lds_layout_pad lds_layout_xor "
            "vector_size_a vector_size_b vector_size_c chiplet_swizzle chiplet_wgm chiplet_num_xcds "
            "chiplet_chunk_size waves_per_eu bias scale relu clamp_min clamp_max lds_k_outer split_k two_stage "
            "force_deterministic group_merge num_load_waves cshuffle_no_alias"
        ).split()
    ),
}
#: where a config lives: parity_configs/<family folder>/<NN>-<slug>.toml, NN of two digits (or
#: more, without a leading zero); its id is <family folder>/<NN>-<slug> (configs.py, golden.py, new)
CONFIG_FAMILY_DIR = r"[a-z][a-z0-9_]*"
CONFIG_SLUG = r"[a-z0-9][a-z0-9_-]*"
CONFIG_STEM = rf"(?P<num>[0-9]{{2}}|[1-9][0-9]{{2,}})-(?P<slug>{CONFIG_SLUG})"
CONFIG_FILE_NAME = re.compile(rf"^{CONFIG_STEM}\.toml$")
