/* test_emit.c: the public API (rocke.h) end to end: entry checks, result ownership,
 * determinism, that a result can be freed twice, and that a rocke_context reused across
 * calls (rejections among them) gives rocke_emit's bytes, with or without a stage note. */
#include <string.h>
#include "rocke.h"
#include "check.h"

static const char baseline[] = "[target]\narch = \"gfx950\"\n\n[problem]\nN = 8\nHi = 56\nWi = 56\nC = 64\nK = 64\n"
                               "Y = 3\nX = 3\n\n[spec]\nfamily = \"wgrad\"\n";

static void test_emits_spec(void)
{
    rocke_result r, again;
    CHECK(rocke_emit(baseline, sizeof baseline - 1, "spec", "llvm22", &r) == ROCKE_EMITTED);
    CHECK(r.text && r.code == NULL && r.message == NULL);
    CHECK(r.text_len == strlen(r.text));
    CHECK(strncmp(r.text, "rocke.spec v1\n", 14) == 0);
    CHECK(strstr(r.text, "kernel_name = conv_igemm_wgrad_") != NULL);
    CHECK(rocke_emit(baseline, sizeof baseline - 1, "spec", "llvm20", &again) == ROCKE_EMITTED);
    CHECK(again.text_len == r.text_len && memcmp(again.text, r.text, r.text_len) == 0);
    rocke_result_free(&r);
    rocke_result_free(&r);
    rocke_result_free(&again);
}

static void expect_reject(const char *config, size_t len, const char *mode, const char *flavor, const char *code)
{
    rocke_result r;
    CHECK(rocke_emit(config, len, mode, flavor, &r) == ROCKE_REJECTED);
    CHECK(r.text == NULL);
    CHECK(r.code && strcmp(r.code, code) == 0);
    CHECK(r.message && r.message[0] != '\0');
    rocke_result_free(&r);
}

static void test_entry_checks(void)
{
    static const char nul[] = "[target]\narch = \"gfx950\"\0\n";
    static const char bad_utf8[] = "[target]\n# \xff\n";
    expect_reject(baseline, sizeof baseline - 1, "asm", "llvm22", "E_MODE");
    expect_reject(baseline, sizeof baseline - 1, "spec", "llvm99", "E_FLAVOR");
    expect_reject(nul, sizeof nul - 1, "spec", "llvm22", "E_ENCODING");
    expect_reject(bad_utf8, sizeof bad_utf8 - 1, "spec", "llvm22", "E_ENCODING");
    expect_reject("", 0, "spec", "llvm22", "E_MISSING");
}

static void test_modes(void)
{
    const char *modes = rocke_implemented_modes();
    CHECK(modes && strstr(modes, "spec") != NULL);
    CHECK(rocke_version() && rocke_version()[0] != '\0');
}

/* The same verdict and bytes through ctx as through rocke_emit. */
static void same_in_context(rocke_context *ctx, const char *config, size_t len, const char *mode)
{
    rocke_result plain, reused;
    rocke_status a = rocke_emit(config, len, mode, "llvm22", &plain);
    rocke_status b = rocke_emit_in(ctx, config, len, mode, "llvm22", &reused);
    CHECK(a == b);
    CHECK(plain.text_len == reused.text_len);
    CHECK((plain.text == NULL) == (reused.text == NULL));
    if (plain.text && reused.text)
        CHECK(memcmp(plain.text, reused.text, plain.text_len) == 0);
    CHECK((plain.code == NULL) == (reused.code == NULL));
    if (plain.code && reused.code)
        CHECK(strcmp(plain.code, reused.code) == 0 && strcmp(plain.message, reused.message) == 0);
    rocke_result_free(&plain);
    rocke_result_free(&reused);
}

static void test_context_reuse(void)
{
    /* tile_m = 48 fails validation late, after the arena has been used */
    static const char late_reject[] =
        "[target]\narch = \"gfx950\"\n\n[problem]\nN = 8\nHi = 56\nWi = 56\nC = 64\nK = 64\n"
        "Y = 3\nX = 3\n\n[spec]\nfamily = \"wgrad\"\ntile_m = 48\n";
    static const char *const modes[] = {"ll", "ir", "spec", "ll"};
    rocke_context *ctx = rocke_context_new();
    rocke_result r;
    int round, i;
    CHECK(ctx != NULL);
    for (round = 0; round < 2; round++) {
        for (i = 0; i < 4; i++) {
            same_in_context(ctx, baseline, sizeof baseline - 1, modes[i]);
            same_in_context(ctx, late_reject, sizeof late_reject - 1, modes[i]);
            same_in_context(ctx, "[target]\n", 10, modes[i]);
        }
    }
    CHECK(rocke_emit_in(ctx, baseline, sizeof baseline - 1, "asm", "llvm22", &r) == ROCKE_REJECTED);
    rocke_result_free(&r);
    same_in_context(ctx, baseline, sizeof baseline - 1, "ll");
    CHECK(rocke_emit_in(ctx, baseline, sizeof baseline - 1, "ll", "llvm22", NULL) == ROCKE_ERROR);
    same_in_context(NULL, baseline, sizeof baseline - 1, "ir"); /* a NULL context is rocke_emit */
    rocke_context_free(ctx);
    rocke_context_free(NULL);
}

/* A stage note changes no byte, is empty after each call, and a short one is cut, not overrun. */
static void test_stage_note(void)
{
    static const char *const modes[] = {"spec", "ir", "ll"};
    char note[64], tiny[5];
    rocke_context *ctx = rocke_context_new();
    int i;
    CHECK(ctx != NULL);
    memset(note, 'x', sizeof note);
    rocke_context_set_note(ctx, note, sizeof note);
    CHECK(note[0] == '\0'); /* set: empty until a call starts */
    for (i = 0; i < 3; i++) {
        same_in_context(ctx, baseline, sizeof baseline - 1, modes[i]);
        CHECK(note[0] == '\0');
    }
    memset(tiny, 'x', sizeof tiny);
    rocke_context_set_note(ctx, tiny + 1, 3); /* tiny[0] and tiny[4] are guards */
    same_in_context(ctx, baseline, sizeof baseline - 1, "ll");
    CHECK(tiny[0] == 'x' && tiny[4] == 'x' && tiny[1] == '\0');
    rocke_context_set_note(ctx, NULL, 16); /* off */
    same_in_context(ctx, baseline, sizeof baseline - 1, "ir");
    rocke_context_set_note(NULL, note, sizeof note); /* a no-op */
    rocke_context_free(ctx);
}

int main(void)
{
    test_emits_spec();
    test_entry_checks();
    test_modes();
    test_context_reuse();
    test_stage_note();
    return check_failures != 0;
}
