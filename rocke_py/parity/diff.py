"""``rocke-parity diff`` / ``parity-diff``: why do the engines disagree on this job?

Runs both engines in this process (no pool: a C segfault ends the command, with a
faulthandler traceback), each twice (to catch nondeterminism), and prints both outcomes, the
status, the first divergent line with context from each side, the first stage that diverges
(spec → ir → ll, among the modes both engines implement), a unified diff capped at 200 lines,
both sha256s and the repro commands. ``--canonical`` renumbers SSA names first
(:mod:`canon`), so a pure renumbering reads "identical after canonical renumbering".

Exit status: 0 when the engines agree as the config expects (IDENTICAL or BOTH_REJECTED; the
golden manifest is not consulted), 1 otherwise, 2 on a usage error.
"""
from __future__ import annotations

import faulthandler
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from rocke_py.parity.canon import bounded_unified_diff, canonicalise, context, first_divergence
from rocke_py.parity.compare import Status, classify, passes
from rocke_py.parity.configs import (CONFIG_DIR, Expectation, discover, parse_parity_table, read_config_bytes,
                                     resolve_id)
from rocke_py.parity.engines import (FLAVORLESS_MODES, FLAVORS, MODES, NO_FLAVOR, EngineRun, EngineSpec,
                                     LoadedEngines, call_engine, load_engines)
from rocke_py.parity.runner import JobResult, WorkItem

DIFF_CAP = 200
DEFAULT_FLAVOR = "llvm22"


class DiffUsageError(Exception):
    pass


@dataclass(frozen=True)
class Target:
    label: str  # config id, or the file path when the file is outside parity_configs/
    data: bytes
    expect: Expectation | None
    relpath: str  # for the rocke-emit repro


def resolve_target(root: Path | None, ref: str) -> Target:
    if root is not None:
        disc = discover(root)
        cfg = resolve_id(disc, ref)
        if cfg is not None:
            return Target(cfg.id, cfg.data, cfg.expect, cfg.relpath(root))
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


def default_mode(common: tuple[str, ...]) -> str | None:
    """The deepest mode both engines implement (ll, else ir, else spec)."""
    return common[-1] if common else None


def _run_twice(eng: LoadedEngines, data: bytes, mode: str, flavor: str) -> JobResult:
    runs: dict[str, list[EngineRun]] = {"py": [], "c": []}
    texts: dict[str, str | None] = {"py": None, "c": None}
    for n in (1, 2):
        for side in ("py", "c"):
            run, text = call_engine(eng.emit_fn(side), data, mode, flavor)
            runs[side].append(run)
            if n == 1:
                texts[side] = text
    item = WorkItem(None, data, mode, flavor)
    return JobResult(item, tuple(runs["py"]), tuple(runs["c"]), texts["py"], texts["c"])


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


def first_stage(eng: LoadedEngines, data: bytes, mode: str, flavor: str) -> tuple[str, list[str]]:
    """The first stage (spec → ir → ll) whose outcomes differ, and what each earlier stage did."""
    common = eng.common_modes
    seen: list[str] = []
    for stage in MODES:
        if stage == mode:
            break
        if stage not in common:
            seen.append(f"{stage} not implemented by both engines")
            continue
        py, _ = call_engine(eng.py, data, stage, flavor)
        c, _ = call_engine(eng.c, data, stage, flavor)
        if py.signature() != c.signature():
            return stage, seen + [f"{stage} differs: py {py.short()}; c {c.short()}"]
        seen.append(f"{stage} identical")
    return mode, seen


def run_diff(root: Path | None, ref: str, mode: str | None, flavor: str | None, n_context: int, canonical: bool,
             engines: EngineSpec, out: TextIO) -> int:
    p = lambda s="": print(s, file=out)  # noqa: E731
    target = resolve_target(root, ref)
    if flavor is not None and flavor not in FLAVORS:
        raise DiffUsageError(f"unknown flavor {flavor!r} (flavors: {', '.join(FLAVORS)})")
    if mode is not None and mode not in MODES:
        raise DiffUsageError(f"unknown mode {mode!r} (modes: {', '.join(MODES)})")
    if not faulthandler.is_enabled():
        faulthandler.enable(sys.stderr)
    eng = load_engines(engines)
    common = eng.common_modes
    if mode is None:
        mode = default_mode(common)
        if mode is None:
            raise DiffUsageError("the engines implement no common mode")
    elif mode not in common:
        lack = [s for s in ("py", "c") if mode not in eng.modes(s)]
        raise DiffUsageError(f"mode {mode} is not implemented by the {' and '.join(lack)} engine(s); "
                             f"both implement: {', '.join(common) or 'nothing'}")
    flavor = flavor or DEFAULT_FLAVOR
    shown_flavor = NO_FLAVOR if mode in FLAVORLESS_MODES else flavor
    expect = target.expect
    res = _run_twice(eng, target.data, mode, flavor)
    cls = classify(res, expect if expect is not None else Expectation())
    py, c = res.py[0], res.c[0]

    p(f"diff {target.label}  mode {mode}  flavor {shown_flavor}  (expects {expect if expect else 'unknown'})")
    for side, run in (("py", py), ("c", c)):
        for ln in _outcome_lines(side, run):
            p(ln)
    for side in ("py", "c"):
        r = res.runs(side)
        if r[0].signature() != r[1].signature():
            p(f"{side} second run: {r[1].short()}  (NONDETERMINISTIC)")
    p(f"status: {cls.status.value} — {cls.reason}")

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
            stage, seen = first_stage(eng, target.data, mode, flavor)
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
        p(f"codes: {'same' if py.code == c.code else 'differ'} ({py.code} / {c.code}); "
          f"messages: {'same' if py.message == c.message else 'differ'}")
        if py.message != c.message:
            d = first_divergence(py.message, c.message)
            if d is not None:
                p(f"messages first differ at line {d.line}, column {d.column}")
    elif (py.kind == "emitted") != (c.kind == "emitted") and mode != "spec" and cls.status in (
            Status.PY_ONLY_REJECTED, Status.C_ONLY_REJECTED):
        stage, seen = first_stage(eng, target.data, mode, flavor)
        p(f"first stage that diverges: {stage}" + (f" ({'; '.join(seen)})" if seen else ""))

    p()
    p(f"sha256 py: {py.sha256 or '-'}")
    p(f"sha256 c:  {c.sha256 or '-'}")
    p("repro:")
    repro_id = target.label if target.relpath.startswith(CONFIG_DIR + "/") else target.relpath
    p(f"  rocke-parity diff {repro_id} --mode {mode} --flavor {flavor}")
    p(f"  rocke-emit {target.relpath} --mode {mode} --flavor {flavor}")
    return 0 if passes(cls.status) else 1
