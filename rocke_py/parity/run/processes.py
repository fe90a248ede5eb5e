"""What every process of a run is owed: signals as an exception, death with its parent, how it
starts, and the cyclic collector's thresholds.

- Inside :func:`interrupts_raise` (the CLI wraps every command in it), SIGTERM and SIGINT raise
  :class:`Interrupted` in the main thread; :meth:`Pool.run <rocke_py.parity.run.runner.Pool.run>`
  then kills every worker at once and waits for them before the exception goes on.
- A worker asks the kernel (Linux ``PR_SET_PDEATHSIG``) to SIGKILL it when its parent dies
  (:func:`die_with_parent`), so a gate that is killed outright (SIGKILL, OOM killer) leaves no
  worker behind either.
- Workers are forked where the platform allows it and the parent has no other thread, spawned
  otherwise (:func:`start_method`).
- The parent runs its commands under :func:`rare_collections`; a worker runs the engines under
  the interpreter's own thresholds (``_GC_THRESHOLDS``), whatever its parent ran under.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import signal
import sys
import threading
from typing import Iterator

#: the cyclic collector's thresholds as the interpreter set them: a worker runs the engines under
#: these, whatever its parent runs under (:func:`rare_collections`)
_GC_THRESHOLDS = gc.get_threshold()
#: the parent's while it runs a command: it keeps every job's result to the end and makes few
#: reference cycles, so the collector's default passes re-walk the results ever more often (a
#: quarter of a second on a gate of 6,250 jobs, 2% of its wall time) and free next to nothing
_RARE_GC_THRESHOLDS = (100_000, 50, 50)
_PR_SET_PDEATHSIG = 1


class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGINT arrived (see :func:`interrupts_raise`).

    A KeyboardInterrupt, so that whatever lets Ctrl-C through lets SIGTERM through too — above
    all ``engines.call_engine``, which turns every other exception of an in-process engine
    call (``emit``, ``diff``) into an engine failure.

    ``not_run``: the jobs of the interrupted :meth:`Pool.run` that did not finish (None when
    the signal came outside a pool run).
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum
        self.not_run: int | None = None

    @property
    def name(self) -> str:
        try:
            return signal.Signals(self.signum).name
        except ValueError:
            return f"signal {self.signum}"

    @property
    def exit_status(self) -> int:
        return 128 + self.signum  # the shell's convention: 130 for SIGINT, 143 for SIGTERM


@contextlib.contextmanager
def interrupts_raise() -> Iterator[None]:
    """While active, the first SIGTERM or SIGINT raises :class:`Interrupted` in the main thread.

    Later signals are swallowed, so that the cleanup the first one starts (killing the
    workers) is not itself cut short. A signal that was ignored when the program started
    (``nohup``, a shell's background job) stays ignored. Outside the main thread it does
    nothing (Python delivers signals to the main thread only). The old handlers come back on
    exit.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    fired = False

    def handler(signum: int, frame: object) -> None:
        nonlocal fired
        if not fired:
            fired = True
            raise Interrupted(signum)

    saved: dict[int, object] = {}
    for sig in (signal.SIGTERM, signal.SIGINT):
        old = signal.getsignal(sig)
        if old is signal.SIG_IGN:
            continue
        saved[sig] = old
        signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, old in saved.items():
            signal.signal(sig, old if old is not None else signal.SIG_DFL)


@contextlib.contextmanager
def rare_collections() -> Iterator[None]:
    """The parent's cyclic collector runs rarely inside (``_RARE_GC_THRESHOLDS``); as before after."""
    before = gc.get_threshold()
    gc.set_threshold(*_RARE_GC_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)


def die_with_parent(parent_pid: int) -> None:
    """Have the kernel SIGKILL this process when its parent dies (Linux); exit if it already has.

    The parent is the thread that started the worker: the pool starts workers from the thread
    that runs it, which outlives them.
    """
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = _libc()
            libc.prctl(
                ctypes.c_int(_PR_SET_PDEATHSIG),
                ctypes.c_ulong(int(signal.SIGKILL)),
                ctypes.c_ulong(0),
                ctypes.c_ulong(0),
                ctypes.c_ulong(0),
            )
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent_pid:  # the parent died before the request took effect
        os._exit(1)


@functools.lru_cache(maxsize=1)
def _libc():
    """The C library, loaded once (a guarded worker asks it for PR_SET_PDEATHSIG in every fork)."""
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def start_method() -> str:
    """``fork`` on Linux when this process has one thread (forking a threaded process can copy a
    lock another thread holds), ``spawn`` otherwise."""
    if sys.platform.startswith("linux") and threading.active_count() == 1:
        return "fork"
    return "spawn"
