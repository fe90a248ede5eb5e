"""The developer loop: -k, globs in --config, --last-failed, --failed-first, --maxfail / -x, and
failures grouped by cause."""

from __future__ import annotations

import json

import pytest
import standin_tree as pt

from rocke_py.parity.judge.gate import run_gate
from rocke_py.parity.judge.jobs import Selection
from rocke_py.parity.report.report import job_record
from rocke_py.parity.report.terminal import record_groups

TREE = {
    "wgrad/00-ok": {},
    "wgrad/01-ll-differs": {"standin": {"c_ll": "alt"}},
    "wgrad/02-ok": {"standin": {"salt": "2"}},
    "fwd/00-ok": {"standin": {"salt": "f"}},
}


@pytest.fixture
def tree(tmp_path):
    root = pt.make_tree(tmp_path, TREE)
    keys = ("spec", "ir", "ll.llvm20", "ll.llvm22", "ll.llvm23")
    pt.write_golden(root, pt.golden_for(root, sorted(TREE), keys), modes=("spec", "ir", "ll"))
    return root


def gate(root, *args: str):
    done = pt.run_cli(root, "gate", "--json", "-", *args, modes="all_modes")
    doc = json.loads(done.stdout) if done.stdout.startswith("{") else None
    return done, doc


def jobs_of(doc) -> set[tuple[str, str, str]]:
    return {(r["config"], r["mode"], r["flavor"]) for r in doc["jobs"]}


def test_k_substring_and_glob_select_jobs(tree):
    done, doc = gate(tree, "-k", "01-ll")
    assert jobs_of(doc) == {("wgrad/01-ll-differs", m, f) for m, f in pt_jobs()}
    done, doc = gate(tree, "-k", "*ll.llvm2[02]")
    assert jobs_of(doc) == {(c, "ll", f) for c in TREE for f in ("llvm20", "llvm22")}
    assert "partial run" in done.stderr and "-k *ll.llvm2[02]" in done.stderr


def pt_jobs():
    return [("spec", "-"), ("ir", "-"), ("ll", "llvm20"), ("ll", "llvm22"), ("ll", "llvm23")]


def test_a_k_that_keeps_nothing_is_a_usage_error(tree):
    done, _ = gate(tree, "-k", "no-such-job")
    assert done.returncode == 2 and "keep no job" in done.stderr


def test_globs_in_config(tree):
    _, doc = gate(tree, "--config", "wgrad/0[02]-*", "--mode", "spec")
    assert jobs_of(doc) == {("wgrad/00-ok", "spec", "-"), ("wgrad/02-ok", "spec", "-")}
    done, _ = gate(tree, "--config", "dgrad/*")
    assert done.returncode == 2 and "unknown config 'dgrad/*'" in done.stderr


def test_last_failed_runs_only_what_failed_and_everything_when_nothing_did(tree):
    first, _ = gate(tree)
    assert first.returncode == 1
    done, doc = gate(tree, "--lf")
    assert jobs_of(doc) == {("wgrad/01-ll-differs", "ll", f) for f in ("llvm20", "llvm22", "llvm23")}
    assert done.returncode == 1
    (tree / "parity_configs" / "wgrad" / "01-ll-differs.toml").write_text(pt.config_text())
    pt.write_golden(
        tree,
        pt.golden_for(tree, sorted(TREE), ("spec", "ir", "ll.llvm20", "ll.llvm22", "ll.llvm23")),
        modes=("spec", "ir", "ll"),
    )
    fixed, doc = gate(tree, "--lf")  # the failures are fixed: they pass, and are no longer "last failed"
    assert fixed.returncode == 0 and len(doc["jobs"]) == 3
    again, doc = gate(tree, "--lf")
    assert "no job failed in the last run" in again.stderr and len(doc["jobs"]) == 20


def test_failed_first_hands_out_the_failures_first(tree):
    class Order:
        def __init__(self):
            self.labels: list[str] = []

        def start(self, total: int) -> None:
            pass

        def advance(self, label: str) -> None:
            self.labels.append(label)

        def close(self) -> None:
            pass

    first = {("fwd/00-ok", "spec"), ("wgrad/02-ok", "ir")}
    seen = Order()
    run_gate(tree, Selection(), pt.engine_spec("all_modes"), 1, 10, seen, failed_first=frozenset(first))
    assert set(seen.labels[:2]) == {"fwd/00-ok spec -", "wgrad/02-ok ir -"}
    assert len(seen.labels) == 20


def groups_of(failures) -> list[list[dict]]:
    """The failures grouped the way every report groups them (from their JSON records)."""
    return record_groups([job_record(v) for v in failures])


def test_maxfail_stops_a_crash_storm_early_and_it_is_one_group(tmp_path):
    tree = {f"wgrad/0{i}-storm": {"standin": {"c": "abort"}} for i in range(6)}
    tree["wgrad/07-ok"] = {}
    root = pt.make_tree(tmp_path, tree)
    pt.write_golden(root, pt.golden_for(root, ["wgrad/07-ok"]))
    run = run_gate(root, engines=pt.engine_spec(), workers=1, timeout=10, maxfail=2)
    assert len(run.failures) == 2 and run.not_run == 7 - len(run.verdicts) > 0
    assert not run.passed and run.partial and f"--maxfail: {run.not_run} job(s) not run" in run.partial_note()
    (group,) = groups_of(run.failures)
    assert len(group) == 2
    done = pt.run_cli(root, "gate", "-x")
    assert done.returncode == 1
    assert done.stdout.count("FAIL CRASH") == 1 and "not run" in done.stdout


def test_one_cause_is_one_failure_line_naming_every_job(tmp_path):
    root = pt.make_tree(
        tmp_path, {"wgrad/00-a": {"standin": {"c_ll": "alt"}}, "wgrad/01-b": {"standin": {"c": "tail"}}}
    )
    done = pt.run_cli(root, "gate", modes="all_modes")
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith(("FAIL", "    +"))]
    differ = [ln for ln in lines if ln.startswith("FAIL DIFFER")]
    # 00-a: one changed line in three ll jobs; 01-b: the same extra line at the end of every
    # mode's output: two causes, two lines
    assert len(differ) == 2, done.stdout
    assert any(ln.startswith("    + 2 more job(s) with the same cause") and "wgrad/00-a ll.llvm2" in ln for ln in lines)
    assert any(ln.startswith("    + 4 more job(s) with the same cause") and "wgrad/01-b ll.llvm2" in ln for ln in lines)


def test_without_grouping_a_changed_token_would_print_a_line_per_job(tmp_path):
    # the fault the grouping guards against: every failure printed, so one cause drowns the rest
    root = pt.make_tree(tmp_path, {"wgrad/00-a": {"standin": {"c_ll": "alt"}}})
    run = run_gate(root, engines=pt.engine_spec("all_modes"), workers=1, timeout=10)
    differ = [v for v in run.failures if v.status.value == "DIFFER"]
    assert len(differ) == 3 and len(groups_of(differ)) == 1
