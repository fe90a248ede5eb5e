"""`rocke-parity numerics` as a process: its workers die with it (SIGKILL leaves no orphan
holding the caller's stdout), SIGTERM ends it at once, and --json is refused before any work
when it cannot be written and is written atomically when it can."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from numerics_kit import REPO

from rocke_py.parity.cli import main

#: shipped sizes of these take seconds each: the workers are busy when the signal comes
SLOW = [
    "wgrad/04-tile128-compv4",
    "wgrad/05-wmma-gfx1151",
    "fwd/02-gfx942-atom16x16x16",
    "wgrad/13-kouter-atom16x16x16",
]


def children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(c) for c in text.split()]


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def start(tmp_path: Path) -> tuple[subprocess.Popen, list[int]]:
    """numerics -j 2 over the slow configs, once both workers run."""
    cmd = [sys.executable, "-m", "rocke_py.parity", "numerics", *SLOW, "-j", "2", "--root", str(REPO)]
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        workers = [c for c in children(proc.pid) if alive(c)]
        if len(workers) >= 2:
            time.sleep(0.5)  # into their first config
            return proc, workers
        time.sleep(0.05)
    proc.kill()
    pytest.fail("numerics started no workers")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and PR_SET_PDEATHSIG")
def test_sigkill_leaves_no_orphan_worker(tmp_path) -> None:
    proc, workers = start(tmp_path)
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 10
    while any(alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(w) for w in workers)
    proc.stdout.read()  # the pipe reaches end of file: no process holds it any more
    proc.stdout.close()
    proc.stderr.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc")
def test_sigterm_ends_the_run_at_once(tmp_path) -> None:
    proc, workers = start(tmp_path)
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    took = time.monotonic() - sent
    assert proc.returncode == 128 + signal.SIGTERM
    assert "interrupted by SIGTERM" in err.decode()
    assert took < 3.0, took  # about 0.1 s when the machine is idle; the bound leaves room for load
    time.sleep(0.2)
    assert not any(alive(w) for w in workers)


def test_an_unwritable_json_destination_fails_before_any_work(tmp_path, capsys) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    started = time.monotonic()
    assert main(["numerics", *SLOW, "--json", str(blocker / "n.json"), "--root", str(REPO)]) == 2
    assert time.monotonic() - started < 5
    captured = capsys.readouterr()
    assert "cannot write --json" in captured.err and "config" not in captured.out
    assert main(["numerics", "fwd/03-pointwise-1x1", "--json", "/dev/full", "--root", str(REPO)]) == 2


def test_a_read_only_json_directory_fails_before_any_work(tmp_path, capsys) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):
            pytest.skip("running as a user that writes anywhere")
        started = time.monotonic()
        code = main(["numerics", *SLOW, "--json", str(locked / "n.json"), "--root", str(REPO)])
        assert code == 2 and time.monotonic() - started < 5
        captured = capsys.readouterr()
        assert "cannot write --json" in captured.err and "config" not in captured.out
    finally:
        locked.chmod(0o700)


def test_a_failed_json_write_leaves_the_old_report(tmp_path, monkeypatch, capsys) -> None:
    """A full disk while the report is written: the previous report stays whole, exit 2."""
    dest = tmp_path / "n.json"
    dest.write_text('{"old": true}\n')

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)  # the report is written, then cannot be made durable
    code = main(["numerics", "fwd/03-pointwise-1x1", "--small", "-j", "1", "--json", str(dest), "--root", str(REPO)])
    assert code == 2 and "No space left on device" in capsys.readouterr().err
    assert json.loads(dest.read_text()) == {"old": True}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["n.json"]  # no temporary file left
