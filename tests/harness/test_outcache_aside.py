"""The gate records the engines' outputs in the output cache (``outcache``) in a forked child
while it judges the run (``outcache.record_aside``), and waits for it before it returns.

Each case runs the gate in a fresh interpreter of one thread (the test runner's processes have
others, and there the record is written in place): the record is written by another process,
is on disk when the gate returns, and a failure of the child (an error, a signal) is the note
the gate gave for a record it could not write.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from rocke_py.parity.judge.gate import run_gate
from rocke_py.parity.store import outcache
from tests.standins import standin_tree as pt

REPO = Path(__file__).resolve().parents[2]

SCRIPT = """
import json, os, signal, sys, time
from pathlib import Path
from rocke_py.parity.store import outcache
from rocke_py.parity.judge.gate import run_gate
from tests.standins import standin_tree as pt

root, how = Path(sys.argv[1]), sys.argv[2]
record = outcache.record


def slow_record(*args):
    (root / "recorder.pid").write_text(str(os.getpid()))
    if how == "error":
        raise OSError("no room left")
    if how == "signal":
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(0.3)  # a gate that did not wait would return first
    record(*args)


outcache.record = slow_record
if how == "nofork":  # no process to be had: fork fails (EAGAIN) for the record only
    aside = outcache.record_aside

    def no_fork_aside(*args):
        real = os.fork

        def fail():
            raise BlockingIOError(11, "Resource temporarily unavailable")

        os.fork = fail
        try:
            return aside(*args)
        finally:
            os.fork = real

    outcache.record_aside = no_fork_aside
run = run_gate(root, engines=pt.engine_spec(), workers=1)
files = sorted(p.name for p in (root / ".rocke-parity" / "outputs").glob("*.json"))
print(json.dumps({"pid": os.getpid(), "notes": run.notes, "files": files, "passed": run.passed}))
"""


def gate_in_a_fresh_process(tmp_path: Path, how: str) -> dict:
    root = pt.make_tree(tmp_path, {"wgrad/00-a": {}, "wgrad/01-b": {"standin": {"salt": "b"}}})
    pt.write_golden(root, pt.golden_for(root, ["wgrad/00-a", "wgrad/01-b"]))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(root), how], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    out["recorder"] = int((root / "recorder.pid").read_text())
    return out


def test_the_record_is_written_aside_and_is_there_when_the_gate_returns(tmp_path):
    out = gate_in_a_fresh_process(tmp_path, "ok")
    assert out["passed"] and out["recorder"] != out["pid"]  # another process wrote it
    assert len(out["files"]) == 2  # one file per engine, on disk as the gate returned
    assert not any("could not record" in n for n in out["notes"])


@pytest.mark.parametrize(
    "how, note",
    [
        ("error", "could not record the engines' outputs in the cache: no room left"),
        ("signal", "could not record the engines' outputs in the cache: the process writing it died (SIGKILL)"),
    ],
)
def test_a_record_that_fails_aside_is_a_note(tmp_path, how, note):
    out = gate_in_a_fresh_process(tmp_path, how)
    assert out["passed"] and out["recorder"] != out["pid"]
    assert note in out["notes"] and out["files"] == []


def test_where_no_process_can_be_forked_the_record_is_written_in_place(tmp_path):
    out = gate_in_a_fresh_process(tmp_path, "nofork")
    assert out["passed"] and out["recorder"] == out["pid"] and len(out["files"]) == 2
    assert not any("could not record" in n for n in out["notes"])


def test_a_process_with_another_thread_records_in_place(tmp_path, monkeypatch):
    root = pt.make_tree(tmp_path, {"wgrad/00-a": {}})
    pt.write_golden(root, pt.golden_for(root, ["wgrad/00-a"]))
    pids: list[int] = []
    record = outcache.record

    def spy(*args):
        pids.append(os.getpid())
        record(*args)

    monkeypatch.setattr(outcache, "record", spy)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        run = run_gate(root, engines=pt.engine_spec(), workers=1)
    finally:
        stop.set()
        other.join()
    assert run.passed and pids == [os.getpid()]
    assert json.loads(next((root / ".rocke-parity" / "outputs").glob("py-*.json")).read_text())["runs"]
