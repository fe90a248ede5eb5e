/* hashmap.c: the one hash map of the C engine (support.h): string keys, open addressing
 * with linear probing over a table of entry pointers, doubled when half full; and the name
 * table built on it (IR names by their trailing number first). */
#include <string.h>
#include "support.h"

#define RK_MAP_MIN_CAP 32 /* most maps hold a few dozen names (params, loop names, constants) */

void rk_map_init(rk_map *m)
{
    m->slots = NULL;
    m->cap = 0;
    m->n = 0;
}

/* The slot of key: its entry's, or the empty one where it would go (cap > 0). */
static rk_map_key **map_slot(rk_map_key **slots, size_t cap, const char *key, unsigned int hash)
{
    size_t mask = cap - 1, i = hash & mask;
    for (;;) {
        rk_map_key *e = slots[i];
        if (!e || e->key == key || (e->hash == hash && strcmp(e->key, key) == 0))
            return &slots[i];
        i = (i + 1) & mask;
    }
}

void *rk_map_get(const rk_map *m, const char *key, unsigned int hash)
{
    return m->cap ? *map_slot(m->slots, m->cap, key, hash) : NULL;
}

/* A table of cap slots (a power of two) holding the entries so far. */
static int map_resize(rk_map *m, rk_arena *arena, size_t cap)
{
    rk_map_key **slots;
    size_t i;
    if (cap > (size_t)-1 / sizeof *slots)
        return -1;
    slots = rk_alloc(arena, cap * sizeof *slots);
    if (!slots)
        return -1;
    for (i = 0; i < m->cap; i++)
        if (m->slots[i])
            *map_slot(slots, cap, m->slots[i]->key, m->slots[i]->hash) = m->slots[i];
    m->slots = slots;
    m->cap = cap;
    return 0;
}

static int map_grow(rk_map *m, rk_arena *arena) { return map_resize(m, arena, m->cap ? m->cap * 2 : RK_MAP_MIN_CAP); }

int rk_map_reserve(rk_map *m, rk_arena *arena, size_t n)
{
    size_t cap = m->cap ? m->cap : RK_MAP_MIN_CAP;
    while (cap / 2 < n + 1) {
        if (cap > (size_t)-1 / 4)
            return -1;
        cap *= 2;
    }
    return cap == m->cap ? 0 : map_resize(m, arena, cap);
}

void *rk_map_put(rk_map *m, rk_arena *arena, const char *key, unsigned int hash, size_t entry_size, int *added)
{
    rk_map_key **slot;
    if ((m->n + 1) * 2 > m->cap && map_grow(m, arena) != 0)
        return NULL;
    slot = map_slot(m->slots, m->cap, key, hash);
    if (added)
        *added = !*slot;
    if (!*slot) {
        rk_map_key *e = rk_alloc(arena, entry_size < sizeof *e ? sizeof *e : entry_size);
        if (!e)
            return NULL;
        e->key = key;
        e->hash = hash;
        *slot = e;
        m->n++;
    }
    return *slot;
}

int rk_names_init(rk_names *t, rk_arena *arena, size_t cap, size_t size)
{
    rk_map_init(&t->rest);
    t->size = size < sizeof(rk_map_key) ? sizeof(rk_map_key) : (size + 7u) & ~(size_t)7u;
    t->cap = 0;
    t->direct = cap && cap < (size_t)-1 / t->size ? rk_alloc(arena, cap * t->size) : NULL;
    if (!t->direct)
        return cap ? -1 : 0;
    t->cap = cap;
    return 0;
}

/* The array entry for key's trailing number (at most 9 digits), or NULL when it has none or it
 * is past the array. */
static rk_map_key *direct_entry(const rk_names *t, const char *key)
{
    const char *p = key + strlen(key);
    size_t number = 0, scale = 1;
    int digits = 0;
    while (p > key && p[-1] >= '0' && p[-1] <= '9' && digits < RK_NAMES_DIGITS) {
        p--;
        number += (size_t)(*p - '0') * scale;
        scale *= 10;
        digits++;
    }
    if (!digits || number >= t->cap)
        return NULL;
    return (rk_map_key *)(void *)(t->direct + number * t->size);
}

void *rk_names_get(const rk_names *t, const char *key)
{
    rk_map_key *d = direct_entry(t, key);
    if (d && (d->key == key || (d->key && strcmp(d->key, key) == 0)))
        return d;
    if (d && !d->key)
        return NULL; /* its slot is free, so it was never put */
    return rk_map_get(&t->rest, key, rk_hash(key));
}

/* key into the table, d its number's array entry (NULL: none): rk_names_put after the slot. */
static void *put_direct(rk_names *t, rk_arena *arena, rk_map_key *d, const char *key, int *added)
{
    if (d && (d->key == key || (d->key && strcmp(d->key, key) == 0))) {
        if (added)
            *added = 0;
        return d;
    }
    if (d && !d->key) {
        d->key = key;
        if (added)
            *added = 1;
        return d;
    }
    return rk_map_put(&t->rest, arena, key, rk_hash(key), t->size, added);
}

void *rk_names_put(rk_names *t, rk_arena *arena, const char *key, int *added)
{
    return put_direct(t, arena, direct_entry(t, key), key, added);
}

void *rk_names_put_number(rk_names *t, rk_arena *arena, long long number, const char *key, int *added)
{
    rk_map_key *d = rk_names_slot(t, number);
    if (!d)
        return rk_names_put(t, arena, key, added);
    return put_direct(t, arena, d, key, added);
}
