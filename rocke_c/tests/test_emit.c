/* test_emit.c: the public API (rocke.h) end to end: entry checks, result ownership,
 * determinism, and that a result can be freed twice. */
#include <string.h>
#include "rocke.h"
#include "check.h"

static const char baseline[] =
    "[target]\narch = \"gfx950\"\n\n[problem]\nN = 8\nHi = 56\nWi = 56\nC = 64\nK = 64\n"
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

static void expect_reject(const char *config, size_t len, const char *mode, const char *flavor,
                          const char *code)
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

int main(void)
{
    test_emits_spec();
    test_entry_checks();
    test_modes();
    return check_failures != 0;
}
