/* internal.h: the types shared by the stages of the C engine (not public; see rocke.h).
 * One arena per rocke_emit call, a growable string buffer, an explicit error struct
 * returned up the stack. Every stage returns 0 on success and -1 with *err filled. */
#ifndef ROCKE_INTERNAL_H
#define ROCKE_INTERNAL_H

#include <stddef.h>
#include <stdarg.h>
#include "support.h"

/* ---- errors ---- */
/* The one error value (the twin of Python's Rejected and EngineFailure): a stage returns -1
 * with it filled. The message is a literal or lives in the arena (any length). */
typedef struct rk_error {
    const char *code;              /* static UPPER_SNAKE string; NULL = no error */
    int internal;                  /* 1: engine failure (ROCKE_ERROR), not a rejection */
    const char *message;           /* a literal, or formatted in arena */
    rk_arena *arena;               /* where rk_fail formats the message */
} rk_error;

/* No error yet; messages will be formatted in arena. */
void rk_error_init(rk_error *err, rk_arena *arena);
/* Fills err (code + printf-style message) and returns -1, so `return rk_fail(...)` reads well.
 * An arena failure makes it the internal error "out of memory (arena)". */
int rk_fail(rk_error *err, const char *code, const char *fmt, ...);
int rk_fail_internal(rk_error *err, const char *fmt, ...);
int rk_vfail(rk_error *err, const char *code, int internal, const char *fmt, va_list ap);

/* ---- parse (config.c) ---- */
enum rk_table { RK_TABLE_PARITY, RK_TABLE_TARGET, RK_TABLE_PROBLEM, RK_TABLE_SPEC, RK_TABLE_COUNT };

typedef enum rk_value_kind { RK_VALUE_INT, RK_VALUE_BOOL, RK_VALUE_STR } rk_value_kind;

typedef struct rk_value {
    rk_value_kind kind;
    long long i;        /* RK_VALUE_INT (within int32), RK_VALUE_BOOL (0/1) */
    const char *s;      /* RK_VALUE_STR: unescaped, NUL-terminated, arena */
    size_t s_len;
} rk_value;

typedef struct rk_entry {
    int table;          /* enum rk_table */
    const char *key;    /* arena, NUL-terminated, <= 64 chars */
    int line;
    rk_value value;
} rk_entry;

typedef struct rk_config {
    rk_entry *entries;  /* arena, in file order */
    int n_entries;
    int cap_entries;
    int table_line[RK_TABLE_COUNT]; /* 0 = table not present */
} rk_config;

int rk_config_parse(const char *text, size_t len, rk_arena *arena, rk_config *out, rk_error *err);
/* Contract §2 step 5: the first NUL byte or invalid UTF-8 sequence (RFC 3629), whichever
 * comes first, is E_ENCODING; 0 when the bytes are clean. */
int rk_check_encoding(const char *data, size_t len, rk_error *err);

/* ---- schema (schema.c): every key of [target], [problem], [spec] ---- */
/* The keys, one row each, in the order of rocke_py/facts.py KEYS (tests/engines/test_facts.py
 * compares them): KEY(id, row, name, row arguments...), row one of schema.c's row macros
 * (TARGET_ENUM, PROBLEM, SPEC...). enum rk_key, schema.c's key table and the C tests' key names
 * are all made from it, as ops.h's RK_OPS makes the op codes and rows. */
/* clang-format off */
#define RK_KEYS(KEY) \
    /* [target] */ \
    KEY(ARCH, TARGET_ENUM, "arch", rk_archs) \
    /* [problem] */ \
    KEY(N, PROBLEM, "N", 1, 1) \
    KEY(HI, PROBLEM, "Hi", 1, 1) \
    KEY(WI, PROBLEM, "Wi", 1, 1) \
    KEY(C, PROBLEM, "C", 1, 1) \
    KEY(K, PROBLEM, "K", 1, 1) \
    KEY(Y, PROBLEM, "Y", 1, 1) \
    KEY(X, PROBLEM, "X", 1, 1) \
    KEY(SH, PROBLEM, "sH", 1, 0) \
    KEY(SW, PROBLEM, "sW", 1, 0) \
    KEY(PH, PROBLEM, "pH", 0, 0) \
    KEY(PW, PROBLEM, "pW", 0, 0) \
    KEY(DH, PROBLEM, "dH", 1, 0) \
    KEY(DW, PROBLEM, "dW", 1, 0) \
    KEY(GROUPS, PROBLEM, "groups", RK_MIN, 0) \
    KEY(DI, PROBLEM, "Di", 1, 0) \
    KEY(Z, PROBLEM, "Z", 1, 0) \
    KEY(SD, PROBLEM, "sD", 1, 0) \
    KEY(PD, PROBLEM, "pD", 0, 0) \
    KEY(DD, PROBLEM, "dD", 1, 0) \
    /* [spec] */ \
    KEY(FAMILY, SPEC_ENUM, "family", rk_families) \
    KEY(NAME, SPEC_OF, "name", RK_T_NAME) \
    KEY(DTYPE_A, SPEC_OF, "dtype_a", RK_T_STR) \
    KEY(DTYPE_B, SPEC_OF, "dtype_b", RK_T_STR) \
    KEY(DTYPE_D, SPEC_OF, "dtype_d", RK_T_STR) \
    KEY(TILE_M, SPEC_INT, "tile_m", 1, 65536) \
    KEY(TILE_N, SPEC_INT, "tile_n", 1, 65536) \
    KEY(TILE_K, SPEC_INT, "tile_k", 1, 65536) \
    KEY(WARP_M, SPEC_INT, "warp_m", 1, 65536) \
    KEY(WARP_N, SPEC_INT, "warp_n", 1, 65536) \
    KEY(WARP_TILE_M, SPEC_INT, "warp_tile_m", 1, 65536) \
    KEY(WARP_TILE_N, SPEC_INT, "warp_tile_n", 1, 65536) \
    KEY(WARP_TILE_K, SPEC_INT, "warp_tile_k", 1, 65536) \
    KEY(WAVE_SIZE, SPEC_INT, "wave_size", 1, 65536) \
    KEY(PIPELINE, SPEC_OF, "pipeline", RK_T_STR) \
    KEY(EPILOGUE, SPEC_OF, "epilogue", RK_T_STR) \
    KEY(ASYNC_DMA, SPEC_OF, "async_dma", RK_T_BOOL) \
    KEY(UNROLL_K, SPEC_OF, "unroll_k", RK_T_BOOL) \
    KEY(LDS_K_PAD, SPEC_INT, "lds_k_pad", 0, 65536) \
    KEY(LDS_LAYOUT_PAD, SPEC_INT, "lds_layout_pad", 0, 65536) \
    KEY(LDS_LAYOUT_XOR, SPEC_INT, "lds_layout_xor", 0, 65536) \
    KEY(VECTOR_SIZE_A, SPEC_INT, "vector_size_a", 1, 65536) \
    KEY(VECTOR_SIZE_B, SPEC_INT, "vector_size_b", 1, 65536) \
    KEY(VECTOR_SIZE_C, SPEC_INT, "vector_size_c", 1, 65536) \
    KEY(CHIPLET_SWIZZLE, SPEC_OF, "chiplet_swizzle", RK_T_BOOL) \
    KEY(CHIPLET_WGM, SPEC_INT, "chiplet_wgm", 1, 65536) \
    KEY(CHIPLET_NUM_XCDS, SPEC_INT, "chiplet_num_xcds", 1, 65536) \
    KEY(CHIPLET_CHUNK_SIZE, SPEC_INT, "chiplet_chunk_size", 1, 65536) \
    KEY(WAVES_PER_EU, SPEC_INT, "waves_per_eu", 1, 65536) \
    KEY(BIAS, SPEC_OF, "bias", RK_T_INT) \
    KEY(SCALE, SPEC_OF, "scale", RK_T_INT) \
    KEY(RELU, SPEC_OF, "relu", RK_T_BOOL) \
    KEY(CLAMP_MIN, SPEC_OF, "clamp_min", RK_T_INT) \
    KEY(CLAMP_MAX, SPEC_OF, "clamp_max", RK_T_INT) \
    KEY(LDS_K_OUTER, SPEC, "lds_k_outer", RK_T_TRI, RK_MIN, RK_MAX, RK_W | RK_D) \
    KEY(SPLIT_K, SPEC, "split_k", RK_T_INT, RK_MIN, RK_MAX, RK_W | RK_D) \
    KEY(TWO_STAGE, SPEC, "two_stage", RK_T_BOOL, RK_MIN, RK_MAX, RK_W) \
    KEY(FORCE_DETERMINISTIC, SPEC, "force_deterministic", RK_T_BOOL, RK_MIN, RK_MAX, RK_W) \
    KEY(GROUP_MERGE, SPEC, "group_merge", RK_T_INT, RK_MIN, RK_MAX, RK_W) \
    KEY(NUM_LOAD_WAVES, SPEC, "num_load_waves", RK_T_INT, 1, 65536, RK_D) \
    KEY(CSHUFFLE_NO_ALIAS, SPEC, "cshuffle_no_alias", RK_T_BOOL, RK_MIN, RK_MAX, RK_D)

enum rk_key {
#define RK_KEY_ENUM(id, row, ...) RK_KEY_##id,
    RK_KEYS(RK_KEY_ENUM)
#undef RK_KEY_ENUM
    RK_KEY_COUNT
};
/* clang-format on */

enum rk_family { RK_FAMILY_FWD, RK_FAMILY_WGRAD, RK_FAMILY_DGRAD };

typedef struct rk_field {
    int set;            /* present in the config */
    int line;
    rk_value value;     /* kind already checked against the key's type */
} rk_field;

typedef struct rk_fields {
    rk_field f[RK_KEY_COUNT];
    int family;         /* enum rk_family, valid after rk_schema_check */
} rk_fields;

int rk_schema_check(const rk_config *config, rk_fields *out, rk_error *err);

/* ==== spec-layer stages: arch, problem, spec, validate, plan, print_spec (twins of
 * rocke_py/engine/{arch,problem,spec,validate,plan,print_spec}.py, same names and order) ==== */

#define RK_INT32_MAX 2147483647LL

/* ---- arch (arch.c) ---- */
typedef struct rk_mma {
    const char *dtype;  /* dtype_a == dtype_b; the accumulator is always fp32 */
    int m, n, k;
} rk_mma;

typedef struct rk_target {
    const char *arch;
    long long wave_size;
    long long lds_capacity;
    long long max_threads_per_block;
    long long num_cus;
    int is_mfma;        /* CDNA MFMA (wave64); every other target is WMMA (wave32) */
    int is_gfx11;       /* gfx11 WMMA: lanes 16-31 repeat lanes 0-15, frag_len = k */
    const rk_mma *mma;
    int n_mma;
    long long async_lds_dwords; /* the widest direct global->LDS load per lane, in dwords (0: none) */
} rk_target;

/* LDS_K_OUTER_ARCH_WAVE[arch], or 0 when the arch has no transpose read. */
long long rk_lds_k_outer_arch_wave(const char *arch);
const rk_target *rk_target_for(const char *arch); /* NULL for an unknown arch */
int rk_has_mma(const rk_target *t, const char *dtype_a, const char *dtype_b, long long m, long long n, long long k);
long long rk_frag_len(const rk_target *t, long long edge, long long warp_tile_k, long long wave_size);

/* ---- problem (problem.c) ---- */
typedef struct rk_problem {
    long long N, Hi, Wi, C, K, Y, X, sH, sW, pH, pW, dH, dW, groups;
    int has_3d;                    /* Di, Z, sD, pD, dD all set (build rejects a partial set) */
    long long Di, Z, sD, pD, dD;   /* meaningful only when has_3d */
} rk_problem;

#define RK_SHORT_MAX 192           /* problem.short(): 10 numbers of at most 11 chars + tags */
#define RK_SUB_GEMM_FIELDS 22
#define RK_MAX_SUB_GEMM_CANDIDATES 4096

/* The record fields, in record order (the index of each name in rk_sub_gemm_fields). */
/* clang-format off */
enum rk_sub_gemm_field {
    RK_SG_BLOCK_START, RK_SG_NUM_M_TILES, RK_SG_NUM_N_TILES, RK_SG_GEMM_M, RK_SG_GEMM_K,
    RK_SG_H_SLICE, RK_SG_W_SLICE, RK_SG_H_BEGIN, RK_SG_W_BEGIN, RK_SG_Y_DOT_SLICE, RK_SG_X_DOT_SLICE,
    RK_SG_A_H_COEFF, RK_SG_A_W_COEFF, RK_SG_B_Y_STRIDE, RK_SG_B_Y_OFFSET, RK_SG_B_X_STRIDE,
    RK_SG_B_X_OFFSET, RK_SG_D_H_STRIDE, RK_SG_D_H_OFFSET, RK_SG_D_W_STRIDE, RK_SG_D_W_OFFSET,
    RK_SG_GEMM_K_PADDED
};
/* clang-format on */

typedef struct rk_sub_gemm {
    long long v[RK_SUB_GEMM_FIELDS];  /* in the order of rk_sub_gemm_fields */
} rk_sub_gemm;

extern const char *const rk_sub_gemm_fields[RK_SUB_GEMM_FIELDS];

long long rk_cpg(const rk_problem *p);
long long rk_kpg(const rk_problem *p);
long long rk_problem_ho(const rk_problem *p);
long long rk_problem_wo(const rk_problem *p);
long long rk_problem_do(const rk_problem *p);
long long rk_filter_z(const rk_problem *p);
long long rk_out_depth(const rk_problem *p);
long long rk_in_depth(const rk_problem *p);
int rk_is_pointwise(const rk_problem *p);
void rk_short(const rk_problem *p, char out[RK_SHORT_MAX]);
long long rk_out_size(long long size, long long pad, long long dil, long long filt, long long stride);
int rk_build_problem(const rk_fields *fields, rk_problem *out, rk_error *err);
void rk_fwd_gemm(const rk_problem *p, long long out[3]);
void rk_wgrad_gemm(const rk_problem *p, long long out[3]);
void rk_dgrad_gemm(const rk_problem *p, long long out[3]);
void rk_sub_gemm_candidates(const rk_problem *p, long long *rows, long long *cols);
int rk_check_sub_gemm_candidates(const rk_problem *p, rk_error *err);
/* The kept tilde records (arena); -1 with err on allocation failure or a value past 64 bits. */
int rk_dgrad_sub_gemms(const rk_problem *p, long long tile_m, long long tile_n, long long tile_k, long long split_k,
                       rk_arena *arena, rk_sub_gemm **records, int *n_records, rk_error *err);

/* ---- spec (spec.c) ---- */
typedef struct rk_opt {  /* Python Optional[int] */
    int set;
    long long v;
} rk_opt;

typedef struct rk_spec {
    int family;                      /* enum rk_family */
    const char *family_name;         /* "fwd", "wgrad", "dgrad" */
    const char *arch;
    const char *name;
    const char *dtype_a, *dtype_b, *dtype_d;
    long long tile_m, tile_n, tile_k, warp_m, warp_n;
    long long warp_tile_m, warp_tile_n, warp_tile_k, wave_size;
    const char *pipeline, *epilogue;
    int async_dma, unroll_k;
    rk_opt lds_k_pad;
    rk_opt lds_layout_pad;           /* lds_layout is set iff this is set */
    long long lds_layout_xor;
    rk_opt vector_size_a, vector_size_b, vector_size_c;
    int chiplet_swizzle;
    long long chiplet_wgm, chiplet_num_xcds, chiplet_chunk_size;
    rk_opt waves_per_eu;
    long long bias, scale;
    int relu;
    rk_opt clamp_min, clamp_max;
    int lds_k_outer;
    const char *lds_k_outer_requested; /* "true", "false" or "auto", as the config said */
    long long split_k, split_k_requested;
    int two_stage, force_deterministic;
    long long group_merge, num_load_waves;
    int cshuffle_no_alias;
} rk_spec;

typedef struct rk_async_tile {
    const char *operand;             /* "A" or "B" */
    long long rows, cols, elem_bytes, contig_cols;
} rk_async_tile;

#define RK_KOUTER_PAD 8
#define RK_MAX_UNROLLED_K_ITERS 128
#define RK_TAG_MAX 128               /* acc_tag(): four %g numbers and the words */

long long rk_block_size(const rk_spec *s);
int rk_has_lds_layout(const rk_spec *s);
int rk_atomic_split_k(const rk_spec *s);
int rk_double_buffer(const rk_spec *s);
int rk_spec_is_sixteen_bit(const char *dtype);
const char *rk_normalise_dtype(const char *name);
int rk_echo_word(const char *value);  /* 1-16 of [A-Za-z0-9_]: may be echoed in a message */
int rk_check_dtypes(const rk_fields *fields, rk_error *err);
void rk_build_spec(int family, const char *arch, const rk_fields *fields, rk_spec *out);
void rk_spec_gemm(const rk_spec *s, const rk_problem *p, long long out[3]);
long long rk_auto_split_k(const rk_spec *s, const rk_problem *p, const rk_target *t);
int rk_default_lds_k_outer_wgrad(const char *arch, const char *dtype_a, const char *dtype_b, long long warp_tile_m,
                                 long long warp_tile_n, long long wave_size);
int rk_default_lds_k_outer_dgrad(const char *arch, const char *dtype_b, long long warp_tile_n, long long cpg,
                                 long long wave_size, const char *pipeline);
rk_spec rk_deduce(const rk_spec *s, const rk_problem *p, const rk_target *t);
long long rk_widest_vector(long long n, const char *dtype);
void rk_default_vector_sizes(const rk_spec *s, const rk_problem *p, long long out[3]);
/* The global load widths of A and B and the cshuffle store width (caps applied). */
void rk_load_widths(const rk_spec *s, const rk_problem *p, long long out[3]);
long long rk_vector_cap(const rk_spec *s);
long long rk_vec_c_cap(const rk_spec *s);
/* The stride-1 run of D a store chunk must stay inside: its name ("kpg" or "cpg") and length. */
const char *rk_vec_c_run(const rk_spec *s, const rk_problem *p, long long *run);
long long rk_wg_k_padded(const rk_spec *s, const rk_problem *p, long long split_k);
long long rk_unrolled_k_iters(const rk_spec *s, const rk_problem *p);
long long rk_effective_lds_pad(const rk_spec *s);
void rk_m_outer_shape(const rk_spec *s, long long tile_mn, long long out[2]);
void rk_k_outer_shape(const rk_spec *s, long long tile_mn, long long out[2]);
/* Whether the A and the B tile are K-outer (out[0], out[1]). */
void rk_lds_k_outer_sides(const rk_spec *s, int out[2]);
void rk_lds_shapes(const rk_spec *s, long long a[2], long long b[2]);
long long rk_lds_budget(const rk_spec *s);
void rk_frag_lens(const rk_spec *s, const rk_target *t, long long out[2]);
long long rk_spec_elem_bytes(const char *dtype);
void rk_async_tiles(const rk_spec *s, const rk_problem *p, rk_async_tile out[2]);
/* 0 stands for Python's None (no dwords value fits). */
long long rk_choose_dwords(long long rows, long long cols, long long block_size, long long elem_bytes,
                           long long max_dwords, const long long *contig_cols);
long long rk_tile_dwords(const rk_spec *s, const rk_async_tile *tile);
void rk_format_g(long long value, char *out, size_t cap);
void rk_acc_tag(const rk_spec *s, char out[RK_TAG_MAX]);
/* Append the kernel name to out (shape: the problem's short(); tag: rk_acc_tag); -1 when
 * the arena or the buffer failed. */
int rk_kernel_name(const rk_spec *s, const char *shape, const char *tag, rk_arena *arena, rk_buf *out);

/* ---- validate (validate.c) ---- */
/* Python's validate: 0 when the spec passes, else -1 with err the first failing rule's
 * rejection (its code and message). */
int rk_validate(const rk_spec *s, const rk_problem *p, const rk_target *t, rk_arena *arena, rk_error *err);

/* ---- limits (limits.c): the limits this project adds beyond the reference ---- */
#define RK_INT32_MIN (-2147483647LL - 1)
#define RK_MAX_KERNEL_OPS 65536LL        /* IR ops of any kernel an engine builds */
#define RK_MAX_OUTPUT_BYTES 16777216LL   /* bytes of any emitted text */

typedef struct rk_ops_bound {
    long long total;
    long long steps;      /* K steps whose body the builder emits (1: the runtime loop) */
    long long per_step;
    long long epilogue;
} rk_ops_bound;

/* Each check appends its message and returns 1 when the limit is broken, else 0. The dgrad
 * records come from the arena (an allocation failure leaves them to mode spec's print). */
int rk_int32_range(const rk_spec *s, const rk_problem *p, rk_arena *arena, rk_buf *msg);
rk_ops_bound rk_kernel_ops_bound(const rk_spec *s, const rk_problem *p, const rk_target *t);
int rk_kernel_size(const rk_spec *s, const rk_problem *p, const rk_target *t, rk_buf *msg);

/* ---- plan (plan.c): every fact the later stages read, derived once after validation ---- */
/* One operand's LDS tile: rows x cols, stored T[k][mn] when k_outer, else T[mn][k]. */
typedef struct rk_lds_tile {
    long long rows, cols;
    int k_outer;
} rk_lds_tile;

typedef struct rk_plan {
    rk_spec spec;
    rk_problem problem;
    const rk_target *target;
    char short_name[RK_SHORT_MAX];   /* problem.short() (Python's plan.short) */
    char acc_tag[RK_TAG_MAX];        /* "" for the identity */
    const char *kernel_name;         /* arena */
    long long gemm[3];               /* (M, N, K) of the direction's GEMM */
    long long default_vectors[3];    /* the reference's default widths of A, B and C */
    long long vectors[3];            /* the load widths of A and B, the cshuffle store width */
    long long k_padded;              /* wgrad: the K extent rounded up to tile_k*split_k */
    long long ks;                    /* wgrad: one slice's K width; 0: a runtime argument */
    long long frag_lens[2];
    long long lds_pad;
    rk_lds_tile lds_a, lds_b;
    long long lds_bytes;
    long long async_dwords[2];       /* async_dma: each tile's dwords (0: none fits) */
    const rk_sub_gemm *sub_gemms;    /* dgrad: the kept tilde records (arena) */
    int n_sub_gemms;
    long long k_iters;               /* the K steps an unrolled loop runs */
    long long op_limit;              /* the kernel's op bound, at most RK_MAX_KERNEL_OPS */
} rk_plan;

/* The plan of a validated spec, in the arena; -1 with err: a dgrad record outside int32
 * (E_RANGE) or an allocation failure. */
int rk_make_plan(const rk_spec *s, const rk_problem *p, const rk_target *t, rk_arena *arena, const rk_plan **out,
                 rk_error *err);

/* ---- print_spec (print_spec.c) ---- */
/* Mode `spec` text of a plan appended to out; -1 with err on an internal failure. */
int rk_print_spec(const rk_plan *plan, rk_buf *out, rk_error *err);

#endif
