/* schema.c: stage schema (docs/engine-contract.md §4): parsed entries -> typed fields.
 *
 * Twin of rocke_py/engine/schema.py, function for function in the same order. rk_keys is the
 * one key table, row for row in the order of enum rk_key (internal.h), so both engines check
 * the entries of a file the same way and report the same first error. */
#include <string.h>
#include "internal.h"

#define RK_MAX (2147483647LL)
#define RK_MIN (-2147483647LL - 1)
#define RK_MAX_NAME 64

/* Key types. ENUM and NAME are strings with a rule on the value; TRI is true, false or the
 * string "auto". */
enum rk_type { RK_T_INT, RK_T_BOOL, RK_T_STR, RK_T_ENUM, RK_T_NAME, RK_T_TRI };

/* [spec] families a key applies to. */
#define RK_F 1 /* bit (1 << enum rk_family) */
#define RK_W 2
#define RK_D 4
#define RK_FWD (RK_F | RK_W | RK_D)

static const char *const rk_archs[] = {"gfx942", "gfx950", "gfx1151", "gfx1201", "gfx1250", NULL};
static const char *const rk_families[] = {"fwd", "wgrad", "dgrad", NULL}; /* enum rk_family order */
static const char *const rk_table_names[RK_TABLE_COUNT] = {"parity", "target", "problem", "spec"};

typedef struct rk_key_info {
    const char *name;
    int table;                    /* enum rk_table */
    int type;                     /* enum rk_type */
    long long lo, hi;             /* RK_T_INT only; RK_MIN..RK_MAX = unbounded */
    int families;                 /* [spec] only */
    int required;
    const char *const *choices;   /* RK_T_ENUM only, NULL-terminated, in message order */
} rk_key_info;

#define TARGET_ENUM(n, c) {n, RK_TABLE_TARGET, RK_T_ENUM, RK_MIN, RK_MAX, RK_FWD, 1, c}
#define PROBLEM(n, lo, req) {n, RK_TABLE_PROBLEM, RK_T_INT, lo, RK_MAX, RK_FWD, req, NULL}
#define SPEC(n, type, lo, hi, fam) {n, RK_TABLE_SPEC, type, lo, hi, fam, 0, NULL}
#define SPEC_INT(n, lo, hi) SPEC(n, RK_T_INT, lo, hi, RK_FWD)
#define SPEC_OF(n, type) SPEC(n, type, RK_MIN, RK_MAX, RK_FWD)
#define SPEC_ENUM(n, c) {n, RK_TABLE_SPEC, RK_T_ENUM, RK_MIN, RK_MAX, RK_FWD, 1, c}

static const rk_key_info rk_keys[RK_KEY_COUNT] = {
#define RK_KEY_ROW(id, row, ...) row(__VA_ARGS__),
    RK_KEYS(RK_KEY_ROW)
#undef RK_KEY_ROW
};

static const char *expected(int type)
{
    switch (type) {
    case RK_T_INT: return "an integer";
    case RK_T_BOOL: return "a boolean";
    case RK_T_TRI: return "true, false or \"auto\"";
    default: return "a string";
    }
}

/* The key of (table, name), or -1 (Python: a dict lookup). */
static int find_key(int table, const char *name)
{
    int k;
    for (k = 0; k < RK_KEY_COUNT; k++)
        if (rk_keys[k].table == table && strcmp(rk_keys[k].name, name) == 0)
            return k;
    return -1;
}

/* What the value is, for E_TYPE. */
static const char *kind_name(const rk_value *v)
{
    switch (v->kind) {
    case RK_VALUE_BOOL: return "a boolean";
    case RK_VALUE_INT: return "an integer";
    default: return "a string";
    }
}

static int type_ok(const rk_key_info *key, const rk_value *v)
{
    switch (key->type) {
    case RK_T_INT: return v->kind == RK_VALUE_INT;
    case RK_T_BOOL: return v->kind == RK_VALUE_BOOL;
    case RK_T_TRI: return v->kind == RK_VALUE_BOOL || v->kind == RK_VALUE_STR;
    default: return v->kind == RK_VALUE_STR;
    }
}

static int is_name(const rk_value *v)
{
    size_t i;
    if (v->s_len < 1 || v->s_len > RK_MAX_NAME)
        return 0;
    for (i = 0; i < v->s_len; i++) {
        char c = v->s[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '/'))
            return 0;
    }
    return 1;
}

static int str_is(const rk_value *v, const char *word)
{
    return v->s_len == strlen(word) && memcmp(v->s, word, v->s_len) == 0;
}

/* Index of the value among the choices, or -1. */
static int choice_index(const rk_value *v, const char *const *choices)
{
    int i;
    for (i = 0; choices[i]; i++)
        if (str_is(v, choices[i]))
            return i;
    return -1;
}

/* "a, b, c": the choices as the E_RANGE message lists them (cap is ample: asserted by the
 * unit test, which checks the full message). */
static void join_choices(const char *const *choices, char *out, size_t cap)
{
    size_t used = 0;
    int i;
    out[0] = '\0';
    for (i = 0; choices[i]; i++) {
        const char *sep = i ? ", " : "";
        size_t n = strlen(choices[i]), m = strlen(sep);
        if (used + m + n + 1 > cap)
            return;
        memcpy(out + used, sep, m);
        memcpy(out + used + m, choices[i], n);
        used += m + n;
        out[used] = '\0';
    }
}

/* The range or rule of an already type-checked value. */
static int check_value(const rk_key_info *key, const rk_entry *e, rk_error *err)
{
    const rk_value *v = &e->value;
    const char *table = rk_table_names[key->table];
    char list[128];
    if (key->type == RK_T_INT && (v->i < key->lo || v->i > key->hi))
        return rk_fail(err, "E_RANGE", "line %d: key '%s' in [%s] must be between %lld and %lld, not %lld", e->line,
                       key->name, table, key->lo, key->hi, v->i);
    if (key->type == RK_T_ENUM && choice_index(v, key->choices) < 0) {
        join_choices(key->choices, list, sizeof list);
        return rk_fail(err, "E_RANGE", "line %d: key '%s' in [%s] must be one of %s", e->line, key->name, table, list);
    }
    if (key->type == RK_T_NAME && !is_name(v))
        return rk_fail(err, "E_RANGE", "line %d: key '%s' in [%s] must be 1 to %d characters from [A-Za-z0-9_/]",
                       e->line, key->name, table, RK_MAX_NAME);
    if (key->type == RK_T_TRI && v->kind == RK_VALUE_STR && !str_is(v, "auto"))
        return rk_fail(err, "E_RANGE", "line %d: key '%s' in [%s] must be true, false or \"auto\"", e->line, key->name,
                       table);
    return 0;
}

/* §4 step 1 for one entry of [target], [problem] or [spec]; *key_out = its key. */
static int check_entry(const rk_entry *e, int *key_out, rk_error *err)
{
    int k = find_key(e->table, e->key);
    const rk_key_info *key;
    if (k < 0)
        return rk_fail(err, "E_UNKNOWN_KEY", "line %d: unknown key '%s' in [%s]", e->line, e->key,
                       rk_table_names[e->table]);
    key = &rk_keys[k];
    if (!type_ok(key, &e->value))
        return rk_fail(err, "E_TYPE", "line %d: key '%s' in [%s] must be %s, not %s", e->line, key->name,
                       rk_table_names[key->table], expected(key->type), kind_name(&e->value));
    *key_out = k;
    return check_value(key, e, err);
}

/* §4 step 2, in key-table order: arch; N, Hi, Wi, C, K, Y, X; family. */
static int check_required(const rk_fields *fields, rk_error *err)
{
    int k;
    for (k = 0; k < RK_KEY_COUNT; k++)
        if (rk_keys[k].required && !fields->f[k].set)
            return rk_fail(err, "E_MISSING", "missing required key '%s' in [%s]", rk_keys[k].name,
                           rk_table_names[rk_keys[k].table]);
    return 0;
}

/* §4 step 3: [spec] keys that are not fields of the family, in file order. */
static int check_family_fit(const rk_config *config, int family, rk_error *err)
{
    int bit = 1 << family, i; /* RK_F, RK_W, RK_D follow enum rk_family */
    for (i = 0; i < config->n_entries; i++) {
        const rk_entry *e = &config->entries[i];
        int k = e->table == RK_TABLE_SPEC ? find_key(e->table, e->key) : -1;
        if (k >= 0 && !(rk_keys[k].families & bit))
            return rk_fail(err, "E_UNKNOWN_KEY", "line %d: key '%s' in [spec] does not apply to family '%s'", e->line,
                           e->key, rk_families[family]);
    }
    return 0;
}

int rk_schema_check(const rk_config *config, rk_fields *out, rk_error *err)
{
    int i;
    memset(out, 0, sizeof *out);
    for (i = 0; i < config->n_entries; i++) {
        const rk_entry *e = &config->entries[i];
        int k = -1;
        if (e->table == RK_TABLE_PARITY)
            continue; /* the harness's table: never checked by the engines */
        if (check_entry(e, &k, err) != 0)
            return -1;
        out->f[k].set = 1;
        out->f[k].line = e->line;
        out->f[k].value = e->value;
    }
    if (check_required(out, err) != 0)
        return -1;
    out->family = choice_index(&out->f[RK_KEY_FAMILY].value, rk_families);
    return check_family_fit(config, out->family, err);
}
