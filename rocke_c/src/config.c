/* config.c: stage parse, the TOML subset of docs/engine-contract.md §3, and the encoding
 * check of §2 step 5 (it is part of reading the file).
 *
 * Twin of rocke_py/engine/config.py, function for function in the same order; the few
 * C-only helpers (UTF-8 sequence length, the duplicate-key hash) stand where Python uses
 * its decoder or a dict. The text is never NUL-terminated: every scan is bounded by its
 * length. Every function returns 0 on success or -1 with *err filled (rk_fail). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "internal.h"

#define RK_MAX_NAME 64
/* Longest digit run that can still be inside int32: longer runs are out of range without
 * accumulating them, so no overflow is possible. */
#define RK_MAX_INT_DIGITS 10
#define RK_INT_MIN (-2147483647LL - 1)
#define RK_INT_MAX 2147483647LL

static const char *const rk_table_names[RK_TABLE_COUNT + 1] = {"parity", "target", "problem", "spec", NULL};

/* What the lines read so far have built (one per rk_config_parse call, on its stack). */
typedef struct rk_parse_state {
    rk_config *config;
    rk_arena *arena;
    int table;           /* enum rk_table of the last header; -1 before any */
    rk_map keys;         /* "<table><key>" -> rk_key_entry, so duplicate
                            detection stays linear in the number of keys */
} rk_parse_state;

/* C only (Python keys a dict by (table, key)): an entry of rk_parse_state.keys. */
typedef struct rk_key_entry {
    rk_map_key k;
    int index;           /* in config->entries */
} rk_key_entry;

/* One line of the text, without its '\n' (and without a final '\r'). */
typedef struct rk_line {
    const char *p;
    size_t n;
    int lineno;
} rk_line;

/* ---- encoding (contract §2 step 5) ---- */

static int line_of(const char *data, size_t pos)
{
    int line = 1;
    size_t i;
    for (i = 0; i < pos; i++)
        if (data[i] == '\n')
            line++;
    return line;
}

static int is_cont(unsigned char c) { return c >= 0x80 && c <= 0xBF; }

/* C only (Python's decoder does this): the length of the well-formed RFC 3629 sequence
 * starting at i, or 0 when it is ill-formed. The second byte's range excludes overlongs
 * (E0 80-9F, F0 80-8F), surrogates (ED A0-BF) and code points past U+10FFFF (F4 90+). */
static size_t utf8_sequence_len(const unsigned char *s, size_t len, size_t i)
{
    unsigned char c = s[i];
    unsigned char lo = 0x80, hi = 0xBF;
    size_t need, k;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        need = 2;
    else if (c >= 0xE0 && c <= 0xEF)
        need = 3;
    else if (c >= 0xF0 && c <= 0xF4)
        need = 4;
    else
        return 0; /* continuation byte, C0, C1, F5-FF */
    if (c == 0xE0)
        lo = 0xA0;
    else if (c == 0xED)
        hi = 0x9F;
    else if (c == 0xF0)
        lo = 0x90;
    else if (c == 0xF4)
        hi = 0x8F;
    if (len - i < 2 || s[i + 1] < lo || s[i + 1] > hi)
        return 0;
    for (k = 2; k < need; k++)
        if (len - i <= k || !is_cont(s[i + k]))
            return 0;
    return need;
}

/* Offset of the first byte of the first ill-formed sequence, or len when there is none
 * (the byte Python's UnicodeDecodeError.start names). */
static size_t first_invalid_utf8(const char *data, size_t len)
{
    const unsigned char *s = (const unsigned char *)data;
    size_t i = 0;
    while (i < len) {
        size_t n = utf8_sequence_len(s, len, i);
        if (n == 0)
            return i;
        i += n;
    }
    return len;
}

int rk_check_encoding(const char *data, size_t len, rk_error *err)
{
    const char *nul = len ? memchr(data, '\0', len) : NULL;
    size_t nul_at = nul ? (size_t)(nul - data) : len;
    size_t bad = first_invalid_utf8(data, len);
    if (nul_at < len && nul_at < bad)
        return rk_fail(err, "E_ENCODING", "line %d: NUL byte", line_of(data, nul_at));
    if (bad < len)
        return rk_fail(err, "E_ENCODING", "line %d: invalid UTF-8", line_of(data, bad));
    return 0;
}

/* ---- lexical helpers ---- */

/* `line L: <what>` as E_SYNTAX; returns -1. */
static int syntax(rk_error *err, int lineno, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rk_vfail(err, "E_SYNTAX", 0, fmt, ap);
    va_end(ap);
    if (err->internal)
        return -1;
    return rk_fail(err, "E_SYNTAX", "line %d: %s", lineno, err->message);
}

/* Index of the first control character (0x00-0x1F but tab, or 0x7F), or n when none.
 * Bytes suffice: no byte of a multi-byte UTF-8 sequence is below 0x80. */
static size_t find_control_char(const rk_line *line)
{
    size_t i;
    for (i = 0; i < line->n; i++) {
        unsigned char c = (unsigned char)line->p[i];
        if ((c < 0x20 && c != '\t') || c == 0x7F)
            return i;
    }
    return line->n;
}

static size_t skip_ws(const rk_line *line, size_t i)
{
    while (i < line->n && (line->p[i] == ' ' || line->p[i] == '\t'))
        i++;
    return i;
}

static int is_bare_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

static size_t bare_name_end(const rk_line *line, size_t i)
{
    while (i < line->n && is_bare_char(line->p[i]))
        i++;
    return i;
}

/* The table name or key starting at i (it ends at *end) and the index *at of the `sep` after
 * it; `missing` says what an empty one lacks, `what` names it. */
static int name_then(const rk_line *line, size_t i, const char *missing, const char *what, char sep, size_t *end,
                     size_t *at, rk_error *err)
{
    *end = bare_name_end(line, i);
    if (*end == i)
        return syntax(err, line->lineno, "%s", missing);
    if (*end - i > RK_MAX_NAME)
        return syntax(err, line->lineno, "name longer than %d characters", RK_MAX_NAME);
    *at = skip_ws(line, *end);
    if (*at == line->n || line->p[*at] != sep)
        return syntax(err, line->lineno, "expected '%c' after %s '%.*s'", sep, what, (int)(*end - i), line->p + i);
    return 0;
}

/* 1 if from i on there is only whitespace, then nothing or a comment. */
static int at_rest_ok(const rk_line *line, size_t i)
{
    i = skip_ws(line, i);
    return i == line->n || line->p[i] == '#';
}

/* ---- values ---- */

/* The escaped character for `\c`, or 0 for an unsupported escape. */
static char escape(char c)
{
    switch (c) {
    case '"': return '"';
    case '\\': return '\\';
    case 'n': return '\n';
    case 't': return '\t';
    default: return 0;
    }
}

/* A basic string whose opening quote is at i; *next = index after the closing quote.
 * A backslash that ends the line escapes nothing: the string is unterminated. */
static int parse_string(const rk_line *line, size_t i, const char *key, rk_arena *arena, rk_value *out, size_t *next,
                        rk_error *err)
{
    char *text = rk_alloc(arena, line->n - i);
    size_t len = 0;
    if (!text)
        return rk_fail_internal(err, "out of memory");
    for (i++; i < line->n; i++) {
        char c = line->p[i];
        if (c == '"') {
            out->kind = RK_VALUE_STR;
            out->s = text;
            out->s_len = len;
            *next = i + 1;
            return 0;
        }
        if (c == '\\') {
            if (i + 1 == line->n)
                break;
            c = escape(line->p[++i]);
            if (!c)
                return syntax(err, line->lineno, "key '%s': unsupported escape in string", key);
        }
        text[len++] = c;
    }
    return syntax(err, line->lineno, "key '%s': unterminated string", key);
}

static size_t token_end(const rk_line *line, size_t i)
{
    while (i < line->n && line->p[i] != ' ' && line->p[i] != '\t' && line->p[i] != '#')
        i++;
    return i;
}

/* [+-]?(0|[1-9][0-9]*) */
static int is_int_token(const char *t, size_t n)
{
    size_t i = (n > 0 && (t[0] == '+' || t[0] == '-')) ? 1 : 0, k;
    if (i == n)
        return 0;
    for (k = i; k < n; k++)
        if (t[k] < '0' || t[k] > '9')
            return 0;
    return n - i == 1 || t[i] != '0';
}

/* The integer of an int token into *out; -1 when it is outside int32. */
static int int_value(const char *t, size_t n, long long *out)
{
    int negative = t[0] == '-';
    size_t i = (t[0] == '+' || t[0] == '-') ? 1 : 0;
    long long v = 0;
    if (n - i > RK_MAX_INT_DIGITS)
        return -1;
    for (; i < n; i++)
        v = v * 10 + (t[i] - '0');
    if (negative)
        v = -v;
    if (v < RK_INT_MIN || v > RK_INT_MAX)
        return -1;
    *out = v;
    return 0;
}

static int parse_token(const rk_line *line, size_t start, size_t end, const char *key, rk_value *out, rk_error *err)
{
    const char *t = line->p + start;
    size_t n = end - start;
    if (n == 4 && memcmp(t, "true", 4) == 0) {
        out->kind = RK_VALUE_BOOL;
        out->i = 1;
        return 0;
    }
    if (n == 5 && memcmp(t, "false", 5) == 0) {
        out->kind = RK_VALUE_BOOL;
        out->i = 0;
        return 0;
    }
    if (is_int_token(t, n)) {
        out->kind = RK_VALUE_INT;
        if (int_value(t, n, &out->i) != 0)
            return rk_fail(err, "E_RANGE", "line %d: key '%s': integer is outside the 32-bit range", line->lineno, key);
        return 0;
    }
    return syntax(err, line->lineno, "key '%s': invalid value (expected an integer, true, false or a \"string\")", key);
}

/* The value starting at i (whitespace already skipped); *next = index after it. */
static int parse_value(const rk_line *line, size_t i, const char *key, rk_arena *arena, rk_value *out, size_t *next,
                       rk_error *err)
{
    size_t end;
    if (i == line->n || line->p[i] == '#')
        return syntax(err, line->lineno, "key '%s': missing value", key);
    if (line->p[i] == '"')
        return parse_string(line, i, key, arena, out, next, err);
    end = token_end(line, i);
    if (parse_token(line, i, end, key, out, err) != 0)
        return -1;
    *next = end;
    return 0;
}

/* ---- lines ---- */

/* A table header whose '[' is at i. */
static int parse_header(const rk_line *line, size_t i, rk_parse_state *st, rk_error *err)
{
    size_t start = skip_ws(line, i + 1), end;
    int name_len, table;
    const char *name = line->p + start;
    if (name_then(line, start, "expected a table name after '['", "table name", ']', &end, &i, err) != 0)
        return -1;
    name_len = (int)(end - start);
    if (!at_rest_ok(line, i + 1))
        return syntax(err, line->lineno, "unexpected text after table header [%.*s]", name_len, name);
    table = rk_str_index(name, end - start, rk_table_names);
    if (table < 0)
        return rk_fail(err, "E_UNKNOWN_TABLE",
                       "line %d: unknown table [%.*s] (expected [parity], [target], [problem] or [spec])", line->lineno,
                       name_len, name);
    if (st->config->table_line[table])
        return rk_fail(err, "E_DUPLICATE_KEY", "line %d: table [%s] is defined twice (first on line %d)", line->lineno,
                       rk_table_names[table], st->config->table_line[table]);
    st->config->table_line[table] = line->lineno;
    st->table = table;
    return 0;
}

/* Room for one more entry in the entry array (doubled in the arena). */
static int reserve_entry(rk_parse_state *st, rk_error *err)
{
    rk_config *cfg = st->config;
    if (cfg->n_entries == cfg->cap_entries) {
        int cap = cfg->cap_entries ? cfg->cap_entries * 2 : 64;
        rk_entry *grown = rk_alloc(st->arena, (size_t)cap * sizeof *grown);
        if (!grown)
            return rk_fail_internal(err, "out of memory");
        if (cfg->n_entries)
            memcpy(grown, cfg->entries, (size_t)cfg->n_entries * sizeof *grown);
        cfg->entries = grown;
        cfg->cap_entries = cap;
    }
    return 0;
}

static int add_entry(const char *key, const rk_value *value, int lineno, rk_parse_state *st, rk_error *err)
{
    rk_config *cfg = st->config;
    rk_key_entry *slot;
    rk_entry *e;
    char *table_key;
    size_t n = strlen(key);
    int added;
    if (st->table < 0)
        return rk_fail(err, "E_UNKNOWN_KEY", "line %d: key '%s' is outside any table", lineno, key);
    if (reserve_entry(st, err) != 0)
        return -1;
    table_key = rk_alloc(st->arena, n + 2);
    if (!table_key)
        return rk_fail_internal(err, "out of memory");
    table_key[0] = (char)('0' + st->table);
    memcpy(table_key + 1, key, n + 1);
    slot = rk_map_put(&st->keys, st->arena, table_key, rk_hash(table_key), sizeof *slot, &added);
    if (!slot)
        return rk_fail_internal(err, "out of memory");
    if (!added)
        return rk_fail(err, "E_DUPLICATE_KEY", "line %d: key '%s' in [%s] is set twice (first on line %d)", lineno, key,
                       rk_table_names[st->table], cfg->entries[slot->index].line);
    e = &cfg->entries[cfg->n_entries];
    e->table = st->table;
    e->key = key;
    e->line = lineno;
    e->value = *value;
    slot->index = cfg->n_entries++;
    return 0;
}

/* `key = value` with the key starting at i. */
static int parse_key_line(const rk_line *line, size_t i, rk_parse_state *st, rk_error *err)
{
    size_t end, at, next = 0;
    const char *key;
    rk_value value;
    if (name_then(line, i, "expected a key, a table header or a comment", "key", '=', &end, &at, err) != 0)
        return -1;
    key = rk_strndup(st->arena, line->p + i, end - i);
    if (!key)
        return rk_fail_internal(err, "out of memory");
    i = at;
    memset(&value, 0, sizeof value);
    if (parse_value(line, skip_ws(line, i + 1), key, st->arena, &value, &next, err) != 0)
        return -1;
    if (!at_rest_ok(line, next))
        return syntax(err, line->lineno, "key '%s': unexpected text after the value", key);
    return add_entry(key, &value, line->lineno, st, err);
}

/* One line, without its '\n' and without the '\r' of a CRLF. */
static int parse_line(const rk_line *line, rk_parse_state *st, rk_error *err)
{
    size_t i = find_control_char(line);
    if (i < line->n)
        return syntax(err, line->lineno, "control character 0x%02X", (unsigned)(unsigned char)line->p[i]);
    i = skip_ws(line, 0);
    if (i == line->n || line->p[i] == '#')
        return 0;
    if (line->p[i] == '[')
        return parse_header(line, i, st, err);
    return parse_key_line(line, i, st, err);
}

/* Lines in order, the first error wins; only '\n' ends a line. */
int rk_config_parse(const char *text, size_t len, rk_arena *arena, rk_config *out, rk_error *err)
{
    static const char empty[1] = {0}; /* so text + 0 is never arithmetic on NULL */
    rk_parse_state st;
    rk_line line;
    size_t start = 0;
    int t;
    out->entries = NULL;
    out->n_entries = 0;
    out->cap_entries = 0;
    for (t = 0; t < RK_TABLE_COUNT; t++)
        out->table_line[t] = 0;
    st.config = out;
    st.arena = arena;
    st.table = -1;
    rk_map_init(&st.keys);
    if (len == 0)
        text = empty;
    line.lineno = 0;
    for (;;) {
        const char *nl = start < len ? memchr(text + start, '\n', len - start) : NULL;
        size_t end = nl ? (size_t)(nl - text) : len; /* the line's end, found by the library */
        line.p = text + start;
        line.n = end - start;
        if (end < len && line.n > 0 && line.p[line.n - 1] == '\r')
            line.n--; /* CRLF; a '\r' that no '\n' follows is a control character */
        line.lineno++;
        if (parse_line(&line, &st, err) != 0)
            return -1;
        if (end == len)
            return 0;
        start = end + 1;
    }
}
