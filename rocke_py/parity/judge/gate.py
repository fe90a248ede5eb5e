"""One gate run, as a pipeline of values: inputs → jobs run → verdicts → run-level checks.

:func:`run_gate` reads its :class:`Inputs` (the configs, known_gaps.toml, golden.json), runs the
selected jobs through the worker pool (:class:`Ran`), judges each result (:mod:`verdict`), runs
the run-level checks (:mod:`checks`), and makes the :class:`GateRun` once, at the end. It never
prints: :mod:`report` renders the run and :mod:`cli` turns it into an exit status (0 iff every
job passed and there is no run-level failure). Selection mistakes raise
:class:`~rocke_py.parity.judge.jobs.UsageError` (exit 2).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol

from rocke_py.parity.inputs.configs import Config, Discovery, changed_during_run, discover
from rocke_py.parity.inputs.shards import ShardInfo
from rocke_py.parity.judge import golden as golden_mod
from rocke_py.parity.judge import known_gaps as gaps_mod
from rocke_py.parity.judge.checks import (
    Findings,
    check_coverage,
    check_gone_golden,
    check_stale_golden,
    check_unmatched_gaps,
)
from rocke_py.parity.judge.compare import Status, classify, passes
from rocke_py.parity.judge.golden import GoldenError, Manifest
from rocke_py.parity.judge.jobs import Job, Selection, check_names, costliest_first, plan_jobs, run_modes, select
from rocke_py.parity.judge.known_gaps import KnownGaps
from rocke_py.parity.judge.verdict import Verdict, judge_all
from rocke_py.parity.run import backtrace
from rocke_py.parity.run.engines import FLAVORS, JOBS_PER_CONFIG, EngineSpec
from rocke_py.parity.run.runner import Pool, pool_size
from rocke_py.parity.run.work import EngineInfo, EngineLoadError, JobResult, WorkItem
from rocke_py.parity.store import outcache
from rocke_py.parity.store.objects import ObjectCache, text_store


class Progress(Protocol):
    def start(self, total: int) -> None: ...
    def advance(self, label: str) -> None: ...
    def close(self) -> None: ...


@dataclass(frozen=True)
class GateRun:
    """One gate run, made once, at its end, from the values of its steps (:func:`run_gate`); the
    reports read it. Its lists are made whole, never appended to."""

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


@dataclass(frozen=True)
class Inputs:
    """What a run reads before any engine runs (:func:`load_inputs`)."""

    discovery: Discovery  # every config of the tree
    configs: tuple[Config, ...]  # the selected ones
    gaps: KnownGaps  # known_gaps.toml
    manifest: Manifest  # golden.json (empty when it could not be read)
    golden_ok: bool  # golden.json could be read
    problems: tuple[str, ...]  # run-level failures: discovery, known_gaps.toml, golden.json

    @property
    def golden(self) -> Manifest | None:
        """The manifest the jobs are judged against: None when golden.json could not be read."""
        return self.manifest if self.golden_ok else None


@dataclass(frozen=True)
class Ran:
    """What the engines did with a run's jobs (:func:`run_jobs`)."""

    flavors: tuple[str, ...] = ()
    info: EngineInfo | None = None  # None: the engines did not load, or did not run
    modes: tuple[str, ...] = ()
    jobs: tuple[Job, ...] = ()  # every job of the selection (a shard: all shards')
    results: tuple[JobResult[Job], ...] = ()  # the results of the jobs that ran
    shard: ShardInfo | None = None  # --shard: the partition of ``jobs``
    not_run: int = 0  # jobs --maxfail left out
    found: Findings = Findings()  # the modes' notes, the coverage check's findings, the pool's notes
    recording: outcache.Recording = field(default_factory=outcache.Recording)  # under way: wait for it


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
        inputs = load_inputs(root, sel, engines, disc)
        found = Findings(problems=inputs.problems)
        ran, verdicts = Ran(), []
        if inputs.configs and pool is not None:
            ran = run_jobs(root, sel, engines, timeout, inputs, pool, progress, failed_first, maxfail, reuse)
            try:  # while the engines' outputs are recorded in the cache (outcache.record_aside)
                verdicts, matched = judge_all(ran.results, inputs.configs, inputs.golden, inputs.gaps, root, timeout)
                found += ran.found
                if sel.whole and ran.not_run == 0:
                    # every job ran (a shard: here or in its siblings): what matched nothing is stale
                    found += check_unmatched_gaps(inputs.gaps, matched, ran.modes, ran.shard)
                    found += check_stale_golden(inputs.golden, disc, ran.jobs)
                elif sel.every_job_of_its_configs and ran.not_run == 0:  # the selected configs' gaps
                    found += check_unmatched_gaps(
                        inputs.gaps, matched, ran.modes, ran.shard, {c.id for c in inputs.configs}
                    )
                # a config edited while its jobs ran: the verdicts are for the bytes read at the start
                found += Findings(problems=tuple(changed_during_run(inputs.configs, root)))
            finally:
                problem = ran.recording.wait()  # a run that returns has recorded its outputs
            if problem:
                found += Findings(notes=(f"could not record the engines' outputs in the cache: {problem}",))
        if sel.changed:
            found += check_gone_golden(inputs.golden, disc, ran.info)
    finally:
        if pool is not None:
            pool.close()
    return GateRun(
        root=root,
        selection=sel,
        timeout=timeout,
        verdicts=verdicts,
        problems=list(found.problems),
        stale_golden=list(found.stale_golden),
        notes=list(found.notes),
        info=ran.info,
        modes=ran.modes,
        flavors=ran.flavors,
        wall_seconds=time.monotonic() - t0,
        golden_ok=inputs.golden_ok,
        manifest=inputs.manifest,
        discovery=disc,
        configs=inputs.configs,
        not_run=ran.not_run,
        engines=engines,
        shard=ran.shard,
        gaps=inputs.gaps,
    )


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


def load_inputs(root: Path, sel: Selection, engines: EngineSpec, disc: Discovery) -> Inputs:
    """The selected configs of ``disc``, the known gaps and the manifest; their problems are
    run-level failures."""
    configs = select(disc, sel) if disc.configs else []
    fams = {c.family for c in configs}
    found = [*disc.problems, *(disc.duplicates if engines == EngineSpec() else ())]
    problems = [p.message for p in found if sel.tree_checks or p.family is None or p.family in fams]
    gaps = gaps_mod.load(root / "parity_configs" / gaps_mod.FILE_NAME, set(disc.by_id()))
    problems += gaps.problems
    try:
        manifest, golden_ok = golden_mod.load(golden_mod.golden_path(root)), True
    except GoldenError as e:
        problems.append(str(e))
        manifest, golden_ok = Manifest({}, exists=False), False
    return Inputs(disc, tuple(configs), gaps, manifest, golden_ok, tuple(problems))


def run_jobs(
    root: Path,
    sel: Selection,
    engines: EngineSpec,
    timeout: float,
    inputs: Inputs,
    pool: Pool,
    progress: Progress | None,
    failed_first: frozenset[tuple[str, str]] = frozenset(),
    maxfail: int | None = None,
    reuse: str | None = None,
) -> Ran:
    """Every job of the selection through the worker pool (both engines, twice), once the
    engines said which modes they implement and the run covers what golden.json pins
    (:func:`check_coverage`). The results' recording in the output cache is under way
    (``outcache.record_aside``) when this returns."""
    flavors = tuple(sel.flavors) if sel.flavors is not None else FLAVORS
    try:
        pool.wait_ready()
    except EngineLoadError as e:
        return Ran(flavors, found=Findings(problems=(str(e),)))
    info = pool.info
    assert info is not None
    modes, mode_notes = run_modes(info, sel)
    found = Findings(notes=tuple(mode_notes))
    found += check_coverage(sel, info, modes, flavors, inputs.golden, root, inputs.discovery.configs)
    plan = plan_jobs(sel, inputs.configs, modes, flavors, root, inputs.golden)
    found += Findings(notes=plan.notes)
    jobs = plan.mine
    by_id = {c.id: c for c in inputs.configs}
    items = [WorkItem(j, by_id[j.config].data, j.mode, j.call_flavor) for j in jobs]
    cached: dict[Job, tuple] = {}
    if reuse:
        cached, note = cached_items(root, engines, items, reuse)
        found += Findings(notes=(note,))
    items = [dataclasses.replace(it, skip=reuse or "") if it.key in cached else it for it in items]
    order = sorted(costliest_first(list(plan.costs)), key=lambda i: (jobs[i].config, jobs[i].key) not in failed_first)
    expect = {c.id: c.expect for c in inputs.configs}
    failing = 0

    def stop(res: JobResult[Job]) -> bool:
        nonlocal failing
        failing += not passes(classify(res, expect[res.item.key.config], timeout).status)
        return maxfail is not None and failing >= maxfail

    if progress is not None:
        progress.start(len(items))
    not_run = 0
    try:
        advance = (lambda r: progress.advance(r.item.key.label())) if progress else None
        results = pool.run(items, advance, order, stop if maxfail is not None else None, list(plan.costs))
        pool.release()  # the workers exit while the results are judged
        not_run = len(items) - len(results)
        if not_run:
            found += Findings(notes=(f"stopped after {maxfail} failing job(s) (--maxfail): {not_run} job(s) not run",))
    except EngineLoadError as e:
        found += Findings(problems=(str(e),))
        results = []
    finally:
        if progress is not None:
            progress.close()
    results = [outcache.fill(r, cached[r.item.key]) if r.item.skip and r.death is None else r for r in results]
    results = with_c_frames(engines, inputs.gaps, results)
    tree = {c.sha256 for c in inputs.discovery.configs}
    recording = outcache.record_aside(root, engines, results, tree)
    if pool.replaced:
        found += Findings(notes=(f"{pool.replaced} worker(s) were replaced after a crash or timeout",))
    found += Findings(notes=tuple(pool.run_notes(results)))  # engine output captured, workers over the memory limit
    return Ran(flavors, info, modes, plan.jobs, tuple(results), plan.shard, not_run, found, recording)


#: distinct C crashes (signal and stage) re-run under gdb for their C frames, at most
MAX_BACKTRACES = 3


def with_c_frames(engines: EngineSpec, gaps: KnownGaps, results: list[JobResult[Job]]) -> list[JobResult[Job]]:
    """The results with the C frames of each distinct C engine crash (the first job of each
    signal and stage, up to MAX_BACKTRACES), from a re-run under gdb (``backtrace``); the others
    of a cause share its frames. A job that known_gaps.toml lists as a CRASH gets its own re-run,
    whatever the limit: its entry pins its innermost frame, which must not depend on which job of
    its cause ran first, nor on how many causes the run has. Without gdb the results are as they were."""
    listed = {(g.config, g.mode, g.flavor) for g in gaps.gaps if g.status is Status.CRASH}
    own = (lambda j: _listed(listed, j)) if listed else (lambda _j: False)
    return attach_c_frames(engines.c_emit, results, own)


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


def cached_items(root: Path, engines: EngineSpec, items: list[WorkItem], side: str) -> tuple[dict[Job, tuple], str]:
    """The jobs whose ``side`` outputs the cache holds, with them, and a note that says how many
    (a cached result is never silent)."""
    got = outcache.lookup(root, engines, side, items)
    build = outcache.build_id_of(engines, side)
    missing = len(items) - len(got)
    note = (
        f"--reuse {side}: {len(got)} job(s) took the {side} engine's outputs from the cache "
        f"(build {build}; .rocke-parity/outputs/) instead of running it"
        + (f"; {missing} job(s) were not in the cache and ran both engines" if missing else "")
    )
    return {items[i].key: v for i, v in got.items()}, note
