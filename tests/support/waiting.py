"""Polling for a condition in a test that drives another process (signals, hangs)."""

from __future__ import annotations

import time
from typing import Callable


def wait_until(cond: Callable[[], bool], timeout: float, what: str) -> None:
    """Returns once cond() holds; fails the test after timeout seconds, naming what it waited for."""
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)
