"""Mode `ir`: the C kernel builder (rocke_c/src/build*.c) against the Python one, byte for byte.

Both engines run outside the harness: C through rocke_c/tests/build_driver.c (rocke_emit),
built with AddressSanitizer + UBSan into this session's tmp dir (skipped without gcc); Python
through emit (tests/tools/compare_ir.py).

For every shipped config: the same text, or the same code and message, and no engine
failure; the sanitizer must stay silent. Then a small fixed-seed fuzz smoke over mutated
shipped configs (tests/tools/compare_ir.py --fuzz runs thousands)."""

from __future__ import annotations

from pathlib import Path

import compare_ir
import pytest
from layout import REPO

CONFIGS = sorted(REPO.glob("parity_configs/*/*.toml"))
IDS = [f"{p.parent.name}/{p.stem}" for p in CONFIGS]


@pytest.fixture(scope="session")
def c_ir(sanitized_build_driver: Path) -> dict[str, compare_ir.Record]:
    """The C records of every shipped config (one driver run)."""
    return {
        str(path): record for path, record in zip(CONFIGS, compare_ir.c_records(sanitized_build_driver, CONFIGS, "ir"))
    }


@pytest.mark.parametrize("path", CONFIGS, ids=IDS)
def test_ir_identical(c_ir, path: Path) -> None:
    c = c_ir[str(path)]
    py = compare_ir.py_record(path.read_bytes(), "ir")
    assert py[0] != "X", f"Python engine failure: {py[2][:500]!r}"
    assert c[0] != "X", f"C engine failure: {c[1]} {c[2][:500]!r}"
    assert py == c, compare_ir.describe(str(path), py, c)
    if py[0] == "E":
        assert py[2].startswith(b"rocke.ir v1\nkernel @")


def test_fuzz_smoke(sanitized_build_driver: Path, tmp_path: Path) -> None:
    files = compare_ir.fuzz_files(sanitized_build_driver, 40, seed=20240601, out_dir=tmp_path)
    assert len(files) == 40
    same, differ, counts, _, _ = compare_ir.compare(sanitized_build_driver, files, "ir", verbose=5)
    assert differ == 0 and same == len(files), counts
