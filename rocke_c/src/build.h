/* build.h: mode `ir`'s builder: one implicit-GEMM kernel from a validated spec
 * (docs/kernels.md). Twins of rocke_py/engine/{build_common,build_fwd,build_wgrad,
 * build_dgrad,build}.py, function for function in the same order.
 *
 * Values are created in the order of the Python statements: every temporary is named, and
 * no argument list holds two value-creating calls (docs/reference/llvm-ir.md §6). Everything
 * lives in the call's arena. A failure (the builder's, or a build check's) is sticky, like
 * the builder's own: once kc->error is set the stages keep going on NULL values without
 * reading them, and rk_build_kernel reports the first failure as an internal error. */
#ifndef ROCKE_BUILD_H
#define ROCKE_BUILD_H

#include "../include/rocke.h"
#include "ir.h"

#define RK_OOB_OFFSET 0x7FFFFFFFLL   /* a byte offset past any buffer: loads read 0, stores drop */
#define RK_SCHED_MFMA 0x008
#define RK_SCHED_DS_READ 0x100
#define RK_CACHE_STREAM 2            /* aux: SLC */
#define RK_BUILD_MAX_PARAMS 16

typedef const rk_ir_value *rk_val;   /* a builder value (NULL once the build has failed) */

/* One GEMM operand's LDS tile and how the loader fills it (TileOperand). */
typedef struct rk_tile_operand {
    const char *name;    /* "a" or "b" */
    const char *elem;    /* IR element type */
    long long rows;      /* LDS rows (M-outer: tile_mn) */
    long long cols;      /* LDS columns (M-outer: tile_k + pad) */
    long long mn;        /* the tile's free extent (tile_m or tile_n) */
    long long vec;       /* global load width in elements */
    int axis_col;        /* axis "col": the vector runs along k; 0: "row", along mn */
    int k_outer;         /* stored T[k][mn] (docs/reference/conv-semantics.md §7.2) instead of T[mn][k] */
} rk_tile_operand;

typedef struct rk_build_param {
    const char *name;
    rk_val value;
} rk_build_param;

/* The kernel under construction and the kernel-wide values the stages share (Kc): the plan
 * and, for short, its spec, problem and target. */
typedef struct rk_kc {
    rk_builder b;
    rk_arena *arena;
    const rk_plan *plan;
    const rk_spec *spec;
    const rk_problem *problem;
    const rk_target *target;
    rk_atom atom;
    rk_build_param params[RK_BUILD_MAX_PARAMS];   /* Python's params dict, in insertion order */
    int n_params;
    rk_val tid, lane, wave, wave_m, wave_n;
    rk_val m0, n0;               /* the CTA tile's first GEMM row and column */
    rk_val group;                /* NULL: ungrouped */
    rk_val k_lo, k_hi;
    rk_val rsrc_a, rsrc_b, rsrc_d;
    rk_val record[RK_SUB_GEMM_FIELDS];  /* dgrad: this CTA's sub-GEMM, by field index */
    const char *error;           /* the first build failure ("build: ..."), NULL while fine */
} rk_kc;

/* A descriptor's answer: (element offset, valid). */
typedef struct rk_desc {
    rk_val off;
    rk_val valid;
} rk_desc;

/* (kc, mn, k) -> (offset, valid) for A and B; (kc, m, n) -> ... for D. */
typedef rk_desc (*rk_desc_fn)(rk_kc *kc, rk_val mn, rk_val k);

/* One chunk of a tile, loaded from global memory and waiting for its LDS store. */
typedef struct rk_staged {
    rk_val row, col;     /* tile coordinates of the chunk's first element (mn, k) */
    rk_val value;
    rk_val guard;        /* a partial last pass: store only when set (NULL: none) */
} rk_staged;

typedef struct rk_staged_list {
    rk_staged *items;
    long long n;
} rk_staged_list;

/* The lane-dependent parts of a fragment read: row (mn) and k offsets, per side. */
typedef struct rk_frag_lanes {
    rk_val mn, k;
} rk_frag_lanes;

/* This wave's sub-tile: its first row and column in the CTA tile, and the atom counts. */
typedef struct rk_wave_tile {
    rk_val m, n;
    long long mfmas_m, mfmas_n;
} rk_wave_tile;

/* The two wave64 transpose-read lane constants (conv-semantics §7.4), made once per kernel. */
typedef struct rk_tr_lanes {
    rk_val mod4;     /* (lane % 4) * 4 */
    rk_val grp16;    /* (lane % 16) / 4 */
} rk_tr_lanes;

/* Loop-invariant LDS coordinates of one side's fragments. */
typedef struct rk_side_plan {
    rk_val *mns;         /* per atom index: the mn coordinate of the lane's read */
    long long n_mns;
    rk_val *ks;          /* per kk step, n_reads k coordinates in read order: ks[kk*n_reads + r] */
    long long n_kk, n_reads;
} rk_side_plan;

typedef struct rk_frag_plan {
    rk_side_plan a, b;
} rk_frag_plan;

/* Both operand tiles, their descriptors and where their CTA tile starts. */
typedef struct rk_operands {
    rk_tile_operand ta, tb;
    rk_desc_fn desc_a, desc_b;
    rk_val a_mn0, b_mn0;
} rk_operands;

/* One operand's async chunking. */
typedef struct rk_async_plan {
    long long dwords;
    long long elems;     /* elements per chunk */
    long long passes;
    long long per_row;   /* chunks per tile row */
} rk_async_plan;

/* The accumulators of the wave tile, row-major over (mi, ni). */
typedef struct rk_accs {
    rk_val *items;
    long long n;
} rk_accs;

/* A direction module (build_fwd, build_wgrad, build_dgrad): Python's module object. */
typedef struct rk_family_module {
    const char *names[3];                   /* NAMES: A, B, D */
    void (*add_params)(rk_kc *kc);
    void (*block_decode)(rk_kc *kc);
    rk_desc_fn desc_a, desc_b, desc_d;
    rk_operands (*operands)(rk_kc *kc);
} rk_family_module;

/* ==== build_common.c ==== */
void rk_build_common_fail(rk_kc *kc, const char *message);
/* small integer helpers */
rk_val rk_c(rk_kc *kc, long long value);
/* A builder's two-operand op (rk_b_add, rk_b_mul, ...). */
typedef rk_ir_value *(*rk_binary_op)(rk_builder *b, const rk_ir_value *x, const rk_ir_value *y);
rk_val rk_add_c(rk_kc *kc, rk_val x, long long value);
rk_val rk_mul_c(rk_kc *kc, rk_val x, long long value);
rk_val rk_div_c(rk_kc *kc, rk_val x, long long value);
rk_val rk_mod_c(rk_kc *kc, rk_val x, long long value);
rk_val rk_below(rk_kc *kc, rk_val x, long long bound);
rk_val rk_below_value(rk_kc *kc, rk_val x, rk_val bound);
rk_val rk_all_of(rk_kc *kc, const rk_val *conds, int n);
rk_val rk_both_below(rk_kc *kc, rk_val x, long long x_end, rk_val y, long long y_end);
rk_val rk_byte_offset(rk_kc *kc, rk_val off, rk_val valid, long long eb);
long long rk_pow2_align(long long a, long long b);
long long rk_build_common_elem_bytes(const char *elem);
/* the kernel context (kc: zeroed memory, as the arena hands out) */
void rk_begin_kernel(rk_kc *kc, const rk_plan *plan, rk_arena *arena);
rk_val rk_build_common_param(rk_kc *kc, const char *name);     /* kc.params[name] */
void rk_build_common_set_param(rk_kc *kc, const char *name, rk_val value);
void rk_add_tensor_params(rk_kc *kc, const char *const names[3], int atomic_d);
void rk_thread_prologue(rk_kc *kc);
void rk_chiplet_remap(rk_kc *kc, rk_val flat, long long grid_m, long long grid_n, rk_val *m_tile, rk_val *n_tile);
void rk_grid_tiles(rk_kc *kc);
void rk_make_rsrcs(rk_kc *kc, const char *const names[3], int with_d);
/* the input tensor's im2col view */
rk_val rk_group_base(rk_kc *kc, long long per_group);  /* NULL: ungrouped */
rk_val rk_add_opt(rk_kc *kc, rk_val x, rk_val y);
/* row*width + group*per_group + col: a row of NHWK (or pointwise NHWC) by GEMM row. */
rk_val rk_row_offset(rk_kc *kc, rk_val row, long long width, long long per_group, rk_val col);
/* (group*per_group + row)*width + col: a row of the group's filters (KYXC, dW). */
rk_val rk_group_row_offset(rk_kc *kc, rk_val row, long long per_group, long long width, rk_val col);
/* valid below (m_end, k_end), the im2col view's N*[Do*]Ho*Wo and [Z*]Y*X*cpg */
rk_desc rk_input_offset(rk_kc *kc, rk_val m, rk_val k, long long m_end, long long k_end);
/* One coordinate of an NHWC (or NHWK) offset: its value and its extent. */
typedef struct rk_coord {
    rk_val at;
    long long extent;
} rk_coord;
/* (((image*H + h)*W + w)*C + group*per_group + c); c.extent is C. */
rk_val rk_pixel_offset(rk_kc *kc, rk_val image, rk_coord h, rk_coord w, rk_coord c, long long per_group);
rk_val rk_tap(rk_kc *kc, rk_val out, long long stride, rk_val filt, long long dil, long long pad);
/* tiles */
rk_val rk_alloc_tile(rk_kc *kc, const rk_tile_operand *t);
rk_staged_list rk_global_load_tile(rk_kc *kc, const rk_tile_operand *t, rk_val rsrc, rk_val mn0, rk_val k0,
                                   rk_desc_fn desc);
void rk_store_tile(rk_kc *kc, const rk_tile_operand *t, rk_val tile, const rk_staged_list *staged);
/* the MMA phase */
rk_frag_lanes rk_build_common_frag_lanes(rk_kc *kc, long long edge);
rk_wave_tile rk_build_common_wave_tile(rk_kc *kc);
rk_tr_lanes rk_build_common_tr_lanes(rk_kc *kc);
rk_side_plan rk_m_outer_side(rk_kc *kc, rk_val wave_mn, long long edge, long long count);
rk_side_plan rk_k_outer_side(rk_kc *kc, rk_val wave_mn, long long edge, long long count, const rk_tr_lanes *tr);
rk_frag_plan rk_build_common_frag_plan(rk_kc *kc, const rk_wave_tile *wt, const rk_tile_operand *ta,
                                       const rk_tile_operand *tb);
rk_val rk_read_frag(rk_kc *kc, const rk_tile_operand *t, rk_val tile, rk_val mn, const rk_val *ks, long long n_ks);
rk_accs rk_mma_phase(rk_kc *kc, const rk_frag_plan *plan, const rk_tile_operand *ta, const rk_tile_operand *tb,
                     rk_val tile_a, rk_val tile_b, const rk_accs *accs, const rk_wave_tile *wt);
/* K loops */
/* The plan's A and B tiles, loaded along k when axis_col_a (_b) is set, else along mn (a
 * K-outer tile always along mn). */
rk_operands rk_make_operands(rk_kc *kc, int axis_col_a, int axis_col_b, rk_desc_fn desc_a, rk_desc_fn desc_b);
const char **rk_acc_names(rk_kc *kc, const rk_wave_tile *wt);
void rk_load_step(rk_kc *kc, const rk_operands *ops, rk_val tile_a, rk_val tile_b, rk_val k0);
rk_accs rk_k_loop_runtime(rk_kc *kc, const rk_operands *ops, const rk_wave_tile *wt, const rk_frag_plan *plan);
rk_accs rk_k_loop_unrolled(rk_kc *kc, const rk_operands *ops, const rk_wave_tile *wt, const rk_frag_plan *plan,
                           long long k_iters);
rk_accs rk_k_loop_basic(rk_kc *kc, const rk_operands *ops, const rk_wave_tile *wt, const rk_frag_plan *plan,
                        long long k_iters);
/* the direct global->LDS loader */
rk_async_plan rk_build_common_async_plan(rk_kc *kc, const rk_tile_operand *t, int index);
rk_val rk_async_bind(rk_kc *kc, rk_val tile, const rk_async_plan *plan);
void rk_async_issue(rk_kc *kc, const rk_tile_operand *t, const rk_async_plan *plan, rk_val rsrc, rk_val base,
                    rk_val mn0, rk_val k0, rk_desc_fn desc);
rk_accs rk_k_loop_async(rk_kc *kc, const rk_operands *ops, const rk_wave_tile *wt, const rk_frag_plan *plan,
                        long long k_iters);
/* epilogues */
rk_val rk_acc_epilogue(rk_kc *kc, rk_val v);
rk_val rk_to_d(rk_kc *kc, rk_val v);
/* build_dgrad.c: zeros at the dX positions no sub-GEMM record stores. */
void rk_zero_untouched(rk_kc *kc);
long long rk_c_row_of_slot(rk_kc *kc, long long r);
rk_frag_lanes rk_c_lanes(rk_kc *kc);
void rk_atomic_pair(rk_kc *kc, rk_val off, rk_val h, rk_val *base, rk_val *pair);
void rk_store_d_value(rk_kc *kc, rk_val off, rk_val valid, rk_val v);
void rk_store_d_atomic_vector(rk_kc *kc, rk_val d_ptr, rk_val off, rk_val v);
const char *rk_build_common_d_name(int family);                  /* D_NAMES[family] */
void rk_epilogue_default(rk_kc *kc, const rk_accs *accs, const rk_wave_tile *wt, rk_desc_fn desc_d);
void rk_epilogue_cshuffle(rk_kc *kc, const rk_accs *accs, const rk_wave_tile *wt, rk_desc_fn desc_d, long long vec_c,
                          int exclusive);
rk_ir_kernel *rk_finish(rk_kc *kc);

/* ==== build_fwd.c, build_wgrad.c, build_dgrad.c: the direction modules ==== */
extern const rk_family_module rk_build_fwd_module;
extern const rk_family_module rk_build_wgrad_module;
extern const rk_family_module rk_build_dgrad_module;

/* ==== build.c ==== */
/* The verified kernel of a plan in *out (arena), 0; or -1 with err: an internal failure
 * (builder, build check, verifier), never a rejection. */
int rk_build_kernel(const rk_plan *plan, rk_arena *arena, rk_ir_kernel **out, rk_error *err);

#endif
