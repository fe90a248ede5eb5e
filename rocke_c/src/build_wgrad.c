/* build_wgrad.c: backward weight: A = dY (NHWK), B = X (NHWC, im2col with m := k_wg),
 * D = dW (K[Z]YXC), reduction over N*[Do*]Ho*Wo, split-K over blockIdx.z
 * (docs/reference/conv-semantics.md §2.2, §10.1).
 *
 * Twin of rocke_py/engine/build_wgrad.py, function for function in the same order. */
#include "build.h"

static void rk_build_wgrad_add_params(rk_kc *kc)
{
    const rk_spec *s = kc->spec;
    rk_build_common_add_tensor_params(kc, rk_build_wgrad_module.names, rk_spec_atomic_split_k(s));
    if (s->split_k == 0) {
        rk_build_common_set_param(kc, "ks", rk_b_param(&kc->b, "ks", "i32", NULL));
        if (kc->problem->groups > 1)
            rk_build_common_set_param(kc, "ks_count", rk_b_param(&kc->b, "ks_count", "i32", NULL));
    }
}

/* Tiles from x/y; z is the group (split_k = 1) or group*split_k + slice. */
static void rk_build_wgrad_block_decode(rk_kc *kc)
{
    rk_builder *b = &kc->b;
    const rk_spec *s = kc->spec;
    const rk_problem *p = kc->problem;
    long long wg[3];
    rk_val bz, ks, count, slice, lo, hi;
    rk_problem_wgrad_gemm(p, wg);
    rk_build_common_grid_tiles(kc, wg[0], wg[1]);
    bz = rk_b_block_id(b, 2);
    if (s->split_k == 1) {
        if (p->groups > 1)
            kc->group = bz;
        kc->k_lo = rk_build_common_c(kc, 0);
        kc->k_hi = rk_build_common_c(kc, wg[2]);
        return;
    }
    if (s->split_k > 1) {
        ks = rk_build_common_c(kc, rk_floordiv(rk_spec_wg_k_padded(s, p, s->split_k), s->split_k));
        count = rk_build_common_c(kc, s->split_k);
    } else {
        ks = rk_build_common_param(kc, "ks");
        count = p->groups > 1 ? rk_build_common_param(kc, "ks_count") : NULL;
    }
    if (p->groups > 1 && count) {
        kc->group = rk_b_div(b, bz, count);
        slice = rk_b_mod(b, bz, count);
    } else {
        slice = bz;
    }
    lo = rk_b_mul(b, slice, ks);
    hi = rk_b_add(b, lo, ks);
    kc->k_lo = rk_b_readfirstlane(b, lo);
    kc->k_hi = rk_b_readfirstlane(b, hi);
}

/* dY (NHWK) at (k_out = mn, k_wg = k): k_wg runs over the contiguous (n, [do,] ho, wo). */
static rk_desc rk_build_wgrad_desc_a(rk_kc *kc, rk_val mn, rk_val k)
{
    const rk_problem *p = kc->problem;
    long long wg[3], kpg = rk_problem_kpg(p);
    rk_val conds[2], row, grouped, gb;
    rk_desc out;
    rk_problem_wgrad_gemm(p, wg);
    conds[0] = rk_build_common_below(kc, mn, kpg);
    conds[1] = rk_build_common_below(kc, k, wg[2]);
    out.valid = rk_build_common_all_of(kc, conds, 2);
    row = rk_build_common_mul_c(kc, k, p->K);
    gb = rk_build_common_group_base(kc, kpg);
    grouped = rk_build_common_add_opt(kc, row, gb);
    out.off = rk_b_add(&kc->b, grouped, mn);
    return out;
}

/* X at (n_wg = mn, k_wg = k): the forward A descriptor with m := k_wg, k := n_wg. */
static rk_desc rk_build_wgrad_desc_b(rk_kc *kc, rk_val mn, rk_val k)
{
    const rk_problem *p = kc->problem;
    long long wg[3], cpg = rk_problem_cpg(p);
    rk_val conds[2], row, grouped, gb;
    rk_desc out;
    if (rk_problem_is_pointwise(p)) {
        rk_problem_wgrad_gemm(p, wg);
        conds[0] = rk_build_common_below(kc, mn, wg[1]);
        conds[1] = rk_build_common_below(kc, k, wg[2]);
        out.valid = rk_build_common_all_of(kc, conds, 2);
        row = rk_build_common_mul_c(kc, k, p->C);
        gb = rk_build_common_group_base(kc, cpg);
        grouped = rk_build_common_add_opt(kc, row, gb);
        out.off = rk_b_add(&kc->b, grouped, mn);
        return out;
    }
    return rk_build_common_input_offset(kc, k, mn);
}

/* dW at (k_out = m, n_wg = n), packed per group: row (group*kpg + k_out) of wg_N. */
static rk_desc rk_build_wgrad_desc_d(rk_kc *kc, rk_val m, rk_val n)
{
    const rk_problem *p = kc->problem;
    long long wg[3];
    rk_val conds[2], k_out, row, gb;
    rk_desc out;
    rk_problem_wgrad_gemm(p, wg);
    conds[0] = rk_build_common_below(kc, m, wg[0]);
    conds[1] = rk_build_common_below(kc, n, wg[1]);
    out.valid = rk_build_common_all_of(kc, conds, 2);
    gb = rk_build_common_group_base(kc, rk_problem_kpg(p));
    k_out = rk_build_common_add_opt(kc, m, gb);
    row = rk_build_common_mul_c(kc, k_out, wg[1]);
    out.off = rk_b_add(&kc->b, row, n);
    return out;
}

static rk_operands rk_build_wgrad_operands(rk_kc *kc)
{
    const rk_spec *s = kc->spec;
    long long vec[3];
    rk_operands ops;
    rk_build_common_load_vectors(kc, vec);
    if (s->lds_k_outer) {
        ops.ta = rk_build_common_k_outer_tile(kc, "a", s->dtype_a, s->tile_m, vec[0]);
        ops.tb = rk_build_common_k_outer_tile(kc, "b", s->dtype_b, s->tile_n, vec[1]);
    } else {
        ops.ta = rk_build_common_m_outer_tile(kc, "a", s->dtype_a, s->tile_m, vec[0], 0);
        ops.tb = rk_build_common_m_outer_tile(kc, "b", s->dtype_b, s->tile_n, vec[1], 0);
    }
    ops.desc_a = rk_build_wgrad_desc_a;
    ops.desc_b = rk_build_wgrad_desc_b;
    ops.a_mn0 = kc->m0;
    ops.b_mn0 = kc->n0;
    return ops;
}

const rk_family_module rk_build_wgrad_module = {
    {"dY", "X", "dW"},
    rk_build_wgrad_add_params,
    rk_build_wgrad_block_decode,
    rk_build_wgrad_desc_a,
    rk_build_wgrad_desc_b,
    rk_build_wgrad_desc_d,
    rk_build_wgrad_operands,
};
