/* lower.h: mode `ll` (lower_ll.c), the twin of rocke_py/engine/lower_ll.py. The format is
 * docs/reference/llvm-ir.md; every choice it leaves open is docs/lowering.md. */
#ifndef ROCKE_LOWER_H
#define ROCKE_LOWER_H

#include "ir.h"

/* Python's lower_kernel(kernel, arch, flavor): appends the whole `.ll` module to out and
 * returns 0. A kernel the lowering refuses returns -1 with err an internal error whose
 * message is Python's EngineFailure text ("lower: ..."), and out as it was. Out of memory
 * (the arena, a line buffer or out) is the internal error "out of memory (lower)". Every
 * temporary lives in arena or is freed before return. */
int rk_lower_kernel(const rk_ir_kernel *kernel, const char *arch, const char *flavor,
                    rk_arena *arena, rk_buf *out, rk_error *err);

/* Python's f32_literal: "0x" and 16 uppercase hex digits of the double holding value rounded
 * to f32 (llvm-ir §5), NUL-terminated in out; -1 when a finite value rounds to infinity. */
int rk_lower_f32_literal(double value, char out[19]);

#endif
