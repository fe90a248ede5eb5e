/* test_support.c: the support layer every stage uses (support.h): the hash map, the
 * buffer's exact reserve and inline appends (the rest of the buffer: test_buf.c), the
 * name table, the type-name parser, number formatting, list membership, Python's integer
 * division. */
#include <string.h>
#include <stdio.h>
#include "../src/internal.h"
#include "check.h"

typedef struct test_entry {
    rk_map_key k;
    int value;
} test_entry;

static void test_map_put_get(void)
{
    rk_arena arena;
    rk_map m;
    test_entry *e;
    int added = -1;
    char key[16];
    rk_arena_init(&arena);
    rk_map_init(&m);
    CHECK(rk_map_get(&m, "a", rk_hash("a")) == NULL); /* an empty map has no slots */
    e = rk_map_put(&m, &arena, "a", rk_hash("a"), sizeof *e, &added);
    CHECK(e && added == 1 && e->value == 0 && strcmp(e->k.key, "a") == 0);
    e->value = 7;
    /* the same bytes at another address find the same entry */
    strcpy(key, "a");
    CHECK(rk_map_get(&m, key, rk_hash(key)) == e);
    CHECK(rk_map_put(&m, &arena, key, rk_hash(key), sizeof *e, &added) == e && added == 0);
    CHECK(e->value == 7 && m.n == 1);
    CHECK(rk_map_get(&m, "b", rk_hash("b")) == NULL);
    CHECK(rk_map_put(&m, &arena, "b", rk_hash("b"), sizeof *e, NULL) != e);
    CHECK(m.n == 2);
    rk_arena_free(&arena);
}

/* Growth keeps every entry where it was (callers hold pointers to entries). */
static void test_map_growth(void)
{
    rk_arena arena;
    rk_map m;
    static test_entry *entries[5000];
    static char keys[5000][8];
    int i, ok = 1;
    rk_arena_init(&arena);
    rk_map_init(&m);
    for (i = 0; i < 5000; i++) {
        sprintf(keys[i], "%%v%d", i);
        entries[i] = rk_map_put(&m, &arena, keys[i], rk_hash(keys[i]), sizeof(test_entry), NULL);
        if (!entries[i])
            ok = 0;
        else {
            CHECK(entries[i]->k.aux == 0); /* the owner's field: zero when added */
            entries[i]->value = i;
            entries[i]->k.aux = (unsigned int)i + 1;
        }
    }
    CHECK(ok && m.n == 5000);
    CHECK(m.cap >= 2 * m.n && (m.cap & (m.cap - 1)) == 0);
    for (i = 0; i < 5000; i++)
        if (rk_map_get(&m, keys[i], rk_hash(keys[i])) != entries[i] || entries[i]->value != i
            || entries[i]->k.aux != (unsigned int)i + 1)
            ok = 0;
    CHECK(ok);
    rk_arena_free(&arena);
}

/* Keys with the same hash are told apart by their bytes. */
static void test_map_collisions(void)
{
    rk_arena arena;
    rk_map m;
    test_entry *x, *y;
    rk_arena_init(&arena);
    rk_map_init(&m);
    x = rk_map_put(&m, &arena, "x", 42u, sizeof *x, NULL);
    y = rk_map_put(&m, &arena, "y", 42u, sizeof *y, NULL);
    CHECK(x && y && x != y);
    CHECK(rk_map_get(&m, "x", 42u) == x && rk_map_get(&m, "y", 42u) == y);
    CHECK(rk_map_get(&m, "z", 42u) == NULL);
    CHECK(rk_hash("") == 2166136261u && rk_hash("a") != rk_hash("b"));
    rk_arena_free(&arena);
}

/* One exact allocation, then appends that fit take no other. */
static void test_buf_reserve(void)
{
    rk_buf b;
    char *before;
    int i;
    rk_buf_init(&b);
    CHECK(rk_buf_reserve(&b, 100) == 0);
    CHECK(b.cap == 101 && b.len == 0 && b.data && b.data[0] == '\0');
    before = b.data;
    for (i = 0; i < 10; i++)
        rk_buf_putn(&b, "0123456789", 10);
    CHECK(b.data == before && b.len == 100 && b.data[100] == '\0');
    CHECK(strncmp(b.data + 90, "0123456789", 10) == 0);
    CHECK(rk_buf_reserve(&b, 0) == 0 && b.cap == 101);
    rk_buf_puts(&b, "x"); /* past the reserve: the slow path grows */
    CHECK(b.len == 101 && b.cap > 102 && strcmp(b.data + 100, "x") == 0);
    rk_buf_free(&b);
}

static void test_buf_room_and_puts(void)
{
    rk_buf b;
    rk_buf_init(&b);
    CHECK(rk_buf_room(&b, 10) == 0 && b.cap - b.len > 10);
    rk_buf_puts(&b, "");
    CHECK(b.len == 0 && b.data[0] == '\0');
    rk_buf_putn(&b, "abc", 3);
    rk_buf_puts(&b, "a string longer than the sixteen bytes of the inline copy");
    CHECK(strcmp(b.data, "abca string longer than the sixteen bytes of the inline copy") == 0);
    CHECK(b.len == strlen(b.data));
    CHECK(rk_buf_room(&b, 5000) == 0 && b.cap - b.len > 5000);
    b.failed = 1; /* a failed buffer takes no more */
    rk_buf_puts(&b, "more");
    CHECK(rk_buf_room(&b, 1) == -1 && rk_buf_reserve(&b, 1) == -1);
    CHECK(b.len == strlen("abca string longer than the sixteen bytes of the inline copy"));
    rk_buf_free(&b);
}

static int span_is(const char *elem, size_t n, const char *want)
{
    return n == strlen(want) && strncmp(elem, want, n) == 0;
}

static void test_type_names(void)
{
    const char *elem = NULL;
    size_t n = 0;
    long long rows = 0, cols = 0;
    CHECK(RK_TYPE_IS_VEC("vec<f16x8>") && !RK_TYPE_IS_VEC("f16") && !RK_TYPE_IS_VEC("ve"));
    CHECK(RK_TYPE_IS_PTR("ptr<f32,global>") && RK_TYPE_IS_SMEM("smem<f16, [64x32]>"));
    CHECK(rk_type_vec_elem("vec<f16x8>", &elem, &n) == 0 && span_is(elem, n, "f16"));
    CHECK(rk_type_vec_elem("i32", &elem, &n) == 0 && span_is(elem, n, "i32"));
    CHECK(rk_type_vec_elem("vec<f16>", &elem, &n) == -1);           /* no 'x': Python raises */
    CHECK(rk_type_vec_elem("vec<x4>", &elem, &n) == 0 && n == 0);  /* t[4:4] */
    CHECK(rk_type_vec_len("vec<f16x8>") == 8 && rk_type_vec_len("f32") == 1);
    CHECK(rk_type_vec_len("vec<f16x1_6>") == 16);                   /* int("1_6") */
    CHECK(rk_type_vec_len("vec<f16>") == RK_TYPE_BAD_INT && rk_type_vec_len("vec<f16x>") == RK_TYPE_BAD_INT);
    CHECK(rk_type_elem_before_comma("ptr<f32,global>", 4, &elem, &n) == 0 && span_is(elem, n, "f32"));
    CHECK(rk_type_elem_before_comma("smem<f16, [64x32]>", 5, &elem, &n) == 0 && span_is(elem, n, "f16"));
    CHECK(rk_type_elem_before_comma("ptr<f32>", 4, &elem, &n) == -1);
    CHECK(rk_type_elem_before_comma("a,", 5, &elem, &n) == 0 && n == 0); /* start past the comma */
    CHECK(rk_type_smem_shape("smem<f16, [64x32]>", &rows, &cols) == 0 && rows == 64 && cols == 32);
    CHECK(rk_type_smem_shape("smem<f16, [64x32x2]>", &rows, &cols) == -1);
    CHECK(rk_type_smem_shape("smem<f16, 64x32>", &rows, &cols) == -1);
    CHECK(rk_type_py_int("-12", 3) == -12 && rk_type_py_int("+7", 2) == 7);
    CHECK(rk_type_py_int("1__2", 4) == RK_TYPE_BAD_INT && rk_type_py_int("_1", 2) == RK_TYPE_BAD_INT);
    CHECK(rk_type_py_int("1_", 2) == RK_TYPE_BAD_INT && rk_type_py_int("", 0) == RK_TYPE_BAD_INT);
    CHECK(rk_type_py_int("1234567890123456789", 19) == RK_TYPE_BAD_INT); /* past 18 digits */
}

static void test_fmt_int(void)
{
    char d[RK_INT_DIGITS];
    rk_buf b;
    CHECK(rk_fmt_int(0, d) == 1 && strcmp(d, "0") == 0);
    CHECK(rk_fmt_int(-42, d) == 3 && strcmp(d, "-42") == 0);
    CHECK(rk_fmt_int(9223372036854775807LL, d) == 19 && strcmp(d, "9223372036854775807") == 0);
    CHECK(rk_fmt_int(-9223372036854775807LL - 1, d) == 20 && strcmp(d, "-9223372036854775808") == 0);
    {
        /* two digits at a time: every length and sign against printf */
        long long v;
        char want[32];
        for (v = -12000; v <= 12000; v++) {
            snprintf(want, sizeof want, "%lld", v);
            CHECK(rk_fmt_int(v, d) == strlen(want) && strcmp(d, want) == 0);
        }
        for (v = 1; v < 100000000000000000LL; v = v * 10 + 7) { /* to 18 digits, no overflow */
            snprintf(want, sizeof want, "%lld", v);
            CHECK(rk_fmt_int(v, d) == strlen(want) && strcmp(d, want) == 0);
        }
    }
    rk_buf_init(&b);
    rk_buf_put_int(&b, 12);
    rk_buf_put_int(&b, -3);
    CHECK(!b.failed && strcmp(b.data, "12-3") == 0);
    rk_buf_free(&b);
}

static void test_str_lists(void)
{
    static const char *const modes[] = {"spec", "ir", "ll", NULL};
    static const char *const none[] = {NULL};
    rk_buf b;
    CHECK(rk_str_in("ir", modes) && rk_str_in("ll", modes) && !rk_str_in("i", modes));
    CHECK(!rk_str_in("", modes) && !rk_str_in(NULL, modes) && !rk_str_in("ir", none));
    rk_buf_init(&b);
    rk_str_join(&b, ", ", modes);
    rk_str_join(&b, "|", none);
    CHECK(!b.failed && strcmp(b.data, "spec, ir, ll") == 0);
    rk_buf_free(&b);
}

static void test_int_math(void)
{
    CHECK(rk_floordiv(7, 2) == 3 && rk_floordiv(-7, 2) == -4 && rk_floordiv(7, -2) == -4);
    CHECK(rk_floordiv(-7, -2) == 3 && rk_floordiv(-8, 2) == -4 && rk_floordiv(0, 5) == 0);
    CHECK(rk_floormod(7, 3) == 1 && rk_floormod(-7, 3) == 2 && rk_floormod(7, -3) == -2);
    CHECK(rk_floormod(-6, 3) == 0);
    CHECK(rk_ceildiv(7, 2) == 4 && rk_ceildiv(-7, 2) == -3 && rk_ceildiv(8, 2) == 4);
    CHECK(rk_roundup(7, 4) == 8 && rk_roundup(8, 4) == 8 && rk_roundup(-7, 4) == -4);
}

/* The name table: a name goes to the array at its trailing number when that slot is free, else
 * to the map; both ways find it by its bytes, and rk_names_at only by the very string. */
static void test_names(void)
{
    rk_arena arena;
    rk_names t;
    test_entry *add7, *e;
    int added = -1;
    char copy[16];
    const char *add7_name = "%add7", *c7 = "%c7", *param = "%X", *big = "%v1234567890";
    rk_arena_init(&arena);
    CHECK(rk_names_init(&t, &arena, 16, sizeof(test_entry)) == 0 && t.cap == 16);
    CHECK(rk_names_get(&t, add7_name) == NULL && rk_names_at(&t, 7, add7_name) == NULL);
    add7 = rk_names_put(&t, &arena, add7_name, &added);
    CHECK(add7 && added == 1 && add7->value == 0 && t.rest.n == 0);
    add7->value = 7;
    CHECK(rk_names_at(&t, 7, add7_name) == add7);
    strcpy(copy, add7_name);
    CHECK(rk_names_at(&t, 7, copy) == NULL);  /* another string: by its bytes only */
    CHECK(rk_names_get(&t, copy) == add7);
    CHECK(rk_names_put(&t, &arena, copy, &added) == add7 && added == 0);
    /* the same number, another name: the map */
    e = rk_names_put(&t, &arena, c7, &added);
    CHECK(e && e != add7 && added == 1 && t.rest.n == 1);
    CHECK(rk_names_get(&t, c7) == e && rk_names_at(&t, 7, c7) == NULL);
    /* no digits, a number past the array, more than 9 digits: the map */
    CHECK(rk_names_put(&t, &arena, param, NULL) != NULL && rk_names_get(&t, param) != NULL);
    CHECK(rk_names_put(&t, &arena, "%b99", NULL) != NULL && rk_names_get(&t, "%b99") != NULL);
    CHECK(rk_names_put(&t, &arena, big, NULL) != NULL && rk_names_get(&t, big) != NULL);
    CHECK(t.rest.n == 4);
    /* a free slot: never put */
    CHECK(rk_names_get(&t, "%add8") == NULL && rk_names_get(&t, "%add0") == NULL);
    CHECK(rk_names_at(&t, 0, add7_name) == NULL && rk_names_at(&t, 16, add7_name) == NULL);
    rk_arena_free(&arena);
}

/* rk_names_put_at (and rk_names_put_number, its way for all but a free slot): by the number,
 * the entry rk_names_put would give (the array's at that number, or the map's when another name
 * holds it or the number is 0 or past the array). */
static void test_names_put_at(void)
{
    rk_arena arena;
    rk_names t;
    test_entry *add5, *c5, *e;
    int added = -1;
    char copy[16];
    rk_arena_init(&arena);
    CHECK(rk_names_init(&t, &arena, 16, sizeof(test_entry)) == 0);
    add5 = rk_names_put_at(&t, &arena, 5, "%add5", &added);
    CHECK(add5 && added == 1 && t.rest.n == 0);
    strcpy(copy, "%add5");
    CHECK(rk_names_get(&t, copy) == add5);                   /* by its name: the same entry */
    CHECK(rk_names_put_at(&t, &arena, 5, copy, &added) == add5 && added == 0);
    CHECK(rk_names_put(&t, &arena, copy, &added) == add5 && added == 0);
    c5 = rk_names_put_at(&t, &arena, 5, "%c5", &added);      /* slot 5 is another name's */
    CHECK(c5 && c5 != add5 && added == 1 && t.rest.n == 1 && rk_names_get(&t, "%c5") == c5);
    e = rk_names_put_at(&t, &arena, 0, "%X", &added);        /* no id: by the name */
    CHECK(e && added == 1 && t.rest.n == 2 && rk_names_get(&t, "%X") == e);
    e = rk_names_put_at(&t, &arena, 99, "%b99", &added);     /* past the array */
    CHECK(e && added == 1 && t.rest.n == 3 && rk_names_get(&t, "%b99") == e);
    e = rk_names_put_at(&t, &arena, 9, "%d9", &added);
    CHECK(e && added == 1 && t.rest.n == 3 && rk_names_get(&t, "%d9") == e);
    CHECK(rk_names_put_number(&t, &arena, 9, "%d9", &added) == e && added == 0);
    e = rk_names_put_number(&t, &arena, 10, "%e10", &added);  /* a free slot, the long way */
    CHECK(e && added == 1 && t.rest.n == 3 && rk_names_get(&t, "%e10") == e);
    rk_arena_free(&arena);
}

int main(void)
{
    test_map_put_get();
    test_map_growth();
    test_map_collisions();
    test_names();
    test_names_put_at();
    test_buf_reserve();
    test_buf_room_and_puts();
    test_type_names();
    test_fmt_int();
    test_str_lists();
    test_int_math();
    return check_failures != 0;
}
