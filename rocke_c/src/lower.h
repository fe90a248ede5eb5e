/* lower.h: mode `ll`, in three sections named after their files: lower_ll_tables.c (the data
 * tables, the twin of rocke_py/engine/lower_ll_tables.py), lower_ll_state.c (the state of a
 * lowering, C only) and lower_ll.c (the lowering, the twin of rocke_py/engine/lower_ll.py). The
 * format is docs/reference/llvm-ir.md; every choice it leaves open is docs/lowering.md. */
#ifndef ROCKE_LOWER_H
#define ROCKE_LOWER_H

#include "ir.h"

/* ==== lower_ll_tables.c: the data tables of the lowering (docs/lowering.md §2) ====
 * The twin of rocke_py/engine/lower_ll_tables.py, row for row. Each array's size is fixed
 * here, so a row added or lost in the .c file without its count is a compile error. */

#define TRIPLE "amdgcn-amd-amdhsa"
#define MARKERS ", !amdgpu.no.fine.grained.memory !1, !amdgpu.no.remote.memory !1, !amdgpu.ignore.denormal.mode !1"
/* the fences around every s.barrier, ordering LDS only (LLVM's amdgpu-synchronize-as MMRA) */
#define FENCE_RELEASE "fence syncscope(\"workgroup\") release, !mmra !2"
#define FENCE_ACQUIRE "fence syncscope(\"workgroup\") acquire, !mmra !2"
#define LDS_MMRA "!2 = !{!\"amdgpu-synchronize-as\", !\"local\"}"
#define MAX_UNROLL 4096ULL

/* ---- flavors (llvm-ir §3) ---- */

typedef struct rk_ll_flavor {
    const char *name;
    int generation;         /* 0 llvm20, 1 llvm22, 2 llvm23: selects the declaration column */
    const char *datalayout;
    int rsrc_p8;            /* make.buffer.rsrc.p8.p1 with an i64 byte count (else .p1 with i32) */
    const char *nocapture;  /* the spelling of the pointer-param capture attribute */
} rk_ll_flavor;

#define RK_LL_N_FLAVORS 3
extern const rk_ll_flavor rk_ll_flavors[RK_LL_N_FLAVORS];

const rk_ll_flavor *rk_find_flavor(const char *name);   /* NULL: unknown */

/* ---- backends (llvm-ir §12.1, §12.6, §14) ---- */

enum { WAIT_GFX9, WAIT_GFX11, WAIT_SPLIT };  /* gfx9 / gfx11 s_waitcnt; gfx12 split counters */
enum { TR_NONE, TR_B64, TR_B128 };           /* gfx950 ds.read.tr16.b64; gfx1250 ds.load.tr16.b128 */

typedef struct rk_ll_backend {
    const char *arch;
    int wait;                   /* WAIT_* */
    long long word3;            /* buffer resource DWORD3 */
    long long drain_full;       /* tile.sync s_waitcnt immediate (WAIT_GFX9/WAIT_GFX11) */
    long long drain_lds;        /* tile.sync_lds_only s_waitcnt immediate */
    int lds_v8_volatile;        /* plain 8-wide LDS vector loads are `load volatile` (gfx1250) */
    int transpose;              /* TR_* */
    long long async_lds_dwords; /* the widest tile.async_buffer_load_lds (0: not available) */
} rk_ll_backend;

#define RK_LL_N_BACKENDS 5
extern const rk_ll_backend rk_ll_backends[RK_LL_N_BACKENDS];
#define VMCNT_MAX 63LL      /* 6-bit vmcnt / loadcnt / storecnt on every target */
#define GFX9_EXPCNT_MAX 7LL
#define GFX9_LGKMCNT_MAX 15LL
#define GFX11_EXPCNT_MAX 7LL
#define GFX11_LGKMCNT_MAX 63LL

const rk_ll_backend *rk_find_backend(const char *arch);  /* NULL: unknown */

/* ---- the declaration table (llvm-ir §2, item 5): printed in this order, only the rows used ----
 * (key, text): every flavor's text, unless rk_ll_decl_overrides gives the row a text of its own. */

typedef struct rk_ll_decl {
    const char *key, *text;
} rk_ll_decl;

#define RK_LL_N_DECLS 51
extern const rk_ll_decl rk_ll_decls[RK_LL_N_DECLS];

/* The rows a newer flavor declares otherwise: (key, llvm22 text, llvm23 text), "" = no override.
 * llvm22 uses its text when set, else the row's; llvm23 its text, else the llvm22 text, else the
 * row's. */
typedef struct rk_ll_decl_override {
    const char *key, *llvm22, *llvm23;
} rk_ll_decl_override;

#define RK_LL_N_DECL_OVERRIDES 1
extern const rk_ll_decl_override rk_ll_decl_overrides[RK_LL_N_DECL_OVERRIDES];

/* The row's text in flavor's column. */
const char *rk_decl_text(const rk_ll_decl *row, const rk_ll_flavor *flavor);

/* ---- MMA atoms (llvm-ir §12.2, §12.3; op_ids docs/ir.md §4.5) ---- */

enum {
    FORM_MFMA,  /* (a, b, c, i32 0, i32 0, i32 0) */
    FORM_WMMA3, /* (a, b, c) */
    FORM_WMMA8  /* (i1 false, a, i1 false, b, i16 0, c, i1 false, i1 false) */
};

typedef struct rk_ll_mma_row {
    const char *op_id;
    const char *archs[3];   /* NULL-terminated */
    const char *intrinsic;  /* the declaration key; the callee is @llvm.amdgcn.<intrinsic> */
    int form;               /* FORM_* */
    const char *ab_type;    /* the LLVM type of A and B in the call */
    int cast;               /* A and B are bitcast from their IR type (bf16) to ab_type (i16) */
    const char *c_type;
} rk_ll_mma_row;

#define RK_LL_N_MMA_ROWS 17
extern const rk_ll_mma_row rk_ll_mma_rows[RK_LL_N_MMA_ROWS];
const rk_ll_mma_row *rk_mma_row(const char *op_id);   /* NULL: no row */

/* ---- buffer access widths (llvm-ir §12.5): bytes -> intrinsic suffix and integer type ---- */

typedef struct rk_ll_width {
    long long bytes;
    const char *suffix, *type;
    /* C only, for speed: what Python builds by concatenation at each use */
    const char *load_key, *store_key, *load_temp, *store_temp;
} rk_ll_width;

#define RK_LL_N_WIDTHS 4
extern const rk_ll_width rk_ll_buffer_widths[RK_LL_N_WIDTHS];

/* ---- types (llvm-ir §4) ---- */

typedef struct rk_ll_scalar {
    const char *ir, *llvm;
    long long bytes;        /* in LDS */
} rk_ll_scalar;

#define RK_LL_N_SCALARS 6
extern const rk_ll_scalar rk_ll_scalar_types[RK_LL_N_SCALARS];
extern const char rk_ll_hex[17];

/* ---- attributes (llvm-ir §7, docs/lowering.md §4): NULL-terminated ---- */

extern const char *const rk_ll_param_attrs[];
extern const char *const rk_ll_kernel_attrs[];
extern const char *const rk_ll_sched_strategies[];

/* ---- per-op opcodes and callees (docs/lowering.md §5), by op code (NULL: not that kind) ---- */

typedef struct rk_ll_binary_call {
    const char *key, *callee;
} rk_ll_binary_call;

extern const char *const rk_ll_binary_ops[RK_N_OPS];
extern const rk_ll_binary_call rk_ll_binary_calls[RK_N_OPS];
/* DIM_NAMES = ("x", "y", "z"); C spells out, for speed, the keys Python builds as
 * ("workitem.id." | "workgroup.id.") + DIM_NAMES[dim] */
extern const char *const rk_ll_id_keys[2][3];

/* ---- names (docs/lowering.md §1) ---- */

extern const char rk_ll_name_chars[];

/* ==== lower_ll_state.c: the state of a lowering (C only) ====
 * What Python's Lowerer keeps in its dicts, lists and caches, for lower_ll.c. None of these
 * functions fails the lowering: a failed allocation sets lw->oom (checked once, at the end). */

/* ---- the LDS pool (llvm-ir §11) ---- */

typedef struct rk_ll_alloc {
    const char *name;   /* the smem_alloc result name */
    const char *type;   /* its smem type */
    long long start;    /* position of the alloc op (pre-order over every op of the kernel) */
    long long last;     /* position of the last use, -1 when unreferenced */
    long long size;     /* bytes */
    long long align;    /* 16 for 1-byte elements, else 4 */
    int exclusive;
    long long offset;   /* byte offset in the pool once placed, else -1 */
    int huge;           /* size is past RK_LL_HUGE (Python's int has no bound; see plan_lds) */
    const char *array_type; /* C only: lds_array_type(type), made at the first access */
} rk_ll_alloc;

typedef struct rk_ll_plan {
    rk_ll_alloc **allocs;   /* every tile.smem_alloc in creation order (unreferenced: offset -1) */
    int n, cap;
    long long size;         /* pool bytes, a multiple of 16 (0: no pool) */
} rk_ll_plan;

/* An allocation this large (in absolute value) is beyond any arithmetic the plan needs: C
 * refuses it when it is placed, where Python would go on with a bigger int. */
#define RK_LL_HUGE (1LL << 40)

/* ---- the lowerer ---- */

typedef struct rk_ll_block {
    const char *label;
    rk_buf lines;               /* heap, freed by rk_ll_release */
    int terminated;
    struct rk_ll_base *bases;   /* (this block, alloc) -> base pointer temp */
} rk_ll_block;

/* A binding of an IR name: names[key] (the LLVM operand text). */
typedef struct rk_ll_name {
    rk_map_key k;
    const char *text;       /* NULL until bound */
} rk_ll_name;

#define RK_LL_MEMO 64       /* the slots of the memos below, by a key's address */

typedef struct rk_lowerer {
    const rk_ir_kernel *kernel;
    const rk_ll_backend *backend;
    const rk_ll_flavor *flavor;
    long long capacity;
    rk_arena *arena;
    rk_error *err;
    rk_ll_block **blocks;
    int n_blocks, cap_blocks;
    rk_ll_block *block;
    long long block_counter;
    long long temp_counter;
    unsigned char needed[RK_LL_N_DECLS];
    rk_names names;         /* Python's names (rk_ll_name): a builder value's by its id */
    rk_map ints;            /* Python's ints */
    rk_ll_plan plan;
    const char *pool;
    const char *quote;      /* "" or "\"": the kernel name is written @name or @"name" */
    const char *suffix;     /* ".unroll<k>" per open unrolled scf.for */
    int markers;            /* an atomic carries the !amdgpu.* markers (!1) */
    int fences;             /* a barrier's fences carry the LDS-only MMRA (!2) */
    int oom;                /* an allocation or a buffer failed */
    rk_buf scratch;         /* for strings that outlive one line (freed by rk_ll_release) */
    int failed;             /* lw->err holds the first failure */
    struct {                /* Python's memo of ll_type, by the type's address */
        const char *type, *text;
    } types[RK_LL_MEMO];
    struct {                /* DECL_INDEX, by the key's address (our keys are mostly literals) */
        const char *key;
        int index;
    } decls[RK_LL_MEMO];
    struct {                /* the last tile.mma's rk_atom_types (a kernel uses one atom) */
        const char *op_id;  /* NULL: none yet */
        const char *types[3];
        int known;
    } atom;
} rk_lowerer;

/* names[key] = text; names[v.name] = text, v's entry found (or put) by its id; names.get(v.name)
 * (NULL: unbound). A NULL text is out of memory. */
void rk_ll_bind(rk_lowerer *lw, const char *key, const char *text);
void rk_ll_bind_value(rk_lowerer *lw, const rk_ir_value *v, const char *text);
const char *rk_ll_bound(rk_lowerer *lw, const rk_ir_value *v);
/* ints[key] = value; ints.get(key) into *value (-1: absent) */
void rk_ll_set_int(rk_lowerer *lw, const char *key, long long value);
int rk_ll_get_int(const rk_lowerer *lw, const char *key, long long *value);
/* ll_type's memo: t's text, or NULL when not remembered; remember returns text (NULL, and oom,
 * for a NULL text) */
const char *rk_ll_memo_type(const rk_lowerer *lw, const char *t);
const char *rk_ll_remember_type(rk_lowerer *lw, const char *t, const char *text);
/* DECL_INDEX.get(key): the row of the declaration key, or -1 */
int rk_ll_decl_row(rk_lowerer *lw, const char *key);
/* "<n x elem>" as an arena string (NULL, and oom, on failure) */
const char *rk_ll_vector_type(rk_lowerer *lw, long long n, const char *elem);

/* A new empty block labelled label, appended to the function (NULL, and oom, on failure or for a
 * NULL label). */
rk_ll_block *rk_ll_add_block(rk_lowerer *lw, const char *label);
/* The base pointer temp of allocation a in block (NULL: none yet); set it. */
const char *rk_ll_block_base(const rk_ll_block *block, const rk_ll_alloc *a);
void rk_ll_set_block_base(rk_lowerer *lw, rk_ll_block *block, const rk_ll_alloc *a, const char *base);
/* Python's Alloc(name, type, start, -1, rows * cols * elem_bytes, align, exclusive) appended to
 * plan (offset -1; huge past RK_LL_HUGE bytes); NULL, and oom, on failure. */
rk_ll_alloc *rk_ll_add_alloc(rk_lowerer *lw, rk_ll_plan *plan, const char *name, const char *type, long long start,
                             long long rows, long long cols, long long elem_bytes, int exclusive);

/* An upper bound of the module's bytes (the declarations counted in full). */
size_t rk_ll_module_size(const rk_lowerer *lw, const rk_buf *attributes, const rk_buf *signature);
/* Frees the blocks' line buffers and the scratch buffer. */
void rk_ll_release(rk_lowerer *lw);

/* Python's f32_literal: "0x" and 16 uppercase hex digits of the double holding value rounded
 * to f32 (llvm-ir §5), NUL-terminated in out; -1 when a finite value rounds to infinity. */
int rk_f32_literal(double value, char out[19]);

/* ==== lower_ll.c ==== */

/* Python's lower_kernel(kernel, arch, flavor): appends the whole `.ll` module to out and
 * returns 0. A kernel the lowering refuses returns -1 with err an internal error whose
 * message is Python's EngineFailure text ("lower: ..."), and out as it was. Out of memory
 * (the arena, a line buffer or out) is the internal error "out of memory (lower)". Every
 * temporary lives in arena or is freed before return. */
int rk_lower_kernel(const rk_ir_kernel *kernel, const char *arch, const char *flavor, rk_arena *arena, rk_buf *out,
                    rk_error *err);

#endif
