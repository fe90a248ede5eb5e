/* parser_cases.c: the parser cases (tests/data/parser_cases/, format in its README.md) through
 * the C engine's input stages: the encoding check, the parser, the schema (internal API) and
 * rocke_emit. The twin of tests/tools/parser_cases.py, function for function in the same order:
 * the same reader and the same dump of what a stage returned, compared with the expected text
 * of the case file (neither runner reads the other's output).
 *
 *     parser_cases DIR     one line per case: "ok STAGE:ID", or "FAIL STAGE:ID (line N)" with
 *                          the wanted and the got dump; exit 0 when every case passes, 1 when
 *                          one fails, 2 when DIR or a case file cannot be read */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rocke.h"
#include "internal.h"
#include "driver_io.h"

static const char *const stages[] = {"encoding", "parse", "schema", "emit"}; /* <stage>.cases each */
#define N_STAGES 4
static const char *const table_names[RK_TABLE_COUNT] = {"parity", "target", "problem", "spec"}; /* enum rk_table */
static const char *const family_names[] = {"fwd", "wgrad", "dgrad"};                            /* enum rk_family */
#define NO_EOL "\\ No newline at end of file"

typedef struct parser_case {
    const char *stage;
    const char *id;
    int line; /* of the === header in the case file */
    const char *data; /* the input */
    size_t len;
    const char *mode;   /* emit only */
    const char *flavor; /* emit only */
    const char *expected;
    size_t expected_len;
} parser_case;

typedef struct case_list {
    parser_case *items; /* arena */
    int n;
    int cap;
} case_list;

/* A reader's failure: "file:line: why" on stderr, then -1. */
static int bad_file(const char *where, const char *why)
{
    fprintf(stderr, "%s: %s\n", where, why);
    return -1;
}

static int hex_value(const char *s, size_t n, unsigned long *out)
{
    size_t i;
    *out = 0;
    for (i = 0; i < n; i++) {
        const char *digits = "0123456789ABCDEF", *d = s[i] ? strchr(digits, s[i]) : NULL;
        if (!d)
            return -1;
        *out = *out * 16 + (unsigned long)(d - digits);
    }
    return 0;
}

/* The UTF-8 bytes of code point cp (surrogates too, as Python's surrogatepass writes them). */
static void put_utf8(rk_buf *out, unsigned long cp)
{
    char b[4];
    size_t n;
    if (cp < 0x80) {
        b[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (char)(0xC0 | (cp >> 6));
        b[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (char)(0xE0 | (cp >> 12));
        b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (char)(0xF0 | (cp >> 18));
        b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    rk_buf_putn(out, b, n);
}

/* The bytes of one <...> escape (s, n: what stands between the brackets): <0xHH>, <U+HHHH>,
 * <TAB>, <CR> or <TEXT*N>. */
static int unescape(const char *s, size_t n, rk_buf *out, const char *where)
{
    const char *star = memchr(s, '*', n);
    unsigned long v;
    if (n == 3 && memcmp(s, "TAB", 3) == 0) {
        rk_buf_putn(out, "\t", 1);
        return 0;
    }
    if (n == 2 && memcmp(s, "CR", 2) == 0) {
        rk_buf_putn(out, "\r", 1);
        return 0;
    }
    if (n == 4 && memcmp(s, "0x", 2) == 0 && hex_value(s + 2, 2, &v) == 0) {
        char byte = (char)v;
        rk_buf_putn(out, &byte, 1);
        return 0;
    }
    if (n >= 6 && n <= 8 && memcmp(s, "U+", 2) == 0 && hex_value(s + 2, n - 2, &v) == 0 && v <= 0x10FFFF) {
        put_utf8(out, v);
        return 0;
    }
    if (star && star > s && memchr(star + 1, '*', n - (size_t)(star + 1 - s)) == NULL) {
        const char *digit = star + 1, *end = s + n;
        unsigned long count = 0;
        if (digit < end && *digit != '0' && end - digit <= 9) {
            for (; digit < end && *digit >= '0' && *digit <= '9'; digit++)
                count = count * 10 + (unsigned long)(*digit - '0');
            if (digit == end) {
                for (; count > 0; count--)
                    rk_buf_putn(out, s, (size_t)(star - s));
                return 0;
            }
        }
    }
    return bad_file(where, "unknown escape");
}

/* A line of a case file (s, n) as bytes, appended to out: its text with every <...> escape
 * replaced. */
static int decode(const char *s, size_t n, rk_buf *out, const char *where)
{
    size_t i = 0;
    while (i < n) {
        const char *open = memchr(s + i, '<', n - i), *close;
        size_t upto = open ? (size_t)(open - s) : n;
        rk_buf_putn(out, s + i, upto - i);
        if (!open)
            break;
        close = open + 1;
        while (close < s + n && *close != '>' && *close != '<')
            close++;
        if (close == s + n || *close != '>')
            return bad_file(where, "'<' without its '>' (write <0x3C> for a '<')");
        if (unescape(open + 1, (size_t)(close - open - 1), out, where) != 0)
            return -1;
        i = (size_t)(close + 1 - s);
    }
    return 0;
}

static int is_id(const char *s, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        char c = s[i];
        int alnum = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (!alnum && (c != '-' || i == 0))
            return 0;
    }
    return n > 0;
}

/* A decoded copy of s, n in the arena (NUL-terminated), or NULL after the reader's message. */
static char *decoded_copy(const char *s, size_t n, rk_arena *arena, const char *where)
{
    rk_buf b;
    char *copy = NULL;
    rk_buf_init(&b);
    if (decode(s, n, &b, where) == 0 && !b.failed)
        copy = rk_strndup(arena, b.data ? b.data : "", b.len);
    rk_buf_free(&b);
    return copy;
}

/* `=== ID [mode=M flavor=F]` (s, n) -> c->id, c->mode, c->flavor. */
static int header(const char *s, size_t n, rk_arena *arena, parser_case *c, const char *where)
{
    const char *words[5];
    size_t lens[5];
    int count = 0;
    size_t i, start = 0;
    for (i = 0; i <= n && count < 5; i++)
        if (i == n || s[i] == ' ') {
            words[count] = s + start;
            lens[count++] = i - start;
            start = i + 1;
        }
    if ((count != 2 && count != 4) || i <= n || !is_id(words[1], lens[1]))
        return bad_file(where, "expected '=== ID' or '=== ID mode=M flavor=F'");
    c->id = rk_strndup(arena, words[1], lens[1]);
    c->mode = c->flavor = "";
    if (count == 2)
        return 0;
    if (lens[2] < 5 || memcmp(words[2], "mode=", 5) != 0 || lens[3] < 7 || memcmp(words[3], "flavor=", 7) != 0)
        return bad_file(where, "expected mode=M flavor=F after the id");
    c->mode = decoded_copy(words[2] + 5, lens[2] - 5, arena, where);
    c->flavor = decoded_copy(words[3] + 7, lens[3] - 7, arena, where);
    return c->mode && c->flavor ? 0 : -1;
}

typedef struct text_line {
    const char *s;
    size_t n;
} text_line;

static int line_is(const text_line *line, const char *word)
{
    return line->n == strlen(word) && memcmp(line->s, word, line->n) == 0;
}

static int is_header(const text_line *line) { return line->n >= 4 && memcmp(line->s, "=== ", 4) == 0; }

/* The input section (lines[0..n)): each line and a newline; `@base` is base.toml; a last
 * line NO_EOL takes the final newline away. */
static int input_bytes(const text_line *lines, int n, const char *base, size_t base_len, rk_buf *out, const char *where)
{
    int k;
    for (k = 0; k < n; k++) {
        if (line_is(&lines[k], NO_EOL)) {
            if (out->len == 0 || out->data[out->len - 1] != '\n' || k != n - 1)
                return bad_file(where, "'" NO_EOL "' must be the input's last line");
            out->data[--out->len] = '\0';
        } else if (line_is(&lines[k], "@base")) {
            rk_buf_putn(out, base, base_len);
        } else {
            if (decode(lines[k].s, lines[k].n, out, where) != 0)
                return -1;
            rk_buf_putn(out, "\n", 1);
        }
    }
    return 0;
}

static int add_case(case_list *list, const parser_case *c, rk_arena *arena)
{
    if (list->n == list->cap) {
        int cap = list->cap ? list->cap * 2 : 64;
        parser_case *items = rk_alloc(arena, sizeof(parser_case) * (size_t)cap);
        if (!items)
            return -1;
        if (list->n)
            memcpy(items, list->items, sizeof(parser_case) * (size_t)list->n);
        list->items = items;
        list->cap = cap;
    }
    list->items[list->n++] = *c;
    return 0;
}

/* The text's lines (split at '\n'; a final empty one dropped), in the arena. */
static text_line *split_lines(const char *text, size_t len, rk_arena *arena, int *n_out)
{
    size_t i, start = 0;
    int n = 0, count = 1;
    text_line *lines;
    for (i = 0; i < len; i++)
        count += text[i] == '\n';
    lines = rk_alloc(arena, sizeof(text_line) * (size_t)count);
    if (!lines)
        return NULL;
    for (i = 0; i <= len; i++)
        if (i == len || text[i] == '\n') {
            lines[n].s = text + start;
            lines[n++].n = i - start;
            start = i + 1;
        }
    if (n > 0 && lines[n - 1].n == 0)
        n--;
    *n_out = n;
    return lines;
}

/* Every case of one <stage>.cases file (text, len), in file order, appended to list. */
static int read_cases(const char *stage, const char *text, size_t len, const char *base, size_t base_len,
                      rk_arena *arena, case_list *list)
{
    int n, i = 0;
    text_line *lines = split_lines(text, len, arena, &n);
    char where[64];
    if (!lines)
        return bad_file(stage, "out of memory");
    while (i < n && !is_header(&lines[i]))
        i++; /* the file's own comments */
    while (i < n) {
        parser_case c;
        rk_buf data, want;
        int start = i, body, ok;
        memset(&c, 0, sizeof c);
        snprintf(where, sizeof where, "%.16s.cases:%d", stage, i + 1);
        if (header(lines[i].s, lines[i].n, arena, &c, where) != 0)
            return -1;
        c.stage = stage;
        c.line = start + 1;
        body = ++i;
        while (i < n && !line_is(&lines[i], "---")) {
            if (is_header(&lines[i]))
                return bad_file(where, "the case has no '---' line");
            i++;
        }
        if (i == n)
            return bad_file(where, "the case has no '---' line");
        rk_buf_init(&data);
        rk_buf_init(&want);
        ok = input_bytes(lines + body, i - body, base, base_len, &data, where) == 0;
        for (i++; ok && i < n && !is_header(&lines[i]); i++) {
            if (lines[i].n == 0 || lines[i].s[0] == '#')
                continue;
            snprintf(where, sizeof where, "%.16s.cases:%d", stage, i + 1);
            if (want.len > 0)
                rk_buf_putn(&want, "\n", 1);
            ok = decode(lines[i].s, lines[i].n, &want, where) == 0;
        }
        ok = ok && !data.failed && !want.failed;
        if (ok) {
            c.data = rk_strndup(arena, data.data ? data.data : "", data.len);
            c.len = data.len;
            c.expected = rk_strndup(arena, want.data ? want.data : "", want.len);
            c.expected_len = want.len;
            ok = c.data && c.expected && add_case(list, &c, arena) == 0;
        }
        rk_buf_free(&data);
        rk_buf_free(&want);
        if (!ok)
            return -1;
    }
    return 0;
}

/* The cases of every stage file of dir, stage by stage; ids unique per stage. The files'
 * bytes stay alive in *texts (the caller frees them). */
static int load(const char *dir, rk_arena *arena, case_list *list, char **texts)
{
    char path[4096];
    char *base;
    size_t base_len;
    int s;
    snprintf(path, sizeof path, "%s/base.toml", dir);
    base = driver_slurp(path, &base_len);
    if (!base)
        return -1;
    texts[N_STAGES] = base;
    for (s = 0; s < N_STAGES; s++) {
        size_t len;
        int first = list->n, a, b;
        snprintf(path, sizeof path, "%s/%s.cases", dir, stages[s]);
        texts[s] = driver_slurp(path, &len);
        if (!texts[s] || read_cases(stages[s], texts[s], len, base, base_len, arena, list) != 0)
            return -1;
        for (a = first; a < list->n; a++)
            for (b = first; b < a; b++)
                if (strcmp(list->items[a].id, list->items[b].id) == 0)
                    return bad_file(path, "an id is used twice");
    }
    return 0;
}

/* ---- the dump: what a stage returned, as the case files write it ---- */

static void dump_value(const rk_value *v, rk_buf *out)
{
    if (v->kind == RK_VALUE_BOOL)
        rk_buf_puts(out, v->i ? "true" : "false");
    else if (v->kind == RK_VALUE_INT)
        rk_buf_put_int(out, v->i);
    else {
        rk_buf_putn(out, "\"", 1);
        rk_buf_putn(out, v->s, v->s_len);
        rk_buf_putn(out, "\"", 1);
    }
}

static void dump_rejected(const rk_error *err, rk_buf *out)
{
    rk_buf_printf(out, "%s %s %s", err->internal ? "internal" : "rejected", err->code ? err->code : "NULL",
                  err->message ? err->message : "");
}

/* `parsed`, then the table headers and entries in line order: `LINE [TABLE]`,
 * `LINE TABLE.KEY = VALUE`. */
static void dump_parse(const rk_config *cfg, rk_buf *out)
{
    int order[RK_TABLE_COUNT], n_tables = 0, t, k, e = 0;
    for (t = 0; t < RK_TABLE_COUNT; t++)
        if (cfg->table_line[t]) {
            for (k = n_tables++; k > 0 && cfg->table_line[order[k - 1]] > cfg->table_line[t]; k--)
                order[k] = order[k - 1];
            order[k] = t;
        }
    rk_buf_puts(out, "parsed");
    for (k = 0; k < n_tables || e < cfg->n_entries;) {
        if (k < n_tables && (e == cfg->n_entries || cfg->table_line[order[k]] < cfg->entries[e].line)) {
            rk_buf_printf(out, "\n%d [%s]", cfg->table_line[order[k]], table_names[order[k]]);
            k++;
        } else {
            const rk_entry *entry = &cfg->entries[e++];
            rk_buf_printf(out, "\n%d %s.%s = ", entry->line, table_names[entry->table], entry->key);
            dump_value(&entry->value, out);
        }
    }
}

/* `schema family=F`, then the field of each entry outside [parity], in file order, with the
 * line and value the fields hold (the field is the one set on the entry's line); `extra
 * fields N` if more fields are set. */
static void dump_schema(const rk_config *cfg, const rk_fields *fields, rk_buf *out)
{
    int e, j, shown = 0, set = 0;
    rk_buf_printf(out, "schema family=%s", family_names[fields->family]);
    for (e = 0; e < cfg->n_entries; e++) {
        const rk_entry *entry = &cfg->entries[e];
        if (entry->table == RK_TABLE_PARITY)
            continue;
        for (j = 0; j < RK_KEY_COUNT && !(fields->f[j].set && fields->f[j].line == entry->line); j++)
            ;
        if (j == RK_KEY_COUNT) {
            rk_buf_printf(out, "\n%d %s.%s missing", entry->line, table_names[entry->table], entry->key);
            continue;
        }
        shown++;
        rk_buf_printf(out, "\n%d %s.%s = ", fields->f[j].line, table_names[entry->table], entry->key);
        dump_value(&fields->f[j].value, out);
    }
    for (j = 0; j < RK_KEY_COUNT; j++)
        set += fields->f[j].set;
    if (set != shown)
        rk_buf_printf(out, "\nextra fields %d", set - shown);
}

/* The dump of the C engine's stage on the case's input. */
static void run_case(const parser_case *c, rk_buf *out)
{
    rk_arena arena;
    rk_error err;
    rk_config cfg;
    rk_fields fields;
    rk_arena_init(&arena);
    rk_error_init(&err, &arena);
    if (strcmp(c->stage, "encoding") == 0) {
        if (rk_check_encoding(c->data, c->len, &err) == 0)
            rk_buf_puts(out, "ok");
        else
            dump_rejected(&err, out);
    } else if (strcmp(c->stage, "emit") == 0) {
        rocke_result r;
        rocke_status st = rocke_emit(c->data, c->len, c->mode, c->flavor, &r);
        if (st == ROCKE_EMITTED)
            rk_buf_puts(out, "emitted");
        else
            rk_buf_printf(out, "%s %s %s", st == ROCKE_REJECTED ? "rejected" : "internal", r.code ? r.code : "NULL",
                          r.message ? r.message : "");
        rocke_result_free(&r);
    } else if (rk_config_parse(c->data, c->len, &arena, &cfg, &err) != 0) {
        dump_rejected(&err, out);
    } else if (strcmp(c->stage, "parse") == 0) {
        dump_parse(&cfg, out);
    } else if (rk_schema_check(&cfg, &fields, &err) != 0) {
        dump_rejected(&err, out);
    } else {
        dump_schema(&cfg, &fields, out);
    }
    rk_arena_free(&arena);
}

/* Bytes as one printable line: what is not printable ASCII as <0xHH>. */
static void put_shown(const char *s, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 0x20 && ch < 0x7F && ch != '<')
            putchar(ch);
        else
            printf("<0x%02X>", ch);
    }
    putchar('\n');
}

/* Checks every case, one line each; the number that failed. */
static int failures(const case_list *list)
{
    int i, failed = 0;
    for (i = 0; i < list->n; i++) {
        const parser_case *c = &list->items[i];
        rk_buf got;
        rk_buf_init(&got);
        run_case(c, &got);
        if (!got.failed && got.len == c->expected_len && memcmp(got.data, c->expected, got.len) == 0) {
            printf("ok %s:%s\n", c->stage, c->id);
        } else {
            failed++;
            printf("FAIL %s:%s (line %d)\n  want: ", c->stage, c->id, c->line);
            put_shown(c->expected, c->expected_len);
            printf("   got: ");
            put_shown(got.failed ? "(out of memory)" : got.data, got.failed ? 15 : got.len);
        }
        rk_buf_free(&got);
    }
    return failed;
}

int main(int argc, char **argv)
{
    rk_arena arena;
    case_list list = {NULL, 0, 0};
    char *texts[N_STAGES + 1] = {NULL, NULL, NULL, NULL, NULL};
    int rc, s, failed;
    if (argc != 2) {
        fprintf(stderr, "usage: parser_cases DIR\n");
        return 2;
    }
    rk_arena_init(&arena);
    rc = load(argv[1], &arena, &list, texts);
    failed = rc == 0 ? failures(&list) : 0;
    if (rc == 0)
        fprintf(stderr, "parser_cases: %d cases, %d failed\n", list.n, failed);
    for (s = 0; s <= N_STAGES; s++)
        free(texts[s]);
    rk_arena_free(&arena);
    return rc != 0 ? 2 : failed != 0;
}
