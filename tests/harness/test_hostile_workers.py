"""Hostile engines against the worker pool: what they do must not reach the report, nor stop the run.

Each test runs the gate on a small copy of the shipped configs (as test_gate_faults.py does) with
the real engines wrapped in one fault (``tests/faults/fault_engines.py``):

- an engine writing to stdout and stderr on every call (through Python and at the descriptors):
  the report stream holds the report alone, and each job notes what its engines wrote;
- an engine leaking 4 MiB a call: a worker over the memory limit is replaced after its batch,
  and the jobs it ran over the limit say so;
- stray bytes in a worker's result pipe: that job is a CRASH saying its result could not be
  read, and the run goes on; a length that no bytes follow too, after the stall bound, where
  the gate used to wait for ever;
- a crash on every call: every job is still classified, and the pool does not pay an engine
  load per crash.
"""

from __future__ import annotations

import json
import re
import signal
from contextlib import contextmanager
from pathlib import Path

import pytest
from test_gate_faults import EMIT, _copy, engines, recorded_tree

from rocke_py.parity.cli import main
from rocke_py.parity.run import frames

MEMORY_ENV = "ROCKE_PARITY_WORKER_MEMORY_MB"  # the workers' memory limit (docs/user-guide.md)


@pytest.fixture(scope="module")
def base_tree(tmp_path_factory) -> Path:
    """test_gate_faults.py's small tree, its golden manifest recorded by the real engines."""
    return recorded_tree(tmp_path_factory, engines("real"))


def gate(root: Path, fault: str, *extra: str) -> list[str]:
    return ["gate", "--root", str(root), "--engines", engines(fault), "-j", "2", "--timeout", "20", *extra]


def test_engine_output_never_reaches_the_report_stream(base_tree, tmp_path, capfd):
    root = _copy(base_tree, tmp_path)
    code = main(gate(root, "noisy", "--json", "-"))
    out, err = capfd.readouterr()
    doc = json.loads(out)  # the report alone: no engine line before, inside or after it
    assert code == 0 and doc["passed"] is True, err
    assert "noise" not in err
    assert len(doc["jobs"]) == 30
    for rec in doc["jobs"]:  # each job notes its engines' output, bounded
        notes = rec["notes"]
        assert any(n.startswith("the py engine wrote ") for n in notes), rec
        assert any(n.startswith("the c engine wrote ") and "fd-1 noise from c" in n for n in notes), rec
        assert all(len(n) < 500 for n in notes)
    assert any("wrote to stdout or stderr" in n for n in doc["notes"]), doc["notes"]


def test_a_worker_over_the_memory_limit_is_replaced_and_its_jobs_noted(base_tree, tmp_path, capsys, monkeypatch):
    root = _copy(base_tree, tmp_path)
    monkeypatch.setenv(MEMORY_ENV, "200")  # a worker starts well under it; 16 MiB a job takes it over
    report = tmp_path / "report.json"
    assert main(gate(root, "leak", "--json", str(report))) == 0
    doc = json.loads(report.read_text())
    noted = [rec for rec in doc["jobs"] if any("memory limit" in n for n in rec.get("notes", ()))]
    assert noted, "no job notes the memory limit"
    assert all(re.search(r"RSS \d+ MiB, over the memory limit of 200 MiB", n) for r in noted for n in r["notes"])
    (run_note,) = [n for n in doc["notes"] if "over the memory limit" in n]
    assert re.match(r"\d+ worker\(s\) went over the memory limit of 200 MiB", run_note), run_note
    assert len(doc["jobs"]) == 30 and all(r["passed"] for r in doc["jobs"])


@pytest.mark.parametrize("value", ["lots", "-5", "0x10"])
def test_a_malformed_memory_limit_is_named_and_the_default_applies(base_tree, tmp_path, capsys, monkeypatch, value):
    root = _copy(base_tree, tmp_path)
    monkeypatch.setenv(MEMORY_ENV, value)
    assert main(gate(root, "real")) == 0
    out = capsys.readouterr().out
    assert f"{MEMORY_ENV}={value!r} is not a whole number of MiB: the default limit of 1024 MiB applies" in out


@pytest.mark.parametrize("fault", ["stray", "stray_shape", "stray_length"])
def test_stray_bytes_in_a_result_pipe_are_that_jobs_crash(base_tree, tmp_path, capsys, fault):
    root = _copy(base_tree, tmp_path)
    report = tmp_path / "report.json"
    assert main(gate(root, fault, "--json", str(report))) == 1
    doc = json.loads(report.read_text())
    assert len(doc["jobs"]) == 30
    (bad,) = [r for r in doc["jobs"] if not r["passed"]]
    assert (bad["config"], bad["mode"], bad["status"]) == (EMIT, "spec", "CRASH")
    assert "could not be read from its worker" in bad["reason"], bad["reason"]
    assert bad["cause"][:3] == ["CRASH", "c", "unreadable result"]  # its own group, not a crash storm's


@contextmanager
def fails_after(seconds: int, what: str):
    """A hang turned into a failure: SIGALRM after ``seconds`` raises in the blocked call."""

    def hung(signum, frame):
        raise AssertionError(f"{what}: still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def test_a_stray_length_no_bytes_follow_is_that_jobs_crash_not_a_hang(base_tree, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(frames, "STALL", 2.0)  # the bound a frame may go without a byte
    root = _copy(base_tree, tmp_path)
    report = tmp_path / "report.json"
    with fails_after(120, "the gate, reading a 1 MiB message of which 11 bytes came"):
        assert main(gate(root, "stray_stall", "--json", str(report))) == 1
    doc = json.loads(report.read_text())
    assert len(doc["jobs"]) == 30
    (bad,) = [r for r in doc["jobs"] if not r["passed"]]  # the job the bytes came with, and no other
    assert (bad["config"], bad["mode"], bad["status"]) == (EMIT, "spec", "CRASH")
    assert "a message of 1048576 bytes stalled after" in bad["reason"], bad["reason"]


def test_a_crash_on_every_call_is_classified_without_an_engine_load_per_crash(base_tree, tmp_path, capsys):
    root = _copy(base_tree, tmp_path)
    report = tmp_path / "report.json"
    assert main(gate(root, "crash_every_call", "--json", str(report))) == 1
    doc = json.loads(report.read_text())
    assert len(doc["jobs"]) == 30
    for rec in doc["jobs"]:
        assert rec["status"] == "CRASH" and rec["death"]["signal"] == "SIGSEGV", rec["reason"]
        assert (rec["death"]["engine"], rec["death"]["run"]) == ("c", 1)
        assert "Segmentation fault" in rec["death"]["detail"]
    # a crash costs a fork of a loaded worker, not a new worker loading the engines: only the
    # crashes before the pool turned to forking replace a worker (one per worker, about)
    replaced = re.search(r"(\d+) worker\(s\) were replaced", capsys.readouterr().out)
    assert replaced is not None and int(replaced.group(1)) <= 4, replaced
