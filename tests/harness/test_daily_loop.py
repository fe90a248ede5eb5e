"""The daily loop: what a user meets gating the tree they work in, day after day.

- a hand-copied config with the same engine tables as another (only ``new`` refused one) is a
  run-level failure of the gate and of ``golden --check``, naming both files;
- one changed token fails many jobs as one cause, although its line holds other SSA names and
  numbers in each config: the reports group by the canonical line and show one real one;
- ``fuzz --add-configs`` without ``--report`` is refused before the run (the config it adds is
  the report folder's, which a review reads).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from layout import REPO

from rocke_py.parity.cli import main
from rocke_py.parity.inputs.configs import discover

SMALL_TREE = ("wgrad/00-baseline", "wgrad/100-unknown-pipeline", "fwd/00-baseline", "dgrad/00-baseline")


def small_tree(root: Path, ids: tuple[str, ...] = SMALL_TREE) -> Path:
    """Shipped configs copied into ``root``, with the golden manifest the real engines record."""
    for cid in ids:
        dst = root / "parity_configs" / f"{cid}.toml"
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO / "parity_configs" / f"{cid}.toml", dst)
    assert main(["golden", "--update", "--root", str(root), "-j", "2"]) == 0
    return root


def _write(root: Path, cid: str, text: str) -> Path:
    path = root / "parity_configs" / f"{cid}.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def hand_copy(text: str) -> str:
    """A config's text as someone copies it by hand: another [parity] description, a comment, and
    the [problem] table's keys in another order."""
    head, sep, rest = text.partition("[problem]\n")
    problem, sep2, tail = rest.partition("\n[")
    assert sep and sep2, "a config with a [problem] table before another"
    lines = list(reversed(problem.splitlines()))
    head = head.replace('description = "', 'description = "a copy: ', 1)
    return head + "# copied by hand\n[problem]\n" + "\n".join(lines) + "\n\n[" + tail


def _dup_problems(root: Path) -> list[str]:
    return [p.message for p in discover(root).duplicates]


# ----------------------------------------------------------------------------- duplicates


def test_no_shipped_pair_of_configs_is_a_duplicate():
    assert _dup_problems(REPO) == []


def test_a_hand_copied_duplicate_fails_the_gate_and_golden_check(tmp_path, capsys):
    root = small_tree(tmp_path)
    original = (root / "parity_configs" / "wgrad" / "00-baseline.toml").read_text(encoding="utf-8")
    _write(root, "wgrad/16-copy", hand_copy(original))
    # golden.json holds the copy's entries (its outputs are the original's bytes): only the
    # duplicate can fail the run
    path = root / "parity_configs" / "golden.json"
    doc = json.loads(path.read_text())
    doc["entries"]["wgrad/16-copy"] = doc["entries"]["wgrad/00-baseline"]
    path.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    capsys.readouterr()

    report = tmp_path / "gate.json"
    assert main(["gate", "--root", str(root), "-j", "2", "--json", str(report)]) == 1
    out = capsys.readouterr().out
    (line,) = [ln for ln in out.splitlines() if ln.startswith("FAIL run-level:")]
    assert "parity_configs/wgrad/00-baseline.toml" in line and "parity_configs/wgrad/16-copy.toml" in line, line
    assert "same [target], [problem] and [spec] values" in line, line
    got = json.loads(report.read_text())
    assert all(r["passed"] for r in got["jobs"]) and len(got["run_level_failures"]) == 1

    assert main(["golden", "--check", "--root", str(root), "-j", "2"]) == 1
    out = capsys.readouterr().out
    assert "golden FAILED" in out and "16-copy.toml" in out
    # a run of another family does not report it; one of the family does
    assert main(["gate", "--root", str(root), "-j", "2", "--family", "fwd"]) == 0
    assert main(["gate", "--root", str(root), "-j", "2", "--family", "wgrad", "--mode", "spec"]) == 1


def test_duplicates_compare_typed_values_and_ignore_parity_comments_and_layout(tmp_path):
    spec = '[spec]\nfamily = "wgrad"\narch = "gfx950"\n'
    problem = "[problem]\nN = 8\nHi = 56\n"

    def cfg(desc: str, body: str) -> str:
        return f'[parity]\ndescription = "{desc}"\nexpect = "emit"\n\n{body}'

    _write(tmp_path, "wgrad/00-a", cfg("a", problem + spec))
    _write(tmp_path, "wgrad/01-b", cfg("b", "# the same, laid out otherwise\n" + spec + "\n" + problem))
    _write(tmp_path, "wgrad/02-c", cfg("c", problem.replace("N = 8", "N = 8.0") + spec))  # a float: another value
    _write(tmp_path, "wgrad/03-d", cfg("d", problem.replace("N = 8", "N = 9") + spec))
    (msg,) = _dup_problems(tmp_path)
    assert msg.startswith("parity_configs/wgrad/00-a.toml and parity_configs/wgrad/01-b.toml: "), msg
    # the second discovery reads the tables it kept: the same verdict
    assert _dup_problems(tmp_path) == [msg]


# ----------------------------------------------------------------------------- one cause

#: The C engine with one token changed: the first ``mul`` of each ll output is a ``shl``. Its line
#: holds other SSA names and numbers in each family (``%mul11 = mul i32 %bid10, 64``, ...).
SHL_ENGINES = """
from rocke_py import cbridge
from rocke_py import engine as py_engine
from rocke_py.engine.result import Emitted

emit_py = py_engine.emit


def emit_c(config, mode, flavor):
    out = cbridge.emit(config, mode, flavor)
    if mode == "ll" and isinstance(out, Emitted):
        return Emitted(out.text.replace(" = mul i32 ", " = shl i32 ", 1))
    return out


def implemented_modes():
    return ("spec", "ir", "ll")
"""


def test_one_changed_token_is_one_cause_with_a_real_line(tmp_path, capsys):
    root = small_tree(tmp_path / "tree", ("wgrad/00-baseline", "fwd/00-baseline", "dgrad/00-baseline"))
    engines = tmp_path / "shl_engines.py"
    engines.write_text(SHL_ENGINES)
    pair = f"{engines}:emit_py,{engines}:emit_c,{engines}:implemented_modes,{engines}:implemented_modes"
    capsys.readouterr()
    summary = tmp_path / "summary.md"
    args = ["gate", "--root", str(root), "--engines", pair, "-j", "2", "--mode", "ll", "--summary", str(summary)]
    assert main(args) == 1
    out = capsys.readouterr().out
    fails = [ln for ln in out.splitlines() if ln.startswith("FAIL DIFFER")]
    assert len(fails) == 1, out  # nine jobs, one cause
    assert "+ 8 more job(s) with the same cause" in out, out
    md = summary.read_text(encoding="utf-8")
    assert "### Failures: 9 job(s), 1 cause(s)" in md, md
    # the group shows a real line of its first job, SSA names and numbers as they are
    assert re.search(r"^c  >\s*\d+ \| +%mul\d+ = shl i32 %\w+, \d+$", md, re.MULTILINE), md
    assert re.search(r"^py >\s*\d+ \| +%mul\d+ = mul i32 %\w+, \d+$", md, re.MULTILINE), md


# ----------------------------------------------------------------------------- fuzz --add-configs


def test_fuzz_add_configs_without_a_report_is_refused_before_the_run(tmp_path, capsys):
    root = small_tree(tmp_path, ("wgrad/00-baseline",))
    before = sorted(p.relative_to(root) for p in (root / "parity_configs").rglob("*"))
    capsys.readouterr()
    args = ["fuzz", "--root", str(root), "--seed", "1", "--budget", "5", "--cases", "2", "--add-configs"]
    assert main(args) == 2
    out, err = capsys.readouterr()
    assert not out  # no case ran: no table
    (line,) = err.splitlines()
    assert "--add-configs" in line and "--report DIR" in line, line
    assert sorted(p.relative_to(root) for p in (root / "parity_configs").rglob("*")) == before
