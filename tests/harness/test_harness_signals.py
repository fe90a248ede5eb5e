"""Hole 12: signals end every worker.

A gate whose workers are stuck in a hanging engine call (the stand-in ``hang``, which names
itself in $ROCKE_STANDIN_HANG_DIR) gets SIGTERM or SIGINT: it kills its workers, says
``interrupted by SIG...: N job(s) not run`` on stderr (no traceback) and exits 143 or 130.
A gate killed outright (SIGKILL, no chance to clean up) still leaves no worker behind: each
worker asked the kernel to kill it when its parent dies (PR_SET_PDEATHSIG).

Worker processes are found by their marker files and checked in /proc (a zombie counts as
gone: it runs nothing). Whatever happens, the test kills the processes it found, by pid, so a
regression never leaves hour-long sleepers on the machine."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest
import standin_tree as pt
from waiting import sigterm_when, wait_until

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux)")


def proc_stat(pid: int) -> tuple[str, int] | None:
    """(state, ppid) of a process, None when it no longer exists."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return fields[0], int(fields[1])


def running(pid: int) -> bool:
    st = proc_stat(pid)
    return st is not None and st[0] not in ("Z", "X")


def children(pid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            st = proc_stat(int(d.name))
            if st is not None and st[1] == pid:
                out.append(int(d.name))
    return out


@pytest.fixture
def hanging_gate(tmp_path: Path):
    """Start a gate on three hanging configs with two workers; yield (process, worker pids)."""
    root = tmp_path / "repo"
    pt.make_tree(root, {f"wgrad/0{i}-h": {"standin": {"py": "hang"}} for i in range(3)})
    marks = tmp_path / "marks"
    marks.mkdir()
    env = {**os.environ, "ROCKE_STANDIN_HANG_DIR": str(marks)}
    proc = subprocess.Popen(
        pt.cli_command(root, "gate", "-j", "2", "--timeout", "600"),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    found: list[int] = []
    try:
        wait_until(lambda: len(list(marks.iterdir())) >= 2, 120, "two workers in the hanging call")
        found += [int(p.name.split(".")[0]) for p in marks.iterdir()]
        assert all(proc_stat(pid) and proc_stat(pid)[1] == proc.pid for pid in found), "workers are the gate's children"
        found += [pid for pid in children(proc.pid) if pid not in found]  # e.g. multiprocessing's resource tracker
        yield proc, found
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=30)
        for pid in found:  # never leave a sleeper behind, whatever the gate did
            if running(pid):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("sig,status", [(signal.SIGTERM, 143), (signal.SIGINT, 130)], ids=["SIGTERM", "SIGINT"])
def test_signal_ends_every_worker_with_a_clear_status(hanging_gate, sig, status):
    proc, pids = hanging_gate
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == status, (proc.returncode, out, err)
    assert "Traceback" not in err, err
    assert err.splitlines()[-1] == f"rocke-parity gate: interrupted by {sig.name}: 3 job(s) not run", err
    wait_until(lambda: not any(running(p) for p in pids), 10, f"workers {pids} to be gone")


def test_workers_do_not_outlive_a_killed_gate(hanging_gate):
    proc, pids = hanging_gate
    proc.kill()  # SIGKILL: the gate cannot clean up; the kernel must
    proc.wait(timeout=30)  # not communicate(): a surviving worker would hold the pipes open
    wait_until(lambda: not any(running(p) for p in pids), 15, f"workers {pids} to be gone")


@pytest.mark.parametrize("command", ["emit", "diff"])
def test_signal_during_an_in_process_engine_call_is_not_an_engine_crash(tmp_path, command):
    """emit and diff run the engines in the CLI's own process: a signal there is an interruption."""
    root = tmp_path / "repo"
    pt.make_tree(root, {"wgrad/00-h": {"standin": {"py": "hang"}}})
    marks = tmp_path / "marks"
    marks.mkdir()
    args = ["emit", "wgrad/00-h", "--engine", "py"] if command == "emit" else ["diff", "wgrad/00-h"]
    proc = subprocess.Popen(
        pt.cli_command(root, *args),
        env={**os.environ, "ROCKE_STANDIN_HANG_DIR": str(marks)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out, err = sigterm_when(proc, lambda: any(marks.iterdir()), 60, "the hanging engine call")
    assert proc.returncode == 143, (out, err)
    # diff runs its jobs in the worker pool, so it counts the jobs it did not finish
    want = {
        "emit": "rocke-parity emit: interrupted by SIGTERM",
        "diff": "rocke-parity diff: interrupted by SIGTERM: 1 job(s) not run",
    }[command]
    assert err.splitlines() == [want], err
