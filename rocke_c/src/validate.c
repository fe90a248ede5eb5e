/* validate.c: the rule tables of the reference (docs/reference/conv-semantics.md §4, §11):
 * spec layer, then arch layer, then build layer, each in table order; the first failing rule
 * gives the reason code and message. The reference rules that no config can reach (an earlier
 * check always fires first) are left out; parity_configs/UNREACHABLE.md gives each one's argument.
 *
 * Twin of rocke_py/engine/validate.py: the same rules, in the same order, with the same
 * messages. Each check appends its message to the buffer and returns 1 when the rule fires,
 * 0 otherwise (Python: the message or None); validate returns the first as the error. */
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

/* The rules whose message is a fixed text: it, when `on`. */
static int fixed(rk_buf *msg, int on, const char *text)
{
    if (on)
        rk_buf_puts(msg, text);
    return on;
}

/* The pipelines each family's spec may name (Python: PIPELINES; fwd shares wgrad's). */
static int unknown_option(const rk_ctx *c, rk_buf *msg)
{
    static const char *const fwd_wgrad[] = {"mem", "compv3", "compv4", "basic", NULL};
    static const char *const dgrad[] = {"mem", "compv3", "compv4", "wavelet", NULL};
    static const char *const epilogues[] = {"default", "cshuffle", NULL};
    const rk_spec *s = c->spec;
    const char *const *pipelines = s->family == RK_FAMILY_DGRAD ? dgrad : fwd_wgrad;
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

/* Python's vec_c_default_epilogue(c, also): `also`, dgrad's other case, with split-K or a stride
 * (DGRAD_VEC_C_SCALAR_STORE). */
static int cshuffle_store(const rk_ctx *c, rk_buf *msg, int also)
{
    const rk_spec *s = c->spec;
    const rk_problem *p = c->problem;
    if (!(s->vector_size_c.set && s->vector_size_c.v > 1 && streq(s->epilogue, "default")))
        return 0;
    rk_buf_printf(msg,
                  "vector_size_c = %lld needs epilogue cshuffle "
                  "(the default epilogue stores one element per lane",
                  s->vector_size_c.v);
    if (also)
        rk_buf_printf(msg, ", also with split_k = %lld, sH = %lld, sW = %lld", s->split_k, p->sH, p->sW);
    rk_buf_puts(msg, ")");
    return 1;
}

static int vec_c_default_epilogue(const rk_ctx *c, rk_buf *msg) { return cshuffle_store(c, msg, 0); }

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

/* What atomic split-K with a 16-bit dtype_d (packed pairs of atomics) needs: when `ok` is not met,
 * the message up to what it needs, which the caller appends. */
static int packed_atomics(const rk_ctx *c, rk_buf *msg, int atomic, int ok)
{
    const rk_spec *s = c->spec;
    if (!atomic || !rk_spec_is_sixteen_bit(s->dtype_d) || ok)
        return 0;
    rk_buf_printf(msg, "split_k = %lld with dtype_d = %s needs ", s->split_k, s->dtype_d);
    return 1;
}

static int split_k_odd_cpg(const rk_ctx *c, rk_buf *msg, int atomic)
{
    long long cpg = rk_cpg(c->problem);
    if (!packed_atomics(c, msg, atomic, rk_floormod(cpg, 2) == 0))
        return 0;
    rk_buf_printf(msg, "an even cpg, not %lld (packed pairs must not cross a channel run)", cpg);
    return 1;
}

/* The operands whose LDS tile lds_k_outer lays out for the transposed read (Python: KOUTER_OPERANDS,
 * conv-semantics §7.5): A and B in wgrad, B alone in dgrad; so whether A is one. */
static int kouter_flips_a(const rk_spec *s) { return s->family == RK_FAMILY_WGRAD; }

/* What lds_k_outer needs of the spec: when it is on and `ok` is not, the message up to the values
 * the spec has, which the caller appends (Python joins them with " and "). */
static int kouter_needs(const rk_ctx *c, rk_buf *msg, int ok, const char *needs)
{
    if (!c->spec->lds_k_outer || ok)
        return 0;
    rk_buf_printf(msg, "lds_k_outer needs %s, not ", needs);
    return 1;
}

static int kouter_dtype(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    int a = kouter_flips_a(s);
    int ok = rk_spec_is_sixteen_bit(s->dtype_b) && (!a || rk_spec_is_sixteen_bit(s->dtype_a));
    const char *needs = a ? "16-bit dtype_a and dtype_b (the transpose read is 16-bit)"
                          : "a 16-bit dtype_b (the transpose read is 16-bit)";
    if (!kouter_needs(c, msg, ok, needs))
        return 0;
    if (a)
        rk_buf_printf(msg, "%s and ", s->dtype_a);
    rk_buf_puts(msg, s->dtype_b);
    return 1;
}

static int kouter_atom_edge(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    int a = kouter_flips_a(s);
    int ok = edge_16_32(s->warp_tile_n) && (!a || edge_16_32(s->warp_tile_m));
    if (!kouter_needs(c, msg, ok, a ? "warp_tile_m and warp_tile_n in {16, 32}" : "warp_tile_n in {16, 32}"))
        return 0;
    if (a)
        rk_buf_printf(msg, "%lld and ", s->warp_tile_m);
    rk_buf_printf(msg, "%lld", s->warp_tile_n);
    return 1;
}

static int kouter_wave(const rk_ctx *c, rk_buf *msg)
{
    long long wave = c->spec->wave_size;
    if (!kouter_needs(c, msg, wave == 64 || wave == 32, "wave_size 64 or 32"))
        return 0;
    rk_buf_printf(msg, "%lld", wave);
    return 1;
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
    const char *arch = c->spec->arch;
    if (!kouter_needs(c, msg, rk_lds_k_outer_arch_wave(arch) != 0, "gfx950 or gfx1250 (a transpose read)"))
        return 0;
    rk_buf_puts(msg, arch);
    return 1;
}

static int kouter_explicit_layout(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    if (s->lds_k_outer && rk_has_lds_layout(s)) {
        rk_buf_printf(msg, "lds_k_outer fixes the %s tile layout; lds_layout_pad and lds_layout_xor must be unset",
                      kouter_flips_a(s) ? "A and B" : "B");
        return 1;
    }
    return 0;
}

/* The explicit LDS layout, as the messages name it. */
static void lds_layout(rk_buf *msg, const rk_spec *s)
{
    rk_buf_printf(msg, "lds_layout_pad = %lld, lds_layout_xor = %lld", s->lds_layout_pad.v, s->lds_layout_xor);
}

static int async_layout(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    int packed = s->lds_layout_pad.v == 0 && s->lds_layout_xor == 0;
    if (!s->async_dma || !rk_has_lds_layout(s) || packed)
        return 0;
    rk_buf_puts(msg, "async_dma needs a packed, unswizzled LDS layout, not ");
    lds_layout(msg, s);
    return 1;
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
    return fixed(msg, s->async_dma && (s->vector_size_a.set || s->vector_size_b.set),
                 "async_dma derives its own load width; vector_size_a and vector_size_b must be unset");
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

/* The run vector_size_a must divide is kpg in dgrad and wgrad, cpg in fwd. */
static int vector_divisibility(const rk_ctx *c, rk_buf *msg)
{
    const rk_spec *s = c->spec;
    long long cpg = rk_cpg(c->problem);
    int fwd = s->family == RK_FAMILY_FWD;
    const char *a_key = fwd ? "cpg" : "kpg";
    long long a_run = fwd ? cpg : rk_kpg(c->problem);
    if (s->vector_size_a.set && rk_floormod(a_run, s->vector_size_a.v) != 0) {
        rk_buf_printf(msg, "vector_size_a = %lld does not divide %s = %lld", s->vector_size_a.v, a_key, a_run);
        return 1;
    }
    if (s->vector_size_b.set && rk_floormod(cpg, s->vector_size_b.v) != 0) {
        rk_buf_printf(msg, "vector_size_b = %lld does not divide cpg = %lld", s->vector_size_b.v, cpg);
        return 1;
    }
    return 0;
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
    return fixed(msg, streq(c->spec->pipeline, "basic") && c->spec->async_dma,
                 "pipeline basic and async_dma both own the K loop");
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
        rk_buf_printf(msg, "lds_k_pad = %lld has no effect with an explicit LDS layout (", s->lds_k_pad.v);
        lds_layout(msg, s);
        rk_buf_puts(msg, " beats it)");
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

/* With async_dma, the tiles it loads and the dwords per lane that move each (0: none fits);
 * returns how many (Python: the list's length), none without async_dma. */
static int async_dwords(const rk_ctx *c, rk_async_tile tiles[2], long long dwords[2])
{
    int i;
    if (!c->spec->async_dma)
        return 0;
    rk_async_tiles(c->spec, c->problem, tiles);
    for (i = 0; i < 2; i++)
        dwords[i] = rk_tile_dwords(c->spec, &tiles[i]);
    return 2;
}

static void tile_facts(rk_buf *msg, const rk_spec *s, const rk_async_tile *tile)
{
    rk_buf_printf(msg, "(rows = %lld, cols = %lld, block_size = %lld, elem_bytes = %lld, contig_cols = %lld)",
                  tile->rows, tile->cols, rk_block_size(s), tile->elem_bytes, tile->contig_cols);
}

static int async_no_dwords(const rk_ctx *c, rk_buf *msg)
{
    rk_async_tile tiles[2];
    long long dwords[2];
    int i, n = async_dwords(c, tiles, dwords);
    for (i = 0; i < n; i++)
        if (dwords[i] == 0) {
            rk_buf_printf(msg, "no dwords in 4, 3, 1 fits the %s tile ", tiles[i].operand);
            tile_facts(msg, c->spec, &tiles[i]);
            return 1;
        }
    return 0;
}

static int async_arch_dwords(const rk_ctx *c, rk_buf *msg)
{
    const rk_target *t = c->target;
    rk_async_tile tiles[2];
    long long dwords[2];
    int i, n = async_dwords(c, tiles, dwords);
    for (i = 0; i < n; i++)
        if (dwords[i] != 0 && dwords[i] > t->async_lds_dwords) {
            rk_buf_printf(msg,
                          "async_dma on %s loads at most %lld bytes per lane to LDS, but the %s tile would move %lld ",
                          t->arch, 4 * t->async_lds_dwords, tiles[i].operand, 4 * dwords[i]);
            tile_facts(msg, c->spec, &tiles[i]);
            return 1;
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
    if (!packed_atomics(c, msg, rk_atomic_split_k(s), !streq(s->epilogue, "default")))
        return 0;
    rk_buf_puts(msg, "epilogue cshuffle (packed 16-bit atomics)");
    return 1;
}

static int wgrad_async_requires_kouter(const rk_ctx *c, rk_buf *msg)
{
    return fixed(msg, c->spec->async_dma && !c->spec->lds_k_outer,
                 "async_dma needs lds_k_outer (on the M-outer tile a chunk would run along K)");
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

static int dgrad_split_k_range(const rk_ctx *c, rk_buf *msg)
{
    if (c->spec->split_k < -1 || c->spec->split_k == 0) {
        rk_buf_printf(msg, "split_k = %lld is not allowed (allowed: -1 auto, 1, > 1)", c->spec->split_k);
        return 1;
    }
    return 0;
}

static int dgrad_split_k_odd_cpg(const rk_ctx *c, rk_buf *msg) { return split_k_odd_cpg(c, msg, c->spec->split_k > 1); }

static int dgrad_3d(const rk_ctx *c, rk_buf *msg)
{
    return fixed(msg, c->problem->has_3d, "dgrad does not support 3-D problems");
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
    return cshuffle_store(c, msg, 1);
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

/* ---- the table: (family, code, layer, check), each family's rows in its table order ---- */

enum rk_layer { RK_SPEC, RK_ARCH, RK_BUILD };

typedef struct rk_rule {
    int family;         /* enum rk_family */
    const char *code;
    int layer;          /* enum rk_layer */
    rk_check check;
} rk_rule;

static const rk_rule rk_rules[] = {
    {RK_FAMILY_WGRAD, "WGRAD_UNKNOWN_OPTION", RK_SPEC, unknown_option},
    {RK_FAMILY_WGRAD, "WGRAD_TILE_DIVISIBILITY", RK_SPEC, tile_divisibility},
    {RK_FAMILY_WGRAD, "WGRAD_BLOCK_SIZE", RK_SPEC, block_size_spec},
    {RK_FAMILY_WGRAD, "WGRAD_VEC_C_DEFAULT_EPILOGUE", RK_ARCH, vec_c_default_epilogue},
    {RK_FAMILY_WGRAD, "WGRAD_WAVE_SIZE_MISMATCH", RK_ARCH, wave_size_mismatch},
    {RK_FAMILY_WGRAD, "WGRAD_SPLIT_K_RANGE", RK_SPEC, wgrad_split_k_range},
    {RK_FAMILY_WGRAD, "WGRAD_TWO_STAGE_UNSUPPORTED", RK_SPEC, wgrad_two_stage},
    {RK_FAMILY_WGRAD, "WGRAD_GROUP_MERGE_UNSUPPORTED", RK_SPEC, wgrad_group_merge},
    {RK_FAMILY_WGRAD, "WGRAD_SPLIT_K_ODD_CPG", RK_SPEC, wgrad_split_k_odd_cpg},
    {RK_FAMILY_WGRAD, "WGRAD_SPLIT_K_NEEDS_CSHUFFLE", RK_SPEC, wgrad_split_k_needs_cshuffle},
    {RK_FAMILY_WGRAD, "WGRAD_ASYNC_REQUIRES_KOUTER", RK_SPEC, wgrad_async_requires_kouter},
    {RK_FAMILY_WGRAD, "WGRAD_SPLIT_K_RUNTIME_LOOP", RK_SPEC, wgrad_split_k_runtime_loop},
    {RK_FAMILY_WGRAD, "WGRAD_KOUTER_DTYPE", RK_SPEC, kouter_dtype},
    {RK_FAMILY_WGRAD, "WGRAD_KOUTER_ATOM_EDGE", RK_SPEC, kouter_atom_edge},
    {RK_FAMILY_WGRAD, "WGRAD_KOUTER_WAVE", RK_SPEC, kouter_wave},
    {RK_FAMILY_WGRAD, "WGRAD_KOUTER_WAVE32_ATOM", RK_SPEC, wgrad_kouter_wave32_atom},
    {RK_FAMILY_WGRAD, "WGRAD_KOUTER_EXPLICIT_PAD", RK_SPEC, wgrad_kouter_explicit_pad},
    {RK_FAMILY_WGRAD, "WGRAD_KOUTER_ARCH", RK_ARCH, kouter_arch},
    {RK_FAMILY_WGRAD, "WGRAD_ASYNC_LAYOUT", RK_SPEC, async_layout},
    {RK_FAMILY_WGRAD, "WGRAD_ASYNC_EXPLICIT_VECTOR", RK_ARCH, async_explicit_vector},
    {RK_FAMILY_WGRAD, "WGRAD_VECTOR_RANGE", RK_ARCH, vector_range},
    {RK_FAMILY_WGRAD, "WGRAD_VECTOR_DIVISIBILITY", RK_ARCH, vector_divisibility},
    {RK_FAMILY_WGRAD, "WGRAD_VEC_C_RANGE", RK_ARCH, vec_c_range},
    {RK_FAMILY_WGRAD, "WGRAD_VEC_C_DIVISIBILITY", RK_ARCH, vec_c_divisibility},
    {RK_FAMILY_WGRAD, "WGRAD_VECTOR_POW2", RK_ARCH, vector_pow2},
    {RK_FAMILY_WGRAD, "WGRAD_BASIC_ASYNC", RK_SPEC, basic_async},
    {RK_FAMILY_WGRAD, "WGRAD_UNROLL_EXCLUSIVE", RK_SPEC, unroll_exclusive},
    {RK_FAMILY_WGRAD, "WGRAD_UNROLL_CAP", RK_SPEC, unroll_cap},
    {RK_FAMILY_WGRAD, "WGRAD_MMA_SHAPE", RK_ARCH, mma_shape},
    {RK_FAMILY_WGRAD, "WGRAD_GROUPED_POINTWISE", RK_ARCH, grouped_pointwise},
    {RK_FAMILY_WGRAD, "WGRAD_LDS_BUDGET", RK_ARCH, lds_budget_check},
    {RK_FAMILY_WGRAD, "WGRAD_WMMA_SUBSET", RK_ARCH, fwd_wgrad_wmma_subset},
    {RK_FAMILY_WGRAD, "WGRAD_ACC_CLAMP_ORDER", RK_SPEC, acc_clamp_order},
    {RK_FAMILY_WGRAD, "WGRAD_LDS_XOR_UNSUPPORTED", RK_SPEC, lds_xor_unsupported},
    {RK_FAMILY_WGRAD, "WGRAD_KOUTER_EXPLICIT_LAYOUT", RK_SPEC, kouter_explicit_layout},
    {RK_FAMILY_WGRAD, "WGRAD_FIELD_UNUSED", RK_SPEC, field_unused},
    {RK_FAMILY_WGRAD, "CONV_INT32_RANGE", RK_SPEC, int32_range},
    {RK_FAMILY_WGRAD, "CONV_ASYNC_NO_DWORDS", RK_BUILD, async_no_dwords},
    {RK_FAMILY_WGRAD, "CONV_KERNEL_SIZE", RK_BUILD, kernel_size},
    {RK_FAMILY_DGRAD, "DGRAD_UNKNOWN_OPTION", RK_SPEC, unknown_option},
    {RK_FAMILY_DGRAD, "DGRAD_TILE_DIVISIBILITY", RK_SPEC, tile_divisibility},
    {RK_FAMILY_DGRAD, "DGRAD_BLOCK_SIZE", RK_SPEC, block_size_spec},
    {RK_FAMILY_DGRAD, "DGRAD_ACC_CLAMP_ORDER", RK_SPEC, acc_clamp_order},
    {RK_FAMILY_DGRAD, "DGRAD_SPLIT_K_RANGE", RK_SPEC, dgrad_split_k_range},
    {RK_FAMILY_DGRAD, "DGRAD_SPLIT_K_ODD_CPG", RK_SPEC, dgrad_split_k_odd_cpg},
    {RK_FAMILY_DGRAD, "DGRAD_3D_UNSUPPORTED", RK_SPEC, dgrad_3d},
    {RK_FAMILY_DGRAD, "DGRAD_KOUTER_DTYPE", RK_SPEC, kouter_dtype},
    {RK_FAMILY_DGRAD, "DGRAD_KOUTER_ATOM_EDGE", RK_SPEC, kouter_atom_edge},
    {RK_FAMILY_DGRAD, "DGRAD_KOUTER_WAVE", RK_SPEC, kouter_wave},
    {RK_FAMILY_DGRAD, "DGRAD_KOUTER_WAVE32_ATOM", RK_SPEC, dgrad_kouter_wave32_atom},
    {RK_FAMILY_DGRAD, "DGRAD_KOUTER_EXPLICIT_LAYOUT", RK_SPEC, kouter_explicit_layout},
    {RK_FAMILY_DGRAD, "DGRAD_KOUTER_ASYNC", RK_SPEC, dgrad_kouter_async},
    {RK_FAMILY_DGRAD, "DGRAD_KOUTER_WAVELET", RK_SPEC, dgrad_kouter_wavelet},
    {RK_FAMILY_DGRAD, "DGRAD_ASYNC_LAYOUT", RK_SPEC, async_layout},
    {RK_FAMILY_DGRAD, "DGRAD_ASYNC_PAD", RK_SPEC, async_pad},
    {RK_FAMILY_DGRAD, "DGRAD_ASYNC_UNSUPPORTED", RK_SPEC, dgrad_async_unsupported},
    {RK_FAMILY_DGRAD, "DGRAD_UNROLL_UNSUPPORTED", RK_SPEC, dgrad_unroll_unsupported},
    {RK_FAMILY_DGRAD, "DGRAD_CHIPLET_UNSUPPORTED", RK_SPEC, dgrad_chiplet_unsupported},
    {RK_FAMILY_DGRAD, "DGRAD_WAVELET_UNSUPPORTED", RK_SPEC, dgrad_wavelet_unsupported},
    {RK_FAMILY_DGRAD, "DGRAD_SPLIT_K_CDNA_ONLY", RK_ARCH, dgrad_split_k_cdna_only},
    {RK_FAMILY_DGRAD, "DGRAD_DEPTHWISE_UNSUPPORTED", RK_ARCH, dgrad_depthwise},
    {RK_FAMILY_DGRAD, "DGRAD_VEC_C_DEFAULT_EPILOGUE", RK_ARCH, dgrad_vec_c_default_epilogue},
    {RK_FAMILY_DGRAD, "DGRAD_VEC_C_SCALAR_STORE", RK_ARCH, dgrad_vec_c_scalar_store},
    {RK_FAMILY_DGRAD, "DGRAD_WAVE_SIZE_MISMATCH", RK_ARCH, wave_size_mismatch},
    {RK_FAMILY_DGRAD, "DGRAD_MMA_SHAPE", RK_ARCH, mma_shape},
    {RK_FAMILY_DGRAD, "DGRAD_KOUTER_ARCH", RK_ARCH, kouter_arch},
    {RK_FAMILY_DGRAD, "DGRAD_VECTOR_RANGE", RK_ARCH, vector_range},
    {RK_FAMILY_DGRAD, "DGRAD_VECTOR_DIVISIBILITY", RK_ARCH, vector_divisibility},
    {RK_FAMILY_DGRAD, "DGRAD_VEC_C_RANGE", RK_ARCH, vec_c_range},
    {RK_FAMILY_DGRAD, "DGRAD_VEC_C_DIVISIBILITY", RK_ARCH, vec_c_divisibility},
    {RK_FAMILY_DGRAD, "DGRAD_VECTOR_POW2", RK_ARCH, vector_pow2},
    {RK_FAMILY_DGRAD, "DGRAD_SPLIT_K_VECTOR_A", RK_ARCH, dgrad_split_k_vector_a},
    {RK_FAMILY_DGRAD, "DGRAD_LDS_BUDGET", RK_ARCH, lds_budget_check},
    {RK_FAMILY_DGRAD, "DGRAD_WMMA_SUBSET", RK_ARCH, dgrad_wmma_subset},
    {RK_FAMILY_DGRAD, "DGRAD_LDS_XOR_UNSUPPORTED", RK_SPEC, lds_xor_unsupported},
    {RK_FAMILY_DGRAD, "DGRAD_FIELD_UNUSED", RK_SPEC, dgrad_field_unused},
    {RK_FAMILY_DGRAD, "CONV_INT32_RANGE", RK_SPEC, int32_range},
    {RK_FAMILY_DGRAD, "CONV_KERNEL_SIZE", RK_BUILD, kernel_size},
    {RK_FAMILY_FWD, "FWD_UNKNOWN_OPTION", RK_SPEC, unknown_option},
    {RK_FAMILY_FWD, "FWD_TILE_DIVISIBILITY", RK_SPEC, tile_divisibility},
    {RK_FAMILY_FWD, "FWD_BLOCK_SIZE", RK_SPEC, block_size_spec},
    {RK_FAMILY_FWD, "FWD_VEC_C_DEFAULT_EPILOGUE", RK_ARCH, vec_c_default_epilogue},
    {RK_FAMILY_FWD, "FWD_WAVE_SIZE_MISMATCH", RK_ARCH, wave_size_mismatch},
    {RK_FAMILY_FWD, "FWD_ASYNC_LAYOUT", RK_SPEC, async_layout},
    {RK_FAMILY_FWD, "FWD_ASYNC_PAD", RK_SPEC, async_pad},
    {RK_FAMILY_FWD, "FWD_ASYNC_EXPLICIT_VECTOR", RK_ARCH, async_explicit_vector},
    {RK_FAMILY_FWD, "FWD_VECTOR_RANGE", RK_ARCH, vector_range},
    {RK_FAMILY_FWD, "FWD_VECTOR_DIVISIBILITY", RK_ARCH, vector_divisibility},
    {RK_FAMILY_FWD, "FWD_VEC_C_RANGE", RK_ARCH, vec_c_range},
    {RK_FAMILY_FWD, "FWD_VEC_C_DIVISIBILITY", RK_ARCH, vec_c_divisibility},
    {RK_FAMILY_FWD, "FWD_VECTOR_POW2", RK_ARCH, vector_pow2},
    {RK_FAMILY_FWD, "FWD_BASIC_ASYNC", RK_SPEC, basic_async},
    {RK_FAMILY_FWD, "FWD_UNROLL_EXCLUSIVE", RK_SPEC, unroll_exclusive},
    {RK_FAMILY_FWD, "FWD_UNROLL_CAP", RK_SPEC, unroll_cap},
    {RK_FAMILY_FWD, "FWD_MMA_SHAPE", RK_ARCH, mma_shape},
    {RK_FAMILY_FWD, "FWD_LDS_BUDGET", RK_ARCH, lds_budget_check},
    {RK_FAMILY_FWD, "FWD_WMMA_SUBSET", RK_ARCH, fwd_wgrad_wmma_subset},
    {RK_FAMILY_FWD, "FWD_ACC_CLAMP_ORDER", RK_SPEC, acc_clamp_order},
    {RK_FAMILY_FWD, "FWD_LDS_XOR_UNSUPPORTED", RK_SPEC, lds_xor_unsupported},
    {RK_FAMILY_FWD, "FWD_FIELD_UNUSED", RK_SPEC, field_unused},
    {RK_FAMILY_FWD, "CONV_INT32_RANGE", RK_SPEC, int32_range},
    {RK_FAMILY_FWD, "CONV_ASYNC_NO_DWORDS", RK_BUILD, async_no_dwords},
    {RK_FAMILY_FWD, "CONV_ASYNC_ARCH_DWORDS", RK_BUILD, async_arch_dwords},
    {RK_FAMILY_FWD, "CONV_KERNEL_SIZE", RK_BUILD, kernel_size},
    {0, NULL, 0, NULL},
};

int rk_validate(const rk_spec *s, const rk_problem *p, const rk_target *t, rk_arena *arena, rk_error *err)
{
    rk_ctx ctx;
    rk_buf message;
    int layer, i, status = 0;
    ctx.spec = s, ctx.problem = p, ctx.target = t, ctx.arena = arena;
    rk_buf_init(&message);
    for (layer = RK_SPEC; layer <= RK_BUILD && !status; layer++) {
        for (i = 0; rk_rules[i].code && !status; i++) {
            if (rk_rules[i].family == s->family && rk_rules[i].layer == layer && rk_rules[i].check(&ctx, &message))
                status = message.failed ? rk_fail_internal(err, "out of memory (validate)")
                                        : rk_fail(err, rk_rules[i].code, "%s", message.data ? message.data : "");
        }
    }
    rk_buf_free(&message);
    return status;
}
