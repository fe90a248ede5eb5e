"""known_gaps.toml: parsing rules and the full-run rule for entries that match no job."""

from __future__ import annotations

import tomllib
from pathlib import Path

import standin_tree as pt
from layout import REPO

from rocke_py.parity.judge import known_gaps
from rocke_py.parity.judge.compare import Status
from rocke_py.parity.judge.gate import run_gate
from rocke_py.parity.judge.jobs import Selection

IDS = {"wgrad/00-a", "wgrad/01-b"}


def load(tmp_path: Path, gaps: list[dict]) -> known_gaps.KnownGaps:
    (tmp_path / "parity_configs").mkdir(exist_ok=True)
    return known_gaps.load(pt.write_gaps(tmp_path, gaps), IDS)


EVIDENCE = {
    "DIFFER": {"py_sha256": "a" * 64, "c_sha256": "b" * 64},
    "CRASH": {"engine": "c", "cause": "SIGSEGV", "stage": "lower_kernel", "frame": "lower_op"},
    "UNEXPECTED_REJECT": {"code": "WGRAD_TILE_DIVISIBILITY", "message_sha256": "c" * 64},
}


def gap(**kw) -> dict:
    base = {"config": "wgrad/00-a", "mode": "spec", "flavor": "*", "status": "DIFFER", "reason": "staged"}
    base.update(kw)
    base.update({k: v for k, v in EVIDENCE.get(base["status"], {}).items() if k not in kw})
    return base


def test_the_shipped_file_parses_and_is_empty():
    path = REPO / "parity_configs" / "known_gaps.toml"
    assert tomllib.loads(path.read_text()) == {}  # the goal is an empty file
    assert known_gaps.load(path, set()) == known_gaps.KnownGaps((), ())


def test_a_valid_entry(tmp_path):
    g = load(tmp_path, [gap(flavor="-")])
    assert g.problems == ()
    assert g.lookup("wgrad/00-a", "spec", "-") is not None
    assert g.lookup("wgrad/00-a", "ir", "-") is None


def test_every_entry_needs_a_reason(tmp_path):
    g = load(tmp_path, [gap(reason="  ")])
    assert g.gaps == () and "reason is empty" in g.problems[0]
    g = load(tmp_path, [{k: v for k, v in gap().items() if k != "reason"}])
    assert "needs string key(s) reason" in g.problems[0]


def test_bad_entries_are_run_level_failures(tmp_path):
    g = load(
        tmp_path,
        [
            gap(config="wgrad/99-gone"),
            gap(status="GOLDEN_DRIFT"),
            gap(status="IDENTICAL"),
            gap(mode="spec", flavor="llvm22"),
            gap(mode="asm"),
            gap(extra="x"),
        ],
    )
    assert g.gaps == ()
    text = "\n".join(g.problems)
    for needle in (
        "no config 'wgrad/99-gone'",
        "golden --update",
        "'IDENTICAL' cannot be listed",
        "flavor for mode spec",
        "mode must be one of",
        "unknown key(s) extra",
    ):
        assert needle in text


def test_two_entries_for_one_job(tmp_path):
    g = load(tmp_path, [gap(flavor="*"), gap(flavor="-", status="CRASH")])
    assert any("entries 1 and 2 both match" in p for p in g.problems)


def test_an_entry_matching_no_job_fails_a_full_run_only(tmp_path):
    pt.make_tree(tmp_path, {"wgrad/00-a": {}, "wgrad/01-b": {}})
    pt.write_golden(tmp_path, pt.golden_for(tmp_path, ["wgrad/00-a", "wgrad/01-b"]))
    pt.write_gaps(tmp_path, [gap(config="wgrad/01-b", mode="ir", status="UNEXPECTED_REJECT")])
    full = run_gate(tmp_path, engines=pt.engine_spec(), workers=1)
    assert all(v.status is Status.IDENTICAL for v in full.verdicts)
    assert not full.passed
    (msg,) = full.problems
    assert "matches no job of this full run" in msg and "mode ir is not run" in msg
    part = run_gate(tmp_path, Selection(configs=("wgrad/00-a",)), engines=pt.engine_spec(), workers=1)
    assert part.passed and part.problems == []


def test_an_entry_pins_its_evidence(tmp_path):
    g = load(tmp_path, [gap(mode="ir", flavor="-", status="UNEXPECTED_REJECT")])
    assert g.problems == ()
    entry = g.lookup("wgrad/00-a", "ir", "-")
    ev = EVIDENCE["UNEXPECTED_REJECT"]
    assert entry is not None and dict(entry.evidence) == ev
    assert entry.holds_for(Status.UNEXPECTED_REJECT, ev)
    # the same status for another reason is a regression, not the listed gap
    assert not entry.holds_for(Status.UNEXPECTED_REJECT, {**ev, "code": "WGRAD_LDS_BUDGET"})
    assert not entry.holds_for(Status.UNEXPECTED_REJECT, {**ev, "message_sha256": "d" * 64})
    assert not entry.holds_for(Status.DIFFER, EVIDENCE["DIFFER"])


def test_an_entry_without_evidence_is_a_run_level_failure(tmp_path):
    """Hole 4: a status alone hides any divergence (DIFFER) or any segfault (CRASH)."""
    for status, keys in known_gaps.EVIDENCE_KEYS.items():
        g = load(
            tmp_path, [{"config": "wgrad/00-a", "mode": "spec", "flavor": "*", "status": status, "reason": "staged"}]
        )
        assert g.gaps == (), status
        (msg,) = g.problems
        assert "pins no evidence" in msg and all(k in msg for k in keys), msg
    g = load(tmp_path, [gap(status="CRASH", cause="")])
    assert g.gaps == () and "missing cause" in g.problems[0]
    g = load(tmp_path, [gap(status="CRASH", py_sha256="a" * 64)])
    assert g.gaps == () and "not evidence of CRASH" in g.problems[0]


def test_evidence_must_be_a_string(tmp_path):
    (tmp_path / "parity_configs").mkdir()
    path = tmp_path / "parity_configs" / "known_gaps.toml"
    path.write_text(
        '[[gap]]\nconfig = "wgrad/00-a"\nmode = "spec"\nflavor = "*"\nstatus = "UNEXPECTED_REJECT"\n'
        'reason = "staged"\ncode = 7\nmessage_sha256 = "x"\n'
    )
    g = known_gaps.load(path, IDS)
    assert g.gaps == () and "pins no evidence" in g.problems[0]


def test_the_placeholder_reason_that_diff_prints_is_refused(tmp_path):
    """An entry pasted from ``rocke-parity diff`` without saying why it exists cannot pass."""
    g = load(tmp_path, [gap(reason=f"  {known_gaps.PLACEHOLDER_REASON} ")])
    assert g.gaps == () and "reason is still the placeholder" in g.problems[0]


def test_a_mismatch_names_each_pinned_value_whole_enough_to_tell_apart(tmp_path):
    """Hashes are cut to 16 digits (per engine, for a ``<py>+<c>`` pair); frames and stages whole."""
    g = load(tmp_path, [gap(status="CRASH")])
    (entry,) = g.gaps
    assert entry.describe() == "CRASH engine=c cause=SIGSEGV stage=lower_kernel frame=lower_op"
    pair = {"engine": "py+c", "first_sha256": "a" * 64 + "+" + "b" * 64}
    assert known_gaps.describe_now(Status.NONDETERMINISTIC, pair).endswith(f"first_sha256={'a' * 16}+{'b' * 16}")
