/* emit_driver.c: runs rocke_emit on each file named on the command line and writes one
 * length-prefixed record per file to stdout, for tests/tools/compare_emit.py to compare
 * with the Python engine (also usable under a sanitizer or valgrind):
 *
 *     emit_driver MODE FLAVOR FILE...
 *     -> "E <len>\n<text>\n" | "R <code> <len>\n<message>\n" | "X <code> <len>\n<message>\n"
 *
 * X is ROCKE_ERROR (an engine failure, never a rejection). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../include/rocke.h"

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
        char *data = slurp(argv[i], &len);
        rocke_status st;
        if (!data) {
            fprintf(stderr, "cannot read %s\n", argv[i]);
            return 2;
        }
        /* An empty file goes in as NULL: the contract allows NULL with length 0. */
        st = rocke_emit(len ? data : NULL, len, argv[1], argv[2], &r);
        if (st == ROCKE_EMITTED) {
            printf("E %lu\n", (unsigned long)r.text_len);
            fwrite(r.text, 1, r.text_len, stdout);
        } else {
            const char *message = r.message ? r.message : "";
            printf("%c %s %lu\n%s", st == ROCKE_REJECTED ? 'R' : 'X', r.code ? r.code : "NULL",
                   (unsigned long)strlen(message), message);
        }
        printf("\n");
        rocke_result_free(&r);
        rocke_result_free(&r); /* documented as safe to call twice */
        free(data);
    }
    return 0;
}
