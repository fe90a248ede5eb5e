"""The run-level checks of a gate run: what fails a run beyond its jobs' verdicts.

Each check takes what it needs as values and returns its :class:`Findings`: run-level failures,
failures that ``golden --update`` fixes (stale golden.json), and notes. Coverage is pinned
(docs/gate-honesty.md); a known gap that matches no job, and a golden entry that no job can
match, fail the run that could have matched them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from rocke_py.parity.inputs.configs import Config, Discovery
from rocke_py.parity.inputs.shards import ShardInfo
from rocke_py.parity.judge.golden import Coverage, Manifest
from rocke_py.parity.judge.jobs import Job, Selection, job_keys
from rocke_py.parity.judge.known_gaps import KnownGaps
from rocke_py.parity.run.engines import FLAVORS, MODES
from rocke_py.parity.run.work import EngineInfo


@dataclass(frozen=True)
class Findings:
    """What a step of a run found besides the verdicts, each kind in the order found."""

    problems: tuple[str, ...] = ()  # run-level failures
    stale_golden: tuple[str, ...] = ()  # run-level failures that golden --update fixes
    notes: tuple[str, ...] = ()  # informational, printed before the summary

    def __add__(self, other: Findings) -> Findings:
        return Findings(
            self.problems + other.problems, self.stale_golden + other.stale_golden, self.notes + other.notes
        )


_NO_COVERAGE = (
    "golden.json pins no coverage (the modes and flavors of the full gate): rocke-parity golden --update records it"
)


def check_coverage(
    sel: Selection,
    info: EngineInfo,
    modes: tuple[str, ...],
    flavors: tuple[str, ...],
    manifest: Manifest | None,
    root: Path,
    tree: Sequence[Config],
) -> Findings:
    """The run (its ``modes`` and ``flavors``) covers what golden.json pins (docs/gate-honesty.md:
    coverage is pinned); ``manifest`` is None when golden.json could not be read.

    A pinned mode that an engine no longer advertises fails any run that does not choose its
    modes; a pinned flavor the harness does not run fails any run that does not choose its
    flavors. A full run that covers more than is pinned, or a manifest that pins nothing, is
    fixed by ``golden --update`` (recorded after review). A full run also checks the coverage
    ratchet over ``tree``, every config of the tree under ``root`` (:func:`check_ratchet`)."""
    cov = manifest.coverage if manifest is not None else None
    if cov is None:
        if manifest is not None and sel.tree_checks:
            return Findings(stale_golden=(_NO_COVERAGE,))
        if manifest is not None:
            return Findings(notes=("golden.json pins no coverage: this run cannot tell whether a mode vanished",))
        return Findings()
    problems: list[str] = []
    stale: list[str] = []
    if sel.modes is None:
        for m in cov.modes:
            if m in modes:
                continue
            lack = [side for side, ms in (("py", info.py_modes), ("c", info.c_modes)) if m not in ms]
            who = " and ".join(lack) + (" engines do" if len(lack) > 1 else " engine does")
            problems.append(
                f"coverage: golden.json pins mode {m}, but the {who} not advertise it "
                f"(py: {', '.join(info.py_modes) or 'nothing'}; c: {', '.join(info.c_modes) or 'nothing'}): "
                f"the gate would cover less than it must"
            )
        if sel.tree_checks:
            stale += [
                f"coverage: both engines advertise mode {m}, which golden.json does "
                "not pin: rocke-parity golden --update pins it"
                for m in modes
                if m not in cov.modes
            ]
    ratchet = check_ratchet(root, tree, cov) if sel.tree_checks else Findings()
    problems += ratchet.problems
    stale += ratchet.stale_golden
    if sel.flavors is None and "ll" in cov.modes:
        problems += [
            f"coverage: golden.json pins flavor {f}, which this harness does not run"
            for f in cov.flavors
            if f not in FLAVORS or f not in flavors
        ]
        if sel.tree_checks:
            stale += [
                f"coverage: flavor {f} is run but not pinned: rocke-parity golden --update"
                for f in flavors
                if f not in cov.flavors
            ]
    return Findings(tuple(problems), tuple(stale))


def check_ratchet(root: Path, tree: Sequence[Config], cov: Coverage) -> Findings:
    """A full run reaches every tuple at the stratum golden.json records (docs/coverage.md §6).

    ``tree``: every config of the tree, not the run's selection: a run a change narrowed
    (--paths, --changed) still judges the whole tree's coverage."""
    from rocke_py.coverage import ratchet

    now = ratchet.reached(root, tree)
    if cov.tuples is None:
        return Findings(
            stale_golden=("coverage: golden.json records no tuples: rocke-parity golden --update records them",)
        )
    pinned = dict(cov.tuples)
    gone = ratchet.lost(pinned, now)
    up = ratchet.risen(pinned, now)
    return Findings(
        problems=(ratchet.lost_line(gone),) if gone else (),
        stale_golden=(
            f"coverage: {len(up)} tuple(s) reached above the stratum golden.json records "
            f"(e.g. {up[0]}): rocke-parity golden --update records them",
        )
        if up
        else (),
    )


def check_unmatched_gaps(
    gaps: KnownGaps,
    matched: set[int],
    modes: tuple[str, ...],
    shard: ShardInfo | None,
    only: set[str] | None = None,
) -> Findings:
    """On a full run, a known gap that matched no job (its index not in ``matched``) fails the
    run; ``modes``: the modes the run ran. A shard judges its own configs' gaps; a change's run,
    those of the configs it ran (``only``)."""
    problems = []
    for g in gaps.gaps:
        if shard is not None and not shard.owns(g.config):
            continue
        if only is not None and g.config not in only:
            continue
        if g.index not in matched:
            hint = ""
            if g.mode not in modes:
                hint = f" (mode {g.mode} is not run: both engines implement {', '.join(modes) or 'nothing'})"
            problems.append(
                f"{g.label()} matches no job of this full run{hint}: known gap no longer holds: update known_gaps.toml"
            )
    return Findings(problems=tuple(problems))


def check_stale_golden(manifest: Manifest | None, discovery: Discovery, jobs: Sequence[Job]) -> Findings:
    """On a full run (every job of the selection: ``jobs``), golden entries of configs or jobs
    that no longer exist (golden --update removes them)."""
    keys: dict[str, set[str]] = {}
    for j in jobs:
        keys.setdefault(j.config, set()).add(j.key)
    return Findings(stale_golden=_stale_entries(manifest, discovery, lambda cfg_id: keys.get(cfg_id, set())))


def check_gone_golden(manifest: Manifest | None, discovery: Discovery, info: EngineInfo | None) -> Findings:
    """On a run a change narrowed, golden entries that no full run could match: of configs that
    no longer exist, or of jobs no config has (a mode the engines do not run, an unknown
    flavor). Entries of configs that exist but were not selected are not stale: only running
    them could tell. Without the engines (``info`` None: no job) the modes are the ones
    golden.json pins, which a full run must cover."""
    stale: tuple[str, ...] = ()
    if info is None and manifest is not None and manifest.coverage is None:
        stale = (_NO_COVERAGE,)  # check_coverage says so when the engines ran
    modes = info.common_modes if info is not None else _pinned_modes(manifest)
    keys = None if modes is None else job_keys(modes, FLAVORS)
    return Findings(stale_golden=stale + _stale_entries(manifest, discovery, lambda _cfg_id: keys))


def _pinned_modes(manifest: Manifest | None) -> tuple[str, ...] | None:
    if manifest is None or manifest.coverage is None:
        return None
    return tuple(m for m in MODES if m in manifest.coverage.modes)


def _stale_entries(
    manifest: Manifest | None, discovery: Discovery, keys_of: Callable[[str], set[str] | None]
) -> tuple[str, ...]:
    """Golden entries of configs that no longer exist, and those of an existing config whose
    key is not among ``keys_of(config id)`` (None: not checked)."""
    if manifest is None:
        return ()
    all_ids = discovery.by_id()
    stale = []
    for cfg_id in sorted(manifest.entries):
        if cfg_id not in all_ids:
            stale.append(f"golden.json has entries for {cfg_id}, which no longer exists: rocke-parity golden --update")
            continue
        keys = keys_of(cfg_id)
        extra = sorted(set(manifest.entries[cfg_id]) - keys) if keys is not None else []
        if extra:
            stale.append(
                f"golden.json has {cfg_id} {', '.join(extra)}, which the full run "
                "does not run: rocke-parity golden --update"
            )
    return tuple(stale)
