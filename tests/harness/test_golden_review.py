"""Golden updates reviewable as text: ``golden --update`` and the gate's ``--summary`` show a
bounded canonical diff of each moved entry (its previous text from the local object store), and
``golden diff [REV]`` lists what golden.json moved since a revision."""

from __future__ import annotations

import shutil
from pathlib import Path

import standin_tree as pt
from repo_copy import git_init

from rocke_py.parity.cli import main
from rocke_py.parity.judge import golden

CID = "wgrad/00-a"
#: the stand-in's line 5 in mode spec, and what "alt" makes of it
OLD_LINE, NEW_LINE = "field_1 = 7", "field_1 = 7 ; changed"


def cli(root: Path, *args: str) -> int:
    return main([*args, "--root", str(root), "--engines", pt.engines_arg()])


def gate_cli(root: Path, *args: str) -> int:
    return cli(root, *args, "-j", "1")


def recorded_tree(tmp_path: Path) -> Path:
    """A tree whose golden.json the stand-ins recorded (so their texts are in the local store)."""
    root = pt.make_tree(tmp_path / "t", {CID: {"standin": {"name": "k"}}})
    assert gate_cli(root, "golden", "--update") == 0
    return root


def move_entry(root: Path) -> None:
    """Both engines now emit another line 5 (the kernel name kept): the entry drifts."""
    pt.write_config(root, CID, standin={"name": "k", "py": "alt", "c": "alt"})


# ----------------------------------------------------------------------------- golden --update


def test_an_update_that_moves_an_entry_shows_its_canonical_diff(tmp_path, capsys):
    root = recorded_tree(tmp_path)
    capsys.readouterr()
    move_entry(root)
    assert gate_cli(root, "golden", "--update") == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.startswith(f"{CID} spec: +"))
    review = lines[head + 1 : head + 12]
    assert any(ln.strip() == f"-{OLD_LINE}" for ln in review), out
    assert any(ln.strip() == f"+{NEW_LINE}" for ln in review), out
    assert any(ln.strip().startswith("@@") for ln in review), out


def test_an_update_without_the_previous_text_says_so_in_one_line(tmp_path, capsys):
    root = recorded_tree(tmp_path)
    shutil.rmtree(root / ".rocke-parity" / "objects")  # a fresh clone: nothing kept
    capsys.readouterr()
    move_entry(root)
    assert gate_cli(root, "golden", "--update") == 0
    out = capsys.readouterr().out
    assert golden.NOT_KEPT in out
    assert out.count(golden.NOT_KEPT) == 1
    assert "@@" not in out and NEW_LINE not in out


def test_a_long_diff_is_cut_and_says_how_much():
    old = "".join(f"line {i}\n" for i in range(500))
    new = "".join(f"line {i} moved\n" for i in range(500))
    lines = golden.review_lines(old, new)
    assert len(lines) <= golden.REVIEW_LINES + 1
    assert lines[-1].startswith("… ") and lines[-1].endswith(" more lines")
    assert int(lines[-1].split()[1]) + len(lines) - 1 == 1000 + 3  # every diff line shown or counted


def test_the_diff_is_canonical():
    assert golden.review_lines("%a = add %b\n", "%x = add %y\n") == [golden.SAME_CANONICAL]


# ----------------------------------------------------------------------------- gate --summary


def test_the_gate_summary_shows_the_diff_of_each_drifted_entry(tmp_path, capsys):
    root = recorded_tree(tmp_path)
    move_entry(root)
    summary = tmp_path / "summary.md"
    assert gate_cli(root, "gate", "--summary", str(summary)) == 1
    text = summary.read_text()
    assert f"+{NEW_LINE}" in text and f"-{OLD_LINE}" in text
    assert "```diff" in text


def test_the_gate_summary_says_when_the_previous_text_is_not_kept(tmp_path, capsys):
    root = recorded_tree(tmp_path)
    shutil.rmtree(root / ".rocke-parity" / "objects")
    move_entry(root)
    summary = tmp_path / "summary.md"
    assert gate_cli(root, "gate", "--summary", str(summary)) == 1
    assert golden.NOT_KEPT in summary.read_text()


# ----------------------------------------------------------------------------- golden diff REV


def test_golden_diff_head_on_an_unchanged_tree_says_nothing_moved(tmp_path, capsys):
    root = recorded_tree(tmp_path)
    git_init(root)
    capsys.readouterr()
    assert cli(root, "golden", "diff") == 0
    out = capsys.readouterr().out
    assert "nothing moved since HEAD" in out
    assert cli(root, "golden", "diff", "HEAD") == 0
    assert "nothing moved since HEAD" in capsys.readouterr().out


def test_golden_diff_lists_what_moved_with_the_text_diff(tmp_path, capsys):
    root = recorded_tree(tmp_path)
    pt.write_config(root, "wgrad/01-b", standin={"name": "b"})
    assert gate_cli(root, "golden", "--update") == 0
    git_init(root)
    move_entry(root)
    (root / "parity_configs" / "wgrad" / "01-b.toml").unlink()
    pt.write_config(root, "wgrad/02-c", standin={"name": "c"})
    assert gate_cli(root, "golden", "--update") == 0
    capsys.readouterr()
    assert cli(root, "golden", "diff", "HEAD") == 0
    out = capsys.readouterr().out
    assert f"{CID} spec: changed" in out
    assert "wgrad/01-b spec: removed" in out and "wgrad/02-c spec: added" in out
    assert f"+{NEW_LINE}" in out and f"-{OLD_LINE}" in out
    assert "3 entries moved since HEAD" in out


def test_golden_diff_without_the_previous_text_says_so(tmp_path, capsys):
    root = recorded_tree(tmp_path)
    git_init(root)
    move_entry(root)
    assert gate_cli(root, "golden", "--update") == 0
    shutil.rmtree(root / ".rocke-parity" / "objects")
    capsys.readouterr()
    assert cli(root, "golden", "diff") == 0
    out = capsys.readouterr().out
    assert f"{CID} spec: changed" in out and golden.NOT_KEPT in out and "@@" not in out


def test_golden_diff_of_a_bad_revision_exits_2_in_one_line(tmp_path, capsys):
    root = recorded_tree(tmp_path)
    git_init(root)
    capsys.readouterr()
    assert cli(root, "golden", "diff", "no-such-rev") == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "no-such-rev" in err and "golden diff" in err
    assert cli(root, "golden", "diff", "--output=x") == 2


def test_golden_diff_runs_this_trees_engine_for_a_new_text_not_kept(tmp_path, capsys):
    """golden.json edited to what the engines now emit without a run (no new text in the store):
    the tree's own engine gives it; the previous one comes from the store."""
    root = recorded_tree(tmp_path)
    git_init(root)
    move_entry(root)
    pt.write_golden(root, pt.golden_for(root, [CID]), modes=("spec",), flavors=())
    _, new_sha, _ = pt.standin_output(root, CID)
    assert not (root / ".rocke-parity" / "objects" / f"{new_sha}.z").exists()
    capsys.readouterr()
    assert cli(root, "golden", "diff") == 0
    out = capsys.readouterr().out
    assert f"+{NEW_LINE}" in out and f"-{OLD_LINE}" in out


def test_a_merged_summary_reads_only_sha256_names_from_the_reports(tmp_path):
    """merge --summary looks the drifted texts up by the reports' sha256 values: one that is no
    sha256 (a hand-made report) is never a path into the cache."""
    from rocke_py.parity.judge.golden_update import stored_reviews
    from rocke_py.parity.store.objects import ObjectCache

    root = pt.make_tree(tmp_path / "t", {CID: {}})
    cache = ObjectCache(root)
    old, new = "a\nb\n", "a\nc\n"
    sha_old, sha_new = "1" * 64, "2" * 64
    cache.put(sha_old, old)
    cache.put(sha_new, new)
    review = stored_reviews(root)
    rec = {"golden": {"verdict": "emit", "sha256": sha_old}, "py": {"kind": "emitted", "sha256": sha_new}}
    assert "+c" in review(rec) and "-b" in review(rec)
    assert review({**rec, "golden": {"verdict": "emit", "sha256": "../../../etc/passwd"}}) == []
    assert review({**rec, "py": {"kind": "emitted", "sha256": sha_new + "\n"}}) == []
