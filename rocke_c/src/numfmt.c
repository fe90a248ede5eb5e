/* numfmt.c: Python's str(int) (support.h), the one integer formatter of the stages that
 * build text piece by piece (the lowering, the constant cache's keys). */
#include "support.h"

size_t rk_fmt_int(long long v, char out[RK_INT_DIGITS])
{
    char tmp[24];
    size_t n = 0, i;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        tmp[n++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u);
    i = 0;
    if (v < 0)
        out[i++] = '-';
    while (n)
        out[i++] = tmp[--n];
    out[i] = '\0';
    return i;
}

void rk_buf_put_int(rk_buf *b, long long v)
{
    char digits[RK_INT_DIGITS];
    rk_buf_putn(b, digits, rk_fmt_int(v, digits));
}
