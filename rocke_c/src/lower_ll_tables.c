/* lower_ll_tables.c: the data tables of mode `ll` (docs/lowering.md §2), apart from its handlers.
 *
 * Twin of rocke_py/engine/lower_ll_tables.py, row for row: the flavors, the backends, the
 * declaration table, the MMA atoms, the buffer widths and scalar types, the attribute names,
 * the per-op opcodes and callees, and the name characters. Every row is a fact of LLVM or of a
 * target (docs/reference/llvm-ir.md); lower_ll.c reads them and keeps only its per-op handler
 * table. The types and sizes are in lower.h. */
#include <string.h>
#include "lower.h"

/* The row among n rows of `size` bytes whose first member, a string, is key (the flavor's name,
 * the backend's arch, the MMA row's op_id); NULL when none is. */
static const void *find_row(const void *rows, size_t size, int n, const char *key)
{
    const char *row = rows;
    int i;
    for (i = 0; i < n; i++, row += size)
        if (strcmp(*(const char *const *)(const void *)row, key) == 0)
            return row;
    return NULL;
}

/* ---- flavors (llvm-ir §3) ---- */

#define DL_LLVM20 \
    "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128" \
    "-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512" \
    "-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
#define DL_LLVM22 \
    "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32" \
    "-p8:128:128:128:48-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256" \
    "-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
#define DL_LLVM23 \
    "e-m:e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32" \
    "-p8:128:128:128:48-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256" \
    "-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"

const rk_ll_flavor rk_ll_flavors[] = {
    {"llvm20", 0, DL_LLVM20, 0, "nocapture"},
    {"llvm22", 1, DL_LLVM22, 1, "captures(none)"},
    {"llvm23", 2, DL_LLVM23, 1, "captures(none)"},
};

const rk_ll_flavor *rk_find_flavor(const char *name)
{
    return find_row(rk_ll_flavors, sizeof rk_ll_flavors[0], RK_LL_N_FLAVORS, name);
}

/* ---- backends (llvm-ir §12.1, §12.6, §14) ---- */

const rk_ll_backend rk_ll_backends[] = {
    {"gfx942", WAIT_GFX9, 159744, 112, 49279, 0, TR_NONE, 1},
    {"gfx950", WAIT_GFX9, 159744, 112, 49279, 0, TR_B64, 4},
    {"gfx1151", WAIT_GFX11, 822165504, 7, 64519, 0, TR_NONE, 0},
    {"gfx1201", WAIT_SPLIT, 822165504, 0, 0, 0, TR_NONE, 0},
    {"gfx1250", WAIT_SPLIT, 822165504, 0, 0, 1, TR_B128, 0},
};

const rk_ll_backend *rk_find_backend(const char *arch)
{
    return find_row(rk_ll_backends, sizeof rk_ll_backends[0], RK_LL_N_BACKENDS, arch);
}

/* ---- the declaration table (llvm-ir §2, item 5) ---- */

/* clang-format off */
const rk_ll_decl rk_ll_decls[] = {
    {"workitem.id.x", "declare i32 @llvm.amdgcn.workitem.id.x()"},
    {"workitem.id.y", "declare i32 @llvm.amdgcn.workitem.id.y()"},
    {"workitem.id.z", "declare i32 @llvm.amdgcn.workitem.id.z()"},
    {"workgroup.id.x", "declare i32 @llvm.amdgcn.workgroup.id.x()"},
    {"workgroup.id.y", "declare i32 @llvm.amdgcn.workgroup.id.y()"},
    {"workgroup.id.z", "declare i32 @llvm.amdgcn.workgroup.id.z()"},
    {"mbcnt.lo", "declare i32 @llvm.amdgcn.mbcnt.lo(i32, i32)"},
    {"mbcnt.hi", "declare i32 @llvm.amdgcn.mbcnt.hi(i32, i32)"},
    {"readfirstlane.i32", "declare i32 @llvm.amdgcn.readfirstlane.i32(i32)"},
    {"smin.i32", "declare i32 @llvm.smin.i32(i32, i32)"},
    {"smax.i32", "declare i32 @llvm.smax.i32(i32, i32)"},
    {"minnum.f32", "declare float @llvm.minnum.f32(float, float)"},
    {"maxnum.f32", "declare float @llvm.maxnum.f32(float, float)"},
    {"make.buffer.rsrc", "declare ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p1(ptr addrspace(1), i16, i32, i32)"},
    {"raw.ptr.buffer.load.i16",
     "declare i16 @llvm.amdgcn.raw.ptr.buffer.load.i16(ptr addrspace(8), i32, i32, i32 immarg)"},
    {"raw.ptr.buffer.load.i32",
     "declare i32 @llvm.amdgcn.raw.ptr.buffer.load.i32(ptr addrspace(8), i32, i32, i32 immarg)"},
    {"raw.ptr.buffer.load.v2i32",
     "declare <2 x i32> @llvm.amdgcn.raw.ptr.buffer.load.v2i32(ptr addrspace(8), i32, i32, i32 immarg)"},
    {"raw.ptr.buffer.load.v4i32",
     "declare <4 x i32> @llvm.amdgcn.raw.ptr.buffer.load.v4i32(ptr addrspace(8), i32, i32, i32 immarg)"},
    {"raw.ptr.buffer.store.i16",
     "declare void @llvm.amdgcn.raw.ptr.buffer.store.i16(i16, ptr addrspace(8), i32, i32, i32 immarg)"},
    {"raw.ptr.buffer.store.i32",
     "declare void @llvm.amdgcn.raw.ptr.buffer.store.i32(i32, ptr addrspace(8), i32, i32, i32 immarg)"},
    {"raw.ptr.buffer.store.v2i32",
     "declare void @llvm.amdgcn.raw.ptr.buffer.store.v2i32(<2 x i32>, ptr addrspace(8), i32, i32, i32 immarg)"},
    {"raw.ptr.buffer.store.v4i32",
     "declare void @llvm.amdgcn.raw.ptr.buffer.store.v4i32(<4 x i32>, ptr addrspace(8), i32, i32, i32 immarg)"},
    {"raw.ptr.buffer.load.lds",
     "declare void @llvm.amdgcn.raw.ptr.buffer.load.lds(ptr addrspace(8), ptr addrspace(3), i32 immarg, i32, i32,"
     " i32 immarg, i32 immarg)"},
    {"ds.read.tr16.b64.v4i16", "declare <4 x i16> @llvm.amdgcn.ds.read.tr16.b64.v4i16(ptr addrspace(3))"},
    {"ds.load.tr16.b128.v8f16", "declare <8 x half> @llvm.amdgcn.ds.load.tr16.b128.v8f16(ptr addrspace(3))"},
    {"ds.load.tr16.b128.v8bf16", "declare <8 x bfloat> @llvm.amdgcn.ds.load.tr16.b128.v8bf16(ptr addrspace(3))"},
    {"s.waitcnt", "declare void @llvm.amdgcn.s.waitcnt(i32 immarg)"},
    {"s.wait.loadcnt", "declare void @llvm.amdgcn.s.wait.loadcnt(i16 immarg)"},
    {"s.wait.storecnt", "declare void @llvm.amdgcn.s.wait.storecnt(i16 immarg)"},
    {"s.wait.dscnt", "declare void @llvm.amdgcn.s.wait.dscnt(i16 immarg)"},
    {"s.barrier", "declare void @llvm.amdgcn.s.barrier()"},
    {"mfma.f32.32x32x8f16",
     "declare <16 x float> @llvm.amdgcn.mfma.f32.32x32x8f16(<4 x half>, <4 x half>, <16 x float>, i32 immarg,"
     " i32 immarg, i32 immarg)"},
    {"mfma.f32.16x16x16f16",
     "declare <4 x float> @llvm.amdgcn.mfma.f32.16x16x16f16(<4 x half>, <4 x half>, <4 x float>, i32 immarg,"
     " i32 immarg, i32 immarg)"},
    {"mfma.f32.32x32x16.f16",
     "declare <16 x float> @llvm.amdgcn.mfma.f32.32x32x16.f16(<8 x half>, <8 x half>, <16 x float>, i32 immarg,"
     " i32 immarg, i32 immarg)"},
    {"mfma.f32.16x16x32.f16",
     "declare <4 x float> @llvm.amdgcn.mfma.f32.16x16x32.f16(<8 x half>, <8 x half>, <4 x float>, i32 immarg,"
     " i32 immarg, i32 immarg)"},
    {"mfma.f32.32x32x8bf16.1k",
     "declare <16 x float> @llvm.amdgcn.mfma.f32.32x32x8bf16.1k(<4 x i16>, <4 x i16>, <16 x float>, i32 immarg,"
     " i32 immarg, i32 immarg)"},
    {"mfma.f32.16x16x16bf16.1k",
     "declare <4 x float> @llvm.amdgcn.mfma.f32.16x16x16bf16.1k(<4 x i16>, <4 x i16>, <4 x float>, i32 immarg,"
     " i32 immarg, i32 immarg)"},
    {"mfma.f32.32x32x16.bf16",
     "declare <16 x float> @llvm.amdgcn.mfma.f32.32x32x16.bf16(<8 x bfloat>, <8 x bfloat>, <16 x float>,"
     " i32 immarg, i32 immarg, i32 immarg)"},
    {"mfma.f32.16x16x32.bf16",
     "declare <4 x float> @llvm.amdgcn.mfma.f32.16x16x32.bf16(<8 x bfloat>, <8 x bfloat>, <4 x float>,"
     " i32 immarg, i32 immarg, i32 immarg)"},
    {"mfma.f32.16x16x4f32",
     "declare <4 x float> @llvm.amdgcn.mfma.f32.16x16x4f32(float, float, <4 x float>, i32 immarg, i32 immarg,"
     " i32 immarg)"},
    {"mfma.f32.32x32x2f32",
     "declare <16 x float> @llvm.amdgcn.mfma.f32.32x32x2f32(float, float, <16 x float>, i32 immarg, i32 immarg,"
     " i32 immarg)"},
    {"wmma.f32.16x16x16.f16.v8f32.v16f16",
     "declare <8 x float> @llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32.v16f16(<16 x half>, <16 x half>, <8 x float>)"},
    {"wmma.f32.16x16x16.bf16.v8f32.v16i16",
     "declare <8 x float> @llvm.amdgcn.wmma.f32.16x16x16.bf16.v8f32.v16i16(<16 x i16>, <16 x i16>, <8 x float>)"},
    {"wmma.f32.16x16x16.f16.v8f32.v8f16",
     "declare <8 x float> @llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32.v8f16(<8 x half>, <8 x half>, <8 x float>)"},
    {"wmma.f32.16x16x16.bf16.v8f32.v8i16",
     "declare <8 x float> @llvm.amdgcn.wmma.f32.16x16x16.bf16.v8f32.v8i16(<8 x i16>, <8 x i16>, <8 x float>)"},
    {"wmma.f32.16x16x32.f16.v8f32.v16f16",
     "declare <8 x float> @llvm.amdgcn.wmma.f32.16x16x32.f16.v8f32.v16f16(i1 immarg, <16 x half>, i1 immarg,"
     " <16 x half>, i16 immarg, <8 x float>, i1 immarg, i1 immarg)"},
    {"wmma.f32.16x16x32.bf16.v8f32.v16bf16",
     "declare <8 x float> @llvm.amdgcn.wmma.f32.16x16x32.bf16.v8f32.v16bf16(i1 immarg, <16 x bfloat>, i1 immarg,"
     " <16 x bfloat>, i16 immarg, <8 x float>, i1 immarg, i1 immarg)"},
    {"wmma.f32.16x16x4.f32.v8f32.v2f32",
     "declare <8 x float> @llvm.amdgcn.wmma.f32.16x16x4.f32.v8f32.v2f32(i1 immarg, <2 x float>, i1 immarg,"
     " <2 x float>, i16 immarg, <8 x float>, i1 immarg, i1 immarg)"},
    {"sched.group.barrier", "declare void @llvm.amdgcn.sched.group.barrier(i32 immarg, i32 immarg, i32 immarg)"},
    {"sched.barrier", "declare void @llvm.amdgcn.sched.barrier(i32 immarg)"},
    {"s.setprio", "declare void @llvm.amdgcn.s.setprio(i16 immarg)"},
};
/* clang-format on */

const rk_ll_decl_override rk_ll_decl_overrides[] = {
    {"make.buffer.rsrc",
     "declare ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1), i16, i64, i32)", ""},
};

const char *rk_decl_text(const rk_ll_decl *row, const rk_ll_flavor *flavor)
{
    const rk_ll_decl_override *o;
    for (o = rk_ll_decl_overrides; o < rk_ll_decl_overrides + RK_LL_N_DECL_OVERRIDES; o++)
        if (strcmp(o->key, row->key) == 0) {
            if (flavor->generation >= 2 && o->llvm23[0])
                return o->llvm23;
            if (flavor->generation >= 1 && o->llvm22[0])
                return o->llvm22;
        }
    return row->text;
}

/* ---- MMA atoms (llvm-ir §12.2, §12.3; op_ids docs/ir.md §4.5) ---- */

/* clang-format off */
const rk_ll_mma_row rk_ll_mma_rows[] = {
    {"mfma_f32_32x32x8_f16", {"gfx942", "gfx950", NULL}, "mfma.f32.32x32x8f16", FORM_MFMA, "<4 x half>", 0,
     "<16 x float>"},
    {"mfma_f32_16x16x16_f16", {"gfx942", "gfx950", NULL}, "mfma.f32.16x16x16f16", FORM_MFMA, "<4 x half>", 0,
     "<4 x float>"},
    {"mfma_f32_32x32x16_f16", {"gfx950", NULL, NULL}, "mfma.f32.32x32x16.f16", FORM_MFMA, "<8 x half>", 0,
     "<16 x float>"},
    {"mfma_f32_16x16x32_f16", {"gfx950", NULL, NULL}, "mfma.f32.16x16x32.f16", FORM_MFMA, "<8 x half>", 0,
     "<4 x float>"},
    {"mfma_f32_32x32x8_bf16", {"gfx942", "gfx950", NULL}, "mfma.f32.32x32x8bf16.1k", FORM_MFMA, "<4 x i16>", 1,
     "<16 x float>"},
    {"mfma_f32_16x16x16_bf16", {"gfx942", "gfx950", NULL}, "mfma.f32.16x16x16bf16.1k", FORM_MFMA, "<4 x i16>",
     1, "<4 x float>"},
    {"mfma_f32_32x32x16_bf16", {"gfx950", NULL, NULL}, "mfma.f32.32x32x16.bf16", FORM_MFMA, "<8 x bfloat>", 0,
     "<16 x float>"},
    {"mfma_f32_16x16x32_bf16", {"gfx950", NULL, NULL}, "mfma.f32.16x16x32.bf16", FORM_MFMA, "<8 x bfloat>", 0,
     "<4 x float>"},
    {"mfma_f32_16x16x4_f32", {"gfx942", "gfx950", NULL}, "mfma.f32.16x16x4f32", FORM_MFMA, "float", 0,
     "<4 x float>"},
    {"mfma_f32_32x32x2_f32", {"gfx942", "gfx950", NULL}, "mfma.f32.32x32x2f32", FORM_MFMA, "float", 0,
     "<16 x float>"},
    {"wmma_f32_16x16x16_f16", {"gfx1151", NULL, NULL}, "wmma.f32.16x16x16.f16.v8f32.v16f16", FORM_WMMA3,
     "<16 x half>", 0, "<8 x float>"},
    {"wmma_f32_16x16x16_bf16", {"gfx1151", NULL, NULL}, "wmma.f32.16x16x16.bf16.v8f32.v16i16", FORM_WMMA3,
     "<16 x i16>", 1, "<8 x float>"},
    {"wmma_gfx12_f32_16x16x16_f16", {"gfx1201", NULL, NULL}, "wmma.f32.16x16x16.f16.v8f32.v8f16", FORM_WMMA3,
     "<8 x half>", 0, "<8 x float>"},
    {"wmma_gfx12_f32_16x16x16_bf16", {"gfx1201", NULL, NULL}, "wmma.f32.16x16x16.bf16.v8f32.v8i16", FORM_WMMA3,
     "<8 x i16>", 1, "<8 x float>"},
    {"wmma_gfx1250_f32_16x16x32_f16", {"gfx1250", NULL, NULL}, "wmma.f32.16x16x32.f16.v8f32.v16f16", FORM_WMMA8,
     "<16 x half>", 0, "<8 x float>"},
    {"wmma_gfx1250_f32_16x16x32_bf16", {"gfx1250", NULL, NULL}, "wmma.f32.16x16x32.bf16.v8f32.v16bf16",
     FORM_WMMA8, "<16 x bfloat>", 0, "<8 x float>"},
    {"wmma_gfx1250_f32_16x16x4_f32", {"gfx1250", NULL, NULL}, "wmma.f32.16x16x4.f32.v8f32.v2f32", FORM_WMMA8,
     "<2 x float>", 0, "<8 x float>"},
};
/* clang-format on */

const rk_ll_mma_row *rk_mma_row(const char *op_id)
{
    return find_row(rk_ll_mma_rows, sizeof rk_ll_mma_rows[0], RK_LL_N_MMA_ROWS, op_id);
}

/* ---- buffer access widths (llvm-ir §12.5) ---- */

const rk_ll_width rk_ll_buffer_widths[] = {
    {2, "i16", "i16", "raw.ptr.buffer.load.i16", "raw.ptr.buffer.store.i16", "bli16", "bsi16"},
    {4, "i32", "i32", "raw.ptr.buffer.load.i32", "raw.ptr.buffer.store.i32", "bli32", "bsi32"},
    {8, "v2i32", "<2 x i32>", "raw.ptr.buffer.load.v2i32", "raw.ptr.buffer.store.v2i32", "blv2i32", "bsv2i32"},
    {16, "v4i32", "<4 x i32>", "raw.ptr.buffer.load.v4i32", "raw.ptr.buffer.store.v4i32", "blv4i32", "bsv4i32"},
};

/* ---- types (llvm-ir §4) ---- */

/* clang-format off */
const rk_ll_scalar rk_ll_scalar_types[] = {
    {"i1", "i1", 1},
    {"i32", "i32", 4},
    {"i64", "i64", 8},
    {"f16", "half", 2},
    {"bf16", "bfloat", 2},
    {"f32", "float", 4},
};

const char rk_ll_hex[] = "0123456789ABCDEF";

/* ---- attributes (llvm-ir §7, docs/lowering.md §4) ---- */

const char *const rk_ll_param_attrs[] = {"noalias", "readonly", "writeonly", "nocapture", "nonnull",
                                                "align", "dereferenceable", "addr_space", NULL};
/* grid, wave_size and split_k_runtime describe the launch (docs/ir.md §3); LLVM does not see them */
const char *const rk_ll_kernel_attrs[] = {"max_workgroup_size", "waves_per_eu", "scheduler_strategy",
                                          "agpr_alloc", "grid", "wave_size", "split_k_runtime", NULL};
const char *const rk_ll_sched_strategies[] = {"max-ilp", "max-memory-clause", "iterative-ilp",
                                                     "iterative-minreg", "iterative-maxocc", NULL};

/* ---- per-op opcodes and callees (docs/lowering.md §5) ---- */

const char *const rk_ll_binary_ops[RK_N_OPS] = {
    [RK_OP_ADD] = "add",
    [RK_OP_SUB] = "sub",
    [RK_OP_MUL] = "mul",
    [RK_OP_DIV] = "sdiv",
    [RK_OP_MOD] = "srem",
    [RK_OP_AND] = "and",
    [RK_OP_OR] = "or",
    [RK_OP_FADD] = "fadd",
    [RK_OP_FMUL] = "fmul",
};
/* clang-format on */

const rk_ll_binary_call rk_ll_binary_calls[RK_N_OPS] = {
    [RK_OP_MIN] = {"smin.i32", "i32 @llvm.smin.i32"},
    [RK_OP_MAX] = {"smax.i32", "i32 @llvm.smax.i32"},
    [RK_OP_FMIN] = {"minnum.f32", "float @llvm.minnum.f32"},
    [RK_OP_FMAX] = {"maxnum.f32", "float @llvm.maxnum.f32"},
};

const char *const rk_ll_id_keys[2][3] = {{"workitem.id.x", "workitem.id.y", "workitem.id.z"},
                                         {"workgroup.id.x", "workgroup.id.y", "workgroup.id.z"}};

/* ---- names (docs/lowering.md §1) ---- */

/* LLVM takes a global name bare when it matches [-a-zA-Z$._][-a-zA-Z$._0-9]* (LangRef,
 * "Identifiers"); any other is written in quotes, @"...". A kernel name holds letters, digits,
 * '_' and, from the acc tag (%g), '.', '-' (a negative value, the -inf of an unset clamp_min)
 * and '+' (1e+06); a name prefix may start with a digit. */
const char rk_ll_name_chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-";
