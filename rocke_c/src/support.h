/* support.h: the support layer every stage of the C engine uses (C only: Python has these
 * built in): the arena, the growable string buffer, a string-keyed hash map, list
 * membership, Python's integer division, number formatting, IR type names. Each section
 * names the file that holds it. */
#ifndef ROCKE_SUPPORT_H
#define ROCKE_SUPPORT_H

#include <stddef.h>
#include <stdarg.h>
#include <string.h>

/* ---- arena (arena.c): all per-call memory, released at once by rk_arena_free ----
 * Every allocation is zeroed: the bytes of a block are zeroed a step at a time just ahead of
 * the allocations (so only what a call uses is zeroed, while it is about to be written), and
 * an allocation is a pointer bump (inline below) with no memset of its own. */
typedef struct rk_arena_block rk_arena_block;
typedef struct rk_arena {
    rk_arena_block *head;  /* the block allocations come from, then the older ones */
    rk_arena_block *spare; /* standard blocks kept by rk_arena_reset for the next call */
    char *cur;             /* the zeroed free bytes of head: cur[0 .. avail); the rest of head
                            * (up to its end) is free but not yet zeroed */
    size_t avail;
    int failed; /* set once an allocation failed */
} rk_arena;

void rk_arena_init(rk_arena *arena);
void *rk_alloc_grow(rk_arena *arena, size_t size);       /* rk_alloc's slow path */
char *rk_strndup(rk_arena *arena, const char *s, size_t n);
/* a + b + c (c may be NULL) as an arena string, without a printf; NULL when a or b is NULL or the
 * arena failed. */
char *rk_strcat3(rk_arena *arena, const char *a, const char *b, const char *c);
/* size bytes aligned like rk_alloc's but NOT zeroed, for a caller that writes every byte before
 * it reads it (a grown array past its count): taken past head's zeroed bytes when they are
 * fewer, so its unused part is never touched; NULL on failure. */
void *rk_alloc_raw(rk_arena *arena, size_t size);
/* Empties the arena for another call (a rocke_context's): every allocation is released, up to
 * keep bytes of standard blocks are kept for reuse (no trip to the OS and back; their bytes are
 * zeroed again before they are handed out), the rest and every oversized block are freed, and
 * failed is cleared. */
void rk_arena_reset(rk_arena *arena, size_t keep);
void rk_arena_free(rk_arena *arena);                      /* frees every block, spares too */

/* size zeroed bytes aligned for any type the engine stores (8); NULL on failure. */
static inline void *rk_alloc(rk_arena *arena, size_t size)
{
    size_t n = (size + 7u) & ~(size_t)7u;
    if (n - 1 < arena->avail) { /* n > 0 (no wrap) and it fits in the zeroed bytes */
        char *p = arena->cur;
        arena->cur += n;
        arena->avail -= n;
        return p;
    }
    return rk_alloc_grow(arena, size);
}

/* ---- short copies ----
 * n bytes from s to d (not overlapping). The engine's texts are made of short pieces (names,
 * types, opcodes): up to 16 bytes go as two moves of a fixed size that overlap in the middle,
 * each within [s, s + n), with no library call; longer ones through memcpy. */
static inline void rk_copy(char *d, const char *s, size_t n)
{
    if (n >= 8 && n <= 16) {
        memcpy(d, s, 8);
        memcpy(d + n - 8, s + n - 8, 8);
    } else if (n >= 4 && n < 8) {
        memcpy(d, s, 4);
        memcpy(d + n - 4, s + n - 4, 4);
    } else if (n > 0 && n < 4) {
        d[0] = s[0];
        d[n - 1] = s[n - 1];
        d[n / 2] = s[n / 2];
    } else if (n > 16)
        memcpy(d, s, n);
}

/* ---- growable string buffer (buf.c): heap, amortised doubling ---- */
typedef struct rk_buf {
    char *data;  /* NUL-terminated while ok */
    size_t len;
    size_t cap;
    int failed;  /* set once a grow failed; later appends are no-ops */
} rk_buf;

void rk_buf_init(rk_buf *b);
/* Room for n more bytes in one allocation of exactly that much (when the final size is known,
 * so a long text is not copied by a chain of doublings); -1 (and failed) when it failed. */
int rk_buf_reserve(rk_buf *b, size_t n);
void rk_buf_putn_grow(rk_buf *b, const char *s, size_t n); /* rk_buf_putn's slow path */
void rk_buf_printf(rk_buf *b, const char *fmt, ...);
char *rk_buf_take(rk_buf *b);   /* hands the heap string to the caller; b is reset */
void rk_buf_free(rk_buf *b);

/* Append n bytes of s, with the common case (room left) inline: texts are built from many
 * short pieces. The buffer stays NUL-terminated. */
static inline void rk_buf_putn(rk_buf *b, const char *s, size_t n)
{
    size_t len = b->len;
    if (!b->failed && len + n < b->cap) {
        char *d = b->data + len;
        memcpy(d, s, n); /* a few moves when n is a constant; no byte loop that reloads b */
        d[n] = '\0';
        b->len = len + n;
    } else
        rk_buf_putn_grow(b, s, n);
}

/* rk_buf_putn of a piece that is short, usually (a name, a type): copied by rk_copy. */
static inline void rk_buf_put_short(rk_buf *b, const char *s, size_t n)
{
    size_t len = b->len;
    if (!b->failed && len + n < b->cap) {
        rk_copy(b->data + len, s, n);
        b->data[len + n] = '\0';
        b->len = len + n;
    } else
        rk_buf_putn_grow(b, s, n);
}

/* At least room bytes free, growing by doubling; -1 (and failed) when it failed. Inline:
 * the lowering asks before every line. */
static inline int rk_buf_room(rk_buf *b, size_t room)
{
    if (b->failed)
        return -1;
    if (b->cap - b->len > room)
        return 0;
    return rk_buf_reserve(b, b->cap > room ? b->cap : room * 2);
}

/* n bytes of s at d, in room the caller made (rk_buf_room); the end of the copy. A line whose
 * pieces' lengths are known is written this way: one room check, no NUL after each piece. */
static inline char *rk_put_at(char *d, const char *s, size_t n)
{
    rk_copy(d, s, n);
    return d + n;
}

/* Append a string literal: its length is known when compiled. */
#define RK_BUF_LIT(b, lit) rk_buf_putn((b), (lit), sizeof(lit) - 1)

/* Append s (the library's strlen and memcpy beat a byte loop that reloads b at every store). */
static inline void rk_buf_puts(rk_buf *b, const char *s) { rk_buf_putn(b, s, strlen(s)); }

/* ---- string-keyed hash map (hashmap.c): open addressing in the arena ----
 * An entry is any struct whose first member is an rk_map_key, allocated in the arena by
 * rk_map_put and never moved (callers keep pointers to entries). Keys are compared by
 * address first (callers usually look a name up by the very string they bound), then by
 * hash and bytes. Entries are never removed (a caller that hides one keeps a flag in it). */
typedef struct rk_map_key {
    const char *key;
    unsigned int hash;          /* rk_hash(key) */
    unsigned int aux;           /* the entry's own (the padding after hash): the map never reads it */
} rk_map_key;

typedef struct rk_map {
    rk_map_key **slots;         /* NULL: empty; in the arena */
    size_t cap, n;              /* cap: 0 or a power of two, at least twice n */
} rk_map;

/* FNV-1a, 32 bits (inline: every lookup hashes its key). */
static inline unsigned int rk_hash(const char *s)
{
    unsigned int h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

void rk_map_init(rk_map *m);
/* The entry of key, or NULL when absent. */
void *rk_map_get(const rk_map *m, const char *key, unsigned int hash);
/* The entry of key, added when absent (entry_size bytes, zeroed, key and hash set), *added
 * saying which (added may be NULL); NULL only when the arena failed. */
void *rk_map_put(rk_map *m, rk_arena *arena, const char *key, unsigned int hash, size_t entry_size, int *added);
/* Room for n entries without a grow (a caller that knows its count up front); -1 when the
 * arena failed. */
int rk_map_reserve(rk_map *m, rk_arena *arena, size_t n);

/* ---- name table (hashmap.c): IR names to entries, by the number a name ends with ----
 * A builder name is `%<hint><counter>`: its trailing number is unique and dense, so the entry
 * of a name whose number slot is free lives in an array at that number (no hashing), and the
 * other names (params, loop names, a number whose slot another name holds) in an rk_map. A
 * name is in the array iff its slot was free when it was put, and slots are never freed, so
 * both ways agree. Entries are size bytes (at least an rk_map_key, their first member), zeroed
 * when added, never moved; keys are compared by address first, then by bytes. */
typedef struct rk_names {
    char *direct;               /* cap entries of size bytes, by number; a NULL key: free */
    size_t cap, size;
    rk_map rest;
} rk_names;

/* A table for names numbered below cap (others go to the map); -1 when the arena failed. */
int rk_names_init(rk_names *t, rk_arena *arena, size_t cap, size_t size);
/* The entry of key, or NULL when absent. */
void *rk_names_get(const rk_names *t, const char *key);
/* The entry of key, added when absent (*added says which; added may be NULL); NULL only when
 * the arena failed. */
void *rk_names_put(rk_names *t, rk_arena *arena, const char *key, int *added);
/* rk_names_put of a key whose trailing digits are exactly number (a builder value's name, put
 * by the value's id): its array entry without reading the digits. A number of 0, past the
 * array or of more digits than the array reads is put by its name. */
#define RK_NAMES_DIGITS 9               /* a name's trailing number: at most this many digits */
#define RK_NAMES_MAX_DIRECT 1000000000  /* 10^RK_NAMES_DIGITS */
void *rk_names_put_number(rk_names *t, rk_arena *arena, long long number, const char *key, int *added);

/* The array entry of a builder value's number, or NULL when it has none (0, past the array, or
 * of more digits than the array reads): where rk_names_at, rk_names_put_at and
 * rk_names_put_number look. */
static inline rk_map_key *rk_names_slot(const rk_names *t, long long number)
{
    if (number <= 0 || number >= RK_NAMES_MAX_DIRECT || (unsigned long long)number >= t->cap)
        return NULL;
    return (rk_map_key *)(void *)(t->direct + (size_t)number * t->size);
}

/* The entry at number when its key is that very string (a builder value's name, looked up by
 * the value's id): no hashing, no digits read; NULL otherwise (then ask rk_names_get). */
static inline void *rk_names_at(const rk_names *t, long long number, const char *key)
{
    rk_map_key *e = rk_names_slot(t, number);
    return e && e->key == key ? e : NULL;
}

/* rk_names_put_number with its common case inline: a builder value defined once, its number's
 * entry still free (every other case, rk_names_put_number). */
static inline void *rk_names_put_at(rk_names *t, rk_arena *arena, long long number, const char *key, int *added)
{
    rk_map_key *e = rk_names_slot(t, number);
    if (e && !e->key) {
        e->key = key;
        if (added)
            *added = 1;
        return e;
    }
    return rk_names_put_number(t, arena, number, key, added);
}

/* ---- list membership (strlist.c) over NULL-terminated lists ---- */
int rk_str_in(const char *s, const char *const *list);      /* s in list; 0 for a NULL s */
int rk_str_index(const char *s, size_t n, const char *const *list); /* list.index(s[0:n]), or -1 */
void rk_str_join(rk_buf *out, const char *sep, const char *const *list); /* sep.join(list) */

/* ---- integer helpers (intmath.c) ---- */
/* Python's // and % (floor) and the ceil/roundup built on them, for any sign of a (b != 0). */
long long rk_floordiv(long long a, long long b);
long long rk_floormod(long long a, long long b);
long long rk_ceildiv(long long a, long long b);
long long rk_roundup(long long a, long long b);

/* ---- number formatting (numfmt.c) ---- */
#define RK_INT_DIGITS 24            /* str() of any long long, with its sign and NUL */
/* Python's str(v) into out; its length. */
size_t rk_fmt_int(long long v, char out[RK_INT_DIGITS]);
void rk_buf_put_int(rk_buf *b, long long v);

/* ---- IR type names (typename.c): spans of a name, Python's slicing ----
 * vec<ELEMxN>, ptr<ELEM,global>, smem<ELEM, [RxC]>, scalars. Where Python raises on a
 * malformed name the parser gives -1 or RK_TYPE_BAD_INT. */
#define RK_TYPE_BAD_INT (-9223372036854775807LL - 1)
/* t.startswith(prefix), a character at a time: it stops at t's NUL, so a name shorter than
 * the prefix is never read past; inlined, it costs no call on the lowering's hot paths. */
static inline int rk_type_has_prefix(const char *t, const char *prefix)
{
    while (*prefix && *t == *prefix) {
        t++;
        prefix++;
    }
    return *prefix == '\0';
}

#define RK_TYPE_IS_VEC(t) rk_type_has_prefix((t), "vec<")
#define RK_TYPE_IS_PTR(t) rk_type_has_prefix((t), "ptr<")
#define RK_TYPE_IS_SMEM(t) rk_type_has_prefix((t), "smem<")

/* Python's int() of s[0:n]: an optional sign and decimal digits, single underscores between
 * digits allowed; RK_TYPE_BAD_INT where int() raises (or past 18 digits). */
long long rk_type_py_int(const char *s, size_t n);
/* vec_elem(t): t[4:t.rindex("x")] for a vec, all of t otherwise; -1 for a vec without 'x'. */
int rk_type_vec_elem(const char *t, const char **elem, size_t *n);
/* vec_len(t): int(t[t.rindex("x") + 1:-1]) for a vec, 1 otherwise. */
long long rk_type_vec_len(const char *t);
/* t[start:t.index(",")] (ptr_elem: start 4, smem_elem: start 5); -1 without a ','. */
int rk_type_elem_before_comma(const char *t, size_t start, const char **elem, size_t *n);
/* smem_shape(t): the two ints of "[RxC]"; -1 where Python raises. */
int rk_type_smem_shape(const char *t, long long *rows, long long *cols);

#endif
