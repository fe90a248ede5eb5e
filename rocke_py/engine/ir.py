"""The kernel IR: types, values, ops, regions, kernels, and the builder that numbers values.

Twin of rocke_c/src/ir.c; the ops and their semantics are docs/ir.md §4. Types are their
canonical name strings. The builder advances one counter per kernel on every result, so the
order of builder calls is the order of the names (docs/ir.md §2)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Callable, Optional, Union

from . import ops
from .ops import CODES, OPS
from .result import EngineFailure

NAMES = tuple(info.name for info in OPS)  # by op code: the builder's hot path reads these
HINTS = tuple(info.hint for info in OPS)
new_object = object.__new__  # an instance of a __slots__ class, its slots set by the caller

AttrValue = Union[bool, int, float, str, list, dict]

SCALARS = ("i1", "i32", "i64", "f16", "bf16", "f32")
SCALAR_BITS = {"i1": 1, "i32": 32, "i64": 64, "f16": 16, "bf16": 16, "f32": 32}


# ---- types (docs/ir.md §1) ----

# The type functions are pure and every pass calls them per op on the few types a kernel
# uses: cached (typed, so 1 and True are different keys; an exception is never cached).
cached = functools.lru_cache(maxsize=1024, typed=True)


@cached
def vec(elem: str, n: int) -> str:
    return f"vec<{elem}x{n}>"


def vec_or_scalar(elem: str, n: int) -> str:
    return elem if n == 1 else vec(elem, n)


def ptr(elem: str) -> str:
    return f"ptr<{elem},global>"


def smem(elem: str, rows: int, cols: int) -> str:
    return f"smem<{elem}, [{rows}x{cols}]>"


@cached
def is_vec(t: str) -> bool:
    return t.startswith("vec<")


@cached
def vec_elem(t: str) -> str:
    """The element type of a vec, or the type itself for a scalar."""
    return t[4 : t.rindex("x")] if is_vec(t) else t


@cached
def vec_len(t: str) -> int:
    return int(t[t.rindex("x") + 1 : -1]) if is_vec(t) else 1


def is_ptr(t: str) -> bool:
    return t.startswith("ptr<")


def ptr_elem(t: str) -> str:
    return t[4 : t.index(",")]


def is_smem(t: str) -> bool:
    return t.startswith("smem<")


@cached
def smem_elem(t: str) -> str:
    return t[5 : t.index(",")]


@cached
def smem_shape(t: str) -> tuple[int, int]:
    rows, cols = t[t.index("[") + 1 : t.index("]")].split("x")
    return int(rows), int(cols)


@cached
def type_bits(t: str) -> int:
    return SCALAR_BITS[vec_elem(t)] * vec_len(t)


@cached
def elem_bytes_of(t: str) -> int:
    return SCALAR_BITS[vec_elem(t)] // 8


# ---- the IR objects ----


class Value:
    """An SSA value: its name and type, never reassigned. A plain __slots__ class rather than
    a frozen dataclass or a NamedTuple: a kernel makes one per result, and every pass reads
    the two fields of every operand, which CPython reads fastest from slots. Equal (and
    hashed) by name and type, as the tuple it once was."""

    __slots__ = ("name", "type")

    def __init__(self, name: str, type: str) -> None:
        self.name = name
        self.type = type

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Value):
            return NotImplemented
        return self.name == other.name and self.type == other.type

    def __hash__(self) -> int:
        return hash((self.name, self.type))

    def __repr__(self) -> str:
        return f"Value(name={self.name!r}, type={self.type!r})"


@dataclass
class Region:
    name: str
    ops: list["Op"] = field(default_factory=list)


class Op:
    """One op: name, operands, results, attrs and regions, and its code (the row of ops.OPS,
    ops.UNKNOWN for a name outside the table). A plain __slots__ class, not a dataclass: a
    kernel makes one per op, and the builder passes the code it already knows."""

    __slots__ = ("name", "operands", "results", "attrs", "regions", "code")

    def __init__(
        self,
        name: str,
        operands: list[Value],
        results: list[Value],
        attrs: dict[str, AttrValue],
        regions: Optional[list[Region]] = None,
        code: Optional[int] = None,
    ) -> None:
        self.name = name
        self.operands = operands
        self.results = results
        self.attrs = attrs
        self.regions: list[Region] = [] if regions is None else regions
        self.code: int = CODES.get(name, ops.UNKNOWN) if code is None else code

    def __repr__(self) -> str:
        return f"Op({self.name!r}, {self.operands!r}, {self.results!r}, {self.attrs!r}, {self.regions!r})"


@dataclass(frozen=True)
class Param:
    value: Value
    attrs: dict[str, AttrValue]


@dataclass
class Kernel:
    name: str
    attrs: dict[str, AttrValue]
    params: list[Param]
    entry: Region


@dataclass
class ForLoop:
    """An open scf.for: its op, induction variable and carried values (visible in the body)."""

    op: Op
    iv: Value
    args: list[Value]


def fail(message: str) -> EngineFailure:
    return EngineFailure(f"builder: {message}")


# ---- the builder ----


def binary_method(code: int) -> Callable[[Builder, Value, Value], Value]:
    """The Builder method of a binary op of the table (add, sub, ...): binary_of with its code
    bound (C: RK_B_BINARY_OPS, ir.h)."""

    def method(self: Builder, a: Value, b: Value) -> Value:
        return self.binary_of(code, a, b)

    return method


class Builder:
    def __init__(self, name: str, attrs: dict[str, AttrValue]) -> None:
        self.kernel = Kernel(name, dict(attrs), [], Region("entry"))
        self.counter = 0
        self.regions: list[Region] = [self.kernel.entry]
        # The constants visible in the innermost open region: a constant is created once and
        # reused in the regions nested below it (docs/ir.md §2). One dict for every open region
        # (a constant is never made again below the region that has it); each open region keeps
        # the keys it added, dropped again when it closes.
        self.constants: dict[tuple[str, object], Value] = {}
        self.constant_frames: list[list[tuple[str, object]]] = [[]]
        # The hard size limit: the op past it fails the build (None: unlimited; the kernel
        # builder sets its documented bound, docs/kernels.md §9).
        self.op_limit: Optional[int] = None
        self.num_ops = 0

    def push_region(self, region: Region) -> None:
        self.regions.append(region)
        self.constant_frames.append([])

    def pop_region(self) -> None:
        self.regions.pop()
        constants = self.constants
        for key in self.constant_frames.pop():
            del constants[key]

    def constant(self, ity: str, value: object) -> Value:
        key = (ity, value)
        result = self.constants.get(key)
        if result is not None:
            return result
        result = self.result_op(ops.CONSTANT, [], ity, {"ity": ity, "value": value})
        self.constants[key] = result
        self.constant_frames[-1].append(key)
        return result

    # -- plumbing --

    def param(self, name: str, type_: str, attrs: dict[str, AttrValue] | None = None) -> Value:
        value = Value(f"%{name}", type_)
        self.kernel.params.append(Param(value, dict(attrs or {})))
        return value

    def new_value(self, hint: str, type_: str) -> Value:
        self.counter += 1
        return Value(f"%{hint}{self.counter}", type_)

    def append(self, op: Op) -> None:
        """Every op enters the innermost open region here, counted against op_limit."""
        self.num_ops += 1
        if self.op_limit is not None and self.num_ops > self.op_limit:
            raise fail(f"the kernel exceeds {self.op_limit} IR ops")
        self.regions[-1].ops.append(op)

    def op(
        self,
        name: str,
        operands: list[Value],
        hint: str | None,
        type_: str | None,
        attrs: dict[str, AttrValue] | None = None,
    ) -> Value | None:
        """Any op by name (the scripts' generic op); the table's ops take result_op and plain_op."""
        result = None
        if hint is not None and type_ is not None:
            result = self.new_value(hint, type_)
        op = Op(name, list(operands), [result] if result else [], dict(attrs) if attrs else {})
        self.append(op)
        return result

    def value_op(
        self, name: str, operands: list[Value], hint: str, type_: str, attrs: dict[str, AttrValue] | None = None
    ) -> Value:
        result = self.op(name, operands, hint, type_, attrs)
        assert result is not None
        return result

    def result_op(
        self, code: int, operands: list[Value], type_: str, attrs: dict[str, AttrValue] | None = None
    ) -> Value:
        """An op of the table that gives one result, named by the op's hint. The builder's hot
        path: new_value and append inlined, and the operand list and attrs (fresh from the
        caller) taken as they are."""
        self.counter += 1
        # Value(...) and Op(...) without their __init__ calls: the slots set here directly
        result = new_object(Value)
        result.name = f"%{HINTS[code]}{self.counter}"
        result.type = type_
        self.num_ops += 1
        if self.op_limit is not None and self.num_ops > self.op_limit:
            raise fail(f"the kernel exceeds {self.op_limit} IR ops")
        op = new_object(Op)
        op.name = NAMES[code]
        op.operands = operands
        op.results = [result]
        op.attrs = attrs if attrs else {}
        op.regions = []
        op.code = code
        self.regions[-1].ops.append(op)
        return result

    def plain_op(self, code: int, operands: list[Value], attrs: dict[str, AttrValue] | None = None) -> None:
        """An op of the table that gives no result."""
        self.append(Op(NAMES[code], operands, [], attrs if attrs else {}, [], code))

    # -- arith (docs/ir.md §4.1) --

    def const_i32(self, value: int) -> Value:
        return self.constant("i32", value)

    def const_i1(self, value: bool) -> Value:
        return self.constant("i1", 1 if value else 0)

    def const_f32(self, value: int) -> Value:
        return self.constant("f32", float(value))

    def zeros(self, type_: str) -> Value:
        return self.result_op(ops.CONSTANT_VEC, [], type_, {"ity": type_, "value": 0})

    def binary(self, name: str, hint: str, a: Value, b: Value) -> Value:
        if a.type != b.type:
            raise fail(f"{name} of {a.type} and {b.type}")
        result = self.op(name, [a, b], hint, a.type)
        assert result is not None
        return result

    def binary_of(self, code: int, a: Value, b: Value) -> Value:
        """binary() of a table op (the common case: the op and its hint known by code)."""
        if a.type != b.type:
            raise fail(f"{NAMES[code]} of {a.type} and {b.type}")
        return self.result_op(code, [a, b], a.type)

    add = binary_method(ops.ADD)
    sub = binary_method(ops.SUB)
    mul = binary_method(ops.MUL)
    div = binary_method(ops.DIV)
    mod = binary_method(ops.MOD)
    min = binary_method(ops.MIN)
    max = binary_method(ops.MAX)
    and_ = binary_method(ops.AND)
    or_ = binary_method(ops.OR)

    def cmp(self, pred: str, a: Value, b: Value) -> Value:
        if a.type != b.type:
            raise fail(f"arith.cmp of {a.type} and {b.type}")
        return self.result_op(ops.CMP, [a, b], "i1", {"pred": pred})

    def select(self, c: Value, a: Value, b: Value) -> Value:
        if a.type != b.type or c.type != "i1":
            raise fail(f"arith.select of {c.type}, {a.type}, {b.type}")
        return self.result_op(ops.SELECT, [c, a, b], a.type)

    fadd = binary_method(ops.FADD)
    fmul = binary_method(ops.FMUL)
    fmax = binary_method(ops.FMAX)
    fmin = binary_method(ops.FMIN)

    def fptrunc(self, a: Value, to: str) -> Value:
        return self.result_op(ops.FPTRUNC, [a], to, {"to": to})

    def bitcast(self, a: Value, to: str) -> Value:
        return self.result_op(ops.BITCAST, [a], to, {"to": to})

    # -- gpu (§4.2) --

    def thread_id(self) -> Value:
        return self.result_op(ops.THREAD_ID, [], "i32", {"dim": 0})

    def block_id(self, dim: int) -> Value:
        return self.result_op(ops.BLOCK_ID, [], "i32", {"dim": dim})

    def lane_id(self) -> Value:
        return self.result_op(ops.LANE_ID, [], "i32")

    def readfirstlane(self, a: Value) -> Value:
        return self.result_op(ops.READFIRSTLANE, [a], "i32")

    # -- memory (§4.3) --

    def make_buffer_rsrc(self, p: Value, nbytes: Value) -> Value:
        return self.result_op(ops.MAKE_BUFFER_RSRC, [p, nbytes], "rsrc")

    def buffer_load(self, r: Value, off: Value, elem: str, n: int) -> Value:
        return self.result_op(ops.BUFFER_LOAD, [r, off], vec_or_scalar(elem, n), {"elem": elem, "n": n})

    def buffer_store(self, r: Value, off: Value, v: Value) -> None:
        self.plain_op(ops.BUFFER_STORE, [r, off, v])

    def global_atomic_fadd(self, p: Value, idx: Value, v: Value) -> None:
        self.plain_op(ops.GLOBAL_ATOMIC_FADD, [p, idx, v])

    def smem_alloc(self, type_: str, exclusive: bool = False) -> Value:
        attrs: dict[str, AttrValue] = {"type": type_}
        if exclusive:
            attrs["exclusive"] = True
        return self.result_op(ops.SMEM_ALLOC, [], type_, attrs)

    def smem_load(self, s: Value, row: Value, col: Value, n: int, align: int) -> Value:
        t = vec_or_scalar(smem_elem(s.type), n)
        return self.result_op(ops.SMEM_LOAD, [s, row, col], t, {"n": n, "align": align})

    def smem_store(self, s: Value, row: Value, col: Value, v: Value, align: int) -> None:
        self.plain_op(ops.SMEM_STORE, [s, row, col, v], {"align": align})

    def smem_addr(self, s: Value) -> Value:
        return self.result_op(ops.SMEM_ADDR, [s], "i32")

    def transpose_read(self, code: int, width: int, s: Value, row: Value, col: Value) -> Value:
        return self.result_op(code, [s, row, col], vec(smem_elem(s.type), width))

    def ds_read_tr16_b64(self, s: Value, row: Value, col: Value) -> Value:
        return self.transpose_read(ops.DS_READ_TR16_B64, 4, s, row, col)

    def ds_read_tr16_b128(self, s: Value, row: Value, col: Value) -> Value:
        return self.transpose_read(ops.DS_READ_TR16_B128, 8, s, row, col)

    def async_buffer_load_lds(self, r: Value, lds_addr: Value, off: Value, dwords: int, aux: int) -> None:
        self.plain_op(ops.ASYNC_BUFFER_LOAD_LDS, [r, lds_addr, off], {"dwords": dwords, "aux": aux})

    def s_waitcnt_vmcnt(self, vmcnt: int) -> None:
        self.plain_op(ops.S_WAITCNT, [], {"vmcnt": vmcnt})

    def sync(self) -> None:
        self.plain_op(ops.SYNC, [])

    def sync_lds_only(self) -> None:
        self.plain_op(ops.SYNC_LDS_ONLY, [])

    # -- vector (§4.4) --

    def extract(self, v: Value, index: int) -> Value:
        return self.result_op(ops.EXTRACT, [v], vec_elem(v.type), {"index": index})

    def insert(self, v: Value, x: Value, index: int) -> Value:
        return self.result_op(ops.INSERT, [v, x], v.type, {"index": index})

    def from_elements(self, xs: list[Value]) -> Value:
        return self.result_op(ops.FROM_ELEMENTS, list(xs), vec(xs[0].type, len(xs)))

    def concat(self, a: Value, b: Value) -> Value:
        t = vec(vec_elem(a.type), vec_len(a.type) + vec_len(b.type))
        return self.result_op(ops.CONCAT, [a, b], t)

    # -- mma (§4.5) --

    def mma(self, op_id: str, a: Value, b: Value, c: Value) -> Value:
        return self.result_op(ops.MMA, [a, b, c], c.type, {"op_id": op_id})

    # -- schedule hints (§4.6) --

    def sched_group_barrier(self, mask: int, size: int, sync_id: int) -> None:
        self.plain_op(ops.SCHED_GROUP_BARRIER, [], {"mask": mask, "size": size, "sync_id": sync_id})

    def sched_barrier(self, mask: int) -> None:
        self.plain_op(ops.SCHED_BARRIER, [], {"mask": mask})

    def s_setprio(self, prio: int) -> None:
        self.plain_op(ops.S_SETPRIO, [], {"prio": prio})

    # -- control (§4.7) --

    def for_begin(
        self, lb: Value, ub: Value, step: Value, iv: str, carried: list[tuple[str, Value]], unroll: bool = False
    ) -> ForLoop:
        """Opens an scf.for; its results are numbered now, before anything in the body."""
        results = [self.new_value(OPS[ops.FOR].hint, init.type) for _, init in carried]
        attrs: dict[str, AttrValue] = {
            "iv": f"%{iv}",
            "iv_type": "i32",
            "iter_args": [{"name": f"%{name}", "type": init.type} for name, init in carried],
        }
        if unroll:
            attrs["unroll"] = True
        body = Region(OPS[ops.FOR].region)
        op = Op(OPS[ops.FOR].name, [lb, ub, step] + [init for _, init in carried], results, attrs, [body])
        self.append(op)
        self.push_region(body)
        return ForLoop(op, Value(f"%{iv}", "i32"), [Value(f"%{name}", init.type) for name, init in carried])

    def for_end(self, loop: ForLoop, yielded: list[Value]) -> list[Value]:
        if self.regions[-1] is not loop.op.regions[0]:
            raise fail("for_end does not close the innermost region")
        self.plain_op(ops.YIELD, list(yielded), {"num": len(yielded)})
        self.pop_region()
        return list(loop.op.results)

    def if_begin(self, cond: Value) -> Op:
        then = Region(OPS[ops.IF].region)
        op = Op(OPS[ops.IF].name, [cond], [], {}, [then])
        self.append(op)
        self.push_region(then)
        return op

    def if_end(self, op: Op) -> None:
        if self.regions[-1] is not op.regions[0]:
            raise fail("if_end does not close the innermost region")
        self.pop_region()

    def ret(self) -> Kernel:
        if len(self.regions) != 1:
            raise fail("ret inside an open region")
        self.plain_op(ops.RETURN, [])
        return self.kernel
