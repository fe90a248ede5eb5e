/* test_spec.c: the spec-layer stages of the C engine (problem, spec, validate, print_spec),
 * fed with hand-built rk_fields, without the parser.
 *
 * 1. Fixed cases: the kernel names of docs/reference/conv-semantics.md §6, LDS budgets, and
 *    rejections whose codes and messages were taken from the Python engine (the normative
 *    side).
 * 2. With an argument: replays a vector file written by tests/tools/spec_vectors.py
 *    (fields -> the Python spec text or (code, message)) through the same C stages and
 *    compares the bytes.
 *
 *     test_spec [VECTORS]      exit 0 when every check passes */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../src/internal.h"

/* The key names in enum rk_key order (internal.h's RK_KEYS), to read the vector file's keys. */
static const char *const key_names[RK_KEY_COUNT] = {
#define KEY_NAME(id, row, name, ...) name,
    RK_KEYS(KEY_NAME)
#undef KEY_NAME
};

static const char *const family_names[3] = {"fwd", "wgrad", "dgrad"};

static int key_index(const char *name)
{
    int k;
    for (k = 0; k < RK_KEY_COUNT; k++)
        if (strcmp(key_names[k], name) == 0)
            return k;
    return -1;
}

/* What the stages after schema make of the fields (the twin of emit.py's emit_spec from
 * `target = target_for(...)` on). */
typedef struct outcome {
    const char *code;   /* NULL: emitted */
    int internal;
    rk_buf out;         /* text or message */
} outcome;

static void run_stages(const rk_fields *f, outcome *o)
{
    rk_arena arena;
    rk_error err;
    rk_problem problem;
    rk_spec built, spec;
    const rk_plan *plan;
    const rk_target *target = rk_target_for(f->f[RK_KEY_ARCH].value.s);
    rk_arena_init(&arena);
    rk_error_init(&err, &arena);
    o->code = NULL;
    o->internal = 0;
    rk_buf_init(&o->out);
    if (!target) {
        o->code = "NO_TARGET";
        goto done;
    }
    if (rk_build_problem(f, &problem, &err)
        || (f->family == RK_FAMILY_DGRAD && rk_check_sub_gemm_candidates(&problem, &err)) || rk_check_dtypes(f, &err))
        goto fail;
    rk_build_spec(f->family, f->f[RK_KEY_ARCH].value.s, f, &built);
    spec = rk_deduce(&built, &problem, target);
    if (rk_validate(&spec, &problem, target, &arena, &err))
        goto fail;
    if (rk_make_plan(&spec, &problem, target, &arena, &plan, &err) == 0 && rk_print_spec(plan, &o->out, &err) == 0)
        goto done;
fail:
    o->code = err.code;
    o->internal = err.internal;
    rk_buf_free(&o->out);
    rk_buf_puts(&o->out, err.message);
done:
    rk_arena_free(&arena);
}

/* ---- building fields by hand ---- */

static void set_int(rk_fields *f, int key, long long v)
{
    f->f[key].set = 1;
    f->f[key].value.kind = RK_VALUE_INT;
    f->f[key].value.i = v;
}

static void set_bool(rk_fields *f, int key, int v)
{
    f->f[key].set = 1;
    f->f[key].value.kind = RK_VALUE_BOOL;
    f->f[key].value.i = v;
}

/* s must outlive the fields (literals here). */
static void set_str(rk_fields *f, int key, const char *s)
{
    f->f[key].set = 1;
    f->f[key].value.kind = RK_VALUE_STR;
    f->f[key].value.s = s;
    f->f[key].value.s_len = strlen(s);
}

/* The problem of conv-semantics §6: N8 Hi=Wi=56 C=K=64 Y=X=3 pH=pW=1, on gfx950. */
static void base_fields(rk_fields *f, int family)
{
    memset(f, 0, sizeof *f);
    set_str(f, RK_KEY_ARCH, "gfx950");
    set_int(f, RK_KEY_N, 8), set_int(f, RK_KEY_HI, 56), set_int(f, RK_KEY_WI, 56);
    set_int(f, RK_KEY_C, 64), set_int(f, RK_KEY_K, 64), set_int(f, RK_KEY_Y, 3), set_int(f, RK_KEY_X, 3);
    set_int(f, RK_KEY_PH, 1), set_int(f, RK_KEY_PW, 1);
    set_str(f, RK_KEY_FAMILY, family_names[family]);
    f->family = family;
}

static int failures = 0;

/* The value of `key = ` in a spec text (one line), or "" when absent. */
static void line_value(const char *text, const char *key, char *out, size_t cap)
{
    size_t klen = strlen(key);
    const char *p = text;
    out[0] = '\0';
    while (p && *p) {
        if (strncmp(p, key, klen) == 0 && strncmp(p + klen, " = ", 3) == 0) {
            const char *v = p + klen + 3, *end = strchr(v, '\n');
            size_t n = end ? (size_t)(end - v) : strlen(v);
            if (n >= cap)
                n = cap - 1;
            memcpy(out, v, n);
            out[n] = '\0';
            return;
        }
        p = strchr(p, '\n');
        if (p)
            p++;
    }
}

static void expect_line(const char *label, const rk_fields *f, const char *key, const char *want)
{
    outcome o;
    char got[512];
    run_stages(f, &o);
    if (o.code) {
        printf("FAIL %s: rejected %s: %s\n", label, o.code, o.out.data ? o.out.data : "");
        failures++;
    } else {
        line_value(o.out.data, key, got, sizeof got);
        if (strcmp(got, want) != 0) {
            printf("FAIL %s: %s = %s, want %s\n", label, key, got, want);
            failures++;
        }
    }
    rk_buf_free(&o.out);
}

static void expect_reject(const char *label, const rk_fields *f, const char *code, const char *message)
{
    outcome o;
    run_stages(f, &o);
    if (!o.code || strcmp(o.code, code) != 0 || strcmp(o.out.data, message) != 0) {
        printf("FAIL %s: got %s: %s\n     want %s: %s\n", label, o.code ? o.code : "(emitted)",
               o.code ? o.out.data : "", code, message);
        failures++;
    }
    rk_buf_free(&o.out);
}

/* Python's //, % and the ceil/roundup built on them, for negative operands too
 * (expected values from python3: -7 // 2 == -4, -7 % 2 == 1, 7 % -2 == -1, ...). */
static void fixed_division(void)
{
    static const long long cases[][6] = {
        /* a, b, a // b, a % b, ceildiv, roundup */
        {7, 2, 3, 1, 4, 8},     {-7, 2, -4, 1, -3, -6}, {7, -2, -4, -1, -3, 6},
        {-7, -2, 3, -1, 4, -8}, {8, 4, 2, 0, 2, 8},     {-8, 4, -2, 0, -2, -8},
        {0, 5, 0, 0, 0, 0},     {-1, 64, -1, 63, 0, 0}, {25088, 256, 98, 0, 98, 25088},
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const long long *c = cases[i];
        if (rk_floordiv(c[0], c[1]) != c[2] || rk_floormod(c[0], c[1]) != c[3] || rk_ceildiv(c[0], c[1]) != c[4]
            || rk_roundup(c[0], c[1]) != c[5]) {
            printf("FAIL division %lld, %lld\n", c[0], c[1]);
            failures++;
        }
    }
}

static void fixed_kernel_names(void)
{
    rk_fields f;
    base_fields(&f, RK_FAMILY_WGRAD);
    set_bool(&f, RK_KEY_LDS_K_OUTER, 1), set_bool(&f, RK_KEY_ASYNC_DMA, 1);
    set_int(&f, RK_KEY_SPLIT_K, 4), set_str(&f, RK_KEY_DTYPE_D, "fp32");
    expect_line("ref §6 async", &f, "kernel_name",
                "conv_igemm_wgrad_N8H56W56C64_K64Y3X3_t64x64x64_w2x2_a32x32x16_mem_default_async_kouter_spk4");
    expect_line("ref §6 async lds", &f, "lds_bytes", "32768");
    expect_line("ref §6 async ks", &f, "ks", "6272");

    base_fields(&f, RK_FAMILY_WGRAD);
    set_str(&f, RK_KEY_EPILOGUE, "cshuffle"), set_int(&f, RK_KEY_LDS_K_PAD, 8);
    expect_line("ref §6 pad8", &f, "kernel_name",
                "conv_igemm_wgrad_N8H56W56C64_K64Y3X3_t64x64x64_w2x2_a32x32x16_mem_cshuffle_pad8");
    expect_line("ref §6 pad8 lds", &f, "lds_bytes", "26624");

    base_fields(&f, RK_FAMILY_WGRAD);
    set_int(&f, RK_KEY_SPLIT_K, -1), set_str(&f, RK_KEY_EPILOGUE, "cshuffle");
    expect_line("auto split_k", &f, "kernel_name",
                "conv_igemm_wgrad_N8H56W56C64_K64Y3X3_t64x64x64_w2x2_a32x32x16_mem_cshuffle_spk56");

    base_fields(&f, RK_FAMILY_DGRAD);
    set_bool(&f, RK_KEY_LDS_K_OUTER, 1), set_str(&f, RK_KEY_EPILOGUE, "cshuffle");
    set_int(&f, RK_KEY_SH, 2), set_int(&f, RK_KEY_SW, 2);
    expect_line("dgrad kouter", &f, "kernel_name",
                "conv_igemm_dgrad_N8H56W56C64_K64Y3X3_t64x64x64_w2x2_a32x32x16_mem_cshuffle_kouter");
    expect_line("dgrad kouter lds", &f, "lds_bytes", "18432");

    base_fields(&f, RK_FAMILY_FWD);
    set_int(&f, RK_KEY_GROUPS, 2), set_str(&f, RK_KEY_NAME, "a/b");
    set_int(&f, RK_KEY_BIAS, 1000000), set_int(&f, RK_KEY_SCALE, -2147483647LL - 1);
    set_bool(&f, RK_KEY_RELU, 1), set_int(&f, RK_KEY_CLAMP_MIN, -5);
    expect_line("fwd acc tag", &f, "kernel_name",
                "a_b_N8H56W56C64_K64Y3X3G2_t64x64x128_w2x2_a32x32x16_mem_default"
                "_epi_bias1e+06_scale-2.14748e+09_relu_clamp-5toinf");
    expect_line("fwd lds", &f, "lds_bytes", "34816");
}

/* A rejection from the base problem with some fields set: the settings are key, value pairs
 * (an integer, true or false, or a string), NULL-ended. */
typedef struct reject_case {
    const char *label;
    int family;
    const char *settings[21];
    const char *code;
    const char *message;
} reject_case;

static const reject_case reject_cases[] = {
    {"atom edge",
     RK_FAMILY_WGRAD,
     {"lds_k_outer", "true", "warp_tile_m", "64", "warp_m", "1"},
     "WGRAD_KOUTER_ATOM_EDGE",
     "lds_k_outer needs warp_tile_m and warp_tile_n in {16, 32}, not 64 and 32"},
    {"dtype echo",
     RK_FAMILY_WGRAD,
     {"dtype_b", "fp8_e4m3"},
     "CONV_DTYPE_UNSUPPORTED",
     "dtype_b = 'fp8_e4m3' is not fp16, f16, bf16 or fp32"},
    {"dtype no echo",
     RK_FAMILY_WGRAD,
     {"dtype_b", "a b"},
     "CONV_DTYPE_UNSUPPORTED",
     "dtype_b is not fp16, f16, bf16 or fp32"},
    {"3d partial",
     RK_FAMILY_WGRAD,
     {"Di", "4", "sD", "1"},
     "CONV_3D_FIELDS_PARTIAL",
     "3-D fields are partial: set Di, sD but not Z, pD, dD"},
    {"Ho", RK_FAMILY_WGRAD, {"Hi", "1", "pH", "0"}, "E_RANGE", "[problem]: output size Ho = -1 is not positive"},
    {"lds budget",
     RK_FAMILY_WGRAD,
     {"arch", "gfx942", "tile_m", "256", "tile_n", "256", "warp_m", "4", "warp_n", "4", "warp_tile_m", "16",
      "warp_tile_n", "16"},
     "WGRAD_LDS_BUDGET",
     "the LDS budget of 73728 bytes exceeds the 65536 bytes of gfx942"},
    {"candidates",
     RK_FAMILY_DGRAD,
     {"sH", "100", "sW", "100", "Y",  "100", "X", "100", "Hi", "200",
      "Wi", "200", "pH", "60",  "pW", "60",  "C", "8",   "K",  "8"},
     "E_RANGE",
     "[problem]: strided dgrad would need 100*100 sub-GEMM candidates, more than 4096"},
    {"runtime loop",
     RK_FAMILY_WGRAD,
     {"split_k", "0", "dtype_d", "fp32", "pipeline", "basic"},
     "WGRAD_SPLIT_K_RUNTIME_LOOP",
     "split_k = 0 (runtime) cannot be combined with pipeline basic, which needs a compile-time trip "
     "count"},
    {"epilogue with a newline",
     RK_FAMILY_WGRAD,
     {"epilogue", "cs\nhuffle"},
     "WGRAD_UNKNOWN_OPTION",
     "epilogue is not one of default, cshuffle"},
    /* The rules beyond the reference (docs/engine-contract.md §6.1). */
    {"dgrad vector range",
     RK_FAMILY_DGRAD,
     {"vector_size_a", "16"},
     "DGRAD_VECTOR_RANGE",
     "vector_size_a = 16 is outside 1..8"},
    {"dgrad vector divisibility",
     RK_FAMILY_DGRAD,
     {"vector_size_a", "3"},
     "DGRAD_VECTOR_DIVISIBILITY",
     "vector_size_a = 3 does not divide kpg = 64"},
    {"dgrad vector pow2",
     RK_FAMILY_DGRAD,
     {"vector_size_a", "6", "K", "48"},
     "DGRAD_VECTOR_POW2",
     "vector_size_a = 6 is not a power of two (a buffer load or store moves 2, 4, 8 or 16 bytes)"},
    {"dgrad split-K vector a",
     RK_FAMILY_DGRAD,
     {"split_k", "2", "dtype_d", "fp32", "vector_size_a", "4"},
     "DGRAD_SPLIT_K_VECTOR_A",
     "vector_size_a = 4 has no effect with split_k = 2 (split-K loads dY one element at a time); "
     "it must be unset or 1"},
    {"dgrad strided vec_c",
     RK_FAMILY_DGRAD,
     {"sH", "2", "vector_size_c", "4"},
     "DGRAD_VEC_C_SCALAR_STORE",
     "vector_size_c = 4 needs epilogue cshuffle (the default epilogue stores one element per lane, "
     "also with split_k = 1, sH = 2, sW = 1)"},
    {"fwd vec_c range",
     RK_FAMILY_FWD,
     {"epilogue", "cshuffle", "dtype_d", "fp32", "vector_size_c", "8"},
     "FWD_VEC_C_RANGE",
     "vector_size_c = 8 is outside 1..4"},
    {"fwd vec_c divisibility",
     RK_FAMILY_FWD,
     {"epilogue", "cshuffle", "dtype_d", "fp16", "vector_size_c", "8", "K", "12"},
     "FWD_VEC_C_DIVISIBILITY",
     "vector_size_c = 8 does not divide kpg = 12"},
    {"lds xor",
     RK_FAMILY_WGRAD,
     {"lds_layout_xor", "4"},
     "WGRAD_LDS_XOR_UNSUPPORTED",
     "lds_layout_xor = 4 is not supported (the builders have no XOR-swizzled LDS tile; only 0, no "
     "swizzle)"},
    {"num_load_waves unused",
     RK_FAMILY_DGRAD,
     {"num_load_waves", "8"},
     "DGRAD_FIELD_UNUSED",
     "num_load_waves = 8 has no effect (only pipeline wavelet, which is not supported, has load waves)"},
    {"lds_k_pad unused",
     RK_FAMILY_DGRAD,
     {"lds_layout_pad", "4", "lds_k_pad", "16"},
     "DGRAD_FIELD_UNUSED",
     "lds_k_pad = 16 has no effect with an explicit LDS layout (lds_layout_pad = 4, lds_layout_xor = "
     "0 beats it)"},
    {"wgrad kouter layout",
     RK_FAMILY_WGRAD,
     {"lds_k_outer", "true", "lds_layout_pad", "16"},
     "WGRAD_KOUTER_EXPLICIT_LAYOUT",
     "lds_k_outer fixes the A and B tile layout; lds_layout_pad and lds_layout_xor must be unset"},
    {"chiplet field unused",
     RK_FAMILY_FWD,
     {"chiplet_wgm", "16"},
     "FWD_FIELD_UNUSED",
     "chiplet_wgm = 16 has no effect without chiplet_swizzle"},
    {"gfx942 async width",
     RK_FAMILY_FWD,
     {"arch", "gfx942", "warp_tile_m", "16", "warp_tile_n", "16", "async_dma", "true", "tile_k", "64"},
     "CONV_ASYNC_ARCH_DWORDS",
     "async_dma on gfx942 loads at most 4 bytes per lane to LDS, but the A tile would move 16 "
     "(rows = 64, cols = 64, block_size = 256, elem_bytes = 2, contig_cols = 64)"},
};

/* A setting's value by its text: an integer, a bool (true/false), else a string. */
static void set_text(rk_fields *f, int key, const char *value)
{
    char *end;
    long long i = strtoll(value, &end, 10);
    if (*value && !*end)
        set_int(f, key, i);
    else if (strcmp(value, "true") == 0 || strcmp(value, "false") == 0)
        set_bool(f, key, value[0] == 't');
    else
        set_str(f, key, value);
}

static void table_rejections(void)
{
    rk_fields f;
    size_t i, k;
    for (i = 0; i < sizeof reject_cases / sizeof reject_cases[0]; i++) {
        const reject_case *c = &reject_cases[i];
        base_fields(&f, c->family);
        for (k = 0; c->settings[k]; k += 2) {
            int key = key_index(c->settings[k]);
            if (key < 0) {
                printf("FAIL %s: no key %s\n", c->label, c->settings[k]);
                failures++;
                break;
            }
            set_text(&f, key, c->settings[k + 1]);
        }
        expect_reject(c->label, &f, c->code, c->message);
    }
}

/* A user string is echoed only when it is 1-16 of [A-Za-z0-9_]: a 700-byte one is not. */
static void long_string_rejections(void)
{
    rk_fields f;
    static char long_pipeline[701];
    char want[800];
    memset(long_pipeline, 'p', sizeof long_pipeline - 1);
    base_fields(&f, RK_FAMILY_WGRAD);
    set_str(&f, RK_KEY_PIPELINE, long_pipeline);
    expect_reject("long pipeline", &f, "WGRAD_UNKNOWN_OPTION", "pipeline is not one of mem, compv3, compv4, basic");
    long_pipeline[16] = '\0';
    snprintf(want, sizeof want, "pipeline '%s' is not one of mem, compv3, compv4, basic", long_pipeline);
    expect_reject("16-byte pipeline", &f, "WGRAD_UNKNOWN_OPTION", want);
}

/* ---- vector replay ---- */

typedef struct reader {
    FILE *fp;
    rk_arena *arena;
} reader;

/* n bytes plus the '\n' that follows them, into the arena (NUL-terminated). */
static char *read_bytes(reader *r, size_t n)
{
    char *s = rk_alloc(r->arena, n + 1);
    if (!s || fread(s, 1, n, r->fp) != n || fgetc(r->fp) != '\n')
        return NULL;
    s[n] = '\0';
    return s;
}

static int read_field(reader *r, rk_fields *f)
{
    char name[80], kind;
    long long v;
    unsigned long n;
    int k;
    if (fscanf(r->fp, "%79s %c", name, &kind) != 2 || (k = key_index(name)) < 0)
        return -1;
    if (kind == 's') {
        char *s;
        /* a string length from the file: bounded before it sizes an allocation */
        if (fscanf(r->fp, "%lu", &n) != 1 || n > (16UL << 20) || fgetc(r->fp) != '\n' || !(s = read_bytes(r, n)))
            return -1;
        f->f[k].set = 1;
        f->f[k].value.kind = RK_VALUE_STR;
        f->f[k].value.s = s;
        f->f[k].value.s_len = n;
    } else {
        if (fscanf(r->fp, "%lld", &v) != 1 || fgetc(r->fp) != '\n')
            return -1;
        if (kind == 'b')
            set_bool(f, k, (int)v);
        else
            set_int(f, k, v);
    }
    return 0;
}

static int family_of(const rk_fields *f)
{
    int i;
    for (i = 0; i < 3; i++)
        if (strcmp(f->f[RK_KEY_FAMILY].value.s, family_names[i]) == 0)
            return i;
    return -1;
}

/* 1-based number of the first line where a and b differ. */
static int first_diff_line(const char *a, const char *b)
{
    int line = 1;
    for (; *a && *a == *b; a++, b++)
        if (*a == '\n')
            line++;
    return line;
}

static int check_vector(int index, const rk_fields *f, const char *code, const char *want)
{
    outcome o;
    const char *got;
    int ok;
    run_stages(f, &o);
    got = o.out.data ? o.out.data : "";
    ok = !o.internal && ((code == NULL) == (o.code == NULL)) && (!code || strcmp(code, o.code) == 0)
         && strcmp(got, want) == 0;
    if (!ok && failures < 20) {
        printf("FAIL vector %d: want %s, got %s%s; first difference on line %d\n", index, code ? code : "text",
               o.code ? o.code : "text", o.internal ? " (internal)" : "", first_diff_line(got, want));
        if (o.code || code)
            printf("     want: %s\n      got: %s\n", want, got);
    }
    rk_buf_free(&o.out);
    return ok;
}

static int replay_one(reader *r, int index, int *ok)
{
    rk_fields f;
    char tag[8], code[96];
    unsigned long n;
    int n_fields, i;
    const char *want;
    memset(&f, 0, sizeof f);
    if (fscanf(r->fp, "%7s", tag) != 1)
        return 0; /* end of file */
    if (strcmp(tag, "V") != 0 || fscanf(r->fp, "%d", &n_fields) != 1 || fgetc(r->fp) != '\n')
        return -1;
    for (i = 0; i < n_fields; i++)
        if (read_field(r, &f))
            return -1;
    if ((f.family = family_of(&f)) < 0 || fscanf(r->fp, "%7s", tag) != 1)
        return -1;
    code[0] = '\0';
    if (strcmp(tag, "R") == 0 && fscanf(r->fp, "%95s", code) != 1)
        return -1;
    if (fscanf(r->fp, "%lu", &n) != 1 || fgetc(r->fp) != '\n' || !(want = read_bytes(r, n)))
        return -1;
    *ok = check_vector(index, &f, code[0] ? code : NULL, want);
    return 1;
}

static int replay(const char *path)
{
    reader r;
    rk_arena arena;
    int index = 0, passed = 0, ok = 0, status = 1;
    r.fp = fopen(path, "rb");
    if (!r.fp) {
        printf("FAIL cannot open %s\n", path);
        return -1;
    }
    r.arena = &arena;
    for (;;) {
        rk_arena_init(&arena);
        status = replay_one(&r, index, &ok);
        rk_arena_free(&arena);
        if (status <= 0)
            break;
        index++;
        passed += ok;
        if (!ok)
            failures++;
    }
    fclose(r.fp);
    if (status < 0) {
        printf("FAIL %s: malformed vector %d\n", path, index);
        failures++;
    }
    printf("%d/%d vectors identical\n", passed, index);
    return 0;
}

int main(int argc, char **argv)
{
    fixed_division();
    fixed_kernel_names();
    table_rejections();
    long_string_rejections();
    if (argc > 1)
        replay(argv[1]);
    printf("%s (%d failures)\n", failures ? "FAILED" : "ok", failures);
    return failures ? 1 : 0;
}
