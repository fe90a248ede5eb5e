/* ir.h: the kernel IR of docs/ir.md and its three companions: the builder (ir.c), the
 * `rocke.ir v1` printer (print_ir.c), the verifier (verify.c) and the MMA atom table
 * (mma_atoms.c). Twins of rocke_py/engine/{ir,print_ir,verify,mma_atoms}.py, function for
 * function in the same order.
 *
 * A type is its canonical name string, the same bytes as Python's (docs/ir.md §1). Every
 * object lives in the caller's arena: nothing here is freed on its own. Strings handed to
 * the builder are copied into the arena, except attr-map keys, which must outlive the
 * kernel (a literal or an arena string); values handed to it must outlive the kernel too
 * (the builder's own, params and rk_ir_make_value's do).
 *
 * Where Python raises on input the builders never produce (a type name that is not
 * canonical, e.g. "vec<f32>"; an smem op on a value whose type has no ','), the C side fails
 * the builder or reports an invalid type instead; tests/parity/test_ir_script_parity.py keeps its
 * scripts inside the domain where both engines are defined. */
#ifndef ROCKE_IR_H
#define ROCKE_IR_H

#include "internal.h"
#include "ops.h"

/* ---- attr values: Python's bool | int | float | str | list | dict ---- */
typedef enum rk_attr_kind {
    RK_ATTR_BOOL,
    RK_ATTR_INT,
    RK_ATTR_FLOAT,
    RK_ATTR_STR,
    RK_ATTR_LIST,
    RK_ATTR_MAP
} rk_attr_kind;

typedef struct rk_attr rk_attr;

typedef struct rk_attr_pair {
    const char *key;
    const rk_attr *value;
} rk_attr_pair;

/* A dict: unique keys in insertion order (the printer sorts them). {NULL, 0, 0} is empty. */
typedef struct rk_attrs {
    rk_attr_pair *items;
    int n, cap;
} rk_attrs;

struct rk_attr {
    rk_attr_kind kind;
    long long i;              /* BOOL (0/1), INT */
    double f;                 /* FLOAT */
    const char *s;            /* STR (arena, NUL-terminated) */
    const rk_attr **items;    /* LIST */
    int n, cap;
    rk_attrs map;             /* MAP */
};

/* ---- the IR objects ---- */
typedef struct rk_ir_value {
    const char *name;         /* "%add7", "%A", "%k0" */
    const char *type;
    long long id;             /* C only: the builder's number of the value (its counter), which the
                               * name ends with; 0 for a value made elsewhere (params, loop names) and
                               * for a hint that ends in a digit; the verifier and the lowering put
                               * and find a name's entry by it */
} rk_ir_value;

typedef struct rk_ir_region rk_ir_region;

typedef struct rk_ir_op {     /* pointers first, then the counts: no padding (a kernel has many) */
    const char *name;         /* "arith.add" */
    rk_ir_value *operands;
    rk_ir_value *results;     /* never NULL (an empty array when the op has no result) */
    rk_ir_region **regions;
    rk_attrs attrs;
    int code;                 /* its row of rk_ops (ops.h), RK_OP_UNKNOWN for another name */
    int n_operands;
    int n_results;
    int n_regions;
} rk_ir_op;

struct rk_ir_region {
    const char *name;         /* "entry", "body", "then" */
    rk_ir_op **ops;
    int n_ops, cap_ops;
};

typedef struct rk_ir_param {
    rk_ir_value value;
    rk_attrs attrs;
} rk_ir_param;

typedef struct rk_ir_kernel {
    long long n_ids;          /* C only: 1 + the largest value id (0: no ids) */
    const char *name;
    rk_attrs attrs;
    rk_ir_param **params;
    int n_params, cap_params;
    rk_ir_region *entry;
} rk_ir_kernel;

/* An open scf.for: its op, induction variable and carried values (visible in the body). */
typedef struct rk_ir_for {
    rk_ir_op *op;
    rk_ir_value iv;
    rk_ir_value *args;
    int n_args;
} rk_ir_for;

/* One (name, init) pair of Builder.for_begin's `carried`. */
typedef struct rk_ir_carried {
    const char *name;         /* without the '%' */
    const rk_ir_value *init;
} rk_ir_carried;

typedef struct rk_b_const rk_b_const;   /* a cached constant (ir.c) */

#define RK_B_TYPE_CACHE 64
#define RK_B_SMALL_I32 256
#define RK_B_SMALL_INT 256
#define RK_B_OTHER_I32 64

typedef struct rk_builder {
    rk_arena *arena;
    rk_ir_kernel *kernel;
    long long counter;          /* one per kernel: every result of every op */
    char digits[RK_INT_DIGITS]; /* str(counter + 1): the next value's number */
    size_t n_digits;
    rk_ir_region **regions;     /* the open regions, innermost last */
    rk_b_const **frames;        /* per open region: its constants, newest first */
    int n_regions, cap_regions;
    rk_map consts;              /* (type, value) key -> its constant, live while its region is open */
    rk_map types;               /* every non-scalar type name of a value, once (rk_map_key entries) */
    const char *type_cache[RK_B_TYPE_CACHE]; /* interned type names, by their address */
    rk_b_const *small_i32[RK_B_SMALL_I32];   /* the consts entry of i32 0..RK_B_SMALL_I32-1, once made */
    rk_b_const *other_i32[RK_B_OTHER_I32];   /* the consts entry of another i32 last asked for, by its
                                              * value modulo RK_B_OTHER_I32 (the entry keeps the value) */
    rk_attr *int_attrs[RK_B_SMALL_INT];      /* the shared int attr values 0..RK_B_SMALL_INT-1 */
    struct rk_b_type_attr {
        const char *type;
        rk_attr *attr;
    } type_attrs[RK_B_TYPE_CACHE];           /* str attrs of interned type names, by address */
    long long op_limit;         /* the hard size limit: the op past it fails (0: unlimited;
                                 * the kernel builder sets its bound, docs/kernels.md §9) */
    long long num_ops;
    int failed;                 /* sticky: once set, every call returns NULL */
    const char *error;          /* "builder: ..." (arena or static) */
} rk_builder;

/* ==== ir.c ==== */

/* SCALARS and SCALAR_BITS (0 for a non-scalar, where Python's dict raises). */
int rk_ir_is_scalar(const char *t);
long long rk_ir_scalar_bits(const char *t);

/* attr values and maps (arena; NULL / -1 when an allocation failed) */
rk_attr *rk_attr_bool(rk_arena *arena, int value);
rk_attr *rk_attr_int(rk_arena *arena, long long value);
rk_attr *rk_attr_float(rk_arena *arena, double value);
rk_attr *rk_attr_str(rk_arena *arena, const char *value);   /* copies value */
rk_attr *rk_attr_list(rk_arena *arena);
rk_attr *rk_attr_map(rk_arena *arena);
int rk_attr_list_append(rk_arena *arena, rk_attr *list, const rk_attr *item);
/* dict[key] = value: replaces an existing key in place, else appends. */
int rk_attrs_set(rk_arena *arena, rk_attrs *map, const char *key, const rk_attr *value);
const rk_attr *rk_attrs_get(const rk_attrs *map, const char *key);  /* NULL: missing */
int rk_attrs_del(rk_attrs *map, const char *key);                    /* 1 removed, 0 missing */
int rk_attrs_copy(rk_arena *arena, rk_attrs *dst, const rk_attrs *src); /* dict(src) */
/* Python's a == b on the scalar kinds (bool and int and float compare as numbers, str by
 * bytes); a list or map equals only an equal list or map. */
int rk_attr_py_eq(const rk_attr *a, const rk_attr *b);
/* a == v for an int v, and Python's a < v / a > v (-2: unordered, i.e. not a number). */
int rk_attr_py_eq_int(const rk_attr *a, long long v);
int rk_attr_py_cmp_int(const rk_attr *a, long long v);
int rk_attr_is_str(const rk_attr *a, const char *s);
/* Python's str(a) appended to o (repr = 1: repr(a)); "None" for a NULL a. */
void rk_attr_py_str(rk_buf *o, const rk_attr *a, int repr);
/* A printf into the arena (NULL when the arena failed). */
char *rk_ir_printf(rk_arena *arena, const char *fmt, ...);

/* types (docs/ir.md §1). Constructors give arena strings (NULL on failure); the accessors
 * mirror Python's slicing. Where Python raises on a malformed name (no 'x' in a vec, no ','
 * in an smem), the C accessor gives NULL or RK_IR_BAD_LEN. */
#define RK_IR_BAD_LEN RK_TYPE_BAD_INT   /* the parser is typename.c (support.h) */
char *rk_vec(rk_arena *arena, const char *elem, long long n);
char *rk_vec_or_scalar(rk_arena *arena, const char *elem, long long n);
char *rk_ptr(rk_arena *arena, const char *elem);
char *rk_smem(rk_arena *arena, const char *elem, long long rows, long long cols);
int rk_is_vec(const char *t);
const char *rk_vec_elem(rk_arena *arena, const char *t);  /* t itself for a non-vec */
long long rk_vec_len(const char *t);                       /* 1 for a non-vec */
int rk_is_ptr(const char *t);
const char *rk_ptr_elem(rk_arena *arena, const char *t);
int rk_is_smem(const char *t);
const char *rk_smem_elem(rk_arena *arena, const char *t);
int rk_smem_shape(const char *t, long long *rows, long long *cols); /* -1: malformed */
long long rk_type_bits(const char *t);      /* 0 when the element is not a scalar */
long long rk_elem_bytes_of(const char *t);

/* the IR objects */
rk_ir_value *rk_ir_make_value(rk_arena *arena, const char *name, const char *type);
rk_ir_region *rk_ir_make_region(rk_arena *arena, const char *name);
int rk_ir_region_append(rk_arena *arena, rk_ir_region *region, rk_ir_op *op);

/* the builder: Builder's methods as rk_b_<method>. A failure is sticky (b->failed,
 * b->error) and surfaces through rk_b_check as an internal error, never a rejection. */
void rk_b_init(rk_builder *b, rk_arena *arena, const char *name, const rk_attrs *attrs);
int rk_b_check(const rk_builder *b, rk_error *err);  /* 0, or -1 with err (internal) */
void rk_b_push_region(rk_builder *b, rk_ir_region *region);
void rk_b_pop_region(rk_builder *b);
rk_ir_value *rk_b_constant(rk_builder *b, const char *ity, const rk_attr *value);
rk_ir_value *rk_b_param(rk_builder *b, const char *name, const char *type, const rk_attrs *attrs);
rk_ir_value *rk_b_new_value(rk_builder *b, const char *hint, const char *type);
/* NULL hint or type: the op has no result (and NULL is returned). */
rk_ir_value *rk_b_op(rk_builder *b, const char *name, const rk_ir_value *const *operands, int n_operands,
                     const char *hint, const char *type, const rk_attrs *attrs);
rk_ir_value *rk_b_value_op(rk_builder *b, const char *name, const rk_ir_value *const *operands, int n_operands,
                           const char *hint, const char *type, const rk_attrs *attrs);
rk_ir_value *rk_b_const_i32(rk_builder *b, long long value);
rk_ir_value *rk_b_const_i1(rk_builder *b, int value);
rk_ir_value *rk_b_const_f32(rk_builder *b, long long value);
rk_ir_value *rk_b_zeros(rk_builder *b, const char *type);
rk_ir_value *rk_b_binary(rk_builder *b, const char *name, const char *hint, const rk_ir_value *x, const rk_ir_value *y);
/* The binary ops of the table, a method each: X(code, method) gives rk_b_<method>(b, x, y), the
 * op RK_OP_<code> of x and y of one type (Python: Builder.<method>, binary_of with the code
 * bound), in the table's order. */
#define RK_B_BINARY_OPS(X) \
    X(ADD, add) \
    X(SUB, sub) \
    X(MUL, mul) \
    X(DIV, div) \
    X(MOD, mod) \
    X(MIN, min) \
    X(MAX, max) \
    X(AND, and) \
    X(OR, or) \
    X(FADD, fadd) \
    X(FMUL, fmul) \
    X(FMAX, fmax) \
    X(FMIN, fmin)
#define RK_B_BINARY_DECL(code, method) \
    rk_ir_value *rk_b_##method(rk_builder *b, const rk_ir_value *x, const rk_ir_value *y);
RK_B_BINARY_OPS(RK_B_BINARY_DECL)
#undef RK_B_BINARY_DECL
rk_ir_value *rk_b_cmp(rk_builder *b, const char *pred, const rk_ir_value *x, const rk_ir_value *y);
rk_ir_value *rk_b_select(rk_builder *b, const rk_ir_value *c, const rk_ir_value *x, const rk_ir_value *y);
rk_ir_value *rk_b_fptrunc(rk_builder *b, const rk_ir_value *x, const char *to);
rk_ir_value *rk_b_bitcast(rk_builder *b, const rk_ir_value *x, const char *to);
rk_ir_value *rk_b_thread_id(rk_builder *b);
rk_ir_value *rk_b_block_id(rk_builder *b, long long dim);
rk_ir_value *rk_b_lane_id(rk_builder *b);
rk_ir_value *rk_b_readfirstlane(rk_builder *b, const rk_ir_value *x);
rk_ir_value *rk_b_make_buffer_rsrc(rk_builder *b, const rk_ir_value *p, const rk_ir_value *nbytes);
rk_ir_value *rk_b_buffer_load(rk_builder *b, const rk_ir_value *r, const rk_ir_value *off, const char *elem,
                              long long n);
void rk_b_buffer_store(rk_builder *b, const rk_ir_value *r, const rk_ir_value *off, const rk_ir_value *v);
void rk_b_global_atomic_fadd(rk_builder *b, const rk_ir_value *p, const rk_ir_value *idx, const rk_ir_value *v);
rk_ir_value *rk_b_smem_alloc(rk_builder *b, const char *type, int exclusive);
rk_ir_value *rk_b_smem_load(rk_builder *b, const rk_ir_value *s, const rk_ir_value *row, const rk_ir_value *col,
                            long long n, long long align);
void rk_b_smem_store(rk_builder *b, const rk_ir_value *s, const rk_ir_value *row, const rk_ir_value *col,
                     const rk_ir_value *v, long long align);
rk_ir_value *rk_b_smem_addr(rk_builder *b, const rk_ir_value *s);
rk_ir_value *rk_b_ds_read_tr16_b64(rk_builder *b, const rk_ir_value *s, const rk_ir_value *row, const rk_ir_value *col);
rk_ir_value *rk_b_ds_read_tr16_b128(rk_builder *b, const rk_ir_value *s, const rk_ir_value *row,
                                    const rk_ir_value *col);
void rk_b_async_buffer_load_lds(rk_builder *b, const rk_ir_value *r, const rk_ir_value *lds_addr,
                                const rk_ir_value *off, long long dwords, long long aux);
void rk_b_s_waitcnt_vmcnt(rk_builder *b, long long vmcnt);
void rk_b_sync(rk_builder *b);
void rk_b_sync_lds_only(rk_builder *b);
rk_ir_value *rk_b_extract(rk_builder *b, const rk_ir_value *v, long long index);
rk_ir_value *rk_b_insert(rk_builder *b, const rk_ir_value *v, const rk_ir_value *x, long long index);
rk_ir_value *rk_b_from_elements(rk_builder *b, const rk_ir_value *const *xs, int n);
rk_ir_value *rk_b_concat(rk_builder *b, const rk_ir_value *x, const rk_ir_value *y);
rk_ir_value *rk_b_mma(rk_builder *b, const char *op_id, const rk_ir_value *x, const rk_ir_value *y,
                      const rk_ir_value *c);
void rk_b_sched_group_barrier(rk_builder *b, long long mask, long long size, long long sync_id);
void rk_b_sched_barrier(rk_builder *b, long long mask);
void rk_b_s_setprio(rk_builder *b, long long prio);
/* Opens an scf.for; its results are numbered now, before anything in the body. */
rk_ir_for *rk_b_for_begin(rk_builder *b, const rk_ir_value *lb, const rk_ir_value *ub, const rk_ir_value *step,
                          const char *iv, const rk_ir_carried *carried, int n_carried, int unroll);
/* The loop's results (loop->op->n_results of them; never NULL unless the builder failed). */
rk_ir_value *rk_b_for_end(rk_builder *b, rk_ir_for *loop, const rk_ir_value *const *yielded, int n_yielded);
rk_ir_op *rk_b_if_begin(rk_builder *b, const rk_ir_value *cond);
void rk_b_if_end(rk_builder *b, rk_ir_op *op);
rk_ir_kernel *rk_b_ret(rk_builder *b);

/* ==== print_ir.c: mode `ir` (docs/ir.md §5) ==== */
void rk_escape(rk_buf *out, const char *text);
void rk_format_float(rk_buf *out, double value);   /* Python's repr(float) */
void rk_tagged(rk_arena *arena, rk_buf *out, const rk_attr *value);
void rk_print_ir_attr_map(rk_arena *arena, rk_buf *out, const rk_attrs *attrs);
void rk_print_op(rk_arena *arena, rk_buf *out, const rk_ir_op *op, int depth);
void rk_print_region(rk_arena *arena, rk_buf *out, const rk_ir_region *region, int depth);
/* Appends the text to out; -1 with err (internal) when the arena or the buffer failed. */
int rk_print_ir(const rk_ir_kernel *kernel, rk_arena *arena, rk_buf *out, rk_error *err);

/* ==== verify.c: the verifier (docs/ir.md §6) ==== */
/* The first failure's message (arena or static), NULL when the kernel is well formed.
 * When arena->failed is set afterwards the verdict cannot be trusted (out of memory). */
const char *rk_verify_kernel(const rk_ir_kernel *kernel, rk_arena *arena);

/* ==== mma_atoms.c: the MMA atoms (docs/ir.md §4.5) ==== */
#define RK_OP_ID_MAX 64

typedef struct rk_atom {
    char op_id[RK_OP_ID_MAX];
    const char *kind;   /* "mfma", "wmma_gfx11", "wmma_gfx12", "wmma_gfx1250" */
    long long m, n, k;
    const char *elem;   /* IR element type of A and B */
    long long frag;     /* A/B elements per lane */
    long long c_len;    /* accumulator slots per lane */
} rk_atom;

const char *rk_mma_ir_elem(const char *dtype);  /* IR_ELEM[dtype]; NULL when unknown */
const char *rk_atom_kind(const rk_target *target);
rk_atom rk_make_atom(const char *kind, const char *elem, long long m, long long n, long long k);
rk_atom rk_atom_for(const rk_target *target, const char *dtype, long long m, long long n, long long k);
/* 1 with *out the atom an op_id names, 0 for an op_id outside docs/ir.md §4.5. */
int rk_atom_by_op_id(const char *op_id, rk_atom *out);
int rk_atom_known(const rk_atom *atom);
/* 1 with the (a, b, c) type names (arena) of op_id; 0 when unknown; -1 out of memory. */
int rk_atom_types(rk_arena *arena, const char *op_id, const char *types[3]);

#endif
