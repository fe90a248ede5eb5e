/* driver_io.h: what the C test drivers share: reading a whole file and writing one result
 * record ("E <len>\n<text>\n" | "R <code> <len>\n<message>\n" | "X <code> <len>\n<message>\n",
 * X being ROCKE_ERROR), the format the tests/tools scripts parse. Each driver is one
 * translation unit, so the definitions live here; they are not static because not every
 * driver calls both. */
#ifndef ROCKE_DRIVER_IO_H
#define ROCKE_DRIVER_IO_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../include/rocke.h"

/* The file's bytes (heap, caller frees) and their count; NULL when it cannot be read. */
char *driver_slurp(const char *path, size_t *len);
void driver_put_record(rocke_status st, const rocke_result *r);

char *driver_slurp(const char *path, size_t *len)
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

/* One record on stdout for a rocke_emit result. */
void driver_put_record(rocke_status st, const rocke_result *r)
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

#endif
