"""Backward data: one kernel over the tilde sub-GEMMs of
docs/reference/conv-semantics.md §2.4–§2.5. Each CTA finds its record by a binary search of
block_start; A = dY, B = W, D = dX through the record.

Twin of rocke_c/src/build_dgrad.c."""

from __future__ import annotations

from math import ceil, log2

from . import build_common as bc
from .build_common import Kc, Operands
from .ir import Value, ptr
from .mma_atoms import IR_ELEM
from .problem import SUB_GEMM_FIELDS, ceildiv, roundup

NAMES = ("dY", "W", "dX")
RECORD_BYTES = 4 * len(SUB_GEMM_FIELDS)
#: The record fields the kernel reads, in record order: all but these two.
UNUSED_FIELDS = ("num_m_tiles", "y_dot_slice")


def add_params(kc: Kc) -> None:
    bc.add_tensor_params(kc, NAMES, atomic_d=kc.spec.split_k > 1)
    kc.params["sub_gemm_buf"] = kc.b.param("sub_gemm_buf", ptr("i32"), {"noalias": True, "readonly": True})
    kc.params["num_sub_gemms"] = kc.b.param("num_sub_gemms", "i32")


def search_record(kc: Kc, rsrc: Value, flat: Value, n: int) -> Value:
    """The last record whose block_start <= flat: ceil(log2(max(n, 2))) + 1 unrolled probes."""
    b = kc.b
    probes = ceil(log2(max(n, 2))) + 1
    idx = bc.c(kc, 0)
    for probe in range(probes):
        step = 1 << (probes - 1 - probe)
        cand = bc.add_c(kc, idx, step)
        inside = b.cmp("slt", cand, kc.params["num_sub_gemms"])
        at = bc.mul_c(kc, cand, RECORD_BYTES)
        oob = bc.c(kc, bc.OOB_OFFSET)
        boff = b.select(inside, at, oob)
        start = b.buffer_load(rsrc, boff, "i32", 1)
        reached = b.cmp("sle", start, flat)
        take = b.and_(inside, reached)
        idx = b.select(take, cand, idx)
    return b.readfirstlane(idx)


def load_record(kc: Kc, rsrc: Value, idx: Value) -> None:
    b = kc.b
    base = bc.mul_c(kc, idx, RECORD_BYTES)
    for at, name in enumerate(SUB_GEMM_FIELDS):
        if name in UNUSED_FIELDS:
            continue
        off = bc.add_c(kc, base, 4 * at)
        raw = b.buffer_load(rsrc, off, "i32", 1)
        kc.record[name] = b.readfirstlane(raw)


def block_decode(kc: Kc) -> None:
    """x: flat tile over all records; y: group; z: K slice."""
    b, s, p = kc.b, kc.spec, kc.problem
    flat = b.block_id(0)
    if p.groups > 1:
        kc.group = b.block_id(1)
    nbytes = bc.mul_c(kc, kc.params["num_sub_gemms"], RECORD_BYTES)
    rsrc = b.make_buffer_rsrc(kc.params["sub_gemm_buf"], nbytes)
    idx = search_record(kc, rsrc, flat, len(kc.plan.sub_gemms))
    load_record(kc, rsrc, idx)
    r = kc.record
    local = b.sub(flat, r["block_start"])
    m_tile = b.div(local, r["num_n_tiles"])
    n_tile = b.mod(local, r["num_n_tiles"])
    kc.m0 = bc.mul_c(kc, m_tile, s.tile_m)
    kc.n0 = bc.mul_c(kc, n_tile, s.tile_n)
    if s.split_k > 1:
        slice_ = b.block_id(2)
        k_slice = bc.div_c(kc, r["gemm_k_padded"], s.split_k)
        lo = b.mul(slice_, k_slice)
        hi = b.add(lo, k_slice)
        kc.k_lo = b.readfirstlane(lo)
        kc.k_hi = b.readfirstlane(hi)
    else:
        kc.k_lo = bc.c(kc, 0)
        kc.k_hi = r["gemm_k"]


def split_m(kc: Kc, m: Value) -> tuple[Value, Value, Value]:
    """m -> (n, htl, wtl) over the record's h_slice x w_slice."""
    b, r = kc.b, kc.record
    hw = b.mul(r["h_slice"], r["w_slice"])
    n = b.div(m, hw)
    rest = b.mod(m, hw)
    htl = b.div(rest, r["w_slice"])
    wtl = b.mod(rest, r["w_slice"])
    return n, htl, wtl


def split_k(kc: Kc, k: Value) -> tuple[Value, Value, Value]:
    """k_sub -> (k_out, ydot, xdot), k_out innermost (conv-semantics §2.3)."""
    b, p, r = kc.b, kc.problem, kc.record
    k_out = bc.mod_c(kc, k, p.kpg)
    yx = bc.div_c(kc, k, p.kpg)
    ydot = b.div(yx, r["x_dot_slice"])
    xdot = b.mod(yx, r["x_dot_slice"])
    return k_out, ydot, xdot


def affine(kc: Kc, x: Value, stride: str, offset: str) -> Value:
    """x*record[stride] + record[offset]."""
    scaled = kc.b.mul(x, kc.record[stride])
    return kc.b.add(scaled, kc.record[offset])


def desc_a(kc: Kc, mn: Value, k: Value) -> tuple[Value, Value]:
    """dY (NHWK) at (m, k_sub): ho = htl + h_begin + ydot*a_h_coeff, likewise wo."""
    b, p, r = kc.b, kc.problem, kc.record
    k_out, ydot, xdot = split_k(kc, k)
    n, htl, wtl = split_m(kc, mn)
    h0 = b.add(htl, r["h_begin"])
    hy = b.mul(ydot, r["a_h_coeff"])
    ho = b.add(h0, hy)
    w0 = b.add(wtl, r["w_begin"])
    wx = b.mul(xdot, r["a_w_coeff"])
    wo = b.add(w0, wx)
    conds = [bc.below(kc, ho, p.Ho), bc.below(kc, wo, p.Wo), bc.below_value(kc, mn, r["gemm_m"])]
    valid = bc.all_of(kc, conds + [bc.below_value(kc, k, r["gemm_k"])])
    return bc.pixel_offset(kc, n, (ho, p.Ho), (wo, p.Wo), (k_out, p.K), p.kpg), valid


def desc_b(kc: Kc, mn: Value, k: Value) -> tuple[Value, Value]:
    """W (KYXC) at (c = mn, k_sub): y = ydot*b_y_stride + b_y_offset, likewise x."""
    b, p, r = kc.b, kc.problem, kc.record
    k_out, ydot, xdot = split_k(kc, k)
    y = affine(kc, ydot, "b_y_stride", "b_y_offset")
    x = affine(kc, xdot, "b_x_stride", "b_x_offset")
    conds = [bc.below(kc, y, p.Y), bc.below(kc, x, p.X), bc.below(kc, mn, p.cpg)]
    valid = bc.all_of(kc, conds + [bc.below_value(kc, k, r["gemm_k"])])
    k_abs = bc.add_opt(kc, k_out, bc.group_base(kc, p.kpg))
    ky = bc.mul_c(kc, k_abs, p.Y)
    row = b.add(ky, y)
    rx = bc.mul_c(kc, row, p.X)
    tap = b.add(rx, x)
    base = bc.mul_c(kc, tap, p.cpg)
    off = b.add(base, mn)
    return off, valid


def desc_d(kc: Kc, m: Value, n: Value) -> tuple[Value, Value]:
    """dX (NHWC) at (m, c = n): hi = htl*d_h_stride + d_h_offset, likewise wi."""
    p, r = kc.problem, kc.record
    img, htl, wtl = split_m(kc, m)
    hi = affine(kc, htl, "d_h_stride", "d_h_offset")
    wi = affine(kc, wtl, "d_w_stride", "d_w_offset")
    conds = [bc.below(kc, hi, p.Hi), bc.below(kc, wi, p.Wi), bc.below_value(kc, m, r["gemm_m"])]
    valid = bc.all_of(kc, conds + [bc.below(kc, n, p.cpg)])
    return bc.pixel_offset(kc, img, (hi, p.Hi), (wi, p.Wi), (n, p.C), p.cpg), valid


def operands(kc: Kc) -> Operands:
    """A along k; B along mn when its width is > 1 (K-outer: always along mn)."""
    return bc.make_operands(kc, "col", "row" if kc.plan.vectors[1] > 1 else "col", desc_a, desc_b)


# ---- the dX positions no record stores (docs/kernels.md §4, conv-semantics §13 "Every output element")


def progressions(records: tuple[tuple[int, ...], ...], axis: str) -> list[tuple[int, int, int]]:
    """The distinct (offset, stride, count) runs of dX rows (axis h) or columns (w) that the
    records store, in record order."""
    at = [SUB_GEMM_FIELDS.index(f"d_{axis}_offset"), SUB_GEMM_FIELDS.index(f"d_{axis}_stride")]
    at.append(SUB_GEMM_FIELDS.index(f"{axis}_slice"))
    out: list[tuple[int, int, int]] = []
    for rec in records:
        run = (rec[at[0]], rec[at[1]], rec[at[2]])
        if run not in out:
            out.append(run)
    return out


def reaches_all(runs: list[tuple[int, int, int]], extent: int) -> bool:
    """Whether the runs store every index in [0, extent)."""
    hit = [False] * extent
    for offset, stride, count in runs:
        for t in range(count):
            x = offset + stride * t
            if 0 <= x < extent:
                hit[x] = True
    return all(hit)


def on_run(kc: Kc, x: Value, run: tuple[int, int, int]) -> Value:
    """x = offset + stride*t for some t in [0, count): (x - offset) divisible by stride with
    a quotient below count (a negative difference gives a remainder or a quotient < 0)."""
    b = kc.b
    offset, stride, count = run
    d = bc.add_c(kc, x, -offset)
    q = bc.div_c(kc, d, stride)
    r = bc.mod_c(kc, d, stride)
    zero = bc.c(kc, 0)
    exact = b.cmp("eq", r, zero)
    inside = bc.below(kc, q, count)
    return b.and_(exact, inside)


def on_any_run(kc: Kc, x: Value, runs: list[tuple[int, int, int]]) -> Value:
    acc = on_run(kc, x, runs[0])
    for run in runs[1:]:
        hit = on_run(kc, x, run)
        acc = kc.b.or_(acc, hit)
    return acc


def zero_untouched(kc: Kc) -> None:
    """Zeros at the dX positions whose row or column no record stores (no filter tap reaches
    them: a dropped tilde pair, the rows between a stride's residues, the edges). The
    records are a product of row and column runs, so a position is stored iff its row and its
    column are; every CTA of the grid clears its share of dX, element by element, at the
    positions that fail that test. Nothing is emitted when every position is stored, nor
    under split-K, whose caller zeroes dX for the atomics."""
    b, s, p = kc.b, kc.spec, kc.problem
    records = kc.plan.sub_gemms
    rows, cols = progressions(records, "h"), progressions(records, "w")
    all_rows, all_cols = reaches_all(rows, p.Hi), reaches_all(cols, p.Wi)
    if s.atomic_split_k or not records or (all_rows and all_cols):
        return
    total = p.N * p.Hi * p.Wi * p.C
    tiles = sum(r[1] * r[2] for r in records)
    share = roundup(ceildiv(total, tiles * p.groups), s.block_size)
    cta = b.block_id(0)
    if kc.group is not None:
        group_tiles = bc.mul_c(kc, kc.group, tiles)
        cta = b.add(group_tiles, cta)
    first = bc.mul_c(kc, cta, share)
    base = b.add(first, kc.tid)
    zero_f = b.const_f32(0)
    zero_d = bc.to_d(kc, zero_f)
    lb, ub, step = bc.c(kc, 0), bc.c(kc, share), bc.c(kc, s.block_size)
    loop = b.for_begin(lb, ub, step, "z0", [])
    e = b.add(base, loop.iv)
    inside = bc.below(kc, e, total)
    pixel = bc.div_c(kc, e, p.C)
    wi = bc.mod_c(kc, pixel, p.Wi)
    hw = bc.div_c(kc, pixel, p.Wi)
    hi = bc.mod_c(kc, hw, p.Hi)
    stored = None if all_rows else on_any_run(kc, hi, rows)
    if not all_cols:
        col_stored = on_any_run(kc, wi, cols)
        stored = col_stored if stored is None else b.and_(stored, col_stored)
    if stored is None:
        raise bc.fail("zero_untouched with every row and column stored")
    no = b.const_i1(False)
    keep = b.select(stored, no, inside)
    boff = bc.byte_offset(kc, e, keep, bc.elem_bytes(IR_ELEM[s.dtype_d]))
    b.buffer_store(kc.rsrc_d, boff, zero_d)
    b.for_end(loop, [])
