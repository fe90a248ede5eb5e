"""Mode `ir`: the C kernel builder (rocke_c/src/build*.c) against the Python one, byte for byte.

Mode ir is not advertised yet (rocke_implemented_modes / IMPLEMENTED_MODES), so both engines
run below their mode check: C through rocke_c/tests/build_driver.c (rk_emit_emit_internal),
built with AddressSanitizer + UBSan into this session's tmp dir (skipped without gcc);
Python through emit_text with build_kernel(staged=...) (tests/tools/compare_ir.py).

For every shipped config, staged (the features still to land are E_NOT_IMPLEMENTED in both)
and unstaged (every valid spec is built): the same text, or the same code and message, and no
engine failure; the sanitizer must stay silent. Then a small fixed-seed fuzz smoke over
mutated shipped configs (tests/tools/compare_ir.py --fuzz runs thousands)."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "tools"))

import compare_ir  # noqa: E402

CONFIGS = sorted(ROOT.glob("parity_configs/*/*.toml"))
IDS = [f"{p.parent.name}/{p.stem}" for p in CONFIGS]
NOT_BUILT_YET = "E_NOT_IMPLEMENTED"


@pytest.fixture(scope="session")
def driver(tmp_path_factory) -> Path:
    if shutil.which("gcc") is None:
        pytest.skip("gcc not found")
    return compare_ir.build_driver(tmp_path_factory.mktemp("ir_parity"), sanitize=True)


@pytest.fixture(scope="session")
def c_ir(driver) -> dict[tuple[str, bool], compare_ir.Record]:
    """The C records of every shipped config, staged and unstaged (one driver run each)."""
    out = {}
    for staged in (True, False):
        for path, record in zip(CONFIGS, compare_ir.c_records(driver, CONFIGS, "ir", staged)):
            out[(str(path), staged)] = record
    return out


@pytest.mark.parametrize("staged", [True, False], ids=["staged", "unstaged"])
@pytest.mark.parametrize("path", CONFIGS, ids=IDS)
def test_ir_identical(c_ir, path: Path, staged: bool) -> None:
    c = c_ir[(str(path), staged)]
    py = compare_ir.py_record(path.read_bytes(), "ir", staged)
    assert py[0] != "X", f"Python engine failure: {py[2][:500]!r}"
    assert c[0] != "X", f"C engine failure: {c[1]} {c[2][:500]!r}"
    assert py == c, compare_ir.describe(str(path), py, c)
    if py[0] == "E":
        assert py[2].startswith(b"rocke.ir v1\nkernel @")
    if not staged:
        assert py[1] != NOT_BUILT_YET


def test_staged_rejects_exactly_the_unbuilt_features(c_ir) -> None:
    """Staged, E_NOT_IMPLEMENTED is exactly the configs unstaged builds that use lds_k_outer,
    async_dma or pipeline basic (the kernel names carry kouter/async; basic is in the name)."""
    for path in CONFIGS:
        staged, unstaged = c_ir[(str(path), True)], c_ir[(str(path), False)]
        if staged[1] == NOT_BUILT_YET:
            assert unstaged[0] == "E", path
            head = unstaged[2].split(b"\n", 2)[1]
            assert any(w in head for w in (b"_kouter", b"_async", b"_basic_")), (path, head)
        else:
            assert staged == unstaged, path


def test_fuzz_smoke(driver, tmp_path) -> None:
    files = compare_ir.fuzz_files(driver, 40, seed=20240601, out_dir=tmp_path)
    assert len(files) == 40
    for staged in (True, False):
        same, differ, counts, _, _ = compare_ir.compare(driver, files, "ir", staged, verbose=5)
        assert differ == 0 and same == len(files), counts
