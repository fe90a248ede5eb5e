"""Target data of the five archs: wave size, LDS capacity, CU count, MMA table.

One table, the same rows as `rocke_c/src/arch.c` (docs/reference/llvm-ir.md §14,
docs/reference/conv-semantics.md §3.2 and §10.1)."""

from __future__ import annotations

from dataclasses import dataclass


def mma_rows(dtypes: tuple[str, ...], atoms: tuple[tuple[int, int, int], ...]) -> tuple[tuple[str, int, int, int], ...]:
    """(dtype, m, n, k) for each dtype and each atom, dtype-major (Python only: arch.c spells its rows out)."""
    return tuple((dtype, m, n, k) for dtype in dtypes for m, n, k in atoms)


# (dtype, m, n, k) rows with dtype_a == dtype_b and an fp32 accumulator.
_MFMA_FP32 = (("fp32", 16, 16, 4), ("fp32", 32, 32, 2))
_MFMA_GFX942 = mma_rows(("fp16", "bf16"), ((16, 16, 16), (32, 32, 8))) + _MFMA_FP32
_MFMA_GFX950 = mma_rows(("fp16", "bf16"), ((16, 16, 16), (16, 16, 32), (32, 32, 8), (32, 32, 16))) + _MFMA_FP32
_WMMA_RDNA = (("fp16", 16, 16, 16), ("bf16", 16, 16, 16))
_WMMA_GFX1250 = (("fp16", 16, 16, 32), ("bf16", 16, 16, 32), ("fp32", 16, 16, 4))


@dataclass(frozen=True)
class Target:
    arch: str
    wave_size: int
    lds_capacity: int
    max_threads_per_block: int
    num_cus: int
    is_mfma: bool  # CDNA MFMA (wave64); every other target is WMMA (wave32)
    is_gfx11: bool  # gfx11 WMMA: lanes 16-31 repeat lanes 0-15, frag_len = k
    mma: tuple[tuple[str, int, int, int], ...]
    async_lds_dwords: int  # the widest direct global->LDS load per lane, in dwords (0: none; llvm-ir §12.5)


TARGETS = {
    "gfx942": Target("gfx942", 64, 65536, 1024, 304, True, False, _MFMA_GFX942, 1),
    "gfx950": Target("gfx950", 64, 163840, 1024, 256, True, False, _MFMA_GFX950, 4),
    "gfx1151": Target("gfx1151", 32, 65536, 1024, 64, False, True, _WMMA_RDNA, 0),
    "gfx1201": Target("gfx1201", 32, 65536, 1024, 256, False, False, _WMMA_RDNA, 0),
    "gfx1250": Target("gfx1250", 32, 163840, 1024, 256, False, False, _WMMA_GFX1250, 0),
}

# The archs that have a transpose read, and the wave size of each regime (conv-semantics §5).
LDS_K_OUTER_ARCH_WAVE = {"gfx950": 64, "gfx1250": 32}


def target_for(arch: str) -> Target:
    return TARGETS[arch]


def has_mma(target: Target, dtype_a: str, dtype_b: str, m: int, n: int, k: int) -> bool:
    return dtype_a == dtype_b and (dtype_a, m, n, k) in target.mma


def frag_len(target: Target, edge: int, warp_tile_k: int, wave_size: int) -> int:
    """A/B elements per lane for one atom side (conv-semantics §3.2)."""
    if target.is_gfx11:
        return warp_tile_k
    return edge * warp_tile_k // wave_size
