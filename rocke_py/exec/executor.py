"""Runs a kernel's IR over its whole grid on the CPU (docs/executor.md).

The kernel is compiled once into one step per op (a closure over value slots); a chunk of
workgroups then runs every step on NumPy arrays with one element per thread (a vector value
is (threads, n)). Constants and params are 0-d (or (n,)) and broadcast. Control flow runs
under a per-thread mask; memory ops act on the active lanes only. Hazards are logged, not
hidden (hazards.py)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Mapping, Optional, Union

import numpy as np

from . import mma as mma_mod
from .fp import bf16_bits
from .gc_pause import gc_paused
from .hazards import Hazard, HazardLog
from .ir_text import Kernel, Op, Region
from .memory import LDS_ALIGN, Access, Alloc, AsyncLoad, Buffer, Lds
from .reader import read_ir
from .types import BYTES, IrType, parse_type

Step = Callable[["Chunk"], None]
#: Called at every tile.mma with the op, the chunk's block ids (workgroups, 3) and the a and
#: b operands of every thread of the chunk (rows in block order): what the K-outer test
#: (tests/numerics/test_kouter.py) compares between two kernels.
MmaObserver = Callable[[Op, np.ndarray, np.ndarray, np.ndarray], None]
#: Called at every LDS read and write and MMA with the kind ("lds-read", "lds-write", "mma-a",
#: "mma-b"), the op, the lanes and their values: what the lockstep comparison with the `ll`
#: executor (numerics/lockstep.py) digests. The `ll` executor calls it at the same points.
Tracer = Callable[[str, object, np.ndarray, np.ndarray], None]
DEFAULT_CHUNK_THREADS = 1 << 15
RECENT_MASKS = 4


class ExecError(ValueError):
    """The IR asks for something the executor cannot run (an unknown op, a missing input)."""


@dataclass(frozen=True)
class Stats:
    workgroups: int
    threads: int
    chunks: int
    ops: int  # op executions, summed over chunks (a loop body counts once per iteration)
    thread_ops: int  # threads active at each op execution, summed
    seconds: float


@dataclass(frozen=True)
class RunResult:
    buffers: dict[str, np.ndarray]  # every pointer param's memory after the run
    hazards: tuple[Hazard, ...]
    stats: Stats

    @property
    def ok(self) -> bool:
        return not self.hazards


@dataclass
class Rsrc:
    buffer: Buffer
    nbytes: np.ndarray  # int64, 0-d or per thread


class Chunk:
    """Consecutive workgroups run together: their threads, memories and values."""

    def __init__(self, prog: "Program", first: int, count: int) -> None:
        b, w = prog.block, prog.wave
        self.prog = prog
        self.n = count * b
        self.tid = np.tile(np.arange(b, dtype=np.int32), count)
        self.wg = np.repeat(np.arange(count, dtype=np.int64), b)
        self.lane = self.tid % np.int32(w)
        self.wave = (self.tid // np.int32(w)).astype(np.int16)  # the wave in its workgroup
        linear = first + np.arange(count, dtype=np.int64)
        gx, gy, _ = prog.grid
        self.blocks = np.stack([linear % gx, linear // gx % gy, linear // (gx * gy)], axis=1)
        self.bid = [np.repeat(self.blocks[:, d].astype(np.int32), b) for d in range(3)]
        self.env: list = list(prog.initial)
        self.mask: Optional[np.ndarray] = None
        self.active = self.n
        self.all_lanes = np.arange(self.n)
        self.active_lanes = self.all_lanes
        self.recent_masks: list[tuple[np.ndarray, np.ndarray]] = []  # (mask, its lanes), newest last
        self.lds = Lds(count, prog.pool_bytes, prog.check, self.wg, self.wave)
        self.memo: list = [None] * prog.memo_count  # per memoized op: its last inputs and result
        self.queue: list[AsyncLoad] = []
        self.operands = mma_mod.Operands()  # the recent MMA operands as matrices
        self.yielded: list = []
        self.ops = 0
        self.thread_ops = 0

    def set_mask(self, mask: Optional[np.ndarray]) -> None:
        if mask is not None and mask.all():
            mask = None
        if mask is None:
            self.mask, self.active_lanes = None, self.all_lanes
        else:
            self.mask, self.active_lanes = self.canonical(mask)
        self.active = self.active_lanes.size

    def canonical(self, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A mask equal to a recent one becomes that one (the same objects), so that the
        memoized accesses keyed on the active lanes hit again in the next loop iteration."""
        for m, lanes in self.recent_masks:
            if m is mask or np.array_equal(m, mask):
                return m, lanes
        entry = (mask, np.nonzero(mask)[0])
        self.recent_masks = self.recent_masks[-(RECENT_MASKS - 1) :] + [entry]
        return entry

    def lanes(self) -> np.ndarray:
        return self.active_lanes

    def block_of(self, lane: int) -> tuple[int, int, int]:
        x, y, z = self.blocks[int(self.wg[lane])]
        return int(x), int(y), int(z)

    def report(self, kind: str, op: Op, hit: np.ndarray, lanes: Optional[np.ndarray] = None) -> None:
        """Logs kind for the lanes where hit holds (hit over `lanes`, or over all threads)."""
        if not hit.any():
            return
        first = int(np.argmax(hit))
        lane = first if lanes is None else int(lanes[first])
        self.prog.log.add(kind, op.where(), int(hit.sum()), self.block_of(lane))


def pick(x: np.ndarray, lanes: np.ndarray, n: int) -> np.ndarray:
    """x at the given lanes; x may be 0-d (or (k,) for a vector) and broadcast."""
    x = np.asarray(x)
    if x.ndim and x.shape[0] == n:
        return x if lanes.size == n else x[lanes]  # the lanes are sorted and distinct: all of them
    return np.broadcast_to(x, (lanes.size,) + x.shape)


def full(x: np.ndarray, n: int, tail: tuple[int, ...] = ()) -> np.ndarray:
    """x for every thread (read it only: it may be x itself or a broadcast view)."""
    x = np.asarray(x)
    if x.shape[:1] == (n,) and x.shape[1:] == tail:  # np.broadcast_to costs more than the op
        return x
    return np.broadcast_to(x, (n,) + tail)


def as_granules(x: np.ndarray, t: IrType, lanes: np.ndarray, n: int) -> np.ndarray:
    """A register value (scalar or vector) at the lanes as (L, bytes/2) uint16."""
    tail = (t.n,) if t.kind == "vec" else ()
    x = np.asarray(x)
    if lanes.size == n and x.shape == (n,) + tail and x.flags.c_contiguous and x.itemsize >= 2:
        return x.view(np.uint16).reshape(n, t.nbytes // 2)  # every thread's own value: a view
    v = np.ascontiguousarray(pick(full(x, n, tail), lanes, n))
    return v.view(np.uint8).reshape(lanes.size, t.nbytes).view(np.uint16)


def from_bytes(raw: np.ndarray, t: IrType) -> np.ndarray:
    """(L, nbytes) bytes or granules as values of t: (L,) for a scalar, (L, n) for a vector."""
    v = np.ascontiguousarray(raw).view(np.uint8).view(t.dtype).reshape(raw.shape[0], t.n)
    return v if t.kind == "vec" else v[:, 0]


def tdiv(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Signed division truncating toward 0 and its remainder (C), b already non-zero."""
    if np.ndim(b) == 0 and int(b) > 0 and np.min(a, initial=0) >= 0:
        return np.divmod(a, b)  # one division for both
    q, r = np.divmod(a, b)  # floor division and its remainder, r = a - q·b (wrapping)
    fix = (r != 0) & ((r < 0) != (a < 0))
    return q + fix, r - fix * b


class Program:
    """A kernel compiled into steps, with what every chunk starts from."""

    def __init__(self, kernel: Kernel, buffers: dict[str, Buffer], scalars: dict[str, int], grid, check: bool):
        self.kernel = kernel
        self.block = int(kernel.attrs.get("max_workgroup_size", 0))
        self.wave = int(kernel.attrs.get("wave_size", 0))
        if self.block <= 0 or self.wave <= 0 or self.block % self.wave:
            raise ExecError("the kernel needs max_workgroup_size and wave_size attrs (a multiple of it)")
        self.grid = grid
        self.check = check
        self.on_mma: Optional[MmaObserver] = None
        self.tracer: Optional[Tracer] = None
        self.log = HazardLog()
        self.initial: list = []  # per slot: what a chunk starts with (constants, params, allocs)
        self.types: list[str] = []  # per slot: its type name
        self.allocs: list[Alloc] = []
        self.pool_bytes = 0
        self.defined_in: list[int] = []  # per slot: the region defining it (-1: a param)
        self.position: dict[int, int] = {}  # region id -> the index of the op being compiled
        self.last_use: dict[int, tuple[int, int]] = {}  # slot -> (its region, the op after which it is dead)
        self.frees_of: dict[int, list[list[int]]] = {}  # region id -> per op, the slots dead after it
        self.plans: dict[int, tuple[list, int]] = {}  # region id -> region_plan
        self.loop_depth = 0  # while compiling: how many scf.for bodies enclose the op
        self.memo_count = 0  # the memo entries a chunk holds (Chunk.memo)
        scope: dict[str, int] = {}
        for p in kernel.params:
            t = parse_type(p.value.type)
            name = p.value.name[1:]
            if t.kind == "ptr":
                if name not in buffers:
                    raise ExecError(f"no buffer given for the pointer param {p.value.name}")
                value = buffers[name]
            elif name in scalars:
                value = np.asarray(scalars[name], dtype=t.dtype)
            else:
                raise ExecError(f"no value given for the scalar param {p.value.name}")
            scope[p.value.name] = self.new_slot(value, p.value.type, -1)
        self.entry = self.compile_region(kernel.entry, [scope])
        for slot, (region, index) in self.last_use.items():
            if self.initial[slot] is None:  # a constant stays: its op runs only once, at compile
                self.frees_of[region][index].append(slot)

    # -- compiling --

    def new_slot(self, value, type_name: str, region: int) -> int:
        self.initial.append(value)
        self.types.append(type_name)
        self.defined_in.append(region)
        return len(self.initial) - 1

    def compile_region(self, region: Region, scopes: list[dict[str, int]], pre: Optional[dict[str, int]] = None):
        """(region id, one step per op); `pre` holds the slots the region starts with (a loop's
        induction variable and carried values)."""
        rid = len(self.frees_of)
        self.frees_of[rid] = [[] for _ in region.ops]
        scope: dict[str, int] = dict(pre or {})
        for slot in scope.values():
            self.defined_in[slot] = rid
            self.last_use.setdefault(slot, (rid, 0))
        inner = scopes + [scope]
        steps = []
        for index, op in enumerate(region.ops):
            self.position[rid] = index
            ins = [self.resolve(name, inner, op) for name in op.operands]
            step = self.compile_op(op, ins, inner)
            outs = []
            for r in op.results:
                slot = self.new_slot(None, r.type, rid)
                scope[r.name] = slot
                self.last_use[slot] = (rid, index)
                outs.append(slot)
            steps.append(step(outs) if step is not None else None)
        return rid, steps

    def resolve(self, name: str, scopes: list[dict[str, int]], op: Op) -> int:
        for scope in reversed(scopes):
            if name in scope:
                slot = scope[name]
                region = self.defined_in[slot]
                if region >= 0:
                    self.last_use[slot] = (region, self.position[region])
                return slot
        raise ExecError(f"{op.where()}: operand {name} is not visible")

    def new_memo(self) -> Optional[int]:
        """A memo entry for an op inside a loop (its inputs are often the same objects at
        every iteration); None outside loops, where an op runs once per chunk."""
        if self.loop_depth == 0:
            return None
        self.memo_count += 1
        return self.memo_count - 1

    def compile_op(self, op: Op, ins: list[int], scopes):
        handler = OPS.get(op.name)
        if handler is None:
            raise ExecError(f"{op.where()}: the executor has no semantics for {op.name}")
        return handler(self, op, ins, scopes)

    # -- running --

    def run_region(self, ch: Chunk, compiled) -> None:
        rid, steps = compiled
        plan = self.plans.get(rid)
        if plan is None:
            plan = self.plans[rid] = region_plan(steps, self.frees_of[rid])
        runs, count = plan
        # the mask is the same before each op of a region (nested regions restore it)
        ch.ops += count
        ch.thread_ops += count * ch.active
        env = ch.env
        for step, dead in runs:
            step(ch)
            for slot in dead:
                env[slot] = None


def region_plan(steps: list, frees: list[list[int]]) -> tuple[list[tuple[Step, tuple[int, ...]]], int]:
    """Per op with a step: the step and the slots dead after it (an op without a step has
    nothing to run and uses nothing at run time: its dead slots go with the op before),
    and how many ops count."""
    runs: list[tuple[Step, tuple[int, ...]]] = [(no_step, ())]
    for step, dead in zip(steps, frees):
        if step is not None:
            runs.append((step, tuple(dead)))
        elif dead:
            runs[-1] = (runs[-1][0], runs[-1][1] + tuple(dead))
    if not runs[0][1]:
        runs.pop(0)
    return runs, len(runs) - (runs[0][0] is no_step if runs else 0)


def no_step(ch: "Chunk") -> None:
    pass


# ---- op semantics (docs/ir.md §4), one factory per op: (program, op, input slots, scopes)
# -> (output slots) -> step ----


def pure(fn: Callable) -> Callable:
    """An op computing its one result from its operands, the same on every thread."""

    def factory(prog: Program, op: Op, ins: list[int], scopes):
        return produce(memoized(fn, ins, prog.new_memo()))

    return factory


def memoized(fn: Callable, ins: list[int], memo: Optional[int]) -> Callable[["Chunk"], object]:
    """The run of a pure op: fn of the operands. With a memo entry, operands that are the
    same objects as at the last execution give the same result object (values are never
    changed in place), which saves recomputing loop-invariant values at every iteration
    and keeps their identity for the memoized LDS accesses."""
    if len(ins) == 1:
        (a_slot,) = ins
        if memo is None:
            return lambda ch: fn(ch.env[a_slot])

        def run1(ch: Chunk):
            a = ch.env[a_slot]
            m = ch.memo[memo]
            if m is not None and m[0] is a:
                return m[1]
            out = fn(a)
            ch.memo[memo] = (a, out)
            return out

        return run1
    if len(ins) == 2:
        a_slot, b_slot = ins
        if memo is None:
            return lambda ch: fn(ch.env[a_slot], ch.env[b_slot])

        def run2(ch: Chunk):
            env = ch.env
            a, b = env[a_slot], env[b_slot]
            m = ch.memo[memo]
            if m is not None and m[0] is a and m[1] is b:
                return m[2]
            out = fn(a, b)
            ch.memo[memo] = (a, b, out)
            return out

        return run2

    def run(ch: Chunk):
        args = [ch.env[i] for i in ins]
        m = ch.memo[memo] if memo is not None else None
        if m is not None and len(m[0]) == len(args) and all(x is y for x, y in zip(m[0], args)):
            return m[1]
        out = fn(*args)
        if memo is not None:
            ch.memo[memo] = (args, out)
        return out

    return run


def effect(run: Callable[[Chunk], None]):
    """The binder of an op without results: run at each execution."""
    return lambda outs: run


def produce(run: Callable[[Chunk], object]):
    """The binder of an op with one result: run's value at each execution."""

    def bind(outs: list[int]) -> Step:
        out = outs[0]

        def step(ch: Chunk) -> None:
            ch.env[out] = run(ch)

        return step

    return bind


def constant(prog: Program, op: Op, ins, scopes):
    t = parse_type(op.results[0].type)
    raw = op.attrs.get("value")
    if op.name == "arith.constant_vec":
        value = np.zeros(t.n, dtype=t.dtype)
    elif t.elem == "bf16":
        value = bf16_bits(np.float32(raw))
    else:
        value = np.asarray(raw, dtype=t.dtype)

    def bind(outs):  # the slot is filled once, in the initial environment: no step
        prog.initial[outs[0]] = value
        return None

    return bind


def int_div(prog: Program, op: Op, ins, scopes):
    return produce(division(op.name == "arith.div", ins, prog.new_memo(), op))


def division(quotient: bool, slots: list[int], memo: Optional[int], op) -> Callable[["Chunk"], object]:
    """The run of a signed division (its quotient, or its remainder) truncating toward 0; a
    zero divisor on an active thread is reported (and divides by 1). Memoized like a pure op
    when the divisor has no zero. Shared with the `ll` executor (sdiv, srem)."""
    a_slot, b_slot = slots

    def run(ch: Chunk):
        a, b = ch.env[a_slot], ch.env[b_slot]
        m = ch.memo[memo] if memo is not None else None
        if m is not None and m[0] is a and m[1] is b:
            return m[2]  # only a divisor without zeros is memoized: nothing to report
        zero = b == 0
        if np.any(zero):
            hit = full(zero, ch.n) if ch.mask is None else full(zero, ch.n) & ch.mask
            ch.report("division-by-zero", op, hit)
            q, r = tdiv(a, np.where(zero, np.ones_like(b), b))
            return q if quotient else r
        q, r = tdiv(a, b)
        out = q if quotient else r
        if memo is not None:
            ch.memo[memo] = (a, b, out)
        return out

    return run


CMP = {
    "eq": np.equal,
    "ne": np.not_equal,
    "slt": np.less,
    "sle": np.less_equal,
    "sgt": np.greater,
    "sge": np.greater_equal,
}


def cmp(prog: Program, op: Op, ins, scopes):
    pred = op.attrs["pred"]
    if pred == "ult":
        return pure(lambda a, b: np.asarray(a).astype(np.uint32) < np.asarray(b).astype(np.uint32))(
            prog, op, ins, scopes
        )
    if pred not in CMP:
        raise ExecError(f"{op.where()}: unknown predicate {pred}")
    return pure(CMP[pred])(prog, op, ins, scopes)


def select(prog: Program, op: Op, ins, scopes):
    vector = parse_type(op.results[0].type).kind == "vec"

    def fn(c, a, b):
        c = np.asarray(c)
        return np.where(c[..., None] if vector and c.ndim else c, a, b)

    return pure(fn)(prog, op, ins, scopes)


def fptrunc(prog: Program, op: Op, ins, scopes):
    to = op.attrs["to"]
    if to == "bf16":
        return pure(bf16_bits)(prog, op, ins, scopes)
    return pure(lambda a: np.asarray(a).astype(np.float16))(prog, op, ins, scopes)


def bitcast(prog: Program, op: Op, ins, scopes):
    t = parse_type(op.results[0].type)

    def fn(a):
        a = np.ascontiguousarray(a)
        lead = a.shape[:1] if a.ndim and a.shape[-1:] != () and (a.ndim == 2 or t.kind == "scalar") else ()
        raw = a.view(np.uint8).reshape(lead + (-1,))
        v = raw.view(t.dtype)
        return v if t.kind == "vec" else v[..., 0]

    return pure(fn)(prog, op, ins, scopes)


def thread_value(which: str):
    def factory(prog: Program, op: Op, ins, scopes):
        dim = op.attrs.get("dim", 0)
        return produce(lambda ch: ch.tid if which == "tid" else ch.lane if which == "lane" else ch.bid[dim])

    return factory


def wave_first(ch: Chunk, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per thread, the value of its wave's first active lane, and per thread whether its own
    (active) value differs from it."""
    w = ch.prog.wave
    x2 = full(x, ch.n).reshape(-1, w)
    if ch.mask is None:
        first = x2[:, 0]
        differs = x2 != first[:, None]
    else:
        m2 = ch.mask.reshape(-1, w)
        first = x2[np.arange(x2.shape[0]), np.argmax(m2, axis=1)]
        differs = (x2 != first[:, None]) & m2
    return np.repeat(first, w), differs.reshape(-1)


def readfirstlane(prog: Program, op: Op, ins, scopes):
    src = ins[0]
    return produce(lambda ch: first_lane(ch, op, ch.env[src]))


def first_lane(ch: Chunk, op, x):
    """readfirstlane of x: each wave's first active lane's value; an active lane whose value
    differs is `not-uniform`. Shared with the `ll` executor."""
    if np.ndim(x) == 0:
        return x
    first, differs = wave_first(ch, x)
    if ch.prog.check:
        ch.report("not-uniform", op, differs)
    return first


def make_rsrc(prog: Program, op: Op, ins, scopes):
    def run(ch: Chunk):
        buf, nbytes = ch.env[ins[0]], np.asarray(ch.env[ins[1]]).astype(np.int64)
        if np.any(nbytes > buf.size):
            ch.report("bad-rsrc", op, np.ones(1, dtype=bool))
        return Rsrc(buf, np.minimum(nbytes, buf.size))

    return produce(run)


def addressed(ch: Chunk, ins: list[int]):
    """A global access's target (its first operand), the active lanes and their offsets (the
    second operand) as int64."""
    lanes = ch.lanes()
    return ch.env[ins[0]], lanes, pick(ch.env[ins[1]], lanes, ch.n).astype(np.int64)


def buffer_load(prog: Program, op: Op, ins, scopes):
    t = parse_type(op.results[0].type)

    def run(ch: Chunk):
        r, lanes, off = addressed(ch, ins)
        raw = r.buffer.gather(off, pick(r.nbytes, lanes, ch.n), t.nbytes)
        return scatter_result(ch, lanes, from_bytes(raw, t).reshape(lanes.size, t.n), t)

    return produce(run)


def buffer_store(prog: Program, op: Op, ins, scopes):
    t = parse_type(prog_type(prog, scopes, op, 2))

    def run(ch: Chunk) -> None:
        r, lanes, off = addressed(ch, ins)
        data = as_granules(ch.env[ins[2]], t, lanes, ch.n).view(np.uint8)
        rewrote = r.buffer.scatter(off, pick(r.nbytes, lanes, ch.n), data)
        if prog.check:
            ch.report("global-rewrite", op, rewrote, lanes)

    return effect(run)


def atomic_fadd(prog: Program, op: Op, ins, scopes):
    t = parse_type(prog_type(prog, scopes, op, 2))

    def run(ch: Chunk) -> None:
        buf, lanes, index = addressed(ch, ins)
        values = pick(full(ch.env[ins[2]], ch.n, (t.n,) if t.kind == "vec" else ()), lanes, ch.n)
        values = values.reshape(lanes.size, t.n)
        outside = buf.atomic_add(index, values)
        ch.report("atomic-bounds", op, outside | ((index % t.n) != 0), lanes)

    return effect(run)


def prog_type(prog: Program, scopes, op: Op, operand: int) -> str:
    """The type name of an operand, from the op or param that defined it."""
    return prog.types[prog.resolve(op.operands[operand], scopes, op)]


def smem_alloc(prog: Program, op: Op, ins, scopes):
    t = parse_type(op.results[0].type)
    base = prog.pool_bytes
    alloc = Alloc(op.results[0].name, base, t.rows, t.cols, t.elem)
    prog.pool_bytes = (base + alloc.nbytes + LDS_ALIGN - 1) // LDS_ALIGN * LDS_ALIGN
    prog.allocs.append(alloc)

    def bind(outs):
        prog.initial[outs[0]] = alloc
        return None

    return bind


def smem_addr(prog: Program, op: Op, ins, scopes):
    def run(ch: Chunk):
        return np.asarray(ch.env[ins[0]].base, dtype=np.int32)

    return produce(run)


def at_lanes(x: np.ndarray, lanes: np.ndarray) -> np.ndarray:
    """A per-thread array at the lanes (itself when they are all the threads)."""
    return x if lanes.size == x.shape[0] else x[lanes]


def lds_lanes(ch: Chunk, op: Op, s: Alloc, row, col, n: int, align: int) -> tuple[Access, list]:
    """The access of the active lanes to n elements at [row, col] of s, without the lanes
    outside s or misaligned; and the reports those lanes make (kind, hit, over which lanes)."""
    lanes = ch.lanes()
    eb = BYTES[s.elem]
    element = pick(row, lanes, ch.n).astype(np.int64) * s.cols + pick(col, lanes, ch.n).astype(np.int64)
    byte = s.base + element * eb
    outside = (element < 0) | (element + n > s.rows * s.cols)
    misaligned = (byte % max(align, 2)) != 0
    bad = outside | misaligned
    reports = []
    if bad.any():  # one reduction on the common path, where no lane is bad
        if ch.prog.check:
            reports = [("lds-bounds", outside, lanes), ("lds-misaligned", misaligned & ~outside, lanes)]
        keep = ~bad
        lanes, byte = lanes[keep], byte[keep]
    wg = at_lanes(ch.wg, lanes)
    acc = Access(lanes, ch.lds.first_granule(wg, byte), n * eb // 2, wg, at_lanes(ch.wave, lanes))
    return acc, reports


def lds_access(ch: Chunk, op: Op, memo: Optional[int], s: Alloc, row, col, n: int, align: int) -> Access:
    """lds_lanes, reported; memoized while s, row, col and the active lanes are the same
    objects (the access's reports are made again at every execution)."""
    lanes = ch.active_lanes
    m = ch.memo[memo] if memo is not None else None
    if m is not None and m[0] is s and m[1] is row and m[2] is col and m[3] is lanes:
        acc, reports = m[4], m[5]
        acc.reused = True
    else:
        acc, reports = lds_lanes(ch, op, s, row, col, n, align)
        if memo is not None:
            ch.memo[memo] = (s, row, col, lanes, acc, reports)
    for kind, hit, over in reports:
        ch.report(kind, op, hit, over)
    return acc


def lds_read(ch: Chunk, op: Op, memo: Optional[int], s: Alloc, row, col, n: int, align: int):
    """(lanes, values (L, n)) of an LDS read."""
    acc = lds_access(ch, op, memo, s, row, col, n, align)
    data, found = ch.lds.read(acc)
    for kind, hit in found.items():
        ch.report(kind, op, hit, acc.lanes)
    values = data.view(np.dtype(parse_type(s.elem).dtype)).reshape(acc.lanes.size, n)
    if ch.prog.tracer is not None:
        ch.prog.tracer("lds-read", op, acc.lanes, values)
    return acc.lanes, values


def scatter_result(ch: Chunk, lanes: np.ndarray, values: np.ndarray, t: IrType) -> np.ndarray:
    """Per-lane values (L, k) of the active lanes as a value of t for every thread (0 elsewhere)."""
    if lanes.size == ch.n:
        out = values
    else:
        out = np.zeros((ch.n, values.shape[1]), dtype=values.dtype)
        out[lanes] = values
    return out if t.kind == "vec" else out[:, 0]


def smem_load(prog: Program, op: Op, ins, scopes):
    t = parse_type(op.results[0].type)
    n, align = int(op.attrs["n"]), int(op.attrs.get("align", 1))
    memo = prog.new_memo()

    def run(ch: Chunk):
        lanes, values = lds_read(ch, op, memo, ch.env[ins[0]], ch.env[ins[1]], ch.env[ins[2]], n, align)
        return scatter_result(ch, lanes, values, t)

    return produce(run)


def smem_store(prog: Program, op: Op, ins, scopes):
    t = parse_type(prog_type(prog, scopes, op, 3))
    align = int(op.attrs.get("align", 1))
    memo = prog.new_memo()

    def run(ch: Chunk) -> None:
        acc = lds_access(ch, op, memo, ch.env[ins[0]], ch.env[ins[1]], ch.env[ins[2]], t.n, align)
        data = as_granules(ch.env[ins[3]], t, acc.lanes, ch.n)
        if prog.tracer is not None:
            prog.tracer("lds-write", op, acc.lanes, data)
        found = ch.lds.write(acc, data)
        for kind, hit in found.items():
            ch.report(kind, op, hit, acc.lanes)

    return effect(run)


def partial_waves(ch: Chunk) -> np.ndarray:
    """Per thread: its wave has some lanes active and some not."""
    if ch.mask is None:
        return np.zeros(ch.n, dtype=bool)
    m2 = ch.mask.reshape(-1, ch.prog.wave)
    partial = m2.any(axis=1) & ~m2.all(axis=1)
    return np.repeat(partial, ch.prog.wave) & ch.mask


def transpose_read(prog: Program, op: Op, ins, scopes):
    """ds_read_tr16_b64 (groups of 16 lanes, 4 elements) and ds_read_tr16_b128 (groups of 8,
    8 elements): every lane fetches its run, then lane L's element e is element L % g of the
    run fetched by lane (L // g)·g + the source of docs/ir.md §4.3 (mma.transpose_exchange)."""
    t = parse_type(op.results[0].type)
    wide = op.name == "tile.ds_read_tr16_b128"
    n = 8 if wide else 4
    memo = prog.new_memo()

    def run(ch: Chunk):
        if prog.check and ch.mask is not None:
            ch.report("partial-wave", op, partial_waves(ch))
        lanes, fetched = lds_read(ch, op, memo, ch.env[ins[0]], ch.env[ins[1]], ch.env[ins[2]], n, 2 * n)
        runs = scatter_result(ch, lanes, fetched, IrType("vec", t.elem, n))
        return mma_mod.transpose_exchange(runs, wide)

    return produce(run)


def mma_op(prog: Program, op: Op, ins, scopes):
    try:
        lay = mma_mod.layout(op.attrs["op_id"])
    except ValueError as exc:
        raise ExecError(f"{op.where()}: {exc}") from None
    if lay.wave != prog.wave:
        raise ExecError(f"{op.where()}: {lay.op_id} needs wave{lay.wave}, the kernel has wave{prog.wave}")

    def run(ch: Chunk):
        if prog.check and ch.mask is not None:  # without a mask every wave is whole
            ch.report("partial-wave", op, partial_waves(ch))
        a = full(ch.env[ins[0]], ch.n, (lay.frag,) if lay.frag > 1 else ())
        b = full(ch.env[ins[1]], ch.n, (lay.frag,) if lay.frag > 1 else ())
        c = np.asarray(ch.env[ins[2]])  # (T, c_len) or one (c_len,) row for every thread
        if prog.on_mma is not None:
            prog.on_mma(op, ch.blocks, a, b)
        return mma_lanes(prog, ch, op, lay, a, b, c)

    return produce(run)


def mma_lanes(prog, ch: Chunk, op, lay: mma_mod.Layout, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """D of one MMA over the chunk (both executors): the tracer sees A and B, a gfx11 replica
    lane that does not repeat its twin is reported, and a lane outside the mask keeps C."""
    if prog.tracer is not None:
        prog.tracer("mma-a", op, ch.all_lanes, np.ascontiguousarray(a))
        prog.tracer("mma-b", op, ch.all_lanes, np.ascontiguousarray(b))
    d, replicas = mma_mod.mma(lay, a, b, c, ch.operands)
    if not replicas and prog.check:
        ch.report("wmma-replica", op, np.ones(1, dtype=bool))
    return d if ch.mask is None else np.where(ch.mask[:, None], d, c)


def async_load(prog: Program, op: Op, ins, scopes):
    dwords = int(op.attrs["dwords"])
    width = 4 * dwords

    def run(ch: Chunk) -> None:
        r: Rsrc = ch.env[ins[0]]
        lanes = ch.lanes()
        base = ch.env[ins[1]]
        base = first_lane(ch, op, base)  # a scalar operand: the wave's first lane's
        off = pick(ch.env[ins[2]], lanes, ch.n).astype(np.int64)
        raw = r.buffer.gather(off, pick(r.nbytes, lanes, ch.n), width)
        byte = pick(base, lanes, ch.n).astype(np.int64) + at_lanes(ch.lane, lanes).astype(np.int64) * width
        inside = np.zeros(lanes.size, dtype=bool)
        for a in prog.allocs:  # a lane's copy must fall inside one allocation
            inside |= (byte >= a.base) & (byte + width <= a.base + a.nbytes)
        queue_async_copy(ch, op, lanes, byte, raw, inside)

    return effect(run)


def queue_async_copy(ch: Chunk, op, lanes: np.ndarray, byte: np.ndarray, raw: np.ndarray, inside: np.ndarray) -> None:
    """Queues the lanes' direct-to-LDS copies, raw (L, width) bytes read at issue, to their LDS
    byte addresses: they land at a wait (`land`). A lane off a dword (the copy writes whole
    dwords: it would land elsewhere) is reported, a lane not `inside` reported and dropped;
    the granules written are marked in flight. Shared with the `ll` executor."""
    ch.report("lds-misaligned", op, byte % 4 != 0, lanes)
    ch.report("lds-bounds", op, ~inside, lanes)
    if not inside.all():
        lanes, byte, raw = lanes[inside], byte[inside], raw[inside]
    wg = at_lanes(ch.wg, lanes)
    acc = Access(lanes, ch.lds.first_granule(wg, byte), raw.shape[1] // 2, wg, at_lanes(ch.wave, lanes))
    data = np.ascontiguousarray(raw).view(np.uint16)
    active = np.zeros(ch.n, dtype=bool)
    active[lanes] = True
    if ch.lds.track:
        # a fancy update counts a granule two lanes copy to once (np.add.at is far slower)
        ch.lds.scatter(ch.lds.pending, acc, ch.lds.gather(ch.lds.pending, acc) + 1)
        ch.lds.in_flight += data.size
    ch.queue.append(AsyncLoad(op.where(), active, acc, data, ch.lds.epoch[wg]))


def land(ch: Chunk, op: Optional[Op], keep: int) -> None:
    """Lands, for each active thread, all but its `keep` most recent async loads."""
    exec_mask = None if ch.mask is None else ch.mask
    later = np.zeros(ch.n, dtype=np.int32)
    for entry in reversed(ch.queue):
        now = entry.active & (later >= keep)
        if exec_mask is not None:
            now &= exec_mask
        later += entry.active
        if not now.any():
            continue
        acc, data, issued = entry.landing(now[entry.acc.lanes])
        lds = ch.lds
        if lds.track:
            lds.scatter(lds.pending, acc, lds.gather(lds.pending, acc) - 1)
            lds.in_flight -= data.size
        found = lds.write(acc, data, issued)
        if op is not None:
            for kind, hit in found.items():
                ch.report(kind, op, hit, acc.lanes)
        entry.active = entry.active & ~now
    ch.queue = [e for e in ch.queue if e.active.any()]


def waitcnt(prog: Program, op: Op, ins, scopes):
    keep = int(op.attrs["vmcnt"])

    def run(ch: Chunk) -> None:
        land(ch, op, keep)

    return effect(run)


def barrier(prog: Program, op: Op, ins, scopes):
    full_sync = op.name == "tile.sync"

    def run(ch: Chunk) -> None:
        if full_sync:
            land(ch, op, 0)
        pass_barrier(ch, op)

    return effect(run)


def pass_barrier(ch: Chunk, op) -> None:
    """The workgroups with an active thread pass a barrier (a new LDS epoch); a workgroup with
    only some threads active is `nonuniform-barrier`. Shared with the `ll` executor."""
    b = ch.prog.block
    if ch.mask is None:
        ch.lds.barrier(np.arange(ch.n // b))
        return
    m2 = ch.mask.reshape(-1, b)
    some, every = m2.any(axis=1), m2.all(axis=1)
    if ch.prog.check:
        ch.report("nonuniform-barrier", op, np.repeat(some & ~every, b) & ch.mask)
    ch.lds.barrier(np.nonzero(some)[0])


def no_effect(prog: Program, op: Op, ins, scopes):
    return lambda outs: None


def vector_extract(prog: Program, op: Op, ins, scopes):
    index = int(op.attrs["index"])
    return pure(lambda v: np.asarray(v)[..., index])(prog, op, ins, scopes)


def vector_insert(prog: Program, op: Op, ins, scopes):
    index = int(op.attrs["index"])

    def fn(v, x):
        v = np.asarray(v)
        x = np.asarray(x)
        lead = max(v.shape[:-1], x.shape, key=len)
        out = np.array(np.broadcast_to(v, lead + v.shape[-1:]))
        out[..., index] = x
        return out

    return pure(fn)(prog, op, ins, scopes)


def vector_from_elements(prog: Program, op: Op, ins, scopes):
    def fn(*xs):
        arrays = np.broadcast_arrays(*[np.asarray(x) for x in xs])
        return np.stack(arrays, axis=-1)

    return pure(fn)(prog, op, ins, scopes)


def vector_concat(prog: Program, op: Op, ins, scopes):
    def fn(a, b):
        a, b = np.asarray(a), np.asarray(b)
        if a.ndim == 2 and a.shape[:1] == b.shape[:1] and b.ndim == 2:  # per thread both
            return np.concatenate((a, b), axis=1)
        lead = max(a.shape[:-1], b.shape[:-1], key=len)
        return np.concatenate([np.broadcast_to(a, lead + a.shape[-1:]), np.broadcast_to(b, lead + b.shape[-1:])], -1)

    return pure(fn)(prog, op, ins, scopes)


def wg_uniform_violations(ch: Chunk, x) -> np.ndarray:
    """Per active thread: x differs from another active thread's of its workgroup."""
    if np.ndim(x) == 0:
        return np.zeros(ch.n, dtype=bool)
    b = ch.prog.block
    x2 = np.asarray(x).reshape(-1, b)
    m2 = np.ones_like(x2, dtype=bool) if ch.mask is None else ch.mask.reshape(-1, b)
    big = np.iinfo(np.int64).max
    lo = np.where(m2, x2, big).min(axis=1)
    hi = np.where(m2, x2, -big).max(axis=1)
    return np.repeat(lo != hi, b) & m2.reshape(-1)


def scf_for(prog: Program, op: Op, ins, scopes):
    iv_name = op.attrs["iv"]
    carried_names = [a["name"] for a in op.attrs["iter_args"]]
    pre = {iv_name: prog.new_slot(None, "i32", -1)}
    for arg in op.attrs["iter_args"]:
        pre[arg["name"]] = prog.new_slot(None, arg["type"], -1)
    prog.loop_depth += 1
    body = prog.compile_region(op.regions[0], scopes, pre)
    prog.loop_depth -= 1
    yield_op = op.regions[0].ops[-1] if op.regions[0].ops else None
    if yield_op is None or yield_op.name != "scf.yield":
        raise ExecError(f"{op.where()}: the loop body does not end with scf.yield")
    iv_slot = pre[iv_name]
    carried_slots = [pre[name] for name in carried_names]

    def bind(outs):
        def step(ch: Chunk) -> None:
            env = ch.env
            lb, ub, stp = env[ins[0]], env[ins[1]], env[ins[2]]
            carried = [env[i] for i in ins[3:]]
            if prog.check:
                for bound in (lb, ub, stp):
                    ch.report("nonuniform-loop", op, wg_uniform_violations(ch, bound))
            outer = ch.mask
            if np.any(np.asarray(stp) <= 0):
                raise ExecError(f"{op.where()}: a step <= 0")
            uniform = np.ndim(lb) == 0 and np.ndim(ub) == 0 and np.ndim(stp) == 0
            iv = np.asarray(lb, dtype=np.int32) if uniform else full(lb, ch.n).astype(np.int32)
            while True:
                if uniform:
                    if not iv < ub:
                        break
                    active = outer
                else:
                    active = iv < ub
                    if outer is not None:
                        active &= outer
                    if not active.any():
                        break
                ch.set_mask(active)
                env[iv_slot] = iv
                for slot, value in zip(carried_slots, carried):
                    env[slot] = value
                prog.run_region(ch, body)
                new = ch.yielded
                if ch.mask is None:
                    carried = new
                else:
                    m = ch.mask
                    carried = [np.where(m[:, None] if np.ndim(n) == 2 else m, n, c) for n, c in zip(new, carried)]
                iv = iv + stp
            ch.set_mask(outer)
            for slot, value in zip(outs, carried):
                env[slot] = value

        return step

    return bind


def scf_yield(prog: Program, op: Op, ins, scopes):
    def run(ch: Chunk) -> None:
        ch.yielded = [ch.env[i] for i in ins]

    return effect(run)


def scf_if(prog: Program, op: Op, ins, scopes):
    then = prog.compile_region(op.regions[0], scopes)

    def run(ch: Chunk) -> None:
        cond = full(ch.env[ins[0]], ch.n)
        outer = ch.mask
        inner = cond if outer is None else cond & outer
        if not inner.any():
            return
        ch.set_mask(inner.copy())
        prog.run_region(ch, then)
        ch.set_mask(outer)

    return effect(run)


OPS: dict[str, Callable] = {
    "arith.constant": constant,
    "arith.constant_vec": constant,
    "arith.add": pure(np.add),
    "arith.sub": pure(np.subtract),
    "arith.mul": pure(np.multiply),
    "arith.div": int_div,
    "arith.mod": int_div,
    "arith.min": pure(np.minimum),
    "arith.max": pure(np.maximum),
    "arith.and": pure(np.bitwise_and),
    "arith.or": pure(np.bitwise_or),
    "arith.cmp": cmp,
    "arith.select": select,
    "arith.fadd": pure(np.add),
    "arith.fmul": pure(np.multiply),
    "arith.fmax": pure(np.fmax),
    "arith.fmin": pure(np.fmin),
    "arith.fptrunc": fptrunc,
    "arith.bitcast": bitcast,
    "gpu.thread_id": thread_value("tid"),
    "gpu.block_id": thread_value("bid"),
    "gpu.lane_id": thread_value("lane"),
    "gpu.readfirstlane": readfirstlane,
    "tile.make_buffer_rsrc": make_rsrc,
    "tile.buffer_load": buffer_load,
    "tile.buffer_store": buffer_store,
    "tile.global_atomic_fadd": atomic_fadd,
    "tile.smem_alloc": smem_alloc,
    "tile.smem_load": smem_load,
    "tile.smem_store": smem_store,
    "tile.smem_addr": smem_addr,
    "tile.ds_read_tr16_b64": transpose_read,
    "tile.ds_read_tr16_b128": transpose_read,
    "tile.async_buffer_load_lds": async_load,
    "tile.s_waitcnt": waitcnt,
    "tile.sync": barrier,
    "tile.sync_lds_only": barrier,
    "vector.extract": vector_extract,
    "vector.insert": vector_insert,
    "vector.from_elements": vector_from_elements,
    "vector.concat": vector_concat,
    "tile.mma": mma_op,
    "tile.sched_group_barrier": no_effect,
    "tile.sched_barrier": no_effect,
    "tile.s_setprio": no_effect,
    "scf.for": scf_for,
    "scf.yield": scf_yield,
    "scf.if": scf_if,
    "cf.return": no_effect,
}


def launch_grid(kernel: Kernel, split_degree: Optional[int]) -> tuple[int, int, int]:
    grid = kernel.attrs.get("grid")
    if not isinstance(grid, list) or len(grid) != 3:
        raise ExecError("the kernel has no grid attr (docs/ir.md §3)")
    x, y, z = (int(v) for v in grid)
    if kernel.attrs.get("split_k_runtime") is True:
        if not split_degree:
            raise ExecError("the kernel's split-K degree is a runtime value: give split_degree")
        z *= split_degree
    return x, y, z


def run_launch(prog, total: int, chunk_threads: int, run_chunk: Callable[[Chunk], None]) -> tuple[int, int, int]:
    """The launch's `total` workgroups, a chunk of them at a time (about chunk_threads threads),
    each through run_chunk, then the async copies it left unwaited landed and logged; (ops,
    thread ops, chunks). `prog` is either executor's program (the IR's or the ll's)."""
    per_chunk = max(1, chunk_threads // prog.block)
    ops = thread_ops = chunks = 0
    for first in range(0, total, per_chunk):
        ch = Chunk(prog, first, min(per_chunk, total - first))
        run_chunk(ch)
        if ch.queue:
            prog.log.add(
                "async-unwaited", ch.queue[0].where, int(sum(e.active.sum() for e in ch.queue)), ch.block_of(0)
            )
            ch.set_mask(None)
            land(ch, None, 0)
        ops += ch.ops
        thread_ops += ch.thread_ops
        chunks += 1
    return ops, thread_ops, chunks


def run_kernel(
    ir: Union[str, Kernel],
    buffers: Mapping[str, np.ndarray],
    scalars: Optional[Mapping[str, int]] = None,
    *,
    split_degree: Optional[int] = None,
    chunk_threads: int = DEFAULT_CHUNK_THREADS,
    check_hazards: bool = True,
    on_mma: Optional[MmaObserver] = None,
    tracer: Optional[Tracer] = None,
) -> RunResult:
    """Runs the kernel (IR text or a read kernel) over its whole grid.

    buffers: an array per pointer param (by name without %), whose bytes are the memory;
    scalars: the i32 params (a `<name>_bytes` param defaults to that buffer's size);
    split_degree: the runtime split-K degree of a `split_k_runtime` kernel; on_mma: see
    MmaObserver; tracer: see Tracer. The result holds
    every buffer after the run (same dtype and shape), the hazards and the stats."""
    with gc_paused():
        start = time.perf_counter()
        kernel = read_ir(ir) if isinstance(ir, str) else ir
        mems: dict[str, Buffer] = {}
        values: dict[str, int] = dict(scalars or {})
        for p in kernel.params:
            t = parse_type(p.value.type)
            name = p.value.name[1:]
            if t.kind == "ptr" and name in buffers:
                atomic_only = p.attrs.get("readonly") is True
                mems[name] = Buffer(name, np.asarray(buffers[name]), t.elem, check_hazards and not atomic_only)
        for name, buf in mems.items():
            values.setdefault(f"{name}_bytes", buf.size)
        grid = launch_grid(kernel, split_degree)
        prog = Program(kernel, mems, values, grid, check_hazards)
        prog.on_mma = on_mma
        prog.tracer = tracer
        total = grid[0] * grid[1] * grid[2]
        ops, thread_ops, chunks = run_launch(prog, total, chunk_threads, lambda ch: prog.run_region(ch, prog.entry))
        stats = Stats(total, total * prog.block, chunks, ops, thread_ops, time.perf_counter() - start)
        return RunResult({name: buf.result() for name, buf in mems.items()}, prog.log.hazards(), stats)
