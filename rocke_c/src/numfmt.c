/* numfmt.c: Python's str(int) (support.h), the one integer formatter of the stages that
 * build text piece by piece (the lowering, the constant cache's keys). */
#include <string.h>
#include "support.h"

size_t rk_fmt_int(long long v, char out[RK_INT_DIGITS])
{
    static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                "8081828384858687888990919293949596979899";
    char tmp[24];
    size_t n = sizeof tmp, i = 0, len;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    /* two digits per division, from the right (every value name and number goes through here) */
    while (u >= 100) {
        unsigned int r = (unsigned int)(u % 100);
        u /= 100;
        tmp[--n] = pairs[2 * r + 1];
        tmp[--n] = pairs[2 * r];
    }
    if (u >= 10) {
        tmp[--n] = pairs[2 * u + 1];
        tmp[--n] = pairs[2 * u];
    } else
        tmp[--n] = (char)('0' + (int)u);
    if (v < 0)
        out[i++] = '-';
    len = sizeof tmp - n;
    memcpy(out + i, tmp + n, len);
    out[i + len] = '\0';
    return i + len;
}

void rk_buf_put_int(rk_buf *b, long long v)
{
    char digits[RK_INT_DIGITS];
    rk_buf_putn(b, digits, rk_fmt_int(v, digits));
}
