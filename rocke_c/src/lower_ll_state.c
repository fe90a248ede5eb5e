/* lower_ll_state.c: the state of a lowering (lower.h's rk_lowerer), C only: what Python's
 * Lowerer (rocke_py/engine/lower_ll.py) keeps in its dicts, lists and caches, for lower_ll.c.
 * The names (a builder value's binding found by its id) and the integer constants, the memo of
 * ll_type and the declaration rows by key, the blocks with their line buffers and LDS base
 * pointers, the records of the LDS allocations, the module's size, and the f32 bits of a
 * constant. Nothing here fails the lowering: a failed allocation sets lw->oom, which
 * rk_lower_kernel checks once, at the end. */
#include <stdint.h>
#include <string.h>
#include "lower.h"

/* A memo's slot of a key, by its address: the keys are the builder's interned type names and
 * mostly literal declaration keys, none of which changes while a kernel is lowered. */
#define MEMO_SLOT(p) ((size_t)(((uintptr_t)(p) >> 3) % RK_LL_MEMO))

/* An entry of the map ints. */
typedef struct rk_ll_entry {
    rk_map_key k;
    long long value;
} rk_ll_entry;

/* A block's base pointer of an allocation (lds_base). */
typedef struct rk_ll_base {
    const rk_ll_alloc *alloc;
    const char *text;
    struct rk_ll_base *next;
} rk_ll_base;

/* ---- names and ints ---- */

/* The binding of key in names (rk_names: by the number a builder name ends with, else
 * hashed). NULL: absent (or the table could not grow). */
static rk_ll_name *slot(rk_lowerer *lw, const char *key, int insert)
{
    rk_ll_name *e;
    if (!insert)
        e = rk_names_get(&lw->names, key);
    else if (!(e = rk_names_put(&lw->names, lw->arena, key, NULL)))
        lw->oom = 1;
    return e;
}

/* slot(v.name), found by the value's id when v carries the very name string it was bound by
 * (and put by it: a builder value's name ends with its id). */
static rk_ll_name *value_slot(rk_lowerer *lw, const rk_ir_value *v, int insert)
{
    rk_ll_name *e = rk_names_at(&lw->names, v->id, v->name);
    if (e || !insert)
        return e ? e : slot(lw, v->name, 0);
    if (!(e = rk_names_put_at(&lw->names, lw->arena, v->id, v->name, NULL)))
        lw->oom = 1;
    return e;
}

/* e's text, or oom when the entry or the text could not be made */
static void set_bound(rk_lowerer *lw, rk_ll_name *e, const char *text)
{
    if (!e || !text)
        lw->oom = 1;
    else
        e->text = text;
}

void rk_ll_bind(rk_lowerer *lw, const char *key, const char *text) { set_bound(lw, slot(lw, key, 1), text); }

void rk_ll_bind_value(rk_lowerer *lw, const rk_ir_value *v, const char *text)
{
    set_bound(lw, value_slot(lw, v, 1), text);
}

const char *rk_ll_bound(rk_lowerer *lw, const rk_ir_value *v)
{
    const rk_ll_name *e = value_slot(lw, v, 0);
    return e ? e->text : NULL;
}

void rk_ll_set_int(rk_lowerer *lw, const char *key, long long value)
{
    rk_ll_entry *e;
    if ((e = rk_map_put(&lw->ints, lw->arena, key, rk_hash(key), sizeof *e, NULL)))
        e->value = value;
    else
        lw->oom = 1;
}

int rk_ll_get_int(const rk_lowerer *lw, const char *key, long long *value)
{
    const rk_ll_entry *e = rk_map_get(&lw->ints, key, rk_hash(key));
    if (!e)
        return -1;
    *value = e->value;
    return 0;
}

/* ---- memos: ll_type's and the declaration rows ---- */

const char *rk_ll_memo_type(const rk_lowerer *lw, const char *t)
{
    size_t at = MEMO_SLOT(t);
    return lw->types[at].type == t ? lw->types[at].text : NULL;
}

const char *rk_ll_remember_type(rk_lowerer *lw, const char *t, const char *text)
{
    size_t at = MEMO_SLOT(t);
    if (!text) {
        lw->oom = 1;
        return NULL;
    }
    lw->types[at].type = t;
    lw->types[at].text = text;
    return text;
}

int rk_ll_decl_row(rk_lowerer *lw, const char *key)
{
    size_t at = MEMO_SLOT(key);
    int i;
    if (lw->decls[at].key == key)
        return lw->decls[at].index;
    for (i = 0; i < RK_LL_N_DECLS; i++)
        if (strcmp(rk_ll_decls[i].key, key) == 0) {
            lw->decls[at].key = key;
            lw->decls[at].index = i;
            return i;
        }
    return -1;
}

const char *rk_ll_vector_type(rk_lowerer *lw, long long n, const char *elem)
{
    char digits[RK_INT_DIGITS];
    const char *head;
    rk_fmt_int(n, digits);
    head = rk_strcat3(lw->arena, "<", digits, " x ");
    head = head ? rk_strcat3(lw->arena, head, elem, ">") : NULL;
    if (!head)
        lw->oom = 1;
    return head;
}

/* ---- blocks ---- */

/* An arena array of n items of size bytes (room for *cap) with room for one more: items, or a
 * copy twice as large (first items at first); NULL, and oom, when it could not grow. */
static void *grow_one(rk_lowerer *lw, void *items, int n, int *cap, int first, size_t size)
{
    char *bigger;
    if (n < *cap)
        return items;
    if (*cap > 1000000000 || !(bigger = rk_alloc(lw->arena, (size_t)(*cap ? *cap * 2 : first) * size))) {
        lw->oom = 1;
        return NULL;
    }
    if (n)
        memcpy(bigger, items, (size_t)n * size);
    *cap = *cap ? *cap * 2 : first;
    return bigger;
}

rk_ll_block *rk_ll_add_block(rk_lowerer *lw, const char *label)
{
    rk_ll_block *block = rk_alloc(lw->arena, sizeof *block), **blocks;
    if (!block || !label) {
        lw->oom = 1;
        return NULL;
    }
    if (!(blocks = grow_one(lw, lw->blocks, lw->n_blocks, &lw->cap_blocks, 16, sizeof *blocks)))
        return NULL;
    lw->blocks = blocks;
    rk_buf_init(&block->lines);
    block->label = label;
    lw->blocks[lw->n_blocks++] = block;
    return block;
}

const char *rk_ll_block_base(const rk_ll_block *block, const rk_ll_alloc *a)
{
    const rk_ll_base *e;
    for (e = block->bases; e; e = e->next)
        if (e->alloc == a)
            return e->text;
    return NULL;
}

void rk_ll_set_block_base(rk_lowerer *lw, rk_ll_block *block, const rk_ll_alloc *a, const char *base)
{
    rk_ll_base *e = rk_alloc(lw->arena, sizeof *e);
    if (!e || !base) {
        lw->oom = 1;
        return;
    }
    e->alloc = a;
    e->text = base;
    e->next = block->bases;
    block->bases = e;
}

/* ---- the LDS allocations ---- */

rk_ll_alloc *rk_ll_add_alloc(rk_lowerer *lw, rk_ll_plan *plan, const char *name, const char *type, long long start,
                             long long rows, long long cols, long long elem_bytes, int exclusive)
{
    rk_ll_alloc *a = rk_alloc(lw->arena, sizeof *a), **allocs;
    long long ar = rows < 0 ? -rows : rows, ac = cols < 0 ? -cols : cols;
    if (!a) {
        lw->oom = 1;
        return NULL;
    }
    if (!(allocs = grow_one(lw, plan->allocs, plan->n, &plan->cap, 8, sizeof *allocs)))
        return NULL;
    plan->allocs = allocs;
    a->name = name;
    a->type = type;
    a->start = start;
    a->last = -1;
    a->align = elem_bytes == 1 ? 16 : 4;
    a->exclusive = exclusive;
    a->offset = -1;
    /* |rows|, |cols| < 10**18 (rk_smem_shape); past RK_LL_HUGE the size is not kept */
    if (ar > RK_LL_HUGE || ac > RK_LL_HUGE || (ar != 0 && ac * elem_bytes > RK_LL_HUGE / ar))
        a->huge = 1;
    else
        a->size = rows * cols * elem_bytes;
    plan->allocs[plan->n++] = a;
    return a;
}

/* ---- the module ---- */

size_t rk_ll_module_size(const rk_lowerer *lw, const rk_buf *attributes, const rk_buf *signature)
{
    size_t n = 512 + strlen(lw->flavor->datalayout) + 2 * strlen(lw->kernel->name) + attributes->len + signature->len;
    int i;
    for (i = 0; i < RK_LL_N_DECLS; i++)
        n += strlen(rk_decl_text(&rk_ll_decls[i], lw->flavor)) + 1;
    for (i = 0; i < lw->n_blocks; i++)
        n += strlen(lw->blocks[i]->label) + 2 + lw->blocks[i]->lines.len;
    return n;
}

void rk_ll_release(rk_lowerer *lw)
{
    int i;
    for (i = 0; i < lw->n_blocks; i++)
        rk_buf_free(&lw->blocks[i]->lines);
    rk_buf_free(&lw->scratch);
}

int rk_f32_literal(double value, char out[19])
{
    float single;
    double widened;
    unsigned long long bits;
    int shift, i = 2;
    /* (float)value is undefined for a finite value past FLT_MAX: decide first, as Python's
     * struct.pack("<f") does after its own cast. 0x1.ffffffp127 (FLT_MAX plus half an ulp)
     * and above round to infinity; between FLT_MAX and it, down to FLT_MAX. */
    if (value == value && value - value == 0) { /* finite */
        if (value >= 0x1.ffffffp127 || value <= -0x1.ffffffp127)
            return -1;
        if (value > 0x1.fffffep127)
            value = 0x1.fffffep127;
        else if (value < -0x1.fffffep127)
            value = -0x1.fffffep127;
    }
    single = (float)value;
    widened = single;
    memcpy(&bits, &widened, sizeof bits);
    out[0] = '0';
    out[1] = 'x';
    for (shift = 60; shift >= 0; shift -= 4)
        out[i++] = rk_ll_hex[(bits >> shift) & 15];
    out[i] = '\0';
    return 0;
}
