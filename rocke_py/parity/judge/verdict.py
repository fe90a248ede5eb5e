"""One job's verdict: its classification, one verdict per config, golden.json, known gaps.

:func:`judge` turns one job's result into a :class:`Verdict`; :func:`judge_all` judges every
result of a run. A config has one verdict in every mode (:func:`split_references`); a failing
job with a golden entry says which engine still matches it (:func:`golden_match`).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from rocke_py.parity.inputs.configs import Config, Expectation
from rocke_py.parity.judge import known_gaps as gaps_mod
from rocke_py.parity.judge.compare import GOLDEN_STATUSES, Status, classify, message_difference, passes
from rocke_py.parity.judge.golden import GoldenEntry, Manifest, renumbering_verdict
from rocke_py.parity.judge.jobs import Job
from rocke_py.parity.judge.known_gaps import KnownGap, KnownGaps
from rocke_py.parity.run.engines import MODES, NO_FLAVOR, EngineRun
from rocke_py.parity.run.work import JobResult
from rocke_py.parity.store.objects import ObjectCache

_KERNEL_NAME_RE = re.compile(r"^kernel_name = (.*?)\r?$", re.MULTILINE)


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


def kernel_name_of(spec_text: str | None) -> str:
    if not spec_text:
        return ""
    m = _KERNEL_NAME_RE.search(spec_text)
    return m.group(1).strip() if m else ""


def judge_all(
    results: Sequence[JobResult[Job]],
    configs: tuple[Config, ...],
    manifest: Manifest | None,
    gaps: KnownGaps,
    root: Path,
    timeout: float,
) -> tuple[list[Verdict], set[int]]:
    """A verdict for every result, and the indexes of the known gaps that matched a job.

    ``manifest`` is None when golden.json could not be read; ``root``'s object cache keeps the
    texts a later drift's renumbering verdict needs."""
    expect = {c.id: c.expect for c in configs}
    cache = ObjectCache(root)
    spec_names = {r.item.key.config: kernel_name_of(r.text("py")) for r in results if r.item.key.mode == "spec"}
    refs = split_references(results)
    verdicts: list[Verdict] = []
    for res in results:
        job = res.item.key
        kname = spec_names.get(job.config) or ""
        if not kname and manifest is not None:
            prev = manifest.get(job.config, "spec")
            kname = prev.kernel_name if prev is not None else ""
        v = judge(job, res, expect[job.config], manifest, gaps, cache, kname, timeout, refs.get(id(res)))
        if res.item.skip:
            v = dataclasses.replace(v, reason=f"{v.reason} [{res.item.skip} outputs from the cache]")
        verdicts.append(v)
    return verdicts, {v.gap.index for v in verdicts if v.gap is not None}


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


def split_references(results: Sequence[JobResult[Job]]) -> dict[int, JobResult[Job]]:
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
