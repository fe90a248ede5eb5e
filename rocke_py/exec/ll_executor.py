"""Runs the AMDGPU LLVM IR the engines emit over a launch grid on the CPU
(docs/ll-executor.md).

The module (ll_reader.py) is compiled once: each instruction becomes a step over value
slots, as in the IR executor, and the chunks of workgroups, the memories, the MMA layouts,
the transpose exchange and the hazard log are the IR executor's own. What is new is the
control flow: the function is a graph of blocks, run under per-lane masks. A block runs when
it is the first block (in text order) with lanes waiting at it; its terminator sends each lane
along its edge, remembering which block it came from for the phis. Lanes that leave a loop
early wait at its exit until the others arrive (the exit follows the loop in text order), so
a loop re-runs while any lane is in it and every block reconverges where its lanes meet."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Mapping, Optional, Union

import numpy as np

from . import mma as mma_mod
from .executor import (
    CMP,
    Chunk,
    ExecError,
    RunResult,
    Stats,
    Tracer,
    at_lanes,
    division,
    first_lane,
    full,
    land,
    memoized,
    mma_lanes,
    partial_waves,
    pass_barrier,
    pick,
    queue_async_copy,
    run_launch,
)
from .fp import bf16_bits
from .gc_pause import gc_paused
from .hazards import HazardLog
from .ll_reader import read_ll
from .ll_text import Block, Instr, LlType, Module, Operand
from .memory import Access, Buffer

#: wave size of the kernels LLVM compiles for each arch without target features
ARCH_WAVE = {"gfx942": 64, "gfx950": 64, "gfx1151": 32, "gfx1201": 32, "gfx1250": 32}
#: how `s.waitcnt`'s immediate counts outstanding vector-memory loads on each arch:
#: gfx9 vmcnt in bits 3:0 and 15:14, gfx11 in bits 15:10; on gfx12 the legacy instruction
#: waits for everything
WAIT_MODEL = {"gfx942": "gfx9", "gfx950": "gfx9", "gfx1151": "gfx11", "gfx1201": "gfx12", "gfx1250": "gfx12"}
#: the direct-to-LDS buffer load sizes each arch has (bytes)
ASYNC_LDS_SIZES = {"gfx942": (4,), "gfx950": (4, 12, 16)}
DEFAULT_CHUNK_THREADS = 1 << 15


@dataclass
class GPtr:
    """A global pointer: its buffer and a byte offset in it."""

    buffer: Buffer
    offset: np.ndarray  # int64, 0-d or per thread


@dataclass
class LlRsrc:
    """A buffer resource (make.buffer.rsrc): base, num_records, stride and flags."""

    buffer: Buffer
    base: np.ndarray  # int64 byte offset of the base in the buffer
    nbytes: np.ndarray  # num_records (bytes: stride 0), int64
    flags: int


def dtype_of(t: LlType) -> np.dtype:
    s = t.scalar
    if s.kind == "int":
        return np.dtype({1: np.bool_, 8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}[s.bits])
    if s.kind == "half":
        return np.dtype(np.float16)
    if s.kind == "bfloat":
        return np.dtype(np.uint16)
    if s.kind == "float":
        return np.dtype(np.float32)
    if s.kind == "ptr" and s.addrspace == 3:
        return np.dtype(np.int32)
    raise ExecError(f"no register form for {t.text()}")


def elem_name(t: LlType) -> str:
    """The IR element name of a float type (the memory and MMA helpers' vocabulary)."""
    return {"half": "f16", "bfloat": "bf16", "float": "f32"}[t.scalar.kind]


def scalar_constant(text: str, t: LlType) -> np.ndarray:
    """One scalar literal of type t (0-d)."""
    if text in ("poison", "zeroinitializer"):
        return np.zeros((), dtype=dtype_of(t))
    if text in ("true", "false"):
        return np.asarray(text == "true")
    if text.startswith("0x"):
        double = np.asarray(int(text, 16), dtype=np.uint64).view(np.float64)
        f32 = np.asarray(double, dtype=np.float32)
        return bf16_bits(f32) if t.kind == "bfloat" else f32.astype(dtype_of(t))
    return np.asarray(int(text)).astype(dtype_of(t))


def constant(op: Operand) -> object:
    """The value of a constant operand (0-d, or (n,) for a vector), in its type."""
    t = op.type
    if op.value == "<...>":
        assert t.elem is not None
        return np.stack([scalar_constant(e, t.elem) for e in op.elements])
    if t.kind == "vec" and op.value in ("poison", "zeroinitializer"):
        return np.zeros(t.n, dtype=dtype_of(t))
    return scalar_constant(op.value, t)


def shuffle_mask(op: Operand) -> np.ndarray:
    """A shufflevector mask's indices, -1 for a poison element."""
    return np.asarray([-1 if e == "poison" else int(e) for e in op.elements], dtype=np.int64)


def merge(mask: np.ndarray, new, old, t: Optional[LlType]):
    """new at the masked lanes, old elsewhere (a value of type t redefined under a partial
    mask). Either may be one row for every lane (0-d, or (n,) for a vector)."""
    if t is not None and t.kind == "vec":
        n = mask.shape[0]
        return np.where(mask[:, None], full(np.asarray(new), n, (t.n,)), full(np.asarray(old), n, (t.n,)))
    return np.where(mask, new, old)


class LlProgram:
    """A module compiled into steps, with the launch it runs."""

    def __init__(
        self,
        module: Module,
        arch: str,
        buffers: dict[str, Buffer],
        scalars: dict[str, int],
        grid: tuple[int, int, int],
        block: int,
        check: bool,
    ) -> None:
        if arch not in ARCH_WAVE:
            raise ExecError(f"unknown arch {arch}")
        self.module = module
        self.arch = arch
        self.wave = ARCH_WAVE[arch]
        self.block = block
        self.grid = grid
        self.check = check
        self.log = HazardLog()
        self.tracer: Optional[Tracer] = None
        fn = module.function
        flat = fn.attrs.get("amdgpu-flat-work-group-size", "")
        most = int(flat.split(",")[1]) if "," in flat else 1024
        if block <= 0 or block % self.wave or block > most:
            raise ExecError(
                f"a workgroup of {block} threads: not a multiple of the wave ({self.wave}) "
                f"or over amdgpu-flat-work-group-size {flat or '(none)'}"
            )
        self.pool_bytes = 0
        self.initial: list = []
        self.slots: dict[str, int] = {}
        self.types: dict[str, LlType] = {}
        self.memo_count = 0
        self.in_loop = False
        self.consts: dict[tuple[str, str, tuple[str, ...]], int] = {}
        for g in module.globals:  # the LDS pool: address 0
            self.pool_bytes = g.type.nbytes
            self.slots["@" + g.name] = self.new_slot(np.asarray(0, dtype=np.int32))
        for p in fn.params:
            name = p.name[1:]
            self.types[p.name] = p.type
            if p.type.kind == "ptr":
                if name not in buffers:
                    raise ExecError(f"no buffer given for the pointer param {p.name}")
                value: object = GPtr(buffers[name], np.asarray(0, dtype=np.int64))
            elif name in scalars:
                value = np.asarray(scalars[name]).astype(dtype_of(p.type))
            else:
                raise ExecError(f"no value given for the scalar param {p.name}")
            self.slots[p.name] = self.new_slot(value)
        self.block_index = {b.label: i for i, b in enumerate(fn.blocks)}
        for b in fn.blocks:
            for ins in b.instrs:
                if ins.result:
                    if ins.result in self.slots:
                        raise ExecError(f"{ins.where()}: {ins.result} is defined twice")
                    self.types[ins.result] = ins.type  # type: ignore[assignment]
                    self.slots[ins.result] = self.new_slot(None)
        self.loops = blocks_in_loops(fn.blocks, self.block_index)
        self.escapes = escaping_values(fn.blocks)
        self.compiled = [self.compile_block(i, b) for i, b in enumerate(fn.blocks)]

    # -- compiling --

    def new_slot(self, value) -> int:
        self.initial.append(value)
        return len(self.initial) - 1

    def new_memo(self) -> Optional[int]:
        if not self.in_loop:
            return None
        self.memo_count += 1
        return self.memo_count - 1

    def operand(self, op: Operand, ins: Instr) -> int:
        if op.is_local or op.value[:1] == "@":
            slot = self.slots.get(op.value)
            if slot is None:
                raise ExecError(f"{ins.where()}: {op.value} is not defined")
            return slot
        key = (op.type.text(), op.value, op.elements)
        slot = self.consts.get(key)
        if slot is None:
            slot = self.consts[key] = self.new_slot(constant(op))
        return slot

    def compile_block(self, index: int, block: Block):
        self.in_loop = index in self.loops
        phis = []
        steps = []
        uses_in_block: dict[str, int] = {}
        body = [i for i in block.instrs if i.opcode != "phi"]
        for position, ins in enumerate(body):
            for a in ins.args:
                if a.is_local:
                    uses_in_block[a.value] = position
        last_uses: dict[int, list[str]] = {}  # position -> the values last used there
        for name, last in uses_in_block.items():
            last_uses.setdefault(last, []).append(name)
        for ins in block.instrs:
            if ins.opcode == "phi":
                phis.append(self.compile_phi(ins))
        terminator = None
        for position, ins in enumerate(body):
            if ins.opcode in ("br", "ret"):
                if position != len(body) - 1:
                    raise ExecError(f"{ins.where()}: a terminator before the end of its block")
                terminator = self.compile_terminator(ins)
                continue
            handler = HANDLERS.get(ins.opcode)
            if handler is None:
                raise ExecError(f"{ins.where()}: the executor has no semantics for {ins.opcode}")
            ins_slots = [self.operand(a, ins) for a in ins.args]
            run = handler(self, ins, ins_slots)
            names = last_uses.get(position)
            dead = (
                tuple(self.slots[name] for name in names if name not in self.escapes and name in self.slots)
                if names
                else ()
            )
            steps.append(self.bind(ins, run, dead))
        if terminator is None:
            raise ExecError(f"block {block.label} (ll line {block.line}) has no terminator")
        return phis, steps, terminator

    def bind(self, ins: Instr, run, dead: tuple[int, ...]):
        """The step run_chunk runs: (run, its result's slot or -1, whether the result merges
        under a partial mask, the result type, the slots dead after it). A tuple, not a
        closure: a program has thousands of steps, and run_chunk needs no call per step."""
        if not ins.result:
            return run, -1, False, None, dead
        return run, self.slots[ins.result], ins.result in self.escapes, ins.type, dead

    def compile_phi(self, ins: Instr):
        sources = {}
        for value, label in ins.incoming:
            if label not in self.block_index:
                raise ExecError(f"{ins.where()}: no block {label}")
            sources[self.block_index[label]] = self.operand(value, ins)
        return self.slots[ins.result], sources, ins

    def compile_terminator(self, ins: Instr):
        if ins.opcode == "ret":
            return ("ret", None, ())
        targets = []
        for label in ins.targets:
            if label not in self.block_index:
                raise ExecError(f"{ins.where()}: no block {label}")
            targets.append(self.block_index[label])
        cond = self.operand(ins.args[0], ins) if ins.args else None
        return ("br", cond, tuple(targets))

    # -- running --

    def run_chunk(self, ch: Chunk) -> None:
        """Runs the function for the chunk's threads: the first block with lanes waiting,
        until no lane waits anywhere."""
        count = len(self.compiled)
        waiting: list[list[tuple[Optional[np.ndarray], int]]] = [[] for _ in range(count)]
        waiting[0].append((None, -1))
        env = ch.env
        while True:
            index = next((i for i in range(count) if waiting[i]), None)
            if index is None:
                return
            arrivals, waiting[index] = waiting[index], []
            ch.set_mask(union(arrivals))
            phis, steps, (kind, cond, targets) = self.compiled[index]
            if phis:
                values = [(out, phi_value(ch, arrivals, sources, ins), ins) for out, sources, ins in phis]
                for out, value, ins in values:
                    if ch.mask is not None and env[out] is not None:
                        value = merge(ch.mask, value, env[out], ins.type)
                    env[out] = value
            ch.ops += len(steps) + len(phis)
            ch.thread_ops += (len(steps) + len(phis)) * ch.active
            for run, out, escapes, t, dead in steps:
                value = run(ch)
                if out >= 0:
                    if escapes and ch.mask is not None and env[out] is not None:
                        value = merge(ch.mask, value, env[out], t)
                    env[out] = value
                for slot in dead:
                    env[slot] = None
            if kind == "ret":
                continue
            if cond is None:
                waiting[targets[0]].append((ch.mask, index))
                continue
            c = full(np.asarray(env[cond]), ch.n)
            taken = c if ch.mask is None else c & ch.mask
            other = ~c if ch.mask is None else ~c & ch.mask
            if taken.any():
                waiting[targets[0]].append((None if taken.all() else taken, index))
            if other.any():
                waiting[targets[1]].append((None if other.all() else other, index))


def union(arrivals: list[tuple[Optional[np.ndarray], int]]) -> Optional[np.ndarray]:
    mask = None
    for m, _ in arrivals:
        if m is None:
            return None
        mask = m.copy() if mask is None else mask | m
    return mask


def phi_value(ch: Chunk, arrivals, sources: dict[int, int], ins: Instr):
    """The phi's value for the lanes arriving: per lane, the incoming value of the edge it took."""
    env = ch.env
    out = None
    for m, frm in arrivals:
        if frm not in sources:
            raise ExecError(f"{ins.where()}: no incoming value from the block a lane came from")
        v = env[sources[frm]]
        if len(arrivals) == 1:
            return v
        if out is None:
            tail = (ins.type.n,) if ins.type is not None and ins.type.kind == "vec" else ()
            out = np.array(full(np.asarray(v), ch.n, tail))
        else:
            out = merge(m if m is not None else np.ones(ch.n, dtype=bool), v, out, ins.type)
    return out


def blocks_in_loops(blocks: tuple[Block, ...], index: dict[str, int]) -> set[int]:
    """The blocks on a cycle of the control-flow graph (they may run more than once)."""
    succ = [[index[t] for i in b.instrs if i.opcode == "br" for t in i.targets] for b in blocks]
    found = set()
    for start in range(len(blocks)):
        seen, todo = set(), list(succ[start])
        while todo:
            b = todo.pop()
            if b == start:
                found.add(start)
                break
            if b not in seen:
                seen.add(b)
                todo.extend(succ[b])
    return found


def escaping_values(blocks: tuple[Block, ...]) -> set[str]:
    """Values used outside the block defining them, or by a phi (a lane may read them after
    other lanes redefined them: they merge under a partial mask and are never freed)."""
    defined_in = {i.result: b.label for b in blocks for i in b.instrs if i.result}
    out = set()
    for b in blocks:
        for i in b.instrs:
            if i.opcode == "phi":
                out.add(i.result)
                out.update(v.value for v, _ in i.incoming if v.is_local)
            for a in i.args:
                if a.is_local and defined_in.get(a.value) != b.label:
                    out.add(a.value)
    return out


# ---- instruction semantics, one factory per instruction: (program, instr, operand slots) -> run ----


def pure(fn: Callable):
    def factory(prog: LlProgram, ins: Instr, slots: list[int]):
        return memoized(fn, slots, prog.new_memo())

    return factory


def int_div(prog: LlProgram, ins: Instr, slots: list[int]):
    return division(ins.opcode == "sdiv", slots, prog.new_memo(), ins)


def icmp(prog: LlProgram, ins: Instr, slots: list[int]):
    if ins.pred == "ult":
        return pure(lambda a, b: np.asarray(a).astype(np.uint32) < np.asarray(b).astype(np.uint32))(prog, ins, slots)
    return pure(CMP[ins.pred])(prog, ins, slots)


def select(prog: LlProgram, ins: Instr, slots: list[int]):
    vector = ins.type is not None and ins.type.kind == "vec"

    def fn(c, a, b):
        c = np.asarray(c)
        return np.where(c[..., None] if vector and c.ndim else c, a, b)

    return pure(fn)(prog, ins, slots)


def fptrunc(prog: LlProgram, ins: Instr, slots: list[int]):
    if ins.args[0].type.kind != "float" or ins.type is None or ins.type.kind not in ("half", "bfloat"):
        raise ExecError(f"{ins.where()}: fptrunc outside float to half or bfloat")
    if ins.type.kind == "bfloat":
        return pure(bf16_bits)(prog, ins, slots)
    return pure(lambda a: np.asarray(a).astype(np.float16))(prog, ins, slots)


def bitcast(prog: LlProgram, ins: Instr, slots: list[int]):
    src, dst = ins.args[0].type, ins.type
    assert dst is not None
    if src == dst:
        return pure(lambda a: a)(prog, ins, slots)
    if src.nbytes != dst.nbytes or "ptr" in (src.kind, dst.kind):
        raise ExecError(f"{ins.where()}: bitcast {src.text()} to {dst.text()}")
    dtype = dtype_of(dst)

    def fn(a):
        a = np.ascontiguousarray(a)
        lead = a.shape[:-1] if src.kind == "vec" else a.shape
        v = a.view(np.uint8).reshape(lead + (-1,)).view(dtype)
        return v if dst.kind == "vec" else v[..., 0]

    return pure(fn)(prog, ins, slots)


def zext(prog: LlProgram, ins: Instr, slots: list[int]):
    src, dst = ins.args[0].type, ins.type
    assert dst is not None
    unsigned = np.dtype(f"uint{max(8, src.bits)}") if src.bits > 1 else np.dtype(np.bool_)
    dtype = dtype_of(dst)
    return pure(lambda a: np.asarray(a).astype(unsigned).astype(dtype))(prog, ins, slots)


def lds_pointer_cast(prog: LlProgram, ins: Instr, slots: list[int]):
    """inttoptr i32 to ptr addrspace(3) and back: an LDS address is its i32."""
    ptr = ins.type if ins.opcode == "inttoptr" else ins.args[0].type
    if ptr is None or ptr.kind != "ptr" or ptr.addrspace != 3:
        raise ExecError(f"{ins.where()}: {ins.opcode} outside addrspace(3)")
    return pure(lambda a: np.asarray(a).astype(np.int32))(prog, ins, slots)


def extractelement(prog: LlProgram, ins: Instr, slots: list[int]):
    index = constant_index(ins, ins.args[1])
    return pure(lambda v: np.asarray(v)[..., index])(prog, ins, slots[:1])


def insertelement(prog: LlProgram, ins: Instr, slots: list[int]):
    index = constant_index(ins, ins.args[2])

    def fn(v, x):
        v, x = np.asarray(v), np.asarray(x)
        lead = max(v.shape[:-1], x.shape, key=len)
        out = np.array(np.broadcast_to(v, lead + v.shape[-1:]))
        out[..., index] = x
        return out

    return pure(fn)(prog, ins, slots[:2])


def constant_index(ins: Instr, op: Operand) -> int:
    if op.is_local or op.value.startswith("0x") or not op.value.lstrip("-").isdigit():
        raise ExecError(f"{ins.where()}: a vector index that is not a constant")
    vec = ins.args[0].type
    index = int(op.value)
    if not 0 <= index < vec.n:
        raise ExecError(f"{ins.where()}: index {index} outside {vec.text()}")
    return index


def shufflevector(prog: LlProgram, ins: Instr, slots: list[int]):
    mask = shuffle_mask(ins.args[2])
    width = ins.args[0].type.n
    if (mask >= 2 * width).any():
        raise ExecError(f"{ins.where()}: a mask element past both operands")
    poison = mask < 0
    take = np.where(poison, 0, mask)

    def fn(a, b):
        a, b = np.asarray(a), np.asarray(b)
        lead = max(a.shape[:-1], b.shape[:-1], key=len)
        both = np.concatenate([np.broadcast_to(a, lead + a.shape[-1:]), np.broadcast_to(b, lead + b.shape[-1:])], -1)
        out = both[..., take]
        if poison.any():
            out[..., poison] = 0
        return out

    return pure(fn)(prog, ins, slots[:2])


def gep_strides(ins: Instr) -> list[int]:
    """The byte stride of each index of a getelementptr."""
    t = ins.source
    assert t is not None
    strides = [t.nbytes]
    for _ in ins.args[2:]:
        if t.kind != "array" or t.elem is None:
            raise ExecError(f"{ins.where()}: an index into {t.text()}")
        t = t.elem
        strides.append(t.nbytes)
    return strides


def getelementptr(prog: LlProgram, ins: Instr, slots: list[int]):
    strides = gep_strides(ins)
    space = ins.args[0].type.addrspace
    if space not in (1, 3):
        raise ExecError(f"{ins.where()}: getelementptr in addrspace({space})")

    def fn(base, *indices):
        off = np.asarray(0, dtype=np.int64)
        for stride, index in zip(strides, indices):
            off = off + np.asarray(index).astype(np.int64) * stride
        if space == 3:
            return (np.asarray(base).astype(np.int64) + off).astype(np.int32)
        return GPtr(base.buffer, base.offset + off)

    return memoized(fn, slots, prog.new_memo())


# ---- LDS ----


def lds_lanes(ch: Chunk, ins: Instr, address, nbytes: int, align: int) -> tuple[Access, list]:
    """The access of the active lanes to nbytes at their LDS byte address, without the lanes
    outside the pool or misaligned, and the reports those lanes make."""
    lanes = ch.lanes()
    byte = pick(address, lanes, ch.n).astype(np.int64)
    outside = (byte < 0) | (byte + nbytes > ch.prog.pool_bytes)
    misaligned = (byte % max(align, 2)) != 0
    bad = outside | misaligned
    reports = []
    if bad.any():
        if ch.prog.check:
            reports = [("lds-bounds", outside, lanes), ("lds-misaligned", misaligned & ~outside, lanes)]
        keep = ~bad
        lanes, byte = lanes[keep], byte[keep]
    wg = at_lanes(ch.wg, lanes)
    acc = Access(lanes, ch.lds.first_granule(wg, byte), nbytes // 2, wg, at_lanes(ch.wave, lanes))
    return acc, reports


def lds_access(ch: Chunk, ins: Instr, memo: Optional[int], address, nbytes: int, align: int) -> Access:
    lanes = ch.active_lanes
    m = ch.memo[memo] if memo is not None else None
    if m is not None and m[0] is address and m[1] is lanes:
        acc, reports = m[2], m[3]
        acc.reused = True
    else:
        acc, reports = lds_lanes(ch, ins, address, nbytes, align)
        if memo is not None:
            ch.memo[memo] = (address, lanes, acc, reports)
    for kind, hit, over in reports:
        ch.report(kind, ins, hit, over)
    return acc


def lds_read(ch: Chunk, ins: Instr, memo: Optional[int], address, t: LlType, align: int):
    """(lanes, values (L, n)) of an LDS read of type t."""
    if t.nbytes % 2:
        raise ExecError(f"{ins.where()}: an LDS access of {t.nbytes} bytes (the LDS is modelled in 2-byte granules)")
    acc = lds_access(ch, ins, memo, address, t.nbytes, align)
    data, found = ch.lds.read(acc)
    for kind, hit in found.items():
        ch.report(kind, ins, hit, acc.lanes)
    n = t.n if t.kind == "vec" else 1
    values = np.ascontiguousarray(data).view(np.uint8).view(dtype_of(t)).reshape(acc.lanes.size, n)
    trace(ch, "lds-read", ins, acc.lanes, values)
    return acc.lanes, values


def per_thread(ch: Chunk, lanes: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per-lane values (L, k) of the active lanes for every thread (0 elsewhere), (T, k)."""
    if lanes.size == ch.n:
        return values
    out = np.zeros((ch.n, values.shape[1]), dtype=values.dtype)
    out[lanes] = values
    return out


def as_value(rows: np.ndarray, t: LlType) -> np.ndarray:
    """(T, k) rows as a register value of t: (T, n) for a vector, (T,) for a scalar."""
    return rows if t.kind == "vec" else rows[:, 0]


def trace(ch: Chunk, kind: str, where, lanes: np.ndarray, values: np.ndarray) -> None:
    tracer = ch.prog.tracer
    if tracer is not None:
        tracer(kind, where, lanes, values)


def as_bytes(x, t: LlType, lanes: np.ndarray, n: int) -> np.ndarray:
    """A register value at the lanes as (L, nbytes) uint8."""
    tail = (t.n,) if t.kind == "vec" else ()
    v = np.ascontiguousarray(pick(full(np.asarray(x).astype(dtype_of(t), copy=False), n, tail), lanes, n))
    return v.view(np.uint8).reshape(lanes.size, t.nbytes)


def load(prog: LlProgram, ins: Instr, slots: list[int]):
    t = ins.type
    assert t is not None
    if ins.args[0].type.addrspace != 3:
        raise ExecError(f"{ins.where()}: a load outside addrspace(3)")
    memo = prog.new_memo()

    def run(ch: Chunk):
        lanes, values = lds_read(ch, ins, memo, ch.env[slots[0]], t, ins.align)
        return as_value(per_thread(ch, lanes, values), t)

    return run


def store(prog: LlProgram, ins: Instr, slots: list[int]):
    t = ins.type
    assert t is not None
    if ins.args[1].type.addrspace != 3:
        raise ExecError(f"{ins.where()}: a store outside addrspace(3)")
    if t.nbytes % 2:
        raise ExecError(f"{ins.where()}: an LDS access of {t.nbytes} bytes")
    memo = prog.new_memo()

    def run(ch: Chunk) -> None:
        acc = lds_access(ch, ins, memo, ch.env[slots[1]], t.nbytes, ins.align)
        data = as_bytes(ch.env[slots[0]], t, acc.lanes, ch.n)
        trace(ch, "lds-write", ins, acc.lanes, data)
        found = ch.lds.write(acc, data.view(np.uint16))
        for kind, hit in found.items():
            ch.report(kind, ins, hit, acc.lanes)

    return run


# ---- global memory ----


def atomicrmw(prog: LlProgram, ins: Instr, slots: list[int]):
    t = ins.type
    assert t is not None
    elem = elem_name(t)
    n = t.n if t.kind == "vec" else 1
    width = t.nbytes

    def run(ch: Chunk) -> None:
        ptr: GPtr = ch.env[slots[0]]
        lanes = ch.lanes()
        off = pick(ptr.offset, lanes, ch.n).astype(np.int64)
        values = pick(full(ch.env[slots[1]], ch.n, (n,) if n > 1 else ()), lanes, ch.n).reshape(lanes.size, n)
        misaligned = off % width != 0
        index = off // (width // n)
        outside = ptr.buffer.atomic_add(np.where(misaligned, -n - 1, index), values, elem)
        ch.report("atomic-bounds", ins, outside | misaligned, lanes)

    return run


def rsrc_window(ch: Chunk, ins: Instr, r: LlRsrc, lanes: np.ndarray, off: np.ndarray, width: int):
    """Absolute byte offsets and limits of the lanes' accesses through r; reports an access
    partly inside the resource."""
    base = pick(r.base, lanes, ch.n)
    limit = base + pick(r.nbytes, lanes, ch.n)
    at = base + off
    inside = (off >= 0) & (at + width <= limit)
    partly = ~inside & (at < limit) & (at + width > base) & (off + width > 0)
    if ch.prog.check and partly.any():
        ch.report("rsrc-partial", ins, partly, lanes)
    # bytes before the base are outside the resource too: clamp them out by the limit
    return at, np.where(off >= 0, limit, np.minimum(limit, base))


def make_rsrc(prog: LlProgram, ins: Instr, slots: list[int]):
    stride_slot, records_slot, flags_slot = slots[1], slots[2], slots[3]

    def run(ch: Chunk):
        ptr: GPtr = ch.env[slots[0]]
        stride = np.asarray(ch.env[stride_slot])
        if np.any(stride != 0):
            raise ExecError(f"{ins.where()}: a strided buffer resource (only stride 0 is modelled)")
        nbytes = np.asarray(ch.env[records_slot]).astype(np.int64)
        if nbytes.dtype != np.int64 or ins.args[2].type.bits == 32:
            nbytes = np.asarray(ch.env[records_slot]).astype(np.uint32).astype(np.int64)
        room = ptr.buffer.size - np.asarray(ptr.offset)
        if np.any(nbytes > room):
            ch.report("bad-rsrc", ins, np.ones(1, dtype=bool))
        flags = int(np.asarray(ch.env[flags_slot]).reshape(-1)[0])
        return LlRsrc(ptr.buffer, np.asarray(ptr.offset), np.minimum(nbytes, room), flags)

    return run


def global_offset(ch: Chunk, slots: list[int], lanes: np.ndarray) -> np.ndarray:
    """voffset + soffset of a raw buffer access (slots: voffset, soffset), int64 per lane."""
    v = pick(ch.env[slots[0]], lanes, ch.n).astype(np.int64)
    return v + pick(ch.env[slots[1]], lanes, ch.n).astype(np.int64)


def buffer_load(prog: LlProgram, ins: Instr, slots: list[int]):
    t = ins.type
    assert t is not None
    n = t.n if t.kind == "vec" else 1
    dtype = dtype_of(t)

    def run(ch: Chunk):
        r: LlRsrc = ch.env[slots[0]]
        lanes = ch.lanes()
        at, limit = rsrc_window(ch, ins, r, lanes, global_offset(ch, slots[1:3], lanes), t.nbytes)
        raw = r.buffer.gather(at, limit, t.nbytes)
        values = np.ascontiguousarray(raw).view(dtype).reshape(lanes.size, n)
        return as_value(per_thread(ch, lanes, values), t)

    return run


def buffer_store(prog: LlProgram, ins: Instr, slots: list[int]):
    t = ins.args[0].type

    def run(ch: Chunk) -> None:
        r: LlRsrc = ch.env[slots[1]]
        lanes = ch.lanes()
        at, limit = rsrc_window(ch, ins, r, lanes, global_offset(ch, slots[2:4], lanes), t.nbytes)
        data = as_bytes(ch.env[slots[0]], t, lanes, ch.n)
        rewrote = r.buffer.scatter(at, limit, data)
        if prog.check:
            ch.report("global-rewrite", ins, rewrote, lanes)

    return run


def async_load_lds(prog: LlProgram, ins: Instr, slots: list[int]):
    """raw.ptr.buffer.load.lds(rsrc, lds base, size, voffset, soffset, offset, aux): lane L
    copies `size` bytes from the buffer to LDS base + offset + L·size, where base is the
    wave's first active lane's (the instruction reads it from M0)."""
    size_op, imm_op = ins.args[2], ins.args[5]
    if size_op.is_local or imm_op.is_local:
        raise ExecError(f"{ins.where()}: the size and offset of a direct-to-LDS load are immediates")
    size, imm = int(size_op.value), int(imm_op.value)
    if size not in ASYNC_LDS_SIZES.get(prog.arch, ()):
        raise ExecError(f"{ins.where()}: a {size}-byte direct-to-LDS load does not exist on {prog.arch}")

    def run(ch: Chunk) -> None:
        r: LlRsrc = ch.env[slots[0]]
        lanes = ch.lanes()
        base = ch.env[slots[1]]
        base = first_lane(ch, ins, base)  # a scalar operand: the wave's first lane's
        off = global_offset(ch, slots[3:5], lanes) + imm
        at, limit = rsrc_window(ch, ins, r, lanes, off, size)
        raw = r.buffer.gather(at, limit, size)
        byte = pick(base, lanes, ch.n).astype(np.int64) + imm + at_lanes(ch.lane, lanes).astype(np.int64) * size
        queue_async_copy(ch, ins, lanes, byte, raw, (byte >= 0) & (byte + size <= prog.pool_bytes))

    return run


# ---- waits and barriers ----


def vmcnt_of(prog: LlProgram, imm: int) -> int:
    """The outstanding vector-memory loads an `s.waitcnt` immediate allows on the arch."""
    model = WAIT_MODEL[prog.arch]
    if model == "gfx9":
        return (imm & 15) | ((imm >> 14) & 3) << 4
    if model == "gfx11":
        return (imm >> 10) & 63
    return 0  # gfx12: the legacy s_waitcnt is a full wait


def waitcnt(prog: LlProgram, ins: Instr, slots: list[int]):
    keep = vmcnt_of(prog, immediate(ins, 0))
    return lambda ch: land(ch, ins, keep)


def wait_loadcnt(prog: LlProgram, ins: Instr, slots: list[int]):
    if WAIT_MODEL[prog.arch] != "gfx12":
        raise ExecError(f"{ins.where()}: s.wait.loadcnt does not exist on {prog.arch}")
    keep = immediate(ins, 0)
    return lambda ch: land(ch, ins, keep)


def immediate(ins: Instr, i: int) -> int:
    op = ins.args[i]
    if op.is_local:
        raise ExecError(f"{ins.where()}: argument {i} must be an immediate")
    return int(op.value)


def no_effect(prog: LlProgram, ins: Instr, slots: list[int]):
    return lambda ch: None


def barrier(prog: LlProgram, ins: Instr, slots: list[int]):
    return lambda ch: pass_barrier(ch, ins)


# ---- lanes and ids ----


def convergent(ch: Chunk, ins: Instr) -> None:
    """A wave-level convergent operation: every lane of an active wave must be active."""
    if ch.prog.check and ch.mask is not None:
        ch.report("partial-wave", ins, partial_waves(ch))


def workitem_id(dim: str):
    def factory(prog: LlProgram, ins: Instr, slots: list[int]):
        zero = np.asarray(0, dtype=np.int32)
        return lambda ch: ch.tid if dim == "x" else zero

    return factory


def workgroup_id(dim: str):
    d = "xyz".index(dim)

    def factory(prog: LlProgram, ins: Instr, slots: list[int]):
        return lambda ch: ch.bid[d]

    return factory


def mbcnt(high: bool):
    """mbcnt.lo / mbcnt.hi (mask, add): add + the set bits of the mask's low (high) 32 bits
    below the lane's position."""

    def factory(prog: LlProgram, ins: Instr, slots: list[int]):
        def run(ch: Chunk):
            convergent(ch, ins)
            mask = np.asarray(ch.env[slots[0]]).astype(np.int64) & 0xFFFFFFFF
            below = ch.lane.astype(np.int64) - (32 if high else 0)
            below = np.clip(below, 0, 32)
            bits = np.where(below >= 32, mask, mask & ((np.int64(1) << below) - 1))
            count = np.bitwise_count(bits.astype(np.uint64)).astype(np.int32)
            return (count + np.asarray(ch.env[slots[1]])).astype(np.int32)

        return run

    return factory


def readfirstlane(prog: LlProgram, ins: Instr, slots: list[int]):
    def run(ch: Chunk):
        convergent(ch, ins)
        return first_lane(ch, ins, ch.env[slots[0]])

    return run


# ---- MMA and transposes ----


def mma_call(prog: LlProgram, ins: Instr, slots: list[int]):
    op_id, form = mma_mod.INTRINSICS[ins.callee[len("llvm.amdgcn.") :]]
    lay = mma_mod.layout(op_id)
    if lay.wave != prog.wave:
        raise ExecError(f"{ins.where()}: {ins.callee} needs wave{lay.wave}, {prog.arch} runs wave{prog.wave}")
    (ai, bi, ci), zeros = mma_mod.CALL_FORMS[form]
    for i in zeros:
        if ins.args[i].is_local or ins.args[i].value not in ("0", "false"):
            raise ExecError(f"{ins.where()}: operand modifier {i} is not 0 (not modelled)")
    tail = (lay.frag,) if lay.frag > 1 else ()
    a_slot, b_slot, c_slot = slots[ai], slots[bi], slots[ci]
    uint = lay.elem == "bf16"

    def run(ch: Chunk):
        convergent(ch, ins)
        a = full(ch.env[a_slot], ch.n, tail)
        b = full(ch.env[b_slot], ch.n, tail)
        if uint:  # bf16 operands as bit patterns, whether typed <N x i16> or <N x bfloat>
            a, b = a.view(np.uint16), b.view(np.uint16)
        return mma_lanes(prog, ch, ins, lay, a, b, np.asarray(ch.env[c_slot]))

    return run


def transpose_read(wide: bool):
    def factory(prog: LlProgram, ins: Instr, slots: list[int]):
        t = ins.type
        assert t is not None
        n = 8 if wide else 4
        if t.kind != "vec" or t.n != n:
            raise ExecError(f"{ins.where()}: a transpose read returns {n} elements")
        if (prog.arch == "gfx950") == wide or prog.arch not in ("gfx950", "gfx1250"):
            raise ExecError(f"{ins.where()}: {ins.callee} does not exist on {prog.arch}")
        memo = prog.new_memo()

        def run(ch: Chunk):
            convergent(ch, ins)
            lanes, fetched = lds_read(ch, ins, memo, ch.env[slots[0]], t, 2 * n)
            return mma_mod.transpose_exchange(per_thread(ch, lanes, fetched), wide)

        return run

    return factory


def call(prog: LlProgram, ins: Instr, slots: list[int]):
    name = ins.callee
    short = name[len("llvm.amdgcn.") :] if name.startswith("llvm.amdgcn.") else ""
    if short in mma_mod.INTRINSICS:
        return mma_call(prog, ins, slots)
    for prefix, handler in CALL_PREFIXES:
        if name.startswith(prefix):
            return handler(prog, ins, slots)
    handler = CALLS.get(name)
    if handler is None:
        raise ExecError(f"{ins.where()}: the executor has no semantics for @{name}")
    return handler(prog, ins, slots)


CALLS: dict[str, Callable] = {
    "llvm.amdgcn.workitem.id.x": workitem_id("x"),
    "llvm.amdgcn.workitem.id.y": workitem_id("y"),
    "llvm.amdgcn.workitem.id.z": workitem_id("z"),
    "llvm.amdgcn.workgroup.id.x": workgroup_id("x"),
    "llvm.amdgcn.workgroup.id.y": workgroup_id("y"),
    "llvm.amdgcn.workgroup.id.z": workgroup_id("z"),
    "llvm.amdgcn.mbcnt.lo": mbcnt(False),
    "llvm.amdgcn.mbcnt.hi": mbcnt(True),
    "llvm.amdgcn.readfirstlane.i32": readfirstlane,
    "llvm.smin.i32": pure(np.minimum),
    "llvm.smax.i32": pure(np.maximum),
    "llvm.minnum.f32": pure(np.fmin),
    "llvm.maxnum.f32": pure(np.fmax),
    "llvm.amdgcn.make.buffer.rsrc.p8.p1": make_rsrc,
    "llvm.amdgcn.make.buffer.rsrc.p1": make_rsrc,
    "llvm.amdgcn.raw.ptr.buffer.load.lds": async_load_lds,
    "llvm.amdgcn.ds.read.tr16.b64.v4i16": transpose_read(False),
    "llvm.amdgcn.ds.load.tr16.b128.v8f16": transpose_read(True),
    "llvm.amdgcn.ds.load.tr16.b128.v8bf16": transpose_read(True),
    "llvm.amdgcn.s.waitcnt": waitcnt,
    "llvm.amdgcn.s.wait.loadcnt": wait_loadcnt,
    "llvm.amdgcn.s.wait.storecnt": no_effect,
    "llvm.amdgcn.s.wait.dscnt": no_effect,
    "llvm.amdgcn.s.barrier": barrier,
    "llvm.amdgcn.sched.group.barrier": no_effect,
    "llvm.amdgcn.sched.barrier": no_effect,
    "llvm.amdgcn.s.setprio": no_effect,
}
CALL_PREFIXES: tuple[tuple[str, Callable], ...] = (
    ("llvm.amdgcn.raw.ptr.buffer.load.lds", async_load_lds),
    ("llvm.amdgcn.raw.ptr.buffer.load.", buffer_load),
    ("llvm.amdgcn.raw.ptr.buffer.store.", buffer_store),
)

HANDLERS: dict[str, Callable] = {
    "add": pure(np.add),
    "sub": pure(np.subtract),
    "mul": pure(np.multiply),
    "sdiv": int_div,
    "srem": int_div,
    "and": pure(np.bitwise_and),
    "or": pure(np.bitwise_or),
    "fadd": pure(np.add),
    "fmul": pure(np.multiply),
    "icmp": icmp,
    "select": select,
    "fptrunc": fptrunc,
    "bitcast": bitcast,
    "zext": zext,
    "inttoptr": lds_pointer_cast,
    "ptrtoint": lds_pointer_cast,
    "extractelement": extractelement,
    "insertelement": insertelement,
    "shufflevector": shufflevector,
    "getelementptr": getelementptr,
    "load": load,
    "store": store,
    "atomicrmw": atomicrmw,
    "call": call,
    "fence": no_effect,  # LDS accesses complete in order in the model: the barrier orders them
}


def run_ll(
    ll: Union[str, Module],
    arch: str,
    buffers: Mapping[str, np.ndarray],
    scalars: Optional[Mapping[str, int]],
    grid: tuple[int, int, int],
    block: int,
    *,
    chunk_threads: int = DEFAULT_CHUNK_THREADS,
    check_hazards: bool = True,
    tracer: Optional[Tracer] = None,
) -> RunResult:
    """Runs the module's kernel over `grid` workgroups of `block` threads as `arch` would.

    buffers: an array per pointer param (by name without %), whose bytes are the memory;
    scalars: the i32 params (a `<name>_bytes` param defaults to that buffer's size). The
    launch (grid, block) is the caller's, as on a GPU: the module does not carry it."""
    with gc_paused():
        start = time.perf_counter()
        module = read_ll(ll) if isinstance(ll, str) else ll
        mems: dict[str, Buffer] = {}
        values: dict[str, int] = dict(scalars or {})
        for p in module.function.params:
            name = p.name[1:]
            if p.type.kind == "ptr" and name in buffers:
                mems[name] = Buffer(name, np.asarray(buffers[name]), "f32", check_hazards and "readonly" not in p.attrs)
        for name, buf in mems.items():
            values.setdefault(f"{name}_bytes", buf.size)
        prog = LlProgram(module, arch, mems, values, grid, block, check_hazards)
        prog.tracer = tracer
        total = grid[0] * grid[1] * grid[2]
        ops, thread_ops, chunks = run_launch(prog, total, chunk_threads, prog.run_chunk)
        stats = Stats(total, total * block, chunks, ops, thread_ops, time.perf_counter() - start)
        return RunResult({name: buf.result() for name, buf in mems.items()}, prog.log.hazards(), stats)
