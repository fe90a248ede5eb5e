/* build_dgrad.c: backward data: one kernel over the tilde sub-GEMMs of
 * docs/reference/conv-semantics.md §2.4-§2.5. Each CTA finds its record by a binary search of
 * block_start; A = dY, B = W, D = dX through the record.
 *
 * Twin of rocke_py/engine/build_dgrad.py, function for function in the same order. The
 * record's values are kc->record, indexed like rk_sub_gemm_fields (Python's kc.record
 * dict, looked up by name through rk_build_dgrad_r). */
#include <string.h>
#include "build.h"

#define RK_RECORD_BYTES (4 * RK_SUB_GEMM_FIELDS)

/* The record fields the kernel reads, in record order. */
static const char *const rk_build_dgrad_used_fields[] = {
    "block_start", "num_n_tiles", "gemm_m", "gemm_k", "h_slice", "w_slice", "h_begin",
    "w_begin", "x_dot_slice", "a_h_coeff", "a_w_coeff", "b_y_stride", "b_y_offset",
    "b_x_stride", "b_x_offset", "d_h_stride", "d_h_offset", "d_w_stride", "d_w_offset",
    "gemm_k_padded",
};
#define RK_N_USED_FIELDS ((int)(sizeof rk_build_dgrad_used_fields / sizeof rk_build_dgrad_used_fields[0]))

/* SUB_GEMM_FIELDS.index(name), or -1. */
static int rk_build_dgrad_field_index(const char *name)
{
    int i;
    for (i = 0; i < RK_SUB_GEMM_FIELDS; i++)
        if (strcmp(rk_sub_gemm_fields[i], name) == 0)
            return i;
    return -1;
}

/* kc.record[name] (NULL, and a failure, when the field was not loaded). */
static rk_val rk_build_dgrad_r(rk_kc *kc, const char *name)
{
    int i = rk_build_dgrad_field_index(name);
    if (i < 0 || !kc->record[i]) {
        rk_build_common_fail(kc, "a record field the kernel did not load");
        return NULL;
    }
    return kc->record[i];
}

static long long rk_build_dgrad_num_records(rk_kc *kc)
{
    const rk_spec *s = kc->spec;
    rk_sub_gemm *records;
    int n = 0;
    rk_error err;
    rk_error_init(&err, kc->arena);
    if (rk_problem_dgrad_sub_gemms(kc->problem, s->tile_m, s->tile_n, s->tile_k, s->split_k, kc->arena,
                                   &records, &n, &err)) {
        rk_build_common_fail(kc, "the sub-GEMM records were checked in mode spec's order");
        return 0;
    }
    return n;
}

static void rk_build_dgrad_add_params(rk_kc *kc)
{
    rk_arena *a = kc->arena;
    rk_attrs attrs = {NULL, 0, 0};
    rk_build_common_add_tensor_params(kc, rk_build_dgrad_module.names, kc->spec->split_k > 1);
    rk_attrs_set(a, &attrs, "noalias", rk_attr_bool(a, 1));
    rk_attrs_set(a, &attrs, "readonly", rk_attr_bool(a, 1));
    rk_build_common_set_param(kc, "sub_gemm_buf",
                              rk_b_param(&kc->b, "sub_gemm_buf", rk_ir_ptr(a, "i32"), &attrs));
    rk_build_common_set_param(kc, "num_sub_gemms", rk_b_param(&kc->b, "num_sub_gemms", "i32", NULL));
}

/* ceil(log2(max(n, 2))): the smallest p with 2^p >= max(n, 2). */
static long long rk_build_dgrad_ceil_log2(long long n)
{
    long long p = 0;
    if (n < 2)
        n = 2;
    while ((1LL << p) < n)
        p++;
    return p;
}

/* The last record whose block_start <= flat: ceil(log2(max(n, 2))) + 1 unrolled probes. */
static rk_val rk_build_dgrad_search_record(rk_kc *kc, rk_val rsrc, rk_val flat, long long n)
{
    rk_builder *b = &kc->b;
    long long probes = rk_build_dgrad_ceil_log2(n) + 1, probe;
    rk_val idx = rk_build_common_c(kc, 0);
    for (probe = 0; probe < probes; probe++) {
        long long step = 1LL << (probes - 1 - probe);
        rk_val cand = rk_build_common_add_c(kc, idx, step);
        rk_val inside = rk_b_cmp(b, "slt", cand, rk_build_common_param(kc, "num_sub_gemms"));
        rk_val at = rk_build_common_mul_c(kc, cand, RK_RECORD_BYTES);
        rk_val oob = rk_build_common_c(kc, RK_OOB_OFFSET);
        rk_val boff = rk_b_select(b, inside, at, oob);
        rk_val start = rk_b_buffer_load(b, rsrc, boff, "i32", 1);
        rk_val reached = rk_b_cmp(b, "sle", start, flat);
        rk_val take = rk_b_and(b, inside, reached);
        idx = rk_b_select(b, take, cand, idx);
    }
    return rk_b_readfirstlane(b, idx);
}

static void rk_build_dgrad_load_record(rk_kc *kc, rk_val rsrc, rk_val idx)
{
    rk_builder *b = &kc->b;
    rk_val base = rk_build_common_mul_c(kc, idx, RK_RECORD_BYTES);
    int i;
    for (i = 0; i < RK_N_USED_FIELDS; i++) {
        int at = rk_build_dgrad_field_index(rk_build_dgrad_used_fields[i]);
        rk_val off = rk_build_common_add_c(kc, base, 4 * at);
        rk_val raw = rk_b_buffer_load(b, rsrc, off, "i32", 1);
        kc->record[at] = rk_b_readfirstlane(b, raw);
    }
}

/* x: flat tile over all records; y: group; z: K slice. */
static void rk_build_dgrad_block_decode(rk_kc *kc)
{
    rk_builder *b = &kc->b;
    const rk_spec *s = kc->spec;
    rk_val flat, nbytes, rsrc, idx, local, m_tile, n_tile;
    flat = rk_b_block_id(b, 0);
    if (kc->problem->groups > 1)
        kc->group = rk_b_block_id(b, 1);
    nbytes = rk_build_common_mul_c(kc, rk_build_common_param(kc, "num_sub_gemms"), RK_RECORD_BYTES);
    rsrc = rk_b_make_buffer_rsrc(b, rk_build_common_param(kc, "sub_gemm_buf"), nbytes);
    idx = rk_build_dgrad_search_record(kc, rsrc, flat, rk_build_dgrad_num_records(kc));
    rk_build_dgrad_load_record(kc, rsrc, idx);
    local = rk_b_sub(b, flat, rk_build_dgrad_r(kc, "block_start"));
    m_tile = rk_b_div(b, local, rk_build_dgrad_r(kc, "num_n_tiles"));
    n_tile = rk_b_mod(b, local, rk_build_dgrad_r(kc, "num_n_tiles"));
    kc->m0 = rk_build_common_mul_c(kc, m_tile, s->tile_m);
    kc->n0 = rk_build_common_mul_c(kc, n_tile, s->tile_n);
    if (s->split_k > 1) {
        rk_val slice = rk_b_block_id(b, 2);
        rk_val k_slice = rk_build_common_div_c(kc, rk_build_dgrad_r(kc, "gemm_k_padded"), s->split_k);
        rk_val lo = rk_b_mul(b, slice, k_slice);
        rk_val hi = rk_b_add(b, lo, k_slice);
        kc->k_lo = rk_b_readfirstlane(b, lo);
        kc->k_hi = rk_b_readfirstlane(b, hi);
    } else {
        kc->k_lo = rk_build_common_c(kc, 0);
        kc->k_hi = rk_build_dgrad_r(kc, "gemm_k");
    }
}

/* m -> (n, htl, wtl) over the record's h_slice x w_slice. */
static void rk_build_dgrad_split_m(rk_kc *kc, rk_val m, rk_val out[3])
{
    rk_builder *b = &kc->b;
    rk_val hw = rk_b_mul(b, rk_build_dgrad_r(kc, "h_slice"), rk_build_dgrad_r(kc, "w_slice"));
    rk_val rest;
    out[0] = rk_b_div(b, m, hw);
    rest = rk_b_mod(b, m, hw);
    out[1] = rk_b_div(b, rest, rk_build_dgrad_r(kc, "w_slice"));
    out[2] = rk_b_mod(b, rest, rk_build_dgrad_r(kc, "w_slice"));
}

/* k_sub -> (k_out, ydot, xdot), k_out innermost (conv-semantics §2.3). */
static void rk_build_dgrad_split_k(rk_kc *kc, rk_val k, rk_val out[3])
{
    rk_builder *b = &kc->b;
    long long kpg = rk_problem_kpg(kc->problem);
    rk_val yx;
    out[0] = rk_build_common_mod_c(kc, k, kpg);
    yx = rk_build_common_div_c(kc, k, kpg);
    out[1] = rk_b_div(b, yx, rk_build_dgrad_r(kc, "x_dot_slice"));
    out[2] = rk_b_mod(b, yx, rk_build_dgrad_r(kc, "x_dot_slice"));
}

/* dY (NHWK) at (m, k_sub): ho = htl + h_begin + ydot*a_h_coeff, likewise wo. */
static rk_desc rk_build_dgrad_desc_a(rk_kc *kc, rk_val mn, rk_val k)
{
    rk_builder *b = &kc->b;
    const rk_problem *p = kc->problem;
    rk_val kyx[3], nhw[3], h0, hy, ho, w0, wx, wo, conds[4], nh, row, rw, pixel, base, grouped, gb;
    rk_desc out;
    rk_build_dgrad_split_k(kc, k, kyx);
    rk_build_dgrad_split_m(kc, mn, nhw);
    h0 = rk_b_add(b, nhw[1], rk_build_dgrad_r(kc, "h_begin"));
    hy = rk_b_mul(b, kyx[1], rk_build_dgrad_r(kc, "a_h_coeff"));
    ho = rk_b_add(b, h0, hy);
    w0 = rk_b_add(b, nhw[2], rk_build_dgrad_r(kc, "w_begin"));
    wx = rk_b_mul(b, kyx[2], rk_build_dgrad_r(kc, "a_w_coeff"));
    wo = rk_b_add(b, w0, wx);
    conds[0] = rk_build_common_below(kc, ho, rk_problem_ho(p));
    conds[1] = rk_build_common_below(kc, wo, rk_problem_wo(p));
    conds[2] = rk_build_common_below_value(kc, mn, rk_build_dgrad_r(kc, "gemm_m"));
    conds[3] = rk_build_common_below_value(kc, k, rk_build_dgrad_r(kc, "gemm_k"));
    out.valid = rk_build_common_all_of(kc, conds, 4);
    nh = rk_build_common_mul_c(kc, nhw[0], rk_problem_ho(p));
    row = rk_b_add(b, nh, ho);
    rw = rk_build_common_mul_c(kc, row, rk_problem_wo(p));
    pixel = rk_b_add(b, rw, wo);
    base = rk_build_common_mul_c(kc, pixel, p->K);
    gb = rk_build_common_group_base(kc, rk_problem_kpg(p));
    grouped = rk_build_common_add_opt(kc, base, gb);
    out.off = rk_b_add(b, grouped, kyx[0]);
    return out;
}

/* W (KYXC) at (c = mn, k_sub): y = ydot*b_y_stride + b_y_offset, likewise x. */
static rk_desc rk_build_dgrad_desc_b(rk_kc *kc, rk_val mn, rk_val k)
{
    rk_builder *b = &kc->b;
    const rk_problem *p = kc->problem;
    long long cpg = rk_problem_cpg(p);
    rk_val kyx[3], y0, y, x0, x, conds[4], k_abs, ky, row, rx, tap, base, gb;
    rk_desc out;
    rk_build_dgrad_split_k(kc, k, kyx);
    y0 = rk_b_mul(b, kyx[1], rk_build_dgrad_r(kc, "b_y_stride"));
    y = rk_b_add(b, y0, rk_build_dgrad_r(kc, "b_y_offset"));
    x0 = rk_b_mul(b, kyx[2], rk_build_dgrad_r(kc, "b_x_stride"));
    x = rk_b_add(b, x0, rk_build_dgrad_r(kc, "b_x_offset"));
    conds[0] = rk_build_common_below(kc, y, p->Y);
    conds[1] = rk_build_common_below(kc, x, p->X);
    conds[2] = rk_build_common_below(kc, mn, cpg);
    conds[3] = rk_build_common_below_value(kc, k, rk_build_dgrad_r(kc, "gemm_k"));
    out.valid = rk_build_common_all_of(kc, conds, 4);
    gb = rk_build_common_group_base(kc, rk_problem_kpg(p));
    k_abs = rk_build_common_add_opt(kc, kyx[0], gb);
    ky = rk_build_common_mul_c(kc, k_abs, p->Y);
    row = rk_b_add(b, ky, y);
    rx = rk_build_common_mul_c(kc, row, p->X);
    tap = rk_b_add(b, rx, x);
    base = rk_build_common_mul_c(kc, tap, cpg);
    out.off = rk_b_add(b, base, mn);
    return out;
}

/* dX (NHWC) at (m, c = n): hi = htl*d_h_stride + d_h_offset, likewise wi. */
static rk_desc rk_build_dgrad_desc_d(rk_kc *kc, rk_val m, rk_val n)
{
    rk_builder *b = &kc->b;
    const rk_problem *p = kc->problem;
    long long cpg = rk_problem_cpg(p);
    rk_val nhw[3], h0, hi, w0, wi, conds[4], nh, row, rw, pixel, base, grouped, gb;
    rk_desc out;
    rk_build_dgrad_split_m(kc, m, nhw);
    h0 = rk_b_mul(b, nhw[1], rk_build_dgrad_r(kc, "d_h_stride"));
    hi = rk_b_add(b, h0, rk_build_dgrad_r(kc, "d_h_offset"));
    w0 = rk_b_mul(b, nhw[2], rk_build_dgrad_r(kc, "d_w_stride"));
    wi = rk_b_add(b, w0, rk_build_dgrad_r(kc, "d_w_offset"));
    conds[0] = rk_build_common_below(kc, hi, p->Hi);
    conds[1] = rk_build_common_below(kc, wi, p->Wi);
    conds[2] = rk_build_common_below_value(kc, m, rk_build_dgrad_r(kc, "gemm_m"));
    conds[3] = rk_build_common_below(kc, n, cpg);
    out.valid = rk_build_common_all_of(kc, conds, 4);
    nh = rk_build_common_mul_c(kc, nhw[0], p->Hi);
    row = rk_b_add(b, nh, hi);
    rw = rk_build_common_mul_c(kc, row, p->Wi);
    pixel = rk_b_add(b, rw, wi);
    base = rk_build_common_mul_c(kc, pixel, p->C);
    gb = rk_build_common_group_base(kc, cpg);
    grouped = rk_build_common_add_opt(kc, base, gb);
    out.off = rk_b_add(b, grouped, n);
    return out;
}

static rk_operands rk_build_dgrad_operands(rk_kc *kc)
{
    const rk_spec *s = kc->spec;
    long long vec[3];
    rk_operands ops;
    rk_build_common_load_vectors(kc, vec);
    ops.ta = rk_build_common_m_outer_tile(kc, "a", s->dtype_a, s->tile_m, vec[0], 1);
    if (s->lds_k_outer)
        ops.tb = rk_build_common_k_outer_tile(kc, "b", s->dtype_b, s->tile_n, vec[1]);
    else
        ops.tb = rk_build_common_m_outer_tile(kc, "b", s->dtype_b, s->tile_n, vec[1], vec[1] <= 1);
    ops.desc_a = rk_build_dgrad_desc_a;
    ops.desc_b = rk_build_dgrad_desc_b;
    ops.a_mn0 = kc->m0;
    ops.b_mn0 = kc->n0;
    return ops;
}

const rk_family_module rk_build_dgrad_module = {
    {"dY", "W", "dX"},
    rk_build_dgrad_add_params,
    rk_build_dgrad_block_decode,
    rk_build_dgrad_desc_a,
    rk_build_dgrad_desc_b,
    rk_build_dgrad_desc_d,
    rk_build_dgrad_operands,
};
