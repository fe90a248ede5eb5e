/* verify.c: the IR verifier (docs/ir.md §6): scopes, types, attrs and region structure.
 *
 * Twin of rocke_py/engine/verify.py: the same rules in the same order with the same
 * messages, function for function. A kernel that fails is an engine bug:
 * rk_verify_kernel returns the first failure's message (NULL when the kernel is well
 * formed) and the caller raises an internal error. Python's `a or b` chains of optional
 * messages are `bad = a; if (!bad) bad = b;` here. Attr comparisons follow Python's ==
 * (bool, int and float compare as numbers). */
#include <stdint.h>
#include <stdio.h>
#include <stdarg.h>
#include <string.h>
#include "ir.h"

static const char *const rk_verify_int_types[] = {"i32", "i64", NULL};
static const char *const rk_verify_i32_types[] = {"i32", NULL};
static const char *const rk_verify_logic_types[] = {"i1", "i32", NULL};
static const char *const rk_verify_float_types[] = {"f32", NULL};

/* the builder interns its types: the same pointer, usually */
static int eq(const char *a, const char *b) { return a && b && (a == b || strcmp(a, b) == 0); }

/* t in types (a NULL-terminated list), pointer first */
static int type_in(const char *t, const char *const *types)
{
    int i;
    for (i = 0; types[i]; i++)
        if (t == types[i])
            return 1;
    return rk_str_in(t, types);
}

/* `attr in (v0, v1, ...)` for ints, with Python's ==; the list ends with -1. */
static int attr_in(const rk_attr *a, const long long *values)
{
    int i;
    for (i = 0; values[i] >= 0; i++)
        if (rk_attr_py_eq_int(a, values[i]))
            return 1;
    return 0;
}

/* Python's str() of an attr value (rk_attr_py_str) as an arena string; NULL on failure. */
static const char *py_str(rk_arena *arena, const rk_attr *a)
{
    rk_buf b;
    const char *out;
    if (a && a->kind == RK_ATTR_STR)
        return a->s;
    rk_buf_init(&b);
    rk_attr_py_str(&b, a, 0);
    out = b.failed || !b.data ? NULL : rk_strndup(arena, b.data, b.len);
    rk_buf_free(&b);
    return out;
}

/* The message, or "out of memory" when the arena could not hold it (arena->failed is set,
 * which tells the caller the verdict is not to be trusted). */
static const char *msg(rk_arena *arena, const char *fmt, ...)
{
    va_list ap;
    char small[2], *out;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    out = n < 0 ? NULL : rk_alloc(arena, (size_t)n + 1);
    if (!out)
        return "out of memory";
    va_start(ap, fmt);
    vsnprintf(out, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return out;
}

/* A string made by the arena (a vec type, an element), or "" when it could not be made. */
static const char *or_empty(const char *s) { return s ? s : ""; }

/* t[0:n] in SCALARS */
static int scalar_span(const char *t, size_t n)
{
    char small[8];
    if (n >= sizeof small)
        return 0;
    memcpy(small, t, n);
    small[n] = '\0';
    return rk_ir_is_scalar(small);
}

static int valid_type(const char *t)
{
    const char *elem;
    size_t n;
    if ((t[0] == 'i' && t[1] == '3' && t[2] == '2' && !t[3]) || rk_ir_is_scalar(t) || strcmp(t, "rsrc") == 0)
        return 1;
    if (rk_is_vec(t)) {
        long long len;
        if (rk_type_vec_elem(t, &elem, &n) || !scalar_span(elem, n))
            return 0;
        len = rk_vec_len(t);
        return len != RK_IR_BAD_LEN && len >= 1;
    }
    if (rk_is_ptr(t)) {
        size_t len = strlen(t);
        const char *tail = ",global>";
        return len >= strlen(tail) && strcmp(t + len - strlen(tail), tail) == 0
               && !rk_type_elem_before_comma(t, 4, &elem, &n) && scalar_span(elem, n);
    }
    if (rk_is_smem(t))
        return !rk_type_elem_before_comma(t, 5, &elem, &n) && scalar_span(elem, n);
    return 0;
}

static const char *need(int cond, const char *message) { return cond ? NULL : message; }

/* The operand and result counts of the op's row (rk_ops), checked by run before the op's rule;
 * a row of any number of operands (-1) leaves its counts to the rule. */
static inline const char *arity(const rk_ir_op *op, rk_arena *arena)
{
    const rk_op_info *info = &rk_ops[op->code];
    if (info->operands >= 0 && (op->n_operands != info->operands || op->n_results != info->results))
        return msg(arena, "%s takes %d operands and gives %d results", op->name, info->operands, info->results);
    return NULL;
}

/* The op's attr key, handed over (*value; NULL when it is missing): the checks of the common ops
 * read each attr once. */
static const char *need_attr(const rk_ir_op *op, rk_arena *arena, const char *key, const rk_attr **value)
{
    *value = rk_attrs_get(&op->attrs, key);
    return *value ? NULL : msg(arena, "%s needs attr %s", op->name, key);
}

/* Two attrs, handed over as need_attr does; the message names the first one missing. */
static const char *need_attr_pair(const rk_ir_op *op, rk_arena *arena, const char *key_a, const rk_attr **a,
                                  const char *key_b, const rk_attr **b)
{
    const char *bad = need_attr(op, arena, key_a, a);
    return bad ? bad : need_attr(op, arena, key_b, b);
}

/* The keys that follow, NULL-terminated. */
static const char *check_attrs(const rk_ir_op *op, rk_arena *arena, ...)
{
    va_list ap;
    const char *key, *bad = NULL;
    const rk_attr *value;
    va_start(ap, arena);
    while (!bad && (key = va_arg(ap, const char *)) != NULL)
        bad = need_attr(op, arena, key, &value);
    va_end(ap);
    return bad;
}

static const rk_attr *attr(const rk_ir_op *op, const char *key) { return rk_attrs_get(&op->attrs, key); }

/* ---- one check per op kind; each returns the failure message or NULL, and runs after arity ---- */

static const char *check_constant(const rk_ir_op *op, rk_arena *arena)
{
    static const char *const types[] = {"i1", "i32", "i64", "f32", NULL};
    const char *bad, *t;
    const rk_attr *ity = NULL, *value = NULL;
    int want_float;
    bad = need_attr_pair(op, arena, "ity", &ity, "value", &value);
    if (bad)
        return bad;
    t = op->results[0].type;
    if (!rk_attr_is_str(ity, t) || !rk_str_in(t, types))
        return msg(arena, "arith.constant of type %s", t);
    want_float = strcmp(t, "f32") == 0;
    return need((value->kind == RK_ATTR_FLOAT) == want_float, "arith.constant value has the wrong tag");
}

static const char *check_constant_vec(const rk_ir_op *op, rk_arena *arena)
{
    const char *bad = check_attrs(op, arena, "ity", "value", NULL);
    return bad ? bad
               : need(rk_is_vec(op->results[0].type) && rk_attr_is_str(attr(op, "ity"), op->results[0].type),
                      "arith.constant_vec needs a vec type");
}

static const char *same_type_binary(const rk_ir_op *op, rk_arena *arena, const char *const *types)
{
    const rk_ir_value *a, *b, *r;
    a = &op->operands[0], b = &op->operands[1], r = &op->results[0];
    if (eq(a->type, b->type) && eq(b->type, r->type) && type_in(a->type, types))
        return NULL;
    return msg(arena, "%s on %s, %s -> %s", op->name, a->type, b->type, r->type);
}

static const char *check_cmp(const rk_ir_op *op, rk_arena *arena)
{
    const rk_attr *pred = NULL;
    const char *bad = need_attr(op, arena, "pred", &pred);
    if (bad)
        return bad;
    return need(eq(op->operands[0].type, "i32") && eq(op->operands[1].type, "i32") && eq(op->results[0].type, "i1")
                    && pred->kind == RK_ATTR_STR && rk_str_in(pred->s, rk_cmp_preds),
                "arith.cmp needs two i32 operands, a known pred and an i1 result");
}

static const char *check_select(const rk_ir_op *op, rk_arena *arena)
{
    (void)arena; /* the rules' signature; this one formats no message */
    const rk_ir_value *v = op->operands;
    return need(eq(v[0].type, "i1") && eq(v[1].type, v[2].type) && eq(v[2].type, op->results[0].type),
                "arith.select types");
}

static const char *check_fptrunc(const rk_ir_op *op, rk_arena *arena)
{
    const char *bad, *r;
    const rk_attr *to = NULL;
    int ok;
    bad = need_attr(op, arena, "to", &to);
    if (bad)
        return bad;
    r = op->results[0].type;
    ok = eq(op->operands[0].type, "f32") && (eq(r, "f16") || eq(r, "bf16"));
    return need(ok && rk_attr_is_str(to, r), "arith.fptrunc is f32 -> f16|bf16");
}

static int verify_numeric(rk_arena *arena, const char *t) { return rk_ir_is_scalar(or_empty(rk_vec_elem(arena, t))); }

static const char *check_bitcast(const rk_ir_op *op, rk_arena *arena)
{
    const char *bad = check_attrs(op, arena, "to", NULL), *a, *r;
    int numeric;
    if (bad)
        return bad;
    a = op->operands[0].type, r = op->results[0].type;
    numeric = verify_numeric(arena, a) && verify_numeric(arena, r);
    return need(rk_attr_is_str(attr(op, "to"), r) && numeric && rk_type_bits(a) == rk_type_bits(r),
                "arith.bitcast widths");
}

static const char *check_i32_source(const rk_ir_op *op, rk_arena *arena)
{
    return eq(op->results[0].type, "i32") ? NULL : msg(arena, "%s gives i32", op->name);
}

static const char *check_block_id(const rk_ir_op *op, rk_arena *arena)
{
    static const long long dims[] = {0, 1, 2, -1};
    const char *bad = check_i32_source(op, arena);
    if (!bad)
        bad = check_attrs(op, arena, "dim", NULL);
    return bad ? bad : need(attr_in(attr(op, "dim"), dims), "gpu.block_id dim");
}

static const char *check_thread_id(const rk_ir_op *op, rk_arena *arena)
{
    const char *bad = check_i32_source(op, arena);
    return bad ? bad : check_attrs(op, arena, "dim", NULL);
}

static const char *check_readfirstlane(const rk_ir_op *op, rk_arena *arena)
{
    (void)arena; /* the rules' signature; this one formats no message */
    return need(eq(op->operands[0].type, op->results[0].type) && eq(op->results[0].type, "i32"),
                "gpu.readfirstlane is i32");
}

static const char *check_make_rsrc(const rk_ir_op *op, rk_arena *arena)
{
    (void)arena; /* the rules' signature; this one formats no message */
    return need(rk_is_ptr(op->operands[0].type) && eq(op->operands[1].type, "i32") && eq(op->results[0].type, "rsrc"),
                "tile.make_buffer_rsrc(ptr, i32) -> rsrc");
}

static const long long rk_verify_access_bits[] = {16, 32, 64, 128, -1};

static int bits_in(long long bits, const long long *values)
{
    int i;
    for (i = 0; values[i] >= 0; i++)
        if (bits == values[i])
            return 1;
    return 0;
}

static const char *check_buffer_load(const rk_ir_op *op, rk_arena *arena)
{
    const char *bad, *t, *elem;
    const rk_attr *elem_attr = NULL, *n_attr = NULL;
    long long n;
    int ok;
    bad = need_attr_pair(op, arena, "elem", &elem_attr, "n", &n_attr);
    if (bad)
        return bad;
    t = op->results[0].type;
    elem = rk_vec_elem(arena, t);
    n = rk_vec_len(t);
    ok = eq(op->operands[0].type, "rsrc") && eq(op->operands[1].type, "i32") && elem && rk_attr_is_str(elem_attr, elem)
         && n != RK_IR_BAD_LEN && rk_attr_py_eq_int(n_attr, n) && rk_ir_is_scalar(elem)
         && bits_in(rk_type_bits(t), rk_verify_access_bits);
    return need(ok, "tile.buffer_load(rsrc, i32) of 2, 4, 8 or 16 bytes");
}

static const char *check_buffer_store(const rk_ir_op *op, rk_arena *arena)
{
    const rk_ir_value *v = op->operands;
    return need(eq(v[0].type, "rsrc") && eq(v[1].type, "i32") && verify_numeric(arena, v[2].type)
                    && bits_in(rk_type_bits(v[2].type), rk_verify_access_bits) && !eq(v[2].type, "i1"),
                "tile.buffer_store(rsrc, i32, 2|4|8|16 bytes)");
}

static const char *check_atomic_fadd(const rk_ir_op *op, rk_arena *arena)
{
    static const char *const values[] = {"f32", "vec<f16x2>", "vec<bf16x2>", NULL};
    const rk_ir_value *v = op->operands;
    int ok = rk_is_ptr(v[0].type) && eq(v[1].type, "i32")
             && eq(rk_vec_elem(arena, v[2].type), rk_ptr_elem(arena, v[0].type)) && rk_str_in(v[2].type, values);
    return need(ok, "tile.global_atomic_fadd(ptr<T>, i32, f32|vec<f16x2>|vec<bf16x2>)");
}

static const char *check_smem_alloc(const rk_ir_op *op, rk_arena *arena)
{
    const char *bad = check_attrs(op, arena, "type", NULL);
    return bad ? bad
               : need(rk_is_smem(op->results[0].type) && rk_attr_is_str(attr(op, "type"), op->results[0].type),
                      "tile.smem_alloc type");
}

static const char *check_align(const rk_ir_op *op, rk_arena *arena, const char *t)
{
    static const long long aligns[] = {1, 2, 4, 8, 16, -1};
    const rk_attr *align = attr(op, "align");
    int ok = align && (align->kind == RK_ATTR_INT || align->kind == RK_ATTR_BOOL) && attr_in(align, aligns)
             && align->i >= rk_elem_bytes_of(t);
    if (ok)
        return NULL;
    return msg(arena, "%s align must be a power of two in [element size, 16]", op->name);
}

static const char *check_smem_load(const rk_ir_op *op, rk_arena *arena)
{
    const char *bad = check_attrs(op, arena, "n", "align", NULL), *t;
    const rk_ir_value *v;
    long long n;
    int ok;
    if (bad)
        return bad;
    v = op->operands;
    t = op->results[0].type;
    n = rk_vec_len(t);
    ok = rk_is_smem(v[0].type) && eq(v[1].type, "i32") && eq(v[2].type, "i32")
         && eq(rk_vec_elem(arena, t), rk_smem_elem(arena, v[0].type)) && n != RK_IR_BAD_LEN
         && rk_attr_py_eq_int(attr(op, "n"), n);
    bad = need(ok, "tile.smem_load(smem<T>, i32, i32) -> T|vec<TxN>");
    return bad ? bad : check_align(op, arena, t);
}

static const char *check_smem_store(const rk_ir_op *op, rk_arena *arena)
{
    const char *bad = check_attrs(op, arena, "align", NULL);
    const rk_ir_value *v;
    int ok;
    if (bad)
        return bad;
    v = op->operands;
    ok = rk_is_smem(v[0].type) && eq(v[1].type, "i32") && eq(v[2].type, "i32")
         && eq(rk_vec_elem(arena, v[3].type), rk_smem_elem(arena, v[0].type));
    bad = need(ok, "tile.smem_store(smem<T>, i32, i32, T|vec<TxN>)");
    return bad ? bad : check_align(op, arena, v[3].type);
}

/* The rule of an op whose row's counts (arity) say all there is to check. */
static const char *counts_only(const rk_ir_op *op, rk_arena *arena)
{
    (void)op, (void)arena;
    return NULL;
}

static const char *check_smem_addr(const rk_ir_op *op, rk_arena *arena)
{
    (void)arena; /* the rules' signature; this one formats no message */
    return need(rk_is_smem(op->operands[0].type) && eq(op->results[0].type, "i32"), "tile.smem_addr(smem) -> i32");
}

static const char *transpose_read(const rk_ir_op *op, rk_arena *arena, int width)
{
    const rk_ir_value *v = op->operands;
    const char *elem;
    int ok;
    elem = rk_is_smem(v[0].type) ? rk_smem_elem(arena, v[0].type) : NULL;
    ok = elem && (eq(elem, "f16") || eq(elem, "bf16")) && eq(v[1].type, "i32") && eq(v[2].type, "i32")
         && eq(op->results[0].type, rk_vec(arena, elem, width));
    if (ok)
        return NULL;
    return msg(arena, "%s(smem<f16|bf16>, i32, i32) -> vec<Tx%d>", op->name, width);
}

static const char *check_async_load_lds(const rk_ir_op *op, rk_arena *arena)
{
    static const long long dwords[] = {1, 3, 4, -1};
    const char *bad = check_attrs(op, arena, "dwords", "aux", NULL);
    const rk_ir_value *v;
    if (bad)
        return bad;
    v = op->operands;
    return need(eq(v[0].type, "rsrc") && eq(v[1].type, "i32") && eq(v[2].type, "i32")
                    && attr_in(attr(op, "dwords"), dwords),
                "tile.async_buffer_load_lds(rsrc, i32, i32) with dwords 1, 3 or 4");
}

static const char *check_waitcnt(const rk_ir_op *op, rk_arena *arena) { return check_attrs(op, arena, "vmcnt", NULL); }

/* Python's 0 <= index < n (an index that is not a number fails). */
static int index_in(const rk_attr *index, long long n)
{
    return n != RK_IR_BAD_LEN && rk_attr_py_cmp_int(index, 0) >= 0 && rk_attr_py_cmp_int(index, n) == -1;
}

static const char *check_extract(const rk_ir_op *op, rk_arena *arena)
{
    const rk_ir_value *v;
    const rk_attr *index = NULL;
    const char *bad = need_attr(op, arena, "index", &index);
    int ok;
    if (bad)
        return bad;
    v = &op->operands[0];
    ok = rk_is_vec(v->type) && eq(op->results[0].type, rk_vec_elem(arena, v->type))
         && index_in(index, rk_vec_len(v->type));
    return need(ok, "vector.extract element type or index");
}

static const char *check_insert(const rk_ir_op *op, rk_arena *arena)
{
    const char *bad = check_attrs(op, arena, "index", NULL);
    const rk_ir_value *v, *x;
    int ok;
    if (bad)
        return bad;
    v = &op->operands[0], x = &op->operands[1];
    ok = rk_is_vec(v->type) && eq(x->type, rk_vec_elem(arena, v->type)) && eq(op->results[0].type, v->type)
         && index_in(attr(op, "index"), rk_vec_len(v->type));
    return need(ok, "vector.insert types or index");
}

static const char *check_from_elements(const rk_ir_op *op, rk_arena *arena)
{
    const char *t;
    int i, ok;
    if (op->n_results != 1 || op->n_operands == 0)
        return "vector.from_elements takes operands and gives 1 result";
    t = op->operands[0].type;
    ok = 1;
    for (i = 0; i < op->n_operands; i++)
        ok = ok && eq(op->operands[i].type, t);
    ok = ok && rk_ir_is_scalar(t) && eq(op->results[0].type, rk_vec(arena, t, op->n_operands));
    return need(ok, "vector.from_elements types");
}

static const char *check_concat(const rk_ir_op *op, rk_arena *arena)
{
    const char *elem;
    long long na, nb;
    int ok;
    elem = rk_vec_elem(arena, op->operands[0].type);
    na = rk_vec_len(op->operands[0].type);
    nb = rk_vec_len(op->operands[1].type);
    ok = elem && eq(elem, rk_vec_elem(arena, op->operands[1].type)) && na != RK_IR_BAD_LEN && nb != RK_IR_BAD_LEN
         && eq(op->results[0].type, rk_vec(arena, elem, na + nb));
    return need(ok, "vector.concat types");
}

static const char *check_mma(const rk_ir_op *op, rk_arena *arena)
{
    const char *bad = check_attrs(op, arena, "op_id", NULL), *op_id, *types[3];
    int known;
    if (bad)
        return bad;
    op_id = py_str(arena, attr(op, "op_id"));
    if (!op_id)
        return "out of memory";
    known = rk_atom_types(arena, op_id, types);
    if (known < 0)
        return "out of memory";
    if (known == 0)
        return msg(arena, "tile.mma: unknown op_id %s", op_id);
    if (eq(op->operands[0].type, types[0]) && eq(op->operands[1].type, types[1]) && eq(op->operands[2].type, types[2])
        && eq(op->results[0].type, types[2]))
        return NULL;
    return msg(arena, "tile.mma %s operand types", op_id);
}

static const char *check_sched_group_barrier(const rk_ir_op *op, rk_arena *arena)
{
    return check_attrs(op, arena, "mask", "size", "sync_id", NULL);
}

static const char *check_sched_barrier(const rk_ir_op *op, rk_arena *arena)
{
    return check_attrs(op, arena, "mask", NULL);
}

static const char *check_setprio(const rk_ir_op *op, rk_arena *arena) { return check_attrs(op, arena, "prio", NULL); }

/* CHECKS, by op code: a plain check, or same_type_binary(types), or transpose_read(width);
 * scf.for, scf.if and scf.yield are checked in verify_op (they need the scope). */
typedef const char *(*rk_verify_check_fn)(const rk_ir_op *op, rk_arena *arena);

typedef struct rk_verify_rule {
    rk_verify_check_fn check;
    const char *const *types;
    int width;
} rk_verify_rule;

static const rk_verify_rule rk_verify_checks[RK_N_OPS] = {
    [RK_OP_CONSTANT] = {check_constant, NULL, 0},
    [RK_OP_CONSTANT_VEC] = {check_constant_vec, NULL, 0},
    [RK_OP_ADD] = {NULL, rk_verify_int_types, 0},
    [RK_OP_SUB] = {NULL, rk_verify_int_types, 0},
    [RK_OP_MUL] = {NULL, rk_verify_int_types, 0},
    [RK_OP_DIV] = {NULL, rk_verify_i32_types, 0},
    [RK_OP_MOD] = {NULL, rk_verify_i32_types, 0},
    [RK_OP_MIN] = {NULL, rk_verify_i32_types, 0},
    [RK_OP_MAX] = {NULL, rk_verify_i32_types, 0},
    [RK_OP_AND] = {NULL, rk_verify_logic_types, 0},
    [RK_OP_OR] = {NULL, rk_verify_logic_types, 0},
    [RK_OP_CMP] = {check_cmp, NULL, 0},
    [RK_OP_SELECT] = {check_select, NULL, 0},
    [RK_OP_FADD] = {NULL, rk_verify_float_types, 0},
    [RK_OP_FMUL] = {NULL, rk_verify_float_types, 0},
    [RK_OP_FMAX] = {NULL, rk_verify_float_types, 0},
    [RK_OP_FMIN] = {NULL, rk_verify_float_types, 0},
    [RK_OP_FPTRUNC] = {check_fptrunc, NULL, 0},
    [RK_OP_BITCAST] = {check_bitcast, NULL, 0},
    [RK_OP_THREAD_ID] = {check_thread_id, NULL, 0},
    [RK_OP_BLOCK_ID] = {check_block_id, NULL, 0},
    [RK_OP_LANE_ID] = {check_i32_source, NULL, 0},
    [RK_OP_READFIRSTLANE] = {check_readfirstlane, NULL, 0},
    [RK_OP_MAKE_BUFFER_RSRC] = {check_make_rsrc, NULL, 0},
    [RK_OP_BUFFER_LOAD] = {check_buffer_load, NULL, 0},
    [RK_OP_BUFFER_STORE] = {check_buffer_store, NULL, 0},
    [RK_OP_GLOBAL_ATOMIC_FADD] = {check_atomic_fadd, NULL, 0},
    [RK_OP_SMEM_ALLOC] = {check_smem_alloc, NULL, 0},
    [RK_OP_SMEM_LOAD] = {check_smem_load, NULL, 0},
    [RK_OP_SMEM_STORE] = {check_smem_store, NULL, 0},
    [RK_OP_SMEM_ADDR] = {check_smem_addr, NULL, 0},
    [RK_OP_DS_READ_TR16_B64] = {NULL, NULL, 4},
    [RK_OP_DS_READ_TR16_B128] = {NULL, NULL, 8},
    [RK_OP_ASYNC_BUFFER_LOAD_LDS] = {check_async_load_lds, NULL, 0},
    [RK_OP_S_WAITCNT] = {check_waitcnt, NULL, 0},
    [RK_OP_SYNC] = {counts_only, NULL, 0},
    [RK_OP_SYNC_LDS_ONLY] = {counts_only, NULL, 0},
    [RK_OP_EXTRACT] = {check_extract, NULL, 0},
    [RK_OP_INSERT] = {check_insert, NULL, 0},
    [RK_OP_FROM_ELEMENTS] = {check_from_elements, NULL, 0},
    [RK_OP_CONCAT] = {check_concat, NULL, 0},
    [RK_OP_MMA] = {check_mma, NULL, 0},
    [RK_OP_SCHED_GROUP_BARRIER] = {check_sched_group_barrier, NULL, 0},
    [RK_OP_SCHED_BARRIER] = {check_sched_barrier, NULL, 0},
    [RK_OP_S_SETPRIO] = {check_setprio, NULL, 0},
    [RK_OP_RETURN] = {counts_only, NULL, 0},
};

/* The rule of a code; NULL for an unknown op and the three checked in verify_op. */
static const rk_verify_rule *rule_for(int code)
{
    const rk_verify_rule *rule;
    if (code < 0 || code >= RK_N_OPS)
        return NULL;
    rule = &rk_verify_checks[code];
    return rule->check || rule->types || rule->width ? rule : NULL;
}

/* The op's arity, then its rule (which may then take its operands and results apart). */
static const char *run(const rk_verify_rule *rule, const rk_ir_op *op, rk_arena *arena)
{
    const char *bad = arity(op, arena);
    if (bad)
        return bad;
    if (rule->types)
        return same_type_binary(op, arena, rule->types);
    if (rule->width)
        return transpose_read(op, arena, rule->width);
    return rule->check(op, arena);
}

/* ---- Scope: visible names -> types, one frame per open region ----
 * Every name ever defined is in one hash table (Python's `defined`); a name is visible
 * while the frame that defined it is open (a frame's names are hidden when it is dropped). */
typedef struct rk_verify_name rk_verify_name;
struct rk_verify_name {
    rk_map_key k;             /* the name; k.aux: visible (1) or hidden (0) */
    const char *type;
    rk_verify_name *frame_next;
};

#define RK_VERIFY_TYPE_CACHE 64

typedef struct rk_verify_scope {
    rk_arena *arena;
    const char *valid[RK_VERIFY_TYPE_CACHE]; /* types found valid, by address (Python's valid set) */
    rk_names names;           /* name -> rk_verify_name, every name ever defined (a builder
                               * value's by the number its name ends with, its id) */
    rk_verify_name **frames;  /* per open frame: its names, newest first */
    int n_frames, cap_frames;
} rk_verify_scope;

static int push_frame(rk_verify_scope *scope)
{
    if (scope->n_frames == scope->cap_frames) {
        int cap = scope->cap_frames ? scope->cap_frames * 2 : 16;
        rk_verify_name **frames = rk_alloc(scope->arena, (size_t)cap * sizeof *frames);
        if (!frames)
            return -1;
        if (scope->n_frames)
            memcpy(frames, scope->frames, (size_t)scope->n_frames * sizeof *frames);
        scope->frames = frames;
        scope->cap_frames = cap;
    }
    scope->frames[scope->n_frames++] = NULL;
    return 0;
}

static void pop_frame(rk_verify_scope *scope)
{
    rk_verify_name *entry;
    scope->n_frames--;
    for (entry = scope->frames[scope->n_frames]; entry; entry = entry->frame_next)
        entry->k.aux = 0;
}

/* valid_type(type), remembered by the type's address: a type name is never changed while
 * the kernel is verified, and the builder interns them, so most checks are one compare. */
static inline int type_valid(rk_verify_scope *scope, const char *type)
{
    const char **memo = &scope->valid[((size_t)(uintptr_t)type >> 3) % RK_VERIFY_TYPE_CACHE];
    if (*memo == type)
        return 1;
    if (!valid_type(type))
        return 0;
    *memo = type;
    return 1;
}

/* Defines name, put by id when it is a builder value's (its name ends with the id; 0: by the
 * name). Every successful definition has a name of its own (a second one fails), so a builder
 * value's entry, once defined, is at its name's number, its id: lookup finds it there when the
 * use carries that very name string. */
static inline const char *define(rk_verify_scope *scope, const char *name, const char *type, long long id)
{
    rk_verify_name *entry;
    int added;
    /* the first failure ends verification, so a name added to the table here stays unread */
    entry = rk_names_put_at(&scope->names, scope->arena, id, name, &added);
    if (!entry)
        return "out of memory";
    if (!added)
        return msg(scope->arena, "%s is defined twice", name);
    if (!type_valid(scope, type))
        return msg(scope->arena, "%s has an invalid type %s", name, type);
    entry->type = type;
    entry->k.aux = 1;
    entry->frame_next = scope->frames[scope->n_frames - 1];
    scope->frames[scope->n_frames - 1] = entry;
    return NULL;
}

static inline const char *lookup(const rk_verify_scope *scope, const rk_ir_value *v)
{
    const rk_verify_name *entry = rk_names_at(&scope->names, v->id, v->name);
    if (!entry)
        entry = rk_names_get(&scope->names, v->name);
    return entry && entry->k.aux ? entry->type : NULL;
}

static const char *verify_region(const rk_ir_region *region, rk_verify_scope *scope, const char *where,
                                 int allow_yield);

/* `arg` is an iter_args entry {name, type}: "scf.for iter_arg, init and result types
 * differ" unless it is a map whose type is init's. */
static int arg_matches(const rk_attr *arg, const char *init_type)
{
    return arg->kind == RK_ATTR_MAP && rk_attr_is_str(rk_attrs_get(&arg->map, "type"), init_type);
}

/* Registers the iv and the iter_args in a new frame and verifies the body under them. */
static const char *for_body(const rk_ir_op *op, const rk_attr *iter_args, rk_verify_scope *scope, const char *where)
{
    const char *bad, *iv = py_str(scope->arena, attr(op, "iv"));
    int i;
    if (!iv || push_frame(scope))
        return "out of memory";
    bad = define(scope, iv, "i32", 0);
    for (i = 0; !bad && i < iter_args->n; i++) {
        const rk_attr *name = rk_attrs_get(&iter_args->items[i]->map, "name");
        const rk_attr *type = rk_attrs_get(&iter_args->items[i]->map, "type");
        const char *text = name ? py_str(scope->arena, name) : NULL;
        if (!name) /* Python raises KeyError here */
            bad = "scf.for iter_arg has no name";
        else
            bad = text ? define(scope, text, type->s, 0) : "out of memory";
    }
    if (!bad) {
        const char *inner = msg(scope->arena, "%s.body", where);
        bad = verify_region(op->regions[0], scope, inner, 1);
    }
    pop_frame(scope);
    return bad;
}

static const char *check_for(const rk_ir_op *op, rk_verify_scope *scope, const char *where)
{
    const rk_attr *iter_args;
    const rk_ir_region *body;
    const rk_ir_op *last;
    const char *bad;
    int n_inits, i;
    if (op->n_operands < 3 || op->n_regions != 1 || strcmp(op->regions[0]->name, rk_ops[RK_OP_FOR].region) != 0)
        return "scf.for needs lb, ub, step and a @body region";
    bad = check_attrs(op, scope->arena, "iv", "iv_type", "iter_args", NULL);
    if (bad)
        return bad;
    for (i = 0; i < 3; i++)
        if (!eq(op->operands[i].type, "i32"))
            return "scf.for bounds and iv must be i32";
    if (!rk_attr_is_str(attr(op, "iv_type"), "i32"))
        return "scf.for bounds and iv must be i32";
    iter_args = attr(op, "iter_args");
    n_inits = op->n_operands - 3;
    if (iter_args->kind != RK_ATTR_LIST || iter_args->n != n_inits || op->n_results != n_inits)
        return "scf.for iter_args, inits and results differ in number";
    for (i = 0; i < n_inits; i++) {
        const char *init = op->operands[3 + i].type;
        if (!arg_matches(iter_args->items[i], init) || !eq(op->results[i].type, init))
            return "scf.for iter_arg, init and result types differ";
    }
    body = op->regions[0];
    last = body->n_ops ? body->ops[body->n_ops - 1] : NULL;
    if (!last || last->code != RK_OP_YIELD)
        return "scf.for body must end with scf.yield";
    if (last->n_operands != n_inits)
        return "scf.yield does not match the iter_args";
    for (i = 0; i < n_inits; i++)
        if (!eq(last->operands[i].type, op->operands[3 + i].type))
            return "scf.yield does not match the iter_args";
    return for_body(op, iter_args, scope, where);
}

static const char *check_if(const rk_ir_op *op, rk_verify_scope *scope, const char *where)
{
    const char *bad;
    if (op->n_operands != 1 || !eq(op->operands[0].type, "i1") || op->n_results)
        return "scf.if takes one i1 condition and gives no results";
    if (op->n_regions != 1 || strcmp(op->regions[0]->name, rk_ops[RK_OP_IF].region) != 0)
        return "scf.if needs a @then region";
    if (push_frame(scope))
        return "out of memory";
    bad = verify_region(op->regions[0], scope, msg(scope->arena, "%s.then", where), 0);
    pop_frame(scope);
    return bad;
}

static const char *check_yield(const rk_ir_op *op, rk_arena *arena, int last_in_for)
{
    const char *bad = need(last_in_for, "scf.yield outside the end of a for body");
    if (!bad)
        bad = check_attrs(op, arena, "num", NULL);
    return bad ? bad : need(rk_attr_py_eq_int(attr(op, "num"), op->n_operands) && !op->n_results, "scf.yield num");
}

static const char *verify_op(const rk_ir_op *op, rk_verify_scope *scope, const char *where, int last_in_for)
{
    const rk_verify_rule *rule;
    const char *bad;
    int i;
    for (i = 0; i < op->n_operands; i++) {
        const rk_ir_value *v = &op->operands[i];
        const char *t = lookup(scope, v);
        if (!t)
            return msg(scope->arena, "%s is not visible", v->name);
        if (t != v->type && strcmp(t, v->type) != 0) /* the same string, usually */
            return msg(scope->arena, "%s is used as %s but defined as %s", v->name, v->type, t);
    }
    if (op->code == RK_OP_FOR)
        bad = check_for(op, scope, where);
    else if (op->code == RK_OP_IF)
        bad = check_if(op, scope, where);
    else if (op->code == RK_OP_YIELD)
        bad = check_yield(op, scope->arena, last_in_for);
    else if ((rule = rule_for(op->code)) != NULL) {
        bad = op->n_regions ? msg(scope->arena, "%s has no regions", op->name) : NULL;
        if (!bad)
            bad = run(rule, op, scope->arena);
    } else
        bad = msg(scope->arena, "unknown op %s", op->name);
    if (bad)
        return bad;
    for (i = 0; i < op->n_results; i++) {
        bad = define(scope, op->results[i].name, op->results[i].type, op->results[i].id);
        if (bad)
            return bad;
    }
    return NULL;
}

static const char *verify_region(const rk_ir_region *region, rk_verify_scope *scope, const char *where, int allow_yield)
{
    int index;
    for (index = 0; index < region->n_ops; index++) {
        const rk_ir_op *op = region->ops[index];
        int last = allow_yield && index == region->n_ops - 1;
        const char *bad = verify_op(op, scope, where, last);
        if (bad)
            return msg(scope->arena, "%s op %d (%s): %s", where, index, op->name, bad);
    }
    return NULL;
}

/* The names the ops of region define (results, and each scf.for's iv and iter_args): the
 * scope's table is sized once. */
static size_t count_names(const rk_ir_region *region)
{
    size_t n = 0;
    int i, j;
    for (i = 0; i < region->n_ops; i++) {
        const rk_ir_op *op = region->ops[i];
        n += (size_t)op->n_results + (op->n_regions ? 1u + (size_t)op->n_results : 0u);
        for (j = 0; j < op->n_regions; j++)
            n += count_names(op->regions[j]);
    }
    return n;
}

const char *rk_verify_kernel(const rk_ir_kernel *kernel, rk_arena *arena)
{
    rk_verify_scope scope;
    const rk_ir_region *entry = kernel->entry;
    size_t names;
    int i;
    memset(&scope, 0, sizeof scope);
    scope.arena = arena;
    /* the table sized once: the builder's names end in their id, so its count of values
     * bounds them (a few more for loop names), or a walk over a kernel made without ids */
    names = kernel->n_ids > 0 ? (size_t)kernel->n_ids + 64 : count_names(entry) * 5 / 4 + 80;
    if (push_frame(&scope) || rk_names_init(&scope.names, arena, names, sizeof(rk_verify_name)))
        return "out of memory";
    for (i = 0; i < kernel->n_params; i++) {
        const rk_ir_value *v = &kernel->params[i]->value;
        const char *bad = define(&scope, v->name, v->type, v->id);
        if (bad)
            return msg(arena, "param: %s", bad);
    }
    if (strcmp(entry->name, "entry") != 0)
        return "the kernel region must be @entry";
    if (!entry->n_ops || entry->ops[entry->n_ops - 1]->code != RK_OP_RETURN)
        return "the kernel must end with cf.return";
    return verify_region(entry, &scope, "entry", 0);
}
