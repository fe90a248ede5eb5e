"""Where one gate run's time goes: the gate's stages, and each worker's time around its jobs.

    python bench/gate_timeline.py [GATE OPTIONS...]        e.g. --root /tmp/corpus

Runs ``rocke-parity gate`` in this process with timing wrappers around the gate's stages and
around each worker's jobs and messages (a forked worker inherits them; under the ``spawn`` start
method the workers are not measured), then prints:

- each stage's start, end and length, in ms since this script started (the interpreter's own
  start, about 20 ms, comes before it);
- per worker: its jobs, the span from its first job's start to its last job's end, and how the
  span divides into the engines' calls, ``_run_job`` beyond them (hashing, comparing, storing
  texts), sending results, reading batches, and the rest;
- the run's wall time against the engines' seconds over the workers.

The wrappers cost a few microseconds per job. Numbers for notes (docs/performance.md), never for
a timed test."""

from __future__ import annotations

import ast
import os
import shutil
import sys
import tempfile
import time
from multiprocessing import connection
from pathlib import Path

T0 = time.monotonic()
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rocke_py.parity import cli  # noqa: E402
from rocke_py.parity.commands import gating  # noqa: E402
from rocke_py.parity.judge import gate, jobs  # noqa: E402
from rocke_py.parity.run import runner, worker  # noqa: E402

#: the gate's stages: (module, function) wrapped, in the order a run reaches them
STAGES = (
    (gate, "discover"),
    (gate, "load_inputs"),
    (jobs, "job_costs"),
    (runner.Pool, "run"),
    (gate, "judge_all"),
    (gating, "_record"),
)


class StageMarks:
    """(name, start, end) of every wrapped stage call, in this process only."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.marks: list[tuple[str, float, float]] = []

    def wrap(self, owner: object, name: str) -> None:
        inner = getattr(owner, name)
        label = f"{getattr(owner, '__name__', '').rsplit('.', 1)[-1]}.{name}"

        def timed(*args, **kwargs):
            start = time.monotonic()
            try:
                return inner(*args, **kwargs)
            finally:
                if os.getpid() == self.pid:
                    self.marks.append((label, start, time.monotonic()))

        setattr(owner, name, timed)


class WorkerTimes:
    """Each worker's totals, written to ``folder/<pid>`` whenever it waits for its next batch (a
    worker ends without running atexit handlers)."""

    def __init__(self, folder: Path, parent: int) -> None:
        self.folder, self.parent = folder, parent
        self.t = {"jobs": 0, "first": 0.0, "last": 0.0, "job": 0.0, "engines": 0.0}
        self.t.update({"send": 0.0, "sends": 0, "read": 0.0, "reads": 0})

    def install(self) -> None:
        run_job, read_message, send = worker._run_job, worker._read_message, connection.Connection.send
        t = self.t

        def timed_job(engines, phase, job_seq, *args, **kwargs):
            start = time.monotonic()
            out = run_job(engines, phase, job_seq, *args, **kwargs)
            end = time.monotonic()
            t["first"] = t["first"] or start
            t["last"] = end
            t["jobs"] += 1
            t["job"] += end - start
            t["engines"] += sum(r.seconds for r in (*out[1], *out[2]))
            return out

        def timed_read(fd: int):
            self.save()
            start = time.monotonic()
            try:
                return read_message(fd)
            finally:
                if t["jobs"]:  # the wait for the first batch is not in the span
                    t["read"] += time.monotonic() - start
                    t["reads"] += 1

        def timed_send(conn, obj):
            start = time.monotonic()
            try:
                return send(conn, obj)
            finally:
                if os.getpid() != self.parent:
                    t["send"] += time.monotonic() - start
                    t["sends"] += 1

        worker._run_job = timed_job
        worker._read_message = timed_read
        connection.Connection.send = timed_send

    def save(self) -> None:
        if os.getpid() != self.parent and self.t["jobs"]:
            (self.folder / str(os.getpid())).write_text(repr(self.t))

    def load(self) -> dict[int, dict]:
        return {int(p.name): ast.literal_eval(p.read_text()) for p in sorted(self.folder.iterdir())}


def print_stages(marks: list[tuple[str, float, float]], end: float) -> None:
    print(f"{'stage':22} {'start ms':>9} {'end ms':>9} {'took ms':>9}")
    for name, start, stop in marks:
        print(f"{name:22} {(start - T0) * 1e3:9.1f} {(stop - T0) * 1e3:9.1f} {(stop - start) * 1e3:9.1f}")
    print(f"{'(gate returned)':22} {'':9} {(end - T0) * 1e3:9.1f}")


def print_workers(workers: dict[int, dict], wall: float) -> None:
    engines = 0.0
    for pid, t in workers.items():
        span = t["last"] - t["first"]
        beyond = t["job"] - t["engines"]
        rest = span - t["job"] - t["send"] - t["read"]
        engines += t["engines"]
        print(
            f"worker {pid}: {t['jobs']} jobs, span {span:.3f} s = engines {t['engines']:.3f} + _run_job beyond "
            f"them {beyond:.3f} ({beyond / max(1, t['jobs']) * 1e6:.0f} us/job) + sending {t['send']:.3f} "
            f"({t['sends']} messages) + reading {t['read']:.3f} ({t['reads']} batches) + rest {rest:.3f}"
        )
    if workers and engines > 0:
        per = engines / len(workers)
        print(f"wall {wall:.3f} s against the engines' {engines:.3f} s over {len(workers)} workers: {wall / per:.3f}x")


def main() -> int:
    folder = Path(tempfile.mkdtemp(prefix="rocke-timeline-"))
    try:
        stages = StageMarks()
        for owner, name in STAGES:
            stages.wrap(owner, name)
        workers = WorkerTimes(folder, os.getpid())
        workers.install()
        status = cli.main(["gate", *sys.argv[1:]])
        end = time.monotonic()
        print()
        print_stages(stages.marks, end)
        print_workers(workers.load(), end - T0)
        return status
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
