/* validate.c: the rule tables of the reference (docs/reference/conv-semantics.md §4, §11):
 * spec layer, then arch layer, then build layer, each in table order; the first failing rule
 * gives the reason code and message. The reference rules that no config can reach (an earlier
 * check always fires first) are left out; parity_configs/UNREACHABLE.md gives each one's argument.
 *
 * Twin of rocke_py/engine/validate.py: the same rules, in the same order, with the same
 * messages. Each check appends its message to the buffer and returns 1 when the rule fires,
 * 0 otherwise (Python: the message or None); validate returns the first as the error.
 * Python's helper b() has no twin: no message prints a boolean. */
#include <string.h>
#include "internal.h"

typedef struct rk_ctx {
    const rk_spec *spec;
    const rk_problem *problem;
    const rk_target *target;
    rk_arena *arena;    /* C only: the dgrad records of CONV_INT32_RANGE */
} rk_ctx;

typedef int (*rk_check)(const rk_ctx *c, rk_buf *msg);

static int streq(const char *a, const char *b) { return strcmp(a, b) == 0; }

static int edge_16_32(long long edge) { return edge == 16 || edge == 32; }

/* ---- shared checks (one function per rule meaning; the family prefixes the code) ---- */

static int unknown_option(const rk_ctx *c, rk_buf *msg, const char *const *pipelines)
{
    static const char *const epilogues[] = {"default", "cshuffle", NULL};
    const rk_spec *s = c->spec;
    if (!rk_str_in(s->pipeline, pipelines)) {
        if (rk_echo_word(s->pipeline))
            rk_buf_printf(msg, "pipeline '%s' is not one of ", s->pipeline);
        else
            rk_buf_puts(msg, "pipeline is not one of ");
        rk_str_join(msg, ", ", pipelines);
        return 1;
    }
    if (!rk_str_in(s->epilogue, epilogues)) {
        if (rk_echo_word(s->epilogue))
            rk_buf_printf(msg, "epilogue '%s' is not one of default, cshuffle", s->epilogue);
        else
            rk_buf_puts(msg, "epilogue is not one of default, cshuffle");
        return 1;
    }
    return 0;
}

static int fwd_wgrad_unknown_option(const rk_ctx *c, rk_buf *msg)
{
    static const char *const pipelines[] = {"mem", "compv3", "compv4", "basic", NULL};
    return unknown_option(c, msg, pipelines);
}

static int dgrad_unknown_option(const rk_ctx *c, rk_buf *msg)
{
    static const char *const pipelines[] = {"mem", "compv3", "compv4", "wavelet", NULL};
    return unknown_option(c, msg, pipelines);
}

static int tile_divisibility(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    if (rk_floormod(s->tile_m, s->warp_m * s->warp_tile_m) != 0) {
        rk_buf_printf(msg, "tile_m = %lld is not a multiple of warp_m*warp_tile_m = %lld*%lld", s->tile_m, s->warp_m,
                      s->warp_tile_m);
        return 1;
    }
    if (rk_floormod(s->tile_n, s->warp_n * s->warp_tile_n) != 0) {
        rk_buf_printf(msg, "tile_n = %lld is not a multiple of warp_n*warp_tile_n = %lld*%lld", s->tile_n, s->warp_n,
                      s->warp_tile_n);
        return 1;
    }
    if (rk_floormod(s->tile_k, s->warp_tile_k) != 0) {
        rk_buf_printf(msg, "tile_k = %lld is not a multiple of warp_tile_k = %lld", s->tile_k, s->warp_tile_k);
        return 1;
    }
    return 0;
}

static int block_size_spec(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    if (rk_block_size(s) > 1024) {
        rk_buf_printf(msg, "block_size = warp_m*warp_n*wave_size = %lld*%lld*%lld = %lld exceeds 1024", s->warp_m,
                      s->warp_n, s->wave_size, rk_block_size(s));
        return 1;
    }
    return 0;
}

static int vec_c_default_epilogue(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    if (s->vector_size_c.set && s->vector_size_c.v > 1 && streq(s->epilogue, "default")) {
        rk_buf_printf(msg,
                      "vector_size_c = %lld needs epilogue cshuffle "
                      "(the default epilogue stores one element per lane)",
                      s->vector_size_c.v);
        return 1;
    }
    return 0;
}

static int wave_size_mismatch(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    const rk_target *t = c->target;
    if (s->wave_size != t->wave_size) {
        rk_buf_printf(msg, "wave_size = %lld is not the wave size of %s (%lld)", s->wave_size, t->arch, t->wave_size);
        return 1;
    }
    return 0;
}

static int split_k_odd_cpg(const rk_ctx *c, rk_buf *msg, int atomic)
{
    const rk_spec *s = c->spec;
    long long cpg = rk_cpg(c->problem);
    if (atomic && rk_spec_is_sixteen_bit(s->dtype_d) && rk_floormod(cpg, 2) != 0) {
        rk_buf_printf(msg,
                      "split_k = %lld with dtype_d = %s needs an even cpg, "
                      "not %lld (packed pairs must not cross a channel run)",
                      s->split_k, s->dtype_d, cpg);
        return 1;
    }
    return 0;
}

static int kouter_dtype_ab(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    if (s->lds_k_outer && (!rk_spec_is_sixteen_bit(s->dtype_a) || !rk_spec_is_sixteen_bit(s->dtype_b))) {
        rk_buf_printf(msg,
                      "lds_k_outer needs 16-bit dtype_a and dtype_b (the transpose read is 16-bit), "
                      "not %s and %s",
                      s->dtype_a, s->dtype_b);
        return 1;
    }
    return 0;
}

static int kouter_dtype_b(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    if (s->lds_k_outer && !rk_spec_is_sixteen_bit(s->dtype_b)) {
        rk_buf_printf(msg, "lds_k_outer needs a 16-bit dtype_b (the transpose read is 16-bit), not %s", s->dtype_b);
        return 1;
    }
    return 0;
}

static int kouter_atom_edge_mn(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    if (s->lds_k_outer && (!edge_16_32(s->warp_tile_m) || !edge_16_32(s->warp_tile_n))) {
        rk_buf_printf(msg, "lds_k_outer needs warp_tile_m and warp_tile_n in {16, 32}, not %lld and %lld",
                      s->warp_tile_m, s->warp_tile_n);
        return 1;
    }
    return 0;
}

static int kouter_atom_edge_n(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    if (s->lds_k_outer && !edge_16_32(s->warp_tile_n)) {
        rk_buf_printf(msg, "lds_k_outer needs warp_tile_n in {16, 32}, not %lld", s->warp_tile_n);
        return 1;
    }
    return 0;
}

static int kouter_wave(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    if (s->lds_k_outer && s->wave_size != 64 && s->wave_size != 32) {
        rk_buf_printf(msg, "lds_k_outer needs wave_size 64 or 32, not %lld", s->wave_size);
        return 1;
    }
    return 0;
}

static void atom(const rk_spec *s, rk_buf *msg)
{
    rk_buf_printf(msg, "%lldx%lldx%lld", s->warp_tile_m, s->warp_tile_n, s->warp_tile_k);
}

static int wgrad_kouter_wave32_atom(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    int is_16x16x32 = s->warp_tile_m == 16 && s->warp_tile_n == 16 && s->warp_tile_k == 32;
    if (s->lds_k_outer && s->wave_size == 32 && !is_16x16x32) {
        rk_buf_puts(msg, "lds_k_outer on wave32 needs the 16x16x32 atom, not ");
        atom(s, msg);
        return 1;
    }
    return 0;
}

static int dgrad_kouter_wave32_atom(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    if (s->lds_k_outer && s->wave_size == 32 && !(s->warp_tile_n == 16 && s->warp_tile_k == 32)) {
        rk_buf_printf(msg,
                      "lds_k_outer on wave32 needs warp_tile_n = 16 and warp_tile_k = 32, "
                      "not %lld and %lld",
                      s->warp_tile_n, s->warp_tile_k);
        return 1;
    }
    return 0;
}

static int kouter_arch(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    if (s->lds_k_outer && rk_lds_k_outer_arch_wave(s->arch) == 0) {
        rk_buf_printf(msg, "lds_k_outer needs gfx950 or gfx1250 (a transpose read), not %s", s->arch);
        return 1;
    }
    return 0;
}

static int async_layout(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    if (s->async_dma && rk_has_lds_layout(s) && (s->lds_layout_pad.v != 0 || s->lds_layout_xor != 0)) {
        rk_buf_printf(msg,
                      "async_dma needs a packed, unswizzled LDS layout, not lds_layout_pad = "
                      "%lld, lds_layout_xor = %lld",
                      s->lds_layout_pad.v, s->lds_layout_xor);
        return 1;
    }
    return 0;
}

static int async_pad(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    if (s->async_dma && s->lds_k_pad.set && s->lds_k_pad.v != 0) {
        rk_buf_printf(msg, "async_dma writes a packed tile; lds_k_pad = %lld must be unset or 0", s->lds_k_pad.v);
        return 1;
    }
    return 0;
}

static int async_explicit_vector(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    if (s->async_dma && (s->vector_size_a.set || s->vector_size_b.set)) {
        rk_buf_puts(msg, "async_dma derives its own load width; vector_size_a and vector_size_b must be unset");
        return 1;
    }
    return 0;
}

static int vector_range(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    long long cap = rk_vector_cap(s);
    const char *keys[2];
    const rk_opt *values[2];
    int i;
    keys[0] = "vector_size_a", values[0] = &s->vector_size_a;
    keys[1] = "vector_size_b", values[1] = &s->vector_size_b;
    for (i = 0; i < 2; i++)
        if (values[i]->set && !(1 <= values[i]->v && values[i]->v <= cap)) {
            rk_buf_printf(msg, "%s = %lld is outside 1..%lld", keys[i], values[i]->v, cap);
            return 1;
        }
    return 0;
}

/* The two *_vector_divisibility rules differ only in the run vector_size_a must divide. */
static int vector_divisibility(const rk_ctx *c, rk_buf *msg, const char *a_name, long long a_run)
{
    const rk_spec *s = c->spec;
    long long cpg = rk_cpg(c->problem);
    if (s->vector_size_a.set && rk_floormod(a_run, s->vector_size_a.v) != 0) {
        rk_buf_printf(msg, "vector_size_a = %lld does not divide %s = %lld", s->vector_size_a.v, a_name, a_run);
        return 1;
    }
    if (s->vector_size_b.set && rk_floormod(cpg, s->vector_size_b.v) != 0) {
        rk_buf_printf(msg, "vector_size_b = %lld does not divide cpg = %lld", s->vector_size_b.v, cpg);
        return 1;
    }
    return 0;
}

static int grad_vector_divisibility(const rk_ctx *c, rk_buf *msg)
{
    return vector_divisibility(c, msg, "kpg", rk_kpg(c->problem));
}

static int fwd_vector_divisibility(const rk_ctx *c, rk_buf *msg)
{
    return vector_divisibility(c, msg, "cpg", rk_cpg(c->problem));
}

static int vec_c_range(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    long long cap = rk_vec_c_cap(s);
    if (s->vector_size_c.set && !(1 <= s->vector_size_c.v && s->vector_size_c.v <= cap)) {
        rk_buf_printf(msg, "vector_size_c = %lld is outside 1..%lld", s->vector_size_c.v, cap);
        return 1;
    }
    return 0;
}

static int vec_c_divisibility(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    long long run;
    const char *key = rk_vec_c_run(s, c->problem, &run);
    if (s->vector_size_c.set && rk_floormod(run, s->vector_size_c.v) != 0) {
        rk_buf_printf(msg, "vector_size_c = %lld does not divide %s = %lld", s->vector_size_c.v, key, run);
        return 1;
    }
    return 0;
}

static int vector_pow2(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    const char *keys[3];
    const rk_opt *values[3];
    int i;
    keys[0] = "vector_size_a", values[0] = &s->vector_size_a;
    keys[1] = "vector_size_b", values[1] = &s->vector_size_b;
    keys[2] = "vector_size_c", values[2] = &s->vector_size_c;
    /* the schema keeps every vector size in 1..65536, so v & (v - 1) is well defined */
    for (i = 0; i < 3; i++)
        if (values[i]->set && (values[i]->v & (values[i]->v - 1)) != 0) {
            rk_buf_printf(msg, "%s = %lld is not a power of two (a buffer load or store moves 2, 4, 8 or 16 bytes)",
                          keys[i], values[i]->v);
            return 1;
        }
    return 0;
}

static int basic_async(const rk_ctx *c, rk_buf *msg)
{
    if (streq(c->spec->pipeline, "basic") && c->spec->async_dma) {
        rk_buf_puts(msg, "pipeline basic and async_dma both own the K loop");
        return 1;
    }
    return 0;
}

static int unroll_exclusive(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    int basic = streq(s->pipeline, "basic");
    if (s->unroll_k && (basic || s->async_dma)) {
        rk_buf_printf(msg, "unroll_k and %s both own the K loop", basic ? "pipeline basic" : "async_dma");
        return 1;
    }
    return 0;
}

/* Every fully unrolled K loop (unroll_k included: engine-contract §8.1). */
static int unroll_cap(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    long long iters;
    if (s->unroll_k || streq(s->pipeline, "basic") || s->async_dma) {
        iters = rk_unrolled_k_iters(s, c->problem);
        if (iters > RK_MAX_UNROLLED_K_ITERS) {
            rk_buf_printf(msg, "the unrolled K loop would run %lld iterations, more than %d", iters,
                          RK_MAX_UNROLLED_K_ITERS);
            return 1;
        }
    }
    return 0;
}

static int mma_shape(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    const rk_target *t = c->target;
    if (!rk_has_mma(t, s->dtype_a, s->dtype_b, s->warp_tile_m, s->warp_tile_n, s->warp_tile_k)) {
        rk_buf_printf(msg, "%s has no %s x %s MMA atom ", t->arch, s->dtype_a, s->dtype_b);
        atom(s, msg);
        return 1;
    }
    return 0;
}

static int grouped_pointwise(const rk_ctx *c, rk_buf *msg)
{
    const rk_problem *p = c->problem;
    if (p->groups > 1 && rk_is_pointwise(p)) {
        rk_buf_printf(msg, "a grouped (groups = %lld) pointwise problem is not supported", p->groups);
        return 1;
    }
    return 0;
}

static int lds_budget_check(const rk_ctx *c, rk_buf *msg)
{
    long long total = rk_lds_budget(c->spec);
    const rk_target *t = c->target;
    if (total > t->lds_capacity) {
        rk_buf_printf(msg, "the LDS budget of %lld bytes exceeds the %lld bytes of %s", total, t->lds_capacity,
                      t->arch);
        return 1;
    }
    return 0;
}

static int wmma_atom(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    int atom_ok = s->warp_tile_m == 16 && s->warp_tile_n == 16 && (s->warp_tile_k == 16 || s->warp_tile_k == 32);
    if (!atom_ok) {
        rk_buf_printf(msg, "WMMA on %s supports the atoms 16x16x16 and 16x16x32, not ", s->arch);
        atom(s, msg);
        return 1;
    }
    if (!streq(s->pipeline, "mem")) {
        rk_buf_printf(msg, "WMMA on %s supports pipeline mem only, not %s", s->arch, s->pipeline);
        return 1;
    }
    return 0;
}

static int fwd_wgrad_wmma_subset(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    const char *keys[4];
    int bad[4], i;
    if (c->target->is_mfma)
        return 0;
    if (wmma_atom(c, msg))
        return 1;
    keys[0] = "epilogue cshuffle", bad[0] = !streq(s->epilogue, "default");
    keys[1] = "async_dma", bad[1] = s->async_dma;
    keys[2] = "unroll_k", bad[2] = s->unroll_k;
    keys[3] = "chiplet_swizzle", bad[3] = s->chiplet_swizzle;
    for (i = 0; i < 4; i++)
        if (bad[i]) {
            rk_buf_printf(msg, "WMMA on %s does not support %s", s->arch, keys[i]);
            return 1;
        }
    return 0;
}

static int dgrad_wmma_subset(const rk_ctx *c, rk_buf *msg) { return c->target->is_mfma ? 0 : wmma_atom(c, msg); }

static int acc_clamp_order(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    if (s->clamp_min.set && s->clamp_max.set && s->clamp_min.v > s->clamp_max.v) {
        rk_buf_printf(msg, "clamp_min = %lld is greater than clamp_max = %lld", s->clamp_min.v, s->clamp_max.v);
        return 1;
    }
    return 0;
}

static int lds_xor_unsupported(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    if (rk_has_lds_layout(s) && s->lds_layout_xor != 0) {
        rk_buf_printf(msg,
                      "lds_layout_xor = %lld is not supported "
                      "(the builders have no XOR-swizzled LDS tile; only 0, no swizzle)",
                      s->lds_layout_xor);
        return 1;
    }
    return 0;
}

static int field_unused(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    const char *keys[3];
    long long values[3], defaults[3];
    int i;
    if (rk_has_lds_layout(s) && s->lds_k_pad.set) {
        rk_buf_printf(msg,
                      "lds_k_pad = %lld has no effect with an explicit LDS layout "
                      "(lds_layout_pad = %lld, lds_layout_xor = %lld beats it)",
                      s->lds_k_pad.v, s->lds_layout_pad.v, s->lds_layout_xor);
        return 1;
    }
    if (s->chiplet_swizzle)
        return 0;
    keys[0] = "chiplet_wgm", values[0] = s->chiplet_wgm, defaults[0] = 8;
    keys[1] = "chiplet_num_xcds", values[1] = s->chiplet_num_xcds, defaults[1] = 8;
    keys[2] = "chiplet_chunk_size", values[2] = s->chiplet_chunk_size, defaults[2] = 64;
    for (i = 0; i < 3; i++)
        if (values[i] != defaults[i]) {
            rk_buf_printf(msg, "%s = %lld has no effect without chiplet_swizzle", keys[i], values[i]);
            return 1;
        }
    return 0;
}

static int dgrad_field_unused(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    if (field_unused(c, msg))
        return 1;
    if (s->num_load_waves != 4) {
        rk_buf_printf(msg,
                      "num_load_waves = %lld has no effect "
                      "(only pipeline wavelet, which is not supported, has load waves)",
                      s->num_load_waves);
        return 1;
    }
    if (s->cshuffle_no_alias && !streq(s->epilogue, "cshuffle")) {
        rk_buf_puts(msg, "cshuffle_no_alias has no effect without epilogue cshuffle");
        return 1;
    }
    return 0;
}

static int async_no_dwords(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    rk_async_tile tiles[2];
    int i;
    if (!s->async_dma)
        return 0;
    rk_async_tiles(s, c->problem, tiles);
    for (i = 0; i < 2; i++)
        if (rk_tile_dwords(s, &tiles[i]) == 0) {
            rk_buf_printf(msg,
                          "no dwords in 4, 3, 1 fits the %s tile (rows = %lld, cols = %lld, "
                          "block_size = %lld, elem_bytes = %lld, contig_cols = %lld)",
                          tiles[i].operand, tiles[i].rows, tiles[i].cols, rk_block_size(s), tiles[i].elem_bytes,
                          tiles[i].contig_cols);
            return 1;
        }
    return 0;
}

static int async_arch_dwords(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    const rk_target *t = c->target;
    rk_async_tile tiles[2];
    long long dwords;
    int i;
    if (!s->async_dma)
        return 0;
    rk_async_tiles(s, c->problem, tiles);
    for (i = 0; i < 2; i++) {
        dwords = rk_tile_dwords(s, &tiles[i]);   /* 0: none (Python's None) */
        if (dwords != 0 && dwords > t->async_lds_dwords) {
            rk_buf_printf(msg,
                          "async_dma on %s loads at most %lld bytes per lane to LDS, but the %s tile "
                          "would move %lld (rows = %lld, cols = %lld, block_size = %lld, elem_bytes = "
                          "%lld, contig_cols = %lld)",
                          t->arch, 4 * t->async_lds_dwords, tiles[i].operand, 4 * dwords, tiles[i].rows, tiles[i].cols,
                          rk_block_size(s), tiles[i].elem_bytes, tiles[i].contig_cols);
            return 1;
        }
    }
    return 0;
}

static int int32_range(const rk_ctx *c, rk_buf *msg) { return rk_int32_range(c->spec, c->problem, c->arena, msg); }

static int kernel_size(const rk_ctx *c, rk_buf *msg) { return rk_kernel_size(c->spec, c->problem, c->target, msg); }

/* ---- wgrad (conv-semantics §4.3) ---- */

static int wgrad_split_k_range(const rk_ctx *c, rk_buf *msg)
{
    if (c->spec->split_k < -1) {
        rk_buf_printf(msg, "split_k = %lld is below -1 (allowed: -1 auto, 0 runtime, 1, > 1)", c->spec->split_k);
        return 1;
    }
    return 0;
}

static int wgrad_two_stage(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    if (!s->two_stage)
        return 0;
    if (s->force_deterministic && s->split_k > 1) {
        rk_buf_printf(msg,
                      "force_deterministic with split_k = %lld needs the two-stage "
                      "workspace reduction, which is not supported",
                      s->split_k);
        return 1;
    }
    rk_buf_puts(msg, "two_stage (the workspace reduction) is not supported");
    return 1;
}

static int wgrad_split_k_odd_cpg(const rk_ctx *c, rk_buf *msg)
{
    return split_k_odd_cpg(c, msg, rk_atomic_split_k(c->spec));
}

static int wgrad_group_merge(const rk_ctx *c, rk_buf *msg)
{
    if (c->spec->group_merge != 1) {
        rk_buf_printf(msg, "group_merge = %lld is not supported (only 1)", c->spec->group_merge);
        return 1;
    }
    return 0;
}

static int wgrad_split_k_needs_cshuffle(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    if (rk_atomic_split_k(s) && rk_spec_is_sixteen_bit(s->dtype_d) && streq(s->epilogue, "default")) {
        rk_buf_printf(msg,
                      "split_k = %lld with dtype_d = %s needs epilogue cshuffle "
                      "(packed 16-bit atomics)",
                      s->split_k, s->dtype_d);
        return 1;
    }
    return 0;
}

static int wgrad_async_requires_kouter(const rk_ctx *c, rk_buf *msg)
{
    if (c->spec->async_dma && !c->spec->lds_k_outer) {
        rk_buf_puts(msg, "async_dma needs lds_k_outer (on the M-outer tile a chunk would run along K)");
        return 1;
    }
    return 0;
}

static int wgrad_split_k_runtime_loop(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    const char *keys[3];
    int on[3], i;
    if (s->split_k != 0)
        return 0;
    keys[0] = "async_dma", on[0] = s->async_dma;
    keys[1] = "unroll_k", on[1] = s->unroll_k;
    keys[2] = "pipeline basic", on[2] = streq(s->pipeline, "basic");
    for (i = 0; i < 3; i++)
        if (on[i]) {
            rk_buf_printf(msg,
                          "split_k = 0 (runtime) cannot be combined with %s, which needs a "
                          "compile-time trip count",
                          keys[i]);
            return 1;
        }
    return 0;
}

static int wgrad_kouter_explicit_pad(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    if (s->lds_k_outer && s->lds_k_pad.set) {
        rk_buf_printf(msg, "lds_k_outer fixes the LDS stride; lds_k_pad = %lld must be unset", s->lds_k_pad.v);
        return 1;
    }
    return 0;
}

static int wgrad_kouter_explicit_layout(const rk_ctx *c, rk_buf *msg)
{
    if (c->spec->lds_k_outer && rk_has_lds_layout(c->spec)) {
        rk_buf_puts(msg, "lds_k_outer fixes the A and B tile layout; lds_layout_pad and lds_layout_xor must be unset");
        return 1;
    }
    return 0;
}

static int dgrad_split_k_range(const rk_ctx *c, rk_buf *msg)
{
    if (c->spec->split_k < -1 || c->spec->split_k == 0) {
        rk_buf_printf(msg, "split_k = %lld is not allowed (allowed: -1 auto, 1, > 1)", c->spec->split_k);
        return 1;
    }
    return 0;
}

static int dgrad_split_k_odd_cpg(const rk_ctx *c, rk_buf *msg) { return split_k_odd_cpg(c, msg, c->spec->split_k > 1); }

/* The dgrad rules that only name a field: fire when `on`, with a fixed message. */
static int fixed(rk_buf *msg, int on, const char *text)
{
    if (on)
        rk_buf_puts(msg, text);
    return on;
}

static int dgrad_3d(const rk_ctx *c, rk_buf *msg)
{
    return fixed(msg, c->problem->has_3d, "dgrad does not support 3-D problems");
}

static int dgrad_kouter_explicit_layout(const rk_ctx *c, rk_buf *msg)
{
    return fixed(msg, c->spec->lds_k_outer && rk_has_lds_layout(c->spec),
                 "lds_k_outer fixes the B tile layout; lds_layout_pad and lds_layout_xor "
                 "must be unset");
}

static int dgrad_kouter_async(const rk_ctx *c, rk_buf *msg)
{
    return fixed(msg, c->spec->lds_k_outer && c->spec->async_dma, "lds_k_outer cannot be combined with async_dma");
}

static int dgrad_kouter_wavelet(const rk_ctx *c, rk_buf *msg)
{
    return fixed(msg, c->spec->lds_k_outer && streq(c->spec->pipeline, "wavelet"),
                 "lds_k_outer cannot be combined with pipeline wavelet");
}

static int dgrad_async_unsupported(const rk_ctx *c, rk_buf *msg)
{
    return fixed(msg, c->spec->async_dma, "dgrad has no direct global-to-LDS path (async_dma)");
}

static int dgrad_unroll_unsupported(const rk_ctx *c, rk_buf *msg)
{
    return fixed(msg, c->spec->unroll_k, "dgrad does not support unroll_k");
}

static int dgrad_chiplet_unsupported(const rk_ctx *c, rk_buf *msg)
{
    return fixed(msg, c->spec->chiplet_swizzle, "dgrad does not support chiplet_swizzle");
}

static int dgrad_wavelet_unsupported(const rk_ctx *c, rk_buf *msg)
{
    return fixed(msg, streq(c->spec->pipeline, "wavelet"), "pipeline wavelet is not supported");
}

static int dgrad_split_k_cdna_only(const rk_ctx *c, rk_buf *msg)
{
    if (c->spec->split_k > 1 && !c->target->is_mfma) {
        rk_buf_printf(msg, "split_k = %lld needs an MFMA target, not %s", c->spec->split_k, c->target->arch);
        return 1;
    }
    return 0;
}

static int dgrad_depthwise(const rk_ctx *c, rk_buf *msg)
{
    const rk_problem *p = c->problem;
    if (p->groups > 1 && rk_cpg(p) == 1) {
        rk_buf_printf(msg, "depthwise dgrad (groups = %lld, cpg = 1) is not supported", p->groups);
        return 1;
    }
    return 0;
}

static int dgrad_vec_c_default_epilogue(const rk_ctx *c, rk_buf *msg)
{
    const rk_problem *p = c->problem;
    if (c->spec->split_k <= 1 && p->sH == 1 && p->sW == 1)
        return vec_c_default_epilogue(c, msg);
    return 0;
}

static int dgrad_vec_c_scalar_store(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    const rk_problem *p = c->problem;
    if (s->split_k <= 1 && p->sH == 1 && p->sW == 1)
        return 0;       /* DGRAD_VEC_C_DEFAULT_EPILOGUE's case */
    if (s->vector_size_c.set && s->vector_size_c.v > 1 && streq(s->epilogue, "default")) {
        rk_buf_printf(msg,
                      "vector_size_c = %lld needs epilogue cshuffle (the default epilogue stores one "
                      "element per lane, also with split_k = %lld, sH = %lld, sW = %lld)",
                      s->vector_size_c.v, s->split_k, p->sH, p->sW);
        return 1;
    }
    return 0;
}

static int dgrad_split_k_vector_a(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    if (s->split_k > 1 && s->vector_size_a.set && s->vector_size_a.v > 1) {
        rk_buf_printf(msg,
                      "vector_size_a = %lld has no effect with split_k = %lld "
                      "(split-K loads dY one element at a time); it must be unset or 1",
                      s->vector_size_a.v, s->split_k);
        return 1;
    }
    return 0;
}

/* ---- the tables: (code, layer, check) in table order ---- */

enum rk_layer { RK_SPEC, RK_ARCH, RK_BUILD };

typedef struct rk_rule {
    const char *code;
    int layer;          /* enum rk_layer */
    rk_check check;
} rk_rule;

static const rk_rule rk_wgrad_rules[] = {
    {"WGRAD_UNKNOWN_OPTION", RK_SPEC, fwd_wgrad_unknown_option},
    {"WGRAD_TILE_DIVISIBILITY", RK_SPEC, tile_divisibility},
    {"WGRAD_BLOCK_SIZE", RK_SPEC, block_size_spec},
    {"WGRAD_VEC_C_DEFAULT_EPILOGUE", RK_ARCH, vec_c_default_epilogue},
    {"WGRAD_WAVE_SIZE_MISMATCH", RK_ARCH, wave_size_mismatch},
    {"WGRAD_SPLIT_K_RANGE", RK_SPEC, wgrad_split_k_range},
    {"WGRAD_TWO_STAGE_UNSUPPORTED", RK_SPEC, wgrad_two_stage},
    {"WGRAD_GROUP_MERGE_UNSUPPORTED", RK_SPEC, wgrad_group_merge},
    {"WGRAD_SPLIT_K_ODD_CPG", RK_SPEC, wgrad_split_k_odd_cpg},
    {"WGRAD_SPLIT_K_NEEDS_CSHUFFLE", RK_SPEC, wgrad_split_k_needs_cshuffle},
    {"WGRAD_ASYNC_REQUIRES_KOUTER", RK_SPEC, wgrad_async_requires_kouter},
    {"WGRAD_SPLIT_K_RUNTIME_LOOP", RK_SPEC, wgrad_split_k_runtime_loop},
    {"WGRAD_KOUTER_DTYPE", RK_SPEC, kouter_dtype_ab},
    {"WGRAD_KOUTER_ATOM_EDGE", RK_SPEC, kouter_atom_edge_mn},
    {"WGRAD_KOUTER_WAVE", RK_SPEC, kouter_wave},
    {"WGRAD_KOUTER_WAVE32_ATOM", RK_SPEC, wgrad_kouter_wave32_atom},
    {"WGRAD_KOUTER_EXPLICIT_PAD", RK_SPEC, wgrad_kouter_explicit_pad},
    {"WGRAD_KOUTER_ARCH", RK_ARCH, kouter_arch},
    {"WGRAD_ASYNC_LAYOUT", RK_SPEC, async_layout},
    {"WGRAD_ASYNC_EXPLICIT_VECTOR", RK_ARCH, async_explicit_vector},
    {"WGRAD_VECTOR_RANGE", RK_ARCH, vector_range},
    {"WGRAD_VECTOR_DIVISIBILITY", RK_ARCH, grad_vector_divisibility},
    {"WGRAD_VEC_C_RANGE", RK_ARCH, vec_c_range},
    {"WGRAD_VEC_C_DIVISIBILITY", RK_ARCH, vec_c_divisibility},
    {"WGRAD_VECTOR_POW2", RK_ARCH, vector_pow2},
    {"WGRAD_BASIC_ASYNC", RK_SPEC, basic_async},
    {"WGRAD_UNROLL_EXCLUSIVE", RK_SPEC, unroll_exclusive},
    {"WGRAD_UNROLL_CAP", RK_SPEC, unroll_cap},
    {"WGRAD_MMA_SHAPE", RK_ARCH, mma_shape},
    {"WGRAD_GROUPED_POINTWISE", RK_ARCH, grouped_pointwise},
    {"WGRAD_LDS_BUDGET", RK_ARCH, lds_budget_check},
    {"WGRAD_WMMA_SUBSET", RK_ARCH, fwd_wgrad_wmma_subset},
    {"WGRAD_ACC_CLAMP_ORDER", RK_SPEC, acc_clamp_order},
    {"WGRAD_LDS_XOR_UNSUPPORTED", RK_SPEC, lds_xor_unsupported},
    {"WGRAD_KOUTER_EXPLICIT_LAYOUT", RK_SPEC, wgrad_kouter_explicit_layout},
    {"WGRAD_FIELD_UNUSED", RK_SPEC, field_unused},
    {"CONV_INT32_RANGE", RK_SPEC, int32_range},
    {"CONV_ASYNC_NO_DWORDS", RK_BUILD, async_no_dwords},
    {"CONV_KERNEL_SIZE", RK_BUILD, kernel_size},
    {NULL, 0, NULL},
};

static const rk_rule rk_dgrad_rules[] = {
    {"DGRAD_UNKNOWN_OPTION", RK_SPEC, dgrad_unknown_option},
    {"DGRAD_TILE_DIVISIBILITY", RK_SPEC, tile_divisibility},
    {"DGRAD_BLOCK_SIZE", RK_SPEC, block_size_spec},
    {"DGRAD_ACC_CLAMP_ORDER", RK_SPEC, acc_clamp_order},
    {"DGRAD_SPLIT_K_RANGE", RK_SPEC, dgrad_split_k_range},
    {"DGRAD_SPLIT_K_ODD_CPG", RK_SPEC, dgrad_split_k_odd_cpg},
    {"DGRAD_3D_UNSUPPORTED", RK_SPEC, dgrad_3d},
    {"DGRAD_KOUTER_DTYPE", RK_SPEC, kouter_dtype_b},
    {"DGRAD_KOUTER_ATOM_EDGE", RK_SPEC, kouter_atom_edge_n},
    {"DGRAD_KOUTER_WAVE", RK_SPEC, kouter_wave},
    {"DGRAD_KOUTER_WAVE32_ATOM", RK_SPEC, dgrad_kouter_wave32_atom},
    {"DGRAD_KOUTER_EXPLICIT_LAYOUT", RK_SPEC, dgrad_kouter_explicit_layout},
    {"DGRAD_KOUTER_ASYNC", RK_SPEC, dgrad_kouter_async},
    {"DGRAD_KOUTER_WAVELET", RK_SPEC, dgrad_kouter_wavelet},
    {"DGRAD_ASYNC_LAYOUT", RK_SPEC, async_layout},
    {"DGRAD_ASYNC_PAD", RK_SPEC, async_pad},
    {"DGRAD_ASYNC_UNSUPPORTED", RK_SPEC, dgrad_async_unsupported},
    {"DGRAD_UNROLL_UNSUPPORTED", RK_SPEC, dgrad_unroll_unsupported},
    {"DGRAD_CHIPLET_UNSUPPORTED", RK_SPEC, dgrad_chiplet_unsupported},
    {"DGRAD_WAVELET_UNSUPPORTED", RK_SPEC, dgrad_wavelet_unsupported},
    {"DGRAD_SPLIT_K_CDNA_ONLY", RK_ARCH, dgrad_split_k_cdna_only},
    {"DGRAD_DEPTHWISE_UNSUPPORTED", RK_ARCH, dgrad_depthwise},
    {"DGRAD_VEC_C_DEFAULT_EPILOGUE", RK_ARCH, dgrad_vec_c_default_epilogue},
    {"DGRAD_VEC_C_SCALAR_STORE", RK_ARCH, dgrad_vec_c_scalar_store},
    {"DGRAD_WAVE_SIZE_MISMATCH", RK_ARCH, wave_size_mismatch},
    {"DGRAD_MMA_SHAPE", RK_ARCH, mma_shape},
    {"DGRAD_KOUTER_ARCH", RK_ARCH, kouter_arch},
    {"DGRAD_VECTOR_RANGE", RK_ARCH, vector_range},
    {"DGRAD_VECTOR_DIVISIBILITY", RK_ARCH, grad_vector_divisibility},
    {"DGRAD_VEC_C_RANGE", RK_ARCH, vec_c_range},
    {"DGRAD_VEC_C_DIVISIBILITY", RK_ARCH, vec_c_divisibility},
    {"DGRAD_VECTOR_POW2", RK_ARCH, vector_pow2},
    {"DGRAD_SPLIT_K_VECTOR_A", RK_ARCH, dgrad_split_k_vector_a},
    {"DGRAD_LDS_BUDGET", RK_ARCH, lds_budget_check},
    {"DGRAD_WMMA_SUBSET", RK_ARCH, dgrad_wmma_subset},
    {"DGRAD_LDS_XOR_UNSUPPORTED", RK_SPEC, lds_xor_unsupported},
    {"DGRAD_FIELD_UNUSED", RK_SPEC, dgrad_field_unused},
    {"CONV_INT32_RANGE", RK_SPEC, int32_range},
    {"CONV_KERNEL_SIZE", RK_BUILD, kernel_size},
    {NULL, 0, NULL},
};

static const rk_rule rk_fwd_rules[] = {
    {"FWD_UNKNOWN_OPTION", RK_SPEC, fwd_wgrad_unknown_option},
    {"FWD_TILE_DIVISIBILITY", RK_SPEC, tile_divisibility},
    {"FWD_BLOCK_SIZE", RK_SPEC, block_size_spec},
    {"FWD_VEC_C_DEFAULT_EPILOGUE", RK_ARCH, vec_c_default_epilogue},
    {"FWD_WAVE_SIZE_MISMATCH", RK_ARCH, wave_size_mismatch},
    {"FWD_ASYNC_LAYOUT", RK_SPEC, async_layout},
    {"FWD_ASYNC_PAD", RK_SPEC, async_pad},
    {"FWD_ASYNC_EXPLICIT_VECTOR", RK_ARCH, async_explicit_vector},
    {"FWD_VECTOR_RANGE", RK_ARCH, vector_range},
    {"FWD_VECTOR_DIVISIBILITY", RK_ARCH, fwd_vector_divisibility},
    {"FWD_VEC_C_RANGE", RK_ARCH, vec_c_range},
    {"FWD_VEC_C_DIVISIBILITY", RK_ARCH, vec_c_divisibility},
    {"FWD_VECTOR_POW2", RK_ARCH, vector_pow2},
    {"FWD_BASIC_ASYNC", RK_SPEC, basic_async},
    {"FWD_UNROLL_EXCLUSIVE", RK_SPEC, unroll_exclusive},
    {"FWD_UNROLL_CAP", RK_SPEC, unroll_cap},
    {"FWD_MMA_SHAPE", RK_ARCH, mma_shape},
    {"FWD_LDS_BUDGET", RK_ARCH, lds_budget_check},
    {"FWD_WMMA_SUBSET", RK_ARCH, fwd_wgrad_wmma_subset},
    {"FWD_ACC_CLAMP_ORDER", RK_SPEC, acc_clamp_order},
    {"FWD_LDS_XOR_UNSUPPORTED", RK_SPEC, lds_xor_unsupported},
    {"FWD_FIELD_UNUSED", RK_SPEC, field_unused},
    {"CONV_INT32_RANGE", RK_SPEC, int32_range},
    {"CONV_ASYNC_NO_DWORDS", RK_BUILD, async_no_dwords},
    {"CONV_ASYNC_ARCH_DWORDS", RK_BUILD, async_arch_dwords},
    {"CONV_KERNEL_SIZE", RK_BUILD, kernel_size},
    {NULL, 0, NULL},
};

/* Python's RULES dict, indexed by enum rk_family. */
static const rk_rule *const rk_rules[3] = {rk_fwd_rules, rk_wgrad_rules, rk_dgrad_rules};

int rk_validate(const rk_spec *s, const rk_problem *p, const rk_target *t, rk_arena *arena, rk_error *err)
{
    rk_ctx ctx;
    rk_buf message;
    const rk_rule *rules = rk_rules[s->family];
    int layer, i, status = 0;
    ctx.spec = s, ctx.problem = p, ctx.target = t, ctx.arena = arena;
    rk_buf_init(&message);
    for (layer = RK_SPEC; layer <= RK_BUILD && !status; layer++) {
        for (i = 0; rules[i].code && !status; i++) {
            if (rules[i].layer == layer && rules[i].check(&ctx, &message))
                status = message.failed ? rk_fail_internal(err, "out of memory (validate)")
                                        : rk_fail(err, rules[i].code, "%s", message.data ? message.data : "");
        }
    }
    rk_buf_free(&message);
    return status;
}
