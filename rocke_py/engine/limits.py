"""Limits this project adds beyond the reference (docs/engine-contract.md §8): every i32 the
kernel computes fits in an i32 (CONV_INT32_RANGE), and no kernel is larger than
MAX_KERNEL_OPS IR ops (CONV_KERNEL_SIZE; the builder enforces the same bound).

Twin of rocke_c/src/limits.c, function for function. Every check returns its message, or
None when the limit holds; the rules themselves are rows of validate.py's tables."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .arch import Target
from .mma_atoms import atom_for
from .problem import SUB_GEMM_FIELDS, ConvProblem, ceildiv, dgrad_sub_gemms, roundup, sub_gemm_candidates
from .result import Rejected
from .spec import ConvSpec, async_tiles, elem_bytes, load_widths, tile_dwords, unrolled_k_iters, wg_k_padded

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
MAX_KERNEL_OPS = 65536  # IR ops of any kernel an engine builds (docs/kernels.md §9)
MAX_OUTPUT_BYTES = 16777216  # bytes of any emitted text, every mode and flavor

# ---- CONV_INT32_RANGE: i32 quantities of the kernel (docs/engine-contract.md §8.2) ----

Span = tuple[int, int]  # the values a quantity takes across the grid, lo..hi


def fits(value: int) -> bool:
    return INT32_MIN <= value <= INT32_MAX


def span_text(name: str, span: Span) -> str:
    return f"{name} in {span[0]}..{span[1]}"


def first_outside(lo: int, hi: int) -> Optional[int]:
    """The first bound of lo..hi outside int32 (lo before hi), or None."""
    for value in (lo, hi):
        if not fits(value):
            return value
    return None


def reaches(what: str, value: int, keys: list[str]) -> str:
    return f"{what} reaches {value} across the grid, outside int32 ({', '.join(keys)})"


def linear(terms: list[tuple[str, Span, str, int]]) -> tuple[Optional[int], Span]:
    """sum of coordinate*coefficient, left to right as the builder adds them: the first
    product or partial sum outside int32 (or None), and the span of the sum."""
    total: Optional[Span] = None
    for _, (lo, hi), _, coeff in terms:
        a, b = lo * coeff, hi * coeff
        product = (min(a, b), max(a, b))
        bad = first_outside(*product)
        if bad is not None:
            return bad, product
        total = product if total is None else (total[0] + product[0], total[1] + product[1])
        bad = first_outside(*total)
        if bad is not None:
            return bad, total
    assert total is not None
    return None, total


def linear_expr(terms: list[tuple[str, Span, str, int]]) -> str:
    """The sum as the builder writes it (a coefficient 1 drops its factor)."""
    return " + ".join(f"{name}*{coeff_name}" if coeff_name else name for name, _, coeff_name, _ in terms)


def linear_keys(terms: list[tuple[str, Span, str, int]]) -> list[str]:
    keys = []
    for name, span, coeff_name, coeff in terms:
        keys.append(f"{name} = {span[0]}" if span[0] == span[1] else span_text(name, span))
        if coeff_name:
            keys.append(f"{coeff_name} = {coeff}")
    return keys


def check_linear(pre: str, result: str, terms: list[tuple[str, Span, str, int]]) -> tuple[Optional[str], Span]:
    bad, span = linear(terms)
    if bad is None:
        return None, span
    return reaches(f"{pre}{result} = {linear_expr(terms)}", bad, linear_keys(terms)), span


def horner(start: tuple[str, Span], steps: list[tuple[str, int, str, Span]], scale: int) -> Optional[int]:
    """(((c0*d1 + c1)*d2 + c2)...)*scale over spans: the first product, sum or the scaled
    result outside int32, or None."""
    lo, hi = start[1]
    bad = first_outside(lo, hi)
    if bad is not None:
        return bad
    for _, dim, _, (clo, chi) in steps:
        lo, hi = lo * dim, hi * dim
        bad = first_outside(lo, hi)
        if bad is not None:
            return bad
        lo, hi = lo + clo, hi + chi
        bad = first_outside(lo, hi)
        if bad is not None:
            return bad
    return first_outside(lo * scale, hi * scale)


def dim_name(name: str) -> str:
    return f"({name})" if "*" in name else name


def check_offset(
    pre: str, tensor: str, start: tuple[str, Span], steps: list[tuple[str, int, str, Span]], scale: int
) -> Optional[str]:
    """A tensor offset computed in Horner form; scale is the element size (1: an element offset)."""
    bad = horner(start, steps, scale)
    if bad is None:
        return None
    expr = start[0]
    keys = [span_text(*start)]
    for name, dim, coord, span in steps:
        expr = f"({expr}*{dim_name(name)} + {coord})"
        keys.append(f"{name} = {dim}")
        keys.append(span_text(coord, span))
    kind = "element"
    if scale > 1:
        expr = f"{expr}*{scale}"
        kind = "byte"
    return reaches(f"{pre}the {tensor} {kind} offset {expr}", bad, keys)


# -- the three tensors of a family, their dims and their byte sizes --


@dataclass(frozen=True)
class Tensor:
    name: str  # the kernel's param name (dY, X, dW, ...)
    dtype_key: str  # dtype_a, dtype_b or dtype_d
    dims: tuple[tuple[str, int], ...]


def nhwc(name: str, dtype_key: str, p: ConvProblem) -> Tensor:
    depth = (("Di", p.Di),) if p.is_3d else ()
    return Tensor(name, dtype_key, (("N", p.N),) + depth + (("Hi", p.Hi), ("Wi", p.Wi), ("C", p.C)))


def nhwk(name: str, dtype_key: str, p: ConvProblem) -> Tensor:
    depth = (("Do", p.Do),) if p.is_3d else ()
    return Tensor(name, dtype_key, (("N", p.N),) + depth + (("Ho", p.Ho), ("Wo", p.Wo), ("K", p.K)))


def kyxc(name: str, dtype_key: str, p: ConvProblem) -> Tensor:
    depth = (("Z", p.Z),) if p.is_3d else ()
    return Tensor(name, dtype_key, (("K", p.K),) + depth + (("Y", p.Y), ("X", p.X), ("cpg", p.cpg)))


def tensors(s: ConvSpec, p: ConvProblem) -> tuple[Tensor, Tensor, Tensor]:
    """A, B, D in param order (build_*.NAMES)."""
    if s.family == "fwd":
        return nhwc("X", "dtype_a", p), kyxc("W", "dtype_b", p), nhwk("Y", "dtype_d", p)
    if s.family == "wgrad":
        return nhwk("dY", "dtype_a", p), nhwc("X", "dtype_b", p), kyxc("dW", "dtype_d", p)
    return nhwk("dY", "dtype_a", p), kyxc("W", "dtype_b", p), nhwc("dX", "dtype_d", p)


def dtype_of(s: ConvSpec, key: str) -> str:
    return {"dtype_a": s.dtype_a, "dtype_b": s.dtype_b, "dtype_d": s.dtype_d}[key]


def tensor_bytes(s: ConvSpec, p: ConvProblem) -> Optional[str]:
    """Each <name>_bytes param (and the buffer resource built from it) is an i32."""
    for t in tensors(s, p):
        dtype = dtype_of(s, t.dtype_key)
        eb = elem_bytes(dtype)
        total = eb
        for _, value in t.dims:
            total *= value
        if total > INT32_MAX:
            formula = "*".join(name for name, _ in t.dims)
            keys = ", ".join(f"{name} = {value}" for name, value in t.dims)
            return f"{t.name}_bytes = {formula}*{eb} exceeds {INT32_MAX} ({keys}, {t.dtype_key} = {dtype})"
    return None


# -- the grid: GEMM index ranges, the K loop, block ids --


def m_formula(p: ConvProblem) -> str:
    return "N*Do*Ho*Wo" if p.is_3d else "N*Ho*Wo"


def k_formula(p: ConvProblem) -> str:
    return "Z*Y*X*cpg" if p.is_3d else "Y*X*cpg"


def k_extent(s: ConvSpec, p: ConvProblem) -> int:
    """fwd, wgrad: where the K loop's induction variable ends (k_hi rounded up to tile_k;
    an `add nsw` reaches it), one more than the largest k index of a load."""
    if s.family == "fwd":
        return roundup(p.filter_z * p.Y * p.X * p.cpg, s.tile_k)
    return wg_k_padded(s, p, max(s.split_k, 1))


def k_loop_end(s: ConvSpec, p: ConvProblem) -> Optional[str]:
    """wgrad split-K: the last slice's loop runs to wg_K_padded(split_k). (Without split-K the
    K extent is below K_gemm + tile_k, and tensor_bytes keeps K_gemm <= 2^30; dgrad's is the
    record field gemm_k_padded, engine-contract §6.)"""
    if s.family != "wgrad" or s.split_k <= 1:
        return None
    end = k_extent(s, p)
    if end <= INT32_MAX:
        return None
    return (
        f"the K loop runs to roundup({m_formula(p)}, tile_k*split_k) = {end}, outside int32 "
        f"({m_formula(p)} = {p.N * p.out_depth * p.Ho * p.Wo}, tile_k = {s.tile_k}, split_k = {s.split_k})"
    )


def grid_z(s: ConvSpec, p: ConvProblem) -> Optional[str]:
    """wgrad split-K: block_id z runs over groups*split_k (split_k = 0: the caller's ks_count)."""
    if s.family == "wgrad" and s.split_k > 1:
        last = p.groups * s.split_k - 1
        if last > INT32_MAX:
            return reaches("block_id z = groups*split_k - 1", last, [f"groups = {p.groups}", f"split_k = {s.split_k}"])
    return None


def chiplet_width(s: ConvSpec, p: ConvProblem) -> Optional[str]:
    """The chiplet remap's super-tile width chiplet_wgm*grid_n is an i32 constant."""
    if not s.chiplet_swizzle or s.family == "dgrad":
        return None
    gemm_n = p.kpg if s.family == "fwd" else p.filter_z * p.Y * p.X * p.cpg
    grid_n = ceildiv(gemm_n, s.tile_n)
    width = s.chiplet_wgm * grid_n
    if width <= INT32_MAX:
        return None
    name = "kpg" if s.family == "fwd" else k_formula(p)
    return (
        f"the chiplet super-tile width chiplet_wgm*ceil({name}/tile_n) = {width} is outside int32 "
        f"(chiplet_wgm = {s.chiplet_wgm}, {name} = {gemm_n}, tile_n = {s.tile_n})"
    )


# -- the descriptors: every offset a load or store computes, over the padded grid --


def tap(
    axis: str,
    out: str,
    out_last: int,
    stride: tuple[str, int],
    filt: str,
    filt_last: int,
    dil: tuple[str, int],
    pad: tuple[str, int],
) -> tuple[Optional[str], Span]:
    """input_offset's tap: in = out*stride + filt*dil - pad (builder order)."""
    terms = [
        (out, (0, out_last), stride[0], stride[1]),
        (filt, (0, filt_last), dil[0], dil[1]),
        (pad[0], (1, 1), "", -pad[1]),
    ]
    bad, span = linear(terms)
    if bad is None:
        return None, span
    expr = f"{out}*{stride[0]} + {filt}*{dil[0]} - {pad[0]}"
    keys = [
        span_text(out, (0, out_last)),
        f"{stride[0]} = {stride[1]}",
        span_text(filt, (0, filt_last)),
        f"{dil[0]} = {dil[1]}",
        f"{pad[0]} = {pad[1]}",
    ]
    return reaches(f"the input coordinate {axis} = {expr}", bad, keys), span


def input_view(p: ConvProblem, m_end: int, k_end: int, tensor: str, eb: int) -> Optional[str]:
    """input_offset (X, NHWC) at m in [0, m_end), k in [0, k_end): m -> (n, [do,] ho, wo),
    k -> ([z,] y, x, c)."""
    n_last = (m_end - 1) // (p.out_depth * p.Ho * p.Wo)
    if p.is_3d:
        y_last = p.Y - 1
        z_last = (k_end - 1) // (p.cpg * p.X * p.Y)
    else:
        y_last = (k_end - 1) // (p.cpg * p.X)
        z_last = 0
    bad, hi = tap("hi", "ho", p.Ho - 1, ("sH", p.sH), "y", y_last, ("dH", p.dH), ("pH", p.pH))
    if bad:
        return bad
    bad, wi = tap("wi", "wo", p.Wo - 1, ("sW", p.sW), "x", p.X - 1, ("dW", p.dW), ("pW", p.pW))
    if bad:
        return bad
    steps = []
    if p.is_3d:
        bad, di = tap("di", "do", p.Do - 1, ("sD", p.sD), "z", z_last, ("dD", p.dD), ("pD", p.pD))
        if bad:
            return bad
        steps.append(("Di", p.Di, "di", di))
    steps += [("Hi", p.Hi, "hi", hi), ("Wi", p.Wi, "wi", wi), ("C", p.C, "c", (0, p.C - 1))]
    return check_offset("", tensor, ("n", (0, n_last)), steps, eb)


def fwd_offsets(s: ConvSpec, p: ConvProblem) -> Optional[str]:
    m_end, k_end = roundup(p.N * p.out_depth * p.Ho * p.Wo, s.tile_m), k_extent(s, p)
    n_end = roundup(p.kpg, s.tile_n)
    gemm_k = p.filter_z * p.Y * p.X * p.cpg
    return (
        input_view(p, m_end, k_end, "X", elem_bytes(s.dtype_a))
        or check_offset(
            "",
            "W",
            ("k_out", (0, n_end - 1 + p.K - p.kpg)),
            [(k_formula(p), gemm_k, "k", (0, k_end - 1))],
            elem_bytes(s.dtype_b),
        )
        or check_offset(
            "", "Y", ("m", (0, m_end - 1)), [("K", p.K, "k", (0, p.K - p.kpg + n_end - 1))], elem_bytes(s.dtype_d)
        )
    )


def wgrad_offsets(s: ConvSpec, p: ConvProblem) -> Optional[str]:
    wg_n = p.filter_z * p.Y * p.X * p.cpg
    m_end, n_end, k_end = roundup(p.kpg, s.tile_m), roundup(wg_n, s.tile_n), k_extent(s, p)
    bad = check_offset(
        "", "dY", ("k", (0, k_end - 1)), [("K", p.K, "k_out", (0, p.K - p.kpg + m_end - 1))], elem_bytes(s.dtype_a)
    )
    if bad:
        return bad
    if p.is_pointwise:
        bad = check_offset(
            "", "X", ("k", (0, k_end - 1)), [("C", p.C, "c", (0, p.C - p.cpg + n_end - 1))], elem_bytes(s.dtype_b)
        )
    else:
        bad = input_view(p, k_end, n_end, "X", elem_bytes(s.dtype_b))
    if bad:
        return bad
    d_scale = 1 if s.atomic_split_k else elem_bytes(s.dtype_d)
    return check_offset(
        "", "dW", ("k_out", (0, m_end - 1 + p.K - p.kpg)), [(k_formula(p), wg_n, "n", (0, n_end - 1))], d_scale
    )


def check_strided(
    pre: str, result: str, r: dict[str, int], index: tuple[str, Span], stride_key: str, offset_key: str
) -> tuple[Optional[str], Span]:
    """check_linear of index*stride + offset, the stride and offset fields of the record r."""
    name, span = index
    return check_linear(
        pre, result, [(name, span, stride_key, r[stride_key]), (offset_key, (r[offset_key],) * 2, "", 1)]
    )


def dgrad_record(s: ConvSpec, p: ConvProblem, index: int, r: dict[str, int]) -> Optional[str]:
    """One sub-GEMM's loads and stores (build_dgrad's descriptors over the record's padded tiles)."""
    pre = f"sub-GEMM {index}: "
    m_end = r["num_m_tiles"] * s.tile_m
    if m_end - 1 > INT32_MAX:
        return reaches(
            f"{pre}the m index num_m_tiles*tile_m - 1", m_end - 1, [f"gemm_m = {r['gemm_m']}", f"tile_m = {s.tile_m}"]
        )
    n_end = r["num_n_tiles"] * s.tile_n
    hw = r["h_slice"] * r["w_slice"]
    img = (0, (m_end - 1) // hw)
    htl, wtl = (0, r["h_slice"] - 1), (0, r["w_slice"] - 1)
    yx_last = (r["gemm_k_padded"] - 1) // p.kpg
    ydot = (0, yx_last // r["x_dot_slice"])
    xdot = (0, min(r["x_dot_slice"] - 1, yx_last))
    bad, ho = check_linear(
        pre,
        "the dY row ho",
        [("htl", htl, "", 1), ("h_begin", (r["h_begin"],) * 2, "", 1), ("ydot", ydot, "a_h_coeff", r["a_h_coeff"])],
    )
    if bad:
        return bad
    bad, wo = check_linear(
        pre,
        "the dY column wo",
        [("wtl", wtl, "", 1), ("w_begin", (r["w_begin"],) * 2, "", 1), ("xdot", xdot, "a_w_coeff", r["a_w_coeff"])],
    )
    if bad:
        return bad
    bad = check_offset(
        pre,
        "dY",
        ("n", img),
        [("Ho", p.Ho, "ho", ho), ("Wo", p.Wo, "wo", wo), ("K", p.K, "k", (0, p.K - 1))],
        elem_bytes(s.dtype_a),
    )
    if bad:
        return bad
    bad, y = check_strided(pre, "the filter row y", r, ("ydot", ydot), "b_y_stride", "b_y_offset")
    if bad:
        return bad
    bad, x = check_strided(pre, "the filter column x", r, ("xdot", xdot), "b_x_stride", "b_x_offset")
    if bad:
        return bad
    bad = check_offset(
        pre,
        "W",
        ("k_out", (0, p.K - 1)),
        [("Y", p.Y, "y", y), ("X", p.X, "x", x), ("cpg", p.cpg, "c", (0, n_end - 1))],
        elem_bytes(s.dtype_b),
    )
    if bad:
        return bad
    bad, hi = check_strided(pre, "the dX row hi", r, ("htl", htl), "d_h_stride", "d_h_offset")
    if bad:
        return bad
    bad, wi = check_strided(pre, "the dX column wi", r, ("wtl", wtl), "d_w_stride", "d_w_offset")
    if bad:
        return bad
    d_scale = 1 if s.split_k > 1 else elem_bytes(s.dtype_d)
    return check_offset(
        pre,
        "dX",
        ("n", img),
        [("Hi", p.Hi, "hi", hi), ("Wi", p.Wi, "wi", wi), ("C", p.C, "c", (0, p.C - p.cpg + n_end - 1))],
        d_scale,
    )


def dgrad_offsets(s: ConvSpec, p: ConvProblem) -> Optional[str]:
    records = dgrad_sub_gemms(p, s.tile_m, s.tile_n, s.tile_k, s.split_k)
    if isinstance(records, Rejected):
        return None  # a record outside int32 is E_RANGE's, reported by mode spec's print
    total = 0
    for index, values in enumerate(records):
        r = dict(zip(SUB_GEMM_FIELDS, values))
        bad = dgrad_record(s, p, index, r)
        if bad:
            return bad
        total = r["block_start"] + r["num_m_tiles"] * r["num_n_tiles"]
    if total - 1 > INT32_MAX:
        return reaches(
            "block_id x = (tiles over all sub-GEMMs) - 1",
            total - 1,
            [f"sub-GEMMs = {len(records)}", f"tile_m = {s.tile_m}", f"tile_n = {s.tile_n}"],
        )
    return None


def int32_range(s: ConvSpec, p: ConvProblem) -> Optional[str]:
    """CONV_INT32_RANGE: the first i32 of the kernel that would not fit (docs/engine-contract.md §8.2)."""
    offsets = {"fwd": fwd_offsets, "wgrad": wgrad_offsets, "dgrad": dgrad_offsets}[s.family]
    return tensor_bytes(s, p) or k_loop_end(s, p) or grid_z(s, p) or chiplet_width(s, p) or offsets(s, p)


# ---- CONV_KERNEL_SIZE: the IR ops of the kernel (docs/kernels.md §9) ----
# Upper bounds of the ops each builder piece creates, counting every constant as if it were
# not cached and every x*1, x/1, x+0 as if it made an op.


def desc_ops(s: ConvSpec, p: ConvProblem, operand: str) -> int:
    """One call of the family's descriptor for operand a, b or d."""
    if s.family == "dgrad":
        return {"a": 38, "b": 32, "d": 31}[operand]
    input_ops = 74 if p.is_3d else 53
    if operand == "a" and s.family == "fwd":
        return input_ops
    if operand == "b" and s.family == "wgrad" and not p.is_pointwise:
        return input_ops
    return 11


def probes_bound(p: ConvProblem) -> int:
    """dgrad's search probes, ceil(log2(max(n, 2))) + 1, for n <= the candidate count."""
    rows, cols = sub_gemm_candidates(p)
    return (max(rows * cols, 2) - 1).bit_length() + 1


def zero_ops_bound(s: ConvSpec, p: ConvProblem) -> int:
    """build_dgrad.zero_untouched, emitted only with a stride > 1 (stride 1 stores every dX
    position) and without split-K atomics: at most 48 ops and 14 per run of rows or columns
    (at most one run per candidate row or column)."""
    if s.family != "dgrad" or s.atomic_split_k or (p.sH == 1 and p.sW == 1):
        return 0
    rows, cols = sub_gemm_candidates(p)
    return 48 + 14 * (rows + cols)


@dataclass(frozen=True)
class OpsBound:
    total: int
    steps: int  # K steps whose body the builder emits (1: the runtime loop)
    per_step: int
    epilogue: int


def kernel_ops_bound(s: ConvSpec, p: ConvProblem, t: Target) -> OpsBound:
    atom = atom_for(t, s.dtype_a, s.warp_tile_m, s.warp_tile_n, s.warp_tile_k)
    mfm = s.tile_m // s.warp_m // s.warp_tile_m
    mfn = s.tile_n // s.warp_n // s.warp_tile_n
    kk = s.tile_k // s.warp_tile_k
    block = s.block_size
    vec_a, vec_b, vec_c = load_widths(s, p)
    outer_a = s.lds_k_outer and s.family == "wgrad"
    outer_b = s.lds_k_outer and s.family != "fwd"
    # the LDS store of one loaded chunk: one wide store, or one per element along mn
    row_a = s.family == "wgrad"
    row_b = s.family == "wgrad" or (s.family == "dgrad" and vec_b > 1)
    store_a = 4 * vec_a if row_a and not outer_a else 1
    store_b = 4 * vec_b if row_b and not outer_b else 1
    passes_a = ceildiv(s.tile_m * s.tile_k // vec_a, block)
    passes_b = ceildiv(s.tile_n * s.tile_k // vec_b, block)
    d_a, d_b, d_d = desc_ops(s, p, "a"), desc_ops(s, p, "b"), desc_ops(s, p, "d")
    load = passes_a * (19 + d_a + store_a) + passes_b * (19 + d_b + store_b)
    # the MMA phase: per kk step the fragments, the MMAs and two schedule hints
    reads = atom.frag // (4 if s.wave_size == 64 else 8)
    plain_read = 5 if atom.kind == "wmma_gfx12" else 1
    read_a = 2 * reads - 1 if outer_a else plain_read
    read_b = 2 * reads - 1 if outer_b else plain_read
    mma = 2 + kk * (mfm * read_a + mfn * read_b + mfm * mfn + 2)
    plan = 8 if (outer_a or outer_b) and s.wave_size == 64 else 0
    for outer, count in ((outer_a, mfm), (outer_b, mfn)):
        plan += 14 + 2 * count + 2 * kk * reads if outer else 7 + 2 * count + 2 * kk
    # the K loop: the ops before the first step, and each step's
    if s.unroll_k or s.pipeline == "basic" or s.async_dma:
        steps = unrolled_k_iters(s, p)
    else:
        steps = 1
    if s.unroll_k:
        buffers = 2 if s.double_buffer else 1
        before, per_step = 2 * buffers + 1 + (load + 1 if buffers == 2 else 0), 4 + load + mma
    elif s.pipeline == "basic":
        before, per_step = 3 + load, 4 + load + mma
    elif s.async_dma:
        issue = 0
        for tile in async_tiles(s, p):
            dwords = tile_dwords(s, tile)
            assert dwords is not None  # CONV_ASYNC_NO_DWORDS comes first
            passes = tile.rows * tile.cols // (dwords * 4 // tile.elem_bytes) // block
            issue += passes * (17 + desc_ops(s, p, "a" if tile.operand == "A" else "b"))
        before, per_step = 27 + issue, 5 + issue + mma
    else:
        before, per_step = 0, 8 + load + mma
    # the epilogue: per accumulator slot, and the cshuffle store passes
    slots = mfm * mfn * atom.c_len
    acc = 2 * ((s.bias != 0) + (s.scale != 1) + s.relu + (s.clamp_min is not None) + (s.clamp_max is not None))
    epilogue = 10 + 2 * mfm + 2 * mfm * mfn
    if s.epilogue == "cshuffle":
        store = 1 + max(10, 4 * vec_c) if s.atomic_split_k else 5
        passes = ceildiv(s.tile_m * s.tile_n // vec_c, block)
        epilogue += slots * (5 + acc) + passes * (14 + d_d + store)
    else:
        store = 11 if s.atomic_split_k else 5
        epilogue += slots * (4 + acc + d_d + store)
    if s.family == "dgrad":
        decode = 103 + 11 * probes_bound(p) + zero_ops_bound(s, p)
    else:
        decode = (9 if s.family == "fwd" else 15) + (30 if s.chiplet_swizzle else 0)
    rest = 9 + decode + 3 + 4 + plan + before + 1
    return OpsBound(rest + steps * per_step + epilogue, steps, per_step, epilogue)


def kernel_size(s: ConvSpec, p: ConvProblem, t: Target) -> Optional[str]:
    bound = kernel_ops_bound(s, p, t)
    if bound.total <= MAX_KERNEL_OPS:
        return None
    return (
        f"the kernel would have up to {bound.total} IR ops, more than {MAX_KERNEL_OPS} "
        f"({bound.steps} K steps of up to {bound.per_step}, an epilogue of up to {bound.epilogue})"
    )
