"""Polling for a condition in a test that drives another process (signals, hangs)."""

from __future__ import annotations

import signal
import subprocess
import time
from typing import Callable


def wait_until(cond: Callable[[], bool], timeout: float, what: str) -> None:
    """Returns once cond() holds; fails the test after timeout seconds, naming what it waited for."""
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def sigterm_when(
    proc: subprocess.Popen, ready: Callable[[], bool], timeout: float, what: str, reply_timeout: float = 30
) -> tuple[str, str]:
    """SIGTERM to ``proc`` once ready() holds, and its (stdout, stderr) once it ends; a process
    that does not end in ``reply_timeout`` seconds, or a failed wait, is killed before the test
    fails, so that no test leaves a process behind."""
    try:
        wait_until(ready, timeout, what)
        proc.send_signal(signal.SIGTERM)
        return proc.communicate(timeout=reply_timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=30)
