"""tile.mma (docs/ir.md §4.5) by the lane layouts of docs/reference/conv-semantics.md §13:
which lane slot holds which element of A (M×K), B (K×N) and C/D (M×N). gfx1250's 16x16x32
WMMA uses the instruction's own K order (k = 16·(i//8) + 8·(l//16) + i%8), not the engines'
contiguous one: the engines permute K alike on A and B, which must not change D."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .fp import to_f64

OP_ID = re.compile(r"(mfma|wmma|wmma_gfx12|wmma_gfx1250)_f32_([0-9]+)x([0-9]+)x([0-9]+)_(f16|bf16|f32)")
KNOWN = {
    "mfma": {(32, 32, 8), (16, 16, 16), (32, 32, 16), (16, 16, 32), (16, 16, 4), (32, 32, 2)},
    "wmma": {(16, 16, 16)},
    "wmma_gfx12": {(16, 16, 16)},
    "wmma_gfx1250": {(16, 16, 32), (16, 16, 4)},
}
F32_SHAPES = {(16, 16, 4), (32, 32, 2)}


@dataclass(frozen=True)
class Layout:
    """Gathers: a_src[m*K + k] is the flat (lane*F + slot) of A's element (m, k); likewise
    b_src over (k, n), c_src over (m, n) into (lane*R + slot); d_src[lane*R + slot] is the flat
    (m*N + n) that slot holds. `replicated`: lanes W/2.. must repeat lanes 0.. (gfx11)."""

    op_id: str
    elem: str
    wave: int
    m: int
    n: int
    k: int
    frag: int
    c_len: int
    a_src: np.ndarray
    b_src: np.ndarray
    c_src: np.ndarray
    d_src: np.ndarray
    replicated: bool


def slot_maps(family: str, m: int, k: int, wave: int, frag: int) -> tuple[np.ndarray, np.ndarray]:
    """(mn, k) of every (lane, slot) of an A or B fragment (they share the layout)."""
    lane = np.arange(wave)[:, None]
    i = np.arange(frag)[None, :]
    mn = np.broadcast_to(lane % m, (wave, frag))
    if family == "mfma":
        kk = frag * (lane // m) + i
    elif family == "wmma":
        kk = np.broadcast_to(i, (wave, frag))
    elif family == "wmma_gfx12":
        kk = 8 * (i // 4) + 4 * (lane // 16) + i % 4
    elif k == 4:  # gfx1250 f32 16x16x4
        kk = 2 * (lane // 16) + i
    else:
        kk = 16 * (i // 8) + 8 * (lane // 16) + i % 8
    return mn, np.broadcast_to(kk, (wave, frag))


def c_maps(family: str, m: int, wave: int, c_len: int) -> tuple[np.ndarray, np.ndarray]:
    lane = np.arange(wave)[:, None]
    r = np.arange(c_len)[None, :]
    col = np.broadcast_to(lane % m, (wave, c_len))
    if family == "mfma" and m == 32:
        row = 8 * (r // 4) + 4 * (lane // 32) + r % 4
    elif family == "mfma":
        row = 4 * (lane // 16) + r
    elif family == "wmma":
        row = 2 * r + lane // 16
    else:
        row = 8 * (lane // 16) + r
    return np.broadcast_to(row, (wave, c_len)), col


def gather_index(pos_a: np.ndarray, pos_b: np.ndarray, extent_b: int, size: int, lanes: int) -> np.ndarray:
    """For each flat matrix position, the flat (lane, slot) holding it; -1 where none does.
    Only the first `lanes` lanes count (gfx11's replicas are checked, not read)."""
    src = np.full(size, -1, dtype=np.int64)
    flat = (pos_a * extent_b + pos_b)[:lanes].reshape(-1)
    src[flat[::-1]] = np.arange(flat.size)[::-1]  # the first lane wins on a duplicate
    return src


@lru_cache(maxsize=None)
def layout(op_id: str) -> Layout:
    """The layout of an op_id of docs/ir.md §4.5; ValueError for any other."""
    match = OP_ID.fullmatch(op_id)
    if not match:
        raise ValueError(f"unknown MMA op_id {op_id!r}")
    family, m, n, k, elem = (
        match.group(1),
        int(match.group(2)),
        int(match.group(3)),
        int(match.group(4)),
        match.group(5),
    )
    if (m, n, k) not in KNOWN[family] or ((m, n, k) in F32_SHAPES) != (elem == "f32") or m != n:
        raise ValueError(f"unknown MMA op_id {op_id!r}")
    wave = 64 if family == "mfma" else 32
    frag = k if family == "wmma" else m * k // wave
    c_len = m * n // wave if family == "mfma" else 8
    lanes = 16 if family == "wmma" else wave
    a_m, a_k = slot_maps(family, m, k, wave, frag)
    b_n, b_k = slot_maps(family, n, k, wave, frag)
    c_row, c_col = c_maps(family, m, wave, c_len)
    a_src = gather_index(a_m, a_k, k, m * k, lanes)
    b_src = gather_index(b_k, b_n, n, k * n, lanes)
    c_src = gather_index(c_row, c_col, n, m * n, wave)
    d_src = (c_row * n + c_col).reshape(-1)
    for src in (a_src, b_src, c_src):
        if (src < 0).any():
            raise ValueError(f"the layout of {op_id} leaves a matrix element without a lane")
    if m * n != wave * c_len or not np.array_equal(c_src[d_src], np.arange(wave * c_len)):
        raise ValueError(f"the layout of {op_id} holds a C element in two lane slots")
    return Layout(op_id, elem, wave, m, n, k, frag, c_len, a_src, b_src, c_src, d_src, family == "wmma")


class Operands:
    """The float64 matrices of recent MMA operands, found by identity (values are never
    changed in place): a fragment that feeds several MMAs (one of A times each of B) is
    gathered and converted once."""

    SIZE = 16

    def __init__(self) -> None:
        self.recent: dict[tuple[int, str, str], tuple[np.ndarray, np.ndarray, bool]] = {}

    def matrix(self, lay: Layout, x: np.ndarray, role: str) -> tuple[np.ndarray, bool]:
        key = (id(x), role, lay.op_id)
        hit = self.recent.get(key)
        if hit is not None and hit[0] is x:  # the entry holds x: its id is not reused
            return hit[1], hit[2]
        matrix, ok = operand_matrix(lay, x, role)
        if len(self.recent) >= self.SIZE:
            del self.recent[next(iter(self.recent))]
        self.recent[key] = (x, matrix, ok)
        return matrix, ok


def operand_matrix(lay: Layout, x: np.ndarray, role: str) -> tuple[np.ndarray, bool]:
    """A ("a": waves × M × K) or B ("b": waves × K × N) in float64 from the lane slots x, and
    whether gfx11's replicated lanes repeat lanes 0-15 (always True elsewhere)."""
    waves = x.shape[0] // lay.wave
    x2 = np.ascontiguousarray(x).reshape(waves, lay.wave * lay.frag)
    ok = not lay.replicated or halves_equal(x2, lay.wave // 2 * lay.frag)
    # ndarray.take along an axis: much faster than fancy indexing for these gathers
    if role == "a":
        return to_f64(x2.take(lay.a_src, axis=1), lay.elem).reshape(waves, lay.m, lay.k), ok
    return to_f64(x2.take(lay.b_src, axis=1), lay.elem).reshape(waves, lay.k, lay.n), ok


def mma(
    lay: Layout, a: np.ndarray, b: np.ndarray, c: np.ndarray, operands: Operands | None = None
) -> tuple[np.ndarray, bool]:
    """D for every wave of the threads: a, b (T, frag) (or (T,) when frag is 1), c (T, c_len)
    f32 (or one (c_len,) row for every thread), T a multiple of the wave size. Products and
    sums in float64, rounded once to f32. The flag says whether gfx11's replicated lanes
    repeated lanes 0-15 (always True elsewhere). `operands` keeps the recent A and B."""
    waves = a.shape[0] // lay.wave
    if operands is None:
        (am, a_ok), (bm, b_ok) = operand_matrix(lay, a, "a"), operand_matrix(lay, b, "b")
    else:
        (am, a_ok), (bm, b_ok) = operands.matrix(lay, a, "a"), operands.matrix(lay, b, "b")
    # every (m, n) is held by exactly one lane slot (layout() checks it): A·B goes to the
    # slots first and C is added there, element by element as D = A·B + C in float64 would
    d = np.matmul(am, bm).reshape(waves, lay.m * lay.n).take(lay.d_src, axis=1)
    d = d.reshape(waves * lay.wave, lay.c_len)
    d += c  # f32 -> float64 exactly; c may be one (c_len,) row for every thread
    return d.astype(np.float32), a_ok and b_ok


def halves_equal(x2: np.ndarray, half: int) -> bool:
    """Whether each row's second half equals its first, compared as values (as np.array_equal
    does: a NaN never equals, -0 equals +0). f16 compares its bits first, far faster: equal
    bits are equal values unless one is a NaN."""
    lo, hi = x2[:, :half], x2[:, half:]
    if x2.dtype == np.float16:
        lo_bits, hi_bits = lo.view(np.uint16), hi.view(np.uint16)
        if np.array_equal(lo_bits, hi_bits):
            return not bool(((lo_bits & np.uint16(0x7FFF)) > np.uint16(0x7C00)).any())
    return bool(np.array_equal(lo, hi))


#: The AMDGPU intrinsics (their names after `llvm.amdgcn.`) that compute tile.mma's
#: products, each with the lane layout of its instruction (the op_id above) and its call
#: form: "mfma" (A, B, C, cbsz, abid, blgp), "wmma3" (A, B, C), "wmma8" (neg_a, A, neg_b, B,
#: c_mod, C, reuse_a, reuse_b). ISA facts (docs/reference/conv-semantics.md §13), read by the `ll` executor;
#: the IR executor finds the same layouts by op_id.
INTRINSICS: dict[str, tuple[str, str]] = {
    "mfma.f32.32x32x8f16": ("mfma_f32_32x32x8_f16", "mfma"),
    "mfma.f32.16x16x16f16": ("mfma_f32_16x16x16_f16", "mfma"),
    "mfma.f32.32x32x16.f16": ("mfma_f32_32x32x16_f16", "mfma"),
    "mfma.f32.16x16x32.f16": ("mfma_f32_16x16x32_f16", "mfma"),
    "mfma.f32.32x32x8bf16.1k": ("mfma_f32_32x32x8_bf16", "mfma"),
    "mfma.f32.16x16x16bf16.1k": ("mfma_f32_16x16x16_bf16", "mfma"),
    "mfma.f32.32x32x16.bf16": ("mfma_f32_32x32x16_bf16", "mfma"),
    "mfma.f32.16x16x32.bf16": ("mfma_f32_16x16x32_bf16", "mfma"),
    "mfma.f32.16x16x4f32": ("mfma_f32_16x16x4_f32", "mfma"),
    "mfma.f32.32x32x2f32": ("mfma_f32_32x32x2_f32", "mfma"),
    "wmma.f32.16x16x16.f16.v8f32.v16f16": ("wmma_f32_16x16x16_f16", "wmma3"),
    "wmma.f32.16x16x16.bf16.v8f32.v16i16": ("wmma_f32_16x16x16_bf16", "wmma3"),
    "wmma.f32.16x16x16.f16.v8f32.v8f16": ("wmma_gfx12_f32_16x16x16_f16", "wmma3"),
    "wmma.f32.16x16x16.bf16.v8f32.v8i16": ("wmma_gfx12_f32_16x16x16_bf16", "wmma3"),
    "wmma.f32.16x16x32.f16.v8f32.v16f16": ("wmma_gfx1250_f32_16x16x32_f16", "wmma8"),
    "wmma.f32.16x16x32.bf16.v8f32.v16bf16": ("wmma_gfx1250_f32_16x16x32_bf16", "wmma8"),
    "wmma.f32.16x16x4.f32.v8f32.v2f32": ("wmma_gfx1250_f32_16x16x4_f32", "wmma8"),
}
#: where A, B and C are among a call form's arguments, and the arguments that must be 0 /
#: false (operand modifiers the executor does not model)
CALL_FORMS: dict[str, tuple[tuple[int, int, int], tuple[int, ...]]] = {
    "mfma": ((0, 1, 2), (3, 4, 5)),
    "wmma3": ((0, 1, 2), ()),
    "wmma8": ((1, 3, 5), (0, 2, 4, 6, 7)),
}

#: The transpose reads' lane exchange (docs/ir.md §4.3): ds_read_tr16_b64 works in groups of
#: 16 lanes, each fetching 4 elements; lane L's element e is element L % 4 of the run fetched
#: by lane (L // 16)·16 + 4·e + (L % 16) // 4. ds_read_tr16_b128: groups of 8 lanes, 8 elements,
#: a plain 8×8 transpose.
TR_B64_SRC = (
    4 * np.arange(4)[None, :] + np.arange(16)[:, None] // 4,
    np.broadcast_to(np.arange(16)[:, None] % 4, (16, 4)),
)


def transpose_exchange(runs: np.ndarray, wide: bool) -> np.ndarray:
    """Every lane's transposed elements from the runs (T, 4 or 8) the lanes fetched."""
    n = runs.shape[0]
    if wide:
        return np.ascontiguousarray(runs.reshape(-1, 8, 8).transpose(0, 2, 1).reshape(n, 8))
    src, elem = TR_B64_SRC
    return np.ascontiguousarray(runs.reshape(-1, 16, 4)[:, src, elem].reshape(n, 4))
