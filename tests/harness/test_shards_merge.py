"""gate --shard I/N and merge: two shards plus merge are one full gate, and
merge refuses shards that are not one run's."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import standin_tree as pt
from cli_run import run_main
from layout import REPO

from rocke_py.parity.inputs.shards import Shard, partition
from rocke_py.parity.judge import lastrun

KEYS = ("spec", "ir", "ll.llvm20", "ll.llvm22", "ll.llvm23")

#: failures of several kinds, a known gap, a stale golden entry and a gap that matches nothing
BROKEN = {"wgrad/06-ll-differs": ("c_ll", "alt"), "fwd/00-crash": ("c_ir", "abort"), "fwd/01-gap": ("c_spec", "tail")}
TREE = {f"wgrad/0{i}-ok": {"standin": {"salt": str(i)}} for i in range(6)} | {"fwd/02-ok": {"standin": {"salt": "f"}}}
TREE |= {cid: {"standin": {key: how}} for cid, (key, how) in BROKEN.items()}


@pytest.fixture
def tree(tmp_path):
    root = pt.make_tree(tmp_path, TREE)
    golden = pt.golden_for(root, sorted(TREE), KEYS)
    golden["wgrad/99-gone"] = {"spec": ("0" * 64, 10, "")}  # stale: a run-level failure of the full run
    pt.write_golden(root, golden, modes=("spec", "ir", "ll"))
    spec = pt.standin_result(root, "fwd/01-gap")
    tail = pt.standin_result(root, "fwd/01-gap", side="c")
    import hashlib

    pt.write_gaps(
        root,
        [
            {
                "config": "fwd/01-gap",
                "mode": "spec",
                "flavor": "-",
                "status": "DIFFER",
                "reason": "staged",
                "py_sha256": hashlib.sha256(spec.text.encode()).hexdigest(),
                "c_sha256": hashlib.sha256(tail.text.encode()).hexdigest(),
            },
            {"config": "wgrad/00-ok", "mode": "ll", "flavor": "llvm20", "status": "DIFFER", "reason": "fixed long ago"}
            | {"py_sha256": "a" * 64, "c_sha256": "b" * 64},
        ],
    )
    return root


def cli(root, *args):
    return pt.run_cli(root, *args, modes="all_modes")


def outcome(doc) -> tuple:
    jobs = [(r["config"], r["mode"], r["flavor"], r["status"], r["passed"]) for r in doc["jobs"]]
    return jobs, sorted(doc["run_level_failures"]), doc["passed"]


def shards_and_merge(root, tmp_path, n: int, *extra: str):
    reports = []
    for i in range(1, n + 1):
        path = tmp_path / f"shard-{i}.json"
        done = cli(root, "gate", "--shard", f"{i}/{n}", "--json", str(path), *extra)
        assert done.returncode in (0, 1), done.stderr
        reports.append(str(path))
    merged = tmp_path / "merged.json"
    done = cli(root, "merge", *reports, "--json", str(merged), "--junit", str(tmp_path / "m.xml"))
    return done, json.loads(merged.read_text()) if merged.exists() else None, reports


def test_the_partition_is_deterministic_complete_and_balanced():
    units = [f"c{i:02d}" for i in range(40)]
    costs = [float((i * 37) % 11 + 1) for i in range(40)]
    for n in (1, 2, 3, 7):
        a = partition(units, costs, n)
        assert a == partition(list(reversed(units)), list(reversed(costs)), n)  # the order given does not matter
        assert sorted(a) == sorted(units) and set(a.values()) <= set(range(1, n + 1))
        loads = [sum(c for u, c in zip(units, costs) if a[u] == s) for s in range(1, n + 1)]
        assert max(loads) <= sum(costs) / n + max(costs)  # longest first: within one unit of the mean
    assert partition(["a", "b"], [1.0, 1.0], 3) == {"a": 1, "b": 2}  # a shard may get nothing


@pytest.mark.parametrize("text", ["0/2", "3/2", "1", "a/b", "1/0", "-1/2"])
def test_a_bad_shard_is_a_usage_error(text, tmp_path, capsys):
    with pytest.raises(ValueError):
        Shard.parse(text)
    root = pt.make_tree(tmp_path, {"wgrad/00-a": {}})
    # in process: a usage error starts no engine, so a child interpreter would only add its start-up
    done = run_main(capsys, ["gate", "--shard", text, "--root", str(root), "--engines", pt.engines_arg("all_modes")])
    assert done.code == 2 and "--shard" in done.err


def test_two_shards_and_merge_are_the_full_gate_with_failures(tree, tmp_path):
    full = cli(tree, "gate", "--json", str(tmp_path / "full.json"))
    full_doc = json.loads((tmp_path / "full.json").read_text())
    assert full.returncode == 1
    statuses = {r["status"] for r in full_doc["jobs"]}
    assert {"DIFFER", "CRASH", "KNOWN_GAP", "IDENTICAL"} <= statuses
    assert any("99-gone" in p for p in full_doc["run_level_failures"])
    assert any("no longer holds" in r.get("reason", "") for r in full_doc["jobs"])
    done, merged, reports = shards_and_merge(tree, tmp_path, 2)
    assert done.returncode == full.returncode
    assert outcome(merged) == outcome(full_doc)
    sizes = [len(json.loads(open(r).read())["jobs"]) for r in reports]
    assert all(sizes) and sum(sizes) == len(full_doc["jobs"])
    assert "merge FAILED" in done.stdout and "FAIL CRASH fwd/00-crash ir -" in done.stdout
    junit = (tmp_path / "m.xml").read_text()
    assert junit.count("<testcase") == len(full_doc["jobs"]) + len(full_doc["run_level_failures"])


def test_a_gap_that_matches_no_job_fails_the_merged_run_once(tmp_path):
    cids = [f"wgrad/0{i}-ok" for i in range(3)]
    root = pt.make_tree(tmp_path, {c: {"standin": {"salt": c}} for c in cids})
    pt.write_golden(root, pt.golden_for(root, cids, ("spec", "ir")), modes=("spec", "ir"))
    gap = {"config": cids[1], "mode": "ll", "flavor": "llvm22", "status": "DIFFER", "reason": "staged"}
    pt.write_gaps(root, [gap | {"py_sha256": "a" * 64, "c_sha256": "b" * 64}])

    def run(*args):
        return pt.run_cli(root, *args, modes="spec_ir_modes")

    full = run("gate", "--json", str(tmp_path / "full.json"))
    paths = [str(tmp_path / f"{i}.json") for i in (1, 2)]
    for i, path in enumerate(paths, 1):
        run("gate", "--shard", f"{i}/2", "--json", path)
    merged = run("merge", *paths, "--json", str(tmp_path / "m.json"))
    full_doc, merged_doc = (json.loads((tmp_path / n).read_text()) for n in ("full.json", "m.json"))
    assert full.returncode == merged.returncode == 1
    assert (
        [p for p in merged_doc["run_level_failures"] if "matches no job" in p]
        == [p for p in full_doc["run_level_failures"] if "matches no job" in p]
        != []
    )
    assert outcome(merged_doc) == outcome(full_doc)


def test_three_shards_of_a_passing_tree_pass(tmp_path):
    root = pt.make_tree(tmp_path, {f"wgrad/0{i}-ok": {"standin": {"salt": str(i)}} for i in range(4)})
    pt.write_golden(root, pt.golden_for(root, [f"wgrad/0{i}-ok" for i in range(4)], KEYS), modes=("spec", "ir", "ll"))
    done, merged, _ = shards_and_merge(root, tmp_path, 3)
    assert done.returncode == 0 and merged["passed"] and len(merged["jobs"]) == 20
    assert merged["partial"] is False and "merge PASSED" in done.stdout


def test_a_shard_run_keeps_the_recorded_seconds(tree, tmp_path):
    cli(tree, "gate")
    before = lastrun.job_seconds(lastrun.load(tree))
    cli(tree, "gate", "--shard", "1/2")
    assert lastrun.job_seconds(lastrun.load(tree)) == before  # the sibling shard partitions with the same costs


def test_merge_refuses_what_is_not_one_run(tree, tmp_path):
    _, _, (one, two) = shards_and_merge(tree, tmp_path, 2)

    def refused(*paths, want: str):
        done = cli(tree, "merge", *paths)
        assert done.returncode == 2 and want in done.stderr, done.stderr

    refused(one, want="missing shard(s) 2/2")
    refused(one, one, two, want="given twice")
    full = tmp_path / "full.json"
    cli(tree, "gate", "--json", str(full))
    refused(str(full), want="not a shard's report")
    refused(str(tmp_path / "nope.json"), want="cannot read")
    other = tmp_path / "other.json"
    cli(tree, "gate", "--shard", "1/3", "--json", str(other))
    refused(str(other), two, want="one of 3")
    # one tree, another selection
    narrow = tmp_path / "narrow.json"
    cli(tree, "gate", "--shard", "2/2", "--family", "fwd", "--json", str(narrow))
    refused(one, str(narrow), want="the same jobs")
    # another tree: a config changed between the shards
    (tree / "parity_configs" / "fwd" / "02-ok.toml").write_text(pt.config_text(standin={"salt": "g"}))
    moved = tmp_path / "moved.json"
    cli(tree, "gate", "--shard", "2/2", "--json", str(moved))
    refused(one, str(moved), want="not of one tree: the config set differs")
    # a forged report: a job of shard 1 in shard 2's report
    doc1, doc2 = json.loads(open(one).read()), json.loads(open(two).read())
    doc2["jobs"].append(doc1["jobs"][0])
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(doc2))
    refused(one, str(forged), want="overlap")
    doc2["jobs"] = doc2["jobs"][:-2]
    forged.write_text(json.dumps(doc2))
    refused(one, str(forged), want="in no report")


def test_two_shards_and_merge_are_the_full_gate_on_the_real_configs(tmp_path):
    """The shipped tree, both real engines: the same jobs, statuses and exit status."""

    def gate(*args):
        return subprocess.run(
            [sys.executable, "-m", "rocke_py.parity", "gate", "-j", "2", "--root", str(REPO), *args],
            capture_output=True,
            text=True,
            timeout=600,
        )

    full = gate("--json", str(tmp_path / "full.json"))
    reports = [str(tmp_path / f"{i}.json") for i in (1, 2)]
    shards = [gate("--shard", f"{i}/2", "--json", reports[i - 1]) for i in (1, 2)]
    merged = subprocess.run(
        [sys.executable, "-m", "rocke_py.parity", "merge", *reports, "--json", str(tmp_path / "m.json")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert full.returncode == merged.returncode == 0, merged.stderr
    assert all(s.returncode == 0 for s in shards)
    full_doc, merged_doc = (json.loads((tmp_path / n).read_text()) for n in ("full.json", "m.json"))
    assert outcome(merged_doc) == outcome(full_doc)
