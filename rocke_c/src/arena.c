/* arena.c: one arena per rocke_emit call; every stage allocates from it, and the entry
 * point releases it in one go, so no stage frees anything on its error paths. A
 * rocke_context keeps its arena between calls: rk_arena_reset keeps standard blocks as
 * spares, which the next call takes before it asks malloc. */
#include <stdlib.h>
#include <string.h>
#include "internal.h"

#define RK_ARENA_BLOCK 65536

struct rk_arena_block {
    rk_arena_block *next;
    size_t used;
    size_t cap;
    /* data follows, aligned like a max_align type */
};

static size_t align(size_t n) { return (n + 15u) & ~(size_t)15u; }

void rk_arena_init(rk_arena *arena)
{
    arena->head = NULL;
    arena->spare = NULL;
    arena->failed = 0;
}

static rk_arena_block *grow(rk_arena *arena, size_t need)
{
    size_t cap = need > RK_ARENA_BLOCK ? need : RK_ARENA_BLOCK;
    rk_arena_block *block;
    if (cap == RK_ARENA_BLOCK && arena->spare) {
        block = arena->spare;
        arena->spare = block->next;
    } else if (!(block = malloc(align(sizeof(rk_arena_block)) + cap))) {
        arena->failed = 1;
        return NULL;
    }
    block->next = arena->head;
    block->used = 0;
    block->cap = cap;
    arena->head = block;
    return block;
}

void *rk_alloc(rk_arena *arena, size_t size)
{
    rk_arena_block *block = arena->head;
    char *base;
    size = align(size ? size : 1);
    if (size < size - 1) /* wrapped */
        return NULL;
    if (!block || block->cap - block->used < size) {
        block = grow(arena, size);
        if (!block)
            return NULL;
    }
    base = (char *)block + align(sizeof(rk_arena_block));
    base += block->used;
    block->used += size;
    memset(base, 0, size);
    return base;
}

char *rk_strndup(rk_arena *arena, const char *s, size_t n)
{
    char *copy = rk_alloc(arena, n + 1);
    if (!copy)
        return NULL;
    memcpy(copy, s, n);
    copy[n] = '\0';
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
    for (; spare; spare = spare->next)
        kept += RK_ARENA_BLOCK;
    while (block) {
        rk_arena_block *next = block->next;
        if (block->cap == RK_ARENA_BLOCK && kept + RK_ARENA_BLOCK <= keep) {
            block->used = 0;
            block->next = arena->spare;
            arena->spare = block;
            kept += RK_ARENA_BLOCK;
        } else
            free(block);
        block = next;
    }
    arena->head = NULL;
    arena->failed = 0;
}

void rk_arena_free(rk_arena *arena)
{
    free_blocks(arena->head);
    free_blocks(arena->spare);
    arena->head = NULL;
    arena->spare = NULL;
}
