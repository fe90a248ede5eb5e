"""The fuzzer finds a seeded fault within a bounded budget and reduces it to a small config.

Each fault lives in one engine, through a wrapped engine (tests/fuzz/fuzz_engines.py), and
fires only for one arch with one epilogue and one tile_k. ``rocke-parity fuzz`` must exit 1,
report the failure, and write its reduction — at most 3 keys beyond the required ones — as a
parity config through ``new``'s writer into a copy of the tree, plus the original and the
reduction log under the report folder.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from layout import REPO

from rocke_py.fuzz.case import key_count
from rocke_py.parity.cli import main
from rocke_py.parity.store._toml import tomllib

ENGINES = REPO / "tests" / "fuzz" / "fuzz_engines.py"


def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    shutil.copytree(REPO / "parity_configs", root / "parity_configs")
    return root


def fuzz(root: Path, fault: str, report: Path, *extra: str) -> int:
    e = str(ENGINES)
    engines = f"{e}:real_py,{e}:{fault}_c,{e}:implemented_modes,{e}:implemented_modes"
    args = ["fuzz", "--root", str(root), "--engines", engines, "--seed", "11", "--budget", "60", "-j", "2"]
    args += ["--modes", "spec", "--cases", "600", "--report", str(report), "--add-configs", *extra]
    return main(args)


@pytest.mark.parametrize(
    ("fault", "family", "status", "signature_head", "expect"),
    [
        ("differ", "wgrad", "DIFFER", ["DIFFER", "spec", "lds_bytes = #", "lds_bytes = #"], "emit"),
        ("segv", "fwd", "CRASH", ["CRASH", "spec", "c", "SIGSEGV"], "emit"),
    ],
)
def test_seeded_fault_is_found_and_reduced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fault: str, family: str, status: str, signature_head, expect
) -> None:
    root = tree(tmp_path)
    report = tmp_path / "report"
    assert fuzz(root, fault, report, "--family", family) == 1
    out = capsys.readouterr().out
    assert f"FAIL {status}" in out
    folders = sorted((report / "failures").iterdir())
    assert [f.name for f in folders] == [f"01-{status.lower()}"]
    folder = folders[0]
    outcome = json.loads((folder / "outcome.json").read_text())
    assert outcome["signature"] == signature_head
    reduced = (folder / "reduced.toml").read_text()
    total, beyond = key_count(reduced)
    assert beyond <= 3, reduced
    assert key_count((folder / "original.toml").read_text())[1] >= beyond
    assert "keys:" in (folder / "reduction.log").read_text()
    # the parity config: in the report folder, and in the tree through new's writer
    (config,) = [p for p in folder.glob(f"{family}-*.toml")]
    doc = tomllib.loads(config.read_text())
    assert doc["parity"]["expect"] == expect
    assert status in doc["parity"]["description"]
    added = sorted((root / "parity_configs" / family).glob("*-fuzz-*.toml"))
    assert [p.name for p in added] == [config.name.removeprefix(f"{family}-")]
    # the added config reproduces the failure in the gate
    gate = main(
        [
            "gate",
            "--root",
            str(root),
            "--config",
            f"{family}/{added[0].stem}",
            "--mode",
            "spec",
            "--engines",
            f"{ENGINES}:real_py,{ENGINES}:{fault}_c,{ENGINES}:implemented_modes,{ENGINES}:implemented_modes",
        ]
    )
    assert gate == 1
    assert status in capsys.readouterr().out


def test_real_engines_pass_a_small_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tree(tmp_path)
    args = [
        "fuzz",
        "--root",
        str(root),
        "--seed",
        "3",
        "--budget",
        "60",
        "-j",
        "2",
        "--modes",
        "spec,ir",
        "--cases",
        "40",
    ]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "family" in out and "reason codes reached" in out and "cases/s" in out
    assert "40 case(s)" in out


def test_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tree(tmp_path)
    assert main(["fuzz", "--root", str(root), "--seed", "1", "--budget", "0"]) == 2
    assert main(["fuzz", "--root", str(root), "--seed", "1", "--budget", "5", "--family", "bwd"]) == 2
    assert main(["fuzz", "--root", str(root), "--seed", "1", "--budget", "5", "--modes", "asm"]) == 2
    assert "--modes" in capsys.readouterr().err
