"""Hostile engine output against the reports: every report is written, bounded and well-formed.

The faults come from wrapped real engines (``tests/faults/report_faults.py``) on a small copy of
the shipped configs whose golden manifest the real engines recorded:

- an 8 MiB divergent line: every line of every report (the terminal summary, ``--json``,
  ``--junit``, ``--summary``) is an excerpt of a few KB saying the text's size and naming the
  file beside the report that keeps the whole of it; the Markdown summary stays under 1 MiB;
- a lone surrogate and the other characters XML cannot hold in the Python engine's output:
  every report is written, the characters escaped (the JUnit parses, the JSON is Unicode that
  ``merge`` takes, the Markdown encodes), also through ``merge``.

The writers themselves are fuzzed with Hypothesis (arbitrary text with surrogates and control
characters, huge strings): the JUnit always parses back, the Markdown always fits in a step
summary, and nothing raises. ``ROCKE_READER_FUZZ_SECONDS=N`` asks for a longer fixed-seed run
(each property gets N seconds), as CI's nightly job runs it.
"""

from __future__ import annotations

import json
import os
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from layout import REPO
from test_gate_faults import fault_tree

from rocke_py.parity.cli import main
from rocke_py.parity.report import bounds
from rocke_py.parity.report.report import junit_text
from rocke_py.parity.report.summary import markdown

FAULTS = REPO / "tests" / "faults" / "report_faults.py"
EMIT = "wgrad/00-baseline"
TREE = ((EMIT, "# fault: emit-target"), ("wgrad/100-unknown-pipeline", ""))
#: The longest line a report of ASCII text may hold: an excerpt (2048 characters), the note of
#: the cut and the line's own words.
LINE_BOUND = 4096
#: The same for any text: up to 6144 characters (an excerpt with a long note), each up to 12
#: bytes once escaped (an astral character in JSON is two ``\\uXXXX``).
ANY_LINE_BOUND = 12 * 6144
HUGE = 8 * 1024 * 1024
#: GitHub's limit on a step summary is 1 MiB; the summary keeps under a million bytes.
SUMMARY_BOUND = 1_000_000


def engines(fault: str) -> str:
    f = str(FAULTS)
    return f"{f}:{fault}_py,{f}:{fault}_c,{f}:implemented_modes,{f}:implemented_modes"


@pytest.fixture(scope="module")
def base_tree(tmp_path_factory) -> Path:
    return fault_tree(tmp_path_factory.mktemp("hostile"), engines("real"), TREE)


@pytest.fixture
def root(base_tree: Path, tmp_path: Path) -> Path:
    import shutil

    shutil.copytree(base_tree / "parity_configs", tmp_path / "tree" / "parity_configs")
    return tmp_path / "tree"


def gate(root: Path, fault: str, out: Path, *extra: str) -> int:
    args = ["gate", "--root", str(root), "--engines", engines(fault), "-j", "2", "--mode", "spec", *extra]
    return main([*args, "--json", str(out / "r.json"), "--junit", str(out / "r.xml"), "--summary", str(out / "r.md")])


def longest_line(data: bytes) -> int:
    return max(len(line) for line in data.split(b"\n"))


# ----------------------------------------------------------------------------- an 8 MiB divergent line


def test_an_8mb_divergent_line_is_an_excerpt_in_every_report(root: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    out.mkdir()
    assert gate(root, "huge_line", out) == 1
    terminal = capsys.readouterr()
    assert longest_line((terminal.out + terminal.err).encode()) <= LINE_BOUND
    for name in ("r.json", "r.xml", "r.md"):
        data = (out / name).read_bytes()
        assert longest_line(data) <= LINE_BOUND, name
        assert len(data) < 256 * 1024, (name, len(data))
    assert (out / "r.md").stat().st_size < SUMMARY_BOUND
    (rec,) = [r for r in json.loads((out / "r.json").read_text())["jobs"] if not r["passed"]]
    assert rec["status"] == "DIFFER"
    # the divergent lines are excerpts that say their size and where the whole line is kept
    cut = [ln for ln in rec["divergence"] if "… [" in ln]
    assert len(cut) == 2, rec["divergence"]
    for side, ln, last in zip(("py", "c"), cut, "12"):
        assert ln.startswith(f"{side:2} >"), ln
        size, kept = ln.rsplit("… [", 1)[1].rstrip("]").split(" bytes; the whole text: ")
        assert int(size) > HUGE
        whole = Path(kept).read_text()
        assert len(whole) > HUGE and whole.endswith("x" * 100 + last), kept
        assert Path(kept).parent == out / "r.json.d"
    assert str(out / "r.json.d") in (out / "r.xml").read_text()
    assert str(out / "r.json.d") in (out / "r.md").read_text()


# ----------------------------------------------------------------------------- characters XML cannot hold


def _no_surrogate(value: object) -> None:
    if isinstance(value, str):
        value.encode("utf-8")  # raises on a lone surrogate
    elif isinstance(value, dict):
        for k, v in value.items():
            _no_surrogate(k)
            _no_surrogate(v)
    elif isinstance(value, list):
        for v in value:
            _no_surrogate(v)


def test_xml_hostile_characters_are_escaped_in_every_report(root: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    out.mkdir()
    assert gate(root, "xml_hostile", out, "--shard", "1/1") == 1
    assert "Traceback" not in capsys.readouterr().err
    doc = json.loads((out / "r.json").read_text(encoding="utf-8"))
    _no_surrogate(doc)  # a JSON report is Unicode text: merge refuses one with a lone surrogate
    (rec,) = [r for r in doc["jobs"] if not r["passed"]]
    assert any("\\udc80" in ln for ln in rec["divergence"]), rec["divergence"]
    junit = ET.parse(out / "r.xml").getroot()
    bodies = [f.text or "" for f in junit.iter("failure")]
    assert any("\\udc80" in b and "\\x00" in b and "\\ufffe" in b and "\\uffff" in b for b in bodies), bodies
    assert "\\udc80" in (out / "r.md").read_text(encoding="utf-8")
    # merge writes every report of the same shard too
    merged = tmp_path / "merged"
    merged.mkdir()
    args = ["merge", str(out / "r.json"), "--junit", str(merged / "m.xml"), "--summary", str(merged / "m.md")]
    assert main([*args, "--json", str(merged / "m.json")]) == 1, capsys.readouterr().err
    ET.parse(merged / "m.xml")
    assert "\\udc80" in (merged / "m.md").read_text(encoding="utf-8")
    _no_surrogate(json.loads((merged / "m.json").read_text(encoding="utf-8")))


# ----------------------------------------------------------------------------- the writers, fuzzed

_FUZZ_SECONDS = float(os.environ.get("ROCKE_READER_FUZZ_SECONDS", "0") or 0)
_SHORT = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
_LONG = settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck), database=None)


#: Any code point: surrogates, C0 and C1 controls, noncharacters.
_TEXT = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=40)
_HUGE = st.builds(lambda s, n: (s[:4] or "x") * n, _TEXT, st.integers(1, 100_000))  # up to 400,000 characters
_ANY = st.one_of(_TEXT, _TEXT, _TEXT, _HUGE)
_LINES = st.lists(_ANY, max_size=12)
_STATUS = st.one_of(st.sampled_from(["DIFFER", "CRASH", "GOLDEN_DRIFT", "KNOWN_GAP", "IDENTICAL"]), _TEXT)
_RUN = st.fixed_dictionaries(
    {"kind": st.sampled_from(["emitted", "rejected", "error"]), "code": _ANY, "message": _ANY, "bytes": st.integers(0)}
)


@st.composite
def records(draw: st.DrawFn) -> dict:
    rec = {
        "config": draw(_ANY),
        "family": draw(_TEXT),
        "mode": draw(_TEXT),
        "flavor": draw(st.one_of(st.just("-"), _TEXT)),
        "file": draw(_ANY),
        "status": draw(_STATUS),
        "passed": draw(st.booleans()),
        "reason": draw(_ANY),
        "cause": draw(st.lists(_TEXT, max_size=3)),
        "divergence": draw(_LINES),
        "detail": draw(_LINES),
        "repro": draw(_LINES),
        "golden_match": draw(_ANY),
        "known_gap": {"reason": draw(_ANY), "status": draw(_TEXT), "holds": True},
        "golden": {"verdict": "emit", "bytes": draw(st.integers(0)), "sha256": draw(_TEXT)},
        "py": draw(_RUN),
        "durations": {"py": [0.5], "c": [0.25]},
    }
    return rec


@st.composite
def docs(draw: st.DrawFn) -> dict:
    jobs = draw(st.lists(records(), max_size=12))
    many = draw(st.integers(0, 3))
    failures = draw(_LINES) * (1 if many < 3 else 200)  # now and then a flood of run-level failures
    return {
        "summary": {
            "commit": draw(_ANY),
            "version": draw(_TEXT),
            "engines": {"py": {"build_id": draw(_ANY)}, "c": {"build_id": draw(_TEXT)}},
            "tree": {"commit": draw(_TEXT), "dirty": draw(st.lists(_ANY, max_size=8)), "golden_sha256": draw(_TEXT)},
        },
        "passed": draw(st.booleans()),
        "partial": draw(st.one_of(st.just(False), _ANY)),
        "run_level_failures": failures,
        "notes": draw(_LINES),
        "modes": draw(st.lists(_TEXT, max_size=3)),
        "flavors": draw(st.lists(_TEXT, max_size=3)),
        "wall_seconds": 1.5,
        "jobs": jobs,
    }


def _fuzz(test):
    """A short run by default; with ROCKE_READER_FUZZ_SECONDS=N, N seconds of fixed seeds."""
    if not _FUZZ_SECONDS:
        return _SHORT(given(docs())(test))

    def long_run() -> None:
        end = time.monotonic() + _FUZZ_SECONDS
        n = 0
        while time.monotonic() < end:
            seed(20261111 + n)(_LONG(given(docs())(test)))()
            n += 1

    long_run.__name__ = test.__name__
    return long_run


@_fuzz
def test_junit_of_any_report_is_well_formed_xml(doc: dict) -> None:
    for d in (doc, "bounded"):
        d = bounds.bound_doc(doc) if d == "bounded" else doc
        text = junit_text(d)
        ET.fromstring(text.encode("utf-8"))
        assert longest_line(text.encode("utf-8")) <= ANY_LINE_BOUND


@_fuzz
def test_markdown_of_any_report_fits_in_a_step_summary(doc: dict) -> None:
    for d in (doc, "bounded"):
        d = bounds.bound_doc(doc) if d == "bounded" else doc
        data = markdown(d).encode("utf-8")
        assert len(data) < SUMMARY_BOUND
        assert longest_line(data) <= ANY_LINE_BOUND


@_fuzz
def test_a_bounded_report_is_unicode_json_of_bounded_lines(doc: dict) -> None:
    text = json.dumps(bounds.bound_doc(doc), indent=2)
    _no_surrogate(json.loads(text))
    assert longest_line(text.encode("utf-8")) <= ANY_LINE_BOUND


def test_a_flood_of_failures_still_fits_in_a_step_summary() -> None:
    """Whatever the run, the summary stays under the limit and says where it was cut."""
    rec = {"config": "wgrad/00-x", "family": "wgrad", "mode": "ll", "flavor": "llvm20", "status": "DIFFER"}
    jobs = [
        {**rec, "config": f"wgrad/{n:02d}-x", "passed": False, "cause": [str(n)], "divergence": ["y" * 5000] * 10}
        for n in range(200)
    ]
    doc = {
        "passed": False,
        "partial": False,
        "run_level_failures": ["z" * 3000] * 2000,
        "notes": [],
        "modes": ["ll"],
        "flavors": ["llvm20"],
        "wall_seconds": 1.0,
        "jobs": jobs,
    }
    text = markdown(doc)
    assert len(text.encode("utf-8")) < SUMMARY_BOUND
    assert "the summary is cut here" in text.splitlines()[-1]
