"""The buffers a kernel runs on and the answer it must give, from the numerics side's own
reading of the config (problem.py; docs/numerics.md §2).

Integer inputs (the default) make the comparison bitwise: every value is a small integer and,
where partial sums are rounded (a 16-bit split-K output, summed by packed atomics), the
reduction operand is made sparse so that every partial sum is an integer the rounding type
holds exactly. `real` inputs are normally distributed; the answer then carries a tolerance.
The accumulator epilogue (bias, scale, relu, clamps) is applied in f32 to each value the
kernel stores: under atomic split-K, to each slice's partial sum (docs/kernels.md §8)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from rocke_py.exec import reference as ref
from rocke_py.exec.fp import round_to, to_f64
from rocke_py.exec.reference import Conv

from .problem import RECORD_FIELDS, Problem, ceil_div, dgrad_records

#: buffer names, A, B, D, by family (the kernels' params)
NAMES = {"fwd": ("X", "W", "Y"), "wgrad": ("dY", "X", "dW"), "dgrad": ("dY", "W", "dX")}
#: the largest integer magnitude up to which every integer is exact in the type
EXACT = {"f16": 2048, "bf16": 256, "f32": 2**24}
#: the unit roundoff of the type (half an ulp of 1)
UNIT = {"f16": 2.0**-11, "bf16": 2.0**-8, "f32": 2.0**-24}
#: integer inputs lie in [-AMAX, AMAX]
AMAX = 3


@dataclass(frozen=True)
class Case:
    """One kernel launch and its expected output."""

    family: str
    conv: Conv
    buffers: dict[str, np.ndarray]
    scalars: dict[str, int]
    split_degree: Optional[int]
    output: str
    out_elem: str
    want: np.ndarray  # float64: the reference rounded to the output type
    tolerance: Optional[np.ndarray]  # None: bitwise
    nan_filled: bool  # the output starts as NaN (False: zeroed, as the caller of atomics must)

    def size(self) -> str:
        c = self.conv
        spatial = "x".join(str(v) for v in c.size_in)
        filt = "x".join(str(v) for v in c.filt)
        group = f" g{c.groups}" if c.groups > 1 else ""
        degree = f" ks×{self.split_degree}" if self.split_degree else ""
        return f"N{c.n} {spatial} C{c.c} K{c.k} {filt}{group}{degree}"


def parts_of(p: Problem, degree: Optional[int]) -> int:
    """The number of partial sums per output element: split_k, or the runtime degree."""
    if p.split_k == 0:
        if not degree:
            raise ValueError("a runtime split-K kernel needs a degree to launch with")
        return degree
    return max(1, p.split_k)


def runtime_degrees(p: Problem) -> tuple[int, ...]:
    """The degrees a runtime split-K kernel can be launched with (docs/numerics.md §2): each
    slice is a whole number of K tiles and the slices cover exactly the K tiles
    (`ks·ks_count` = roundup(wg_K, tile_k), docs/engine-contract.md §8.2), so the degree divides
    the tile count; 1 (no split) only when wg_K fits in one K tile."""
    tiles = ceil_div(p.out_pixels, p.tile_k)
    return tuple(d for d in range(2, tiles + 1) if tiles % d == 0) or (1,)


def slice_width(p: Problem, parts: int) -> int:
    """wgrad's K per slice: wg_K_padded / split_k (docs/reference/conv-semantics.md §10.1), or for a runtime
    degree the width that makes `parts` slices cover the K tiles."""
    wg_k = p.out_pixels
    if p.split_k == 0:
        return ceil_div(wg_k, p.tile_k) // parts * p.tile_k
    return ceil_div(wg_k, p.tile_k * parts) * p.tile_k


def wgrad_slice_of(p: Problem, parts: int) -> np.ndarray:
    """The slice of each dY pixel (n, [do,] ho, wo): its flat index over the slice width."""
    c = p.conv
    width = slice_width(p, parts)
    return (np.arange(p.out_pixels) // width).reshape((c.n, *c.size_out))


def dgrad_slice_of(p: Problem, parts: int) -> np.ndarray:
    """The slice of each W element's (k, y, x): conv-semantics §2.4 and §10.2, the reduction
    index k_sub = (ydot·x_dot_slice + xdot)·kpg + k_out over the record's slice width."""
    c = p.conv
    (fy, fx), (sh, sw), (dh, dw) = c.filt, c.stride, c.dil
    y_tilde, x_tilde = sh // np.gcd(sh, dh), sw // np.gcd(sw, dw)
    out = np.zeros((c.k, fy, fx), dtype=np.int64)
    k_out = np.arange(c.k) % c.kpg
    for y in range(fy):
        for x in range(fx):
            y_dot_slice = ceil_div(fy - y % y_tilde, y_tilde)
            x_dot_slice = ceil_div(fx - x % x_tilde, x_tilde)
            gemm_k = y_dot_slice * x_dot_slice * c.kpg
            width = ceil_div(gemm_k, p.tile_k * parts) * p.tile_k
            k_sub = ((y // y_tilde) * x_dot_slice + x // x_tilde) * c.kpg + k_out
            out[:, y, x] = k_sub // width
    return out


def slice_masks(p: Problem, parts: int) -> tuple[int, list[np.ndarray]]:
    """(operand index, one 0/1 mask per slice over that operand) of an atomic split-K."""
    if p.family == "wgrad":
        slices = wgrad_slice_of(p, parts)[..., None]
        return 0, [(slices == s).astype(np.float64) for s in range(parts)]
    slices = dgrad_slice_of(p, parts)[..., None]
    return 1, [(slices == s).astype(np.float64) for s in range(parts)]


def reduction(family: str, conv: Conv) -> tuple[int, tuple[int, ...]]:
    """(the reduction length, the axes of operand A or B that run along it, as
    (operand index, axes))."""
    taps = int(np.prod(conv.filt))
    if family == "fwd":  # Y = Σ over (taps, c) of X·W: thin out W along (taps, cpg)
        return taps * conv.cpg, (1, *range(1, len(conv.filt) + 2))
    if family == "wgrad":  # dW = Σ over (n, spatial out) of dY·X: thin out dY's pixels
        return conv.n * int(np.prod(conv.size_out)), (0, *range(0, len(conv.filt) + 1))
    return taps * conv.kpg, (1, *range(0, len(conv.filt) + 1))  # dX: W along (k, taps)


def sparse_mask(rng: np.random.Generator, shape: tuple[int, ...], axes: tuple[int, ...], keep: int) -> np.ndarray:
    """A 0/1 mask over `shape`, constant along the axes not in `axes`, with `keep` ones among
    the positions of `axes` (so at most `keep` nonzero terms meet in any one reduction)."""
    sub = tuple(shape[a] if a in axes else 1 for a in range(len(shape)))
    flat = np.zeros(int(np.prod(sub)))
    flat[rng.choice(flat.size, size=min(keep, flat.size), replace=False)] = 1
    return flat.reshape(sub)


def integer_operands(
    rng: np.random.Generator, family: str, conv: Conv, shapes: tuple[tuple[int, ...], ...], keep: int
) -> tuple[np.ndarray, np.ndarray]:
    a = rng.integers(-AMAX, AMAX + 1, size=shapes[0]).astype(np.float64)
    b = rng.integers(-AMAX, AMAX + 1, size=shapes[1]).astype(np.float64)
    length, (which, *axes) = reduction(family, conv)
    if length > keep:  # any partial sum of `keep` terms is at most keep·AMAX²
        ops = [a, b]
        ops[which] = ops[which] * sparse_mask(rng, shapes[which], tuple(axes), max(1, keep))
        a, b = ops
    return a, b


def reference(family: str, conv: Conv, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if family == "fwd":
        return ref.conv_fwd(conv, a, b)
    if family == "wgrad":
        return ref.conv_wgrad(conv, b, a)
    return ref.conv_dgrad(conv, a, b)


def record_stored(p: Problem) -> np.ndarray:
    """dgrad: the dX positions (n, hi, wi, c) some sub-GEMM record stores — rows
    `d_h_offset + d_h_stride·t` (t < h_slice) crossed with its columns alike (conv-semantics
    §2.5). The others get zero, from the zero phase or the caller (§13), never the epilogue."""
    c = p.conv
    hi, wi = c.size_in
    stored = np.zeros((hi, wi), dtype=bool)
    fields = {name: i for i, name in enumerate(RECORD_FIELDS)}
    for r in dgrad_records(p):
        rows = r[fields["d_h_offset"]] + r[fields["d_h_stride"]] * np.arange(r[fields["h_slice"]])
        cols = r[fields["d_w_offset"]] + r[fields["d_w_stride"]] * np.arange(r[fields["w_slice"]])
        rows, cols = rows[(rows >= 0) & (rows < hi)], cols[(cols >= 0) & (cols < wi)]
        stored[np.ix_(rows, cols)] = True
    return stored[None, :, :, None]


def epilogue_of(p: Problem, acc: np.ndarray) -> np.ndarray:
    """The f32 values the kernel stores for accumulators `acc`: the epilogue where a record
    stores (every element outside dgrad), zero elsewhere."""
    values = p.epilogue.apply(acc)
    if p.family == "dgrad" and not p.epilogue.identity:
        values = np.where(record_stored(p), values, np.float32(0))
    return values


def stored_values(p: Problem, a: np.ndarray, b: np.ndarray, parts: int) -> list[np.ndarray]:
    """What the kernel adds into each output element: one f32 value per slice, the epilogue
    applied to that slice's (exact) partial sum; rounded to dtype_d first when a 16-bit
    atomic adds it."""
    ed = p.elem("d")
    if parts == 1:
        return [epilogue_of(p, reference(p.family, p.conv, a, b))]
    which, masks = slice_masks(p, parts)
    values = []
    for mask in masks:
        ops = [a, b]
        ops[which] = ops[which] * mask
        v = epilogue_of(p, reference(p.family, p.conv, *ops))
        values.append(to_f64(round_to(v, ed), ed) if ed != "f32" else v.astype(np.float64))
    return values


def rounding_type(p: Problem, parts: int) -> str:
    """The type every partial sum is rounded to: dtype_d when slices meet in atomics, else the
    f32 accumulator."""
    return p.elem("d") if parts > 1 else "f32"


def shapes_of(p: Problem) -> tuple[tuple[int, ...], ...]:
    c = p.conv
    return {
        "fwd": (c.x_shape(), c.w_shape(), c.y_shape()),
        "wgrad": (c.y_shape(), c.x_shape(), c.w_shape()),
        "dgrad": (c.y_shape(), c.w_shape(), c.x_shape()),
    }[p.family]


def launch_scalars(p: Problem, parts: int) -> dict[str, int]:
    """The i32 kernel arguments beyond the buffer sizes, derived from the problem."""
    if p.family == "dgrad":
        return {"num_sub_gemms": int(dgrad_records(p).shape[0])}
    if p.family == "wgrad" and p.split_k == 0:
        scalars = {"ks": slice_width(p, parts)}
        if p.conv.groups > 1:
            scalars["ks_count"] = parts
        return scalars
    return {}


def build_case(p: Problem, real: bool = False, seed: int = 0, degree: Optional[int] = None) -> Case:
    """The launch for problem `p` (a runtime split-K kernel with `degree` slices)."""
    family, conv = p.family, p.conv
    ea, eb, ed = p.elem("a"), p.elem("b"), p.elem("d")
    parts = parts_of(p, degree)
    shapes = shapes_of(p)
    rng = np.random.default_rng(seed)
    limit = EXACT[rounding_type(p, parts)]
    multiplier, addend = p.epilogue.magnitude(parts)
    if real:
        a, b = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    else:
        keep = (limit // max(1, multiplier) - addend) // (AMAX * AMAX)
        a, b = integer_operands(rng, family, conv, shapes[:2], keep)
    a, b = to_f64(round_to(a, ea), ea), to_f64(round_to(b, eb), eb)  # what the kernel reads
    total = np.sum(stored_values(p, a, b, parts), axis=0)
    want = to_f64(round_to(total, ed), ed)
    magnitude = reference(family, conv, np.abs(a), np.abs(b))
    bound = multiplier * magnitude + addend  # Σ over slices of |stored value|
    tolerance = None
    if real or float(bound.max(initial=0.0)) > limit:
        # the f32 accumulation over the reduction errs by at most L·u·Σ|terms| (times the
        # scale), each of the parts roundings to dtype_d and the final one by u(dtype_d) of
        # the bound, the f32 epilogue by 2u of it: a bound, not an estimate
        length = reduction(family, conv)[0]
        tolerance = (
            abs(p.epilogue.scale) * length * UNIT["f32"] * magnitude
            + (parts + 1) * UNIT[ed] * bound
            + 2 * parts * UNIT["f32"] * bound
        )
    atomic = parts > 1 or p.split_k == 0  # a runtime split-K kernel adds by atomics at any degree
    na, nb, nd = NAMES[family]
    d = np.zeros(shapes[2]) if atomic else np.full(shapes[2], np.nan)
    buffers = {na: round_to(a, ea), nb: round_to(b, eb), nd: round_to(d, ed)}
    if family == "dgrad":
        buffers["sub_gemm_buf"] = dgrad_records(p)
    runtime = parts if p.split_k == 0 else None
    return Case(family, conv, buffers, launch_scalars(p, parts), runtime, nd, ed, want, tolerance, not atomic)
