"""SIGTERM to ``rocke-parity fuzz`` after it found failures: what it found is saved, then exit 143.

The C engine (``tests/faults/report_faults.py``: ``differ_then_hang``) differs from the Python
one on every case, and each of its calls after the first batch's hangs, leaving a marker. The
signal comes once a worker hangs: while the fuzzer draws its next batch (the failures of the
first batch are found, none reduced), or while it reduces them (``--cases 4``: the draw is
over). Either way every failure it found is saved unreduced under ``--report`` — the case as
drawn and its outcome — with the table, and the command ends as the gate does: one line on
stderr, no traceback, exit 143.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from layout import REPO
from waiting import sigterm_when

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux)")

FAULTS = REPO / "tests" / "faults" / "report_faults.py"
#: The C calls of the first batch (4 cases with -j 2, one mode, two runs each); later ones hang.
FIRST_BATCH_CALLS = 8


@pytest.mark.parametrize("when", ["drawing", "reducing"])
def test_sigterm_saves_the_failures_found_so_far(tmp_path: Path, when: str) -> None:
    root = tmp_path / "tree"
    shutil.copytree(REPO / "parity_configs", root / "parity_configs")
    calls = tmp_path / "calls"
    calls.mkdir()
    report = tmp_path / "report"
    f = str(FAULTS)
    cmd = [sys.executable, "-m", "rocke_py.parity", "fuzz", "--root", str(root), "--seed", "5", "--budget", "600"]
    cmd += ["--engines", f"{f}:differ_then_hang_py,{f}:differ_then_hang_c,{f}:implemented_modes,{f}:implemented_modes"]
    cmd += ["-j", "2", "--modes", "spec", "--timeout", "600", "--family", "wgrad", "--report", str(report)]
    cmd += ["--cases", "4"] if when == "reducing" else []
    env = {**os.environ, "ROCKE_FAULT_DIR": str(calls), "ROCKE_FAULT_CALLS": str(FIRST_BATCH_CALLS)}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        hanging = lambda: any(p.name.startswith("hang-") for p in calls.iterdir())  # noqa: E731
        out, err = sigterm_when(proc, hanging, 240, "a hanging engine call", reply_timeout=120)
    finally:
        for p in calls.glob("hang-*"):  # never leave a sleeper behind, whatever the fuzzer did
            try:
                os.kill(int(p.name.split("-")[1]), signal.SIGKILL)
            except ProcessLookupError:
                pass
    assert proc.returncode == 143, (out, err)
    assert "Traceback" not in err, err
    assert err.splitlines()[-1].startswith("rocke-parity fuzz: interrupted by SIGTERM"), err
    folders = sorted((report / "failures").iterdir())
    assert folders, out
    for folder in folders:
        outcome = json.loads((folder / "outcome.json").read_text())
        assert outcome["reduced"] is False and "SIGTERM" in outcome["not_reduced"], outcome
        assert outcome["status"] in ("DIFFER", "REJECT_MISMATCH"), outcome
        assert (folder / "original.toml").read_bytes(), folder
        assert not (folder / "reduced.toml").exists()
    assert "interrupted by SIGTERM" in (report / "summary.txt").read_text()
    assert f"saved in {folders[0]}" in out
