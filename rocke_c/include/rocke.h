/* rocke.h: the one public header of the rocke C engine (rocke_c).
 *
 * rocke_emit() reads a parity config (the TOML subset of docs/engine-contract.md),
 * validates the spec and prints the requested output. It keeps no global mutable state,
 * never exits or aborts on bad input, and releases all its memory before it returns,
 * except the strings it hands back in the result, which rocke_result_free() releases.
 * cffi mirrors exactly the declarations below (build_ffi.py). */
#ifndef ROCKE_H
#define ROCKE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rocke_status {
    ROCKE_EMITTED = 0,  /* text/text_len hold the output */
    ROCKE_REJECTED = 1, /* code/message say why the config was refused */
    ROCKE_ERROR = 2     /* engine failure (out of memory, internal check): not a rejection */
} rocke_status;

typedef struct rocke_result {
    rocke_status status;
    char *text;          /* heap, NUL-terminated; NULL unless EMITTED */
    size_t text_len;
    const char *code;    /* static string, e.g. "E_SYNTAX"; NULL when EMITTED */
    char *message;       /* heap, NUL-terminated; NULL when EMITTED */
} rocke_result;

/* mode: "spec", "ir" or "ll"; flavor: "llvm20", "llvm22" or "llvm23" (always explicit). */
rocke_status rocke_emit(const char *config, size_t config_len, const char *mode,
                        const char *flavor, rocke_result *out);

/* Releases the strings of a result filled by rocke_emit; safe to call twice. */
void rocke_result_free(rocke_result *result);

/* Comma-separated list of the modes this build implements: "spec,ir,ll". */
const char *rocke_implemented_modes(void);

/* Engine version string. */
const char *rocke_version(void);

#ifdef __cplusplus
}
#endif

#endif
