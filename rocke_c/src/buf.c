/* buf.c: the growable string buffer (support.h) with amortised doubling, so printing a
 * kernel is linear in its size, and an exact reserve for a text whose size is known. A failed
 * grow marks the buffer; the caller checks `failed` once at the end. The short appends are
 * inline in support.h; their slow path is here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

void rk_buf_init(rk_buf *b)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->failed = 0;
}

int rk_buf_reserve(rk_buf *b, size_t n)
{
    char *data;
    if (b->failed)
        return -1;
    if (b->len + n + 1 <= b->cap)
        return 0;
    if (b->len + n + 1 < b->len || !(data = realloc(b->data, b->len + n + 1))) {
        b->failed = 1;
        return -1;
    }
    if (!b->data)
        data[0] = '\0';
    b->data = data;
    b->cap = b->len + n + 1;
    return 0;
}

/* Room for extra more bytes, doubling (amortised). */
static int grow(rk_buf *b, size_t extra)
{
    size_t need, cap;
    char *data;
    if (b->failed)
        return -1;
    need = b->len + extra + 1;
    if (need < b->len) {
        b->failed = 1;
        return -1;
    }
    if (need <= b->cap)
        return 0;
    cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap *= 2;
    data = realloc(b->data, cap);
    if (!data) {
        b->failed = 1;
        return -1;
    }
    b->data = data;
    b->cap = cap;
    return 0;
}

void rk_buf_putn_grow(rk_buf *b, const char *s, size_t n)
{
    if (grow(b, n) != 0)
        return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void rk_buf_printf(rk_buf *b, const char *fmt, ...)
{
    va_list ap;
    int n;
    char small[256];
    va_start(ap, fmt);
    n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = 1;
        return;
    }
    if ((size_t)n < sizeof small) {
        rk_buf_putn(b, small, (size_t)n);
        return;
    }
    if (grow(b, (size_t)n) != 0)
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

char *rk_buf_take(rk_buf *b)
{
    char *data = b->data;
    if (!data && !b->failed) {
        data = malloc(1);
        if (data)
            data[0] = '\0';
    }
    rk_buf_init(b);
    return data;
}

void rk_buf_free(rk_buf *b)
{
    free(b->data);
    rk_buf_init(b);
}
