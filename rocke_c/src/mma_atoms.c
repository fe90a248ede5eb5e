/* mma_atoms.c: the MMA atoms the kernels use: op_id, shape, per-lane fragment and
 * accumulator lengths.
 *
 * Twin of rocke_py/engine/mma_atoms.py, function for function. Lane layouts are
 * docs/reference/conv-semantics.md §13; the op_ids are docs/ir.md §4.5. An atom is a plain
 * value (its op_id is held inline), so nothing here allocates except the type names of
 * rk_atom_types. */
#include <string.h>
#include "ir.h"

const char *rk_mma_ir_elem(const char *dtype)
{
    if (strcmp(dtype, "fp16") == 0)
        return "f16";
    if (strcmp(dtype, "bf16") == 0)
        return "bf16";
    if (strcmp(dtype, "fp32") == 0)
        return "f32";
    return NULL;
}

const char *rk_atom_kind(const rk_target *target)
{
    if (target->is_mfma)
        return "mfma";
    if (target->is_gfx11)
        return "wmma_gfx11";
    return strcmp(target->arch, "gfx1250") == 0 ? "wmma_gfx1250" : "wmma_gfx12";
}

/* s appended at text[at] while it fits (leaving room for three numbers and their separators). */
static size_t put_part(char *text, size_t at, size_t cap, const char *s)
{
    while (*s && at + 3 * RK_INT_DIGITS + 4 < cap)
        text[at++] = *s++;
    return at;
}

static rk_atom atom(const char *prefix, const char *kind, const char *elem, long long m, long long n, long long k,
                    long long frag, long long c_len)
{
    rk_atom atom;
    char text[4 * RK_OP_ID_MAX];
    size_t at = 0;
    /* prefix m "x" n "x" k "_" elem, by hand (no printf per atom), cut like snprintf */
    at = put_part(text, at, sizeof text, prefix);
    at += rk_fmt_int(m, text + at);
    text[at++] = 'x';
    at += rk_fmt_int(n, text + at);
    text[at++] = 'x';
    at += rk_fmt_int(k, text + at);
    text[at++] = '_';
    at = put_part(text, at, sizeof text, elem);
    if (at > RK_OP_ID_MAX - 1)
        at = RK_OP_ID_MAX - 1;
    memcpy(atom.op_id, text, at);
    atom.op_id[at] = '\0';
    atom.kind = kind;
    atom.m = m, atom.n = n, atom.k = k;
    atom.elem = elem;
    atom.frag = frag;
    atom.c_len = c_len;
    return atom;
}

rk_atom rk_make_atom(const char *kind, const char *elem, long long m, long long n, long long k)
{
    if (strcmp(kind, "mfma") == 0)
        return atom("mfma_f32_", "mfma", elem, m, n, k, rk_floordiv(m * k, 64), rk_floordiv(m * n, 64));
    if (strcmp(kind, "wmma_gfx11") == 0)
        return atom("wmma_f32_", "wmma_gfx11", elem, m, n, k, k, 8);
    if (strcmp(kind, "wmma_gfx12") == 0)
        return atom("wmma_gfx12_f32_", "wmma_gfx12", elem, m, n, k, rk_floordiv(m * k, 32), 8);
    return atom("wmma_gfx1250_f32_", kind, elem, m, n, k, rk_floordiv(m * k, 32), 8);
}

/* A dtype outside IR_ELEM (Python's KeyError) gives an atom of element "". */
rk_atom rk_atom_for(const rk_target *target, const char *dtype, long long m, long long n, long long k)
{
    const char *elem = rk_mma_ir_elem(dtype);
    return rk_make_atom(rk_atom_kind(target), elem ? elem : "", m, n, k);
}

/* s[0:len] as a dimension: ASCII digits only, at most 9 of them (a longer one cannot name
 * a known atom, so Python's verdict is None as well); -1 otherwise. */
static long long dim(const char *s, size_t len)
{
    long long v = 0;
    size_t i;
    if (len < 1 || len > 9)
        return -1;
    for (i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* shape.split("x") into exactly three dimensions; -1 otherwise. */
static int mma_dims(const char *shape, size_t len, long long dims[3])
{
    size_t start = 0, i;
    int n = 0;
    for (i = 0; i <= len; i++) {
        if (i < len && shape[i] != 'x')
            continue;
        if (n == 3)
            return -1;
        dims[n++] = dim(shape + start, i - start);
        start = i + 1;
    }
    if (n != 3)
        return -1;
    return dims[0] < 0 || dims[1] < 0 || dims[2] < 0 ? -1 : 0;
}

/* The static IR element string when elem is one of IR_ELEM's values, else NULL. */
static const char *ir_value(const char *elem)
{
    static const char *const values[3] = {"f16", "bf16", "f32"};
    int i;
    for (i = 0; i < 3; i++)
        if (strcmp(elem, values[i]) == 0)
            return values[i];
    return NULL;
}

int rk_atom_by_op_id(const char *op_id, rk_atom *out)
{
    static const char *const kinds[4] = {"wmma_gfx1250", "wmma_gfx12", "wmma_gfx11", "mfma"};
    static const char *const prefixes[4] = {"wmma_gfx1250_f32_", "wmma_gfx12_f32_", "wmma_f32_", "mfma_f32_"};
    int i;
    for (i = 0; i < 4; i++) {
        size_t plen = strlen(prefixes[i]);
        const char *rest, *under, *elem;
        long long dims[3];
        if (strncmp(op_id, prefixes[i], plen) != 0)
            continue;
        rest = op_id + plen;
        under = strchr(rest, '_'); /* shape, _, elem = rest.partition("_") */
        elem = under ? under + 1 : "";
        elem = ir_value(elem);
        if (!elem || mma_dims(rest, under ? (size_t)(under - rest) : strlen(rest), dims))
            return 0;
        *out = rk_make_atom(kinds[i], elem, dims[0], dims[1], dims[2]);
        return strcmp(out->op_id, op_id) == 0 && rk_atom_known(out);
    }
    return 0;
}

typedef struct rk_mma_known_row {
    const char *kind;
    const char *elem;
    long long m, n, k;
} rk_mma_known_row;

/* clang-format off */
static const rk_mma_known_row rk_mma_known_atoms[] = {
    {"mfma", "f16", 32, 32, 8}, {"mfma", "f16", 16, 16, 16},
    {"mfma", "f16", 32, 32, 16}, {"mfma", "f16", 16, 16, 32},
    {"mfma", "bf16", 32, 32, 8}, {"mfma", "bf16", 16, 16, 16},
    {"mfma", "bf16", 32, 32, 16}, {"mfma", "bf16", 16, 16, 32},
    {"mfma", "f32", 16, 16, 4}, {"mfma", "f32", 32, 32, 2},
    {"wmma_gfx11", "f16", 16, 16, 16}, {"wmma_gfx11", "bf16", 16, 16, 16},
    {"wmma_gfx12", "f16", 16, 16, 16}, {"wmma_gfx12", "bf16", 16, 16, 16},
    {"wmma_gfx1250", "f16", 16, 16, 32}, {"wmma_gfx1250", "bf16", 16, 16, 32}, {"wmma_gfx1250", "f32", 16, 16, 4},
};
/* clang-format on */

int rk_atom_known(const rk_atom *atom)
{
    size_t i;
    for (i = 0; i < sizeof rk_mma_known_atoms / sizeof rk_mma_known_atoms[0]; i++) {
        const rk_mma_known_row *row = &rk_mma_known_atoms[i];
        /* the dimensions first, then the names (pointer first: this file's literals, usually) */
        if (row->m == atom->m && row->n == atom->n && row->k == atom->k
            && (row->kind == atom->kind || strcmp(row->kind, atom->kind) == 0)
            && (row->elem == atom->elem || strcmp(row->elem, atom->elem) == 0))
            return 1;
    }
    return 0;
}

int rk_atom_types(rk_arena *arena, const char *op_id, const char *types[3])
{
    rk_atom atom;
    if (!rk_atom_by_op_id(op_id, &atom))
        return 0;
    types[0] = rk_vec_or_scalar(arena, atom.elem, atom.frag);
    types[1] = types[0];
    types[2] = rk_vec(arena, "f32", atom.c_len);
    return types[0] && types[2] ? 1 : -1;
}
