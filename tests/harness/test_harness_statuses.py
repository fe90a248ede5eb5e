"""One gate run over a synthetic tree whose stand-in engines produce every status; one test per status."""

from __future__ import annotations

import pytest
import standin_tree as pt

from rocke_py.parity.judge.compare import PASSING, Status, passes
from rocke_py.parity.judge.gate import GateRun, run_gate
from rocke_py.parity.judge.verdict import Verdict
from rocke_py.parity.run import runner

TIMEOUT = 1.5
REJ = {"py": "reject:E_X:bad value", "c": "reject:E_X:bad value"}

TREE: dict[str, dict] = {
    "wgrad/00-identical": {},
    "wgrad/01-differ": {"standin": {"c": "alt"}},
    "wgrad/02-reject-code": {"standin": {"py": "reject:E_X:m", "c": "reject:E_Y:m"}},
    "wgrad/03-reject-message": {"standin": {"py": "reject:E_X:one", "c": "reject:E_X:two"}},
    "wgrad/04-py-only": {"standin": {"py": "reject:E_X:m"}},
    "wgrad/05-c-only": {"standin": {"c": "reject:E_X:m"}},
    "wgrad/06-unexpected-reject": {"standin": REJ},
    "wgrad/07-abort": {"standin": {"c": "abort"}},
    "wgrad/08-segv": {"standin": {"c": "segv"}},
    "wgrad/09-hang": {"standin": {"py": "hang"}},
    "wgrad/10-nondet": {"standin": {"c": "nondet"}},
    "wgrad/11-raise": {"standin": {"py": "raise"}},
    "wgrad/12-engine-failure": {"standin": {"c": "failure"}},
    "wgrad/13-drift": {"standin": {"salt": "v2"}},
    "wgrad/14-missing": {},
    "wgrad/15-gap-holds": {"standin": {"c": "alt"}},
    "wgrad/16-gap-now-passes": {"standin": {"salt": "16"}},
    "wgrad/17-gap-fails-differently": {"standin": {"c": "reject:E_X:m"}},
    "wgrad/18-returns-none": {"standin": {"py": "none"}},
    "wgrad/19-exit": {"standin": {"c": "exit"}},
    "wgrad/100-both-rejected": {"expect": "reject:E_X", "standin": REJ},
    "wgrad/101-other-code": {"expect": "reject:E_Y", "standin": REJ},
    "wgrad/102-unexpected-emit": {"expect": "reject:E_X"},
}


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> GateRun:
    root = pt.make_tree(tmp_path_factory.mktemp("statuses"), TREE)
    golden = pt.golden_for(
        root, ["wgrad/00-identical", "wgrad/16-gap-now-passes", "wgrad/100-both-rejected", "wgrad/101-other-code"]
    )
    golden["wgrad/13-drift"] = {"spec": ("0" * 64, 12, "old_name")}
    pt.write_golden(root, golden)
    _, py_sha, _ = pt.standin_output(root, "wgrad/15-gap-holds")
    _, c_sha, _ = pt.standin_output(root, "wgrad/15-gap-holds", side="c")
    pt.write_gaps(
        root,
        [
            {
                "config": "wgrad/15-gap-holds",
                "mode": "spec",
                "flavor": "-",
                "status": "DIFFER",
                "reason": "the C side lags behind in the stand-in",
                "py_sha256": py_sha,
                "c_sha256": c_sha,
            },
            {
                "config": "wgrad/16-gap-now-passes",
                "mode": "spec",
                "flavor": "*",
                "status": "DIFFER",
                "reason": "fixed since",
                "py_sha256": py_sha,
                "c_sha256": c_sha,
            },
            {
                "config": "wgrad/17-gap-fails-differently",
                "mode": "spec",
                "flavor": "*",
                "status": "DIFFER",
                "reason": "fails another way now",
                "py_sha256": py_sha,
                "c_sha256": c_sha,
            },
        ],
    )
    return run_gate(root, engines=pt.engine_spec(), workers=2, timeout=TIMEOUT)


def verdict(run: GateRun, cid: str) -> Verdict:
    (v,) = [v for v in run.verdicts if v.job.config == cid]
    return v


def test_every_config_ran_once_and_the_run_fails(run):
    assert sorted(v.job.config for v in run.verdicts) == sorted(TREE)
    assert not run.problems and not run.stale_golden
    assert not run.passed
    assert all(v.job.mode == "spec" and v.job.flavor == "-" for v in run.verdicts)


# The verdicts that are one status, pass or fail, and words the reason must name: one row per
# config of the tree, the config's name saying what it does.
VERDICTS = {
    "wgrad/00-identical": (Status.IDENTICAL, True, ()),
    "wgrad/01-differ": (Status.DIFFER, False, ("line 5",)),
    "wgrad/02-reject-code": (Status.REJECT_MISMATCH, False, ("E_X", "E_Y")),
    "wgrad/03-reject-message": (Status.REJECT_MISMATCH, False, ("messages differ",)),
    "wgrad/04-py-only": (Status.PY_ONLY_REJECTED, False, ()),
    "wgrad/05-c-only": (Status.C_ONLY_REJECTED, False, ()),
    "wgrad/06-unexpected-reject": (Status.UNEXPECTED_REJECT, False, ("expected emit",)),  # emit was expected
    "wgrad/101-other-code": (Status.UNEXPECTED_REJECT, False, ("reject:E_Y",)),
    "wgrad/102-unexpected-emit": (Status.UNEXPECTED_EMIT, False, ()),
    "wgrad/10-nondet": (Status.NONDETERMINISTIC, False, ("c engine",)),
    "wgrad/11-raise": (Status.CRASH, False, ()),  # an exception is a crash
    "wgrad/12-engine-failure": (Status.BUILD_FAILURE, False, ("EngineFailure", "the c engine failed after validating")),
    "wgrad/18-returns-none": (Status.CRASH, False, ()),  # so is a bad return value
    "wgrad/13-drift": (Status.GOLDEN_DRIFT, False, ("renumbering-only: unknown",)),
    "wgrad/14-missing": (Status.GOLDEN_MISSING, False, ()),
    # a known gap no longer holding, because the config passes or because it fails another way
    "wgrad/16-gap-now-passes": (Status.IDENTICAL, False, ("known gap no longer holds", "update known_gaps.toml")),
    "wgrad/17-gap-fails-differently": (Status.C_ONLY_REJECTED, False, ("no longer holds",)),
}


@pytest.mark.parametrize("cid", VERDICTS)
def test_verdict(run, cid: str):
    status, passed, words = VERDICTS[cid]
    v = verdict(run, cid)
    assert v.status is status and v.passed == passed, v
    for word in words:
        assert word in v.reason, v.reason


def test_both_rejected(run):
    v = verdict(run, "wgrad/100-both-rejected")
    assert v.status is Status.BOTH_REJECTED and v.passed
    assert v.result.py[0].code == v.result.c[0].code == "E_X"


def test_crash_real_abort(run):
    v = verdict(run, "wgrad/07-abort")
    assert v.status is Status.CRASH and not v.passed
    d = v.result.death
    assert d is not None and d.signal_name == "SIGABRT" and d.engine == "c" and d.run == 1
    assert "SIGABRT" in v.reason


def test_crash_real_sigsegv(run):
    v = verdict(run, "wgrad/08-segv")
    assert v.status is Status.CRASH
    d = v.result.death
    assert d is not None and d.signal_name == "SIGSEGV" and d.exitcode == -11 and d.engine == "c"
    assert "string_at" in d.detail  # the faulthandler dump of the dead worker


def test_timeout(run):
    v = verdict(run, "wgrad/09-hang")
    assert v.status is Status.TIMEOUT and not v.passed
    assert v.result.death is not None and v.result.death.engine == "py"


def test_exit_is_a_crash(run):
    v = verdict(run, "wgrad/19-exit")
    assert v.status is Status.CRASH and v.result.death is not None and v.result.death.exitcode == 7


def test_known_gap_holding(run):
    v = verdict(run, "wgrad/15-gap-holds")
    assert v.status is Status.KNOWN_GAP and v.passed and v.gap_holds
    assert run.known_gaps == [v]


def test_pass_rule_is_an_allow_list():
    assert PASSING == {"IDENTICAL", "BOTH_REJECTED", "KNOWN_GAP"}
    for s in Status:
        assert passes(s) == (s.value in PASSING)
    assert not passes("SOMETHING_NEW")
    assert not passes(None)


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_pool_survives_crashes_and_later_jobs_run(tmp_path, monkeypatch, method):
    # both ways of starting a worker isolate a crash (the gate forks where it can, see start_method)
    monkeypatch.setattr(runner, "start_method", lambda: method)
    root = pt.make_tree(
        tmp_path,
        {
            "fwd/00-abort": {"standin": {"py": "abort"}},
            "fwd/01-segv": {"standin": {"c": "segv"}},
            "fwd/02-ok": {},
            "fwd/03-exit": {"standin": {"py": "exit"}},
            "fwd/04-ok": {"standin": {"salt": "4"}},
        },
    )
    pt.write_golden(root, pt.golden_for(root, ["fwd/02-ok", "fwd/04-ok"]))
    run = run_gate(root, engines=pt.engine_spec(), workers=1, timeout=10)
    got = {v.job.config: v.status for v in run.verdicts}
    assert got == {
        "fwd/00-abort": Status.CRASH,
        "fwd/01-segv": Status.CRASH,
        "fwd/02-ok": Status.IDENTICAL,
        "fwd/03-exit": Status.CRASH,
        "fwd/04-ok": Status.IDENTICAL,
    }
    assert any("replaced" in n for n in run.notes)


def test_workers_are_forked_from_a_single_threaded_parent_on_linux():
    import subprocess
    import sys

    code = (
        "import threading; from rocke_py.parity.run.processes import start_method; a = start_method(); "
        "t = threading.Thread(target=threading.Event().wait, args=(5,), daemon=True); t.start(); "
        "print(a, start_method())"
    )
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    want = "fork spawn" if sys.platform.startswith("linux") else "spawn spawn"
    assert got.stdout.split() == want.split(), got.stderr


def test_ll_runs_once_per_flavor_and_spec_once(tmp_path):
    root = pt.make_tree(tmp_path, {"dgrad/00-a": {"standin": {"c_ll_llvm20": "alt"}}})
    run = run_gate(root, engines=pt.engine_spec("all_modes"), workers=2, timeout=10)
    jobs = sorted((v.job.mode, v.job.flavor, v.status.value) for v in run.verdicts)
    assert jobs == [
        ("ir", "-", "GOLDEN_MISSING"),
        ("ll", "llvm20", "DIFFER"),
        ("ll", "llvm22", "GOLDEN_MISSING"),
        ("ll", "llvm23", "GOLDEN_MISSING"),
        ("spec", "-", "GOLDEN_MISSING"),
    ]
    assert {v.kernel_name for v in run.verdicts} == {verdict_name(run)}


def verdict_name(run: GateRun) -> str:
    (spec,) = [v for v in run.verdicts if v.job.mode == "spec"]
    assert spec.kernel_name.startswith("standin_")
    return spec.kernel_name
