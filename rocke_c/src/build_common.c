/* build_common.c: the pieces every implicit-GEMM kernel is made of (docs/kernels.md): the
 * kernel context, thread and grid decomposition, buffer resources, LDS tiles, the
 * global->LDS tile loader, the MMA phase, the K loops and the epilogues. The directions
 * (build_fwd.c, build_wgrad.c, build_dgrad.c) supply the params, the block decode and the
 * three address descriptors.
 *
 * Twin of rocke_py/engine/build_common.py, function for function in the same order. Values
 * are created in the order of the Python statements; every temporary is named, so no
 * argument list holds two value-creating calls (docs/reference/llvm-ir.md §6). Python lists are
 * arena arrays. Once the build has failed (kc->error or the builder's sticky failure) the
 * values are NULL: the code below never reads a value's fields without checking it. */
#include <string.h>
#include "build.h"

static rk_builder *common_b(rk_kc *kc) { return &kc->b; }

static int failed(const rk_kc *kc) { return kc->error != NULL || kc->b.failed; }

/* An arena array of n values (NULL entries); NULL and a failure when out of memory. */
static rk_val *values(rk_kc *kc, long long n)
{
    rk_val *items = rk_alloc(kc->arena, (size_t)(n > 0 ? n : 1) * sizeof *items);
    if (!items)
        rk_build_common_fail(kc, "out of memory");
    return items;
}

/* The first failure sticks; a builder failure that came first is reported instead. */
void rk_build_common_fail(rk_kc *kc, const char *message)
{
    if (kc->error || kc->b.failed)
        return;
    kc->error = rk_ir_printf(kc->arena, "build: %s", message);
    if (!kc->error)
        kc->error = "build: out of memory";
}

/* ---- small integer helpers ---- */

rk_val rk_c(rk_kc *kc, long long value) { return rk_b_const_i32(&kc->b, value); }

/* x op value, the constant made first. */
static rk_val op_c(rk_kc *kc, rk_binary_op op, rk_val x, long long value)
{
    rk_val cv = rk_c(kc, value);
    return op(&kc->b, x, cv);
}

/* x + value, with no op when value is 0. */
rk_val rk_add_c(rk_kc *kc, rk_val x, long long value) { return value == 0 ? x : op_c(kc, rk_b_add, x, value); }

rk_val rk_mul_c(rk_kc *kc, rk_val x, long long value) { return value == 1 ? x : op_c(kc, rk_b_mul, x, value); }

rk_val rk_div_c(rk_kc *kc, rk_val x, long long value) { return value == 1 ? x : op_c(kc, rk_b_div, x, value); }

rk_val rk_mod_c(rk_kc *kc, rk_val x, long long value)
{
    return value == 1 ? rk_c(kc, 0) : op_c(kc, rk_b_mod, x, value);
}

/* 0 <= x < bound, as one unsigned compare. */
rk_val rk_below(rk_kc *kc, rk_val x, long long bound)
{
    rk_val cv = rk_c(kc, bound);
    return rk_b_cmp(&kc->b, "ult", x, cv);
}

rk_val rk_below_value(rk_kc *kc, rk_val x, rk_val bound) { return rk_b_cmp(&kc->b, "ult", x, bound); }

rk_val rk_all_of(rk_kc *kc, const rk_val *conds, int n)
{
    rk_val acc = conds[0];
    int i;
    for (i = 1; i < n; i++)
        acc = rk_b_and(&kc->b, acc, conds[i]);
    return acc;
}

/* x < x_end and y < y_end: a descriptor's two bounds. */
rk_val rk_both_below(rk_kc *kc, rk_val x, long long x_end, rk_val y, long long y_end)
{
    rk_val conds[2];
    conds[0] = rk_below(kc, x, x_end);
    conds[1] = rk_below(kc, y, y_end);
    return rk_all_of(kc, conds, 2);
}

/* The buffer byte offset of element `off`, or past the buffer when not valid. */
rk_val rk_byte_offset(rk_kc *kc, rk_val off, rk_val valid, long long eb)
{
    rk_val nbytes = rk_mul_c(kc, off, eb);
    rk_val oob = rk_c(kc, RK_OOB_OFFSET);
    return rk_b_select(&kc->b, valid, nbytes, oob);
}

/* The largest power of two, at most 16, dividing both sizes. */
long long rk_pow2_align(long long a, long long b)
{
    long long align = 16;
    while (rk_floormod(a, align) != 0 || rk_floormod(b, align) != 0)
        align /= 2;
    return align;
}

long long rk_build_common_elem_bytes(const char *elem) { return strcmp(elem, "f32") == 0 ? 4 : 2; }

/* ---- the kernel context ---- */

/* The launch grid in workgroups, x y z (docs/kernels.md §2, §4); wgrad split_k = 0 counts z
 * per runtime slice. */
static rk_attr *launch_grid(const rk_plan *plan, rk_arena *arena)
{
    const rk_spec *spec = &plan->spec;
    long long grid[3], slices = 1;
    rk_attr *list = rk_attr_list(arena);
    int i;
    if (spec->family == RK_FAMILY_DGRAD) {
        grid[0] = 0;
        for (i = 0; i < plan->n_sub_gemms; i++)
            grid[0] += plan->sub_gemms[i].v[1] * plan->sub_gemms[i].v[2];
        grid[1] = plan->problem.groups;
        grid[2] = spec->split_k > 1 ? spec->split_k : 1;
    } else {
        if (spec->family == RK_FAMILY_WGRAD && spec->split_k > 1)
            slices = spec->split_k;
        grid[0] = rk_ceildiv(plan->gemm[1], spec->tile_n);
        grid[1] = rk_ceildiv(plan->gemm[0], spec->tile_m);
        grid[2] = plan->problem.groups * slices;
    }
    for (i = 0; i < 3; i++)
        rk_attr_list_append(arena, list, rk_attr_int(arena, grid[i]));
    return list;
}

void rk_begin_kernel(rk_kc *kc, const rk_plan *plan, rk_arena *arena)
{
    const rk_spec *spec = &plan->spec;
    rk_attrs attrs = {NULL, 0, 0};
    /* kc is the arena's, so already zeroed (no memset of its 12 KB) */
    kc->arena = arena;
    kc->plan = plan;
    kc->spec = spec;
    kc->problem = &plan->problem;
    kc->target = plan->target;
    rk_attrs_set(arena, &attrs, "max_workgroup_size", rk_attr_int(arena, rk_block_size(spec)));
    if (spec->waves_per_eu.set)
        rk_attrs_set(arena, &attrs, "waves_per_eu", rk_attr_int(arena, spec->waves_per_eu.v));
    rk_attrs_set(arena, &attrs, "grid", launch_grid(plan, arena));
    rk_attrs_set(arena, &attrs, "wave_size", rk_attr_int(arena, spec->wave_size));
    if (spec->family == RK_FAMILY_WGRAD && spec->split_k == 0)
        rk_attrs_set(arena, &attrs, "split_k_runtime", rk_attr_bool(arena, 1));
    rk_b_init(&kc->b, arena, plan->kernel_name, &attrs);
    /* validation kept it within RK_MAX_KERNEL_OPS: an op past it is an engine failure */
    kc->b.op_limit = plan->op_limit;
    kc->atom = rk_atom_for(plan->target, spec->dtype_a, spec->warp_tile_m, spec->warp_tile_n, spec->warp_tile_k);
}

rk_val rk_build_common_param(rk_kc *kc, const char *name)
{
    int i;
    for (i = 0; i < kc->n_params; i++)
        if (strcmp(kc->params[i].name, name) == 0)
            return kc->params[i].value;
    rk_build_common_fail(kc, "a param the direction did not add");
    return NULL;
}

void rk_build_common_set_param(rk_kc *kc, const char *name, rk_val value)
{
    if (kc->n_params == RK_BUILD_MAX_PARAMS) {
        rk_build_common_fail(kc, "too many params");
        return;
    }
    kc->params[kc->n_params].name = name;
    kc->params[kc->n_params].value = value;
    kc->n_params++;
}

/* The three tensors and their byte sizes: A and B read-only, D write-only unless atomic. */
void rk_add_tensor_params(rk_kc *kc, const char *const names[3], int atomic_d)
{
    const rk_spec *s = kc->spec;
    rk_arena *a = kc->arena;
    const char *elems[3];
    rk_attrs read_only = {NULL, 0, 0}, d_attrs = {NULL, 0, 0};
    int i;
    elems[0] = rk_mma_ir_elem(s->dtype_a);
    elems[1] = rk_mma_ir_elem(s->dtype_b);
    elems[2] = rk_mma_ir_elem(s->dtype_d);
    rk_attrs_set(a, &d_attrs, "noalias", rk_attr_bool(a, 1));
    if (!atomic_d)
        rk_attrs_set(a, &d_attrs, "writeonly", rk_attr_bool(a, 1));
    rk_attrs_set(a, &read_only, "noalias", rk_attr_bool(a, 1));
    rk_attrs_set(a, &read_only, "readonly", rk_attr_bool(a, 1));
    for (i = 0; i < 3; i++) {
        rk_val v = rk_b_param(&kc->b, names[i], elems[i] ? rk_ptr(a, elems[i]) : NULL, i < 2 ? &read_only : &d_attrs);
        rk_build_common_set_param(kc, names[i], v);
    }
    for (i = 0; i < 3; i++) {
        const char *bytes = rk_strcat3(a, names[i], "_bytes", NULL);
        rk_val v = bytes ? rk_b_param(&kc->b, bytes, "i32", NULL) : NULL;
        if (!bytes)
            rk_build_common_fail(kc, "out of memory");
        rk_build_common_set_param(kc, bytes ? bytes : "", v);
    }
}

/* tid, lane, and the wave's (wave_m, wave_n) in the warp grid (wave-uniform). */
void rk_thread_prologue(rk_kc *kc)
{
    rk_builder *b = common_b(kc);
    const rk_spec *s = kc->spec;
    rk_val wave_raw, wave;
    kc->tid = rk_b_thread_id(b);
    kc->lane = rk_b_lane_id(b);
    wave_raw = rk_div_c(kc, kc->tid, s->wave_size);
    wave = rk_b_readfirstlane(b, wave_raw);
    kc->wave = wave;
    kc->wave_m = rk_div_c(kc, wave, s->warp_n);
    kc->wave_n = rk_mod_c(kc, wave, s->warp_n);
}

/* (m_tile, n_tile) of a flat block id under the XCD-aware super-tile remap (docs/kernels.md §3). */
void rk_chiplet_remap(rk_kc *kc, rk_val flat, long long grid_m, long long grid_n, rk_val *m_tile, rk_val *n_tile)
{
    rk_builder *b = common_b(kc);
    const rk_spec *s = kc->spec;
    long long total = grid_m * grid_n, width;
    rk_val group_id, first_m, grid_m_c, left, wgm_c, group_size, in_group, m_in;
    if (rk_floormod(total, s->chiplet_num_xcds * s->chiplet_chunk_size) == 0) {
        rk_val xcd = rk_mod_c(kc, flat, s->chiplet_num_xcds);
        rk_val local = rk_div_c(kc, flat, s->chiplet_num_xcds);
        rk_val chunk_id = rk_div_c(kc, local, s->chiplet_chunk_size);
        rk_val chunk_base = rk_mul_c(kc, chunk_id, s->chiplet_num_xcds);
        rk_val chunk_at = rk_b_add(b, chunk_base, xcd);
        rk_val chunk_start = rk_mul_c(kc, chunk_at, s->chiplet_chunk_size);
        rk_val within = rk_mod_c(kc, local, s->chiplet_chunk_size);
        flat = rk_b_add(b, chunk_start, within);
    }
    width = s->chiplet_wgm * grid_n;
    group_id = rk_div_c(kc, flat, width);
    first_m = rk_mul_c(kc, group_id, s->chiplet_wgm);
    grid_m_c = rk_c(kc, grid_m);
    left = rk_b_sub(b, grid_m_c, first_m);
    wgm_c = rk_c(kc, s->chiplet_wgm);
    group_size = rk_b_min(b, left, wgm_c);
    in_group = rk_mod_c(kc, flat, width);
    m_in = rk_b_mod(b, in_group, group_size);
    *m_tile = rk_b_add(b, first_m, m_in);
    *n_tile = rk_b_div(b, in_group, group_size);
}

/* m0, n0 from block ids x (N tiles) and y (M tiles), remapped under chiplet_swizzle. */
void rk_grid_tiles(rk_kc *kc)
{
    const rk_spec *s = kc->spec;
    rk_val bx = rk_b_block_id(&kc->b, 0);
    rk_val by = rk_b_block_id(&kc->b, 1);
    rk_val m_tile, n_tile;
    if (s->chiplet_swizzle) {
        long long grid_m = rk_ceildiv(kc->plan->gemm[0], s->tile_m);
        long long grid_n = rk_ceildiv(kc->plan->gemm[1], s->tile_n);
        rk_val row = rk_mul_c(kc, by, grid_n);
        rk_val flat = rk_b_add(&kc->b, row, bx);
        rk_chiplet_remap(kc, flat, grid_m, grid_n, &m_tile, &n_tile);
    } else {
        m_tile = by;
        n_tile = bx;
    }
    kc->m0 = rk_mul_c(kc, m_tile, s->tile_m);
    kc->n0 = rk_mul_c(kc, n_tile, s->tile_n);
}

/* The param `<name>_bytes` (no values are created by a lookup). */
static rk_val bytes_param(rk_kc *kc, const char *name)
{
    char key[64];
    size_t n = strlen(name);
    if (n + sizeof "_bytes" > sizeof key) {
        rk_build_common_fail(kc, "param name too long");
        return NULL;
    }
    memcpy(key, name, n);
    memcpy(key + n, "_bytes", sizeof "_bytes");
    return rk_build_common_param(kc, key);
}

void rk_make_rsrcs(rk_kc *kc, const char *const names[3], int with_d)
{
    rk_builder *b = common_b(kc);
    kc->rsrc_a = rk_b_make_buffer_rsrc(b, rk_build_common_param(kc, names[0]), bytes_param(kc, names[0]));
    kc->rsrc_b = rk_b_make_buffer_rsrc(b, rk_build_common_param(kc, names[1]), bytes_param(kc, names[1]));
    if (with_d)
        kc->rsrc_d = rk_b_make_buffer_rsrc(b, rk_build_common_param(kc, names[2]), bytes_param(kc, names[2]));
}

/* ---- the input tensor's im2col view (fwd A, wgrad B; docs/reference/conv-semantics.md §2.2, §11) ---- */

/* group * per_group, or NULL for an ungrouped problem. */
rk_val rk_group_base(rk_kc *kc, long long per_group)
{
    if (!kc->group)
        return NULL;
    return rk_mul_c(kc, kc->group, per_group);
}

rk_val rk_add_opt(rk_kc *kc, rk_val x, rk_val y) { return y ? rk_b_add(&kc->b, x, y) : x; }

rk_val rk_row_offset(rk_kc *kc, rk_val row, long long width, long long per_group, rk_val col)
{
    rk_val start = rk_mul_c(kc, row, width);
    rk_val gb = rk_group_base(kc, per_group);
    rk_val grouped = rk_add_opt(kc, start, gb);
    return rk_b_add(&kc->b, grouped, col);
}

rk_val rk_group_row_offset(rk_kc *kc, rk_val row, long long per_group, long long width, rk_val col)
{
    rk_val gb = rk_group_base(kc, per_group);
    rk_val k_out = rk_add_opt(kc, row, gb);
    rk_val start = rk_mul_c(kc, k_out, width);
    return rk_b_add(&kc->b, start, col);
}

/* x in a mixed radix, innermost first: x % r0, (x / r0) % r1, ..., then what is left (out[n]). */
static void digits(rk_kc *kc, rk_val x, const long long *radices, int n, rk_val *out)
{
    int i;
    for (i = 0; i < n; i++) {
        out[i] = rk_mod_c(kc, x, radices[i]);
        x = rk_div_c(kc, x, radices[i]);
    }
    out[n] = x;
}

/* X (NHWC) at GEMM (m, k): m -> (n, [do,] ho, wo), k -> ([z,] y, x, c). */
rk_desc rk_input_offset(rk_kc *kc, rk_val m, rk_val k, long long m_end, long long k_end)
{
    rk_builder *b = common_b(kc);
    const rk_problem *p = kc->problem;
    long long cpg = rk_cpg(p);
    int dims = p->has_3d ? 3 : 2, n_conds = 0;
    long long m_radix[3], k_radix[3];
    rk_val md[4], kd[4], wo, ho, n, dd = NULL, ch, x, y, z = NULL, hi, wi, di = NULL;
    rk_val conds[5], spatial;
    rk_desc out;
    m_radix[0] = rk_problem_wo(p), m_radix[1] = rk_problem_ho(p), m_radix[2] = p->has_3d ? rk_problem_do(p) : 1;
    k_radix[0] = cpg, k_radix[1] = p->X, k_radix[2] = p->Y;
    digits(kc, m, m_radix, dims, md);
    digits(kc, k, k_radix, dims, kd);
    wo = md[0], ho = md[1], n = md[dims];
    ch = kd[0], x = kd[1], y = kd[2];
    if (p->has_3d)
        dd = md[2], z = kd[3];
    hi = rk_tap(kc, ho, p->sH, y, p->dH, p->pH);
    wi = rk_tap(kc, wo, p->sW, x, p->dW, p->pW);
    conds[n_conds++] = rk_below(kc, hi, p->Hi);
    conds[n_conds++] = rk_below(kc, wi, p->Wi);
    if (p->has_3d) {
        di = rk_tap(kc, dd, p->sD, z, p->dD, p->pD);
        conds[n_conds++] = rk_below(kc, di, p->Di);
    }
    conds[n_conds++] = rk_below(kc, m, m_end);
    conds[n_conds++] = rk_below(kc, k, k_end);
    out.valid = rk_all_of(kc, conds, n_conds);
    if (p->has_3d) {
        rk_val nd = rk_mul_c(kc, n, p->Di);
        spatial = rk_b_add(b, nd, di);
    } else {
        spatial = n;
    }
    out.off = rk_pixel_offset(kc, spatial, (rk_coord){hi, p->Hi}, (rk_coord){wi, p->Wi}, (rk_coord){ch, p->C}, cpg);
    return out;
}

rk_val rk_pixel_offset(rk_kc *kc, rk_val image, rk_coord h, rk_coord w, rk_coord c, long long per_group)
{
    rk_builder *b = common_b(kc);
    rk_val ih = rk_mul_c(kc, image, h.extent);
    rk_val row = rk_b_add(b, ih, h.at);
    rk_val rw = rk_mul_c(kc, row, w.extent);
    rk_val pixel = rk_b_add(b, rw, w.at);
    rk_val base = rk_mul_c(kc, pixel, c.extent);
    rk_val gb = rk_group_base(kc, per_group);
    rk_val grouped = rk_add_opt(kc, base, gb);
    return rk_b_add(b, grouped, c.at);
}

/* out*stride - pad + filt*dil: the input coordinate a filter tap reads. */
rk_val rk_tap(rk_kc *kc, rk_val out, long long stride, rk_val filt, long long dil, long long pad)
{
    rk_val o = rk_mul_c(kc, out, stride);
    rk_val f = rk_mul_c(kc, filt, dil);
    rk_val s = rk_b_add(&kc->b, o, f);
    return rk_add_c(kc, s, -pad);
}

/* ---- tiles ---- */

/* IR_ELEM[dtype] (a failure for a dtype outside it). */
static const char *ir_elem(rk_kc *kc, const char *dtype)
{
    const char *elem = rk_mma_ir_elem(dtype);
    if (!elem) {
        rk_build_common_fail(kc, "a dtype outside IR_ELEM");
        return "f16";
    }
    return elem;
}

/* The widest power of two <= width (itself a power of two) that divides extent: a chunk
 * must not run past its tile row (docs/kernels.md §5). */
static long long fit_width(long long width, long long extent)
{
    while (rk_floormod(extent, width) != 0)
        width /= 2;
    return width;
}

/* A K-outer tile is loaded along mn (one wide store per chunk); a tile loaded along k takes
 * the widest width that divides tile_k. */
static rk_tile_operand operand_tile(rk_kc *kc, const char *name, const char *dtype, const rk_lds_tile *lds,
                                    long long mn, long long vec_width, int axis_col)
{
    rk_tile_operand t;
    axis_col = lds->k_outer ? 0 : axis_col;
    if (axis_col)
        vec_width = fit_width(vec_width, kc->spec->tile_k);
    t.name = name;
    t.elem = ir_elem(kc, dtype);
    t.rows = lds->rows;
    t.cols = lds->cols;
    t.mn = mn;
    t.vec = vec_width;
    t.axis_col = axis_col;
    t.k_outer = lds->k_outer;
    return t;
}

rk_val rk_alloc_tile(rk_kc *kc, const rk_tile_operand *t)
{
    return rk_b_smem_alloc(&kc->b, rk_smem(kc->arena, t->elem, t->rows, t->cols), 0);
}

/* Every chunk this thread loads for one K step of tile t (docs/kernels.md §5). */
rk_staged_list rk_global_load_tile(rk_kc *kc, const rk_tile_operand *t, rk_val rsrc, rk_val mn0, rk_val k0,
                                   rk_desc_fn desc)
{
    rk_builder *b = common_b(kc);
    const rk_spec *s = kc->spec;
    long long ktile = s->tile_k, block = rk_block_size(s), chunks, passes, p;
    rk_staged_list staged;
    chunks = rk_floordiv(t->mn * ktile, t->vec);
    passes = rk_ceildiv(chunks, block);
    staged.n = 0;
    staged.items = rk_alloc(kc->arena, (size_t)(passes > 0 ? passes : 1) * sizeof *staged.items);
    if (!staged.items) {
        rk_build_common_fail(kc, "out of memory");
        return staged;
    }
    for (p = 0; p < passes; p++) {
        rk_val chunk = rk_add_c(kc, kc->tid, p * block);
        rk_val mn, k, g_mn, g_k, guard = NULL, boff, value;
        rk_desc d;
        if (t->axis_col) {
            long long per_row = rk_floordiv(ktile, t->vec);
            rk_val kq;
            mn = rk_div_c(kc, chunk, per_row);
            kq = rk_mod_c(kc, chunk, per_row);
            k = rk_mul_c(kc, kq, t->vec);
        } else {
            long long per_col = rk_floordiv(t->mn, t->vec);
            rk_val mq = rk_mod_c(kc, chunk, per_col);
            mn = rk_mul_c(kc, mq, t->vec);
            k = rk_div_c(kc, chunk, per_col);
        }
        g_mn = rk_b_add(b, mn0, mn);
        g_k = rk_b_add(b, k0, k);
        d = desc(kc, g_mn, g_k);
        if ((p + 1) * block > chunks) {
            guard = rk_below(kc, chunk, chunks);
            d.valid = rk_b_and(b, d.valid, guard);
        }
        boff = rk_byte_offset(kc, d.off, d.valid, rk_build_common_elem_bytes(t->elem));
        value = rk_b_buffer_load(b, rsrc, boff, t->elem, t->vec);
        staged.items[staged.n].row = mn;
        staged.items[staged.n].col = k;
        staged.items[staged.n].value = value;
        staged.items[staged.n].guard = guard;
        staged.n++;
    }
    return staged;
}

/* The LDS stores of the staged chunks: one wide store along k, or one per element along mn. */
void rk_store_tile(rk_kc *kc, const rk_tile_operand *t, rk_val tile, const rk_staged_list *staged)
{
    rk_builder *b = common_b(kc);
    long long eb = rk_build_common_elem_bytes(t->elem), i, j;
    for (j = 0; j < staged->n; j++) {
        const rk_staged *chunk = &staged->items[j];
        rk_ir_op *guard_op = NULL;
        if (chunk->guard)
            guard_op = rk_b_if_begin(b, chunk->guard);
        if (t->k_outer) {
            rk_b_smem_store(b, tile, chunk->col, chunk->row, chunk->value, rk_pow2_align(t->vec * eb, t->cols * eb));
        } else if (t->axis_col) {
            rk_b_smem_store(b, tile, chunk->row, chunk->col, chunk->value, rk_pow2_align(t->vec * eb, t->cols * eb));
        } else {
            for (i = 0; i < t->vec; i++) {
                rk_val elem = t->vec == 1 ? chunk->value : rk_b_extract(b, chunk->value, i);
                rk_val row = rk_add_c(kc, chunk->row, i);
                rk_b_smem_store(b, tile, row, chunk->col, elem, eb);
            }
        }
        if (chunk->guard)
            rk_b_if_end(b, guard_op);
    }
}

/* ---- the MMA phase ---- */

static int kind(const rk_kc *kc, const char *kind) { return strcmp(kc->atom.kind, kind) == 0; }

/* conv-semantics §13: the mn lane and first k of a lane's A (or B) fragment. */
rk_frag_lanes rk_build_common_frag_lanes(rk_kc *kc, long long edge)
{
    const rk_atom *a = &kc->atom;
    rk_frag_lanes out;
    rk_val half;
    if (kind(kc, "mfma")) {
        rk_val group;
        out.mn = rk_mod_c(kc, kc->lane, edge);
        group = rk_div_c(kc, kc->lane, edge);
        out.k = rk_mul_c(kc, group, a->frag);
        return out;
    }
    out.mn = rk_mod_c(kc, kc->lane, 16);
    if (kind(kc, "wmma_gfx11")) {
        out.k = rk_c(kc, 0);
        return out;
    }
    half = rk_div_c(kc, kc->lane, 16);
    out.k = rk_mul_c(kc, half, kind(kc, "wmma_gfx12") ? 4 : a->frag);
    return out;
}

rk_wave_tile rk_build_common_wave_tile(rk_kc *kc)
{
    const rk_spec *s = kc->spec;
    long long per_m = rk_floordiv(s->tile_m, s->warp_m), per_n = rk_floordiv(s->tile_n, s->warp_n);
    rk_wave_tile wt;
    wt.m = rk_mul_c(kc, kc->wave_m, per_m);
    wt.n = rk_mul_c(kc, kc->wave_n, per_n);
    wt.mfmas_m = rk_floordiv(per_m, s->warp_tile_m);
    wt.mfmas_n = rk_floordiv(per_n, s->warp_tile_n);
    return wt;
}

rk_tr_lanes rk_build_common_tr_lanes(rk_kc *kc)
{
    rk_tr_lanes tr;
    rk_val m4 = rk_mod_c(kc, kc->lane, 4);
    rk_val m16;
    tr.mod4 = rk_mul_c(kc, m4, 4);
    m16 = rk_mod_c(kc, kc->lane, 16);
    tr.grp16 = rk_div_c(kc, m16, 4);
    return tr;
}

/* mns[i] = base + i*edge; ks[kk][r] = row_lane + kk*warp_tile_k + per_read*r. */
static rk_side_plan side(rk_kc *kc, rk_val base, long long edge, long long count, rk_val row_lane, long long per_read,
                         long long reads)
{
    const rk_spec *s = kc->spec;
    rk_side_plan plan;
    long long i, kk, r;
    plan.n_mns = count;
    plan.n_kk = rk_floordiv(s->tile_k, s->warp_tile_k);
    plan.n_reads = reads;
    plan.mns = values(kc, count);
    plan.ks = values(kc, plan.n_kk * reads);
    if (!plan.mns || !plan.ks) {
        plan.n_mns = plan.n_kk = plan.n_reads = 0;
        return plan;
    }
    for (i = 0; i < count; i++)
        plan.mns[i] = rk_add_c(kc, base, i * edge);
    for (kk = 0; kk < plan.n_kk; kk++)
        for (r = 0; r < reads; r++)
            plan.ks[kk * reads + r] = rk_add_c(kc, row_lane, kk * s->warp_tile_k + per_read * r);
    return plan;
}

rk_side_plan rk_m_outer_side(rk_kc *kc, rk_val wave_mn, long long edge, long long count)
{
    rk_frag_lanes lanes = rk_build_common_frag_lanes(kc, edge);
    rk_val base = rk_b_add(&kc->b, wave_mn, lanes.mn);
    return side(kc, base, edge, count, lanes.k, 0, 1);
}

/* The transpose-read lane map of conv-semantics §7.4: wave64 ds_read_tr16_b64, wave32 b128. */
rk_side_plan rk_k_outer_side(rk_kc *kc, rk_val wave_mn, long long edge, long long count, const rk_tr_lanes *tr)
{
    rk_builder *b = common_b(kc);
    long long n = kc->atom.frag, per_read, reads;
    rk_val col_lane, group, group_k, row_lane, base;
    if (tr) {
        rk_val in_edge = rk_mod_c(kc, kc->lane, edge);
        rk_val block = rk_div_c(kc, in_edge, 16);
        rk_val block_col = rk_mul_c(kc, block, 16);
        col_lane = rk_b_add(b, block_col, tr->mod4);
        group = rk_div_c(kc, kc->lane, edge);
        group_k = rk_mul_c(kc, group, n);
        row_lane = rk_b_add(b, group_k, tr->grp16);
        per_read = 4;
        reads = rk_floordiv(n, 4);
    } else {
        rk_val l16 = rk_mod_c(kc, kc->lane, 16);
        rk_val half = rk_div_c(kc, l16, 8);
        rk_val l8;
        col_lane = rk_mul_c(kc, half, 8);
        group = rk_div_c(kc, kc->lane, 16);
        group_k = rk_mul_c(kc, group, n);
        l8 = rk_mod_c(kc, kc->lane, 8);
        row_lane = rk_b_add(b, group_k, l8);
        per_read = 8;
        reads = rk_floordiv(n, 8);
    }
    base = rk_b_add(b, wave_mn, col_lane);
    return side(kc, base, edge, count, row_lane, per_read, reads);
}

rk_frag_plan rk_build_common_frag_plan(rk_kc *kc, const rk_wave_tile *wt, const rk_tile_operand *ta,
                                       const rk_tile_operand *tb)
{
    const rk_spec *s = kc->spec;
    rk_tr_lanes tr;
    const rk_tr_lanes *trp = NULL;
    rk_frag_plan plan;
    if ((ta->k_outer || tb->k_outer) && s->wave_size == 64) {
        tr = rk_build_common_tr_lanes(kc);
        trp = &tr;
    }
    if (ta->k_outer)
        plan.a = rk_k_outer_side(kc, wt->m, s->warp_tile_m, wt->mfmas_m, trp);
    else
        plan.a = rk_m_outer_side(kc, wt->m, s->warp_tile_m, wt->mfmas_m);
    if (tb->k_outer)
        plan.b = rk_k_outer_side(kc, wt->n, s->warp_tile_n, wt->mfmas_n, trp);
    else
        plan.b = rk_m_outer_side(kc, wt->n, s->warp_tile_n, wt->mfmas_n);
    return plan;
}

/* One lane's fragment: M-outer, frag consecutive k values (gfx12: two runs of 4); K-outer,
 * one transpose read per entry of ks, joined in read order. */
rk_val rk_read_frag(rk_kc *kc, const rk_tile_operand *t, rk_val tile, rk_val mn, const rk_val *ks, long long n_ks)
{
    rk_builder *b = common_b(kc);
    const rk_atom *a = &kc->atom;
    long long eb = rk_build_common_elem_bytes(t->elem), i;
    rk_val k;
    if (t->k_outer) {
        rk_val frag = NULL;
        for (i = 0; i < n_ks; i++) {
            rk_val part = kc->spec->wave_size == 64 ? rk_b_ds_read_tr16_b64(b, tile, ks[i], mn)
                                                    : rk_b_ds_read_tr16_b128(b, tile, ks[i], mn);
            frag = i == 0 ? part : rk_b_concat(b, frag, part);
        }
        if (n_ks == 0)
            rk_build_common_fail(kc, "a K-outer fragment of no reads");
        return frag;
    }
    k = ks[0];
    if (kind(kc, "wmma_gfx12")) {
        rk_val lo = rk_b_smem_load(b, tile, mn, k, 4, rk_pow2_align(4 * eb, t->cols * eb));
        rk_val k_hi = rk_add_c(kc, k, 8);
        rk_val hi = rk_b_smem_load(b, tile, mn, k_hi, 4, rk_pow2_align(4 * eb, t->cols * eb));
        return rk_b_concat(b, lo, hi);
    }
    return rk_b_smem_load(b, tile, mn, k, a->frag, rk_pow2_align(a->frag * eb, t->cols * eb));
}

/* For each kk step: the A and B fragments, then one MMA per (mi, ni). Schedule policy:
 * compv3/compv4 group barriers after each step (MFMA), priority 1 around the phase under
 * compv4 and async_dma. */
rk_accs rk_mma_phase(rk_kc *kc, const rk_frag_plan *plan, const rk_tile_operand *ta, const rk_tile_operand *tb,
                     rk_val tile_a, rk_val tile_b, const rk_accs *accs, const rk_wave_tile *wt)
{
    rk_builder *b = common_b(kc);
    const rk_spec *s = kc->spec;
    int compv = strcmp(s->pipeline, "compv3") == 0 || strcmp(s->pipeline, "compv4") == 0;
    int hints = compv && kind(kc, "mfma") && !s->async_dma;
    int prio = s->async_dma || (hints && strcmp(s->pipeline, "compv4") == 0);
    long long kk, mi, ni, n_kk = rk_floordiv(s->tile_k, s->warp_tile_k);
    rk_val *a_frags = values(kc, wt->mfmas_m);
    rk_val *b_frags = values(kc, wt->mfmas_n);
    rk_accs out;
    out.n = accs->n;
    out.items = values(kc, accs->n);
    if (!a_frags || !b_frags || !out.items) {
        out.n = 0;
        return out;
    }
    memcpy(out.items, accs->items, (size_t)accs->n * sizeof *out.items);
    if (plan->a.n_mns != wt->mfmas_m || plan->b.n_mns != wt->mfmas_n || plan->a.n_kk < n_kk || plan->b.n_kk < n_kk
        || accs->n != wt->mfmas_m * wt->mfmas_n) {
        rk_build_common_fail(kc, "a fragment plan of the wrong shape");
        return out;
    }
    if (prio)
        rk_b_s_setprio(b, 1);
    for (kk = 0; kk < n_kk; kk++) {
        for (mi = 0; mi < wt->mfmas_m; mi++)
            a_frags[mi] = rk_read_frag(kc, ta, tile_a, plan->a.mns[mi], &plan->a.ks[kk * plan->a.n_reads],
                                       plan->a.n_reads);
        for (ni = 0; ni < wt->mfmas_n; ni++)
            b_frags[ni] = rk_read_frag(kc, tb, tile_b, plan->b.mns[ni], &plan->b.ks[kk * plan->b.n_reads],
                                       plan->b.n_reads);
        for (mi = 0; mi < wt->mfmas_m; mi++)
            for (ni = 0; ni < wt->mfmas_n; ni++) {
                long long at = mi * wt->mfmas_n + ni;
                out.items[at] = rk_b_mma(b, kc->atom.op_id, a_frags[mi], b_frags[ni], out.items[at]);
            }
        if (hints) {
            rk_b_sched_group_barrier(b, RK_SCHED_DS_READ, wt->mfmas_m + wt->mfmas_n, 0);
            rk_b_sched_group_barrier(b, RK_SCHED_MFMA, wt->mfmas_m * wt->mfmas_n, 0);
        }
    }
    if (prio)
        rk_b_s_setprio(b, 0);
    return out;
}

/* ---- K loops ---- */

rk_operands rk_make_operands(rk_kc *kc, int axis_col_a, int axis_col_b, rk_desc_fn desc_a, rk_desc_fn desc_b)
{
    const rk_spec *s = kc->spec;
    const rk_plan *plan = kc->plan;
    rk_operands ops;
    ops.ta = operand_tile(kc, "a", s->dtype_a, &plan->lds_a, s->tile_m, plan->vectors[0], axis_col_a);
    ops.tb = operand_tile(kc, "b", s->dtype_b, &plan->lds_b, s->tile_n, plan->vectors[1], axis_col_b);
    ops.desc_a = desc_a;
    ops.desc_b = desc_b;
    ops.a_mn0 = kc->m0;
    ops.b_mn0 = kc->n0;
    return ops;
}

const char **rk_acc_names(rk_kc *kc, const rk_wave_tile *wt)
{
    long long mi, ni, n = wt->mfmas_m * wt->mfmas_n;
    const char **names = rk_alloc(kc->arena, (size_t)(n > 0 ? n : 1) * sizeof *names);
    if (!names) {
        rk_build_common_fail(kc, "out of memory");
        return NULL;
    }
    for (mi = 0; mi < wt->mfmas_m; mi++)
        for (ni = 0; ni < wt->mfmas_n; ni++) {
            names[mi * wt->mfmas_n + ni] = rk_ir_printf(kc->arena, "acc_m%lld_n%lld", mi, ni);
            if (!names[mi * wt->mfmas_n + ni]) {
                rk_build_common_fail(kc, "out of memory");
                return NULL;
            }
        }
    return names;
}

/* A and B for one K step: every global load first, then the LDS stores. */
void rk_load_step(rk_kc *kc, const rk_operands *ops, rk_val tile_a, rk_val tile_b, rk_val k0)
{
    rk_staged_list staged_a = rk_global_load_tile(kc, &ops->ta, kc->rsrc_a, ops->a_mn0, k0, ops->desc_a);
    rk_staged_list staged_b = rk_global_load_tile(kc, &ops->tb, kc->rsrc_b, ops->b_mn0, k0, ops->desc_b);
    rk_store_tile(kc, &ops->ta, tile_a, &staged_a);
    rk_store_tile(kc, &ops->tb, tile_b, &staged_b);
}

/* n copies of one value (Python's [zero for _ in acc_names(wt)]). */
static rk_accs fill(rk_kc *kc, rk_val value, long long n)
{
    rk_accs accs;
    long long i;
    accs.items = values(kc, n);
    accs.n = accs.items ? n : 0;
    for (i = 0; i < accs.n; i++)
        accs.items[i] = value;
    return accs;
}

static rk_val zero_acc(rk_kc *kc) { return rk_b_zeros(&kc->b, rk_vec(kc->arena, "f32", kc->atom.c_len)); }

/* mem/compv3/compv4: scf.for over [k_lo, k_hi) by tile_k, accumulators carried. */
rk_accs rk_k_loop_runtime(rk_kc *kc, const rk_operands *ops, const rk_wave_tile *wt, const rk_frag_plan *plan)
{
    rk_builder *b = common_b(kc);
    long long n = wt->mfmas_m * wt->mfmas_n, i;
    rk_val tile_a = rk_alloc_tile(kc, &ops->ta);
    rk_val tile_b = rk_alloc_tile(kc, &ops->tb);
    rk_val zero = zero_acc(kc);
    rk_val step = rk_c(kc, kc->spec->tile_k);
    const char **names = rk_acc_names(kc, wt);
    rk_ir_carried *carried = rk_alloc(kc->arena, (size_t)(n > 0 ? n : 1) * sizeof *carried);
    rk_accs args, accs, out;
    rk_ir_for *loop;
    rk_ir_value *results;
    out.n = 0;
    out.items = NULL;
    if (!names || !carried)
        rk_build_common_fail(kc, "out of memory");
    if (failed(kc))
        return out;
    for (i = 0; i < n; i++) {
        carried[i].name = names[i];
        carried[i].init = zero;
    }
    loop = rk_b_for_begin(b, kc->k_lo, kc->k_hi, step, "k0", carried, (int)n, 0);
    if (!loop)
        return out;
    rk_load_step(kc, ops, tile_a, tile_b, &loop->iv);
    rk_b_sync(b);
    args.n = loop->n_args;
    args.items = values(kc, loop->n_args);
    for (i = 0; args.items && i < loop->n_args; i++)
        args.items[i] = &loop->args[i];
    if (!args.items)
        return out;
    accs = rk_mma_phase(kc, plan, &ops->ta, &ops->tb, tile_a, tile_b, &args, wt);
    rk_b_sync(b);
    results = rk_b_for_end(b, loop, accs.items, (int)accs.n);
    if (!results)
        return out;
    out.items = values(kc, loop->op->n_results);
    for (i = 0; out.items && i < loop->op->n_results; i++)
        out.items[i] = &results[i];
    out.n = out.items ? loop->op->n_results : 0;
    return out;
}

/* unroll_k: the K steps unrolled; ping-pong over two tile pairs unless compv4 (conv-semantics §9.1). */
rk_accs rk_k_loop_unrolled(rk_kc *kc, const rk_operands *ops, const rk_wave_tile *wt, const rk_frag_plan *plan,
                           long long k_iters)
{
    rk_builder *b = common_b(kc);
    const rk_spec *s = kc->spec;
    int buffers = rk_double_buffer(s) ? 2 : 1, i;
    rk_val tiles[2][2], zero;
    rk_accs accs;
    long long it;
    for (i = 0; i < buffers; i++) {
        tiles[i][0] = rk_alloc_tile(kc, &ops->ta);
        tiles[i][1] = rk_alloc_tile(kc, &ops->tb);
    }
    zero = zero_acc(kc);
    accs = fill(kc, zero, wt->mfmas_m * wt->mfmas_n);
    if (buffers == 2) {
        rk_load_step(kc, ops, tiles[0][0], tiles[0][1], kc->k_lo);
        rk_b_sync(b);
    }
    for (it = 0; it < k_iters; it++) {
        const rk_val *cur;
        if (buffers == 2) {
            if (it + 1 < k_iters) {
                rk_val k_next = rk_add_c(kc, kc->k_lo, (it + 1) * s->tile_k);
                const rk_val *nxt = tiles[(it + 1) % 2];
                rk_load_step(kc, ops, nxt[0], nxt[1], k_next);
            }
            cur = tiles[it % 2];
        } else {
            rk_val k_cur = rk_add_c(kc, kc->k_lo, it * s->tile_k);
            cur = tiles[0];
            rk_load_step(kc, ops, cur[0], cur[1], k_cur);
            rk_b_sync(b);
        }
        accs = rk_mma_phase(kc, plan, &ops->ta, &ops->tb, cur[0], cur[1], &accs, wt);
        rk_b_sync(b);
    }
    return accs;
}

/* pipeline basic: one tile pair; step i+1's global reads overlap step i's MMA (conv-semantics §9.1). */
rk_accs rk_k_loop_basic(rk_kc *kc, const rk_operands *ops, const rk_wave_tile *wt, const rk_frag_plan *plan,
                        long long k_iters)
{
    rk_builder *b = common_b(kc);
    const rk_spec *s = kc->spec;
    rk_val tile_a = rk_alloc_tile(kc, &ops->ta);
    rk_val tile_b = rk_alloc_tile(kc, &ops->tb);
    rk_val zero = zero_acc(kc);
    rk_accs accs = fill(kc, zero, wt->mfmas_m * wt->mfmas_n);
    rk_staged_list staged_a, staged_b;
    long long it;
    staged_a = rk_global_load_tile(kc, &ops->ta, kc->rsrc_a, ops->a_mn0, kc->k_lo, ops->desc_a);
    staged_b = rk_global_load_tile(kc, &ops->tb, kc->rsrc_b, ops->b_mn0, kc->k_lo, ops->desc_b);
    rk_store_tile(kc, &ops->ta, tile_a, &staged_a);
    rk_store_tile(kc, &ops->tb, tile_b, &staged_b);
    for (it = 0; it < k_iters; it++) {
        int has_next = it + 1 < k_iters;
        if (has_next) {
            rk_val k_next = rk_add_c(kc, kc->k_lo, (it + 1) * s->tile_k);
            staged_a = rk_global_load_tile(kc, &ops->ta, kc->rsrc_a, ops->a_mn0, k_next, ops->desc_a);
            staged_b = rk_global_load_tile(kc, &ops->tb, kc->rsrc_b, ops->b_mn0, k_next, ops->desc_b);
        }
        rk_b_sync(b);
        accs = rk_mma_phase(kc, plan, &ops->ta, &ops->tb, tile_a, tile_b, &accs, wt);
        rk_b_sync(b);
        if (has_next) {
            rk_store_tile(kc, &ops->ta, tile_a, &staged_a);
            rk_store_tile(kc, &ops->tb, tile_b, &staged_b);
        }
    }
    return accs;
}

/* ---- the direct global->LDS loader (AsyncTileLoader, conv-semantics §8) ---- */

rk_async_plan rk_build_common_async_plan(rk_kc *kc, const rk_tile_operand *t, int index)
{
    rk_async_plan plan;
    long long chunks;
    plan.dwords = kc->plan->async_dwords[index];
    if (plan.dwords == 0) {
        rk_build_common_fail(kc, "async tile without dwords (CONV_ASYNC_NO_DWORDS is checked in mode spec)");
        plan.dwords = 1;
    }
    plan.elems = rk_floordiv(plan.dwords * 4, rk_build_common_elem_bytes(t->elem));
    chunks = rk_floordiv(t->rows * t->cols, plan.elems);
    plan.passes = rk_floordiv(chunks, rk_block_size(kc->spec));
    plan.per_row = rk_floordiv(t->cols, plan.elems);
    return plan;
}

/* The wave's LDS base for this tile: smem_addr + wave*(wave_size*dwords*4), in an SGPR. */
rk_val rk_async_bind(rk_kc *kc, rk_val tile, const rk_async_plan *plan)
{
    rk_val addr = rk_b_smem_addr(&kc->b, tile);
    rk_val wave_off = rk_mul_c(kc, kc->wave, kc->spec->wave_size * plan->dwords * 4);
    rk_val base = rk_b_add(&kc->b, addr, wave_off);
    return rk_b_readfirstlane(&kc->b, base);
}

void rk_async_issue(rk_kc *kc, const rk_tile_operand *t, const rk_async_plan *plan, rk_val rsrc, rk_val base,
                    rk_val mn0, rk_val k0, rk_desc_fn desc)
{
    rk_builder *b = common_b(kc);
    long long block = rk_block_size(kc->spec), p;
    for (p = 0; p < plan->passes; p++) {
        rk_val pass_base = rk_add_c(kc, base, p * block * plan->dwords * 4);
        rk_val chunk = rk_add_c(kc, kc->tid, p * block);
        rk_val row = rk_div_c(kc, chunk, plan->per_row);
        rk_val cq = rk_mod_c(kc, chunk, plan->per_row);
        rk_val col = rk_mul_c(kc, cq, plan->elems);
        rk_val mn = t->k_outer ? col : row;
        rk_val k = t->k_outer ? row : col;
        rk_val g_mn = rk_b_add(b, mn0, mn);
        rk_val g_k = rk_b_add(b, k0, k);
        rk_desc d = desc(kc, g_mn, g_k);
        rk_val boff = rk_byte_offset(kc, d.off, d.valid, rk_build_common_elem_bytes(t->elem));
        rk_b_async_buffer_load_lds(b, rsrc, pass_base, boff, plan->dwords, RK_CACHE_STREAM);
    }
}

/* One ping-pong buffer of k_loop_async: (tile_a, tile_b, base_a, base_b). */
typedef struct rk_async_buffer {
    rk_val tile_a, tile_b, base_a, base_b;
} rk_async_buffer;

/* k_loop_async's issue(step, buf). */
static void async_step(rk_kc *kc, const rk_operands *ops, const rk_async_plan *pa, const rk_async_plan *pb,
                       long long step, const rk_async_buffer *buf)
{
    rk_val k0 = rk_add_c(kc, kc->k_lo, step * kc->spec->tile_k);
    rk_async_issue(kc, &ops->ta, pa, kc->rsrc_a, buf->base_a, ops->a_mn0, k0, ops->desc_a);
    rk_async_issue(kc, &ops->tb, pb, kc->rsrc_b, buf->base_b, ops->b_mn0, k0, ops->desc_b);
}

/* async_dma: ping-pong over two tile pairs, prefetch depth 1 (conv-semantics §9.1). */
rk_accs rk_k_loop_async(rk_kc *kc, const rk_operands *ops, const rk_wave_tile *wt, const rk_frag_plan *plan,
                        long long k_iters)
{
    rk_builder *b = common_b(kc);
    rk_async_plan pa = rk_build_common_async_plan(kc, &ops->ta, 0);
    rk_async_plan pb = rk_build_common_async_plan(kc, &ops->tb, 1);
    rk_async_buffer buffers[2];
    long long per_tile, it;
    rk_val zero;
    rk_accs accs;
    int i;
    for (i = 0; i < 2; i++) {
        buffers[i].tile_a = rk_alloc_tile(kc, &ops->ta);
        buffers[i].tile_b = rk_alloc_tile(kc, &ops->tb);
        buffers[i].base_a = rk_async_bind(kc, buffers[i].tile_a, &pa);
        buffers[i].base_b = rk_async_bind(kc, buffers[i].tile_b, &pb);
    }
    zero = zero_acc(kc);
    accs = fill(kc, zero, wt->mfmas_m * wt->mfmas_n);
    per_tile = pa.passes + pb.passes;
    async_step(kc, ops, &pa, &pb, 0, &buffers[0]);
    for (it = 0; it < k_iters; it++) {
        int has_next = it + 1 < k_iters;
        const rk_async_buffer *cur;
        if (has_next) {
            if (it > 0)
                rk_b_sync_lds_only(b);
            async_step(kc, ops, &pa, &pb, it + 1, &buffers[(it + 1) % 2]);
        }
        rk_b_s_waitcnt_vmcnt(b, has_next ? per_tile : 0);
        if (has_next)
            rk_b_sync_lds_only(b);
        else
            rk_b_sync(b);
        cur = &buffers[it % 2];
        accs = rk_mma_phase(kc, plan, &ops->ta, &ops->tb, cur->tile_a, cur->tile_b, &accs, wt);
    }
    return accs;
}

/* ---- epilogues ---- */

/* bias, scale, relu, clamp on an f32 accumulator value (conv-semantics §1.4), in that order. */
rk_val rk_acc_epilogue(rk_kc *kc, rk_val v)
{
    rk_builder *b = common_b(kc);
    const rk_spec *s = kc->spec;
    if (s->bias != 0) {
        rk_val bias = rk_b_const_f32(b, s->bias);
        v = rk_b_fadd(b, v, bias);
    }
    if (s->scale != 1) {
        rk_val scale = rk_b_const_f32(b, s->scale);
        v = rk_b_fmul(b, v, scale);
    }
    if (s->relu) {
        rk_val zero = rk_b_const_f32(b, 0);
        v = rk_b_fmax(b, v, zero);
    }
    if (s->clamp_min.set) {
        rk_val lo = rk_b_const_f32(b, s->clamp_min.v);
        v = rk_b_fmax(b, v, lo);
    }
    if (s->clamp_max.set) {
        rk_val hi = rk_b_const_f32(b, s->clamp_max.v);
        v = rk_b_fmin(b, v, hi);
    }
    return v;
}

rk_val rk_to_d(rk_kc *kc, rk_val v)
{
    const char *d = ir_elem(kc, kc->spec->dtype_d);
    return strcmp(d, "f32") == 0 ? v : rk_b_fptrunc(&kc->b, v, d);
}

/* The lane-independent part of accumulator slot r's row (conv-semantics §13). */
long long rk_c_row_of_slot(rk_kc *kc, long long r)
{
    const rk_atom *a = &kc->atom;
    if (kind(kc, "mfma")) {
        long long groups = rk_floordiv(64, a->m);
        return 4 * groups * rk_floordiv(r, 4) + rk_floormod(r, 4);
    }
    if (kind(kc, "wmma_gfx11"))
        return 2 * r;
    return r;
}

/* The lane-dependent row (in .mn) and column (in .k) of the accumulator slots. */
rk_frag_lanes rk_c_lanes(rk_kc *kc)
{
    const rk_atom *a = &kc->atom;
    rk_frag_lanes out;
    out.k = rk_mod_c(kc, kc->lane, a->n);
    if (kind(kc, "mfma")) {
        rk_val group = rk_div_c(kc, kc->lane, a->m);
        out.mn = rk_mul_c(kc, group, 4);
    } else if (kind(kc, "wmma_gfx11")) {
        out.mn = rk_div_c(kc, kc->lane, 16);
    } else {
        rk_val half = rk_div_c(kc, kc->lane, 16);
        out.mn = rk_mul_c(kc, half, 8);
    }
    return out;
}

/* A 16-bit value as a zero-filled packed pair at the even element index below off. */
void rk_atomic_pair(rk_kc *kc, rk_val off, rk_val h, rk_val *base, rk_val *pair)
{
    rk_builder *b = common_b(kc);
    rk_val zero = rk_b_zeros(b, h ? rk_vec(kc->arena, h->type, 2) : NULL);
    rk_val low = rk_b_insert(b, zero, h, 0);
    rk_val high = rk_b_insert(b, zero, h, 1);
    rk_val parity = rk_mod_c(kc, off, 2);
    rk_val zero_i = rk_c(kc, 0);
    rk_val odd = rk_b_cmp(b, "ne", parity, zero_i);
    *pair = rk_b_select(b, odd, high, low);
    *base = rk_b_sub(b, off, parity);
}

/* One value of D (scalar or vector, already in its stored type) at element offset off. */
void rk_store_d_value(rk_kc *kc, rk_val off, rk_val valid, rk_val v)
{
    rk_builder *b = common_b(kc);
    const rk_spec *s = kc->spec;
    rk_val d_ptr, base, pair;
    rk_ir_op *guard;
    if (!rk_atomic_split_k(s)) {
        rk_val boff = rk_byte_offset(kc, off, valid, rk_build_common_elem_bytes(ir_elem(kc, s->dtype_d)));
        rk_b_buffer_store(b, kc->rsrc_d, boff, v);
        return;
    }
    d_ptr = rk_build_common_param(kc, rk_build_common_d_name(s->family));
    guard = rk_b_if_begin(b, valid);
    if (!v) {
        rk_build_common_fail(kc, "store of a failed value");
        return;
    }
    if (strcmp(v->type, "f32") == 0 || strcmp(v->type, "vec<f16x2>") == 0 || strcmp(v->type, "vec<bf16x2>") == 0) {
        rk_b_global_atomic_fadd(b, d_ptr, off, v);
    } else if (strcmp(v->type, "f16") == 0 || strcmp(v->type, "bf16") == 0) {
        rk_atomic_pair(kc, off, v, &base, &pair);
        rk_b_global_atomic_fadd(b, d_ptr, base, pair);
    } else {
        rk_store_d_atomic_vector(kc, d_ptr, off, v);
    }
    rk_b_if_end(b, guard);
}

/* A wide value under atomic split-K: f32 element by element, 16-bit as adjacent pairs. */
void rk_store_d_atomic_vector(rk_kc *kc, rk_val d_ptr, rk_val off, rk_val v)
{
    rk_builder *b = common_b(kc);
    long long n = rk_vec_len(v->type), j;
    const char *elem;
    if (n == RK_IR_BAD_LEN || !rk_is_vec(v->type)) {
        rk_build_common_fail(kc, "atomic store of a malformed vector type");
        return;
    }
    if (strncmp(v->type, "vec<f32", 7) == 0) {
        for (j = 0; j < n; j++) {
            rk_val e = rk_b_extract(b, v, j);
            rk_val at = rk_add_c(kc, off, j);
            rk_b_global_atomic_fadd(b, d_ptr, at, e);
        }
        return;
    }
    elem = rk_vec_elem(kc->arena, v->type);
    for (j = 0; j < n; j += 2) {
        rk_val e0 = rk_b_extract(b, v, j);
        rk_val e1 = rk_b_extract(b, v, j + 1);
        rk_val pair, at;
        rk_val xs[2];
        const char *want = elem ? rk_vec(kc->arena, elem, 2) : NULL;
        xs[0] = e0;
        xs[1] = e1;
        pair = rk_b_from_elements(b, xs, 2);
        at = rk_add_c(kc, off, j);
        if (!pair || !want || strcmp(pair->type, want) != 0) {
            rk_build_common_fail(kc, "packed atomic pair type");
            return;
        }
        rk_b_global_atomic_fadd(b, d_ptr, at, pair);
    }
}

const char *rk_build_common_d_name(int family)
{
    return family == RK_FAMILY_FWD ? "Y" : family == RK_FAMILY_WGRAD ? "dW" : "dX";
}

/* Every accumulator slot through the accumulator epilogue, at (m_base, n_base) plus its
 * atom's and its own row and column: to D through desc_d, or (desc_d NULL) to the staging tile. */
static void store_slots(rk_kc *kc, const rk_accs *accs, const rk_wave_tile *wt, rk_val m_base, rk_val n_base,
                        rk_desc_fn desc_d, rk_val staging)
{
    rk_builder *b = common_b(kc);
    const rk_spec *s = kc->spec;
    const rk_atom *a = &kc->atom;
    long long eb = desc_d ? 0 : rk_build_common_elem_bytes(ir_elem(kc, s->dtype_d)), mi, ni, r;
    if (accs->n != wt->mfmas_m * wt->mfmas_n) {
        rk_build_common_fail(kc, "accumulators of the wrong count");
        return;
    }
    for (mi = 0; mi < wt->mfmas_m; mi++) {
        rk_val m_atom = rk_add_c(kc, m_base, mi * s->warp_tile_m);
        for (ni = 0; ni < wt->mfmas_n; ni++) {
            rk_val n_atom = rk_add_c(kc, n_base, ni * s->warp_tile_n);
            rk_val acc = accs->items[mi * wt->mfmas_n + ni];
            for (r = 0; r < a->c_len; r++) {
                rk_val row = rk_add_c(kc, m_atom, rk_c_row_of_slot(kc, r));
                rk_val e = rk_b_extract(b, acc, r);
                rk_val v = rk_acc_epilogue(kc, e);
                rk_val d = rk_to_d(kc, v);
                if (desc_d) {
                    rk_desc dd = desc_d(kc, row, n_atom);
                    rk_store_d_value(kc, dd.off, dd.valid, d);
                } else {
                    rk_b_smem_store(b, staging, row, n_atom, d, eb);
                }
            }
        }
    }
}

/* Each accumulator slot stored by its own lane at its (m, n) (guarded by the descriptor). */
void rk_epilogue_default(rk_kc *kc, const rk_accs *accs, const rk_wave_tile *wt, rk_desc_fn desc_d)
{
    rk_builder *b = common_b(kc);
    rk_frag_lanes lanes = rk_c_lanes(kc);
    rk_val m_wave = rk_b_add(b, kc->m0, wt->m);
    rk_val m_base = rk_b_add(b, m_wave, lanes.mn);
    rk_val n_wave = rk_b_add(b, kc->n0, wt->n);
    rk_val n_base = rk_b_add(b, n_wave, lanes.k);
    store_slots(kc, accs, wt, m_base, n_base, desc_d, NULL);
}

/* Stage the CTA tile in LDS, then store it in vec_c-wide runs along n (conv-semantics §10.1). */
void rk_epilogue_cshuffle(rk_kc *kc, const rk_accs *accs, const rk_wave_tile *wt, rk_desc_fn desc_d, long long vec_c,
                          int exclusive)
{
    rk_builder *b = common_b(kc);
    const rk_spec *s = kc->spec;
    const char *d_elem = ir_elem(kc, s->dtype_d);
    long long eb = rk_build_common_elem_bytes(d_elem), block = rk_block_size(s);
    long long chunks, per_row, p;
    rk_val staging = rk_b_smem_alloc(b, rk_smem(kc->arena, d_elem, s->tile_m, s->tile_n), exclusive);
    rk_frag_lanes lanes = rk_c_lanes(kc);
    rk_val m_base = rk_b_add(b, wt->m, lanes.mn);
    rk_val n_base = rk_b_add(b, wt->n, lanes.k);
    store_slots(kc, accs, wt, m_base, n_base, NULL, staging);
    if (accs->n != wt->mfmas_m * wt->mfmas_n)
        return;
    rk_b_sync(b);
    chunks = rk_floordiv(s->tile_m * s->tile_n, vec_c);
    per_row = rk_floordiv(s->tile_n, vec_c);
    for (p = 0; p < rk_ceildiv(chunks, block); p++) {
        rk_val chunk = rk_add_c(kc, kc->tid, p * block);
        rk_val inside = NULL;
        if ((p + 1) * block > chunks) {
            /* a lane past the last chunk reads chunk 0, inside the staging tile, and stores nothing */
            rk_val zero;
            inside = rk_below(kc, chunk, chunks);
            zero = rk_b_const_i32(b, 0);
            chunk = rk_b_select(b, inside, chunk, zero);
        }
        {
            rk_val row = rk_div_c(kc, chunk, per_row);
            rk_val cq = rk_mod_c(kc, chunk, per_row);
            rk_val col = rk_mul_c(kc, cq, vec_c);
            rk_val v = rk_b_smem_load(b, staging, row, col, vec_c, rk_pow2_align(vec_c * eb, s->tile_n * eb));
            rk_val gm = rk_b_add(b, kc->m0, row);
            rk_val gn = rk_b_add(b, kc->n0, col);
            rk_desc dd = desc_d(kc, gm, gn);
            if (inside)
                dd.valid = rk_b_and(b, dd.valid, inside);
            rk_store_d_value(kc, dd.off, dd.valid, v);
        }
    }
}

rk_ir_kernel *rk_finish(rk_kc *kc) { return rk_b_ret(&kc->b); }
