"""The crash-isolating worker pool.

Each worker is a process that imports both engines once and then runs jobs sent over its pipe.
It is forked where the platform allows it and the parent has no other thread (a fork copies the
interpreter with the harness already imported, so a worker is ready in a fraction of what a fresh
interpreter takes), and spawned otherwise. Either way the engines are imported in the worker,
never in the parent, so an engine that crashes while loading takes down only a worker.

One job = both engines on the raw config bytes, then both again (the determinism re-run):
``py, c, py, c``. The worker writes which call it is in to a shared integer before each call,
so when it dies (``os.abort()``, SIGSEGV in the C engine, a hard ``_exit``) or hangs, the parent
knows which engine and which run it was.

- :meth:`Pool.run` is a loop: wait until a worker has a message or has ended (or a job's
  deadline comes), hand the event to one step of the run's :class:`Schedule`
  (:meth:`~Schedule.on_results`, :meth:`~Schedule.on_death`, :meth:`~Schedule.on_timeout`,
  :meth:`~Schedule.on_retire`), hand out work (:meth:`~Schedule.hand_out`), repeat.
- Work goes out in batches (:meth:`Schedule.next_batch`: up to 64 jobs while the queue is long,
  one at the end, and with costs no more than a share of the cost left), to an idle worker and
  to one running the last job of its batch (``_AHEAD``); the worker sends its results in groups
  (at most ``group`` jobs, the batch's setting, and always when at most ``_AHEAD`` jobs of its
  batch are left, so that the parent sends the next batch in time): one message and one
  wake-up of the parent per group, not per job. Before each job it writes the job's index and
  its start time to shared memory, which is how the parent finds the job a worker runs and its
  deadline. The parent frames its messages itself (``_FRAME``) and never waits to send one
  (:meth:`_Worker.post`): a worker reads only between jobs, and one sending a large result to a
  parent that waited to send it a large batch would wait with it for ever.
- With a :class:`TextStore` (the gate's object cache), a worker leaves there the texts both
  engines agree on and sends only the runs (:func:`_run_job`); :meth:`JobResult.text` reads a
  text back when the caller needs it.
- A worker that dies turns only its current job into a :class:`Death` (``crash``), with the
  signal and the end of the worker's faulthandler dump; it is replaced, the rest of its batch
  (the jobs whose results it had not sent yet among them) goes back to the front of the
  queue, and the run goes on.
- A job past ``timeout`` seconds is a :class:`Death` (``timeout``); its worker is killed
  (SIGKILL) and replaced.
- Signals: inside :func:`interrupts_raise` (the CLI wraps every command in it), SIGTERM and
  SIGINT raise :class:`Interrupted` in the main thread; :meth:`Pool.run` then kills every
  worker at once (SIGKILL — a worker may be stuck in C) and waits for them before the
  exception goes on, carrying the number of jobs that did not finish. The workers ignore
  SIGINT (a terminal's Ctrl-C reaches the whole process group: the parent decides). A worker
  also asks the kernel (Linux ``PR_SET_PDEATHSIG``) to SIGKILL it when its parent dies, so a
  gate that is killed outright (SIGKILL, OOM killer) leaves no worker behind either.

The runner knows nothing about configs or statuses: it takes :class:`WorkItem` s and returns
:class:`JobResult` s in the same order. Classification lives in :mod:`compare`.
"""

from __future__ import annotations

import contextlib
import faulthandler
import functools
import gc
import io
import multiprocessing as mp
import os
import pickle
import selectors
import shutil
import signal
import socket
import struct
import sys
import tempfile
import threading
import time
import traceback
from collections import deque
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Callable, Generic, Iterator, Protocol, Sequence, TypeVar

from rocke_py.parity.run.engines import EngineRun, EngineSpec, call_engine, load_callable, load_engines

#: phase codes written by a worker before each engine call: (engine, run number)
PHASES: dict[int, tuple[str, int]] = {1: ("py", 1), 2: ("c", 1), 3: ("py", 2), 4: ("c", 2)}
_ORDER = ((1, "py"), (2, "c"), (3, "py"), (4, "c"))
_STARTUP_TIMEOUT = 120.0
_MAX_STARTUP_DEATHS = 3  # replacement workers that may die while loading the engines before the run gives up
_FAULT_LINES = 30
_NOTE_BYTES = 128  # the stage note: "MODE FLAVOR STAGE" needs under 40
#: the cyclic collector's thresholds as the interpreter set them: a worker runs the engines under
#: these, whatever its parent runs under (:func:`rare_collections`)
_GC_THRESHOLDS = gc.get_threshold()
#: the parent's while it runs a command: it keeps every job's result to the end and makes few
#: reference cycles, so the collector's default passes re-walk the results ever more often (a
#: quarter of a second on a gate of 6,250 jobs, 2% of its wall time) and free next to nothing
_RARE_GC_THRESHOLDS = (100_000, 50, 50)
#: a message from the parent to a worker: its length, then its pickle (the parent's own framing,
#: so that it can write a batch a piece at a time without ever waiting for the worker)
_FRAME = struct.Struct("!Q")
#: a text shorter than this is always sent (mode spec's: the gate reads each kernel's name in it)
_INLINE_CHARS = 8192
#: what a job's note shows of what an engine wrote to stdout/stderr (characters of its repr)
_OUTPUT_SHOWN = 240
#: the workers' memory limit, in MiB of resident set (0: none): a worker past it after a job
#: finishes its batch and is replaced (an engine that leaks would otherwise grow it without end)
MEMORY_ENV = "ROCKE_PARITY_WORKER_MEMORY_MB"
DEFAULT_MEMORY_MB = 1024
#: after a crash, the next this many jobs go out in guarded batches: each job runs in a fork of
#: its worker, so that another crash costs a fork (milliseconds), not a new worker loading the
#: engines (a fifth of a second; a crash on every call took 281 s against a clean 7 s)
_GUARD_JOBS = 64
#: the longest message the parent reads from a worker: a longer length is stray bytes in the pipe
_MAX_MESSAGE = 1 << 30
#: a worker sends its group early once its texts reach this many characters (far under _MAX_MESSAGE)
_GROUP_CHARS = 64 << 20


class EngineLoadError(Exception):
    """The engines could not be loaded in a worker (import error, crash during import)."""


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


_PR_SET_PDEATHSIG = 1


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


def pool_size(workers: int | None, most_jobs: int | None = None) -> int:
    """Workers for a run: ``workers`` (default one per CPU), but no more than ``most_jobs``, the
    jobs the run can have (a named selection: no idle workers)."""
    size = workers or os.cpu_count() or 1
    return max(1, min(size, most_jobs) if most_jobs is not None else size)


def memory_limit() -> tuple[int, str]:
    """The workers' memory limit in MiB (``$ROCKE_PARITY_WORKER_MEMORY_MB``; 0: none), and a note
    when the variable is malformed (the default then applies: a typo must not lift the limit)."""
    raw = os.environ.get(MEMORY_ENV, "")
    if not raw.strip():
        return DEFAULT_MEMORY_MB, ""
    if raw.strip().isascii() and raw.strip().isdigit():
        return int(raw), ""
    return DEFAULT_MEMORY_MB, (
        f"{MEMORY_ENV}={raw!r} is not a whole number of MiB: the default limit of {DEFAULT_MEMORY_MB} MiB applies"
    )


K = TypeVar("K")
#: the most jobs in one batch (a gate's batches are bounded by their cost too, in
#: Schedule.next_batch, so that its costliest jobs go out a few at a time)
_MAX_BATCH = 64
#: a worker sends its results in groups of at most this many jobs (one when the run has a stop:
#: --maxfail acts on each result as it comes). Each group wakes the parent, which then takes a
#: core from a worker where there are as many workers as cores: groups of 32 and batches of 64
#: (not 8 and 16) took the gate's time over its engines' from 1.089 to 1.080-1.083 on a corpus
#: of 1250 configs, and from 1.232 to 1.223 on the shipped ones (2 cores, medians of 4-10 runs)
_GROUP = 32
#: a worker gets its next batch when at most this many jobs of its batch are left
_AHEAD = 1


def batch_size(pending: int, workers: int) -> int:
    """Jobs handed to an idle worker at once: up to 64 while the queue is long, one at the end."""
    return max(1, min(_MAX_BATCH, pending // (4 * max(1, workers))))


@dataclass(frozen=True)
class WorkItem(Generic[K]):
    key: K  # opaque to the runner (the gate and diff use their Job)
    data: bytes
    mode: str
    call_flavor: str  # the flavor passed to the engines (always a real flavor)
    skip: str = ""  # "py" or "c": that engine is not called (its outputs come from the gate's cache)


@dataclass(frozen=True)
class Death:
    """A job that did not finish: ``kind`` is ``crash`` or ``timeout``."""

    kind: str
    engine: str  # "py", "c" or "?" (unknown: died between calls)
    run: int  # 1 or 2 (0 when unknown)
    exitcode: int | None  # negative: killed by signal -exitcode
    detail: str = ""  # the head of the worker's faulthandler dump (innermost frame first), if any
    stage: str = ""  # the C engine's stage note ("MODE FLAVOR STAGE") when it died in a call, if it keeps one
    c_frames: str = ""  # the C frames of the job re-run under gdb (rocke_py.parity.run.backtrace), if it was
    unread: str = ""  # why the job's result could not be read from its worker (stray bytes in its pipe), if so

    @property
    def stage_name(self) -> str:
        """The stage of the note (its last word: ``lower_kernel`` of ``ll llvm22 lower_kernel``), or ''."""
        return self.stage.split()[-1] if self.stage.strip() else ""

    @property
    def signal_name(self) -> str:
        if self.exitcode is None or self.exitcode >= 0:
            return ""
        try:
            return signal.Signals(-self.exitcode).name
        except ValueError:
            return f"signal {-self.exitcode}"

    def describe(self, timeout: float | None = None) -> str:
        who = f"the {self.engine} engine" if self.engine in ("py", "c") else "the worker"
        when = f" (run {self.run} of 2)" if self.run else ""
        if self.unread:
            why = f"the result of this job could not be read from its worker ({self.unread})"
            return f"{why} while {who} ran{when}; worker replaced"
        if self.kind == "timeout":
            limit = f" after {timeout:g} s" if timeout is not None else ""
            return f"{who} was still running{limit}{when}; worker killed"
        if self.exitcode is not None and self.exitcode < 0:
            how = f"died with {self.signal_name} (signal {-self.exitcode})"
        elif self.exitcode is not None:
            how = f"exited the worker process with status {self.exitcode}"
        else:
            how = "died"
        where = f" in stage {self.stage_name}" if self.stage_name else ""
        return f"{who} {how}{when}{where}"


class TextStore(Protocol):
    """Where a worker leaves the texts it does not send (``objects.ObjectCache``): by sha256."""

    def put(self, sha: str, text: str) -> None: ...

    def get(self, sha: str) -> str | None: ...


@dataclass(frozen=True)
class JobResult(Generic[K]):
    item: WorkItem[K]
    py: tuple[EngineRun, ...] = ()
    c: tuple[EngineRun, ...] = ()
    py_text: str | None = None  # first run's emitted text, when the worker sent it (see text())
    c_text: str | None = None
    death: Death | None = None
    notes: tuple[str, ...] = ()  # what the worker saw besides the runs: engine output, its memory past the limit
    store: TextStore | None = field(default=None, compare=False, repr=False)  # where the unsent texts are

    @property
    def seconds(self) -> float:
        """The engine calls' time, measured in the worker (the job's cost, for scheduling)."""
        return sum(r.seconds for r in (*self.py, *self.c))

    def runs(self, side: str) -> tuple[EngineRun, ...]:
        return self.py if side == "py" else self.c

    def in_store(self, side: str) -> bool:
        """The worker left the side's first emitted text in the pool's store instead of sending it."""
        text = self.py_text if side == "py" else self.c_text
        runs = self.runs(side)
        return text is None and self.store is not None and bool(runs) and runs[0].kind == "emitted"

    def text(self, side: str) -> str | None:
        """The side's first emitted text: as the worker sent it, else read from the pool's store."""
        if self.in_store(side):
            assert self.store is not None
            return self.store.get(self.runs(side)[0].sha256)
        return self.py_text if side == "py" else self.c_text


@dataclass(frozen=True)
class EngineInfo:
    py_modes: tuple[str, ...]
    c_modes: tuple[str, ...]

    @property
    def common_modes(self) -> tuple[str, ...]:
        return tuple(m for m in self.py_modes if m in self.c_modes)


# ----------------------------------------------------------------------------- worker side


def _attach_note(spec: EngineSpec, note) -> None:
    """Hand the C engine the page shared with the parent for its stage note, if its module keeps
    one (``attach_note`` next to its ``emit``, as rocke_py.cbridge has)."""
    try:
        attach = load_callable(spec.c_emit.rpartition(":")[0] + ":attach_note")
    except (ImportError, AttributeError):
        return
    try:
        attach(note)
    except Exception:  # noqa: BLE001 - without a note a crash is still reported, only without its stage
        return


def _worker_main(
    conn: Connection,
    phase,
    seq,
    started,
    note,
    spec: EngineSpec,
    fault_path: str,
    parent_pid: int,
    store: TextStore | None,
    output_path: str = os.devnull,
    memory_mb: int = 0,
) -> None:
    die_with_parent(parent_pid)
    gc.disable()  # while the engines load: their modules are kept for good, nothing to collect
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a forked worker inherits the parent's handler
    fault = open(fault_path, "w")  # noqa: SIM115 - lives as long as the process
    faulthandler.enable(fault, all_threads=False)
    capture = _Capture(output_path)
    try:
        engines = load_engines(spec)
    except BaseException as e:  # noqa: BLE001
        what = "".join(traceback.format_exception_only(type(e), e)).strip()
        frames = "".join(traceback.format_tb(e.__traceback__, limit=-3)).rstrip()
        conn.send(("init-error", f"{what}\n{frames}"))
        return
    # what the process holds now (the engines' modules, the harness's) lives as long as it does:
    # frozen, the collector's passes during the jobs walk only what the jobs made; the thresholds
    # are the interpreter's, whatever the parent's were (a forked worker inherits rare_collections)
    gc.freeze()
    gc.set_threshold(*_GC_THRESHOLDS)
    gc.enable()
    _attach_note(spec, note)
    conn.send(("ready", engines.py_modes, engines.c_modes, _output_notes({"loading": capture.take()})))
    memory = _Memory(memory_mb)
    while True:
        try:
            msg = _read_message(conn.fileno())
        except (EOFError, OSError):
            return
        if msg is None:
            return
        group, jobs, guard = msg  # a batch: its results go back in groups of at most ``group``
        done: list[tuple] = []
        chars = 0
        for n, (job_seq, data, mode, flavor, skip) in enumerate(jobs):
            seq.value = job_seq
            started.value = time.monotonic()
            args = (engines, phase, job_seq, data, mode, flavor, skip, store, capture)
            entry = _run_guarded(args, fault, note) if guard else _run_job(*args)
            over = memory.note()
            done.append(entry if not over else (*entry[:6], (*entry[6], over), entry[7]))
            chars += len(entry[3] or "") + len(entry[4] or "")
            if len(done) >= group or len(jobs) - n - 1 <= _AHEAD or chars >= _GROUP_CHARS:
                conn.send(("results", done))
                done, chars = [], 0
        if memory.over:  # replaced after its batch: the parent hands what it sent ahead to another
            conn.send(("retire", memory.rss))
            return


class _Capture:
    """The worker's standard output and error, redirected to a file of its own: what an engine
    writes there (``print``, or ``write(2)`` on descriptor 1 or 2) never reaches the gate's
    report stream (``--json -``); after each call the worker takes it, and the job notes it."""

    def __init__(self, path: str) -> None:
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o600)
        os.dup2(self.fd, 1)
        os.dup2(self.fd, 2)
        # new streams, unbuffered: a forked worker's inherited ones may hold the gate's unwritten output
        sys.stdout = _unbuffered(1)
        sys.stderr = _unbuffered(2)

    def take(self) -> tuple[int, bytes]:
        """What was written since the last take: its size and head. The file is emptied."""
        size = os.fstat(self.fd).st_size
        if not size:
            return 0, b""
        head = os.pread(self.fd, _OUTPUT_SHOWN, 0)
        os.ftruncate(self.fd, 0)  # O_APPEND: the next write goes to the start again
        return size, head


def _unbuffered(fd: int) -> io.TextIOWrapper:
    raw = io.FileIO(fd, "w", closefd=False)
    return io.TextIOWrapper(raw, encoding="utf-8", errors="backslashreplace", write_through=True)  # type: ignore[arg-type]


def _output_notes(output: dict[str, tuple[int, bytes]]) -> tuple[str, ...]:
    """A note for each engine (or ``loading``) that wrote to stdout/stderr: its size and head."""
    notes = []
    for who, (size, head) in output.items():
        if not size:
            continue
        shown = repr(head.decode("utf-8", "backslashreplace"))
        if len(shown) > _OUTPUT_SHOWN or size > len(head):
            shown = shown[:_OUTPUT_SHOWN] + "..."
        what = f"the {who} engine wrote" if who in ("py", "c") else "the engines wrote"
        when = " while loading" if who == "loading" else ""
        notes.append(f"{what} {size} byte(s) to stdout/stderr{when} (captured, kept out of the reports): {shown}")
    return tuple(notes)


class _Memory:
    """The worker's resident set after each job, against its limit (MiB; 0: none)."""

    def __init__(self, limit_mb: int) -> None:
        self.limit = limit_mb
        try:  # kept open: read again after each job (a third of the cost of opening it each time)
            self.statm: int | None = os.open("/proc/self/statm", os.O_RDONLY)
        except OSError:
            self.statm = None
        self.rss = _rss_mib(self.statm) if limit_mb else 0
        self.over = False

    def note(self) -> str:
        """The job's note when the worker is past its limit after it, else ''."""
        if not self.limit:
            return ""
        before, self.rss = self.rss, _rss_mib(self.statm)
        if self.rss <= self.limit:
            return ""
        self.over = True
        return (
            f"the worker's memory grew by {self.rss - before} MiB during this job, to RSS {self.rss} MiB, "
            f"over the memory limit of {self.limit} MiB ({MEMORY_ENV}): the worker was replaced after its batch"
        )


def _rss_mib(statm: int | None) -> int:
    """This process's resident set in MiB: from ``statm``, its /proc/self/statm (Linux: now), else its peak."""
    try:
        if statm is not None:
            return int(os.pread(statm, 128, 0).split()[1]) * os.sysconf("SC_PAGE_SIZE") >> 20
    except (OSError, ValueError, IndexError):
        pass
    try:
        import resource
    except ImportError:
        return 0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak >> 20 if sys.platform == "darwin" else peak >> 10  # bytes on macOS, KiB elsewhere


def _run_guarded(args: tuple, fault, note) -> tuple:
    """:func:`_run_job` in a fork of the worker (a guarded batch): a crash then costs the fork,
    not the worker; the job's result is then its :class:`Death`, made here from what the fork
    left (its exit status, the call it was in, its faulthandler dump, the stage note)."""
    phase, job_seq, capture = args[1], args[2], args[-1]
    os.ftruncate(fault.fileno(), 0)  # the fork's dump, if it dies, is all the file holds
    os.lseek(fault.fileno(), 0, os.SEEK_SET)
    phase.value = 0
    r, w = os.pipe()
    worker = os.getpid()
    pid = os.fork()
    if pid == 0:  # the job's process: it sends its result down the pipe and exits
        status = 70
        try:
            os.close(r)
            die_with_parent(worker)
            with open(w, "wb") as out:
                out.write(pickle.dumps(_run_job(*args), protocol=pickle.HIGHEST_PROTOCOL))
            status = 0
        finally:
            os._exit(status)
    os.close(w)
    with open(r, "rb") as f:
        payload = f.read()
    code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    if code == 0 and payload:
        return pickle.loads(payload)
    engine, run = PHASES.get(phase.value, ("?", 0))
    phase.value = 0
    stage = note.value.decode("ascii", "replace") if engine == "c" else ""
    death = Death("crash", engine, run, code, _dump_head(fault.name), stage)
    return (job_seq, (), (), None, None, False, _output_notes({engine: capture.take()}), death)


def _read_message(fd: int) -> object:
    """The parent's next message (``_FRAME``); EOFError when the parent is gone."""
    (n,) = _FRAME.unpack(_read_exact(fd, _FRAME.size))
    return pickle.loads(_read_exact(fd, n))


def _read_exact(fd: int, n: int) -> bytes:
    parts, got = [], 0
    while got < n:
        part = os.read(fd, min(n - got, 1 << 20))
        if not part:
            raise EOFError("the parent closed the pipe")
        parts.append(part)
        got += len(part)
    return b"".join(parts)


def _run_job(
    engines,
    phase,
    job_seq: int,
    data: bytes,
    mode: str,
    flavor: str,
    skip: str,
    store: TextStore | None = None,
    capture: _Capture | None = None,
) -> tuple:
    """Both engines twice (``skip``: the side whose outputs the gate takes from its cache); with a
    ``capture``, what each engine wrote to stdout/stderr is noted.

    With a ``store``, a text of at least ``_INLINE_CHARS`` goes there instead of over the pipe,
    unless the two engines' texts differ (the parent then compares them): the parent of a
    passing run never needs them, and a run's texts are most of what the pipe would carry."""
    runs: dict[str, list[EngineRun]] = {"py": [], "c": []}
    texts: dict[str, str | None] = {"py": None, "c": None}
    last: tuple[EngineRun, str | None] | None = None
    output: dict[str, tuple[int, bytes]] = {}
    for code, side in _ORDER:
        if side == skip:
            continue
        phase.value = code
        # each call most likely repeats the one before it: the other engine, or its own first run
        like = last if code <= 2 or not runs[side] else (runs[side][0], texts[side])
        run, text = call_engine(engines.emit_fn(side), data, mode, flavor, like)
        if capture is not None:
            size, head = capture.take()
            if size:
                had = output.get(side, (0, b""))
                output[side] = (had[0] + size, had[1] or head)
        if code <= 2:
            texts[side] = text
            last = (run, text)
        runs[side].append(run)
    phase.value = 0
    py_text, c_text = texts["py"], texts["c"]
    same = c_text is not None and c_text == py_text
    if same:
        c_text = None  # same text: the parent reuses the py text (saves a copy over the pipe)
    if store is not None and (same or py_text is None or c_text is None):
        py_text = _ship(store, runs["py"], py_text)
        c_text = _ship(store, runs["c"], c_text)
    return (job_seq, tuple(runs["py"]), tuple(runs["c"]), py_text, c_text, same, _output_notes(output), None)


def _ship(store: TextStore, runs: list[EngineRun], text: str | None) -> str | None:
    """What to send of an emitted text: None when it is in the store (written there if need be)."""
    if text is None or len(text) < _INLINE_CHARS:
        return text
    try:
        store.put(runs[0].sha256, text)
    except (OSError, UnicodeError):  # no room, or a text the store cannot encode: send it
        return text
    return None


def _bad_results(msg: tuple, batch: deque[int]) -> str:
    """What makes a message no results of the worker's batch, in order ('' when it is one)."""
    entries = msg[1] if msg[0] == "results" and len(msg) == 2 else None
    if not isinstance(entries, list) or not entries or len(entries) > len(batch):
        return f"stray bytes: a {msg[0][:40]!r} message where the results of its batch were due"
    for entry, job in zip(entries, batch):
        if not isinstance(entry, tuple) or len(entry) != 8 or entry[0] != job:
            return f"stray bytes: a result of the wrong shape or job where job {job}'s was due"
    return ""


def _dump_head(path: str) -> str:
    """The head of a faulthandler dump (it prints the innermost frame first), up to the worker's
    entry (:func:`_worker_main`)."""
    try:
        with open(path, "rb") as f:
            text = f.read(1 << 20).decode("utf-8", "replace")  # the head is all that is shown
    except OSError:
        return ""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return "\n".join(_job_frames(lines)[:_FAULT_LINES])


def _job_frames(lines: list[str]) -> list[str]:
    """A dump's lines without the frames outward of the worker's entry: multiprocessing's, and
    (in a forked worker) the parent's stack at the fork, which are the pool's, never the crash's."""
    for i, ln in enumerate(lines):
        if ln.strip().startswith("File ") and ln.endswith(f" in {_worker_main.__name__}"):
            return lines[: i + 1]
    return lines


# ----------------------------------------------------------------------------- parent side


class Worker(Protocol):
    """A worker as the schedule sees it (``runner._Worker``)."""

    alive: bool
    ready: bool  # it loaded the engines
    batch: deque[int]  # indexes of the items handed out, in the order they run
    out: bytearray  # what it has not been sent yet of the messages posted to it
    posted: float
    seq: object  # shared: ``.value``, the index of the job it started last

    def post(self, msg: object) -> None: ...
    def kill(self) -> None: ...
    def running(self) -> int | None: ...
    def where(self) -> tuple[str, int]: ...
    def stage(self, engine: str) -> str: ...
    def fault_dump(self) -> str: ...
    def output_notes(self, engine: str) -> tuple[str, ...]: ...
    def exitcode(self) -> int | None: ...
    def load_error(self) -> EngineLoadError: ...


class Schedule(Generic[K]):
    """One run's jobs: those still to hand out (``pending``), the results, and the steps that
    move a job from one to the other. ``results`` is in the order of ``items``."""

    def __init__(
        self,
        items: Sequence[WorkItem[K]],
        workers: list,
        spawn: Callable[[], object],
        order: Sequence[int] | None = None,
        costs: Sequence[float] | None = None,
        on_result: Callable[[JobResult[K]], None] | None = None,
        stop: Callable[[JobResult[K]], bool] | None = None,
        store: TextStore | None = None,
    ) -> None:
        self.items = items
        self.workers: list[Worker] = workers  # the pool's: a lost worker leaves it, spawn adds its replacement
        self.spawn = spawn
        self.costs = costs
        self.on_result = on_result
        self.stop = stop
        self.store = store  # where the workers leave the texts they do not send (for each JobResult)
        self.results: list[JobResult[K] | None] = [None] * len(items)
        self.pending: deque[int] = deque(order if order is not None else range(len(items)))
        # with a stop (--maxfail) a batch goes only to an idle worker: one sent ahead would run
        # after the stop, and a crash storm would not end early
        self.ahead = _AHEAD if stop is None else 0
        self.group = _GROUP if stop is None else 1
        self.left = sum(costs) if costs is not None else 0.0  # the cost of what is not handed out yet
        self.done = 0  # jobs with a result, or dropped after the stop
        self.stopped = False
        self.guard_left = 0  # jobs still to go out guarded (in a fork each) after the last crash
        self.startup_deaths = 0
        self.replaced = 0  # workers replaced after a crash, a timeout or stray bytes
        self.prefetched = 0  # batches sent to a worker still running the last job of its previous one
        self.retired = 0  # workers replaced after a batch that took them over the memory limit

    @property
    def finished(self) -> bool:
        return self.done >= len(self.items)

    # -- handing out
    def hand_out(self) -> None:
        """Give each worker that can take work its next batch: an idle one, and one that runs
        the last job of its batch (it reads the next one as that job ends)."""
        for w in self.workers:
            if w.alive and w.ready and len(w.batch) <= self.ahead and not w.out and self.pending:
                new = self.next_batch()
                if w.batch:
                    self.prefetched += 1
                else:  # an idle worker: it writes no seq until it starts the batch, which is not before now
                    w.seq.value = -1  # type: ignore[attr-defined]
                    w.posted = time.monotonic()
                w.batch.extend(new)
                guard = self.guard_left > 0
                self.guard_left = max(0, self.guard_left - len(new))
                try:
                    items = self.items
                    jobs = [(i, items[i].data, items[i].mode, items[i].call_flavor, items[i].skip) for i in new]
                    w.post((self.group, jobs, guard))
                except (OSError, ValueError):
                    w.kill()
                    self._replace(w)
                    break

    def next_batch(self) -> list[int]:
        """The next batch, taken off the queue: :func:`batch_size` jobs; with costs, no more than a
        1/(4 x workers) share of the cost still to hand out, and at least one job. Batches shrink
        as the queue does, so the tail stays balanced."""
        size = batch_size(len(self.pending), len(self.workers))
        if self.costs is None:
            return [self.pending.popleft() for _ in range(size)]
        new: list[int] = []
        budget, taken = self.left / (4 * len(self.workers)), 0.0
        while self.pending and len(new) < size and (not new or taken + self.costs[self.pending[0]] <= budget):
            i = self.pending.popleft()
            taken += self.costs[i]
            new.append(i)
        self.left -= taken
        return new

    # -- events
    def on_results(self, w: Worker, msg: tuple) -> None:
        """A worker's message after its hello: the results of the first jobs of its batch, in order
        (else stray bytes in its pipe: :meth:`on_unreadable`)."""
        problem = str(msg[1])[:300] if msg[0] == "unreadable" and len(msg) > 1 else _bad_results(msg, w.batch)
        if problem:
            self.on_unreadable(w, problem)
            return
        for i, py_runs, c_runs, py_text, c_text, same, notes, death in msg[1]:
            w.batch.popleft()
            if death is not None:  # a guarded job's fork died
                self._crashed(i, death, notes)
                continue
            c_text = py_text if same else c_text
            self._finish(i, JobResult(self.items[i], py_runs, c_runs, py_text, c_text, notes=notes, store=self.store))

    def on_unreadable(self, w: Worker, why: str) -> None:
        """Stray bytes in the worker's pipe: the job it runs is a CRASH saying so, and the
        worker (whose later messages cannot be trusted) is replaced, as after a crash."""
        where = w.where()
        job = w.running()
        w.kill()
        if job is not None:
            w.batch.remove(job)
            self._crashed(job, Death("crash", where[0], where[1], None, unread=why))
        self._replace(w)

    def on_death(self, w: Worker) -> None:
        """The worker died: the job it ran is a CRASH, the rest of its batch (the jobs it ran
        before, whose results it had not sent, among them) runs again elsewhere, and a
        replacement starts. One that died while loading the engines: see :meth:`_lost_at_startup`."""
        where = w.where()
        job = w.running()
        w.kill()
        if not w.ready:
            self._lost_at_startup(w)
            return
        if job is not None:
            w.batch.remove(job)
            death = Death("crash", where[0], where[1], w.exitcode(), w.fault_dump(), w.stage(where[0]))
            self._crashed(job, death, w.output_notes(where[0]))
        self._replace(w)

    def on_timeout(self, w: Worker) -> None:
        """The worker's job passed the timeout: the job is a TIMEOUT, the worker is killed and
        replaced, and the rest of its batch runs again, as after a crash."""
        where = w.where()
        job = w.running()
        w.batch.remove(job)  # type: ignore[arg-type]  # a worker past its deadline has a batch
        stage = w.stage(where[0])  # where a hung C call is (the page is the parent's too)
        w.kill()
        self._finish(job, JobResult(self.items[job], death=Death("timeout", where[0], where[1], None, "", stage)))
        self._replace(w)

    def on_retire(self, w: Worker) -> None:
        """The worker went past the memory limit and exited after its batch: replaced, and what
        was sent to it ahead goes to another."""
        w.kill()
        self.retired += 1
        self._replace(w, retired=True)

    # -- what the steps share
    def _finish(self, i: int, res: JobResult[K]) -> None:
        self.results[i] = res
        self.done += 1
        if self.on_result is not None:
            self.on_result(res)
        if self.stop is not None and self.pending and self.stop(res):
            self.stopped = True
            self.done += len(self.pending)  # dropped: never handed out
            self.pending.clear()

    def _crashed(self, job: int, death: Death, notes: tuple[str, ...] = ()) -> None:
        if death.kind == "crash" and not death.unread:
            self.guard_left = _GUARD_JOBS  # the next crash (a storm's) costs a fork, not a worker
        self._finish(job, JobResult(self.items[job], death=death, notes=notes))

    def _replace(self, w: Worker, retired: bool = False) -> None:
        """The lost worker's unrun jobs back to the front of the queue (dropped after a stop), and
        a new worker in its place while there is work."""
        if self.stopped:  # what the lost worker had not run is dropped with the rest
            self.done += len(w.batch)
        else:
            self.pending.extendleft(reversed(w.batch))  # what the lost worker had not run yet runs elsewhere
            if self.costs is not None:
                self.left += sum(self.costs[i] for i in w.batch)  # handed out again: its cost is left again
        w.batch.clear()
        self.workers.remove(w)
        if self.pending or any(x.batch for x in self.workers):
            self.spawn()
            self.replaced += not retired

    def _lost_at_startup(self, w: Worker) -> None:
        """A replacement died while loading the engines: another starts, up to
        ``_MAX_STARTUP_DEATHS``; then the jobs not handed out are CRASHes, and the run keeps what ran."""
        self.startup_deaths += 1
        err = w.load_error()
        self.workers.remove(w)
        if self.startup_deaths < _MAX_STARTUP_DEATHS:
            if self.pending:
                self.spawn()
            return
        while self.pending:  # give up on the rest, keep what ran
            i = self.pending.popleft()
            self._finish(i, JobResult(self.items[i], death=Death("crash", "?", 0, w.exitcode(), str(err))))


class _Worker:
    def __init__(
        self, ctx, spec: EngineSpec, tmpdir: Path, n: int, store: TextStore | None = None, memory_mb: int = 0
    ) -> None:
        self.fault_path = tmpdir / f"worker-{n}.fault"
        self.output_path = tmpdir / f"worker-{n}.out"  # its stdout and stderr (_Capture)
        self.phase = ctx.RawValue("i", 0)
        self.seq = ctx.RawValue("i", -1)  # the index of the job the worker started last
        self.started = ctx.RawValue("d", 0.0)  # and when (time.monotonic: one clock for every process)
        self.note = ctx.RawArray("c", _NOTE_BYTES)  # the C engine's stage note, readable after the worker died
        parent_conn, child_conn = ctx.Pipe(duplex=True)
        self.conn: Connection = parent_conn  # the worker's results, read as multiprocessing frames them
        # the same socket, for messages to the worker sent without ever waiting (post)
        self.sock = socket.socket(fileno=os.dup(parent_conn.fileno()))
        self.out = bytearray()  # framed messages the socket has not taken yet
        self.writing = False  # registered with the run's selector for a writable socket
        self.proc = ctx.Process(
            target=_worker_main,
            name=f"rocke-parity-worker-{n}",
            args=(
                child_conn,
                self.phase,
                self.seq,
                self.started,
                self.note,
                spec,
                str(self.fault_path),
                os.getpid(),
                store,
                str(self.output_path),
                memory_mb,
            ),
            daemon=True,
        )
        self.proc.start()
        child_conn.close()
        self.ready = False
        self.batch: deque[int] = deque()  # indexes of the items handed out, in the order they run
        self.posted = 0.0  # when the batch went out to the idle worker (its first job cannot start earlier)
        self.alive = True
        self.released = False  # asked to exit (Pool.release)

    @property
    def job(self) -> int | None:
        """The first item of the batch whose result has not come back (the next result's)."""
        return self.batch[0] if self.batch else None

    def running(self) -> int | None:
        """The item the worker runs now (or ran last, if it is between two): the one it started
        last, when its result has not come back; else the first it has not started."""
        if not self.batch:
            return None
        seq = self.seq.value
        return seq if seq in self.batch else self.batch[0]

    def deadline(self, timeout: float) -> float:
        """When the job running now passes ``timeout``: from its start, or from its batch's
        going out while the worker has not started it (the start on record is an older job's)."""
        return max(self.posted, self.started.value) + timeout

    def exitcode(self) -> int | None:
        return self.proc.exitcode

    def fault_dump(self) -> str:
        return _dump_head(str(self.fault_path))

    def output_notes(self, engine: str) -> tuple[str, ...]:
        """The note of what the dead worker's engine wrote to stdout/stderr in its last call."""
        try:
            with open(self.output_path, "rb") as f:
                head = f.read(_OUTPUT_SHOWN)
                size = os.fstat(f.fileno()).st_size
        except OSError:
            return ()
        return _output_notes({engine: (size, head)})

    def stage(self, engine: str) -> str:
        """The C engine's note of the stage it was in, when the worker died inside a C call."""
        if engine != "c":
            return ""
        return self.note.value.decode("ascii", "replace")

    def where(self) -> tuple[str, int]:
        """The engine and run the worker is in, for :meth:`running`'s job when it started it."""
        if self.running() != self.seq.value:
            return ("?", 0)
        return PHASES.get(self.phase.value, ("?", 0))

    def signal_kill(self) -> None:
        """SIGKILL the worker if it still runs (without waiting)."""
        try:
            if self.proc.is_alive():
                self.proc.kill()
        except (OSError, ValueError):
            pass

    def post(self, msg: object) -> None:
        """Queue a message to the worker and send what the socket takes now. Never waits: the
        worker reads only between jobs, and a worker sending a large result while the parent
        waited to send it a large batch would wait for each other for ever."""
        payload = pickle.dumps(msg, protocol=pickle.HIGHEST_PROTOCOL)
        self.out += _FRAME.pack(len(payload))
        self.out += payload
        self.flush()

    def flush(self) -> None:
        """Send as much of ``out`` as the socket takes without waiting (OSError: the worker is gone)."""
        while self.out:
            try:
                n = self.sock.send(self.out, socket.MSG_DONTWAIT)
            except BlockingIOError:
                return
            del self.out[:n]

    def kill(self) -> None:
        self.signal_kill()
        self.proc.join(5)
        self.alive = False
        self.conn.close()
        self.sock.close()
        self.out.clear()

    def load_error(self) -> EngineLoadError:
        """The worker died while loading the engines: killed (if it was not yet), and the error."""
        self.kill()
        how = Death("crash", "?", 0, self.proc.exitcode).describe()
        tail = self.fault_dump()
        return EngineLoadError(f"a worker died while loading the engines: {how}" + (f"\n{tail}" if tail else ""))


class Pool:
    """``with Pool(spec, size, timeout) as pool: info = pool.info; results = pool.run(items)``."""

    def __init__(
        self, spec: EngineSpec, size: int | None = None, timeout: float = 60.0, store: TextStore | None = None
    ) -> None:
        self.spec = spec
        self.store = store  # where the workers leave the texts they do not send (JobResult.text reads them)
        self.size = pool_size(size)
        self.timeout = timeout
        self._ctx = mp.get_context(start_method())
        self._tmpdir = Path(tempfile.mkdtemp(prefix="rocke-parity-run-"))
        self._workers: list[_Worker] = []
        self._spawned = 0
        self.info: EngineInfo | None = None
        self.replaced = 0
        self.prefetched = 0  # batches sent to a worker still running the last job of its previous one
        self.memory_mb, problem = memory_limit()
        self.retired = 0  # workers replaced after a batch that took them over the memory limit
        self.notes: list[str] = [problem] if problem else []  # about the pool itself, for the run's notes
        self._selector: selectors.BaseSelector | None = None
        self._selector_key: tuple[int, ...] = ()

    # -- lifecycle
    def __enter__(self) -> Pool:
        return self.start()

    def start(self) -> Pool:
        """Start the workers and wait until one has loaded the engines (``info`` is then set)."""
        return self.launch().wait_ready()

    def launch(self) -> Pool:
        """Start the workers without waiting: they load the engines while the caller reads its inputs."""
        try:
            for _ in range(self.size - len(self._workers)):
                self._spawn()
        except BaseException:
            self.terminate()
            raise
        return self

    def wait_ready(self) -> Pool:
        """Wait until one worker has loaded the engines (``info`` is then set); EngineLoadError if none can."""
        try:
            self._await_first_ready()
        except BaseException:
            self.terminate()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _ready_workers(self, live: list[_Worker], timeout: float) -> list[tuple[_Worker, bool]]:
        """The workers with a message or an exit to read, waiting up to ``timeout`` s, each once:
        (worker, whether its pipe is readable; else only its process ended). One selector serves
        as long as the set of live workers stays the same (the loop asks once per result:
        registering every pipe anew each time cost more than the wait)."""
        key = tuple(id(w) for w in live)
        if self._selector is None or self._selector_key != key:
            self._close_selector()
            self._selector = selectors.DefaultSelector()
            for w in live:
                self._selector.register(w.conn, selectors.EVENT_READ, (w, True))
                self._selector.register(w.proc.sentinel, selectors.EVENT_READ, (w, False))
                w.writing = False
            self._selector_key = key
        for w in live:  # a worker with a message not all sent: wake when its socket takes more
            if bool(w.out) != w.writing:
                if w.out:
                    self._selector.register(w.sock, selectors.EVENT_WRITE, (w, None))
                else:
                    self._selector.unregister(w.sock)
                w.writing = bool(w.out)
        ready: dict[int, tuple[_Worker, bool]] = {}
        for k, _ in self._selector.select(timeout):
            w, readable = k.data
            if readable is None:
                try:
                    w.flush()
                except OSError:
                    pass  # the worker is gone: its exit is read as such
                continue
            if readable or id(w) not in ready:
                ready[id(w)] = (w, readable)  # a message to read comes before the exit behind it
        return list(ready.values())

    def _close_selector(self) -> None:
        if self._selector is not None:
            self._selector.close()
        self._selector, self._selector_key = None, ()

    def release(self) -> None:
        """Ask every worker to exit, without waiting: they wind down while the caller judges the
        results, and :meth:`close` then finds them gone. The pool runs nothing after this."""
        for w in self._workers:
            if w.alive and not w.released:
                w.released = True
                try:
                    w.post(None)
                except (OSError, ValueError):
                    pass

    def close(self) -> None:
        """Stop the workers: ask them to exit, give them 2 s, kill the rest."""
        try:
            self.release()
            deadline = time.monotonic() + 2.0
            for w in self._workers:
                if w.alive:
                    w.proc.join(max(0.0, deadline - time.monotonic()))
                    w.kill()
        finally:
            self.terminate()  # whatever was left (a signal during the above): killed now

    def terminate(self) -> None:
        """Kill every worker at once (SIGKILL to all, then wait for each): for an interrupted run."""
        workers, self._workers = self._workers, []
        self._close_selector()
        for w in workers:
            w.signal_kill()
        for w in workers:
            if w.alive:
                w.kill()
        shutil.rmtree(self._tmpdir, ignore_errors=True)

    def run_notes(self, results: Sequence[JobResult]) -> list[str]:
        """The run's notes about the pool: a malformed limit, engines writing to stdout/stderr,
        workers replaced over the memory limit (each job's own note is in its record)."""
        notes = list(self.notes)
        noisy = sum(any(" to stdout/stderr " in n for n in r.notes) for r in results)
        if noisy:
            notes.append(
                f"{noisy} job(s): an engine wrote to stdout or stderr; the workers captured it and kept it "
                'out of the reports (each job\'s record notes what, under "notes")'
            )
        if self.retired:
            over = sum(any("over the memory limit" in n for n in r.notes) for r in results)
            notes.append(
                f"{self.retired} worker(s) went over the memory limit of {self.memory_mb} MiB (RSS; {MEMORY_ENV}) "
                f"and were replaced after their batch; {over} job(s) ended over it (see their records' notes)"
            )
        return notes

    def _spawn(self) -> _Worker:
        w = _Worker(self._ctx, self.spec, self._tmpdir, self._spawned, self.store, self.memory_mb)
        self._spawned += 1
        self._workers.append(w)
        return w

    def _handle_hello(self, w: _Worker, msg: tuple) -> None:
        if msg[0] == "init-error":
            raise EngineLoadError(
                f"the engines could not be loaded ({self.spec.py_emit}, {self.spec.c_emit}):\n{msg[1]}"
            )
        if msg[0] != "ready":
            raise EngineLoadError(f"worker sent {msg[0]!r} before it was ready")
        info = EngineInfo(tuple(msg[1]), tuple(msg[2]))
        if self.info is None:
            self.info = info
            self.notes.extend(msg[3] if len(msg) > 3 else ())  # what the engines wrote while loading
        w.ready = True

    def _await_first_ready(self) -> None:
        end = time.monotonic() + _STARTUP_TIMEOUT
        while self.info is None:
            left = end - time.monotonic()
            if left <= 0:
                raise EngineLoadError(f"no worker loaded the engines within {_STARTUP_TIMEOUT:g} s")
            objs = {w.conn: w for w in self._workers if w.alive and not w.ready}
            objs.update({w.proc.sentinel: w for w in self._workers if w.alive and not w.ready})
            for obj in wait(list(objs), left):
                w = objs[obj]
                if not w.alive or w.ready:
                    continue
                msg = self._recv(w)
                if msg is None:
                    raise w.load_error()
                self._handle_hello(w, msg)

    @staticmethod
    def _recv(w: _Worker, readable: bool = False) -> tuple | None:
        """The worker's next message; None when it died; ``("nothing",)`` when there is none yet;
        ``("unreadable", why)`` when what came is no message of a worker's (stray bytes in its
        pipe). ``readable``: a selector just saw its pipe readable (no second poll)."""
        try:
            if not readable and not w.conn.poll():
                return None if not w.proc.is_alive() else ("nothing",)
            payload = w.conn.recv_bytes(_MAX_MESSAGE)
        except EOFError:
            return None
        except OSError as e:  # a length past _MAX_MESSAGE has no errno; a lost worker's socket has one
            return ("unreadable", "stray bytes: a message length past 1 GiB") if e.errno is None else None
        try:
            msg = pickle.loads(payload)
        except Exception as e:  # noqa: BLE001 - whatever stray bytes unpickle to, or fail with
            return ("unreadable", f"stray bytes: {type(e).__name__}: {str(e)[:200]}")
        if not isinstance(msg, tuple) or not msg or not isinstance(msg[0], str):
            return ("unreadable", f"stray bytes: a message of the wrong shape ({type(msg).__name__})")
        return msg

    # -- running
    def run(
        self,
        items: Sequence[WorkItem[K]],
        on_result: Callable[[JobResult[K]], None] | None = None,
        order: Sequence[int] | None = None,
        stop: Callable[[JobResult[K]], bool] | None = None,
        costs: Sequence[float] | None = None,
    ) -> list[JobResult[K]]:
        """Results in the order of ``items``; ``order`` is the order to hand them out in (default: as given).
        ``costs`` (each item's expected cost in any one unit — the gate's are last-run seconds or
        golden sizes; optional) bound a batch by its cost as well as by its count, so that the
        costliest jobs, handed out first, do not go out in one batch.

        The gate hands out the costliest jobs first, so that no worker is left with a long job
        at the end while the others are idle. When ``stop`` returns True for a result, no
        further job is handed out; the jobs already running finish, and only the results of
        the jobs that ran are returned (``--maxfail``)."""
        if any(w.released for w in self._workers):
            raise RuntimeError("Pool.run after Pool.release: the workers were asked to exit")
        if order is not None and sorted(order) != list(range(len(items))):
            raise ValueError("order must be a permutation of the items' indexes")
        schedule = Schedule(items, self._workers, self._spawn, order, costs, on_result, stop, self.store)
        try:
            self._run(schedule)
        except BaseException as e:
            self.terminate()  # a signal (Interrupted) or a bug: no worker outlives the run
            if isinstance(e, Interrupted) and e.not_run is None:
                e.not_run = sum(r is None for r in schedule.results)
            raise
        finally:
            self.replaced += schedule.replaced
            self.prefetched += schedule.prefetched
            self.retired += schedule.retired
        return [r for r in schedule.results if r is not None]

    def _run(self, schedule: Schedule) -> None:
        """Until every job has its result: hand out work, wait for a worker's message or end (or
        a job's deadline), hand each event to its step of the schedule."""
        while not schedule.finished:
            schedule.hand_out()
            live = [w for w in self._workers if w.alive]
            if not live:
                self._spawn()
                continue
            for w, readable in self._ready_workers(live, self._next_deadline(live)):
                if w.alive:
                    self._dispatch(schedule, w, readable)
            for w in self._overdue():
                schedule.on_timeout(w)

    def _next_deadline(self, live: list[_Worker]) -> float:
        """Seconds until the first running job passes its timeout (the startup timeout when none runs)."""
        busy = [w.deadline(self.timeout) for w in live if w.batch]
        return max(0.0, min(busy) - time.monotonic()) if busy else _STARTUP_TIMEOUT

    def _overdue(self) -> list[_Worker]:
        """The workers whose job has passed the timeout."""
        now = time.monotonic()
        return [w for w in self._workers if w.alive and w.batch and w.deadline(self.timeout) <= now]

    def _dispatch(self, schedule: Schedule, w: _Worker, readable: bool) -> None:
        """The worker's event, to the step of the schedule it is for."""
        msg = self._recv(w, readable)
        if msg is None:  # the worker died
            schedule.on_death(w)
        elif msg[0] == "nothing":
            return
        elif not w.ready:
            self._handle_hello(w, msg)
        elif msg[0] == "retire":  # past the memory limit after its batch: it has exited
            schedule.on_retire(w)
        else:
            schedule.on_results(w, msg)
