/* ir.c: the kernel IR: types, attr values, values, ops, regions, kernels, and the builder
 * that numbers values.
 *
 * Twin of rocke_py/engine/ir.py, in the same order; the ops and their semantics are
 * docs/ir.md §4. Types are their canonical name strings. The builder advances one counter
 * per kernel on every result, so the order of builder calls is the order of the names
 * (docs/ir.md §2). Everything is allocated from the caller's arena. A builder failure is
 * sticky: the first one is kept in b->error, and every later call returns NULL. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "ir.h"

static const char *const rk_ir_scalars[] = {"i1", "i32", "i64", "f16", "bf16", "f32"};
static const long long rk_ir_scalar_bit_counts[] = {1, 32, 64, 16, 16, 32};
static const size_t rk_ir_scalar_lens[] = {2, 3, 3, 3, 4, 3};
#define RK_IR_N_SCALARS 6

/* The index of t[0:n] in SCALARS, or -1 (the length first: every value's type passes here). */
static int scalar_index(const char *t, size_t n)
{
    int i;
    size_t k;
    for (i = 0; i < RK_IR_N_SCALARS; i++) {
        const char *name = rk_ir_scalars[i];
        if (rk_ir_scalar_lens[i] != n || name[0] != t[0])
            continue;
        for (k = 1; k < n && name[k] == t[k]; k++) /* at most 4 bytes: no library call */
            ;
        if (k == n)
            return i;
    }
    return -1;
}

int rk_ir_is_scalar(const char *t) { return scalar_index(t, strlen(t)) >= 0; }

long long rk_ir_scalar_bits(const char *t)
{
    int i = scalar_index(t, strlen(t));
    return i < 0 ? 0 : rk_ir_scalar_bit_counts[i];
}

/* ---- arena helpers ---- */

/* Room for one more of n items of `size` bytes (amortised doubling from first); NULL on failure. */
static void *grow(rk_arena *arena, void *items, int n, int *cap, size_t size, int first)
{
    void *bigger;
    int want;
    if (n < *cap)
        return items;
    want = *cap ? *cap * 2 : first;
    bigger = rk_alloc_raw(arena, (size_t)want * size); /* items past n are written before read */
    if (!bigger)
        return NULL;
    if (n)
        memcpy(bigger, items, (size_t)n * size);
    *cap = want;
    return bigger;
}

static char *ir_strdup(rk_arena *arena, const char *s) { return rk_strndup(arena, s, strlen(s)); }

/* The static name of a scalar type (most values' types), else NULL. */
static const char *static_scalar(const char *t, size_t n)
{
    int i = scalar_index(t, n);
    return i >= 0 ? rk_ir_scalars[i] : NULL;
}

static char *ir_vprintf(rk_arena *arena, const char *fmt, va_list ap)
{
    va_list again;
    char small[256];
    char *out;
    int n;
    va_copy(again, ap);
    n = vsnprintf(small, sizeof small, fmt, ap);
    if (n < 0) {
        va_end(again);
        return NULL;
    }
    out = rk_alloc(arena, (size_t)n + 1);
    if (out) {
        if ((size_t)n < sizeof small)
            memcpy(out, small, (size_t)n + 1);
        else
            vsnprintf(out, (size_t)n + 1, fmt, again);
    }
    va_end(again);
    return out;
}

char *rk_ir_printf(rk_arena *arena, const char *fmt, ...)
{
    va_list ap;
    char *out;
    va_start(ap, fmt);
    out = ir_vprintf(arena, fmt, ap);
    va_end(ap);
    return out;
}

/* ---- attr values (AttrValue) ---- */

/* A new attr of kind with its number (i: BOOL 0/1, INT; f: FLOAT; 0 for the others). */
static rk_attr *attr_new(rk_arena *arena, rk_attr_kind kind, long long i, double f)
{
    rk_attr *a = rk_alloc(arena, sizeof *a);
    if (a) {
        a->kind = kind;
        a->i = i;
        a->f = f;
    }
    return a;
}

rk_attr *rk_attr_bool(rk_arena *arena, int value) { return attr_new(arena, RK_ATTR_BOOL, value ? 1 : 0, 0); }

rk_attr *rk_attr_int(rk_arena *arena, long long value) { return attr_new(arena, RK_ATTR_INT, value, 0); }

rk_attr *rk_attr_float(rk_arena *arena, double value) { return attr_new(arena, RK_ATTR_FLOAT, 0, value); }

rk_attr *rk_attr_str(rk_arena *arena, const char *value)
{
    rk_attr *a = value ? attr_new(arena, RK_ATTR_STR, 0, 0) : NULL;
    if (a) {
        a->s = ir_strdup(arena, value);
        if (!a->s)
            return NULL;
    }
    return a;
}

rk_attr *rk_attr_list(rk_arena *arena) { return attr_new(arena, RK_ATTR_LIST, 0, 0); }

rk_attr *rk_attr_map(rk_arena *arena) { return attr_new(arena, RK_ATTR_MAP, 0, 0); }

int rk_attr_list_append(rk_arena *arena, rk_attr *list, const rk_attr *item)
{
    const rk_attr **items;
    if (!list || !item || list->kind != RK_ATTR_LIST)
        return -1;
    items = grow(arena, (void *)list->items, list->n, &list->cap, sizeof *items, 4);
    if (!items)
        return -1;
    items[list->n++] = item;
    list->items = items;
    return 0;
}

static int attrs_find(const rk_attrs *map, const char *key)
{
    int i;
    for (i = 0; i < map->n; i++) /* keys are mostly literals: the same pointer first */
        if (map->items[i].key == key || strcmp(map->items[i].key, key) == 0)
            return i;
    return -1;
}

int rk_attrs_set(rk_arena *arena, rk_attrs *map, const char *key, const rk_attr *value)
{
    rk_attr_pair *items;
    int at;
    if (!key || !value)
        return -1;
    at = attrs_find(map, key);
    if (at >= 0) {
        map->items[at].value = value;
        return 0;
    }
    items = grow(arena, map->items, map->n, &map->cap, sizeof *items, 2); /* most ops: 1 or 2 attrs */
    if (!items)
        return -1;
    items[map->n].key = key;
    items[map->n].value = value;
    map->n++;
    map->items = items;
    return 0;
}

const rk_attr *rk_attrs_get(const rk_attrs *map, const char *key)
{
    int at = attrs_find(map, key);
    return at < 0 ? NULL : map->items[at].value;
}

int rk_attrs_del(rk_attrs *map, const char *key)
{
    int at = attrs_find(map, key);
    if (at < 0)
        return 0;
    memmove(map->items + at, map->items + at + 1, (size_t)(map->n - at - 1) * sizeof *map->items);
    map->n--;
    return 1;
}

int rk_attrs_copy(rk_arena *arena, rk_attrs *dst, const rk_attrs *src)
{
    int i;
    dst->items = NULL;
    dst->n = dst->cap = 0;
    for (i = 0; src && i < src->n; i++)
        if (rk_attrs_set(arena, dst, src->items[i].key, src->items[i].value))
            return -1;
    return 0;
}

/* Python's comparison of a float with an int, exactly: -1, 0, 1, or 2 for a NaN. */
static int cmp_float_int(double d, long long v)
{
    long long whole;
    double frac;
    if (d != d)
        return 2;
    if (d >= 9223372036854775808.0)
        return 1;
    if (d < -9223372036854775808.0)
        return -1;
    whole = (long long)d; /* truncation; exact, d is in range */
    if (whole != v)
        return whole < v ? -1 : 1;
    frac = d - (double)whole;
    return frac > 0 ? 1 : (frac < 0 ? -1 : 0);
}

static int attr_is_number(const rk_attr *a)
{
    return a->kind == RK_ATTR_BOOL || a->kind == RK_ATTR_INT || a->kind == RK_ATTR_FLOAT;
}

int rk_attr_py_cmp_int(const rk_attr *a, long long v)
{
    if (!a || !attr_is_number(a))
        return -2;
    if (a->kind == RK_ATTR_FLOAT) {
        int c = cmp_float_int(a->f, v);
        return c == 2 ? -2 : c;
    }
    return a->i < v ? -1 : (a->i > v ? 1 : 0);
}

int rk_attr_py_eq_int(const rk_attr *a, long long v) { return rk_attr_py_cmp_int(a, v) == 0; }

int rk_attr_is_str(const rk_attr *a, const char *s) { return a && a->kind == RK_ATTR_STR && strcmp(a->s, s) == 0; }

static int attr_numbers_eq(const rk_attr *a, const rk_attr *b)
{
    if (a->kind == RK_ATTR_FLOAT && b->kind == RK_ATTR_FLOAT)
        return a->f == b->f;
    if (a->kind == RK_ATTR_FLOAT)
        return cmp_float_int(a->f, b->i) == 0;
    if (b->kind == RK_ATTR_FLOAT)
        return cmp_float_int(b->f, a->i) == 0;
    return a->i == b->i;
}

static int attr_maps_eq(const rk_attrs *a, const rk_attrs *b)
{
    int i;
    if (a->n != b->n)
        return 0;
    for (i = 0; i < a->n; i++) {
        const rk_attr *other = rk_attrs_get(b, a->items[i].key);
        if (!other || !rk_attr_py_eq(a->items[i].value, other))
            return 0;
    }
    return 1;
}

int rk_attr_py_eq(const rk_attr *a, const rk_attr *b)
{
    int i;
    if (!a || !b)
        return 0;
    if (attr_is_number(a) && attr_is_number(b))
        return attr_numbers_eq(a, b);
    if (a->kind != b->kind)
        return 0;
    if (a->kind == RK_ATTR_STR)
        return strcmp(a->s, b->s) == 0;
    if (a->kind == RK_ATTR_MAP)
        return attr_maps_eq(&a->map, &b->map);
    if (a->n != b->n)
        return 0;
    for (i = 0; i < a->n; i++)
        if (!rk_attr_py_eq(a->items[i], b->items[i]))
            return 0;
    return 1;
}

/* Python's str() of an attr value (repr: its repr(), as inside a list or dict), None for a
 * missing one; the one emulation of str() (the verifier's and the lowering's messages). */
void rk_attr_py_str(rk_buf *o, const rk_attr *a, int repr)
{
    int i;
    if (!a) {
        rk_buf_puts(o, "None");
        return;
    }
    switch (a->kind) {
    case RK_ATTR_BOOL: rk_buf_puts(o, a->i ? "True" : "False"); return;
    case RK_ATTR_INT: rk_buf_put_int(o, a->i); return;
    case RK_ATTR_FLOAT: rk_format_float(o, a->f); return;
    case RK_ATTR_STR:
        if (!repr) {
            rk_buf_puts(o, a->s);
            return;
        }
        {
            char quote = strchr(a->s, '\'') && !strchr(a->s, '"') ? '"' : '\'';
            const char *p;
            rk_buf_putn(o, &quote, 1);
            for (p = a->s; *p; p++) {
                unsigned char c = (unsigned char)*p;
                if (c == '\\' || c == (unsigned char)quote) {
                    rk_buf_putn(o, "\\", 1);
                    rk_buf_putn(o, p, 1);
                } else if (c == '\n')
                    rk_buf_puts(o, "\\n");
                else if (c == '\r')
                    rk_buf_puts(o, "\\r");
                else if (c == '\t')
                    rk_buf_puts(o, "\\t");
                else if (c < 0x20 || c == 0x7f)
                    rk_buf_printf(o, "\\x%02x", c);
                else
                    rk_buf_putn(o, p, 1);
            }
            rk_buf_putn(o, &quote, 1);
        }
        return;
    case RK_ATTR_LIST:
        rk_buf_putn(o, "[", 1);
        for (i = 0; i < a->n; i++) {
            if (i > 0)
                rk_buf_putn(o, ", ", 2);
            rk_attr_py_str(o, a->items[i], 1);
        }
        rk_buf_putn(o, "]", 1);
        return;
    case RK_ATTR_MAP:
        rk_buf_putn(o, "{", 1);
        for (i = 0; i < a->map.n; i++) {
            rk_attr key;
            if (i > 0)
                rk_buf_putn(o, ", ", 2);
            memset(&key, 0, sizeof key);
            key.kind = RK_ATTR_STR;
            key.s = a->map.items[i].key;
            rk_attr_py_str(o, &key, 1);
            rk_buf_puts(o, ": ");
            rk_attr_py_str(o, a->map.items[i].value, 1);
        }
        rk_buf_putn(o, "}", 1);
        return;
    }
}

/* ---- types (docs/ir.md §1) ---- */

char *rk_vec(rk_arena *arena, const char *elem, long long n)
{
    char digits[RK_INT_DIGITS], *out;
    size_t ne, nd;
    if (!elem)
        return NULL;
    /* "vec<" elem "x" n ">" by hand: the builder and the verifier make many */
    ne = strlen(elem);
    nd = rk_fmt_int(n, digits);
    out = rk_alloc(arena, 4 + ne + 1 + nd + 2);
    if (out) {
        memcpy(out, "vec<", 4);
        memcpy(out + 4, elem, ne);
        out[4 + ne] = 'x';
        memcpy(out + 5 + ne, digits, nd);
        out[5 + ne + nd] = '>';
    }
    return out;
}

char *rk_vec_or_scalar(rk_arena *arena, const char *elem, long long n)
{
    if (!elem)
        return NULL;
    return n == 1 ? ir_strdup(arena, elem) : rk_vec(arena, elem, n);
}

char *rk_ptr(rk_arena *arena, const char *elem) { return rk_strcat3(arena, "ptr<", elem, ",global>"); }

char *rk_smem(rk_arena *arena, const char *elem, long long rows, long long cols)
{
    return elem ? rk_ir_printf(arena, "smem<%s, [%lldx%lld]>", elem, rows, cols) : NULL;
}

int rk_is_vec(const char *t) { return RK_TYPE_IS_VEC(t); }

const char *rk_vec_elem(rk_arena *arena, const char *t)
{
    const char *elem;
    size_t len;
    if (!rk_is_vec(t))
        return t;
    if (rk_type_vec_elem(t, &elem, &len))
        return NULL;
    return static_scalar(elem, len) ? static_scalar(elem, len) : rk_strndup(arena, elem, len);
}

long long rk_vec_len(const char *t) { return rk_type_vec_len(t); }

int rk_is_ptr(const char *t) { return RK_TYPE_IS_PTR(t); }

/* t[start:t.index(",")], or NULL when t has no ',' (Python raises). */
static const char *elem_before_comma(rk_arena *arena, const char *t, size_t start)
{
    const char *elem;
    size_t len;
    if (rk_type_elem_before_comma(t, start, &elem, &len))
        return NULL;
    return static_scalar(elem, len) ? static_scalar(elem, len) : rk_strndup(arena, elem, len);
}

const char *rk_ptr_elem(rk_arena *arena, const char *t) { return elem_before_comma(arena, t, 4); }

int rk_is_smem(const char *t) { return RK_TYPE_IS_SMEM(t); }

const char *rk_smem_elem(rk_arena *arena, const char *t) { return elem_before_comma(arena, t, 5); }

int rk_smem_shape(const char *t, long long *rows, long long *cols) { return rk_type_smem_shape(t, rows, cols); }

/* SCALAR_BITS[vec_elem(t)], 0 when vec_elem(t) is not a scalar (Python raises KeyError). */
static long long elem_bits(const char *t)
{
    const char *elem;
    size_t len;
    int i;
    if (rk_type_vec_elem(t, &elem, &len))
        return 0;
    i = scalar_index(elem, len);
    return i < 0 ? 0 : rk_ir_scalar_bit_counts[i];
}

long long rk_type_bits(const char *t)
{
    long long n = rk_vec_len(t);
    return n == RK_IR_BAD_LEN ? 0 : elem_bits(t) * n;
}

long long rk_elem_bytes_of(const char *t) { return elem_bits(t) / 8; }

/* ---- the IR objects ---- */

rk_ir_value *rk_ir_make_value(rk_arena *arena, const char *name, const char *type)
{
    rk_ir_value *v = rk_alloc(arena, sizeof *v);
    if (!v || !name || !type)
        return NULL;
    v->name = ir_strdup(arena, name);
    v->type = ir_strdup(arena, type);
    return v->name && v->type ? v : NULL;
}

rk_ir_region *rk_ir_make_region(rk_arena *arena, const char *name)
{
    rk_ir_region *r = rk_alloc(arena, sizeof *r);
    if (!r)
        return NULL;
    r->name = ir_strdup(arena, name);
    return r->name ? r : NULL;
}

int rk_ir_region_append(rk_arena *arena, rk_ir_region *region, rk_ir_op *op)
{
    rk_ir_op **ops = grow(arena, region->ops, region->n_ops, &region->cap_ops, sizeof *ops, 16);
    if (!ops)
        return -1;
    ops[region->n_ops++] = op;
    region->ops = ops;
    return 0;
}

/* The first failure sticks: "builder: <message>". */
static void fail(rk_builder *b, const char *fmt, ...)
{
    va_list ap;
    char *message;
    if (b->failed)
        return;
    b->failed = 1;
    va_start(ap, fmt);
    message = ir_vprintf(b->arena, fmt, ap);
    va_end(ap);
    b->error = message ? rk_ir_printf(b->arena, "builder: %s", message) : NULL;
    if (!b->error)
        b->error = "builder: out of memory";
}

/* ---- the builder ---- */

static rk_ir_value *b_op_owned(rk_builder *b, int code, const char *name, const rk_ir_value *const *operands,
                               int n_operands, const char *hint, const char *type, rk_attrs attrs);
static const char *intern_type(rk_builder *b, const char *type);
static rk_attr *b_int(rk_builder *b, long long v);
static rk_attr *b_type_attr(rk_builder *b, const char *type);

/* A cached constant: Python's caches are one dict per open region, searched innermost
 * first; here one map holds every (type, value) key ever cached, and a key's constant is
 * live while the region that made it is open (a lookup only hits when the outer regions
 * had no such constant, so a key is live in at most one region). */
struct rk_b_const {
    rk_map_key k;             /* b_const_key's text */
    rk_ir_value *result;      /* NULL once its region is popped */
    rk_b_const *frame_next;   /* in its region's list */
    long long i32;            /* an i32 constant's value, once other_i32 holds the entry */
};

/* Not failed, and every one of the n value pointers that follow is set. */
static int b_ok(rk_builder *b, const char *what, int n, ...)
{
    va_list ap;
    int i, missing = 0;
    if (b->failed)
        return 0;
    va_start(ap, n);
    for (i = 0; i < n; i++)
        if (!va_arg(ap, const rk_ir_value *))
            missing = 1;
    va_end(ap);
    if (missing)
        fail(b, "%s of a NULL value", what);
    return !missing;
}

static void b_open(rk_builder *b, rk_ir_region *region)
{
    rk_ir_region **regions;
    rk_b_const **frames;
    int cap = b->cap_regions;
    regions = grow(b->arena, b->regions, b->n_regions, &cap, sizeof *regions, 8);
    frames = regions ? grow(b->arena, b->frames, b->n_regions, &b->cap_regions, sizeof *frames, 8) : NULL;
    if (!regions || !frames) {
        fail(b, "out of memory");
        return;
    }
    b->regions = regions;
    b->frames = frames;
    b->regions[b->n_regions] = region;
    b->frames[b->n_regions] = NULL;
    b->n_regions++;
}

void rk_b_init(rk_builder *b, rk_arena *arena, const char *name, const rk_attrs *attrs)
{
    memset(b, 0, sizeof *b);
    b->digits[0] = '1'; /* str(counter + 1) */
    b->n_digits = 1;
    rk_map_init(&b->consts);
    rk_map_init(&b->types);
    b->arena = arena;
    b->kernel = rk_alloc(arena, sizeof *b->kernel);
    if (!b->kernel || !name || rk_attrs_copy(arena, &b->kernel->attrs, attrs)) {
        fail(b, "out of memory");
        return;
    }
    b->kernel->name = ir_strdup(arena, name);
    b->kernel->entry = rk_ir_make_region(arena, "entry");
    if (!b->kernel->name || !b->kernel->entry) {
        fail(b, "out of memory");
        return;
    }
    b_open(b, b->kernel->entry);
}

int rk_b_check(const rk_builder *b, rk_error *err)
{
    if (b->failed)
        return rk_fail_internal(err, "%s", b->error);
    return 0;
}

void rk_b_push_region(rk_builder *b, rk_ir_region *region)
{
    if (b->failed)
        return;
    if (!region) {
        fail(b, "push_region of a NULL region");
        return;
    }
    b_open(b, region);
}

void rk_b_pop_region(rk_builder *b)
{
    rk_b_const *entry;
    if (b->failed)
        return;
    if (b->n_regions == 0) {
        fail(b, "pop_region with no open region");
        return;
    }
    b->n_regions--;
    for (entry = b->frames[b->n_regions]; entry; entry = entry->frame_next)
        entry->result = NULL;
}

/* The cache key of (ity, value), a text that two values share iff Python's == holds: a
 * number that equals an integer is keyed by that integer (True, 1 and 1.0 alike), another
 * float by its exact hex digits, a string (after another separator) by itself. In small when
 * it fits, else in the arena; NULL on a failed allocation, and for a NaN (never equal to
 * anything, so never cached). */
static const char *b_const_key(rk_arena *arena, const char *ity, const rk_attr *value, char *small, size_t cap)
{
    char number[64] = "i";
    const char *tail = number;
    size_t n_ity = strlen(ity), n_tail;
    char *key;
    if (value->kind == RK_ATTR_STR)
        tail = value->s;
    else if (value->kind != RK_ATTR_FLOAT)
        rk_fmt_int(value->i, number + 1);
    else if (value->f != value->f)
        return NULL;
    else if (value->f >= -9223372036854775808.0 && value->f < 9223372036854775808.0
             && (double)(long long)value->f == value->f)
        rk_fmt_int((long long)value->f, number + 1);
    else
        snprintf(number, sizeof number, "f%a", value->f);
    n_tail = strlen(tail);
    key = n_ity + n_tail + 3 <= cap ? small : rk_alloc(arena, n_ity + n_tail + 3);
    if (!key)
        return NULL;
    memcpy(key, ity, n_ity);
    key[n_ity] = value->kind == RK_ATTR_STR ? '\x1e' : '\x1f';
    memcpy(key + n_ity + 1, tail, n_tail + 1);
    return key;
}

/* A copy of a scalar value (a string is copied too). */
static rk_attr *attr_copy(rk_arena *arena, const rk_attr *value)
{
    rk_attr *copy = value->kind == RK_ATTR_STR ? rk_attr_str(arena, value->s) : rk_alloc(arena, sizeof *copy);
    if (copy && value->kind != RK_ATTR_STR)
        *copy = *value;
    return copy;
}

/* Builder.constant; *remember (when set) gets the cache entry of the key. */
static rk_ir_value *b_constant(rk_builder *b, const char *ity, const rk_attr *value, rk_b_const **remember)
{
    const char *interned;
    rk_attrs attrs = {NULL, 0, 0};
    rk_ir_value *result;
    rk_attr *copy;
    rk_b_const *entry;
    const char *key;
    char small[128];
    unsigned int hash = 0;
    if (b->failed)
        return NULL;
    if (!ity || !value || value->kind == RK_ATTR_LIST || value->kind == RK_ATTR_MAP) {
        fail(b, "constant of a NULL type or an unhashable value");
        return NULL;
    }
    key = b_const_key(b->arena, ity, value, small, sizeof small);
    if (!key && b->arena->failed) {
        fail(b, "out of memory");
        return NULL;
    }
    if (key) {
        hash = rk_hash(key);
        entry = rk_map_get(&b->consts, key, hash);
        if (entry && entry->result) {
            if (remember)
                *remember = entry;
            return entry->result;
        }
    }
    copy = value->kind == RK_ATTR_INT ? b_int(b, value->i) : attr_copy(b->arena, value);
    interned = intern_type(b, ity);
    rk_attrs_set(b->arena, &attrs, "ity", interned ? b_type_attr(b, interned) : NULL);
    rk_attrs_set(b->arena, &attrs, "value", copy);
    result = b_op_owned(b, RK_OP_CONSTANT, rk_ops[RK_OP_CONSTANT].name, NULL, 0, rk_ops[RK_OP_CONSTANT].hint, ity,
                        attrs);
    if (!result) {
        fail(b, "out of memory");
        return NULL;
    }
    if (!key)
        return result;
    if (key == small)
        key = rk_strndup(b->arena, small, strlen(small));
    entry = key ? rk_map_put(&b->consts, b->arena, key, hash, sizeof *entry, NULL) : NULL;
    if (!entry) {
        fail(b, "out of memory");
        return NULL;
    }
    entry->result = result;
    entry->frame_next = b->frames[b->n_regions - 1];
    b->frames[b->n_regions - 1] = entry;
    if (remember)
        *remember = entry;
    return result;
}

rk_ir_value *rk_b_constant(rk_builder *b, const char *ity, const rk_attr *value)
{
    return b_constant(b, ity, value, NULL);
}

/* -- plumbing -- */

/* A value's type, interned: the static name of a scalar, else the builder's one arena copy of
 * that name, so the verifier's and the lowering's compares meet the same pointer and no value
 * copies its type. A name already interned (most are another value's type) is found by its
 * address: the cache holds interned addresses only, whose bytes never change. */
static inline const char *intern_type(rk_builder *b, const char *type)
{
    size_t n;
    const char *known;
    rk_map_key *entry;
    unsigned int hash;
    if (b->type_cache[((size_t)(uintptr_t)type >> 3) % RK_B_TYPE_CACHE] == type)
        return type;
    n = strlen(type);
    if (!(known = static_scalar(type, n))) {
        hash = rk_hash(type);
        entry = rk_map_get(&b->types, type, hash);
        if (!entry) {
            char *copy = rk_strndup(b->arena, type, n);
            entry = copy ? rk_map_put(&b->types, b->arena, copy, hash, sizeof *entry, NULL) : NULL;
            if (!entry)
                return NULL;
        }
        known = entry->key;
    }
    b->type_cache[((size_t)(uintptr_t)known >> 3) % RK_B_TYPE_CACHE] = known;
    return known;
}

/* Advances the counter; b->digits follows it, str(counter + 1), carried by hand (every value's
 * name ends in it, and a printf or a division per value was a measurable part of a build). */
static inline void count_value(rk_builder *b)
{
    size_t i = b->n_digits;
    b->counter++;
    while (i > 0 && b->digits[i - 1] == '9')
        b->digits[--i] = '0';
    if (i > 0)
        b->digits[i - 1]++;
    else { /* 9...9 + 1: one more digit */
        memmove(b->digits + 1, b->digits, b->n_digits + 1);
        b->digits[0] = '1';
        b->n_digits++;
    }
}

/* "%" + hint + the next value's number into name (room for it). */
static void put_value_name(char *name, const char *hint, size_t hint_len, const rk_builder *b)
{
    name[0] = '%';
    rk_copy(name + 1, hint, hint_len);
    rk_copy(name + 1 + hint_len, b->digits, b->n_digits + 1);
}

rk_ir_value *rk_b_param(rk_builder *b, const char *name, const char *type, const rk_attrs *attrs)
{
    rk_ir_kernel *k = b->kernel;
    rk_ir_param *p, **params;
    if (b->failed)
        return NULL;
    if (!name || !type) {
        fail(b, "param of a NULL name or type");
        return NULL;
    }
    p = rk_alloc(b->arena, sizeof *p);
    params = p ? grow(b->arena, k->params, k->n_params, &k->cap_params, sizeof *params, 8) : NULL;
    if (!params || rk_attrs_copy(b->arena, &p->attrs, attrs)) {
        fail(b, "out of memory");
        return NULL;
    }
    p->value.name = rk_strcat3(b->arena, "%", name, NULL);
    p->value.type = intern_type(b, type);
    if (!p->value.name || !p->value.type) {
        fail(b, "out of memory");
        return NULL;
    }
    params[k->n_params++] = p;
    k->params = params;
    return &p->value;
}

/* The id of the value just counted: its number, which its name ends with, unless the hint ends
 * in a digit too (then the name's trailing number is not the id, and the value has none). */
static long long value_id(const rk_builder *b, const char *hint, size_t hint_len)
{
    char last = hint_len ? hint[hint_len - 1] : '%';
    return last >= '0' && last <= '9' ? 0 : b->counter;
}

rk_ir_value *rk_b_new_value(rk_builder *b, const char *hint, const char *type)
{
    rk_ir_value *v;
    size_t hint_len;
    if (b->failed)
        return NULL;
    if (!hint || !type) {
        fail(b, "new_value of a NULL hint or type");
        return NULL;
    }
    hint_len = strlen(hint);
    /* the value and its name "%" hint counter in one allocation, the name built by hand */
    v = rk_alloc(b->arena, sizeof *v + 1 + hint_len + RK_INT_DIGITS);
    if (v)
        put_value_name((char *)(v + 1), hint, hint_len, b);
    count_value(b);
    if (v) {
        v->name = (char *)(v + 1);
        v->type = intern_type(b, type);
        v->id = value_id(b, hint, hint_len);
        b->kernel->n_ids = b->counter + 1;
    }
    if (!v || !v->type) {
        fail(b, "out of memory");
        return NULL;
    }
    return v;
}

/* Appends op to the innermost open region: every op enters here, counted against op_limit. */
static inline int b_append(rk_builder *b, rk_ir_op *op)
{
    rk_ir_region *region;
    b->num_ops++;
    if (b->op_limit > 0 && b->num_ops > b->op_limit) {
        fail(b, "the kernel exceeds %lld IR ops", b->op_limit);
        return -1;
    }
    if (b->n_regions == 0) {
        fail(b, "%s with no open region", op->name);
        return -1;
    }
    region = b->regions[b->n_regions - 1];
    if (region->n_ops < region->cap_ops) { /* room left: rk_ir_region_append's common case */
        region->ops[region->n_ops++] = op;
        return 0;
    }
    if (rk_ir_region_append(b->arena, region, op)) {
        fail(b, "out of memory");
        return -1;
    }
    return 0;
}

/* A new op (not yet appended) with copies of the operand values and room for n_results
 * results and name_room bytes after them, all in one allocation; code is name's row of rk_ops. */
static inline rk_ir_op *b_make_op(rk_builder *b, int code, const char *name, const rk_ir_value *const *operands,
                                  int n_operands, int n_results, size_t name_room)
{
    rk_ir_op *op;
    int i;
    for (i = 0; i < n_operands; i++)
        if (!operands[i]) {
            fail(b, "%s of a NULL value", name);
            return NULL;
        }
    op = rk_alloc(b->arena, sizeof *op + (size_t)(n_operands + n_results) * sizeof *op->operands + name_room);
    if (!op || b->arena->failed) {
        fail(b, "out of memory");
        return NULL;
    }
    op->name = name;
    op->code = code;
    op->operands = (rk_ir_value *)(op + 1);
    op->results = op->operands + n_operands;
    for (i = 0; i < n_operands; i++)
        op->operands[i] = *operands[i];
    op->n_operands = n_operands;
    return op;
}

/* Builder.op with the attrs map handed over (no copy) and the op's code known: the builder's
 * own methods. The result (when hint and type are set) is named new_value's way, in the op. */
static rk_ir_value *b_op_owned(rk_builder *b, int code, const char *name, const rk_ir_value *const *operands,
                               int n_operands, const char *hint, const char *type, rk_attrs attrs)
{
    int has_result = hint && type;
    size_t hint_len = !has_result                                                 ? 0
                      : code >= 0 && code < RK_N_OPS && hint == rk_ops[code].hint ? rk_ops[code].hint_len
                                                                                  : strlen(hint);
    const char *interned = NULL;
    rk_ir_op *op;
    if (b->failed)
        return NULL;
    if (has_result && !(interned = intern_type(b, type))) {
        fail(b, "out of memory");
        return NULL;
    }
    op = b_make_op(b, code, name, operands, n_operands, has_result, has_result ? 1 + hint_len + b->n_digits + 1 : 0);
    if (!op)
        return NULL;
    if (has_result) {
        char *result_name = (char *)(op->results + 1);
        put_value_name(result_name, hint, hint_len, b);
        count_value(b);
        op->results[0].name = result_name;
        op->results[0].type = interned;
        op->results[0].id = value_id(b, hint, hint_len);
        b->kernel->n_ids = b->counter + 1;
        op->n_results = 1;
    }
    op->attrs = attrs;
    if (b_append(b, op))
        return NULL;
    return has_result ? &op->results[0] : NULL;
}

rk_ir_value *rk_b_op(rk_builder *b, const char *name, const rk_ir_value *const *operands, int n_operands,
                     const char *hint, const char *type, const rk_attrs *attrs)
{
    rk_attrs copy;
    const char *own_name;
    if (b->failed)
        return NULL;
    own_name = name ? ir_strdup(b->arena, name) : NULL;
    if (!own_name || rk_attrs_copy(b->arena, &copy, attrs)) {
        fail(b, "%s", name ? "out of memory" : "op of a NULL name");
        return NULL;
    }
    return b_op_owned(b, rk_op_code(own_name), own_name, operands, n_operands, hint, type, copy);
}

rk_ir_value *rk_b_value_op(rk_builder *b, const char *name, const rk_ir_value *const *operands, int n_operands,
                           const char *hint, const char *type, const rk_attrs *attrs)
{
    rk_ir_value *result;
    if (!b->failed && (!hint || !type)) {
        fail(b, "value_op %s without a hint or type", name ? name : "(NULL)");
        return NULL;
    }
    result = rk_b_op(b, name, operands, n_operands, hint, type, attrs);
    return result;
}

/* Builder.result_op: an op of the table that gives one result, named by the op's hint (no
 * copies, attrs built by the caller; a NULL type is one the arena could not make). */
static rk_ir_value *result_op(rk_builder *b, int code, const rk_ir_value *const *operands, int n_operands,
                              const char *type, rk_attrs attrs)
{
    if (!b->failed && !type) {
        fail(b, "out of memory");
        return NULL;
    }
    return b_op_owned(b, code, rk_ops[code].name, operands, n_operands, rk_ops[code].hint, type, attrs);
}

/* Builder.plain_op: an op of the table that gives no result. */
static void plain_op(rk_builder *b, int code, const rk_ir_value *const *operands, int n_operands, rk_attrs attrs)
{
    b_op_owned(b, code, rk_ops[code].name, operands, n_operands, NULL, NULL, attrs);
}

/* An int attr value; the small ones are shared (an attr value is never changed once made, and
 * most ops carry a few small ints). */
static rk_attr *b_int(rk_builder *b, long long v)
{
    rk_attr **shared = v >= 0 && v < RK_B_SMALL_INT ? &b->int_attrs[v] : NULL;
    if (shared && *shared)
        return *shared;
    if (!shared)
        return rk_attr_int(b->arena, v);
    return *shared = rk_attr_int(b->arena, v);
}

/* A str attr of an interned type name, shared per type by its address (NULL: out of memory). */
static rk_attr *b_type_attr(rk_builder *b, const char *type)
{
    struct rk_b_type_attr *memo = &b->type_attrs[((size_t)(uintptr_t)type >> 3) % RK_B_TYPE_CACHE];
    if (memo->type != type) {
        rk_attr *a = rk_attr_str(b->arena, type);
        if (!a)
            return NULL;
        memo->type = type;
        memo->attr = a;
    }
    return memo->attr;
}

/* An attrs map of one to three int entries (NULL key: none). */
static rk_attrs b_ints(rk_builder *b, const char *k1, long long v1, const char *k2, long long v2, const char *k3,
                       long long v3)
{
    rk_attrs attrs = {NULL, 0, 0};
    if (k1)
        rk_attrs_set(b->arena, &attrs, k1, b_int(b, v1));
    if (k2)
        rk_attrs_set(b->arena, &attrs, k2, b_int(b, v2));
    if (k3)
        rk_attrs_set(b->arena, &attrs, k3, b_int(b, v3));
    return attrs;
}

static rk_attrs b_str_attr(rk_builder *b, const char *key, const char *value)
{
    rk_attrs attrs = {NULL, 0, 0};
    rk_attrs_set(b->arena, &attrs, key, rk_attr_str(b->arena, value));
    return attrs;
}

static const rk_attrs rk_b_no_attrs = {NULL, 0, 0};

/* -- arith (docs/ir.md §4.1) -- */

rk_ir_value *rk_b_const_i32(rk_builder *b, long long value)
{
    rk_attr v;
    rk_ir_value *result;
    rk_b_const *found = NULL;
    int small = value >= 0 && value < RK_B_SMALL_I32;
    rk_b_const **slot = small ? &b->small_i32[value] : &b->other_i32[(unsigned long long)value % RK_B_OTHER_I32];
    rk_b_const *entry = *slot;
    /* an i32's cache entry by its value: the entry the key finds, without making the key */
    if (!b->failed && entry && entry->result && (small || entry->i32 == value))
        return entry->result;
    memset(&v, 0, sizeof v);
    v.kind = RK_ATTR_INT;
    v.i = value;
    result = b_constant(b, "i32", &v, &found);
    if (found) {
        found->i32 = value;
        *slot = found;
    }
    return result;
}

rk_ir_value *rk_b_const_i1(rk_builder *b, int value)
{
    rk_attr v;
    memset(&v, 0, sizeof v);
    v.kind = RK_ATTR_INT;
    v.i = value ? 1 : 0;
    return rk_b_constant(b, "i1", &v);
}

rk_ir_value *rk_b_const_f32(rk_builder *b, long long value)
{
    rk_attr v;
    memset(&v, 0, sizeof v);
    v.kind = RK_ATTR_FLOAT;
    v.f = (double)value;
    return rk_b_constant(b, "f32", &v);
}

rk_ir_value *rk_b_zeros(rk_builder *b, const char *type)
{
    rk_attrs attrs = {NULL, 0, 0};
    if (b->failed)
        return NULL;
    if (!type) {
        fail(b, "zeros of a NULL type");
        return NULL;
    }
    rk_attrs_set(b->arena, &attrs, "ity", rk_attr_str(b->arena, type));
    rk_attrs_set(b->arena, &attrs, "value", b_int(b, 0));
    return result_op(b, RK_OP_CONSTANT_VEC, NULL, 0, type, attrs);
}

/* Builder.binary with the op's code at hand (C only: the generic entry looks it up by name). */
static rk_ir_value *b_binary_code(rk_builder *b, int code, const char *name, const char *hint, const rk_ir_value *x,
                                  const rk_ir_value *y)
{
    const rk_ir_value *operands[2] = {x, y};
    if (b->failed)
        return NULL;
    if (!x || !y) { /* b_ok, inline: every binary op passes here */
        fail(b, "%s of a NULL value", name);
        return NULL;
    }
    if (x->type != y->type && strcmp(x->type, y->type) != 0) {
        fail(b, "%s of %s and %s", name, x->type, y->type);
        return NULL;
    }
    return b_op_owned(b, code, name, operands, 2, hint, x->type, rk_b_no_attrs);
}

rk_ir_value *rk_b_binary(rk_builder *b, const char *name, const char *hint, const rk_ir_value *x, const rk_ir_value *y)
{
    return b_binary_code(b, name ? rk_op_code(name) : RK_OP_UNKNOWN, name, hint, x, y);
}

static rk_ir_value *binary_of(rk_builder *b, int code, const rk_ir_value *x, const rk_ir_value *y)
{
    return b_binary_code(b, code, rk_ops[code].name, rk_ops[code].hint, x, y);
}

/* rk_b_add, rk_b_sub, ... (RK_B_BINARY_OPS, ir.h). */
#define RK_B_BINARY_DEF(code, method) \
    rk_ir_value *rk_b_##method(rk_builder *b, const rk_ir_value *x, const rk_ir_value *y) \
    { \
        return binary_of(b, RK_OP_##code, x, y); \
    }
RK_B_BINARY_OPS(RK_B_BINARY_DEF)
#undef RK_B_BINARY_DEF

rk_ir_value *rk_b_cmp(rk_builder *b, const char *pred, const rk_ir_value *x, const rk_ir_value *y)
{
    const rk_ir_value *operands[2] = {x, y};
    if (!b_ok(b, rk_ops[RK_OP_CMP].name, 2, x, y))
        return NULL;
    if (strcmp(x->type, y->type) != 0) {
        fail(b, "arith.cmp of %s and %s", x->type, y->type);
        return NULL;
    }
    return result_op(b, RK_OP_CMP, operands, 2, "i1", b_str_attr(b, "pred", pred ? pred : ""));
}

rk_ir_value *rk_b_select(rk_builder *b, const rk_ir_value *c, const rk_ir_value *x, const rk_ir_value *y)
{
    const rk_ir_value *operands[3] = {c, x, y};
    if (!b_ok(b, rk_ops[RK_OP_SELECT].name, 3, c, x, y))
        return NULL;
    if (strcmp(x->type, y->type) != 0 || strcmp(c->type, "i1") != 0) {
        fail(b, "arith.select of %s, %s, %s", c->type, x->type, y->type);
        return NULL;
    }
    return result_op(b, RK_OP_SELECT, operands, 3, x->type, rk_b_no_attrs);
}

/* fptrunc and bitcast: (a) -> to, attr `to`. */
static rk_ir_value *b_convert(rk_builder *b, int code, const rk_ir_value *x, const char *to)
{
    if (!b_ok(b, rk_ops[code].name, 1, x))
        return NULL;
    if (!to) {
        fail(b, "%s to a NULL type", rk_ops[code].name);
        return NULL;
    }
    return result_op(b, code, &x, 1, to, b_str_attr(b, "to", to));
}

rk_ir_value *rk_b_fptrunc(rk_builder *b, const rk_ir_value *x, const char *to)
{
    return b_convert(b, RK_OP_FPTRUNC, x, to);
}

rk_ir_value *rk_b_bitcast(rk_builder *b, const rk_ir_value *x, const char *to)
{
    return b_convert(b, RK_OP_BITCAST, x, to);
}

/* -- gpu (§4.2) -- */

rk_ir_value *rk_b_thread_id(rk_builder *b)
{
    return result_op(b, RK_OP_THREAD_ID, NULL, 0, "i32", b_ints(b, "dim", 0, NULL, 0, NULL, 0));
}

rk_ir_value *rk_b_block_id(rk_builder *b, long long dim)
{
    return result_op(b, RK_OP_BLOCK_ID, NULL, 0, "i32", b_ints(b, "dim", dim, NULL, 0, NULL, 0));
}

rk_ir_value *rk_b_lane_id(rk_builder *b) { return result_op(b, RK_OP_LANE_ID, NULL, 0, "i32", rk_b_no_attrs); }

rk_ir_value *rk_b_readfirstlane(rk_builder *b, const rk_ir_value *x)
{
    if (!b_ok(b, rk_ops[RK_OP_READFIRSTLANE].name, 1, x))
        return NULL;
    return result_op(b, RK_OP_READFIRSTLANE, &x, 1, "i32", rk_b_no_attrs);
}

/* -- memory (§4.3) -- */

rk_ir_value *rk_b_make_buffer_rsrc(rk_builder *b, const rk_ir_value *p, const rk_ir_value *nbytes)
{
    const rk_ir_value *operands[2] = {p, nbytes};
    return result_op(b, RK_OP_MAKE_BUFFER_RSRC, operands, 2, "rsrc", rk_b_no_attrs);
}

rk_ir_value *rk_b_buffer_load(rk_builder *b, const rk_ir_value *r, const rk_ir_value *off, const char *elem,
                              long long n)
{
    const rk_ir_value *operands[2] = {r, off};
    rk_attrs attrs = {NULL, 0, 0};
    if (!b_ok(b, rk_ops[RK_OP_BUFFER_LOAD].name, 2, r, off))
        return NULL;
    if (!elem) {
        fail(b, "tile.buffer_load of a NULL element type");
        return NULL;
    }
    rk_attrs_set(b->arena, &attrs, "elem", rk_attr_str(b->arena, elem));
    rk_attrs_set(b->arena, &attrs, "n", b_int(b, n));
    return result_op(b, RK_OP_BUFFER_LOAD, operands, 2, rk_vec_or_scalar(b->arena, elem, n), attrs);
}

void rk_b_buffer_store(rk_builder *b, const rk_ir_value *r, const rk_ir_value *off, const rk_ir_value *v)
{
    const rk_ir_value *operands[3] = {r, off, v};
    plain_op(b, RK_OP_BUFFER_STORE, operands, 3, rk_b_no_attrs);
}

void rk_b_global_atomic_fadd(rk_builder *b, const rk_ir_value *p, const rk_ir_value *idx, const rk_ir_value *v)
{
    const rk_ir_value *operands[3] = {p, idx, v};
    plain_op(b, RK_OP_GLOBAL_ATOMIC_FADD, operands, 3, rk_b_no_attrs);
}

rk_ir_value *rk_b_smem_alloc(rk_builder *b, const char *type, int exclusive)
{
    rk_attrs attrs;
    if (b->failed)
        return NULL;
    if (!type) {
        fail(b, "tile.smem_alloc of a NULL type");
        return NULL;
    }
    attrs = b_str_attr(b, "type", type);
    if (exclusive)
        rk_attrs_set(b->arena, &attrs, "exclusive", rk_attr_bool(b->arena, 1));
    return result_op(b, RK_OP_SMEM_ALLOC, NULL, 0, type, attrs);
}

/* smem_elem(s.type), failing the builder where Python's str.index raises. */
static const char *b_smem_elem(rk_builder *b, const rk_ir_value *s)
{
    const char *elem = rk_smem_elem(b->arena, s->type);
    if (!elem)
        fail(b, "%s is not an smem type", s->type);
    return elem;
}

rk_ir_value *rk_b_smem_load(rk_builder *b, const rk_ir_value *s, const rk_ir_value *row, const rk_ir_value *col,
                            long long n, long long align)
{
    const rk_ir_value *operands[3] = {s, row, col};
    const char *elem;
    if (!b_ok(b, rk_ops[RK_OP_SMEM_LOAD].name, 3, s, row, col) || !(elem = b_smem_elem(b, s)))
        return NULL;
    return result_op(b, RK_OP_SMEM_LOAD, operands, 3, rk_vec_or_scalar(b->arena, elem, n),
                     b_ints(b, "n", n, "align", align, NULL, 0));
}

void rk_b_smem_store(rk_builder *b, const rk_ir_value *s, const rk_ir_value *row, const rk_ir_value *col,
                     const rk_ir_value *v, long long align)
{
    const rk_ir_value *operands[4] = {s, row, col, v};
    plain_op(b, RK_OP_SMEM_STORE, operands, 4, b_ints(b, "align", align, NULL, 0, NULL, 0));
}

rk_ir_value *rk_b_smem_addr(rk_builder *b, const rk_ir_value *s)
{
    if (!b_ok(b, rk_ops[RK_OP_SMEM_ADDR].name, 1, s))
        return NULL;
    return result_op(b, RK_OP_SMEM_ADDR, &s, 1, "i32", rk_b_no_attrs);
}

static rk_ir_value *b_transpose_read(rk_builder *b, int code, long long width, const rk_ir_value *s,
                                     const rk_ir_value *row, const rk_ir_value *col)
{
    const rk_ir_value *operands[3] = {s, row, col};
    const char *elem;
    if (!b_ok(b, rk_ops[code].name, 3, s, row, col) || !(elem = b_smem_elem(b, s)))
        return NULL;
    return result_op(b, code, operands, 3, rk_vec(b->arena, elem, width), rk_b_no_attrs);
}

rk_ir_value *rk_b_ds_read_tr16_b64(rk_builder *b, const rk_ir_value *s, const rk_ir_value *row, const rk_ir_value *col)
{
    return b_transpose_read(b, RK_OP_DS_READ_TR16_B64, 4, s, row, col);
}

rk_ir_value *rk_b_ds_read_tr16_b128(rk_builder *b, const rk_ir_value *s, const rk_ir_value *row, const rk_ir_value *col)
{
    return b_transpose_read(b, RK_OP_DS_READ_TR16_B128, 8, s, row, col);
}

void rk_b_async_buffer_load_lds(rk_builder *b, const rk_ir_value *r, const rk_ir_value *lds_addr,
                                const rk_ir_value *off, long long dwords, long long aux)
{
    const rk_ir_value *operands[3] = {r, lds_addr, off};
    plain_op(b, RK_OP_ASYNC_BUFFER_LOAD_LDS, operands, 3, b_ints(b, "dwords", dwords, "aux", aux, NULL, 0));
}

void rk_b_s_waitcnt_vmcnt(rk_builder *b, long long vmcnt)
{
    plain_op(b, RK_OP_S_WAITCNT, NULL, 0, b_ints(b, "vmcnt", vmcnt, NULL, 0, NULL, 0));
}

void rk_b_sync(rk_builder *b) { plain_op(b, RK_OP_SYNC, NULL, 0, rk_b_no_attrs); }

void rk_b_sync_lds_only(rk_builder *b) { plain_op(b, RK_OP_SYNC_LDS_ONLY, NULL, 0, rk_b_no_attrs); }

/* -- vector (§4.4) -- */

/* vec_elem(v.type), failing the builder where Python's str.rindex raises. */
static const char *b_vec_elem(rk_builder *b, const rk_ir_value *v)
{
    const char *elem = rk_vec_elem(b->arena, v->type);
    if (!elem)
        fail(b, "%s is a malformed vec type", v->type);
    return elem;
}

rk_ir_value *rk_b_extract(rk_builder *b, const rk_ir_value *v, long long index)
{
    const char *elem;
    if (!b_ok(b, rk_ops[RK_OP_EXTRACT].name, 1, v) || !(elem = b_vec_elem(b, v)))
        return NULL;
    return result_op(b, RK_OP_EXTRACT, &v, 1, elem, b_ints(b, "index", index, NULL, 0, NULL, 0));
}

rk_ir_value *rk_b_insert(rk_builder *b, const rk_ir_value *v, const rk_ir_value *x, long long index)
{
    const rk_ir_value *operands[2] = {v, x};
    if (!b_ok(b, rk_ops[RK_OP_INSERT].name, 2, v, x))
        return NULL;
    return result_op(b, RK_OP_INSERT, operands, 2, v->type, b_ints(b, "index", index, NULL, 0, NULL, 0));
}

rk_ir_value *rk_b_from_elements(rk_builder *b, const rk_ir_value *const *xs, int n)
{
    if (b->failed)
        return NULL;
    if (n < 1 || !xs || !xs[0]) {
        fail(b, "vector.from_elements of no values");
        return NULL;
    }
    return result_op(b, RK_OP_FROM_ELEMENTS, xs, n, rk_vec(b->arena, xs[0]->type, n), rk_b_no_attrs);
}

rk_ir_value *rk_b_concat(rk_builder *b, const rk_ir_value *x, const rk_ir_value *y)
{
    const rk_ir_value *operands[2] = {x, y};
    const char *elem;
    long long nx, ny;
    if (!b_ok(b, rk_ops[RK_OP_CONCAT].name, 2, x, y) || !(elem = b_vec_elem(b, x)))
        return NULL;
    nx = rk_vec_len(x->type);
    ny = rk_vec_len(y->type);
    if (nx == RK_IR_BAD_LEN || ny == RK_IR_BAD_LEN) {
        fail(b, "vector.concat of a malformed vec type");
        return NULL;
    }
    return result_op(b, RK_OP_CONCAT, operands, 2, rk_vec(b->arena, elem, nx + ny), rk_b_no_attrs);
}

/* -- mma (§4.5) -- */

rk_ir_value *rk_b_mma(rk_builder *b, const char *op_id, const rk_ir_value *x, const rk_ir_value *y,
                      const rk_ir_value *c)
{
    const rk_ir_value *operands[3] = {x, y, c};
    if (!b_ok(b, rk_ops[RK_OP_MMA].name, 3, x, y, c))
        return NULL;
    return result_op(b, RK_OP_MMA, operands, 3, c->type, b_str_attr(b, "op_id", op_id ? op_id : ""));
}

/* -- schedule hints (§4.6) -- */

void rk_b_sched_group_barrier(rk_builder *b, long long mask, long long size, long long sync_id)
{
    plain_op(b, RK_OP_SCHED_GROUP_BARRIER, NULL, 0, b_ints(b, "mask", mask, "size", size, "sync_id", sync_id));
}

void rk_b_sched_barrier(rk_builder *b, long long mask)
{
    plain_op(b, RK_OP_SCHED_BARRIER, NULL, 0, b_ints(b, "mask", mask, NULL, 0, NULL, 0));
}

void rk_b_s_setprio(rk_builder *b, long long prio)
{
    plain_op(b, RK_OP_S_SETPRIO, NULL, 0, b_ints(b, "prio", prio, NULL, 0, NULL, 0));
}

/* -- control (§4.7) -- */

/* The scf.for attrs: iv, iv_type, iter_args [{name, type}...], unroll when set. */
static rk_attrs b_for_attrs(rk_builder *b, const char *iv, const rk_ir_carried *carried, int n_carried, int unroll)
{
    rk_arena *a = b->arena;
    rk_attrs attrs = {NULL, 0, 0};
    rk_attr *iter_args = rk_attr_list(a);
    int i;
    rk_attrs_set(a, &attrs, "iv", rk_attr_str(a, rk_strcat3(a, "%", iv, NULL)));
    rk_attrs_set(a, &attrs, "iv_type", rk_attr_str(a, "i32"));
    for (i = 0; i < n_carried && iter_args; i++) {
        rk_attr *arg = rk_attr_map(a);
        if (!arg)
            break;
        rk_attrs_set(a, &arg->map, "name", rk_attr_str(a, rk_strcat3(a, "%", carried[i].name, NULL)));
        rk_attrs_set(a, &arg->map, "type", rk_attr_str(a, carried[i].init->type));
        rk_attr_list_append(a, iter_args, arg);
    }
    rk_attrs_set(a, &attrs, "iter_args", iter_args);
    if (unroll)
        rk_attrs_set(a, &attrs, "unroll", rk_attr_bool(a, 1));
    return attrs;
}

/* The ForLoop handle: the op, %iv and the carried values %name. */
static rk_ir_for *b_make_loop(rk_builder *b, rk_ir_op *op, const char *iv, const rk_ir_carried *carried, int n_carried)
{
    rk_ir_for *loop = rk_alloc(b->arena, sizeof *loop);
    int i;
    if (!loop)
        return NULL;
    loop->op = op;
    loop->iv.name = rk_strcat3(b->arena, "%", iv, NULL);
    loop->iv.type = "i32";
    loop->args = rk_alloc(b->arena, (size_t)n_carried * sizeof *loop->args);
    if (!loop->args)
        return NULL;
    for (i = 0; i < n_carried; i++) {
        loop->args[i].name = rk_strcat3(b->arena, "%", carried[i].name, NULL);
        loop->args[i].type = carried[i].init->type;
    }
    loop->n_args = n_carried;
    return b->arena->failed ? NULL : loop;
}

/* Gives op its one region, appends op and opens the region (Python: append, push_region);
 * -1 when the builder failed. */
static int b_enter(rk_builder *b, rk_ir_op *op, rk_ir_region *region)
{
    op->regions = rk_alloc(b->arena, sizeof *op->regions);
    if (!op->regions) {
        fail(b, "out of memory");
        return -1;
    }
    op->regions[0] = region;
    op->n_regions = 1;
    if (b_append(b, op))
        return -1;
    rk_b_push_region(b, region);
    return b->failed ? -1 : 0;
}

rk_ir_for *rk_b_for_begin(rk_builder *b, const rk_ir_value *lb, const rk_ir_value *ub, const rk_ir_value *step,
                          const char *iv, const rk_ir_carried *carried, int n_carried, int unroll)
{
    const rk_ir_value **operands;
    rk_ir_value *result;
    rk_ir_region *body;
    rk_ir_op *op;
    rk_ir_for *loop;
    int i;
    if (!b_ok(b, rk_ops[RK_OP_FOR].name, 3, lb, ub, step))
        return NULL;
    for (i = 0; i < n_carried; i++)
        if (!carried[i].name || !carried[i].init || !iv) {
            fail(b, "scf.for of a NULL name or value");
            return NULL;
        }
    operands = rk_alloc(b->arena, (size_t)(3 + n_carried) * sizeof *operands);
    if (!operands) {
        fail(b, "out of memory");
        return NULL;
    }
    operands[0] = lb, operands[1] = ub, operands[2] = step;
    for (i = 0; i < n_carried; i++)
        operands[3 + i] = carried[i].init;
    op = b_make_op(b, RK_OP_FOR, rk_ops[RK_OP_FOR].name, operands, 3 + n_carried, n_carried, 0);
    for (i = 0; op && i < n_carried; i++) {
        result = rk_b_new_value(b, rk_ops[RK_OP_FOR].hint, carried[i].init->type);
        if (!result)
            return NULL;
        op->results[op->n_results++] = *result;
    }
    body = op ? rk_ir_make_region(b->arena, rk_ops[RK_OP_FOR].region) : NULL;
    if (op && body)
        op->attrs = b_for_attrs(b, iv, carried, n_carried, unroll);
    loop = op && body ? b_make_loop(b, op, iv, carried, n_carried) : NULL;
    if (!loop || b->arena->failed) {
        fail(b, "out of memory");
        return NULL;
    }
    return b_enter(b, op, body) ? NULL : loop;
}

static int b_closes(const rk_builder *b, const rk_ir_op *op)
{
    return b->n_regions > 0 && op->n_regions > 0 && b->regions[b->n_regions - 1] == op->regions[0];
}

rk_ir_value *rk_b_for_end(rk_builder *b, rk_ir_for *loop, const rk_ir_value *const *yielded, int n_yielded)
{
    if (b->failed)
        return NULL;
    if (!loop || !b_closes(b, loop->op)) {
        fail(b, "for_end does not close the innermost region");
        return NULL;
    }
    plain_op(b, RK_OP_YIELD, yielded, n_yielded, b_ints(b, "num", n_yielded, NULL, 0, NULL, 0));
    rk_b_pop_region(b);
    return b->failed ? NULL : loop->op->results;
}

rk_ir_op *rk_b_if_begin(rk_builder *b, const rk_ir_value *cond)
{
    rk_ir_region *then;
    rk_ir_op *op;
    if (!b_ok(b, rk_ops[RK_OP_IF].name, 1, cond))
        return NULL;
    op = b_make_op(b, RK_OP_IF, rk_ops[RK_OP_IF].name, &cond, 1, 0, 0);
    then = op ? rk_ir_make_region(b->arena, rk_ops[RK_OP_IF].region) : NULL;
    if (!then) {
        fail(b, "out of memory");
        return NULL;
    }
    return b_enter(b, op, then) ? NULL : op;
}

void rk_b_if_end(rk_builder *b, rk_ir_op *op)
{
    if (b->failed)
        return;
    if (!op || !b_closes(b, op)) {
        fail(b, "if_end does not close the innermost region");
        return;
    }
    rk_b_pop_region(b);
}

rk_ir_kernel *rk_b_ret(rk_builder *b)
{
    if (b->failed)
        return NULL;
    if (b->n_regions != 1) {
        fail(b, "ret inside an open region");
        return NULL;
    }
    plain_op(b, RK_OP_RETURN, NULL, 0, rk_b_no_attrs);
    return b->failed ? NULL : b->kernel;
}
