"""The gate's steps, each run on its own with values: no engine, no worker, no GateRun.

``run_gate`` passes each step what the one before returned (``load_inputs`` → ``run_jobs`` →
``judge_all`` → the run-level checks) and makes the run once, at its end. So each step can be
given a hand-made input and its result checked, as here."""

from __future__ import annotations

import dataclasses

import pytest
import standin_tree as pt

from rocke_py.parity.inputs.configs import discover
from rocke_py.parity.inputs.shards import Shard
from rocke_py.parity.judge.checks import (
    Findings,
    check_coverage,
    check_gone_golden,
    check_stale_golden,
    check_unmatched_gaps,
)
from rocke_py.parity.judge.compare import Status
from rocke_py.parity.judge.gate import GateRun, load_inputs
from rocke_py.parity.judge.golden import Coverage, GoldenEntry, Manifest
from rocke_py.parity.judge.jobs import Job, Selection, UsageError, plan_jobs
from rocke_py.parity.judge.known_gaps import KnownGap, KnownGaps
from rocke_py.parity.run.engines import EngineSpec
from rocke_py.parity.run.work import EngineInfo

TREE = {"fwd/00-a": {}, "fwd/01-b": {"standin": {"salt": "b"}}}
ENTRY = GoldenEntry.emitted("0" * 64, 1, "k")


def gap(index: int, config: str, mode: str, flavor: str = "-") -> KnownGap:
    return KnownGap(index, config, mode, flavor, Status.DIFFER, "a reason", (("py_sha256", "0"), ("c_sha256", "1")))


def test_findings_add_up_kind_by_kind_in_the_order_found():
    one = Findings(problems=("p1",), notes=("n1",))
    two = Findings(problems=("p2",), stale_golden=("s2",), notes=("n2",))
    assert one + two == Findings(("p1", "p2"), ("s2",), ("n1", "n2"))
    assert Findings() + one == one


def test_a_known_gap_that_matched_no_job_is_a_run_level_failure():
    gaps = KnownGaps((gap(1, "fwd/00-a", "spec"), gap(2, "fwd/01-b", "ll", "llvm22")), ())
    found = check_unmatched_gaps(gaps, matched={1}, modes=("spec", "ir"), shard=None)
    assert found == Findings(
        problems=(
            "known_gaps.toml entry 2 (fwd/01-b ll llvm22 DIFFER) matches no job of this full run (mode ll is "
            "not run: both engines implement spec, ir): known gap no longer holds: update known_gaps.toml",
        )
    )
    assert check_unmatched_gaps(gaps, matched={1, 2}, modes=("spec", "ir"), shard=None) == Findings()
    # a change's run judges only the gaps of the configs it ran
    assert check_unmatched_gaps(gaps, matched=set(), modes=("spec",), shard=None, only={"fwd/00-a"}).problems == (
        "known_gaps.toml entry 1 (fwd/00-a spec - DIFFER) matches no job of this full run: "
        "known gap no longer holds: update known_gaps.toml",
    )


def test_golden_entries_no_job_of_a_full_run_has_are_stale(tmp_path):
    disc = discover(pt.make_tree(tmp_path, TREE))
    manifest = Manifest(
        {"fwd/00-a": {"spec": ENTRY, "ir": ENTRY}, "fwd/01-b": {"spec": ENTRY}, "fwd/07-gone": {"spec": ENTRY}}
    )
    jobs = [Job("fwd/00-a", "fwd", "spec", "-"), Job("fwd/01-b", "fwd", "spec", "-")]
    assert check_stale_golden(manifest, disc, jobs) == Findings(
        stale_golden=(
            "golden.json has fwd/00-a ir, which the full run does not run: rocke-parity golden --update",
            "golden.json has entries for fwd/07-gone, which no longer exists: rocke-parity golden --update",
        )
    )
    assert check_stale_golden(None, disc, jobs) == Findings()  # golden.json unreadable: a failure already


def test_a_narrowed_run_without_engines_judges_golden_entries_by_the_pinned_modes(tmp_path):
    disc = discover(pt.make_tree(tmp_path, TREE))
    entries = {"fwd/00-a": {"spec": ENTRY, "ll.llvm22": ENTRY}, "fwd/07-gone": {"spec": ENTRY}}
    pinned = Manifest(entries, coverage=Coverage(("spec",), ("llvm22",)))
    assert check_gone_golden(pinned, disc, None).stale_golden == (
        "golden.json has fwd/00-a ll.llvm22, which the full run does not run: rocke-parity golden --update",
        "golden.json has entries for fwd/07-gone, which no longer exists: rocke-parity golden --update",
    )
    # the engines ran: their modes, not the pinned ones
    assert check_gone_golden(pinned, disc, EngineInfo(("spec", "ll"), ("spec", "ll"))).stale_golden == (
        "golden.json has entries for fwd/07-gone, which no longer exists: rocke-parity golden --update",
    )


def test_coverage_a_narrowed_run_cannot_keep_is_a_run_level_failure(tmp_path):
    info = EngineInfo(("spec", "ir"), ("spec", "ir", "ll"))
    sel = Selection(families=("fwd",))  # narrowed: no ratchet, no stale coverage
    manifest = Manifest({}, coverage=Coverage(("spec", "ir", "ll"), ("llvm22", "llvm23", "llvm99")))
    found = check_coverage(sel, info, ("spec", "ir"), ("llvm20", "llvm22"), manifest, tmp_path, ())
    assert found == Findings(
        problems=(
            "coverage: golden.json pins mode ll, but the py engine does not advertise it "
            "(py: spec, ir; c: spec, ir, ll): the gate would cover less than it must",
            "coverage: golden.json pins flavor llvm23, which this harness does not run",
            "coverage: golden.json pins flavor llvm99, which this harness does not run",
        )
    )
    unpinned = Manifest({})
    assert check_coverage(sel, info, ("spec", "ir"), (), unpinned, tmp_path, ()).notes == (
        "golden.json pins no coverage: this run cannot tell whether a mode vanished",
    )
    assert check_coverage(sel, info, ("spec", "ir"), (), None, tmp_path, ()) == Findings()


def test_load_inputs_returns_the_selection_and_the_problems_of_what_it_read(tmp_path):
    root = pt.make_tree(tmp_path, TREE)
    (root / "parity_configs" / "golden.json").write_text("{")
    inputs = load_inputs(root, Selection(configs=("fwd/01-b",)), EngineSpec(), discover(root))
    assert [c.id for c in inputs.configs] == ["fwd/01-b"]
    assert not inputs.golden_ok and inputs.golden is None and inputs.manifest.entries == {}
    assert len(inputs.problems) == 1 and "golden.json" in inputs.problems[0]
    with pytest.raises(UsageError, match="unknown config"):
        load_inputs(root, Selection(configs=("fwd/09-none",)), EngineSpec(), discover(root))


def test_a_plan_holds_every_job_and_a_shard_its_own(tmp_path):
    root = pt.make_tree(tmp_path, TREE)
    configs = discover(root).configs
    plan = plan_jobs(Selection(), configs, ("spec", "ll"), ("llvm20", "llvm22"), root, None)
    assert [j.label() for j in plan.jobs] == [
        f"{c} {m} {f}" for c in TREE for m, f in (("spec", "-"), ("ll", "llvm20"), ("ll", "llvm22"))
    ]
    assert plan.mine == plan.jobs and len(plan.costs) == 6 and plan.shard is None and plan.notes == ()
    third = plan_jobs(Selection(shard=Shard(3, 3)), configs, ("spec",), (), root, None)
    assert third.jobs == plan.jobs[::3] and third.mine == () and third.costs == ()
    assert third.notes == ("shard 3/3 has no job (more shards than configs)",)
    with pytest.raises(UsageError, match="keep no job"):
        plan_jobs(Selection(patterns=("ir",)), configs, ("spec",), (), root, None)


def test_a_gate_run_is_made_once_and_never_changed(tmp_path):
    run = GateRun(tmp_path, Selection(), 1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.notes = ["late"]  # type: ignore[misc]
