/* test_ir.c: the kernel IR core of the C engine: types, attrs, builder (one counter, the
 * constant cache, sticky errors), printer, verifier and MMA atom table. The byte-for-byte
 * comparison with the Python engine is tests/parity/test_ir_script_parity.py; these are the C-side
 * unit checks, all memory from one arena per test (valgrind: no leaks). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ir.h"
#include "check.h"

static int streq(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

/* The printed kernel (heap; the caller frees it). */
static char *print(const rk_ir_kernel *k, rk_arena *arena)
{
    rk_buf out;
    rk_error err;
    rk_buf_init(&out);
    rk_error_init(&err, arena);
    CHECK(rk_print_ir(k, arena, &out, &err) == 0);
    return rk_buf_take(&out);
}

static void test_types(void)
{
    rk_arena a;
    long long rows = 0, cols = 0;
    rk_arena_init(&a);
    CHECK(streq(rk_vec(&a, "f32", 16), "vec<f32x16>"));
    CHECK(streq(rk_vec_or_scalar(&a, "f16", 1), "f16"));
    CHECK(streq(rk_vec_or_scalar(&a, "f16", 4), "vec<f16x4>"));
    CHECK(streq(rk_ptr(&a, "bf16"), "ptr<bf16,global>"));
    CHECK(streq(rk_smem(&a, "f16", 128, 32), "smem<f16, [128x32]>"));
    CHECK(rk_is_vec("vec<i1x2>") && !rk_is_vec("i32"));
    CHECK(streq(rk_vec_elem(&a, "vec<bf16x8>"), "bf16"));
    CHECK(streq(rk_vec_elem(&a, "i64"), "i64"));
    CHECK(rk_vec_elem(&a, "vec<f32>") == NULL);        /* Python raises: no 'x' */
    CHECK(rk_vec_len("vec<f32x16>") == 16 && rk_vec_len("f32") == 1);
    CHECK(rk_vec_len("vec<f32x-1>") == -1);
    CHECK(rk_vec_len("vec<f32x1_6>") == 16);           /* int("1_6") */
    CHECK(rk_vec_len("vec<f32x>") == RK_IR_BAD_LEN);
    CHECK(rk_vec_len("vec<f32x16]") == 16);            /* t[...:-1] drops any last char */
    CHECK(rk_is_ptr("ptr<f16,global>") && streq(rk_ptr_elem(&a, "ptr<f16,global>"), "f16"));
    CHECK(rk_is_smem("smem<f32, [4x8]>") && streq(rk_smem_elem(&a, "smem<f32, [4x8]>"), "f32"));
    CHECK(streq(rk_smem_elem(&a, "ptr<f16,global>"), "16"));   /* Python's t[5:t.index(",")] */
    CHECK(rk_smem_elem(&a, "i32") == NULL);
    CHECK(rk_smem_shape("smem<f32, [4x8]>", &rows, &cols) == 0 && rows == 4 && cols == 8);
    CHECK(rk_smem_shape("smem<f32, [4x8x2]>", &rows, &cols) == -1);
    CHECK(rk_type_bits("vec<f16x8>") == 128 && rk_type_bits("i1") == 1);
    CHECK(rk_type_bits("rsrc") == 0 && rk_type_bits("vec<i8x4>") == 0);
    CHECK(rk_elem_bytes_of("vec<f32x4>") == 4 && rk_elem_bytes_of("i1") == 0);
    CHECK(rk_ir_is_scalar("bf16") && !rk_ir_is_scalar("i8") && rk_ir_scalar_bits("i64") == 64);
    CHECK(!a.failed);
    rk_arena_free(&a);
}

static void test_attrs(void)
{
    rk_arena a;
    rk_attrs m = {NULL, 0, 0};
    rk_attr *one, *t, *f1, *fh, *s1, *l1, *l2;
    rk_arena_init(&a);
    one = rk_attr_int(&a, 1);
    t = rk_attr_bool(&a, 1);
    f1 = rk_attr_float(&a, 1.0);
    fh = rk_attr_float(&a, 1.5);
    s1 = rk_attr_str(&a, "1");
    CHECK(rk_attr_py_eq(one, t) && rk_attr_py_eq(one, f1) && rk_attr_py_eq(t, f1));  /* 1 == True == 1.0 */
    CHECK(!rk_attr_py_eq(one, fh) && !rk_attr_py_eq(one, s1));
    CHECK(rk_attr_py_cmp_int(fh, 1) == 1 && rk_attr_py_cmp_int(fh, 2) == -1 && rk_attr_py_cmp_int(s1, 1) == -2);
    CHECK(rk_attr_py_eq_int(rk_attr_float(&a, 9007199254740993.0), 9007199254740992LL));
    CHECK(!rk_attr_py_eq_int(rk_attr_float(&a, 9007199254740992.0), 9007199254740993LL)); /* exact */
    l1 = rk_attr_list(&a);
    l2 = rk_attr_list(&a);
    rk_attr_list_append(&a, l1, one);
    rk_attr_list_append(&a, l2, f1);
    CHECK(rk_attr_py_eq(l1, l2) && !rk_attr_py_eq(l1, one));
    CHECK(rk_attrs_set(&a, &m, "b", one) == 0 && rk_attrs_set(&a, &m, "a", t) == 0);
    CHECK(rk_attrs_set(&a, &m, "b", s1) == 0 && m.n == 2 && rk_attrs_get(&m, "b") == s1); /* replaced */
    CHECK(m.items[0].value == s1);                          /* in place, as a dict */
    CHECK(rk_attrs_del(&m, "b") == 1 && rk_attrs_del(&m, "b") == 0 && m.n == 1);
    CHECK(rk_attrs_get(&m, "zz") == NULL);
    CHECK(!a.failed);
    rk_arena_free(&a);
}

/* A fresh arena and a builder of kernel `name` in it. */
static void begin(rk_arena *a, rk_builder *b, const char *name)
{
    rk_arena_init(a);
    rk_b_init(b, a, name, NULL);
}

static void test_counter_and_cache(void)
{
    rk_arena a;
    rk_builder b;
    rk_ir_value *tid, *c1, *c1b, *c2, *ci64, *x, *inner, *inner2, *after, *f, *f2, *t1, *i1;
    rk_ir_carried carried[1];
    rk_ir_for *loop;
    rk_ir_value *results;
    rk_attr v;
    begin(&a, &b, "k");
    tid = rk_b_thread_id(&b);
    c1 = rk_b_const_i32(&b, 1);
    c1b = rk_b_const_i32(&b, 1);
    c2 = rk_b_const_i32(&b, 2);
    memset(&v, 0, sizeof v);
    v.kind = RK_ATTR_INT;
    v.i = 1;
    ci64 = rk_b_constant(&b, "i64", &v);
    CHECK(streq(tid->name, "%tid1") && streq(c1->name, "%c2") && c1b == c1 && streq(c2->name, "%c3"));
    CHECK(streq(ci64->name, "%c4") && streq(ci64->type, "i64"));
    carried[0].name = "acc";
    carried[0].init = tid;
    loop = rk_b_for_begin(&b, c1, c2, c1, "k0", carried, 1, 0);
    CHECK(loop && streq(loop->op->results[0].name, "%for5"));   /* numbered at for_begin */
    CHECK(streq(loop->iv.name, "%k0") && streq(loop->args[0].name, "%acc"));
    inner = rk_b_const_i32(&b, 1);                                /* from the enclosing region */
    inner2 = rk_b_const_i32(&b, 7);                               /* made in the body */
    CHECK(inner == c1 && streq(inner2->name, "%c6"));
    CHECK(rk_b_const_i32(&b, 7) == inner2);
    x = rk_b_add(&b, &loop->args[0], inner2);
    CHECK(streq(x->name, "%add7"));
    results = rk_b_for_end(&b, loop, (const rk_ir_value *const *)&x, 1);
    CHECK(results == loop->op->results);
    after = rk_b_const_i32(&b, 7);                                /* made again after the loop */
    CHECK(after != inner2 && streq(after->name, "%c8"));
    f = rk_b_const_f32(&b, 1);
    v.kind = RK_ATTR_INT;
    f2 = rk_b_constant(&b, "f32", &v);                            /* ("f32", 1) == ("f32", 1.0) */
    CHECK(f2 == f && streq(f->name, "%c9"));
    t1 = rk_b_const_i1(&b, 1);
    i1 = rk_b_const_i1(&b, 5);
    CHECK(t1 == i1 && streq(t1->type, "i1"));
    CHECK(rk_b_ret(&b) == b.kernel && !b.failed && b.counter == 10);
    rk_arena_free(&a);
}

/* The constant cache's keys: a NaN is never equal (never cached), a string never equals a
 * number, a non-integral float only itself; and Python's str() of attr values. */
static void test_cache_keys_and_py_str(void)
{
    rk_arena a;
    rk_builder b;
    rk_attr v, w;
    rk_attr *list;
    rk_buf o;
    rk_ir_value *n1, *n2, *h1, *h2, *s1, *s2;
    begin(&a, &b, "k");
    memset(&v, 0, sizeof v);
    memset(&w, 0, sizeof w);
    v.kind = RK_ATTR_FLOAT;
    v.f = NAN;
    n1 = rk_b_constant(&b, "f32", &v);
    n2 = rk_b_constant(&b, "f32", &v);
    CHECK(n1 && n2 && n1 != n2);
    v.f = 0.5;
    h1 = rk_b_constant(&b, "f32", &v);
    v.f = 0.25;
    h2 = rk_b_constant(&b, "f32", &v);
    v.f = 0.5;
    CHECK(h1 != h2 && rk_b_constant(&b, "f32", &v) == h1);
    w.kind = RK_ATTR_STR;
    w.s = "1";
    s1 = rk_b_constant(&b, "i32", &w);
    v.kind = RK_ATTR_INT;
    v.i = 1;
    s2 = rk_b_constant(&b, "i32", &v);
    CHECK(s1 && s2 && s1 != s2 && rk_b_constant(&b, "i32", &w) == s1);
    CHECK(!b.failed);
    list = rk_attr_list(&a);
    rk_attr_list_append(&a, list, rk_attr_int(&a, -3));
    rk_attr_list_append(&a, list, rk_attr_str(&a, "it's"));
    rk_attr_list_append(&a, list, rk_attr_bool(&a, 1));
    rk_attr_list_append(&a, list, rk_attr_float(&a, 2.0));
    rk_buf_init(&o);
    rk_attr_py_str(&o, list, 0);
    rk_buf_puts(&o, " ");
    rk_attr_py_str(&o, NULL, 0);
    rk_buf_puts(&o, " ");
    rk_attr_py_str(&o, rk_attr_str(&a, "a'b"), 0);
    CHECK(!o.failed && streq(o.data, "[-3, \"it's\", True, 2.0] None a'b"));
    rk_buf_free(&o);
    rk_arena_free(&a);
}

static void test_sticky_errors(void)
{
    rk_arena a;
    rk_builder b;
    rk_error err;
    rk_ir_value *tid, *f;
    rk_ir_op *h;
    rk_arena_init(&a);
    rk_error_init(&err, &a);
    rk_b_init(&b, &a, "k", NULL);
    tid = rk_b_thread_id(&b);
    f = rk_b_const_f32(&b, 1);
    CHECK(rk_b_check(&b, &err) == 0);
    CHECK(rk_b_add(&b, tid, f) == NULL && b.failed);
    CHECK(streq(b.error, "builder: arith.add of i32 and f32"));
    CHECK(rk_b_thread_id(&b) == NULL && rk_b_const_i32(&b, 3) == NULL && rk_b_ret(&b) == NULL);
    CHECK(b.counter == 2);                                        /* nothing after the failure */
    CHECK(b.kernel->entry->n_ops == 2);
    CHECK(streq(b.error, "builder: arith.add of i32 and f32"));   /* the first failure sticks */
    CHECK(rk_b_check(&b, &err) == -1 && err.internal == 1 && streq(err.code, "E_INTERNAL"));
    CHECK(streq(err.message, "builder: arith.add of i32 and f32"));

    rk_b_init(&b, &a, "k", NULL);                                 /* a NULL value: a failure too */
    CHECK(rk_b_add(&b, NULL, NULL) == NULL && b.failed);
    rk_b_init(&b, &a, "k", NULL);
    tid = rk_b_thread_id(&b);
    h = rk_b_if_begin(&b, tid);
    CHECK(h && rk_b_ret(&b) == NULL && streq(b.error, "builder: ret inside an open region"));
    rk_b_init(&b, &a, "k", NULL);
    tid = rk_b_thread_id(&b);
    f = rk_b_const_f32(&b, 1);
    CHECK(rk_b_select(&b, tid, tid, tid) == NULL && streq(b.error, "builder: arith.select of i32, i32, i32"));
    rk_arena_free(&a);
}

/* The hard size limit (docs/kernels.md §9): the op past op_limit fails the build, whichever
 * call makes it (a constant, an scf.if), and nothing more is built. */
static void test_op_limit(void)
{
    rk_arena a;
    rk_builder b;
    rk_error err;
    rk_ir_value *tid;
    rk_arena_init(&a);
    rk_error_init(&err, &a);
    rk_b_init(&b, &a, "k", NULL);
    CHECK(b.op_limit == 0);                                       /* unlimited unless set */
    b.op_limit = 3;
    tid = rk_b_thread_id(&b);
    CHECK(rk_b_lane_id(&b) != NULL && rk_b_const_i32(&b, 7) != NULL && rk_b_check(&b, &err) == 0);
    CHECK(rk_b_const_i32(&b, 7) != NULL && b.num_ops == 3);       /* a cached constant is no op */
    CHECK(rk_b_if_begin(&b, tid) == NULL && b.failed);
    CHECK(streq(b.error, "builder: the kernel exceeds 3 IR ops"));
    CHECK(b.kernel->entry->n_ops == 3 && rk_b_thread_id(&b) == NULL);
    rk_arena_free(&a);
}

static const char *const expected_text =
    "rocke.ir v1\n"
    "kernel @k {\n"
    "  attrs { _x = f:-0.0, a = s:\"q\\\"\\\\\\n\\t\", max_workgroup_size = i:256, waves_per_eu = i:2 }\n"
    "  params {\n"
    "    %A : ptr<f16,global> { noalias = b:true, readonly = b:true }\n"
    "    %n : i32\n"
    "  }\n"
    "  region @entry {\n"
    "    %tid1 : i32 = gpu.thread_id (  ) { dim = i:0 }\n"
    "    %c2 : i32 = arith.constant (  ) { ity = s:\"i32\", value = i:0 }\n"
    "    %cz3 : vec<f32x4> = arith.constant_vec (  ) { ity = s:\"vec<f32x4>\", value = i:0 }\n"
    "    %for4 : vec<f32x4> = scf.for ( %c2, %n, %tid1, %cz3 ) { iter_args = l:[ { name = s:\"%acc\", "
    "type = s:\"vec<f32x4>\" } ], iv = s:\"%k0\", iv_type = s:\"i32\", unroll = b:true }\n"
    "      region @body {\n"
    "        %cmp5 : i1 = arith.cmp ( %k0, %n ) { pred = s:\"slt\" }\n"
    "        scf.if ( %cmp5 )\n"
    "          region @then {\n"
    "            tile.sync (  )\n"
    "          }\n"
    "        scf.yield ( %acc ) { num = i:1 }\n"
    "      }\n"
    "    %c6 : f32 = arith.constant (  ) { ity = s:\"f32\", value = f:1e+16 }\n"
    "    cf.return (  )\n"
    "  }\n"
    "}\n";

static rk_ir_kernel *small_kernel(rk_arena *a, rk_builder *b)
{
    rk_attrs kattrs = {NULL, 0, 0}, pattrs = {NULL, 0, 0};
    rk_ir_value *A, *n, *tid, *c0, *z, *cmp;
    rk_ir_carried carried[1];
    rk_ir_for *loop;
    rk_ir_op *h;
    rk_attr big;
    rk_attrs_set(a, &kattrs, "max_workgroup_size", rk_attr_int(a, 256));
    rk_attrs_set(a, &kattrs, "waves_per_eu", rk_attr_int(a, 2));
    rk_attrs_set(a, &kattrs, "a", rk_attr_str(a, "q\"\\\n\t"));
    rk_attrs_set(a, &kattrs, "_x", rk_attr_float(a, -0.0));
    rk_attrs_set(a, &pattrs, "readonly", rk_attr_bool(a, 1));
    rk_attrs_set(a, &pattrs, "noalias", rk_attr_bool(a, 1));
    rk_b_init(b, a, "k", &kattrs);
    A = rk_b_param(b, "A", "ptr<f16,global>", &pattrs);
    n = rk_b_param(b, "n", "i32", NULL);
    tid = rk_b_thread_id(b);
    c0 = rk_b_const_i32(b, 0);
    z = rk_b_zeros(b, "vec<f32x4>");
    carried[0].name = "acc";
    carried[0].init = z;
    loop = rk_b_for_begin(b, c0, n, tid, "k0", carried, 1, 1);
    cmp = rk_b_cmp(b, "slt", &loop->iv, n);
    h = rk_b_if_begin(b, cmp);
    rk_b_sync(b);
    rk_b_if_end(b, h);
    rk_b_for_end(b, loop, (const rk_ir_value *const *)&loop->args, 1);
    memset(&big, 0, sizeof big);
    big.kind = RK_ATTR_FLOAT;
    big.f = 1e16;
    rk_b_constant(b, "f32", &big);
    (void)A;
    return rk_b_ret(b);
}

static void test_printer(void)
{
    rk_arena a;
    rk_builder b;
    rk_ir_kernel *k;
    char *text;
    rk_arena_init(&a);
    k = small_kernel(&a, &b);
    CHECK(k != NULL);
    text = print(k, &a);
    CHECK(streq(text, expected_text));
    if (!streq(text, expected_text))
        fprintf(stderr, "got:\n%s", text ? text : "(null)");
    free(text);
    CHECK(rk_verify_kernel(k, &a) == NULL && !a.failed);
    rk_arena_free(&a);
}

static void float_is(double v, const char *want)
{
    rk_buf out;
    rk_buf_init(&out);
    rk_format_float(&out, v);
    CHECK(streq(out.data, want));
    if (!streq(out.data, want))
        fprintf(stderr, "format_float: got %s, want %s\n", out.data, want);
    rk_buf_free(&out);
}

static void test_format_float(void)
{
    float_is(0.0, "0.0");
    float_is(-0.0, "-0.0");
    float_is(2.0, "2.0");
    float_is(-1.0, "-1.0");
    float_is(9007199254740991.0, "9007199254740991.0");
    float_is(1e15, "1000000000000000.0");
    float_is(9999999999999998.0, "9999999999999998.0");
    float_is(1e16, "1e+16");
    float_is(0.1, "0.1");
    float_is(0.0001, "0.0001");
    float_is(0.00001, "1e-05");
    float_is(1.5e-7, "1.5e-07");
    float_is(123456789.125, "123456789.125");
    float_is(5e-324, "5e-324");
    float_is(1.7976931348623157e308, "1.7976931348623157e+308");
    float_is(1e22, "1e+22");
    float_is(1e23, "1e+23");
    float_is(0.3, "0.3");
    float_is(2.0 / 3.0, "0.6666666666666666");
}

static void test_escape_and_sort(void)
{
    rk_arena a;
    rk_buf out;
    rk_attrs m = {NULL, 0, 0};
    rk_attr *list, *inner;
    int i;
    static const char *const keys[20] = {"t", "s", "r", "q", "p", "o", "n", "m", "l", "k",
                                         "j", "i", "h", "g", "f", "e", "d", "c", "b", "a"};
    rk_arena_init(&a);
    rk_buf_init(&out);
    rk_escape(&out, "a\\b\"c\nd\te");
    CHECK(streq(out.data, "a\\\\b\\\"c\\nd\\te"));
    rk_buf_free(&out);
    for (i = 0; i < 20; i++)                 /* more keys than the printer's small-map array */
        rk_attrs_set(&a, &m, keys[i], rk_attr_int(&a, i));
    rk_attrs_set(&a, &m, "B", rk_attr_bool(&a, 0));
    rk_attrs_set(&a, &m, "_", rk_attr_str(&a, ""));
    list = rk_attr_list(&a);
    inner = rk_attr_map(&a);
    rk_attr_list_append(&a, list, inner);
    rk_attr_list_append(&a, list, rk_attr_list(&a));
    rk_attrs_set(&a, &m, "Z", list);
    rk_print_ir_attr_map(&a, &out, &m);
    CHECK(streq(out.data, "{ B = b:false, Z = l:[ {  }, l:[  ] ], _ = s:\"\", a = i:19, b = i:18, c = i:17, "
                          "d = i:16, e = i:15, f = i:14, g = i:13, h = i:12, i = i:11, j = i:10, k = i:9, "
                          "l = i:8, m = i:7, n = i:6, o = i:5, p = i:4, q = i:3, r = i:2, s = i:1, t = i:0 }"));
    rk_buf_free(&out);
    rk_arena_free(&a);
}

/* The verdict of a kernel built by small_kernel and then edited by `edit`. */
static void verdict_is(void (*edit)(rk_arena *, rk_ir_kernel *), const char *want)
{
    rk_arena a;
    rk_builder b;
    rk_ir_kernel *k;
    const char *got;
    rk_arena_init(&a);
    k = small_kernel(&a, &b);
    edit(&a, k);
    got = rk_verify_kernel(k, &a);
    CHECK(streq(got, want));
    if (!streq(got, want))
        fprintf(stderr, "verify: got %s, want %s\n", got ? got : "(ok)", want);
    rk_arena_free(&a);
}

static void edit_entry_name(rk_arena *a, rk_ir_kernel *k)
{
    (void)a;
    k->entry->name = "main";
}
static void edit_drop_return(rk_arena *a, rk_ir_kernel *k)
{
    (void)a;
    k->entry->n_ops--;
}
static void edit_param_twice(rk_arena *a, rk_ir_kernel *k)
{
    (void)a;
    k->params[1]->value.name = "%A";
}
static void edit_drop_yield(rk_arena *a, rk_ir_kernel *k)
{
    (void)a;
    k->entry->ops[3]->regions[0]->n_ops--;
}
static void edit_if_cond(rk_arena *a, rk_ir_kernel *k)
{
    (void)a;
    k->entry->ops[3]->regions[0]->ops[1]->operands[0] = k->params[1]->value;  /* %n : i32 */
}
static void edit_iv_type(rk_arena *a, rk_ir_kernel *k)
{
    rk_attrs_set(a, &k->entry->ops[3]->attrs, "iv_type", rk_attr_str(a, "i64"));
}
static void edit_constant_tag(rk_arena *a, rk_ir_kernel *k)
{
    rk_attrs_set(a, &k->entry->ops[1]->attrs, "value", rk_attr_float(a, 0.0));
}
static void edit_use_out_of_scope(rk_arena *a, rk_ir_kernel *k)
{
    (void)a;
    k->entry->ops[1]->operands = k->entry->ops[3]->regions[0]->ops[0]->results; /* %cmp5 */
    k->entry->ops[1]->n_operands = 1;
}
static void edit_unknown_op(rk_arena *a, rk_ir_kernel *k)
{
    (void)a;
    k->entry->ops[0]->name = "gpu.warp_id";
    k->entry->ops[0]->code = RK_OP_UNKNOWN;  /* as the builder codes an unknown name */
}

/* An operand renamed to a visible param's name keeps its builder id: the verifier still goes
 * by the name (the id only stands for a name it has seen defined). */
static void edit_use_renamed(rk_arena *a, rk_ir_kernel *k)
{
    rk_ir_value *use = rk_alloc(a, sizeof *use);
    *use = k->entry->ops[3]->regions[0]->ops[0]->results[0]; /* %cmp5, id 5 */
    use->name = k->params[1]->value.name;                    /* %n : i32 */
    use->type = "i64";
    k->entry->ops[3]->regions[0]->ops[1]->operands = use;
}

static void test_verifier(void)
{
    verdict_is(edit_use_renamed, "entry op 3 (scf.for): entry.body op 1 (scf.if): %n is used as i64 but "
                                 "defined as i32");
    verdict_is(edit_entry_name, "the kernel region must be @entry");
    verdict_is(edit_drop_return, "the kernel must end with cf.return");
    verdict_is(edit_param_twice, "param: %A is defined twice");
    verdict_is(edit_drop_yield, "entry op 3 (scf.for): scf.for body must end with scf.yield");
    verdict_is(edit_if_cond, "entry op 3 (scf.for): entry.body op 1 (scf.if): "
                             "scf.if takes one i1 condition and gives no results");
    verdict_is(edit_iv_type, "entry op 3 (scf.for): scf.for bounds and iv must be i32");
    verdict_is(edit_constant_tag, "entry op 1 (arith.constant): arith.constant value has the wrong tag");
    verdict_is(edit_use_out_of_scope, "entry op 1 (arith.constant): %cmp5 is not visible");
    verdict_is(edit_unknown_op, "entry op 0 (gpu.warp_id): unknown op gpu.warp_id");
}

static void test_atoms(void)
{
    rk_arena a;
    rk_atom atom;
    const char *types[3];
    rk_arena_init(&a);
    CHECK(rk_atom_by_op_id("mfma_f32_32x32x8_f16", &atom) == 1);
    CHECK(streq(atom.kind, "mfma") && atom.m == 32 && atom.k == 8 && atom.frag == 4 && atom.c_len == 16);
    CHECK(rk_atom_by_op_id("wmma_f32_16x16x16_bf16", &atom) == 1 && atom.frag == 16 && atom.c_len == 8);
    CHECK(rk_atom_by_op_id("wmma_gfx12_f32_16x16x16_f16", &atom) == 1 && atom.frag == 8);
    CHECK(rk_atom_by_op_id("wmma_gfx1250_f32_16x16x4_f32", &atom) == 1 && atom.frag == 2);
    CHECK(rk_atom_by_op_id("mfma_f32_016x16x16_f16", &atom) == 0);  /* not the canonical spelling */
    CHECK(rk_atom_by_op_id("mfma_f32_16x16x16_f8", &atom) == 0);
    CHECK(rk_atom_by_op_id("mfma_f32_16x16x4_bf16", &atom) == 0);   /* not in the table */
    CHECK(rk_atom_by_op_id("mfma_f32_99999999999x16x16_f16", &atom) == 0);
    CHECK(rk_atom_types(&a, "mfma_f32_16x16x4_f32", types) == 1);
    CHECK(streq(types[0], "f32") && streq(types[1], "f32") && streq(types[2], "vec<f32x4>"));
    CHECK(rk_atom_types(&a, "wmma_gfx1250_f32_16x16x32_bf16", types) == 1);
    CHECK(streq(types[0], "vec<bf16x16>") && streq(types[2], "vec<f32x8>"));
    CHECK(rk_atom_types(&a, "nope", types) == 0);
    atom = rk_atom_for(rk_target_for("gfx942"), "fp16", 16, 16, 16);
    CHECK(streq(atom.op_id, "mfma_f32_16x16x16_f16"));
    atom = rk_atom_for(rk_target_for("gfx1151"), "bf16", 16, 16, 16);
    CHECK(streq(atom.op_id, "wmma_f32_16x16x16_bf16") && streq(rk_atom_kind(rk_target_for("gfx1151")), "wmma_gfx11"));
    atom = rk_atom_for(rk_target_for("gfx1201"), "fp16", 16, 16, 16);
    CHECK(streq(atom.op_id, "wmma_gfx12_f32_16x16x16_f16"));
    atom = rk_atom_for(rk_target_for("gfx1250"), "fp32", 16, 16, 4);
    CHECK(streq(atom.op_id, "wmma_gfx1250_f32_16x16x4_f32") && rk_atom_known(&atom));
    CHECK(streq(rk_mma_ir_elem("fp16"), "f16") && rk_mma_ir_elem("f16") == NULL);
    rk_arena_free(&a);
}

/* A kernel of many values: the verifier's scope table and the constant cache grow. */
/* i32 constants past the small ones, found by their value: two values of one other_i32 slot
 * (1000 and 1064) each find their own constant, and one made in a loop body is made again
 * after the body is closed (its entry is dead then). */
static void test_other_i32(void)
{
    rk_arena a;
    rk_builder b;
    rk_ir_value *c1000, *c1064, *inner, *after;
    rk_ir_for *loop;
    begin(&a, &b, "k");
    c1000 = rk_b_const_i32(&b, 1000);
    c1064 = rk_b_const_i32(&b, 1064);
    CHECK(c1000 && c1064 && c1000 != c1064);
    CHECK(rk_b_const_i32(&b, 1000) == c1000 && rk_b_const_i32(&b, 1064) == c1064);
    CHECK(rk_b_const_i32(&b, 1000) == c1000 && rk_b_const_i32(&b, -24) != c1000);
    loop = rk_b_for_begin(&b, c1000, c1064, c1000, "k0", NULL, 0, 0);
    inner = rk_b_const_i32(&b, 5000);
    CHECK(inner && rk_b_const_i32(&b, 5000) == inner && rk_b_const_i32(&b, 1064) == c1064);
    CHECK(rk_b_for_end(&b, loop, NULL, 0) != NULL || loop->op->n_results == 0);
    after = rk_b_const_i32(&b, 5000);
    CHECK(after && after != inner && rk_b_const_i32(&b, 5000) == after);
    CHECK(rk_b_ret(&b) && !b.failed && rk_verify_kernel(b.kernel, &a) == NULL);
    rk_arena_free(&a);
}

/* A hint that ends in a digit: the name's trailing number ("%x12") is not the value's number, so
 * the value has no id, and a use carrying a copy of the name still finds it by the name (it
 * would look in slot 12 of the verifier's table had the name been put at slot 2). */
static void test_digit_hint(void)
{
    rk_arena a;
    rk_builder b;
    rk_ir_value *tid, *x, use;
    const rk_ir_value *operand = &use;
    char copy[16];
    begin(&a, &b, "k");
    tid = rk_b_thread_id(&b);
    x = rk_b_value_op(&b, "gpu.readfirstlane", (const rk_ir_value *const *)&tid, 1, "x1", "i32", NULL);
    CHECK(x && streq(x->name, "%x12") && x->id == 0 && tid->id == 1);
    use = *x;
    strcpy(copy, x->name);
    use.name = copy;
    CHECK(rk_b_value_op(&b, "gpu.readfirstlane", &operand, 1, "y", "i32", NULL) != NULL);
    CHECK(rk_b_ret(&b) && rk_verify_kernel(b.kernel, &a) == NULL && !a.failed);
    rk_arena_free(&a);
}

static void test_large(void)
{
    rk_arena a;
    rk_builder b;
    rk_ir_value *x;
    rk_ir_kernel *k;
    int i;
    begin(&a, &b, "big");
    x = rk_b_thread_id(&b);
    for (i = 0; i < 20000; i++) {
        rk_ir_value *c = rk_b_const_i32(&b, i % 1000);
        x = rk_b_add(&b, x, c);
    }
    k = rk_b_ret(&b);
    CHECK(k && b.counter == 1 + 1000 + 20000);
    CHECK(rk_verify_kernel(k, &a) == NULL && !a.failed);
    rk_arena_free(&a);
}

int main(void)
{
    test_types();
    test_attrs();
    test_counter_and_cache();
    test_cache_keys_and_py_str();
    test_sticky_errors();
    test_op_limit();
    test_printer();
    test_format_float();
    test_escape_and_sort();
    test_verifier();
    test_atoms();
    test_digit_hint();
    test_other_i32();
    test_large();
    return check_failures != 0;
}
