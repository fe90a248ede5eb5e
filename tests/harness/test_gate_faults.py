"""Fault injection: every way the gate could pass wrongly is injected and must turn it red.

Each row of ``FAULTS`` injects one fault — through wrapped real engines
(``tests/faults/fault_engines.py``) or an edit of the tree (golden.json, known_gaps.toml) — into
a small copy of the shipped configs whose golden manifest the real engines recorded, and asserts:

- ``rocke-parity gate`` exits 1, with the expected status on the expected job (or the expected
  run-level failure);
- ``rocke-parity golden --check`` exits 1 (it is a real run: it never says OK over a failure);
- for a job-level fault, ``rocke-parity diff CONFIG`` (no --mode/--flavor) exits 1 and names
  the failing job and its status.

``docs/gate-honesty.md`` carries the same matrix; a test keeps the two in step.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest
from layout import REPO

from rocke_py.parity.cli import main
from rocke_py.parity.judge import golden

FAULT_ENGINES = REPO / "tests" / "faults" / "fault_engines.py"
#: The small tree: (config id, marker comment appended to it or "").
TREE = (
    ("wgrad/00-baseline", "# fault: emit-target"),
    ("wgrad/100-unknown-pipeline", "# fault: reject-target"),
    ("fwd/00-baseline", ""),
    ("fwd/100-unknown-epilogue", ""),
    ("dgrad/00-baseline", ""),
    ("dgrad/100-unknown-pipeline-basic", ""),
)
EMIT = "wgrad/00-baseline"
NEG = "wgrad/100-unknown-pipeline"
TIMEOUT = "4"
#: the hang's own timeout: it is waited out by every command that runs the hanging job (once in
#: its batch, once alone), and the small tree's other jobs take well under a second
HANG_TIMEOUT = "2"


def engines(fault: str, py_modes: str = "implemented_modes", c_modes: str = "implemented_modes") -> str:
    f = str(FAULT_ENGINES)
    return f"{f}:{fault}_py,{f}:{fault}_c,{f}:{py_modes},{f}:{c_modes}"


# ----------------------------------------------------------------------------- tree edits


def _edit_golden(root: Path, fn: Callable[[dict], None]) -> None:
    path = root / "parity_configs" / "golden.json"
    doc = json.loads(path.read_text())
    fn(doc)
    path.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")


def golden_emit_edited(root: Path) -> None:
    def fn(doc):
        e = doc["entries"][EMIT]["ll.llvm22"]
        e["sha256"] = "0" * 64

    _edit_golden(root, fn)


def golden_reject_edited(root: Path) -> None:
    def fn(doc):
        e = doc["entries"][NEG]["spec"]
        e["message"] = "an older wording"
        e["message_sha256"] = golden.message_sha256("an older wording")

    _edit_golden(root, fn)


def golden_entry_deleted(root: Path) -> None:
    _edit_golden(root, lambda doc: doc["entries"][NEG].pop("ir"))


def golden_coverage_narrowed(root: Path) -> None:
    _edit_golden(root, lambda doc: doc["coverage"].update(modes=["spec", "ir"]))


def _gaps(root: Path, text: str) -> None:
    (root / "parity_configs" / "known_gaps.toml").write_text(text)


def gap_stale_differ(root: Path) -> None:
    _gaps(
        root,
        f'[[gap]]\nconfig = "{EMIT}"\nmode = "ll"\nflavor = "llvm20"\nstatus = "DIFFER"\n'
        f'reason = "an older divergence"\npy_sha256 = "{"1" * 64}"\nc_sha256 = "{"2" * 64}"\n',
    )


def gap_other_signal(root: Path) -> None:
    _gaps(
        root,
        f'[[gap]]\nconfig = "{EMIT}"\nmode = "ir"\nflavor = "-"\nstatus = "CRASH"\n'
        'reason = "a known abort"\nengine = "c"\ncause = "SIGABRT"\nstage = "-"\nframe = "-"\n',
    )


def gap_without_evidence(root: Path) -> None:
    _gaps(
        root, f'[[gap]]\nconfig = "{EMIT}"\nmode = "ll"\nflavor = "llvm20"\nstatus = "DIFFER"\nreason = "status only"\n'
    )


# ----------------------------------------------------------------------------- the matrix


@dataclass(frozen=True)
class Fault:
    name: str
    what: str  # the fault, in words (the docs' first column)
    engines: str  # the fault module's pair
    status: str  # the status the gate must give, or RUN_LEVEL
    job: tuple[str, str, str] | None  # (config, mode, flavor) that must carry it
    needle: str = ""  # text the failure must contain
    edit: Callable[[Path], None] | None = None
    py_modes: str = "implemented_modes"
    c_modes: str = "implemented_modes"
    timeout: str = TIMEOUT


FAULTS = (
    Fault(
        "flip_llvm20",
        "one byte changed in one engine for one flavor only",
        "flip_llvm20",
        "DIFFER",
        (EMIT, "ll", "llvm20"),
        "py matches golden; c differs",
    ),
    Fault(
        "reject_code",
        "one config's rejection code changed in one engine",
        "reject_code",
        "REJECT_MISMATCH",
        (NEG, "spec", "-"),
        "py matches golden; c differs",
    ),
    Fault(
        "nondet",
        "a nondeterministic engine",
        "nondet",
        "NONDETERMINISTIC",
        (EMIT, "spec", "-"),
        "the c engine gave a different result on the second run",
    ),
    Fault("segv", "an engine that dies (SIGSEGV) on one config", "segv", "CRASH", (EMIT, "ir", "-"), "SIGSEGV"),
    Fault(
        "hang",
        "an engine that hangs on one config",
        "hang",
        "TIMEOUT",
        (EMIT, "spec", "-"),
        "still running",
        timeout=HANG_TIMEOUT,
    ),
    Fault(
        "bad_return",
        "an engine that returns neither Emitted nor Rejected",
        "bad_return",
        "CRASH",
        (EMIT, "spec", "-"),
        "BadReturn",
    ),
    Fault(
        "drop_ll_c",
        "a dropped mode: the C engine stops advertising ll",
        "real",
        "RUN_LEVEL",
        None,
        "golden.json pins mode ll, but the c engine does not advertise it",
        c_modes="without_ll",
    ),
    Fault(
        "drop_ll_both",
        "a dropped mode: both engines stop advertising ll",
        "real",
        "RUN_LEVEL",
        None,
        "golden.json pins mode ll, but the py and c engines do not advertise it",
        py_modes="without_ll",
        c_modes="without_ll",
    ),
    Fault(
        "reword",
        "identical message changes in both engines",
        "reword",
        "VERDICT_CHANGED",
        (NEG, "spec", "-"),
        "(reworded)",
    ),
    Fault(
        "negative_emits",
        "a negative config that now emits (alike in both engines)",
        "negative_emits",
        "UNEXPECTED_EMIT",
        (NEG, "spec", "-"),
        "expected reject:WGRAD_UNKNOWN_OPTION",
    ),
    Fault(
        "build_failure",
        "a config that validates and then fails to build",
        "build_failure",
        "BUILD_FAILURE",
        (EMIT, "ir", "-"),
        "failed after validating the config",
    ),
    Fault(
        "verdict_split",
        "one config, different verdicts per mode (rejected in ll only)",
        "verdict_split",
        "VERDICT_SPLIT",
        (EMIT, "ll", "llvm20"),
        "every mode must give a config the same verdict",
    ),
    Fault(
        "py_only_reject",
        "one engine rejects what the other emits",
        "py_only_reject",
        "PY_ONLY_REJECTED",
        (EMIT, "spec", "-"),
        "c matches golden; py differs",
    ),
    Fault(
        "both_drift",
        "both engines change one output identically",
        "both_drift",
        "GOLDEN_DRIFT",
        (EMIT, "ir", "-"),
        "not the golden bytes",
    ),
    Fault(
        "golden_emit_edited",
        "a golden emission entry edited",
        "real",
        "GOLDEN_DRIFT",
        (EMIT, "ll", "llvm22"),
        "golden 000000000000",
        edit=golden_emit_edited,
    ),
    Fault(
        "golden_reject_edited",
        "a golden rejection entry edited (message)",
        "real",
        "VERDICT_CHANGED",
        (NEG, "spec", "-"),
        "an older wording",
        edit=golden_reject_edited,
    ),
    Fault(
        "golden_entry_deleted",
        "a golden rejection entry deleted",
        "real",
        "GOLDEN_MISSING",
        (NEG, "ir", "-"),
        "golden.json has no ir entry",
        edit=golden_entry_deleted,
    ),
    Fault(
        "golden_coverage_narrowed",
        "the pinned coverage narrowed by hand",
        "real",
        "RUN_LEVEL",
        None,
        "both engines advertise mode ll, which golden.json does not pin",
        edit=golden_coverage_narrowed,
    ),
    Fault(
        "gap_stale_differ",
        "a known DIFFER gap hiding another divergence",
        "flip_llvm20",
        "DIFFER",
        (EMIT, "ll", "llvm20"),
        "known gap no longer holds",
        edit=gap_stale_differ,
    ),
    Fault(
        "gap_other_signal",
        "a known CRASH gap hiding another signal",
        "segv",
        "CRASH",
        (EMIT, "ir", "-"),
        "listed as CRASH engine=c cause=SIGABRT stage=- frame=-, now CRASH engine=c cause=SIGSEGV",
        edit=gap_other_signal,
    ),
    Fault(
        "gap_without_evidence",
        "a known gap that pins no evidence",
        "flip_llvm20",
        "RUN_LEVEL",
        None,
        "pins no evidence",
        edit=gap_without_evidence,
    ),
)


def fault_tree(root: Path, real_engines: str, tree: tuple[tuple[str, str], ...] = TREE) -> Path:
    """tree (default TREE) in root, each config with its marker comment, its golden manifest
    recorded by real_engines: the real engines, as wrapped by a faults file. The other fault
    tests build on it."""
    for cid, marker in tree:
        src = REPO / "parity_configs" / f"{cid}.toml"
        dst = root / "parity_configs" / f"{cid}.toml"
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(src.read_bytes() + (f"\n{marker}\n".encode() if marker else b""))
    assert main(["golden", "--update", "--root", str(root), "--engines", real_engines, "-j", "2"]) == 0
    return root


#: recorded_tree's trees, by the engines that recorded them (one per worker process).
_RECORDED: dict[str, Path] = {}


def recorded_tree(tmp_path_factory, real_engines: str) -> Path:
    """fault_tree of TREE recorded by real_engines, once per process: the modules that gate
    copies of it (this one, test_hostile_workers.py) share it; they copy its parity_configs
    and never edit it."""
    if real_engines not in _RECORDED:
        _RECORDED[real_engines] = fault_tree(tmp_path_factory.mktemp("faults"), real_engines)
    return _RECORDED[real_engines]


@pytest.fixture(scope="module")
def base_tree(tmp_path_factory) -> Path:
    root = recorded_tree(tmp_path_factory, engines("real"))
    assert main(["gate", "--root", str(root), "--engines", engines("real"), "-j", "2"]) == 0
    return root


def _copy(base: Path, dst: Path) -> Path:
    shutil.copytree(base / "parity_configs", dst / "parity_configs")
    return dst


def run_json(root: Path, fault: Fault, capsys, *extra: str) -> tuple[int, dict, str]:
    report = root / "report.json"
    code = main(
        [
            "gate",
            "--root",
            str(root),
            "--engines",
            engines(fault.engines, fault.py_modes, fault.c_modes),
            "-j",
            "2",
            "--timeout",
            fault.timeout,
            "--json",
            str(report),
            *extra,
        ]
    )
    out = capsys.readouterr().out
    return code, json.loads(report.read_text()), out


@pytest.mark.parametrize("fault", FAULTS, ids=[f.name for f in FAULTS])
def test_the_gate_catches_the_fault(fault: Fault, base_tree, tmp_path, capsys):
    root = _copy(base_tree, tmp_path)
    if fault.edit is not None:
        fault.edit(root)
    code, doc, out = run_json(root, fault, capsys)
    assert code == 1, out
    assert doc["passed"] is False
    if fault.job is None:
        assert any(fault.needle in p for p in doc["run_level_failures"]), doc["run_level_failures"]
    else:
        cfg, mode, flavor = fault.job
        (rec,) = [r for r in doc["jobs"] if (r["config"], r["mode"], r["flavor"]) == (cfg, mode, flavor)]
        assert rec["status"] == fault.status and not rec["passed"], rec["reason"]
        assert fault.needle in rec["reason"], rec["reason"]
        assert f"FAIL {fault.status} {cfg} {mode} {flavor}" in out
    # golden --check is a real run too: it never says OK while the gate fails
    eng = engines(fault.engines, fault.py_modes, fault.c_modes)
    assert (
        main(["golden", "--check", "--root", str(root), "--engines", eng, "-j", "2", "--timeout", fault.timeout]) == 1
    )
    assert "golden FAILED" in capsys.readouterr().out


@pytest.mark.parametrize("fault", [f for f in FAULTS if f.job is not None], ids=lambda f: f.name)
def test_diff_points_at_the_fault(fault: Fault, base_tree, tmp_path, capsys):
    root = _copy(base_tree, tmp_path)
    if fault.edit is not None:
        fault.edit(root)
    cfg, mode, flavor = fault.job  # type: ignore[misc]
    eng = engines(fault.engines, fault.py_modes, fault.c_modes)
    assert main(["diff", cfg, "--root", str(root), "--engines", eng, "--timeout", fault.timeout]) == 1
    out = capsys.readouterr().out
    assert f"job {cfg}  mode {mode}  flavor {flavor}" in out, out
    assert f"status: {fault.status}" in out, out


@pytest.mark.parametrize("fault", [f for f in FAULTS if f.name.startswith("drop_ll")], ids=lambda f: f.name)
def test_diff_fails_when_a_pinned_mode_vanished(fault: Fault, base_tree, tmp_path, capsys):
    root = _copy(base_tree, tmp_path)
    eng = engines(fault.engines, fault.py_modes, fault.c_modes)
    assert main(["diff", EMIT, "--root", str(root), "--engines", eng]) == 1
    assert "golden.json pins mode ll" in capsys.readouterr().out


def test_a_clean_tree_passes_every_command(base_tree, tmp_path, capsys):
    """The control: without a fault, gate, golden --check and diff all pass (so each red above is the fault's)."""
    root = _copy(base_tree, tmp_path)
    assert main(["gate", "--root", str(root), "--engines", engines("real"), "-j", "2"]) == 0
    assert main(["golden", "--check", "--root", str(root), "--engines", engines("real"), "-j", "2"]) == 0
    for cid, _ in TREE:
        assert main(["diff", cid, "--root", str(root), "--engines", engines("real")]) == 0
    assert "golden OK" in capsys.readouterr().out


def test_a_partial_run_says_so_and_update_never_deletes_what_it_did_not_run(base_tree, tmp_path, capsys):
    root = _copy(base_tree, tmp_path)
    before = golden.load(root / "parity_configs" / "golden.json")
    assert main(["gate", "--root", str(root), "--engines", engines("real"), "--mode", "spec"]) == 0
    out = capsys.readouterr().out
    assert "PARTIAL RUN" in out and "partial run (--mode spec)" in out
    assert main(["golden", "--update", "--root", str(root), "--engines", engines("reword"), "--mode", "spec"]) == 0
    out = capsys.readouterr().out
    assert "verdict changed" in out and "entries of other jobs untouched" in out
    after = golden.load(root / "parity_configs" / "golden.json")
    assert after.coverage == before.coverage
    assert {(c, k) for c, o in after.entries.items() for k in o} == {
        (c, k) for c, o in before.entries.items() for k in o
    }
    assert after.get(NEG, "spec").message.endswith("(reworded)")
    assert after.get(NEG, "ir") == before.get(NEG, "ir")  # not run: untouched


def test_the_docs_carry_the_same_matrix():
    text = (REPO / "docs" / "gate-honesty.md").read_text()
    rows = re.findall(r"^\| `([a-z0-9_]+)` \| [^|]+ \| `([A-Z_]+)` \|", text, re.MULTILINE)
    assert rows == [(f.name, f.status) for f in FAULTS]
