"""Known gaps pin content, not a status: an entry covers the failure it was recorded for, and no
other failure of the same status.

Each case records an entry with ``rocke-parity gaps add`` for a stand-in fault (so the entry is
exactly what the gate's own judgement gives), checks that the gate then reports the job as
KNOWN_GAP, swaps the fault for a different one of the same status, and checks that the job now
fails with "known gap no longer holds" — with the listed status, so that only the pinned content
can have told the two apart. The stand-in's outputs do not depend on the config's bytes (its
kernel name is fixed), so swapping the fault changes nothing else.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
import standin_tree as pt

from rocke_py.parity.cli import main
from rocke_py.parity.judge.gate import GateRun, run_gate
from rocke_py.parity.judge.golden import output_key
from rocke_py.parity.judge.verdict import Verdict

ENGINES = pt.engines_arg("all_modes")
KEYS = ("spec", "ir", "ll.llvm20", "ll.llvm22", "ll.llvm23")
#: a reference rejection both engines give alike (the config of a split expects it)
REJECT = {"py": "reject:E_X:m", "c": "reject:E_X:m"}
HAS_GDB = shutil.which("gdb") is not None


@dataclass(frozen=True)
class Case:
    name: str
    status: str
    job: str  # the mode and flavor of the failing job, as the gate labels them ("ir -", "ll llvm22")
    recorded: dict  # the [standin] table of the failure the entry is recorded for
    other: dict  # another failure of the same status
    expect: str = "emit"

    @property
    def config(self) -> str:
        return "wgrad/00-x" if self.expect == "emit" else "wgrad/100-x"

    @property
    def mode(self) -> str:
        return self.job.split()[0]

    @property
    def flavor(self) -> str:
        return self.job.split()[1]

    @property
    def key(self) -> str:
        return output_key(self.mode, self.flavor)


CASES = (
    # NONDETERMINISTIC pins the varying engine's two outputs and the stable engine's output
    Case("nondet_another_varying_output", "NONDETERMINISTIC", "spec -", {"c_spec": "vary:A"}, {"c_spec": "vary:B"}),
    Case(
        "nondet_another_stable_output",
        "NONDETERMINISTIC",
        "spec -",
        {"c_spec": "vary:A"},
        {"c_spec": "vary:A", "py_spec": "tail"},
    ),
    Case("nondet_another_varying_engine", "NONDETERMINISTIC", "spec -", {"c_spec": "vary:A"}, {"py_spec": "vary:A"}),
    # CRASH pins the engine, the signal, the C engine's stage note and the innermost engine frame
    Case("crash_another_stage", "CRASH", "ir -", {"c_ir": "segv@build_kernel"}, {"c_ir": "segv@print_ir"}),
    Case("crash_another_signal", "CRASH", "ir -", {"c_ir": "kill:SIGSEGV"}, {"c_ir": "kill:SIGBUS"}),
    Case(
        "crash_another_raising_function",
        "CRASH",
        "ll llvm22",
        {"py_ll_llvm22": "keyerror:build_tile"},
        {"py_ll_llvm22": "keyerror:lower_kernel"},
    ),
    Case("crash_another_python_frame", "CRASH", "spec -", {"py_spec": "segv"}, {"py_spec": "segv_w"}),
    # VERDICT_SPLIT pins the verdict and output of the job and of the job it splits from
    Case(
        "split_other_emitted_bytes",
        "VERDICT_SPLIT",
        "ir -",
        {**REJECT, "py_ir": "emit", "c_ir": "emit"},
        {**REJECT, "py_ir": "tail", "c_ir": "tail"},
        expect="reject:E_X",
    ),
    Case(
        "split_other_rejection_message",
        "VERDICT_SPLIT",
        "ir -",
        {"py_ir": "reject:E_X:m", "c_ir": "reject:E_X:m"},
        {"py_ir": "reject:E_X:m2", "c_ir": "reject:E_X:m2"},
    ),
    Case(
        "split_other_reference_output",
        "VERDICT_SPLIT",
        "ir -",
        {**REJECT, "py_ir": "emit", "c_ir": "emit"},
        {"py": "reject:E_X:m3", "c": "reject:E_X:m3", "py_ir": "emit", "c_ir": "emit"},
        expect="reject:E_X",
    ),
)
#: needs the C frames of a re-run under gdb (the stand-in's two SIGSEGVs differ only in their function)
GDB_CASES = (Case("crash_another_c_function", "CRASH", "ir -", {"c_ir": "segv"}, {"c_ir": "segv_w"}),)


def write_case(root: Path, case: Case, table: dict) -> None:
    pt.write_config(root, case.config, case.expect, {**table, "name": "k"})


def tree(root: Path, case: Case) -> Path:
    """The case's config failing as ``case.recorded`` says, beside a passing config (a family
    needs one that emits), with golden entries for every other job."""
    write_case(root, case, case.recorded)
    pt.write_config(root, "wgrad/01-ok", standin={"name": "k"})
    golden = pt.golden_for(root, [case.config], tuple(k for k in KEYS if k != case.key))
    golden |= pt.golden_for(root, ["wgrad/01-ok"], KEYS)
    pt.write_golden(root, golden, modes=("spec", "ir", "ll"))
    return root


def gaps(root: Path, *args: str) -> int:
    return main(["gaps", *args, "--root", str(root), "--engines", ENGINES])


def add(root: Path, case: Case) -> int:
    flavor = ["--flavor", case.flavor] if case.flavor != "-" else []
    return gaps(root, "add", case.config, "--mode", case.mode, *flavor, "--reason", "staged in the open")


def gate(root: Path, case: Case) -> tuple[GateRun, Verdict]:
    run = run_gate(root, engines=pt.engine_spec("all_modes"), workers=2)
    (v,) = [v for v in run.verdicts if v.job.label() == f"{case.config} {case.job}"]
    return run, v


def check_pins(root: Path, case: Case) -> None:
    assert add(tree(root, case), case) == 0
    run, v = gate(root, case)
    assert v.status.value == "KNOWN_GAP" and v.passed, v.reason  # the same failure is covered
    assert run.passed, (run.problems, [f.reason for f in run.failures])
    write_case(root, case, case.other)
    _, v = gate(root, case)
    assert not v.passed and v.status.value == case.status, v.reason  # the same status ...
    assert "known gap no longer holds" in v.reason  # ... but another failure: not covered


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_an_entry_covers_its_own_failure_and_no_other(tmp_path, case, capsys):
    check_pins(tmp_path, case)


@pytest.mark.skipif(not HAS_GDB, reason="no gdb on the PATH")
@pytest.mark.parametrize("case", GDB_CASES, ids=lambda c: c.name)
def test_a_crash_in_another_c_function_is_not_covered(tmp_path, case, capsys):
    check_pins(tmp_path, case)


@pytest.mark.skipif(not HAS_GDB, reason="no gdb on the PATH")
def test_without_gdb_the_frame_is_a_dash_that_matches_only_a_dash(tmp_path, monkeypatch, capsys):
    """No gdb, no frame: an entry recorded without gdb pins frame "-", which holds where gdb is
    missing and fails where gdb shows the frame; and the other way round, with a hint why."""
    case = GDB_CASES[0]
    tree(tmp_path, case)
    path = tmp_path / "parity_configs" / "known_gaps.toml"
    with monkeypatch.context() as m:
        m.setenv("PATH", "")
        assert add(tmp_path, case) == 0
        assert 'frame = "-"' in path.read_text()
        assert gate(tmp_path, case)[1].status.value == "KNOWN_GAP"
    _, v = gate(tmp_path, case)
    assert not v.passed and "frame=-, now CRASH engine=c cause=SIGSEGV stage=- frame=string_at" in v.reason
    assert gaps(tmp_path, "remove", case.config) == 0
    assert add(tmp_path, case) == 0 and 'frame = "string_at"' in path.read_text()
    with monkeypatch.context() as m:
        m.setenv("PATH", "")
        _, v = gate(tmp_path, case)
    assert not v.passed and "pins frame string_at, but this run has no engine frame: gdb is not on the PATH" in v.reason


@pytest.mark.skipif(not HAS_GDB, reason="no gdb on the PATH")
def test_a_listed_crash_gets_its_own_frames_not_those_of_another_job_of_its_cause(tmp_path, capsys):
    """The gate re-runs one job per (signal, stage) under gdb and lends its frames to the others
    of that cause; a listed CRASH job gets its own re-run, or its entry would be judged by another
    job's frame (here: string_at of wgrad/00-a for the wstring_at of wgrad/01-b)."""
    pt.make_tree(
        tmp_path,
        {
            "wgrad/00-a": {"standin": {"c_ir": "segv", "name": "k"}},
            "wgrad/01-b": {"standin": {"c_ir": "segv_w", "name": "k"}},
        },
    )
    keys = tuple(k for k in KEYS if k != "ir")
    pt.write_golden(tmp_path, pt.golden_for(tmp_path, ["wgrad/00-a", "wgrad/01-b"], keys), modes=("spec", "ir", "ll"))
    assert gaps(tmp_path, "add", "wgrad/01-b", "--mode", "ir", "--reason", "staged") == 0
    run = run_gate(tmp_path, engines=pt.engine_spec("all_modes"), workers=2)
    by_config = {v.job.config: v for v in run.verdicts if v.job.mode == "ir"}
    assert by_config["wgrad/00-a"].status.value == "CRASH"
    assert dict(by_config["wgrad/00-a"].evidence)["frame"] == "string_at"
    assert by_config["wgrad/01-b"].status.value == "KNOWN_GAP", by_config["wgrad/01-b"].reason
