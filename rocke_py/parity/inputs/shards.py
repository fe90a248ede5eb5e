"""``gate --shard I/N``: a deterministic, cost-balanced partition of the gate's configs.

The unit is the config, never the job: "one verdict per config" compares a config's modes with
each other, and the kernel name of mode ``spec`` labels its other jobs, so a config's jobs run
together. Each config costs the sum of its jobs' costs (``jobs.job_costs``: the running average
of their recent runs' seconds, else golden sizes); the costliest config goes to the least loaded shard (ties: the
config id, then the lower shard), which keeps the slowest shard close to 1/N of the whole.

The same inputs give the same partition on every machine. A shard run records its statuses in
last-run.json but keeps the recorded seconds as they were, so that the shards of one matrix
run one after the other on one machine still agree; the report carries the fingerprints of
the whole job list and of the partition (with each config's sha256, so that ``merge`` can
recompute both from the report and tell an edited report), and ``merge`` refuses shards whose
fingerprints differ.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

_SHARD_RE = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based
    count: int

    @staticmethod
    def parse(text: str) -> Shard:
        """``I/N`` with 1 <= I <= N; ValueError otherwise."""
        m = _SHARD_RE.match(text)
        if not m:
            raise ValueError(f"--shard takes I/N (such as 1/2), not {text!r}")
        index, count = int(m.group(1)), int(m.group(2))
        if count < 1 or not 1 <= index <= count:
            raise ValueError(f"--shard {text}: I must be between 1 and N (N >= 1)")
        return Shard(index, count)

    def label(self) -> str:
        return f"{self.index}/{self.count}"


@dataclass(frozen=True)
class ShardInfo:
    """What a shard run knows about the whole selection (the JSON report's ``shard``)."""

    shard: Shard
    all_jobs: tuple[tuple[str, str], ...]  # (config id, job key) of every shard, in the gate's order
    assignment: dict[str, int]  # config id -> its shard index
    job_list_sha256: str
    partition_sha256: str
    config_sha256: dict[str, str]  # config id -> the sha256 of its bytes (what job_list_sha256 covers)

    def owns(self, config: str) -> bool:
        """Configs outside the partition (a known gap's config that has no job) belong to shard 1."""
        return self.assignment.get(config, 1) == self.shard.index

    def as_json(self) -> dict[str, object]:
        return {
            "index": self.shard.index,
            "count": self.shard.count,
            "jobs_total": len(self.all_jobs),
            "job_list_sha256": self.job_list_sha256,
            "partition_sha256": self.partition_sha256,
            "all_jobs": [list(j) for j in self.all_jobs],
            "assignment": dict(self.assignment),
            "config_sha256": dict(self.config_sha256),
        }


def partition(units: list[str], costs: list[float], count: int) -> dict[str, int]:
    """Each unit's shard (1-based): longest first onto the least loaded shard."""
    loads = [0.0] * count
    out: dict[str, int] = {}
    for i in sorted(range(len(units)), key=lambda i: (-costs[i], units[i])):
        target = min(range(count), key=lambda s: (loads[s], s))
        loads[target] += costs[i]
        out[units[i]] = target + 1
    return out


def _sha(lines: list[str]) -> str:
    return hashlib.sha256("".join(line + "\n" for line in lines).encode()).hexdigest()


def job_list_sha256(jobs: Sequence[tuple[str, str]], config_sha: Mapping[str, str]) -> str:
    """The fingerprint of the whole selection: every job with its config's bytes, in the gate's order
    (``merge`` recomputes it from a report to see that the report's job list is the gate's)."""
    return _sha([f"{c}\t{config_sha.get(c, '')}\t{k}" for c, k in jobs])


def partition_sha256(jobs: Sequence[tuple[str, str]], assignment: Mapping[str, int], count: int) -> str:
    """The fingerprint of the partition: each config's shard, configs in their first job's order, and N."""
    units = dict.fromkeys(c for c, _ in jobs)
    return _sha([f"{c}\t{assignment[c]}" for c in units] + [str(count)])


def shard_info(shard: Shard, jobs: list[tuple[str, str]], config_sha: dict[str, str], costs: list[float]) -> ShardInfo:
    """The partition of ``jobs`` ((config id, key), the gate's order) whose costs are ``costs``."""
    per_config: dict[str, float] = {}
    for (cfg, _), cost in zip(jobs, costs):
        per_config[cfg] = per_config.get(cfg, 0.0) + cost
    units = list(per_config)
    assignment = partition(units, [per_config[u] for u in units], shard.count)
    shas = {c: config_sha.get(c, "") for c in units}
    return ShardInfo(
        shard,
        tuple(jobs),
        assignment,
        job_list_sha256(jobs, shas),
        partition_sha256(jobs, assignment, shard.count),
        shas,
    )
