/* build_dgrad.c: backward data: one kernel over the tilde sub-GEMMs of
 * docs/reference/conv-semantics.md §2.4-§2.5. Each CTA finds its record by a binary search of
 * block_start; A = dY, B = W, D = dX through the record.
 *
 * Twin of rocke_py/engine/build_dgrad.py, function for function in the same order. The
 * record's values are kc->record, indexed by enum rk_sub_gemm_field (Python's kc.record
 * dict, looked up by name; here through r). */
#include <string.h>
#include "build.h"

#define RK_RECORD_BYTES (4 * RK_SUB_GEMM_FIELDS)

/* The record fields the kernel reads, in record order: all but these two. */
static int unused(int field) { return field == RK_SG_NUM_M_TILES || field == RK_SG_Y_DOT_SLICE; }

/* kc.record[field] (NULL, and a failure, when the field was not loaded). */
static rk_val r(rk_kc *kc, int field)
{
    if (!kc->record[field]) {
        rk_build_common_fail(kc, "a record field the kernel did not load");
        return NULL;
    }
    return kc->record[field];
}

static void add_params(rk_kc *kc)
{
    rk_arena *a = kc->arena;
    rk_attrs attrs = {NULL, 0, 0};
    rk_add_tensor_params(kc, rk_build_dgrad_module.names, kc->spec->split_k > 1);
    rk_attrs_set(a, &attrs, "noalias", rk_attr_bool(a, 1));
    rk_attrs_set(a, &attrs, "readonly", rk_attr_bool(a, 1));
    rk_build_common_set_param(kc, "sub_gemm_buf", rk_b_param(&kc->b, "sub_gemm_buf", rk_ptr(a, "i32"), &attrs));
    rk_build_common_set_param(kc, "num_sub_gemms", rk_b_param(&kc->b, "num_sub_gemms", "i32", NULL));
}

/* ceil(log2(max(n, 2))): the smallest p with 2^p >= max(n, 2). */
static long long ceil_log2(long long n)
{
    long long p = 0;
    if (n < 2)
        n = 2;
    while ((1LL << p) < n)
        p++;
    return p;
}

/* The last record whose block_start <= flat: ceil(log2(max(n, 2))) + 1 unrolled probes. */
static rk_val search_record(rk_kc *kc, rk_val rsrc, rk_val flat, long long n)
{
    rk_builder *b = &kc->b;
    long long probes = ceil_log2(n) + 1, probe;
    rk_val idx = rk_c(kc, 0);
    for (probe = 0; probe < probes; probe++) {
        long long step = 1LL << (probes - 1 - probe);
        rk_val cand = rk_add_c(kc, idx, step);
        rk_val inside = rk_b_cmp(b, "slt", cand, rk_build_common_param(kc, "num_sub_gemms"));
        rk_val at = rk_mul_c(kc, cand, RK_RECORD_BYTES);
        rk_val oob = rk_c(kc, RK_OOB_OFFSET);
        rk_val boff = rk_b_select(b, inside, at, oob);
        rk_val start = rk_b_buffer_load(b, rsrc, boff, "i32", 1);
        rk_val reached = rk_b_cmp(b, "sle", start, flat);
        rk_val take = rk_b_and(b, inside, reached);
        idx = rk_b_select(b, take, cand, idx);
    }
    return rk_b_readfirstlane(b, idx);
}

static void load_record(rk_kc *kc, rk_val rsrc, rk_val idx)
{
    rk_builder *b = &kc->b;
    rk_val base = rk_mul_c(kc, idx, RK_RECORD_BYTES);
    int at;
    for (at = 0; at < RK_SUB_GEMM_FIELDS; at++) {
        rk_val off, raw;
        if (unused(at))
            continue;
        off = rk_add_c(kc, base, 4 * at);
        raw = rk_b_buffer_load(b, rsrc, off, "i32", 1);
        kc->record[at] = rk_b_readfirstlane(b, raw);
    }
}

/* x: flat tile over all records; y: group; z: K slice. */
static void block_decode(rk_kc *kc)
{
    rk_builder *b = &kc->b;
    const rk_spec *s = kc->spec;
    rk_val flat, nbytes, rsrc, idx, local, m_tile, n_tile;
    flat = rk_b_block_id(b, 0);
    if (kc->problem->groups > 1)
        kc->group = rk_b_block_id(b, 1);
    nbytes = rk_mul_c(kc, rk_build_common_param(kc, "num_sub_gemms"), RK_RECORD_BYTES);
    rsrc = rk_b_make_buffer_rsrc(b, rk_build_common_param(kc, "sub_gemm_buf"), nbytes);
    idx = search_record(kc, rsrc, flat, kc->plan->n_sub_gemms);
    load_record(kc, rsrc, idx);
    local = rk_b_sub(b, flat, r(kc, RK_SG_BLOCK_START));
    m_tile = rk_b_div(b, local, r(kc, RK_SG_NUM_N_TILES));
    n_tile = rk_b_mod(b, local, r(kc, RK_SG_NUM_N_TILES));
    kc->m0 = rk_mul_c(kc, m_tile, s->tile_m);
    kc->n0 = rk_mul_c(kc, n_tile, s->tile_n);
    if (s->split_k > 1) {
        rk_val slice = rk_b_block_id(b, 2);
        rk_val k_slice = rk_div_c(kc, r(kc, RK_SG_GEMM_K_PADDED), s->split_k);
        rk_val lo = rk_b_mul(b, slice, k_slice);
        rk_val hi = rk_b_add(b, lo, k_slice);
        kc->k_lo = rk_b_readfirstlane(b, lo);
        kc->k_hi = rk_b_readfirstlane(b, hi);
    } else {
        kc->k_lo = rk_c(kc, 0);
        kc->k_hi = r(kc, RK_SG_GEMM_K);
    }
}

/* m -> (n, htl, wtl) over the record's h_slice x w_slice. */
static void split_m(rk_kc *kc, rk_val m, rk_val out[3])
{
    rk_builder *b = &kc->b;
    rk_val hw = rk_b_mul(b, r(kc, RK_SG_H_SLICE), r(kc, RK_SG_W_SLICE));
    rk_val rest;
    out[0] = rk_b_div(b, m, hw);
    rest = rk_b_mod(b, m, hw);
    out[1] = rk_b_div(b, rest, r(kc, RK_SG_W_SLICE));
    out[2] = rk_b_mod(b, rest, r(kc, RK_SG_W_SLICE));
}

/* k_sub -> (k_out, ydot, xdot), k_out innermost (conv-semantics §2.3). */
static void split_k(rk_kc *kc, rk_val k, rk_val out[3])
{
    rk_builder *b = &kc->b;
    long long kpg = rk_kpg(kc->problem);
    rk_val yx;
    out[0] = rk_mod_c(kc, k, kpg);
    yx = rk_div_c(kc, k, kpg);
    out[1] = rk_b_div(b, yx, r(kc, RK_SG_X_DOT_SLICE));
    out[2] = rk_b_mod(b, yx, r(kc, RK_SG_X_DOT_SLICE));
}

/* x*record[stride] + record[offset]. */
static rk_val affine(rk_kc *kc, rk_val x, int stride, int offset)
{
    rk_val scaled = rk_b_mul(&kc->b, x, r(kc, stride));
    return rk_b_add(&kc->b, scaled, r(kc, offset));
}

/* dY (NHWK) at (m, k_sub): ho = htl + h_begin + ydot*a_h_coeff, likewise wo. */
static rk_desc desc_a(rk_kc *kc, rk_val mn, rk_val k)
{
    rk_builder *b = &kc->b;
    const rk_problem *p = kc->problem;
    long long ho_n = rk_problem_ho(p), wo_n = rk_problem_wo(p);
    rk_val kyx[3], nhw[3], h0, hy, ho, w0, wx, wo, conds[4];
    rk_desc out;
    split_k(kc, k, kyx);
    split_m(kc, mn, nhw);
    h0 = rk_b_add(b, nhw[1], r(kc, RK_SG_H_BEGIN));
    hy = rk_b_mul(b, kyx[1], r(kc, RK_SG_A_H_COEFF));
    ho = rk_b_add(b, h0, hy);
    w0 = rk_b_add(b, nhw[2], r(kc, RK_SG_W_BEGIN));
    wx = rk_b_mul(b, kyx[2], r(kc, RK_SG_A_W_COEFF));
    wo = rk_b_add(b, w0, wx);
    conds[0] = rk_below(kc, ho, ho_n);
    conds[1] = rk_below(kc, wo, wo_n);
    conds[2] = rk_below_value(kc, mn, r(kc, RK_SG_GEMM_M));
    conds[3] = rk_below_value(kc, k, r(kc, RK_SG_GEMM_K));
    out.valid = rk_all_of(kc, conds, 4);
    out.off = rk_pixel_offset(kc, nhw[0], (rk_coord){ho, ho_n}, (rk_coord){wo, wo_n}, (rk_coord){kyx[0], p->K},
                              rk_kpg(p));
    return out;
}

/* W (KYXC) at (c = mn, k_sub): y = ydot*b_y_stride + b_y_offset, likewise x. */
static rk_desc desc_b(rk_kc *kc, rk_val mn, rk_val k)
{
    rk_builder *b = &kc->b;
    const rk_problem *p = kc->problem;
    long long cpg = rk_cpg(p);
    rk_val kyx[3], y, x, conds[4], k_abs, ky, row, rx, tap, base, gb;
    rk_desc out;
    split_k(kc, k, kyx);
    y = affine(kc, kyx[1], RK_SG_B_Y_STRIDE, RK_SG_B_Y_OFFSET);
    x = affine(kc, kyx[2], RK_SG_B_X_STRIDE, RK_SG_B_X_OFFSET);
    conds[0] = rk_below(kc, y, p->Y);
    conds[1] = rk_below(kc, x, p->X);
    conds[2] = rk_below(kc, mn, cpg);
    conds[3] = rk_below_value(kc, k, r(kc, RK_SG_GEMM_K));
    out.valid = rk_all_of(kc, conds, 4);
    gb = rk_group_base(kc, rk_kpg(p));
    k_abs = rk_add_opt(kc, kyx[0], gb);
    ky = rk_mul_c(kc, k_abs, p->Y);
    row = rk_b_add(b, ky, y);
    rx = rk_mul_c(kc, row, p->X);
    tap = rk_b_add(b, rx, x);
    base = rk_mul_c(kc, tap, cpg);
    out.off = rk_b_add(b, base, mn);
    return out;
}

/* dX (NHWC) at (m, c = n): hi = htl*d_h_stride + d_h_offset, likewise wi. */
static rk_desc desc_d(rk_kc *kc, rk_val m, rk_val n)
{
    const rk_problem *p = kc->problem;
    long long cpg = rk_cpg(p);
    rk_val nhw[3], hi, wi, conds[4];
    rk_desc out;
    split_m(kc, m, nhw);
    hi = affine(kc, nhw[1], RK_SG_D_H_STRIDE, RK_SG_D_H_OFFSET);
    wi = affine(kc, nhw[2], RK_SG_D_W_STRIDE, RK_SG_D_W_OFFSET);
    conds[0] = rk_below(kc, hi, p->Hi);
    conds[1] = rk_below(kc, wi, p->Wi);
    conds[2] = rk_below_value(kc, m, r(kc, RK_SG_GEMM_M));
    conds[3] = rk_below(kc, n, cpg);
    out.valid = rk_all_of(kc, conds, 4);
    out.off = rk_pixel_offset(kc, nhw[0], (rk_coord){hi, p->Hi}, (rk_coord){wi, p->Wi}, (rk_coord){n, p->C}, cpg);
    return out;
}

/* A along k; B along mn when its width is > 1 (K-outer: always along mn). */
static rk_operands operands(rk_kc *kc) { return rk_make_operands(kc, 1, kc->plan->vectors[1] <= 1, desc_a, desc_b); }

/* ---- the dX positions no record stores (docs/kernels.md §4) ---- */

/* One run of dX rows or columns a record stores: offset + stride*t, t in [0, count). */
typedef struct run {
    long long offset, stride, count;
} run;

typedef struct runs {
    run *items;
    int n;
} runs;

/* The distinct (offset, stride, count) runs of dX rows (axis 'h') or columns ('w') that the
 * records store, in record order (arena; n = 0 and a failure when it cannot allocate). */
static runs progressions(rk_kc *kc, char axis)
{
    const rk_plan *plan = kc->plan;
    int at_offset = axis == 'h' ? RK_SG_D_H_OFFSET : RK_SG_D_W_OFFSET;
    int at_stride = axis == 'h' ? RK_SG_D_H_STRIDE : RK_SG_D_W_STRIDE;
    int at_slice = axis == 'h' ? RK_SG_H_SLICE : RK_SG_W_SLICE;
    runs out = {NULL, 0};
    int i, j;
    out.items = rk_alloc(kc->arena, sizeof(run) * (size_t)(plan->n_sub_gemms + 1));
    if (!out.items) {
        rk_build_common_fail(kc, "out of memory (dX runs)");
        return out;
    }
    for (i = 0; i < plan->n_sub_gemms; i++) {
        const long long *rec = plan->sub_gemms[i].v;
        run next;
        int seen = 0;
        next.offset = rec[at_offset];
        next.stride = rec[at_stride];
        next.count = rec[at_slice];
        for (j = 0; j < out.n; j++)
            seen |= out.items[j].offset == next.offset && out.items[j].stride == next.stride
                    && out.items[j].count == next.count;
        if (!seen)
            out.items[out.n++] = next;
    }
    return out;
}

/* Whether the runs store every index in [0, extent). */
static int reaches_all(rk_kc *kc, runs rs, long long extent)
{
    unsigned char *hit = rk_alloc(kc->arena, (size_t)extent + 1);
    long long x, t;
    int i;
    if (!hit) {
        rk_build_common_fail(kc, "out of memory (dX runs)");
        return 1;
    }
    for (i = 0; i < rs.n; i++)
        for (t = 0; t < rs.items[i].count; t++) {
            x = rs.items[i].offset + rs.items[i].stride * t;
            if (x >= 0 && x < extent)
                hit[x] = 1;
        }
    for (x = 0; x < extent; x++)
        if (!hit[x])
            return 0;
    return 1;
}

/* x = offset + stride*t for some t in [0, count): (x - offset) divisible by stride with a
 * quotient below count (a negative difference gives a remainder or a quotient < 0). */
static rk_val on_run(rk_kc *kc, rk_val x, run rn)
{
    rk_builder *b = &kc->b;
    rk_val d = rk_add_c(kc, x, -rn.offset);
    rk_val q = rk_div_c(kc, d, rn.stride);
    rk_val rem = rk_mod_c(kc, d, rn.stride);
    rk_val zero = rk_c(kc, 0);
    rk_val exact = rk_b_cmp(b, "eq", rem, zero);
    rk_val inside = rk_below(kc, q, rn.count);
    return rk_b_and(b, exact, inside);
}

static rk_val on_any_run(rk_kc *kc, rk_val x, runs rs)
{
    rk_val acc = on_run(kc, x, rs.items[0]);
    int i;
    for (i = 1; i < rs.n; i++) {
        rk_val hit = on_run(kc, x, rs.items[i]);
        acc = rk_b_or(&kc->b, acc, hit);
    }
    return acc;
}

/* Zeros at the dX positions whose row or column no record stores (no filter tap reaches
 * them); every CTA clears its share of dX. Nothing when every position is stored, nor under
 * split-K (the caller zeroes dX for the atomics). build_dgrad.py's zero_untouched says why. */
void rk_zero_untouched(rk_kc *kc)
{
    rk_builder *b = &kc->b;
    const rk_spec *s = kc->spec;
    const rk_problem *p = kc->problem;
    const rk_plan *plan = kc->plan;
    runs rows, cols;
    int all_rows, all_cols, i;
    long long total, tiles = 0, share;
    rk_val cta, first, base, zero_f, zero_d, lb, ub, step, e, inside, pixel, wi, hw, hi, stored = NULL;
    rk_val no, keep, boff;
    rk_ir_for *loop;
    if (rk_atomic_split_k(s) || plan->n_sub_gemms == 0)
        return;
    rows = progressions(kc, 'h');
    cols = progressions(kc, 'w');
    if (rows.n == 0 || cols.n == 0)
        return;
    all_rows = reaches_all(kc, rows, p->Hi);
    all_cols = reaches_all(kc, cols, p->Wi);
    if (all_rows && all_cols)
        return;
    total = p->N * p->Hi * p->Wi * p->C;
    for (i = 0; i < plan->n_sub_gemms; i++)
        tiles += plan->sub_gemms[i].v[RK_SG_NUM_M_TILES] * plan->sub_gemms[i].v[RK_SG_NUM_N_TILES];
    share = rk_roundup(rk_ceildiv(total, tiles * p->groups), rk_block_size(s));
    cta = rk_b_block_id(b, 0);
    if (kc->group) {
        rk_val group_tiles = rk_mul_c(kc, kc->group, tiles);
        cta = rk_b_add(b, group_tiles, cta);
    }
    first = rk_mul_c(kc, cta, share);
    base = rk_b_add(b, first, kc->tid);
    zero_f = rk_b_const_f32(b, 0);
    zero_d = rk_to_d(kc, zero_f);
    lb = rk_c(kc, 0);
    ub = rk_c(kc, share);
    step = rk_c(kc, rk_block_size(s));
    loop = rk_b_for_begin(b, lb, ub, step, "z0", NULL, 0, 0);
    if (!loop)
        return;
    e = rk_b_add(b, base, &loop->iv);
    inside = rk_below(kc, e, total);
    pixel = rk_div_c(kc, e, p->C);
    wi = rk_mod_c(kc, pixel, p->Wi);
    hw = rk_div_c(kc, pixel, p->Wi);
    hi = rk_mod_c(kc, hw, p->Hi);
    if (!all_rows)
        stored = on_any_run(kc, hi, rows);
    if (!all_cols) {
        rk_val col_stored = on_any_run(kc, wi, cols);
        stored = stored ? rk_b_and(b, stored, col_stored) : col_stored;
    }
    no = rk_b_const_i1(b, 0);
    keep = rk_b_select(b, stored, no, inside);
    boff = rk_byte_offset(kc, e, keep, rk_build_common_elem_bytes(rk_mma_ir_elem(s->dtype_d)));
    rk_b_buffer_store(b, kc->rsrc_d, boff, zero_d);
    rk_b_for_end(b, loop, NULL, 0);
}

const rk_family_module rk_build_dgrad_module = {
    {"dY", "W", "dX"}, add_params, block_decode, desc_a, desc_b, desc_d, operands,
};
