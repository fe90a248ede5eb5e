/* test_config.c: the C engine's input stages against docs/engine-contract.md, where a case
 * table cannot be a data file: the parser never reads past len (§3, rk_config_parse), its
 * duplicate-key hash growing over 5000 keys, and the key table of the schema (§4,
 * rk_schema_check) against the contract key by key (bounds and wrong types, generated from
 * the table, which is tests/data/parser_cases/keys.tsv). The twin of
 * tests/engines/test_config_parser.py. The single cases of the encoding
 * check, the parser, the schema and rocke_emit's entry checks are tests/data/parser_cases/,
 * run through this engine by rocke_c/tests/parser_cases.c. Expected values come from the
 * contract, never from running an engine.
 *
 *     test_config [DIR]      exit 0 when every check passes (run by ctest); DIR holds keys.tsv
 *                            (default: CMake's ROCKE_TEST_DATA) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rocke.h"
#include "internal.h"
#include "check.h"
#include "driver_io.h"

/* CHECK with the case id and what came out, so a failure says which case and why. */
#define CHECK_CASE(cond, id, code, message) \
    do { \
        if (!(cond)) { \
            fprintf(stderr, "%s:%d: case %s: CHECK failed: %s\n    got: %s: %s\n", __FILE__, __LINE__, (id), #cond, \
                    (code) ? (code) : "(none)", (message) ? (message) : ""); \
            check_failures++; \
        } \
    } while (0)

#define MAX32 2147483647LL
#define MIN32 (-2147483647LL - 1)

/* Parses text into cfg with a fresh arena (the caller frees it). */
static int parse(const char *text, size_t len, rk_arena *arena, rk_config *cfg, rk_error *err)
{
    rk_arena_init(arena);
    rk_error_init(err, arena);
    return rk_config_parse(text, len, arena, cfg, err);
}

/* The text is never read past len: a NUL-free buffer with no terminator parses the same. */
static void test_parse_is_bounded_by_len(void)
{
    static const char text[] = "[spec]\na = 12";
    char *exact = malloc(sizeof text - 1);
    rk_arena arena;
    rk_config cfg;
    rk_error err;
    CHECK(exact != NULL);
    if (!exact)
        return;
    memcpy(exact, text, sizeof text - 1);
    CHECK(parse(exact, sizeof text - 1, &arena, &cfg, &err) == 0);
    CHECK(cfg.n_entries == 1 && cfg.entries[0].value.i == 12);
    rk_arena_free(&arena);
    CHECK(parse(exact, 12, &arena, &cfg, &err) == 0); /* "a = 1" */
    CHECK(cfg.n_entries == 1 && cfg.entries[0].value.i == 1);
    rk_arena_free(&arena);
    free(exact);
    CHECK(parse(NULL, 0, &arena, &cfg, &err) == 0 && cfg.n_entries == 0);
    rk_arena_free(&arena);
}

/* Many keys (the duplicate hash grows several times) and a duplicate found late. */
static void test_parse_many_keys(void)
{
    rk_buf b;
    rk_arena arena;
    rk_config cfg;
    rk_error err;
    int k;
    rk_buf_init(&b);
    rk_buf_puts(&b, "[parity]\n");
    for (k = 0; k < 5000; k++)
        rk_buf_printf(&b, "k%d = %d\n", k, k);
    CHECK(!b.failed);
    CHECK(parse(b.data, b.len, &arena, &cfg, &err) == 0 && cfg.n_entries == 5000);
    CHECK(cfg.entries[4999].line == 5001 && cfg.entries[4999].value.i == 4999);
    rk_arena_free(&arena);
    rk_buf_puts(&b, "k1234 = 0\n");
    CHECK(parse(b.data, b.len, &arena, &cfg, &err) == -1);
    CHECK(err.code && strcmp(err.code, "E_DUPLICATE_KEY") == 0
          && strcmp(err.message, "line 5002: key 'k1234' in [parity] is set twice (first on line 1236)") == 0);
    rk_arena_free(&arena);
    rk_buf_free(&b);
}

/* ==== §4: the key table, as the contract lists it ==== */

enum { T_INT, T_BOOL, T_STR, T_ENUM, T_NAME, T_TRI };

typedef struct contract_key {
    int table;
    const char *name;
    int type;
    long long lo, hi;      /* T_INT */
    const char *families;  /* letters F, W, D */
} contract_key;

/* The contract's key table, one row a key: tests/data/parser_cases/keys.tsv (the Python twin
 * reads it too), loaded by read_contract. */
typedef struct contract {
    contract_key keys[128];
    int n;
    rk_arena arena; /* the names */
} contract;

static const char *const table_names[RK_TABLE_COUNT] = {"parity", "target", "problem", "spec"};
static const char *const type_names[] = {"int", "bool", "str", "enum", "name", "tri", NULL}; /* T_* order */

static int index_of(const char *const *names, int n, const char *s, size_t len)
{
    int i;
    for (i = 0; i < n && names[i]; i++)
        if (strlen(names[i]) == len && memcmp(names[i], s, len) == 0)
            return i;
    return -1;
}

/* keys.tsv's rows into c (header `table key type lo hi families required`, tab-separated); -1
 * with a message on stderr when the file cannot be read or a row is malformed. */
static int read_contract(const char *path, contract *c)
{
    size_t len, pos = 0;
    char *text = driver_slurp(path, &len);
    int row = 0, rc = 0;
    rk_arena_init(&c->arena);
    c->n = 0;
    if (!text)
        return -1;
    while (pos < len && rc == 0) {
        const char *line = text + pos, *nl = memchr(line, '\n', len - pos), *field[8];
        size_t n = nl ? (size_t)(nl - line) : len - pos, lens[8], i, start = 0;
        int count = 0;
        pos += n + 1;
        if (row++ == 0)
            continue; /* the header */
        for (i = 0; i <= n && count < 8; i++)
            if (i == n || line[i] == '\t') {
                field[count] = line + start;
                lens[count++] = i - start;
                start = i + 1;
            }
        if (count != 7 || c->n == (int)(sizeof c->keys / sizeof c->keys[0])) {
            fprintf(stderr, "%s:%d: expected 7 tab-separated fields\n", path, row);
            rc = -1;
            break;
        }
        c->keys[c->n].table = index_of(table_names, RK_TABLE_COUNT, field[0], lens[0]);
        c->keys[c->n].name = rk_strndup(&c->arena, field[1], lens[1]);
        c->keys[c->n].type = index_of(type_names, 6, field[2], lens[2]);
        c->keys[c->n].lo = strtoll(field[3], NULL, 10);
        c->keys[c->n].hi = strtoll(field[4], NULL, 10);
        c->keys[c->n].families = rk_strndup(&c->arena, field[5], lens[5]);
        if (c->keys[c->n].table < 0 || c->keys[c->n].type < 0 || !c->keys[c->n].name || !c->keys[c->n].families) {
            fprintf(stderr, "%s:%d: unknown table or type\n", path, row);
            rc = -1;
        }
        c->n++;
    }
    free(text);
    return rc;
}

/* BASE with `key = value` in the key's table (the family chosen so the key applies): the
 * key's line replaced when BASE has it, else the key inserted right after the header. */
static void config_with(const contract_key *key, const char *value, rk_buf *out, int *line)
{
    static const char *const lines[14] = {"[target]", "arch = \"gfx950\"",
                                          "",         "[problem]",
                                          "N = 8",    "Hi = 56",
                                          "Wi = 56",  "C = 64",
                                          "K = 64",   "Y = 3",
                                          "X = 3",    "",
                                          "[spec]",   "family = \"wgrad\""};
    const char *family = strchr(key->families, 'W') ? "wgrad" : strchr(key->families, 'F') ? "fwd" : "dgrad";
    int header = key->table == RK_TABLE_TARGET ? 0 : key->table == RK_TABLE_PROBLEM ? 3 : 12;
    int i, replaced = -1, n = 0;
    size_t klen = strlen(key->name);
    for (i = 0; i < 14; i++)
        if (strncmp(lines[i], key->name, klen) == 0 && strncmp(lines[i] + klen, " = ", 3) == 0)
            replaced = i;
    rk_buf_init(out);
    for (i = 0; i < 14; i++) {
        if (i == replaced) {
            rk_buf_printf(out, "%s = %s\n", key->name, value);
            *line = ++n;
        } else if (i == 13) {
            rk_buf_printf(out, "family = \"%s\"\n", family);
            n++;
        } else {
            rk_buf_printf(out, "%s\n", lines[i]);
            n++;
        }
        if (i == header && replaced < 0) {
            rk_buf_printf(out, "%s = %s\n", key->name, value);
            *line = ++n;
        }
    }
}

/* The arena of the last check_schema_text call: the fields point into it until the next call
 * (or the end of main) frees it. */
static rk_arena schema_arena;
static int schema_arena_live;

static void free_schema_arena(void)
{
    if (schema_arena_live)
        rk_arena_free(&schema_arena);
    schema_arena_live = 0;
}

/* Parse + schema of text; 0 with fields, or -1 with err. */
static int check_schema_text(const char *text, size_t len, rk_fields *fields, rk_error *err)
{
    rk_config cfg;
    int rc;
    free_schema_arena();
    rc = parse(text, len, &schema_arena, &cfg, err);
    schema_arena_live = 1;
    if (rc == 0)
        rc = rk_schema_check(&cfg, fields, err);
    return rc;
}

static void test_int_key_bounds(const contract *contract_table)
{
    int i;
    for (i = 0; i < contract_table->n; i++) {
        const contract_key *key = &contract_table->keys[i];
        long long values[4];
        int v;
        if (key->type != T_INT)
            continue;
        values[0] = key->lo;
        values[1] = key->hi;
        values[2] = key->lo - 1;
        values[3] = key->hi + 1;
        for (v = 0; v < 4; v++) {
            char num[32], want[256];
            rk_buf text;
            rk_fields fields;
            rk_error err;
            int line = 0, rc;
            if (values[v] < MIN32 || values[v] > MAX32)
                continue;
            snprintf(num, sizeof num, "%lld", values[v]);
            config_with(key, num, &text, &line);
            rc = check_schema_text(text.data, text.len, &fields, &err);
            if (v < 2) {
                CHECK_CASE(rc == 0, key->name, err.code, err.message);
            } else {
                snprintf(want, sizeof want, "line %d: key '%s' in [%s] must be between %lld and %lld, not %lld", line,
                         key->name, table_names[key->table], key->lo, key->hi, values[v]);
                CHECK_CASE(rc == -1 && strcmp(err.code, "E_RANGE") == 0 && strcmp(err.message, want) == 0, key->name,
                           err.code, err.message);
            }
            rk_buf_free(&text);
        }
    }
}

static void test_every_key_rejects_every_wrong_type(const contract *contract_table)
{
    static const char *const literals[3] = {"7", "true", "\"x\""};
    static const char *const kinds[3] = {"an integer", "a boolean", "a string"};
    int i;
    for (i = 0; i < contract_table->n; i++) {
        const contract_key *key = &contract_table->keys[i];
        const char *expected = key->type == T_INT    ? "an integer"
                               : key->type == T_BOOL ? "a boolean"
                               : key->type == T_TRI  ? "true, false or \"auto\""
                                                     : "a string";
        int k;
        for (k = 0; k < 3; k++) {
            int accepted = key->type == T_INT    ? k == 0
                           : key->type == T_BOOL ? k == 1
                           : key->type == T_TRI  ? k > 0
                                                 : k == 2;
            char want[256];
            rk_buf text;
            rk_fields fields;
            rk_error err;
            int line = 0, rc;
            config_with(key, literals[k], &text, &line);
            rc = check_schema_text(text.data, text.len, &fields, &err);
            if (accepted) {
                CHECK_CASE(rc == 0 || strcmp(err.code, "E_TYPE") != 0, key->name, err.code, err.message);
            } else {
                snprintf(want, sizeof want, "line %d: key '%s' in [%s] must be %s, not %s", line, key->name,
                         table_names[key->table], expected, kinds[k]);
                CHECK_CASE(rc == -1 && strcmp(err.code, "E_TYPE") == 0 && strcmp(err.message, want) == 0, key->name,
                           err.code, err.message);
            }
            rk_buf_free(&text);
        }
    }
}

/* The data folder: ROCKE_TEST_DATA (CMake sets it to tests/data/parser_cases), or argv[1]. */
#ifndef ROCKE_TEST_DATA
#define ROCKE_TEST_DATA "tests/data/parser_cases"
#endif

int main(int argc, char **argv)
{
    static contract contract_table;
    char path[4096];
    snprintf(path, sizeof path, "%s/keys.tsv", argc > 1 ? argv[1] : ROCKE_TEST_DATA);
    test_parse_is_bounded_by_len();
    test_parse_many_keys();
    if (read_contract(path, &contract_table) == 0) {
        CHECK(contract_table.n == 61);
        test_int_key_bounds(&contract_table);
        test_every_key_rejects_every_wrong_type(&contract_table);
    } else {
        CHECK(!"keys.tsv read");
    }
    rk_arena_free(&contract_table.arena);
    free_schema_arena();
    if (check_failures)
        fprintf(stderr, "test_config: %d check(s) failed\n", check_failures);
    return check_failures != 0;
}
