/* print_ir.c: mode `ir`: the `rocke.ir v1` text of a kernel (docs/ir.md §5).
 *
 * Twin of rocke_py/engine/print_ir.py, function for function. Attr-map keys are sorted
 * like Python's sorted() on str (by code point, which for UTF-8 is byte order: strcmp);
 * floats print as Python's repr(float), the shortest decimal that reads back the same. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir.h"

void rk_escape(rk_buf *out, const char *text)
{
    const char *p, *run = text;
    for (p = text; *p > '\\' || (*p && *p != '\\' && *p != '"' && *p != '\n' && *p != '\t'); p++)
        ; /* the common case, nothing to escape (the byte test first: '\\' is the largest special) */
    if (!*p) {
        rk_buf_put_short(out, text, (size_t)(p - text));
        return;
    }
    for (p = text; *p; p++) {
        const char *rep = *p == '\\' ? "\\\\" : *p == '"' ? "\\\"" : *p == '\n' ? "\\n" : *p == '\t' ? "\\t" : NULL;
        if (!rep)
            continue;
        rk_buf_putn(out, run, (size_t)(p - run));
        rk_buf_puts(out, rep);
        run = p + 1;
    }
    rk_buf_putn(out, run, (size_t)(p - run));
}

/* The mantissa digits and the exponent of "%.*e": value = m * 10^q; 0 when it reads back
 * as v. */
static int try(double v, int precision, long long *m, int *q)
{
    char buf[64], *p;
    long long digits = 0;
    snprintf(buf, sizeof buf, "%.*e", precision, v);
    for (p = buf; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9')
            digits = digits * 10 + (*p - '0');
    *m = digits;
    *q = atoi(p + 1) - precision;
    return strtod(buf, NULL) == v ? 0 : (strtod(buf, NULL) > v ? 1 : -1);
}

static int reads_back(double v, long long m, int q)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%llde%d", m, q);
    return strtod(buf, NULL) == v;
}

/* The shortest digits that read back as v > 0 (finite), closest to v among those (David
 * Gay's mode 0, which Python's repr uses): for each length, the correctly rounded
 * candidate, else its neighbour on the other side of v. */
static void shortest(double v, char *digits, int *decpt)
{
    long long m = 0;
    int q = 0, precision, side, n;
    for (precision = 0; precision < 17; precision++) {
        side = try(v, precision, &m, &q);
        if (side == 0)
            break;
        if (reads_back(v, m - side, q)) {
            m -= side;
            break;
        }
    }
    n = sprintf(digits, "%lld", m);
    *decpt = n + q;
    while (n > 1 && digits[n - 1] == '0')
        digits[--n] = '\0';
}

/* repr(float(value)) for the integral values below 2**53 that our kernels carry, and the
 * rest of Python's repr rules (exponent form below 1e-4 and from 1e16 on). */
void rk_format_float(rk_buf *out, double value)
{
    char digits[32];
    int decpt, n, i;
    if (value != value) {
        RK_BUF_LIT(out, "nan");
        return;
    }
    if (value < 0 || (value == 0 && 1 / value < 0)) {
        RK_BUF_LIT(out, "-");
        value = -value;
    }
    if (value > 1.7976931348623157e308) {
        RK_BUF_LIT(out, "inf");
        return;
    }
    if (value == 0) {
        RK_BUF_LIT(out, "0.0");
        return;
    }
    shortest(value, digits, &decpt);
    n = (int)strlen(digits);
    if (decpt <= -4 || decpt > 16) {
        rk_buf_putn(out, digits, 1);
        if (n > 1) {
            RK_BUF_LIT(out, ".");
            rk_buf_puts(out, digits + 1);
        }
        rk_buf_printf(out, "e%c%02d", decpt - 1 >= 0 ? '+' : '-', abs(decpt - 1));
    } else if (decpt <= 0) {
        RK_BUF_LIT(out, "0.");
        for (i = 0; i < -decpt; i++)
            RK_BUF_LIT(out, "0");
        rk_buf_puts(out, digits);
    } else if (decpt >= n) {
        rk_buf_puts(out, digits);
        for (i = n; i < decpt; i++)
            RK_BUF_LIT(out, "0");
        RK_BUF_LIT(out, ".0");
    } else {
        rk_buf_putn(out, digits, (size_t)decpt);
        RK_BUF_LIT(out, ".");
        rk_buf_puts(out, digits + decpt);
    }
}

void rk_tagged(rk_arena *arena, rk_buf *out, const rk_attr *value)
{
    int i;
    switch (value->kind) {
    case RK_ATTR_BOOL: rk_buf_puts(out, value->i ? "b:true" : "b:false"); return;
    case RK_ATTR_INT:
        rk_buf_putn(out, "i:", 2);
        rk_buf_put_int(out, value->i);
        return;
    case RK_ATTR_FLOAT:
        RK_BUF_LIT(out, "f:");
        rk_format_float(out, value->f);
        return;
    case RK_ATTR_STR:
        RK_BUF_LIT(out, "s:\"");
        rk_escape(out, value->s);
        RK_BUF_LIT(out, "\"");
        return;
    case RK_ATTR_LIST:
        RK_BUF_LIT(out, "l:[ ");
        for (i = 0; i < value->n; i++) {
            if (i)
                RK_BUF_LIT(out, ", ");
            rk_tagged(arena, out, value->items[i]);
        }
        RK_BUF_LIT(out, " ]");
        return;
    case RK_ATTR_MAP: rk_print_ir_attr_map(arena, out, &value->map); return;
    }
}

#define RK_PRINT_IR_SMALL_MAP 16

void rk_print_ir_attr_map(rk_arena *arena, rk_buf *out, const rk_attrs *attrs)
{
    const rk_attr_pair *small[RK_PRINT_IR_SMALL_MAP], **order = small;
    int i, j;
    if (attrs->n > RK_PRINT_IR_SMALL_MAP)
        order = rk_alloc(arena, (size_t)attrs->n * sizeof *order);
    if (!order) {
        out->failed = 1;
        return;
    }
    for (i = 0; i < attrs->n; i++) { /* insertion sort: the keys are unique, the maps small */
        const rk_attr_pair *pair = &attrs->items[i];
        for (j = i; j > 0 && strcmp(order[j - 1]->key, pair->key) > 0; j--)
            order[j] = order[j - 1];
        order[j] = pair;
    }
    RK_BUF_LIT(out, "{ ");
    for (i = 0; i < attrs->n; i++) {
        if (i)
            RK_BUF_LIT(out, ", ");
        rk_buf_put_short(out, order[i]->key, strlen(order[i]->key));
        RK_BUF_LIT(out, " = ");
        rk_tagged(arena, out, order[i]->value);
    }
    RK_BUF_LIT(out, " }");
}

/* s appended with its length measured first (the library's strlen beats a copy loop that
 * tests every byte twice) */
static void put_str(rk_buf *out, const char *s) { rk_buf_putn(out, s, strlen(s)); }

static void pad(rk_buf *out, int depth)
{
    int i;
    for (i = 0; i < depth; i++)
        rk_buf_putn(out, "  ", 2);
}

#define RK_PRINT_IR_PIECES 16

/* The line of an op up to its attrs, written into room made once: each name's length is
 * measured once, and no piece goes through the buffer's checks (an op of many values, rare,
 * takes the piece-by-piece way). */
static int op_head(rk_buf *out, const rk_ir_op *op, int depth)
{
    size_t len[2 * RK_PRINT_IR_PIECES + 1], need = 2 * (size_t)depth + 9;
    int i, k = 0;
    char *d;
    if (op->n_results > RK_PRINT_IR_PIECES / 2 || op->n_operands > RK_PRINT_IR_PIECES)
        return -1;
    for (i = 0; i < op->n_results; i++) {
        len[k] = strlen(op->results[i].name), need += len[k++] + 5;
        len[k] = strlen(op->results[i].type), need += len[k++];
    }
    len[k] = strlen(op->name), need += len[k++];
    for (i = 0; i < op->n_operands; i++)
        len[k] = strlen(op->operands[i].name), need += len[k++] + 2;
    if (rk_buf_room(out, need))
        return 0;
    d = out->data + out->len;
    if (depth <= 16)
        d = rk_put_at(d, "                                ", 2 * (size_t)depth);
    else
        for (i = 0; i < depth; i++, d += 2)
            d[0] = ' ', d[1] = ' ';
    k = 0;
    for (i = 0; i < op->n_results; i++) {
        if (i)
            d = rk_put_at(d, ", ", 2);
        d = rk_put_at(d, op->results[i].name, len[k++]);
        d = rk_put_at(d, " : ", 3);
        d = rk_put_at(d, op->results[i].type, len[k++]);
    }
    if (op->n_results)
        d = rk_put_at(d, " = ", 3);
    d = rk_put_at(d, op->name, len[k++]);
    d = rk_put_at(d, " ( ", 3);
    for (i = 0; i < op->n_operands; i++) {
        if (i)
            d = rk_put_at(d, ", ", 2);
        d = rk_put_at(d, op->operands[i].name, len[k++]);
    }
    d = rk_put_at(d, " )", 2);
    *d = '\0';
    out->len = (size_t)(d - out->data);
    return 0;
}

void rk_print_op(rk_arena *arena, rk_buf *out, const rk_ir_op *op, int depth)
{
    int i;
    if (op_head(out, op, depth)) {
        pad(out, depth);
        for (i = 0; i < op->n_results; i++) {
            if (i)
                RK_BUF_LIT(out, ", ");
            put_str(out, op->results[i].name);
            RK_BUF_LIT(out, " : ");
            put_str(out, op->results[i].type);
        }
        if (op->n_results)
            RK_BUF_LIT(out, " = ");
        put_str(out, op->name);
        RK_BUF_LIT(out, " ( ");
        for (i = 0; i < op->n_operands; i++) {
            if (i)
                RK_BUF_LIT(out, ", ");
            put_str(out, op->operands[i].name);
        }
        RK_BUF_LIT(out, " )");
    }
    if (op->attrs.n) {
        RK_BUF_LIT(out, " ");
        rk_print_ir_attr_map(arena, out, &op->attrs);
    }
    RK_BUF_LIT(out, "\n");
    for (i = 0; i < op->n_regions; i++)
        rk_print_region(arena, out, op->regions[i], depth + 1);
}

void rk_print_region(rk_arena *arena, rk_buf *out, const rk_ir_region *region, int depth)
{
    int i;
    pad(out, depth);
    RK_BUF_LIT(out, "region @");
    rk_buf_puts(out, region->name);
    RK_BUF_LIT(out, " {\n");
    for (i = 0; i < region->n_ops; i++)
        rk_print_op(arena, out, region->ops[i], depth + 1);
    pad(out, depth);
    RK_BUF_LIT(out, "}\n");
}

int rk_print_ir(const rk_ir_kernel *kernel, rk_arena *arena, rk_buf *out, rk_error *err)
{
    int i;
    /* about 70 bytes a value: room for most of the text at once, not a chain of doublings that
     * copies it again and again */
    if (kernel->n_ids > 0 && (size_t)kernel->n_ids < ((size_t)-1 - 4096) / 80)
        rk_buf_reserve(out, (size_t)kernel->n_ids * 80 + 4096);
    RK_BUF_LIT(out, "rocke.ir v1\n");
    RK_BUF_LIT(out, "kernel @");
    rk_buf_puts(out, kernel->name);
    RK_BUF_LIT(out, " {\n");
    if (kernel->attrs.n) {
        RK_BUF_LIT(out, "  attrs ");
        rk_print_ir_attr_map(arena, out, &kernel->attrs);
        RK_BUF_LIT(out, "\n");
    }
    RK_BUF_LIT(out, "  params {\n");
    for (i = 0; i < kernel->n_params; i++) {
        const rk_ir_param *p = kernel->params[i];
        RK_BUF_LIT(out, "    ");
        rk_buf_puts(out, p->value.name);
        RK_BUF_LIT(out, " : ");
        rk_buf_puts(out, p->value.type);
        if (p->attrs.n) {
            RK_BUF_LIT(out, " ");
            rk_print_ir_attr_map(arena, out, &p->attrs);
        }
        RK_BUF_LIT(out, "\n");
    }
    RK_BUF_LIT(out, "  }\n");
    rk_print_region(arena, out, kernel->entry, 1);
    RK_BUF_LIT(out, "}\n");
    if (out->failed || arena->failed)
        return rk_fail_internal(err, "out of memory (ir text)");
    return 0;
}
