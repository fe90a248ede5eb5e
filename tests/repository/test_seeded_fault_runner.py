"""scripts/seeded_faults.py: every seeded fault still applies to the tree (its text occurs exactly
once), and the runner can say both "caught" and "not caught"."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from layout import REPO

sys.path.insert(0, str(REPO / "scripts"))

import seeded_faults  # noqa: E402
from seeded_faults import FAULTS, WHERE, SeededFaultError, apply_fault  # noqa: E402

BY_ID = {f.id: f for f in FAULTS}


def test_ids_are_unique_and_every_fault_names_a_known_place() -> None:
    assert len(BY_ID) == len(FAULTS)
    assert {f.where for f in FAULTS} == set(WHERE)
    assert all(f.old != f.new and f.why for f in FAULTS)


@pytest.mark.parametrize("fault", FAULTS, ids=lambda f: f.id)
def test_the_text_to_replace_occurs_exactly_once(fault) -> None:
    text = (REPO / fault.path).read_text(encoding="utf-8")
    assert text.count(fault.old) == 1, f"{fault.id}: edit {fault.path} or the fault, so that they agree"


def test_applying_a_fault_changes_its_file_and_a_missing_text_is_refused(tmp_path: Path) -> None:
    fault = FAULTS[0]
    (tmp_path / fault.path).parent.mkdir(parents=True)
    shutil.copy(REPO / fault.path, tmp_path / fault.path)
    before = (tmp_path / fault.path).read_text(encoding="utf-8")
    apply_fault(tmp_path, fault)
    after = (tmp_path / fault.path).read_text(encoding="utf-8")
    assert after != before and after == before.replace(fault.old, fault.new)
    with pytest.raises(SeededFaultError, match="0 times"):
        apply_fault(tmp_path, fault)  # applied already: the text is gone


def test_first_failure_reads_pytest_short_summary() -> None:
    out = "....\nERROR tests/a.py::t0 - boom\nFAILED tests/b.py::t1[x] - assert 1\nFAILED tests/c.py::t2\n"
    assert seeded_faults.first_failure(out) == "tests/b.py::t1[x]"
    assert seeded_faults.first_failure("ERROR tests/a.py::t0 - boom\n") == "tests/a.py::t0"
    assert seeded_faults.first_failure("1 passed\n") == ""


def test_the_verdict_of_a_run() -> None:
    stopped = "FAILED tests/b.py::t1 - x\n!!! xdist.dsession.Interrupted: stopping after 1 failures !!!\n"
    assert seeded_faults.verdict(1, "FAILED tests/b.py::t1\n") == "caught"
    assert seeded_faults.verdict(2, stopped) == "caught"  # how xdist ends a run -x stopped
    assert seeded_faults.verdict(0, "1 passed\n") == "not caught"
    assert seeded_faults.verdict(2, "ERROR: usage\n") == "error"  # a usage error, nothing failed
    assert seeded_faults.verdict(5, "no tests ran\n") == "error"
    assert seeded_faults.verdict(None, "") == "error"  # the timeout


def run_script(tmp_path: Path, fault: str, selection: str) -> dict:
    out = tmp_path / f"{fault}.json"
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "seeded_faults.py"), "--rev", "HEAD", "--only", fault]
        + ["--json", str(out), "--timeout", "600", "--", "-n", "0", selection],  # -n 0: no workers to start
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [result] = json.loads(out.read_text())["results"]
    return result


def test_the_runner_says_caught_and_not_caught(tmp_path: Path) -> None:
    """One fault against a test that catches it, and against one that cannot."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout: nothing to archive")
    catcher = "tests/harness/test_harness_diff.py::test_canonicalise_renumbers_in_first_appearance_order_per_function"
    caught = run_script(tmp_path, "harness-canon-no-restart", catcher)
    assert caught["status"] == "caught" and caught["exit"] == 1, caught
    assert caught["first_failure"] == catcher
    unrelated = "tests/harness/test_scheduling.py::test_costliest_first_is_stable"
    missed = run_script(tmp_path, "harness-canon-no-restart", unrelated)
    assert missed["status"] == "not caught" and missed["exit"] == 0 and not missed["first_failure"], missed
