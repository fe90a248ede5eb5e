/* test_config.c: the C engine's input stages against docs/engine-contract.md: the encoding
 * check (§2 step 5, rk_config_check_encoding), the parser (§3, rk_config_parse) and the
 * schema (§4, rk_schema_check), every error by code and exact message, plus the entry
 * checks of rocke_emit (§2: mode, flavor, size limit, order). The twin of
 * tests/engines/test_config_parser.py: the case tables carry the same ids and the same expected
 * messages, which come from the contract, never from running an engine.
 *
 *     test_config            exit 0 when every check passes (run by ctest) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rocke.h"
#include "internal.h"
#include "check.h"

/* A literal and its length (the literals may hold NUL bytes). */
#define S(lit) lit, sizeof(lit) - 1

/* CHECK with the case id and what came out, so a failure says which case and why. */
#define CHECK_CASE(cond, id, code, message)                                                 \
    do {                                                                                    \
        if (!(cond)) {                                                                      \
            fprintf(stderr, "%s:%d: case %s: CHECK failed: %s\n    got: %s: %s\n", __FILE__, \
                    __LINE__, (id), #cond, (code) ? (code) : "(none)",                      \
                    (message) ? (message) : "");                                            \
            check_failures++;                                                               \
        }                                                                                   \
    } while (0)

#define MAX32 2147483647LL
#define MIN32 (-2147483647LL - 1)

/* 14 lines; the next line is 15 (BASE in the Python twin). */
#define BASE                                                                                 \
    "[target]\narch = \"gfx950\"\n\n[problem]\nN = 8\nHi = 56\nWi = 56\nC = 64\nK = 64\n"   \
    "Y = 3\nX = 3\n\n[spec]\nfamily = \"wgrad\"\n"
#define INVALID "invalid value (expected an integer, true, false or a \"string\")"

/* ==== §2 step 5: encoding ==== */

typedef struct enc_case {
    const char *id;
    const char *data;
    size_t len;
    const char *message; /* NULL: clean */
} enc_case;

static const enc_case enc_cases[] = {
    {"empty", S(""), NULL},
    {"ascii", S("[target]\narch = \"gfx950\"\n\n[problem]\nN = 8\nHi = 56\nWi = 56\n"
        "C = 64\nK = 64\nY = 3\nX = 3\n\n[spec]\nfamily = \"wgrad\"\n"), NULL},
    {"two-byte", S("# \303\251\n"), NULL},
    {"three-byte", S("# \342\202\254 \357\273\277\n"), NULL},
    {"four-byte", S("# \360\237\230\200\n"), NULL},
    {"max-code-point", S("# \364\217\277\277\n"), NULL},
    {"last-before-surrogates", S("# \355\237\277\n"), NULL},
    {"first-after-surrogates", S("# \356\200\200\n"), NULL},
    {"control-chars-are-not-encoding", S("\001\177\r\013"), NULL},
    {"nul-line-1", S("\000"), "line 1: NUL byte"},
    {"nul-line-5", S("[target]\narch = \"gfx950\"\n\n[problem]\nN = 8\000\nHi = 56\n"
        "Wi = 56\nC = 64\nK = 64\nY = 3\nX = 3\n\n[spec]\nfamily = \"wgrad\"\n"), "line 5: NUL byte"},
    {"ff", S("a\nb\n\377"), "line 3: invalid UTF-8"},
    {"fe", S("\376"), "line 1: invalid UTF-8"},
    {"latin1", S("# caf\351\n"), "line 1: invalid UTF-8"},
    {"lone-continuation", S("\n\200"), "line 2: invalid UTF-8"},
    {"overlong-c0", S("\300\257"), "line 1: invalid UTF-8"},
    {"overlong-c1", S("\301\277"), "line 1: invalid UTF-8"},
    {"overlong-e0", S("\340\200\257"), "line 1: invalid UTF-8"},
    {"overlong-e0-9f", S("\340\237\277"), "line 1: invalid UTF-8"},
    {"overlong-f0", S("\360\200\200\257"), "line 1: invalid UTF-8"},
    {"overlong-f0-8f", S("\360\217\277\277"), "line 1: invalid UTF-8"},
    {"surrogate-high", S("\355\240\200"), "line 1: invalid UTF-8"},
    {"surrogate-low", S("\355\277\277"), "line 1: invalid UTF-8"},
    {"above-10ffff", S("\364\220\200\200"), "line 1: invalid UTF-8"},
    {"f5", S("\365\200\200\200"), "line 1: invalid UTF-8"},
    {"truncated-2", S("\n\n\303"), "line 3: invalid UTF-8"},
    {"truncated-3", S("\342\202"), "line 1: invalid UTF-8"},
    {"truncated-4", S("\360\237\230"), "line 1: invalid UTF-8"},
    {"bad-continuation", S("\342A\202"), "line 1: invalid UTF-8"},
    {"newline-inside-sequence", S("\342\n\202"), "line 1: invalid UTF-8"},
    {"nul-before-bad", S("\n\000\n\377"), "line 2: NUL byte"},
    {"bad-before-nul", S("\n\377\n\000"), "line 2: invalid UTF-8"},
};

static void test_encoding(void)
{
    size_t i;
    for (i = 0; i < sizeof enc_cases / sizeof enc_cases[0]; i++) {
        const enc_case *c = &enc_cases[i];
        rk_arena arena;
        rk_error err;
        int rc;
        rk_arena_init(&arena);
        rk_error_init(&err, &arena);
        rc = rk_config_check_encoding(c->data, c->len, &err);
        if (!c->message) {
            CHECK_CASE(rc == 0 && err.code == NULL, c->id, err.code, err.message);
        } else {
            CHECK_CASE(rc == -1 && err.code && strcmp(err.code, "E_ENCODING") == 0 && !err.internal, c->id,
                       err.code, err.message);
            CHECK_CASE(err.code && strcmp(err.message, c->message) == 0, c->id, err.code, err.message);
        }
        rk_arena_free(&arena);
    }
}

/* ==== §3: parse, good input ==== */

typedef struct want_entry {
    int table;
    const char *key;
    int line;
    rk_value_kind kind;
    long long i;
    const char *s;
    size_t s_len;
} want_entry;

typedef struct parse_good_case {
    const char *id;
    const char *text;
    size_t len;
    int n;
    want_entry want[9];
} parse_good_case;

static const parse_good_case parse_good_cases[] = {
    {"empty", S(""), 0,
     {{0, NULL, 0, RK_VALUE_INT, 0, NULL, 0}}},
    {"only-comments", S("# one\n  # two\n\t# three"), 0,
     {{0, NULL, 0, RK_VALUE_INT, 0, NULL, 0}}},
    {"blank-lines", S("\n\n \t \n"), 0,
     {{0, NULL, 0, RK_VALUE_INT, 0, NULL, 0}}},
    {"every-table", S("[parity]\nexpect = \"emit\"\n[target]\narch = \"gfx942\"\n[problem]\n"
        "N = 1\n[spec]\nfamily = \"fwd\"\n"), 4,
     {{RK_TABLE_PARITY, "expect", 2, RK_VALUE_STR, 0, S("emit")},
      {RK_TABLE_TARGET, "arch", 4, RK_VALUE_STR, 0, S("gfx942")},
      {RK_TABLE_PROBLEM, "N", 6, RK_VALUE_INT, 1, NULL, 0},
      {RK_TABLE_SPEC, "family", 8, RK_VALUE_STR, 0, S("fwd")}}},
    {"comments-after-values", S("[spec] # the spec\nrelu = true # on\nname = \"a#b\"  # not a comment inside\n"
        "split_k = 4#glued\n"), 3,
     {{RK_TABLE_SPEC, "relu", 2, RK_VALUE_BOOL, 1, NULL, 0},
      {RK_TABLE_SPEC, "name", 3, RK_VALUE_STR, 0, S("a#b")},
      {RK_TABLE_SPEC, "split_k", 4, RK_VALUE_INT, 4, NULL, 0}}},
    {"whitespace-everywhere", S("\t[ spec ]\t\n   tile_m\t=\t64   \nbias=3\n"), 2,
     {{RK_TABLE_SPEC, "tile_m", 2, RK_VALUE_INT, 64, NULL, 0},
      {RK_TABLE_SPEC, "bias", 3, RK_VALUE_INT, 3, NULL, 0}}},
    {"escapes", S("[parity]\na = \"q\\\"q\"\nb = \"back\\\\slash\"\nc = \"n\\nl\"\n"
        "d = \"t\\tt\"\ne = \"\"\nf = \"\\\\\"\n"), 6,
     {{RK_TABLE_PARITY, "a", 2, RK_VALUE_STR, 0, S("q\"q")},
      {RK_TABLE_PARITY, "b", 3, RK_VALUE_STR, 0, S("back\\slash")},
      {RK_TABLE_PARITY, "c", 4, RK_VALUE_STR, 0, S("n\nl")},
      {RK_TABLE_PARITY, "d", 5, RK_VALUE_STR, 0, S("t\tt")},
      {RK_TABLE_PARITY, "e", 6, RK_VALUE_STR, 0, S("")},
      {RK_TABLE_PARITY, "f", 7, RK_VALUE_STR, 0, S("\\")}}},
    {"raw-tab-and-unicode-in-string", S("[parity]\nd = \"a\tb \303\251 \342\200\250 \357\273\277\"\n"), 1,
     {{RK_TABLE_PARITY, "d", 2, RK_VALUE_STR, 0, S("a\tb \303\251 \342\200\250 \357\273\277")}}},
    {"signs-and-limits", S("[spec]\na = 0\nb = -0\nc = +0\nd = +7\ne = -7\nf = 2147483647\n"
        "g = -2147483648\nh = +2147483647\n"), 8,
     {{RK_TABLE_SPEC, "a", 2, RK_VALUE_INT, 0, NULL, 0},
      {RK_TABLE_SPEC, "b", 3, RK_VALUE_INT, 0, NULL, 0},
      {RK_TABLE_SPEC, "c", 4, RK_VALUE_INT, 0, NULL, 0},
      {RK_TABLE_SPEC, "d", 5, RK_VALUE_INT, 7, NULL, 0},
      {RK_TABLE_SPEC, "e", 6, RK_VALUE_INT, -7, NULL, 0},
      {RK_TABLE_SPEC, "f", 7, RK_VALUE_INT, 2147483647LL, NULL, 0},
      {RK_TABLE_SPEC, "g", 8, RK_VALUE_INT, -2147483648LL, NULL, 0},
      {RK_TABLE_SPEC, "h", 9, RK_VALUE_INT, 2147483647LL, NULL, 0}}},
    {"booleans", S("[spec]\nrelu = true\nunroll_k = false\n"), 2,
     {{RK_TABLE_SPEC, "relu", 2, RK_VALUE_BOOL, 1, NULL, 0},
      {RK_TABLE_SPEC, "unroll_k", 3, RK_VALUE_BOOL, 0, NULL, 0}}},
    {"crlf", S("[target]\r\narch = \"gfx950\"\r\n\r\n[problem]\r\nN = 8\r\n"), 2,
     {{RK_TABLE_TARGET, "arch", 2, RK_VALUE_STR, 0, S("gfx950")},
      {RK_TABLE_PROBLEM, "N", 5, RK_VALUE_INT, 8, NULL, 0}}},
    {"mixed-lf-crlf", S("[target]\narch = \"gfx950\"\r\n"), 1,
     {{RK_TABLE_TARGET, "arch", 2, RK_VALUE_STR, 0, S("gfx950")}}},
    {"no-final-newline", S("[target]\narch = \"gfx950\""), 1,
     {{RK_TABLE_TARGET, "arch", 2, RK_VALUE_STR, 0, S("gfx950")}}},
    {"bare-name-chars", S("[parity]\nA-b_9 = 1\n-- = 2\n_ = 3\n0 = 4\n"), 4,
     {{RK_TABLE_PARITY, "A-b_9", 2, RK_VALUE_INT, 1, NULL, 0},
      {RK_TABLE_PARITY, "--", 3, RK_VALUE_INT, 2, NULL, 0},
      {RK_TABLE_PARITY, "_", 4, RK_VALUE_INT, 3, NULL, 0},
      {RK_TABLE_PARITY, "0", 5, RK_VALUE_INT, 4, NULL, 0}}},
    {"name-64-chars", S("[parity]\nkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk = 1\n"), 1,
     {{RK_TABLE_PARITY, "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"
                        "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk", 2, RK_VALUE_INT, 1, NULL, 0}}},
    {"same-key-other-table", S("[parity]\nN = 1\n[problem]\nN = 2\n"), 2,
     {{RK_TABLE_PARITY, "N", 2, RK_VALUE_INT, 1, NULL, 0},
      {RK_TABLE_PROBLEM, "N", 4, RK_VALUE_INT, 2, NULL, 0}}},
    {"unchecked-parity-values", S("[parity]\nexpect = \"reject:X\"\nisa = \"v_mfma\"\nanything = true\n"), 3,
     {{RK_TABLE_PARITY, "expect", 2, RK_VALUE_STR, 0, S("reject:X")},
      {RK_TABLE_PARITY, "isa", 3, RK_VALUE_STR, 0, S("v_mfma")},
      {RK_TABLE_PARITY, "anything", 4, RK_VALUE_BOOL, 1, NULL, 0}}},
};

/* Parses text into cfg with a fresh arena (the caller frees it). */
static int parse(const char *text, size_t len, rk_arena *arena, rk_config *cfg, rk_error *err)
{
    rk_arena_init(arena);
    rk_error_init(err, arena);
    return rk_config_parse(text, len, arena, cfg, err);
}

static void test_parse_good(void)
{
    size_t i;
    for (i = 0; i < sizeof parse_good_cases / sizeof parse_good_cases[0]; i++) {
        const parse_good_case *c = &parse_good_cases[i];
        rk_arena arena;
        rk_config cfg;
        rk_error err;
        int k;
        CHECK_CASE(parse(c->text, c->len, &arena, &cfg, &err) == 0, c->id, err.code, err.message);
        CHECK_CASE(err.code == NULL && cfg.n_entries == c->n, c->id, err.code, err.message);
        for (k = 0; k < c->n && k < cfg.n_entries; k++) {
            const rk_entry *e = &cfg.entries[k];
            const want_entry *w = &c->want[k];
            CHECK_CASE(e->table == w->table && strcmp(e->key, w->key) == 0 && e->line == w->line
                           && e->value.kind == w->kind,
                       c->id, "entry", e->key);
            if (w->kind == RK_VALUE_STR)
                CHECK_CASE(e->value.s_len == w->s_len && memcmp(e->value.s, w->s, w->s_len) == 0
                               && e->value.s[w->s_len] == '\0',
                           c->id, "string", e->value.s);
            else
                CHECK_CASE(e->value.i == w->i, c->id, "value", e->key);
        }
        rk_arena_free(&arena);
    }
}

static void test_parse_table_lines(void)
{
    static const char text[] = "# c\n[spec]\n\n[target]\n[parity]\n";
    rk_arena arena;
    rk_config cfg;
    rk_error err;
    CHECK(parse(S(text), &arena, &cfg, &err) == 0);
    CHECK(cfg.table_line[RK_TABLE_SPEC] == 2 && cfg.table_line[RK_TABLE_TARGET] == 4);
    CHECK(cfg.table_line[RK_TABLE_PARITY] == 5 && cfg.table_line[RK_TABLE_PROBLEM] == 0);
    CHECK(cfg.n_entries == 0);
    rk_arena_free(&arena);
    CHECK(parse(S(BASE), &arena, &cfg, &err) == 0);
    CHECK(cfg.table_line[RK_TABLE_TARGET] == 1 && cfg.table_line[RK_TABLE_PROBLEM] == 4
          && cfg.table_line[RK_TABLE_SPEC] == 13 && cfg.table_line[RK_TABLE_PARITY] == 0);
    CHECK(cfg.n_entries == 9 && cfg.entries[8].line == 14 && strcmp(cfg.entries[8].key, "family") == 0);
    rk_arena_free(&arena);
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

/* ==== §3: parse, every error message ==== */

typedef struct bad_case {
    const char *id;
    const char *text;
    size_t len;
    const char *code;
    const char *message;
} bad_case;

static const bad_case parse_bad_cases[] = {
    {"control-01",
     S("[spec]\na = 1\001\n"),
     "E_SYNTAX", "line 2: control character 0x01"},
    {"control-1f",
     S("\037"),
     "E_SYNTAX", "line 1: control character 0x1F"},
    {"control-7f",
     S("# \177"),
     "E_SYNTAX", "line 1: control character 0x7F"},
    {"control-in-comment",
     S("# ok\n# \010\n"),
     "E_SYNTAX", "line 2: control character 0x08"},
    {"control-in-string",
     S("[spec]\nname = \"a\033b\"\n"),
     "E_SYNTAX", "line 2: control character 0x1B"},
    {"control-first-of-two",
     S("\002\001"),
     "E_SYNTAX", "line 1: control character 0x02"},
    {"control-before-other-errors",
     S("[bogus] \003"),
     "E_SYNTAX", "line 1: control character 0x03"},
    {"vertical-tab",
     S("[spec]\013\n"),
     "E_SYNTAX", "line 1: control character 0x0B"},
    {"form-feed",
     S("\014\n"),
     "E_SYNTAX", "line 1: control character 0x0C"},
    {"lone-cr-mid-line",
     S("[spec]\ra = 1\n"),
     "E_SYNTAX", "line 1: control character 0x0D"},
    {"lone-cr-at-eof",
     S("[spec]\n\r"),
     "E_SYNTAX", "line 2: control character 0x0D"},
    {"lone-cr-eof-after-value",
     S("[spec]\na = 1\r"),
     "E_SYNTAX", "line 2: control character 0x0D"},
    {"cr-cr-lf",
     S("[spec]\r\r\n"),
     "E_SYNTAX", "line 1: control character 0x0D"},
    {"header-empty",
     S("[]"),
     "E_SYNTAX", "line 1: expected a table name after '['"},
    {"header-blank",
     S("[  ]"),
     "E_SYNTAX", "line 1: expected a table name after '['"},
    {"header-array-of-tables",
     S("[[spec]]"),
     "E_SYNTAX", "line 1: expected a table name after '['"},
    {"header-quoted",
     S("[\"spec\"]"),
     "E_SYNTAX", "line 1: expected a table name after '['"},
    {"header-bom-name",
     S("[\357\273\277spec]"),
     "E_SYNTAX", "line 1: expected a table name after '['"},
    {"header-unclosed",
     S("[spec"),
     "E_SYNTAX", "line 1: expected ']' after table name 'spec'"},
    {"header-unclosed-comment",
     S("[spec # x"),
     "E_SYNTAX", "line 1: expected ']' after table name 'spec'"},
    {"header-space-in-name",
     S("[sp ec]"),
     "E_SYNTAX", "line 1: expected ']' after table name 'sp'"},
    {"header-dotted",
     S("[spec.a]"),
     "E_SYNTAX", "line 1: expected ']' after table name 'spec'"},
    {"header-trailing-text",
     S("[spec] x"),
     "E_SYNTAX", "line 1: unexpected text after table header [spec]"},
    {"header-double-close",
     S("[spec]]"),
     "E_SYNTAX", "line 1: unexpected text after table header [spec]"},
    {"header-name-too-long",
     S("[kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk]"),
     "E_SYNTAX", "line 1: name longer than 64 characters"},
    {"header-long-before-close",
     S("[kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"),
     "E_SYNTAX", "line 1: name longer than 64 characters"},
    {"unknown-table",
     S("[specs]"),
     "E_UNKNOWN_TABLE", "line 1: unknown table [specs] (expected [parity], [target], [problem] or [spec])"},
    {"unknown-table-case",
     S("\n[Spec]"),
     "E_UNKNOWN_TABLE", "line 2: unknown table [Spec] (expected [parity], [target], [problem] or [spec])"},
    {"duplicate-table",
     S("[spec]\n\n[target]\n[spec]\n"),
     "E_DUPLICATE_KEY", "line 4: table [spec] is defined twice (first on line 1)"},
    {"duplicate-parity",
     S("[parity]\n[parity]\n"),
     "E_DUPLICATE_KEY", "line 2: table [parity] is defined twice (first on line 1)"},
    {"no-key",
     S("[spec]\n= 1\n"),
     "E_SYNTAX", "line 2: expected a key, a table header or a comment"},
    {"quoted-key",
     S("[spec]\n\"a\" = 1\n"),
     "E_SYNTAX", "line 2: expected a key, a table header or a comment"},
    {"literal-key",
     S("[spec]\n'a' = 1\n"),
     "E_SYNTAX", "line 2: expected a key, a table header or a comment"},
    {"non-ascii-key",
     S("[spec]\n\303\251 = 1\n"),
     "E_SYNTAX", "line 2: expected a key, a table header or a comment"},
    {"bom",
     S("\357\273\277[spec]\n"),
     "E_SYNTAX", "line 1: expected a key, a table header or a comment"},
    {"stray-bracket",
     S("[spec]\n]\n"),
     "E_SYNTAX", "line 2: expected a key, a table header or a comment"},
    {"key-too-long",
     S("[spec]\nkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk = 1\n"),
     "E_SYNTAX", "line 2: name longer than 64 characters"},
    {"key-too-long-no-equals",
     S("kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"),
     "E_SYNTAX", "line 1: name longer than 64 characters"},
    {"missing-equals",
     S("[spec]\na 1\n"),
     "E_SYNTAX", "line 2: expected '=' after key 'a'"},
    {"key-alone",
     S("[spec]\na"),
     "E_SYNTAX", "line 2: expected '=' after key 'a'"},
    {"colon",
     S("[spec]\na: 1\n"),
     "E_SYNTAX", "line 2: expected '=' after key 'a'"},
    {"dotted-key",
     S("[spec]\na.b = 1\n"),
     "E_SYNTAX", "line 2: expected '=' after key 'a'"},
    {"space-in-key",
     S("[spec]\nsplit k = 1\n"),
     "E_SYNTAX", "line 2: expected '=' after key 'split'"},
    {"missing-value",
     S("[spec]\na =\n"),
     "E_SYNTAX", "line 2: key 'a': missing value"},
    {"missing-value-ws",
     S("[spec]\na = \t \n"),
     "E_SYNTAX", "line 2: key 'a': missing value"},
    {"missing-value-comment",
     S("[spec]\na = # c\n"),
     "E_SYNTAX", "line 2: key 'a': missing value"},
    {"unterminated",
     S("[spec]\na = \"abc\n"),
     "E_SYNTAX", "line 2: key 'a': unterminated string"},
    {"unterminated-escaped-quote",
     S("[spec]\na = \"abc\\\"\n"),
     "E_SYNTAX", "line 2: key 'a': unterminated string"},
    {"unterminated-backslash-eol",
     S("[spec]\na = \"abc\\\n"),
     "E_SYNTAX", "line 2: key 'a': unterminated string"},
    {"unterminated-at-eof",
     S("[spec]\na = \""),
     "E_SYNTAX", "line 2: key 'a': unterminated string"},
    {"escape-x",
     S("[spec]\na = \"\\x41\"\n"),
     "E_SYNTAX", "line 2: key 'a': unsupported escape in string"},
    {"escape-u",
     S("[spec]\na = \"\\u0041\"\n"),
     "E_SYNTAX", "line 2: key 'a': unsupported escape in string"},
    {"escape-r",
     S("[spec]\na = \"\\r\"\n"),
     "E_SYNTAX", "line 2: key 'a': unsupported escape in string"},
    {"escape-space",
     S("[spec]\na = \"\\ \"\n"),
     "E_SYNTAX", "line 2: key 'a': unsupported escape in string"},
    {"escape-non-ascii",
     S("[spec]\na = \"\\\303\251\"\n"),
     "E_SYNTAX", "line 2: key 'a': unsupported escape in string"},
    {"escape-before-unterminated",
     S("[spec]\na = \"\\q"),
     "E_SYNTAX", "line 2: key 'a': unsupported escape in string"},
    {"string-trailing-text",
     S("[spec]\na = \"x\" y\n"),
     "E_SYNTAX", "line 2: key 'a': unexpected text after the value"},
    {"string-glued-text",
     S("[spec]\na = \"x\"y\n"),
     "E_SYNTAX", "line 2: key 'a': unexpected text after the value"},
    {"multi-line-basic",
     S("[spec]\na = \"\"\"x\"\"\"\n"),
     "E_SYNTAX", "line 2: key 'a': unexpected text after the value"},
    {"multi-line-open",
     S("[spec]\na = \"\"\"\nx\n\"\"\"\n"),
     "E_SYNTAX", "line 2: key 'a': unexpected text after the value"},
    {"literal-string",
     S("[spec]\na = 'x'\n"),
     "E_SYNTAX", "line 2: key 'a': invalid value (expected an integer, true, false or a \"string\")"},
    {"multi-line-literal",
     S("[spec]\na = '''x'''\n"),
     "E_SYNTAX", "line 2: key 'a': invalid value (expected an integer, true, false or a \"string\")"},
    {"float",
     S("[spec]\na = 1.5\n"),
     "E_SYNTAX", "line 2: key 'a': invalid value (expected an integer, true, false or a \"string\")"},
    {"float-leading-dot",
     S("[spec]\na = .5\n"),
     "E_SYNTAX", "line 2: key 'a': invalid value (expected an integer, true, false or a \"string\")"},
    {"exponent",
     S("[spec]\na = 1e3\n"),
     "E_SYNTAX", "line 2: key 'a': invalid value (expected an integer, true, false or a \"string\")"},
    {"inf",
     S("[spec]\na = inf\n"),
     "E_SYNTAX", "line 2: key 'a': invalid value (expected an integer, true, false or a \"string\")"},
    {"nan",
     S("[spec]\na = -nan\n"),
     "E_SYNTAX", "line 2: key 'a': invalid value (expected an integer, true, false or a \"string\")"},
    {"hex",
     S("[spec]\na = 0x10\n"),
     "E_SYNTAX", "line 2: key 'a': invalid value (expected an integer, true, false or a \"string\")"},
    {"octal",
     S("[spec]\na = 0o17\n"),
     "E_SYNTAX", "line 2: key 'a': invalid value (expected an integer, true, false or a \"string\")"},
    {"binary",
     S("[spec]\na = 0b1\n"),
     "E_SYNTAX", "line 2: key 'a': invalid value (expected an integer, true, false or a \"string\")"},
    {"underscores",
     S("[spec]\na = 1_000\n"),
     "E_SYNTAX", "line 2: key 'a': invalid value (expected an integer, true, false or a \"string\")"},
    {"leading-zero",
     S("[spec]\na = 01\n"),
     "E_SYNTAX", "line 2: key 'a': invalid value (expected an integer, true, false or a \"string\")"},
    {"leading-zeros-negative",
     S("[spec]\na = -007\n"),
     "E_SYNTAX", "line 2: key 'a': invalid value (expected an integer, true, false or a \"string\")"},
    {"sign-only",
     S("[spec]\na = +\n"),
     "E_SYNTAX", "line 2: key 'a': invalid value (expected an integer, true, false or a \"string\")"},
    {"double-sign",
     S("[spec]\na = +-1\n"),
     "E_SYNTAX", "line 2: key 'a': invalid value (expected an integer, true, false or a \"string\")"},
    {"unicode-digit",
     S("[spec]\na = \331\241\n"),
     "E_SYNTAX", "line 2: key 'a': invalid value (expected an integer, true, false or a \"string\")"},
    {"fullwidth-digit",
     S("[spec]\na = \357\274\221\n"),
     "E_SYNTAX", "line 2: key 'a': invalid value (expected an integer, true, false or a \"string\")"},
    {"capital-true",
     S("[spec]\na = True\n"),
     "E_SYNTAX", "line 2: key 'a': invalid value (expected an integer, true, false or a \"string\")"},
    {"yes",
     S("[spec]\na = yes\n"),
     "E_SYNTAX", "line 2: key 'a': invalid value (expected an integer, true, false or a \"string\")"},
    {"array",
     S("[spec]\na = [1, 2]\n"),
     "E_SYNTAX", "line 2: key 'a': invalid value (expected an integer, true, false or a \"string\")"},
    {"empty-array",
     S("[spec]\na = []\n"),
     "E_SYNTAX", "line 2: key 'a': invalid value (expected an integer, true, false or a \"string\")"},
    {"inline-table",
     S("[spec]\na = { b = 1 }\n"),
     "E_SYNTAX", "line 2: key 'a': invalid value (expected an integer, true, false or a \"string\")"},
    {"date",
     S("[spec]\na = 1979-05-27\n"),
     "E_SYNTAX", "line 2: key 'a': invalid value (expected an integer, true, false or a \"string\")"},
    {"number-then-quote",
     S("[spec]\na = 1\"x\"\n"),
     "E_SYNTAX", "line 2: key 'a': invalid value (expected an integer, true, false or a \"string\")"},
    {"double-equals",
     S("[spec]\na == 1\n"),
     "E_SYNTAX", "line 2: key 'a': invalid value (expected an integer, true, false or a \"string\")"},
    {"trailing-number",
     S("[spec]\na = 1 2\n"),
     "E_SYNTAX", "line 2: key 'a': unexpected text after the value"},
    {"trailing-word",
     S("[spec]\na = true false\n"),
     "E_SYNTAX", "line 2: key 'a': unexpected text after the value"},
    {"u2028-is-not-whitespace",
     S("[spec]\na = 1\342\200\250\n"),
     "E_SYNTAX", "line 2: key 'a': invalid value (expected an integer, true, false or a \"string\")"},
    {"nel-is-not-whitespace",
     S("[spec]\na = 1\302\205\n"),
     "E_SYNTAX", "line 2: key 'a': invalid value (expected an integer, true, false or a \"string\")"},
    {"int32-max-plus-1",
     S("[spec]\na = 2147483648\n"),
     "E_RANGE", "line 2: key 'a': integer is outside the 32-bit range"},
    {"int32-min-minus-1",
     S("[spec]\na = -2147483649\n"),
     "E_RANGE", "line 2: key 'a': integer is outside the 32-bit range"},
    {"int32-plus-sign-over",
     S("[spec]\na = +2147483648\n"),
     "E_RANGE", "line 2: key 'a': integer is outside the 32-bit range"},
    {"ten-digits-over",
     S("[spec]\na = 9999999999\n"),
     "E_RANGE", "line 2: key 'a': integer is outside the 32-bit range"},
    {"eleven-digits",
     S("[spec]\na = 10000000000\n"),
     "E_RANGE", "line 2: key 'a': integer is outside the 32-bit range"},
    {"forty-digits",
     S("[spec]\na = 9999999999999999999999999999999999999999\n"),
     "E_RANGE", "line 2: key 'a': integer is outside the 32-bit range"},
    {"forty-digits-negative",
     S("[spec]\na = -1111111111111111111111111111111111111111\n"),
     "E_RANGE", "line 2: key 'a': integer is outside the 32-bit range"},
    {"range-before-trailing-text",
     S("[spec]\na = 2147483648 x\n"),
     "E_RANGE", "line 2: key 'a': integer is outside the 32-bit range"},
    {"outside-any-table",
     S("a = 1\n[spec]\n"),
     "E_UNKNOWN_KEY", "line 1: key 'a' is outside any table"},
    {"outside-after-comment",
     S("# c\n\nN = 8\n"),
     "E_UNKNOWN_KEY", "line 3: key 'N' is outside any table"},
    {"syntax-before-outside",
     S("a = 1.5\n"),
     "E_SYNTAX", "line 1: key 'a': invalid value (expected an integer, true, false or a \"string\")"},
    {"duplicate-key",
     S("[problem]\nN = 8\nHi = 1\nN = 8\n"),
     "E_DUPLICATE_KEY", "line 4: key 'N' in [problem] is set twice (first on line 2)"},
    {"duplicate-key-other-type",
     S("[spec]\nrelu = true\nrelu = \"x\"\n"),
     "E_DUPLICATE_KEY", "line 3: key 'relu' in [spec] is set twice (first on line 2)"},
    {"duplicate-key-parity",
     S("[parity]\nx = 1\nx = 1\n"),
     "E_DUPLICATE_KEY", "line 3: key 'x' in [parity] is set twice (first on line 2)"},
    {"first-error-wins",
     S("[spec]\na = 1.5\n[bogus]\n"),
     "E_SYNTAX", "line 2: key 'a': invalid value (expected an integer, true, false or a \"string\")"},
    {"error-on-last-line-without-newline",
     S("[spec]\n\n\na = "),
     "E_SYNTAX", "line 4: key 'a': missing value"},
    {"crlf-line-numbers",
     S("[spec]\r\n\r\na = 1.5\r\n"),
     "E_SYNTAX", "line 3: key 'a': invalid value (expected an integer, true, false or a \"string\")"},
};

static void test_parse_rejected(void)
{
    size_t i;
    for (i = 0; i < sizeof parse_bad_cases / sizeof parse_bad_cases[0]; i++) {
        const bad_case *c = &parse_bad_cases[i];
        rk_arena arena;
        rk_config cfg;
        rk_error err;
        int rc = parse(c->text, c->len, &arena, &cfg, &err);
        CHECK_CASE(rc == -1 && err.code && strcmp(err.code, c->code) == 0 && !err.internal, c->id, err.code,
                   err.message);
        CHECK_CASE(err.code && strcmp(err.message, c->message) == 0, c->id, err.code, err.message);
        rk_arena_free(&arena);
    }
}

/* Inputs too long for a C99 string literal (4095 bytes), built at run time. */
static void test_parse_long_inputs(void)
{
    static const char head[] = "[spec]\na = ";
    size_t n = 5000, len = sizeof head - 1 + n + 1, k;
    char *text = malloc(len);
    rk_arena arena;
    rk_config cfg;
    rk_error err;
    CHECK(text != NULL);
    if (!text)
        return;
    memcpy(text, head, sizeof head - 1);
    for (k = 0; k < n; k++)
        text[sizeof head - 1 + k] = '7';
    text[len - 1] = '\n';
    CHECK(parse(text, len, &arena, &cfg, &err) == -1);
    CHECK(err.code && strcmp(err.code, "E_RANGE") == 0
          && strcmp(err.message, "line 2: key 'a': integer is outside the 32-bit range") == 0);
    rk_arena_free(&arena);
    /* a 5000-byte string value parses and keeps its length */
    text[sizeof head - 1] = '"';
    text[len - 2] = '"';
    CHECK(parse(text, len, &arena, &cfg, &err) == 0);
    CHECK(cfg.n_entries == 1 && cfg.entries[0].value.kind == RK_VALUE_STR && cfg.entries[0].value.s_len == n - 2);
    rk_arena_free(&arena);
    free(text);
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

#define PROB(n, lo) {RK_TABLE_PROBLEM, n, T_INT, lo, MAX32, "FWD"}
#define SPEC_I(n, lo, hi, f) {RK_TABLE_SPEC, n, T_INT, lo, hi, f}
#define SPEC_T(n, t, f) {RK_TABLE_SPEC, n, t, 0, 0, f}
static const contract_key contract_keys[] = {
    {RK_TABLE_TARGET, "arch", T_ENUM, 0, 0, "FWD"},
    PROB("N", 1), PROB("Hi", 1), PROB("Wi", 1), PROB("C", 1), PROB("K", 1), PROB("Y", 1), PROB("X", 1),
    PROB("sH", 1), PROB("sW", 1), PROB("pH", 0), PROB("pW", 0), PROB("dH", 1), PROB("dW", 1),
    PROB("groups", MIN32), PROB("Di", 1), PROB("Z", 1), PROB("sD", 1), PROB("pD", 0), PROB("dD", 1),
    SPEC_T("family", T_ENUM, "FWD"), SPEC_T("name", T_NAME, "FWD"), SPEC_T("dtype_a", T_STR, "FWD"),
    SPEC_T("dtype_b", T_STR, "FWD"), SPEC_T("dtype_d", T_STR, "FWD"),
    SPEC_I("tile_m", 1, 65536, "FWD"), SPEC_I("tile_n", 1, 65536, "FWD"), SPEC_I("tile_k", 1, 65536, "FWD"),
    SPEC_I("warp_m", 1, 65536, "FWD"), SPEC_I("warp_n", 1, 65536, "FWD"),
    SPEC_I("warp_tile_m", 1, 65536, "FWD"), SPEC_I("warp_tile_n", 1, 65536, "FWD"),
    SPEC_I("warp_tile_k", 1, 65536, "FWD"), SPEC_I("wave_size", 1, 65536, "FWD"),
    SPEC_T("pipeline", T_STR, "FWD"), SPEC_T("epilogue", T_STR, "FWD"),
    SPEC_T("async_dma", T_BOOL, "FWD"), SPEC_T("unroll_k", T_BOOL, "FWD"),
    SPEC_I("lds_k_pad", 0, 65536, "FWD"), SPEC_I("lds_layout_pad", 0, 65536, "FWD"),
    SPEC_I("lds_layout_xor", 0, 65536, "FWD"),
    SPEC_I("vector_size_a", 1, 65536, "FWD"), SPEC_I("vector_size_b", 1, 65536, "FWD"),
    SPEC_I("vector_size_c", 1, 65536, "FWD"),
    SPEC_T("chiplet_swizzle", T_BOOL, "FWD"), SPEC_I("chiplet_wgm", 1, 65536, "FWD"),
    SPEC_I("chiplet_num_xcds", 1, 65536, "FWD"), SPEC_I("chiplet_chunk_size", 1, 65536, "FWD"),
    SPEC_I("waves_per_eu", 1, 65536, "FWD"), SPEC_I("bias", MIN32, MAX32, "FWD"),
    SPEC_I("scale", MIN32, MAX32, "FWD"), SPEC_T("relu", T_BOOL, "FWD"),
    SPEC_I("clamp_min", MIN32, MAX32, "FWD"), SPEC_I("clamp_max", MIN32, MAX32, "FWD"),
    SPEC_T("lds_k_outer", T_TRI, "WD"), SPEC_I("split_k", MIN32, MAX32, "WD"),
    SPEC_T("two_stage", T_BOOL, "W"), SPEC_T("force_deterministic", T_BOOL, "W"),
    SPEC_I("group_merge", MIN32, MAX32, "W"), SPEC_I("num_load_waves", 1, 65536, "D"),
    SPEC_T("cshuffle_no_alias", T_BOOL, "D"),
};
static const char *const table_names[RK_TABLE_COUNT] = {"parity", "target", "problem", "spec"};

/* BASE with `key = value` in the key's table (the family chosen so the key applies): the
 * key's line replaced when BASE has it, else the key inserted right after the header. */
static void config_with(const contract_key *key, const char *value, rk_buf *out, int *line)
{
    static const char *const lines[14] = {
        "[target]", "arch = \"gfx950\"", "", "[problem]", "N = 8", "Hi = 56", "Wi = 56", "C = 64",
        "K = 64", "Y = 3", "X = 3", "", "[spec]", "family = \"wgrad\""};
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

static void test_int_key_bounds(void)
{
    size_t i;
    for (i = 0; i < sizeof contract_keys / sizeof contract_keys[0]; i++) {
        const contract_key *key = &contract_keys[i];
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
                snprintf(want, sizeof want, "line %d: key '%s' in [%s] must be between %lld and %lld, not %lld",
                         line, key->name, table_names[key->table], key->lo, key->hi, values[v]);
                CHECK_CASE(rc == -1 && strcmp(err.code, "E_RANGE") == 0 && strcmp(err.message, want) == 0,
                           key->name, err.code, err.message);
            }
            rk_buf_free(&text);
        }
    }
}

static void test_every_key_rejects_every_wrong_type(void)
{
    static const char *const literals[3] = {"7", "true", "\"x\""};
    static const char *const kinds[3] = {"an integer", "a boolean", "a string"};
    size_t i;
    for (i = 0; i < sizeof contract_keys / sizeof contract_keys[0]; i++) {
        const contract_key *key = &contract_keys[i];
        const char *expected = key->type == T_INT ? "an integer" : key->type == T_BOOL ? "a boolean"
                               : key->type == T_TRI ? "true, false or \"auto\"" : "a string";
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
                CHECK_CASE(rc == -1 && strcmp(err.code, "E_TYPE") == 0 && strcmp(err.message, want) == 0,
                           key->name, err.code, err.message);
            }
            rk_buf_free(&text);
        }
    }
}

/* The C key table has exactly the contract's keys: every other name in each table is unknown. */
static void test_unknown_names_in_every_table(void)
{
    static const char *const names[] = {"arch", "N", "tile_m", "family", "split_k", "bogus", "Ho"};
    int t;
    size_t k, i;
    for (t = RK_TABLE_TARGET; t < RK_TABLE_COUNT; t++)
        for (k = 0; k < sizeof names / sizeof names[0]; k++) {
            int known = 0;
            rk_buf text;
            rk_fields fields;
            rk_error err;
            for (i = 0; i < sizeof contract_keys / sizeof contract_keys[0]; i++)
                if (contract_keys[i].table == t && strcmp(contract_keys[i].name, names[k]) == 0)
                    known = 1;
            rk_buf_init(&text);
            rk_buf_printf(&text, "[%s]\n%s = 1\n", table_names[t], names[k]);
            CHECK(check_schema_text(text.data, text.len, &fields, &err) == -1);
            if (known) {
                CHECK_CASE(strcmp(err.code, "E_UNKNOWN_KEY") != 0, names[k], err.code, err.message);
            } else {
                char want[128];
                snprintf(want, sizeof want, "line 2: unknown key '%s' in [%s]", names[k], table_names[t]);
                CHECK_CASE(strcmp(err.code, "E_UNKNOWN_KEY") == 0 && strcmp(err.message, want) == 0, names[k],
                           err.code, err.message);
            }
            rk_buf_free(&text);
        }
}

/* ==== §4: schema, good input ==== */

static void test_schema_base(void)
{
    rk_fields f;
    rk_error err;
    CHECK(check_schema_text(S(BASE), &f, &err) == 0);
    CHECK(f.family == RK_FAMILY_WGRAD);
    CHECK(f.f[RK_KEY_ARCH].set && strcmp(f.f[RK_KEY_ARCH].value.s, "gfx950") == 0 && f.f[RK_KEY_ARCH].line == 2);
    CHECK(f.f[RK_KEY_N].set && f.f[RK_KEY_N].value.i == 8 && f.f[RK_KEY_X].line == 11);
    CHECK(f.f[RK_KEY_FAMILY].line == 14 && !f.f[RK_KEY_SH].set && !f.f[RK_KEY_SPLIT_K].set);
}

static void test_schema_ignores_parity(void)
{
    static const char text[] = "[parity]\narch = 7\nN = \"x\"\nbogus = true\ntile_m = 0\n" BASE;
    rk_fields f;
    rk_error err;
    CHECK(check_schema_text(S(text), &f, &err) == 0);
    CHECK(strcmp(f.f[RK_KEY_ARCH].value.s, "gfx950") == 0 && f.f[RK_KEY_ARCH].line == 7);
    CHECK(!f.f[RK_KEY_TILE_M].set);
}

static void test_schema_every_arch_family_tri(void)
{
    static const char *const archs[] = {"gfx942", "gfx950", "gfx1151", "gfx1201", "gfx1250"};
    static const char *const families[] = {"fwd", "wgrad", "dgrad"};
    static const char *const tris[] = {"true", "false", "\"auto\""};
    size_t i;
    for (i = 0; i < 5; i++) {
        rk_buf b;
        rk_fields f;
        rk_error err;
        rk_buf_init(&b);
        rk_buf_printf(&b, "[target]\narch = \"%s\"\n[problem]\nN = 1\nHi = 1\nWi = 1\nC = 1\nK = 1\nY = 1\n"
                          "X = 1\n[spec]\nfamily = \"%s\"\n", archs[i], families[i % 3]);
        CHECK_CASE(check_schema_text(b.data, b.len, &f, &err) == 0, archs[i], err.code, err.message);
        CHECK(strcmp(f.f[RK_KEY_ARCH].value.s, archs[i]) == 0 && f.family == (int)(i % 3));
        rk_buf_free(&b);
    }
    for (i = 0; i < 3; i++) {
        rk_buf b;
        rk_fields f;
        rk_error err;
        rk_buf_init(&b);
        rk_buf_printf(&b, "%slds_k_outer = %s\n", BASE, tris[i]);
        CHECK_CASE(check_schema_text(b.data, b.len, &f, &err) == 0, tris[i], err.code, err.message);
        CHECK(f.f[RK_KEY_LDS_K_OUTER].value.kind == (i < 2 ? RK_VALUE_BOOL : RK_VALUE_STR));
        CHECK(i == 2 ? strcmp(f.f[RK_KEY_LDS_K_OUTER].value.s, "auto") == 0
                     : f.f[RK_KEY_LDS_K_OUTER].value.i == (i == 0));
        rk_buf_free(&b);
    }
}

static void test_schema_every_table_and_type(void)
{
    static const char text[] =
        "[target]\narch = \"gfx950\"\n\n[problem]\nN = 8\nHi = 56\nWi = 56\nC = 64\nK = 64\nY = 3\n"
        "X = 3\nsH = 2\npH = 0\ngroups = -3\nDi = 4\nZ = 1\nsD = 1\npD = 0\ndD = 1\n\n[spec]\n"
        "family = \"wgrad\"\nname = \"my/kernel_1\"\ndtype_a = \"bf16\"\npipeline = \"anything goes\"\n"
        "tile_m = 128\nasync_dma = true\nbias = -5\nsplit_k = -1\ntwo_stage = false\ngroup_merge = 2\n"
        "name_x = 1\n";
    rk_fields f;
    rk_error err;
    /* the last line is unknown: everything before it was accepted */
    CHECK(check_schema_text(text, sizeof text - 1, &f, &err) == -1);
    CHECK(strcmp(err.code, "E_UNKNOWN_KEY") == 0 &&
          strcmp(err.message, "line 32: unknown key 'name_x' in [spec]") == 0);
    CHECK(check_schema_text(text, sizeof text - 1 - strlen("name_x = 1\n"), &f, &err) == 0);
    CHECK(strcmp(f.f[RK_KEY_NAME].value.s, "my/kernel_1") == 0 &&
          strcmp(f.f[RK_KEY_PIPELINE].value.s, "anything goes") == 0);
    CHECK(f.f[RK_KEY_TILE_M].value.i == 128 && f.f[RK_KEY_ASYNC_DMA].value.i == 1 && f.f[RK_KEY_BIAS].value.i == -5);
    CHECK(f.f[RK_KEY_SPLIT_K].value.i == -1 && f.f[RK_KEY_GROUPS].value.i == -3 && f.f[RK_KEY_PD].set);
}

/* ==== §4: schema, every error message ==== */

static const bad_case schema_bad_cases[] = {
    {"unknown-key-target",
     S("[target]\narch = \"gfx950\"\nwave = 64\n\n[problem]\nN = 8\nHi = 56\n"
       "Wi = 56\nC = 64\nK = 64\nY = 3\nX = 3\n\n[spec]\nfamily = \"wgrad\"\n"),
     "E_UNKNOWN_KEY", "line 3: unknown key 'wave' in [target]"},
    {"unknown-key-problem",
     S("[target]\narch = \"gfx950\"\n\n[problem]\nN = 8\nHi = 56\nWi = 56\n"
       "C = 64\nK = 64\nY = 3\nX = 3\nHo = 56\n[spec]\nfamily = \"wgrad\"\n"),
     "E_UNKNOWN_KEY", "line 12: unknown key 'Ho' in [problem]"},
    {"unknown-key-spec",
     S(BASE "lds_layout = 1\n"),
     "E_UNKNOWN_KEY", "line 15: unknown key 'lds_layout' in [spec]"},
    {"key-of-another-table",
     S("[target]\narch = \"gfx950\"\n\n[problem]\nN = 8\nHi = 56\nWi = 56\n"
       "C = 64\nK = 64\nY = 3\nX = 3\ntile_m = 64\n[spec]\nfamily = \"wgrad\"\n"),
     "E_UNKNOWN_KEY", "line 12: unknown key 'tile_m' in [problem]"},
    {"key-case-matters",
     S("[target]\narch = \"gfx950\"\n\n[problem]\nN = 8\nHi = 56\nWi = 56\n"
       "C = 64\nK = 64\nY = 3\nX = 3\nHI = 56\n[spec]\nfamily = \"wgrad\"\n"),
     "E_UNKNOWN_KEY", "line 12: unknown key 'HI' in [problem]"},
    {"unknown-before-type",
     S(BASE "bogus = 1\ntile_m = true\n"),
     "E_UNKNOWN_KEY", "line 15: unknown key 'bogus' in [spec]"},
    {"type-in-file-order",
     S(BASE "tile_m = true\nbogus = 1\n"),
     "E_TYPE", "line 15: key 'tile_m' in [spec] must be an integer, not a boolean"},
    {"string-for-int",
     S("[target]\narch = \"gfx950\"\n\n[problem]\nN = \"8\"\nHi = 56\n"
       "Wi = 56\nC = 64\nK = 64\nY = 3\nX = 3\n\n[spec]\nfamily = \"wgrad\"\n"),
     "E_TYPE", "line 5: key 'N' in [problem] must be an integer, not a string"},
    {"bool-for-int",
     S(BASE "tile_m = false\n"),
     "E_TYPE", "line 15: key 'tile_m' in [spec] must be an integer, not a boolean"},
    {"int-for-bool",
     S(BASE "relu = 1\n"),
     "E_TYPE", "line 15: key 'relu' in [spec] must be a boolean, not an integer"},
    {"string-for-bool",
     S(BASE "relu = \"true\"\n"),
     "E_TYPE", "line 15: key 'relu' in [spec] must be a boolean, not a string"},
    {"bool-for-str",
     S(BASE "dtype_a = true\n"),
     "E_TYPE", "line 15: key 'dtype_a' in [spec] must be a string, not a boolean"},
    {"int-for-str",
     S(BASE "pipeline = 3\n"),
     "E_TYPE", "line 15: key 'pipeline' in [spec] must be a string, not an integer"},
    {"int-for-enum",
     S("[target]\narch = 950\n\n[problem]\nN = 8\nHi = 56\nWi = 56\nC = 64\n"
       "K = 64\nY = 3\nX = 3\n\n[spec]\nfamily = \"wgrad\"\n"),
     "E_TYPE", "line 2: key 'arch' in [target] must be a string, not an integer"},
    {"bool-for-family",
     S("[target]\narch = \"gfx950\"\n\n[problem]\nN = 8\nHi = 56\nWi = 56\n"
       "C = 64\nK = 64\nY = 3\nX = 3\n\n[spec]\nfamily = true\n"),
     "E_TYPE", "line 14: key 'family' in [spec] must be a string, not a boolean"},
    {"int-for-name",
     S(BASE "name = 1\n"),
     "E_TYPE", "line 15: key 'name' in [spec] must be a string, not an integer"},
    {"int-for-tri",
     S(BASE "lds_k_outer = 1\n"),
     "E_TYPE", "line 15: key 'lds_k_outer' in [spec] must be true, false or \"auto\", not an integer"},
    {"tri-bad-string",
     S(BASE "lds_k_outer = \"yes\"\n"),
     "E_RANGE", "line 15: key 'lds_k_outer' in [spec] must be true, false or \"auto\""},
    {"tri-case",
     S(BASE "lds_k_outer = \"Auto\"\n"),
     "E_RANGE", "line 15: key 'lds_k_outer' in [spec] must be true, false or \"auto\""},
    {"tri-string-true",
     S(BASE "lds_k_outer = \"true\"\n"),
     "E_RANGE", "line 15: key 'lds_k_outer' in [spec] must be true, false or \"auto\""},
    {"bad-arch",
     S("[target]\narch = \"gfx900\"\n\n[problem]\nN = 8\nHi = 56\nWi = 56\n"
       "C = 64\nK = 64\nY = 3\nX = 3\n\n[spec]\nfamily = \"wgrad\"\n"),
     "E_RANGE", "line 2: key 'arch' in [target] must be one of gfx942, gfx950, gfx1151, gfx1201, gfx1250"},
    {"arch-case",
     S("[target]\narch = \"GFX950\"\n\n[problem]\nN = 8\nHi = 56\nWi = 56\n"
       "C = 64\nK = 64\nY = 3\nX = 3\n\n[spec]\nfamily = \"wgrad\"\n"),
     "E_RANGE", "line 2: key 'arch' in [target] must be one of gfx942, gfx950, gfx1151, gfx1201, gfx1250"},
    {"bad-family",
     S("[target]\narch = \"gfx950\"\n\n[problem]\nN = 8\nHi = 56\nWi = 56\n"
       "C = 64\nK = 64\nY = 3\nX = 3\n\n[spec]\nfamily = \"bwd\"\n"),
     "E_RANGE", "line 14: key 'family' in [spec] must be one of fwd, wgrad, dgrad"},
    {"empty-family",
     S("[target]\narch = \"gfx950\"\n\n[problem]\nN = 8\nHi = 56\nWi = 56\n"
       "C = 64\nK = 64\nY = 3\nX = 3\n\n[spec]\nfamily = \"\"\n"),
     "E_RANGE", "line 14: key 'family' in [spec] must be one of fwd, wgrad, dgrad"},
    {"name-space",
     S(BASE "name = \"a b\"\n"),
     "E_RANGE", "line 15: key 'name' in [spec] must be 1 to 64 characters from [A-Za-z0-9_/]"},
    {"name-empty",
     S(BASE "name = \"\"\n"),
     "E_RANGE", "line 15: key 'name' in [spec] must be 1 to 64 characters from [A-Za-z0-9_/]"},
    {"name-65",
     S(BASE "name = \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"\n"),
     "E_RANGE", "line 15: key 'name' in [spec] must be 1 to 64 characters from [A-Za-z0-9_/]"},
    {"name-dash",
     S(BASE "name = \"a-b\"\n"),
     "E_RANGE", "line 15: key 'name' in [spec] must be 1 to 64 characters from [A-Za-z0-9_/]"},
    {"name-non-ascii",
     S(BASE "name = \"\303\251\"\n"),
     "E_RANGE", "line 15: key 'name' in [spec] must be 1 to 64 characters from [A-Za-z0-9_/]"},
    {"name-newline-escape",
     S(BASE "name = \"a\\nb\"\n"),
     "E_RANGE", "line 15: key 'name' in [spec] must be 1 to 64 characters from [A-Za-z0-9_/]"},
    {"negative-N",
     S("[target]\narch = \"gfx950\"\n\n[problem]\nN = -8\nHi = 56\nWi = 56\n"
       "C = 64\nK = 64\nY = 3\nX = 3\n\n[spec]\nfamily = \"wgrad\"\n"),
     "E_RANGE", "line 5: key 'N' in [problem] must be between 1 and 2147483647, not -8"},
    {"zero-C",
     S("[target]\narch = \"gfx950\"\n\n[problem]\nN = 8\nHi = 56\nWi = 56\n"
       "C = 0\nK = 64\nY = 3\nX = 3\n\n[spec]\nfamily = \"wgrad\"\n"),
     "E_RANGE", "line 8: key 'C' in [problem] must be between 1 and 2147483647, not 0"},
    {"minus-zero-K",
     S("[target]\narch = \"gfx950\"\n\n[problem]\nN = 8\nHi = 56\nWi = 56\n"
       "C = 64\nK = -0\nY = 3\nX = 3\n\n[spec]\nfamily = \"wgrad\"\n"),
     "E_RANGE", "line 9: key 'K' in [problem] must be between 1 and 2147483647, not 0"},
    {"plus-sign-printed-plain",
     S("[target]\narch = \"gfx950\"\n\n[problem]\nN = 8\nHi = 56\nWi = 56\n"
       "C = 64\nK = 64\nY = +0\nX = 3\n\n[spec]\nfamily = \"wgrad\"\n"),
     "E_RANGE", "line 10: key 'Y' in [problem] must be between 1 and 2147483647, not 0"},
    {"zero-stride",
     S("[target]\narch = \"gfx950\"\n\n[problem]\nN = 8\nHi = 56\nWi = 56\n"
       "C = 64\nK = 64\nY = 3\nX = 3\nsH = 0\n[spec]\nfamily = \"wgrad\"\n"),
     "E_RANGE", "line 12: key 'sH' in [problem] must be between 1 and 2147483647, not 0"},
    {"zero-dilation",
     S("[target]\narch = \"gfx950\"\n\n[problem]\nN = 8\nHi = 56\nWi = 56\n"
       "C = 64\nK = 64\nY = 3\nX = 3\ndW = 0\n[spec]\nfamily = \"wgrad\"\n"),
     "E_RANGE", "line 12: key 'dW' in [problem] must be between 1 and 2147483647, not 0"},
    {"negative-pad",
     S("[target]\narch = \"gfx950\"\n\n[problem]\nN = 8\nHi = 56\nWi = 56\n"
       "C = 64\nK = 64\nY = 3\nX = 3\npW = -1\n[spec]\nfamily = \"wgrad\"\n"),
     "E_RANGE", "line 12: key 'pW' in [problem] must be between 0 and 2147483647, not -1"},
    {"int32-min-size",
     S("[target]\narch = \"gfx950\"\n\n[problem]\nN = 8\nHi = -2147483648\n"
       "Wi = 56\nC = 64\nK = 64\nY = 3\nX = 3\n\n[spec]\nfamily = \"wgrad\"\n"),
     "E_RANGE", "line 6: key 'Hi' in [problem] must be between 1 and 2147483647, not -2147483648"},
    {"tile-65537",
     S(BASE "tile_k = 65537\n"),
     "E_RANGE", "line 15: key 'tile_k' in [spec] must be between 1 and 65536, not 65537"},
    {"tile-int32-max",
     S(BASE "tile_m = 2147483647\n"),
     "E_RANGE", "line 15: key 'tile_m' in [spec] must be between 1 and 65536, not 2147483647"},
    {"lds-pad-negative",
     S(BASE "lds_k_pad = -1\n"),
     "E_RANGE", "line 15: key 'lds_k_pad' in [spec] must be between 0 and 65536, not -1"},
    {"missing-everything",
     S(""),
     "E_MISSING", "missing required key 'arch' in [target]"},
    {"missing-arch",
     S("[target]\n\n[problem]\nN = 8\nHi = 56\nWi = 56\nC = 64\nK = 64\n"
       "Y = 3\nX = 3\n\n[spec]\nfamily = \"wgrad\"\n"),
     "E_MISSING", "missing required key 'arch' in [target]"},
    {"missing-target-table",
     S("\n[problem]\nN = 8\nHi = 56\nWi = 56\nC = 64\nK = 64\nY = 3\n"
       "X = 3\n\n[spec]\nfamily = \"wgrad\"\n"),
     "E_MISSING", "missing required key 'arch' in [target]"},
    {"missing-arch-only-in-parity",
     S("[parity]\narch = \"gfx950\"\n[target]\n\n[problem]\nN = 8\nHi = 56\n"
       "Wi = 56\nC = 64\nK = 64\nY = 3\nX = 3\n\n[spec]\nfamily = \"wgrad\"\n"),
     "E_MISSING", "missing required key 'arch' in [target]"},
    {"missing-N",
     S("[target]\narch = \"gfx950\"\n\n[problem]\n# N = 8\nHi = 56\nWi = 56\n"
       "C = 64\nK = 64\nY = 3\nX = 3\n\n[spec]\nfamily = \"wgrad\"\n"),
     "E_MISSING", "missing required key 'N' in [problem]"},
    {"missing-Hi",
     S("[target]\narch = \"gfx950\"\n\n[problem]\nN = 8\n# Hi = 56\nWi = 56\n"
       "C = 64\nK = 64\nY = 3\nX = 3\n\n[spec]\nfamily = \"wgrad\"\n"),
     "E_MISSING", "missing required key 'Hi' in [problem]"},
    {"missing-Wi",
     S("[target]\narch = \"gfx950\"\n\n[problem]\nN = 8\nHi = 56\n# Wi = 56\n"
       "C = 64\nK = 64\nY = 3\nX = 3\n\n[spec]\nfamily = \"wgrad\"\n"),
     "E_MISSING", "missing required key 'Wi' in [problem]"},
    {"missing-C",
     S("[target]\narch = \"gfx950\"\n\n[problem]\nN = 8\nHi = 56\nWi = 56\n"
       "# C = 64\nK = 64\nY = 3\nX = 3\n\n[spec]\nfamily = \"wgrad\"\n"),
     "E_MISSING", "missing required key 'C' in [problem]"},
    {"missing-K",
     S("[target]\narch = \"gfx950\"\n\n[problem]\nN = 8\nHi = 56\nWi = 56\n"
       "C = 64\n# K = 64\nY = 3\nX = 3\n\n[spec]\nfamily = \"wgrad\"\n"),
     "E_MISSING", "missing required key 'K' in [problem]"},
    {"missing-Y",
     S("[target]\narch = \"gfx950\"\n\n[problem]\nN = 8\nHi = 56\nWi = 56\n"
       "C = 64\nK = 64\n# Y = 3\nX = 3\n\n[spec]\nfamily = \"wgrad\"\n"),
     "E_MISSING", "missing required key 'Y' in [problem]"},
    {"missing-X",
     S("[target]\narch = \"gfx950\"\n\n[problem]\nN = 8\nHi = 56\nWi = 56\n"
       "C = 64\nK = 64\nY = 3\n# X = 3\n\n[spec]\nfamily = \"wgrad\"\n"),
     "E_MISSING", "missing required key 'X' in [problem]"},
    {"missing-N-and-X-reports-N",
     S("[target]\narch = \"gfx950\"\n\n[problem]\nHi = 56\nWi = 56\nC = 64\n"
       "K = 64\nY = 3\n\n[spec]\nfamily = \"wgrad\"\n"),
     "E_MISSING", "missing required key 'N' in [problem]"},
    {"missing-family",
     S("[target]\narch = \"gfx950\"\n\n[problem]\nN = 8\nHi = 56\nWi = 56\n"
       "C = 64\nK = 64\nY = 3\nX = 3\n\n[spec]\n"),
     "E_MISSING", "missing required key 'family' in [spec]"},
    {"missing-spec-table",
     S("[target]\narch = \"gfx950\"\n\n[problem]\nN = 8\nHi = 56\nWi = 56\n"
       "C = 64\nK = 64\nY = 3\nX = 3\n\n"),
     "E_MISSING", "missing required key 'family' in [spec]"},
    {"range-before-missing",
     S("[target]\narch = \"gfx950\"\n\n[problem]\nN = 8\nHi = 56\nWi = 56\n"
       "C = 64\nK = 64\nY = 3\nX = 3\n\n[spec]\ntile_m = 0\n"),
     "E_RANGE", "line 14: key 'tile_m' in [spec] must be between 1 and 65536, not 0"},
    {"misfit-fwd-split-k",
     S("[target]\narch = \"gfx950\"\n\n[problem]\nN = 8\nHi = 56\nWi = 56\n"
       "C = 64\nK = 64\nY = 3\nX = 3\n\n[spec]\nfamily = \"fwd\"\nsplit_k = 2\n"),
     "E_UNKNOWN_KEY", "line 15: key 'split_k' in [spec] does not apply to family 'fwd'"},
    {"misfit-fwd-lds-k-outer",
     S("[target]\narch = \"gfx950\"\n\n[problem]\nN = 8\nHi = 56\nWi = 56\n"
       "C = 64\nK = 64\nY = 3\nX = 3\n\n[spec]\nfamily = \"fwd\"\nlds_k_outer = \"auto\"\n"),
     "E_UNKNOWN_KEY", "line 15: key 'lds_k_outer' in [spec] does not apply to family 'fwd'"},
    {"misfit-dgrad-two-stage",
     S("[target]\narch = \"gfx950\"\n\n[problem]\nN = 8\nHi = 56\nWi = 56\n"
       "C = 64\nK = 64\nY = 3\nX = 3\n\n[spec]\nfamily = \"dgrad\"\ntwo_stage = true\n"),
     "E_UNKNOWN_KEY", "line 15: key 'two_stage' in [spec] does not apply to family 'dgrad'"},
    {"misfit-dgrad-group-merge",
     S("[target]\narch = \"gfx950\"\n\n[problem]\nN = 8\nHi = 56\nWi = 56\n"
       "C = 64\nK = 64\nY = 3\nX = 3\n\n[spec]\nfamily = \"dgrad\"\ngroup_merge = 1\n"),
     "E_UNKNOWN_KEY", "line 15: key 'group_merge' in [spec] does not apply to family 'dgrad'"},
    {"misfit-wgrad-num-load-waves",
     S(BASE "num_load_waves = 4\n"),
     "E_UNKNOWN_KEY", "line 15: key 'num_load_waves' in [spec] does not apply to family 'wgrad'"},
    {"misfit-wgrad-cshuffle-no-alias",
     S(BASE "cshuffle_no_alias = true\n"),
     "E_UNKNOWN_KEY", "line 15: key 'cshuffle_no_alias' in [spec] does not apply to family 'wgrad'"},
    {"misfit-first-in-file-order",
     S(BASE "cshuffle_no_alias = true\nnum_load_waves = 4\n"),
     "E_UNKNOWN_KEY", "line 15: key 'cshuffle_no_alias' in [spec] does not apply to family 'wgrad'"},
    {"misfit-before-family-line",
     S("[target]\narch = \"gfx950\"\n\n[problem]\nN = 8\nHi = 56\nWi = 56\n"
       "C = 64\nK = 64\nY = 3\nX = 3\n\n[spec]\nsplit_k = 2\nfamily = \"fwd\"\n"),
     "E_UNKNOWN_KEY", "line 14: key 'split_k' in [spec] does not apply to family 'fwd'"},
    {"type-of-misfit-key-first",
     S("[target]\narch = \"gfx950\"\n\n[problem]\nN = 8\nHi = 56\nWi = 56\n"
       "C = 64\nK = 64\nY = 3\nX = 3\n\n[spec]\nfamily = \"fwd\"\nsplit_k = true\n"),
     "E_TYPE", "line 15: key 'split_k' in [spec] must be an integer, not a boolean"},
    {"missing-before-misfit",
     S("[target]\narch = \"gfx950\"\n\n[problem]\nHi = 56\nWi = 56\nC = 64\n"
       "K = 64\nY = 3\nX = 3\n\n[spec]\nfamily = \"fwd\"\nsplit_k = 2\n"),
     "E_MISSING", "missing required key 'N' in [problem]"},
};

static void test_schema_rejected(void)
{
    size_t i;
    for (i = 0; i < sizeof schema_bad_cases / sizeof schema_bad_cases[0]; i++) {
        const bad_case *c = &schema_bad_cases[i];
        rk_fields f;
        rk_error err;
        int rc;
        rc = check_schema_text(c->text, c->len, &f, &err);
        CHECK_CASE(rc == -1 && err.code && strcmp(err.code, c->code) == 0 && !err.internal, c->id, err.code,
                   err.message);
        CHECK_CASE(err.code && strcmp(err.message, c->message) == 0, c->id, err.code, err.message);
    }
}

/* ==== §2 through rocke_emit: entry checks, their order, the size limit ==== */

static void expect_emit(const char *id, const char *config, size_t len, const char *mode, const char *flavor,
                        const char *code, const char *message)
{
    rocke_result r;
    rocke_status st = rocke_emit(config, len, mode, flavor, &r);
    CHECK_CASE(st == ROCKE_REJECTED && r.text == NULL && r.code && strcmp(r.code, code) == 0, id, r.code,
               r.message);
    CHECK_CASE(r.message && strcmp(r.message, message) == 0, id, r.code, r.message);
    rocke_result_free(&r);
}

/* A buffer of n bytes: BASE, then a comment line filling it up (last byte '\n'). */
static char *sized_config(size_t n)
{
    char *p = malloc(n);
    size_t base = sizeof BASE - 1;
    if (!p || n < base + 2) {
        free(p);
        return NULL;
    }
    memcpy(p, BASE, base);
    p[base] = '#';
    memset(p + base + 1, 'x', n - base - 2);
    p[n - 1] = '\n';
    return p;
}

static void test_emit_entry_checks(void)
{
    static const char nul_and_bad[] = "[target]\n\xff\n\0";
    expect_emit("mode", S(BASE), "asm", "llvm22", "E_MODE", "unknown mode 'asm' (expected spec, ir or ll)");
    expect_emit("mode-no-echo", S(BASE), "ASM!", "llvm22", "E_MODE", "unknown mode (expected spec, ir or ll)");
    expect_emit("mode-17", S(BASE), "aaaaaaaaaaaaaaaaa", "llvm22", "E_MODE", "unknown mode (expected spec, ir or ll)");
    expect_emit("mode-empty", S(BASE), "", "llvm22", "E_MODE", "unknown mode (expected spec, ir or ll)");
    expect_emit("flavor", S(BASE), "spec", "llvm99", "E_FLAVOR",
                "unknown flavor 'llvm99' (expected llvm20, llvm22 or llvm23)");
    expect_emit("flavor-no-echo", S(BASE), "spec", "LLVM 22", "E_FLAVOR",
                "unknown flavor (expected llvm20, llvm22 or llvm23)");
    expect_emit("mode-before-flavor", S(BASE), "x", "y", "E_MODE", "unknown mode 'x' (expected spec, ir or ll)");
    expect_emit("flavor-before-encoding", S(nul_and_bad), "spec", "y", "E_FLAVOR",
                "unknown flavor 'y' (expected llvm20, llvm22 or llvm23)");
    expect_emit("encoding-first-of-two", S(nul_and_bad), "spec", "llvm22", "E_ENCODING", "line 2: invalid UTF-8");
    expect_emit("parse-after-encoding", S("[x]\n\0"), "spec", "llvm22", "E_ENCODING", "line 2: NUL byte");
    expect_emit("empty", NULL, 0, "spec", "llvm22", "E_MISSING", "missing required key 'arch' in [target]");
    expect_emit("crlf-lines", S("[spec]\r\n\r\nx = 1\r\n"), "spec", "llvm23", "E_UNKNOWN_KEY",
                "line 3: unknown key 'x' in [spec]");
}

static void test_emit_size_limit(void)
{
    static const size_t sizes[] = {1048575, 1048576, 1048577, 10 * 1048576};
    size_t i;
    for (i = 0; i < 4; i++) {
        char *p = sized_config(sizes[i]);
        rocke_result r;
        rocke_status st;
        CHECK(p != NULL);
        if (!p)
            continue;
        st = rocke_emit(p, sizes[i], "spec", "llvm22", &r);
        if (sizes[i] <= 1048576) {
            CHECK(st == ROCKE_EMITTED && r.text != NULL);
        } else {
            char want[96];
            snprintf(want, sizeof want, "config is %lu bytes; the limit is 1048576", (unsigned long)sizes[i]);
            CHECK(st == ROCKE_REJECTED && strcmp(r.code, "E_TOO_LARGE") == 0 && strcmp(r.message, want) == 0);
        }
        rocke_result_free(&r);
        /* the size check comes before the encoding check */
        p[sizes[i] - 2] = '\xff';
        st = rocke_emit(p, sizes[i], "spec", "llvm22", &r);
        CHECK(st == ROCKE_REJECTED && strcmp(r.code, sizes[i] <= 1048576 ? "E_ENCODING" : "E_TOO_LARGE") == 0);
        rocke_result_free(&r);
        free(p);
    }
}

int main(void)
{
    test_encoding();
    test_parse_good();
    test_parse_table_lines();
    test_parse_is_bounded_by_len();
    test_parse_rejected();
    test_parse_long_inputs();
    test_parse_many_keys();
    test_int_key_bounds();
    test_every_key_rejects_every_wrong_type();
    test_unknown_names_in_every_table();
    test_schema_base();
    test_schema_ignores_parity();
    test_schema_every_arch_family_tri();
    test_schema_every_table_and_type();
    test_schema_rejected();
    test_emit_entry_checks();
    test_emit_size_limit();
    free_schema_arena();
    if (check_failures)
        fprintf(stderr, "test_config: %d check(s) failed\n", check_failures);
    return check_failures != 0;
}
