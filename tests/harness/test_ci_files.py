"""The CI files: .github/workflows/parity.yml and .pre-commit-hooks.yaml parse,
have the jobs and hooks they promise, and their rocke-parity commands run here — as written, on a
stand-in tree with an injected failure (a `rocke-parity` on the PATH that adds the stand-ins)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import standin_tree as pt
from layout import REPO

yaml = pytest.importorskip("yaml")

WORKFLOW = REPO / ".github" / "workflows" / "parity.yml"
HOOKS = REPO / ".pre-commit-hooks.yaml"
KEYS = ("spec", "ir", "ll.llvm20", "ll.llvm22", "ll.llvm23")
TREE = {
    "wgrad/00-ok": {},
    "wgrad/01-ok": {"standin": {"salt": "1"}},
    "fwd/00-ok": {"standin": {"salt": "f"}},
    "fwd/01-differs": {"standin": {"salt": "d", "c_ir": "alt"}},
}


@pytest.fixture
def tree(tmp_path):
    root = pt.make_tree(tmp_path / "repo", TREE)
    pt.write_golden(root, pt.golden_for(root, sorted(TREE), KEYS), modes=("spec", "ir", "ll"))
    shim = tmp_path / "bin" / "rocke-parity"
    shim.parent.mkdir()
    shim.write_text(
        f'#!/bin/sh\nexec {sys.executable} -m rocke_py.parity "$@" --engines {pt.engines_arg("all_modes")}\n'
    )
    shim.chmod(0o755)
    return root


def bash(root: Path, script: str, env: dict | None = None) -> subprocess.CompletedProcess:
    path = f"{root.parent / 'bin'}{os.pathsep}{os.environ['PATH']}"
    return subprocess.run(
        ["bash", "-e", "-c", script],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PATH": path, **(env or {})},
    )


def steps(job: dict) -> list[dict]:
    return [s for s in job["steps"] if "run" in s]


def test_the_files_are_valid_for_the_tools_that_read_them():
    # GitHub's workflow schema (vendored by check-jsonschema: no network), and pre-commit's own
    # checks of a hook manifest and of a config
    schema = [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows", str(WORKFLOW)]
    manifest = [sys.executable, "-m", "pre_commit", "validate-manifest", str(HOOKS)]
    config = [sys.executable, "-m", "pre_commit", "validate-config", str(REPO / ".pre-commit-config.yaml")]
    for cmd in (schema, manifest, config):
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr


def test_the_schema_check_fails_on_a_broken_workflow(tmp_path):
    text = WORKFLOW.read_text()
    assert "    steps:\n" in text
    broken = tmp_path / "parity.yml"
    broken.write_text(text.replace("    steps:\n", "    stages:\n", 1))  # a job with no steps and an unknown key
    cmd = [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows", str(broken)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "stages" in done.stdout + done.stderr


def test_the_workflow_has_the_shards_the_sanitizers_and_the_merge():
    wf = yaml.safe_load(WORKFLOW.read_text())
    jobs = wf["jobs"]
    assert set(jobs) == {"gate", "checks", "sanitizers", "merge"}
    assert all(j["runs-on"].startswith("ubuntu") for j in jobs.values())
    shards = jobs["gate"]["strategy"]["matrix"]["shard"]
    assert shards == list(range(1, len(shards) + 1)) and len(shards) >= 2
    assert jobs["gate"]["strategy"]["fail-fast"] is False
    gate_runs = " ".join(s["run"] for s in steps(jobs["gate"]))
    assert f"--shard ${{{{ matrix.shard }}}}/{len(shards)}" in gate_runs
    assert jobs["merge"]["needs"] == "gate" and jobs["merge"]["if"] == "always()"
    merge_runs = " ".join(s["run"] for s in steps(jobs["merge"]))
    assert "$GITHUB_STEP_SUMMARY" in merge_runs and "--junit gate-junit.xml" in merge_runs
    assert any(s.get("uses", "").startswith("mikepenz/action-junit-report") for s in jobs["merge"]["steps"])
    san = " ".join(s["run"] for s in steps(jobs["sanitizers"]))
    assert "-DROCKE_SANITIZE=ON" in san and "ctest" in san and "emit_driver" in san and "valgrind" in san
    # what .ci/run checks beside the gate, each a job of the matrix
    matrix = ["tests", "lint", "check-llvm", "numerics", "coverage", "fuzz"]
    assert jobs["checks"]["strategy"]["matrix"]["check"] == matrix
    checks = " ".join(s["run"] for s in steps(jobs["checks"]))
    ci_run = re.sub(r'"\$venv/bin/([\w-]+)"', r"\1", (REPO / ".ci" / "run").read_text())  # "$venv/bin/ruff" -> ruff
    commands = ["python -m pytest -n auto -q", "ruff check .", "ruff format --check .", "check_c_style.py"]
    commands += ["rocke-parity check-llvm", "rocke-parity numerics -j 2", "rocke-parity fuzz --seed"]
    commands += ["rocke-parity coverage --json", "ROCKE_READER_FUZZ_SECONDS=60"]
    for command in commands:
        assert command in checks and command in ci_run, command


def test_the_workflow_commands_run_here_and_merge_like_one_gate(tree, tmp_path):
    """Each shard's gate step, then the merge step, as the workflow writes them."""
    wf = yaml.safe_load(WORKFLOW.read_text())
    gate_step = next(s["run"] for s in steps(wf["jobs"]["gate"]) if "rocke-parity" in s["run"])
    for shard in wf["jobs"]["gate"]["strategy"]["matrix"]["shard"]:
        done = bash(tree, gate_step.replace("${{ matrix.shard }}", str(shard)))
        assert done.returncode in (0, 1), done.stderr
    merge_step = next(s["run"] for s in steps(wf["jobs"]["merge"]) if "rocke-parity merge" in s["run"])
    summary = tmp_path / "step-summary.md"
    summary.write_text("")
    done = bash(tree, merge_step, {"GITHUB_STEP_SUMMARY": str(summary)})
    full = bash(tree, "rocke-parity gate")
    assert done.returncode == full.returncode == 1  # the injected DIFFER fails the merged run too
    text = summary.read_text()
    assert text.startswith("## rocke-parity merge of 2 shards: FAILED") and "`DIFFER` fwd/01-differs ir" in text
    assert (tree / "gate-junit.xml").exists() and (tree / "gate.json").exists()


def test_the_hooks_parse_and_the_fast_hook_gates_what_a_change_affects(tree):
    hooks = yaml.safe_load(HOOKS.read_text())
    by_id = {h["id"]: h for h in hooks}
    assert set(by_id) == {"rocke-parity", "rocke-parity-full"}
    for h in hooks:
        assert {"id", "name", "entry", "language"} <= set(h) and h["language"] == "python"
    fast = by_id["rocke-parity"]
    assert fast["pass_filenames"] is True
    pattern = re.compile(fast["files"])

    def hook(*changed: str) -> subprocess.CompletedProcess:
        passed = [f for f in changed if pattern.search(f)]  # what pre-commit passes to the entry
        if not passed:  # pre-commit does not run a hook that no file matches
            return subprocess.CompletedProcess([], 0, "", "")
        return bash(tree, " ".join([fast["entry"], *passed]))

    one = hook("parity_configs/wgrad/01-ok.toml", "README.md")
    assert one.returncode == 0 and "5 job(s)" in one.stdout and "--paths (1 file(s))" in one.stdout
    assert hook("docs/user-guide.md").returncode == 0  # not matched: the hook does not run
    bad = hook("parity_configs/fwd/01-differs.toml")
    assert bad.returncode == 1 and "FAIL DIFFER fwd/01-differs ir" in bad.stdout
    harness = hook("rocke_py/parity/judge/gate.py")  # the harness changed: everything
    assert harness.returncode == 1 and "20 job(s)" in harness.stdout
    full = by_id["rocke-parity-full"]
    assert full["pass_filenames"] is False and bash(tree, full["entry"]).returncode == 1
