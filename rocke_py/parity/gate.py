"""One gate run: discovery → selection → jobs → worker pool → classification → known gaps → golden.

``run_gate`` never prints; it returns a :class:`GateRun` that :mod:`report` renders and
:mod:`cli` turns into an exit status (0 iff every job passed and there is no run-level failure).
Selection mistakes (an unknown family or config id, a mode the engines do not implement, an
empty selection) raise :class:`UsageError` (exit 2).
"""
from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from rocke_py.parity import golden as golden_mod
from rocke_py.parity import known_gaps as gaps_mod
from rocke_py.parity.compare import Status, classify, passes
from rocke_py.parity.configs import Config, Discovery, changed_during_run, discover, resolve_id
from rocke_py.parity.engines import (FLAVORLESS_CALL_FLAVOR, FLAVORLESS_MODES, FLAVORS, MODES, NO_FLAVOR,
                                     EngineSpec)
from rocke_py.parity.golden import GoldenEntry, GoldenError, Manifest, ObjectCache, output_key
from rocke_py.parity.known_gaps import KnownGap
from rocke_py.parity.runner import EngineInfo, EngineLoadError, JobResult, Pool, WorkItem

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

    @property
    def full(self) -> bool:
        return not self.families and not self.configs and self.modes is None and self.flavors is None


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

    @property
    def passed(self) -> bool:
        return not self.problems and not self.stale_golden and all(v.passed for v in self.verdicts)

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
    if sel.configs:
        picked: list[Config] = []
        for ref in sel.configs:
            c = resolve_id(disc, ref)
            if c is None:
                raise UsageError(f"unknown config {ref!r} (see rocke-parity list)")
            if c not in picked:
                picked.append(c)
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
            raise UsageError(f"the engines implement no common mode (py: {', '.join(info.py_modes) or 'none'}; "
                             f"c: {', '.join(info.c_modes) or 'none'})")
        return common, notes
    missing = [m for m in sel.modes if m not in common]
    if missing:
        parts = []
        for m in missing:
            lack = [s for s, ms in (("py", info.py_modes), ("c", info.c_modes)) if m not in ms]
            parts.append(f"{m} (not implemented by the {' and '.join(lack)} engine{'s' if len(lack) > 1 else ''})")
        raise UsageError(f"--mode {', '.join(parts)}; both engines implement: {', '.join(common) or 'nothing'}")
    return tuple(m for m in MODES if m in sel.modes), notes


def build_jobs(configs: list[Config], modes: tuple[str, ...], flavors: tuple[str, ...]) -> list[Job]:
    jobs: list[Job] = []
    for c in configs:
        for m in modes:
            if m in FLAVORLESS_MODES:
                jobs.append(Job(c.id, c.family, m, NO_FLAVOR))
            else:
                jobs.extend(Job(c.id, c.family, m, f) for f in flavors)
    return jobs


def run_gate(root: Path, sel: Selection = Selection(), engines: EngineSpec = EngineSpec(),
             workers: int | None = None, timeout: float = 60.0, progress: Progress | None = None) -> GateRun:
    t0 = time.monotonic()
    check_names(sel)
    disc = discover(root)
    run = GateRun(root=root, selection=sel, timeout=timeout, discovery=disc)
    configs = select(disc, sel) if disc.configs else []
    run.configs = tuple(configs)
    fams = {c.family for c in configs}
    run.problems.extend(p.message for p in disc.problems
                        if sel.full or p.family is None or p.family in fams)
    gaps = gaps_mod.load(root / "parity_configs" / gaps_mod.FILE_NAME, set(disc.by_id()))
    run.problems.extend(gaps.problems)
    try:
        manifest = golden_mod.load(golden_mod.golden_path(root))
    except GoldenError as e:
        run.problems.append(str(e))
        manifest = Manifest({}, exists=False)
        run.golden_ok = False
    run.manifest = manifest
    if not configs:
        run.wall_seconds = time.monotonic() - t0
        return run

    flavors = tuple(sel.flavors) if sel.flavors is not None else FLAVORS
    run.flavors = flavors
    most = len(configs) * (len(FLAVORLESS_MODES) + len(flavors))  # an upper bound on the number of jobs
    try:
        pool = Pool(engines, min(workers or os.cpu_count() or 1, most), timeout).__enter__()
    except EngineLoadError as e:
        run.problems.append(str(e))
        run.wall_seconds = time.monotonic() - t0
        return run
    try:
        assert pool.info is not None
        run.info = pool.info
        modes, notes = run_modes(pool.info, sel)
        run.modes = modes
        run.notes.extend(notes)
        jobs = build_jobs(configs, modes, flavors)
        by_id = {c.id: c for c in configs}
        items = [WorkItem(j, by_id[j.config].data, j.mode, j.call_flavor) for j in jobs]
        if progress is not None:
            progress.start(len(items))

        def on_result(res: JobResult) -> None:
            if progress is not None:
                progress.advance(res.item.key.label())  # type: ignore[attr-defined]
        try:
            results = pool.run(items, on_result)
        except EngineLoadError as e:
            run.problems.append(str(e))
            results = []
        finally:
            if progress is not None:
                progress.close()
        if pool.replaced:
            run.notes.append(f"{pool.replaced} worker(s) were replaced after a crash or timeout")
    finally:
        pool.close()

    cache = ObjectCache(root)
    spec_names = {r.item.key.config: kernel_name_of(r.py_text)  # type: ignore[attr-defined]
                  for r in results if r.item.key.mode == "spec"}  # type: ignore[attr-defined]
    matched: set[int] = set()
    for res in results:
        job: Job = res.item.key  # type: ignore[assignment]
        cfg = by_id[job.config]
        kname = spec_names.get(job.config) or ""
        if not kname:
            prev = manifest.get(job.config, "spec")
            kname = prev.kernel_name if prev is not None else ""
        base = classify(res, cfg.expect, timeout)
        status, reason = base.status, base.reason
        entry = manifest.get(job.config, job.key)
        if status is Status.IDENTICAL and run.golden_ok:
            new_sha, new_bytes = res.py[0].sha256, res.py[0].nbytes
            if entry is None:
                status = Status.GOLDEN_MISSING
                reason = (f"identical ({new_bytes} bytes), but golden.json has no {job.key} entry: "
                          f"rocke-parity golden --update --config {job.config}")
            elif entry.sha256 != new_sha or entry.bytes != new_bytes:
                status = Status.GOLDEN_DRIFT
                verdict = golden_mod.renumbering_verdict(cache, entry.sha256, res.py_text)
                reason = (f"identical, but not the golden bytes: {new_bytes - entry.bytes:+d} bytes, "
                          f"sha256 {new_sha[:12]} (golden {entry.sha256[:12]}); {verdict}")
            elif res.py_text is not None:
                try:
                    cache.put(new_sha, res.py_text)
                except OSError:
                    pass
        gap = gaps.lookup(job.config, job.mode, job.flavor)
        holds = False
        if gap is not None:
            matched.add(gap.index)
            code = res.py[0].code if res.py and res.py[0].kind == "rejected" else None
            if gap.holds_for(status, code):
                holds = True
                passed = True
                reason = f"known gap ({gap.reason}); actual: {reason}"
                status = Status.KNOWN_GAP
            else:
                passed = False
                listed = gap.status.value + (f" {gap.code}" if gap.code else "")
                now = status.value + (f" {code}" if code else "")
                reason = (f"known gap no longer holds: listed as {listed}, now {now}: "
                          f"update known_gaps.toml (entry {gap.index}); {reason}")
        else:
            passed = passes(status)
        run.verdicts.append(Verdict(job, str(cfg.expect), status, passed, reason, res, gap, holds, entry, kname))

    if sel.full:
        for g in gaps.gaps:
            if g.index not in matched:
                hint = ""
                if g.mode not in run.modes:
                    hint = f" (mode {g.mode} is not run: both engines implement {', '.join(run.modes) or 'nothing'})"
                run.problems.append(f"{g.label()} matches no job of this full run{hint}: "
                                    "known gap no longer holds: update known_gaps.toml")
        if run.golden_ok:
            all_ids = disc.by_id()
            for cfg_id in sorted(manifest.entries):
                c = all_ids.get(cfg_id)
                if c is None:
                    run.stale_golden.append(f"golden.json has entries for {cfg_id}, which no longer exists: "
                                        "rocke-parity golden --update")
                elif not c.expect.emits:
                    run.stale_golden.append(f"golden.json has entries for {cfg_id}, which expects {c.expect}: "
                                        "rocke-parity golden --update")
    # a config edited while its jobs ran: the verdicts are for the bytes read at the start
    run.problems.extend(changed_during_run(configs, root))
    run.wall_seconds = time.monotonic() - t0
    return run
