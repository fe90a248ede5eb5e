"""One gate run: discovery → selection → jobs → worker pool → classification → known gaps → golden.

``run_gate`` never prints; it returns a :class:`GateRun` that :mod:`report` renders and
:mod:`cli` turns into an exit status (0 iff every job passed and there is no run-level failure).
Selection mistakes (an unknown family or config id, a mode the engines do not implement, an
empty selection) raise :class:`UsageError` (exit 2).
"""

from __future__ import annotations

import dataclasses
import fnmatch
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol

from rocke_py.parity.inputs import keywords
from rocke_py.parity.inputs.configs import Config, Discovery, Expectation, changed_during_run, discover, resolve_id
from rocke_py.parity.inputs.shards import Shard, ShardInfo, shard_info
from rocke_py.parity.judge import golden as golden_mod
from rocke_py.parity.judge import known_gaps as gaps_mod
from rocke_py.parity.judge import lastrun
from rocke_py.parity.judge.compare import GOLDEN_STATUSES, Status, classify, message_difference, passes
from rocke_py.parity.judge.golden import Coverage, GoldenEntry, GoldenError, Manifest, output_key, renumbering_verdict
from rocke_py.parity.judge.known_gaps import KnownGap, KnownGaps
from rocke_py.parity.run import backtrace
from rocke_py.parity.run.engines import (
    FLAVORLESS_CALL_FLAVOR,
    FLAVORLESS_MODES,
    FLAVORS,
    JOBS_PER_CONFIG,
    MODES,
    NO_FLAVOR,
    EngineRun,
    EngineSpec,
)
from rocke_py.parity.run.runner import Pool, pool_size
from rocke_py.parity.run.work import EngineInfo, EngineLoadError, JobResult, WorkItem
from rocke_py.parity.store import outcache
from rocke_py.parity.store.objects import ObjectCache, text_store

_KERNEL_NAME_RE = re.compile(r"^kernel_name = (.*?)\r?$", re.MULTILINE)


class UsageError(Exception):
    """A selection the gate cannot run (exit 2)."""


class Progress(Protocol):
    def start(self, total: int) -> None: ...
    def advance(self, label: str) -> None: ...
    def close(self) -> None: ...


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


@dataclass(frozen=True)
class Verdict:
    job: Job
    expected: str
    status: Status
    passed: bool
    reason: str
    result: JobResult
    gap: KnownGap | None = None
    gap_holds: bool = False
    golden: GoldenEntry | None = None
    kernel_name: str = ""
    evidence: tuple[tuple[str, str], ...] = ()  # the failure's evidence, as known_gaps.toml pins it
    golden_match: str = ""  # for a failing job with a golden entry: which engine still matches it


@dataclass
class GateRun:
    root: Path
    selection: Selection
    timeout: float
    verdicts: list[Verdict] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # run-level failures
    stale_golden: list[str] = field(default_factory=list)  # run-level failures that golden --update fixes
    notes: list[str] = field(default_factory=list)  # informational, printed before the summary
    info: EngineInfo | None = None
    modes: tuple[str, ...] = ()
    flavors: tuple[str, ...] = ()
    wall_seconds: float = 0.0
    golden_ok: bool = True
    manifest: Manifest | None = None
    discovery: Discovery | None = None
    configs: tuple[Config, ...] = ()
    not_run: int = 0  # jobs --maxfail left out
    engines: EngineSpec = EngineSpec()
    shard: ShardInfo | None = None  # --shard: the partition of the whole selection
    gaps: KnownGaps = KnownGaps((), ())  # known_gaps.toml, as load_inputs read it

    @property
    def passed(self) -> bool:
        return not self.problems and not self.stale_golden and all(v.passed for v in self.verdicts)

    @property
    def partial(self) -> bool:
        return not self.selection.full or self.not_run > 0

    @property
    def complete(self) -> bool:
        """Every job of the whole selection ran, here or (for a shard) in a sibling shard."""
        return self.selection.whole and self.not_run == 0

    def partial_note(self, with_shard: bool = True) -> str:
        """What a narrowed run left out ("" for a full run); ``with_shard=False``: what the
        selection of every shard left out (the merged run's note)."""
        sel = self.selection
        if not self.partial or (not with_shard and self.complete):
            return ""
        parts = []
        if sel.families:
            parts.append(f"--family {','.join(sel.families)}")
        if sel.changed:  # the change chose the configs, not a --config
            parts.append(f"--changed/--paths ({len(sel.configs)})")
        elif sel.configs:
            parts.append(f"--config ({len(sel.configs)})")
        if sel.modes is not None:
            parts.append(f"--mode {','.join(sel.modes)}")
        if sel.flavors is not None:
            parts.append(f"--flavor {','.join(sel.flavors)}")
        if sel.patterns:
            parts.append(" ".join(f"-k {p}" for p in sel.patterns))
        if sel.only_jobs is not None:
            parts.append(f"--last-failed ({len(sel.only_jobs)} job(s))")
        if self.not_run:
            parts.append(f"--maxfail: {self.not_run} job(s) not run")
        if with_shard and self.shard is not None:
            mine = sum(self.shard.owns(c) for c, _ in self.shard.all_jobs)
            parts.append(f"--shard {self.shard.shard.label()}: {mine} of {len(self.shard.all_jobs)} job(s)")
        total = len(self.discovery.configs) if self.discovery else 0
        ran = len(self.configs)
        if with_shard and self.shard is not None:  # a shard runs its own configs of the selection
            ran = sum(self.shard.owns(c.id) for c in self.configs)
        pinned = self.manifest.coverage.describe() if self.manifest and self.manifest.coverage else "not pinned"
        return f"partial run ({' '.join(parts)}): {ran} of {total} config(s); the full gate covers {pinned}"

    @property
    def failures(self) -> list[Verdict]:
        return [v for v in self.verdicts if not v.passed]

    @property
    def known_gaps(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.status is Status.KNOWN_GAP]


def kernel_name_of(spec_text: str | None) -> str:
    if not spec_text:
        return ""
    m = _KERNEL_NAME_RE.search(spec_text)
    return m.group(1).strip() if m else ""


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


_NO_COVERAGE = (
    "golden.json pins no coverage (the modes and flavors of the full gate): rocke-parity golden --update records it"
)


def check_coverage(run: GateRun, info: EngineInfo, manifest: Manifest | None) -> None:
    """The run covers what golden.json pins (docs/gate-honesty.md: coverage is pinned).

    A pinned mode that an engine no longer advertises fails any run that does not choose its
    modes; a pinned flavor the harness does not run fails any run that does not choose its
    flavors. A full run that covers more than is pinned, or a manifest that pins nothing, is
    fixed by ``golden --update`` (recorded after review)."""
    from rocke_py.parity.run.engines import FLAVORS as ALL_FLAVORS

    sel = run.selection
    cov = manifest.coverage if manifest is not None else None
    if cov is None:
        if manifest is not None and sel.tree_checks:
            run.stale_golden.append(_NO_COVERAGE)
        elif manifest is not None:
            run.notes.append("golden.json pins no coverage: this run cannot tell whether a mode vanished")
        return
    if sel.modes is None:
        for m in cov.modes:
            if m in run.modes:
                continue
            lack = [side for side, ms in (("py", info.py_modes), ("c", info.c_modes)) if m not in ms]
            who = " and ".join(lack) + (" engines do" if len(lack) > 1 else " engine does")
            run.problems.append(
                f"coverage: golden.json pins mode {m}, but the {who} not advertise it "
                f"(py: {', '.join(info.py_modes) or 'nothing'}; c: {', '.join(info.c_modes) or 'nothing'}): "
                f"the gate would cover less than it must"
            )
        if sel.tree_checks:
            for m in run.modes:
                if m not in cov.modes:
                    run.stale_golden.append(
                        f"coverage: both engines advertise mode {m}, which golden.json does "
                        "not pin: rocke-parity golden --update pins it"
                    )
    if sel.tree_checks:
        check_ratchet(run, cov)
    if sel.flavors is None and "ll" in cov.modes:
        for f in cov.flavors:
            if f not in ALL_FLAVORS or f not in run.flavors:
                run.problems.append(f"coverage: golden.json pins flavor {f}, which this harness does not run")
        if sel.tree_checks:
            for f in run.flavors:
                if f not in cov.flavors:
                    run.stale_golden.append(f"coverage: flavor {f} is run but not pinned: rocke-parity golden --update")


def check_ratchet(run: GateRun, cov: Coverage) -> None:
    """A full run reaches every tuple at the stratum golden.json records (docs/coverage.md §6)."""
    from rocke_py.coverage import ratchet

    # every config of the tree, not the run's selection: a run a change narrowed (--paths,
    # --changed) still judges the whole tree's coverage
    now = ratchet.reached(run.root, run.discovery.configs if run.discovery is not None else run.configs)
    if cov.tuples is None:
        run.stale_golden.append("coverage: golden.json records no tuples: rocke-parity golden --update records them")
        return
    pinned = dict(cov.tuples)
    gone = ratchet.lost(pinned, now)
    if gone:
        run.problems.append(ratchet.lost_line(gone))
    up = ratchet.risen(pinned, now)
    if up:
        run.stale_golden.append(
            f"coverage: {len(up)} tuple(s) reached above the stratum golden.json records "
            f"(e.g. {up[0]}): rocke-parity golden --update records them"
        )


def agreed_verdict(res: JobResult) -> tuple[str, ...] | None:
    """The job's verdict when both engines agree on it: ("emit",) or ("reject", code, message)."""
    if res.death is not None or not res.py or not res.c:
        return None
    py, c = res.py[0], res.c[0]
    if py.kind == "emitted" and c.kind == "emitted":
        return ("emit",)
    if py.kind == "rejected" and c.kind == "rejected" and (py.code, py.message) == (c.code, c.message):
        return ("reject", py.code, py.message)
    return None


def _verdict_text(v: tuple[str, ...]) -> str:
    if v[0] == "emit":
        return "emit"
    msg = v[2] if len(v[2]) <= 80 else v[2][:79] + "…"
    return f"reject it {v[1]} ({msg})"


def split_references(results: list[JobResult[Job]]) -> dict[int, JobResult[Job]]:
    """Jobs whose agreed verdict differs from their config's verdict in its first mode, each with
    that reference job (by ``id`` of the job's result).

    "One verdict per config": a config is emitted in every mode or rejected for the same code
    and message in every mode. The reference is the config's first job (spec → ir → ll, then
    flavors) on whose verdict both engines agree."""
    by_config: dict[str, list[JobResult[Job]]] = {}
    for r in results:
        by_config.setdefault(r.item.key.config, []).append(r)
    out: dict[int, JobResult[Job]] = {}
    order = {m: i for i, m in enumerate(MODES)}
    for rs in by_config.values():
        rs = sorted(rs, key=lambda r: (order[r.item.key.mode], r.item.key.flavor))
        ref: tuple[JobResult[Job], tuple[str, ...]] | None = None
        for r in rs:
            v = agreed_verdict(r)
            if v is None:
                continue
            if ref is None:
                ref = (r, v)
            elif v != ref[1]:
                out[id(r)] = ref[0]
    return out


def verdict_splits(results: list[JobResult[Job]]) -> dict[int, str]:
    """Jobs whose agreed verdict differs from their config's verdict in its first mode, with why
    (:func:`split_references`)."""
    refs = split_references(results)
    return {id(r): _split_reason(r, refs[id(r)]) for r in results if id(r) in refs}


def _split_reason(res: JobResult[Job], ref: JobResult[Job]) -> str:
    v, rv = agreed_verdict(res), agreed_verdict(ref)
    assert v is not None and rv is not None
    j, rj = res.item.key, ref.item.key
    return (
        f"mode {j.mode}{'' if j.flavor == NO_FLAVOR else ' ' + j.flavor}: both engines "
        f"{_verdict_text(v)}, but in mode {rj.mode}"
        f"{'' if rj.flavor == NO_FLAVOR else ' ' + rj.flavor} they {_verdict_text(rv)}: "
        "every mode must give a config the same verdict"
    )


#: Statuses that a verdict split replaces (agreed verdicts; a divergence keeps its own status).
_SPLITTABLE = frozenset({Status.IDENTICAL, Status.BOTH_REJECTED, Status.UNEXPECTED_REJECT, Status.UNEXPECTED_EMIT})


def entry_of(run: EngineRun) -> GoldenEntry | None:
    """What golden.json would record for one engine's first run."""
    if run.kind == "emitted":
        return GoldenEntry.emitted(run.sha256, run.nbytes, "")
    if run.kind == "rejected":
        return GoldenEntry.rejected(run.code, run.message)
    return None


def golden_match(entry: GoldenEntry | None, res: JobResult) -> str:
    """Which engine still gives the recorded verdict: "py matches golden; c differs", …"""
    if entry is None or not res.py or not res.c:
        return ""
    if any(len(r) > 1 and r[0].signature() != r[1].signature() for r in (res.py, res.c)):
        # nondeterministic: the first calls alone could both match while a second one differs
        return "; ".join(f"{side} matches golden {_calls_matching(entry, res.runs(side))}" for side in ("py", "c"))
    hits = []
    for side, run in (("py", res.py[0]), ("c", res.c[0])):
        got = entry_of(run)
        hits.append(got is not None and got.same_record(entry))
    if hits[0] and hits[1]:
        return "both engines match golden"
    if hits[0]:
        return "py matches golden; c differs"
    if hits[1]:
        return "c matches golden; py differs"
    return "neither engine matches golden"


def _calls_matching(entry: GoldenEntry, runs: tuple[EngineRun, ...]) -> str:
    """Which of an engine's two calls gives the recorded verdict: "on its first call only", …"""
    hits = tuple((got := entry_of(run)) is not None and got.same_record(entry) for run in runs[:2])
    if len(hits) < 2:  # one call only (never in a run that repeats every job)
        return "on its one call" if any(hits) else "on no call"
    return {
        (True, True): "on both calls",
        (True, False): "on its first call only",
        (False, True): "on its second call only",
    }.get(hits, "on neither call")


def _worker_stored(res: JobResult, cache: ObjectCache) -> bool:
    """The py text is in ``cache`` already: the worker put it in the store of this root instead
    of sending it (a stat per job saved)."""
    return res.in_store("py") and isinstance(res.store, ObjectCache) and res.store.root == cache.root


def judge(
    job: Job,
    res: JobResult[Job],
    expect: Expectation,
    manifest: Manifest | None,
    gaps: KnownGaps,
    cache: ObjectCache | None,
    kernel_name: str,
    timeout: float | None,
    split_ref: JobResult | None,
) -> Verdict:
    """One job's verdict: classification, one verdict per config, golden manifest, known gaps.

    ``manifest`` is None when golden.json could not be read (a run-level failure already).
    ``split_ref``: the job whose verdict this job's departs from (:func:`split_references`), or
    None; a VERDICT_SPLIT's reason names both, its evidence pins both."""
    base = classify(res, expect, timeout)
    status, reason = base.status, base.reason
    if split_ref is not None and status in _SPLITTABLE:
        status, reason = Status.VERDICT_SPLIT, _split_reason(res, split_ref)
    entry = manifest.get(job.config, job.key) if manifest is not None else None
    if manifest is not None and status in (Status.IDENTICAL, Status.BOTH_REJECTED):
        now = entry_of(res.py[0])
        assert now is not None
        if entry is None:
            what = f"{now.bytes} identical bytes" if now.emits else f"both rejected {now.code}"
            status = Status.GOLDEN_MISSING
            reason = (
                f"{what}, but golden.json has no {job.key} entry: rocke-parity golden --update --config {job.config}"
            )
        elif not entry.same_verdict(now):
            status = Status.VERDICT_CHANGED
            what = f"golden.json records {entry.short()}, the engines now {now.short()}"
            if not entry.emits and not now.emits and entry.code == now.code:  # a whitespace change must show
                differ = message_difference(entry.message, now.message, ("golden", "now"))
                what = f"golden.json records another {now.code} message: {differ}"
            reason = f"{what}: review, then rocke-parity golden --update --config {job.config}"
        elif now.emits and (entry.sha256 != now.sha256 or entry.bytes != now.bytes):
            status = Status.GOLDEN_DRIFT
            verdict = renumbering_verdict(cache, entry.sha256, res.text("py"))
            reason = (
                f"identical, but not the golden bytes: {now.bytes - entry.bytes:+d} bytes, "
                f"sha256 {now.sha256[:12]} (golden {entry.sha256[:12]}); {verdict}"
            )
        elif now.emits and cache is not None and not _worker_stored(res, cache) and not cache.has(now.sha256):
            text = res.text("py")  # kept for the renumbering verdict of a later drift
            try:
                if text is not None:
                    cache.put(now.sha256, text)
            except OSError:
                pass
    match = ""
    if not passes(status) and status.value not in GOLDEN_STATUSES:
        match = golden_match(entry, res)
        if match:
            reason = f"{reason}; {match}"
    evidence = gaps_mod.evidence_of(status, res, split_ref)
    gap = gaps.lookup(job.config, job.mode, job.flavor)
    holds = False
    if gap is not None:
        if gap.holds_for(status, evidence):
            holds = True
            passed = True
            reason = f"known gap ({gap.reason}); actual: {reason}"
            status = Status.KNOWN_GAP
        else:
            passed = False
            now_desc = gaps_mod.describe_now(status, evidence) if evidence else status.value
            reason = (
                f"known gap no longer holds: listed as {gap.describe()}, now {now_desc}"
                f"{gaps_mod.mismatch_hint(gap, evidence)}: update known_gaps.toml (entry {gap.index}); {reason}"
            )
    else:
        passed = passes(status)
    return Verdict(
        job, str(expect), status, passed, reason, res, gap, holds, entry, kernel_name, tuple(evidence.items()), match
    )


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


def run_gate(
    root: Path,
    sel: Selection = Selection(),
    engines: EngineSpec = EngineSpec(),
    workers: int | None = None,
    timeout: float = 60.0,
    progress: Progress | None = None,
    failed_first: frozenset[tuple[str, str]] = frozenset(),
    maxfail: int | None = None,
    reuse: str | None = None,
    early: Pool | None = None,
) -> GateRun:
    """``failed_first``: jobs (config id, key) handed out before the others (--failed-first);
    ``maxfail``: stop handing out jobs after that many failing ones (the run then fails and is
    partial: it says how many jobs it did not run); ``reuse``: "py" or "c", that engine's
    outputs are taken from the cache where it has them (``outcache``; --changed, --reuse);
    ``early``: workers the command line started for this run (``cli.early_pool``), used when
    they are the ones this run needs and closed otherwise."""
    t0 = time.monotonic()
    check_names(sel)
    pool = _pool_for(sel, root, engines, workers, timeout, early)
    try:
        disc = discover(root)
        run = GateRun(root=root, selection=sel, timeout=timeout, discovery=disc, engines=engines)
        configs, gaps = load_inputs(run)
        if configs and pool is not None:
            jobs, results, recording = run_jobs(run, pool, configs, progress, failed_first, maxfail, reuse)
            try:  # while the engines' outputs are recorded in the cache (outcache.record_aside)
                matched = judge_all(run, results, configs, gaps)
                if run.complete:  # every job ran (a shard: here or in its siblings): what matched nothing is stale
                    check_unmatched_gaps(run, gaps, matched)
                    check_stale_golden(run, jobs)
                elif sel.every_job_of_its_configs and run.not_run == 0:  # the selected configs' gaps
                    check_unmatched_gaps(run, gaps, matched, {c.id for c in configs})
                # a config edited while its jobs ran: the verdicts are for the bytes read at the start
                run.problems.extend(changed_during_run(configs, root))
            finally:
                problem = recording.wait()  # a run that returns has recorded its outputs
            if problem:
                run.notes.append(f"could not record the engines' outputs in the cache: {problem}")
        if sel.changed:
            check_gone_golden(run)
    finally:
        if pool is not None:
            pool.close()
    run.wall_seconds = time.monotonic() - t0
    return run


def _pool_for(
    sel: Selection, root: Path, engines: EngineSpec, workers: int | None, timeout: float, early: Pool | None
) -> Pool | None:
    """The run's workers, launched now so that they load the engines while this process reads
    the configs, the gaps and the manifest; None when the change selects no config (the
    run-level checks need no engine, and ``early`` is closed)."""
    if sel.no_jobs:
        if early is not None:
            early.close()
        return None
    size = pool_size(workers, len(sel.configs) * JOBS_PER_CONFIG if sel.configs else None)
    return adopt_pool(early, root, engines, size, timeout) or Pool(engines, size, timeout, text_store(root)).launch()


def adopt_pool(early: Pool | None, root: Path, engines: EngineSpec, size: int, timeout: float) -> Pool | None:
    """``early`` when it runs these engines with this many workers, this timeout and the root's
    object cache; otherwise None (and ``early`` is closed: its workers are not this run's)."""
    if early is None:
        return None
    store_root = early.store.root if isinstance(early.store, ObjectCache) else None
    if (early.spec, early.size, early.timeout, store_root) == (engines, size, timeout, root):
        return early
    early.close()
    return None


def load_inputs(run: GateRun) -> tuple[list[Config], KnownGaps]:
    """The selected configs, the known gaps and the manifest; their problems are run-level failures."""
    disc = run.discovery
    assert disc is not None
    sel = run.selection
    configs = select(disc, sel) if disc.configs else []
    run.configs = tuple(configs)
    fams = {c.family for c in configs}
    found = [*disc.problems, *(disc.duplicates if run.engines == EngineSpec() else ())]
    run.problems.extend(p.message for p in found if sel.tree_checks or p.family is None or p.family in fams)
    gaps = gaps_mod.load(run.root / "parity_configs" / gaps_mod.FILE_NAME, set(disc.by_id()))
    run.problems.extend(gaps.problems)
    run.gaps = gaps
    try:
        run.manifest = golden_mod.load(golden_mod.golden_path(run.root))
    except GoldenError as e:
        run.problems.append(str(e))
        run.manifest = Manifest({}, exists=False)
        run.golden_ok = False
    return configs, gaps


def run_jobs(
    run: GateRun,
    pool: Pool,
    configs: list[Config],
    progress: Progress | None,
    failed_first: frozenset[tuple[str, str]] = frozenset(),
    maxfail: int | None = None,
    reuse: str | None = None,
) -> tuple[list[Job], list[JobResult[Job]], outcache.Recording]:
    """Every job of the selection through the worker pool (both engines, twice). Returns every
    job of the selection (all shards'), the results of those that ran, and their recording in
    the output cache, under way (``outcache.record_aside``)."""
    sel = run.selection
    run.flavors = tuple(sel.flavors) if sel.flavors is not None else FLAVORS
    try:
        pool.wait_ready()
    except EngineLoadError as e:
        run.problems.append(str(e))
        return [], [], outcache.Recording()
    assert pool.info is not None
    run.info = pool.info
    run.modes, notes = run_modes(pool.info, sel)
    run.notes.extend(notes)
    check_coverage(run, pool.info, run.manifest if run.golden_ok else None)
    jobs = [j for j in build_jobs(configs, run.modes, run.flavors) if sel.keeps(j)]
    if not jobs:
        raise UsageError("the selection is empty: -k or --last-failed keep no job")
    by_id = {c.id: c for c in configs}
    costs = job_costs(run, jobs)
    all_jobs = jobs
    if sel.shard is not None:
        run.shard = shard_info(sel.shard, [(j.config, j.key) for j in jobs], {c.id: c.sha256 for c in configs}, costs)
        mine = [i for i, j in enumerate(jobs) if run.shard.owns(j.config)]
        jobs, costs = [jobs[i] for i in mine], [costs[i] for i in mine]
        if not jobs:
            run.notes.append(f"shard {sel.shard.label()} has no job (more shards than configs)")
    items = [WorkItem(j, by_id[j.config].data, j.mode, j.call_flavor) for j in jobs]
    cached = cached_items(run, items, reuse) if reuse else {}
    items = [dataclasses.replace(it, skip=reuse or "") if it.key in cached else it for it in items]
    order = sorted(costliest_first(costs), key=lambda i: (jobs[i].config, jobs[i].key) not in failed_first)
    expect = {c.id: c.expect for c in configs}
    failing = 0

    def stop(res: JobResult[Job]) -> bool:
        nonlocal failing
        failing += not passes(classify(res, expect[res.item.key.config], run.timeout).status)
        return maxfail is not None and failing >= maxfail

    if progress is not None:
        progress.start(len(items))
    try:
        advance = (lambda r: progress.advance(r.item.key.label())) if progress else None
        results = pool.run(items, advance, order, stop if maxfail is not None else None, costs)
        pool.release()  # the workers exit while the results are judged
        run.not_run = len(items) - len(results)
        if run.not_run:
            run.notes.append(f"stopped after {maxfail} failing job(s) (--maxfail): {run.not_run} job(s) not run")
    except EngineLoadError as e:
        run.problems.append(str(e))
        results = []
    finally:
        if progress is not None:
            progress.close()
    results = [outcache.fill(r, cached[r.item.key]) if r.item.skip and r.death is None else r for r in results]
    results = with_c_frames(run, results)
    tree = {c.sha256 for c in (run.discovery.configs if run.discovery else ())}
    recording = outcache.record_aside(run.root, run.engines, results, tree)
    if pool.replaced:
        run.notes.append(f"{pool.replaced} worker(s) were replaced after a crash or timeout")
    run.notes.extend(pool.run_notes(results))  # engine output captured, workers over the memory limit
    return all_jobs, results, recording


#: distinct C crashes (signal and stage) re-run under gdb for their C frames, at most
MAX_BACKTRACES = 3


def with_c_frames(run: GateRun, results: list[JobResult[Job]]) -> list[JobResult[Job]]:
    """The results with the C frames of each distinct C engine crash (the first job of each
    signal and stage, up to MAX_BACKTRACES), from a re-run under gdb (``backtrace``); the others
    of a cause share its frames. A job that known_gaps.toml lists as a CRASH gets its own re-run,
    whatever the limit: its entry pins its innermost frame, which must not depend on which job of
    its cause ran first, nor on how many causes the run has. Without gdb the results are as they were."""
    listed = {(g.config, g.mode, g.flavor) for g in run.gaps.gaps if g.status is Status.CRASH}
    own = (lambda j: _listed(listed, j)) if listed else (lambda _j: False)
    return attach_c_frames(run.engines.c_emit, results, own)


def _listed(listed: set[tuple[str, str, str]], job: Job) -> bool:
    return any((job.config, job.mode, f) in listed for f in (job.flavor, "*"))


def attach_c_frames(
    c_emit: str, results: list[JobResult[Job]], own: Callable[[Job], bool] = lambda _job: False
) -> list[JobResult[Job]]:
    """:func:`with_c_frames` for the C engine ``c_emit``; ``own(job)``: the job is re-run for its
    own frames (``diff`` and ``gaps add`` re-run every crashed job, as the gate does a listed one)."""
    frames: dict[tuple[str, ...], str] = {}
    out = []
    for res in results:
        d = res.death
        if d is None or d.kind != "crash" or d.engine != "c":
            out.append(res)
            continue
        job = res.item.key
        mine = own(job)
        cause = (d.signal_name, d.stage_name, *((job.label(),) if mine else ()))  # as the report groups them
        if cause not in frames and (mine or sum(len(k) == 2 for k in frames) < MAX_BACKTRACES):
            it = res.item
            frames[cause] = backtrace.c_frames(c_emit, it.data, it.mode, it.call_flavor)
        found = frames.get(cause, "")
        out.append(dataclasses.replace(res, death=dataclasses.replace(d, c_frames=found)) if found else res)
    return out


def cached_items(run: GateRun, items: list[WorkItem], side: str) -> dict[Job, tuple]:
    """The jobs whose ``side`` outputs the cache holds, with them; a note says how many (a cached
    result is never silent)."""
    got = outcache.lookup(run.root, run.engines, side, items)
    build = outcache.build_id_of(run.engines, side)
    missing = len(items) - len(got)
    run.notes.append(
        f"--reuse {side}: {len(got)} job(s) took the {side} engine's outputs from the cache "
        f"(build {build}; .rocke-parity/outputs/) instead of running it"
        + (f"; {missing} job(s) were not in the cache and ran both engines" if missing else "")
    )
    return {items[i].key: v for i, v in got.items()}


def job_costs(run: GateRun, jobs: list[Job]) -> list[float]:
    """Each job's expected cost: its recorded seconds (``lastrun``: an average of its recent
    runs), else an estimate from the size of its golden output (bytes times the median seconds
    per byte of the timed jobs; a rejection or an unknown job costs the least timed job)."""
    seconds = lastrun.job_seconds(lastrun.load(run.root))
    manifest = run.manifest if run.golden_ok else None

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


def judge_all(run: GateRun, results: list[JobResult[Job]], configs: list[Config], gaps: KnownGaps) -> set[int]:
    """A verdict for every result; returns the indexes of the known gaps that matched a job."""
    manifest = run.manifest if run.golden_ok else None
    expect = {c.id: c.expect for c in configs}
    cache = ObjectCache(run.root)
    spec_names = {r.item.key.config: kernel_name_of(r.text("py")) for r in results if r.item.key.mode == "spec"}
    refs = split_references(results)
    matched: set[int] = set()
    for res in results:
        job = res.item.key
        kname = spec_names.get(job.config) or ""
        if not kname and manifest is not None:
            prev = manifest.get(job.config, "spec")
            kname = prev.kernel_name if prev is not None else ""
        v = judge(job, res, expect[job.config], manifest, gaps, cache, kname, run.timeout, refs.get(id(res)))
        if res.item.skip:
            v = dataclasses.replace(v, reason=f"{v.reason} [{res.item.skip} outputs from the cache]")
        if v.gap is not None:
            matched.add(v.gap.index)
        run.verdicts.append(v)
    return matched


def check_unmatched_gaps(run: GateRun, gaps: KnownGaps, matched: set[int], only: set[str] | None = None) -> None:
    """On a full run, a known gap that matched no job fails the run (a shard judges its own
    configs' gaps; a change's run, those of the configs it ran: ``only``)."""
    for g in gaps.gaps:
        if run.shard is not None and not run.shard.owns(g.config):
            continue
        if only is not None and g.config not in only:
            continue
        if g.index not in matched:
            hint = ""
            if g.mode not in run.modes:
                hint = f" (mode {g.mode} is not run: both engines implement {', '.join(run.modes) or 'nothing'})"
            run.problems.append(
                f"{g.label()} matches no job of this full run{hint}: known gap no longer holds: update known_gaps.toml"
            )


def check_stale_golden(run: GateRun, jobs: list[Job]) -> None:
    """On a full run, golden entries of configs or jobs that no longer exist (golden --update removes them)."""
    keys: dict[str, set[str]] = {}
    for j in jobs:
        keys.setdefault(j.config, set()).add(j.key)
    _stale_entries(run, lambda cfg_id: keys.get(cfg_id, set()))


def check_gone_golden(run: GateRun) -> None:
    """On a run a change narrowed, golden entries that no full run could match: of configs that
    no longer exist, or of jobs no config has (a mode the engines do not run, an unknown
    flavor). Entries of configs that exist but were not selected are not stale: only running
    them could tell. Without the engines (no job) the modes are the ones golden.json pins,
    which a full run must cover."""
    if run.info is None and run.manifest is not None and run.golden_ok and run.manifest.coverage is None:
        run.stale_golden.append(_NO_COVERAGE)  # check_coverage says so when the engines ran
    modes = run.info.common_modes if run.info is not None else _pinned_modes(run.manifest)
    keys = None if modes is None else job_keys(modes, FLAVORS)
    _stale_entries(run, lambda _cfg_id: keys)


def _pinned_modes(manifest: Manifest | None) -> tuple[str, ...] | None:
    if manifest is None or manifest.coverage is None:
        return None
    return tuple(m for m in MODES if m in manifest.coverage.modes)


def _stale_entries(run: GateRun, keys_of: Callable[[str], set[str] | None]) -> None:
    """Golden entries of configs that no longer exist, and those of an existing config whose
    key is not among ``keys_of(config id)`` (None: not checked)."""
    if not run.golden_ok or run.manifest is None or run.discovery is None:
        return
    all_ids = run.discovery.by_id()
    for cfg_id in sorted(run.manifest.entries):
        if cfg_id not in all_ids:
            run.stale_golden.append(
                f"golden.json has entries for {cfg_id}, which no longer exists: rocke-parity golden --update"
            )
            continue
        keys = keys_of(cfg_id)
        extra = sorted(set(run.manifest.entries[cfg_id]) - keys) if keys is not None else []
        if extra:
            run.stale_golden.append(
                f"golden.json has {cfg_id} {', '.join(extra)}, which the full run "
                "does not run: rocke-parity golden --update"
            )
