"""The buffers a kernel runs on and the answer it must give.

Integer inputs (the default) make the comparison bitwise: every value is a small integer and,
where partial sums are rounded (a 16-bit split-K output, summed by packed atomics), the
reduction operand is made sparse so that every partial sum is an integer the rounding type
holds exactly. `real` inputs are normally distributed; the answer then carries a tolerance
(docs/numerics.md §2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from rocke_py.exec import reference as ref
from rocke_py.exec.fp import round_to, to_f64
from rocke_py.exec.reference import Conv
from rocke_py.exec.spec_text import DTYPES, conv_of, sub_gemm_records

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
        return f"N{c.n} {spatial} C{c.c} K{c.k} {filt}{group}"


def split_of(fields: dict[str, str], runtime_degree: int) -> tuple[int, Optional[int]]:
    """(the number of partial sums per output, the launch's runtime degree or None)."""
    split = int(fields.get("split_k", "1"))
    if split == 0:
        return runtime_degree, runtime_degree
    return max(split, 1), None


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
    rng: np.random.Generator, family: str, conv: Conv, shapes: tuple[tuple[int, ...], ...], limit: int
) -> tuple[np.ndarray, np.ndarray]:
    a = rng.integers(-AMAX, AMAX + 1, size=shapes[0]).astype(np.float64)
    b = rng.integers(-AMAX, AMAX + 1, size=shapes[1]).astype(np.float64)
    length, (which, *axes) = reduction(family, conv)
    keep = limit // (AMAX * AMAX)
    if length > keep:  # any partial sum of `keep` terms is at most `limit`: exact
        ops = [a, b]
        ops[which] = ops[which] * sparse_mask(rng, shapes[which], tuple(axes), keep)
        a, b = ops
    return a, b


def reference(family: str, conv: Conv, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if family == "fwd":
        return ref.conv_fwd(conv, a, b)
    if family == "wgrad":
        return ref.conv_wgrad(conv, b, a)
    return ref.conv_dgrad(conv, a, b)


def build_case(fields: dict[str, str], real: bool = False, seed: int = 0, runtime_degree: int = 2) -> Case:
    """The launch for the config whose mode `spec` text gave `fields`."""
    family = fields["family"]
    conv = conv_of(fields)
    ea, eb, ed = (DTYPES[fields[k]] for k in ("dtype_a", "dtype_b", "dtype_d"))
    parts, degree = split_of(fields, runtime_degree)
    shapes = {
        "fwd": (conv.x_shape(), conv.w_shape(), conv.y_shape()),
        "wgrad": (conv.y_shape(), conv.x_shape(), conv.w_shape()),
        "dgrad": (conv.y_shape(), conv.w_shape(), conv.x_shape()),
    }[family]
    rng = np.random.default_rng(seed)
    # partial sums are rounded to the output type when slices add up by atomics, else only
    # the f32 accumulator rounds them
    rounding = ed if parts > 1 else "f32"
    if real:
        a, b = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    else:
        a, b = integer_operands(rng, family, conv, shapes[:2], EXACT[rounding])
    a, b = to_f64(round_to(a, ea), ea), to_f64(round_to(b, eb), eb)  # what the kernel reads
    exact = reference(family, conv, a, b)
    want = to_f64(round_to(exact, ed), ed)
    tolerance = None
    if real:
        # each of the `parts` roundings to ed and the f32 accumulation over the reduction
        # errs by at most a unit roundoff times the sum of |terms| (a bound, not an estimate)
        magnitude = reference(family, conv, np.abs(a), np.abs(b))
        length = reduction(family, conv)[0]
        tolerance = (parts + 1) * UNIT[ed] * magnitude + length * UNIT["f32"] * magnitude
    atomic = parts > 1
    na, nb, nd = NAMES[family]
    d = np.zeros(shapes[2]) if atomic else np.full(shapes[2], np.nan)
    buffers = {na: round_to(a, ea), nb: round_to(b, eb), nd: round_to(d, ed)}
    scalars: dict[str, int] = {}
    if family == "dgrad":
        records = sub_gemm_records(fields)
        buffers["sub_gemm_buf"] = records
        scalars["num_sub_gemms"] = records.shape[0]
    return Case(family, conv, buffers, scalars, degree, nd, ed, want, tolerance, not atomic)
