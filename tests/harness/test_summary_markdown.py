"""gate --summary / merge --summary with --base-golden: the Markdown a reviewer
reads in $GITHUB_STEP_SUMMARY."""

from __future__ import annotations

import json

import pytest
import standin_tree as pt

from rocke_py.parity.judge import golden as golden_mod
from rocke_py.parity.report.summary import golden_changes

TREE = {
    "wgrad/00-ok": {},
    "wgrad/01-ll-differs": {"standin": {"c_ll_llvm22": "alt"}},
    "wgrad/02-drift": {"standin": {"salt": "2"}},
    "fwd/00-crash": {"standin": {"c_spec": "segv"}},
}
KEYS = ("spec", "ir", "ll.llvm22")


@pytest.fixture
def tree(tmp_path):
    root = pt.make_tree(tmp_path, TREE)
    golden = pt.golden_for(root, sorted(TREE), KEYS)
    sha, size, name = golden["wgrad/02-drift"]["spec"]
    base = {c: dict(e) for c, e in golden.items()}
    golden["wgrad/02-drift"]["spec"] = ("1" * 64, size - 7, name)  # the run moves it by +7 bytes
    pt.write_golden(root, golden, modes=("spec", "ir", "ll"), flavors=("llvm22",))
    base["wgrad/02-drift"]["spec"] = ("2" * 64, size - 20, name)  # the base branch had another entry
    del base["fwd/00-crash"]["spec"]  # ... and no entry for this job
    (tmp_path / "base" / "parity_configs").mkdir(parents=True)
    pt.write_golden(tmp_path / "base", base, modes=("spec", "ir", "ll"), flavors=("llvm22",))
    return root


def gate(root, *args):
    return pt.run_cli(root, "gate", "--flavor", "llvm22", *args, modes="all_modes")


def test_the_summary_has_counts_failures_with_repro_moved_entries_and_the_base(tree, tmp_path):
    out = tmp_path / "summary.md"
    base = tmp_path / "base" / "parity_configs" / "golden.json"
    done = gate(tree, "--summary", str(out), "--base-golden", str(base))
    assert done.returncode == 1
    md = out.read_text()
    assert md.startswith("## rocke-parity gate: FAILED")
    assert "| family | IDENTICAL |" in md and "| total |" in md
    # each failure cause with its first divergent lines and repro commands
    assert "`DIFFER` wgrad/01-ll-differs ll.llvm22" in md and "first divergent line: 5" in md
    assert "rocke-parity diff wgrad/01-ll-differs --mode ll --flavor llvm22" in md
    assert "rocke-emit parity_configs/wgrad/01-ll-differs.toml --mode ll --flavor llvm22" in md
    assert "`CRASH` fwd/00-crash spec" in md and "Segmentation fault" in md
    # the entry this run moved, with its byte delta
    assert "### Golden entries this run moved: 1" in md
    assert [ln for ln in md.splitlines() if ln.startswith("| `wgrad/02-drift spec` | GOLDEN_DRIFT")][0].endswith(
        "| +7 |"
    )
    # against the base manifest: one entry moved (+13 bytes), one added
    assert "### golden.json against the base" in md
    assert "2 entries changed (1 added, 1 bytes moved)" in md
    assert "| `wgrad/02-drift` spec | bytes moved |" in md and "| `fwd/00-crash` spec | added |" in md


def test_a_passing_run_and_the_option_checks(tmp_path):
    root = pt.make_tree(tmp_path, {"wgrad/00-ok": {}})
    pt.write_golden(root, pt.golden_for(root, ["wgrad/00-ok"], KEYS), modes=("spec", "ir", "ll"), flavors=("llvm22",))
    done = gate(root, "--summary", "-")
    assert done.returncode == 0 and done.stdout.startswith("## rocke-parity gate: PASSED")
    assert "### Failures" not in done.stdout and "gate PASSED" in done.stderr
    assert gate(root, "--base-golden", "x.json").returncode == 2  # without --summary
    bad = gate(root, "--summary", str(tmp_path / "s.md"), "--base-golden", str(tmp_path / "none.json"))
    assert bad.returncode == 2 and "--base-golden" in bad.stderr and not (tmp_path / "s.md").exists()


def test_merge_summary_is_the_merged_run(tree, tmp_path):
    paths = [str(tmp_path / f"{i}.json") for i in (1, 2)]
    for i, path in enumerate(paths, 1):
        gate(tree, "--shard", f"{i}/2", "--json", path)
    out = tmp_path / "merged.md"
    base = tmp_path / "base" / "parity_configs" / "golden.json"
    done = pt.run_cli(tree, "merge", *paths, "--summary", str(out), "--base-golden", str(base))
    assert done.returncode == 1
    md = out.read_text()
    assert md.startswith("## rocke-parity merge of 2 shards: FAILED")
    full = tmp_path / "full.md"
    gate(tree, "--summary", str(full))

    # the same failures, counts and moved entries as one full gate (the heads differ: gate / merge)
    def body(text: str) -> str:  # from the counts to the moved entries (the notes differ: one run or two)
        text = text.split("### Counts by family and status", 1)[1]
        return text.split("### golden.json against")[0].split("\nnotes:")[0].strip()

    assert body(md) == body(full.read_text())
    assert json.loads(open(paths[0]).read())["shard"]["count"] == 2


def test_golden_changes_between_two_manifests():
    e = golden_mod.GoldenEntry
    base = golden_mod.Manifest({"a": {"spec": e.emitted("1" * 64, 10, ""), "ir": e.rejected("X", "m")}})
    now = golden_mod.Manifest({"a": {"spec": e.emitted("2" * 64, 15, ""), "ir": e.emitted("3" * 64, 4, "")}})
    rows = golden_changes(base, now)
    assert rows == [
        ["`a ir`", "verdict changed", "reject X", "4 bytes", "+4"],
        ["`a spec`", "bytes moved", "10 bytes", "15 bytes", "+5"],
    ]
    assert golden_changes(now, now) == []
