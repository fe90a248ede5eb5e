/* strlist.c: Python's `s in (…)`, `list.index(s)` and ", ".join(…) over NULL-terminated lists of strings
 * (support.h), for every stage that checks a word against a fixed list. */
#include <string.h>
#include "support.h"

int rk_str_in(const char *s, const char *const *list)
{
    int i;
    for (i = 0; s && list[i]; i++)
        if (list[i] == s || (list[i][0] == s[0] && strcmp(s, list[i]) == 0))
            return 1;
    return 0;
}

int rk_str_index(const char *s, size_t n, const char *const *list)
{
    int i;
    for (i = 0; list[i]; i++)
        if (strlen(list[i]) == n && memcmp(list[i], s, n) == 0)
            return i;
    return -1;
}

void rk_str_join(rk_buf *out, const char *sep, const char *const *list)
{
    int i;
    for (i = 0; list[i]; i++) {
        if (i)
            rk_buf_puts(out, sep);
        rk_buf_puts(out, list[i]);
    }
}
