/* lower_driver.c: runs builder scripts through the C engine's kernel-IR builder, then lowers
 * each kernel to LLVM IR (rocke_c/src/lower_ll.c) for every arch and flavor. The twin of
 * tests/tools/ll_script.py; tests/parity/test_ll_parity.py compares the two byte for byte. The
 * script interpreter is rocke_c/tests/ir_driver.c's, included whole (its main renamed).
 *
 *     lower_driver SCRIPT...            -> for each script, "<len>\n<output>\n" on stdout
 *     lower_driver --time N SCRIPT      -> lowers the script's kernel N times for gfx950
 *                                          llvm22 and prints the mean time per lowering
 *
 * Output of a script:
 *     script error: line N: <what>\n               a malformed script (exit status 1)
 *     error: <builder failure>\n                   the builder failed: nothing is lowered
 *     verify: ok|fail\n                           the verifier's verdict (its messages: ir_driver)
 *     then for each arch (gfx942 gfx950 gfx1151 gfx1201 gfx1250) and flavor (llvm20 llvm22
 *     llvm23): "== <arch> <flavor>\n" and the module, or "lower error: <message>\n", or
 *     "lower crash\n" where the kernel is malformed in a way Python itself crashes on.
 * A line "# lower-targets: ARCH:FLAVOR ..." replaces the 15 targets (to reach the checks of
 * an unknown arch or flavor). The kernel is lowered even when it does not verify, to reach
 * the lowering's own checks.
 * One arena per script, released before the next: nothing leaks (ASan, valgrind). */
#define main rk_ir_driver_main
#include "ir_driver.c"
#undef main
#include <time.h>
#include "../src/lower.h"

static const char *const archs[] = {"gfx942", "gfx950", "gfx1151", "gfx1201", "gfx1250"};
static const char *const flavors[] = {"llvm20", "llvm22", "llvm23"};

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && strcmp(s + n - m, tail) == 0;
}

/* One lowering's record into out. */
static void lower_one(const rk_ir_kernel *kernel, const char *arch, const char *flavor, rk_buf *out)
{
    rk_arena arena;
    rk_error err;
    rk_buf text;
    rk_arena_init(&arena);
    rk_error_init(&err, &arena);
    rk_buf_init(&text);
    rk_buf_printf(out, "== %s %s\n", arch, flavor);
    if (rk_lower_kernel(kernel, arch, flavor, &arena, &text, &err) == 0)
        rk_buf_putn(out, text.data, text.len);
    else if (ends_with(err.message, "(an unverified kernel)"))
        rk_buf_puts(out, "lower crash\n");
    else {
        rk_buf_puts(out, "lower error: ");
        rk_buf_puts(out, err.message);
        rk_buf_puts(out, "\n");
    }
    rk_buf_free(&text);
    rk_arena_free(&arena);
}

#define TARGETS_TAG "# lower-targets:"

/* The text after a "# lower-targets:" line's tag (up to its end), or NULL. */
static const char *find_targets(const char *text, size_t len)
{
    size_t pos = 0, n = strlen(TARGETS_TAG);
    while (pos < len) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len;
        if (end - pos >= n && memcmp(text + pos, TARGETS_TAG, n) == 0)
            return text + pos + n;
        pos = end + 1;
    }
    return NULL;
}

/* Lowers for each ARCH:FLAVOR word of the directive (blank-separated, up to the newline). */
static void lower_targets(const rk_ir_kernel *kernel, const char *p, rk_buf *out)
{
    char arch[64], flavor[64];
    while (*p && *p != '\n') {
        size_t i = 0, j = 0;
        while (*p == ' ' || *p == '\t' || *p == '\r')
            p++;
        if (!*p || *p == '\n')
            break;
        while (*p && *p != ':' && *p != ' ' && *p != '\n' && i < sizeof arch - 1)
            arch[i++] = *p++;
        arch[i] = '\0';
        if (*p == ':')
            p++;
        while (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n' && j < sizeof flavor - 1)
            flavor[j++] = *p++;
        flavor[j] = '\0';
        lower_one(kernel, arch, flavor, out);
    }
}

static int lower_script(const char *text, size_t len, rk_buf *out)
{
    rk_arena arena;
    script s;
    int status, a, f;
    const char *verdict;
    rk_arena_init(&arena);
    status = build_script(text, len, &arena, &s, out);
    if (status == 0) {
        const char *targets = find_targets(text, len);
        verdict = rk_verify_kernel(s.b.kernel, &arena);
        rk_buf_printf(out, "verify: %s\n", verdict ? "fail" : "ok");
        if (targets)
            lower_targets(s.b.kernel, targets, out);
        else
            for (a = 0; a < 5; a++)
                for (f = 0; f < 3; f++)
                    lower_one(s.b.kernel, archs[a], flavors[f], out);
    }
    if (arena.failed)
        status = -1;
    rk_arena_free(&arena);
    return status < 0 ? -1 : 0;
}

static int time_script(const char *text, size_t len, long n)
{
    rk_arena arena;
    script s;
    rk_buf out;
    long i;
    size_t bytes = 0;
    clock_t t0;
    double seconds;
    rk_arena_init(&arena);
    rk_buf_init(&out);
    if (build_script(text, len, &arena, &s, &out)) {
        fwrite(out.data, 1, out.len, stdout);
        rk_buf_free(&out);
        rk_arena_free(&arena);
        return 1;
    }
    t0 = clock();
    for (i = 0; i < n; i++) {
        rk_arena per;
        rk_error err;
        rk_arena_init(&per);
        rk_error_init(&err, &per);
        rk_buf_free(&out);
        if (rk_lower_kernel(s.b.kernel, "gfx950", "llvm22", &per, &out, &err))
            printf("lower error: %s\n", err.message);
        bytes = out.len;
        rk_arena_free(&per);
    }
    seconds = (double)(clock() - t0) / CLOCKS_PER_SEC;
    printf("%ld lowerings, %lu bytes each, %.3f ms per lowering\n", n, (unsigned long)bytes,
           n ? seconds * 1000.0 / (double)n : 0.0);
    rk_buf_free(&out);
    rk_arena_free(&arena);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--time") == 0) {
        size_t len = 0;
        char *data = driver_slurp(argv[3], &len);
        int status;
        if (!data)
            return 2;
        status = time_script(data, len, strtol(argv[2], NULL, 10));
        free(data);
        return status;
    }
    if (argc < 2) {
        fprintf(stderr, "usage: lower_driver SCRIPT... | lower_driver --time N SCRIPT\n");
        return 2;
    }
    return run_scripts(argc, argv, 1, lower_script);
}
