"""The gate over every shipped config, one test per job (config, mode, flavor), in-process.
A test's id is the job's label as the gate prints it (`wgrad/11-kouter-cshuffle ll llvm22`), so
a failing test pastes into `rocke-parity gate -k '...'`.

Each test runs both engines twice on the config's raw bytes (the first run is this worker's
kept result of the job, tests/support/engine_memo.py, which other modules share; the second is
fresh, so a kept result that a new run does not repeat fails here), classifies the job with the
harness's own rule (rocke_py.parity.judge.compare) and checks an identical output against the
golden manifest — so a failure names its config and says which status the gate would give."""

from __future__ import annotations

import hashlib

import engine_memo
import pytest
from layout import REPO

from rocke_py import cbridge
from rocke_py import engine as py_engine
from rocke_py.facts import FLAVORLESS_MODES, FLAVORS
from rocke_py.parity.cli import main
from rocke_py.parity.inputs.configs import discover
from rocke_py.parity.judge import golden, known_gaps
from rocke_py.parity.judge.compare import Status, classify
from rocke_py.parity.judge.jobs import Job
from rocke_py.parity.run.engines import FLAVORLESS_CALL_FLAVOR, NO_FLAVOR, call_engine
from rocke_py.parity.run.work import JobResult

DISCOVERY = discover(REPO)
CONFIGS = {c.id: c for c in DISCOVERY.configs}
MODES = tuple(m for m in py_engine.implemented_modes() if m in cbridge.implemented_modes())
MANIFEST = golden.load(golden.golden_path(REPO))
GAPS = known_gaps.load(REPO / "parity_configs" / "known_gaps.toml", set(CONFIGS))


def jobs() -> list[tuple[str, str, str]]:
    out = []
    for cid in sorted(CONFIGS):
        for mode in MODES:
            for flavor in (NO_FLAVOR,) if mode in FLAVORLESS_MODES else FLAVORS:
                out.append((cid, mode, flavor))
    return out


def job_label(job: tuple[str, str, str]) -> str:
    cid, mode, flavor = job
    return Job(cid, CONFIGS[cid].family, mode, flavor).label()


JOBS = jobs()
IDS = [job_label(j) for j in JOBS]


def test_ids_are_the_gates_job_labels(capsys) -> None:
    """The jobs and their ids are those `rocke-parity gate --collect-only` lists."""
    assert main(["gate", "--collect-only", "--root", str(REPO)]) == 0
    listed = [line for line in capsys.readouterr().out.splitlines() if line and " job(s) selected" not in line]
    assert sorted(listed) == sorted(IDS)


def test_discovery_is_clean() -> None:
    assert not DISCOVERY.problems, [p.message for p in DISCOVERY.problems]
    assert {"fwd", "wgrad", "dgrad"} <= {c.family for c in DISCOVERY.configs}


def test_known_gaps_file_is_valid() -> None:
    assert not GAPS.problems, GAPS.problems


def test_both_engines_implement_the_same_modes() -> None:
    assert py_engine.implemented_modes() == cbridge.implemented_modes()


def test_both_engines_raise_the_same_engine_failure() -> None:
    """One EngineFailure class: cbridge raises the engine's own for ROCKE_ERROR."""
    assert cbridge.EngineFailure is py_engine.EngineFailure


@pytest.mark.parametrize("cid,mode,flavor", JOBS, ids=IDS)
def test_config(cid: str, mode: str, flavor: str) -> None:
    cfg = CONFIGS[cid]
    call_flavor = FLAVORLESS_CALL_FLAVOR if flavor == NO_FLAVOR else flavor
    py_runs = [call_engine(fn, cfg.data, mode, call_flavor) for fn in (engine_memo.py_emit, py_engine.emit)]
    c_runs = [call_engine(fn, cfg.data, mode, call_flavor) for fn in (engine_memo.c_emit, cbridge.emit)]
    res = JobResult(
        item=None,
        py=tuple(r for r, _ in py_runs),
        c=tuple(r for r, _ in c_runs),
        py_text=py_runs[0][1],
        c_text=c_runs[0][1],
    )
    verdict = classify(res, cfg.expect)
    gap = GAPS.lookup(cid, mode, flavor)
    if gap is not None:
        assert gap.holds_for(verdict.status, known_gaps.evidence_of(verdict.status, res)), (
            f"known_gaps.toml lists this job as {gap.status} ({gap.reason}) but it is now "
            f"{verdict.status}: {verdict.reason} — update the list"
        )
        return
    assert verdict.status in (Status.IDENTICAL, Status.BOTH_REJECTED), f"{verdict.status}: {verdict.reason}"
    if verdict.status is Status.IDENTICAL:
        entry = MANIFEST.get(cid, golden.output_key(mode, flavor))
        assert entry is not None, "GOLDEN_MISSING: run `rocke-parity golden --update` and say why in the commit"
        data = py_runs[0][1].encode("utf-8")
        assert (entry.sha256, entry.bytes) == (hashlib.sha256(data).hexdigest(), len(data)), "GOLDEN_DRIFT"
