"""The one table of IR ops (docs/ir.md §4): every pass finds an op here by its code.

Twin of rocke_c/src/ops.c (the rows are RK_OPS in rocke_c/src/ops.h). One row per op, in the
order of docs/ir.md §4: the name, the hint of its result (docs/ir.md §2; "" when it gives
none), its operand and result counts (-1: any number) and the name of its one region ("" for
none). The builder names ops and results from this table; the verifier and the lowering keep
their rule and handler per op code (their CHECKS and HANDLERS), as QBE's ops.h serves its
passes; tests/engines/test_ops.py checks that each covers every op, that the C table has the
same rows and that docs/ir.md lists exactly these rows."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OpInfo:
    name: str
    hint: str
    operands: int
    results: int
    region: str


ROWS: list[OpInfo] = []


def row(name: str, hint: str, operands: int, results: int, region: str = "") -> int:
    """Adds one op and gives its code (its index in OPS)."""
    ROWS.append(OpInfo(name, hint, operands, results, region))
    return len(ROWS) - 1


# ---- arith (docs/ir.md §4.1) ----
CONSTANT = row("arith.constant", "c", 0, 1)
CONSTANT_VEC = row("arith.constant_vec", "cz", 0, 1)
ADD = row("arith.add", "add", 2, 1)
SUB = row("arith.sub", "sub", 2, 1)
MUL = row("arith.mul", "mul", 2, 1)
DIV = row("arith.div", "div", 2, 1)
MOD = row("arith.mod", "mod", 2, 1)
MIN = row("arith.min", "min", 2, 1)
MAX = row("arith.max", "max", 2, 1)
AND = row("arith.and", "and", 2, 1)
OR = row("arith.or", "or", 2, 1)
CMP = row("arith.cmp", "cmp", 2, 1)
SELECT = row("arith.select", "sel", 3, 1)
FADD = row("arith.fadd", "fadd", 2, 1)
FMUL = row("arith.fmul", "fmul", 2, 1)
FMAX = row("arith.fmax", "fmax", 2, 1)
FMIN = row("arith.fmin", "fmin", 2, 1)
FPTRUNC = row("arith.fptrunc", "cvt", 1, 1)
BITCAST = row("arith.bitcast", "bc", 1, 1)
# ---- gpu (§4.2) ----
THREAD_ID = row("gpu.thread_id", "tid", 0, 1)
BLOCK_ID = row("gpu.block_id", "bid", 0, 1)
LANE_ID = row("gpu.lane_id", "lane", 0, 1)
READFIRSTLANE = row("gpu.readfirstlane", "rfl", 1, 1)
# ---- memory (§4.3) ----
MAKE_BUFFER_RSRC = row("tile.make_buffer_rsrc", "rsrc", 2, 1)
BUFFER_LOAD = row("tile.buffer_load", "gv", 2, 1)
BUFFER_STORE = row("tile.buffer_store", "", 3, 0)
GLOBAL_ATOMIC_FADD = row("tile.global_atomic_fadd", "", 3, 0)
SMEM_ALLOC = row("tile.smem_alloc", "smem", 0, 1)
SMEM_LOAD = row("tile.smem_load", "av", 3, 1)
SMEM_STORE = row("tile.smem_store", "", 4, 0)
SMEM_ADDR = row("tile.smem_addr", "sa", 1, 1)
DS_READ_TR16_B64 = row("tile.ds_read_tr16_b64", "tr", 3, 1)
DS_READ_TR16_B128 = row("tile.ds_read_tr16_b128", "tr", 3, 1)
ASYNC_BUFFER_LOAD_LDS = row("tile.async_buffer_load_lds", "", 3, 0)
S_WAITCNT = row("tile.s_waitcnt", "", 0, 0)
SYNC = row("tile.sync", "", 0, 0)
SYNC_LDS_ONLY = row("tile.sync_lds_only", "", 0, 0)
# ---- vector (§4.4) ----
EXTRACT = row("vector.extract", "e", 1, 1)
INSERT = row("vector.insert", "vi", 2, 1)
FROM_ELEMENTS = row("vector.from_elements", "vp", -1, 1)
CONCAT = row("vector.concat", "vc", 2, 1)
# ---- mma (§4.5) ----
MMA = row("tile.mma", "acc", 3, 1)
# ---- schedule hints (§4.6) ----
SCHED_GROUP_BARRIER = row("tile.sched_group_barrier", "", 0, 0)
SCHED_BARRIER = row("tile.sched_barrier", "", 0, 0)
S_SETPRIO = row("tile.s_setprio", "", 0, 0)
# ---- control (§4.7) ----
FOR = row("scf.for", "for", -1, -1, "body")
YIELD = row("scf.yield", "", -1, 0)
IF = row("scf.if", "", 1, 0, "then")
RETURN = row("cf.return", "", 0, 0)

OPS: tuple[OpInfo, ...] = tuple(ROWS)
CODES: dict[str, int] = {info.name: code for code, info in enumerate(OPS)}

UNKNOWN = -1  # the code of a name outside the table (the verifier refuses it)

# The predicates of arith.cmp (docs/ir.md §4.1).
CMP_PREDS = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult")


def op_code(name: str) -> int:
    return CODES.get(name, UNKNOWN)
