/* arena.c: one arena per rocke_emit call; every stage allocates from it, and the entry
 * point releases it in one go, so no stage frees anything on its error paths. A
 * rocke_context keeps its arena between calls: rk_arena_reset keeps standard blocks as
 * spares, which the next call takes before it asks malloc.
 *
 * Memory is zeroed a block at a time (calloc for a new block, one memset of the used part
 * when a reset keeps it), so rk_alloc (support.h) only moves a pointer, and a kept block
 * holds no data of the call that used it. */
#include <stdlib.h>
#include <string.h>
#include "internal.h"

#define RK_ARENA_BLOCK 65536

struct rk_arena_block {
    rk_arena_block *next;
    size_t used; /* bytes handed out (of a block that is not head; head's is cap - avail) */
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

/* A zeroed block of cap bytes (a spare when it is a standard one and there is one). */
static rk_arena_block *take(rk_arena *arena, size_t cap)
{
    rk_arena_block *block;
    if (cap == RK_ARENA_BLOCK && arena->spare) {
        block = arena->spare;
        arena->spare = block->next;
    } else if (!(block = calloc(1, align(sizeof(rk_arena_block)) + cap))) {
        arena->failed = 1;
        return NULL;
    }
    block->used = 0;
    block->cap = cap;
    return block;
}

void *rk_alloc_grow(rk_arena *arena, size_t size)
{
    rk_arena_block *block;
    size_t n = (size + 7u) & ~(size_t)7u;
    if (n == 0)
        n = 8; /* size 0, or a size that wrapped */
    if (n < size || n > (size_t)-1 - 2 * align(sizeof(rk_arena_block)))
        return NULL;
    if (n <= arena->avail) { /* size 0 */
        char *p = arena->cur;
        arena->cur += n;
        arena->avail -= n;
        return p;
    }
    if (n > RK_ARENA_BLOCK / 4) {
        /* an oversized one gets a block of its own, behind head: head keeps its free bytes */
        if (!(block = take(arena, n > RK_ARENA_BLOCK ? n : RK_ARENA_BLOCK)))
            return NULL;
        block->used = n;
        if (arena->head) {
            block->next = arena->head->next;
            arena->head->next = block;
        } else {
            block->next = NULL;
            arena->head = block;
            arena->cur = data_of(block) + n;
            arena->avail = block->cap - n;
        }
        return data_of(block);
    }
    if (!(block = take(arena, RK_ARENA_BLOCK)))
        return NULL;
    if (arena->head)
        arena->head->used = arena->head->cap - arena->avail;
    block->next = arena->head;
    arena->head = block;
    arena->cur = data_of(block) + n;
    arena->avail = block->cap - n;
    return data_of(block);
}

char *rk_strndup(rk_arena *arena, const char *s, size_t n)
{
    char *copy = rk_alloc(arena, n + 1);
    if (!copy)
        return NULL;
    memcpy(copy, s, n); /* copy[n] is already 0 */
    return copy;
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
    if (block)
        block->used = block->cap - arena->avail;
    for (; spare; spare = spare->next)
        kept += RK_ARENA_BLOCK;
    while (block) {
        rk_arena_block *next = block->next;
        if (block->cap == RK_ARENA_BLOCK && kept + RK_ARENA_BLOCK <= keep) {
            memset(data_of(block), 0, block->used);
            block->used = 0;
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
