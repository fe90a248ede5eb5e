/* emit.c: the engine's one operation: rocke_emit(config, mode, flavor) -> text or
 * (code, message).
 *
 * Twin of rocke_py/engine/emit.py; docs/engine-contract.md §2 gives the order of the
 * checks. One arena per call, released before return; the result owns only the heap
 * strings it hands back (rocke_result_free). */
#include <stdlib.h>
#include <string.h>
#include "../include/rocke.h"
#include "build.h"
#include "lower.h"

#define RK_MAX_CONFIG_BYTES 1048576

static const char *const rk_modes[] = {"spec", "ir", "ll", NULL};
static const char *const rk_flavors[] = {"llvm20", "llvm22", "llvm23", NULL};

const char *rocke_implemented_modes(void) { return "spec,ir,ll"; }

const char *rocke_version(void) { return "0.1.0"; }

/* A mode or flavor is echoed only when it is 1-16 bytes of [a-z0-9] (contract §2). */
static int rk_emit_echo(const char *word)
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

static int rk_emit_check_mode_flavor(const char *mode, const char *flavor, rk_error *err)
{
    if (!rk_str_in(mode, rk_modes)) {
        if (rk_emit_echo(mode))
            return rk_fail(err, "E_MODE", "unknown mode '%s' (expected spec, ir or ll)", mode);
        return rk_fail(err, "E_MODE", "unknown mode (expected spec, ir or ll)");
    }
    if (!rk_str_in(flavor, rk_flavors)) {
        if (rk_emit_echo(flavor))
            return rk_fail(err, "E_FLAVOR", "unknown flavor '%s' (expected llvm20, llvm22 or llvm23)", flavor);
        return rk_fail(err, "E_FLAVOR", "unknown flavor (expected llvm20, llvm22 or llvm23)");
    }
    return 0;
}

static int rk_emit_check_size(size_t len, rk_error *err)
{
    if (len > RK_MAX_CONFIG_BYTES)
        return rk_fail(err, "E_TOO_LARGE", "config is %zu bytes; the limit is %d", len,
                       RK_MAX_CONFIG_BYTES);
    return 0;
}

/* The documented bound on any emitted text (docs/kernels.md §9): past it, an engine bug. */
static int rk_emit_check_output_size(const rk_buf *text, rk_error *err)
{
    if (!text->failed && (long long)text->len > RK_MAX_OUTPUT_BYTES)
        return rk_fail_internal(err, "emit: the output is %zu bytes, more than %lld", text->len,
                                RK_MAX_OUTPUT_BYTES);
    return 0;
}

/* What emit_text produced: the text (code NULL) or a rejection, both in `out`. */
typedef struct rk_outcome {
    const char *code;   /* NULL: emitted */
    int internal;       /* an engine failure (ROCKE_ERROR), not a rejection */
    rk_buf out;         /* the text, or the rejection message */
} rk_outcome;

static void rk_emit_reject(rk_outcome *o, const rk_error *err)
{
    o->code = err->code;
    o->internal = err->internal;
    rk_buf_free(&o->out);
    rk_buf_puts(&o->out, err->message);
}

/* The checked inputs of the build: what emit_text's spec stages leave for mode ir and ll. */
typedef struct rk_checked {
    rk_spec spec;
    rk_problem problem;
    const rk_target *target;
} rk_checked;

/* Stages after schema: problem, dgrad candidate cap, dtypes, spec, deduce, validate, print. */
static int rk_emit_spec_stages(const rk_fields *fields, rk_arena *arena, rk_checked *c, rk_outcome *o,
                               rk_error *err)
{
    const char *arch = fields->f[RK_KEY_ARCH].value.s;
    rk_spec built;
    c->target = rk_target_for(arch);
    if (!c->target)
        return rk_fail_internal(err, "no target data for the schema-checked arch");
    if (rk_problem_build_problem(fields, &c->problem, err))
        return -1;
    if (fields->family == RK_FAMILY_DGRAD && rk_problem_check_sub_gemm_candidates(&c->problem, err))
        return -1;
    if (rk_spec_check_dtypes(fields, err))
        return -1;
    rk_spec_build_spec(fields->family, arch, fields, &built);
    c->spec = rk_spec_deduce(&built, &c->problem, c->target);
    o->code = rk_validate_validate(&c->spec, &c->problem, c->target, arena, &o->out);
    if (o->code)
        return 0;
    return rk_print_spec_print_spec(&c->spec, &c->problem, c->target, arena, &o->out, err);
}

/* Modes ir and ll after the spec stages: the kernel, then its text (the spec text goes). */
static int rk_emit_kernel_stages(const rk_checked *c, const char *mode, const char *flavor,
                                 rk_arena *arena, rk_outcome *o, rk_error *err)
{
    rk_ir_kernel *kernel;
    rk_buf_free(&o->out);
    rk_buf_init(&o->out);
    if (rk_build_build_kernel(&c->spec, &c->problem, c->target, arena, &kernel, err))
        return -1;
    if (strcmp(mode, "ir") == 0) {
        if (rk_print_ir_print_ir(kernel, arena, &o->out, err))
            return -1;
    } else if (rk_lower_kernel(kernel, c->spec.arch, flavor, arena, &o->out, err)) {
        /* an internal failure whose whole message is in o->out (err's copy may be cut) */
        o->code = err->code;
        o->internal = 1;
        return 0;
    }
    return rk_emit_check_output_size(&o->out, err);
}

/* Every mode runs the spec stages first, so all modes give one verdict per config. */
static void rk_emit_emit_text(const char *text, size_t len, const char *mode, const char *flavor,
                              rk_arena *arena, rk_outcome *o)
{
    rk_config config;
    rk_fields fields;
    rk_checked *checked = rk_alloc(arena, sizeof *checked);
    rk_error err;
    rk_error_init(&err, arena);
    if (!checked) {
        rk_fail_internal(&err, "out of memory (arena)");
        rk_emit_reject(o, &err);
        return;
    }
    if (rk_config_parse(text, len, arena, &config, &err) || rk_schema_check(&config, &fields, &err)
        || rk_emit_spec_stages(&fields, arena, checked, o, &err)) {
        rk_emit_reject(o, &err);
        return;
    }
    if (!o->code && !o->out.failed && strcmp(mode, "spec") != 0
        && rk_emit_kernel_stages(checked, mode, flavor, arena, o, &err)) {
        rk_emit_reject(o, &err);
        return;
    }
    if (o->out.failed) { /* the buffer holding the text or the rule's message */
        rk_fail_internal(&err, "out of memory (output buffer)");
        rk_emit_reject(o, &err);
    }
}

static void rk_emit_init_result(rocke_result *out)
{
    out->status = ROCKE_ERROR;
    out->text = NULL;
    out->text_len = 0;
    out->code = NULL;
    out->message = NULL;
}

static char *rk_emit_strdup(const char *s)
{
    size_t n = strlen(s);
    char *copy = malloc(n + 1);
    if (copy)
        memcpy(copy, s, n + 1);
    return copy;
}

/* Fills out from a rejection or internal failure; the message is copied to the heap. */
static rocke_status rk_emit_fail_result(rocke_result *out, const char *code, int internal, const char *message)
{
    out->status = internal ? ROCKE_ERROR : ROCKE_REJECTED;
    out->code = code;
    out->message = rk_emit_strdup(message);
    if (!out->message) {
        out->status = ROCKE_ERROR;
        out->code = "E_INTERNAL";
    }
    return out->status;
}

static rocke_status rk_emit_error_result(rocke_result *out, const rk_error *err)
{
    return rk_emit_fail_result(out, err->code, err->internal, err->message);
}

/* Hands the outcome's heap buffer to the result: no copy of the (possibly 1 MB) text. */
static rocke_status rk_emit_outcome_result(rocke_result *out, rk_outcome *o)
{
    size_t len = o->out.len;
    char *data = rk_buf_take(&o->out);
    if (!data)
        return rk_emit_fail_result(out, "E_INTERNAL", 1, "out of memory (result)");
    if (o->code) {
        out->status = o->internal ? ROCKE_ERROR : ROCKE_REJECTED;
        out->code = o->code;
        out->message = data;
        return out->status;
    }
    out->status = ROCKE_EMITTED;
    out->text = data;
    out->text_len = len;
    return ROCKE_EMITTED;
}

rocke_status rocke_emit(const char *config, size_t config_len, const char *mode, const char *flavor,
                        rocke_result *out)
{
    rk_error err;
    rk_arena arena;
    rk_outcome outcome;
    rocke_status status;
    if (!out)
        return ROCKE_ERROR;
    rk_emit_init_result(out);
    rk_arena_init(&arena);
    rk_error_init(&err, &arena);
    if (!config && config_len > 0)
        return rk_emit_fail_result(out, "E_INTERNAL", 1, "config is NULL but config_len is not 0");
    if (!config)
        config = ""; /* NULL with length 0 is the empty config */
    if (rk_emit_check_mode_flavor(mode, flavor, &err)
        || rk_emit_check_size(config_len, &err) || rk_config_check_encoding(config, config_len, &err)) {
        status = rk_emit_error_result(out, &err);
        rk_arena_free(&arena);
        return status;
    }
    outcome.code = NULL;
    outcome.internal = 0;
    rk_buf_init(&outcome.out);
    rk_emit_emit_text(config, config_len, mode, flavor, &arena, &outcome);
    if (arena.failed && !outcome.internal) {
        /* A failed arena allocation surfaces as whatever error the stage reported; the
         * engine cannot trust that verdict, so it is an internal failure. */
        outcome.code = "E_INTERNAL";
        outcome.internal = 1;
        rk_buf_free(&outcome.out);
        rk_buf_puts(&outcome.out, "out of memory (arena)");
    }
    rk_arena_free(&arena);
    status = rk_emit_outcome_result(out, &outcome);
    rk_buf_free(&outcome.out);
    return status;
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
