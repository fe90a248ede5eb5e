"""The IR verifier (docs/ir.md §6): scopes, types, attrs and region structure.

Twin of rocke_c/src/verify.c. A kernel that fails is an engine bug: verify_kernel returns the
first failure's message (None when the kernel is well formed) and the caller raises."""

from __future__ import annotations

from typing import Callable, Optional

from . import ops
from .ir import (
    SCALARS,
    Kernel,
    Op,
    Region,
    elem_bytes_of,
    is_ptr,
    is_smem,
    is_vec,
    smem_elem,
    type_bits,
    vec,
    vec_elem,
    vec_len,
)
from .mma_atoms import atom_types
from .ops import OPS

INT_TYPES = ("i32", "i64")
FLOAT_TYPES = ("f32",)


def valid_type(t: str) -> bool:
    if t in SCALARS or t == "rsrc":
        return True
    try:  # a malformed vec/ptr/smem name makes the slicing raise: the C twin reports it as invalid
        if is_vec(t):
            return vec_elem(t) in SCALARS and vec_len(t) >= 1
        if is_ptr(t):
            return t.endswith(",global>") and t[4 : t.index(",")] in SCALARS
        if is_smem(t):
            return smem_elem(t) in SCALARS
    except ValueError:
        return False
    return False


def need(cond: bool, message: str) -> Optional[str]:
    return None if cond else message


def arity(op: Op) -> Optional[str]:
    """The operand and result counts of the op's row (ops.OPS), checked by run before the op's
    rule; a row of any number of operands (-1) leaves its counts to the rule."""
    info = OPS[op.code]
    if info.operands >= 0 and (len(op.operands) != info.operands or len(op.results) != info.results):
        return f"{op.name} takes {info.operands} operands and gives {info.results} results"
    return None


def check_attrs(op: Op, *keys: str) -> Optional[str]:
    for key in keys:
        if key not in op.attrs:
            return f"{op.name} needs attr {key}"
    return None


# ---- one check per op kind; each returns the failure message or None, and runs after arity ----


def check_constant(op: Op) -> Optional[str]:
    bad = check_attrs(op, "ity", "value")
    if bad:
        return bad
    t = op.results[0].type
    if op.attrs["ity"] != t or t not in ("i1", "i32", "i64", "f32"):
        return f"arith.constant of type {t}"
    want_float = t == "f32"
    return need(isinstance(op.attrs["value"], float) == want_float, "arith.constant value has the wrong tag")


def check_constant_vec(op: Op) -> Optional[str]:
    bad = check_attrs(op, "ity", "value")
    return bad or need(
        is_vec(op.results[0].type) and op.attrs["ity"] == op.results[0].type, "arith.constant_vec needs a vec type"
    )


def same_type_binary(types: tuple[str, ...]) -> Callable[[Op], Optional[str]]:
    def check(op: Op) -> Optional[str]:
        a, b = op.operands
        r = op.results[0]
        if a.type == b.type == r.type and a.type in types:
            return None
        return f"{op.name} on {a.type}, {b.type} -> {r.type}"  # formatted only on failure

    return check


def check_cmp(op: Op) -> Optional[str]:
    bad = check_attrs(op, "pred")
    if bad:
        return bad
    a, b = op.operands
    return need(
        a.type == b.type == "i32" and op.results[0].type == "i1" and op.attrs["pred"] in ops.CMP_PREDS,
        "arith.cmp needs two i32 operands, a known pred and an i1 result",
    )


def check_select(op: Op) -> Optional[str]:
    c, a, b = op.operands
    return need(c.type == "i1" and a.type == b.type == op.results[0].type, "arith.select types")


def check_fptrunc(op: Op) -> Optional[str]:
    bad = check_attrs(op, "to")
    if bad:
        return bad
    ok = op.operands[0].type == "f32" and op.results[0].type in ("f16", "bf16")
    return need(ok and op.attrs["to"] == op.results[0].type, "arith.fptrunc is f32 -> f16|bf16")


def check_bitcast(op: Op) -> Optional[str]:
    bad = check_attrs(op, "to")
    if bad:
        return bad
    a, r = op.operands[0], op.results[0]
    numeric = vec_elem(a.type) in SCALARS and vec_elem(r.type) in SCALARS  # type_bits needs scalar elements
    return need(op.attrs["to"] == r.type and numeric and type_bits(a.type) == type_bits(r.type), "arith.bitcast widths")


def check_i32_source(op: Op) -> Optional[str]:
    return None if op.results[0].type == "i32" else f"{op.name} gives i32"


def check_block_id(op: Op) -> Optional[str]:
    bad = check_i32_source(op) or check_attrs(op, "dim")
    return bad or need(op.attrs["dim"] in (0, 1, 2), "gpu.block_id dim")


def check_thread_id(op: Op) -> Optional[str]:
    return check_i32_source(op) or check_attrs(op, "dim")


def check_readfirstlane(op: Op) -> Optional[str]:
    return need(op.operands[0].type == op.results[0].type == "i32", "gpu.readfirstlane is i32")


def check_make_rsrc(op: Op) -> Optional[str]:
    return need(
        is_ptr(op.operands[0].type) and op.operands[1].type == "i32" and op.results[0].type == "rsrc",
        "tile.make_buffer_rsrc(ptr, i32) -> rsrc",
    )


def check_buffer_load(op: Op) -> Optional[str]:
    bad = check_attrs(op, "elem", "n")
    if bad:
        return bad
    r, off = op.operands
    t = op.results[0].type
    ok = (
        r.type == "rsrc"
        and off.type == "i32"
        and vec_elem(t) == op.attrs["elem"]
        and vec_len(t) == op.attrs["n"]
        and vec_elem(t) in SCALARS
        and type_bits(t) in (16, 32, 64, 128)
    )
    return need(ok, "tile.buffer_load(rsrc, i32) of 2, 4, 8 or 16 bytes")


def check_buffer_store(op: Op) -> Optional[str]:
    r, off, v = op.operands
    return need(
        r.type == "rsrc"
        and off.type == "i32"
        and vec_elem(v.type) in SCALARS
        and type_bits(v.type) in (16, 32, 64, 128)
        and v.type != "i1",
        "tile.buffer_store(rsrc, i32, 2|4|8|16 bytes)",
    )


def check_atomic_fadd(op: Op) -> Optional[str]:
    p, idx, v = op.operands
    ok = (
        is_ptr(p.type)
        and idx.type == "i32"
        and vec_elem(v.type) == p.type[4 : p.type.index(",")]
        and v.type in ("f32", vec("f16", 2), vec("bf16", 2))
    )
    return need(ok, "tile.global_atomic_fadd(ptr<T>, i32, f32|vec<f16x2>|vec<bf16x2>)")


def check_smem_alloc(op: Op) -> Optional[str]:
    bad = check_attrs(op, "type")
    return bad or need(is_smem(op.results[0].type) and op.attrs["type"] == op.results[0].type, "tile.smem_alloc type")


def check_align(op: Op, t: str) -> Optional[str]:
    align = op.attrs.get("align")
    ok = isinstance(align, int) and align in (1, 2, 4, 8, 16) and align >= elem_bytes_of(t)
    return None if ok else f"{op.name} align must be a power of two in [element size, 16]"


def check_smem_load(op: Op) -> Optional[str]:
    bad = check_attrs(op, "n", "align")
    if bad:
        return bad
    s, row, col = op.operands
    t = op.results[0].type
    ok = (
        is_smem(s.type)
        and row.type == col.type == "i32"
        and vec_elem(t) == smem_elem(s.type)
        and vec_len(t) == op.attrs["n"]
    )
    return need(ok, "tile.smem_load(smem<T>, i32, i32) -> T|vec<TxN>") or check_align(op, t)


def check_smem_store(op: Op) -> Optional[str]:
    bad = check_attrs(op, "align")
    if bad:
        return bad
    s, row, col, v = op.operands
    ok = is_smem(s.type) and row.type == col.type == "i32" and vec_elem(v.type) == smem_elem(s.type)
    return need(ok, "tile.smem_store(smem<T>, i32, i32, T|vec<TxN>)") or check_align(op, v.type)


def counts_only(op: Op) -> Optional[str]:
    """The rule of an op whose row's counts (arity) say all there is to check."""
    return None


def check_smem_addr(op: Op) -> Optional[str]:
    return need(is_smem(op.operands[0].type) and op.results[0].type == "i32", "tile.smem_addr(smem) -> i32")


def transpose_read(width: int) -> Callable[[Op], Optional[str]]:
    def check(op: Op) -> Optional[str]:
        s, row, col = op.operands
        ok = (
            is_smem(s.type)
            and smem_elem(s.type) in ("f16", "bf16")
            and row.type == col.type == "i32"
            and op.results[0].type == vec(smem_elem(s.type), width)
        )
        return None if ok else f"{op.name}(smem<f16|bf16>, i32, i32) -> vec<Tx{width}>"

    return check


def check_async_load_lds(op: Op) -> Optional[str]:
    bad = check_attrs(op, "dwords", "aux")
    if bad:
        return bad
    r, addr, off = op.operands
    ok = r.type == "rsrc" and addr.type == off.type == "i32" and op.attrs["dwords"] in (1, 3, 4)
    return need(ok, "tile.async_buffer_load_lds(rsrc, i32, i32) with dwords 1, 3 or 4")


def check_waitcnt(op: Op) -> Optional[str]:
    return check_attrs(op, "vmcnt")


def check_extract(op: Op) -> Optional[str]:
    bad = check_attrs(op, "index")
    if bad:
        return bad
    v = op.operands[0]
    ok = is_vec(v.type) and op.results[0].type == vec_elem(v.type) and 0 <= op.attrs["index"] < vec_len(v.type)
    return need(ok, "vector.extract element type or index")


def check_insert(op: Op) -> Optional[str]:
    bad = check_attrs(op, "index")
    if bad:
        return bad
    v, x = op.operands
    ok = (
        is_vec(v.type)
        and x.type == vec_elem(v.type)
        and op.results[0].type == v.type
        and 0 <= op.attrs["index"] < vec_len(v.type)
    )
    return need(ok, "vector.insert types or index")


def check_from_elements(op: Op) -> Optional[str]:
    if len(op.results) != 1 or not op.operands:
        return "vector.from_elements takes operands and gives 1 result"
    t = op.operands[0].type
    ok = all(v.type == t for v in op.operands) and t in SCALARS and op.results[0].type == vec(t, len(op.operands))
    return need(ok, "vector.from_elements types")


def check_concat(op: Op) -> Optional[str]:
    a, b = op.operands
    ok = vec_elem(a.type) == vec_elem(b.type) and op.results[0].type == vec(
        vec_elem(a.type), vec_len(a.type) + vec_len(b.type)
    )
    return need(ok, "vector.concat types")


def check_mma(op: Op) -> Optional[str]:
    bad = check_attrs(op, "op_id")
    if bad:
        return bad
    types = atom_types(str(op.attrs["op_id"]))
    if types is None:
        return f"tile.mma: unknown op_id {op.attrs['op_id']}"
    got = (op.operands[0].type, op.operands[1].type, op.operands[2].type)
    if got == types and op.results[0].type == types[2]:
        return None
    return f"tile.mma {op.attrs['op_id']} operand types"


def check_sched_group_barrier(op: Op) -> Optional[str]:
    return check_attrs(op, "mask", "size", "sync_id")


def check_sched_barrier(op: Op) -> Optional[str]:
    return check_attrs(op, "mask")


def check_setprio(op: Op) -> Optional[str]:
    return check_attrs(op, "prio")


# The rule of each op, by its code; scf.for, scf.if and scf.yield are checked in verify_op
# (they need the scope).
# The same-type binaries and the types each takes (verify_region checks them inline).
BINARY_TYPES: dict[int, tuple[str, ...]] = {
    ops.ADD: INT_TYPES,
    ops.SUB: INT_TYPES,
    ops.MUL: INT_TYPES,
    ops.DIV: ("i32",),
    ops.MOD: ("i32",),
    ops.MIN: ("i32",),
    ops.MAX: ("i32",),
    ops.AND: ("i1", "i32"),
    ops.OR: ("i1", "i32"),
    ops.FADD: FLOAT_TYPES,
    ops.FMUL: FLOAT_TYPES,
    ops.FMAX: FLOAT_TYPES,
    ops.FMIN: FLOAT_TYPES,
}

CHECKS: dict[int, Callable[[Op], Optional[str]]] = {
    ops.CONSTANT: check_constant,
    ops.CONSTANT_VEC: check_constant_vec,
    **{code: same_type_binary(types) for code, types in BINARY_TYPES.items()},
    ops.CMP: check_cmp,
    ops.SELECT: check_select,
    ops.FPTRUNC: check_fptrunc,
    ops.BITCAST: check_bitcast,
    ops.THREAD_ID: check_thread_id,
    ops.BLOCK_ID: check_block_id,
    ops.LANE_ID: check_i32_source,
    ops.READFIRSTLANE: check_readfirstlane,
    ops.MAKE_BUFFER_RSRC: check_make_rsrc,
    ops.BUFFER_LOAD: check_buffer_load,
    ops.BUFFER_STORE: check_buffer_store,
    ops.GLOBAL_ATOMIC_FADD: check_atomic_fadd,
    ops.SMEM_ALLOC: check_smem_alloc,
    ops.SMEM_LOAD: check_smem_load,
    ops.SMEM_STORE: check_smem_store,
    ops.SMEM_ADDR: check_smem_addr,
    ops.DS_READ_TR16_B64: transpose_read(4),
    ops.DS_READ_TR16_B128: transpose_read(8),
    ops.ASYNC_BUFFER_LOAD_LDS: check_async_load_lds,
    ops.S_WAITCNT: check_waitcnt,
    ops.SYNC: counts_only,
    ops.SYNC_LDS_ONLY: counts_only,
    ops.EXTRACT: check_extract,
    ops.INSERT: check_insert,
    ops.FROM_ELEMENTS: check_from_elements,
    ops.CONCAT: check_concat,
    ops.MMA: check_mma,
    ops.SCHED_GROUP_BARRIER: check_sched_group_barrier,
    ops.SCHED_BARRIER: check_sched_barrier,
    ops.S_SETPRIO: check_setprio,
    ops.RETURN: counts_only,
}


# BINARY_TYPES and CHECKS as tuples indexed by op code (verify_region's per-op lookups): one
# entry per row of ops.OPS and a last None, the entry of ops.UNKNOWN (-1)
BINARY_TYPES_BY_CODE = tuple(BINARY_TYPES.get(code) for code in range(len(OPS))) + (None,)
CHECKS_BY_CODE = tuple(CHECKS.get(code) for code in range(len(OPS))) + (None,)
assert ops.UNKNOWN == -1


def run(check: Callable[[Op], Optional[str]], op: Op) -> Optional[str]:
    """The op's arity, then its rule (which may then take its operands and results apart)."""
    return arity(op) or check(op)


class Scope:
    """Every name defined so far -> its type while visible, None once out of scope. Names are
    unique in a kernel, so one dict holds them all (a name in it is defined, a name mapped to
    a type is visible); each open region keeps the names it added, hidden again at its exit."""

    def __init__(self) -> None:
        self.types: dict[str, Optional[str]] = {}
        self.frames: list[list[str]] = [[]]
        self.valid: set[str] = set()  # the types already found valid (a kernel uses few)

    def define(self, name: str, type_: str) -> Optional[str]:
        if name in self.types:
            return f"{name} is defined twice"
        if type_ not in self.valid:
            if not valid_type(type_):
                return f"{name} has an invalid type {type_}"
            self.valid.add(type_)
        self.types[name] = type_
        self.frames[-1].append(name)
        return None

    def lookup(self, name: str) -> Optional[str]:
        return self.types.get(name)

    def push(self) -> None:
        self.frames.append([])

    def pop(self) -> None:
        types = self.types
        for name in self.frames.pop():
            types[name] = None


def check_for(op: Op, scope: Scope, where: str) -> Optional[str]:
    if len(op.operands) < 3 or len(op.regions) != 1 or op.regions[0].name != OPS[ops.FOR].region:
        return "scf.for needs lb, ub, step and a @body region"
    bad = check_attrs(op, "iv", "iv_type", "iter_args")
    if bad:
        return bad
    if any(v.type != "i32" for v in op.operands[:3]) or op.attrs["iv_type"] != "i32":
        return "scf.for bounds and iv must be i32"
    iter_args = op.attrs["iter_args"]
    inits = op.operands[3:]
    if not isinstance(iter_args, list) or len(iter_args) != len(inits) or len(op.results) != len(inits):
        return "scf.for iter_args, inits and results differ in number"
    for arg, init, res in zip(iter_args, inits, op.results):
        if not isinstance(arg, dict) or arg.get("type") != init.type or res.type != init.type:
            return "scf.for iter_arg, init and result types differ"
    body = op.regions[0]
    if not body.ops or body.ops[-1].code != ops.YIELD:
        return "scf.for body must end with scf.yield"
    yielded = body.ops[-1].operands
    if len(yielded) != len(inits) or any(y.type != i.type for y, i in zip(yielded, inits)):
        return "scf.yield does not match the iter_args"
    scope.push()
    bad = scope.define(str(op.attrs["iv"]), "i32")
    for arg in iter_args:
        bad = bad or scope.define(str(arg["name"]), str(arg["type"]))
    bad = bad or verify_region(body, scope, f"{where}.body", allow_yield=True)
    scope.pop()
    return bad


def check_if(op: Op, scope: Scope, where: str) -> Optional[str]:
    if len(op.operands) != 1 or op.operands[0].type != "i1" or op.results:
        return "scf.if takes one i1 condition and gives no results"
    if len(op.regions) != 1 or op.regions[0].name != OPS[ops.IF].region:
        return "scf.if needs a @then region"
    scope.push()
    bad = verify_region(op.regions[0], scope, f"{where}.then", allow_yield=False)
    scope.pop()
    return bad


def verify_op(op: Op, scope: Scope, where: str, last_in_for: bool) -> Optional[str]:
    types = scope.types
    for v in op.operands:
        t = types.get(v.name)
        if t != v.type:
            return f"{v.name} is not visible" if t is None else f"{v.name} is used as {v.type} but defined as {t}"
    code = op.code
    check = CHECKS.get(code)
    if check is not None:
        bad = f"{op.name} has no regions" if op.regions else run(check, op)
    elif code == ops.FOR:
        bad = check_for(op, scope, where)
    elif code == ops.IF:
        bad = check_if(op, scope, where)
    elif code == ops.YIELD:
        bad = need(last_in_for, "scf.yield outside the end of a for body") or check_attrs(op, "num")
        bad = bad or need(op.attrs.get("num") == len(op.operands) and not op.results, "scf.yield num")
    else:
        bad = f"unknown op {op.name}"
    if bad:
        return bad
    results = op.results
    if len(results) == 1:
        # Scope.define, inlined for the common case: one new name of a type seen before
        r = results[0]
        name, type_ = r.name, r.type
        if name not in types and type_ in scope.valid:
            types[name] = type_
            scope.frames[-1].append(name)
            return None
    for r in results:
        bad = scope.define(r.name, r.type)
        if bad:
            return bad
    return None


def verify_region(region: Region, scope: Scope, where: str, allow_yield: bool) -> Optional[str]:
    last_index = len(region.ops) - 1 if allow_yield else -1
    # verify_op, inlined with the scope in locals for an op of a CHECKS rule without regions
    # and with at most one result (all but scf.*), and its rule inlined for a same-type binary
    # (over half of a kernel's ops): an op that passes is defined here; any other op, or one
    # that fails, goes through verify_op (the checks are pure: it finds the same first failure)
    types, valid, frame = scope.types, scope.valid, scope.frames[-1]
    for index, op in enumerate(region.ops):
        code = op.code
        operands = op.operands
        results = op.results
        allowed = BINARY_TYPES_BY_CODE[code]
        if allowed is not None:
            if len(operands) == 2 and len(results) == 1 and not op.regions:
                a, b = operands
                r = results[0]
                name, t = r.name, r.type
                if (
                    t in allowed
                    and a.type == t
                    and b.type == t
                    and types.get(a.name) == t
                    and types.get(b.name) == t
                    and name not in types
                ):
                    types[name] = t
                    frame.append(name)
                    continue
        else:
            check = CHECKS_BY_CODE[code]
            if check is not None and len(results) <= 1 and not op.regions:
                for v in operands:
                    if types.get(v.name) != v.type:
                        break
                else:
                    if run(check, op) is None:
                        if not results:
                            continue
                        r = results[0]
                        name, t = r.name, r.type
                        if name not in types and t in valid:
                            types[name] = t
                            frame.append(name)
                            continue
        bad = verify_op(op, scope, where, index == last_index)
        if bad:
            return f"{where} op {index} ({op.name}): {bad}"
    return None


def verify_kernel(kernel: Kernel) -> Optional[str]:
    scope = Scope()
    for p in kernel.params:
        bad = scope.define(p.value.name, p.value.type)
        if bad:
            return f"param: {bad}"
    if kernel.entry.name != "entry":
        return "the kernel region must be @entry"
    if not kernel.entry.ops or kernel.entry.ops[-1].code != ops.RETURN:
        return "the kernel must end with cf.return"
    return verify_region(kernel.entry, scope, "entry", allow_yield=False)
