/* rocke-emit: the C engine as a standalone program.
 *
 *     rocke-emit CONFIG [--mode spec|ir|ll] [--flavor llvm20|llvm22|llvm23] [-o FILE]
 *
 * Prints the same bytes as rocke_py.engine.emit. Exit 0 on emit; 1 on rejection, with
 * "REJECTED <CODE>" and then the message on stderr; 2 on a usage error, an unreadable file
 * or an engine failure. CONFIG "-" reads standard input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rocke.h"

typedef struct options {
    const char *config;
    const char *mode;
    const char *flavor;
    const char *output;
} options;

static int usage(const char *why)
{
    if (why)
        fprintf(stderr, "rocke-emit: %s\n", why);
    fputs("usage: rocke-emit CONFIG [--mode spec|ir|ll] [--flavor llvm20|llvm22|llvm23] [-o FILE]\n", stderr);
    return 2;
}

static int parse_options(int argc, char **argv, options *o)
{
    int i;
    o->config = NULL;
    o->mode = "ll";
    o->flavor = "llvm22";
    o->output = NULL;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char **slot = NULL;
        if (strcmp(a, "--mode") == 0)
            slot = &o->mode;
        else if (strcmp(a, "--flavor") == 0)
            slot = &o->flavor;
        else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0)
            slot = &o->output;
        else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
            return 1;
        else if (a[0] == '-' && a[1] != '\0')
            return usage("unknown option"), -1;
        else if (o->config)
            return usage("more than one CONFIG"), -1;
        else
            o->config = a;
        if (slot) {
            if (i + 1 >= argc)
                return usage("option needs a value"), -1;
            *slot = argv[++i];
        }
    }
    if (!o->config)
        return usage("no CONFIG given"), -1;
    return 0;
}

/* Reads the whole stream into a heap buffer; NULL on failure. */
static char *read_stream(FILE *fp, size_t *len)
{
    size_t cap = 65536, n = 0, got;
    char *data = malloc(cap);
    if (!data)
        return NULL;
    while ((got = fread(data + n, 1, cap - n, fp)) > 0) {
        n += got;
        if (n == cap) {
            char *bigger = realloc(data, cap * 2);
            if (!bigger) {
                free(data);
                return NULL;
            }
            data = bigger;
            cap *= 2;
        }
    }
    if (ferror(fp)) {
        free(data);
        return NULL;
    }
    *len = n;
    return data;
}

static char *read_config(const char *path, size_t *len)
{
    FILE *fp;
    char *data;
    if (strcmp(path, "-") == 0)
        return read_stream(stdin, len);
    fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    data = read_stream(fp, len);
    fclose(fp);
    return data;
}

static int write_text(const char *path, const char *text, size_t len)
{
    FILE *fp = path ? fopen(path, "wb") : stdout;
    int ok;
    if (!fp)
        return 0;
    ok = fwrite(text, 1, len, fp) == len;
    if (path)
        ok = (fclose(fp) == 0) && ok;
    else
        ok = (fflush(fp) == 0) && ok;
    return ok;
}

int main(int argc, char **argv)
{
    options o;
    rocke_result result;
    size_t len = 0;
    char *config;
    int rc = parse_options(argc, argv, &o);
    if (rc != 0)
        return rc > 0 ? (usage(NULL), 0) : 2;
    config = read_config(o.config, &len);
    if (!config) {
        fprintf(stderr, "rocke-emit: cannot read %s\n", o.config);
        return 2;
    }
    switch (rocke_emit(config, len, o.mode, o.flavor, &result)) {
    case ROCKE_EMITTED:
        rc = write_text(o.output, result.text, result.text_len) ? 0 : 2;
        if (rc)
            fprintf(stderr, "rocke-emit: cannot write output\n");
        break;
    case ROCKE_REJECTED:
        fprintf(stderr, "REJECTED %s\n%s\n", result.code, result.message);
        rc = 1;
        break;
    default:
        fprintf(stderr, "rocke-emit: engine failure %s: %s\n", result.code ? result.code : "?",
                result.message ? result.message : "");
        rc = 2;
        break;
    }
    rocke_result_free(&result);
    free(config);
    return rc;
}
