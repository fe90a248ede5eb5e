/* ir_driver.c: runs builder scripts through the C engine's kernel-IR builder, printer and
 * verifier: the twin of tests/tools/ir_script.py (which documents the script format and
 * runs the same scripts through the Python engine); tests/parity/test_ir_script_parity.py compares
 * the two byte for byte.
 *
 *     ir_driver SCRIPT...   -> for each script, "<len>\n<output>\n" on stdout
 *
 * Output of a script: "[error: <builder failure>\n]<print_ir text>verify: ok|<message>\n",
 * or "script error: line N: <what>\n" for a malformed script (exit status 1). One arena per
 * script, released before the next: nothing leaks (ASan, valgrind). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../src/ir.h"
#include "driver_io.h"

/* ---- the script state ---- */

enum { ENV_VALUE, ENV_LOOP, ENV_IF };

typedef struct env_entry {
    const char *name;
    int kind;
    void *ptr;
} env_entry;

typedef struct script {
    rk_arena *arena;
    rk_builder b;
    int have_kernel;
    env_entry *env;
    int n_env, cap_env;
    char error[256];    /* the first script error; "" while the script is fine */
} script;

typedef struct cursor {
    const char *text;
    size_t len, pos;
} cursor;

static void bad(script *s, const char *what)
{
    if (!s->error[0])
        snprintf(s->error, sizeof s->error, "%s", what);
}

static const char *dup_n(script *s, const char *p, size_t n)
{
    const char *copy = rk_strndup(s->arena, p, n);
    if (!copy)
        bad(s, "out of memory");
    return copy ? copy : "";
}

/* ---- lexing: a cursor over one line (Python's Cursor) ---- */

static void skip(cursor *c)
{
    while (c->pos < c->len && (c->text[c->pos] == ' ' || c->text[c->pos] == '\t'))
        c->pos++;
}

static int at_end(cursor *c)
{
    skip(c);
    return c->pos >= c->len;
}

static char peek(cursor *c)
{
    skip(c);
    return c->pos < c->len ? c->text[c->pos] : '\0';
}

static int starts(const cursor *c, const char *s)
{
    size_t n = strlen(s);
    return c->len - c->pos >= n && memcmp(c->text + c->pos, s, n) == 0;
}

/* Up to the next blank outside <...>; NULL at the end of the line. */
static const char *token(script *s, cursor *c)
{
    size_t start;
    int depth = 0;
    skip(c);
    start = c->pos;
    while (c->pos < c->len) {
        char ch = c->text[c->pos];
        if ((ch == ' ' || ch == '\t') && depth == 0)
            break;
        if (ch == '<')
            depth++;
        else if (ch == '>' && depth > 0)
            depth--;
        c->pos++;
    }
    return c->pos > start ? dup_n(s, c->text + start, c->pos - start) : NULL;
}

static const char *need(script *s, cursor *c)
{
    const char *tok = token(s, c);
    if (!tok)
        bad(s, "missing argument");
    return tok ? tok : "";
}

static void expect(script *s, cursor *c, const char *what)
{
    char message[64];
    skip(c);
    if (!starts(c, what)) {
        snprintf(message, sizeof message, "expected %s", what);
        bad(s, message);
        return;
    }
    c->pos += strlen(what);
}

static int all_digits(const char *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (p[i] < '0' || p[i] > '9')
            return 0;
    return n > 0;
}

static long long parse_int(script *s, const char *text)
{
    const char *digits = text[0] == '-' ? text + 1 : text;
    long long v;
    if (!all_digits(digits, strlen(digits))) {
        bad(s, "bad integer");
        return 0;
    }
    errno = 0;
    v = strtoll(text, NULL, 10);
    if (errno == ERANGE) {
        bad(s, "integer out of range");
        return 0;
    }
    return v;
}

/* -?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)? | inf | -inf | nan | -nan */
static int float_syntax(const char *t)
{
    size_t i = 0, n = strlen(t), run;
    if (!strcmp(t, "inf") || !strcmp(t, "-inf") || !strcmp(t, "nan") || !strcmp(t, "-nan"))
        return 1;
    if (t[i] == '-')
        i++;
    for (run = 0; i < n && t[i] >= '0' && t[i] <= '9'; i++)
        run++;
    if (!run)
        return 0;
    if (i < n && t[i] == '.') {
        for (i++, run = 0; i < n && t[i] >= '0' && t[i] <= '9'; i++)
            run++;
        if (!run)
            return 0;
    }
    if (i < n && (t[i] == 'e' || t[i] == 'E')) {
        i++;
        if (i < n && (t[i] == '+' || t[i] == '-'))
            i++;
        for (run = 0; i < n && t[i] >= '0' && t[i] <= '9'; i++)
            run++;
        if (!run)
            return 0;
    }
    return i == n;
}

static double parse_float(script *s, const char *text)
{
    if (!float_syntax(text)) {
        bad(s, "bad float");
        return 0;
    }
    return strtod(text, NULL); /* ERANGE: inf or 0, as Python's float() */
}

static const char *scan_word(script *s, cursor *c, const char *stops)
{
    size_t start;
    skip(c);
    start = c->pos;
    while (c->pos < c->len && !strchr(stops, c->text[c->pos]))
        c->pos++;
    return dup_n(s, c->text + start, c->pos - start);
}

static const char *parse_string(script *s, cursor *c)
{
    rk_buf out;
    const char *result;
    expect(s, c, "\"");
    if (s->error[0])
        return "";
    rk_buf_init(&out);
    rk_buf_puts(&out, "");
    for (;;) {
        char ch, e;
        if (c->pos >= c->len) {
            bad(s, "unterminated string");
            break;
        }
        ch = c->text[c->pos++];
        if (ch == '"')
            break;
        if (ch != '\\') {
            rk_buf_putn(&out, &ch, 1);
            continue;
        }
        e = c->pos < c->len ? c->text[c->pos] : '\0';
        c->pos++;
        if (e != '\\' && e != '"' && e != 'n' && e != 't') {
            bad(s, "bad escape");
            break;
        }
        ch = e == 'n' ? '\n' : e == 't' ? '\t' : e;
        rk_buf_putn(&out, &ch, 1);
    }
    result = out.failed ? "" : dup_n(s, out.data, out.len);
    rk_buf_free(&out);
    return result;
}

static const rk_attr *parse_tagged(script *s, cursor *c);

static int key_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '.';
}

/* The opening bracket of a map or list (made: its attr, NULL when it could not be allocated):
 * 1 when items follow; 0 when there are none (the closing bracket taken) or on an error. */
static int open_items(script *s, cursor *c, const char *opening, char close, const rk_attr *made)
{
    expect(s, c, opening);
    if (!made || s->error[0])
        return 0;
    if (peek(c) != close)
        return 1;
    c->pos++;
    return 0;
}

/* After an item: 1 at the closing bracket, 0 at a comma; anything else is a script error. */
static int end_of_items(script *s, cursor *c, char close)
{
    char ch = peek(c);
    c->pos++;
    if (ch == close)
        return 1;
    if (ch != ',')
        bad(s, close == '}' ? "expected , or }" : "expected , or ]");
    return 0;
}

static rk_attr *parse_map(script *s, cursor *c)
{
    rk_attr *map = rk_attr_map(s->arena);
    if (!open_items(s, c, "{", '}', map))
        return map;
    while (!s->error[0]) {
        size_t start;
        const char *key;
        const rk_attr *value;
        skip(c);
        start = c->pos;
        while (c->pos < c->len && key_char(c->text[c->pos]))
            c->pos++;
        if (c->pos == start) {
            bad(s, "bad key");
            break;
        }
        key = dup_n(s, c->text + start, c->pos - start);
        expect(s, c, "=");
        if (s->error[0])
            break;
        value = parse_tagged(s, c);
        if (s->error[0])
            break;
        rk_attrs_set(s->arena, &map->map, key, value);
        if (end_of_items(s, c, '}'))
            break;
    }
    return map;
}

static rk_attr *parse_list(script *s, cursor *c)
{
    rk_attr *list = rk_attr_list(s->arena);
    if (!open_items(s, c, "l:[", ']', list))
        return list;
    while (!s->error[0]) {
        const rk_attr *item = parse_tagged(s, c);
        if (s->error[0])
            break;
        rk_attr_list_append(s->arena, list, item);
        if (end_of_items(s, c, ']'))
            break;
    }
    return list;
}

static const rk_attr *parse_tagged(script *s, cursor *c)
{
    const char *word;
    char tag;
    skip(c);
    if (starts(c, "{"))
        return parse_map(s, c);
    if (starts(c, "l:["))
        return parse_list(s, c);
    if (starts(c, "s:")) {
        c->pos += 2;
        return rk_attr_str(s->arena, parse_string(s, c));
    }
    if (!starts(c, "b:") && !starts(c, "i:") && !starts(c, "f:")) {
        bad(s, "bad tagged value");
        return rk_attr_int(s->arena, 0);
    }
    tag = c->text[c->pos];
    c->pos += 2;
    word = scan_word(s, c, " \t,]}");
    if (tag == 'b') {
        if (strcmp(word, "true") != 0 && strcmp(word, "false") != 0)
            bad(s, "bad bool");
        return rk_attr_bool(s->arena, strcmp(word, "true") == 0);
    }
    if (tag == 'i')
        return rk_attr_int(s->arena, parse_int(s, word));
    return rk_attr_float(s->arena, parse_float(s, word));
}

static const rk_attr *tagged_rest(script *s, cursor *c)
{
    const rk_attr *value = parse_tagged(s, c);
    if (!at_end(c))
        bad(s, "trailing text");
    return value;
}

/* An optional attr map ending the line ({} when the line ends). */
static rk_attrs map_rest(script *s, cursor *c)
{
    rk_attrs none = {NULL, 0, 0};
    rk_attr *map;
    if (at_end(c))
        return none;
    if (peek(c) != '{') {
        bad(s, "expected a map");
        return none;
    }
    map = parse_map(s, c);
    if (!at_end(c))
        bad(s, "trailing text");
    return map && !s->error[0] ? map->map : none;
}

/* ---- the environment: script names -> values, loops, ifs ---- */

static env_entry *env_find(script *s, const char *name)
{
    int i;
    for (i = 0; i < s->n_env; i++)
        if (strcmp(s->env[i].name, name) == 0)
            return &s->env[i];
    return NULL;
}

static void bind(script *s, const char *name, int kind, void *ptr)
{
    env_entry *e;
    if (!name || !ptr || s->error[0])
        return;
    e = env_find(s, name);
    if (!e) {
        if (s->n_env == s->cap_env) {
            int cap = s->cap_env ? 2 * s->cap_env : 64;
            env_entry *bigger = rk_alloc(s->arena, (size_t)cap * sizeof *bigger);
            if (!bigger) {
                bad(s, "out of memory");
                return;
            }
            if (s->n_env)
                memcpy(bigger, s->env, (size_t)s->n_env * sizeof *bigger);
            s->env = bigger;
            s->cap_env = cap;
        }
        e = &s->env[s->n_env++];
        e->name = name;
    }
    e->kind = kind;
    e->ptr = ptr;
}

/* `what` ending with ": " is followed by the name in the message ("not a value: v3"). */
static void *env_get(script *s, const char *name, int kind, const char *what)
{
    env_entry *e = env_find(s, name);
    char message[128];
    size_t n = strlen(what);
    if (!e || e->kind != kind) {
        snprintf(message, sizeof message, "%s%.100s", what, n >= 2 && what[n - 1] == ' ' ? name : "");
        bad(s, message);
        return NULL;
    }
    return e->ptr;
}

static const rk_ir_value *value(script *s, const char *name) { return env_get(s, name, ENV_VALUE, "not a value: "); }

static const rk_ir_value *next_value(script *s, cursor *c) { return value(s, need(s, c)); }

/* Values up to the end of the line or an attr map: (array, count) in the arena. */
static const rk_ir_value **values(script *s, cursor *c, int *n)
{
    const rk_ir_value **out = NULL;
    int cap = 0;
    *n = 0;
    while (!s->error[0] && !at_end(c) && peek(c) != '{') {
        const rk_ir_value *v = next_value(s, c);
        if (*n == cap) {
            const rk_ir_value **bigger;
            cap = cap ? 2 * cap : 8;
            bigger = rk_alloc(s->arena, (size_t)cap * sizeof *bigger);
            if (!bigger) {
                bad(s, "out of memory");
                return out;
            }
            if (*n)
                memcpy(bigger, out, (size_t)*n * sizeof *bigger);
            out = bigger;
        }
        out[(*n)++] = v;
    }
    return out;
}

static long long int_arg(script *s, cursor *c) { return parse_int(s, need(s, c)); }

static char *name_dot(script *s, const char *lhs, const char *suffix)
{
    char *name = lhs ? rk_ir_printf(s->arena, "%s.%s", lhs, suffix) : NULL;
    if (lhs && !name)
        bad(s, "out of memory");
    return name;
}

/* ---- tampering: PATH is @i[.r.i]... ---- */

static rk_ir_region *op_at(script *s, const char *path, int *index)
{
    rk_ir_region *region = s->b.kernel->entry;
    long long idx[64];
    int n = 0, depth;
    const char *p = path + 1;
    if (path[0] != '@') {
        bad(s, "bad path");
        return NULL;
    }
    for (n = 1; *p; p++) /* the parts of path[1:].split("."): an odd count, at most 63 */
        n += *p == '.';
    if (n % 2 == 0 || n > 63) {
        bad(s, "bad path");
        return NULL;
    }
    for (depth = 0, p = path + 1; depth < n; depth++) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        idx[depth] = parse_int(s, dup_n(s, p, len));
        p = dot ? dot + 1 : p + len;
    }
    if (s->error[0])
        return NULL;
    for (depth = 0; depth < n; depth++)
        if (idx[depth] < 0) {
            bad(s, "bad path");
            return NULL;
        }
    for (depth = 0; depth + 1 < n; depth += 2) {
        if (idx[depth] >= region->n_ops || idx[depth + 1] >= region->ops[idx[depth]]->n_regions) {
            bad(s, "bad path");
            return NULL;
        }
        region = region->ops[idx[depth]]->regions[idx[depth + 1]];
    }
    if (idx[n - 1] >= region->n_ops) {
        bad(s, "bad path");
        return NULL;
    }
    *index = (int)idx[n - 1];
    return region;
}

static int index_arg(script *s, cursor *c, int n)
{
    long long j = int_arg(s, c);
    if (s->error[0])
        return 0;
    if (j < 0 || j >= n) {
        bad(s, "bad index");
        return 0;
    }
    return (int)j;
}

/* A copy of items (n of `size` bytes) with room for one more. */
static void *grown(script *s, const void *items, int n, size_t size)
{
    void *out = rk_alloc(s->arena, (size_t)(n + 1) * size);
    if (!out) {
        bad(s, "out of memory");
        return NULL;
    }
    if (n)
        memcpy(out, items, (size_t)n * size);
    return out;
}

/* Removes item j of the n items (each size bytes) at items. */
static void drop_at(void *items, int *n, int j, size_t size)
{
    char *base = items;
    memmove(base + (size_t)j * size, base + (size_t)(j + 1) * size, (size_t)(*n - j - 1) * size);
    (*n)--;
}

static void tamper_op(script *s, const char *cmd, rk_ir_op *op, cursor *c)
{
    int j;
    if (!strcmp(cmd, "t_set_attr")) {
        const char *key = need(s, c);
        const rk_attr *v = tagged_rest(s, c);
        if (!s->error[0])
            rk_attrs_set(s->arena, &op->attrs, key, v);
    } else if (!strcmp(cmd, "t_del_attr")) {
        const char *key = need(s, c);
        if (!s->error[0] && !rk_attrs_del(&op->attrs, key))
            bad(s, "no such attr");
    } else if (!strcmp(cmd, "t_rename_region")) {
        j = index_arg(s, c, op->n_regions);
        if (!s->error[0])
            op->regions[j]->name = need(s, c);
    } else if (!strcmp(cmd, "t_add_region")) {
        const char *name = need(s, c);
        rk_ir_region **regions = grown(s, op->regions, op->n_regions, sizeof *regions);
        if (regions && !s->error[0]) {
            regions[op->n_regions] = rk_ir_make_region(s->arena, name);
            op->regions = regions;
            op->n_regions++;
        }
    } else if (!strcmp(cmd, "t_add_result")) {
        const char *name = need(s, c), *type = need(s, c);
        rk_ir_value *results = grown(s, op->results, op->n_results, sizeof *results);
        if (results && !s->error[0]) {
            results[op->n_results].name = name;
            results[op->n_results].type = type;
            op->results = results;
            op->n_results++;
        }
    } else if (!strcmp(cmd, "t_drop_result")) {
        j = index_arg(s, c, op->n_results);
        if (!s->error[0])
            drop_at(op->results, &op->n_results, j, sizeof *op->results);
    } else if (!strcmp(cmd, "t_drop_operand")) {
        j = index_arg(s, c, op->n_operands);
        if (!s->error[0])
            drop_at(op->operands, &op->n_operands, j, sizeof *op->operands);
    } else if (!strcmp(cmd, "t_set_operand")) {
        const rk_ir_value *v;
        j = index_arg(s, c, op->n_operands);
        v = s->error[0] ? NULL : next_value(s, c);
        if (v)
            op->operands[j] = *v;
    } else if (!strcmp(cmd, "t_add_operand")) {
        const rk_ir_value *v = next_value(s, c);
        rk_ir_value *operands = v ? grown(s, op->operands, op->n_operands, sizeof *operands) : NULL;
        if (operands) {
            operands[op->n_operands] = *v;
            op->operands = operands;
            op->n_operands++;
        }
    } else {
        char message[128];
        snprintf(message, sizeof message, "unknown command %.100s", cmd);
        bad(s, message);
    }
}

static void tamper(script *s, const char *cmd, cursor *c)
{
    rk_ir_region *region;
    int i;
    if (!strcmp(cmd, "t_drop")) {
        region = op_at(s, need(s, c), &i);
        if (!region)
            return;
        drop_at(region->ops, &region->n_ops, i, sizeof *region->ops);
    } else if (!strcmp(cmd, "t_rename_entry")) {
        const char *name = need(s, c);
        if (!s->error[0])
            s->b.kernel->entry->name = name;
    } else {
        region = op_at(s, need(s, c), &i);
        if (region)
            tamper_op(s, cmd, region->ops[i], c);
    }
}

/* ---- the builder calls ---- */

static const char *const binary_cmds[] = {"add", "sub", "mul",  "div",  "mod",  "min",  "max",
                                          "and", "or",  "fadd", "fmul", "fmax", "fmin", NULL};

typedef rk_ir_value *(*binary_fn)(rk_builder *, const rk_ir_value *, const rk_ir_value *);

static const binary_fn binary_fns[] = {rk_b_add, rk_b_sub, rk_b_mul,  rk_b_div,  rk_b_mod,  rk_b_min, rk_b_max,
                                       rk_b_and, rk_b_or,  rk_b_fadd, rk_b_fmul, rk_b_fmax, rk_b_fmin};

static int binary_index(const char *cmd)
{
    int i;
    for (i = 0; binary_cmds[i]; i++)
        if (!strcmp(cmd, binary_cmds[i]))
            return i;
    return -1;
}

static void for_begin(script *s, const char *lhs, cursor *c)
{
    const rk_ir_value *lb = next_value(s, c), *ub = next_value(s, c), *step = next_value(s, c);
    const char *iv = need(s, c);
    rk_ir_carried carried[64];
    int n = 0, unroll = 0, i;
    rk_ir_for *loop;
    while (!s->error[0] && !at_end(c)) {
        const char *tok = need(s, c), *colon = strchr(tok, ':');
        if (!strcmp(tok, "unroll"))
            unroll = 1;
        else if (colon && n < 64) {
            carried[n].name = dup_n(s, tok, (size_t)(colon - tok));
            carried[n].init = value(s, colon + 1);
            n++;
        } else
            bad(s, "bad carried value");
    }
    if (s->error[0])
        return;
    loop = rk_b_for_begin(&s->b, lb, ub, step, iv, carried, n, unroll);
    if (!loop || !lhs)
        return;
    bind(s, lhs, ENV_LOOP, loop);
    bind(s, name_dot(s, lhs, "iv"), ENV_VALUE, &loop->iv);
    for (i = 0; i < loop->n_args; i++)
        bind(s, rk_ir_printf(s->arena, "%s.%d", lhs, i), ENV_VALUE, &loop->args[i]);
}

static void for_end(script *s, const char *lhs, cursor *c)
{
    rk_ir_for *loop = env_get(s, need(s, c), ENV_LOOP, "not a loop");
    const rk_ir_value **yielded;
    rk_ir_value *results;
    int n, i;
    if (!loop)
        return;
    yielded = values(s, c, &n);
    if (s->error[0])
        return;
    results = rk_b_for_end(&s->b, loop, yielded, n);
    for (i = 0; results && lhs && i < loop->op->n_results; i++)
        bind(s, rk_ir_printf(s->arena, "%s.%d", lhs, i), ENV_VALUE, &results[i]);
}

static void op_call(script *s, const char *lhs, const char *cmd, cursor *c)
{
    const char *name = need(s, c), *hint = need(s, c), *type = need(s, c);
    const rk_ir_value **operands;
    rk_attrs attrs;
    int n;
    operands = values(s, c, &n);
    attrs = map_rest(s, c);
    if (s->error[0])
        return;
    if (!strcmp(cmd, "op"))
        bind(s, lhs, ENV_VALUE,
             rk_b_op(&s->b, name, operands, n, strcmp(hint, "-") ? hint : NULL, strcmp(type, "-") ? type : NULL,
                     &attrs));
    else
        bind(s, lhs, ENV_VALUE, rk_b_value_op(&s->b, name, operands, n, hint, type, &attrs));
}

/* The calls with value arguments only: (A), (A, B), (A, B, C). */
/* The next two integers into *a and *b (in that order). */
static void int_args(script *s, cursor *c, long long *a, long long *b)
{
    *a = int_arg(s, c);
    *b = int_arg(s, c);
}

/* The next two values into *x and *y, then a third into *z unless z is NULL (in that order). */
static void next_operands(script *s, cursor *c, const rk_ir_value **x, const rk_ir_value **y, const rk_ir_value **z)
{
    *x = next_value(s, c);
    *y = next_value(s, c);
    if (z)
        *z = next_value(s, c);
}

static int call_values(script *s, const char *lhs, const char *cmd, cursor *c)
{
    rk_builder *b = &s->b;
    const rk_ir_value *x, *y, *z;
    int bi = binary_index(cmd);
    if (bi >= 0 || !strcmp(cmd, "make_buffer_rsrc") || !strcmp(cmd, "concat")) {
        next_operands(s, c, &x, &y, NULL);
        if (s->error[0])
            return 1;
        bind(s, lhs, ENV_VALUE,
             bi >= 0                  ? binary_fns[bi](b, x, y)
             : !strcmp(cmd, "concat") ? rk_b_concat(b, x, y)
                                      : rk_b_make_buffer_rsrc(b, x, y));
    } else if (!strcmp(cmd, "readfirstlane") || !strcmp(cmd, "smem_addr")) {
        x = next_value(s, c);
        if (!s->error[0])
            bind(s, lhs, ENV_VALUE, cmd[0] == 'r' ? rk_b_readfirstlane(b, x) : rk_b_smem_addr(b, x));
    } else if (!strcmp(cmd, "select") || !strcmp(cmd, "buffer_store") || !strcmp(cmd, "global_atomic_fadd")
               || !strcmp(cmd, "ds_read_tr16_b64") || !strcmp(cmd, "ds_read_tr16_b128")) {
        next_operands(s, c, &x, &y, &z);
        if (s->error[0])
            return 1;
        if (!strcmp(cmd, "select"))
            bind(s, lhs, ENV_VALUE, rk_b_select(b, x, y, z));
        else if (!strcmp(cmd, "buffer_store"))
            rk_b_buffer_store(b, x, y, z);
        else if (!strcmp(cmd, "global_atomic_fadd"))
            rk_b_global_atomic_fadd(b, x, y, z);
        else if (!strcmp(cmd, "ds_read_tr16_b64"))
            bind(s, lhs, ENV_VALUE, rk_b_ds_read_tr16_b64(b, x, y, z));
        else
            bind(s, lhs, ENV_VALUE, rk_b_ds_read_tr16_b128(b, x, y, z));
    } else
        return 0;
    return 1;
}

/* The calls without value arguments, or with ints and names. */
static int call_plain(script *s, const char *lhs, const char *cmd, cursor *c)
{
    rk_builder *b = &s->b;
    if (!strcmp(cmd, "const_i32")) {
        long long v = int_arg(s, c);
        if (!s->error[0])
            bind(s, lhs, ENV_VALUE, rk_b_const_i32(b, v));
    } else if (!strcmp(cmd, "const_i1")) {
        const char *word = need(s, c);
        if (strcmp(word, "true") != 0 && strcmp(word, "false") != 0)
            bad(s, "bad bool");
        if (!s->error[0])
            bind(s, lhs, ENV_VALUE, rk_b_const_i1(b, !strcmp(word, "true")));
    } else if (!strcmp(cmd, "const_f32")) {
        long long v = int_arg(s, c);
        if (!s->error[0])
            bind(s, lhs, ENV_VALUE, rk_b_const_f32(b, v));
    } else if (!strcmp(cmd, "zeros")) {
        const char *type = need(s, c);
        if (!s->error[0])
            bind(s, lhs, ENV_VALUE, rk_b_zeros(b, type));
    } else if (!strcmp(cmd, "thread_id")) {
        bind(s, lhs, ENV_VALUE, rk_b_thread_id(b));
    } else if (!strcmp(cmd, "lane_id")) {
        bind(s, lhs, ENV_VALUE, rk_b_lane_id(b));
    } else if (!strcmp(cmd, "sync")) {
        rk_b_sync(b);
    } else if (!strcmp(cmd, "sync_lds_only")) {
        rk_b_sync_lds_only(b);
    } else if (!strcmp(cmd, "pop_region")) {
        rk_b_pop_region(b);
    } else if (!strcmp(cmd, "block_id")) {
        long long v = int_arg(s, c);
        if (!s->error[0])
            bind(s, lhs, ENV_VALUE, rk_b_block_id(b, v));
    } else if (!strcmp(cmd, "s_waitcnt_vmcnt") || !strcmp(cmd, "sched_barrier") || !strcmp(cmd, "s_setprio")) {
        long long v = int_arg(s, c);
        if (s->error[0])
            return 1;
        if (cmd[0] == 's' && cmd[2] == 'w')
            rk_b_s_waitcnt_vmcnt(b, v);
        else if (!strcmp(cmd, "sched_barrier"))
            rk_b_sched_barrier(b, v);
        else
            rk_b_s_setprio(b, v);
    } else if (!strcmp(cmd, "sched_group_barrier")) {
        long long mask = int_arg(s, c), size = int_arg(s, c), sync_id = int_arg(s, c);
        if (!s->error[0])
            rk_b_sched_group_barrier(b, mask, size, sync_id);
    } else if (!strcmp(cmd, "ret")) {
        rk_b_ret(b);
    } else if (!strcmp(cmd, "push_region")) {
        const char *name = need(s, c);
        if (!s->error[0])
            rk_b_push_region(b, rk_ir_make_region(s->arena, name));
    } else if (!strcmp(cmd, "new_value")) {
        const char *hint = need(s, c), *type = need(s, c);
        if (!s->error[0])
            bind(s, lhs, ENV_VALUE, rk_b_new_value(b, hint, type));
    } else if (!strcmp(cmd, "value")) {
        const char *name = need(s, c), *type = need(s, c);
        if (!s->error[0])
            bind(s, lhs, ENV_VALUE, rk_ir_make_value(s->arena, name, type));
    } else
        return 0;
    return 1;
}

/* The calls that mix values, ints and names. */
static int call_mixed(script *s, const char *lhs, const char *cmd, cursor *c)
{
    rk_builder *b = &s->b;
    const rk_ir_value *x, *y, *z, *w;
    if (!strcmp(cmd, "param")) {
        const char *name = need(s, c), *type = need(s, c);
        rk_attrs attrs = map_rest(s, c);
        if (!s->error[0])
            bind(s, lhs, ENV_VALUE, rk_b_param(b, name, type, &attrs));
    } else if (!strcmp(cmd, "constant")) {
        const char *ity = need(s, c);
        const rk_attr *v = tagged_rest(s, c);
        if (!s->error[0])
            bind(s, lhs, ENV_VALUE, rk_b_constant(b, ity, v));
    } else if (!strcmp(cmd, "binary")) {
        const char *name = need(s, c), *hint = need(s, c);
        next_operands(s, c, &x, &y, NULL);
        if (!s->error[0])
            bind(s, lhs, ENV_VALUE, rk_b_binary(b, name, hint, x, y));
    } else if (!strcmp(cmd, "cmp")) {
        const char *pred = need(s, c);
        next_operands(s, c, &x, &y, NULL);
        if (!s->error[0])
            bind(s, lhs, ENV_VALUE, rk_b_cmp(b, pred, x, y));
    } else if (!strcmp(cmd, "fptrunc") || !strcmp(cmd, "bitcast")) {
        const char *to;
        x = next_value(s, c);
        to = need(s, c);
        if (!s->error[0])
            bind(s, lhs, ENV_VALUE, cmd[0] == 'f' ? rk_b_fptrunc(b, x, to) : rk_b_bitcast(b, x, to));
    } else if (!strcmp(cmd, "buffer_load")) {
        const char *elem;
        long long n;
        next_operands(s, c, &x, &y, NULL);
        elem = need(s, c);
        n = int_arg(s, c);
        if (!s->error[0])
            bind(s, lhs, ENV_VALUE, rk_b_buffer_load(b, x, y, elem, n));
    } else if (!strcmp(cmd, "smem_alloc")) {
        const char *type = need(s, c), *flag = token(s, c);
        if (flag && strcmp(flag, "exclusive") != 0)
            bad(s, "bad flag");
        if (!s->error[0])
            bind(s, lhs, ENV_VALUE, rk_b_smem_alloc(b, type, flag != NULL));
    } else if (!strcmp(cmd, "smem_load")) {
        long long n, align;
        next_operands(s, c, &x, &y, &z);
        int_args(s, c, &n, &align);
        if (!s->error[0])
            bind(s, lhs, ENV_VALUE, rk_b_smem_load(b, x, y, z, n, align));
    } else if (!strcmp(cmd, "smem_store")) {
        long long align;
        next_operands(s, c, &x, &y, &z);
        w = next_value(s, c);
        align = int_arg(s, c);
        if (!s->error[0])
            rk_b_smem_store(b, x, y, z, w, align);
    } else if (!strcmp(cmd, "async_buffer_load_lds")) {
        long long dwords, aux;
        next_operands(s, c, &x, &y, &z);
        int_args(s, c, &dwords, &aux);
        if (!s->error[0])
            rk_b_async_buffer_load_lds(b, x, y, z, dwords, aux);
    } else if (!strcmp(cmd, "extract")) {
        long long index;
        x = next_value(s, c);
        index = int_arg(s, c);
        if (!s->error[0])
            bind(s, lhs, ENV_VALUE, rk_b_extract(b, x, index));
    } else if (!strcmp(cmd, "insert")) {
        long long index;
        next_operands(s, c, &x, &y, NULL);
        index = int_arg(s, c);
        if (!s->error[0])
            bind(s, lhs, ENV_VALUE, rk_b_insert(b, x, y, index));
    } else if (!strcmp(cmd, "from_elements")) {
        int n;
        const rk_ir_value **xs = values(s, c, &n);
        if (!s->error[0])
            bind(s, lhs, ENV_VALUE, rk_b_from_elements(b, xs, n));
    } else if (!strcmp(cmd, "mma")) {
        const char *op_id = need(s, c);
        next_operands(s, c, &x, &y, &z);
        if (!s->error[0])
            bind(s, lhs, ENV_VALUE, rk_b_mma(b, op_id, x, y, z));
    } else
        return 0;
    return 1;
}

static void call(script *s, const char *lhs, const char *cmd, cursor *c)
{
    if (!strcmp(cmd, "kernel")) {
        const char *name;
        rk_attrs attrs;
        if (s->have_kernel) {
            bad(s, "kernel twice");
            return;
        }
        name = need(s, c);
        attrs = map_rest(s, c);
        if (s->error[0])
            return;
        rk_b_init(&s->b, s->arena, name, &attrs);
        s->have_kernel = 1;
        return;
    }
    if (!s->have_kernel) {
        bad(s, "the first statement must be kernel");
        return;
    }
    if (call_values(s, lhs, cmd, c) || call_plain(s, lhs, cmd, c) || call_mixed(s, lhs, cmd, c))
        ;
    else if (!strcmp(cmd, "for_begin"))
        for_begin(s, lhs, c);
    else if (!strcmp(cmd, "for_end"))
        for_end(s, lhs, c);
    else if (!strcmp(cmd, "if_begin")) {
        const rk_ir_value *cond = next_value(s, c);
        if (!s->error[0])
            bind(s, lhs, ENV_IF, rk_b_if_begin(&s->b, cond));
    } else if (!strcmp(cmd, "if_end")) {
        rk_ir_op *op = env_get(s, need(s, c), ENV_IF, "not an if");
        if (op)
            rk_b_if_end(&s->b, op);
    } else if (!strcmp(cmd, "op") || !strcmp(cmd, "value_op"))
        op_call(s, lhs, cmd, c);
    else if (!strncmp(cmd, "t_", 2))
        tamper(s, cmd, c);
    else {
        char message[128];
        snprintf(message, sizeof message, "unknown command %.100s", cmd);
        bad(s, message);
    }
    if (!s->error[0] && !s->b.failed && !at_end(c))
        bad(s, "trailing arguments");
}

/* One line: [LHS =] CMD ARGS... */
static void statement(script *s, const char *line, size_t len)
{
    cursor c;
    const char *first, *lhs = NULL, *cmd;
    size_t save;
    c.text = line;
    c.len = len;
    c.pos = 0;
    first = need(s, &c);
    save = c.pos;
    cmd = token(s, &c);
    if (cmd && !strcmp(cmd, "=")) {
        lhs = first;
        cmd = need(s, &c);
    } else {
        c.pos = save;
        cmd = first;
    }
    if (!s->error[0])
        call(s, lhs, cmd, &c);
}

static int blank(char ch) { return ch == ' ' || ch == '\t' || ch == '\r'; }

/* Builds the script's kernel into s, a fresh script state over arena: 0 when it is built, 1
 * when the builder failed ("error: <failure>" in out; the partial kernel is in s), -1 when the
 * script is malformed ("script error: ..." in out). Shared with lower_driver.c and lower_oom.c. */
static int build_script(const char *text, size_t len, rk_arena *arena, script *s, rk_buf *out)
{
    size_t pos = 0;
    int number = 0;
    memset(s, 0, sizeof *s);
    s->arena = arena;
    while (pos <= len && !s->error[0] && !(s->have_kernel && s->b.failed)) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len, start = pos;
        number++;
        pos = end + 1;
        while (start < end && blank(text[start]))
            start++;
        while (end > start && blank(text[end - 1]))
            end--;
        if (start == end || text[start] == '#')
            continue;
        statement(s, text + start, end - start);
    }
    if (s->error[0] || !s->have_kernel) {
        if (s->error[0])
            rk_buf_printf(out, "script error: line %d: %s\n", number, s->error);
        else
            rk_buf_puts(out, "script error: no kernel statement\n");
        return -1;
    }
    if (s->b.failed) {
        rk_buf_printf(out, "error: %s\n", s->b.error);
        return 1;
    }
    return 0;
}

/* The output of one script into out; -1 (and "script error: ...") for a malformed one. */
static int run(const char *text, size_t len, rk_buf *out)
{
    rk_arena arena;
    script s;
    rk_error err;
    int status = 0;
    const char *verdict;
    rk_arena_init(&arena);
    if (build_script(text, len, &arena, &s, out) < 0) {
        status = -1;
    } else {
        rk_error_init(&err, &arena);
        if (rk_print_ir(s.b.kernel, &arena, out, &err))
            rk_buf_printf(out, "print_ir failed: %s\n", err.message);
        verdict = rk_verify_kernel(s.b.kernel, &arena);
        rk_buf_printf(out, "verify: %s\n", verdict ? verdict : "ok");
        if (arena.failed)
            status = -1;
    }
    rk_arena_free(&arena);
    return status;
}

/* For each script path argv[first..argc): its output by run_one as "<len>\n<output>\n" on
 * stdout. 0, or 1 when a script was malformed, or 2 when one could not be read. Shared with
 * lower_driver.c. */
static int run_scripts(int argc, char **argv, int first, int (*run_one)(const char *, size_t, rk_buf *))
{
    int i, status = 0;
    for (i = first; i < argc; i++) {
        size_t len = 0;
        char *data = driver_slurp(argv[i], &len);
        rk_buf out;
        if (!data)
            return 2;
        rk_buf_init(&out);
        if (run_one(data, len, &out))
            status = 1;
        printf("%lu\n", (unsigned long)out.len);
        if (out.len)
            fwrite(out.data, 1, out.len, stdout);
        printf("\n");
        rk_buf_free(&out);
        free(data);
    }
    return status;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: ir_driver SCRIPT...\n");
        return 2;
    }
    return run_scripts(argc, argv, 1, run);
}
