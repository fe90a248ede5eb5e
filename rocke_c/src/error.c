/* error.c: the explicit error struct each stage fills and returns up the stack. */
#include <stdio.h>
#include "internal.h"

int rk_fail(rk_error *err, const char *code, const char *fmt, ...)
{
    va_list ap;
    err->code = code;
    err->internal = 0;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return -1;
}

int rk_fail_internal(rk_error *err, const char *fmt, ...)
{
    va_list ap;
    err->code = "E_INTERNAL";
    err->internal = 1;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return -1;
}
