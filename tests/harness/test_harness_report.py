"""Reports: terminal summary, --json, --junit, and the progress bar only on a terminal."""

from __future__ import annotations

import hashlib
import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import standin_tree as pt

from rocke_py.parity.cli import main
from rocke_py.parity.report.terminal import make_progress


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    pt.make_tree(
        tmp_path,
        {
            "wgrad/00-ok": {},
            "wgrad/01-differ": {"standin": {"c": "alt"}},
            "wgrad/02-gap": {"standin": {"py": "reject:E_X:m"}},
            "wgrad/100-neg": {"expect": "reject:E_X", "standin": {"py": "reject:E_X:m", "c": "reject:E_X:m"}},
            "fwd/00-segv": {"standin": {"c": "segv"}},
        },
    )
    pt.write_golden(tmp_path, pt.golden_for(tmp_path, ["wgrad/00-ok", "wgrad/100-neg"]))
    _, c_sha, _ = pt.standin_output(tmp_path, "wgrad/02-gap", side="c")
    pt.write_gaps(
        tmp_path,
        [
            {
                "config": "wgrad/02-gap",
                "mode": "spec",
                "flavor": "-",
                "status": "PY_ONLY_REJECTED",
                "reason": "py validator lands first",
                "code": "E_X",
                "message_sha256": hashlib.sha256(b"m").hexdigest(),
                "c_sha256": c_sha,
            }
        ],
    )
    return tmp_path


def gate(root: Path, *args: str) -> int:
    return main(["gate", "--root", str(root), "--engines", pt.engines_arg(), "-j", "2", *args])


def test_summary_lines_table_and_known_gaps(tree, capsys):
    assert gate(tree) == 1
    out = capsys.readouterr().out
    assert "FAIL DIFFER wgrad/01-differ spec -: outputs differ from line 5" in out
    assert "FAIL CRASH fwd/00-segv spec -: the c engine died with SIGSEGV (signal 11)" in out
    assert "FAIL" not in "".join(ln for ln in out.splitlines() if "wgrad/00-ok" in ln)
    table = [ln.split() for ln in out.splitlines() if ln.startswith(("family", "fwd", "wgrad", "total"))]
    header = table[0]
    row = dict(zip(header, table[2]))  # wgrad
    assert row["IDENTICAL"] == "1" and row["DIFFER"] == "1" and row["KNOWN_GAP"] == "1"
    assert row["BOTH_REJECTED"] == "1" and row["jobs"] == "4" and row["failed"] == "1"
    assert dict(zip(header, table[-1]))["jobs"] == "5"
    assert "KNOWN GAPS: 1 job(s) pass only because" in out
    assert "gate FAILED: 2 of 5 job(s) failed (1 identical, 1 both-rejected as expected, 1 known gap(s))" in out
    assert "wall time" in out


def test_the_terminal_summary_reads_the_same_from_its_short_records(tree):
    from rocke_py.parity.judge.gate import run_gate
    from rocke_py.parity.report.report import render, report_doc
    from rocke_py.parity.report.terminal import render_doc

    run = run_gate(tree, engines=pt.engine_spec(), workers=2)
    short, whole = io.StringIO(), io.StringIO()
    render(run, short)  # a passing job's record is its table cell
    render_doc(report_doc(run, with_summary=False), whole)  # every job's whole record
    assert short.getvalue() == whole.getvalue() and "KNOWN GAPS" in short.getvalue()


def test_json_report_has_one_record_per_job(tree, tmp_path_factory, capsys):
    out = tmp_path_factory.mktemp("out") / "report.json"
    gate(tree, "--json", str(out))
    doc = json.loads(out.read_text())
    assert doc["schema"] == "rocke-parity.report/v1" and doc["passed"] is False
    recs = {r["config"]: r for r in doc["jobs"]}
    assert len(doc["jobs"]) == 5
    ok = recs["wgrad/00-ok"]
    assert ok["status"] == "IDENTICAL" and ok["passed"] and ok["expected"] == "emit"
    assert ok["mode"] == "spec" and ok["flavor"] == "-"
    assert ok["py"]["kind"] == "emitted" and len(ok["py"]["sha256"]) == 64 and ok["py"]["bytes"] > 0
    assert len(ok["durations"]["py"]) == 2 and len(ok["durations"]["c"]) == 2
    neg = recs["wgrad/100-neg"]
    assert neg["c"] == {"kind": "rejected", "code": "E_X", "message": "m", "sha256": "", "bytes": 0}
    assert recs["fwd/00-segv"]["death"]["signal"] == "SIGSEGV"
    gap = recs["wgrad/02-gap"]["known_gap"]
    assert gap["status"] == "PY_ONLY_REJECTED" and gap["reason"] == "py validator lands first" and gap["holds"]
    assert gap["evidence"]["code"] == "E_X"
    assert recs["wgrad/01-differ"]["evidence"] == {
        "py_sha256": recs["wgrad/01-differ"]["py"]["sha256"],
        "c_sha256": recs["wgrad/01-differ"]["c"]["sha256"],
    }
    assert doc["counts"]["KNOWN_GAP"] == 1


def test_junit_report(tree, tmp_path_factory):
    out = tmp_path_factory.mktemp("out") / "junit.xml"
    gate(tree, "--junit", str(out))
    root = ET.parse(out).getroot()
    # a dashboard's view: one class per config (file= its path), one case per job
    cases = {(c.get("classname"), c.get("name")): c for c in root.iter("testcase")}
    assert len(cases) == 5
    differ = cases[("wgrad.01-differ", "spec -")]
    assert differ.get("file") == "parity_configs/wgrad/01-differ.toml"
    assert cases[("fwd.00-segv", "spec -")].get("file") == "parity_configs/fwd/00-segv.toml"
    failure = differ.find("failure")
    assert failure.get("type") == "DIFFER"
    body = failure.text
    assert "first divergent line: 5" in body
    assert "py >     5 |" in body and "c  >     5 |" in body and "; changed" in body
    assert "rocke-parity diff wgrad/01-differ --mode spec --flavor llvm22" in body
    assert "rocke-emit parity_configs/wgrad/01-differ.toml --mode spec --flavor llvm22" in body
    skipped = cases[("wgrad.02-gap", "spec -")].find("skipped")
    assert skipped is not None and "py validator lands first" in skipped.get("message")
    assert cases[("wgrad.00-ok", "spec -")].find("failure") is None


def test_progress_bar_only_on_a_terminal():
    assert make_progress(io.StringIO()) is None

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    bar = make_progress(Tty())
    pytest.importorskip("tqdm")
    assert bar is not None
    bar.start(2)
    bar.advance("a spec -")
    bar.close()
