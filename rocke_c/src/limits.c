/* limits.c: the limits this project adds beyond the reference (docs/engine-contract.md §8):
 * every i32 the kernel computes fits in an i32 (CONV_INT32_RANGE), and no kernel is larger
 * than RK_MAX_KERNEL_OPS IR ops (CONV_KERNEL_SIZE; the builder enforces the same bound).
 *
 * Twin of rocke_py/engine/limits.py, function for function. Each check appends its message
 * and returns 1 when the limit is broken (Python: the message or None). Python's ints do not
 * overflow; here every product is of two values already checked against int32 (or of a
 * schema-bounded tile size), so it fits in a long long, and a check stops at the first
 * value outside int32 before multiplying again. */
#include <stdio.h>
#include <string.h>
#include "build.h"

/* A coordinate, constant or coefficient of a linear sum (Python: (name, span, coeff_name, coeff)). */
typedef struct rk_term {
    const char *name;
    long long lo, hi;
    const char *coeff_name;   /* "": the coefficient is 1 and prints no factor */
    long long coeff;
} rk_term;

/* One Horner step: partial*dim + coord, with coord in lo..hi. */
typedef struct rk_step {
    const char *name;         /* the dim as the builder's formula names it */
    long long dim;
    const char *coord;
    long long lo, hi;
} rk_step;

/* ---- CONV_INT32_RANGE: i32 quantities of the kernel (docs/engine-contract.md §8.2) ---- */

static int fits(long long value) { return value >= RK_INT32_MIN && value <= RK_INT32_MAX; }

static void span_text(rk_buf *msg, const char *name, long long lo, long long hi)
{
    rk_buf_printf(msg, "%s in %lld..%lld", name, lo, hi);
}

/* The first bound outside int32 of lo..hi (lo before hi): 1 with *bad set, else 0. */
static int first_outside(long long lo, long long hi, long long *bad)
{
    if (!fits(lo)) {
        *bad = lo;
        return 1;
    }
    if (!fits(hi)) {
        *bad = hi;
        return 1;
    }
    return 0;
}

/* reaches(): the "what" part is already in msg; this appends the value and opens the keys. */
static void reaches(rk_buf *msg, long long value)
{
    rk_buf_printf(msg, " reaches %lld across the grid, outside int32 (", value);
}

/* The sum left to right as the builder adds it: 1 with *bad the first product or partial
 * sum outside int32, else 0; span: the sum (or the offending part). */
static int linear(const rk_term *terms, int n, long long *bad, long long span[2])
{
    long long total[2] = {0, 0};
    int i;
    for (i = 0; i < n; i++) {
        long long a = terms[i].lo * terms[i].coeff, b = terms[i].hi * terms[i].coeff;
        long long product[2];
        product[0] = a < b ? a : b;
        product[1] = a < b ? b : a;
        if (first_outside(product[0], product[1], bad)) {
            span[0] = product[0], span[1] = product[1];
            return 1;
        }
        if (i == 0) {
            total[0] = product[0], total[1] = product[1];
        } else {
            total[0] += product[0], total[1] += product[1];
        }
        if (first_outside(total[0], total[1], bad)) {
            span[0] = total[0], span[1] = total[1];
            return 1;
        }
    }
    span[0] = total[0], span[1] = total[1];
    return 0;
}

static void linear_expr(rk_buf *msg, const rk_term *terms, int n)
{
    int i;
    for (i = 0; i < n; i++) {
        if (i)
            rk_buf_puts(msg, " + ");
        if (terms[i].coeff_name[0])
            rk_buf_printf(msg, "%s*%s", terms[i].name, terms[i].coeff_name);
        else
            rk_buf_puts(msg, terms[i].name);
    }
}

static void linear_keys(rk_buf *msg, const rk_term *terms, int n)
{
    int i;
    for (i = 0; i < n; i++) {
        if (i)
            rk_buf_puts(msg, ", ");
        if (terms[i].lo == terms[i].hi)
            rk_buf_printf(msg, "%s = %lld", terms[i].name, terms[i].lo);
        else
            span_text(msg, terms[i].name, terms[i].lo, terms[i].hi);
        if (terms[i].coeff_name[0])
            rk_buf_printf(msg, ", %s = %lld", terms[i].coeff_name, terms[i].coeff);
    }
}

static int check_linear(rk_buf *msg, const char *pre, const char *result, const rk_term *terms, int n,
                        long long span[2])
{
    long long bad;
    if (!linear(terms, n, &bad, span))
        return 0;
    rk_buf_printf(msg, "%s%s = ", pre, result);
    linear_expr(msg, terms, n);
    reaches(msg, bad);
    linear_keys(msg, terms, n);
    rk_buf_puts(msg, ")");
    return 1;
}

/* (((c0*d1 + c1)*d2 + c2)...)*scale over spans: 1 with *bad the first product, sum or the
 * scaled result outside int32, else 0. */
static int horner(long long lo, long long hi, const rk_step *steps, int n, long long scale, long long *bad)
{
    int i;
    if (first_outside(lo, hi, bad))
        return 1;
    for (i = 0; i < n; i++) {
        lo *= steps[i].dim, hi *= steps[i].dim;
        if (first_outside(lo, hi, bad))
            return 1;
        lo += steps[i].lo, hi += steps[i].hi;
        if (first_outside(lo, hi, bad))
            return 1;
    }
    return first_outside(lo * scale, hi * scale, bad);
}

static void dim_name(rk_buf *msg, const char *name)
{
    if (strchr(name, '*'))
        rk_buf_printf(msg, "(%s)", name);
    else
        rk_buf_puts(msg, name);
}

/* A tensor offset computed in Horner form; scale is the element size (1: an element offset). */
static int check_offset(rk_buf *msg, const char *pre, const char *tensor, const char *start, long long lo, long long hi,
                        const rk_step *steps, int n, long long scale)
{
    long long bad;
    int i;
    if (!horner(lo, hi, steps, n, scale, &bad))
        return 0;
    rk_buf_printf(msg, "%sthe %s %s offset ", pre, tensor, scale > 1 ? "byte" : "element");
    for (i = 0; i < n; i++)
        rk_buf_puts(msg, "(");
    rk_buf_puts(msg, start);
    for (i = 0; i < n; i++) {
        rk_buf_puts(msg, "*");
        dim_name(msg, steps[i].name);
        rk_buf_printf(msg, " + %s)", steps[i].coord);
    }
    if (scale > 1)
        rk_buf_printf(msg, "*%lld", scale);
    reaches(msg, bad);
    span_text(msg, start, lo, hi);
    for (i = 0; i < n; i++) {
        rk_buf_printf(msg, ", %s = %lld, ", steps[i].name, steps[i].dim);
        span_text(msg, steps[i].coord, steps[i].lo, steps[i].hi);
    }
    rk_buf_puts(msg, ")");
    return 1;
}

/* -- the three tensors of a family, their dims and their byte sizes -- */

typedef struct rk_tensor {
    const char *name;         /* the kernel's param name (dY, X, dW, ...) */
    const char *dtype_key;    /* dtype_a, dtype_b or dtype_d */
    const char *dim_names[5];
    long long dims[5];
    int n_dims;
} rk_tensor;

static rk_tensor tensor(const char *name, const char *dtype_key, const char *first, long long first_v,
                        const char *depth, long long depth_v, int has_depth, const char *const rest[3],
                        const long long rest_v[3])
{
    rk_tensor t;
    int i;
    t.name = name, t.dtype_key = dtype_key, t.n_dims = 0;
    t.dim_names[t.n_dims] = first, t.dims[t.n_dims++] = first_v;
    if (has_depth)
        t.dim_names[t.n_dims] = depth, t.dims[t.n_dims++] = depth_v;
    for (i = 0; i < 3; i++)
        t.dim_names[t.n_dims] = rest[i], t.dims[t.n_dims++] = rest_v[i];
    return t;
}

static rk_tensor nhwc(const char *name, const char *dtype_key, const rk_problem *p)
{
    static const char *const rest[3] = {"Hi", "Wi", "C"};
    long long v[3];
    v[0] = p->Hi, v[1] = p->Wi, v[2] = p->C;
    return tensor(name, dtype_key, "N", p->N, "Di", p->Di, p->has_3d, rest, v);
}

static rk_tensor nhwk(const char *name, const char *dtype_key, const rk_problem *p)
{
    static const char *const rest[3] = {"Ho", "Wo", "K"};
    long long v[3];
    v[0] = rk_problem_ho(p), v[1] = rk_problem_wo(p), v[2] = p->K;
    return tensor(name, dtype_key, "N", p->N, "Do", p->has_3d ? rk_problem_do(p) : 0, p->has_3d, rest, v);
}

static rk_tensor kyxc(const char *name, const char *dtype_key, const rk_problem *p)
{
    static const char *const rest[3] = {"Y", "X", "cpg"};
    long long v[3];
    v[0] = p->Y, v[1] = p->X, v[2] = rk_cpg(p);
    return tensor(name, dtype_key, "K", p->K, "Z", p->Z, p->has_3d, rest, v);
}

/* A, B, D in param order (build_*.NAMES). */
static void tensors(const rk_spec *s, const rk_problem *p, rk_tensor out[3])
{
    if (s->family == RK_FAMILY_FWD) {
        out[0] = nhwc("X", "dtype_a", p);
        out[1] = kyxc("W", "dtype_b", p);
        out[2] = nhwk("Y", "dtype_d", p);
    } else if (s->family == RK_FAMILY_WGRAD) {
        out[0] = nhwk("dY", "dtype_a", p);
        out[1] = nhwc("X", "dtype_b", p);
        out[2] = kyxc("dW", "dtype_d", p);
    } else {
        out[0] = nhwk("dY", "dtype_a", p);
        out[1] = kyxc("W", "dtype_b", p);
        out[2] = nhwc("dX", "dtype_d", p);
    }
}

static const char *dtype_of(const rk_spec *s, const char *key)
{
    if (strcmp(key, "dtype_a") == 0)
        return s->dtype_a;
    return strcmp(key, "dtype_b") == 0 ? s->dtype_b : s->dtype_d;
}

/* Each <name>_bytes param (and the buffer resource built from it) is an i32. */
static int tensor_bytes(const rk_spec *s, const rk_problem *p, rk_buf *msg)
{
    rk_tensor t[3];
    int i, j;
    tensors(s, p, t);
    for (i = 0; i < 3; i++) {
        const char *dtype = dtype_of(s, t[i].dtype_key);
        long long eb = rk_spec_elem_bytes(dtype), total = eb;
        int over = 0;
        for (j = 0; j < t[i].n_dims && !over; j++) {
            total *= t[i].dims[j];
            over = total > RK_INT32_MAX;  /* stop before the next product could pass 64 bits */
        }
        if (!over)
            continue;
        rk_buf_printf(msg, "%s_bytes = ", t[i].name);
        for (j = 0; j < t[i].n_dims; j++)
            rk_buf_printf(msg, "%s%s", j ? "*" : "", t[i].dim_names[j]);
        rk_buf_printf(msg, "*%lld exceeds %lld (", eb, RK_INT32_MAX);
        for (j = 0; j < t[i].n_dims; j++)
            rk_buf_printf(msg, "%s%s = %lld", j ? ", " : "", t[i].dim_names[j], t[i].dims[j]);
        rk_buf_printf(msg, ", %s = %s)", t[i].dtype_key, dtype);
        return 1;
    }
    return 0;
}

/* -- the grid: GEMM index ranges, the K loop, block ids -- */

static const char *m_formula(const rk_problem *p) { return p->has_3d ? "N*Do*Ho*Wo" : "N*Ho*Wo"; }

static const char *k_formula(const rk_problem *p) { return p->has_3d ? "Z*Y*X*cpg" : "Y*X*cpg"; }

static long long filter_k(const rk_problem *p) { return rk_filter_z(p) * p->Y * p->X * rk_cpg(p); }

static long long out_m(const rk_problem *p) { return p->N * rk_out_depth(p) * rk_problem_ho(p) * rk_problem_wo(p); }

/* fwd, wgrad: where the K loop's induction variable ends (k_hi rounded up to tile_k; an
 * `add nsw` reaches it), one more than the largest k index of a load. */
static long long k_extent(const rk_spec *s, const rk_problem *p)
{
    if (s->family == RK_FAMILY_FWD)
        return rk_roundup(filter_k(p), s->tile_k);
    return rk_wg_k_padded(s, p, s->split_k > 1 ? s->split_k : 1);
}

/* wgrad split-K: the last slice's loop runs to wg_K_padded(split_k). (Without split-K the K
 * extent is below K_gemm + tile_k, and tensor_bytes keeps K_gemm <= 2^30; dgrad's is the record
 * field gemm_k_padded, engine-contract §6.) */
static int k_loop_end(const rk_spec *s, const rk_problem *p, rk_buf *msg)
{
    long long end;
    if (s->family != RK_FAMILY_WGRAD || s->split_k <= 1)
        return 0;
    end = k_extent(s, p);
    if (end <= RK_INT32_MAX)
        return 0;
    rk_buf_printf(msg,
                  "the K loop runs to roundup(%s, tile_k*split_k) = %lld, outside int32 "
                  "(%s = %lld, tile_k = %lld, split_k = %lld)",
                  m_formula(p), end, m_formula(p), out_m(p), s->tile_k, s->split_k);
    return 1;
}

/* wgrad split-K: block_id z runs over groups*split_k (split_k = 0: the caller's ks_count). */
static int grid_z(const rk_spec *s, const rk_problem *p, rk_buf *msg)
{
    long long last;
    if (s->family != RK_FAMILY_WGRAD || s->split_k <= 1)
        return 0;
    last = p->groups * s->split_k - 1;
    if (last <= RK_INT32_MAX)
        return 0;
    rk_buf_puts(msg, "block_id z = groups*split_k - 1");
    reaches(msg, last);
    rk_buf_printf(msg, "groups = %lld, split_k = %lld)", p->groups, s->split_k);
    return 1;
}

/* The chiplet remap's super-tile width chiplet_wgm*grid_n is an i32 constant. */
static int chiplet_width(const rk_spec *s, const rk_problem *p, rk_buf *msg)
{
    long long gemm_n, grid_n, width;
    const char *name;
    if (!s->chiplet_swizzle || s->family == RK_FAMILY_DGRAD)
        return 0;
    gemm_n = s->family == RK_FAMILY_FWD ? rk_kpg(p) : filter_k(p);
    grid_n = rk_ceildiv(gemm_n, s->tile_n);
    width = s->chiplet_wgm * grid_n;
    if (width <= RK_INT32_MAX)
        return 0;
    name = s->family == RK_FAMILY_FWD ? "kpg" : k_formula(p);
    rk_buf_printf(msg,
                  "the chiplet super-tile width chiplet_wgm*ceil(%s/tile_n) = %lld is outside int32 "
                  "(chiplet_wgm = %lld, %s = %lld, tile_n = %lld)",
                  name, width, s->chiplet_wgm, name, gemm_n, s->tile_n);
    return 1;
}

/* -- the descriptors: every offset a load or store computes, over the padded grid -- */

/* input_offset's tap: in = out*stride + filt*dil - pad (builder order). */
static int tap(rk_buf *msg, const char *axis, const char *out, long long out_last, const char *stride_name,
               long long stride, const char *filt, long long filt_last, const char *dil_name, long long dil,
               const char *pad_name, long long pad, long long span[2])
{
    rk_term terms[3];
    long long bad;
    terms[0].name = out, terms[0].lo = 0, terms[0].hi = out_last;
    terms[0].coeff_name = stride_name, terms[0].coeff = stride;
    terms[1].name = filt, terms[1].lo = 0, terms[1].hi = filt_last;
    terms[1].coeff_name = dil_name, terms[1].coeff = dil;
    terms[2].name = pad_name, terms[2].lo = 1, terms[2].hi = 1;
    terms[2].coeff_name = "", terms[2].coeff = -pad;
    if (!linear(terms, 3, &bad, span))
        return 0;
    rk_buf_printf(msg, "the input coordinate %s = %s*%s + %s*%s - %s", axis, out, stride_name, filt, dil_name,
                  pad_name);
    reaches(msg, bad);
    span_text(msg, out, 0, out_last);
    rk_buf_printf(msg, ", %s = %lld, ", stride_name, stride);
    span_text(msg, filt, 0, filt_last);
    rk_buf_printf(msg, ", %s = %lld, %s = %lld)", dil_name, dil, pad_name, pad);
    return 1;
}

static void set_step(rk_step *step, const char *name, long long dim, const char *coord, long long lo, long long hi)
{
    step->name = name, step->dim = dim, step->coord = coord, step->lo = lo, step->hi = hi;
}

/* input_offset (X, NHWC) at m in [0, m_end), k in [0, k_end): m -> (n, [do,] ho, wo),
 * k -> ([z,] y, x, c). */
static int input_view(const rk_problem *p, long long m_end, long long k_end, const char *tensor, long long eb,
                      rk_buf *msg)
{
    long long ho = rk_problem_ho(p), wo = rk_problem_wo(p), cpg = rk_cpg(p);
    long long n_last = rk_floordiv(m_end - 1, rk_out_depth(p) * ho * wo);
    long long y_last, z_last, hi[2], wi[2], di[2];
    rk_step steps[4];
    int n = 0;
    if (p->has_3d) {
        y_last = p->Y - 1;
        z_last = rk_floordiv(k_end - 1, cpg * p->X * p->Y);
    } else {
        y_last = rk_floordiv(k_end - 1, cpg * p->X);
        z_last = 0;
    }
    if (tap(msg, "hi", "ho", ho - 1, "sH", p->sH, "y", y_last, "dH", p->dH, "pH", p->pH, hi))
        return 1;
    if (tap(msg, "wi", "wo", wo - 1, "sW", p->sW, "x", p->X - 1, "dW", p->dW, "pW", p->pW, wi))
        return 1;
    if (p->has_3d) {
        if (tap(msg, "di", "do", rk_problem_do(p) - 1, "sD", p->sD, "z", z_last, "dD", p->dD, "pD", p->pD, di))
            return 1;
        set_step(&steps[n++], "Di", p->Di, "di", di[0], di[1]);
    }
    set_step(&steps[n++], "Hi", p->Hi, "hi", hi[0], hi[1]);
    set_step(&steps[n++], "Wi", p->Wi, "wi", wi[0], wi[1]);
    set_step(&steps[n++], "C", p->C, "c", 0, p->C - 1);
    return check_offset(msg, "", tensor, "n", 0, n_last, steps, n, eb);
}

static int fwd_offsets(const rk_spec *s, const rk_problem *p, rk_buf *msg)
{
    long long m_end = rk_roundup(out_m(p), s->tile_m), k_end = k_extent(s, p);
    long long kpg = rk_kpg(p), n_end = rk_roundup(kpg, s->tile_n);
    rk_step step;
    if (input_view(p, m_end, k_end, "X", rk_spec_elem_bytes(s->dtype_a), msg))
        return 1;
    set_step(&step, k_formula(p), filter_k(p), "k", 0, k_end - 1);
    if (check_offset(msg, "", "W", "k_out", 0, n_end - 1 + p->K - kpg, &step, 1, rk_spec_elem_bytes(s->dtype_b)))
        return 1;
    set_step(&step, "K", p->K, "k", 0, p->K - kpg + n_end - 1);
    return check_offset(msg, "", "Y", "m", 0, m_end - 1, &step, 1, rk_spec_elem_bytes(s->dtype_d));
}

static int wgrad_offsets(const rk_spec *s, const rk_problem *p, rk_buf *msg)
{
    long long wg_n = filter_k(p), kpg = rk_kpg(p), cpg = rk_cpg(p);
    long long m_end = rk_roundup(kpg, s->tile_m), n_end = rk_roundup(wg_n, s->tile_n);
    long long k_end = k_extent(s, p);
    rk_step step;
    set_step(&step, "K", p->K, "k_out", 0, p->K - kpg + m_end - 1);
    if (check_offset(msg, "", "dY", "k", 0, k_end - 1, &step, 1, rk_spec_elem_bytes(s->dtype_a)))
        return 1;
    if (rk_is_pointwise(p)) {
        set_step(&step, "C", p->C, "c", 0, p->C - cpg + n_end - 1);
        if (check_offset(msg, "", "X", "k", 0, k_end - 1, &step, 1, rk_spec_elem_bytes(s->dtype_b)))
            return 1;
    } else if (input_view(p, k_end, n_end, "X", rk_spec_elem_bytes(s->dtype_b), msg)) {
        return 1;
    }
    set_step(&step, k_formula(p), wg_n, "n", 0, n_end - 1);
    return check_offset(msg, "", "dW", "k_out", 0, m_end - 1 + p->K - kpg, &step, 1,
                        rk_atomic_split_k(s) ? 1 : rk_spec_elem_bytes(s->dtype_d));
}

static void set_term(rk_term *t, const char *name, long long lo, long long hi, const char *coeff_name, long long coeff)
{
    t->name = name, t->lo = lo, t->hi = hi, t->coeff_name = coeff_name, t->coeff = coeff;
}

/* The record field of that name (rk_sub_gemm_fields order). */
static long long field(const rk_sub_gemm *r, const char *name)
{
    int i;
    for (i = 0; i < RK_SUB_GEMM_FIELDS; i++) { /* the same literal, usually: the pointer first */
        const char *f = rk_sub_gemm_fields[i];
        if (f == name || (f[0] == name[0] && strcmp(f, name) == 0))
            return r->v[i];
    }
    return 0;
}

/* check_linear of index*stride + offset, the stride and offset fields of the record r (index in 0..last). */
static int check_strided(rk_buf *msg, const char *pre, const char *result, const rk_sub_gemm *r, const char *index,
                         long long last, const char *stride_key, const char *offset_key, long long span[2])
{
    rk_term terms[2];
    long long offset = field(r, offset_key);
    set_term(&terms[0], index, 0, last, stride_key, field(r, stride_key));
    set_term(&terms[1], offset_key, offset, offset, "", 1);
    return check_linear(msg, pre, result, terms, 2, span);
}

/* One sub-GEMM's loads and stores (build_dgrad's descriptors over the record's padded tiles). */
static int dgrad_record(const rk_spec *s, const rk_problem *p, int index, const rk_sub_gemm *r, rk_buf *msg)
{
    char pre[32];
    long long m_end = field(r, "num_m_tiles") * s->tile_m;
    long long n_end, hw, img_last, yx_last, ydot_last, xdot_last, kpg = rk_kpg(p);
    long long h_slice = field(r, "h_slice"), w_slice = field(r, "w_slice");
    long long x_dot = field(r, "x_dot_slice"), ho[2], wo[2], y[2], x[2], hi[2], wi[2];
    long long cpg = rk_cpg(p);
    long long eb_d = s->split_k > 1 ? 1 : rk_spec_elem_bytes(s->dtype_d);
    rk_term terms[3];
    rk_step steps[3];
    sprintf(pre, "sub-GEMM %d: ", index);
    if (m_end - 1 > RK_INT32_MAX) {
        rk_buf_printf(msg, "%sthe m index num_m_tiles*tile_m - 1", pre);
        reaches(msg, m_end - 1);
        rk_buf_printf(msg, "gemm_m = %lld, tile_m = %lld)", field(r, "gemm_m"), s->tile_m);
        return 1;
    }
    n_end = field(r, "num_n_tiles") * s->tile_n;
    hw = h_slice * w_slice;
    img_last = rk_floordiv(m_end - 1, hw);
    yx_last = rk_floordiv(field(r, "gemm_k_padded") - 1, kpg);
    ydot_last = rk_floordiv(yx_last, x_dot);
    xdot_last = x_dot - 1 < yx_last ? x_dot - 1 : yx_last;
    set_term(&terms[0], "htl", 0, h_slice - 1, "", 1);
    set_term(&terms[1], "h_begin", field(r, "h_begin"), field(r, "h_begin"), "", 1);
    set_term(&terms[2], "ydot", 0, ydot_last, "a_h_coeff", field(r, "a_h_coeff"));
    if (check_linear(msg, pre, "the dY row ho", terms, 3, ho))
        return 1;
    set_term(&terms[0], "wtl", 0, w_slice - 1, "", 1);
    set_term(&terms[1], "w_begin", field(r, "w_begin"), field(r, "w_begin"), "", 1);
    set_term(&terms[2], "xdot", 0, xdot_last, "a_w_coeff", field(r, "a_w_coeff"));
    if (check_linear(msg, pre, "the dY column wo", terms, 3, wo))
        return 1;
    set_step(&steps[0], "Ho", rk_problem_ho(p), "ho", ho[0], ho[1]);
    set_step(&steps[1], "Wo", rk_problem_wo(p), "wo", wo[0], wo[1]);
    set_step(&steps[2], "K", p->K, "k", 0, p->K - 1);
    if (check_offset(msg, pre, "dY", "n", 0, img_last, steps, 3, rk_spec_elem_bytes(s->dtype_a)))
        return 1;
    if (check_strided(msg, pre, "the filter row y", r, "ydot", ydot_last, "b_y_stride", "b_y_offset", y))
        return 1;
    if (check_strided(msg, pre, "the filter column x", r, "xdot", xdot_last, "b_x_stride", "b_x_offset", x))
        return 1;
    set_step(&steps[0], "Y", p->Y, "y", y[0], y[1]);
    set_step(&steps[1], "X", p->X, "x", x[0], x[1]);
    set_step(&steps[2], "cpg", cpg, "c", 0, n_end - 1);
    if (check_offset(msg, pre, "W", "k_out", 0, p->K - 1, steps, 3, rk_spec_elem_bytes(s->dtype_b)))
        return 1;
    if (check_strided(msg, pre, "the dX row hi", r, "htl", h_slice - 1, "d_h_stride", "d_h_offset", hi))
        return 1;
    if (check_strided(msg, pre, "the dX column wi", r, "wtl", w_slice - 1, "d_w_stride", "d_w_offset", wi))
        return 1;
    set_step(&steps[0], "Hi", p->Hi, "hi", hi[0], hi[1]);
    set_step(&steps[1], "Wi", p->Wi, "wi", wi[0], wi[1]);
    set_step(&steps[2], "C", p->C, "c", 0, p->C - cpg + n_end - 1);
    return check_offset(msg, pre, "dX", "n", 0, img_last, steps, 3, eb_d);
}

static int dgrad_offsets(const rk_spec *s, const rk_problem *p, rk_arena *arena, rk_buf *msg)
{
    rk_sub_gemm *records;
    int n, i;
    long long total = 0;
    rk_error err;
    rk_error_init(&err, arena);
    if (rk_dgrad_sub_gemms(p, s->tile_m, s->tile_n, s->tile_k, s->split_k, arena, &records, &n, &err))
        return 0;   /* a record outside int32 is E_RANGE's, reported by mode spec's print */
    for (i = 0; i < n; i++) {
        if (dgrad_record(s, p, i, &records[i], msg))
            return 1;
        total = field(&records[i], "block_start")
                + field(&records[i], "num_m_tiles") * field(&records[i], "num_n_tiles");
    }
    if (total - 1 <= RK_INT32_MAX)
        return 0;
    rk_buf_puts(msg, "block_id x = (tiles over all sub-GEMMs) - 1");
    reaches(msg, total - 1);
    rk_buf_printf(msg, "sub-GEMMs = %d, tile_m = %lld, tile_n = %lld)", n, s->tile_m, s->tile_n);
    return 1;
}

/* CONV_INT32_RANGE: the first i32 of the kernel that would not fit. */
int rk_int32_range(const rk_spec *s, const rk_problem *p, rk_arena *arena, rk_buf *msg)
{
    if (tensor_bytes(s, p, msg) || k_loop_end(s, p, msg) || grid_z(s, p, msg) || chiplet_width(s, p, msg))
        return 1;
    if (s->family == RK_FAMILY_FWD)
        return fwd_offsets(s, p, msg);
    if (s->family == RK_FAMILY_WGRAD)
        return wgrad_offsets(s, p, msg);
    return dgrad_offsets(s, p, arena, msg);
}

/* ---- CONV_KERNEL_SIZE: the IR ops of the kernel (docs/kernels.md §9) ----
 * Upper bounds of the ops each builder piece creates, counting every constant as if it were
 * not cached and every x*1, x/1, x+0 as if it made an op. */

/* One call of the family's descriptor for operand 'a', 'b' or 'd'. */
static long long desc_ops(const rk_spec *s, const rk_problem *p, char operand)
{
    long long input_ops = p->has_3d ? 74 : 53;
    if (s->family == RK_FAMILY_DGRAD)
        return operand == 'a' ? 38 : operand == 'b' ? 32 : 31;
    if (operand == 'a' && s->family == RK_FAMILY_FWD)
        return input_ops;
    if (operand == 'b' && s->family == RK_FAMILY_WGRAD && !rk_is_pointwise(p))
        return input_ops;
    return 11;
}

/* dgrad's search probes, ceil(log2(max(n, 2))) + 1, for n <= the candidate count. */
static long long probes_bound(const rk_problem *p)
{
    long long rows, cols, n, bits = 0;
    rk_sub_gemm_candidates(p, &rows, &cols);
    n = rows * cols < 2 ? 2 : rows * cols;
    for (n = n - 1; n > 0; n >>= 1)   /* Python's (n - 1).bit_length() */
        bits++;
    return bits + 1;
}

/* build_dgrad.c's rk_zero_untouched, emitted only with a stride > 1 (stride 1 stores every dX
 * position) and without split-K atomics: at most 48 ops and 14 per run of rows or columns (at
 * most one run per candidate row or column). */
static long long zero_ops_bound(const rk_spec *s, const rk_problem *p)
{
    long long rows, cols;
    if (s->family != RK_FAMILY_DGRAD || rk_atomic_split_k(s) || (p->sH == 1 && p->sW == 1))
        return 0;
    rk_sub_gemm_candidates(p, &rows, &cols);
    return 48 + 14 * (rows + cols);
}

rk_ops_bound rk_kernel_ops_bound(const rk_spec *s, const rk_problem *p, const rk_target *t)
{
    rk_atom atom = rk_atom_for(t, s->dtype_a, s->warp_tile_m, s->warp_tile_n, s->warp_tile_k);
    long long mfm = s->tile_m / s->warp_m / s->warp_tile_m, mfn = s->tile_n / s->warp_n / s->warp_tile_n;
    long long kk = s->tile_k / s->warp_tile_k, block = rk_block_size(s), vec[3];
    long long store_a, store_b, passes_a, passes_b, d_a, d_b, d_d, load, reads, plain_read, read_a, read_b;
    long long mma, plan, steps, before, per_step, slots, acc, epilogue, decode, rest;
    int outer_a = s->lds_k_outer && s->family == RK_FAMILY_WGRAD;
    int outer_b = s->lds_k_outer && s->family != RK_FAMILY_FWD, row_a, row_b, side;
    rk_ops_bound bound;
    rk_load_widths(s, p, vec);
    /* the LDS store of one loaded chunk: one wide store, or one per element along mn */
    row_a = s->family == RK_FAMILY_WGRAD;
    row_b = s->family == RK_FAMILY_WGRAD || (s->family == RK_FAMILY_DGRAD && vec[1] > 1);
    store_a = row_a && !outer_a ? 4 * vec[0] : 1;
    store_b = row_b && !outer_b ? 4 * vec[1] : 1;
    passes_a = rk_ceildiv(s->tile_m * s->tile_k / vec[0], block);
    passes_b = rk_ceildiv(s->tile_n * s->tile_k / vec[1], block);
    d_a = desc_ops(s, p, 'a'), d_b = desc_ops(s, p, 'b'), d_d = desc_ops(s, p, 'd');
    load = passes_a * (19 + d_a + store_a) + passes_b * (19 + d_b + store_b);
    /* the MMA phase: per kk step the fragments, the MMAs and two schedule hints */
    reads = atom.frag / (s->wave_size == 64 ? 4 : 8);
    plain_read = strcmp(atom.kind, "wmma_gfx12") == 0 ? 5 : 1;
    read_a = outer_a ? 2 * reads - 1 : plain_read;
    read_b = outer_b ? 2 * reads - 1 : plain_read;
    mma = 2 + kk * (mfm * read_a + mfn * read_b + mfm * mfn + 2);
    plan = (outer_a || outer_b) && s->wave_size == 64 ? 8 : 0;
    for (side = 0; side < 2; side++) {
        int outer = side ? outer_b : outer_a;
        long long count = side ? mfn : mfm;
        plan += outer ? 14 + 2 * count + 2 * kk * reads : 7 + 2 * count + 2 * kk;
    }
    /* the K loop: the ops before the first step, and each step's */
    if (s->unroll_k || strcmp(s->pipeline, "basic") == 0 || s->async_dma)
        steps = rk_unrolled_k_iters(s, p);
    else
        steps = 1;
    if (s->unroll_k) {
        long long buffers = rk_double_buffer(s) ? 2 : 1;
        before = 2 * buffers + 1 + (buffers == 2 ? load + 1 : 0), per_step = 4 + load + mma;
    } else if (strcmp(s->pipeline, "basic") == 0) {
        before = 3 + load, per_step = 4 + load + mma;
    } else if (s->async_dma) {
        rk_async_tile tiles[2];
        long long issue = 0;
        int i;
        rk_async_tiles(s, p, tiles);
        for (i = 0; i < 2; i++) {
            long long dwords = rk_tile_dwords(s, &tiles[i]);  /* CONV_ASYNC_NO_DWORDS comes first */
            long long passes = dwords ? tiles[i].rows * tiles[i].cols / (dwords * 4 / tiles[i].elem_bytes) / block : 0;
            issue += passes * (17 + desc_ops(s, p, i == 0 ? 'a' : 'b'));
        }
        before = 27 + issue, per_step = 5 + issue + mma;
    } else {
        before = 0, per_step = 8 + load + mma;
    }
    /* the epilogue: per accumulator slot, and the cshuffle store passes */
    slots = mfm * mfn * atom.c_len;
    acc = 2 * ((s->bias != 0) + (s->scale != 1) + (s->relu != 0) + s->clamp_min.set + s->clamp_max.set);
    epilogue = 10 + 2 * mfm + 2 * mfm * mfn;
    if (strcmp(s->epilogue, "cshuffle") == 0) {
        long long store = 5, passes = rk_ceildiv(s->tile_m * s->tile_n / vec[2], block);
        if (rk_atomic_split_k(s))
            store = 1 + (4 * vec[2] > 10 ? 4 * vec[2] : 10);
        epilogue += slots * (5 + acc) + passes * (14 + d_d + store);
    } else {
        epilogue += slots * (4 + acc + d_d + (rk_atomic_split_k(s) ? 11 : 5));
    }
    if (s->family == RK_FAMILY_DGRAD)
        decode = 103 + 11 * probes_bound(p) + zero_ops_bound(s, p);
    else
        decode = (s->family == RK_FAMILY_FWD ? 9 : 15) + (s->chiplet_swizzle ? 30 : 0);
    rest = 9 + decode + 3 + 4 + plan + before + 1;
    bound.total = rest + steps * per_step + epilogue;
    bound.steps = steps, bound.per_step = per_step, bound.epilogue = epilogue;
    return bound;
}

int rk_kernel_size(const rk_spec *s, const rk_problem *p, const rk_target *t, rk_buf *msg)
{
    rk_ops_bound bound = rk_kernel_ops_bound(s, p, t);
    if (bound.total <= RK_MAX_KERNEL_OPS)
        return 0;
    rk_buf_printf(msg,
                  "the kernel would have up to %lld IR ops, more than %lld (%lld K steps of up to %lld, "
                  "an epilogue of up to %lld)",
                  bound.total, RK_MAX_KERNEL_OPS, bound.steps, bound.per_step, bound.epilogue);
    return 1;
}
