/* rocke.h: the one public header of the rocke C engine (rocke_c).
 *
 * rocke_emit() reads a parity config (the TOML subset of docs/engine-contract.md),
 * validates the spec and prints the requested output. It keeps no global mutable state,
 * never exits or aborts on bad input, and releases all its memory before it returns,
 * except the strings it hands back in the result, which rocke_result_free() releases
 * (rocke_emit_in keeps its memory in a caller-owned rocke_context instead).
 * cffi reads its declarations from this file (build_ffi.py takes the text between the
 * extern "C" lines), so keep them plain C declarations.
 *
 * Only the ROCKE_API functions are exported: the engine is compiled with hidden visibility
 * (-fvisibility=hidden in setup.py, C_VISIBILITY_PRESET in CMakeLists.txt), so its internal
 * rk_ functions stay inside the library. The attribute is not C99; compilers without it
 * (no __GNUC__) get an empty ROCKE_API and export as they do by default. */
#ifndef ROCKE_H
#define ROCKE_H

#include <stddef.h>

#if defined(__GNUC__)
#define ROCKE_API __attribute__((visibility("default")))
#else
#define ROCKE_API
#endif

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
ROCKE_API rocke_status rocke_emit(const char *config, size_t config_len, const char *mode, const char *flavor,
                                  rocke_result *out);

/* A reusable context for many calls (a gate worker, the Python bridge): rocke_emit_in is
 * rocke_emit, byte for byte, except that the memory of a call is kept in the context for the
 * next one (up to 32 MiB; the rest is freed) instead of going back to the OS and being
 * faulted in again. No call reads data of an earlier one (kept memory is zeroed again before
 * it is handed out), so the order of calls never changes an output, and a call that fails
 * (a rejection, an engine error, out of memory) leaves it ready for the next. Not
 * thread-safe: one context per thread. The engine keeps no global state; the caller owns
 * the context.
 * rocke_context_new: NULL when out of memory. rocke_emit_in with a NULL context is
 * rocke_emit. rocke_context_free releases everything; NULL is a no-op. */
typedef struct rocke_context rocke_context;

ROCKE_API rocke_context *rocke_context_new(void);

ROCKE_API rocke_status rocke_emit_in(rocke_context *ctx, const char *config, size_t config_len, const char *mode,
                                     const char *flavor, rocke_result *out);

ROCKE_API void rocke_context_free(rocke_context *ctx);

/* Names a caller-owned buffer of cap bytes in which every rocke_emit_in call through ctx
 * records where it is, for a crash report: before each stage starts, "MODE FLAVOR STAGE"
 * (e.g. "ll llvm22 lower_kernel", cut to cap - 1 bytes), with plain stores (no allocation, no
 * library call); when the call returns, the empty string. The engine never reads it. The
 * buffer is meant to outlive a crash (memory shared with a parent process): if the process
 * dies inside a call, the buffer names the stage it died in (docs/user-guide.md, crash
 * reports). The buffer must stay valid while ctx uses it; NULL or cap 0 turns the note off. */
ROCKE_API void rocke_context_set_note(rocke_context *ctx, char *note, size_t cap);

/* Releases the strings of a result filled by rocke_emit; safe to call twice. */
ROCKE_API void rocke_result_free(rocke_result *result);

/* Comma-separated list of the modes this build implements: "spec,ir,ll". */
ROCKE_API const char *rocke_implemented_modes(void);

/* Engine version string. */
ROCKE_API const char *rocke_version(void);

#ifdef __cplusplus
}
#endif

#endif
