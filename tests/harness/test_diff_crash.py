"""``rocke-parity diff`` on a C engine crash shows the gate's crash report: the signal, the engine
and the stage, the C frames of the job re-run under gdb (with file and line), the head of the
worker's faulthandler dump without the pool's multiprocessing frames, and the gdb repro command
(what a machine without gdb is left with).

The crashing engine is the real one built with ``-DROCKE_CRASH_AT_STAGE="lower_kernel"``, run as
the C side of ``--engines`` (tests/support/crashing_c_engine.py), as in test_c_crash_note.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from cli_run import Done, run_main
from layout import REPO

from rocke_py.parity.run import backtrace

CRASHING = REPO / "tests" / "support" / "crashing_c_engine.py"
CONFIG = "fwd/00-baseline"
JOB = ["--mode", "ll", "--flavor", "llvm22"]
C_FRAMES = "C frames (the job re-run under gdb):"


@pytest.fixture
def tree(tmp_path, crash_at_lower, monkeypatch) -> Path:
    dest = tmp_path / "parity_configs" / f"{CONFIG}.toml"
    dest.parent.mkdir(parents=True)
    shutil.copy(REPO / "parity_configs" / f"{CONFIG}.toml", dest)
    monkeypatch.setenv("ROCKE_TEST_C_LIBRARY", crash_at_lower)
    return tmp_path


def run(capsys, root: Path, command: str, *args: str) -> Done:
    engines = f"rocke_py.engine:emit,{CRASHING}:emit"
    return run_main(capsys, [command, CONFIG, "--root", str(root), *JOB, "--engines", engines, *args])


def crash_block(text: str, head: str) -> list[str]:
    """The ``    | `` lines under the first line that starts with ``head``."""
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(head)) + 1
    block = []
    for ln in lines[start:]:
        if not ln.startswith("    | "):
            break
        block.append(ln)
    return block


def diff_and_gate(capsys, root: Path) -> tuple[Done, list[str], list[str]]:
    diff = run(capsys, root, "diff")
    assert diff.code == 1
    gate = run(capsys, root, "gate", "-j", "2")
    assert gate.code == 1
    return diff, crash_block(diff.out, "status: CRASH"), crash_block(gate.out, "FAIL CRASH")


def assert_the_gates_report(diff: Done, diff_block: list[str], gate_block: list[str]) -> None:
    assert "status: CRASH — the c engine died with SIGSEGV (signal 11) (run 1 of 2) in stage lower_kernel" in diff.out
    assert diff_block == gate_block  # one crash report, the gate's
    assert "    | Fatal Python error: Segmentation fault" in diff_block
    assert not any("multiprocessing" in ln for ln in diff.out.splitlines())  # the pool's frames, not the crash's
    gdb = f"  gdb -batch -ex run -ex bt --args python -m rocke_py.parity.run.backtrace {CRASHING}:emit"
    assert any(ln.startswith(gdb) for ln in diff.out.splitlines())  # the C frames, by hand


@pytest.mark.skipif(shutil.which("gdb") is None, reason="no gdb on the PATH: no C frames to show")
def test_diff_shows_the_c_frames_with_file_and_line_as_the_gate_does(capsys, tree):
    diff, diff_block, gate_block = diff_and_gate(capsys, tree)
    assert_the_gates_report(diff, diff_block, gate_block)
    assert diff_block[0] == f"    | {C_FRAMES}"
    names = [ln.split()[2] for ln in diff_block[1:] if ln.startswith("    | #")]
    assert names[0] == "note_stage" and names.index("emit_text") < names.index("rocke_emit_in")
    assert any(ln.startswith("    | #") and "rocke_c/src/emit.c:" in ln for ln in diff_block)


def test_diff_without_gdb_shows_what_the_gate_shows(capsys, tree, monkeypatch):
    monkeypatch.setattr(backtrace, "gdb_command", lambda *_args: None)  # as without gdb on the PATH
    diff, diff_block, gate_block = diff_and_gate(capsys, tree)
    assert_the_gates_report(diff, diff_block, gate_block)
    assert C_FRAMES not in diff.out
    assert any("crashing_c_engine.py" in ln or "cbridge.py" in ln for ln in diff_block)  # the dump's innermost frames
