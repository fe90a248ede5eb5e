/* arena.c: one arena per rocke_emit call; every stage allocates from it, and the entry
 * point releases it in one go, so no stage frees anything on its error paths. A
 * rocke_context keeps its arena between calls: rk_arena_reset keeps standard blocks as
 * spares, which the next call takes before it asks malloc.
 *
 * A standard block's bytes are zeroed a step at a time just ahead of the allocations (the
 * arena's avail counts the zeroed free bytes of head), so rk_alloc (support.h) only moves a
 * pointer, a call zeroes only what it uses, right before it writes it, and no byte a call is
 * handed holds data of an earlier call; a reset zeroes nothing. An oversized block is handed
 * out whole, zeroed by calloc. */
#include <stdlib.h>
#include <string.h>
#include "internal.h"

#define RK_ARENA_BLOCK 65536
#define RK_ARENA_ZERO_STEP 2048 /* bytes zeroed ahead of the allocations at a time */

struct rk_arena_block {
    rk_arena_block *next;
    size_t cap;
    /* data follows, aligned like a max_align type */
};

static size_t align(size_t n) { return (n + 15u) & ~(size_t)15u; }

static char *data_of(rk_arena_block *block) { return (char *)block + align(sizeof(rk_arena_block)); }

void rk_arena_init(rk_arena *arena)
{
    arena->head = NULL;
    arena->spare = NULL;
    arena->cur = NULL;
    arena->avail = 0;
    arena->failed = 0;
}

/* A block of cap bytes (a spare when it is a standard one and there is one): an oversized
 * one zeroed (it is handed out whole), a standard one not (rk_alloc_grow zeroes it a step at a
 * time). */
static rk_arena_block *take(rk_arena *arena, size_t cap)
{
    rk_arena_block *block;
    if (cap == RK_ARENA_BLOCK && arena->spare) {
        block = arena->spare;
        arena->spare = block->next;
    } else if (!(block = cap == RK_ARENA_BLOCK ? malloc(align(sizeof(rk_arena_block)) + cap)
                                               : calloc(1, align(sizeof(rk_arena_block)) + cap))) {
        arena->failed = 1;
        return NULL;
    }
    block->cap = cap;
    return block;
}

/* n bytes from head, which has room for them: the zeroed bytes extended by at least a step
 * (or n) first. */
static void *bump(rk_arena *arena, size_t n)
{
    char *end = data_of(arena->head) + arena->head->cap, *p = arena->cur;
    size_t left = (size_t)(end - p), want = arena->avail + RK_ARENA_ZERO_STEP;
    if (want < n)
        want = n;
    if (want > left)
        want = left;
    memset(p + arena->avail, 0, want - arena->avail);
    arena->cur = p + n;
    arena->avail = want - n;
    return p;
}

void *rk_alloc_grow(rk_arena *arena, size_t size)
{
    rk_arena_block *block;
    size_t n = (size + 7u) & ~(size_t)7u;
    if (n == 0)
        n = 8; /* size 0, or a size that wrapped */
    if (n < size || n > (size_t)-1 - 2 * align(sizeof(rk_arena_block)))
        return NULL;
    if (arena->head && n <= (size_t)(data_of(arena->head) + arena->head->cap - arena->cur))
        return bump(arena, n);
    if (n > RK_ARENA_BLOCK / 4 && arena->head) {
        /* an oversized one gets a block of its own, behind head: head keeps its free bytes */
        if (!(block = take(arena, n > RK_ARENA_BLOCK ? n : RK_ARENA_BLOCK)))
            return NULL;
        if (block->cap == RK_ARENA_BLOCK)
            memset(data_of(block), 0, n); /* a standard block (spare or not) is not zeroed */
        block->next = arena->head->next;
        arena->head->next = block;
        return data_of(block);
    }
    if (!(block = take(arena, n > RK_ARENA_BLOCK ? n : RK_ARENA_BLOCK)))
        return NULL;
    block->next = arena->head;
    arena->head = block;
    arena->cur = data_of(block);
    arena->avail = 0;
    if (block->cap > RK_ARENA_BLOCK) { /* the first allocation, oversized: the block is all its */
        arena->cur += block->cap;
        return data_of(block);
    }
    return bump(arena, n);
}

void *rk_alloc_raw(rk_arena *arena, size_t size)
{
    size_t n = (size + 7u) & ~(size_t)7u;
    if (arena->head && n >= size && n > arena->avail
        && n <= (size_t)(data_of(arena->head) + arena->head->cap - arena->cur)) {
        char *p = arena->cur;
        arena->cur += n;
        arena->avail = 0; /* the zeroed bytes start at cur again */
        return p;
    }
    return rk_alloc(arena, size); /* zeroed bytes at hand, a new block, or a size rk_alloc refuses */
}

char *rk_strndup(rk_arena *arena, const char *s, size_t n)
{
    char *copy = rk_alloc(arena, n + 1);
    if (!copy)
        return NULL;
    memcpy(copy, s, n); /* copy[n] is already 0 */
    return copy;
}

char *rk_strcat3(rk_arena *arena, const char *a, const char *b, const char *c)
{
    size_t na, nb, nc;
    char *s;
    if (!a || !b)
        return NULL;
    na = strlen(a), nb = strlen(b), nc = c ? strlen(c) : 0;
    if (!(s = rk_alloc_raw(arena, na + nb + nc + 1)))
        return NULL;
    memcpy(s, a, na);
    memcpy(s + na, b, nb);
    if (nc)
        memcpy(s + na + nb, c, nc);
    s[na + nb + nc] = '\0';
    return s;
}

static void free_blocks(rk_arena_block *block)
{
    while (block) {
        rk_arena_block *next = block->next;
        free(block);
        block = next;
    }
}

void rk_arena_reset(rk_arena *arena, size_t keep)
{
    rk_arena_block *block = arena->head, *spare = arena->spare;
    size_t kept = 0;
    for (; spare; spare = spare->next)
        kept += RK_ARENA_BLOCK;
    while (block) {
        rk_arena_block *next = block->next;
        if (block->cap == RK_ARENA_BLOCK && kept + RK_ARENA_BLOCK <= keep) {
            block->next = arena->spare;
            arena->spare = block;
            kept += RK_ARENA_BLOCK;
        } else
            free(block);
        block = next;
    }
    arena->head = NULL;
    arena->cur = NULL;
    arena->avail = 0;
    arena->failed = 0;
}

void rk_arena_free(rk_arena *arena)
{
    free_blocks(arena->head);
    free_blocks(arena->spare);
    arena->head = NULL;
    arena->spare = NULL;
    arena->cur = NULL;
    arena->avail = 0;
}
