/* intmath.c: Python's integer division (support.h) for every stage: // and % floor, and
 * the ceildiv and roundup built on them (problem.py's floordiv, ceildiv, roundup). */
#include "support.h"

/* C's / truncates toward zero; Python's // floors, which differs when the signs differ
 * and the division is inexact. */
long long rk_floordiv(long long a, long long b)
{
    long long q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0)))
        q--;
    return q;
}

/* Python's %: the remainder takes the sign of the divisor. */
long long rk_floormod(long long a, long long b)
{
    long long r = a % b;
    if (r != 0 && ((r < 0) != (b < 0)))
        r += b;
    return r;
}

long long rk_ceildiv(long long a, long long b) { return -rk_floordiv(-a, b); }

long long rk_roundup(long long a, long long b) { return rk_ceildiv(a, b) * b; }
