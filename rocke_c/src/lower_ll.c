/* lower_ll.c: mode `ll`: lower a kernel (docs/ir.md) to one AMDGPU LLVM IR module.
 *
 * Twin of rocke_py/engine/lower_ll.py, function for function in the same order. The format
 * is docs/reference/llvm-ir.md; every choice it leaves open is docs/lowering.md. The
 * data tables (flavors, backends, declarations, MMA atoms, ...) are lower_ll_tables.c; here
 * are the plumbing and one handler per op, found by the op's code (rk_ll_handlers).
 *
 * Names: builder names are printed verbatim; lowerer temporaries are `%<hint>.<n>` from one
 * counter per lowering (starting at 1); block labels `<kind>.<n>` from one block counter
 * (starting at 1; `entry` has no number). A kernel that uses an op the arch or flavor cannot
 * lower is an internal error with Python's EngineFailure text (`lower: ...`); no text is
 * produced.
 *
 * C specifics: every instruction line is written by emit, a small format writer (vemit: the
 * f-string of Python's emit), straight into its block's growable buffer, never through a
 * fixed-size buffer, so no line is ever truncated; each block is a buffer of its own (the
 * header of an scf.for is filled after its body), joined into the caller's buffer at the end.
 * What Python's Lowerer keeps in dicts, lists and caches (the names, found by a builder value's
 * id; the memo of ll_type; the declaration rows; the blocks; the LDS records) is
 * lower_ll_state.c. Everything else lives in the caller's arena. Out of memory sets a flag
 * that is checked once at the end. Where Python itself would crash on a malformed
 * (unverified) kernel (an IndexError, a ValueError), C reports an internal error instead of
 * reading out of bounds. */
#include <string.h>
#include "lower.h"

/* Python's `raise fail(message)`: "lower: " + message, an internal error in lw->err (the
 * message in the arena: names have no length limit). Only the first failure is kept. */
static int fail(rk_lowerer *lw, const char *fmt, ...)
{
    va_list ap;
    if (lw->failed)
        return -1;
    lw->failed = 1;
    va_start(ap, fmt);
    rk_vfail(lw->err, "E_INTERNAL", 1, fmt, ap);
    va_end(ap);
    if (lw->arena->failed)
        return -1;  /* lower's caller reports it as "out of memory (lower)" */
    return rk_fail_internal(lw->err, "lower: %s", lw->err->message);
}

/* Where Python itself would crash (an IndexError or ValueError on a malformed kernel that the
 * verifier refuses): an internal error, never an out-of-bounds read. */
static int crash(rk_lowerer *lw, const rk_ir_op *op)
{
    return fail(lw, "%s is malformed (an unverified kernel)", op ? op->name : "a type");
}

/* op has exactly n_operands operands (-1: any) and at least min_results results. */
static int shape(rk_lowerer *lw, const rk_ir_op *op, int n_operands, int min_results)
{
    if ((n_operands >= 0 && op->n_operands != n_operands) || op->n_results < min_results)
        return crash(lw, op);
    return 0;
}

/* An arena copy of a + b + c (c may be NULL); NULL (and oom) on failure. */
static const char *concat(rk_lowerer *lw, const char *a, const char *b, const char *c)
{
    char *s = rk_strcat3(lw->arena, a, b, c);
    if (!s)
        lw->oom = 1;
    return s;
}

static int decl_index(rk_lowerer *lw, const char *key)
{
    int i = rk_ll_decl_row(lw, key);
    if (i < 0)
        return fail(lw, "no declaration row %s", key);
    return i;
}

/* ---- table lookups that fail ---- */

static const rk_ll_width *buffer_width(rk_lowerer *lw, long long nbytes)
{
    int i;
    for (i = 0; i < RK_LL_N_WIDTHS; i++)
        if (rk_ll_buffer_widths[i].bytes == nbytes)
            return &rk_ll_buffer_widths[i];
    fail(lw, "a buffer access of %lld bytes (expected 2, 4, 8 or 16)", nbytes);
    return NULL;
}

/* ---- types (llvm-ir §4) ---- */

/* scalar_row of t[0:n]; NULL after "no LLVM type for ...". */
static const rk_ll_scalar *scalar_row(rk_lowerer *lw, const char *t, size_t n)
{
    int i;
    for (i = 0; i < RK_LL_N_SCALARS; i++) {
        const char *ir = rk_ll_scalar_types[i].ir;
        if (ir[0] == t[0] && strncmp(ir, t, n) == 0 && ir[n] == '\0')
            return &rk_ll_scalar_types[i];
    }
    fail(lw, "no LLVM type for %.*s", (int)(n > 400 ? 400 : n), t);
    return NULL;
}

/* vec_len(t), or -1 (a crash) where Python's int() raises. */
static int vec_len(rk_lowerer *lw, const char *t, long long *n)
{
    *n = rk_vec_len(t);
    if (*n == RK_IR_BAD_LEN)
        return crash(lw, NULL);
    return 0;
}

/* ll_type(t) (NULL after the failure), memoised like Python's, by the type's address: the
 * kernel's type names are the builder's interned ones (or static). */
static const char *ll_type(rk_lowerer *lw, const char *t)
{
    const rk_ll_scalar *row;
    const char *text = rk_ll_memo_type(lw, t), *elem;
    size_t n;
    long long len;
    if (text)
        return text;
    if (RK_TYPE_IS_VEC(t)) {
        if (vec_len(lw, t, &len))
            return NULL;
        if (rk_type_vec_elem(t, &elem, &n)) {
            crash(lw, NULL);
            return NULL;
        }
        if (!(row = scalar_row(lw, elem, n)))
            return NULL;
        text = rk_ll_vector_type(lw, len, row->llvm);
    } else if (RK_TYPE_IS_PTR(t))
        text = "ptr addrspace(1)";
    else if (strcmp(t, "rsrc") == 0)
        text = "ptr addrspace(8)";
    else if (RK_TYPE_IS_SMEM(t))
        text = "ptr addrspace(3)";
    else if (!(row = scalar_row(lw, t, strlen(t))))
        return NULL;
    else
        text = row->llvm;
    return rk_ll_remember_type(lw, t, text);
}

/* ll_type(t[0:n]) (NULL on failure); a scalar is looked up by its row's name, so the memo
 * serves it too. */
static const char *type_n(rk_lowerer *lw, const char *t, size_t n)
{
    const char *copy;
    int i;
    for (i = 0; i < RK_LL_N_SCALARS; i++) {
        const char *ir = rk_ll_scalar_types[i].ir;
        if (n && ir[0] == t[0] && strncmp(ir, t, n) == 0 && ir[n] == '\0')
            return ll_type(lw, ir);
    }
    if (!(copy = rk_strndup(lw->arena, t, n))) {
        lw->oom = 1;
        return NULL;
    }
    return ll_type(lw, copy);
}

/* The LLVM array type of an smem tile: smem<f16, [64x72]> -> [64 x [72 x half]]. */
static const char *lds_array_type(rk_lowerer *lw, const char *t)
{
    long long rows, cols;
    const char *elem, *text;
    size_t n;
    if (rk_smem_shape(t, &rows, &cols) || rk_type_elem_before_comma(t, 5, &elem, &n)) {
        crash(lw, NULL);
        return NULL;
    }
    if (!(elem = type_n(lw, elem, n)))
        return NULL;
    if (!(text = rk_ir_printf(lw->arena, "[%lld x [%lld x %s]]", rows, cols, elem)))
        lw->oom = 1;
    return text;
}

/* type_bytes(t); -1 on failure. */
static int type_bytes(rk_lowerer *lw, const char *t, long long *bytes)
{
    const rk_ll_scalar *row;
    const char *elem;
    size_t n;
    long long len;
    if (rk_type_vec_elem(t, &elem, &n))
        return crash(lw, NULL);
    if (!(row = scalar_row(lw, elem, n)) || vec_len(lw, t, &len))
        return -1;
    *bytes = row->bytes * len;
    return 0;
}

/* f32_literal(value) as an arena string (rk_f32_literal); NULL after the failure. */
static const char *f32_literal(rk_lowerer *lw, double value)
{
    char text[19];
    const char *s;
    if (rk_f32_literal(value, text)) {
        rk_buf repr;
        rk_buf_init(&repr);
        rk_format_float(&repr, value);
        if (!repr.data || repr.failed)
            lw->oom = 1;
        fail(lw, "the f32 constant %s is out of range", repr.data && !repr.failed ? repr.data : "?");
        rk_buf_free(&repr);
        return NULL;
    }
    s = rk_strndup(lw->arena, text, 18);
    if (!s)
        lw->oom = 1;
    return s;
}

/* Python's floor division and align_up, for any sign of x (a > 0). */
static long long align_up(long long x, long long a) { return rk_floordiv(x + a - 1, a) * a; }

/* ---- the LDS pool (llvm-ir §11) ---- */

static long long count_ops(const rk_ir_region *region)
{
    long long n = 0;
    int i, j;
    for (i = 0; i < region->n_ops; i++) {
        n++;
        for (j = 0; j < region->ops[i]->n_regions; j++)
            n += count_ops(region->ops[i]->regions[j]);
    }
    return n;
}

static rk_ll_alloc *find_alloc(const rk_ll_plan *plan, const char *name)
{
    int i;
    for (i = 0; i < plan->n; i++)
        if (strcmp(plan->allocs[i]->name, name) == 0)
            return plan->allocs[i];
    return NULL;
}

/* Live intervals: a use inside an scf.for counts at the end of the outermost loop. */
static int scan_lds(rk_lowerer *lw, const rk_ir_region *region, rk_ll_plan *plan, long long *pos, long long loop_end)
{
    int i, j;
    for (i = 0; i < region->n_ops; i++) {
        const rk_ir_op *op = region->ops[i];
        long long here = *pos, use_at, inner_end;
        (*pos)++;
        use_at = loop_end < 0 ? here : loop_end;
        for (j = 0; j < op->n_operands; j++) {
            const rk_ir_value *v = &op->operands[j];
            if (RK_TYPE_IS_SMEM(v->type)) {
                rk_ll_alloc *a = find_alloc(plan, v->name);
                if (!a)
                    return fail(lw, "%s is an LDS value that no tile.smem_alloc defines", v->name);
                if (use_at > a->last)
                    a->last = use_at;
            }
        }
        if (op->code == RK_OP_SMEM_ALLOC) {
            const char *t, *elem;
            size_t n;
            long long rows, cols;
            const rk_ll_scalar *row;
            const rk_attr *exclusive = rk_attrs_get(&op->attrs, "exclusive");
            if (op->n_results < 1)
                return crash(lw, op);
            t = op->results[0].type;
            if (rk_smem_shape(t, &rows, &cols) || rk_type_elem_before_comma(t, 5, &elem, &n))
                return crash(lw, op);
            if (!(row = scalar_row(lw, elem, n)))
                return -1;
            if (!rk_ll_add_alloc(lw, plan, op->results[0].name, t, here, rows, cols, row->bytes,
                                 exclusive && exclusive->kind == RK_ATTR_BOOL && exclusive->i))
                return -1;
        }
        inner_end = loop_end;
        if (op->code == RK_OP_FOR && loop_end < 0) {
            if (op->n_regions < 1)
                return crash(lw, op);
            inner_end = here + count_ops(op->regions[0]);
        }
        for (j = 0; j < op->n_regions; j++)
            if (scan_lds(lw, op->regions[j], plan, pos, inner_end))
                return -1;
    }
    return 0;
}

/* Greedy linear scan in creation order: first fit at the lowest aligned offset that overlaps
 * no live allocation and no exclusive one; an exclusive allocation overlaps nothing placed. */
static int plan_lds(rk_lowerer *lw, const rk_ir_kernel *kernel, rk_ll_plan *plan)
{
    rk_ll_alloc **placed, **conflicts;
    int n_placed = 0, i, j, k;
    long long pos = 0, end = 0;
    plan->allocs = NULL;
    plan->n = plan->cap = 0;
    plan->size = 0;
    if (scan_lds(lw, kernel->entry, plan, &pos, -1))
        return -1;
    placed = rk_alloc(lw->arena, (size_t)(plan->n + 1) * sizeof *placed);
    conflicts = rk_alloc(lw->arena, (size_t)(plan->n + 1) * sizeof *conflicts);
    if (!placed || !conflicts) {
        lw->oom = 1;
        return rk_fail_internal(lw->err, "out of memory (lower)");
    }
    for (i = 0; i < plan->n; i++) {
        rk_ll_alloc *a = plan->allocs[i];
        int n_conflicts = 0;
        long long off = 0;
        if (a->last < 0)
            continue;
        if (a->huge)
            return fail(lw, "%s is an LDS allocation of more than %lld bytes", a->name, RK_LL_HUGE);
        for (j = 0; j < n_placed; j++) {
            rk_ll_alloc *p = placed[j];
            if (a->exclusive || p->exclusive || p->last >= a->start) {
                /* insertion sort by offset: stable, ties keep placement order */
                for (k = n_conflicts; k > 0 && conflicts[k - 1]->offset > p->offset; k--)
                    conflicts[k] = conflicts[k - 1];
                conflicts[k] = p;
                n_conflicts++;
            }
        }
        for (j = 0; j < n_conflicts; j++) {
            rk_ll_alloc *c = conflicts[j];
            if (off + a->size <= c->offset)
                break;
            if (align_up(c->offset + c->size, a->align) > off)
                off = align_up(c->offset + c->size, a->align);
        }
        a->offset = off;
        placed[n_placed++] = a;
        if (off + a->size > end)
            end = off + a->size;
    }
    plan->size = align_up(end, 16);
    return 0;
}

/* ---- the lowerer: plumbing ---- */

static const char *temp(rk_lowerer *lw, const char *hint)
{
    size_t n = strlen(hint), d;
    char digits[RK_INT_DIGITS], *s;
    lw->temp_counter++;
    d = rk_fmt_int(lw->temp_counter, digits);
    if (!(s = rk_alloc(lw->arena, n + d + 3))) {
        lw->oom = 1;
        return NULL;
    }
    s[0] = '%';
    memcpy(s + 1, hint, n);
    s[n + 1] = '.';
    memcpy(s + n + 2, digits, d + 1);
    return s;
}

static rk_ll_block *new_block(rk_lowerer *lw, const char *kind)
{
    char digits[RK_INT_DIGITS];
    lw->block_counter++;
    rk_fmt_int(lw->block_counter, digits);
    return rk_ll_add_block(lw, concat(lw, kind, ".", digits));
}

static const char *val(rk_lowerer *lw, const rk_ir_value *v);

/* One instruction line, "  " + the formatted text + "\n", into block: Python's f-string. The
 * directives, evaluated left to right like Python's (the first that fails ends the line):
 *   $s  a string (NULL: out of memory)     $d  a long long
 *   $T  ll_type of an IR type              $v  val(value)
 *   $t  typed(value) = ll_type(type) + " " + val(value)      $$ a '$' */
static int vemit(rk_lowerer *lw, rk_ll_block *block, const char *fmt, va_list ap)
{
    rk_buf *o;
    const char *p, *run = fmt, *s;
    if (!block) {
        lw->oom = 1;
        return -1;
    }
    o = &block->lines;
    if (rk_buf_room(o, 1024)) /* most lines then fit without a grow */
        lw->oom = 1;
    rk_buf_putn(o, "  ", 2);
    for (;;) {
        const rk_ir_value *v;
        p = strchr(run, '$'); /* the literal runs between directives, found by the library */
        if (!p)
            break;
        rk_buf_putn(o, run, (size_t)(p - run));
        p++;
        switch (*p) {
        case 's':
            if (!(s = va_arg(ap, const char *)))
                lw->oom = 1;
            else
                rk_buf_puts(o, s);
            break;
        case 'd': rk_buf_put_int(o, va_arg(ap, long long)); break;
        case 'T':
            if (!(s = ll_type(lw, va_arg(ap, const char *))))
                return -1;
            rk_buf_puts(o, s);
            break;
        case 't':
        case 'v':
            v = va_arg(ap, const rk_ir_value *);
            if (*p == 't') {
                if (!(s = ll_type(lw, v->type)))
                    return -1;
                rk_buf_puts(o, s);
                rk_buf_putn(o, " ", 1);
            }
            if (!(s = val(lw, v)))
                return -1;
            rk_buf_puts(o, s);
            break;
        default:
            rk_buf_putn(o, "$", 1);
            if (!*p)
                p--; /* a '$' that ends the format: the run after it is empty */
            break;
        }
        run = p + 1;
    }
    rk_buf_puts(o, run);
    rk_buf_putn(o, "\n", 1);
    return 0;
}

/* lw.emit(...): a line in the current block. */
static int emit(rk_lowerer *lw, const char *fmt, ...)
{
    va_list ap;
    int status;
    va_start(ap, fmt);
    status = vemit(lw, lw->block, fmt, ap);
    va_end(ap);
    return status;
}

/* block.lines.append(...): a line in another block. */
static int emit_to(rk_lowerer *lw, rk_ll_block *block, const char *fmt, ...)
{
    va_list ap;
    int status;
    va_start(ap, fmt);
    status = vemit(lw, block, fmt, ap);
    va_end(ap);
    return status;
}

static int need(rk_lowerer *lw, const char *key)
{
    int i = decl_index(lw, key);
    if (i < 0)
        return -1;
    lw->needed[i] = 1;
    return 0;
}

/* names[v.name] = v.name + suffix, the text returned (NULL, and oom, when it failed) */
static const char *define(rk_lowerer *lw, const rk_ir_value *v)
{
    const char *text = lw->suffix[0] ? concat(lw, v->name, lw->suffix, NULL) : v->name;
    rk_ll_bind_value(lw, v, text);
    return text;
}

/* val(v) (NULL after the failure). */
static const char *val(rk_lowerer *lw, const rk_ir_value *v)
{
    const char *text = rk_ll_bound(lw, v);
    if (!text)
        fail(lw, "%s is used before it is defined", v->name);
    return text;
}

/* typed(v) as an arena string (NULL after the failure). */
static const char *typed(rk_lowerer *lw, const rk_ir_value *v)
{
    const char *t = ll_type(lw, v->type), *text;
    if (!t || !(text = val(lw, v)))
        return NULL;
    return concat(lw, t, " ", text);
}

static int is_int(const rk_attr *a) { return a && a->kind == RK_ATTR_INT; }

/* attrs.get(key) is True */
static int flag_set(const rk_attrs *attrs, const char *key)
{
    const rk_attr *a = rk_attrs_get(attrs, key);
    return a && a->kind == RK_ATTR_BOOL && a->i;
}

/* attrs.get(key) is False */
static int flag_cleared(const rk_attrs *attrs, const char *key)
{
    const rk_attr *a = rk_attrs_get(attrs, key);
    return a && a->kind == RK_ATTR_BOOL && !a->i;
}

/* An integer attr printed as an i32 immediate (or a smaller one, checked by the handler). */
static int int_attr(rk_lowerer *lw, const rk_ir_op *op, const char *key, long long *value)
{
    const rk_attr *a = rk_attrs_get(&op->attrs, key);
    if (!is_int(a))
        return fail(lw, "%s needs an integer attr %s", op->name, key);
    if (a->i < -2147483648LL || a->i > 2147483647LL)
        return fail(lw, "%s attr %s does not fit in i32", op->name, key);
    *value = a->i;
    return 0;
}

static rk_ll_alloc *alloc_of(rk_lowerer *lw, const rk_ir_value *v)
{
    rk_ll_alloc *a = find_alloc(&lw->plan, v->name);
    if (!a || a->offset < 0) {
        fail(lw, "%s is not a placed LDS allocation", v->name);
        return NULL;
    }
    return a;
}

/* The allocation's first byte: the pool itself at offset 0, else one GEP per block. */
static const char *lds_base(rk_lowerer *lw, const rk_ll_alloc *a)
{
    const char *base;
    if (a->offset == 0)
        return lw->pool;
    if ((base = rk_ll_block_base(lw->block, a)))
        return base;
    base = temp(lw, "smem_base");
    if (emit(lw, "$s = getelementptr inbounds i8, ptr addrspace(3) $s, i32 $d", base, lw->pool, a->offset))
        return NULL;
    rk_ll_set_block_base(lw, lw->block, a, base);
    return base;
}

static const char *lds_gep(rk_lowerer *lw, const rk_ir_value *s, const rk_ir_value *row, const rk_ir_value *col,
                           const char *hint)
{
    rk_ll_alloc *a = alloc_of(lw, s);
    const char *base, *gep;
    if (!a || !(base = lds_base(lw, a)))
        return NULL;
    gep = temp(lw, hint);
    if (!a->array_type && !(a->array_type = lds_array_type(lw, a->type))) /* Python's lru_cache */
        return NULL;
    if (emit(lw, "$s = getelementptr inbounds $s, ptr addrspace(3) $s, i32 0, $t, $t", gep, a->array_type, base, row,
             col))
        return NULL;
    return gep;
}

static int lds_align(rk_lowerer *lw, const rk_ir_op *op, const rk_ir_value *s, long long *align)
{
    const rk_ll_alloc *a;
    if (int_attr(lw, op, "align", align))
        return -1;
    if (!(a = alloc_of(lw, s)))
        return -1;
    if (*align == 0)
        return crash(lw, op); /* Python: ZeroDivisionError */
    if (a->offset % *align != 0)
        return fail(lw, "%s on %s claims align %lld but the allocation is at pool offset %lld", op->name, s->name,
                    *align, a->offset);
    return 0;
}

/* ---- the lowerer: the module ---- */

static int ll_signature(rk_lowerer *lw, rk_buf *o);
static int int_attr_of(rk_lowerer *lw, const rk_attrs *attrs, const char *key, const char *where, long long *value);
static int ll_attributes(rk_lowerer *lw, rk_buf *o);
static int lower_region(rk_lowerer *lw, const rk_ir_region *region, int is_entry, int is_for_body);

/* Checks in a fixed order (kernel attrs, params, the LDS pool, then the ops in order), so both
 * engines report the same first problem. The module goes to out only when all went well. */
static int lower(rk_lowerer *lw, rk_buf *out)
{
    rk_buf attributes, signature;
    int i, printed = 0, status = -1;
    rk_buf_init(&attributes);
    rk_buf_init(&signature);
    /* the builder's names end in their id: its count bounds them (no walk over the kernel) */
    if (rk_names_init(&lw->names, lw->arena,
                      lw->kernel->n_ids > 0 ? (size_t)lw->kernel->n_ids + 64
                                            : (size_t)count_ops(lw->kernel->entry) * 5 / 4 + 80,
                      sizeof(rk_ll_name))) {
        lw->oom = 1;
        goto done;
    }
    if (ll_attributes(lw, &attributes) || ll_signature(lw, &signature) || plan_lds(lw, lw->kernel, &lw->plan))
        goto done;
    if (lw->plan.size > lw->capacity) {
        fail(lw, "the LDS pool of %lld bytes exceeds the %lld bytes of %s", lw->plan.size, lw->capacity,
             lw->backend->arch);
        goto done;
    }
    if (lower_region(lw, lw->kernel->entry, 1, 0))
        goto done;
    if (!lw->block->terminated) {
        if (emit(lw, "ret void"))
            goto done;
        lw->block->terminated = 1;
    }
    if (rk_buf_reserve(out, rk_ll_module_size(lw, &attributes, &signature)))
        lw->oom = 1;
    rk_buf_puts(out, "target datalayout = \"");
    rk_buf_puts(out, lw->flavor->datalayout);
    rk_buf_puts(out, "\"\ntarget triple = \"" TRIPLE "\"\n\n");
    if (lw->plan.size > 0) {
        rk_buf_puts(out, lw->pool);
        rk_buf_puts(out, " = internal unnamed_addr addrspace(3) global [");
        rk_buf_put_int(out, lw->plan.size);
        rk_buf_puts(out, " x i8] poison, align 16\n\n");
    }
    for (i = 0; i < RK_LL_N_DECLS; i++)
        if (lw->needed[i]) {
            rk_buf_puts(out, rk_decl_text(&rk_ll_decls[i], lw->flavor));
            rk_buf_putn(out, "\n", 1);
            printed++;
        }
    if (printed > 0)
        rk_buf_putn(out, "\n", 1);
    rk_buf_puts(out, "define amdgpu_kernel void @");
    rk_buf_puts(out, lw->quote);
    rk_buf_puts(out, lw->kernel->name);
    rk_buf_puts(out, lw->quote);
    rk_buf_putn(out, "(", 1);
    if (signature.len)
        rk_buf_putn(out, signature.data, signature.len);
    rk_buf_puts(out, ") #0 {\n");
    for (i = 0; i < lw->n_blocks; i++) {
        rk_ll_block *block = lw->blocks[i];
        rk_buf_puts(out, block->label);
        rk_buf_puts(out, ":\n");
        if (block->lines.failed)
            lw->oom = 1;
        else if (block->lines.len)
            rk_buf_putn(out, block->lines.data, block->lines.len);
    }
    rk_buf_puts(out, "}\n\n");
    if (attributes.len)
        rk_buf_putn(out, attributes.data, attributes.len);
    rk_buf_putn(out, "\n", 1);
    if (lw->markers || lw->fences)
        rk_buf_puts(out, "\n");
    if (lw->markers)
        rk_buf_puts(out, "!1 = !{}\n");
    if (lw->fences)
        rk_buf_puts(out, LDS_MMRA "\n");
    status = 0;
done:
    if (attributes.failed || signature.failed)
        lw->oom = 1;
    rk_buf_free(&attributes);
    rk_buf_free(&signature);
    return status;
}

static int ll_signature(rk_lowerer *lw, rk_buf *o)
{
    int i, j;
    for (i = 0; i < lw->kernel->n_params; i++) {
        const rk_ir_param *p = lw->kernel->params[i];
        const char *t = p->value.type, *text;
        long long n = 0;
        for (j = 0; j < p->attrs.n; j++)
            if (!rk_str_in(p->attrs.items[j].key, rk_ll_param_attrs))
                return fail(lw, "unknown param attr %s on %s", p->attrs.items[j].key, p->value.name);
        if (i > 0)
            rk_buf_putn(o, ", ", 2);
        if (RK_TYPE_IS_PTR(t)) {
            const rk_attr *space = rk_attrs_get(&p->attrs, "addr_space");
            if (rk_attr_is_str(space, "constant"))
                rk_buf_puts(o, "ptr addrspace(4)");
            else if (space && !rk_attr_is_str(space, "global"))
                return fail(lw, "unknown addr_space on %s", p->value.name);
            else
                rk_buf_puts(o, "ptr addrspace(1)");
            if (flag_set(&p->attrs, "noalias"))
                rk_buf_puts(o, " noalias");
            if (flag_set(&p->attrs, "readonly"))
                rk_buf_puts(o, " readonly");
            if (flag_set(&p->attrs, "writeonly"))
                rk_buf_puts(o, " writeonly");
            if (!flag_cleared(&p->attrs, "nocapture")) {
                rk_buf_putn(o, " ", 1);
                rk_buf_puts(o, lw->flavor->nocapture);
            }
            if (flag_set(&p->attrs, "nonnull"))
                rk_buf_puts(o, " nonnull");
            if (rk_attrs_get(&p->attrs, "align")) {
                if (int_attr_of(lw, &p->attrs, "align", p->value.name, &n))
                    return -1;
                rk_buf_puts(o, " align ");
                rk_buf_put_int(o, n);
            }
            if (rk_attrs_get(&p->attrs, "dereferenceable")) {
                if (int_attr_of(lw, &p->attrs, "dereferenceable", p->value.name, &n))
                    return -1;
                rk_buf_puts(o, " dereferenceable(");
                rk_buf_put_int(o, n);
                rk_buf_putn(o, ")", 1);
            }
        } else if (strcmp(t, "i32") == 0 || strcmp(t, "i64") == 0) {
            if (p->attrs.n)
                return fail(lw, "a scalar param carries attrs: %s", p->value.name);
            if (!(text = ll_type(lw, t)))
                return -1;
            rk_buf_puts(o, text);
        } else
            return fail(lw, "a kernel param of type %s: %s", t, p->value.name);
        rk_buf_putn(o, " ", 1);
        if (!(text = define(lw, &p->value)))
            return -1;
        rk_buf_puts(o, text);
    }
    return 0;
}

static int int_attr_of(rk_lowerer *lw, const rk_attrs *attrs, const char *key, const char *where, long long *value)
{
    const rk_attr *a = rk_attrs_get(attrs, key);
    if (!is_int(a))
        return fail(lw, "attr %s of %s must be an integer", key, where);
    *value = a->i;
    return 0;
}

/* An int N gives "N,N"; a two-int list [lo, hi] gives "lo,hi". */
static int pair_attr(rk_lowerer *lw, const char *key, rk_buf *o)
{
    const rk_attr *value = rk_attrs_get(&lw->kernel->attrs, key);
    long long lo = 0, hi = 0;
    if (is_int(value))
        lo = hi = value->i;
    else if (value && value->kind == RK_ATTR_LIST && value->n == 2 && is_int(value->items[0])
             && is_int(value->items[1])) {
        lo = value->items[0]->i;
        hi = value->items[1]->i;
    } else
        return fail(lw, "kernel attr %s must be an integer or a pair", key);
    rk_buf_put_int(o, lo);
    rk_buf_putn(o, ",", 1);
    rk_buf_put_int(o, hi);
    return 0;
}

static int ll_attributes(rk_lowerer *lw, rk_buf *o)
{
    const rk_attrs *attrs = &lw->kernel->attrs;
    const rk_attr *strategy;
    long long max_wg = 256;
    int i;
    for (i = 0; i < attrs->n; i++)
        if (!rk_str_in(attrs->items[i].key, rk_ll_kernel_attrs))
            return fail(lw, "unknown kernel attr %s", attrs->items[i].key);
    if (rk_attrs_get(attrs, "max_workgroup_size")
        && int_attr_of(lw, attrs, "max_workgroup_size", "the kernel", &max_wg))
        return -1;
    rk_buf_puts(o, "attributes #0 = { \"uniform-work-group-size\"=\"true\" \"amdgpu-flat-work-group-size\"=\"64,");
    rk_buf_put_int(o, max_wg);
    rk_buf_putn(o, "\"", 1);
    if ((strategy = rk_attrs_get(attrs, "scheduler_strategy"))) {
        if (strategy->kind != RK_ATTR_STR || !rk_str_in(strategy->s, rk_ll_sched_strategies))
            return fail(lw, "unknown scheduler_strategy");
        rk_buf_puts(o, " \"amdgpu-sched-strategy\"=\"");
        rk_buf_puts(o, strategy->s);
        rk_buf_putn(o, "\"", 1);
    }
    if (rk_attrs_get(attrs, "waves_per_eu")) {
        rk_buf_puts(o, " \"amdgpu-waves-per-eu\"=\"");
        if (pair_attr(lw, "waves_per_eu", o))
            return -1;
        rk_buf_putn(o, "\"", 1);
    }
    if (rk_attrs_get(attrs, "agpr_alloc")) {
        rk_buf_puts(o, " \"amdgpu-agpr-alloc\"=\"");
        if (pair_attr(lw, "agpr_alloc", o))
            return -1;
        rk_buf_putn(o, "\"", 1);
    }
    rk_buf_puts(o, " norecurse nounwind }");
    return 0;
}

/* ---- regions ---- */

static int lower_op(rk_lowerer *lw, const rk_ir_op *op);

/* A for body's final scf.yield is read by lower_for, not lowered. */
static int lower_region(rk_lowerer *lw, const rk_ir_region *region, int is_entry, int is_for_body)
{
    int n = region->n_ops, i;
    if (is_for_body)
        n--;
    for (i = 0; i < n; i++) {
        const rk_ir_op *op = region->ops[i];
        if (op->code == RK_OP_RETURN && !(is_entry && i == n - 1))
            return fail(lw, "cf.return must be the last op of the kernel");
        if (lower_op(lw, op))
            return -1;
    }
    return 0;
}

typedef int (*rk_ll_handler)(rk_lowerer *lw, const rk_ir_op *op);
static const rk_ll_handler rk_ll_handlers[RK_N_OPS];

static int lower_op(rk_lowerer *lw, const rk_ir_op *op)
{
    rk_ll_handler handler = op->code >= 0 && op->code < RK_N_OPS ? rk_ll_handlers[op->code] : NULL;
    if (op->code == RK_OP_YIELD)
        return fail(lw, "scf.yield outside the end of an scf.for body");
    if (!handler)
        return fail(lw, "no lowering for op %s", op->name);
    return handler(lw, op);
}

/* ---- handlers: arith (docs/ir.md §4.1) ---- */

static int lower_constant(rk_lowerer *lw, const rk_ir_op *op)
{
    const rk_ir_value *r;
    const rk_attr *value = rk_attrs_get(&op->attrs, "value");
    char digits[RK_INT_DIGITS];
    if (shape(lw, op, -1, 1))
        return -1;
    r = &op->results[0];
    if (strcmp(r->type, "f32") == 0) {
        const char *text;
        if (!value || value->kind != RK_ATTR_FLOAT)
            return fail(lw, "an f32 arith.constant needs a float value");
        if (!(text = f32_literal(lw, value->f)))
            return -1;
        rk_ll_bind_value(lw, r, text);
        return 0;
    }
    if (!is_int(value))
        return fail(lw, "an integer arith.constant needs an integer value");
    if (strcmp(r->type, "i1") == 0)
        rk_ll_bind_value(lw, r, value->i != 0 ? "true" : "false");
    else if (strcmp(r->type, "i32") == 0 || strcmp(r->type, "i64") == 0) {
        rk_fmt_int(value->i, digits);
        rk_ll_bind_value(lw, r, concat(lw, digits, "", NULL));
        rk_ll_set_int(lw, r->name, value->i);
    } else
        return fail(lw, "arith.constant of type %s", r->type);
    return 0;
}

static int lower_constant_vec(rk_lowerer *lw, const rk_ir_op *op)
{
    if (!rk_attr_py_eq_int(rk_attrs_get(&op->attrs, "value"), 0))
        return fail(lw, "arith.constant_vec other than the zero vector");
    if (shape(lw, op, -1, 1))
        return -1;
    /* Python computes t = ll_type(...) before define: a failing type wins over nothing else */
    if (!ll_type(lw, op->results[0].type))
        return -1;
    return emit(lw, "$s = select i1 true, $T zeroinitializer, $T zeroinitializer", define(lw, &op->results[0]),
                op->results[0].type, op->results[0].type);
}

static int lower_binary(rk_lowerer *lw, const rk_ir_op *op)
{
    const char *opcode = rk_ll_binary_ops[op->code] ? rk_ll_binary_ops[op->code] : "";
    if (shape(lw, op, 2, 1))
        return -1;
    return emit(lw, "$s = $s $t, $v", define(lw, &op->results[0]), opcode, &op->operands[0], &op->operands[1]);
}

static int lower_binary_call(rk_lowerer *lw, const rk_ir_op *op)
{
    const rk_ll_binary_call *row = &rk_ll_binary_calls[op->code];
    if (!row->key)
        return 0;
    if (need(lw, row->key) || shape(lw, op, 2, 1))
        return -1;
    return emit(lw, "$s = call $s($t, $t)", define(lw, &op->results[0]), row->callee, &op->operands[0],
                &op->operands[1]);
}

static int lower_cmp(rk_lowerer *lw, const rk_ir_op *op)
{
    const rk_attr *pred = rk_attrs_get(&op->attrs, "pred");
    if (!pred || pred->kind != RK_ATTR_STR || !rk_str_in(pred->s, rk_cmp_preds))
        return fail(lw, "arith.cmp with an unknown pred");
    if (shape(lw, op, 2, 1))
        return -1;
    return emit(lw, "$s = icmp $s $t, $v", define(lw, &op->results[0]), pred->s, &op->operands[0], &op->operands[1]);
}

static int lower_select(rk_lowerer *lw, const rk_ir_op *op)
{
    if (shape(lw, op, 3, 1))
        return -1;
    return emit(lw, "$s = select $t, $t, $t", define(lw, &op->results[0]), &op->operands[0], &op->operands[1],
                &op->operands[2]);
}

static int lower_fptrunc(rk_lowerer *lw, const rk_ir_op *op)
{
    if (op->n_results < 1 || op->n_operands < 1)
        return crash(lw, op);
    return emit(lw, "$s = fptrunc $t to $T", define(lw, &op->results[0]), &op->operands[0], op->results[0].type);
}

static int lower_bitcast(rk_lowerer *lw, const rk_ir_op *op)
{
    if (op->n_results < 1 || op->n_operands < 1)
        return crash(lw, op);
    return emit(lw, "$s = bitcast $t to $T", define(lw, &op->results[0]), &op->operands[0], op->results[0].type);
}

/* ---- gpu (§4.2) ---- */

static int lower_id(rk_lowerer *lw, const rk_ir_op *op)
{
    long long dim = 0;
    const char *key;
    if (int_attr(lw, op, "dim", &dim))
        return -1;
    if (dim < 0 || dim > 2)
        return fail(lw, "%s dim %lld", op->name, dim);
    key = rk_ll_id_keys[op->code == RK_OP_THREAD_ID ? 0 : 1][dim];
    if (need(lw, key) || shape(lw, op, -1, 1))
        return -1;
    return emit(lw, "$s = call i32 @llvm.amdgcn.$s()", define(lw, &op->results[0]), key);
}

static int lower_lane_id(rk_lowerer *lw, const rk_ir_op *op)
{
    const char *lo;
    if (need(lw, "mbcnt.lo") || need(lw, "mbcnt.hi"))
        return -1;
    lo = temp(lw, "mbcnt_lo");
    if (emit(lw, "$s = call i32 @llvm.amdgcn.mbcnt.lo(i32 -1, i32 0)", lo) || shape(lw, op, -1, 1))
        return -1;
    return emit(lw, "$s = call i32 @llvm.amdgcn.mbcnt.hi(i32 -1, i32 $s)", define(lw, &op->results[0]), lo);
}

static int lower_readfirstlane(rk_lowerer *lw, const rk_ir_op *op)
{
    if (need(lw, "readfirstlane.i32"))
        return -1;
    if (op->n_results < 1 || op->n_operands < 1)
        return crash(lw, op);
    return emit(lw, "$s = call i32 @llvm.amdgcn.readfirstlane.i32($t)", define(lw, &op->results[0]), &op->operands[0]);
}

/* ---- memory (§4.3) ---- */

static int lower_make_buffer_rsrc(rk_lowerer *lw, const rk_ir_op *op)
{
    const rk_ir_value *p, *nbytes;
    const char *nb, *r;
    long long word3;
    if (shape(lw, op, 2, 0))
        return -1;
    p = &op->operands[0];
    nbytes = &op->operands[1];
    if (need(lw, "make.buffer.rsrc"))
        return -1;
    word3 = lw->backend->word3;
    nb = temp(lw, "nb64");                /* taken in every flavor, so temps number alike */
    if (shape(lw, op, 2, 1))
        return -1;
    r = define(lw, &op->results[0]);
    if (lw->flavor->rsrc_p8) {
        if (emit(lw, "$s = zext $t to i64", nb, nbytes))
            return -1;
        return emit(lw,
                    "$s = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1($t, i16 0, i64 $s, "
                    "i32 $d)",
                    r, p, nb, word3);
    }
    return emit(lw, "$s = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p1($t, i16 0, $t, i32 $d)", r, p, nbytes,
                word3);
}

/* The width row of a buffer load or store of type t, its declaration marked needed, and in
 * *bits the temp of its integer value. */
static const rk_ll_width *buffer_access(rk_lowerer *lw, const char *t, int store, const char **bits)
{
    const rk_ll_width *width;
    long long bytes = 0;
    if (type_bytes(lw, t, &bytes) || !(width = buffer_width(lw, bytes)))
        return NULL;
    /* "raw.ptr.buffer.load." or "raw.ptr.buffer.store." + suffix */
    if (need(lw, store ? width->store_key : width->load_key))
        return NULL;
    *bits = temp(lw, store ? width->store_temp : width->load_temp); /* "bs" or "bl" + suffix */
    return width;
}

static int lower_buffer_load(rk_lowerer *lw, const rk_ir_op *op)
{
    const rk_ll_width *width;
    const char *raw;
    if (shape(lw, op, 2, 1) || !(width = buffer_access(lw, op->results[0].type, 0, &raw)))
        return -1;
    if (emit(lw, "$s = call $s @llvm.amdgcn.raw.ptr.buffer.load.$s($t, $t, i32 0, i32 0)", raw, width->type,
             width->suffix, &op->operands[0], &op->operands[1]))
        return -1;
    return emit(lw, "$s = bitcast $s $s to $T", define(lw, &op->results[0]), width->type, raw, op->results[0].type);
}

static int lower_buffer_store(rk_lowerer *lw, const rk_ir_op *op)
{
    const rk_ll_width *width;
    const char *bits;
    if (shape(lw, op, 3, 0) || !(width = buffer_access(lw, op->operands[2].type, 1, &bits)))
        return -1;
    if (emit(lw, "$s = bitcast $t to $s", bits, &op->operands[2], width->type))
        return -1;
    return emit(lw, "call void @llvm.amdgcn.raw.ptr.buffer.store.$s($s $s, $t, $t, i32 0, i32 0)", width->suffix,
                width->type, bits, &op->operands[0], &op->operands[1]);
}

static int lower_global_atomic_fadd(rk_lowerer *lw, const rk_ir_op *op)
{
    const rk_ir_value *p, *idx, *v;
    const char *gep, *old, *elem, *elem_type;
    size_t n;
    if (shape(lw, op, 3, 0))
        return -1;
    p = &op->operands[0];
    idx = &op->operands[1];
    v = &op->operands[2];
    gep = temp(lw, "gep");
    if (rk_type_elem_before_comma(p->type, 4, &elem, &n))
        return crash(lw, op);
    if (!(elem_type = type_n(lw, elem, n)))
        return -1;
    if (emit(lw, "$s = getelementptr inbounds $s, $t, $t", gep, elem_type, p, idx))
        return -1;
    old = temp(lw, "atomic");
    if (emit(lw, "$s = atomicrmw fadd ptr addrspace(1) $s, $t monotonic" MARKERS, old, gep, v))
        return -1;
    lw->markers = 1;
    return 0;
}

static int lower_smem_alloc(rk_lowerer *lw, const rk_ir_op *op)
{
    if (shape(lw, op, -1, 1))
        return -1;
    define(lw, &op->results[0]);      /* prints nothing; its uses go through the pool */
    return 0;
}

static int lower_smem_load(rk_lowerer *lw, const rk_ir_op *op)
{
    const rk_ir_value *s, *res;
    const char *gep, *load = "load ";
    long long align = 0, n = 0;
    if (shape(lw, op, 3, 1))
        return -1;
    s = &op->operands[0];
    res = &op->results[0];
    if (lds_align(lw, op, s, &align))
        return -1;
    if (!(gep = lds_gep(lw, s, &op->operands[1], &op->operands[2], "gep")))
        return -1;
    if (lw->backend->lds_v8_volatile && RK_TYPE_IS_VEC(res->type)) {
        if (vec_len(lw, res->type, &n))
            return -1;
        if (n == 8)
            load = "load volatile ";
    }
    return emit(lw, "$s = $s$T, ptr addrspace(3) $s, align $d", define(lw, res), load, res->type, gep, align);
}

static int lower_smem_store(rk_lowerer *lw, const rk_ir_op *op)
{
    const rk_ir_value *s;
    const char *gep;
    long long align = 0;
    if (shape(lw, op, 4, 0))
        return -1;
    s = &op->operands[0];
    if (lds_align(lw, op, s, &align))
        return -1;
    if (!(gep = lds_gep(lw, s, &op->operands[1], &op->operands[2], "gep")))
        return -1;
    return emit(lw, "store $t, ptr addrspace(3) $s, align $d", &op->operands[3], gep, align);
}

static int lower_smem_addr(rk_lowerer *lw, const rk_ir_op *op)
{
    const rk_ll_alloc *a;
    const char *base;
    if (op->n_operands < 1)
        return crash(lw, op);
    if (!(a = alloc_of(lw, &op->operands[0])))
        return -1;
    if (!(base = lds_base(lw, a)))
        return -1;
    if (op->n_results < 1)
        return crash(lw, op);
    return emit(lw, "$s = ptrtoint ptr addrspace(3) $s to i32", define(lw, &op->results[0]), base);
}

static int lower_ds_read_tr16_b64(rk_lowerer *lw, const rk_ir_op *op)
{
    const rk_ir_value *res;
    const char *gep, *raw;
    if (lw->backend->transpose != TR_B64)
        return fail(lw, "tile.ds_read_tr16_b64 is not available on %s (gfx950 only)", lw->backend->arch);
    if (shape(lw, op, 3, 1))
        return -1;
    res = &op->results[0];
    if (need(lw, "ds.read.tr16.b64.v4i16"))
        return -1;
    if (!(gep = lds_gep(lw, &op->operands[0], &op->operands[1], &op->operands[2], "tr.base")))
        return -1;
    raw = temp(lw, "tr.raw");
    if (emit(lw, "$s = call <4 x i16> @llvm.amdgcn.ds.read.tr16.b64.v4i16(ptr addrspace(3) $s)", raw, gep))
        return -1;
    return emit(lw, "$s = bitcast <4 x i16> $s to $T", define(lw, res), raw, res->type);
}

static int lower_ds_read_tr16_b128(rk_lowerer *lw, const rk_ir_op *op)
{
    const rk_ir_value *s, *res;
    const char *key, *gep, *elem;
    size_t n;
    if (lw->backend->transpose != TR_B128)
        return fail(lw, "tile.ds_read_tr16_b128 is not available on %s (gfx1250 only)", lw->backend->arch);
    if (shape(lw, op, 3, 1))
        return -1;
    s = &op->operands[0];
    res = &op->results[0];
    if (rk_type_elem_before_comma(s->type, 5, &elem, &n))
        return crash(lw, op);
    key = n == 3 && memcmp(elem, "f16", 3) == 0 ? "ds.load.tr16.b128.v8f16" : "ds.load.tr16.b128.v8bf16";
    if (need(lw, key))
        return -1;
    if (!(gep = lds_gep(lw, s, &op->operands[1], &op->operands[2], "tr.base")))
        return -1;
    return emit(lw, "$s = call $T @llvm.amdgcn.$s(ptr addrspace(3) $s)", define(lw, res), res->type, key, gep);
}

static int lower_async_buffer_load_lds(rk_lowerer *lw, const rk_ir_op *op)
{
    const rk_ir_value *r, *lds, *off;
    const char *ptr3;
    long long dwords = 0, aux = 0;
    if (shape(lw, op, 3, 0))
        return -1;
    r = &op->operands[0];
    lds = &op->operands[1];
    off = &op->operands[2];
    if (int_attr(lw, op, "dwords", &dwords) || int_attr(lw, op, "aux", &aux))
        return -1;
    if (dwords > lw->backend->async_lds_dwords)
        return fail(lw, "tile.async_buffer_load_lds of %lld bytes is not available on %s", dwords * 4,
                    lw->backend->arch);
    if (aux < 0 || aux > 3)
        return fail(lw, "tile.async_buffer_load_lds aux %lld", aux);
    if (need(lw, "raw.ptr.buffer.load.lds"))
        return -1;
    ptr3 = temp(lw, "lds_ptr");
    if (emit(lw, "$s = inttoptr $t to ptr addrspace(3)", ptr3, lds))
        return -1;
    return emit(lw,
                "call void @llvm.amdgcn.raw.ptr.buffer.load.lds($t, ptr addrspace(3) $s, i32 $d, $t, "
                "i32 0, i32 0, i32 $d)",
                r, ptr3, dwords * 4, off, aux);
}

/* -1 (no wait) and anything above the limit give the limit (llvm-ir §12.6). */
static long long clamp_count(long long n, long long limit)
{
    if (n < 0 || n > limit)
        return limit;
    return n;
}

/* call void @llvm.amdgcn.<key>(<count_type> <count>), its declaration needed: a wait. */
static int call_wait(rk_lowerer *lw, const char *key, const char *count_type, long long count)
{
    if (need(lw, key))
        return -1;
    return emit(lw, "call void @llvm.amdgcn.$s($s $d)", key, count_type, count);
}

static int lower_s_waitcnt(rk_lowerer *lw, const rk_ir_op *op)
{
    long long vm = 0, imm;
    if (int_attr(lw, op, "vmcnt", &vm))
        return -1;
    vm = clamp_count(vm, VMCNT_MAX);
    if (lw->backend->wait == WAIT_SPLIT) {
        if (call_wait(lw, "s.wait.loadcnt", "i16", vm))
            return -1;
        return call_wait(lw, "s.wait.storecnt", "i16", vm);
    }
    if (lw->backend->wait == WAIT_GFX9)
        imm = (vm & 15) | (GFX9_EXPCNT_MAX << 4) | (GFX9_LGKMCNT_MAX << 8) | ((vm >> 4) << 14);
    else
        imm = GFX11_EXPCNT_MAX | (GFX11_LGKMCNT_MAX << 4) | (vm << 10);
    return call_wait(lw, "s.waitcnt", "i32", imm);
}

/* The barrier between LDS-only workgroup fences: release before, acquire after
 * (docs/lowering.md §5; docs/memory-model.md measures what they cost). */
static int emit_barrier(rk_lowerer *lw)
{
    if (need(lw, "s.barrier"))
        return -1;
    lw->fences = 1;
    if (emit(lw, FENCE_RELEASE) || emit(lw, "call void @llvm.amdgcn.s.barrier()"))
        return -1;
    return emit(lw, FENCE_ACQUIRE);
}

static int lower_sync(rk_lowerer *lw, const rk_ir_op *op)
{
    (void)op;
    if (lw->backend->wait == WAIT_SPLIT) {
        if (call_wait(lw, "s.wait.loadcnt", "i16", 0) || call_wait(lw, "s.wait.dscnt", "i16", 0))
            return -1;
    } else if (call_wait(lw, "s.waitcnt", "i32", lw->backend->drain_full)) {
        return -1;
    }
    return emit_barrier(lw);
}

static int lower_sync_lds_only(rk_lowerer *lw, const rk_ir_op *op)
{
    (void)op;
    if (lw->backend->wait == WAIT_SPLIT) {
        if (call_wait(lw, "s.wait.dscnt", "i16", 0))
            return -1;
    } else if (call_wait(lw, "s.waitcnt", "i32", lw->backend->drain_lds)) {
        return -1;
    }
    return emit_barrier(lw);
}

/* ---- vector (§4.4) ---- */

/* Python evaluates "... + str(lw.int_attr(op, key))" after the typed operands, so their
 * failures come first: checked before the attr is read, then printed by the line. */
static int typed_ok(rk_lowerer *lw, const rk_ir_value *v)
{
    /* typed(v)'s checks in its order (the type, then the name), without making its text */
    return ll_type(lw, v->type) && val(lw, v) ? 0 : -1;
}

static int lower_extract(rk_lowerer *lw, const rk_ir_op *op)
{
    long long index = 0;
    const char *r;
    if (op->n_results < 1 || op->n_operands < 1)
        return crash(lw, op);
    r = define(lw, &op->results[0]);
    if (typed_ok(lw, &op->operands[0]) || int_attr(lw, op, "index", &index))
        return -1;
    return emit(lw, "$s = extractelement $t, i32 $d", r, &op->operands[0], index);
}

static int lower_insert(rk_lowerer *lw, const rk_ir_op *op)
{
    long long index = 0;
    const char *r;
    if (shape(lw, op, 2, 1))
        return -1;
    r = define(lw, &op->results[0]);
    if (typed_ok(lw, &op->operands[0]) || typed_ok(lw, &op->operands[1]) || int_attr(lw, op, "index", &index))
        return -1;
    return emit(lw, "$s = insertelement $t, $t, i32 $d", r, &op->operands[0], &op->operands[1], index);
}

static int lower_from_elements(rk_lowerer *lw, const rk_ir_op *op)
{
    const rk_ir_value *res;
    const char *t, *acc = "poison", *name;
    int n = op->n_operands, i;
    if (shape(lw, op, -1, 1))
        return -1;
    res = &op->results[0];
    if (!(t = ll_type(lw, res->type)))
        return -1;
    for (i = 0; i < n; i++) {
        name = i == n - 1 ? define(lw, res) : temp(lw, "vp");
        if (emit(lw, "$s = insertelement $s $s, $t, i32 $d", name, t, acc, &op->operands[i], (long long)i))
            return -1;
        acc = name;
    }
    return 0;
}

/* A shufflevector mask as an arena string (NULL, and oom, on failure); -1 is a poison lane. */
static const char *mask_text(rk_lowerer *lw, const long long *indices, long long n)
{
    rk_buf *o = &lw->scratch;
    const char *s;
    long long i;
    o->len = 0;
    rk_buf_putn(o, "<", 1);
    rk_buf_put_int(o, n);
    rk_buf_puts(o, " x i32> <");
    for (i = 0; i < n; i++) {
        if (i > 0)
            rk_buf_putn(o, ", ", 2);
        if (indices[i] < 0)
            rk_buf_puts(o, "i32 poison");
        else {
            rk_buf_puts(o, "i32 ");
            rk_buf_put_int(o, indices[i]);
        }
    }
    rk_buf_putn(o, ">", 1);
    s = o->failed ? NULL : rk_strndup(lw->arena, o->data ? o->data : "", o->len);
    if (!s)
        lw->oom = 1;
    return s;
}

typedef struct rk_ll_vector {
    const char *type, *value;
    long long len;
} rk_ll_vector;

/* A concat operand as (vector type, value, length); a scalar becomes a 1-element vector. */
static int as_vector(rk_lowerer *lw, const rk_ir_value *v, rk_ll_vector *out)
{
    const char *name, *t;
    if (RK_TYPE_IS_VEC(v->type)) {
        if (!(out->type = ll_type(lw, v->type)) || !(out->value = val(lw, v)))
            return -1;
        return vec_len(lw, v->type, &out->len);
    }
    name = temp(lw, "cs");
    if (!(t = ll_type(lw, v->type)))
        return -1;
    t = rk_ll_vector_type(lw, 1, t);
    if (emit(lw, "$s = insertelement $s poison, $t, i32 0", name, t, v))
        return -1;
    out->type = t;
    out->value = name;
    out->len = 1;
    return 0;
}

/* Pads a vector of n elements to `to` elements (poison lanes) for a two-input shufflevector. */
static int widen(rk_lowerer *lw, rk_ll_vector *vec, long long to, const char *elem)
{
    long long *indices = rk_alloc(lw->arena, (size_t)(to > 0 ? to : 1) * sizeof *indices), i;
    const char *name, *mask;
    if (!indices) {
        lw->oom = 1;
        return -1;
    }
    for (i = 0; i < to; i++)
        indices[i] = i < vec->len ? i : -1;
    name = temp(lw, "cw");
    mask = mask_text(lw, indices, to);
    if (emit(lw, "$s = shufflevector $s $s, $s poison, $s", name, vec->type, vec->value, vec->type, mask))
        return -1;
    vec->type = rk_ll_vector_type(lw, to, elem);
    vec->value = name;
    return 0;
}

static int lower_concat(rk_lowerer *lw, const rk_ir_op *op)
{
    const rk_ir_value *res;
    const char *elem, *span, *mask;
    size_t n;
    rk_ll_vector a, b;
    long long width, *indices, i;
    if (shape(lw, op, 2, 1))
        return -1;
    res = &op->results[0];
    if (rk_type_vec_elem(res->type, &span, &n))
        return crash(lw, op);
    if (!(elem = type_n(lw, span, n)))
        return -1;
    if (as_vector(lw, &op->operands[0], &a) || as_vector(lw, &op->operands[1], &b))
        return -1;
    if (a.len < 0 || b.len < 0 || a.len > 1000000000 || b.len > 1000000000)
        return crash(lw, op);     /* Python: a MemoryError building the mask */
    width = a.len > b.len ? a.len : b.len;
    if (a.len < width && widen(lw, &a, width, elem))
        return -1;
    if (b.len < width && widen(lw, &b, width, elem))
        return -1;
    indices = rk_alloc(lw->arena, (size_t)(a.len + b.len + 1) * sizeof *indices);
    if (!indices) {
        lw->oom = 1;
        return -1;
    }
    for (i = 0; i < a.len; i++)
        indices[i] = i;
    for (i = 0; i < b.len; i++)
        indices[a.len + i] = width + i;
    mask = mask_text(lw, indices, a.len + b.len);
    return emit(lw, "$s = shufflevector $s $s, $s $s, $s", define(lw, res), a.type, a.value, b.type, b.value, mask);
}

/* ---- mma (§4.5) ---- */

static const char *mma_operand(rk_lowerer *lw, const rk_ll_mma_row *row, const rk_ir_value *v, const char *hint)
{
    const char *name, *value;
    if (!row->cast) {
        if (!(value = val(lw, v)))
            return NULL;
        return concat(lw, row->ab_type, " ", value);
    }
    name = temp(lw, hint);
    if (emit(lw, "$s = bitcast $t to $s", name, v, row->ab_type))
        return NULL;
    return concat(lw, row->ab_type, " ", name);
}

static int lower_mma(rk_lowerer *lw, const rk_ir_op *op)
{
    const char *op_id, *family, *a_text, *b_text, *c_text, *value, *types[3], *r;
    const rk_ll_mma_row *row;
    const rk_ir_value *a, *b, *c;
    int i, known;
    lw->scratch.len = 0;
    rk_attr_py_str(&lw->scratch, rk_attrs_get(&op->attrs, "op_id"), 0);
    op_id = lw->scratch.failed ? NULL
                               : rk_strndup(lw->arena, lw->scratch.data ? lw->scratch.data : "", lw->scratch.len);
    if (!op_id) {
        lw->oom = 1;
        return -1;
    }
    row = rk_mma_row(op_id);
    if (!row)
        return fail(lw, "tile.mma op_id %s has no lowering", op_id);
    for (i = 0; row->archs[i] && strcmp(row->archs[i], lw->backend->arch) != 0; i++)
        ;
    if (!row->archs[i])
        return fail(lw, "tile.mma %s is not available on %s", op_id, lw->backend->arch);
    if (lw->atom.op_id && strcmp(lw->atom.op_id, op_id) == 0) {
        known = lw->atom.known;
        memcpy(types, lw->atom.types, sizeof types);
    } else if ((known = rk_atom_types(lw->arena, op_id, types)) >= 0) {
        lw->atom.op_id = op_id;
        lw->atom.known = known;
        memcpy(lw->atom.types, types, sizeof types);
    }
    if (known < 0) {
        lw->oom = 1;
        return -1;
    }
    if (shape(lw, op, 3, 0))
        return -1;
    a = &op->operands[0];
    b = &op->operands[1];
    c = &op->operands[2];
    if (known == 0 || strcmp(a->type, types[0]) != 0 || strcmp(b->type, types[1]) != 0
        || strcmp(c->type, types[2]) != 0)
        return fail(lw, "tile.mma %s operand types", op_id);
    family = row->form == FORM_MFMA ? "mfma" : "wmma";
    if (!(a_text = mma_operand(lw, row, a, family[0] == 'm' ? "mfma_a_i16" : "wmma_a_i16"))
        || !(b_text = mma_operand(lw, row, b, family[0] == 'm' ? "mfma_b_i16" : "wmma_b_i16")))
        return -1;
    if (!(value = val(lw, c)))
        return -1;
    c_text = concat(lw, row->c_type, " ", value);
    if (need(lw, row->intrinsic) || shape(lw, op, 3, 1))
        return -1;
    r = define(lw, &op->results[0]);
    if (row->form == FORM_MFMA)
        return emit(lw, "$s = call $s @llvm.amdgcn.$s($s, $s, $s, i32 0, i32 0, i32 0)", r, row->c_type, row->intrinsic,
                    a_text, b_text, c_text);
    if (row->form == FORM_WMMA3)
        return emit(lw, "$s = call $s @llvm.amdgcn.$s($s, $s, $s)", r, row->c_type, row->intrinsic, a_text, b_text,
                    c_text);
    return emit(lw, "$s = call $s @llvm.amdgcn.$s(i1 false, $s, i1 false, $s, i16 0, $s, i1 false, i1 false)", r,
                row->c_type, row->intrinsic, a_text, b_text, c_text);
}

/* ---- schedule hints (§4.6) ---- */

static int lower_sched_group_barrier(rk_lowerer *lw, const rk_ir_op *op)
{
    long long mask = 0, size = 0, sync_id = 0;
    if (need(lw, "sched.group.barrier") || int_attr(lw, op, "mask", &mask) || int_attr(lw, op, "size", &size)
        || int_attr(lw, op, "sync_id", &sync_id))
        return -1;
    return emit(lw, "call void @llvm.amdgcn.sched.group.barrier(i32 $d, i32 $d, i32 $d)", mask, size, sync_id);
}

static int lower_sched_barrier(rk_lowerer *lw, const rk_ir_op *op)
{
    long long mask = 0;
    if (need(lw, "sched.barrier") || int_attr(lw, op, "mask", &mask))
        return -1;
    return emit(lw, "call void @llvm.amdgcn.sched.barrier(i32 $d)", mask);
}

static int lower_s_setprio(rk_lowerer *lw, const rk_ir_op *op)
{
    long long prio = 0;
    if (int_attr(lw, op, "prio", &prio))
        return -1;
    if (prio < 0 || prio > 65535)
        return fail(lw, "tile.s_setprio prio %lld does not fit in u16", prio);
    if (need(lw, "s.setprio"))
        return -1;
    return emit(lw, "call void @llvm.amdgcn.s.setprio(i16 $d)", prio);
}

/* ---- control (§4.7, llvm-ir §10) ---- */

typedef struct rk_ll_carried {
    const char *name, *type;
} rk_ll_carried;

typedef struct rk_ll_for {
    const char *iv;
    rk_ll_carried *carried;
    int n_carried;
    const rk_ir_value *yielded;
} rk_ll_for;

/* The iv name, the (name, type) of each carried value, and the yielded values. */
static int for_parts(rk_lowerer *lw, const rk_ir_op *op, rk_ll_for *out)
{
    const rk_attr *iv = rk_attrs_get(&op->attrs, "iv"), *iter_args = rk_attrs_get(&op->attrs, "iter_args");
    const rk_ir_region *body;
    int i;
    if (!iv || iv->kind != RK_ATTR_STR || !iter_args || iter_args->kind != RK_ATTR_LIST
        || iter_args->n != op->n_operands - 3)
        return fail(lw, "scf.for iv or iter_args");
    out->iv = iv->s;
    out->n_carried = iter_args->n;
    out->carried = rk_alloc(lw->arena, (size_t)(iter_args->n + 1) * sizeof *out->carried);
    if (!out->carried) {
        lw->oom = 1;
        return rk_fail_internal(lw->err, "out of memory (lower)");
    }
    for (i = 0; i < iter_args->n; i++) {
        const rk_attr *arg = iter_args->items[i], *name, *type;
        const char *t;
        name = arg && arg->kind == RK_ATTR_MAP ? rk_attrs_get(&arg->map, "name") : NULL;
        if (!arg || arg->kind != RK_ATTR_MAP || !name || name->kind != RK_ATTR_STR)
            return fail(lw, "scf.for iter_arg %d", i);
        type = rk_attrs_get(&arg->map, "type");
        if (!rk_attr_is_str(type, op->operands[3 + i].type))
            return fail(lw, "scf.for iter_arg %d type", i);
        t = type->s;
        if (!(RK_TYPE_IS_VEC(t) || rk_ir_is_scalar(t)))
            return fail(lw, "scf.for carries a value of type %s", t);
        out->carried[i].name = name->s;
        out->carried[i].type = t;
    }
    if (op->n_regions < 1)
        return crash(lw, op);
    body = op->regions[0];
    if (!body->n_ops || body->ops[body->n_ops - 1]->code != RK_OP_YIELD
        || body->ops[body->n_ops - 1]->n_operands != out->n_carried)
        return fail(lw, "scf.for body must end with a matching scf.yield");
    out->yielded = body->ops[body->n_ops - 1]->operands;
    return 0;
}

/* The loop's results, each a bitcast of its carried value's last text. */
static int loop_results(rk_lowerer *lw, const rk_ir_op *op, const rk_ll_for *parts, const char *const *last)
{
    int i;
    for (i = 0; i < parts->n_carried; i++)
        if (emit(lw, "$s = bitcast $T $s to $T", define(lw, &op->results[i]), parts->carried[i].type, last[i],
                 parts->carried[i].type))
            return -1;
    return 0;
}

static int lower_for_unrolled(rk_lowerer *lw, const rk_ir_op *op);

static int lower_for(rk_lowerer *lw, const rk_ir_op *op)
{
    const rk_attr *unroll = rk_attrs_get(&op->attrs, "unroll");
    rk_ll_for parts;
    const char *lb, *ub, *step, *cmp, *iv_name, *tag, **inits, **phi_names, **nexts;
    rk_ll_block *pred, *header, *body, *latch, *exit_;
    int i, n;
    if (unroll && unroll->kind == RK_ATTR_BOOL && unroll->i)
        return lower_for_unrolled(lw, op);
    if (for_parts(lw, op, &parts))
        return -1;
    n = parts.n_carried;
    if (op->n_results < n)
        return crash(lw, op);
    if (!(lb = val(lw, &op->operands[0])) || !(ub = val(lw, &op->operands[1])) || !(step = val(lw, &op->operands[2])))
        return -1;
    inits = rk_alloc(lw->arena, (size_t)(n + 1) * sizeof *inits);
    phi_names = rk_alloc(lw->arena, (size_t)(n + 1) * sizeof *phi_names);
    nexts = rk_alloc(lw->arena, (size_t)(n + 1) * sizeof *nexts);
    if (!inits || !phi_names || !nexts) {
        lw->oom = 1;
        return rk_fail_internal(lw->err, "out of memory (lower)");
    }
    for (i = 0; i < n; i++)
        if (!(inits[i] = val(lw, &op->operands[3 + i])))
            return -1;
    pred = lw->block;
    header = new_block(lw, "for.header");
    body = new_block(lw, "for.body");
    cmp = temp(lw, "cmp");
    if (!header || !body || !cmp) {
        lw->oom = 1;
        return rk_fail_internal(lw->err, "out of memory (lower)");
    }
    if (emit_to(lw, pred, "br label %$s", header->label))
        return -1;
    pred->terminated = 1;
    iv_name = concat(lw, parts.iv, lw->suffix, NULL);
    rk_ll_bind(lw, parts.iv, iv_name);
    for (i = 0; i < n; i++) {
        phi_names[i] = concat(lw, parts.carried[i].name, lw->suffix, NULL);
        rk_ll_bind(lw, parts.carried[i].name, concat(lw, parts.carried[i].name, lw->suffix, NULL));
    }
    lw->block = body;
    if (lower_region(lw, op->regions[0], 0, 1))
        return -1;
    for (i = 0; i < n; i++)
        if (!(nexts[i] = val(lw, &parts.yielded[i])))
            return -1;
    latch = new_block(lw, "for.latch");
    exit_ = new_block(lw, "for.exit");
    if (!latch || !exit_) {
        lw->oom = 1;
        return rk_fail_internal(lw->err, "out of memory (lower)");
    }
    if (emit(lw, "br label %$s", latch->label))
        return -1;
    lw->block->terminated = 1;
    tag = concat(lw, ".next.", header->label, NULL);
    lw->block = header;
    if (emit(lw, "$s = phi i32 [ $s, %$s ], [ %iv$s, %$s ]", iv_name, lb, pred->label, tag, latch->label))
        return -1;
    for (i = 0; i < n; i++)
        if (emit(lw, "$s = phi $T [ $s, %$s ], [ $s$s, %$s ]", phi_names[i], parts.carried[i].type, inits[i],
                 pred->label, phi_names[i], tag, latch->label))
            return -1;
    if (emit(lw, "$s = icmp slt i32 $s, $s", cmp, iv_name, ub)
        || emit(lw, "br i1 $s, label %$s, label %$s", cmp, body->label, exit_->label))
        return -1;
    header->terminated = 1;
    lw->block = latch;
    if (emit(lw, "%iv$s = add nsw i32 $s, $s", tag, iv_name, step))
        return -1;
    for (i = 0; i < n; i++)
        if (emit(lw, "$s$s = bitcast $T $s to $T", phi_names[i], tag, parts.carried[i].type, nexts[i],
                 parts.carried[i].type))
            return -1;
    if (emit(lw, "br label %$s", header->label))
        return -1;
    latch->terminated = 1;
    lw->block = exit_;
    return loop_results(lw, op, &parts, phi_names);
}

static int const_operand(rk_lowerer *lw, const rk_ir_value *v, long long *value)
{
    if (rk_ll_get_int(lw, v->name, value))
        return fail(lw, "an unrolled scf.for needs constant bounds");
    return 0;
}

/* lb + i * step, which lies in [lb, ub) (so in range), computed without signed overflow. */
static long long unroll_value(long long lb, unsigned long long i, long long step)
{
    unsigned long long u = (unsigned long long)lb + i * (unsigned long long)step;
    return u <= 9223372036854775807ULL ? (long long)u : -(long long)(~u) - 1;
}

/* Each iteration: `%iv_const.T = add i32 0, <k>`, the body with names suffixed `.unroll<i>`;
 * a trailing tile.sync before the yield is kept only in the last iteration. */
static int lower_for_unrolled(rk_lowerer *lw, const rk_ir_op *op)
{
    rk_ll_for parts;
    long long lb = 0, ub = 0, step = 0;
    unsigned long long count = 0, i, diff;
    const char **values, **nexts, *outer_suffix, *cnst;
    const rk_ir_region *body;
    int n, j, n_ops, trailing_sync;
    char digits[RK_INT_DIGITS];
    if (for_parts(lw, op, &parts))
        return -1;
    if (const_operand(lw, &op->operands[0], &lb) || const_operand(lw, &op->operands[1], &ub)
        || const_operand(lw, &op->operands[2], &step))
        return -1;
    if (step <= 0)
        return fail(lw, "an unrolled scf.for needs a positive step");
    n = parts.n_carried;
    if (op->n_results < n)
        return crash(lw, op);
    values = rk_alloc(lw->arena, (size_t)(n + 1) * sizeof *values);
    nexts = rk_alloc(lw->arena, (size_t)(n + 1) * sizeof *nexts);
    if (!values || !nexts) {
        lw->oom = 1;
        return rk_fail_internal(lw->err, "out of memory (lower)");
    }
    for (j = 0; j < n; j++)
        if (!(values[j] = val(lw, &op->operands[3 + j])))
            return -1;
    body = op->regions[0];
    n_ops = body->n_ops;
    trailing_sync = n_ops >= 2 && body->ops[n_ops - 2]->code == RK_OP_SYNC;
    outer_suffix = lw->suffix;
    if (ub > lb) {
        diff = (unsigned long long)ub - (unsigned long long)lb;
        count = diff / (unsigned long long)step + (diff % (unsigned long long)step != 0);
    }
    if (count > MAX_UNROLL)
        return fail(lw, "an unrolled scf.for of %llu iterations (the limit is %llu)", count, MAX_UNROLL);
    for (i = 0; i < count; i++) {
        const char **swap;
        rk_fmt_int((long long)i, digits);
        lw->suffix = concat(lw, outer_suffix, ".unroll", digits);
        if (!lw->suffix) {
            lw->suffix = outer_suffix;
            return rk_fail_internal(lw->err, "out of memory (lower)");
        }
        cnst = temp(lw, "iv_const");
        if (emit(lw, "$s = add i32 0, $d", cnst, unroll_value(lb, i, step)))
            return -1;
        rk_ll_bind(lw, parts.iv, cnst);
        for (j = 0; j < n; j++)
            rk_ll_bind(lw, parts.carried[j].name, values[j]);
        for (j = 0; j < n_ops - 1; j++) {
            if (j == n_ops - 2 && trailing_sync && i != count - 1)
                continue;
            if (body->ops[j]->code == RK_OP_RETURN)
                return fail(lw, "cf.return must be the last op of the kernel");
            if (lower_op(lw, body->ops[j]))
                return -1;
        }
        for (j = 0; j < n; j++)
            if (!(nexts[j] = val(lw, &parts.yielded[j])))
                return -1;
        swap = values;
        values = nexts;
        nexts = swap;
    }
    lw->suffix = outer_suffix;
    return loop_results(lw, op, &parts, values);
}

static int lower_if(rk_lowerer *lw, const rk_ir_op *op)
{
    const char *cond;
    rk_ll_block *pred, *then, *end;
    if (op->n_operands < 1 || op->n_regions < 1)
        return crash(lw, op);
    if (!(cond = typed(lw, &op->operands[0])))
        return -1;
    pred = lw->block;
    then = new_block(lw, "if.then");
    if (!then)
        return rk_fail_internal(lw->err, "out of memory (lower)");
    lw->block = then;
    if (lower_region(lw, op->regions[0], 0, 0))
        return -1;
    end = new_block(lw, "if.end");
    if (!end)
        return rk_fail_internal(lw->err, "out of memory (lower)");
    if (emit(lw, "br label %$s", end->label))
        return -1;
    lw->block->terminated = 1;
    if (emit_to(lw, pred, "br $s, label %$s, label %$s", cond, then->label, end->label))
        return -1;
    pred->terminated = 1;
    lw->block = end;
    return 0;
}

static int lower_return(rk_lowerer *lw, const rk_ir_op *op)
{
    (void)op;
    if (emit(lw, "ret void"))
        return -1;
    lw->block->terminated = 1;
    return 0;
}

/* The handler of each op, by its code (scf.yield is read by lower_for, never lowered alone). */
static const rk_ll_handler rk_ll_handlers[RK_N_OPS] = {
    [RK_OP_CONSTANT] = lower_constant,
    [RK_OP_CONSTANT_VEC] = lower_constant_vec,
    [RK_OP_ADD] = lower_binary,
    [RK_OP_SUB] = lower_binary,
    [RK_OP_MUL] = lower_binary,
    [RK_OP_DIV] = lower_binary,
    [RK_OP_MOD] = lower_binary,
    [RK_OP_MIN] = lower_binary_call,
    [RK_OP_MAX] = lower_binary_call,
    [RK_OP_AND] = lower_binary,
    [RK_OP_OR] = lower_binary,
    [RK_OP_CMP] = lower_cmp,
    [RK_OP_SELECT] = lower_select,
    [RK_OP_FADD] = lower_binary,
    [RK_OP_FMUL] = lower_binary,
    [RK_OP_FMAX] = lower_binary_call,
    [RK_OP_FMIN] = lower_binary_call,
    [RK_OP_FPTRUNC] = lower_fptrunc,
    [RK_OP_BITCAST] = lower_bitcast,
    [RK_OP_THREAD_ID] = lower_id,
    [RK_OP_BLOCK_ID] = lower_id,
    [RK_OP_LANE_ID] = lower_lane_id,
    [RK_OP_READFIRSTLANE] = lower_readfirstlane,
    [RK_OP_MAKE_BUFFER_RSRC] = lower_make_buffer_rsrc,
    [RK_OP_BUFFER_LOAD] = lower_buffer_load,
    [RK_OP_BUFFER_STORE] = lower_buffer_store,
    [RK_OP_GLOBAL_ATOMIC_FADD] = lower_global_atomic_fadd,
    [RK_OP_SMEM_ALLOC] = lower_smem_alloc,
    [RK_OP_SMEM_LOAD] = lower_smem_load,
    [RK_OP_SMEM_STORE] = lower_smem_store,
    [RK_OP_SMEM_ADDR] = lower_smem_addr,
    [RK_OP_DS_READ_TR16_B64] = lower_ds_read_tr16_b64,
    [RK_OP_DS_READ_TR16_B128] = lower_ds_read_tr16_b128,
    [RK_OP_ASYNC_BUFFER_LOAD_LDS] = lower_async_buffer_load_lds,
    [RK_OP_S_WAITCNT] = lower_s_waitcnt,
    [RK_OP_SYNC] = lower_sync,
    [RK_OP_SYNC_LDS_ONLY] = lower_sync_lds_only,
    [RK_OP_EXTRACT] = lower_extract,
    [RK_OP_INSERT] = lower_insert,
    [RK_OP_FROM_ELEMENTS] = lower_from_elements,
    [RK_OP_CONCAT] = lower_concat,
    [RK_OP_MMA] = lower_mma,
    [RK_OP_SCHED_GROUP_BARRIER] = lower_sched_group_barrier,
    [RK_OP_SCHED_BARRIER] = lower_sched_barrier,
    [RK_OP_S_SETPRIO] = lower_s_setprio,
    [RK_OP_FOR] = lower_for,
    [RK_OP_IF] = lower_if,
    [RK_OP_RETURN] = lower_return,
};

static int bare_name(const char *name)
{
    const char *p;
    for (p = name; *p && strchr(rk_ll_name_chars, *p); p++)
        ;
    return !*p && !(name[0] >= '0' && name[0] <= '9');
}

/* Printed as is inside @"...": printable ASCII but the quote and the backslash. */
static int quotable(char ch) { return ch >= ' ' && ch <= '~' && ch != '"' && ch != '\\'; }

int rk_lower_kernel(const rk_ir_kernel *kernel, const char *arch, const char *flavor, rk_arena *arena, rk_buf *out,
                    rk_error *err)
{
    rk_lowerer lw;
    const rk_ll_backend *backend;
    const rk_ll_flavor *fl;
    const rk_target *target;
    const char *p;
    size_t saved = out->len;
    int status, i;
    memset(&lw, 0, sizeof lw);
    rk_map_init(&lw.ints);
    lw.err = err;
    lw.arena = arena;
    err->code = NULL;
    rk_buf_init(&lw.scratch);
    status = -1;
    if (!(backend = rk_find_backend(arch)))
        fail(&lw, "unknown arch %s", arch);
    else if (!(fl = rk_find_flavor(flavor)))
        fail(&lw, "unknown flavor %s", flavor);
    else if (!kernel->name[0])
        fail(&lw, "the kernel has no name");
    else {
        for (p = kernel->name; *p && quotable(*p); p++)
            ;
        if (*p)
            fail(&lw, "the kernel name has a character LLVM would need escaped");
        else if (!(target = rk_target_for(arch)))
            fail(&lw, "no target data for %s", arch);
        else {
            lw.kernel = kernel;
            lw.backend = backend;
            lw.flavor = fl;
            lw.capacity = target->lds_capacity;
            lw.suffix = "";
            lw.quote = bare_name(kernel->name) ? "" : "\"";   /* docs/lowering.md §1 */
            lw.pool = lw.quote[0] ? concat(&lw, "@\"smem_pool.", kernel->name, "\"")
                                  : concat(&lw, "@smem_pool.", kernel->name, NULL);
            lw.block = rk_ll_add_block(&lw, "entry");
            status = lw.block && !lw.oom ? lower(&lw, out) : -1;
        }
    }
    for (i = 0; i < lw.n_blocks; i++)
        if (lw.blocks[i]->lines.failed)
            lw.oom = 1;
    if (lw.oom || arena->failed || out->failed || lw.scratch.failed) {
        /* any verdict reached after a failed allocation cannot be trusted */
        rk_fail_internal(err, "out of memory (lower)");
        status = -1;
    }
    if (status != 0 && out->data && !out->failed) {
        /* the module is written straight into out once every op lowered; take back any
         * part of it (Python raises: no text) */
        out->len = saved;
        out->data[saved] = '\0';
    }
    rk_ll_release(&lw);
    return status;
}
