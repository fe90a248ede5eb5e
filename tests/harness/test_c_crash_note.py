"""The C frames of a C crash: the engine's stage note in memory shared with
the gate, and the job re-run under gdb for the frames inside the engine.

The crashing engine is the real one, built by the test with ``-DROCKE_CRASH_AT_STAGE`` (emit.c
raises SIGSEGV as that stage starts) and run as the C side of ``--engines``
(tests/support/crashing_c_engine.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from layout import REPO

from rocke_py import cbridge
from rocke_py.parity.run import backtrace

CRASHING = REPO / "tests" / "support" / "crashing_c_engine.py"
CONFIGS = ("fwd/00-baseline", "wgrad/00-baseline")


def gate(tmp_path, library: str, *args: str) -> tuple[subprocess.CompletedProcess, dict]:
    for cid in CONFIGS:
        dest = tmp_path / "parity_configs" / f"{cid}.toml"
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / "parity_configs" / f"{cid}.toml", dest)
    report = tmp_path / "r.json"
    # the installed program, run from the tree's folder, where a shadowing rocke_py/ must not be
    # what the gdb re-run imports (a clone of the repository beside an installed one)
    shadow = tmp_path / "rocke_py"
    shadow.mkdir(exist_ok=True)
    (shadow / "__init__.py").write_text("raise ImportError('the shadowing rocke_py was imported')\n")
    program = str(Path(sys.executable).parent / "rocke-parity")
    cmd = [program, "gate", "--root", str(tmp_path), "--json", str(report)]
    cmd += ["--engines", f"rocke_py.engine:emit,{CRASHING}:emit", "-j", "2", *args]
    env = {**os.environ, "ROCKE_TEST_C_LIBRARY": library}
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    return done, json.loads(report.read_text())


def test_a_c_crash_names_its_stage_and_is_one_group_per_stage(tmp_path, crash_at_lower, monkeypatch):
    # no gdb: the note alone; the compiler by its path (the bridge builds the tree's C engine, or
    # finds it in the cache by a fingerprint that holds the compiler's identity)
    monkeypatch.setenv("CC", shutil.which("cc") or "cc")
    monkeypatch.setenv("PATH", "")
    done, doc = gate(tmp_path, crash_at_lower)
    assert done.returncode == 1
    crashed = [r for r in doc["jobs"] if r["status"] == "CRASH"]
    assert sorted((r["config"], r["flavor"]) for r in crashed) == [
        (c, f) for c in CONFIGS for f in ("llvm20", "llvm22", "llvm23")
    ]  # spec and ir never reach lower_kernel
    for r in crashed:
        assert r["death"]["stage"] == f"ll {r['flavor']} lower_kernel" and r["death"]["c_frames"] == ""
        assert r["reason"].endswith("(run 1 of 2) in stage lower_kernel")
    assert done.stdout.count("FAIL CRASH") == 1 and "+ 5 more job(s) with the same cause" in done.stdout


@pytest.mark.skipif(shutil.which("gdb") is None, reason="no gdb on the PATH")
def test_a_c_crash_shows_the_engine_frames_from_a_rerun_under_gdb(tmp_path, crash_at_lower):
    done, doc = gate(tmp_path, crash_at_lower, "--mode", "ll", "--flavor", "llvm22")
    rec = next(r for r in doc["jobs"] if r["status"] == "CRASH")
    frames = rec["death"]["c_frames"].splitlines()
    names = [f.split()[1] for f in frames]
    assert names[0] == "note_stage"  # libc's raise() frames above it are left out
    assert names.index("note_stage") < names.index("emit_text") < names.index("rocke_emit_in")
    assert "rocke_c/src/emit.c:" in rec["death"]["c_frames"]  # named from the repository root
    assert not any("_cffi_f_" in f or "_PyEval" in f for f in frames)  # the engine's frames only
    assert "C frames (the job re-run under gdb):" in done.stdout and "note_stage" in done.stdout
    gdb_line = next(line for line in rec["repro"] if line.startswith("gdb "))
    assert f"python -m rocke_py.parity.run.backtrace {CRASHING}:emit" in gdb_line


def test_no_crash_no_note_and_no_rerun(tmp_path, crash_at_lower):
    done, doc = gate(tmp_path, crash_at_lower, "--mode", "spec,ir")
    assert len(doc["jobs"]) == 4  # the tree has no golden manifest: each job is GOLDEN_MISSING, none crashed
    assert all(r["status"] == "GOLDEN_MISSING" and "death" not in r for r in doc["jobs"])
    assert "C frames" not in done.stdout


def test_the_bridge_note_is_empty_between_calls():
    note = bytearray(b"x" * 64)
    engine = cbridge.CEngine(cbridge.ffi, cbridge.lib)
    engine.attach_note(note)
    assert note[0] == 0
    data = (REPO / "parity_configs" / "fwd" / "00-baseline.toml").read_bytes()
    for mode, config in (("ll", data), ("spec", b"[target]\n")):
        engine.emit(config, mode, "llvm22")
        assert note[0] == 0  # set while a call runs, cleared when it returns (a rejection too)
    assert engine.emit(data, "ir", "llvm22") == cbridge.emit(data, "ir", "llvm22")  # the note changes no byte


GDB_OUTPUT = """\
Program received signal SIGABRT, Aborted.
#0  __pthread_kill_implementation (no_tid=0, signo=6, threadid=<optimized out>) at ./nptl/pthread_kill.c:44
#1  0x00007ffff7c8af1f in __pthread_kill_internal (signo=6, threadid=<optimized out>) at ./nptl/pthread_kill.c:78
#2  0x00007ffff7c3bfb2 in __GI_raise (sig=sig@entry=6) at ../sysdeps/posix/raise.c:26
#3  0x00007ffff7c26472 in __GI_abort () at ./stdlib/abort.c:79
#4  0x00007ffff7e3a1f0 in lower_op (l=0x5555, op=0x7777) at /x/rocke_c/src/lower_ll.c:812
#5  0x00007ffff7e3b000 in rk_lower_kernel (kernel=0x1, arch=0x2 "gfx950") at /x/rocke_c/src/lower_ll.c:1900
#6  0x00007ffff7e3c000 in rocke_emit_in () from /x/rocke_py/_rocke_c.abi3.so
#7  0x00007ffff7e3d000 in _cffi_f_rocke_emit_in () from /x/rocke_py/_rocke_c.abi3.so
#8  0x00007ffff7c3e000 in _PyEval_EvalFrameDefault (tstate=0x9) at Python/ceval.c:5000
"""


def test_the_frames_start_past_libc_abort_stop_at_the_engines_caller_and_drop_addresses_and_arguments():
    assert backtrace.engine_frames(GDB_OUTPUT) == [
        "#4 lower_op at /x/rocke_c/src/lower_ll.c:812",
        "#5 rk_lower_kernel at /x/rocke_c/src/lower_ll.c:1900",
        "#6 rocke_emit_in from /x/rocke_py/_rocke_c.abi3.so",
    ]


def test_one_gdb_rerun_per_crash_group_and_at_most_three(monkeypatch):
    from rocke_py.parity.judge import gate as gate_mod
    from rocke_py.parity.judge.known_gaps import KnownGaps
    from rocke_py.parity.run.engines import EngineSpec
    from rocke_py.parity.run.work import Death, JobResult, WorkItem

    calls: list[str] = []
    monkeypatch.setattr(backtrace, "c_frames", lambda c_emit, data, mode, flavor: calls.append(flavor) or "#0 f")
    deaths = [Death("crash", "c", 1, -11, stage=f"ll {f} lower_kernel") for f in ("llvm20", "llvm22", "llvm23")]
    deaths += [Death("crash", "c", 1, -11, stage=f"ir llvm22 {s}") for s in ("print_ir", "build_kernel", "plan")]
    results = [JobResult(WorkItem(i, b"", "ll", "llvm22"), death=d) for i, d in enumerate(deaths)]
    out = gate_mod.with_c_frames(EngineSpec(), KnownGaps((), ()), results)
    assert len(calls) == 3  # lower_kernel's three flavors are one group; then print_ir, build_kernel
    assert [r.death.c_frames for r in out] == ["#0 f"] * 5 + [""]
