/* error.c: the one error value each stage fills and returns up the stack: a code, the
 * internal flag (Python's EngineFailure) and a message of any length, formatted in the
 * arena the error was initialised with. */
#include <stdio.h>
#include <string.h>
#include "internal.h"

void rk_error_init(rk_error *err, rk_arena *arena)
{
    err->code = NULL;
    err->internal = 0;
    err->message = "";
    err->arena = arena;
}

/* A format without a conversion is a literal: it is the message, and needs no allocation (so
 * "out of memory (...)" is reported even when nothing more can be allocated). When the arena
 * fails, the verdict cannot be trusted: the error becomes the internal "out of memory (arena)". */
int rk_vfail(rk_error *err, const char *code, int internal, const char *fmt, va_list ap)
{
    va_list copy;
    char *message = NULL;
    int n;
    err->code = internal ? "E_INTERNAL" : code;
    err->internal = internal;
    if (!strchr(fmt, '%')) {
        err->message = fmt;
        return -1;
    }
    va_copy(copy, ap);
    n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (n >= 0 && err->arena)
        message = rk_alloc(err->arena, (size_t)n + 1);
    if (!message) {
        err->code = "E_INTERNAL";
        err->internal = 1;
        err->message = "out of memory (arena)";
        return -1;
    }
    vsnprintf(message, (size_t)n + 1, fmt, ap);
    err->message = message;
    return -1;
}

int rk_fail(rk_error *err, const char *code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rk_vfail(err, code, 0, fmt, ap);
    va_end(ap);
    return -1;
}

int rk_fail_internal(rk_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rk_vfail(err, "E_INTERNAL", 1, fmt, ap);
    va_end(ap);
    return -1;
}
