"""The IR verifier (docs/ir.md §6): scopes, types, attrs and region structure.

Twin of rocke_c/src/verify.c. A kernel that fails is an engine bug: verify_kernel returns the
first failure's message (None when the kernel is well formed) and the caller raises."""

from __future__ import annotations

from typing import Callable, Optional

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

INT_TYPES = ("i32", "i64")
FLOAT_TYPES = ("f32",)
PREDS = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult")


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


def arity(op: Op, n_operands: int, n_results: int) -> Optional[str]:
    if len(op.operands) != n_operands or len(op.results) != n_results:
        return f"{op.name} takes {n_operands} operands and gives {n_results} results"
    return None


def check_attrs(op: Op, *keys: str) -> Optional[str]:
    for key in keys:
        if key not in op.attrs:
            return f"{op.name} needs attr {key}"
    return None


# ---- one check per op kind; each returns the failure message or None ----


def check_constant(op: Op) -> Optional[str]:
    bad = arity(op, 0, 1) or check_attrs(op, "ity", "value")
    if bad:
        return bad
    t = op.results[0].type
    if op.attrs["ity"] != t or t not in ("i1", "i32", "i64", "f32"):
        return f"arith.constant of type {t}"
    want_float = t == "f32"
    return need(isinstance(op.attrs["value"], float) == want_float, "arith.constant value has the wrong tag")


def check_constant_vec(op: Op) -> Optional[str]:
    bad = arity(op, 0, 1) or check_attrs(op, "ity", "value")
    return bad or need(
        is_vec(op.results[0].type) and op.attrs["ity"] == op.results[0].type, "arith.constant_vec needs a vec type"
    )


def same_type_binary(types: tuple[str, ...]) -> Callable[[Op], Optional[str]]:
    def check(op: Op) -> Optional[str]:
        bad = arity(op, 2, 1)
        if bad:
            return bad
        a, b = op.operands
        r = op.results[0]
        return need(a.type == b.type == r.type and a.type in types, f"{op.name} on {a.type}, {b.type} -> {r.type}")

    return check


def check_cmp(op: Op) -> Optional[str]:
    bad = arity(op, 2, 1) or check_attrs(op, "pred")
    if bad:
        return bad
    a, b = op.operands
    return need(
        a.type == b.type == "i32" and op.results[0].type == "i1" and op.attrs["pred"] in PREDS,
        "arith.cmp needs two i32 operands, a known pred and an i1 result",
    )


def check_select(op: Op) -> Optional[str]:
    bad = arity(op, 3, 1)
    if bad:
        return bad
    c, a, b = op.operands
    return need(c.type == "i1" and a.type == b.type == op.results[0].type, "arith.select types")


def check_fptrunc(op: Op) -> Optional[str]:
    bad = arity(op, 1, 1) or check_attrs(op, "to")
    if bad:
        return bad
    ok = op.operands[0].type == "f32" and op.results[0].type in ("f16", "bf16")
    return need(ok and op.attrs["to"] == op.results[0].type, "arith.fptrunc is f32 -> f16|bf16")


def check_bitcast(op: Op) -> Optional[str]:
    bad = arity(op, 1, 1) or check_attrs(op, "to")
    if bad:
        return bad
    a, r = op.operands[0], op.results[0]
    numeric = vec_elem(a.type) in SCALARS and vec_elem(r.type) in SCALARS  # type_bits needs scalar elements
    return need(op.attrs["to"] == r.type and numeric and type_bits(a.type) == type_bits(r.type), "arith.bitcast widths")


def check_i32_source(op: Op) -> Optional[str]:
    return arity(op, 0, 1) or need(op.results[0].type == "i32", f"{op.name} gives i32")


def check_block_id(op: Op) -> Optional[str]:
    bad = check_i32_source(op) or check_attrs(op, "dim")
    return bad or need(op.attrs["dim"] in (0, 1, 2), "gpu.block_id dim")


def check_thread_id(op: Op) -> Optional[str]:
    return check_i32_source(op) or check_attrs(op, "dim")


def check_readfirstlane(op: Op) -> Optional[str]:
    return arity(op, 1, 1) or need(op.operands[0].type == op.results[0].type == "i32", "gpu.readfirstlane is i32")


def check_make_rsrc(op: Op) -> Optional[str]:
    bad = arity(op, 2, 1)
    return bad or need(
        is_ptr(op.operands[0].type) and op.operands[1].type == "i32" and op.results[0].type == "rsrc",
        "tile.make_buffer_rsrc(ptr, i32) -> rsrc",
    )


def check_buffer_load(op: Op) -> Optional[str]:
    bad = arity(op, 2, 1) or check_attrs(op, "elem", "n")
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
    bad = arity(op, 3, 0)
    if bad:
        return bad
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
    bad = arity(op, 3, 0)
    if bad:
        return bad
    p, idx, v = op.operands
    ok = (
        is_ptr(p.type)
        and idx.type == "i32"
        and vec_elem(v.type) == p.type[4 : p.type.index(",")]
        and v.type in ("f32", vec("f16", 2), vec("bf16", 2))
    )
    return need(ok, "tile.global_atomic_fadd(ptr<T>, i32, f32|vec<f16x2>|vec<bf16x2>)")


def check_smem_alloc(op: Op) -> Optional[str]:
    bad = arity(op, 0, 1) or check_attrs(op, "type")
    return bad or need(is_smem(op.results[0].type) and op.attrs["type"] == op.results[0].type, "tile.smem_alloc type")


def check_align(op: Op, t: str) -> Optional[str]:
    align = op.attrs.get("align")
    ok = isinstance(align, int) and align in (1, 2, 4, 8, 16) and align >= elem_bytes_of(t)
    return need(ok, f"{op.name} align must be a power of two in [element size, 16]")


def check_smem_load(op: Op) -> Optional[str]:
    bad = arity(op, 3, 1) or check_attrs(op, "n", "align")
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
    bad = arity(op, 4, 0) or check_attrs(op, "align")
    if bad:
        return bad
    s, row, col, v = op.operands
    ok = is_smem(s.type) and row.type == col.type == "i32" and vec_elem(v.type) == smem_elem(s.type)
    return need(ok, "tile.smem_store(smem<T>, i32, i32, T|vec<TxN>)") or check_align(op, v.type)


def check_no_values(op: Op) -> Optional[str]:
    return arity(op, 0, 0)


def check_smem_addr(op: Op) -> Optional[str]:
    bad = arity(op, 1, 1)
    return bad or need(is_smem(op.operands[0].type) and op.results[0].type == "i32", "tile.smem_addr(smem) -> i32")


def transpose_read(width: int) -> Callable[[Op], Optional[str]]:
    def check(op: Op) -> Optional[str]:
        bad = arity(op, 3, 1)
        if bad:
            return bad
        s, row, col = op.operands
        ok = (
            is_smem(s.type)
            and smem_elem(s.type) in ("f16", "bf16")
            and row.type == col.type == "i32"
            and op.results[0].type == vec(smem_elem(s.type), width)
        )
        return need(ok, f"{op.name}(smem<f16|bf16>, i32, i32) -> vec<Tx{width}>")

    return check


def check_async_load_lds(op: Op) -> Optional[str]:
    bad = arity(op, 3, 0) or check_attrs(op, "dwords", "aux")
    if bad:
        return bad
    r, addr, off = op.operands
    ok = r.type == "rsrc" and addr.type == off.type == "i32" and op.attrs["dwords"] in (1, 3, 4)
    return need(ok, "tile.async_buffer_load_lds(rsrc, i32, i32) with dwords 1, 3 or 4")


def check_waitcnt(op: Op) -> Optional[str]:
    return check_no_values(op) or check_attrs(op, "vmcnt")


def check_extract(op: Op) -> Optional[str]:
    bad = arity(op, 1, 1) or check_attrs(op, "index")
    if bad:
        return bad
    v = op.operands[0]
    ok = is_vec(v.type) and op.results[0].type == vec_elem(v.type) and 0 <= op.attrs["index"] < vec_len(v.type)
    return need(ok, "vector.extract element type or index")


def check_insert(op: Op) -> Optional[str]:
    bad = arity(op, 2, 1) or check_attrs(op, "index")
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
    bad = arity(op, 2, 1)
    if bad:
        return bad
    a, b = op.operands
    ok = vec_elem(a.type) == vec_elem(b.type) and op.results[0].type == vec(
        vec_elem(a.type), vec_len(a.type) + vec_len(b.type)
    )
    return need(ok, "vector.concat types")


def check_mma(op: Op) -> Optional[str]:
    bad = arity(op, 3, 1) or check_attrs(op, "op_id")
    if bad:
        return bad
    types = atom_types(str(op.attrs["op_id"]))
    if types is None:
        return f"tile.mma: unknown op_id {op.attrs['op_id']}"
    got = (op.operands[0].type, op.operands[1].type, op.operands[2].type)
    return need(got == types and op.results[0].type == types[2], f"tile.mma {op.attrs['op_id']} operand types")


def check_sched_group_barrier(op: Op) -> Optional[str]:
    return check_no_values(op) or check_attrs(op, "mask", "size", "sync_id")


def check_sched_barrier(op: Op) -> Optional[str]:
    return check_no_values(op) or check_attrs(op, "mask")


def check_setprio(op: Op) -> Optional[str]:
    return check_no_values(op) or check_attrs(op, "prio")


CHECKS: dict[str, Callable[[Op], Optional[str]]] = {
    "arith.constant": check_constant,
    "arith.constant_vec": check_constant_vec,
    "arith.add": same_type_binary(INT_TYPES),
    "arith.sub": same_type_binary(INT_TYPES),
    "arith.mul": same_type_binary(INT_TYPES),
    "arith.div": same_type_binary(("i32",)),
    "arith.mod": same_type_binary(("i32",)),
    "arith.min": same_type_binary(("i32",)),
    "arith.max": same_type_binary(("i32",)),
    "arith.and": same_type_binary(("i1", "i32")),
    "arith.or": same_type_binary(("i1", "i32")),
    "arith.cmp": check_cmp,
    "arith.select": check_select,
    "arith.fadd": same_type_binary(FLOAT_TYPES),
    "arith.fmul": same_type_binary(FLOAT_TYPES),
    "arith.fmax": same_type_binary(FLOAT_TYPES),
    "arith.fmin": same_type_binary(FLOAT_TYPES),
    "arith.fptrunc": check_fptrunc,
    "arith.bitcast": check_bitcast,
    "gpu.thread_id": check_thread_id,
    "gpu.block_id": check_block_id,
    "gpu.lane_id": check_i32_source,
    "gpu.readfirstlane": check_readfirstlane,
    "tile.make_buffer_rsrc": check_make_rsrc,
    "tile.buffer_load": check_buffer_load,
    "tile.buffer_store": check_buffer_store,
    "tile.global_atomic_fadd": check_atomic_fadd,
    "tile.smem_alloc": check_smem_alloc,
    "tile.smem_load": check_smem_load,
    "tile.smem_store": check_smem_store,
    "tile.smem_addr": check_smem_addr,
    "tile.ds_read_tr16_b64": transpose_read(4),
    "tile.ds_read_tr16_b128": transpose_read(8),
    "tile.async_buffer_load_lds": check_async_load_lds,
    "tile.s_waitcnt": check_waitcnt,
    "tile.sync": check_no_values,
    "tile.sync_lds_only": check_no_values,
    "vector.extract": check_extract,
    "vector.insert": check_insert,
    "vector.from_elements": check_from_elements,
    "vector.concat": check_concat,
    "tile.mma": check_mma,
    "tile.sched_group_barrier": check_sched_group_barrier,
    "tile.sched_barrier": check_sched_barrier,
    "tile.s_setprio": check_setprio,
    "cf.return": check_no_values,
}


class Scope:
    """Visible names -> types, one frame per open region (a frame is dropped at region exit)."""

    def __init__(self) -> None:
        self.frames: list[dict[str, str]] = [{}]
        self.defined: set[str] = set()

    def define(self, name: str, type_: str) -> Optional[str]:
        if name in self.defined:
            return f"{name} is defined twice"
        if not valid_type(type_):
            return f"{name} has an invalid type {type_}"
        self.defined.add(name)
        self.frames[-1][name] = type_
        return None

    def lookup(self, name: str) -> Optional[str]:
        for frame in reversed(self.frames):
            if name in frame:
                return frame[name]
        return None


def check_for(op: Op, scope: Scope, where: str) -> Optional[str]:
    if len(op.operands) < 3 or len(op.regions) != 1 or op.regions[0].name != "body":
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
    if not body.ops or body.ops[-1].name != "scf.yield":
        return "scf.for body must end with scf.yield"
    yielded = body.ops[-1].operands
    if len(yielded) != len(inits) or any(y.type != i.type for y, i in zip(yielded, inits)):
        return "scf.yield does not match the iter_args"
    scope.frames.append({})
    bad = scope.define(str(op.attrs["iv"]), "i32")
    for arg in iter_args:
        bad = bad or scope.define(str(arg["name"]), str(arg["type"]))
    bad = bad or verify_region(body, scope, f"{where}.body", allow_yield=True)
    scope.frames.pop()
    return bad


def check_if(op: Op, scope: Scope, where: str) -> Optional[str]:
    if len(op.operands) != 1 or op.operands[0].type != "i1" or op.results:
        return "scf.if takes one i1 condition and gives no results"
    if len(op.regions) != 1 or op.regions[0].name != "then":
        return "scf.if needs a @then region"
    scope.frames.append({})
    bad = verify_region(op.regions[0], scope, f"{where}.then", allow_yield=False)
    scope.frames.pop()
    return bad


def verify_op(op: Op, scope: Scope, where: str, last_in_for: bool) -> Optional[str]:
    for v in op.operands:
        t = scope.lookup(v.name)
        if t is None:
            return f"{v.name} is not visible"
        if t != v.type:
            return f"{v.name} is used as {v.type} but defined as {t}"
    if op.name == "scf.for":
        bad = check_for(op, scope, where)
    elif op.name == "scf.if":
        bad = check_if(op, scope, where)
    elif op.name == "scf.yield":
        bad = need(last_in_for, "scf.yield outside the end of a for body") or check_attrs(op, "num")
        bad = bad or need(op.attrs.get("num") == len(op.operands) and not op.results, "scf.yield num")
    elif op.name in CHECKS:
        bad = need(not op.regions, f"{op.name} has no regions") or CHECKS[op.name](op)
    else:
        bad = f"unknown op {op.name}"
    if bad:
        return bad
    for r in op.results:
        bad = scope.define(r.name, r.type)
        if bad:
            return bad
    return None


def verify_region(region: Region, scope: Scope, where: str, allow_yield: bool) -> Optional[str]:
    for index, op in enumerate(region.ops):
        last = allow_yield and index == len(region.ops) - 1
        bad = verify_op(op, scope, where, last)
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
    if not kernel.entry.ops or kernel.entry.ops[-1].name != "cf.return":
        return "the kernel must end with cf.return"
    return verify_region(kernel.entry, scope, "entry", allow_yield=False)
