"""``rocke-parity merge REPORT.json...``: the JSON reports of ``gate --shard I/N`` as one run.

The merged report is what one full gate would have reported: every job of the whole selection
in the gate's order, its status as its shard judged it (a config's jobs all run in one shard,
so "one verdict per config" and the kernel names are judged there), and the run-level
failures of every shard once each.

A report is a file anyone can edit, so merge trusts nothing in it that it can check:

- Shards that cannot make one run are refused (:class:`MergeError`, exit 2, one line): a
  report that is not a shard's, two reports for one shard, a missing shard, shards of different
  selections or partitions, shards of different trees (``summary.tree``, compared field by field
  in the order of :data:`rocke_py.parity.run.tree.FINGERPRINT_FIELDS`) or engines (the build ids of
  ``summary.engines``), or a report whose jobs are not its shard's.
- A report written before reports carried their tree (``summary.tree``) and each config's
  sha256 (``shard.config_sha256``) is refused: it cannot be bound to a tree.
- Each report's job list and partition are recomputed with the gate's own functions
  (:func:`rocke_py.parity.inputs.shards.job_list_sha256`, :func:`~rocke_py.parity.inputs.shards.partition_sha256`)
  and compared with the hashes it records: a mismatch is a tampered or corrupt report.
- A malformed report (not JSON, nested too deeply, a key twice in one object, a field of the
  wrong type or out of range) is refused, naming the file and the field; the document is
  checked against the small schema of :mod:`report_shape` before anything reads it.
- A job passes or fails as the gate judges it: by its ``status``
  (:func:`rocke_py.parity.judge.compare.passes`) and, for a job known_gaps.toml lists, by whether the
  gap holds (:func:`passes_as_gate`); the record's own ``passed`` is never believed (a
  disagreement is noted). A status outside the closed set fails its job, which is reported and
  counted as ``UNKNOWN_STATUS`` (its report's word kept as ``reported_status``): a made-up
  status can neither pass nor vanish from the counts.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from rocke_py.parity.inputs.shards import job_list_sha256, partition_sha256
from rocke_py.parity.judge.compare import Status, passes
from rocke_py.parity.report.report import JSON_SCHEMA
from rocke_py.parity.report.report_shape import REPORT_SHAPE, Malformed, check_leaves, check_shape, show
from rocke_py.parity.report.terminal import job_label
from rocke_py.parity.run import tree
from rocke_py.parity.store.fileio import loads_json, read_data_file

#: What every shard of one run must agree on, beside the fingerprints.
_SAME = ("modes", "flavors", "coverage", "timeout_seconds", "engines")
#: The status a merged record gets when its report's status is outside the closed set.
UNKNOWN_STATUS = "UNKNOWN_STATUS"
_KNOWN_STATUSES = frozenset(s.value for s in Status)
_RERUN = "re-run the shard with this version of rocke-parity"


class MergeError(Exception):
    """The reports cannot be merged into one run (exit 2)."""


class _Tampered(Exception):
    """A report whose recorded hashes do not match what it holds."""


# ----------------------------------------------------------------------------- one report


def _parse(path: str) -> object:
    """The report's JSON document: a key twice in one object is refused (json would keep the
    last, a reader of the file sees the first); numbers are checked by :func:`report_shape.check_leaves`."""
    try:
        return loads_json(read_data_file(Path(path)), unique=True, finite=False)
    except OSError as e:
        raise MergeError(f"cannot read {path}: {e.strerror or e}") from None
    except ValueError as e:
        raise MergeError(f"{path} is not a JSON report: {show(str(e), 200)}") from None


def _refuse_old(path: str, doc: dict) -> None:
    """A report without what binds it to a tree is refused with what to do, not as malformed."""
    summary = doc.get("summary")
    if isinstance(summary, dict) and "tree" not in summary:
        raise MergeError(f"{path} carries no tree fingerprint (summary.tree), an older report: {_RERUN}")
    if "config_sha256" not in doc["shard"]:
        raise MergeError(f"{path} records no config hashes (shard.config_sha256), an older report: {_RERUN}")


def _check_ranges(doc: dict) -> None:
    """What the schema's kinds do not say: the numbers' ranges and the job list's shape."""
    sh = doc["shard"]
    count, index = sh["count"], sh["index"]
    if count < 1 or not 1 <= index <= count:
        raise Malformed(f"shard is {index}/{count}: I must be between 1 and N")
    for i, job in enumerate(sh["all_jobs"]):
        if len(job) != 2:
            raise Malformed(f"shard.all_jobs[{i}] has {len(job)} item(s), not a config and a job")
    for config, n in sh["assignment"].items():
        if not 1 <= n <= count:
            raise Malformed(f"shard.assignment.{show(config, 40)} is {n}, not a shard of 1..{count}")
    if sh["partial"] is True:
        raise Malformed("shard.partial is true, not a note or false")
    if doc["not_run"] < 0 or doc["wall_seconds"] < 0 or (doc["timeout_seconds"] or 0) < 0:
        raise Malformed("not_run, wall_seconds and timeout_seconds cannot be negative")


def _check_hashes(sh: dict) -> None:
    """The job list and the partition, recomputed as the gate computes them, against the hashes
    recorded beside them: a report edited by hand (a job dropped, a config moved) is told."""
    jobs = [(c, k) for c, k in sh["all_jobs"]]
    if sh["jobs_total"] != len(jobs):
        raise _Tampered(f"shard.jobs_total is {sh['jobs_total']}, shard.all_jobs holds {len(jobs)}")
    if len(set(jobs)) != len(jobs):
        raise _Tampered("shard.all_jobs names a job twice")
    configs = {c for c, _ in jobs}
    if set(sh["config_sha256"]) != configs:
        raise _Tampered("shard.config_sha256 does not name the configs of shard.all_jobs")
    if job_list_sha256(jobs, sh["config_sha256"]) != sh["job_list_sha256"]:
        raise _Tampered("shard.all_jobs and shard.config_sha256 do not match shard.job_list_sha256")
    if set(sh["assignment"]) != configs:
        raise _Tampered("shard.assignment does not name the configs of shard.all_jobs")
    if partition_sha256(jobs, sh["assignment"], sh["count"]) != sh["partition_sha256"]:
        raise _Tampered("shard.assignment does not match shard.partition_sha256")


def load_report(path: str) -> dict:
    """A shard's report, checked on its own: a JSON document of the report's schema whose recorded
    hashes match what it holds. MergeError (one line, naming ``path``) otherwise."""
    doc = _parse(path)
    if not isinstance(doc, dict) or doc.get("schema") != JSON_SCHEMA:
        raise MergeError(f"{path} is not a rocke-parity report (schema {JSON_SCHEMA})")
    if not isinstance(doc.get("shard"), dict):
        raise MergeError(f"{path} is not a shard's report: write them with gate --shard I/N --json FILE")
    try:
        check_leaves(doc)
        _refuse_old(path, doc)
        check_shape(doc, REPORT_SHAPE)
        _check_ranges(doc)
        _check_hashes(doc["shard"])
    except Malformed as e:
        raise MergeError(f"{path} is a malformed report: {e}") from None
    except _Tampered as e:
        raise MergeError(f"{path} is a tampered or corrupt report: {e}") from None
    return doc


# ----------------------------------------------------------------------------- one tree, one run

_TREE_LABELS = {
    "commit": "the commit",
    "golden_sha256": tree.GOLDEN_FILE,
    "known_gaps_sha256": tree.GAPS_FILE,
    "configs_sha256": "the config set",
    "dirty": "the uncommitted changes",
    "dirty_more": "the number of further uncommitted changes",
}


def _dirty_difference(mine: list[str], theirs: list[str]) -> str:
    """The first entry where the two (sorted) lists of uncommitted changes part."""
    i = next(i for i in range(max(len(mine), len(theirs)) + 1) if mine[i : i + 1] != theirs[i : i + 1])
    a, b = (show(x[i], 60) if i < len(x) else "nothing" for x in (mine, theirs))
    hint = ""
    if any(x.startswith("??") for x in (a, b)):
        under = ", ".join(tree.UNDER_REVIEW)
        hint = f"; an untracked file under {under} makes the tree dirty"
    return f"{_TREE_LABELS['dirty']} differ ({a} vs {b}){hint}"


def _commit_base(commit: str | None) -> str | None:
    return commit.removesuffix("+dirty") if commit else commit


def tree_difference(mine: dict, theirs: dict) -> str | None:
    """The first field (in FINGERPRINT_FIELDS' order) where two tree fingerprints differ, as text;
    None when they are equal. The commit is compared without its ``+dirty`` first, so that a
    dirty tree is named by what is dirty."""
    for key in tree.FINGERPRINT_FIELDS:
        a, b = mine.get(key), theirs.get(key)
        if key == "commit":
            a, b = _commit_base(a), _commit_base(b)  # type: ignore[arg-type]
        if a == b:
            continue
        if key == "dirty":
            return _dirty_difference(a, b)  # type: ignore[arg-type]
        limit = 48 if key == "commit" else 12
        return f"{_TREE_LABELS.get(key, key)} differs ({show(a, limit)} vs {show(b, limit)})"
    # what is left: a ``+dirty`` alone (a report edited by hand) or a field beyond FINGERPRINT_FIELDS
    for key in ("commit", *sorted(set(mine) | set(theirs))):
        if mine.get(key) != theirs.get(key):
            return f"summary.tree.{show(key, 40)} differs ({show(mine.get(key), 48)} vs {show(theirs.get(key), 48)})"
    return None


def engine_difference(mine: dict, theirs: dict) -> str | None:
    """Which engine differs between two reports' ``summary.engines``, as text; None when none."""
    for side in ("py", "c"):
        for key, what in (("build_id", "build id"), ("emit", "entry point")):
            a, b = mine[side][key], theirs[side][key]
            if a != b:
                return f"the {side} engine differs ({what} {show(a, 60)} vs {show(b, 60)})"
    return None


def check_one_tree(paths: list[str], docs: list[dict]) -> None:
    """Every report is of the first one's tree and engines."""
    head = docs[0]["summary"]
    for path, doc in zip(paths[1:], docs[1:]):
        diff = tree_difference(doc["summary"]["tree"], head["tree"])
        if diff:
            raise MergeError(f"{path} and {paths[0]} are not of one tree: {diff}")
        diff = engine_difference(doc["summary"]["engines"], head["engines"])
        if diff:
            raise MergeError(f"{path} and {paths[0]} ran different engines: {diff}")


def check_shards(paths: list[str], docs: list[dict]) -> int:
    """Refuse what is not one run's complete set of shards; returns N."""
    check_one_tree(paths, docs)
    first = docs[0]["shard"]
    count = first["count"]
    seen: dict[int, str] = {}
    for path, doc in zip(paths, docs):
        sh = doc["shard"]
        if sh["count"] != count:
            raise MergeError(f"{path} is shard {sh['index']}/{sh['count']}, {paths[0]} is one of {count}")
        if sh["index"] in seen:
            raise MergeError(f"shard {sh['index']}/{count} is given twice: {seen[sh['index']]} and {path}")
        seen[sh["index"]] = path
        for key, what in (
            ("job_list_sha256", "the same jobs (another tree, selection or config bytes)"),
            ("partition_sha256", "the same partition (other recorded costs: run every shard from one state)"),
        ):
            if sh[key] != first[key]:
                raise MergeError(f"{path} and {paths[0]} do not shard {what}")
        for key in _SAME:
            if doc[key] != docs[0][key]:
                raise MergeError(f"{path} and {paths[0]} differ in {key}: they are not shards of one run")
    # the first few only: N comes from a report, and a huge one must not make a huge list
    missing = [i for i in range(1, count + 1) if i not in seen][:10] if len(seen) < count else []
    if missing:
        more = " and more" if count - len(seen) > len(missing) else ""
        raise MergeError(f"missing shard(s) {', '.join(f'{i}/{count}' for i in missing)}{more}: every shard is needed")
    return count


def _key(rec: dict) -> tuple[str, str]:
    return rec["config"], rec["mode"] if rec["flavor"] == "-" else f"{rec['mode']}.{rec['flavor']}"


def check_jobs(paths: list[str], docs: list[dict]) -> dict[tuple[str, str], tuple[dict, str]]:
    """Each report holds jobs of its own shard only, no job twice, and every job of its shard
    (or says it did not run it); returns each record and its report's path by (config, key)."""
    sh0 = docs[0]["shard"]
    assignment = sh0["assignment"]
    selection = {tuple(j) for j in sh0["all_jobs"]}
    out: dict[tuple[str, str], tuple[dict, str]] = {}
    for path, doc in zip(paths, docs):
        index = doc["shard"]["index"]
        for rec in doc["jobs"]:
            key = _key(rec)
            label = f"{show(key[0], 80)} {show(key[1], 40)}"
            if key in out:
                raise MergeError(f"{label} is in {out[key][1]} and in {path}: the shards overlap")
            if key not in selection:
                raise MergeError(f"{path} holds {label}, which is not a job of the shards' selection")
            if assignment.get(rec["config"]) != index:
                raise MergeError(f"{path} (shard {index}) holds {label}, which is not its shard's")
            out[key] = (rec, path)
        _check_accounting(path, doc, sum(assignment[c] == index for c, _ in sh0["all_jobs"]))
    return out


def _check_accounting(path: str, doc: dict, owned: int) -> None:
    """A shard's records and the jobs it says it did not run (--maxfail) are its jobs, exactly."""
    index, held, not_run = doc["shard"]["index"], len(doc["jobs"]), doc["not_run"]
    if held + not_run < owned:
        raise MergeError(
            f"{owned - held - not_run} job(s) of shard {index} are in no report: {path} holds {held} of its "
            f"{owned} and says it did not run {not_run}"
        )
    if held + not_run > owned:
        raise MergeError(
            f"{path} is a tampered or corrupt report: it holds {held} job(s) and says it did not run {not_run}, "
            f"but shard {index} has {owned}"
        )


# ----------------------------------------------------------------------------- judging the jobs


def passes_as_gate(rec: dict) -> bool:
    """Whether the gate passes this record, from its status and, for a job that known_gaps.toml
    lists, the gap's verdict (``known_gap``): the gate's rule. A listed job passes only as a
    KNOWN_GAP whose gap holds; one whose gap no longer holds keeps its actual status (IDENTICAL
    for a gap that was fixed) and fails until the list is updated, so the status alone would
    pass it. ``known_gap`` can only make a job fail, never pass one that its status fails."""
    listed = rec.get("known_gap")
    if rec["status"] == Status.KNOWN_GAP.value:
        return listed is not None and listed.get("holds") is True
    return listed is None and passes(rec["status"])


def judge(rec: dict, path: str) -> dict:
    """The record as merge reports it: ``passed`` from :func:`passes_as_gate` (never the record's
    own), a status outside the closed set as UNKNOWN_STATUS (failing, the report's word kept)."""
    out = dict(rec)
    status = rec["status"]
    if status not in _KNOWN_STATUSES:
        out["status"] = UNKNOWN_STATUS
        out["reported_status"] = status
        out["reason"] = f"{path} gives the status {show(status, 40)}, which is not an outcome (it fails)"
        out["cause"] = [UNKNOWN_STATUS]
    out["passed"] = passes_as_gate(out)
    if "passed" in rec and rec["passed"] is not out["passed"]:
        said = f"{path} says passed: {json.dumps(rec['passed'])}, which its status contradicts"
        out["reason"] = f"{out['reason']}; {said}" if out.get("reason") else said
    return out


def _disagreement_note(path: str, records: list[dict]) -> str | None:
    """The note for a report whose records' ``passed`` contradicts their status (it was ignored)."""
    wrong = [r for r in records if "passed" in r and r["passed"] is not passes_as_gate(r)]
    if not wrong:
        return None
    more = f", and {len(wrong) - 3} more" if len(wrong) > 3 else ""
    names = ", ".join(show(job_label(r), 80) for r in wrong[:3]) + more
    return f"{path}: {len(wrong)} job record(s) say 'passed' against their status, judged by the status: {names}"


def _ordered_union(lists: list[list[str]]) -> list[str]:
    seen: dict[str, None] = {}
    for items in lists:
        for item in items:
            seen.setdefault(item, None)
    return list(seen)


def _counts(jobs: list[dict]) -> dict[str, int]:
    """Jobs by status, every status of the closed set, then UNKNOWN_STATUS when a job has it."""
    got = Counter(r["status"] for r in jobs)
    counts = {s.value: got[s.value] for s in Status}
    if got[UNKNOWN_STATUS]:
        counts[UNKNOWN_STATUS] = got[UNKNOWN_STATUS]
    return counts


def merge_reports(paths: list[str]) -> dict:
    """One JSON report (the gate's schema, ``shard`` null, ``merged_from`` the shards) from all shards."""
    if not paths:
        raise MergeError("no report to merge")
    docs = [load_report(p) for p in paths]
    count = check_shards(paths, docs)
    by_key = check_jobs(paths, docs)
    all_jobs = [tuple(j) for j in docs[0]["shard"]["all_jobs"]]
    jobs = [judge(*by_key[k]) for k in all_jobs if k in by_key]  # the gate's order
    not_run = sum(d["not_run"] for d in docs)
    problems = _ordered_union([d["run_level_failures"] for d in docs])
    disagreements = [_disagreement_note(p, d["jobs"]) for p, d in zip(paths, docs)]
    shard_notes = [[n for n in d["notes"] if not n.startswith("shard ")] for d in docs]
    notes = _ordered_union([*shard_notes, [n for n in disagreements if n]])
    passed = not problems and not_run == 0 and all(r["passed"] for r in jobs)
    counts = _counts(jobs)
    walls = [float(d["wall_seconds"]) for d in sorted(docs, key=lambda d: d["shard"]["index"])]
    head = docs[0]["summary"]
    summary = {
        "commit": head["tree"]["commit"],
        "tree": head["tree"],
        "version": head.get("version"),
        "engines": head["engines"],
        "passed": passed,
        "jobs": len(jobs),
        "failed": sum(not r["passed"] for r in jobs),
        "run_level_failures": len(problems),
        "counts": {k: n for k, n in counts.items() if n},
        "wall_seconds": max(walls),
    }
    partial = docs[0]["shard"]["partial"] or False
    if not_run:
        partial = f"{partial + '; ' if partial else ''}--maxfail: {not_run} job(s) not run"
    return {
        "schema": JSON_SCHEMA,
        "summary": summary,
        "passed": passed,
        "partial": partial,
        "coverage": docs[0]["coverage"],
        "run_level_failures": problems,
        "notes": notes,
        "modes": docs[0]["modes"],
        "flavors": docs[0]["flavors"],
        "timeout_seconds": docs[0]["timeout_seconds"],
        "wall_seconds": max(walls),
        "engines": docs[0]["engines"],
        "counts": counts,
        "not_run": not_run,
        "shard": None,
        "merged_from": {"count": count, "reports": list(paths), "wall_seconds": walls},
        "jobs": jobs,
    }
