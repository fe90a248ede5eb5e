"""The pool's scheduler: which worker gets which jobs, and what an event of a worker does to the run.

One :class:`Schedule` is one :meth:`Pool.run <rocke_py.parity.run.runner.Pool.run>`. The pool's
loop waits for a worker to be ready, hands the event to one step, hands out work, and repeats:

- :meth:`Schedule.hand_out`: each worker that can take work gets its next batch. The batching
  policy lives here, in :meth:`Schedule.next_batch`: up to 64 jobs while the queue is long, one
  at the end (:func:`batch_size`), and with costs at most a 1/(4 x workers) share of the cost
  still to hand out, so that the costliest jobs, handed out first, do not go out together. A
  batch goes to an idle worker and to one running the last job of its batch (``_AHEAD``), so
  that a worker never waits for the parent between two cheap jobs.
- :meth:`Schedule.on_results`: a worker's results arrived, in the order of its batch.
- :meth:`Schedule.on_death`: a worker died. Its current job is a CRASH; the rest of its batch
  (the jobs whose results it had not sent yet among them) goes back to the front of the queue;
  a replacement starts. After a crash the next ``_GUARD_JOBS`` jobs go out guarded.
- :meth:`Schedule.on_timeout`: a job overran: its worker is killed, the job is a TIMEOUT, and
  the worker is replaced as after a crash.
- :meth:`Schedule.on_retire`: a worker past its memory limit finished its batch and exited.

The steps never wait. They act on the pool's list of workers, and start a replacement with
``spawn``; a worker is whatever has the members of :class:`Worker`.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Callable, Generic, Protocol, Sequence

from rocke_py.parity.run.work import Death, EngineLoadError, JobResult, K, TextStore, WorkItem

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
#: after a crash, the next this many jobs go out in guarded batches: each job runs in a fork of
#: its worker, so that another crash costs a fork (milliseconds), not a new worker loading the
#: engines (a fifth of a second; a crash on every call took 281 s against a clean 7 s)
_GUARD_JOBS = 64
_MAX_STARTUP_DEATHS = 3  # replacement workers that may die while loading the engines before the run gives up


def batch_size(pending: int, workers: int) -> int:
    """Jobs handed to an idle worker at once: up to 64 while the queue is long, one at the end."""
    return max(1, min(_MAX_BATCH, pending // (4 * max(1, workers))))


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
        if msg[0] == "unreadable" and len(msg) > 1:
            self.on_unreadable(w, str(msg[1])[:300], msg[2] if len(msg) > 2 else None)
            return
        problem = _bad_results(msg, w.batch)
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

    def on_unreadable(self, w: Worker, why: str, came_with: object = None) -> None:
        """Stray bytes in the worker's pipe: the job it ran when they came (``came_with``, else
        the one it runs) is a CRASH saying so, and the worker (whose later messages cannot be
        trusted) is replaced, as after a crash."""
        running = w.running()
        known = isinstance(came_with, int) and not isinstance(came_with, bool) and came_with in w.batch
        job = came_with if known else running
        where = w.where() if job == running else ("?", 0)
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


def _bad_results(msg: tuple, batch: deque[int]) -> str:
    """What makes a message no results of the worker's batch, in order ('' when it is one)."""
    entries = msg[1] if msg[0] == "results" and len(msg) == 2 else None
    if not isinstance(entries, list) or not entries or len(entries) > len(batch):
        return f"stray bytes: a {msg[0][:40]!r} message where the results of its batch were due"
    for entry, job in zip(entries, batch):
        if not isinstance(entry, tuple) or len(entry) != 8 or entry[0] != job:
            return f"stray bytes: a result of the wrong shape or job where job {job}'s was due"
    return ""
