/* ops.c: the one table of IR ops (docs/ir.md §4), the twin of rocke_py/engine/ops.py. The rows
 * are RK_OPS (ops.h); the passes index their per-op arrays by the code. */
#include <string.h>
#include "ops.h"

const rk_op_info rk_ops[RK_N_OPS] = {
#define RK_OP_ROW(code, name, hint, operands, results, region) \
    {name, hint, sizeof(hint) - 1, operands, results, region},
    RK_OPS(RK_OP_ROW)
#undef RK_OP_ROW
};

const char *const rk_cmp_preds[] = {"eq", "ne", "slt", "sle", "sgt", "sge", "ult", NULL};

/* Only the builder's generic entry (a name from a script) asks by name; a linear search. */
int rk_op_code(const char *name)
{
    int code;
    for (code = 0; code < RK_N_OPS; code++)
        if (strcmp(rk_ops[code].name, name) == 0)
            return code;
    return RK_OP_UNKNOWN;
}
