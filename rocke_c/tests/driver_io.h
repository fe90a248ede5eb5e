/* driver_io.h: what the C test drivers share: reading a whole file and writing one result
 * record ("E <len>\n<text>\n" | "R <code> <len>\n<message>\n" | "X <code> <len>\n<message>\n",
 * X being ROCKE_ERROR), the format the tests/tools scripts parse. Each driver is one
 * translation unit, so the definitions live here; they are not static because not every
 * driver calls both. */
#ifndef ROCKE_DRIVER_IO_H
#define ROCKE_DRIVER_IO_H
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../include/rocke.h"

/* The drivers' input limit: far above the engine's 1 MiB config limit (the tests feed 10 MB
 * configs on purpose), and a bound: /dev/zero or an endless FIFO is refused, not read. */
#define DRIVER_MAX_BYTES (64UL << 20)

/* The file's bytes (heap, NUL-terminated, caller frees) and their count, read in a loop that
 * stops after DRIVER_MAX_BYTES + 1 bytes, so it works on a FIFO as on a file; NULL when it
 * cannot be read, after printing "cannot read PATH: why" on stderr. */
char *driver_slurp(const char *path, size_t *len);
void driver_put_record(rocke_status st, const rocke_result *r);

char *driver_slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    size_t cap = 65536, n = 0;
    char *data;
    if (!fp) {
        fprintf(stderr, "cannot read %s: %s\n", path, strerror(errno));
        return NULL;
    }
    data = malloc(cap + 1);
    while (data) {
        size_t want, got;
        if (n == cap) {
            size_t bigger_cap = cap * 2 < DRIVER_MAX_BYTES + 1 ? cap * 2 : DRIVER_MAX_BYTES + 1;
            char *bigger = realloc(data, bigger_cap + 1);
            if (!bigger) {
                free(data);
                data = NULL;
                break;
            }
            data = bigger;
            cap = bigger_cap;
        }
        want = cap - n;
        got = fread(data + n, 1, want, fp);
        n += got;
        if (got < want || n > DRIVER_MAX_BYTES)
            break;
    }
    if (!data)
        fprintf(stderr, "cannot read %s: out of memory\n", path);
    else if (ferror(fp))
        fprintf(stderr, "cannot read %s: %s\n", path, strerror(errno));
    else if (n > DRIVER_MAX_BYTES)
        fprintf(stderr, "cannot read %s: more than %lu bytes\n", path, DRIVER_MAX_BYTES);
    else {
        data[n] = '\0';
        *len = n;
        fclose(fp);
        return data;
    }
    free(data);
    fclose(fp);
    return NULL;
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
