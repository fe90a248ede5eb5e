/* test_buf.c: the growable string buffer (buf.c). */
#include <string.h>
#include <stdlib.h>
#include "../src/internal.h"
#include "check.h"

static void test_appends(void)
{
    rk_buf b;
    char *s;
    rk_buf_init(&b);
    rk_buf_puts(&b, "abc");
    rk_buf_putn(&b, "defgh", 2);
    rk_buf_printf(&b, "-%d-%s", 42, "x");
    CHECK(!b.failed);
    CHECK(b.len == 10);
    CHECK(strcmp(b.data, "abcde-42-x") == 0);
    s = rk_buf_take(&b);
    CHECK(s && strcmp(s, "abcde-42-x") == 0);
    CHECK(b.data == NULL && b.len == 0);
    free(s);
    rk_buf_free(&b);
}

static void test_growth(void)
{
    rk_buf b;
    size_t i;
    rk_buf_init(&b);
    for (i = 0; i < 100000; i++)
        rk_buf_printf(&b, "%c", (int)('a' + (int)(i % 26)));
    CHECK(b.len == 100000);
    CHECK(b.data[99999] == (char)('a' + (int)(99999 % 26)));
    CHECK(b.data[100000] == '\0');
    /* amortised doubling: capacity stays within 2x of the length */
    CHECK(b.cap < 2 * b.len + 64);
    rk_buf_free(&b);
}

static void test_empty_take(void)
{
    rk_buf b;
    char *s;
    rk_buf_init(&b);
    s = rk_buf_take(&b);
    CHECK(s && s[0] == '\0');
    free(s);
    rk_buf_free(&b);
    rk_buf_free(&b);
}

static void test_long_printf(void)
{
    rk_buf b;
    char big[3000];
    memset(big, 'q', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    rk_buf_init(&b);
    rk_buf_printf(&b, "<%s>", big);
    CHECK(b.len == sizeof big + 1);
    CHECK(b.data[0] == '<' && b.data[b.len - 1] == '>');
    rk_buf_free(&b);
}

/* rk_put_at writes exactly n bytes where it is told and returns the byte after them: a line
 * of pieces written into room made once reads back whole, the bytes past it untouched. */
static void test_put_at(void)
{
    rk_buf b;
    char *d;
    rk_buf_init(&b);
    RK_BUF_LIT(&b, "x");
    CHECK(rk_buf_room(&b, 32) == 0);
    memset(b.data + b.len, '#', 32);
    d = rk_put_at(b.data + b.len, "%add7", 5);
    d = rk_put_at(d, " = ", 3);
    d = rk_put_at(d, "add i32", 4);      /* a prefix of the string */
    d = rk_put_at(d, "", 0);
    CHECK(d == b.data + b.len + 12 && *d == '#');
    *d = '\0';
    b.len = (size_t)(d - b.data);
    CHECK(strcmp(b.data, "x%add7 = add ") == 0 && b.len == 13);
    rk_buf_free(&b);
}

/* rk_copy: every length from 0 to past its short cases copies exactly n bytes (each branch: two
 * overlapping moves of 8 or 4, the bytes of 1-3, memcpy) and writes nothing around them. */
static void test_copy(void)
{
    char src[48], dst[64];
    size_t n, i;
    int ok = 1;
    for (i = 0; i < sizeof src; i++)
        src[i] = (char)('a' + i % 26);
    for (n = 0; n <= 40; n++) {
        memset(dst, '#', sizeof dst);
        rk_copy(dst + 8, src + 3, n);
        for (i = 0; i < sizeof dst; i++)
            ok = ok && dst[i] == (i >= 8 && i < 8 + n ? src[3 + i - 8] : '#');
    }
    CHECK(ok);
}

/* rk_buf_put_short appends like rk_buf_putn, in room and through a grow, and keeps the NUL. */
static void test_put_short(void)
{
    rk_buf b;
    char want[512];
    size_t at = 0, n;
    int i;
    rk_buf_init(&b);
    for (i = 0; i < 20; i++) {
        const char *piece = i % 3 ? "%add7" : "<16 x half> and some more";
        n = strlen(piece) - (size_t)(i % 2);
        rk_buf_put_short(&b, piece, n);
        memcpy(want + at, piece, n);
        at += n;
    }
    want[at] = '\0';
    CHECK(!b.failed && b.len == at && strcmp(b.data, want) == 0);
    rk_buf_free(&b);
}

int main(void)
{
    test_put_short();
    test_copy();
    test_put_at();
    test_appends();
    test_growth();
    test_empty_take();
    test_long_printf();
    return check_failures != 0;
}
