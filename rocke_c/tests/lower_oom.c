/* lower_oom.c: the lowering under allocation failure. Builds each script's kernel (the
 * script interpreter of ir_driver.c, included whole), then lowers it again and again with
 * the Nth malloc/realloc failing, N = 1, 2, ... until a lowering no longer reaches a failing
 * allocation. Each run must return the internal error "out of memory (lower)" and leave
 * nothing allocated (run it under ASan or valgrind), or succeed with the same text as the
 * unfailed run.
 *
 *     gcc ... -Wl,--wrap=malloc -Wl,--wrap=realloc lower_oom.c ... -o lower_oom
 *     lower_oom SCRIPT...     -> "<script>: N runs ok" per script; exit 1 on a mismatch */
#define main rk_ir_driver_main
#include "ir_driver.c"
#undef main
#include "../src/lower.h"

void *__real_malloc(size_t size);
void *__real_realloc(void *p, size_t size);

static long countdown = -1; /* the test's own state: > 0 counts down, 0 fails, < 0 off */

void *__wrap_malloc(size_t size)
{
    if (countdown > 0 && --countdown == 0)
        return NULL;
    return __real_malloc(size);
}

void *__wrap_realloc(void *p, size_t size)
{
    if (countdown > 0 && --countdown == 0)
        return NULL;
    return __real_realloc(p, size);
}

/* One lowering with the nth allocation failing (0: none); 1 when it reached that allocation. */
static int lower_with(const rk_ir_kernel *kernel, long n, rk_buf *out, int *status, char *message)
{
    rk_arena arena;
    rk_error err;
    int reached;
    rk_arena_init(&arena);
    rk_error_init(&err, &arena);
    countdown = n;
    *status = rk_lower_kernel(kernel, "gfx950", "llvm22", &arena, out, &err);
    reached = n > 0 && countdown == 0;
    countdown = -1;
    snprintf(message, 128, "%.100s", err.code ? err.message : "");
    rk_arena_free(&arena);
    return reached;
}

int main(int argc, char **argv)
{
    int i, bad = 0;
    for (i = 1; i < argc; i++) {
        size_t len = 0;
        char *data = driver_slurp(argv[i], &len), message[128];
        rk_arena arena;
        script s;
        rk_buf good, out, built;
        int status, good_status;
        long n, runs = 0;
        if (!data)
            return 2;
        rk_arena_init(&arena);
        rk_buf_init(&good);
        rk_buf_init(&built);
        if (build_script(data, len, &arena, &s, &built)) {
            printf("%s: not built\n", argv[i]);
            bad = 1;
        } else {
            lower_with(s.b.kernel, 0, &good, &good_status, message);
            for (n = 1;; n++) {
                int reached;
                rk_buf_init(&out);
                reached = lower_with(s.b.kernel, n, &out, &status, message);
                if (!reached) {
                    if (status != good_status || out.len != good.len
                        || (out.len && memcmp(out.data, good.data, out.len))) {
                        printf("%s: run %ld differs from the unfailed run\n", argv[i], n);
                        bad = 1;
                    }
                    rk_buf_free(&out);
                    break;
                }
                /* out itself may be the failing buffer (then it holds nothing) */
                if (status != -1 || strcmp(message, "out of memory (lower)") != 0) {
                    printf("%s: allocation %ld failed, got status %d: %s\n", argv[i], n, status, message);
                    bad = 1;
                }
                rk_buf_free(&out);
                runs++;
            }
            printf("%s: %ld failing runs ok\n", argv[i], runs);
        }
        rk_buf_free(&good);
        rk_buf_free(&built);
        rk_arena_free(&arena);
        free(data);
    }
    return bad;
}
