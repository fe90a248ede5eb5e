"""scripts/engine_coverage.py: both engines' line and branch reach, twin beside twin. The numbers
move with the inputs (a negative config reaches a validation rule a positive one does not),
so the report measures the inputs, not a constant."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "engine_coverage.py"


def load():
    spec = importlib.util.spec_from_file_location("engine_coverage", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_twins_pair_by_name_and_list_the_rest() -> None:
    ec = load()
    rows = ec.twins({"spec.py": {}, "result.py": {}}, {"spec.c": {}, "arena.c": {}, "support.h": {}})
    assert rows[0] == ("spec", "spec.py", "spec.c")
    assert set(rows[1:]) == {("arena", "", "arena.c"), ("result", "result.py", ""), ("support.h", "", "support.h")}


def python_reach(tmp_path: Path, inputs: list[Path], name: str) -> dict:
    """The Python engine's numbers, measured in a process of their own (a fresh import)."""
    out = tmp_path / f"{name}.json"
    cmd = [sys.executable, str(SCRIPT), "--python-only", "--json", str(out), *map(str, inputs)]
    subprocess.run(cmd, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    return json.loads(out.read_text())["python"]


def test_a_negative_config_reaches_its_rule(tmp_path: Path) -> None:
    """validate.py reaches more lines with a negative config beside a positive one than with
    the positive one alone."""
    positive = ROOT / "parity_configs" / "fwd" / "00-baseline.toml"
    negative = next((ROOT / "parity_configs" / "fwd").glob("1??-*.toml"))
    alone = python_reach(tmp_path, [positive], "alone")["validate.py"]["lines_covered"]
    both = python_reach(tmp_path, [positive, negative], "both")["validate.py"]["lines_covered"]
    assert both > alone > 0


@pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("gcov") is None, reason="needs cmake and gcov")
def test_the_report_covers_both_engines(tmp_path: Path, capsys) -> None:
    out = tmp_path / "cov.json"
    inputs = [str(ROOT / "parity_configs" / "wgrad" / "11-kouter-cshuffle.toml")]
    assert load().main([*inputs, "--json", str(out)]) == 0
    record = json.loads(out.read_text())
    assert record["inputs"] == 1
    assert record["python"]["lower_ll.py"]["lines_covered"] > 0
    assert record["c"]["lower_ll.c"]["lines_covered"] > 0
    text = capsys.readouterr().out
    assert "lower_ll" in text and "python engine: lines" in text and "C engine: lines" in text


def test_rule_reach_names_the_config_that_reaches_a_rule() -> None:
    """wgrad/102 is rejected by the [spec] block-size rule: that row, and no other, is reached
    by it; without it (a positive config alone) no rule is reached."""
    ec = load()
    negative = ROOT / "parity_configs" / "wgrad" / "102-block-size.toml"
    rules = ec.rule_reach([negative])
    reached = [r for r in rules if r["reached_by"]]
    assert [(r["code"], r["check"], r["reached_by"]) for r in reached] == [
        ("WGRAD_BLOCK_SIZE", "block_size_spec", "parity_configs/wgrad/102-block-size.toml")
    ]
    assert not any(r["reached_by"] for r in ec.rule_reach([ROOT / "parity_configs" / "wgrad" / "00-baseline.toml"]))
    assert len(rules) > 100 and {r["family"] for r in rules} == {"fwd", "wgrad", "dgrad"}
