/* bench_driver.c: times rocke_emit_in per file through one rocke_context, the way the Python
 * bridge calls the engine, with an optional stand-in for the Python call a gate worker makes
 * between two C calls (it evicts the caches by writing over a buffer):
 *
 *     bench_driver [--repeat N] [--evict BYTES] MODE FLAVOR FILE...
 *     -> per emitting file "<median ns> <output bytes> <path>"; then
 *        "median <ns> over <n> emitting files (<r> rejected), output <bytes> bytes in all"
 *
 * Numbers for notes, never for a timed test. Under valgrind (callgrind, --cache-sim=yes) use
 * --repeat 1 or 2: the counts are then per file set, noise-free on a shared machine. */
#define _POSIX_C_SOURCE 199309L
#include <time.h>
#include "driver_io.h"

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, by_value);
    return n == 0 ? 0.0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The other work between two calls: every byte of the buffer written, and read back so the
 * writes are not dropped. */
static unsigned evict(unsigned char *buf, size_t n, unsigned seed)
{
    size_t i;
    unsigned sum = 0;
    memset(buf, (int)(seed & 0xff), n);
    for (i = 0; i < n; i += 64)
        sum += buf[i];
    return sum;
}

int main(int argc, char **argv)
{
    int i = 1;
    long repeat = 5, k;
    size_t evict_bytes = 0, n_files = 0, rejected = 0, out_total = 0;
    unsigned char *evict_buf = NULL;
    unsigned sink = 0;
    double *times, *medians;
    const char *mode, *flavor;
    rocke_context *ctx;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0 && i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--repeat") == 0)
            repeat = strtol(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--evict") == 0)
            evict_bytes = (size_t)strtol(argv[i + 1], NULL, 10);
        else
            break;
    }
    if (argc - i < 2 || repeat < 1) {
        fprintf(stderr, "usage: bench_driver [--repeat N] [--evict BYTES] MODE FLAVOR FILE...\n");
        return 2;
    }
    mode = argv[i];
    flavor = argv[i + 1];
    ctx = rocke_context_new();
    times = malloc((size_t)repeat * sizeof *times);
    medians = malloc((size_t)argc * sizeof *medians);
    if (evict_bytes)
        evict_buf = malloc(evict_bytes);
    if (!ctx || !times || !medians || (evict_bytes && !evict_buf))
        return 2;
    for (i += 2; i < argc; i++) {
        size_t len = 0, text_len = 0;
        char *data = driver_slurp(argv[i], &len);
        rocke_status st = ROCKE_ERROR;
        if (!data)
            return 2;
        for (k = 0; k < repeat; k++) {
            rocke_result r;
            double t0;
            if (evict_buf)
                sink += evict(evict_buf, evict_bytes, (unsigned)k);
            t0 = now_ns();
            st = rocke_emit_in(ctx, len ? data : NULL, len, mode, flavor, &r);
            times[k] = now_ns() - t0;
            text_len = r.text_len;
            rocke_result_free(&r);
        }
        free(data);
        if (st != ROCKE_EMITTED) {
            rejected++;
            continue;
        }
        medians[n_files] = median(times, (size_t)repeat);
        printf("%.0f %lu %s\n", medians[n_files], (unsigned long)text_len, argv[i]);
        out_total += text_len;
        n_files++;
    }
    printf("median %.0f over %lu emitting files (%lu rejected), output %lu bytes in all\n", median(medians, n_files),
           (unsigned long)n_files, (unsigned long)rejected, (unsigned long)out_total);
    rocke_context_free(ctx);
    free(times);
    free(medians);
    free(evict_buf);
    return sink == 1u ? 0 : 0;
}
