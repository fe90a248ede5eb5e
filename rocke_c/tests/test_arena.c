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

int main(void)
{
    test_zeroed_and_aligned();
    test_large_block();
    test_strndup();
    return check_failures != 0;
}
