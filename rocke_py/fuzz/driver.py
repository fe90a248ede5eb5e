"""``rocke-parity fuzz``: draw cases for a time budget, judge each, reduce and save the failures.

Case ``i`` of seed ``S`` is drawn from ``random.Random(f"{S}:{i}")`` alone, so a seed names the
same sequence of cases whatever the budget, ``-j`` or the machine (a longer run only goes
further along it). A fifth of the cases are mutations of the shipped configs, the rest
generated (:mod:`generate`). Cases run in batches over the worker pool, one job per mode; the
smallest case (fewest keys) of each failure signature is reduced (at most ``max_reductions`` of them, each
within ``reduce_seconds``), the others are counted. A SIGTERM or SIGINT (:class:`Interrupted`)
saves every failure found and not yet saved, unreduced, before it ends the run.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from rocke_py.facts import FLAVORLESS_MODES, FLAVORS
from rocke_py.fuzz import generate, mutate
from rocke_py.fuzz.case import Case, encode, key_count
from rocke_py.fuzz.oracles import NumericsCheck, Outcome, judge
from rocke_py.fuzz.reduce import reduce_case
from rocke_py.fuzz.report import Progress, Tally, render
from rocke_py.fuzz.save import Saved, save_failure, save_unreduced
from rocke_py.parity.inputs.configs import discover
from rocke_py.parity.judge.jobs import Job, UsageError
from rocke_py.parity.report.bounds import escape_surrogates
from rocke_py.parity.run.engines import FLAVORLESS_CALL_FLAVOR, NO_FLAVOR, EngineSpec
from rocke_py.parity.run.processes import Interrupted
from rocke_py.parity.run.runner import Pool
from rocke_py.parity.run.work import JobResult, WorkItem

MUTATION_SHARE = 0.2
_BATCH_SECONDS = 2.0


@dataclass(frozen=True)
class Settings:
    seed: int
    budget: float
    families: tuple[str, ...] = generate.FAMILIES
    modes: tuple[str, ...] | None = None  # None: every mode both engines implement
    jobs: int | None = None
    timeout: float = 30.0
    report: Path | None = None
    cases: int | None = None  # stop after this many cases (also bounded by the budget)
    reduce_seconds: float = 120.0
    max_reductions: int = 5
    add_configs: bool = False


@dataclass
class FuzzRun:
    tally: Tally
    seconds: float
    failures: list[tuple[Case, Outcome, int]]  # the smallest case of each signature, and how many had it
    saved: list[Saved]
    table: list[str]

    @property
    def passed(self) -> bool:
        return not self.failures


class CaseSource:
    """Case ``i`` of a seed, for the families asked for."""

    def __init__(self, seed: int, families: tuple[str, ...], root: Path) -> None:
        self.seed = seed
        self.families = families
        every = mutate.seeds([(c.family, c.id, c.data) for c in discover(root).configs])
        self.seeds = [s for s in every if s.family in families]
        self.pool = mutate.value_pool(every)  # values come from every family's configs

    def case(self, i: int) -> Case:
        rng = random.Random(f"{self.seed}:{i}")
        family = self.families[i % len(self.families)]
        flavor = rng.choice(FLAVORS)
        mine = [s for s in self.seeds if s.family == family]
        if mine and rng.random() < MUTATION_SHARE:
            origin, text = mutate.mutate(rng, rng.choice(mine), self.pool)
        else:
            origin, text = generate.draw(rng, family)
        return Case(i, origin, family, text, flavor)


def work_items(key: str, family: str, data: bytes, modes: tuple[str, ...], flavor: str) -> list[WorkItem[Job]]:
    items = []
    for m in modes:
        fl = NO_FLAVOR if m in FLAVORLESS_MODES else flavor
        items.append(WorkItem(Job(key, family, m, fl), data, m, FLAVORLESS_CALL_FLAVOR if fl == NO_FLAVOR else fl))
    return items


def run_texts(pool: Pool, texts: list[str], case: Case, modes: tuple[str, ...]) -> list[list[JobResult[Job]]]:
    """Each text run as ``case`` (its family and flavor): the job results per text."""
    items = [it for n, t in enumerate(texts) for it in work_items(f"t{n}", case.family, encode(t), modes, case.flavor)]
    results = pool.run(items)
    return [results[n * len(modes) : (n + 1) * len(modes)] for n in range(len(texts))]


def run_fuzz(
    root: Path, s: Settings, engines: EngineSpec, out: TextIO, numerics: NumericsCheck | None = None
) -> FuzzRun:
    source = CaseSource(s.seed, s.families, root)
    tally = Tally()
    first: dict[tuple[str, ...], list] = {}
    finished: list[Saved | None] = []  # each failure reduce_all is done with: saved, or only printed
    start = time.monotonic()
    end = start + s.budget
    progress = Progress(s.budget)
    try:
        with Pool(engines, s.jobs, s.timeout) as pool:
            assert pool.info is not None
            modes = s.modes or pool.info.common_modes
            missing = [m for m in modes if m not in pool.info.common_modes]
            if missing:
                raise UsageError(
                    f"mode {missing[0]} is not implemented by both engines ({', '.join(pool.info.common_modes)} are)"
                )
            try:
                draw(pool, source, s, modes, numerics, tally, first, progress, end)
            finally:
                progress.close()
            seconds = time.monotonic() - start
            reduce_all(pool, root, s, modes, found(first), numerics, out, finished)
    except Interrupted as e:
        # the pool's workers are gone: what was found is saved as it is before the signal ends the run
        run = FuzzRun(tally, time.monotonic() - start, found(first), [x for x in finished if x], [])
        save_interrupted(root, s, run, len(finished), e.name, out)
        raise
    table = render(tally, root, seconds)
    run = FuzzRun(tally, seconds, found(first), [x for x in finished if x], table)
    if s.report is not None:
        write_summary(s.report, s, run)
    return run


def found(first: dict[tuple[str, ...], list]) -> list[tuple[Case, Outcome, int]]:
    """The failures found: the smallest case of each signature, and how many had it."""
    return [(c, o, count) for c, o, count in first.values()]


def draw(
    pool: Pool,
    source: CaseSource,
    s: Settings,
    modes: tuple[str, ...],
    numerics: NumericsCheck | None,
    tally: Tally,
    first: dict[tuple[str, ...], list],
    progress: Progress,
    end: float,
) -> None:
    """Cases in batches until the budget (or ``--cases``) is spent, each judged into ``tally`` and
    each failure into ``first`` (by signature) as soon as its batch is back."""
    i, batch = 0, 2 * pool.size
    while time.monotonic() < end and (s.cases is None or i < s.cases):
        n = batch if s.cases is None else min(batch, s.cases - i)
        cases = [source.case(i + k) for k in range(n)]
        t0 = time.monotonic()
        items = [it for c in cases for it in work_items(f"case-{c.index}", c.family, c.data, modes, c.flavor)]
        results = pool.run(items, on_result=lambda r: progress.update(tally))
        judged = 0
        for k, c in enumerate(cases):
            if numerics is not None and k and time.monotonic() >= end:
                break  # the numerics oracle runs here, case by case: the budget ends the batch
            judged += 1
            outcome = judge(results[k * len(modes) : (k + 1) * len(modes)], s.timeout, numerics)
            tally.add(c, outcome)
            if outcome.failed:
                seen = first.setdefault(outcome.signature, [c, outcome, 0])
                seen[2] += 1
                if key_count(c.text)[1] < key_count(seen[0].text)[1]:
                    seen[0], seen[1] = c, outcome  # the smallest case of a signature reduces best
        i += judged
        took = max(time.monotonic() - t0, 1e-3)
        batch = max(pool.size, min(4096, int(judged * _BATCH_SECONDS / took)))
        progress.update(tally)


def reduce_all(
    pool: Pool,
    root: Path,
    s: Settings,
    modes: tuple[str, ...],
    failures: list[tuple[Case, Outcome, int]],
    numerics: NumericsCheck | None,
    out: TextIO,
    finished: list[Saved | None],
) -> None:
    """Reduce and save the first ``max_reductions`` failures, each appended to ``finished`` once
    done with (None: printed, without --report), so that an interrupted run knows which are."""
    for n, (case, outcome, count) in enumerate(failures[: s.max_reductions], 1):
        print(
            f"FAIL {outcome.verdict} case {case.index} ({case.family}, {case.origin}, {outcome.mode}): "
            f"{escape_surrogates(outcome.reason[:200])}",  # an engine's message: a lone surrogate kills stdout
            file=out,
        )
        print(
            f"  {count} case(s) with this signature: {escape_surrogates(' | '.join(outcome.signature)[:240])}",
            file=out,
        )

        def test(texts: list[str], case: Case = case) -> list[tuple[str, ...]]:
            return [judge(r, s.timeout, numerics).signature for r in run_texts(pool, texts, case, modes)]

        red = reduce_case(case.text, outcome.signature, test, s.reduce_seconds)
        if s.report is None:
            print("  (no --report folder: the reduction is not saved)", file=out)
            print("  reduced:\n    " + red.text.replace("\n", "\n    "), file=out)
            finished.append(None)
            continue
        final = run_texts(pool, [red.text], case, modes)[0]
        got = save_failure(s.report, n, root, s.seed, case, outcome, red, final, s.add_configs)
        finished.append(got)
        print(
            f"  reduced: {got.keys_before} -> {got.keys_after} keys beyond the required ones "
            f"({red.tests} tests); {got.note}",
            file=out,
        )
        print(f"  saved in {got.folder}" + (f" ({got.config_file.name})" if got.config_file else ""), file=out)
    for case, outcome, _ in failures[s.max_reductions :]:
        print(f"FAIL {outcome.verdict} case {case.index} ({case.origin}): not reduced (--max-reductions)", file=out)


def save_interrupted(root: Path, s: Settings, run: FuzzRun, done: int, signal_name: str, out: TextIO) -> None:
    """After a signal: every failure found and not yet saved (reduce_all was done with the first
    ``done``), saved unreduced under --report (or printed whole without one), and the table so
    far; the caller then exits 128 + the signal."""
    why = f"interrupted by {signal_name} before its reduction"
    for n, (case, outcome, _) in enumerate(run.failures[: s.max_reductions], 1):
        if n <= done:
            continue
        where = f"({case.family}, {case.origin}, {outcome.mode})"
        print(f"FAIL {outcome.verdict} case {case.index} {where}: {why}", file=out)
        if s.report is None:
            print("  (no --report folder: the case as drawn)\n    " + case.text.replace("\n", "\n    "), file=out)
            continue
        print(f"  saved in {save_unreduced(s.report, n, s.seed, case, outcome, why)}", file=out)
    for case, outcome, _ in run.failures[s.max_reductions :]:
        print(f"FAIL {outcome.verdict} case {case.index} ({case.origin}): not reduced (--max-reductions)", file=out)
    run.table = [*render(run.tally, root, run.seconds), f"interrupted by {signal_name}"]
    if s.report is not None:
        write_summary(s.report, s, run)


def write_summary(report: Path, s: Settings, run: FuzzRun) -> None:
    report.mkdir(parents=True, exist_ok=True)
    head = f"rocke-parity fuzz --seed {s.seed} --budget {s.budget:g}" + (
        f" --family {','.join(s.families)}" if s.families != generate.FAMILIES else ""
    )
    (report / "summary.txt").write_text(head + "\n\n" + "\n".join(run.table) + "\n", encoding="utf-8")
