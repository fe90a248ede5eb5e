"""``.rocke-parity/last-run.json``: each config's statuses in the last gate run that ran it.

Written after every gate run (``gate``, ``golden --check``, ``golden --update``), merged with
what was there (a filtered run updates only the configs it ran), atomically (per-write unique
temporary file, then rename). ``rocke-parity list`` reads it; it records the sha256 of each
config file so that ``list`` can say when a config changed since its last run, and a running
average of the seconds each job took, which the next run uses to hand out the costliest jobs
first and ``--shard`` to balance its partition.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Iterable

from rocke_py.parity.judge.compare import Status
from rocke_py.parity.store.fileio import brief, is_number, loads_json, read_data_file
from rocke_py.parity.store.state import ABSENT, STATE_DIR, atomic_write, ignored, reason, state_dir

SCHEMA = "rocke-parity.last-run/v1"
FILE_NAME = "last-run.json"
#: a job's key as the gate writes it (``spec``, ``ll.llvm22``): ``list`` prints it
_JOB_KEY_RE = re.compile(r"^[a-z0-9]+(\.[a-z0-9]+)?$")
_STATUSES = frozenset(s.value for s in Status)


def path_for(root: Path) -> Path:
    return root / STATE_DIR / FILE_NAME


def load(root: Path) -> dict[str, dict]:
    """Each config's entry (``sha256``, ``when``, ``jobs``: key -> ``status``, ``passed`` and
    the seconds), rebuilt from the file with the values checked; {} when there is no file, and
    (with a note) when it cannot be read or is not a last-run record."""
    path = path_for(root)
    try:
        doc = loads_json(read_data_file(path), unique=False, finite=False)
    except ABSENT:
        return {}
    except OSError as e:
        ignored(path, reason(e))
        return {}
    except ValueError as e:
        ignored(path, str(e))
        return {}
    try:
        return _configs(doc)
    except ValueError as e:
        ignored(path, f"not a last-run record: {e}")
        return {}


def _configs(doc: object) -> dict[str, dict]:
    """The file's ``configs``, every value checked (ValueError naming the first that is wrong)."""
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise ValueError(f"schema is not {SCHEMA!r}")
    configs = doc.get("configs")
    if not isinstance(configs, dict):
        raise ValueError("configs is not an object")
    out: dict[str, dict] = {}
    for cfg, entry in configs.items():
        where = f"configs.{brief(cfg)}"
        if not isinstance(entry, dict) or not isinstance(entry.get("jobs"), dict):
            raise ValueError(f"{where} has no jobs object")
        sha, when = entry.get("sha256", ""), entry.get("when", "")
        if not isinstance(sha, str) or not isinstance(when, str):
            raise ValueError(f"{where}: sha256 and when must be strings")
        jobs = {k: _job(f"{where}.jobs", k, j) for k, j in entry["jobs"].items()}
        out[cfg] = {"sha256": sha, "when": when, "jobs": jobs}
    return out


def _job(where: str, key: str, job: object) -> dict:
    """One job's record as :func:`record` writes it, or ValueError."""
    where = f"{where}.{brief(key)}"
    if not _JOB_KEY_RE.match(key) or not isinstance(job, dict):
        raise ValueError(f"{where} is not a job's record")
    status = job.get("status")
    if not isinstance(status, str) or status not in _STATUSES or not isinstance(job.get("passed"), bool):
        raise ValueError(f"{where} has no status of the gate's and passed true or false")
    out = {"status": job["status"], "passed": job["passed"]}
    for k in ("seconds", "run_seconds"):
        if k in job:
            sec = job[k]
            if not is_number(sec) or sec < 0:
                raise ValueError(f"{where}.{k} is not a number of seconds")
            out[k] = sec
    return out


def record(root: Path, verdicts: Iterable, config_sha: dict[str, str], keep_seconds: bool = False) -> None:
    """Merge this run's per-job statuses (``Verdict`` s) into the cache.

    A job's ``seconds`` are a running average (:func:`blend`) of its runs since its config last
    changed (``run_seconds``: this run's alone): one run's seconds carry the machine's noise of
    that moment, and the costs decide the shards' partition and the order of the jobs.
    ``keep_seconds``: keep the recorded seconds instead (a shard run: its siblings must
    partition the jobs with the same costs)."""
    configs = load(root)
    same = {c for c, e in configs.items() if isinstance(e, dict) and e.get("sha256") == config_sha.get(c)}
    old = {k: sec for k, sec in job_seconds(configs).items() if keep_seconds or k[0] in same}
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    fresh: dict[str, dict] = {}
    for v in verdicts:
        entry = fresh.setdefault(v.job.config, {"sha256": config_sha.get(v.job.config, ""), "when": stamp, "jobs": {}})
        job = {"status": v.status.value, "passed": v.passed}
        ran = getattr(getattr(v, "result", None), "seconds", 0.0)
        if keep_seconds:
            seconds = old.get((v.job.config, v.job.key), 0.0)
        else:
            seconds = blend(old.get((v.job.config, v.job.key)), ran)
        if seconds > 0:
            job["seconds"] = round(seconds, 5)
        if ran > 0:
            job["run_seconds"] = round(ran, 5)  # this run's own (what a benchmark compares its wall time with)
        entry["jobs"][v.job.key] = job
    if not fresh:
        return
    configs.update(fresh)
    doc = {"schema": SCHEMA, "configs": {k: configs[k] for k in sorted(configs)}}
    state_dir(root)
    # compact: json's C encoder writes it, an indented dump goes through the pure-Python one
    # (about 4x slower; the file is the harness's state, read by programs)
    atomic_write(path_for(root), (json.dumps(doc, sort_keys=True, separators=(",", ":")) + "\n").encode())


#: the weight of a run's seconds in a job's recorded cost (the rest is the recorded average)
RUN_WEIGHT = 1 / 3


def blend(recorded: float | None, seconds: float) -> float:
    """A job's new cost: ``seconds`` (this run's) averaged into the ``recorded`` one, if any.

    An exponential average: a run slowed by a busy machine moves the cost a third of the way,
    and a real change of speed is followed within a few runs. A job without a recorded cost or
    without seconds this run (it crashed) takes this run's."""
    if recorded is None or seconds <= 0:
        return seconds
    return recorded + RUN_WEIGHT * (seconds - recorded)


def job_seconds(configs: dict[str, dict]) -> dict[tuple[str, str], float]:
    """(config id, job key) -> the job's recorded seconds (the average of :func:`record`; from :func:`load`)."""
    out: dict[tuple[str, str], float] = {}
    for cfg_id, entry in configs.items():
        jobs = entry.get("jobs") if isinstance(entry, dict) else None
        if not isinstance(jobs, dict):
            continue
        for key, job in jobs.items():
            sec = job.get("seconds") if isinstance(job, dict) else None
            if isinstance(sec, (int, float)) and not isinstance(sec, bool) and sec > 0:
                out[(cfg_id, key)] = float(sec)
    return out


def failed_jobs(configs: dict[str, dict]) -> frozenset[tuple[str, str]]:
    """(config id, job key) of every job that failed in the last run that ran it (from :func:`load`)."""
    out = set()
    for cfg_id, entry in configs.items():
        jobs = entry.get("jobs") if isinstance(entry, dict) else None
        if isinstance(jobs, dict):
            out.update((cfg_id, key) for key, job in jobs.items() if isinstance(job, dict) and not job.get("passed"))
    return frozenset(out)


def summary(entry: dict | None, current_sha: str) -> str:
    """One cell for ``list``: ``IDENTICAL`` (all jobs), or ``FAIL spec:DIFFER ...``; ``-`` if never run."""
    if not entry or not isinstance(entry.get("jobs"), dict) or not entry["jobs"]:
        return "-"
    jobs: dict = entry["jobs"]
    statuses = {j.get("status", "?") for j in jobs.values()}
    if all(j.get("passed") for j in jobs.values()):
        text = (
            statuses.pop() if len(statuses) == 1 else "PASS " + " ".join(f"{k}:{j['status']}" for k, j in jobs.items())
        )
    else:
        text = "FAIL " + " ".join(f"{k}:{j.get('status')}" for k, j in sorted(jobs.items()) if not j.get("passed"))
    if entry.get("sha256") and entry["sha256"] != current_sha:
        text += " (config changed since)"
    return text
