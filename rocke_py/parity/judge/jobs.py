"""The jobs of a gate run: what a selection asks for, the jobs it makes, and their costs.

A config gives one job per mode, and one per flavor for ``ll``; a :class:`Selection` (the gate's
options) keeps some of them. :func:`plan_jobs` makes a run's :class:`Plan` once the engines said
which modes they implement: every job of the selection, the ones this run hands out (a shard's
own), and what each is expected to cost. Selection mistakes (an unknown family or config id, a
mode the engines do not implement, an empty selection) raise :class:`UsageError` (exit 2).
"""

from __future__ import annotations

import dataclasses
import fnmatch
from dataclasses import dataclass
from pathlib import Path

from rocke_py.parity.inputs import keywords
from rocke_py.parity.inputs.configs import Config, Discovery, resolve_id
from rocke_py.parity.inputs.shards import Shard, ShardInfo, shard_info
from rocke_py.parity.judge import lastrun
from rocke_py.parity.judge.golden import Manifest, output_key
from rocke_py.parity.run.engines import FLAVORLESS_CALL_FLAVOR, FLAVORLESS_MODES, FLAVORS, MODES, NO_FLAVOR
from rocke_py.parity.run.work import EngineInfo


class UsageError(Exception):
    """A selection the gate cannot run (exit 2)."""


@dataclass(frozen=True)
class Job:
    config: str
    family: str
    mode: str
    flavor: str  # "-" for spec and ir

    @property
    def key(self) -> str:
        return output_key(self.mode, self.flavor)

    @property
    def call_flavor(self) -> str:
        return FLAVORLESS_CALL_FLAVOR if self.flavor == NO_FLAVOR else self.flavor

    def label(self) -> str:
        return f"{self.config} {self.mode} {self.flavor}"


@dataclass(frozen=True)
class Selection:
    families: tuple[str, ...] = ()
    configs: tuple[str, ...] = ()
    modes: tuple[str, ...] | None = None  # None: every mode both engines implement
    flavors: tuple[str, ...] | None = None  # None: all flavors
    patterns: tuple[str, ...] = ()  # -k: jobs whose label matches one of them
    only_jobs: frozenset[tuple[str, str]] | None = None  # --last-failed: (config id, job key)
    shard: Shard | None = None  # --shard I/N: this shard's configs of the whole selection
    # --changed/--paths chose ``configs`` (none at all: no job, only the run-level checks)
    changed: bool = False

    @property
    def full(self) -> bool:
        return self.whole and self.shard is None

    @property
    def whole(self) -> bool:
        """Every job of the tree, counting a shard's siblings: the run-level checks of a full run apply."""
        return (
            not self.families
            and not self.configs
            and not self.changed
            and self.modes is None
            and self.flavors is None
            and not self.patterns
            and self.only_jobs is None
        )

    @property
    def tree_checks(self) -> bool:
        """The run-level checks that need no job of an unselected config apply (every discovery
        problem, golden entries of configs that no longer exist): a full selection, or one a
        change chose — a change can break what it selects nothing of (a deleted config, a
        stray file), and a narrowed gate must fail where the full one does."""
        return self.whole or self.changed

    @property
    def no_jobs(self) -> bool:
        """The change selects no config: the run-level checks run, the engines do not."""
        return self.changed and not self.configs

    @property
    def every_job_of_its_configs(self) -> bool:
        """Only configs are narrowed (a change chose them): each selected config runs every job."""
        return self.changed and dataclasses.replace(self, configs=(), changed=False, families=()).whole

    def keeps(self, job: Job) -> bool:
        """-k and --last-failed, which select jobs rather than configs."""
        if self.only_jobs is not None and (job.config, job.key) not in self.only_jobs:
            return False
        return not self.patterns or any(label_matches(p, job) for p in self.patterns)


_GLOB_CHARS = frozenset("*?[")


def is_glob(text: str) -> bool:
    return any(ch in _GLOB_CHARS for ch in text)


def label_matches(pattern: str, job: Job) -> bool:
    """-k: pytest's expression over the job's printed label (:mod:`keywords`)."""
    return keywords.matches(pattern, job.config, job.mode, job.flavor, job.key)


def select(disc: Discovery, sel: Selection) -> list[Config]:
    configs = list(disc.configs)
    if sel.families:
        unknown = [f for f in sel.families if f not in disc.families]
        if unknown:
            raise UsageError(f"unknown family {', '.join(unknown)} (families: {', '.join(disc.families) or 'none'})")
        configs = [c for c in configs if c.family in sel.families]
    if sel.changed:  # the ids discovery gave the change; none left is no job, not a mistake
        return [c for c in configs if c.id in sel.configs]
    if sel.configs:
        picked: list[Config] = []
        for ref in sel.configs:
            hits = [c for c in disc.configs if fnmatch.fnmatchcase(c.id, ref)] if is_glob(ref) else []
            one = resolve_id(disc, ref) if not hits else None
            if one is not None:
                hits = [one]
            if not hits:
                raise UsageError(f"unknown config {ref!r} (see rocke-parity list)")
            picked.extend(c for c in hits if c not in picked)
        configs = [c for c in configs if c in picked]
        if not configs:
            raise UsageError("--config and --family select no config together")
    if not configs:
        raise UsageError("the selection is empty: no config to run")
    return configs


def check_names(sel: Selection) -> None:
    for m in sel.modes or ():
        if m not in MODES:
            raise UsageError(f"unknown mode {m!r} (modes: {', '.join(MODES)})")
    for f in sel.flavors or ():
        if f not in FLAVORS:
            raise UsageError(f"unknown flavor {f!r} (flavors: {', '.join(FLAVORS)} or all)")


def run_modes(info: EngineInfo, sel: Selection) -> tuple[tuple[str, ...], list[str]]:
    """The modes to run and notes about modes only one engine implements."""
    notes: list[str] = []
    common = info.common_modes
    for m in MODES:
        if (m in info.py_modes) != (m in info.c_modes):
            who = "py" if m in info.py_modes else "c"
            notes.append(f"mode {m} is implemented by the {who} engine only: not gated")
    if sel.modes is None:
        if not common:
            raise UsageError(
                f"the engines implement no common mode (py: {', '.join(info.py_modes) or 'none'}; "
                f"c: {', '.join(info.c_modes) or 'none'})"
            )
        return common, notes
    missing = [m for m in sel.modes if m not in common]
    if missing:
        parts = []
        for m in missing:
            lack = [s for s, ms in (("py", info.py_modes), ("c", info.c_modes)) if m not in ms]
            parts.append(f"{m} (not implemented by the {' and '.join(lack)} engine{'s' if len(lack) > 1 else ''})")
        raise UsageError(f"--mode {', '.join(parts)}; both engines implement: {', '.join(common) or 'nothing'}")
    return tuple(m for m in MODES if m in sel.modes), notes


def job_keys(modes: tuple[str, ...], flavors: tuple[str, ...]) -> set[str]:
    """The output keys of one config's jobs in these modes and flavors (as :func:`build_jobs` makes them)."""
    keys = {output_key(m, NO_FLAVOR) for m in modes if m in FLAVORLESS_MODES}
    return keys | {output_key(m, f) for m in modes if m not in FLAVORLESS_MODES for f in flavors}


def build_jobs(configs: list[Config], modes: tuple[str, ...], flavors: tuple[str, ...]) -> list[Job]:
    jobs: list[Job] = []
    for c in configs:
        for m in modes:
            if m in FLAVORLESS_MODES:
                jobs.append(Job(c.id, c.family, m, NO_FLAVOR))
            else:
                jobs.extend(Job(c.id, c.family, m, f) for f in flavors)
    return jobs


def job_costs(root: Path, manifest: Manifest | None, jobs: list[Job]) -> list[float]:
    """Each job's expected cost: its recorded seconds (``lastrun``: an average of its recent
    runs), else an estimate from the size of its golden output in ``manifest`` (None: golden.json
    could not be read) — bytes times the median seconds per byte of the timed jobs; a rejection
    or an unknown job costs the least timed job."""
    seconds = lastrun.job_seconds(lastrun.load(root))

    def golden_bytes(j: Job) -> int:
        entry = manifest.get(j.config, j.key) if manifest is not None else None
        return entry.bytes if entry is not None and entry.emits else 0

    timed = [(seconds[(j.config, j.key)], golden_bytes(j)) for j in jobs if (j.config, j.key) in seconds]
    per_byte = sorted(s / b for s, b in timed if b > 0)
    rate = per_byte[len(per_byte) // 2] if per_byte else 1.0
    floor = min((s for s, _ in timed), default=0.0)
    return [seconds.get((j.config, j.key)) or max(golden_bytes(j) * rate, floor) for j in jobs]


def costliest_first(costs: list[float]) -> list[int]:
    """Job indexes by cost, highest first (stable: equal costs keep the jobs' order)."""
    return sorted(range(len(costs)), key=lambda i: -costs[i])


@dataclass(frozen=True)
class Plan:
    """The jobs of one run, in the gate's order (config, then mode, then flavor)."""

    jobs: tuple[Job, ...]  # every job of the selection (a shard: all shards')
    mine: tuple[Job, ...]  # the jobs this run hands out (a shard: its own)
    costs: tuple[float, ...]  # each of ``mine``'s expected cost (:func:`job_costs`)
    shard: ShardInfo | None = None  # --shard: the partition of ``jobs``
    notes: tuple[str, ...] = ()


def plan_jobs(
    sel: Selection,
    configs: tuple[Config, ...],
    modes: tuple[str, ...],
    flavors: tuple[str, ...],
    root: Path,
    manifest: Manifest | None,
) -> Plan:
    """The selected configs' jobs in ``modes`` and ``flavors`` that ``sel`` keeps, costed by
    :func:`job_costs` (``manifest``: the golden sizes, None when golden.json could not be read)."""
    jobs = [j for j in build_jobs(list(configs), modes, flavors) if sel.keeps(j)]
    if not jobs:
        raise UsageError("the selection is empty: -k or --last-failed keep no job")
    costs = job_costs(root, manifest, jobs)
    if sel.shard is None:
        return Plan(tuple(jobs), tuple(jobs), tuple(costs))
    shard = shard_info(sel.shard, [(j.config, j.key) for j in jobs], {c.id: c.sha256 for c in configs}, costs)
    mine = [i for i, j in enumerate(jobs) if shard.owns(j.config)]
    notes = () if mine else (f"shard {sel.shard.label()} has no job (more shards than configs)",)
    return Plan(tuple(jobs), tuple(jobs[i] for i in mine), tuple(costs[i] for i in mine), shard, notes)
