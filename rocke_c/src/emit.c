/* emit.c: the engine's one operation: rocke_emit(config, mode, flavor) -> text or
 * (code, message).
 *
 * Twin of rocke_py/engine/emit.py; docs/engine-contract.md §2 gives the order of the
 * checks. One arena per call, released before return (or, through a rocke_context, reset
 * and kept for the next call); the result owns only the heap strings it hands back
 * (rocke_result_free). */
#include <stdlib.h>
#include <string.h>
#ifdef ROCKE_CRASH_AT_STAGE
#include <signal.h>
#endif
#include "../include/rocke.h"
#include "build.h"
#include "lower.h"

#define RK_MAX_CONFIG_BYTES 1048576

static const char *const rk_modes[] = {"spec", "ir", "ll", NULL};
static const char *const rk_flavors[] = {"llvm20", "llvm22", "llvm23", NULL};

const char *rocke_implemented_modes(void) { return "spec,ir,ll"; }

const char *rocke_version(void) { return "0.1.0"; }

/* A mode or flavor is echoed only when it is 1-16 bytes of [a-z0-9] (contract §2). */
static int echo(const char *word)
{
    size_t i, n;
    if (!word)
        return 0;
    n = strlen(word);
    if (n < 1 || n > 16)
        return 0;
    for (i = 0; i < n; i++)
        if (!((word[i] >= 'a' && word[i] <= 'z') || (word[i] >= '0' && word[i] <= '9')))
            return 0;
    return 1;
}

static int check_mode_flavor(const char *mode, const char *flavor, rk_error *err)
{
    if (!rk_str_in(mode, rk_modes)) {
        if (echo(mode))
            return rk_fail(err, "E_MODE", "unknown mode '%s' (expected spec, ir or ll)", mode);
        return rk_fail(err, "E_MODE", "unknown mode (expected spec, ir or ll)");
    }
    if (!rk_str_in(flavor, rk_flavors)) {
        if (echo(flavor))
            return rk_fail(err, "E_FLAVOR", "unknown flavor '%s' (expected llvm20, llvm22 or llvm23)", flavor);
        return rk_fail(err, "E_FLAVOR", "unknown flavor (expected llvm20, llvm22 or llvm23)");
    }
    return 0;
}

static int check_size(size_t len, rk_error *err)
{
    if (len > RK_MAX_CONFIG_BYTES)
        return rk_fail(err, "E_TOO_LARGE", "config is %zu bytes; the limit is %d", len, RK_MAX_CONFIG_BYTES);
    return 0;
}

/* The documented bound on any emitted text (docs/kernels.md §9): past it, an engine bug. */
static int check_output_size(const rk_buf *text, rk_error *err)
{
    if (!text->failed && (long long)text->len > RK_MAX_OUTPUT_BYTES)
        return rk_fail_internal(err, "emit: the output is %zu bytes, more than %lld", text->len, RK_MAX_OUTPUT_BYTES);
    return 0;
}

/* Where a call is, for a crash report (rocke_context_set_note): the caller's buffer, or none. */
typedef struct stage_note {
    char *buf;
    size_t cap;
} stage_note;

static size_t note_put(char *buf, size_t at, size_t cap, const char *word)
{
    while (*word && at + 1 < cap)
        buf[at++] = *word++;
    return at;
}

/* "MODE FLAVOR STAGE" into the note, before the stage starts: plain stores, no allocation and
 * no library call, so what is there when the process dies is the stage it died in. */
static void note_stage(const stage_note *note, const char *mode, const char *flavor, const char *stage)
{
    size_t at;
    if (note->buf && note->cap > 0) {
        at = note_put(note->buf, 0, note->cap, mode);
        at = note_put(note->buf, at, note->cap, " ");
        at = note_put(note->buf, at, note->cap, flavor);
        at = note_put(note->buf, at, note->cap, " ");
        at = note_put(note->buf, at, note->cap, stage);
        note->buf[at] = '\0';
    }
#ifdef ROCKE_CRASH_AT_STAGE
    /* a test build's injected crash (tests/harness/test_c_crash_note.py): never in a release */
    if (strcmp(stage, ROCKE_CRASH_AT_STAGE) == 0)
        raise(SIGSEGV);
#endif
}

/* Every mode runs the spec stages first, so all modes give one verdict per config. */
static int emit_text(const char *text, size_t len, const char *mode, const char *flavor, const stage_note *note,
                     rk_arena *arena, rk_buf *out, rk_error *err)
{
    rk_config config;
    rk_fields fields;
    const char *arch;
    const rk_target *target;
    rk_problem problem;
    rk_spec built, spec;
    const rk_plan *plan;
    rk_ir_kernel *kernel;
    note_stage(note, mode, flavor, "parse");
    if (rk_config_parse(text, len, arena, &config, err))
        return -1;
    note_stage(note, mode, flavor, "schema");
    if (rk_schema_check(&config, &fields, err))
        return -1;
    arch = fields.f[RK_KEY_ARCH].value.s;
    if (!(target = rk_target_for(arch)))
        return rk_fail_internal(err, "no target data for the schema-checked arch");
    note_stage(note, mode, flavor, "problem");
    if (rk_build_problem(&fields, &problem, err))
        return -1;
    if ((fields.family == RK_FAMILY_DGRAD && rk_check_sub_gemm_candidates(&problem, err))
        || rk_check_dtypes(&fields, err))
        return -1;
    note_stage(note, mode, flavor, "validate");
    rk_build_spec(fields.family, arch, &fields, &built);
    spec = rk_deduce(&built, &problem, target);
    if (rk_validate(&spec, &problem, target, arena, err))
        return -1;
    note_stage(note, mode, flavor, "plan");
    if (rk_make_plan(&spec, &problem, target, arena, &plan, err))
        return -1;
    if (strcmp(mode, "spec") == 0) {
        note_stage(note, mode, flavor, "print_spec");
        return rk_print_spec(plan, out, err); /* mode `ir` and `ll` build no spec text */
    }
    note_stage(note, mode, flavor, "build_kernel");
    if (rk_build_kernel(plan, arena, &kernel, err))
        return -1;
    note_stage(note, mode, flavor, strcmp(mode, "ir") == 0 ? "print_ir" : "lower_kernel");
    if (strcmp(mode, "ir") == 0 ? rk_print_ir(kernel, arena, out, err)
                                : rk_lower_kernel(kernel, arch, flavor, arena, out, err))
        return -1;
    return check_output_size(out, err);
}

static int emit(const char *config, size_t config_len, const char *mode, const char *flavor, const stage_note *note,
                rk_arena *arena, rk_buf *out, rk_error *err)
{
    if (!config && config_len > 0)
        return rk_fail_internal(err, "config is NULL but config_len is not 0");
    if (!config)
        config = ""; /* NULL with length 0 is the empty config */
    if (check_mode_flavor(mode, flavor, err))
        return -1;
    if (check_size(config_len, err) || rk_check_encoding(config, config_len, err))
        return -1;
    return emit_text(config, config_len, mode, flavor, note, arena, out, err);
}

static char *emit_strdup(const char *s)
{
    size_t n = strlen(s);
    char *copy = malloc(n + 1);
    if (copy)
        memcpy(copy, s, n + 1);
    return copy;
}

/* The one place the error or the text becomes the result (heap strings the caller frees);
 * the text's heap buffer is handed over, not copied. */
static rocke_status result(rocke_result *out, rk_buf *text, const rk_error *err)
{
    const char *message = err->message;
    out->status = err->internal ? ROCKE_ERROR : ROCKE_REJECTED;
    out->code = err->code;
    out->text = NULL;
    out->text_len = 0;
    out->message = NULL;
    if (!err->code) {
        size_t len = text->len;
        out->text = text->failed ? NULL : rk_buf_take(text);
        if (out->text) {
            out->status = ROCKE_EMITTED;
            out->text_len = len;
            return ROCKE_EMITTED;
        }
        message = text->failed ? "out of memory (output buffer)" : "out of memory (result)";
        out->status = ROCKE_ERROR;
        out->code = "E_INTERNAL";
    }
    out->message = emit_strdup(message);
    if (!out->message) {
        out->status = ROCKE_ERROR;
        out->code = "E_INTERNAL";
    }
    return out->status;
}

/* One call in the caller's arena (empty on entry): the verdict into out; the note is left
 * empty when the call returns (a note that is not empty names the stage a dead call was in). */
static rocke_status emit_in(rk_arena *arena, const stage_note *note, const char *config, size_t config_len,
                            const char *mode, const char *flavor, rocke_result *out)
{
    rk_error err;
    rk_buf text;
    rocke_status status;
    rk_error_init(&err, arena);
    rk_buf_init(&text);
    emit(config, config_len, mode, flavor, note, arena, &text, &err);
    if (note->buf && note->cap > 0)
        note->buf[0] = '\0';
    if (arena->failed && !err.internal) {
        /* A failed arena allocation surfaces as whatever error the stage reported; the
         * engine cannot trust that verdict, so it is an internal failure. */
        rk_fail_internal(&err, "out of memory (arena)");
    }
    status = result(out, &text, &err);
    rk_buf_free(&text);
    return status;
}

rocke_status rocke_emit(const char *config, size_t config_len, const char *mode, const char *flavor, rocke_result *out)
{
    rk_arena arena;
    stage_note none = {NULL, 0};
    rocke_status status;
    if (!out)
        return ROCKE_ERROR;
    rk_arena_init(&arena);
    status = emit_in(&arena, &none, config, config_len, mode, flavor, out);
    rk_arena_free(&arena);
    return status;
}

/* The arena memory a context keeps between calls (rocke.h): enough for every shipped
 * kernel's ll, small against a gate worker's budget. */
#define RK_CONTEXT_KEEP (32u << 20)

struct rocke_context {
    rk_arena arena;  /* empty between calls; its spare blocks are the kept memory */
    stage_note note; /* the caller's buffer (rocke_context_set_note), or none */
};

rocke_context *rocke_context_new(void)
{
    rocke_context *ctx = malloc(sizeof *ctx);
    if (ctx) {
        rk_arena_init(&ctx->arena);
        ctx->note.buf = NULL;
        ctx->note.cap = 0;
    }
    return ctx;
}

void rocke_context_set_note(rocke_context *ctx, char *note, size_t cap)
{
    if (!ctx)
        return;
    ctx->note.buf = cap > 0 ? note : NULL;
    ctx->note.cap = note ? cap : 0;
    if (ctx->note.buf)
        ctx->note.buf[0] = '\0';
}

rocke_status rocke_emit_in(rocke_context *ctx, const char *config, size_t config_len, const char *mode,
                           const char *flavor, rocke_result *out)
{
    rocke_status status;
    if (!ctx)
        return rocke_emit(config, config_len, mode, flavor, out);
    if (!out)
        return ROCKE_ERROR;
    status = emit_in(&ctx->arena, &ctx->note, config, config_len, mode, flavor, out);
    rk_arena_reset(&ctx->arena, RK_CONTEXT_KEEP); /* on every path: the next call starts empty */
    return status;
}

void rocke_context_free(rocke_context *ctx)
{
    if (!ctx)
        return;
    rk_arena_free(&ctx->arena);
    free(ctx);
}

void rocke_result_free(rocke_result *result)
{
    if (!result)
        return;
    free(result->text);
    free(result->message);
    result->text = NULL;
    result->message = NULL;
    result->text_len = 0;
}
