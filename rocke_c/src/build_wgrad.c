/* build_wgrad.c: backward weight: A = dY (NHWK), B = X (NHWC, im2col with m := k_wg),
 * D = dW (K[Z]YXC), reduction over N*[Do*]Ho*Wo, split-K over blockIdx.z
 * (docs/reference/conv-semantics.md §2.2, §10.1).
 *
 * Twin of rocke_py/engine/build_wgrad.py, function for function in the same order. */
#include "build.h"

static void add_params(rk_kc *kc)
{
    const rk_spec *s = kc->spec;
    rk_add_tensor_params(kc, rk_build_wgrad_module.names, rk_atomic_split_k(s));
    if (s->split_k == 0) {
        rk_build_common_set_param(kc, "ks", rk_b_param(&kc->b, "ks", "i32", NULL));
        if (kc->problem->groups > 1)
            rk_build_common_set_param(kc, "ks_count", rk_b_param(&kc->b, "ks_count", "i32", NULL));
    }
}

/* Tiles from x/y; z is the group (split_k = 1) or group*split_k + slice. */
static void block_decode(rk_kc *kc)
{
    rk_builder *b = &kc->b;
    const rk_spec *s = kc->spec;
    const rk_problem *p = kc->problem;
    rk_val bz, ks, count, slice, lo, hi;
    rk_grid_tiles(kc);
    bz = rk_b_block_id(b, 2);
    if (s->split_k == 1) {
        if (p->groups > 1)
            kc->group = bz;
        kc->k_lo = rk_c(kc, 0);
        kc->k_hi = rk_c(kc, kc->plan->gemm[2]);
        return;
    }
    if (s->split_k > 1) {
        ks = rk_c(kc, kc->plan->ks);
        count = rk_c(kc, s->split_k);
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
static rk_desc desc_a(rk_kc *kc, rk_val mn, rk_val k)
{
    const rk_problem *p = kc->problem;
    rk_desc out;
    out.valid = rk_both_below(kc, mn, rk_kpg(p), k, kc->plan->gemm[2]);
    out.off = rk_row_offset(kc, k, p->K, rk_kpg(p), mn);
    return out;
}

/* X at (n_wg = mn, k_wg = k): the forward A descriptor with m := k_wg, k := n_wg. */
static rk_desc desc_b(rk_kc *kc, rk_val mn, rk_val k)
{
    const rk_problem *p = kc->problem;
    long long wg_n = kc->plan->gemm[1], wg_k = kc->plan->gemm[2];
    rk_desc out;
    if (rk_is_pointwise(p)) {
        out.valid = rk_both_below(kc, mn, wg_n, k, wg_k);
        out.off = rk_row_offset(kc, k, p->C, rk_cpg(p), mn);
        return out;
    }
    return rk_input_offset(kc, k, mn, wg_k, wg_n);
}

/* dW at (k_out = m, n_wg = n), packed per group: row (group*kpg + k_out) of wg_N. */
static rk_desc desc_d(rk_kc *kc, rk_val m, rk_val n)
{
    long long wg_m = kc->plan->gemm[0], wg_n = kc->plan->gemm[1];
    rk_desc out;
    out.valid = rk_both_below(kc, m, wg_m, n, wg_n);
    out.off = rk_group_row_offset(kc, m, rk_kpg(kc->problem), wg_n, n);
    return out;
}

/* Both tiles loaded along mn, M-outer or (lds_k_outer) K-outer. */
static rk_operands operands(rk_kc *kc) { return rk_make_operands(kc, 0, 0, desc_a, desc_b); }

const rk_family_module rk_build_wgrad_module = {
    {"dY", "X", "dW"}, add_params, block_decode, desc_a, desc_b, desc_d, operands,
};
