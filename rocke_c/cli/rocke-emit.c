/* rocke-emit: the C engine as a standalone program.
 *
 *     rocke-emit CONFIG [--mode spec|ir|ll] [--flavor llvm20|llvm22|llvm23] [-o FILE]
 *     rocke-emit --version
 *
 * Prints the same bytes as rocke_py.engine.emit. Exit 0 on emit; 1 on rejection, with
 * "REJECTED <CODE>" and then the message on stderr; 2 on a usage error (an unknown option,
 * mode or flavor), an unreadable file or an engine failure. CONFIG "-" reads standard
 * input. At most the engine's config limit + 1 bytes are read, whatever CONFIG is (a file,
 * a FIFO, a device). */
#include <errno.h>
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

/* A mode or flavor the engine does not know is a usage error, as in the console script, not a
 * rejection: the engine judges them (E_MODE, E_FLAVOR) before it reads a config, so a call
 * without one asks it, and the lists stay the engine's. */
static int check_mode_flavor(const options *o)
{
    rocke_result probe;
    int bad = rocke_emit("", 0, o->mode, o->flavor, &probe) == ROCKE_REJECTED
              && (strcmp(probe.code, "E_MODE") == 0 || strcmp(probe.code, "E_FLAVOR") == 0);
    if (bad)
        usage(probe.message);
    rocke_result_free(&probe);
    return bad;
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
        else if (strcmp(a, "--version") == 0)
            return 3;
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
    return check_mode_flavor(o) ? -1 : 0;
}

/* The engine's config limit (RK_MAX_CONFIG_BYTES in src/emit.c, MAX_CONFIG_BYTES in
 * rocke_py/engine/emit.py). At most one byte more is read: an over-limit input reaches the
 * engine over the limit and is rejected with E_TOO_LARGE ("config is 1048577 bytes"), the
 * same bytes and the same verdict as the harness, which reads configs the same way. A FIFO,
 * a terminal or /dev/zero is never read further than that. */
#define READ_LIMIT (1048576 + 1)

/* At most READ_LIMIT bytes of the stream into a heap buffer; NULL on a read error or when
 * out of memory (errno says why, 0 when unknown). */
static char *read_stream(FILE *fp, size_t *len)
{
    size_t cap = 65536, n = 0, got;
    char *data = malloc(cap);
    if (!data)
        return NULL;
    for (;;) {
        size_t want = cap - n;
        if (want > READ_LIMIT - n)
            want = READ_LIMIT - n;
        if (want == 0)
            break;
        got = fread(data + n, 1, want, fp);
        n += got;
        if (got < want)
            break;
        if (n == cap && n < READ_LIMIT) {
            size_t bigger_cap = cap * 2 < READ_LIMIT ? cap * 2 : READ_LIMIT;
            char *bigger = realloc(data, bigger_cap);
            if (!bigger) {
                free(data);
                return NULL;
            }
            data = bigger;
            cap = bigger_cap;
        }
    }
    if (ferror(fp)) {
        int saved = errno;
        free(data);
        errno = saved;
        return NULL;
    }
    *len = n;
    return data;
}

static char *read_config(const char *path, size_t *len)
{
    FILE *fp;
    char *data;
    errno = 0;
    if (strcmp(path, "-") == 0)
        return read_stream(stdin, len);
    fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    data = read_stream(fp, len);
    if (!data) {
        int saved = errno;
        fclose(fp);
        errno = saved;
        return NULL;
    }
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
    if (rc == 3) {
        printf("rocke-emit %s\n", rocke_version());
        return 0;
    }
    if (rc != 0)
        return rc > 0 ? (usage(NULL), 0) : 2;
    config = read_config(o.config, &len);
    if (!config) {
        if (errno)
            fprintf(stderr, "rocke-emit: cannot read %s: %s\n", o.config, strerror(errno));
        else
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
