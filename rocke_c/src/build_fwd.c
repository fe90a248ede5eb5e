/* build_fwd.c: forward convolution: A = X (NHWC, im2col), B = W (KYXC), D = Y (NHWK)
 * (docs/reference/conv-semantics.md §11).
 *
 * Twin of rocke_py/engine/build_fwd.py, function for function in the same order. */
#include "build.h"

static void add_params(rk_kc *kc) { rk_add_tensor_params(kc, rk_build_fwd_module.names, 0); }

static void block_decode(rk_kc *kc)
{
    rk_grid_tiles(kc);
    if (kc->problem->groups > 1)
        kc->group = rk_b_block_id(&kc->b, 2);
    kc->k_lo = rk_c(kc, 0);
    kc->k_hi = rk_c(kc, kc->plan->gemm[2]);
}

static rk_desc desc_a(rk_kc *kc, rk_val mn, rk_val k)
{
    return rk_input_offset(kc, mn, k, kc->plan->gemm[0], kc->plan->gemm[2]);
}

/* W at (k_out = mn, k = (y, x, c)): row k_out of the group's filters. */
static rk_desc desc_b(rk_kc *kc, rk_val mn, rk_val k)
{
    long long kpg = rk_kpg(kc->problem), gemm_k = kc->plan->gemm[2];
    rk_desc out;
    out.valid = rk_both_below(kc, mn, kpg, k, gemm_k);
    out.off = rk_group_row_offset(kc, mn, kpg, gemm_k, k);
    return out;
}

/* Y (NHWK) at (m = (n, ho, wo), n = k_out). */
static rk_desc desc_d(rk_kc *kc, rk_val m, rk_val n)
{
    long long kpg = rk_kpg(kc->problem);
    rk_desc out;
    out.valid = rk_both_below(kc, m, kc->plan->gemm[0], n, kpg);
    out.off = rk_row_offset(kc, m, kc->problem->K, kpg, n);
    return out;
}

/* Both tiles M-outer, loaded along k. */
static rk_operands operands(rk_kc *kc) { return rk_make_operands(kc, 1, 1, desc_a, desc_b); }

const rk_family_module rk_build_fwd_module = {
    {"X", "W", "Y"}, add_params, block_decode, desc_a, desc_b, desc_d, operands,
};
