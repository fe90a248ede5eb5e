"""--version on every program and command; the JSON report's summary head and --json-full."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import standin_tree as pt
from layout import REPO

from rocke_py.parity.run import version as version_module
from rocke_py.parity.run.engines import EngineSpec
from rocke_py.parity.run.version import build_id, engine_ids

BIN = Path(sys.executable).parent
VERSION = re.compile(r"^[a-z-]+ \d+\.\d+\.\d+ \(.*\)$")
COMMANDS = ("gate", "diff", "emit", "list", "new", "golden", "check-llvm")


@pytest.mark.parametrize(
    "argv",
    [
        ["rocke-parity", "--version"],
        *(
            ["rocke-parity", cmd, "--version"]
            for cmd in ("gate", "diff", "emit", "list", "new", "golden", "check-llvm")
        ),
        ["parity-diff", "--version"],
        ["rocke-emit", "--version"],
    ],
    ids=lambda a: " ".join(a[:2]),
)
def test_every_program_and_command_has_version(argv):
    got = subprocess.run([str(BIN / argv[0]), *argv[1:]], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert got.returncode == 0, got.stderr
    lines = got.stdout.splitlines()
    assert VERSION.match(lines[0]), got.stdout
    if argv[0] != "rocke-emit":  # inside a tree, the tree's fingerprint follows
        assert re.match(rf"^tree {re.escape(str(REPO))}: commit \S+, golden [0-9a-f]{{12}}, ", lines[1]), got.stdout


def test_the_cmake_binary_has_version_too(rocke_emit):
    got = subprocess.run([str(rocke_emit), "--version"], capture_output=True, text=True, timeout=60)
    assert got.returncode == 0 and re.match(r"^rocke-emit \d+\.\d+\.\d+$", got.stdout.strip())


def test_build_ids_follow_the_engine_files(tmp_path):
    a = tmp_path / "eng_a.py"
    a.write_text("def emit(c, m, f): return None\n")
    first = build_id(f"{a}:emit")
    a.write_text("def emit(c, m, f): return 1\n")
    assert build_id(f"{a}:emit") != first  # an edited engine is another build
    facts = [p.name for p in version_module._module_files("rocke_py.facts")]
    assert facts == ["facts.py"] and "rocke_py.facts" in version_module._BUILT_WITH["rocke_py.engine"]
    ids = engine_ids(EngineSpec())
    assert all(re.fullmatch(r"[0-9a-f]{16}", ids[side]["build_id"]) for side in ("py", "c"))


def test_json_report_starts_with_a_summary_and_keeps_passing_jobs_small(tmp_path):
    root = pt.make_tree(tmp_path, {"wgrad/00-ok": {}, "wgrad/01-differ": {"standin": {"c": "alt"}}})
    pt.write_golden(root, pt.golden_for(root, ["wgrad/00-ok"]))
    small = json.loads(pt.run_cli(root, "gate", "--json", "-").stdout)
    assert list(small)[:2] == ["schema", "summary"]
    head = small["summary"]
    assert head["jobs"] == 2 and head["failed"] == 1 and head["passed"] is False
    assert head["counts"] == {"IDENTICAL": 1, "DIFFER": 1} and head["version"]
    assert set(head["engines"]) == {"py", "c"} and head["engines"]["py"]["emit"].endswith(":py_emit")
    recs = {r["config"]: r for r in small["jobs"]}
    assert "py_repeat" not in recs["wgrad/00-ok"] and "reason" not in recs["wgrad/00-ok"]
    assert "py_repeat" in recs["wgrad/01-differ"] and recs["wgrad/01-differ"]["reason"]  # a failure: whole
    full = json.loads(pt.run_cli(root, "gate", "--json", "-", "--json-full").stdout)
    assert "py_repeat" in {r["config"]: r for r in full["jobs"]}["wgrad/00-ok"]
