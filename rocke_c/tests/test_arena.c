/* test_arena.c: the per-call arena (arena.c). */
#include <string.h>
#include <stdint.h>
#include "../src/internal.h"
#include "check.h"

static void test_zeroed_and_aligned(void)
{
    rk_arena a;
    int i;
    rk_arena_init(&a);
    for (i = 1; i < 200; i++) {
        unsigned char *p = rk_alloc(&a, (size_t)i * 7);
        size_t j;
        CHECK(p != NULL);
        CHECK(((uintptr_t)p % sizeof(void *)) == 0);
        for (j = 0; j < (size_t)i * 7; j++)
            CHECK(p[j] == 0);
        memset(p, 0xab, (size_t)i * 7);
    }
    rk_arena_free(&a);
}

static void test_large_block(void)
{
    rk_arena a;
    char *p;
    rk_arena_init(&a);
    p = rk_alloc(&a, 5u << 20);
    CHECK(p != NULL);
    p[(5u << 20) - 1] = 1;
    CHECK(rk_alloc(&a, 16) != NULL);
    rk_arena_free(&a);
}

static void test_strndup(void)
{
    rk_arena a;
    char *s;
    rk_arena_init(&a);
    s = rk_strndup(&a, "hello world", 5);
    CHECK(s && strcmp(s, "hello") == 0);
    rk_arena_free(&a);
    rk_arena_free(&a);
}

/* A reset arena hands its kept blocks out again, zeroed, and frees what it does not keep. */
/* rk_strcat3: the three pieces in order, a NULL third piece, empty pieces; NULL for a NULL first
 * or second piece. */
static void test_strcat3(void)
{
    rk_arena a;
    char *s;
    rk_arena_init(&a);
    s = rk_strcat3(&a, "ptr<", "f16", ",global>");
    CHECK(s && strcmp(s, "ptr<f16,global>") == 0);
    s = rk_strcat3(&a, "%", "acc", NULL);
    CHECK(s && strcmp(s, "%acc") == 0);
    s = rk_strcat3(&a, "", "", "");
    CHECK(s && s[0] == '\0');
    CHECK(rk_strcat3(&a, NULL, "x", NULL) == NULL && rk_strcat3(&a, "x", NULL, "y") == NULL);
    rk_arena_free(&a);
}

static void test_reset_reuses(void)
{
    rk_arena a;
    unsigned char *first, *again;
    size_t j;
    rk_arena_init(&a);
    first = rk_alloc(&a, 1000);
    CHECK(first != NULL);
    memset(first, 0xab, 1000);
    CHECK(rk_alloc(&a, 3u << 20) != NULL); /* oversized: freed by the reset */
    a.failed = 1;
    rk_arena_reset(&a, 1u << 20);
    CHECK(a.head == NULL && a.spare != NULL && a.failed == 0);
    again = rk_alloc(&a, 1000);
    CHECK(again == first);
    for (j = 0; j < 1000; j++)
        CHECK(again[j] == 0);
    rk_arena_reset(&a, 0); /* keeps nothing new */
    CHECK(a.head == NULL);
    rk_arena_free(&a);
    CHECK(a.head == NULL && a.spare == NULL);
}

/* Zero-size requests and oversized ones do not leave the current block: the next small
 * allocation still comes from it. */
static void test_block_kept_current(void)
{
    rk_arena a;
    rk_arena_block *head;
    char *p, *q;
    int i;
    rk_arena_init(&a);
    p = rk_alloc(&a, 16);
    head = a.head;
    for (i = 0; i < 1000; i++) /* 8 bytes each: one block holds them */
        CHECK(rk_alloc(&a, 0) != NULL);
    CHECK(a.head == head);
    CHECK(rk_alloc(&a, 1u << 20) != NULL);
    CHECK(a.head == head);
    q = rk_alloc(&a, 16);
    CHECK(q != NULL && a.head == head && q > p);
    rk_arena_free(&a);
}

/* A reserved map takes n entries without moving its slots. */
static void test_map_reserve(void)
{
    rk_arena a;
    rk_map m;
    rk_map_key **slots;
    char keys[3000][8];
    int i;
    rk_arena_init(&a);
    rk_map_init(&m);
    CHECK(rk_map_reserve(&m, &a, 3000) == 0);
    slots = m.slots;
    CHECK(m.cap >= 6002);
    for (i = 0; i < 3000; i++) {
        rk_fmt_int(i, keys[i]);
        CHECK(rk_map_put(&m, &a, keys[i], rk_hash(keys[i]), sizeof(rk_map_key), NULL) != NULL);
    }
    CHECK(m.slots == slots && m.n == 3000);
    CHECK(rk_map_get(&m, "2999", rk_hash("2999")) != NULL);
    CHECK(rk_map_reserve(&m, &a, 10) == 0 && m.slots == slots);
    rk_arena_free(&a);
}

/* n bytes from rk_alloc, checked zero, then dirtied (so a kept block holds old data). */
static void alloc_zeroed_then_dirty(rk_arena *a, size_t n)
{
    unsigned char *p = rk_alloc(a, n);
    size_t j;
    CHECK(p != NULL);
    for (j = 0; p && j < n; j++)
        if (p[j] != 0) {
            CHECK(p[j] == 0);
            break;
        }
    if (p)
        memset(p, 0xab, n);
}

/* A kept block is zeroed again only as it is handed out, a step at a time: every byte of every
 * allocation after a reset is zero, whatever the sizes (across the steps, past a step, an
 * oversized one that takes a kept block of its own). */
static void test_reset_zeroes_as_handed_out(void)
{
    static const size_t sizes[] = {8, 3000, 10000, 24, 20000, 4096, 1, 40000, 4095, 700};
    rk_arena a;
    int round, i, k;
    rk_arena_init(&a);
    for (round = 0; round < 3; round++) {
        for (k = 0; k < 40; k++)
            for (i = 0; i < (int)(sizeof sizes / sizeof sizes[0]); i++)
                alloc_zeroed_then_dirty(&a, sizes[i]);
        rk_arena_reset(&a, 32u << 20);
        CHECK(a.spare != NULL);
    }
    rk_arena_free(&a);
}

/* rk_alloc_raw hands out bytes without zeroing them, and every rk_alloc after it is still zeroed
 * (a kept block is dirty: the raw bytes are taken past the zeroed ones, which start again after
 * them). */
static void test_raw_then_zeroed(void)
{
    static const size_t raw_sizes[] = {3000, 5000, 16, 2048, 9000, 1};
    static const size_t sizes[] = {100, 2500, 8, 4000, 1, 30000};
    rk_arena a;
    int round, k, i;
    rk_arena_init(&a);
    for (round = 0; round < 3; round++) {
        for (k = 0; k < 30; k++)
            for (i = 0; i < 6; i++) {
                unsigned char *raw = rk_alloc_raw(&a, raw_sizes[i]);
                CHECK(raw != NULL && ((size_t)raw % 8) == 0);
                if (raw)
                    memset(raw, 0xcd, raw_sizes[i]);
                alloc_zeroed_then_dirty(&a, sizes[i]);
            }
        rk_arena_reset(&a, 32u << 20);
    }
    CHECK(rk_alloc_raw(&a, 0) != NULL); /* as rk_alloc: a size 0 gets 8 bytes */
    rk_arena_free(&a);
}

int main(void)
{
    test_strcat3();
    test_block_kept_current();
    test_map_reserve();
    test_reset_reuses();
    test_reset_zeroes_as_handed_out();
    test_raw_then_zeroed();
    test_zeroed_and_aligned();
    test_large_block();
    test_strndup();
    return check_failures != 0;
}
