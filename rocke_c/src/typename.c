/* typename.c: the one parser of IR type names (support.h; docs/ir.md §1) as spans of the
 * name, mirroring Python's slicing, for the builder's accessors (ir.c) and the lowering
 * (lower_ll.c). Where Python raises on a malformed name, the parser says so (-1 or
 * RK_TYPE_BAD_INT). */
#include <string.h>
#include "support.h"

long long rk_type_py_int(const char *s, size_t n)
{
    size_t i = 0;
    int digits = 0, negative = 0, after_digit = 0;
    long long v = 0;
    if (i < n && (s[i] == '+' || s[i] == '-'))
        negative = s[i++] == '-';
    for (; i < n; i++) {
        if (s[i] == '_' && after_digit && i + 1 < n) {
            after_digit = 0;
            continue;
        }
        if (s[i] < '0' || s[i] > '9' || ++digits > 18)
            return RK_TYPE_BAD_INT;
        v = v * 10 + (s[i] - '0');
        after_digit = 1;
    }
    if (!digits || !after_digit)
        return RK_TYPE_BAD_INT;
    return negative ? -v : v;
}

int rk_type_vec_elem(const char *t, const char **elem, size_t *n)
{
    const char *x;
    if (!RK_TYPE_IS_VEC(t)) {
        *elem = t;
        *n = strlen(t);
        return 0;
    }
    x = strrchr(t, 'x');
    if (!x)
        return -1;
    *elem = t + 4;
    *n = x - t > 4 ? (size_t)(x - t) - 4 : 0;
    return 0;
}

long long rk_type_vec_len(const char *t)
{
    const char *x;
    size_t len = strlen(t), from, to;
    if (!RK_TYPE_IS_VEC(t))
        return 1;
    x = strrchr(t, 'x');
    if (!x)
        return RK_TYPE_BAD_INT;
    from = (size_t)(x - t) + 1; /* t[t.rindex("x") + 1:-1] */
    to = len - 1;
    return rk_type_py_int(t + from, from < to ? to - from : 0);
}

int rk_type_elem_before_comma(const char *t, size_t start, const char **elem, size_t *n)
{
    const char *comma = strchr(t, ',');
    size_t end, len = strlen(t);
    if (!comma)
        return -1;
    end = (size_t)(comma - t);
    if (start > len)
        start = len;
    *elem = t + start;
    *n = end > start ? end - start : 0;
    return 0;
}

int rk_type_smem_shape(const char *t, long long *rows, long long *cols)
{
    const char *open = strchr(t, '['), *close = strchr(t, ']'), *x;
    size_t from, to;
    if (!open || !close)
        return -1;
    from = (size_t)(open - t) + 1;
    to = (size_t)(close - t);
    if (from > to)
        from = to;
    x = memchr(t + from, 'x', to - from);
    if (!x || memchr(x + 1, 'x', to - (size_t)(x + 1 - t)))
        return -1; /* split("x") must give exactly two parts */
    *rows = rk_type_py_int(t + from, (size_t)(x - (t + from)));
    *cols = rk_type_py_int(x + 1, to - (size_t)(x + 1 - t));
    return *rows == RK_TYPE_BAD_INT || *cols == RK_TYPE_BAD_INT ? -1 : 0;
}
