/* build_driver.c: runs rocke_emit on each file named on the command line, like emit_driver.c,
 * and can repeat each emission (for timing); tests/tools/compare_ir.py, compare_ll.py and
 * tests/parity/test_mode_ir_parity.py read its records (also usable under a sanitizer or valgrind):
 *
 *     build_driver [--repeat N] MODE FLAVOR FILE...
 *     -> per file "E <len>\n<text>\n" | "R <code> <len>\n<message>\n" | "X <code> <len>\n<message>\n"
 *
 * --repeat N emits each file N times and prints the last (for timing). X is ROCKE_ERROR (an
 * engine failure, never a rejection). */
#include "driver_io.h"

int main(int argc, char **argv)
{
    int i = 1;
    long repeat = 1, k;
    const char *mode, *flavor;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
            repeat = strtol(argv[++i], NULL, 10);
            if (repeat < 1)
                repeat = 1;
        } else {
            break;
        }
    }
    if (argc - i < 2) {
        fprintf(stderr, "usage: build_driver [--repeat N] MODE FLAVOR FILE...\n");
        return 2;
    }
    mode = argv[i];
    flavor = argv[i + 1];
    for (i += 2; i < argc; i++) {
        rocke_result r;
        size_t len = 0;
        char *data = driver_slurp(argv[i], &len);
        rocke_status st = ROCKE_ERROR;
        if (!data) {
            return 2;
        }
        for (k = 0; k < repeat; k++) {
            st = rocke_emit(len ? data : NULL, len, mode, flavor, &r);
            if (k + 1 < repeat)
                rocke_result_free(&r);
        }
        driver_put_record(st, &r);
        rocke_result_free(&r);
        free(data);
    }
    return 0;
}
