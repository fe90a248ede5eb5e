"""Spec-layer semantics checked in both engines against numbers taken from the reference
(docs/reference/conv-semantics.md), not from either engine's output."""

from __future__ import annotations

import pytest
from two_engines import config_text, rejection, spec_lines

REF_NAME_ASYNC = "conv_igemm_wgrad_N8H56W56C64_K64Y3X3_t64x64x64_w2x2_a32x32x16_mem_default_async_kouter_spk4"
REF_NAME_PAD = "conv_igemm_wgrad_N8H56W56C64_K64Y3X3_t64x64x64_w2x2_a32x32x16_mem_cshuffle_pad8"


def test_reference_name_async_kouter_spk4():
    s = spec_lines(config_text("wgrad", lds_k_outer=True, async_dma=True, split_k=4, dtype_d="fp32"))
    assert s["kernel_name"] == REF_NAME_ASYNC
    assert s["gemm_k"] == "25088"  # wg_K = N*Ho*Wo
    assert s["ks"] == str(25088 // 4)  # 98 async iterations of tile_k 64
    assert s["async_dwords_a"] == s["async_dwords_b"] == "4"


def test_reference_name_cshuffle_pad8():
    s = spec_lines(config_text("wgrad", epilogue="cshuffle", lds_k_pad=8))
    assert s["kernel_name"] == REF_NAME_PAD


def test_resolved_split_k_names_concrete_degree():
    # conv-semantics §10.1: base_grid = ceil(64/64)*ceil(576/64) = 9; floor(2*256/9) = 56 on gfx950.
    s = spec_lines(config_text("wgrad", split_k=-1, epilogue="cshuffle"))
    assert s["split_k"] == "56" and s["split_k_requested"] == "-1"
    assert s["kernel_name"].endswith("_spk56") and "spkauto" not in s["kernel_name"]


def test_auto_split_k_uses_arch_cu_count():
    # gfx942 has 304 CUs: floor(608/9) = 67.
    s = spec_lines(config_text("wgrad", arch="gfx942", split_k=-1, epilogue="cshuffle", warp_tile_m=16, warp_tile_n=16))
    assert s["split_k"] == "67"


def test_dgrad_auto_split_k_is_one():
    s = spec_lines(config_text("dgrad", split_k=-1))
    assert s["split_k"] == "1" and "spk" not in s["kernel_name"]


@pytest.mark.parametrize(
    "arch,extra,expected",
    [
        ("gfx950", {}, "true"),
        ("gfx942", {"warp_tile_m": 16, "warp_tile_n": 16}, "false"),
        (
            "gfx950",
            {"dtype_a": "fp32", "dtype_b": "fp32", "warp_tile_m": 16, "warp_tile_n": 16, "warp_tile_k": 4},
            "false",
        ),
        ("gfx1250", {"wave_size": 32, "warp_tile_m": 16, "warp_tile_n": 16, "warp_tile_k": 32}, "true"),
    ],
    ids=["gfx950", "gfx942", "gfx950-fp32", "gfx1250"],
)
def test_wgrad_k_outer_deduction(arch, extra, expected):
    s = spec_lines(config_text("wgrad", arch=arch, lds_k_outer="auto", **extra))
    assert s["lds_k_outer"] == expected and s["lds_k_outer_requested"] == "auto"


@pytest.mark.parametrize("C,expected", [(64, "true"), (63, "false")], ids=["cpg-even", "cpg-odd"])
def test_dgrad_k_outer_deduction_needs_even_cpg(C, expected):
    s = spec_lines(config_text("dgrad", problem={"C": C}, lds_k_outer="auto"))
    assert s["lds_k_outer"] == expected


def test_k_outer_lds_charge_exceeds_m_outer_when_tile_k_exceeds_tile_mn():
    # conv-semantics §9.2: at 32x32x64, K-outer (64, 40) vs M-outer (32, 72) per operand: 1 KB more in all.
    common = dict(tile_m=32, tile_n=32, tile_k=64, warp_m=1, warp_n=1)
    outer = spec_lines(config_text("wgrad", lds_k_outer=True, **common))
    inner = spec_lines(config_text("wgrad", lds_k_outer=False, **common))
    assert outer["lds_a_shape"] == "64x40" and inner["lds_a_shape"] == "32x72"
    assert int(outer["lds_bytes"]) - int(inner["lds_bytes"]) == 1024


def test_dgrad_k_outer_flips_b_only():
    s = spec_lines(config_text("dgrad", lds_k_outer=True))
    assert s["lds_a_shape"] == "64x72" and s["lds_b_shape"] == "64x72"
    s = spec_lines(config_text("dgrad", lds_k_outer=True, tile_k=32))
    assert s["lds_a_shape"] == "64x40" and s["lds_b_shape"] == "32x72"


def test_dgrad_budget_aliases_cshuffle_staging():
    # A + B = 2 * 64*72*2 = 18432 bytes; C staging 64*64*2 = 8192 aliases them: max, not sum.
    aliased = spec_lines(config_text("dgrad", epilogue="cshuffle"))
    apart = spec_lines(config_text("dgrad", epilogue="cshuffle", cshuffle_no_alias=True))
    assert aliased["lds_bytes"] == "18432" and apart["lds_bytes"] == str(18432 + 8192)


@pytest.mark.parametrize("C,dwords", [(64, "4"), (12, "1")], ids=["C64", "C12"])
def test_fwd_async_contiguous_run_guard(C, dwords):
    # conv-semantics §8: C = 12 rules out 8-element (12 % 8) and 6-element (128 % 6) chunks: 2 elements.
    s = spec_lines(config_text("fwd", problem={"C": C}, async_dma=True))
    assert s["async_dwords_a"] == s["async_dwords_b"] == dwords


def test_fwd_async_without_dwords_is_a_build_rejection():
    r = rejection(config_text("fwd", problem={"C": 3}, async_dma=True))
    assert r.code == "CONV_ASYNC_NO_DWORDS"


@pytest.mark.parametrize("strides,records", [((1, 1), 1), ((2, 2), 4), ((3, 1), 3)], ids=["s1", "s2", "s3x1"])
def test_dgrad_tilde_sub_gemm_count(strides, records):
    s = spec_lines(config_text("dgrad", problem={"sH": strides[0], "sW": strides[1]}))
    assert s["num_sub_gemms"] == str(records)


def test_dgrad_stride_one_record_is_the_whole_gemm():
    s = spec_lines(config_text("dgrad"))
    record = dict(kv.split("=") for kv in s["sub_gemm.0"].split())
    assert record["gemm_m"] == str(8 * 56 * 56) and record["gemm_k"] == str(9 * 64)
    assert record["block_start"] == "0" and record["num_n_tiles"] == "1"


def test_acc_epilogue_tag_in_name():
    s = spec_lines(config_text("wgrad", bias=2, scale=1234567, relu=True, clamp_max=6))
    assert s["acc_epilogue"] == "epi_bias2_scale1.23457e+06_relu_clamp-infto6"


def test_grouped_short_name_and_per_group_counts():
    s = spec_lines(config_text("wgrad", problem={"groups": 2}))
    assert s["short"] == "N8H56W56C64_K64Y3X3G2" and s["cpg"] == "32" and s["gemm_m"] == "32"


def test_3d_short_name():
    s = spec_lines(config_text("wgrad", problem={"Di": 14, "Z": 3, "sD": 1, "pD": 1, "dD": 1}))
    assert s["short"] == "N8D14H56W56C64_K64Z3Y3X3" and s["Do"] == "14"


def test_f16_alias_normalises():
    s = spec_lines(config_text("wgrad", dtype_a="f16"))
    assert s["dtype_a"] == "fp16"


@pytest.mark.parametrize("family,tile_k", [("fwd", "128"), ("wgrad", "64"), ("dgrad", "64")])
def test_family_defaults(family, tile_k):
    s = spec_lines(config_text(family))
    assert s["tile_k"] == tile_k and s["name"] == f"conv_igemm_{family}"
