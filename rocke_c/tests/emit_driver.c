/* emit_driver.c: runs rocke_emit on each file named on the command line and writes one
 * length-prefixed record per file to stdout, for tests/tools/compare_emit.py to compare
 * with the Python engine (also usable under a sanitizer or valgrind):
 *
 *     emit_driver MODE FLAVOR FILE...
 *     -> "E <len>\n<text>\n" | "R <code> <len>\n<message>\n" | "X <code> <len>\n<message>\n"
 *
 * X is ROCKE_ERROR (an engine failure, never a rejection). */
#include "driver_io.h"

int main(int argc, char **argv)
{
    int i;
    if (argc < 3) {
        fprintf(stderr, "usage: emit_driver MODE FLAVOR FILE...\n");
        return 2;
    }
    for (i = 3; i < argc; i++) {
        rocke_result r;
        size_t len = 0;
        char *data = driver_slurp(argv[i], &len);
        rocke_status st;
        if (!data) {
            return 2;
        }
        /* An empty file goes in as NULL: the contract allows NULL with length 0. */
        st = rocke_emit(len ? data : NULL, len, argv[1], argv[2], &r);
        driver_put_record(st, &r);
        rocke_result_free(&r);
        rocke_result_free(&r); /* documented as safe to call twice */
        free(data);
    }
    return 0;
}
