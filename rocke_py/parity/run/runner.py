"""The crash-isolating worker pool: the parent's side of the workers, and the loop of a run.

Each worker is a process that imports both engines once and then runs jobs sent over its pipe
(:mod:`worker`). It is forked where the platform allows it and the parent has no other thread (a
fork copies the interpreter with the harness already imported, so a worker is ready in a
fraction of what a fresh interpreter takes), and spawned otherwise (:func:`start_method`).
Either way the engines are imported in the worker, never in the parent, so an engine that
crashes while loading takes down only a worker.

- :meth:`Pool.run` is a loop: wait until a worker has a message or has ended (or a job's
  deadline comes), hand the event to one step of its :class:`Schedule` (results, death,
  timeout, retirement), hand out work, repeat. Which jobs go to which worker, and what a crash
  or a timeout does to the run, is :mod:`schedule`'s.
- Work goes out in batches; the worker sends its results in groups: one message and one
  wake-up of the parent per group, not per job. Before each job the worker writes the job's
  index and its start time to shared memory, which is how the parent finds the job a worker
  runs and its deadline. The parent frames its messages itself (``_FRAME``) and never waits to
  send one (:meth:`_Worker.post`): a worker reads only between jobs, and one sending a large
  result to a parent that waited to send it a large batch would wait with it for ever.
- With a :class:`TextStore` (the gate's object cache), a worker leaves there the texts both
  engines agree on; :meth:`JobResult.text` reads a text back when the caller needs it.
- A worker that dies turns only its current job into a :class:`Death` (``crash``), with the
  signal and the end of the worker's faulthandler dump; a job past ``timeout`` seconds is a
  :class:`Death` (``timeout``) and its worker is killed (SIGKILL). Either way the worker is
  replaced and the run goes on.
- Signals: on :class:`Interrupted` (:func:`interrupts_raise`), :meth:`Pool.run` kills every
  worker at once (SIGKILL — a worker may be stuck in C) and waits for them before the exception
  goes on, carrying the number of jobs that did not finish.

The runner knows nothing about configs or statuses: it takes :class:`WorkItem` s and returns
:class:`JobResult` s in the same order. Classification lives in :mod:`compare`.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import pickle
import selectors
import shutil
import socket
import tempfile
import time
from collections import deque
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Callable, Sequence

from rocke_py.parity.run.engines import EngineSpec
from rocke_py.parity.run.frames import StrayBytes, read_frame
from rocke_py.parity.run.processes import Interrupted, start_method
from rocke_py.parity.run.schedule import Schedule
from rocke_py.parity.run.work import Death, EngineInfo, EngineLoadError, JobResult, K, TextStore, WorkItem
from rocke_py.parity.run.worker import (
    _FRAME,
    _OUTPUT_SHOWN,
    MEMORY_ENV,
    PHASES,
    _dump_head,
    _output_notes,
    _worker_main,
    memory_limit,
)

_STARTUP_TIMEOUT = 120.0
_NOTE_BYTES = 128  # the stage note: "MODE FLAVOR STAGE" needs under 40


def pool_size(workers: int | None, most_jobs: int | None = None) -> int:
    """Workers for a run: ``workers`` (default one per CPU), but no more than ``most_jobs``, the
    jobs the run can have (a named selection: no idle workers)."""
    size = workers or os.cpu_count() or 1
    return max(1, min(size, most_jobs) if most_jobs is not None else size)


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
        ``("unreadable", why, job)`` when what came is no message of a worker's (stray bytes in
        its pipe), ``job`` the one it ran when they came (a stall is found later, when it may
        have moved on). ``readable``: a selector just saw its pipe readable (no second poll)."""
        job = w.running()
        try:
            if not readable and not w.conn.poll():
                return None if not w.proc.is_alive() else ("nothing",)
            payload = read_frame(w.conn)
        except EOFError:
            return None
        except StrayBytes as e:  # a length out of range, or one that no bytes follow
            return ("unreadable", f"stray bytes: {e}", job)
        except OSError:  # a lost worker's socket
            return None
        try:
            msg = pickle.loads(payload)
        except Exception as e:  # noqa: BLE001 - whatever stray bytes unpickle to, or fail with
            return ("unreadable", f"stray bytes: {type(e).__name__}: {str(e)[:200]}", job)
        if not isinstance(msg, tuple) or not msg or not isinstance(msg[0], str):
            return ("unreadable", f"stray bytes: a message of the wrong shape ({type(msg).__name__})", job)
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
