/* plan.c: stage plan: every fact the later stages read, derived once from a validated spec.
 *
 * Twin of rocke_py/engine/plan.py (docs/engine-contract.md §1). It runs after validation;
 * mode `spec`'s print and the builders read the plan (a plain struct in the call's arena) and
 * never go back to spec.c or problem.c for a derived size, so data flows forward:
 * spec -> plan -> text or kernel. */
#include <string.h>
#include "internal.h"

/* (k_padded, ks) of a wgrad spec; (0, 0) for the other families (ks 0: a runtime argument). */
static void wgrad_slices(const rk_spec *s, const rk_problem *p, long long *k_padded, long long *ks)
{
    *k_padded = 0, *ks = 0;
    if (s->family != RK_FAMILY_WGRAD)
        return;
    *k_padded = rk_wg_k_padded(s, p, s->split_k > 1 ? s->split_k : 1);
    if (s->split_k > 0)
        *ks = rk_floordiv(*k_padded, s->split_k);
}

/* The kernel name in the arena, NULL when the arena or the buffer failed. */
static const char *plan_kernel_name(const rk_plan *plan, rk_arena *arena)
{
    const char *name = NULL;
    rk_buf text;
    rk_buf_init(&text);
    if (rk_kernel_name(&plan->spec, plan->short_name, plan->acc_tag, arena, &text) == 0 && !text.failed && text.data)
        name = rk_strndup(arena, text.data, text.len);
    rk_buf_free(&text);
    return name;
}

static rk_lds_tile lds_tile(const long long shape[2], int k_outer)
{
    rk_lds_tile t;
    t.rows = shape[0], t.cols = shape[1], t.k_outer = k_outer;
    return t;
}

int rk_make_plan(const rk_spec *s, const rk_problem *p, const rk_target *t, rk_arena *arena, const rk_plan **out,
                 rk_error *err)
{
    rk_plan *plan = rk_alloc(arena, sizeof *plan);
    long long a[2], b[2], bound;
    int outer[2];
    *out = NULL;
    if (!plan)
        return rk_fail_internal(err, "out of memory (plan)");
    plan->spec = *s;
    plan->problem = *p;
    plan->target = t;
    if (s->family == RK_FAMILY_DGRAD) {
        rk_sub_gemm *records = NULL;
        if (rk_dgrad_sub_gemms(p, s->tile_m, s->tile_n, s->tile_k, s->split_k, arena, &records, &plan->n_sub_gemms,
                               err))
            return -1;
        plan->sub_gemms = records;
    }
    rk_short(p, plan->short_name);
    rk_acc_tag(s, plan->acc_tag);
    rk_lds_shapes(s, a, b);
    rk_lds_k_outer_sides(s, outer);
    if (s->async_dma) {
        rk_async_tile tiles[2];
        rk_async_tiles(s, p, tiles);
        plan->async_dwords[0] = rk_tile_dwords(s, &tiles[0]);
        plan->async_dwords[1] = rk_tile_dwords(s, &tiles[1]);
    }
    wgrad_slices(s, p, &plan->k_padded, &plan->ks);
    if (!(plan->kernel_name = plan_kernel_name(plan, arena)))
        return rk_fail_internal(err, "out of memory (kernel name)");
    rk_spec_gemm(s, p, plan->gemm);
    rk_default_vector_sizes(s, p, plan->default_vectors);
    rk_load_widths(s, p, plan->vectors);
    rk_frag_lens(s, t, plan->frag_lens);
    plan->lds_pad = rk_effective_lds_pad(s);
    plan->lds_a = lds_tile(a, outer[0]);
    plan->lds_b = lds_tile(b, outer[1]);
    plan->lds_bytes = rk_lds_budget(s);
    plan->k_iters = rk_unrolled_k_iters(s, p);
    bound = rk_kernel_ops_bound(s, p, t).total;
    plan->op_limit = bound < RK_MAX_KERNEL_OPS ? bound : RK_MAX_KERNEL_OPS;
    *out = plan;
    return 0;
}
