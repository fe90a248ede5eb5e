"""``rocke-parity diff`` / ``parity-diff``: why do the engines disagree on this job?

Runs both engines in the gate's worker pool (so a segfault or a hang is a CRASH or TIMEOUT
job, reported like any other), each twice (to catch nondeterminism), on every job of the config —
spec, ir, then ll in each flavor, or only the ``--mode``/``--flavor`` asked for — and judges each
job exactly as the gate does (the same statuses: one verdict per config, the golden manifest,
known gaps). It prints one line per job, then the first failing job in detail: both outcomes,
the status and which engine still matches the golden entry, the first divergent line with
context from each side, the first stage that diverges, a unified diff capped at 200 lines, both
sha256s, the job's known_gaps.toml entry (a whole ``[[gap]]`` block whose reason is a
placeholder the gate refuses until it is filled in; ``rocke-parity gaps add`` writes it with a
reason) and the repro commands. ``--canonical`` renumbers SSA names first (:mod:`canon`), so a
pure renumbering reads "identical after canonical renumbering". A C engine crash is re-run
under gdb for its own frames (``backtrace``), as the gate re-runs a job listed as a CRASH gap,
so that the printed entry pins the frame the gate will see; a crashed job is shown as the gate
shows it (:func:`terminal.detail_lines`, :func:`report.repro_lines`). Every printed line is
bounded as the gate's reports are (:func:`bounds.clip`: an 8 MB divergent line is cut to its
head and its size; ``--save DIR`` keeps the whole text). An unreadable golden.json is said in
one line, as the gate says it, and the jobs are judged without it.

Exit status: 0 when every job it ran passes as the gate would pass it, 1 when any fails (or
golden.json cannot be read: the gate fails on that too), 2 on a usage error.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from rocke_py.facts import FLAVORLESS_MODES, FLAVORS, MODES
from rocke_py.parity.inputs.configs import (
    CONFIG_DIR,
    Expectation,
    discover,
    parse_parity_table,
    read_config_bytes,
    resolve_id,
)
from rocke_py.parity.judge.canon import bounded_unified_diff, canonicalise, context, first_divergence
from rocke_py.parity.judge.compare import Status
from rocke_py.parity.judge.gate import attach_c_frames
from rocke_py.parity.judge.jobs import Job
from rocke_py.parity.judge.known_gaps import PLACEHOLDER_REASON, entry_toml
from rocke_py.parity.judge.verdict import Verdict, judge, split_references
from rocke_py.parity.report.bounds import clip, escape_surrogates
from rocke_py.parity.report.report import repro_lines
from rocke_py.parity.report.terminal import detail_lines
from rocke_py.parity.run.engines import NO_FLAVOR, EngineRun, EngineSpec
from rocke_py.parity.run.runner import Pool
from rocke_py.parity.run.work import EngineInfo, JobResult, WorkItem

DIFF_CAP = 200


class DiffUsageError(Exception):
    pass


@dataclass(frozen=True)
class Target:
    label: str  # config id, or the file path when the file is outside parity_configs/
    data: bytes
    expect: Expectation | None
    relpath: str  # for the rocke-emit repro
    family: str | None = None  # None for a file outside parity_configs/


def resolve_target(root: Path | None, ref: str) -> Target:
    if root is not None:
        disc = discover(root)
        cfg = resolve_id(disc, ref)
        if cfg is not None:
            return Target(cfg.id, cfg.data, cfg.expect, cfg.relpath(root), cfg.family)
    p = Path(ref)
    if p.is_file():
        try:
            data, _ = read_config_bytes(p)  # bounded: at most the engines' limit + 1 bytes
        except OSError as e:
            raise DiffUsageError(f"cannot read {ref}: {e.strerror or e}") from None
        try:
            _, expect, _ = parse_parity_table(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            expect = None
        return Target(str(p), data, expect, str(p))
    raise DiffUsageError(f"unknown config {ref!r} (an id such as wgrad/11-kouter-cshuffle, or a file)")


def _outcome_lines(side: str, run: EngineRun) -> list[str]:
    pad = f"{side}:".ljust(4)
    if run.kind == "emitted":
        return [f"{pad}emitted {run.nbytes} bytes, sha256 {run.sha256}"]
    if run.kind == "rejected":
        return [f"{pad}rejected {run.code}", f"    {run.message}"]
    lines = [f"{pad}CRASH: raised {run.code}: {run.message}"]
    lines += [f"    | {ln}" for ln in run.detail.splitlines()]
    return lines


def _context_block(name: str, text: str, line: int, n: int) -> list[str]:
    rows = context(text, line, n)
    if not rows:
        return [f"--- {name}: (text has {len(text.splitlines())} lines; nothing at line {line})"]
    out = [f"--- {name} (lines {rows[0][0]}-{rows[-1][0]})"]
    width = len(str(rows[-1][0]))
    for i, ln in rows:
        mark = ">" if i == line else " "
        out.append(f"{mark} {str(i).rjust(width)} | {ln}")
    if line > len(text.splitlines()):
        out.append(f"> {str(line).rjust(width)} | (end of text: {name} has no line {line})")
    return out


def first_stage(stages: dict[str, JobResult], mode: str) -> tuple[str, list[str]]:
    """The first stage (spec → ir → ll) whose outcomes differ, and what each earlier stage did.

    ``stages``: the results of the config's earlier modes (at the job's flavor), run in the pool."""
    seen: list[str] = []
    for stage in MODES:
        if stage == mode:
            break
        r = stages.get(stage)
        if r is None:
            seen.append(f"{stage} not implemented by both engines")
            continue
        if r.death is not None or not r.py or not r.c:
            seen.append(f"{stage} did not finish")
            continue
        py, c = r.py[0], r.c[0]
        if py.signature() != c.signature():
            return stage, seen + [f"{stage} differs: py {py.short()}; c {c.short()}"]
        seen.append(f"{stage} identical")
    return mode, seen


def _load_context(root: Path | None, target: Target):
    """The golden manifest and known gaps that judge the target (none for a file outside the
    tree), and why golden.json could not be read (None when it could, or is not there)."""
    from rocke_py.parity.judge import golden as golden_mod
    from rocke_py.parity.judge import known_gaps as gaps_mod

    if root is None or target.family is None:
        return None, gaps_mod.KnownGaps((), ()), None, None
    unread = None
    try:
        manifest = golden_mod.load(golden_mod.golden_path(root))
    except golden_mod.GoldenError as e:  # the gate's run-level failure: judged without it, and said
        manifest, unread = None, str(e)
    ids = {c.id for c in discover(root).configs}
    gaps = gaps_mod.load(root / CONFIG_DIR / gaps_mod.FILE_NAME, ids)
    return manifest, gaps, golden_mod.ObjectCache(root), unread


def run_diff(
    root: Path | None,
    ref: str,
    mode: str | None,
    flavor: str | None,
    n_context: int,
    canonical: bool,
    engines: EngineSpec,
    out: TextIO,
    timeout: float = 60.0,
    save: Path | None = None,
) -> int:
    target = resolve_target(root, ref)
    if save is not None and save.exists() and not save.is_dir():
        raise DiffUsageError(f"--save {save}: not a directory")
    if flavor is not None and flavor not in FLAVORS:
        raise DiffUsageError(f"unknown flavor {flavor!r} (flavors: {', '.join(FLAVORS)})")
    if mode is not None and mode not in MODES:
        raise DiffUsageError(f"unknown mode {mode!r} (modes: {', '.join(MODES)})")
    with Pool(engines, 2, timeout) as pool:
        assert pool.info is not None
        return _diff_in_pool(pool, target, root, mode, flavor, n_context, canonical, out, timeout, save)


def run_judged(root: Path | None, ref: str, engines: EngineSpec, timeout: float = 60.0) -> tuple[Target, Judged]:
    """Every job of one config run in a pool of two workers and judged as ``diff`` judges them
    (``gaps add``: what a full gate would say of each job, its evidence included)."""
    target = resolve_target(root, ref)
    with Pool(engines, 2, timeout) as pool:
        assert pool.info is not None
        return target, judge_target(pool, target, root, None, None)


@dataclass(frozen=True)
class Judged:
    """The jobs of one config run in the pool and judged as the gate judges them."""

    verdicts: list[Verdict]
    stages: dict[str, JobResult]  # the flavorless modes' results, for "first stage that diverges"
    vanished: list[str]  # modes golden.json pins that an engine no longer advertises
    golden_error: str | None = None  # why golden.json could not be read (the jobs judged without it)


def _check_mode(info: EngineInfo, mode: str | None) -> tuple[str, ...]:
    """The modes both engines implement; a usage error when ``mode`` is not one of them."""
    common = info.common_modes
    if not common:
        raise DiffUsageError("the engines implement no common mode")
    if mode is not None and mode not in common:
        lack = [s for s, ms in (("py", info.py_modes), ("c", info.c_modes)) if mode not in ms]
        raise DiffUsageError(
            f"mode {mode} is not implemented by the {' and '.join(lack)} engine(s); "
            f"both implement: {', '.join(common) or 'nothing'}"
        )
    return common


def _jobs(target: Target, modes: list[str], flavors: list[str]) -> list[Job]:
    jobs: list[Job] = []
    for m in modes:
        if m in FLAVORLESS_MODES:
            jobs.append(Job(target.label, target.family or "-", m, NO_FLAVOR))
        else:
            jobs.extend(Job(target.label, target.family or "-", m, f) for f in flavors)
    return jobs


def judge_target(pool: Pool, target: Target, root: Path | None, mode: str | None, flavor: str | None) -> Judged:
    """Every job of the target (or those of ``mode``/``flavor``) run in ``pool`` and judged."""
    info = pool.info
    assert info is not None
    common = _check_mode(info, mode)
    modes = [mode] if mode is not None else list(common)
    jobs = _jobs(target, modes, [flavor] if flavor is not None else list(FLAVORS))
    expect = target.expect
    # the earlier stages of each job's flavor too, for "first stage that diverges" (not judged)
    context = [
        Job(target.label, target.family or "-", m, NO_FLAVOR)
        for m in common
        if m in FLAVORLESS_MODES and not any(j.mode == m for j in jobs)
    ]
    items = [WorkItem(j, target.data, j.mode, j.call_flavor) for j in (*jobs, *context)]
    ran = attach_c_frames(pool.spec.c_emit, pool.run(items), lambda _job: True)
    results = {r.item.key: r for r in ran[: len(jobs)]}
    stages = {r.item.key.mode: r for r in ran if r.item.key.mode in FLAVORLESS_MODES}
    manifest, gaps, cache, unread = _load_context(root, target)
    rs = list(results.values())
    refs = split_references(rs)
    verdicts = [
        judge(
            j,
            r,
            expect if expect is not None else Expectation(),
            manifest,
            gaps,
            cache,
            "",
            None,
            refs.get(id(r)),
        )
        for j, r in results.items()
    ]
    vanished = []
    if manifest is not None and manifest.coverage is not None and mode is None:
        for m in manifest.coverage.modes:
            if m not in common:
                lack = [s for s, ms in (("py", info.py_modes), ("c", info.c_modes)) if m not in ms]
                who = " and ".join(lack) + (" engines do" if len(lack) > 1 else " engine does")
                vanished.append(f"FAIL coverage: golden.json pins mode {m}, but the {who} not advertise it")
    return Judged(verdicts, stages, vanished, unread)


def _diff_in_pool(
    pool: Pool,
    target: Target,
    root: Path | None,
    mode: str | None,
    flavor: str | None,
    n_context: int,
    canonical: bool,
    out: TextIO,
    timeout: float,
    save: Path | None = None,
) -> int:
    p = _printer(out, save)
    judged = judge_target(pool, target, root, mode, flavor)
    verdicts, stages, vanished = judged.verdicts, judged.stages, judged.vanished
    expect = target.expect
    failing = [v for v in verdicts if not v.passed]
    shown = failing[0] if failing else verdicts[-1]
    whole = mode is None and flavor is None

    p(
        f"diff {target.label}  (expects {expect if expect else 'unknown'}; "
        f"{len(verdicts)} job(s): {'every mode and flavor' if whole else 'as selected'})"
    )
    for v in verdicts:
        mark = "ok  " if v.passed else "FAIL"
        p(f"  {mark} {v.job.mode:<4} {v.job.flavor:<7} {v.status.value}")
    for ln in vanished:
        p(ln)
    if judged.golden_error is not None:
        p(f"FAIL run-level: {judged.golden_error} (the jobs above are judged without it)")
    if failing:
        p(f"{len(failing)} of {len(verdicts)} job(s) fail; the first, in stage order (spec → ir → ll, then flavors):")
    elif len(verdicts) > 1:
        p(f"all {len(verdicts)} job(s) pass" + (" (every mode and flavor of the config)" if whole else ""))
    p()
    _detail(p, stages, target, shown, n_context, canonical, pool.spec.c_emit)
    if shown.evidence and not shown.passed and shown.status.value != "KNOWN_GAP":
        p()
        _gap_entry(p, shown)
    if save is not None:
        p()
        try:
            n = save_outputs(save, [v.result for v in verdicts])
        except OSError as e:
            raise DiffUsageError(f"--save {save}: cannot write: {e.strerror or e}") from None
        p(f"saved {n} file(s) under {save}: diff -r {save}/py {save}/c (canonical: {save}/py.canonical, c.canonical)")
    return 0 if not failing and not vanished and judged.golden_error is None else 1


def _printer(out: TextIO, save: Path | None):
    """``print`` to ``out`` with each line bounded as the gate's reports bound theirs: an engine's
    output is not the harness's to trust (an 8 MB line, a lone surrogate stdout cannot encode)."""
    kept = str(save) if save is not None else "--save DIR"

    def p(s: str = "") -> None:
        print("\n".join(escape_surrogates(clip(ln, kept=kept)) for ln in s.split("\n")), file=out)

    return p


def _gap_entry(p, v: Verdict) -> None:
    """The job's known_gaps.toml entry, whole: valid TOML, with a reason the gate refuses until
    it is replaced (so that pasting it unread cannot make the gate pass)."""
    job = v.job
    flavor = f" --flavor {job.flavor}" if job.flavor != NO_FLAVOR else ""
    p(f'to list it as a known gap: rocke-parity gaps add {job.config} --mode {job.mode}{flavor} --reason "..."')
    p("or append this entry to parity_configs/known_gaps.toml once its reason says why (the gate")
    p("refuses the placeholder reason):")
    p()
    p(entry_toml(job.config, job.mode, job.flavor, v.status, PLACEHOLDER_REASON, dict(v.evidence)).rstrip("\n"))


_EXTENSIONS = {"spec": "txt", "ir": "ir", "ll": "ll"}


def _saved_text(run: EngineRun, text: str | None) -> str:
    """What an engine gave, as a file: its output, or the rejection or crash as two lines."""
    if run.kind == "emitted" and text is not None:
        return text
    word = "REJECTED" if run.kind == "rejected" else "CRASH"
    return f"{word} {run.code}\n{run.message}\n"


def save_outputs(dest: Path, results: list[JobResult]) -> int:
    """``diff --save DIR``: each job's two outputs as ``DIR/{py,c}/<key>.<ext>`` and their
    canonical renumberings as ``DIR/{py,c}.canonical/<key>.<ext>`` (same names on both sides,
    for ``diff -r`` or any directory diff tool); returns the number of files written."""
    from rocke_py.parity.run.engines import text_bytes
    from rocke_py.parity.store.state import atomic_write

    n = 0
    for r in results:
        job = r.item.key
        name = f"{job.key}.{_EXTENSIONS.get(job.mode, 'txt')}"
        for side in ("py", "c"):
            runs = r.runs(side)
            if r.death is not None or not runs:
                text = f"CRASH {r.death.describe() if r.death else 'no result'}\n"
            else:
                text = _saved_text(runs[0], r.text(side))
            for folder, body in ((side, text), (f"{side}.canonical", canonicalise(text))):
                atomic_write(dest / folder / name, text_bytes(body))
                n += 1
    return n


def _detail(p, stages: dict[str, JobResult], target: Target, v, n_context: int, canonical: bool, c_emit: str) -> None:
    res: JobResult = v.result
    mode, flavor = v.job.mode, v.job.call_flavor
    p(f"job {target.label}  mode {mode}  flavor {v.job.flavor}")
    if res.death is not None or not res.py or not res.c:
        p(f"status: {v.status.value} — {v.reason}")
        # the gate's crash report, from the gate's functions: the C frames, the dump's head, and
        # the gdb command that gives the C frames where gdb is not on the PATH
        for ln in detail_lines(res):
            p(f"    | {ln}")
        p("repro:")
        for ln in repro_lines(v, target.relpath, c_emit):
            p(f"  {ln}")
        return
    py, c = res.py[0], res.c[0]
    for side, run in (("py", py), ("c", c)):
        for ln in _outcome_lines(side, run):
            p(ln)
    for side in ("py", "c"):
        r = res.runs(side)
        if len(r) > 1 and r[0].signature() != r[1].signature():
            p(f"{side} second run: {r[1].short()}  (NONDETERMINISTIC)")
    p(f"status: {v.status.value} — {v.reason}")

    if py.kind == "emitted" and c.kind == "emitted" and py.sha256 != c.sha256:
        a, b = res.py_text or "", res.c_text or ""
        note = ""
        if canonical:
            ca, cb = canonicalise(a), canonicalise(b)
            if ca == cb:
                p("identical after canonical renumbering: the outputs differ only in SSA %names")
                a = b = ""
            else:
                a, b, note = ca, cb, " (after canonical renumbering)"
        d = first_divergence(a, b) if a or b else None
        if d is not None:
            p()
            p(f"first divergent line{note}: {d.line}, column {d.column}")
            for ln in _context_block("py", a, d.line, n_context):
                p(ln)
            for ln in _context_block("c", b, d.line, n_context):
                p(ln)
        if mode != "spec":
            stage, seen = first_stage(stages, mode)
            p()
            p(f"first stage that diverges: {stage}" + (f" ({'; '.join(seen)})" if seen else ""))
        if d is not None:
            lines, cut = bounded_unified_diff(a, b, f"py/{mode}", f"c/{mode}", DIFF_CAP)
            p()
            p(f"unified diff{note}" + (f" (first {DIFF_CAP} lines; {cut} more cut)" if cut else "") + ":")
            for ln in lines:
                p(ln)
            if cut:
                p(f"... {cut} more diff lines cut")
    elif py.kind == "rejected" and c.kind == "rejected":
        p(
            f"codes: {'same' if py.code == c.code else 'differ'} ({py.code} / {c.code}); "
            f"messages: {'same' if py.message == c.message else 'differ'}"
        )
        if py.message != c.message:
            d = first_divergence(py.message, c.message)
            if d is not None:
                p(f"messages first differ at line {d.line}, column {d.column}")
    elif (
        (py.kind == "emitted") != (c.kind == "emitted")
        and mode != "spec"
        and v.status in (Status.PY_ONLY_REJECTED, Status.C_ONLY_REJECTED)
    ):
        stage, seen = first_stage(stages, mode)
        p(f"first stage that diverges: {stage}" + (f" ({'; '.join(seen)})" if seen else ""))

    p()
    p(f"sha256 py: {py.sha256 or '-'}")
    p(f"sha256 c:  {c.sha256 or '-'}")
    p("repro:")
    repro_id = target.label if target.relpath.startswith(CONFIG_DIR + "/") else target.relpath
    p(f"  rocke-parity diff {repro_id} --mode {mode} --flavor {flavor}")
    p(f"  rocke-emit {target.relpath} --mode {mode} --flavor {flavor}")
