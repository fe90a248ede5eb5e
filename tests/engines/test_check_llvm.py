"""check-llvm: every emitting config's ll (llvm22) compiles with LLVM 22 (llvmlite) for its
arch, contains its isa list, and has a transpose read exactly when it is K-outer."""

from __future__ import annotations

import pytest
from layout import REPO

from rocke_py.check.isa import check_asm, check_config, has_instruction, histogram, propose_isa
from rocke_py.parity.cli import main
from rocke_py.parity.inputs.configs import discover

EMITTING = [c for c in discover(REPO).configs if c.expect.emits]

ASM = """\
\tbuffer_load_dwordx4 v1, s[4:7], 0 offen nt lds
\tds_read_b64_tr_b16 v[2:3], v4
\tv_mfma_f32_32x32x16_f16 a[0:15], v[0:3], v[4:7], a[0:15]
"""


def test_isa_tokens_and_modifiers() -> None:
    assert has_instruction(ASM, "buffer_load_dwordx4")
    assert has_instruction(ASM, "buffer_load_dwordx4+lds")
    assert not has_instruction(ASM, "buffer_load_dword+lds")
    assert not has_instruction(ASM, "v_mfma_f32_32x32x8_f16")


def test_transpose_read_present_exactly_when_k_outer() -> None:
    assert check_asm("v_mfma_f32_32x32x16_f16", "gfx950", True, ASM) == []
    assert check_asm(None, "gfx950", False, ASM) == ["M-outer kernel contains a transpose read (ds_read_b64_tr_b16)"]
    no_tr = ASM.replace("ds_read_b64_tr_b16", "ds_read_b64")
    assert check_asm(None, "gfx950", True, no_tr) == ["K-outer kernel without its transpose read (ds_read_b64_tr_b16)"]
    assert check_asm("s_setprio", "gfx950", True, ASM) == ["missing s_setprio"]


def test_every_emitting_config_names_its_main_path() -> None:
    for cfg in EMITTING:
        assert cfg.isa, f"{cfg.id} has no isa list"
        assert any(w.startswith(("v_mfma_", "v_wmma_")) for w in cfg.isa.split()), cfg.id


@pytest.mark.parametrize("cfg", EMITTING, ids=[c.id for c in EMITTING])
def test_compiles_with_llvm_22(cfg) -> None:
    result = check_config(cfg, timeout=600)
    assert result.ok, result.detail


def test_the_isa_proposal_takes_the_widest_of_each_kind() -> None:
    asm = ASM + "\tds_write_b16 v1, v2\n\tds_write_b128 v1, v[2:5]\n\tds_write_b16_d16_hi v1, v2\n"
    asm += "\tbuffer_store_short v1, v2, s[0:3], 0 offen\n\ts_endpgm\n"
    assert histogram(asm)["ds_write_b16"] == 1 and "s_endpgm" in histogram(asm)
    assert propose_isa(asm) == (
        "v_mfma_f32_32x32x16_f16 ds_read_b64_tr_b16 buffer_load_dwordx4 ds_write_b128 buffer_store_short "
        "buffer_load_dwordx4+lds"
    )


def _tree_without_isa(tmp_path, cid: str = "wgrad/11-kouter-cshuffle"):
    family, name = cid.split("/")
    (tmp_path / "parity_configs" / family).mkdir(parents=True)
    text = (REPO / "parity_configs" / family / f"{name}.toml").read_text()
    lines = [line for line in text.splitlines() if not line.startswith("isa = ")]
    (tmp_path / "parity_configs" / family / f"{name}.toml").write_text("\n".join(lines) + "\n")
    return tmp_path


def test_an_emitting_config_without_an_isa_list_fails_and_is_told_one(tmp_path, capsys) -> None:
    """The fault: an emitting config whose isa list was dropped. It used to pass (`isa: -`)."""
    root = _tree_without_isa(tmp_path)
    assert main(["check-llvm", "--root", str(root), "wgrad/11"]) == 1
    out = capsys.readouterr().out
    assert "FAIL wgrad/11-kouter-cshuffle (gfx950): no isa list: add [parity] isa = " in out
    assert "ds_read_b64_tr_b16" in out.split("no isa list", 1)[1]


def test_the_histogram_counts_each_instruction_and_suggests_a_list(tmp_path, capsys) -> None:
    root = _tree_without_isa(tmp_path)
    assert main(["check-llvm", "--histogram", "--root", str(root), "wgrad/11"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("wgrad/11-kouter-cshuffle (gfx950): ")
    assert " ds_read_b64_tr_b16\n" in out and 'suggested isa = "v_mfma_f32_32x32x16_f16 ' in out
