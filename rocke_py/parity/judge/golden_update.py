"""The policy of ``golden --update``: when a run may be recorded, what it records, and the locked write.

- A run is recorded only when every job passes but for the manifest (GOLDEN_MISSING,
  GOLDEN_DRIFT, VERDICT_CHANGED) and there is no run-level failure other than stale entries and
  coverage to pin (:func:`blocking`). In particular a run that covers less than the pinned
  coverage is refused.
- It records the verdict of every job that ran (:func:`recorded`); a full run also removes the
  entries of configs and jobs that no longer exist and pins its coverage (:func:`full_scope`);
  a partial run never deletes or re-pins what it did not run.
- The read-merge-write holds a lock beside golden.json and re-reads the manifest inside it, so
  concurrent updates of different configs all land; a read-only manifest is refused
  (:func:`write_locked`).

The CLI (:mod:`cli`) only prints what these return.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

from rocke_py.parity.judge import golden as golden_mod
from rocke_py.parity.judge.compare import GOLDEN_STATUSES, Status
from rocke_py.parity.judge.gate import GateRun
from rocke_py.parity.judge.golden import Change, Coverage, GoldenEntry, Manifest, Output
from rocke_py.parity.judge.verdict import Verdict
from rocke_py.parity.store.objects import ObjectCache
from rocke_py.parity.store.state import file_lock


class UpdateError(Exception):
    """The manifest cannot be written (read-only, unreadable, a failed write): exit 2."""


def blocking(run: GateRun) -> list[Verdict]:
    """The jobs that keep this run from being recorded (failures other than the manifest's)."""
    return [
        v
        for v in run.verdicts
        if not v.passed and (v.status.value not in GOLDEN_STATUSES or (v.gap is not None and not v.gap_holds))
    ]


def refused(run: GateRun) -> bool:
    return bool(run.problems or blocking(run) or not run.golden_ok)


def recorded(run: GateRun) -> list[Output]:
    """The verdict of every job that passes but for the manifest (a known gap records nothing)."""
    outputs = []
    for v in run.verdicts:
        if v.status.value not in GOLDEN_STATUSES and v.status not in (Status.IDENTICAL, Status.BOTH_REJECTED):
            continue
        r = v.result.py[0]
        entry = (
            GoldenEntry.emitted(r.sha256, r.nbytes, v.kernel_name)
            if r.kind == "emitted"
            else GoldenEntry.rejected(r.code, r.message)
        )
        res = v.result
        # a text the worker left in the store is there already: it is read back only for a moved
        # entry, whose renumbering verdict compares it with the old one
        text = res.text("py") if v.status is Status.GOLDEN_DRIFT else res.py_text
        outputs.append(Output(v.job.config, v.job.key, entry, text))
    return outputs


def full_scope(run: GateRun) -> tuple[dict[str, set[str]] | None, Coverage | None]:
    """For a full run: the job keys of every config, and the coverage to pin; (None, None) otherwise."""
    if run.partial:
        return None, None
    existing: dict[str, set[str]] = {c.id: set() for c in run.configs}
    for v in run.verdicts:
        existing[v.job.config].add(v.job.key)
    from rocke_py.coverage.ratchet import reached

    configs = run.discovery.configs if run.discovery is not None else run.configs
    tuples = tuple(sorted(reached(run.root, configs).items()))
    return existing, Coverage(run.modes, run.flavors if "ll" in run.modes else (), tuples)


def write_locked(
    path: Path,
    outputs: list[Output],
    existing: dict[str, set[str]] | None,
    coverage: Coverage | None,
    cache: ObjectCache,
) -> tuple[Manifest, list[Change]]:
    """Read, merge and write the manifest under its lock; returns the new manifest and the changes."""
    try:
        with file_lock(path.with_name(f".{path.name}.lock")):
            if path.exists() and not (path.stat().st_mode & 0o222):
                raise UpdateError(
                    f"{path.parent.name}/{path.name} is read-only: not replaced (make it writable to update it)"
                )
            try:
                current = golden_mod.load(path)
            except golden_mod.GoldenError as e:
                raise UpdateError(str(e)) from None
            manifest, changes = golden_mod.plan_update(current, outputs, existing, coverage, cache)
            if changes or not current.exists:
                golden_mod.write(path, manifest)
    except OSError as e:
        raise UpdateError(f"cannot write {path}: {e}") from None
    return manifest, changes


def remember_texts(
    run: GateRun, outputs: list[Output], manifest: Manifest, cache: ObjectCache, changes: Sequence[Change] = ()
) -> None:
    """Keep the recorded texts in the local cache (for the next renumbering verdict); best effort.
    A full run prunes the texts no entry refers to, but keeps those of the entries it moved, so
    that ``golden diff`` can still show what this update changed."""
    for o in outputs:
        if o.text is not None:
            try:
                cache.put(o.entry.sha256, o.text)
            except OSError:
                pass
    if not run.partial:
        keep = {e.sha256 for outs in manifest.entries.values() for e in outs.values() if e.emits}
        cache.prune(keep | {c.old.sha256 for c in changes if c.old is not None and c.old.emits})


def drift_reviews(run: GateRun) -> Callable[[dict], list[str]]:
    """For the gate's ``--summary``: a GOLDEN_DRIFT job's record -> the text diff of its entry
    (:func:`golden.review_lines`: the recorded text from the local cache against this run's),
    computed only for the records the summary shows."""
    cache = ObjectCache(run.root)
    drifted = {(v.job.config, v.job.key): v for v in run.verdicts if v.status is Status.GOLDEN_DRIFT}

    def review(rec: dict) -> list[str]:
        v = drifted.get((rec.get("config"), golden_mod.output_key(rec.get("mode", ""), rec.get("flavor", ""))))
        if v is None or v.golden is None:
            return []
        return golden_mod.review_lines(cache.get(v.golden.sha256), v.result.text("py"))

    return review


def stored_reviews(root: Path) -> Callable[[dict], list[str]]:
    """For ``merge --summary``, which has the reports only: a GOLDEN_DRIFT record -> the text diff
    of its entry when both texts are in this tree's local cache (else the one-line note)."""
    cache = ObjectCache(root)

    def review(rec: dict) -> list[str]:
        g, now = rec.get("golden") or {}, rec.get("py") or {}
        shas = [str(g.get("sha256")), str(now.get("sha256"))]
        if g.get("verdict") != "emit" or now.get("kind") != "emitted" or not all(map(golden_mod.is_sha256, shas)):
            return []  # a report's value is never a path into the cache
        return golden_mod.review_lines(cache.get(shas[0]), cache.get(shas[1]))

    return review
