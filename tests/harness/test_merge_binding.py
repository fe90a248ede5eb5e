"""merge binds to one tree and trusts nothing in a report: real shard reports of a passing
stand-in tree, made once, then one fault per test injected by editing their JSON (or by running
a shard on a tree that differs only in a judging file). Every fault is refused (exit 2, one line
naming the file and what is wrong, never a traceback) or fails the merged run (exit 1) — never
a PASSED."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import standin_tree as pt

CIDS = [f"wgrad/0{i}-ok" for i in range(4)] + ["fwd/00-ok", "fwd/01-ok"]
MODES = "spec_ir_modes"


@dataclass(frozen=True)
class Shards:
    root: Path
    reports: tuple[Path, Path]  # shard 1/2 and 2/2 of the tree as it is
    golden_moved: Path  # shard 2/2 of the tree with golden.json's bytes changed (not its entries)
    gaps_moved: Path  # shard 2/2 of the tree with a comment added to known_gaps.toml


def _gate_shard(root: Path, index: int, dest: Path) -> Path:
    done = pt.run_cli(root, "gate", "--shard", f"{index}/2", "--json", str(dest), modes=MODES)
    assert done.returncode == 0, done.stdout + done.stderr
    return dest


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> Shards:
    base = tmp_path_factory.mktemp("binding")
    root = pt.make_tree(base / "tree", {c: {"standin": {"salt": c}} for c in CIDS})
    golden = pt.write_golden(root, pt.golden_for(root, CIDS, ("spec", "ir")), modes=("spec", "ir"))
    pt.write_gaps(root, [])
    reports = (_gate_shard(root, 1, base / "shard-1.json"), _gate_shard(root, 2, base / "shard-2.json"))
    # the same entries in other bytes: every verdict is the same, the tree is not
    text = golden.read_text()
    golden.write_text(json.dumps(json.loads(text), indent=4) + "\n")
    golden_moved = _gate_shard(root, 2, base / "golden-moved-2.json")
    golden.write_text(text)
    gaps = root / "parity_configs" / "known_gaps.toml"
    kept = gaps.read_text()
    gaps.write_text(kept + "# an edit between the shards\n")
    gaps_moved = _gate_shard(root, 2, base / "gaps-moved-2.json")
    gaps.write_text(kept)
    return Shards(root, reports, golden_moved, gaps_moved)


@dataclass(frozen=True)
class Done:
    returncode: int
    stdout: str
    stderr: str


def merge_args(paths: tuple[Path, ...], out: Path | None) -> list[str]:
    return ["merge", *map(str, paths), *(("--json", str(out)) if out is not None else ())]


def merge_process(shards: Shards, *paths: Path, out: Path | None = None) -> Done:
    """``rocke-parity merge`` as a program: what a CI job sees, a traceback included."""
    done = pt.run_cli(shards.root, *merge_args(paths, out), modes=MODES)
    return Done(done.returncode, done.stdout, done.stderr)


@pytest.fixture
def merge(capsys):
    """``rocke-parity merge`` in this process (an interpreter start per case would be most of
    this file's time); an exception escaping it fails the test as a traceback would."""
    from rocke_py.parity.cli import main

    def run(shards: Shards, *paths: Path, out: Path | None = None) -> Done:
        capsys.readouterr()
        status = main([*merge_args(paths, out), "--root", str(shards.root)])
        captured = capsys.readouterr()
        return Done(status, captured.out, captured.err)

    return run


def docs_of(shards: Shards) -> list[dict]:
    return [json.loads(p.read_text()) for p in shards.reports]


def write(tmp_path: Path, docs: list[object]) -> list[Path]:
    paths = []
    for i, doc in enumerate(docs, 1):
        path = tmp_path / f"shard-{i}.json"
        path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
        paths.append(path)
    return paths


def edited(shards: Shards, tmp_path: Path, edit: Callable[[list[dict]], None]) -> list[Path]:
    docs = docs_of(shards)
    edit(docs)
    return write(tmp_path, docs)


def assert_refused(done: Done, *names: str) -> str:
    """Exit 2 with one line on stderr naming ``names``, and no traceback anywhere."""
    text = done.stderr.strip()
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert "\n" not in text and text.startswith("rocke-parity merge: refused: "), text
    for name in names:
        assert name in text, text
    return text


def test_the_shards_as_written_merge_and_pass(shards):
    done = merge_process(shards, *shards.reports)
    assert done.returncode == 0 and "merge PASSED" in done.stdout, done.stdout + done.stderr


# ----------------------------------------------------------------------------- one tree


@pytest.mark.parametrize(
    "field, value, want",
    [
        ("golden_sha256", "1f2e" * 16, "golden.json differs (1f2e1f2e1f2e… vs "),
        ("known_gaps_sha256", "ab" * 32, "known_gaps.toml differs (abababababab… vs "),
        ("configs_sha256", "cd" * 32, "the config set differs (cdcdcdcdcdcd… vs "),
        ("commit", "0123456789abcdef0123456789abcdef01234567", "the commit differs (0123456789ab"),
        (
            "dirty",
            [" M rocke_py/parity/judge/gate.py"],
            "the uncommitted changes differ ( M rocke_py/parity/judge/gate.py vs ",
        ),
    ],
    ids=["golden", "known-gaps", "configs", "commit", "dirty"],
)
def test_shards_of_two_trees_are_refused_naming_the_difference(merge, shards, tmp_path, field, value, want):
    def edit(docs):
        docs[1]["summary"]["tree"][field] = value

    one, two = edited(shards, tmp_path, edit)
    assert_refused(merge(shards, one, two), f"{two} and {one} are not of one tree: {want}")


def test_the_first_difference_is_named_in_the_fingerprints_order(merge, shards, tmp_path):
    def edit(docs):
        docs[1]["summary"]["tree"] |= {"configs_sha256": "cd" * 32, "known_gaps_sha256": "ab" * 32, "dirty": ["?? x"]}

    one, two = edited(shards, tmp_path, edit)
    assert_refused(merge(shards, one, two), "not of one tree: known_gaps.toml differs")


@pytest.mark.parametrize(
    "moved, want", [("golden_moved", "golden.json differs"), ("gaps_moved", "known_gaps.toml differs")]
)
def test_a_shard_of_a_tree_whose_judging_file_changed_is_refused(shards, moved, want):
    """Real runs: shard 2 ran after golden.json (or known_gaps.toml) changed, every verdict alike."""
    one, two = shards.reports[0], getattr(shards, moved)
    assert_refused(merge_process(shards, one, two), f"{two} and {one} are not of one tree: {want}")


@pytest.mark.parametrize("side", ["py", "c"])
def test_shards_of_other_engine_builds_are_refused_naming_the_side(merge, shards, tmp_path, side):
    def edit(docs):
        docs[1]["summary"]["engines"][side]["build_id"] = "0badc0de0badc0de"

    one, two = edited(shards, tmp_path, edit)
    assert_refused(merge(shards, one, two), f"the {side} engine differs (build id 0badc0de0badc0de vs ")


@pytest.mark.parametrize(
    "drop, want",
    [(("summary", "tree"), "no tree fingerprint (summary.tree)"), (("shard", "config_sha256"), "shard.config_sha256")],
    ids=["no-tree", "no-config-hashes"],
)
def test_a_report_of_an_older_version_is_refused_with_what_to_do(merge, shards, tmp_path, drop, want):
    def edit(docs):
        del docs[0][drop[0]][drop[1]]

    one, two = edited(shards, tmp_path, edit)
    assert_refused(merge(shards, one, two), str(one), want, "re-run the shard with this version")


# ----------------------------------------------------------------------------- edited reports


def _hide_last_job(docs):
    """The last job taken out of the job list of both reports and its record out of its shard's."""
    last = docs[0]["shard"]["all_jobs"][-1]
    for doc in docs:
        doc["shard"]["all_jobs"] = doc["shard"]["all_jobs"][:-1]
        doc["shard"]["jobs_total"] -= 1
        doc["jobs"] = [r for r in doc["jobs"] if [r["config"], r["mode"]] != last]


def _rename_a_job(docs):
    docs[0]["shard"]["all_jobs"][0][1] = "ll.llvm22"


def _move_a_config(docs):
    """A config moved to the other shard, in both reports' assignment and with its records."""
    cfg, n = next(iter(docs[0]["shard"]["assignment"].items()))
    for doc in docs:
        doc["shard"]["assignment"][cfg] = 3 - n
    src, dst = docs[n - 1], docs[2 - n]
    dst["jobs"] += [r for r in src["jobs"] if r["config"] == cfg]
    src["jobs"] = [r for r in src["jobs"] if r["config"] != cfg]


def _claim_the_jobs_were_not_run(docs):
    """More jobs said not run (--maxfail) than shard 2 has beside the records it holds."""
    docs[1]["not_run"] = 10**6


@pytest.mark.parametrize(
    "edit, want",
    [
        (_hide_last_job, "shard.all_jobs and shard.config_sha256 do not match shard.job_list_sha256"),
        (_rename_a_job, "do not match shard.job_list_sha256"),
        (_move_a_config, "shard.assignment does not match shard.partition_sha256"),
        (_claim_the_jobs_were_not_run, "says it did not run 1000000"),
    ],
    ids=["job-hidden", "job-renamed", "config-moved", "not-run-inflated"],
)
def test_an_edited_report_is_refused_as_tampered(merge, shards, tmp_path, edit, want):
    paths = edited(shards, tmp_path, edit)
    assert_refused(merge(shards, *paths), "tampered or corrupt report", want)


# ----------------------------------------------------------------------------- statuses


def _one_record(docs, **fields):
    docs[0]["jobs"][0] |= fields
    return docs[0]["jobs"][0]


def test_an_unknown_status_fails_its_job_and_is_counted(shards, tmp_path):
    edit = lambda docs: _one_record(docs, status="TOTALLY_FINE", passed=True)  # noqa: E731
    paths = edited(shards, tmp_path, edit)
    out = tmp_path / "merged.json"
    done = merge_process(shards, *paths, out=out)
    assert done.returncode == 1 and "merge FAILED: 1 of" in done.stdout, done.stdout + done.stderr
    assert "FAIL UNKNOWN_STATUS" in done.stdout and "TOTALLY_FINE" in done.stdout
    doc = json.loads(out.read_text())
    bad = [r for r in doc["jobs"] if not r["passed"]]
    assert [(r["status"], r["reported_status"]) for r in bad] == [("UNKNOWN_STATUS", "TOTALLY_FINE")]
    assert doc["summary"]["failed"] == 1 and doc["counts"]["UNKNOWN_STATUS"] == 1
    assert sum(doc["counts"].values()) == len(doc["jobs"]) == doc["summary"]["jobs"]  # nothing vanished
    assert not doc["passed"] and not doc["summary"]["passed"]


@pytest.mark.parametrize(
    "fields",
    [
        {"status": "DIFFER", "passed": True},
        {"status": "CRASH", "passed": True},
        {"status": "KNOWN_GAP", "passed": True},  # a gap that known_gaps.toml does not vouch for
        {"known_gap": {"status": "DIFFER", "reason": "fixed", "holds": False}, "passed": True},  # a stale gap
    ],
    ids=["differ", "crash", "unvouched-gap", "stale-gap"],
)
def test_a_record_that_says_passed_is_judged_by_its_status(merge, shards, tmp_path, fields):
    rec: dict = {}

    def edit(docs):
        rec.update(_one_record(docs, **fields))

    paths = edited(shards, tmp_path, edit)
    out = tmp_path / "merged.json"
    done = merge(shards, *paths, out=out)
    assert done.returncode == 1 and "merge FAILED: 1 of" in done.stdout, done.stdout + done.stderr
    assert "says passed: true, which its status contradicts" in done.stdout  # on the failure's line
    doc = json.loads(out.read_text())
    assert doc["summary"]["failed"] == 1 and not doc["passed"]
    assert any("say 'passed' against their status" in n and rec["config"] in n for n in doc["notes"])


def test_a_record_that_says_failed_is_judged_by_its_status_and_noted(merge, shards, tmp_path):
    paths = edited(shards, tmp_path, lambda docs: _one_record(docs, passed=False))
    done = merge(shards, *paths)
    assert done.returncode == 0 and "merge PASSED" in done.stdout, done.stdout + done.stderr
    assert "note: " in done.stdout and "say 'passed' against their status" in done.stdout


# ----------------------------------------------------------------------------- malformed reports


def _set(path: str, value: object) -> Callable[[list[dict]], None]:
    """An edit that sets (or, for ``...``, deletes) the field at ``path`` (dots, list indices) of
    the first report."""

    def edit(docs):
        *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
        node = docs[0]
        for p in parents:
            node = node[p]
        if value is ...:
            del node[last]
        else:
            node[last] = value

    return edit


def _nested(depth: int) -> object:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


MALFORMED = {
    "jobs-a-string": (_set("jobs", "IDENTICAL"), "jobs is a string, not a list"),
    "record-a-list": (_set("jobs.0", ["wgrad/00-ok", "spec"]), "jobs[0] is a list, not an object"),
    "record-without-config": (_set("jobs.0.config", ...), "jobs[0].config is missing"),
    "status-a-number": (_set("jobs.0.status", 7), "jobs[0].status is a number, not a string"),
    "index-a-string": (_set("shard.index", "1"), "shard.index is a string, not an integer"),
    "count-missing": (_set("shard.count", ...), "shard.count is missing"),
    "count-huge": (_set("shard.count", 10**30), "an integer out of range"),
    "all-jobs-not-pairs": (_set("shard.all_jobs.0", ["wgrad/00-ok"]), "shard.all_jobs[0] has 1 item(s)"),
    "assignment-a-list": (_set("shard.assignment", [1, 2]), "shard.assignment is a list, not an object"),
    "summary-missing": (_set("summary", ...), "summary is missing"),
    "engines-a-string": (_set("summary.engines", "same"), "summary.engines is a string, not an object"),
    "wall-a-string": (_set("wall_seconds", "fast"), "wall_seconds is a string, not a number"),
    "not-run-negative": (_set("not_run", -1), "cannot be negative"),
    "durations-strings": (_set("jobs.0.durations", {"py": ["0.1s"]}), "jobs[0].durations.py[0] is a string"),
    "nested-field": (_set("coverage", {"deep": _nested(200)}), "nested more than 32 levels deep"),
    "surrogate": (_set("jobs.0.config", "\ud800"), "not Unicode text"),
    "nan": (_set("wall_seconds", float("nan")), "not finite"),
}


#: Run as a program: a failure's text would hold the lone surrogate, which xdist cannot send.
IN_A_PROCESS = {"surrogate"}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_a_malformed_report_is_one_line_naming_the_file_and_the_field(merge, shards, tmp_path, name):
    edit, want = MALFORMED[name]
    one, two = edited(shards, tmp_path, edit)
    done = (merge_process if name in IN_A_PROCESS else merge)(shards, one, two)
    assert_refused(done, f"{one} is a malformed report: ", want)


@pytest.mark.parametrize(
    "text, want",
    [
        ("[" * 100000 + "]" * 100000, "nested too deeply"),
        ("[]", "not a rocke-parity report"),
        ("not json", "not a JSON report"),
    ],
    ids=["deep-arrays", "a-list", "not-json"],
)
def test_a_file_that_is_no_report_is_one_line(shards, tmp_path, text, want):
    one, two = write(tmp_path, [text, json.loads(shards.reports[1].read_text())])
    assert_refused(merge_process(shards, one, two), str(one), want)
