"""rocke-parity list (numeric order, a header, 100 columns, --json) and diff --save DIR."""

from __future__ import annotations

import json
import subprocess

import standin_tree as pt

from rocke_py.parity.judge.canon import canonicalise

TREE = {
    "wgrad/02-b": {},
    "wgrad/11-c": {"standin": {"salt": "c"}, "description": "x" * 150},
    "wgrad/100-neg": {"expect": "reject:E_SOME_RATHER_LONG_REJECTION_CODE", "standin": {"py": "reject:E_X"}},
    "fwd/00-a": {"standin": {"c_ll": "renumber"}},
}


def test_list_is_numeric_has_a_header_fits_100_columns_and_has_json(tmp_path):
    root = pt.make_tree(tmp_path, TREE)
    done = pt.run_cli(root, "list")
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["config", "expect", "last", "run", "description"]
    ids = [ln.split()[0] for ln in lines[1:] if "/" in ln.split()[0]]
    assert ids == ["fwd/00-a", "wgrad/02-b", "wgrad/11-c", "wgrad/100-neg"]  # 2 < 11 < 100
    assert all(len(ln) <= 100 for ln in lines) and "…" in done.stdout  # the long description is cut
    doc = json.loads(pt.run_cli(root, "list", "--json").stdout)
    assert [c["id"] for c in doc["configs"]] == ids
    long = doc["configs"][2]
    assert long["description"] == "x" * 150 and long["number"] == 11 and long["last_run"] == "-"
    assert doc["problems"] == []


def test_list_moves_descriptions_below_when_the_codes_leave_no_room(tmp_path):
    tree = dict(TREE)
    tree["wgrad/101-n"] = {"expect": "reject:E_" + "A" * 60, "standin": {"py": "reject:E_X"}}
    root = pt.make_tree(tmp_path, tree)
    lines = pt.run_cli(root, "list").stdout.splitlines()
    assert lines[1].strip() == "description" and all(len(ln) <= 100 for ln in lines)
    assert lines[lines.index(next(ln for ln in lines if ln.startswith("wgrad/11-c"))) + 1].startswith("    xxx")


def test_diff_save_writes_both_outputs_and_their_canonical_forms(tmp_path):
    root = pt.make_tree(tmp_path / "t", TREE)
    out = tmp_path / "saved"
    done = pt.run_cli(root, "diff", "fwd/00-a", "--save", str(out), modes="all_modes")
    assert done.returncode == 1 and f"diff -r {out}/py {out}/c" in done.stdout
    names = sorted(p.name for p in (out / "py").iterdir())
    assert names == ["ir.ir", "ll.llvm20.ll", "ll.llvm22.ll", "ll.llvm23.ll", "spec.txt"]
    for folder in ("c", "py.canonical", "c.canonical"):
        assert sorted(p.name for p in (out / folder).iterdir()) == names
    py, c = (out / "py" / "ll.llvm22.ll").read_text(), (out / "c" / "ll.llvm22.ll").read_text()
    assert py != c and "%101" in c  # the stand-in renumbers the C side
    assert (out / "py.canonical" / "ll.llvm22.ll").read_text() == canonicalise(py)
    assert (out / "c.canonical" / "ll.llvm22.ll").read_text() == (out / "py.canonical" / "ll.llvm22.ll").read_text()
    # an external tool sees the same difference
    assert subprocess.run(["diff", "-rq", str(out / "py"), str(out / "c")], capture_output=True).returncode == 1
    assert subprocess.run(["diff", "-rq", str(out / "py.canonical"), str(out / "c.canonical")]).returncode == 0


def test_diff_save_of_a_rejection_and_a_bad_directory(tmp_path):
    root = pt.make_tree(tmp_path / "t", TREE)
    out = tmp_path / "saved"
    pt.run_cli(root, "diff", "wgrad/100-neg", "--mode", "spec", "--save", str(out))
    assert (out / "py" / "spec.txt").read_text() == "REJECTED E_X\nrejected by the stand-in\n"
    assert (out / "c" / "spec.txt").read_text().startswith("rocke.spec v1")
    (tmp_path / "file").write_text("")
    bad = pt.run_cli(root, "diff", "wgrad/02-b", "--save", str(tmp_path / "file"))
    assert bad.returncode == 2 and "not a directory" in bad.stderr
