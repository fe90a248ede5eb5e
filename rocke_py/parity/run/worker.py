"""The worker process: it imports both engines once, then runs the jobs its parent sends.

One job = both engines on the raw config bytes, then both again (the determinism re-run):
``py, c, py, c`` (:func:`_run_job`). The worker writes which call it is in to a shared integer
before each call, and the job's index and start time before each job, so when it dies
(``os.abort()``, SIGSEGV in the C engine, a hard ``_exit``) or hangs, the parent knows which job,
which engine and which run it was.

- A batch comes framed by the parent (``_FRAME``, :func:`_read_message`); the results go back in
  groups (at most the batch's ``group`` jobs, and always when at most ``_AHEAD`` jobs of the
  batch are left, so that the parent sends the next batch in time).
- With a :class:`TextStore` (the gate's object cache), the worker leaves there the texts both
  engines agree on and sends only the runs (:func:`_run_job`).
- A guarded batch (after a crash) runs each job in a fork of the worker (:func:`_run_guarded`):
  another crash then costs the fork, not the worker.
- What an engine writes to stdout/stderr goes to a file of the worker's own (:class:`_Capture`),
  never to the gate's report stream; the job notes it.
- Past its memory limit after a job (:class:`_Memory`), the worker finishes its batch and exits.
- It ignores SIGINT (a terminal's Ctrl-C reaches the whole process group: the parent decides),
  and dies with its parent (:func:`die_with_parent`).
"""

from __future__ import annotations

import faulthandler
import gc
import io
import os
import pickle
import signal
import struct
import sys
import time
import traceback
from multiprocessing.connection import Connection

from rocke_py.parity.run.engines import EngineRun, EngineSpec, call_engine, load_callable, load_engines
from rocke_py.parity.run.processes import _GC_THRESHOLDS, die_with_parent
from rocke_py.parity.run.schedule import _AHEAD
from rocke_py.parity.run.work import Death, TextStore

#: phase codes written by a worker before each engine call: (engine, run number)
PHASES: dict[int, tuple[str, int]] = {1: ("py", 1), 2: ("c", 1), 3: ("py", 2), 4: ("c", 2)}
_ORDER = ((1, "py"), (2, "c"), (3, "py"), (4, "c"))
_FAULT_LINES = 30
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
#: a worker sends its group early once its texts reach this many characters (far under frames.MAX_MESSAGE)
_GROUP_CHARS = 64 << 20


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
