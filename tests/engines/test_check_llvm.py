"""check-llvm: every emitting config's ll (llvm22) compiles with LLVM 22 (llvmlite) for its
arch, contains its isa list, and has a transpose read exactly when it is K-outer."""

from __future__ import annotations

import pytest
from layout import REPO

from rocke_py.check.isa import check_asm, check_config, has_instruction
from rocke_py.parity.configs import discover

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
