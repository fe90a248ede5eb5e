/* problem.c: ConvProblem, its derived sizes, short(), and dgrad's tilde sub-GEMMs.
 *
 * Twin of rocke_py/engine/problem.py, function for function in the same order
 * (docs/reference/conv-semantics.md §1, §2.4). Python ints are unbounded; here every value
 * is a long long, and the schema's int32 inputs keep each product inside 64 bits (the
 * contract checks the big products step by step, exactly where the Python does). */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "internal.h"

static const char *const rk_3d_fields[5] = {"Di", "Z", "sD", "pD", "dD"};
static const int rk_3d_keys[5] = {RK_KEY_DI, RK_KEY_Z, RK_KEY_SD, RK_KEY_PD, RK_KEY_DD};

const char *const rk_sub_gemm_fields[RK_SUB_GEMM_FIELDS] = {
    "block_start", "num_m_tiles", "num_n_tiles", "gemm_m",        "gemm_k",      "h_slice",
    "w_slice",     "h_begin",     "w_begin",     "y_dot_slice",   "x_dot_slice", "a_h_coeff",
    "a_w_coeff",   "b_y_stride",  "b_y_offset",  "b_x_stride",    "b_x_offset",  "d_h_stride",
    "d_h_offset",  "d_w_stride",  "d_w_offset",  "gemm_k_padded",
};

/* ---- ConvProblem properties ---- */

long long rk_cpg(const rk_problem *p) { return rk_floordiv(p->C, p->groups); }

long long rk_kpg(const rk_problem *p) { return rk_floordiv(p->K, p->groups); }

long long rk_problem_ho(const rk_problem *p) { return rk_out_size(p->Hi, p->pH, p->dH, p->Y, p->sH); }

long long rk_problem_wo(const rk_problem *p) { return rk_out_size(p->Wi, p->pW, p->dW, p->X, p->sW); }

/* Python asserts is_3d; every caller here checks has_3d first. */
long long rk_problem_do(const rk_problem *p) { return rk_out_size(p->Di, p->pD, p->dD, p->Z, p->sD); }

long long rk_filter_z(const rk_problem *p) { return p->has_3d ? p->Z : 1; }

long long rk_out_depth(const rk_problem *p) { return p->has_3d ? rk_problem_do(p) : 1; }

long long rk_in_depth(const rk_problem *p) { return p->has_3d ? p->Di : 1; }

int rk_is_pointwise(const rk_problem *p)
{
    int flat = p->Y == 1 && p->X == 1 && p->sH == 1 && p->sW == 1;
    flat = flat && p->pH == 0 && p->pW == 0;
    if (p->has_3d)
        flat = flat && p->Z == 1 && p->sD == 1 && p->pD == 0;
    return flat;
}

/* tag + str(v) at out[at], while the text fits in RK_SHORT_MAX (as snprintf would cut it);
 * the new length. */
static size_t short_part(char *out, size_t at, const char *tag, long long v)
{
    char digits[RK_INT_DIGITS];
    size_t n = rk_fmt_int(v, digits), i;
    for (i = 0; tag[i] && at + 1 < RK_SHORT_MAX; i++)
        out[at++] = tag[i];
    for (i = 0; i < n && at + 1 < RK_SHORT_MAX; i++)
        out[at++] = digits[i];
    out[at] = '\0';
    return at;
}

void rk_short(const rk_problem *p, char out[RK_SHORT_MAX])
{
    size_t n = 0;
    /* "N..D..H..W..C.._K..Z..Y..X.." (D and Z in 3-D), "G.." past one group: by hand */
    n = short_part(out, n, "N", p->N);
    if (p->has_3d)
        n = short_part(out, n, "D", p->Di);
    n = short_part(out, n, "H", p->Hi);
    n = short_part(out, n, "W", p->Wi);
    n = short_part(out, n, "C", p->C);
    n = short_part(out, n, "_K", p->K);
    if (p->has_3d)
        n = short_part(out, n, "Z", p->Z);
    n = short_part(out, n, "Y", p->Y);
    n = short_part(out, n, "X", p->X);
    if (p->groups > 1)
        short_part(out, n, "G", p->groups);
}

/* ---- Python integer division: floordiv, ceildiv, roundup (and Python's %) are in
 * intmath.c (support.h), so that every stage uses them without linking this one ---- */

long long rk_out_size(long long size, long long pad, long long dil, long long filt, long long stride)
{
    return rk_floordiv(size + 2 * pad - dil * (filt - 1) - 1, stride) + 1;
}

/* ---- construction checks (contract §5, in order) ---- */

static int check_groups(const rk_problem *p, rk_error *err)
{
    const char *code = "CONV_GROUPS_INVALID";
    if (p->groups < 1)
        return rk_fail(err, code, "groups = %lld must be at least 1", p->groups);
    if (rk_floormod(p->C, p->groups) != 0)
        return rk_fail(err, code, "C = %lld is not divisible by groups = %lld", p->C, p->groups);
    if (rk_floormod(p->K, p->groups) != 0)
        return rk_fail(err, code, "K = %lld is not divisible by groups = %lld", p->K, p->groups);
    return 0;
}

/* Appends ", "-joined names of the 3-D fields whose presence is `want`. */
static void join_3d(const rk_fields *fields, int want, char *out, size_t cap)
{
    size_t used = 0;
    int i;
    out[0] = '\0';
    for (i = 0; i < 5; i++) {
        if ((fields->f[rk_3d_keys[i]].set != 0) != want)
            continue;
        used += (size_t)snprintf(out + used, cap - used, "%s%s", used ? ", " : "", rk_3d_fields[i]);
    }
}

static int check_3d_fields(const rk_fields *fields, rk_error *err)
{
    char present[64], missing[64];
    int i, n = 0;
    for (i = 0; i < 5; i++)
        n += fields->f[rk_3d_keys[i]].set != 0;
    if (n > 0 && n < 5) {
        join_3d(fields, 1, present, sizeof present);
        join_3d(fields, 0, missing, sizeof missing);
        return rk_fail(err, "CONV_3D_FIELDS_PARTIAL", "3-D fields are partial: set %s but not %s", present, missing);
    }
    return 0;
}

static int check_output_size(const char *name, long long value, rk_error *err)
{
    if (value < 1)
        return rk_fail(err, "E_RANGE", "[problem]: output size %s = %lld is not positive", name, value);
    if (value > RK_INT32_MAX)
        return rk_fail(err, "E_RANGE", "[problem]: output size %s = %lld exceeds %lld", name, value, RK_INT32_MAX);
    return 0;
}

/* Multiplies left to right, checking after every step as the contract says. The factors
 * are positive int32 values here, so each step stays below 2^62. */
static int check_product(const char *label, const long long *factors, int n, rk_error *err)
{
    long long product = 1;
    int i;
    for (i = 0; i < n; i++) {
        product *= factors[i];
        if (product > RK_INT32_MAX)
            return rk_fail(err, "E_RANGE", "[problem]: %s exceeds %lld", label, RK_INT32_MAX);
    }
    return 0;
}

static int check_sizes(const rk_problem *p, rk_error *err)
{
    static const char *const labels_2d[4] = {"N*Ho*Wo", "N*Hi*Wi", "Y*X*C", "Y*X*K"};
    static const char *const labels_3d[4] = {"N*Do*Ho*Wo", "N*Di*Hi*Wi", "Z*Y*X*C", "Z*Y*X*K"};
    long long ho = rk_problem_ho(p), wo = rk_problem_wo(p), d_o = 0;
    long long factors[4][4];
    int i, n = p->has_3d ? 4 : 3;
    if (check_output_size("Ho", ho, err) || check_output_size("Wo", wo, err))
        return -1;
    if (p->has_3d) {
        d_o = rk_problem_do(p);
        if (check_output_size("Do", d_o, err))
            return -1;
        factors[0][0] = p->N, factors[0][1] = d_o, factors[0][2] = ho, factors[0][3] = wo;
        factors[1][0] = p->N, factors[1][1] = p->Di, factors[1][2] = p->Hi, factors[1][3] = p->Wi;
        factors[2][0] = p->Z, factors[2][1] = p->Y, factors[2][2] = p->X, factors[2][3] = p->C;
        factors[3][0] = p->Z, factors[3][1] = p->Y, factors[3][2] = p->X, factors[3][3] = p->K;
    } else {
        factors[0][0] = p->N, factors[0][1] = ho, factors[0][2] = wo;
        factors[1][0] = p->N, factors[1][1] = p->Hi, factors[1][2] = p->Wi;
        factors[2][0] = p->Y, factors[2][1] = p->X, factors[2][2] = p->C;
        factors[3][0] = p->Y, factors[3][1] = p->X, factors[3][2] = p->K;
    }
    for (i = 0; i < 4; i++)
        if (check_product(p->has_3d ? labels_3d[i] : labels_2d[i], factors[i], n, err))
            return -1;
    return 0;
}

static long long get(const rk_fields *fields, int key, long long fallback)
{
    return fields->f[key].set ? fields->f[key].value.i : fallback;
}

/* fields: the schema-checked [problem] keys. */
int rk_build_problem(const rk_fields *fields, rk_problem *out, rk_error *err)
{
    rk_problem *p = out;
    memset(p, 0, sizeof *p);
    p->N = fields->f[RK_KEY_N].value.i, p->Hi = fields->f[RK_KEY_HI].value.i;
    p->Wi = fields->f[RK_KEY_WI].value.i, p->C = fields->f[RK_KEY_C].value.i;
    p->K = fields->f[RK_KEY_K].value.i, p->Y = fields->f[RK_KEY_Y].value.i;
    p->X = fields->f[RK_KEY_X].value.i;
    p->sH = get(fields, RK_KEY_SH, 1), p->sW = get(fields, RK_KEY_SW, 1);
    p->pH = get(fields, RK_KEY_PH, 0), p->pW = get(fields, RK_KEY_PW, 0);
    p->dH = get(fields, RK_KEY_DH, 1), p->dW = get(fields, RK_KEY_DW, 1);
    p->groups = get(fields, RK_KEY_GROUPS, 1);
    /* Python: is_3d = Di is not None; a partial set is rejected below before any use. */
    p->has_3d = fields->f[RK_KEY_DI].set;
    p->Di = get(fields, RK_KEY_DI, 0), p->Z = get(fields, RK_KEY_Z, 0);
    p->sD = get(fields, RK_KEY_SD, 0), p->pD = get(fields, RK_KEY_PD, 0);
    p->dD = get(fields, RK_KEY_DD, 0);
    if (check_groups(p, err) || check_3d_fields(fields, err))
        return -1;
    return check_sizes(p, err);
}

/* ---- GEMM views (conv-semantics §2.1, §11) ---- */

void rk_fwd_gemm(const rk_problem *p, long long out[3])
{
    out[0] = p->N * rk_out_depth(p) * rk_problem_ho(p) * rk_problem_wo(p);
    out[1] = rk_kpg(p);
    out[2] = rk_filter_z(p) * p->Y * p->X * rk_cpg(p);
}

void rk_wgrad_gemm(const rk_problem *p, long long out[3])
{
    out[0] = rk_kpg(p);
    out[1] = rk_filter_z(p) * p->Y * p->X * rk_cpg(p);
    out[2] = p->N * rk_out_depth(p) * rk_problem_ho(p) * rk_problem_wo(p);
}

void rk_dgrad_gemm(const rk_problem *p, long long out[3])
{
    out[0] = p->N * rk_in_depth(p) * p->Hi * p->Wi;
    out[1] = rk_cpg(p);
    out[2] = rk_filter_z(p) * p->Y * p->X * rk_kpg(p);
}

/* ---- strided dgrad: the tilde decomposition (conv-semantics §2.4) ---- */

/* One spatial axis of the tilde decomposition (H with Y, or W with X). */
typedef struct rk_axis {
    long long size_in, size_out, filt, stride, pad, dil;
} rk_axis;

static long long gcd(long long a, long long b);

static long long axis_tilde(const rk_axis *a) { return rk_floordiv(a->stride, gcd(a->stride, a->dil)); }

static long long axis_out_tilde(const rk_axis *a)
{
    if (a->filt > 1)
        return a->size_out + rk_ceildiv(a->dil * (a->filt - 1), a->stride);
    return a->size_out;
}

static long long axis_dot_slice(const rk_axis *a, long long i_t) { return rk_ceildiv(a->filt - i_t, axis_tilde(a)); }

static long long axis_begin(const rk_axis *a)
{
    long long lead = a->pad - a->dil * (axis_tilde(a) - 1);
    return rk_floordiv(lead > 0 ? lead : 0, a->stride);
}

static long long axis_end(const rk_axis *a)
{
    long long out_tilde = axis_out_tilde(a);
    long long last = rk_ceildiv(a->pad + a->size_in - 1, a->stride) + 1;
    return out_tilde < last ? out_tilde : last;
}

static long long gcd(long long a, long long b)
{
    while (b) {
        long long r = rk_floormod(a, b);
        a = b;
        b = r;
    }
    return a;
}

static void tilde_axes(const rk_problem *p, rk_axis *h, rk_axis *w)
{
    h->size_in = p->Hi, h->size_out = rk_problem_ho(p), h->filt = p->Y;
    h->stride = p->sH, h->pad = p->pH, h->dil = p->dH;
    w->size_in = p->Wi, w->size_out = rk_problem_wo(p), w->filt = p->X;
    w->stride = p->sW, w->pad = p->pW, w->dil = p->dW;
}

/* Pairs with i_yt >= Y (or i_xt >= X) have an empty dot slice: only these can be kept. */
void rk_sub_gemm_candidates(const rk_problem *p, long long *rows, long long *cols)
{
    rk_axis h, w;
    long long ht, wt;
    tilde_axes(p, &h, &w);
    ht = axis_tilde(&h), wt = axis_tilde(&w);
    *rows = ht < p->Y ? ht : p->Y;
    *cols = wt < p->X ? wt : p->X;
}

int rk_check_sub_gemm_candidates(const rk_problem *p, rk_error *err)
{
    long long rows, cols;
    rk_sub_gemm_candidates(p, &rows, &cols);
    if (rows * cols > RK_MAX_SUB_GEMM_CANDIDATES)
        return rk_fail(err, "E_RANGE",
                       "[problem]: strided dgrad would need %lld*%lld sub-GEMM candidates, more than %d", rows, cols,
                       RK_MAX_SUB_GEMM_CANDIDATES);
    return 0;
}

/* C only: a*b for non-negative operands, or -1 past LLONG_MAX. Python's ints do not
 * overflow; the few tilde values that can pass 64 bits (gemm_m and the tile counts of a
 * huge padded, dilated problem) make the C engine fail loudly instead of printing a
 * wrapped number. */
static long long mul_nonneg(long long a, long long b)
{
    if (a != 0 && b > LLONG_MAX / a)
        return -1;
    return a * b;
}

/* The kernel carries every record field as an i32: a value past it is a range error
 * (Python: check_sub_gemm_record). A 64-bit overflow is past int32 too. */
static int sub_gemm_in_int32(const rk_sub_gemm *rec)
{
    int k;
    for (k = 0; k < RK_SUB_GEMM_FIELDS; k++)
        if (rec->v[k] < -RK_INT32_MAX - 1 || rec->v[k] > RK_INT32_MAX)
            return 0;
    return 1;
}

/* The record of pair (i_yt, i_xt), or 0 when the pair is skipped. *overflow is set when a
 * value this record prints would not fit in 64 bits. */
static int sub_gemm_record(const rk_problem *p, const rk_axis *h, const rk_axis *w, long long i_yt, long long i_xt,
                           long long tile_m, long long tile_n, long long tile_k, long long split_k,
                           long long block_start, rk_sub_gemm *rec, int *overflow)
{
    long long y_dot_slice = axis_dot_slice(h, i_yt);
    long long x_dot_slice = axis_dot_slice(w, i_xt);
    long long h_begin, w_begin, h_slice, w_slice, gemm_m, gemm_k, gemm_k_padded;
    long long *v = rec->v;
    if (y_dot_slice <= 0 || x_dot_slice <= 0)
        return 0;
    h_begin = axis_begin(h), w_begin = axis_begin(w);
    h_slice = axis_end(h) - h_begin, w_slice = axis_end(w) - w_begin;
    if (h_slice <= 0 || w_slice <= 0)
        return 0;
    gemm_m = mul_nonneg(p->N, h_slice);
    gemm_m = gemm_m < 0 ? -1 : mul_nonneg(gemm_m, w_slice);
    if (gemm_m < 0) {
        *overflow = 1;
        return 1;
    }
    gemm_k = y_dot_slice * x_dot_slice * rk_kpg(p);
    gemm_k_padded = rk_roundup(gemm_k, tile_k * (split_k > 1 ? split_k : 1));
    v[0] = block_start, v[1] = rk_ceildiv(gemm_m, tile_m), v[2] = rk_ceildiv(rk_cpg(p), tile_n);
    v[3] = gemm_m, v[4] = gemm_k, v[5] = h_slice, v[6] = w_slice, v[7] = h_begin, v[8] = w_begin;
    v[9] = y_dot_slice, v[10] = x_dot_slice;
    v[11] = -rk_floordiv(p->dH, gcd(p->sH, p->dH));
    v[12] = -rk_floordiv(p->dW, gcd(p->sW, p->dW));
    v[13] = axis_tilde(h), v[14] = i_yt, v[15] = axis_tilde(w), v[16] = i_xt;
    v[17] = p->sH, v[18] = p->dH * i_yt + p->sH * h_begin - p->pH;
    v[19] = p->sW, v[20] = p->dW * i_xt + p->sW * w_begin - p->pW;
    v[21] = gemm_k_padded;
    return 1;
}

int rk_dgrad_sub_gemms(const rk_problem *p, long long tile_m, long long tile_n, long long tile_k, long long split_k,
                       rk_arena *arena, rk_sub_gemm **records, int *n_records, rk_error *err)
{
    rk_axis h, w;
    long long rows, cols, i_yt, i_xt, block_start = 0;
    int n = 0, start_overflow = 0, overflow = 0;
    rk_sub_gemm *out;
    tilde_axes(p, &h, &w);
    rk_sub_gemm_candidates(p, &rows, &cols);
    /* The caller has checked rows*cols <= 4096 (check_sub_gemm_candidates). */
    out = rk_alloc(arena, (size_t)(rows * cols) * sizeof *out);
    if (!out)
        return rk_fail_internal(err, "out of memory (dgrad sub-GEMM records)");
    for (i_yt = 0; i_yt < rows; i_yt++) {
        for (i_xt = 0; i_xt < cols; i_xt++) {
            long long tiles;
            if (!sub_gemm_record(p, &h, &w, i_yt, i_xt, tile_m, tile_n, tile_k, split_k, block_start, &out[n],
                                 &overflow))
                continue;
            if (overflow || start_overflow || !sub_gemm_in_int32(&out[n]))
                return rk_fail(err, "E_RANGE", "[problem]: strided dgrad sub-GEMM %d has a value outside int32", n);
            /* block_start only matters if another record follows, so its overflow is
             * reported then (Python never prints the final running sum). */
            tiles = mul_nonneg(out[n].v[1], out[n].v[2]);
            if (tiles < 0 || block_start > LLONG_MAX - tiles)
                start_overflow = 1;
            else
                block_start += tiles;
            n++;
        }
    }
    *records = out;
    *n_records = n;
    return 0;
}
