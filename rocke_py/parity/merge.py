"""``rocke-parity merge REPORT.json...``: the JSON reports of ``gate --shard I/N`` as one run.

The merged report is what one full gate would have reported: every job of the whole selection
in the gate's order, its status as its shard judged it (a config's jobs all run in one shard,
so "one verdict per config" and the kernel names are judged there), and the run-level
failures of every shard once each. Shards that cannot make one run are refused
(:class:`MergeError`, exit 2): a report that is not a shard's, two reports for one shard, a
missing shard, shards of different selections, partitions, trees or engines, or a report
whose jobs are not its shard's."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from rocke_py.parity.compare import Status
from rocke_py.parity.fileio import read_data_file
from rocke_py.parity.report import JSON_SCHEMA

#: What every shard of one run must agree on, beside the fingerprints.
_SAME = ("modes", "flavors", "coverage", "timeout_seconds", "engines")


class MergeError(Exception):
    """The reports cannot be merged into one run (exit 2)."""


def load_report(path: str) -> dict:
    try:
        doc = json.loads(read_data_file(Path(path)).decode("utf-8"))
    except OSError as e:
        raise MergeError(f"cannot read {path}: {e.strerror or e}") from None
    except ValueError as e:
        raise MergeError(f"{path} is not a JSON report: {e}") from None
    if not isinstance(doc, dict) or doc.get("schema") != JSON_SCHEMA:
        raise MergeError(f"{path} is not a rocke-parity report (schema {JSON_SCHEMA})")
    if not isinstance(doc.get("shard"), dict):
        raise MergeError(f"{path} is not a shard's report: write them with gate --shard I/N --json FILE")
    return doc


def check_shards(paths: list[str], docs: list[dict]) -> int:
    """Refuse what is not one run's complete set of shards; returns N."""
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
            if doc.get(key) != docs[0].get(key):
                raise MergeError(f"{path} and {paths[0]} differ in {key}: they are not shards of one run")
        if doc["summary"].get("engines") != docs[0]["summary"].get("engines"):
            raise MergeError(f"{path} and {paths[0]} ran different engines (build ids differ)")
    missing = [str(i) for i in range(1, count + 1) if i not in seen]
    if missing:
        raise MergeError(f"missing shard(s) {', '.join(f'{i}/{count}' for i in missing)}: every shard is needed")
    return count


def check_jobs(paths: list[str], docs: list[dict]) -> dict[tuple[str, str], dict]:
    """Each report holds jobs of its own shard only, and no job twice; returns them by (config, key)."""
    assignment = docs[0]["shard"]["assignment"]
    out: dict[tuple[str, str], dict] = {}
    where: dict[tuple[str, str], str] = {}
    for path, doc in zip(paths, docs):
        index = doc["shard"]["index"]
        for rec in doc["jobs"]:
            key = (rec["config"], rec["mode"] if rec["flavor"] == "-" else f"{rec['mode']}.{rec['flavor']}")
            if key in out:
                raise MergeError(f"{key[0]} {key[1]} is in {where[key]} and in {path}: the shards overlap")
            if assignment.get(rec["config"]) != index:
                raise MergeError(f"{path} (shard {index}) holds {key[0]} {key[1]}, which is not its shard's")
            out[key] = rec
            where[key] = path
    return out


def _ordered_union(lists: list[list[str]]) -> list[str]:
    seen: dict[str, None] = {}
    for items in lists:
        for item in items:
            seen.setdefault(item, None)
    return list(seen)


def merge_reports(paths: list[str]) -> dict:
    """One JSON report (the gate's schema, ``shard`` null, ``merged_from`` the shards) from all shards."""
    if not paths:
        raise MergeError("no report to merge")
    docs = [load_report(p) for p in paths]
    count = check_shards(paths, docs)
    by_key = check_jobs(paths, docs)
    all_jobs = [tuple(j) for j in docs[0]["shard"]["all_jobs"]]
    jobs = [by_key[k] for k in all_jobs if k in by_key]  # the gate's order
    not_run = sum(int(d.get("not_run") or 0) for d in docs)
    missing = len(all_jobs) - len(jobs) - not_run
    if missing:
        raise MergeError(f"{missing} job(s) of the partition are in no report (and no shard says it did not run them)")
    problems = _ordered_union([d["run_level_failures"] for d in docs])
    shard_notes = [[n for n in d["notes"] if not n.startswith("shard ")] for d in docs]
    passed = not problems and not_run == 0 and all(r["passed"] for r in jobs)
    got = Counter(r["status"] for r in jobs)
    counts = {s.value: got[s.value] for s in Status}
    walls = [float(d.get("wall_seconds") or 0.0) for d in sorted(docs, key=lambda d: d["shard"]["index"])]
    head = docs[0]["summary"]
    summary = {
        "commit": head.get("commit"),
        "version": head.get("version"),
        "engines": head.get("engines"),
        "passed": passed,
        "jobs": len(jobs),
        "failed": sum(not r["passed"] for r in jobs),
        "run_level_failures": len(problems),
        "counts": {k: n for k, n in counts.items() if n},
        "wall_seconds": max(walls),
    }
    partial = docs[0]["shard"].get("partial") or False
    if not_run:
        partial = f"{partial + '; ' if partial else ''}--maxfail: {not_run} job(s) not run"
    return {
        "schema": JSON_SCHEMA,
        "summary": summary,
        "passed": passed,
        "partial": partial,
        "coverage": docs[0].get("coverage"),
        "run_level_failures": problems,
        "notes": _ordered_union(shard_notes),
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
