"""A worker sends its results in groups (``schedule._GROUP``), not one message per job.

What a group must not change: every job's result arrives, in order; a crash or a hang is the
job that was running (its worker's shared ``seq``), never the first of the jobs whose results
were still unsent; a job's deadline runs from its own start (the worker's shared ``started``),
not from the last result the parent received; with a stop (--maxfail) every result comes alone.
"""

from __future__ import annotations

import pytest

from rocke_py.parity.run import schedule
from rocke_py.parity.run.runner import Pool
from rocke_py.parity.run.work import WorkItem
from tests.standins import standin_tree as pt


def work_for(tmp_path, behaviours: dict[int, dict], n: int = 40) -> list[WorkItem]:
    """``n`` stand-in jobs in one family; ``behaviours``: job index -> its [standin] table."""
    tree = {f"wgrad/{i:03d}-c": {"standin": {"salt": str(i), **behaviours.get(i, {})}} for i in range(n)}
    root = pt.make_tree(tmp_path, tree)
    return [WorkItem(cid, (root / "parity_configs" / f"{cid}.toml").read_bytes(), "spec", "llvm22") for cid in tree]


def counted_messages(monkeypatch) -> list[int]:
    """The size of every group of results the parent receives, as it receives them."""
    sizes: list[int] = []
    recv = Pool._recv

    def spy(w, readable=False):
        msg = recv(w, readable)
        if msg is not None and msg[0] == "results":
            sizes.append(len(msg[1]))
        return msg

    monkeypatch.setattr(Pool, "_recv", staticmethod(spy))
    return sizes


def test_results_come_in_groups_and_all_of_them_in_order(tmp_path, monkeypatch):
    work = work_for(tmp_path, {}, n=160)
    sizes = counted_messages(monkeypatch)
    with Pool(pt.engine_spec(), 1, 10) as pool:
        results = pool.run(work)
    assert [r.item.key for r in results] == [w.key for w in work] and all(r.death is None for r in results)
    assert sum(sizes) == len(work)
    # batches of 40 while the queue is long (a quarter of it): a group of 32, one of 7 (one job
    # left), then the last
    assert max(sizes) == schedule._GROUP and len(sizes) < len(work) / 3, sizes


def test_with_a_stop_every_result_comes_alone(tmp_path, monkeypatch):
    work = work_for(tmp_path, {})
    sizes = counted_messages(monkeypatch)
    with Pool(pt.engine_spec(), 1, 10) as pool:
        results = pool.run(work, stop=lambda res: False)
    assert len(results) == len(work) and set(sizes) == {1}


@pytest.mark.parametrize("fault", ["abort", "hang"])
def test_a_fault_after_unsent_results_is_the_job_that_ran_into_it(tmp_path, fault):
    # one worker, batches of 10: jobs 0-2 finish and wait in the worker's group (it sends at 8
    # results, or with one job of its batch left), then job 3 dies or hangs
    work = work_for(tmp_path, {3: {"c": fault}})
    with Pool(pt.engine_spec(), 1, 2) as pool:
        results = pool.run(work)
    deaths = {r.item.key: r.death for r in results if r.death is not None}
    assert list(deaths) == ["wgrad/003-c"], deaths  # not wgrad/000-c, the first unsent one
    death = deaths["wgrad/003-c"]
    assert death.kind == ("crash" if fault == "abort" else "timeout") and (death.engine, death.run) == ("c", 1)
    assert len(results) == len(work) and all(r.py and r.c for r in results if r.death is None)


def test_a_jobs_deadline_runs_from_its_own_start(tmp_path):
    # jobs 0-2 take 0.3 s each (two py calls of 0.15 s) and stay in the worker's group; job 3
    # starts at 0.9 s and takes 0.8 s: under the 1.2 s limit from its own start, past it from
    # its batch's (a deadline counted from the last result the parent received)
    slow = {i: {"py": "sleep:0.15"} for i in range(3)}
    work = work_for(tmp_path, {**slow, 3: {"py": "sleep:0.4"}})
    with Pool(pt.engine_spec(), 1, 1.2) as pool:
        results = pool.run(work)
    assert [r.death for r in results] == [None] * len(work)
