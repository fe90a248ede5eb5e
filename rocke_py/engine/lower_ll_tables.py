"""Mode `ll`: the data tables of the lowering (docs/lowering.md §2), apart from its handlers.

Twin of rocke_c/src/lower_ll_tables.c, row for row: the flavors, the backends, the declaration
table, the MMA atoms, the buffer widths and scalar types, the attribute names, the per-op
opcodes and callees, and the name characters. Every row here is a fact of LLVM or of a target
(docs/reference/llvm-ir.md); rocke_py/engine/lower_ll.py reads them and holds no table of its
own but the handler of each op."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Optional

from . import ops

TRIPLE = "amdgcn-amd-amdhsa"


# ---- flavors (llvm-ir §3) ----

DL_LLVM20 = (
    "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128"
    "-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512"
    "-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
)
DL_LLVM22 = (
    "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32"
    "-p8:128:128:128:48-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256"
    "-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
)
DL_LLVM23 = (
    "e-m:e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32"
    "-p8:128:128:128:48-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256"
    "-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
)


@dataclass(frozen=True)
class Flavor:
    name: str
    generation: int  # 0 llvm20, 1 llvm22, 2 llvm23: selects the declaration column
    datalayout: str
    rsrc_p8: bool  # make.buffer.rsrc.p8.p1 with an i64 byte count (else .p1 with i32)
    nocapture: str  # the spelling of the pointer-param capture attribute


FLAVORS = (
    Flavor("llvm20", 0, DL_LLVM20, False, "nocapture"),
    Flavor("llvm22", 1, DL_LLVM22, True, "captures(none)"),
    Flavor("llvm23", 2, DL_LLVM23, True, "captures(none)"),
)


def find_flavor(name: str) -> Optional[Flavor]:
    return next((f for f in FLAVORS if f.name == name), None)


# ---- backends (llvm-ir §12.1, §12.6, §14) ----

WAIT_GFX9 = 0  # s_waitcnt: vm_lo | ec<<4 | lk<<8 | vm_hi<<14
WAIT_GFX11 = 1  # s_waitcnt: ec | lk<<4 | vm<<10
WAIT_SPLIT = 2  # gfx12: s.wait.loadcnt / storecnt / dscnt (i16)

TR_NONE = 0
TR_B64 = 1  # gfx950: ds.read.tr16.b64 (tile.ds_read_tr16_b64)
TR_B128 = 2  # gfx1250: ds.load.tr16.b128 (tile.ds_read_tr16_b128)


@dataclass(frozen=True)
class Backend:
    arch: str
    wait: int  # WAIT_*
    word3: int  # buffer resource DWORD3
    drain_full: int  # tile.sync s_waitcnt immediate (WAIT_GFX9/WAIT_GFX11)
    drain_lds: int  # tile.sync_lds_only s_waitcnt immediate
    lds_v8_volatile: bool  # plain 8-wide LDS vector loads are `load volatile` (gfx1250)
    transpose: int  # TR_*
    async_lds_dwords: int  # the widest tile.async_buffer_load_lds (0: not available)


BACKENDS = (
    Backend("gfx942", WAIT_GFX9, 159744, 112, 49279, False, TR_NONE, 1),
    Backend("gfx950", WAIT_GFX9, 159744, 112, 49279, False, TR_B64, 4),
    Backend("gfx1151", WAIT_GFX11, 822165504, 7, 64519, False, TR_NONE, 0),
    Backend("gfx1201", WAIT_SPLIT, 822165504, 0, 0, False, TR_NONE, 0),
    Backend("gfx1250", WAIT_SPLIT, 822165504, 0, 0, True, TR_B128, 0),
)

VMCNT_MAX = 63  # 6-bit vmcnt / loadcnt / storecnt on every target
GFX9_EXPCNT_MAX = 7
GFX9_LGKMCNT_MAX = 15
GFX11_EXPCNT_MAX = 7
GFX11_LGKMCNT_MAX = 63


def find_backend(arch: str) -> Optional[Backend]:
    return next((b for b in BACKENDS if b.arch == arch), None)


# ---- the declaration table (llvm-ir §2, item 5): printed in this order, only the rows used ----
# (key, text): every flavor's text, unless DECL_OVERRIDES gives the row a text of its own.

DECLS = (
    ("workitem.id.x", "declare i32 @llvm.amdgcn.workitem.id.x()"),
    ("workitem.id.y", "declare i32 @llvm.amdgcn.workitem.id.y()"),
    ("workitem.id.z", "declare i32 @llvm.amdgcn.workitem.id.z()"),
    ("workgroup.id.x", "declare i32 @llvm.amdgcn.workgroup.id.x()"),
    ("workgroup.id.y", "declare i32 @llvm.amdgcn.workgroup.id.y()"),
    ("workgroup.id.z", "declare i32 @llvm.amdgcn.workgroup.id.z()"),
    ("mbcnt.lo", "declare i32 @llvm.amdgcn.mbcnt.lo(i32, i32)"),
    ("mbcnt.hi", "declare i32 @llvm.amdgcn.mbcnt.hi(i32, i32)"),
    ("readfirstlane.i32", "declare i32 @llvm.amdgcn.readfirstlane.i32(i32)"),
    ("smin.i32", "declare i32 @llvm.smin.i32(i32, i32)"),
    ("smax.i32", "declare i32 @llvm.smax.i32(i32, i32)"),
    ("minnum.f32", "declare float @llvm.minnum.f32(float, float)"),
    ("maxnum.f32", "declare float @llvm.maxnum.f32(float, float)"),
    ("make.buffer.rsrc", "declare ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p1(ptr addrspace(1), i16, i32, i32)"),
    (
        "raw.ptr.buffer.load.i16",
        "declare i16 @llvm.amdgcn.raw.ptr.buffer.load.i16(ptr addrspace(8), i32, i32, i32 immarg)",
    ),
    (
        "raw.ptr.buffer.load.i32",
        "declare i32 @llvm.amdgcn.raw.ptr.buffer.load.i32(ptr addrspace(8), i32, i32, i32 immarg)",
    ),
    (
        "raw.ptr.buffer.load.v2i32",
        "declare <2 x i32> @llvm.amdgcn.raw.ptr.buffer.load.v2i32(ptr addrspace(8), i32, i32, i32 immarg)",
    ),
    (
        "raw.ptr.buffer.load.v4i32",
        "declare <4 x i32> @llvm.amdgcn.raw.ptr.buffer.load.v4i32(ptr addrspace(8), i32, i32, i32 immarg)",
    ),
    (
        "raw.ptr.buffer.store.i16",
        "declare void @llvm.amdgcn.raw.ptr.buffer.store.i16(i16, ptr addrspace(8), i32, i32, i32 immarg)",
    ),
    (
        "raw.ptr.buffer.store.i32",
        "declare void @llvm.amdgcn.raw.ptr.buffer.store.i32(i32, ptr addrspace(8), i32, i32, i32 immarg)",
    ),
    (
        "raw.ptr.buffer.store.v2i32",
        "declare void @llvm.amdgcn.raw.ptr.buffer.store.v2i32(<2 x i32>, ptr addrspace(8), i32, i32, i32 immarg)",
    ),
    (
        "raw.ptr.buffer.store.v4i32",
        "declare void @llvm.amdgcn.raw.ptr.buffer.store.v4i32(<4 x i32>, ptr addrspace(8), i32, i32, i32 immarg)",
    ),
    (
        "raw.ptr.buffer.load.lds",
        "declare void @llvm.amdgcn.raw.ptr.buffer.load.lds(ptr addrspace(8), ptr addrspace(3), i32 immarg, i32, i32,"
        " i32 immarg, i32 immarg)",
    ),
    ("ds.read.tr16.b64.v4i16", "declare <4 x i16> @llvm.amdgcn.ds.read.tr16.b64.v4i16(ptr addrspace(3))"),
    ("ds.load.tr16.b128.v8f16", "declare <8 x half> @llvm.amdgcn.ds.load.tr16.b128.v8f16(ptr addrspace(3))"),
    ("ds.load.tr16.b128.v8bf16", "declare <8 x bfloat> @llvm.amdgcn.ds.load.tr16.b128.v8bf16(ptr addrspace(3))"),
    ("s.waitcnt", "declare void @llvm.amdgcn.s.waitcnt(i32 immarg)"),
    ("s.wait.loadcnt", "declare void @llvm.amdgcn.s.wait.loadcnt(i16 immarg)"),
    ("s.wait.storecnt", "declare void @llvm.amdgcn.s.wait.storecnt(i16 immarg)"),
    ("s.wait.dscnt", "declare void @llvm.amdgcn.s.wait.dscnt(i16 immarg)"),
    ("s.barrier", "declare void @llvm.amdgcn.s.barrier()"),
    (
        "mfma.f32.32x32x8f16",
        "declare <16 x float> @llvm.amdgcn.mfma.f32.32x32x8f16(<4 x half>, <4 x half>, <16 x float>, i32 immarg,"
        " i32 immarg, i32 immarg)",
    ),
    (
        "mfma.f32.16x16x16f16",
        "declare <4 x float> @llvm.amdgcn.mfma.f32.16x16x16f16(<4 x half>, <4 x half>, <4 x float>, i32 immarg,"
        " i32 immarg, i32 immarg)",
    ),
    (
        "mfma.f32.32x32x16.f16",
        "declare <16 x float> @llvm.amdgcn.mfma.f32.32x32x16.f16(<8 x half>, <8 x half>, <16 x float>, i32 immarg,"
        " i32 immarg, i32 immarg)",
    ),
    (
        "mfma.f32.16x16x32.f16",
        "declare <4 x float> @llvm.amdgcn.mfma.f32.16x16x32.f16(<8 x half>, <8 x half>, <4 x float>, i32 immarg,"
        " i32 immarg, i32 immarg)",
    ),
    (
        "mfma.f32.32x32x8bf16.1k",
        "declare <16 x float> @llvm.amdgcn.mfma.f32.32x32x8bf16.1k(<4 x i16>, <4 x i16>, <16 x float>, i32 immarg,"
        " i32 immarg, i32 immarg)",
    ),
    (
        "mfma.f32.16x16x16bf16.1k",
        "declare <4 x float> @llvm.amdgcn.mfma.f32.16x16x16bf16.1k(<4 x i16>, <4 x i16>, <4 x float>, i32 immarg,"
        " i32 immarg, i32 immarg)",
    ),
    (
        "mfma.f32.32x32x16.bf16",
        "declare <16 x float> @llvm.amdgcn.mfma.f32.32x32x16.bf16(<8 x bfloat>, <8 x bfloat>, <16 x float>,"
        " i32 immarg, i32 immarg, i32 immarg)",
    ),
    (
        "mfma.f32.16x16x32.bf16",
        "declare <4 x float> @llvm.amdgcn.mfma.f32.16x16x32.bf16(<8 x bfloat>, <8 x bfloat>, <4 x float>,"
        " i32 immarg, i32 immarg, i32 immarg)",
    ),
    (
        "mfma.f32.16x16x4f32",
        "declare <4 x float> @llvm.amdgcn.mfma.f32.16x16x4f32(float, float, <4 x float>, i32 immarg, i32 immarg,"
        " i32 immarg)",
    ),
    (
        "mfma.f32.32x32x2f32",
        "declare <16 x float> @llvm.amdgcn.mfma.f32.32x32x2f32(float, float, <16 x float>, i32 immarg, i32 immarg,"
        " i32 immarg)",
    ),
    (
        "wmma.f32.16x16x16.f16.v8f32.v16f16",
        "declare <8 x float> @llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32.v16f16(<16 x half>, <16 x half>, <8 x float>)",
    ),
    (
        "wmma.f32.16x16x16.bf16.v8f32.v16i16",
        "declare <8 x float> @llvm.amdgcn.wmma.f32.16x16x16.bf16.v8f32.v16i16(<16 x i16>, <16 x i16>, <8 x float>)",
    ),
    (
        "wmma.f32.16x16x16.f16.v8f32.v8f16",
        "declare <8 x float> @llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32.v8f16(<8 x half>, <8 x half>, <8 x float>)",
    ),
    (
        "wmma.f32.16x16x16.bf16.v8f32.v8i16",
        "declare <8 x float> @llvm.amdgcn.wmma.f32.16x16x16.bf16.v8f32.v8i16(<8 x i16>, <8 x i16>, <8 x float>)",
    ),
    (
        "wmma.f32.16x16x32.f16.v8f32.v16f16",
        "declare <8 x float> @llvm.amdgcn.wmma.f32.16x16x32.f16.v8f32.v16f16(i1 immarg, <16 x half>, i1 immarg,"
        " <16 x half>, i16 immarg, <8 x float>, i1 immarg, i1 immarg)",
    ),
    (
        "wmma.f32.16x16x32.bf16.v8f32.v16bf16",
        "declare <8 x float> @llvm.amdgcn.wmma.f32.16x16x32.bf16.v8f32.v16bf16(i1 immarg, <16 x bfloat>, i1 immarg,"
        " <16 x bfloat>, i16 immarg, <8 x float>, i1 immarg, i1 immarg)",
    ),
    (
        "wmma.f32.16x16x4.f32.v8f32.v2f32",
        "declare <8 x float> @llvm.amdgcn.wmma.f32.16x16x4.f32.v8f32.v2f32(i1 immarg, <2 x float>, i1 immarg,"
        " <2 x float>, i16 immarg, <8 x float>, i1 immarg, i1 immarg)",
    ),
    ("sched.group.barrier", "declare void @llvm.amdgcn.sched.group.barrier(i32 immarg, i32 immarg, i32 immarg)"),
    ("sched.barrier", "declare void @llvm.amdgcn.sched.barrier(i32 immarg)"),
    ("s.setprio", "declare void @llvm.amdgcn.s.setprio(i16 immarg)"),
)


# The rows a newer flavor declares otherwise: (key, llvm22 text, llvm23 text), "" = no override.
# llvm22 uses its text when set, else the row's; llvm23 its text, else the llvm22 text, else the
# row's.
DECL_OVERRIDES = (
    (
        "make.buffer.rsrc",
        "declare ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1), i16, i64, i32)",
        "",
    ),
)


def decl_text(row: tuple[str, str], flavor: Flavor) -> str:
    for key, llvm22, llvm23 in DECL_OVERRIDES:
        if key == row[0]:
            if flavor.generation >= 2 and llvm23 != "":
                return llvm23
            if flavor.generation >= 1 and llvm22 != "":
                return llvm22
    return row[1]


# ---- MMA atoms (llvm-ir §12.2, §12.3; op_ids docs/ir.md §4.5) ----

FORM_MFMA = 0  # (a, b, c, i32 0, i32 0, i32 0)
FORM_WMMA3 = 1  # (a, b, c)
FORM_WMMA8 = 2  # (i1 false, a, i1 false, b, i16 0, c, i1 false, i1 false)


@dataclass(frozen=True)
class MmaRow:
    op_id: str
    archs: tuple[str, ...]
    intrinsic: str  # the declaration key; the callee is @llvm.amdgcn.<intrinsic>
    form: int  # FORM_*
    ab_type: str  # the LLVM type of A and B in the call
    cast: bool  # A and B are bitcast from their IR type (bf16) to ab_type (i16)
    c_type: str


MMA_ROWS = (
    MmaRow(
        "mfma_f32_32x32x8_f16",
        ("gfx942", "gfx950"),
        "mfma.f32.32x32x8f16",
        FORM_MFMA,
        "<4 x half>",
        False,
        "<16 x float>",
    ),
    MmaRow(
        "mfma_f32_16x16x16_f16",
        ("gfx942", "gfx950"),
        "mfma.f32.16x16x16f16",
        FORM_MFMA,
        "<4 x half>",
        False,
        "<4 x float>",
    ),
    MmaRow(
        "mfma_f32_32x32x16_f16", ("gfx950",), "mfma.f32.32x32x16.f16", FORM_MFMA, "<8 x half>", False, "<16 x float>"
    ),
    MmaRow(
        "mfma_f32_16x16x32_f16", ("gfx950",), "mfma.f32.16x16x32.f16", FORM_MFMA, "<8 x half>", False, "<4 x float>"
    ),
    MmaRow(
        "mfma_f32_32x32x8_bf16",
        ("gfx942", "gfx950"),
        "mfma.f32.32x32x8bf16.1k",
        FORM_MFMA,
        "<4 x i16>",
        True,
        "<16 x float>",
    ),
    MmaRow(
        "mfma_f32_16x16x16_bf16",
        ("gfx942", "gfx950"),
        "mfma.f32.16x16x16bf16.1k",
        FORM_MFMA,
        "<4 x i16>",
        True,
        "<4 x float>",
    ),
    MmaRow(
        "mfma_f32_32x32x16_bf16",
        ("gfx950",),
        "mfma.f32.32x32x16.bf16",
        FORM_MFMA,
        "<8 x bfloat>",
        False,
        "<16 x float>",
    ),
    MmaRow(
        "mfma_f32_16x16x32_bf16", ("gfx950",), "mfma.f32.16x16x32.bf16", FORM_MFMA, "<8 x bfloat>", False, "<4 x float>"
    ),
    MmaRow(
        "mfma_f32_16x16x4_f32", ("gfx942", "gfx950"), "mfma.f32.16x16x4f32", FORM_MFMA, "float", False, "<4 x float>"
    ),
    MmaRow(
        "mfma_f32_32x32x2_f32", ("gfx942", "gfx950"), "mfma.f32.32x32x2f32", FORM_MFMA, "float", False, "<16 x float>"
    ),
    MmaRow(
        "wmma_f32_16x16x16_f16",
        ("gfx1151",),
        "wmma.f32.16x16x16.f16.v8f32.v16f16",
        FORM_WMMA3,
        "<16 x half>",
        False,
        "<8 x float>",
    ),
    MmaRow(
        "wmma_f32_16x16x16_bf16",
        ("gfx1151",),
        "wmma.f32.16x16x16.bf16.v8f32.v16i16",
        FORM_WMMA3,
        "<16 x i16>",
        True,
        "<8 x float>",
    ),
    MmaRow(
        "wmma_gfx12_f32_16x16x16_f16",
        ("gfx1201",),
        "wmma.f32.16x16x16.f16.v8f32.v8f16",
        FORM_WMMA3,
        "<8 x half>",
        False,
        "<8 x float>",
    ),
    MmaRow(
        "wmma_gfx12_f32_16x16x16_bf16",
        ("gfx1201",),
        "wmma.f32.16x16x16.bf16.v8f32.v8i16",
        FORM_WMMA3,
        "<8 x i16>",
        True,
        "<8 x float>",
    ),
    MmaRow(
        "wmma_gfx1250_f32_16x16x32_f16",
        ("gfx1250",),
        "wmma.f32.16x16x32.f16.v8f32.v16f16",
        FORM_WMMA8,
        "<16 x half>",
        False,
        "<8 x float>",
    ),
    MmaRow(
        "wmma_gfx1250_f32_16x16x32_bf16",
        ("gfx1250",),
        "wmma.f32.16x16x32.bf16.v8f32.v16bf16",
        FORM_WMMA8,
        "<16 x bfloat>",
        False,
        "<8 x float>",
    ),
    MmaRow(
        "wmma_gfx1250_f32_16x16x4_f32",
        ("gfx1250",),
        "wmma.f32.16x16x4.f32.v8f32.v2f32",
        FORM_WMMA8,
        "<2 x float>",
        False,
        "<8 x float>",
    ),
)


@functools.lru_cache(maxsize=256)  # a search of the table, asked per tile.mma op
def mma_row(op_id: str) -> Optional[MmaRow]:
    return next((row for row in MMA_ROWS if row.op_id == op_id), None)


# ---- buffer access widths (llvm-ir §12.5): bytes -> intrinsic suffix and integer type ----

BUFFER_WIDTHS = (
    (2, "i16", "i16"),
    (4, "i32", "i32"),
    (8, "v2i32", "<2 x i32>"),
    (16, "v4i32", "<4 x i32>"),
)


# ---- types (llvm-ir §4) ----

SCALAR_TYPES = (
    # IR name, LLVM name, bytes in LDS
    ("i1", "i1", 1),
    ("i32", "i32", 4),
    ("i64", "i64", 8),
    ("f16", "half", 2),
    ("bf16", "bfloat", 2),
    ("f32", "float", 4),
)


HEX = "0123456789ABCDEF"


# ---- attributes (llvm-ir §7, docs/lowering.md §4) ----

PARAM_ATTRS = ("noalias", "readonly", "writeonly", "nocapture", "nonnull", "align", "dereferenceable", "addr_space")
# grid, wave_size and split_k_runtime describe the launch (docs/ir.md §3); LLVM does not see them
KERNEL_ATTRS = (
    "max_workgroup_size",
    "waves_per_eu",
    "scheduler_strategy",
    "agpr_alloc",
    "grid",
    "wave_size",
    "split_k_runtime",
)
SCHED_STRATEGIES = ("max-ilp", "max-memory-clause", "iterative-ilp", "iterative-minreg", "iterative-maxocc")


# ---- per-op opcodes and callees (docs/lowering.md §5) ----

BINARY_OPS: dict[int, str] = {
    ops.ADD: "add",
    ops.SUB: "sub",
    ops.MUL: "mul",
    ops.DIV: "sdiv",
    ops.MOD: "srem",
    ops.AND: "and",
    ops.OR: "or",
    ops.FADD: "fadd",
    ops.FMUL: "fmul",
}

BINARY_CALLS: dict[int, tuple[str, str]] = {
    ops.MIN: ("smin.i32", "i32 @llvm.smin.i32"),
    ops.MAX: ("smax.i32", "i32 @llvm.smax.i32"),
    ops.FMIN: ("minnum.f32", "float @llvm.minnum.f32"),
    ops.FMAX: ("maxnum.f32", "float @llvm.maxnum.f32"),
}


DIM_NAMES = ("x", "y", "z")


#: the fences around every s.barrier, ordering LDS only (LLVM's amdgpu-synchronize-as MMRA)
FENCE_RELEASE = 'fence syncscope("workgroup") release, !mmra !2'
FENCE_ACQUIRE = 'fence syncscope("workgroup") acquire, !mmra !2'
LDS_MMRA = '!2 = !{!"amdgpu-synchronize-as", !"local"}'

MARKERS = ", !amdgpu.no.fine.grained.memory !1, !amdgpu.no.remote.memory !1, !amdgpu.ignore.denormal.mode !1"


# ---- control (docs/lowering.md §6) and names (§1) ----

MAX_UNROLL = 4096


# LLVM takes a global name bare when it matches [-a-zA-Z$._][-a-zA-Z$._0-9]* (LangRef,
# "Identifiers"); any other is written in quotes, @"...". A kernel name holds letters, digits,
# '_' and, from the acc tag (%g), '.', '-' (a negative value, the -inf of an unset clamp_min)
# and '+' (1e+06); a name prefix may start with a digit.
NAME_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-"
