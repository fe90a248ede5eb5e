/* build_driver.c: runs the C engine below its implemented-modes check (rk_emit_emit_internal)
 * on each file named on the command line, so that modes not yet advertised (ir) can be
 * compared with the Python engine before they are switched on; tests/tools/compare_ir.py and
 * tests/test_ir_parity.py read its records (also usable under a sanitizer or valgrind):
 *
 *     build_driver [--repeat N] MODE FLAVOR FILE...
 *     -> per file "E <len>\n<text>\n" | "R <code> <len>\n<message>\n" | "X <code> <len>\n<message>\n"
 *
 * --repeat N emits each file N times and prints the last (for timing). X is ROCKE_ERROR (an
 * engine failure, never a rejection). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../src/build.h"

static char *slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    char *data = NULL;
    long n;
    if (!fp)
        return NULL;
    if (fseek(fp, 0, SEEK_END) == 0 && (n = ftell(fp)) >= 0 && fseek(fp, 0, SEEK_SET) == 0) {
        data = malloc((size_t)n + 1);
        if (data && fread(data, 1, (size_t)n, fp) != (size_t)n) {
            free(data);
            data = NULL;
        }
        *len = (size_t)n;
    }
    fclose(fp);
    return data;
}

static void put_record(rocke_status st, const rocke_result *r)
{
    if (st == ROCKE_EMITTED) {
        printf("E %lu\n", (unsigned long)r->text_len);
        fwrite(r->text, 1, r->text_len, stdout);
    } else {
        const char *message = r->message ? r->message : "";
        printf("%c %s %lu\n%s", st == ROCKE_REJECTED ? 'R' : 'X', r->code ? r->code : "NULL",
               (unsigned long)strlen(message), message);
    }
    printf("\n");
}

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
        char *data = slurp(argv[i], &len);
        rocke_status st = ROCKE_ERROR;
        if (!data) {
            fprintf(stderr, "cannot read %s\n", argv[i]);
            return 2;
        }
        for (k = 0; k < repeat; k++) {
            st = rk_emit_emit_internal(len ? data : NULL, len, mode, flavor, 0, &r);
            if (k + 1 < repeat)
                rocke_result_free(&r);
        }
        put_record(st, &r);
        rocke_result_free(&r);
        free(data);
    }
    return 0;
}
