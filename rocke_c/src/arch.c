/* arch.c: target data of the five archs: wave size, LDS capacity, CU count, MMA table.
 *
 * Twin of rocke_py/engine/arch.py: one table, the same rows (docs/reference/llvm-ir.md §14,
 * docs/reference/conv-semantics.md §3.2 and §10.1). Everything here is static const: no
 * mutable state. */
#include <stddef.h>
#include <string.h>
#include "internal.h"

#define RK_N_ARCHS 5
#define RK_COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* (dtype, m, n, k) rows with dtype_a == dtype_b and an fp32 accumulator. */
static const rk_mma rk_mfma_gfx942[] = {
    {"fp16", 16, 16, 16}, {"fp16", 32, 32, 8}, {"bf16", 16, 16, 16},
    {"bf16", 32, 32, 8},  {"fp32", 16, 16, 4}, {"fp32", 32, 32, 2},
};
static const rk_mma rk_mfma_gfx950[] = {
    {"fp16", 16, 16, 16}, {"fp16", 16, 16, 32}, {"fp16", 32, 32, 8},  {"fp16", 32, 32, 16}, {"bf16", 16, 16, 16},
    {"bf16", 16, 16, 32}, {"bf16", 32, 32, 8},  {"bf16", 32, 32, 16}, {"fp32", 16, 16, 4},  {"fp32", 32, 32, 2},
};
static const rk_mma rk_wmma_rdna[] = {{"fp16", 16, 16, 16}, {"bf16", 16, 16, 16}};
static const rk_mma rk_wmma_gfx1250[] = {{"fp16", 16, 16, 32}, {"bf16", 16, 16, 32}, {"fp32", 16, 16, 4}};

/* The last column: the widest direct global->LDS load per lane, in dwords (llvm-ir §12.5). */
static const rk_target rk_targets[RK_N_ARCHS] = {
    {"gfx942", 64, 65536, 1024, 304, 1, 0, rk_mfma_gfx942, RK_COUNT(rk_mfma_gfx942), 1},
    {"gfx950", 64, 163840, 1024, 256, 1, 0, rk_mfma_gfx950, RK_COUNT(rk_mfma_gfx950), 4},
    {"gfx1151", 32, 65536, 1024, 64, 0, 1, rk_wmma_rdna, RK_COUNT(rk_wmma_rdna), 0},
    {"gfx1201", 32, 65536, 1024, 256, 0, 0, rk_wmma_rdna, RK_COUNT(rk_wmma_rdna), 0},
    {"gfx1250", 32, 163840, 1024, 256, 0, 0, rk_wmma_gfx1250, RK_COUNT(rk_wmma_gfx1250), 0},
};

/* The archs that have a transpose read, and the wave size of each regime (conv-semantics §5).
 * Python keeps this as the dict LDS_K_OUTER_ARCH_WAVE; 0 plays the part of a missing key. */
long long rk_lds_k_outer_arch_wave(const char *arch)
{
    if (strcmp(arch, "gfx950") == 0)
        return 64;
    if (strcmp(arch, "gfx1250") == 0)
        return 32;
    return 0;
}

const rk_target *rk_target_for(const char *arch)
{
    int i;
    for (i = 0; i < RK_N_ARCHS; i++)
        if (strcmp(rk_targets[i].arch, arch) == 0)
            return &rk_targets[i];
    return NULL;
}

int rk_has_mma(const rk_target *t, const char *dtype_a, const char *dtype_b, long long m, long long n, long long k)
{
    int i;
    if (strcmp(dtype_a, dtype_b) != 0)
        return 0;
    for (i = 0; i < t->n_mma; i++) {
        const rk_mma *row = &t->mma[i];
        if (strcmp(row->dtype, dtype_a) == 0 && row->m == m && row->n == n && row->k == k)
            return 1;
    }
    return 0;
}

/* A/B elements per lane for one atom side (conv-semantics §3.2). */
long long rk_frag_len(const rk_target *t, long long edge, long long warp_tile_k, long long wave_size)
{
    if (t->is_gfx11)
        return warp_tile_k;
    return rk_floordiv(edge * warp_tile_k, wave_size);
}
