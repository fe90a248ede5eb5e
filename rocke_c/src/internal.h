/* internal.h: the types shared by the stages of the C engine (not public; see rocke.h).
 * One arena per rocke_emit call, a growable string buffer, an explicit error struct
 * returned up the stack. Every stage returns 0 on success and -1 with *err filled. */
#ifndef ROCKE_INTERNAL_H
#define ROCKE_INTERNAL_H

#include <stddef.h>
#include <stdarg.h>

/* ---- arena (arena.c): all per-call memory, released at once by rk_arena_free ---- */
typedef struct rk_arena_block rk_arena_block;
typedef struct rk_arena {
    rk_arena_block *head;
    int failed; /* set once an allocation failed */
} rk_arena;

void rk_arena_init(rk_arena *arena);
void *rk_alloc(rk_arena *arena, size_t size);            /* zeroed; NULL on failure */
char *rk_strndup(rk_arena *arena, const char *s, size_t n);
void rk_arena_free(rk_arena *arena);

/* ---- growable string buffer (buf.c): heap, amortised doubling ---- */
typedef struct rk_buf {
    char *data;  /* NUL-terminated while ok */
    size_t len;
    size_t cap;
    int failed;  /* set once a grow failed; later appends are no-ops */
} rk_buf;

void rk_buf_init(rk_buf *b);
void rk_buf_puts(rk_buf *b, const char *s);
void rk_buf_putn(rk_buf *b, const char *s, size_t n);
void rk_buf_printf(rk_buf *b, const char *fmt, ...);
char *rk_buf_take(rk_buf *b);   /* hands the heap string to the caller; b is reset */
void rk_buf_free(rk_buf *b);

/* ---- errors ---- */
#define RK_MESSAGE_MAX 512
typedef struct rk_error {
    const char *code;              /* static UPPER_SNAKE string; NULL = no error */
    int internal;                  /* 1: engine failure (ROCKE_ERROR), not a rejection */
    char message[RK_MESSAGE_MAX];
} rk_error;

/* Fills err (code + printf-style message) and returns -1, so `return rk_fail(...)` reads well. */
int rk_fail(rk_error *err, const char *code, const char *fmt, ...);
int rk_fail_internal(rk_error *err, const char *fmt, ...);

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

/* ---- schema (schema.c): every key of [target], [problem], [spec] ---- */
enum rk_key {
    /* [target] */
    RK_KEY_ARCH,
    /* [problem] */
    RK_KEY_N, RK_KEY_HI, RK_KEY_WI, RK_KEY_C, RK_KEY_K, RK_KEY_Y, RK_KEY_X,
    RK_KEY_SH, RK_KEY_SW, RK_KEY_PH, RK_KEY_PW, RK_KEY_DH, RK_KEY_DW, RK_KEY_GROUPS,
    RK_KEY_DI, RK_KEY_Z, RK_KEY_SD, RK_KEY_PD, RK_KEY_DD,
    /* [spec] */
    RK_KEY_FAMILY, RK_KEY_NAME, RK_KEY_DTYPE_A, RK_KEY_DTYPE_B, RK_KEY_DTYPE_D,
    RK_KEY_TILE_M, RK_KEY_TILE_N, RK_KEY_TILE_K, RK_KEY_WARP_M, RK_KEY_WARP_N,
    RK_KEY_WARP_TILE_M, RK_KEY_WARP_TILE_N, RK_KEY_WARP_TILE_K, RK_KEY_WAVE_SIZE,
    RK_KEY_PIPELINE, RK_KEY_EPILOGUE, RK_KEY_ASYNC_DMA, RK_KEY_UNROLL_K,
    RK_KEY_LDS_K_PAD, RK_KEY_LDS_LAYOUT_PAD, RK_KEY_LDS_LAYOUT_XOR,
    RK_KEY_VECTOR_SIZE_A, RK_KEY_VECTOR_SIZE_B, RK_KEY_VECTOR_SIZE_C,
    RK_KEY_CHIPLET_SWIZZLE, RK_KEY_CHIPLET_WGM, RK_KEY_CHIPLET_NUM_XCDS, RK_KEY_CHIPLET_CHUNK_SIZE,
    RK_KEY_WAVES_PER_EU, RK_KEY_BIAS, RK_KEY_SCALE, RK_KEY_RELU, RK_KEY_CLAMP_MIN, RK_KEY_CLAMP_MAX,
    RK_KEY_LDS_K_OUTER, RK_KEY_SPLIT_K,
    RK_KEY_TWO_STAGE, RK_KEY_FORCE_DETERMINISTIC, RK_KEY_GROUP_MERGE,
    RK_KEY_NUM_LOAD_WAVES, RK_KEY_CSHUFFLE_NO_ALIAS,
    RK_KEY_COUNT
};

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

#endif
