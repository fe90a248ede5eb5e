/* spec.c: the conv spec: defaults, data types, deductions, and what follows from a spec
 * (vector sizes, LDS layout and budget, async chunking, kernel name).
 *
 * Twin of rocke_py/engine/spec.py, function for function in the same order
 * (docs/reference/conv-semantics.md §1.3, §1.4, §3, §5, §6, §8, §9, §10). Strings in an
 * rk_spec point at static literals or at the config's arena strings, so a spec is a plain
 * value. */
#include <stdio.h>
#include <string.h>
#include "internal.h"

static int streq(const char *a, const char *b) { return strcmp(a, b) == 0; }

/* ---- ConvSpec properties ---- */

long long rk_block_size(const rk_spec *s) { return s->warp_m * s->warp_n * s->wave_size; }

int rk_has_lds_layout(const rk_spec *s) { return s->lds_layout_pad.set; }

int rk_atomic_split_k(const rk_spec *s) { return s->split_k == 0 || s->split_k > 1; }

int rk_double_buffer(const rk_spec *s) { return s->async_dma || (s->unroll_k && !streq(s->pipeline, "compv4")); }

/* ---- data types (conv-semantics §1.3) ---- */

/* Python: `dtype in SIXTEEN_BIT`. */
int rk_spec_is_sixteen_bit(const char *dtype) { return streq(dtype, "fp16") || streq(dtype, "bf16"); }

const char *rk_normalise_dtype(const char *name) { return streq(name, "f16") ? "fp16" : name; }

/* Echo a user string (a dtype, a pipeline, an epilogue) only when it is 1-16 ASCII letters,
 * digits or '_' (no control bytes or long values in a message). Python counts characters, but
 * an echoed value is ASCII, so counting bytes gives the same verdict. */
int rk_echo_word(const char *value)
{
    size_t i, n = strlen(value);
    if (n < 1 || n > 16)
        return 0;
    for (i = 0; i < n; i++) {
        char c = value[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
            return 0;
    }
    return 1;
}

static const char *get_str(const rk_fields *fields, int key, const char *fallback)
{
    return fields->f[key].set ? fields->f[key].value.s : fallback;
}

int rk_check_dtypes(const rk_fields *fields, rk_error *err)
{
    static const int keys[3] = {RK_KEY_DTYPE_A, RK_KEY_DTYPE_B, RK_KEY_DTYPE_D};
    static const char *const names[3] = {"dtype_a", "dtype_b", "dtype_d"};
    int i;
    for (i = 0; i < 3; i++) {
        const char *value = get_str(fields, keys[i], "fp16");
        if (streq(value, "fp16") || streq(value, "f16") || streq(value, "bf16") || streq(value, "fp32"))
            continue;
        if (rk_echo_word(value))
            return rk_fail(err, "CONV_DTYPE_UNSUPPORTED", "%s = '%s' is not fp16, f16, bf16 or fp32", names[i], value);
        return rk_fail(err, "CONV_DTYPE_UNSUPPORTED", "%s is not fp16, f16, bf16 or fp32", names[i]);
    }
    return 0;
}

/* ---- defaults (conv-semantics §3.1, §11) ---- */

static long long get_int(const rk_fields *fields, int key, long long fallback)
{
    return fields->f[key].set ? fields->f[key].value.i : fallback;
}

static rk_opt get_opt(const rk_fields *fields, int key)
{
    rk_opt o;
    o.set = fields->f[key].set;
    o.v = o.set ? fields->f[key].value.i : 0;
    return o;
}

/* Ints and bools share rk_value.i (bools are 0/1). */
static int get_bool(const rk_fields *fields, int key) { return fields->f[key].set ? fields->f[key].value.i != 0 : 0; }

static const char *const rk_family_names[3] = {"fwd", "wgrad", "dgrad"}; /* enum rk_family */
static const char *const rk_default_names[3] = {"conv_igemm_fwd", "conv_igemm_wgrad", "conv_igemm_dgrad"};

/* The tri-state lds_k_outer: a bool, or the string "auto" (the schema allows no other). */
static void set_lds_k_outer(const rk_fields *fields, rk_spec *s)
{
    const rk_field *f = &fields->f[RK_KEY_LDS_K_OUTER];
    int is_auto = f->set && f->value.kind == RK_VALUE_STR;
    int is_true = f->set && f->value.kind == RK_VALUE_BOOL && f->value.i != 0;
    s->lds_k_outer = is_true;
    s->lds_k_outer_requested = is_auto ? "auto" : (is_true ? "true" : "false");
}

static void set_layout(const rk_fields *fields, rk_spec *s)
{
    int layout_set = fields->f[RK_KEY_LDS_LAYOUT_PAD].set || fields->f[RK_KEY_LDS_LAYOUT_XOR].set;
    s->lds_k_pad = get_opt(fields, RK_KEY_LDS_K_PAD);
    s->lds_layout_pad.set = layout_set;
    s->lds_layout_pad.v = layout_set ? get_int(fields, RK_KEY_LDS_LAYOUT_PAD, 0) : 0;
    s->lds_layout_xor = get_int(fields, RK_KEY_LDS_LAYOUT_XOR, 0);
}

/* fields: the schema-checked [spec] keys of this family. */
void rk_build_spec(int family, const char *arch, const rk_fields *fields, rk_spec *out)
{
    rk_spec *s = out;
    memset(s, 0, sizeof *s);
    s->family = family, s->family_name = rk_family_names[family], s->arch = arch;
    s->name = get_str(fields, RK_KEY_NAME, rk_default_names[family]);
    s->dtype_a = rk_normalise_dtype(get_str(fields, RK_KEY_DTYPE_A, "fp16"));
    s->dtype_b = rk_normalise_dtype(get_str(fields, RK_KEY_DTYPE_B, "fp16"));
    s->dtype_d = rk_normalise_dtype(get_str(fields, RK_KEY_DTYPE_D, "fp16"));
    s->tile_m = get_int(fields, RK_KEY_TILE_M, 64);
    s->tile_n = get_int(fields, RK_KEY_TILE_N, 64);
    s->tile_k = get_int(fields, RK_KEY_TILE_K, family == RK_FAMILY_FWD ? 128 : 64);
    s->warp_m = get_int(fields, RK_KEY_WARP_M, 2);
    s->warp_n = get_int(fields, RK_KEY_WARP_N, 2);
    s->warp_tile_m = get_int(fields, RK_KEY_WARP_TILE_M, 32);
    s->warp_tile_n = get_int(fields, RK_KEY_WARP_TILE_N, 32);
    s->warp_tile_k = get_int(fields, RK_KEY_WARP_TILE_K, 16);
    s->wave_size = get_int(fields, RK_KEY_WAVE_SIZE, 64);
    s->pipeline = get_str(fields, RK_KEY_PIPELINE, "mem");
    s->epilogue = get_str(fields, RK_KEY_EPILOGUE, "default");
    s->async_dma = get_bool(fields, RK_KEY_ASYNC_DMA);
    s->unroll_k = get_bool(fields, RK_KEY_UNROLL_K);
    set_layout(fields, s);
    s->vector_size_a = get_opt(fields, RK_KEY_VECTOR_SIZE_A);
    s->vector_size_b = get_opt(fields, RK_KEY_VECTOR_SIZE_B);
    s->vector_size_c = get_opt(fields, RK_KEY_VECTOR_SIZE_C);
    s->chiplet_swizzle = get_bool(fields, RK_KEY_CHIPLET_SWIZZLE);
    s->chiplet_wgm = get_int(fields, RK_KEY_CHIPLET_WGM, 8);
    s->chiplet_num_xcds = get_int(fields, RK_KEY_CHIPLET_NUM_XCDS, 8);
    s->chiplet_chunk_size = get_int(fields, RK_KEY_CHIPLET_CHUNK_SIZE, 64);
    s->waves_per_eu = get_opt(fields, RK_KEY_WAVES_PER_EU);
    s->bias = get_int(fields, RK_KEY_BIAS, 0);
    s->scale = get_int(fields, RK_KEY_SCALE, 1);
    s->relu = get_bool(fields, RK_KEY_RELU);
    s->clamp_min = get_opt(fields, RK_KEY_CLAMP_MIN);
    s->clamp_max = get_opt(fields, RK_KEY_CLAMP_MAX);
    set_lds_k_outer(fields, s);
    s->split_k = get_int(fields, RK_KEY_SPLIT_K, 1);
    s->split_k_requested = s->split_k;
    s->two_stage = get_bool(fields, RK_KEY_TWO_STAGE);
    s->force_deterministic = get_bool(fields, RK_KEY_FORCE_DETERMINISTIC);
    s->group_merge = get_int(fields, RK_KEY_GROUP_MERGE, 1);
    s->num_load_waves = get_int(fields, RK_KEY_NUM_LOAD_WAVES, 4);
    s->cshuffle_no_alias = get_bool(fields, RK_KEY_CSHUFFLE_NO_ALIAS);
}

/* ---- GEMM of the spec's direction ---- */

void rk_spec_gemm(const rk_spec *s, const rk_problem *p, long long out[3])
{
    if (s->family == RK_FAMILY_WGRAD)
        rk_wgrad_gemm(p, out);
    else if (s->family == RK_FAMILY_DGRAD)
        rk_dgrad_gemm(p, out);
    else
        rk_fwd_gemm(p, out);
}

/* ---- deductions (conv-semantics §4.1 step 2, §5, §10) ---- */

/* The CK formula of conv-semantics §10.1; wgrad only (dgrad's auto resolves to 1). */
long long rk_auto_split_k(const rk_spec *s, const rk_problem *p, const rk_target *t)
{
    long long wg[3], base_grid, split;
    rk_wgrad_gemm(p, wg);
    base_grid = rk_ceildiv(wg[0], s->tile_m) * rk_ceildiv(wg[1], s->tile_n);
    split = rk_floordiv(2 * t->num_cus, base_grid);
    if (split > wg[2])
        split = wg[2];
    return split > 1 ? split : 1;
}

static int edge_16_32(long long edge) { return edge == 16 || edge == 32; }

int rk_default_lds_k_outer_wgrad(const char *arch, const char *dtype_a, const char *dtype_b, long long warp_tile_m,
                                 long long warp_tile_n, long long wave_size)
{
    /* Python compares dict.get(arch) (None when absent) with wave_size; 0 never matches a
     * schema-checked wave size (>= 1). */
    if (rk_lds_k_outer_arch_wave(arch) != wave_size)
        return 0;
    if (!rk_spec_is_sixteen_bit(dtype_a) || !rk_spec_is_sixteen_bit(dtype_b))
        return 0;
    if (wave_size == 32)
        return warp_tile_m == 16 && warp_tile_n == 16;
    return edge_16_32(warp_tile_m) && edge_16_32(warp_tile_n);
}

int rk_default_lds_k_outer_dgrad(const char *arch, const char *dtype_b, long long warp_tile_n, long long cpg,
                                 long long wave_size, const char *pipeline)
{
    int edge_ok;
    if (rk_lds_k_outer_arch_wave(arch) != wave_size)
        return 0;
    if (streq(pipeline, "wavelet") || !rk_spec_is_sixteen_bit(dtype_b))
        return 0;
    if (wave_size == 32)
        edge_ok = warp_tile_n == 16;
    else
        edge_ok = edge_16_32(warp_tile_n);
    return edge_ok && rk_floormod(cpg, 2) == 0;
}

rk_spec rk_deduce(const rk_spec *spec, const rk_problem *p, const rk_target *t)
{
    rk_spec s = *spec;
    long long split_k;
    int outer;
    if (s.family == RK_FAMILY_FWD)
        return s;
    split_k = s.split_k;
    if (split_k == -1)
        split_k = s.family == RK_FAMILY_WGRAD ? rk_auto_split_k(&s, p, t) : 1;
    outer = s.lds_k_outer;
    if (streq(s.lds_k_outer_requested, "auto")) {
        if (s.family == RK_FAMILY_WGRAD)
            outer = rk_default_lds_k_outer_wgrad(s.arch, s.dtype_a, s.dtype_b, s.warp_tile_m, s.warp_tile_n,
                                                 s.wave_size);
        else
            outer = rk_default_lds_k_outer_dgrad(s.arch, s.dtype_b, s.warp_tile_n, rk_cpg(p), s.wave_size, s.pipeline);
    }
    s.two_stage = s.two_stage || (s.force_deterministic && split_k > 1);
    s.split_k = split_k;
    s.lds_k_outer = outer;
    return s;
}

/* ---- vector sizes (conv-semantics §3.3, §11) ---- */

long long rk_widest_vector(long long n, const char *dtype)
{
    static const long long wide[4] = {8, 4, 2, 1}, narrow[3] = {4, 2, 1};
    const long long *widths = streq(dtype, "fp32") ? narrow : wide;
    int i, count = streq(dtype, "fp32") ? 3 : 4;
    for (i = 0; i < count; i++)
        if (rk_floormod(n, widths[i]) == 0)
            return widths[i];
    return 1;
}

void rk_default_vector_sizes(const rk_spec *s, const rk_problem *p, long long out[3])
{
    long long cpg = rk_cpg(p), kpg = rk_kpg(p);
    if (s->family == RK_FAMILY_WGRAD) {
        out[2] = s->split_k == 1 ? rk_widest_vector(cpg, s->dtype_d) : 1;
        out[0] = rk_widest_vector(kpg, s->dtype_a);
        out[1] = rk_widest_vector(cpg, s->dtype_a);
        return;
    }
    if (s->family == RK_FAMILY_DGRAD) {
        out[0] = rk_widest_vector(kpg, s->dtype_a);
        out[1] = rk_widest_vector(cpg, s->dtype_a);
        out[2] = rk_widest_vector(cpg, s->dtype_a);
        return;
    }
    out[0] = rk_widest_vector(cpg, s->dtype_a);
    out[1] = rk_widest_vector(cpg, s->dtype_a);
    out[2] = rk_widest_vector(kpg, s->dtype_a);
}

/* The widest vector_size_a/_b (conv-semantics §4.3 WGRAD_VECTOR_RANGE): the dtype_a ladder's top. */
void rk_load_widths(const rk_spec *s, const rk_problem *p, long long out[3])
{
    rk_default_vector_sizes(s, p, out);
    if (s->family == RK_FAMILY_WGRAD) {
        out[2] = rk_widest_vector(rk_cpg(p), s->dtype_d); /* split_k = 1 widths */
    } else {
        long long widest = rk_floordiv(16, rk_spec_elem_bytes(s->dtype_d));
        if (widest < out[2])
            out[2] = widest; /* one D store: at most 16 bytes */
    }
    if (s->vector_size_a.set && s->vector_size_a.v < out[0])
        out[0] = s->vector_size_a.v;
    if (s->vector_size_b.set && s->vector_size_b.v < out[1])
        out[1] = s->vector_size_b.v;
    if (s->vector_size_c.set && s->vector_size_c.v < out[2])
        out[2] = s->vector_size_c.v;
    if (s->family == RK_FAMILY_DGRAD && s->split_k > 1)
        out[0] = 1;
}

long long rk_vector_cap(const rk_spec *s) { return streq(s->dtype_a, "fp32") ? 4 : 8; }

/* The widest vector_size_c: the top of the ladder the cshuffle store width comes from (wgrad:
 * dtype_d's; fwd, dgrad: dtype_a's, and at most 16 bytes of dtype_d; docs/kernels.md §5). */
long long rk_vec_c_cap(const rk_spec *s)
{
    long long cap, bytes;
    if (s->family == RK_FAMILY_WGRAD)
        return streq(s->dtype_d, "fp32") ? 4 : 8;
    cap = rk_vector_cap(s);
    bytes = 16 / rk_spec_elem_bytes(s->dtype_d);
    return cap < bytes ? cap : bytes;
}

const char *rk_vec_c_run(const rk_spec *s, const rk_problem *p, long long *run)
{
    if (s->family == RK_FAMILY_FWD) {
        *run = rk_kpg(p);
        return "kpg";
    }
    *run = rk_cpg(p);
    return "cpg";
}

/* Python asserts split_k > 0; every caller passes max(split_k, 1). */
long long rk_wg_k_padded(const rk_spec *s, const rk_problem *p, long long split_k)
{
    long long wg[3];
    rk_wgrad_gemm(p, wg);
    return rk_roundup(wg[2], s->tile_k * split_k);
}

/* K iterations of an unrolled loop (unroll_k, basic, async): capped by MAX_UNROLLED_K_ITERS. */
long long rk_unrolled_k_iters(const rk_spec *s, const rk_problem *p)
{
    long long fw[3], split;
    if (s->family == RK_FAMILY_FWD) {
        rk_fwd_gemm(p, fw);
        return rk_ceildiv(fw[2], s->tile_k);
    }
    split = s->split_k > 1 ? s->split_k : 1;
    return rk_ceildiv(rk_floordiv(rk_wg_k_padded(s, p, split), split), s->tile_k);
}

/* ---- LDS layout and budget (conv-semantics §3.1, §7.2, §9.2) ---- */

long long rk_effective_lds_pad(const rk_spec *s)
{
    if (rk_has_lds_layout(s))
        return s->lds_layout_pad.v;
    if (s->lds_k_pad.set)
        return s->lds_k_pad.v;
    if (s->async_dma)
        return 0;
    return s->tile_k >= 16 ? 8 : 0;
}

void rk_m_outer_shape(const rk_spec *s, long long tile_mn, long long out[2])
{
    out[0] = tile_mn;
    out[1] = s->tile_k + rk_effective_lds_pad(s);
}

void rk_k_outer_shape(const rk_spec *s, long long tile_mn, long long out[2])
{
    long long pad = (s->family == RK_FAMILY_WGRAD && s->async_dma) ? 0 : RK_KOUTER_PAD;
    out[0] = s->tile_k;
    out[1] = tile_mn + pad;
}

/* wgrad both, dgrad B, under lds_k_outer. */
void rk_lds_k_outer_sides(const rk_spec *s, int out[2])
{
    out[0] = s->lds_k_outer && s->family == RK_FAMILY_WGRAD;
    out[1] = s->lds_k_outer && s->family != RK_FAMILY_FWD;
}

/* (rows, cols) of the A and B tiles. */
void rk_lds_shapes(const rk_spec *s, long long a[2], long long b[2])
{
    int outer[2];
    rk_lds_k_outer_sides(s, outer);
    if (outer[0])
        rk_k_outer_shape(s, s->tile_m, a);
    else
        rk_m_outer_shape(s, s->tile_m, a);
    if (outer[1])
        rk_k_outer_shape(s, s->tile_n, b);
    else
        rk_m_outer_shape(s, s->tile_n, b);
}

long long rk_lds_budget(const rk_spec *s)
{
    long long a[2], b[2], eb, ab, cst = 0;
    rk_lds_shapes(s, a, b);
    eb = streq(s->dtype_a, "fp32") ? 4 : 2;
    ab = (a[0] * a[1] + b[0] * b[1]) * eb;
    if (rk_double_buffer(s))
        ab *= 2;
    if (streq(s->epilogue, "cshuffle"))
        cst = s->tile_m * s->tile_n * (streq(s->dtype_d, "fp32") ? 4 : 2);
    if (s->family == RK_FAMILY_DGRAD && !s->cshuffle_no_alias)
        return ab > cst ? ab : cst;
    return ab + cst;
}

void rk_frag_lens(const rk_spec *s, const rk_target *t, long long out[2])
{
    out[0] = rk_frag_len(t, s->warp_tile_m, s->warp_tile_k, s->wave_size);
    out[1] = rk_frag_len(t, s->warp_tile_n, s->warp_tile_k, s->wave_size);
}

/* ---- async chunking (conv-semantics §8) ---- */

long long rk_spec_elem_bytes(const char *dtype) { return streq(dtype, "fp32") ? 4 : 2; }

static rk_async_tile async_tile(const char *operand, long long rows, long long cols, long long elem_bytes,
                                long long contig_cols)
{
    rk_async_tile t;
    t.operand = operand, t.rows = rows, t.cols = cols;
    t.elem_bytes = elem_bytes, t.contig_cols = contig_cols;
    return t;
}

void rk_async_tiles(const rk_spec *s, const rk_problem *p, rk_async_tile out[2])
{
    long long eb_a = rk_spec_elem_bytes(s->dtype_a), eb_b = rk_spec_elem_bytes(s->dtype_b);
    if (s->family == RK_FAMILY_WGRAD) {
        out[0] = async_tile("A", s->tile_k, s->tile_m, eb_a, rk_kpg(p));
        out[1] = async_tile("B", s->tile_k, s->tile_n, eb_b, rk_cpg(p));
        return;
    }
    out[0] = async_tile("A", s->tile_m, s->tile_k, eb_a, rk_cpg(p));
    out[1] = async_tile("B", s->tile_n, s->tile_k, eb_b, rk_cpg(p));
}

/* contig_cols NULL is Python's None; the result 0 is Python's None (no dwords fits). */
long long rk_choose_dwords(long long rows, long long cols, long long block_size, long long elem_bytes,
                           long long max_dwords, const long long *contig_cols)
{
    static const long long order[3] = {4, 3, 1};
    int i;
    for (i = 0; i < 3; i++) {
        long long dwords = order[i], elems, chunks;
        if (dwords > max_dwords)
            continue;
        elems = rk_floordiv(dwords * 4, elem_bytes);
        if (rk_floormod(cols, elems) != 0)
            continue;
        if (contig_cols && (elems > *contig_cols || rk_floormod(*contig_cols, elems) != 0))
            continue;
        chunks = rk_floordiv(rows * cols, elems);
        if (chunks < block_size || rk_floormod(chunks, block_size) != 0)
            continue;
        return dwords;
    }
    return 0;
}

long long rk_tile_dwords(const rk_spec *s, const rk_async_tile *tile)
{
    return rk_choose_dwords(tile->rows, tile->cols, rk_block_size(s), tile->elem_bytes, 4, &tile->contig_cols);
}

/* ---- names (conv-semantics §1.4, §6) ---- */

/* Python format(float(v), "g"): for int32 values (exact in a double) C's %g prints the
 * same digits, exponent form included (1e+06, -2.14748e+09). */
void rk_format_g(long long value, char *out, size_t cap) { snprintf(out, cap, "%g", (double)value); }

static void tag_part(char *out, size_t *used, const char *part)
{
    *used += (size_t)snprintf(out + *used, RK_TAG_MAX - *used, "%s%s", *used ? "_" : "epi_", part);
}

/* "" for the identity, else "epi_" and the present pieces joined with "_". */
void rk_acc_tag(const rk_spec *s, char out[RK_TAG_MAX])
{
    char part[80], lo[32], hi[32];
    size_t used = 0;
    out[0] = '\0';
    if (s->bias != 0) {
        rk_format_g(s->bias, lo, sizeof lo);
        snprintf(part, sizeof part, "bias%s", lo);
        tag_part(out, &used, part);
    }
    if (s->scale != 1) {
        rk_format_g(s->scale, lo, sizeof lo);
        snprintf(part, sizeof part, "scale%s", lo);
        tag_part(out, &used, part);
    }
    if (s->relu)
        tag_part(out, &used, "relu");
    if (s->clamp_min.set || s->clamp_max.set) {
        if (s->clamp_min.set)
            rk_format_g(s->clamp_min.v, lo, sizeof lo);
        else
            strcpy(lo, "-inf");
        if (s->clamp_max.set)
            rk_format_g(s->clamp_max.v, hi, sizeof hi);
        else
            strcpy(hi, "inf");
        snprintf(part, sizeof part, "clamp%sto%s", lo, hi);
        tag_part(out, &used, part);
    }
}

typedef struct rk_name_flag {
    const char *flag;
    int on;
} rk_name_flag;

static int kernel_name_join(const char *prefix, const char *const *parts, int n_parts, const rk_name_flag *flags,
                            int n_flags, rk_buf *out)
{
    size_t start = out->len, i;
    int k;
    rk_buf_puts(out, prefix);
    for (k = 0; k < n_parts; k++)
        if (parts[k][0]) {
            rk_buf_puts(out, "_");
            rk_buf_puts(out, parts[k]);
        }
    for (k = 0; k < n_flags; k++)
        if (flags[k].on) {
            rk_buf_puts(out, "_");
            rk_buf_puts(out, flags[k].flag);
        }
    if (out->failed)
        return -1;
    for (i = start; i < out->len; i++)
        if (out->data[i] == '/')
            out->data[i] = '_';
    return 0;
}

static rk_name_flag flag(const char *flag, int on)
{
    rk_name_flag f;
    f.flag = flag, f.on = on;
    return f;
}

/* "{pipeline}_{epilogue}" in the arena: both strings are config values of any length. */
static const char *schedule_part(const rk_spec *s, rk_arena *arena)
{
    size_t np = strlen(s->pipeline), ne = strlen(s->epilogue);
    char *part = rk_alloc(arena, np + ne + 2);
    if (!part)
        return NULL;
    memcpy(part, s->pipeline, np);
    part[np] = '_';
    memcpy(part + np + 1, s->epilogue, ne + 1);
    return part;
}

/* prefix + the n numbers joined by 'x' into out (room for 3 numbers: 80 bytes), by hand. */
static void dims(char *out, const char *prefix, long long a, long long b, long long c, int n)
{
    size_t at = strlen(prefix);
    memcpy(out, prefix, at);
    at += rk_fmt_int(a, out + at);
    out[at++] = 'x';
    at += rk_fmt_int(b, out + at);
    if (n == 3) {
        out[at++] = 'x';
        rk_fmt_int(c, out + at);
    }
}

/* prefix + str(v) into out (room for it). */
static void numbered(char *out, const char *prefix, long long v)
{
    size_t at = strlen(prefix);
    memcpy(out, prefix, at);
    rk_fmt_int(v, out + at);
}

int rk_kernel_name(const rk_spec *s, const char *shape, const char *tag, rk_arena *arena, rk_buf *out)
{
    char tile[80], warps[48], atom[80], pad[32], spk[32];
    const char *parts[6];
    rk_name_flag flags[8];
    int n = 0;
    dims(tile, "t", s->tile_m, s->tile_n, s->tile_k, 3);
    dims(warps, "w", s->warp_m, s->warp_n, 0, 2);
    dims(atom, "a", s->warp_tile_m, s->warp_tile_n, s->warp_tile_k, 3);
    parts[0] = shape, parts[1] = tile, parts[2] = warps, parts[3] = atom;
    parts[4] = schedule_part(s, arena), parts[5] = tag;
    if (!parts[4])
        return -1;
    numbered(pad, "pad", s->lds_k_pad.v);
    numbered(spk, "spk", s->split_k);
    flags[n++] = flag("async", s->async_dma);
    if (s->family == RK_FAMILY_FWD) {
        flags[n++] = flag(pad, s->lds_k_pad.set);
    } else {
        flags[n++] = flag("kouter", s->lds_k_outer);
        if (s->family == RK_FAMILY_WGRAD)
            flags[n++] = flag(pad, s->lds_k_pad.set);
        flags[n++] = flag(spk, s->split_k > 1);
        flags[n++] = flag("spkauto", s->split_k == -1);
        if (s->family == RK_FAMILY_WGRAD) {
            flags[n++] = flag("spkrt", s->split_k == 0);
            flags[n++] = flag("twostage", s->two_stage);
        }
    }
    return kernel_name_join(s->name, parts, 6, flags, n, out);
}
