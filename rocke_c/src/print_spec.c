/* print_spec.c: mode `spec`: the normalised spec after defaults and deductions, one
 * `key = value` per line in a fixed order, with what follows from it (GEMM view, vector
 * sizes, LDS, kernel name), all read from the plan.
 *
 * Twin of rocke_py/engine/print_spec.py; docs/engine-contract.md §7. Python's fmt() and
 * Lines.put() become one put function per value type; the text grows in one rk_buf, so
 * printing is linear in its size. */
#include <string.h>
#include "internal.h"

/* "key = value\n" written into room made once (value: n bytes). */
static void put_line(rk_buf *out, const char *key, const char *value, size_t n)
{
    size_t k = strlen(key);
    char *d;
    if (rk_buf_room(out, k + n + 4))
        return;
    d = out->data + out->len;
    memcpy(d, key, k);
    memcpy(d + k, " = ", 3);
    memcpy(d + k + 3, value, n);
    d[k + 3 + n] = '\n';
    d[k + 4 + n] = '\0';
    out->len += k + n + 4;
}

static void put_str(rk_buf *out, const char *key, const char *value) { put_line(out, key, value, strlen(value)); }

static void put_int(rk_buf *out, const char *key, long long value)
{
    char digits[RK_INT_DIGITS];
    put_line(out, key, digits, rk_fmt_int(value, digits));
}

/* key = <rows>x<cols> */
static void put_shape(rk_buf *out, const char *key, long long rows, long long cols)
{
    rk_buf_puts(out, key);
    rk_buf_putn(out, " = ", 3);
    rk_buf_put_int(out, rows);
    rk_buf_putn(out, "x", 1);
    rk_buf_put_int(out, cols);
    rk_buf_putn(out, "\n", 1);
}

static void put_bool(rk_buf *out, const char *key, int value) { put_str(out, key, value ? "true" : "false"); }

/* Python's None prints as `unset`. */
static void put_opt(rk_buf *out, const char *key, rk_opt value)
{
    if (value.set)
        put_int(out, key, value.v);
    else
        put_str(out, key, "unset");
}

static rk_opt opt(int set, long long v)
{
    rk_opt o;
    o.set = set, o.v = set ? v : 0;
    return o;
}

static void print_problem(rk_buf *out, const rk_problem *p, const char *shape)
{
    const char *keys[14] = {"N", "Hi", "Wi", "C", "K", "Y", "X", "sH", "sW", "pH", "pW", "dH", "dW", "groups"};
    long long values[14];
    int i;
    values[0] = p->N, values[1] = p->Hi, values[2] = p->Wi, values[3] = p->C, values[4] = p->K;
    values[5] = p->Y, values[6] = p->X, values[7] = p->sH, values[8] = p->sW, values[9] = p->pH;
    values[10] = p->pW, values[11] = p->dH, values[12] = p->dW, values[13] = p->groups;
    for (i = 0; i < 14; i++)
        put_int(out, keys[i], values[i]);
    put_opt(out, "Di", opt(p->has_3d, p->Di));
    put_opt(out, "Z", opt(p->has_3d, p->Z));
    put_opt(out, "sD", opt(p->has_3d, p->sD));
    put_opt(out, "pD", opt(p->has_3d, p->pD));
    put_opt(out, "dD", opt(p->has_3d, p->dD));
    put_int(out, "Ho", rk_problem_ho(p));
    put_int(out, "Wo", rk_problem_wo(p));
    put_opt(out, "Do", opt(p->has_3d, p->has_3d ? rk_problem_do(p) : 0));
    put_int(out, "cpg", rk_cpg(p));
    put_int(out, "kpg", rk_kpg(p));
    put_bool(out, "is_3d", p->has_3d);
    put_bool(out, "is_pointwise", rk_is_pointwise(p));
    put_str(out, "short", shape);
}

static void print_fields(rk_buf *out, const rk_spec *s, const char *tag)
{
    put_str(out, "name", s->name);
    put_str(out, "dtype_a", s->dtype_a);
    put_str(out, "dtype_b", s->dtype_b);
    put_str(out, "dtype_d", s->dtype_d);
    put_str(out, "dtype_acc", "fp32");
    put_int(out, "tile_m", s->tile_m);
    put_int(out, "tile_n", s->tile_n);
    put_int(out, "tile_k", s->tile_k);
    put_int(out, "warp_m", s->warp_m);
    put_int(out, "warp_n", s->warp_n);
    put_int(out, "warp_tile_m", s->warp_tile_m);
    put_int(out, "warp_tile_n", s->warp_tile_n);
    put_int(out, "warp_tile_k", s->warp_tile_k);
    put_int(out, "wave_size", s->wave_size);
    put_int(out, "block_size", rk_block_size(s));
    put_str(out, "pipeline", s->pipeline);
    put_str(out, "epilogue", s->epilogue);
    put_bool(out, "async_dma", s->async_dma);
    put_bool(out, "unroll_k", s->unroll_k);
    put_opt(out, "lds_k_pad", s->lds_k_pad);
    if (rk_has_lds_layout(s)) {
        rk_buf_puts(out, "lds_layout = pad");
        rk_buf_put_int(out, s->lds_layout_pad.v);
        rk_buf_puts(out, "_xor");
        rk_buf_put_int(out, s->lds_layout_xor);
        rk_buf_putn(out, "\n", 1);
    } else
        put_str(out, "lds_layout", "unset");
    if (s->family != RK_FAMILY_FWD) {
        put_bool(out, "lds_k_outer", s->lds_k_outer);
        put_str(out, "lds_k_outer_requested", s->lds_k_outer_requested);
    }
    put_opt(out, "vector_size_a", s->vector_size_a);
    put_opt(out, "vector_size_b", s->vector_size_b);
    put_opt(out, "vector_size_c", s->vector_size_c);
    put_bool(out, "chiplet_swizzle", s->chiplet_swizzle);
    put_int(out, "chiplet_wgm", s->chiplet_wgm);
    put_int(out, "chiplet_num_xcds", s->chiplet_num_xcds);
    put_int(out, "chiplet_chunk_size", s->chiplet_chunk_size);
    put_opt(out, "waves_per_eu", s->waves_per_eu);
    put_int(out, "bias", s->bias);
    put_int(out, "scale", s->scale);
    put_bool(out, "relu", s->relu);
    put_opt(out, "clamp_min", s->clamp_min);
    put_opt(out, "clamp_max", s->clamp_max);
    put_str(out, "acc_epilogue", tag[0] ? tag : "identity");
    if (s->family != RK_FAMILY_FWD) {
        put_int(out, "split_k", s->split_k);
        put_int(out, "split_k_requested", s->split_k_requested);
    }
    if (s->family == RK_FAMILY_WGRAD) {
        put_bool(out, "two_stage", s->two_stage);
        put_bool(out, "force_deterministic", s->force_deterministic);
        put_int(out, "group_merge", s->group_merge);
    }
    if (s->family == RK_FAMILY_DGRAD) {
        put_int(out, "num_load_waves", s->num_load_waves);
        put_bool(out, "cshuffle_no_alias", s->cshuffle_no_alias);
    }
}

/* One `sub_gemm.<i> = block_start=... gemm_k_padded=...` line per kept tilde record. */
static void print_sub_gemms(rk_buf *out, const rk_plan *plan)
{
    int i, k;
    put_int(out, "num_sub_gemms", plan->n_sub_gemms);
    for (i = 0; i < plan->n_sub_gemms; i++) {
        rk_buf_puts(out, "sub_gemm.");
        rk_buf_put_int(out, i);
        rk_buf_puts(out, " = ");
        for (k = 0; k < RK_SUB_GEMM_FIELDS; k++) {
            if (k)
                rk_buf_putn(out, " ", 1);
            rk_buf_puts(out, rk_sub_gemm_fields[k]);
            rk_buf_putn(out, "=", 1);
            rk_buf_put_int(out, plan->sub_gemms[i].v[k]);
        }
        rk_buf_puts(out, "\n");
    }
}

static void print_derived(rk_buf *out, const rk_plan *plan)
{
    const rk_spec *s = &plan->spec;
    put_int(out, "gemm_m", plan->gemm[0]);
    put_int(out, "gemm_n", plan->gemm[1]);
    put_int(out, "gemm_k", plan->gemm[2]);
    put_int(out, "default_vec_a", plan->default_vectors[0]);
    put_int(out, "default_vec_b", plan->default_vectors[1]);
    put_int(out, "default_vec_c", plan->default_vectors[2]);
    if (s->family == RK_FAMILY_WGRAD) {
        put_int(out, "k_padded", plan->k_padded);
        if (s->split_k > 0)
            put_int(out, "ks", plan->ks);
        else
            put_str(out, "ks", "runtime");
    }
    put_int(out, "a_frag_len", plan->frag_lens[0]);
    put_int(out, "b_frag_len", plan->frag_lens[1]);
    put_int(out, "lds_pad", plan->lds_pad);
    put_shape(out, "lds_a_shape", plan->lds_a.rows, plan->lds_a.cols);
    put_shape(out, "lds_b_shape", plan->lds_b.rows, plan->lds_b.cols);
    put_bool(out, "lds_double_buffer", rk_double_buffer(s));
    put_int(out, "lds_bytes", plan->lds_bytes);
    put_int(out, "lds_capacity", plan->target->lds_capacity);
    if (s->async_dma) {
        long long da = plan->async_dwords[0], db = plan->async_dwords[1];
        put_opt(out, "async_dwords_a", opt(da != 0, da));
        put_opt(out, "async_dwords_b", opt(db != 0, db));
    }
    if (s->family == RK_FAMILY_DGRAD)
        print_sub_gemms(out, plan);
}

int rk_print_spec(const rk_plan *plan, rk_buf *out, rk_error *err)
{
    const rk_spec *s = &plan->spec;
    rk_buf_reserve(out, 4096); /* the text is 2-3 KiB: one allocation, not a chain of doublings */
    rk_buf_puts(out, "rocke.spec v1\n");
    put_str(out, "family", s->family_name);
    put_str(out, "arch", s->arch);
    print_problem(out, &plan->problem, plan->short_name);
    print_fields(out, s, plan->acc_tag);
    print_derived(out, plan);
    put_str(out, "kernel_name", plan->kernel_name);
    if (out->failed)
        return rk_fail_internal(err, "out of memory (spec text)");
    return 0;
}
