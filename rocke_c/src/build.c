/* build.c: mode `ir`'s builder: one implicit-GEMM kernel from the plan of a validated spec
 * (docs/kernels.md).
 *
 * Twin of rocke_py/engine/build.py. The direction modules supply params, block decode and
 * descriptors; build_common.c the rest. The built kernel is verified and at most its size
 * bound (the plan's op_limit: rk_kernel_ops_bound, never more than RK_MAX_KERNEL_OPS);
 * a failure is an engine bug (an internal error, never a rejection). */
#include <string.h>
#include "build.h"

static const rk_family_module *build_family(int family)
{
    if (family == RK_FAMILY_FWD)
        return &rk_build_fwd_module;
    if (family == RK_FAMILY_WGRAD)
        return &rk_build_wgrad_module;
    return &rk_build_dgrad_module;
}

static rk_accs k_loop(rk_kc *kc, const rk_operands *ops, const rk_wave_tile *wt, const rk_frag_plan *frags)
{
    const rk_spec *spec = kc->spec;
    if (spec->unroll_k)
        return rk_k_loop_unrolled(kc, ops, wt, frags, kc->plan->k_iters);
    if (strcmp(spec->pipeline, "basic") == 0)
        return rk_k_loop_basic(kc, ops, wt, frags, kc->plan->k_iters);
    if (spec->async_dma)
        return rk_k_loop_async(kc, ops, wt, frags, kc->plan->k_iters);
    return rk_k_loop_runtime(kc, ops, wt, frags);
}

/* The build's first failure as an internal error (-1), or 0. */
static int check(const rk_kc *kc, rk_error *err)
{
    if (kc->error)
        return rk_fail_internal(err, "%s", kc->error);
    return rk_b_check(&kc->b, err);
}

int rk_build_kernel(const rk_plan *plan, rk_arena *arena, rk_ir_kernel **out, rk_error *err)
{
    const rk_spec *spec = &plan->spec;
    const rk_family_module *family;
    rk_operands ops;
    rk_wave_tile wt;
    rk_frag_plan frags;
    rk_accs accs;
    rk_ir_kernel *kernel;
    const char *problem_text;
    rk_kc *kc;
    *out = NULL;
    family = build_family(spec->family);
    kc = rk_alloc(arena, sizeof *kc);
    if (!kc)
        return rk_fail_internal(err, "out of memory (kernel context)");
    rk_begin_kernel(kc, plan, arena);
    family->add_params(kc);
    rk_thread_prologue(kc);
    family->block_decode(kc);
    rk_make_rsrcs(kc, family->names, !rk_atomic_split_k(spec));
    ops = family->operands(kc);
    wt = rk_build_common_wave_tile(kc);
    frags = rk_build_common_frag_plan(kc, &wt, &ops.ta, &ops.tb);
    accs = k_loop(kc, &ops, &wt, &frags);
    if (strcmp(spec->epilogue, "cshuffle") == 0) {
        int exclusive = spec->family != RK_FAMILY_DGRAD || spec->cshuffle_no_alias;
        rk_epilogue_cshuffle(kc, &accs, &wt, family->desc_d, plan->vectors[2], exclusive);
    } else {
        rk_epilogue_default(kc, &accs, &wt, family->desc_d);
    }
    if (spec->family == RK_FAMILY_DGRAD)
        rk_zero_untouched(kc);
    kernel = rk_finish(kc);
    if (check(kc, err))
        return -1;
    if (arena->failed)
        return rk_fail_internal(err, "out of memory (arena)");
    problem_text = rk_verify_kernel(kernel, arena);
    if (arena->failed)
        return rk_fail_internal(err, "out of memory (verifier)");
    if (problem_text)
        return rk_fail_internal(err, "verifier: %s", problem_text);
    *out = kernel;
    return 0;
}
