"""Scheduling: each job's cost is recorded, and the next run hands out the costliest jobs first."""

from __future__ import annotations

from collections import deque
from types import SimpleNamespace

import pytest
import standin_tree as pt

from rocke_py.parity.judge import lastrun
from rocke_py.parity.judge.gate import run_gate
from rocke_py.parity.judge.jobs import costliest_first, job_costs
from rocke_py.parity.run.runner import Pool
from rocke_py.parity.run.schedule import _GROUP, _GUARD_JOBS, Schedule, batch_size
from rocke_py.parity.run.work import EngineLoadError, WorkItem

TREE = {f"fwd/0{i}-c{i}": {"standin": {"salt": str(i)}} for i in range(4)}


def items(root) -> list[WorkItem[str]]:
    return [
        WorkItem(cid, (root / "parity_configs" / f"{cid}.toml").read_bytes(), "spec", "llvm22") for cid in sorted(TREE)
    ]


def test_results_keep_item_order_and_work_goes_out_in_the_given_order(tmp_path):
    root = pt.make_tree(tmp_path, TREE)
    work = items(root)
    seen: list[str] = []
    with Pool(pt.engine_spec(), 1, 10) as pool:
        results = pool.run(work, lambda r: seen.append(r.item.key), order=[2, 0, 3, 1])
    assert [r.item.key for r in results] == sorted(TREE)
    assert seen == [work[i].key for i in (2, 0, 3, 1)]  # one worker: finished in the order handed out
    assert all(r.seconds > 0 for r in results)


def test_an_order_that_is_not_a_permutation_is_refused(tmp_path):
    root = pt.make_tree(tmp_path, TREE)
    with Pool(pt.engine_spec(), 1, 10) as pool:
        with pytest.raises(ValueError, match="permutation"):
            pool.run(items(root), order=[0, 0, 1, 2])


def test_costliest_first_is_stable():
    assert costliest_first([1.0, 3.0, 1.0, 2.0]) == [1, 3, 0, 2]


def test_the_gate_records_seconds_and_the_next_run_uses_them(tmp_path):
    root = pt.make_tree(tmp_path, TREE)
    pt.write_golden(root, pt.golden_for(root, sorted(TREE)))
    first = run_gate(root, engines=pt.engine_spec(), workers=1, timeout=10)
    lastrun.record(root, first.verdicts, {c.id: c.sha256 for c in first.configs})
    recorded = lastrun.job_seconds(lastrun.load(root))
    assert set(recorded) == {(cid, "spec") for cid in TREE}
    jobs = [v.job for v in first.verdicts]
    assert job_costs(root, first.manifest, jobs) == [recorded[(j.config, j.key)] for j in jobs]


def verdict(cid: str, key: str, seconds: float) -> SimpleNamespace:
    job = SimpleNamespace(config=cid, key=key)
    return SimpleNamespace(
        job=job, status=SimpleNamespace(value="IDENTICAL"), passed=True, result=SimpleNamespace(seconds=seconds)
    )


def test_recorded_seconds_average_the_runs_since_the_config_last_changed(tmp_path):
    shas = {"fwd/00-a": "1", "fwd/01-b": "2"}

    def recorded():
        return lastrun.job_seconds(lastrun.load(tmp_path))

    lastrun.record(tmp_path, [verdict("fwd/00-a", "spec", 0.3), verdict("fwd/01-b", "spec", 0.3)], shas)
    assert recorded() == {("fwd/00-a", "spec"): 0.3, ("fwd/01-b", "spec"): 0.3}  # nothing recorded: this run's
    # a busy machine's run moves the cost a third of the way; an edited config starts again
    lastrun.record(
        tmp_path, [verdict("fwd/00-a", "spec", 0.9), verdict("fwd/01-b", "spec", 0.9)], {**shas, "fwd/01-b": "3"}
    )
    assert recorded() == {("fwd/00-a", "spec"): pytest.approx(0.5), ("fwd/01-b", "spec"): 0.9}
    own = {c: e["jobs"]["spec"]["run_seconds"] for c, e in lastrun.load(tmp_path).items()}
    assert own == {"fwd/00-a": 0.9, "fwd/01-b": 0.9}  # each run's own seconds, for a benchmark
    # a shard keeps the costs (its siblings partition with them); a crashed job's seconds are not kept
    lastrun.record(tmp_path, [verdict("fwd/00-a", "spec", 5.0)], shas, keep_seconds=True)
    lastrun.record(tmp_path, [verdict("fwd/01-b", "spec", 0.0)], {**shas, "fwd/01-b": "3"})
    assert recorded() == {("fwd/00-a", "spec"): pytest.approx(0.5)}


def test_without_a_record_the_golden_size_is_the_cost(tmp_path):
    root = pt.make_tree(tmp_path, TREE)
    golden = pt.golden_for(root, sorted(TREE))
    sizes = {cid: 100 * (i + 1) for i, cid in enumerate(sorted(TREE))}
    for cid, entry in golden.items():
        sha, _, name = entry["spec"]
        entry["spec"] = (sha, sizes[cid], name)
    pt.write_golden(root, golden)
    run = run_gate(root, engines=pt.engine_spec(), workers=1, timeout=10)  # judged against other sizes: fails
    jobs = [v.job for v in run.verdicts]
    costs = job_costs(root, run.manifest, jobs)
    assert [jobs[i].config for i in costliest_first(costs)] == sorted(TREE, reverse=True)


def test_batch_sizes_shrink_to_one_at_the_end():
    assert batch_size(1000, 2) == 64 and batch_size(100, 2) == 12 and batch_size(40, 2) == 5
    assert batch_size(3, 2) == 1 and batch_size(0, 1) == 1


@pytest.mark.parametrize("fault", ["abort", "hang"])
def test_a_crash_or_hang_inside_a_batch_costs_only_its_job(tmp_path, fault):
    # one worker, 40 jobs in batches of several; the fault's config has no salt, so its golden
    # output is the smallest and its job goes out last (the costliest go first): this test checks
    # the jobs around it; a fault after jobs whose results the worker had not sent yet is
    # test_result_groups.test_a_fault_after_unsent_results_is_the_job_that_ran_into_it
    tree = {f"wgrad/{i:02d}-c": {"standin": {"salt": f"{i:02d}"}} for i in range(40)}
    tree["wgrad/18-c"] = {"standin": {"c": fault}}
    root = pt.make_tree(tmp_path, tree)
    pt.write_golden(root, pt.golden_for(root, sorted(tree)))
    run = run_gate(root, engines=pt.engine_spec(), workers=1, timeout=3)
    got = {v.job.config: v.status.value for v in run.verdicts}
    assert len(got) == 40
    assert got.pop("wgrad/18-c") == ("CRASH" if fault == "abort" else "TIMEOUT")
    assert set(got.values()) == {"IDENTICAL"}
    (bad,) = run.failures
    assert bad.result.death is not None and bad.result.death.engine == "c"


def test_released_workers_exit_on_their_own_and_the_pool_runs_nothing_more(tmp_path):
    import time

    root = pt.make_tree(tmp_path, TREE)
    with Pool(pt.engine_spec(), 2, 10) as pool:
        assert len(pool.run(items(root))) == len(TREE)
        procs = [w.proc for w in pool._workers]
        pool.release()
        deadline = time.monotonic() + 10
        while any(p.is_alive() for p in procs) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not any(p.is_alive() for p in procs) and all(p.exitcode == 0 for p in procs)  # exited, not killed
        with pytest.raises(RuntimeError, match="after Pool.release"):
            pool.run(items(root))


def test_a_batch_is_bounded_by_its_cost_so_the_costliest_jobs_spread_over_the_workers(tmp_path, monkeypatch):
    # costliest first in batches of 16 by count: one worker's first batch held the 16 costliest
    # jobs, and the other worker ran out of work while it was still at them
    many = {f"fwd/{i:02d}-c{i}": {"standin": {"salt": str(i)}} for i in range(64)}
    root = pt.make_tree(tmp_path, many)
    work = [
        WorkItem(cid, (root / "parity_configs" / f"{cid}.toml").read_bytes(), "spec", "llvm22") for cid in sorted(many)
    ]
    costs = [10.0] * 8 + [0.1] * 56  # eight jobs hold almost all of the cost
    sizes: list[int] = []
    with Pool(pt.engine_spec(), 2, 10) as pool:
        for worker in pool._workers:
            post = worker.post

            def spy(msg, post=post):
                if msg:  # (results per group, jobs)
                    sizes.append(len(msg[1]))
                return post(msg)

            monkeypatch.setattr(worker, "post", spy)
        assert len(pool.run(work, costs=costs)) == len(work)
    assert sizes[:8] == [1] * 8  # each costly job alone: a 1/(4 x 2) share of what is left
    assert max(sizes) > 1  # the cheap ones still go out in batches


def test_a_worker_gets_its_next_batch_while_it_runs_the_last_job_of_its_batch(tmp_path):
    many = {f"fwd/{i:02d}-c{i}": {"standin": {"salt": str(i)}} for i in range(64)}
    root = pt.make_tree(tmp_path, many)
    work = [
        WorkItem(cid, (root / "parity_configs" / f"{cid}.toml").read_bytes(), "spec", "llvm22") for cid in sorted(many)
    ]
    with Pool(pt.engine_spec(), 1, 10) as pool:
        results = pool.run(work)
        # every batch but the first went out before the worker asked: it never waited for the parent
        assert pool.prefetched >= 3
    assert [r.item.key for r in results] == sorted(many) and all(r.py and r.c for r in results)


BIG_RUN = """
import sys
from rocke_py.engine.result import Emitted
from rocke_py.parity.run.engines import EngineSpec
from rocke_py.parity.run.runner import Pool
from rocke_py.parity.run.work import WorkItem


def emit(config, mode, flavor):
    return Emitted("x" * (2 << 20) + str(len(config)))


def implemented_modes():
    return ("spec",)


if __name__ == "__main__":
    spec = EngineSpec(f"{__file__}:emit", f"{__file__}:emit")
    work = [WorkItem(i, bytes([65 + i % 26]) * (900 << 10), "spec", "llvm22") for i in range(48)]
    with Pool(spec, 1, 60) as pool:
        results = pool.run(work)
    assert [r.item.key for r in results] == list(range(48)), "out of order"
    assert all(r.py_text is not None and len(r.py_text) > 2 << 20 for r in results), "a text is missing"
    print("prefetched", pool.prefetched)
"""


def test_large_batches_and_large_results_never_wait_for_each_other(tmp_path):
    # a worker sending a 2 MiB result while the parent sends it a batch of 900 KiB configs: each
    # side's send fills the socket, and a parent that waited for its send to finish before it read
    # again would wait for ever (the fuzz step of .ci/run hung so once). In a child process, so
    # that a hang fails the test instead of hanging it
    import subprocess
    import sys

    script = tmp_path / "big_run.py"
    script.write_text(BIG_RUN)
    try:
        done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    except subprocess.TimeoutExpired:
        pytest.fail("the pool hung: the parent and its worker each waited for the other to read")
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.split()[-1]) >= 1  # batches did go to a busy worker


def test_after_a_stop_a_lost_workers_unrun_jobs_are_dropped_too(tmp_path):
    # one worker, 40 jobs that each kill it: the first batch holds 10; the stop comes with the
    # first crash, and the other 9 of that batch must not be handed out again (--maxfail on a
    # crash storm ends early), nor may any batch go out ahead of the stop
    storm = {f"wgrad/{i:02d}-storm": {"standin": {"c": "abort"}} for i in range(40)}
    root = pt.make_tree(tmp_path, storm)
    work = [
        WorkItem(cid, (root / "parity_configs" / f"{cid}.toml").read_bytes(), "spec", "llvm22") for cid in sorted(storm)
    ]
    with Pool(pt.engine_spec(), 1, 10) as pool:
        results = pool.run(work, stop=lambda res: True)
        assert pool.prefetched == 0
    assert len(results) == 1 and results[0].death is not None


# ------------------------------------------------------------ the schedule's steps, on their own


class FakeWorker:
    """A worker as the schedule sees it, without a process: what it was sent, whether it was
    killed; it runs ``seq.value`` (a job of its batch) in the C engine's first run."""

    def __init__(self, ready: bool = True) -> None:
        self.alive, self.ready, self.out, self.posted = True, ready, bytearray(), 0.0
        self.batch: deque[int] = deque()
        self.seq = SimpleNamespace(value=-1)
        self.sent: list[tuple] = []

    def post(self, msg):
        self.sent.append(msg)

    def kill(self):
        self.alive = False

    def running(self):
        return self.seq.value if self.seq.value in self.batch else (self.batch[0] if self.batch else None)

    def where(self):
        return ("c", 1)

    def stage(self, engine):
        return "ll llvm22 lower_kernel" if engine == "c" else ""

    def fault_dump(self):
        return "Fatal Python error: Segmentation fault"

    def output_notes(self, engine):
        return ()

    def exitcode(self):
        return -11

    def load_error(self):
        return EngineLoadError("a worker died while loading the engines")


def schedule(n: int, workers: int = 1, costs=None, stop=None) -> tuple[Schedule, list[FakeWorker]]:
    """A schedule of ``n`` jobs over ``workers`` fake workers; a replacement joins the list unready."""
    pool = [FakeWorker() for _ in range(workers)]

    def spawn():
        pool.append(FakeWorker(ready=False))
        return pool[-1]

    work = [WorkItem(i, bytes([i]), "spec", "llvm22") for i in range(n)]
    return Schedule(work, pool, spawn, costs=costs, stop=stop), pool


def result(job: int) -> tuple:
    return (job, (), (), "text", None, True, (), None)


def test_hand_out_sends_a_batch_by_count_to_each_idle_worker():
    sched, (a, b) = schedule(64, workers=2)
    sched.hand_out()
    assert list(a.batch) == list(range(8)) and list(b.batch) == list(range(8, 15))  # 64 // 8, then 56 // 8
    assert a.sent == [(_GROUP, [(i, bytes([i]), "spec", "llvm22", "") for i in range(8)], False)]
    sched.hand_out()
    assert len(a.sent) == 1  # busy with more than its last job: nothing more yet


def test_hand_out_bounds_a_batch_by_its_share_of_the_cost_left():
    # eight costly jobs first: each goes out alone (10 of a budget of 81.6 / (4 x 2) = 10.2)
    costs = [10.0] * 8 + [0.1] * 56
    sched, (a, b) = schedule(64, workers=2, costs=costs)
    sched.hand_out()
    assert list(a.batch) == [0] and list(b.batch) == [1]
    assert sched.left == pytest.approx(sum(costs) - 20.0)
    # with even costs the count binds first, as without costs
    sched, (a, b) = schedule(64, workers=2, costs=[1.0] * 64)
    sched.hand_out()
    assert (len(a.batch), len(b.batch)) == (8, 7)


def test_on_death_crashes_the_running_job_and_requeues_the_rest_of_its_batch():
    sched, pool = schedule(16)
    (w,) = pool
    sched.hand_out()
    assert list(w.batch) == [0, 1, 2, 3]
    sched.on_results(w, ("results", [result(0)]))
    w.seq.value = 2  # job 1 ran too, but its result was not sent before the worker died in job 2
    sched.on_death(w)
    crash = sched.results[2]
    assert crash is not None and crash.death is not None
    assert (crash.death.kind, crash.death.engine, crash.death.exitcode) == ("crash", "c", -11)
    assert crash.death.stage == "ll llvm22 lower_kernel"
    assert sched.results[0] is not None and sched.results[0].death is None and sched.results[1] is None
    assert list(sched.pending)[:3] == [1, 3, 4]  # the rest of its batch first, then the queue
    assert len(sched.pending) == 16 - 2 and sched.done == 2
    assert not w.alive and w not in pool and len(pool) == 1 and sched.replaced == 1
    assert sched.guard_left == _GUARD_JOBS  # the next jobs go out guarded


def test_on_timeout_is_the_running_jobs_timeout_and_the_rest_runs_again():
    sched, pool = schedule(16)
    (w,) = pool
    sched.hand_out()
    w.seq.value = 1
    sched.on_timeout(w)
    late = sched.results[1]
    assert late is not None and late.death is not None and late.death.kind == "timeout"
    assert list(sched.pending)[:3] == [0, 2, 3] and sched.done == 1
    assert not w.alive and w not in pool and sched.replaced == 1
    assert sched.guard_left == 0  # a hang is no crash: no guarded batches


def test_stray_bytes_are_a_crash_of_the_running_job_without_guarded_batches():
    sched, pool = schedule(16)
    (w,) = pool
    sched.hand_out()
    sched.on_results(w, ("results", [result(3)]))  # job 0's result was due
    bad = sched.results[0]
    assert bad is not None and bad.death is not None and "job 0's was due" in bad.death.unread
    assert list(sched.pending)[:3] == [1, 2, 3] and not w.alive and sched.guard_left == 0


def test_after_the_stop_a_dead_workers_batch_is_dropped():
    sched, pool = schedule(16, stop=lambda res: True)
    (w,) = pool
    sched.hand_out()
    w.seq.value = 0
    sched.on_death(w)
    assert sched.stopped and sched.finished and not sched.pending
    assert [r is not None for r in sched.results].count(True) == 1
