"""Mode `ll`: lower a kernel (docs/ir.md) to one AMDGPU LLVM IR module.

Twin of rocke_c/src/lower_ll.c. The format is docs/reference/llvm-ir.md; every choice the
reference leaves open is recorded in docs/lowering.md. The data tables (flavors, backends,
declarations, MMA atoms, ...) are lower_ll_tables.py; here are the plumbing and one handler per
op, found by the op's code (HANDLERS); the C twin follows the handlers line for line.

Names: builder names are printed verbatim; lowerer temporaries are `%<hint>.<n>` from one
counter per lowering (starting at 1); block labels `<kind>.<n>` from one block counter
(starting at 1; `entry` has no number). A kernel that uses an op the arch or flavor cannot
lower raises EngineFailure with a `lower: ` message; no text is produced."""

from __future__ import annotations

import functools
import struct
from dataclasses import dataclass, field
from typing import Callable, Optional

from . import ops
from .arch import TARGETS
from .ir import Kernel, Op, Region, Value, is_ptr, is_smem, is_vec, ptr_elem, smem_elem, smem_shape, vec_elem, vec_len
from .lower_ll_tables import (
    BINARY_CALLS,
    BINARY_OPS,
    BUFFER_WIDTHS,
    DECLS,
    DIM_NAMES,
    FENCE_ACQUIRE,
    FENCE_RELEASE,
    FORM_MFMA,
    FORM_WMMA3,
    GFX9_EXPCNT_MAX,
    GFX9_LGKMCNT_MAX,
    GFX11_EXPCNT_MAX,
    GFX11_LGKMCNT_MAX,
    HEX,
    KERNEL_ATTRS,
    LDS_MMRA,
    MARKERS,
    MAX_UNROLL,
    NAME_CHARS,
    PARAM_ATTRS,
    SCALAR_TYPES,
    SCHED_STRATEGIES,
    TR_B64,
    TR_B128,
    TRIPLE,
    VMCNT_MAX,
    WAIT_GFX9,
    WAIT_SPLIT,
    Backend,
    Flavor,
    MmaRow,
    decl_text,
    find_backend,
    find_flavor,
    mma_row,
)
from .mma_atoms import atom_types
from .result import EngineFailure


def fail(message: str) -> EngineFailure:
    return EngineFailure("lower: " + message)


DECL_INDEX = {row[0]: i for i, row in enumerate(DECLS)}  # built once: need() asks per line


def decl_index(key: str) -> int:
    i = DECL_INDEX.get(key)
    if i is None:
        raise fail("no declaration row " + key)
    return i


# ---- table lookups that fail ----


@functools.lru_cache(maxsize=64)  # table searches, pure: asked per buffer access and per type
def buffer_width(nbytes: int) -> tuple[int, str, str]:
    for row in BUFFER_WIDTHS:
        if row[0] == nbytes:
            return row
    raise fail("a buffer access of " + str(nbytes) + " bytes (expected 2, 4, 8 or 16)")


# ---- types (llvm-ir §4) ----


@functools.lru_cache(maxsize=64)
def scalar_row(t: str) -> tuple[str, str, int]:
    for row in SCALAR_TYPES:
        if row[0] == t:
            return row
    raise fail("no LLVM type for " + t)


@functools.lru_cache(maxsize=1024)  # pure, called for every operand; a kernel uses a handful of types
def ll_type(t: str) -> str:
    if is_vec(t):
        return "<" + str(vec_len(t)) + " x " + scalar_row(vec_elem(t))[1] + ">"
    if is_ptr(t):
        return "ptr addrspace(1)"
    if t == "rsrc":
        return "ptr addrspace(8)"
    if is_smem(t):
        return "ptr addrspace(3)"
    return scalar_row(t)[1]


@functools.lru_cache(maxsize=256)  # pure, asked per LDS access; an alloc's type parsed once (scan_lds)
def lds_array_type(t: str) -> str:
    """The LLVM array type of an smem tile: smem<f16, [64x72]> -> [64 x [72 x half]]."""
    rows, cols = smem_shape(t)
    return "[" + str(rows) + " x [" + str(cols) + " x " + ll_type(smem_elem(t)) + "]]"


@functools.lru_cache(maxsize=256)
def type_bytes(t: str) -> int:
    return scalar_row(vec_elem(t))[2] * vec_len(t)


def f32_literal(value: float) -> str:
    """LLVM's 64-bit hex of value rounded to f32 (llvm-ir §5): 2.0 -> 0x4000000000000000."""
    try:
        single = struct.unpack("<f", struct.pack("<f", value))[0]
    except OverflowError:
        raise fail("the f32 constant " + repr(value) + " is out of range") from None
    bits = struct.unpack("<Q", struct.pack("<d", single))[0]
    digits = ""
    for shift in range(60, -4, -4):
        digits += HEX[(bits >> shift) & 15]
    return "0x" + digits


def align_up(x: int, a: int) -> int:
    return (x + a - 1) // a * a


# ---- the LDS pool (llvm-ir §11) ----


@dataclass
class Alloc:
    name: str  # the smem_alloc result name
    type: str  # its smem type
    start: int  # position of the alloc op (pre-order over every op of the kernel)
    last: int  # position of the last use, -1 when unreferenced
    size: int  # bytes
    align: int  # 16 for 1-byte elements, else 4
    exclusive: bool
    offset: int = -1  # byte offset in the pool once placed


@dataclass
class LdsPlan:
    allocs: list[Alloc]  # every tile.smem_alloc in creation order (unreferenced: offset -1)
    size: int  # pool bytes, a multiple of 16 (0: no pool)


def count_ops(region: Region) -> int:
    n = 0
    for op in region.ops:
        n += 1
        for r in op.regions:
            n += count_ops(r)
    return n


def find_alloc(allocs: list[Alloc], name: str) -> Optional[Alloc]:
    for a in allocs:
        if a.name == name:
            return a
    return None


def scan_lds(region: Region, allocs: list[Alloc], pos: list[int], loop_end: int) -> None:
    """Live intervals: a use inside an scf.for counts at the end of the outermost loop."""
    here = pos[0]  # this op's position (pos[0] is kept for the regions below)
    for op in region.ops:
        for v in op.operands:
            # is_smem, inlined (this loop sees every operand), the substring test first: cheaper
            if "smem<" in v.type and v.type.startswith("smem<"):
                a = find_alloc(allocs, v.name)
                if a is None:
                    raise fail(v.name + " is an LDS value that no tile.smem_alloc defines")
                use_at = here if loop_end < 0 else loop_end
                if use_at > a.last:
                    a.last = use_at
        if op.code == ops.SMEM_ALLOC:
            t = op.results[0].type
            rows, cols = smem_shape(t)
            elem_bytes = scalar_row(smem_elem(t))[2]
            align = 16 if elem_bytes == 1 else 4
            allocs.append(
                Alloc(
                    op.results[0].name, t, here, -1, rows * cols * elem_bytes, align, op.attrs.get("exclusive") is True
                )
            )
        if op.regions:
            pos[0] = here + 1
            inner_end = loop_end
            if op.code == ops.FOR and loop_end < 0:
                inner_end = here + count_ops(op.regions[0])
            for r in op.regions:
                scan_lds(r, allocs, pos, inner_end)
            here = pos[0]
        else:
            here += 1
    pos[0] = here


def plan_lds(kernel: Kernel) -> LdsPlan:
    """Greedy linear scan in creation order: first fit at the lowest aligned offset that overlaps
    no live allocation and no exclusive one; an exclusive allocation overlaps nothing placed."""
    allocs: list[Alloc] = []
    scan_lds(kernel.entry, allocs, [0], -1)
    placed: list[Alloc] = []
    end = 0
    for a in allocs:
        if a.last < 0:
            continue
        conflicts: list[Alloc] = []
        for p in placed:
            if a.exclusive or p.exclusive or p.last >= a.start:
                conflicts.append(p)
        conflicts.sort(key=lambda c: c.offset)  # stable: ties keep placement order
        off = 0
        for c in conflicts:
            if off + a.size <= c.offset:
                break
            if align_up(c.offset + c.size, a.align) > off:
                off = align_up(c.offset + c.size, a.align)
        a.offset = off
        placed.append(a)
        if off + a.size > end:
            end = off + a.size
    return LdsPlan(allocs, align_up(end, 16))


# ---- the lowerer ----


@dataclass
class Block:
    label: str
    lines: list[str] = field(default_factory=list)  # the instructions, without their indent
    terminated: bool = False


class Lowerer:
    def __init__(self, kernel: Kernel, backend: Backend, flavor: Flavor, capacity: int) -> None:
        self.kernel = kernel
        self.backend = backend
        self.flavor = flavor
        self.capacity = capacity
        self.blocks: list[Block] = [Block("entry")]
        self.block = self.blocks[0]
        self.block_counter = 0
        self.temp_counter = 0
        self.needed = [False] * len(DECLS)
        self.names: dict[str, str] = {}  # IR name -> LLVM operand text (a name or a literal)
        self.ints: dict[str, int] = {}  # IR name of an integer constant -> its value
        self.plan = LdsPlan([], 0)
        self.quote = "" if bare_name(kernel.name) else '"'  # docs/lowering.md §1
        self.pool = "@" + self.quote + "smem_pool." + kernel.name + self.quote
        self.bases: dict[tuple[str, str], str] = {}  # (block label, alloc name) -> base pointer temp
        self.suffix = ""  # ".unroll<k>" per open unrolled scf.for
        self.markers = False  # an atomic carries the !amdgpu.* markers (!1)
        self.fences = False  # a barrier's fences carry the LDS-only MMRA (!2)

    # -- plumbing --

    def temp(self, hint: str) -> str:
        self.temp_counter += 1
        return f"%{hint}.{self.temp_counter}"

    def new_block(self, kind: str) -> Block:
        self.block_counter += 1
        block = Block(kind + "." + str(self.block_counter))
        self.blocks.append(block)
        return block

    def emit(self, line: str) -> None:
        self.block.lines.append(line)  # indented when the module is joined

    def need(self, key: str) -> None:
        self.needed[decl_index(key)] = True

    def define(self, v: Value) -> str:
        text = v.name + self.suffix
        self.names[v.name] = text
        return text

    def val(self, v: Value) -> str:
        text = self.names.get(v.name)
        if text is None:
            raise fail(v.name + " is used before it is defined")
        return text

    def typed(self, v: Value) -> str:
        text = self.names.get(v.name)
        if text is None:
            raise fail(v.name + " is used before it is defined")
        return f"{ll_type(v.type)} {text}"

    def int_attr(self, op: Op, key: str) -> int:
        """An integer attr printed as an i32 immediate (or a smaller one, checked by the handler)."""
        value = op.attrs.get(key)
        if not isinstance(value, int) or isinstance(value, bool):
            raise fail(op.name + " needs an integer attr " + key)
        if value < -2147483648 or value > 2147483647:
            raise fail(op.name + " attr " + key + " does not fit in i32")
        return value

    def alloc_of(self, v: Value) -> Alloc:
        a = find_alloc(self.plan.allocs, v.name)
        if a is None or a.offset < 0:
            raise fail(v.name + " is not a placed LDS allocation")
        return a

    def lds_base(self, a: Alloc) -> str:
        """The allocation's first byte: the pool itself at offset 0, else one GEP per block."""
        if a.offset == 0:
            return self.pool
        key = (self.block.label, a.name)
        base = self.bases.get(key)
        if base is None:
            base = self.temp("smem_base")
            self.emit(base + " = getelementptr inbounds i8, ptr addrspace(3) " + self.pool + ", i32 " + str(a.offset))
            self.bases[key] = base
        return base

    def lds_gep(self, s: Value, row: Value, col: Value, hint: str) -> str:
        a = self.alloc_of(s)
        base = self.lds_base(a)
        gep = self.temp(hint)
        self.emit(
            f"{gep} = getelementptr inbounds {lds_array_type(a.type)}, ptr addrspace(3) {base}, i32 0, "
            f"{self.typed(row)}, {self.typed(col)}"
        )
        return gep

    def lds_align(self, op: Op, s: Value) -> int:
        align = self.int_attr(op, "align")
        a = self.alloc_of(s)
        if a.offset % align != 0:
            raise fail(
                op.name + " on " + s.name + " claims align " + str(align) + " but the allocation is at pool"
                " offset " + str(a.offset)
            )
        return align

    # -- the module --

    def lower(self) -> str:
        """Checks in a fixed order (kernel attrs, params, the LDS pool, then the ops in order),
        so both engines report the same first problem."""
        attributes = self.attributes()
        signature = self.signature()
        self.plan = plan_lds(self.kernel)
        if self.plan.size > self.capacity:
            raise fail(
                "the LDS pool of "
                + str(self.plan.size)
                + " bytes exceeds the "
                + str(self.capacity)
                + " bytes of "
                + self.backend.arch
            )
        self.lower_region(self.kernel.entry, True, False)
        if not self.block.terminated:
            self.emit("ret void")
            self.block.terminated = True
        out: list[str] = []
        out.append('target datalayout = "' + self.flavor.datalayout + '"\n')
        out.append('target triple = "' + TRIPLE + '"\n')
        out.append("\n")
        if self.plan.size > 0:
            out.append(
                self.pool
                + " = internal unnamed_addr addrspace(3) global ["
                + str(self.plan.size)
                + " x i8] poison, align 16\n"
            )
            out.append("\n")
        printed = 0
        for i in range(len(DECLS)):
            if self.needed[i]:
                out.append(decl_text(DECLS[i], self.flavor) + "\n")
                printed += 1
        if printed > 0:
            out.append("\n")
        out.append(
            "define amdgpu_kernel void @" + self.quote + self.kernel.name + self.quote + "(" + signature + ") #0 {\n"
        )
        for block in self.blocks:
            out.append(block.label + ":\n")
            if block.lines:
                out.append("  ")  # the block's lines, each indented: one join, not copied again
                out.append("\n  ".join(block.lines))
                out.append("\n")
        out.append("}\n")
        out.append("\n")
        out.append(attributes + "\n")
        if self.markers or self.fences:
            out.append("\n")
        if self.markers:
            out.append("!1 = !{}\n")
        if self.fences:
            out.append(LDS_MMRA + "\n")
        return "".join(out)

    def signature(self) -> str:
        parts: list[str] = []
        for p in self.kernel.params:
            for key in p.attrs:
                if key not in PARAM_ATTRS:
                    raise fail("unknown param attr " + key + " on " + p.value.name)
            t = p.value.type
            if is_ptr(t):
                text = "ptr addrspace(1)"
                space = p.attrs.get("addr_space")
                if space == "constant":
                    text = "ptr addrspace(4)"
                elif space is not None and space != "global":
                    raise fail("unknown addr_space on " + p.value.name)
                if p.attrs.get("noalias") is True:
                    text += " noalias"
                if p.attrs.get("readonly") is True:
                    text += " readonly"
                if p.attrs.get("writeonly") is True:
                    text += " writeonly"
                if p.attrs.get("nocapture") is not False:
                    text += " " + self.flavor.nocapture
                if p.attrs.get("nonnull") is True:
                    text += " nonnull"
                if "align" in p.attrs:
                    text += " align " + str(self.int_attr_of(p.attrs, "align", p.value.name))
                if "dereferenceable" in p.attrs:
                    text += " dereferenceable(" + str(self.int_attr_of(p.attrs, "dereferenceable", p.value.name)) + ")"
            elif t in ("i32", "i64"):
                if p.attrs:
                    raise fail("a scalar param carries attrs: " + p.value.name)
                text = ll_type(t)
            else:
                raise fail("a kernel param of type " + t + ": " + p.value.name)
            parts.append(text + " " + self.define(p.value))
        return ", ".join(parts)

    def int_attr_of(self, attrs: dict, key: str, where: str) -> int:
        value = attrs.get(key)
        if not isinstance(value, int) or isinstance(value, bool):
            raise fail("attr " + key + " of " + where + " must be an integer")
        return value

    def pair_attr(self, key: str) -> str:
        """An int N gives "N,N"; a two-int list [lo, hi] gives "lo,hi"."""
        value = self.kernel.attrs[key]
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value) + "," + str(value)
        if (
            isinstance(value, list)
            and len(value) == 2
            and isinstance(value[0], int)
            and not isinstance(value[0], bool)
            and isinstance(value[1], int)
            and not isinstance(value[1], bool)
        ):
            return str(value[0]) + "," + str(value[1])
        raise fail("kernel attr " + key + " must be an integer or a pair")

    def attributes(self) -> str:
        for key in self.kernel.attrs:
            if key not in KERNEL_ATTRS:
                raise fail("unknown kernel attr " + key)
        max_wg = 256
        if "max_workgroup_size" in self.kernel.attrs:
            max_wg = self.int_attr_of(self.kernel.attrs, "max_workgroup_size", "the kernel")
        text = (
            'attributes #0 = { "uniform-work-group-size"="true" "amdgpu-flat-work-group-size"="64,' + str(max_wg) + '"'
        )
        if "scheduler_strategy" in self.kernel.attrs:
            strategy = self.kernel.attrs["scheduler_strategy"]
            if strategy not in SCHED_STRATEGIES:
                raise fail("unknown scheduler_strategy")
            text += ' "amdgpu-sched-strategy"="' + str(strategy) + '"'
        if "waves_per_eu" in self.kernel.attrs:
            text += ' "amdgpu-waves-per-eu"="' + self.pair_attr("waves_per_eu") + '"'
        if "agpr_alloc" in self.kernel.attrs:
            text += ' "amdgpu-agpr-alloc"="' + self.pair_attr("agpr_alloc") + '"'
        return text + " norecurse nounwind }"

    # -- regions --

    def lower_region(self, region: Region, is_entry: bool, is_for_body: bool) -> None:
        """A for body's final scf.yield is read by lower_for, not lowered."""
        region_ops = region.ops
        n = len(region_ops)
        if is_for_body:
            n -= 1
        last = n - 1 if is_entry else -1
        handlers = HANDLERS_BY_CODE
        ret = ops.RETURN
        for i in range(n):
            op = region_ops[i]
            code = op.code
            if code == ret and i != last:
                raise fail("cf.return must be the last op of the kernel")
            # lower_op, inlined for the ops that have a handler (lower_op raises for the rest)
            handler = handlers[code]
            if handler is None:
                self.lower_op(op)
            else:
                handler(self, op)

    def lower_op(self, op: Op) -> None:
        if op.code == ops.YIELD:
            raise fail("scf.yield outside the end of an scf.for body")
        handler = HANDLERS.get(op.code)
        if handler is None:
            raise fail("no lowering for op " + op.name)
        handler(self, op)


# ---- handlers: arith (docs/ir.md §4.1) ----


def lower_constant(lw: Lowerer, op: Op) -> None:
    r = op.results[0]
    value = op.attrs.get("value")
    if r.type == "f32":
        if not isinstance(value, float):
            raise fail("an f32 arith.constant needs a float value")
        lw.names[r.name] = f32_literal(value)
        return
    if not isinstance(value, int) or isinstance(value, bool):
        raise fail("an integer arith.constant needs an integer value")
    if r.type == "i1":
        lw.names[r.name] = "true" if value != 0 else "false"
    elif r.type in ("i32", "i64"):
        lw.names[r.name] = str(value)
        lw.ints[r.name] = value
    else:
        raise fail("arith.constant of type " + r.type)


def lower_constant_vec(lw: Lowerer, op: Op) -> None:
    if op.attrs.get("value") != 0:
        raise fail("arith.constant_vec other than the zero vector")
    t = ll_type(op.results[0].type)
    lw.emit(lw.define(op.results[0]) + " = select i1 true, " + t + " zeroinitializer, " + t + " zeroinitializer")


def lower_binary(lw: Lowerer, op: Op) -> None:
    opcode = BINARY_OPS.get(op.code, "")
    a, b = op.operands
    # define, typed(a), val(b) and emit, inlined (over half of a kernel's ops come here); a
    # missing operand name goes through typed and val, which raise in that order
    r = op.results[0]
    names = lw.names
    text = r.name + lw.suffix
    names[r.name] = text
    a_text = names.get(a.name)
    b_text = names.get(b.name)
    if a_text is None or b_text is None:
        lw.typed(a)
        lw.val(b)
    # one f-string: a chain of + makes a new string per step
    lw.block.lines.append(f"{text} = {opcode} {ll_type(a.type)} {a_text}, {b_text}")


def lower_binary_call(lw: Lowerer, op: Op) -> None:
    key, callee = BINARY_CALLS[op.code]
    lw.need(key)
    a, b = op.operands
    lw.emit(lw.define(op.results[0]) + " = call " + callee + "(" + lw.typed(a) + ", " + lw.typed(b) + ")")


def lower_cmp(lw: Lowerer, op: Op) -> None:
    pred = op.attrs.get("pred")
    if pred not in ops.CMP_PREDS:
        raise fail("arith.cmp with an unknown pred")
    a, b = op.operands
    lw.emit(f"{lw.define(op.results[0])} = icmp {pred} {lw.typed(a)}, {lw.val(b)}")


def lower_select(lw: Lowerer, op: Op) -> None:
    c, a, b = op.operands
    lw.emit(f"{lw.define(op.results[0])} = select {lw.typed(c)}, {lw.typed(a)}, {lw.typed(b)}")


def lower_fptrunc(lw: Lowerer, op: Op) -> None:
    r = op.results[0]
    lw.emit(f"{lw.define(r)} = fptrunc {lw.typed(op.operands[0])} to {ll_type(r.type)}")


def lower_bitcast(lw: Lowerer, op: Op) -> None:
    r = op.results[0]
    lw.emit(f"{lw.define(r)} = bitcast {lw.typed(op.operands[0])} to {ll_type(r.type)}")


# ---- gpu (§4.2) ----


def lower_id(lw: Lowerer, op: Op) -> None:
    dim = lw.int_attr(op, "dim")
    if dim < 0 or dim > 2:
        raise fail(op.name + " dim " + str(dim))
    key = ("workitem.id." if op.code == ops.THREAD_ID else "workgroup.id.") + DIM_NAMES[dim]
    lw.need(key)
    lw.emit(lw.define(op.results[0]) + " = call i32 @llvm.amdgcn." + key + "()")


def lower_lane_id(lw: Lowerer, op: Op) -> None:
    lw.need("mbcnt.lo")
    lw.need("mbcnt.hi")
    lo = lw.temp("mbcnt_lo")
    lw.emit(lo + " = call i32 @llvm.amdgcn.mbcnt.lo(i32 -1, i32 0)")
    lw.emit(lw.define(op.results[0]) + " = call i32 @llvm.amdgcn.mbcnt.hi(i32 -1, i32 " + lo + ")")


def lower_readfirstlane(lw: Lowerer, op: Op) -> None:
    lw.need("readfirstlane.i32")
    lw.emit(f"{lw.define(op.results[0])} = call i32 @llvm.amdgcn.readfirstlane.i32({lw.typed(op.operands[0])})")


# ---- memory (§4.3) ----


def lower_make_buffer_rsrc(lw: Lowerer, op: Op) -> None:
    p, nbytes = op.operands
    lw.need("make.buffer.rsrc")
    word3 = str(lw.backend.word3)
    nb = lw.temp("nb64")  # taken in every flavor, so temps number alike
    r = lw.define(op.results[0])
    if lw.flavor.rsrc_p8:
        lw.emit(nb + " = zext " + lw.typed(nbytes) + " to i64")
        lw.emit(
            r
            + " = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1("
            + lw.typed(p)
            + ", i16 0, i64 "
            + nb
            + ", i32 "
            + word3
            + ")"
        )
    else:
        lw.emit(
            r
            + " = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p1("
            + lw.typed(p)
            + ", i16 0, "
            + lw.typed(nbytes)
            + ", i32 "
            + word3
            + ")"
        )


def buffer_access(lw: Lowerer, t: str, store: bool) -> tuple[tuple[int, str, str], str]:
    """The width row of a buffer load or store of type t, its declaration marked needed, and the
    temp of its integer value."""
    width = buffer_width(type_bytes(t))
    lw.need(("raw.ptr.buffer.store." if store else "raw.ptr.buffer.load.") + width[1])
    return width, lw.temp(("bs" if store else "bl") + width[1])


def lower_buffer_load(lw: Lowerer, op: Op) -> None:
    r, off = op.operands
    res = op.results[0]
    width, raw = buffer_access(lw, res.type, False)
    lw.emit(
        f"{raw} = call {width[2]} @llvm.amdgcn.raw.ptr.buffer.load.{width[1]}("
        f"{lw.typed(r)}, {lw.typed(off)}, i32 0, i32 0)"
    )
    lw.emit(f"{lw.define(res)} = bitcast {width[2]} {raw} to {ll_type(res.type)}")


def lower_buffer_store(lw: Lowerer, op: Op) -> None:
    r, off, v = op.operands
    width, bits = buffer_access(lw, v.type, True)
    lw.emit(f"{bits} = bitcast {lw.typed(v)} to {width[2]}")
    lw.emit(
        f"call void @llvm.amdgcn.raw.ptr.buffer.store.{width[1]}("
        f"{width[2]} {bits}, {lw.typed(r)}, {lw.typed(off)}, i32 0, i32 0)"
    )


def lower_global_atomic_fadd(lw: Lowerer, op: Op) -> None:
    p, idx, v = op.operands
    gep = lw.temp("gep")
    lw.emit(gep + " = getelementptr inbounds " + ll_type(ptr_elem(p.type)) + ", " + lw.typed(p) + ", " + lw.typed(idx))
    old = lw.temp("atomic")
    lw.emit(old + " = atomicrmw fadd ptr addrspace(1) " + gep + ", " + lw.typed(v) + " monotonic" + MARKERS)
    lw.markers = True


def lower_smem_alloc(lw: Lowerer, op: Op) -> None:
    lw.define(op.results[0])  # prints nothing; its uses go through the pool


def lower_smem_load(lw: Lowerer, op: Op) -> None:
    s, row, col = op.operands
    res = op.results[0]
    align = lw.lds_align(op, s)
    gep = lw.lds_gep(s, row, col, "gep")
    load = "load "
    if lw.backend.lds_v8_volatile and is_vec(res.type) and vec_len(res.type) == 8:
        load = "load volatile "
    lw.emit(f"{lw.define(res)} = {load}{ll_type(res.type)}, ptr addrspace(3) {gep}, align {align}")


def lower_smem_store(lw: Lowerer, op: Op) -> None:
    s, row, col, v = op.operands
    align = lw.lds_align(op, s)
    gep = lw.lds_gep(s, row, col, "gep")
    lw.emit(f"store {lw.typed(v)}, ptr addrspace(3) {gep}, align {align}")


def lower_smem_addr(lw: Lowerer, op: Op) -> None:
    base = lw.lds_base(lw.alloc_of(op.operands[0]))
    lw.emit(lw.define(op.results[0]) + " = ptrtoint ptr addrspace(3) " + base + " to i32")


def lower_ds_read_tr16_b64(lw: Lowerer, op: Op) -> None:
    if lw.backend.transpose != TR_B64:
        raise fail("tile.ds_read_tr16_b64 is not available on " + lw.backend.arch + " (gfx950 only)")
    s, row, col = op.operands
    res = op.results[0]
    lw.need("ds.read.tr16.b64.v4i16")
    gep = lw.lds_gep(s, row, col, "tr.base")
    raw = lw.temp("tr.raw")
    lw.emit(raw + " = call <4 x i16> @llvm.amdgcn.ds.read.tr16.b64.v4i16(ptr addrspace(3) " + gep + ")")
    lw.emit(lw.define(res) + " = bitcast <4 x i16> " + raw + " to " + ll_type(res.type))


def lower_ds_read_tr16_b128(lw: Lowerer, op: Op) -> None:
    if lw.backend.transpose != TR_B128:
        raise fail("tile.ds_read_tr16_b128 is not available on " + lw.backend.arch + " (gfx1250 only)")
    s, row, col = op.operands
    res = op.results[0]
    key = "ds.load.tr16.b128.v8f16" if smem_elem(s.type) == "f16" else "ds.load.tr16.b128.v8bf16"
    lw.need(key)
    gep = lw.lds_gep(s, row, col, "tr.base")
    lw.emit(lw.define(res) + " = call " + ll_type(res.type) + " @llvm.amdgcn." + key + "(ptr addrspace(3) " + gep + ")")


def lower_async_buffer_load_lds(lw: Lowerer, op: Op) -> None:
    r, lds, off = op.operands
    dwords = lw.int_attr(op, "dwords")
    aux = lw.int_attr(op, "aux")
    if dwords > lw.backend.async_lds_dwords:
        raise fail("tile.async_buffer_load_lds of " + str(dwords * 4) + " bytes is not available on " + lw.backend.arch)
    if aux < 0 or aux > 3:
        raise fail("tile.async_buffer_load_lds aux " + str(aux))
    lw.need("raw.ptr.buffer.load.lds")
    ptr3 = lw.temp("lds_ptr")
    lw.emit(ptr3 + " = inttoptr " + lw.typed(lds) + " to ptr addrspace(3)")
    lw.emit(
        "call void @llvm.amdgcn.raw.ptr.buffer.load.lds("
        + lw.typed(r)
        + ", ptr addrspace(3) "
        + ptr3
        + ", i32 "
        + str(dwords * 4)
        + ", "
        + lw.typed(off)
        + ", i32 0, i32 0, i32 "
        + str(aux)
        + ")"
    )


def clamp_count(n: int, limit: int) -> int:
    """-1 (no wait) and anything above the limit give the limit (llvm-ir §12.6)."""
    if n < 0 or n > limit:
        return limit
    return n


def call_wait(lw: Lowerer, key: str, count_type: str, count: int) -> None:
    """call void @llvm.amdgcn.<key>(<count_type> <count>), its declaration needed: a wait."""
    lw.need(key)
    lw.emit("call void @llvm.amdgcn." + key + "(" + count_type + " " + str(count) + ")")


def lower_s_waitcnt(lw: Lowerer, op: Op) -> None:
    vm = clamp_count(lw.int_attr(op, "vmcnt"), VMCNT_MAX)
    if lw.backend.wait == WAIT_SPLIT:
        call_wait(lw, "s.wait.loadcnt", "i16", vm)
        call_wait(lw, "s.wait.storecnt", "i16", vm)
        return
    if lw.backend.wait == WAIT_GFX9:
        imm = (vm & 15) | (GFX9_EXPCNT_MAX << 4) | (GFX9_LGKMCNT_MAX << 8) | ((vm >> 4) << 14)
    else:
        imm = GFX11_EXPCNT_MAX | (GFX11_LGKMCNT_MAX << 4) | (vm << 10)
    call_wait(lw, "s.waitcnt", "i32", imm)


def emit_barrier(lw: Lowerer) -> None:
    """The barrier between LDS-only workgroup fences: release before, acquire after
    (docs/lowering.md §5; docs/memory-model.md measures what they cost)."""
    lw.need("s.barrier")
    lw.fences = True
    lw.emit(FENCE_RELEASE)
    lw.emit("call void @llvm.amdgcn.s.barrier()")
    lw.emit(FENCE_ACQUIRE)


def lower_sync(lw: Lowerer, op: Op) -> None:
    if lw.backend.wait == WAIT_SPLIT:
        call_wait(lw, "s.wait.loadcnt", "i16", 0)
        call_wait(lw, "s.wait.dscnt", "i16", 0)
    else:
        call_wait(lw, "s.waitcnt", "i32", lw.backend.drain_full)
    emit_barrier(lw)


def lower_sync_lds_only(lw: Lowerer, op: Op) -> None:
    if lw.backend.wait == WAIT_SPLIT:
        call_wait(lw, "s.wait.dscnt", "i16", 0)
    else:
        call_wait(lw, "s.waitcnt", "i32", lw.backend.drain_lds)
    emit_barrier(lw)


# ---- vector (§4.4) ----


def lower_extract(lw: Lowerer, op: Op) -> None:
    lw.emit(f"{lw.define(op.results[0])} = extractelement {lw.typed(op.operands[0])}, i32 {lw.int_attr(op, 'index')}")


def lower_insert(lw: Lowerer, op: Op) -> None:
    v, x = op.operands
    lw.emit(
        lw.define(op.results[0])
        + " = insertelement "
        + lw.typed(v)
        + ", "
        + lw.typed(x)
        + ", i32 "
        + str(lw.int_attr(op, "index"))
    )


def lower_from_elements(lw: Lowerer, op: Op) -> None:
    res = op.results[0]
    t = ll_type(res.type)
    acc = "poison"
    n = len(op.operands)
    for i in range(n):
        name = lw.define(res) if i == n - 1 else lw.temp("vp")
        lw.emit(name + " = insertelement " + t + " " + acc + ", " + lw.typed(op.operands[i]) + ", i32 " + str(i))
        acc = name


def mask_text(indices: list[int]) -> str:
    """A shufflevector mask; -1 is a poison lane."""
    parts: list[str] = []
    for i in indices:
        parts.append("i32 poison" if i < 0 else "i32 " + str(i))
    return "<" + str(len(indices)) + " x i32> <" + ", ".join(parts) + ">"


def as_vector(lw: Lowerer, v: Value) -> tuple[str, str, int]:
    """A concat operand as (vector type, value, length); a scalar becomes a 1-element vector."""
    if is_vec(v.type):
        return ll_type(v.type), lw.val(v), vec_len(v.type)
    name = lw.temp("cs")
    t = "<1 x " + ll_type(v.type) + ">"
    lw.emit(name + " = insertelement " + t + " poison, " + lw.typed(v) + ", i32 0")
    return t, name, 1


def widen(lw: Lowerer, t: str, value: str, n: int, to: int, elem: str) -> tuple[str, str]:
    """Pads a vector of n elements to `to` elements (poison lanes) for a two-input shufflevector."""
    indices: list[int] = []
    for i in range(to):
        indices.append(i if i < n else -1)
    name = lw.temp("cw")
    lw.emit(name + " = shufflevector " + t + " " + value + ", " + t + " poison, " + mask_text(indices))
    return "<" + str(to) + " x " + elem + ">", name


def lower_concat(lw: Lowerer, op: Op) -> None:
    a, b = op.operands
    res = op.results[0]
    elem = ll_type(vec_elem(res.type))
    a_type, a_value, na = as_vector(lw, a)
    b_type, b_value, nb = as_vector(lw, b)
    width = na if na > nb else nb
    if na < width:
        a_type, a_value = widen(lw, a_type, a_value, na, width, elem)
    if nb < width:
        b_type, b_value = widen(lw, b_type, b_value, nb, width, elem)
    indices: list[int] = []
    for i in range(na):
        indices.append(i)
    for i in range(nb):
        indices.append(width + i)
    lw.emit(
        lw.define(res)
        + " = shufflevector "
        + a_type
        + " "
        + a_value
        + ", "
        + b_type
        + " "
        + b_value
        + ", "
        + mask_text(indices)
    )


# ---- mma (§4.5) ----


def mma_operand(lw: Lowerer, row: MmaRow, v: Value, hint: str) -> str:
    if not row.cast:
        return row.ab_type + " " + lw.val(v)
    name = lw.temp(hint)
    lw.emit(name + " = bitcast " + lw.typed(v) + " to " + row.ab_type)
    return row.ab_type + " " + name


def lower_mma(lw: Lowerer, op: Op) -> None:
    op_id = str(op.attrs.get("op_id"))
    row = mma_row(op_id)
    if row is None:
        raise fail("tile.mma op_id " + op_id + " has no lowering")
    if lw.backend.arch not in row.archs:
        raise fail("tile.mma " + op_id + " is not available on " + lw.backend.arch)
    types = atom_types(op_id)
    a, b, c = op.operands
    if types is None or (a.type, b.type, c.type) != types:
        raise fail("tile.mma " + op_id + " operand types")
    family = "mfma" if row.form == FORM_MFMA else "wmma"
    a_text = mma_operand(lw, row, a, family + "_a_i16")
    b_text = mma_operand(lw, row, b, family + "_b_i16")
    c_text = row.c_type + " " + lw.val(c)
    lw.need(row.intrinsic)
    if row.form == FORM_MFMA:
        args = a_text + ", " + b_text + ", " + c_text + ", i32 0, i32 0, i32 0"
    elif row.form == FORM_WMMA3:
        args = a_text + ", " + b_text + ", " + c_text
    else:
        args = "i1 false, " + a_text + ", i1 false, " + b_text + ", i16 0, " + c_text + ", i1 false, i1 false"
    lw.emit(lw.define(op.results[0]) + " = call " + row.c_type + " @llvm.amdgcn." + row.intrinsic + "(" + args + ")")


# ---- schedule hints (§4.6) ----


def lower_sched_group_barrier(lw: Lowerer, op: Op) -> None:
    lw.need("sched.group.barrier")
    lw.emit(
        "call void @llvm.amdgcn.sched.group.barrier(i32 "
        + str(lw.int_attr(op, "mask"))
        + ", i32 "
        + str(lw.int_attr(op, "size"))
        + ", i32 "
        + str(lw.int_attr(op, "sync_id"))
        + ")"
    )


def lower_sched_barrier(lw: Lowerer, op: Op) -> None:
    lw.need("sched.barrier")
    lw.emit("call void @llvm.amdgcn.sched.barrier(i32 " + str(lw.int_attr(op, "mask")) + ")")


def lower_s_setprio(lw: Lowerer, op: Op) -> None:
    prio = lw.int_attr(op, "prio")
    if prio < 0 or prio > 65535:
        raise fail("tile.s_setprio prio " + str(prio) + " does not fit in u16")
    lw.need("s.setprio")
    lw.emit("call void @llvm.amdgcn.s.setprio(i16 " + str(prio) + ")")


# ---- control (§4.7, llvm-ir §10) ----


def for_parts(op: Op) -> tuple[str, list[tuple[str, str]], list[Value]]:
    """The iv name, the (name, type) of each carried value, and the yielded values."""
    iv = op.attrs.get("iv")
    iter_args = op.attrs.get("iter_args")
    if not isinstance(iv, str) or not isinstance(iter_args, list) or len(iter_args) != len(op.operands) - 3:
        raise fail("scf.for iv or iter_args")
    carried: list[tuple[str, str]] = []
    for i in range(len(iter_args)):
        arg = iter_args[i]
        if not isinstance(arg, dict) or not isinstance(arg.get("name"), str):
            raise fail("scf.for iter_arg " + str(i))
        if arg.get("type") != op.operands[3 + i].type:
            raise fail("scf.for iter_arg " + str(i) + " type")
        t = str(arg["type"])
        if not (is_vec(t) or t in ("i1", "i32", "i64", "f16", "bf16", "f32")):
            raise fail("scf.for carries a value of type " + t)
        carried.append((str(arg["name"]), t))
    body = op.regions[0]
    if not body.ops or body.ops[-1].code != ops.YIELD or len(body.ops[-1].operands) != len(carried):
        raise fail("scf.for body must end with a matching scf.yield")
    return iv, carried, body.ops[-1].operands


def loop_results(lw: Lowerer, op: Op, carried: list[tuple[str, str]], last: list[str]) -> None:
    """The loop's results, each a bitcast of its carried value's last text."""
    for i in range(len(carried)):
        t = ll_type(carried[i][1])
        lw.emit(lw.define(op.results[i]) + " = bitcast " + t + " " + last[i] + " to " + t)


def lower_for(lw: Lowerer, op: Op) -> None:
    if op.attrs.get("unroll") is True:
        lower_for_unrolled(lw, op)
        return
    iv, carried, yielded = for_parts(op)
    lb = lw.val(op.operands[0])
    ub = lw.val(op.operands[1])
    step = lw.val(op.operands[2])
    inits: list[str] = []
    for v in op.operands[3:]:
        inits.append(lw.val(v))
    pred = lw.block
    header = lw.new_block("for.header")
    body = lw.new_block("for.body")
    cmp = lw.temp("cmp")
    pred.lines.append("br label %" + header.label)
    pred.terminated = True
    iv_name = iv + lw.suffix
    lw.names[iv] = iv_name
    phi_names: list[str] = []
    for name, _ in carried:
        phi_names.append(name + lw.suffix)
        lw.names[name] = name + lw.suffix
    lw.block = body
    lw.lower_region(op.regions[0], False, True)
    nexts: list[str] = []
    for v in yielded:
        nexts.append(lw.val(v))
    latch = lw.new_block("for.latch")
    exit_ = lw.new_block("for.exit")
    lw.emit("br label %" + latch.label)
    lw.block.terminated = True
    tag = ".next." + header.label
    lw.block = header
    lw.emit(iv_name + " = phi i32 [ " + lb + ", %" + pred.label + " ], [ %iv" + tag + ", %" + latch.label + " ]")
    for i in range(len(carried)):
        t = ll_type(carried[i][1])
        lw.emit(
            phi_names[i]
            + " = phi "
            + t
            + " [ "
            + inits[i]
            + ", %"
            + pred.label
            + " ], [ "
            + phi_names[i]
            + tag
            + ", %"
            + latch.label
            + " ]"
        )
    lw.emit(cmp + " = icmp slt i32 " + iv_name + ", " + ub)
    lw.emit("br i1 " + cmp + ", label %" + body.label + ", label %" + exit_.label)
    header.terminated = True
    lw.block = latch
    lw.emit("%iv" + tag + " = add nsw i32 " + iv_name + ", " + step)
    for i in range(len(carried)):
        t = ll_type(carried[i][1])
        lw.emit(phi_names[i] + tag + " = bitcast " + t + " " + nexts[i] + " to " + t)
    lw.emit("br label %" + header.label)
    latch.terminated = True
    lw.block = exit_
    loop_results(lw, op, carried, phi_names)


def const_operand(lw: Lowerer, v: Value) -> int:
    value = lw.ints.get(v.name)
    if value is None:
        raise fail("an unrolled scf.for needs constant bounds")
    return value


def lower_for_unrolled(lw: Lowerer, op: Op) -> None:
    """Each iteration: `%iv_const.T = add i32 0, <k>`, the body with names suffixed `.unroll<i>`;
    a trailing tile.sync before the yield is kept only in the last iteration."""
    iv, carried, yielded = for_parts(op)
    lb = const_operand(lw, op.operands[0])
    ub = const_operand(lw, op.operands[1])
    step = const_operand(lw, op.operands[2])
    if step <= 0:
        raise fail("an unrolled scf.for needs a positive step")
    values: list[str] = []
    for v in op.operands[3:]:
        values.append(lw.val(v))
    body = op.regions[0]
    n_ops = len(body.ops)
    trailing_sync = n_ops >= 2 and body.ops[n_ops - 2].code == ops.SYNC
    outer_suffix = lw.suffix
    count = 0
    if ub > lb:
        count = (ub - lb + step - 1) // step
    if count > MAX_UNROLL:
        raise fail("an unrolled scf.for of " + str(count) + " iterations (the limit is " + str(MAX_UNROLL) + ")")
    for i in range(count):
        lw.suffix = outer_suffix + ".unroll" + str(i)
        const = lw.temp("iv_const")
        lw.emit(const + " = add i32 0, " + str(lb + i * step))
        lw.names[iv] = const
        for j in range(len(carried)):
            lw.names[carried[j][0]] = values[j]
        for j in range(n_ops - 1):
            if j == n_ops - 2 and trailing_sync and i != count - 1:
                continue
            if body.ops[j].code == ops.RETURN:
                raise fail("cf.return must be the last op of the kernel")
            lw.lower_op(body.ops[j])
        nexts: list[str] = []
        for v in yielded:
            nexts.append(lw.val(v))
        values = nexts
    lw.suffix = outer_suffix
    loop_results(lw, op, carried, values)


def lower_if(lw: Lowerer, op: Op) -> None:
    cond = lw.typed(op.operands[0])
    pred = lw.block
    then = lw.new_block("if.then")
    lw.block = then
    lw.lower_region(op.regions[0], False, False)
    end = lw.new_block("if.end")
    lw.emit("br label %" + end.label)
    lw.block.terminated = True
    pred.lines.append("br " + cond + ", label %" + then.label + ", label %" + end.label)
    pred.terminated = True
    lw.block = end


def lower_return(lw: Lowerer, op: Op) -> None:
    lw.emit("ret void")
    lw.block.terminated = True


# The handler of each op, by its code (scf.yield is read by lower_for, never lowered alone).
HANDLERS: dict[int, Callable[[Lowerer, Op], None]] = {
    ops.CONSTANT: lower_constant,
    ops.CONSTANT_VEC: lower_constant_vec,
    ops.ADD: lower_binary,
    ops.SUB: lower_binary,
    ops.MUL: lower_binary,
    ops.DIV: lower_binary,
    ops.MOD: lower_binary,
    ops.MIN: lower_binary_call,
    ops.MAX: lower_binary_call,
    ops.AND: lower_binary,
    ops.OR: lower_binary,
    ops.CMP: lower_cmp,
    ops.SELECT: lower_select,
    ops.FADD: lower_binary,
    ops.FMUL: lower_binary,
    ops.FMAX: lower_binary_call,
    ops.FMIN: lower_binary_call,
    ops.FPTRUNC: lower_fptrunc,
    ops.BITCAST: lower_bitcast,
    ops.THREAD_ID: lower_id,
    ops.BLOCK_ID: lower_id,
    ops.LANE_ID: lower_lane_id,
    ops.READFIRSTLANE: lower_readfirstlane,
    ops.MAKE_BUFFER_RSRC: lower_make_buffer_rsrc,
    ops.BUFFER_LOAD: lower_buffer_load,
    ops.BUFFER_STORE: lower_buffer_store,
    ops.GLOBAL_ATOMIC_FADD: lower_global_atomic_fadd,
    ops.SMEM_ALLOC: lower_smem_alloc,
    ops.SMEM_LOAD: lower_smem_load,
    ops.SMEM_STORE: lower_smem_store,
    ops.SMEM_ADDR: lower_smem_addr,
    ops.DS_READ_TR16_B64: lower_ds_read_tr16_b64,
    ops.DS_READ_TR16_B128: lower_ds_read_tr16_b128,
    ops.ASYNC_BUFFER_LOAD_LDS: lower_async_buffer_load_lds,
    ops.S_WAITCNT: lower_s_waitcnt,
    ops.SYNC: lower_sync,
    ops.SYNC_LDS_ONLY: lower_sync_lds_only,
    ops.EXTRACT: lower_extract,
    ops.INSERT: lower_insert,
    ops.FROM_ELEMENTS: lower_from_elements,
    ops.CONCAT: lower_concat,
    ops.MMA: lower_mma,
    ops.SCHED_GROUP_BARRIER: lower_sched_group_barrier,
    ops.SCHED_BARRIER: lower_sched_barrier,
    ops.S_SETPRIO: lower_s_setprio,
    ops.FOR: lower_for,
    ops.IF: lower_if,
    ops.RETURN: lower_return,
}


# HANDLERS as a tuple indexed by op code (lower_region's per-op lookup): one entry per row of
# ops.OPS and a last None, the entry of ops.UNKNOWN (-1)
HANDLERS_BY_CODE = tuple(HANDLERS.get(code) for code in range(len(ops.OPS))) + (None,)
assert ops.UNKNOWN == -1


def bare_name(name: str) -> bool:
    return all(ch in NAME_CHARS for ch in name) and name[0] not in "0123456789"


def quotable(ch: str) -> bool:
    """Printed as is inside @"...": printable ASCII but the quote and the backslash."""
    return " " <= ch <= "~" and ch not in '"\\'


def lower_kernel(kernel: Kernel, arch: str, flavor: str) -> str:
    """The whole `.ll` module of one kernel (llvm-ir §2)."""
    backend = find_backend(arch)
    if backend is None:
        raise fail("unknown arch " + arch)
    fl = find_flavor(flavor)
    if fl is None:
        raise fail("unknown flavor " + flavor)
    if kernel.name == "":
        raise fail("the kernel has no name")
    for ch in kernel.name:
        if not quotable(ch):
            raise fail("the kernel name has a character LLVM would need escaped")
    return Lowerer(kernel, backend, fl, TARGETS[arch].lds_capacity).lower()
