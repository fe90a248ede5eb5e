/* ops.h: the one table of IR ops (docs/ir.md §4), the twin of rocke_py/engine/ops.py.
 *
 * One row per op, in the order of docs/ir.md §4: X(code, name, hint, operands, results,
 * region): RK_OP_<code> is the op's code (its index in rk_ops), hint the name hint of its
 * result (docs/ir.md §2; "" when it gives none), operands and results the counts (-1: any
 * number), region the name of its one region ("" for none). The builder names ops and results
 * from this table; the verifier and the lowering keep their rule and handler per code, in
 * arrays indexed by it (tests/engines/test_ops.py checks that each covers every op and that
 * docs/ir.md lists exactly these rows), as QBE's ops.h serves its passes. */
#ifndef ROCKE_OPS_H
#define ROCKE_OPS_H

#include <stddef.h>

#define RK_OPS(X) \
    X(CONSTANT, "arith.constant", "c", 0, 1, "") \
    X(CONSTANT_VEC, "arith.constant_vec", "cz", 0, 1, "") \
    X(ADD, "arith.add", "add", 2, 1, "") \
    X(SUB, "arith.sub", "sub", 2, 1, "") \
    X(MUL, "arith.mul", "mul", 2, 1, "") \
    X(DIV, "arith.div", "div", 2, 1, "") \
    X(MOD, "arith.mod", "mod", 2, 1, "") \
    X(MIN, "arith.min", "min", 2, 1, "") \
    X(MAX, "arith.max", "max", 2, 1, "") \
    X(AND, "arith.and", "and", 2, 1, "") \
    X(OR, "arith.or", "or", 2, 1, "") \
    X(CMP, "arith.cmp", "cmp", 2, 1, "") \
    X(SELECT, "arith.select", "sel", 3, 1, "") \
    X(FADD, "arith.fadd", "fadd", 2, 1, "") \
    X(FMUL, "arith.fmul", "fmul", 2, 1, "") \
    X(FMAX, "arith.fmax", "fmax", 2, 1, "") \
    X(FMIN, "arith.fmin", "fmin", 2, 1, "") \
    X(FPTRUNC, "arith.fptrunc", "cvt", 1, 1, "") \
    X(BITCAST, "arith.bitcast", "bc", 1, 1, "") \
    X(THREAD_ID, "gpu.thread_id", "tid", 0, 1, "") \
    X(BLOCK_ID, "gpu.block_id", "bid", 0, 1, "") \
    X(LANE_ID, "gpu.lane_id", "lane", 0, 1, "") \
    X(READFIRSTLANE, "gpu.readfirstlane", "rfl", 1, 1, "") \
    X(MAKE_BUFFER_RSRC, "tile.make_buffer_rsrc", "rsrc", 2, 1, "") \
    X(BUFFER_LOAD, "tile.buffer_load", "gv", 2, 1, "") \
    X(BUFFER_STORE, "tile.buffer_store", "", 3, 0, "") \
    X(GLOBAL_ATOMIC_FADD, "tile.global_atomic_fadd", "", 3, 0, "") \
    X(SMEM_ALLOC, "tile.smem_alloc", "smem", 0, 1, "") \
    X(SMEM_LOAD, "tile.smem_load", "av", 3, 1, "") \
    X(SMEM_STORE, "tile.smem_store", "", 4, 0, "") \
    X(SMEM_ADDR, "tile.smem_addr", "sa", 1, 1, "") \
    X(DS_READ_TR16_B64, "tile.ds_read_tr16_b64", "tr", 3, 1, "") \
    X(DS_READ_TR16_B128, "tile.ds_read_tr16_b128", "tr", 3, 1, "") \
    X(ASYNC_BUFFER_LOAD_LDS, "tile.async_buffer_load_lds", "", 3, 0, "") \
    X(S_WAITCNT, "tile.s_waitcnt", "", 0, 0, "") \
    X(SYNC, "tile.sync", "", 0, 0, "") \
    X(SYNC_LDS_ONLY, "tile.sync_lds_only", "", 0, 0, "") \
    X(EXTRACT, "vector.extract", "e", 1, 1, "") \
    X(INSERT, "vector.insert", "vi", 2, 1, "") \
    X(FROM_ELEMENTS, "vector.from_elements", "vp", -1, 1, "") \
    X(CONCAT, "vector.concat", "vc", 2, 1, "") \
    X(MMA, "tile.mma", "acc", 3, 1, "") \
    X(SCHED_GROUP_BARRIER, "tile.sched_group_barrier", "", 0, 0, "") \
    X(SCHED_BARRIER, "tile.sched_barrier", "", 0, 0, "") \
    X(S_SETPRIO, "tile.s_setprio", "", 0, 0, "") \
    X(FOR, "scf.for", "for", -1, -1, "body") \
    X(YIELD, "scf.yield", "", -1, 0, "") \
    X(IF, "scf.if", "", 1, 0, "then") \
    X(RETURN, "cf.return", "", 0, 0, "")

/* clang-format off */
enum {
#define RK_OP_ENUM(code, name, hint, operands, results, region) RK_OP_##code,
    RK_OPS(RK_OP_ENUM)
#undef RK_OP_ENUM
    RK_N_OPS
};
/* clang-format on */

#define RK_OP_UNKNOWN (-1)  /* the code of a name outside the table (the verifier refuses it) */

typedef struct rk_op_info {
    const char *name;
    const char *hint;
    size_t hint_len;          /* strlen(hint), when compiled (C only: every result is named from it) */
    int operands, results;
    const char *region;
} rk_op_info;

/* ==== ops.c ==== */
extern const rk_op_info rk_ops[RK_N_OPS];
extern const char *const rk_cmp_preds[];   /* arith.cmp's predicates (docs/ir.md §4.1), NULL-terminated */
int rk_op_code(const char *name);          /* Python's op_code: the row of name, RK_OP_UNKNOWN */

#endif
