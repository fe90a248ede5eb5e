/* build_fwd.c: forward convolution: A = X (NHWC, im2col), B = W (KYXC), D = Y (NHWK)
 * (docs/reference/conv-semantics.md §11).
 *
 * Twin of rocke_py/engine/build_fwd.py, function for function in the same order. */
#include "build.h"

static void rk_build_fwd_add_params(rk_kc *kc)
{
    rk_build_common_add_tensor_params(kc, rk_build_fwd_module.names, 0);
}

static void rk_build_fwd_block_decode(rk_kc *kc)
{
    const rk_problem *p = kc->problem;
    long long gemm[3];
    rk_problem_fwd_gemm(p, gemm);
    rk_build_common_grid_tiles(kc, gemm[0], gemm[1]);
    if (p->groups > 1)
        kc->group = rk_b_block_id(&kc->b, 2);
    kc->k_lo = rk_build_common_c(kc, 0);
    kc->k_hi = rk_build_common_c(kc, gemm[2]);
}

static rk_desc rk_build_fwd_desc_a(rk_kc *kc, rk_val mn, rk_val k)
{
    return rk_build_common_input_offset(kc, mn, k);
}

/* W at (k_out = mn, k = (y, x, c)): row k_out of the group's filters. */
static rk_desc rk_build_fwd_desc_b(rk_kc *kc, rk_val mn, rk_val k)
{
    const rk_problem *p = kc->problem;
    long long gemm[3], kpg = rk_problem_kpg(p);
    rk_val ok_n, ok_k, k_out, row, gb;
    rk_desc out;
    rk_problem_fwd_gemm(p, gemm);
    ok_n = rk_build_common_below(kc, mn, kpg);
    ok_k = rk_build_common_below(kc, k, gemm[2]);
    out.valid = rk_b_and(&kc->b, ok_n, ok_k);
    gb = rk_build_common_group_base(kc, kpg);
    k_out = rk_build_common_add_opt(kc, mn, gb);
    row = rk_build_common_mul_c(kc, k_out, gemm[2]);
    out.off = rk_b_add(&kc->b, row, k);
    return out;
}

/* Y (NHWK) at (m = (n, ho, wo), n = k_out). */
static rk_desc rk_build_fwd_desc_d(rk_kc *kc, rk_val m, rk_val n)
{
    const rk_problem *p = kc->problem;
    long long gemm[3], kpg = rk_problem_kpg(p);
    rk_val conds[2], row, grouped, gb;
    rk_desc out;
    rk_problem_fwd_gemm(p, gemm);
    conds[0] = rk_build_common_below(kc, m, gemm[0]);
    conds[1] = rk_build_common_below(kc, n, kpg);
    out.valid = rk_build_common_all_of(kc, conds, 2);
    row = rk_build_common_mul_c(kc, m, p->K);
    gb = rk_build_common_group_base(kc, kpg);
    grouped = rk_build_common_add_opt(kc, row, gb);
    out.off = rk_b_add(&kc->b, grouped, n);
    return out;
}

static rk_operands rk_build_fwd_operands(rk_kc *kc)
{
    const rk_spec *s = kc->spec;
    long long vec[3];
    rk_operands ops;
    rk_build_common_load_vectors(kc, vec);
    ops.ta = rk_build_common_m_outer_tile(kc, "a", s->dtype_a, s->tile_m, vec[0], 1);
    ops.tb = rk_build_common_m_outer_tile(kc, "b", s->dtype_b, s->tile_n, vec[1], 1);
    ops.desc_a = rk_build_fwd_desc_a;
    ops.desc_b = rk_build_fwd_desc_b;
    ops.a_mn0 = kc->m0;
    ops.b_mn0 = kc->n0;
    return ops;
}

const rk_family_module rk_build_fwd_module = {
    {"X", "W", "Y"},
    rk_build_fwd_add_params,
    rk_build_fwd_block_decode,
    rk_build_fwd_desc_a,
    rk_build_fwd_desc_b,
    rk_build_fwd_desc_d,
    rk_build_fwd_operands,
};
