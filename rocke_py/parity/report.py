"""Rendering a gate run: terminal summary, progress bar, ``--json`` and ``--junit`` reports.

Reports are written atomically (:func:`fileio.write_output`: temp file + rename, ``-`` for
standard output) or not at all, raising :class:`fileio.WriteError`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TextIO

from rocke_py.parity.canon import context, first_divergence
from rocke_py.parity.compare import Status
from rocke_py.parity.engines import EngineRun
from rocke_py.parity.fileio import write_output
from rocke_py.parity.gate import GateRun, Verdict
from rocke_py.parity.groups import group_failures
from rocke_py.parity.runner import JobResult

JSON_SCHEMA = "rocke-parity.report/v1"
_REASON_LIMIT = 240
_DETAIL_LINES = 8


# ----------------------------------------------------------------------------- progress


class TqdmProgress:
    """A tqdm bar on stderr; built only when stderr is a terminal (see :func:`make_progress`)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._bar = None

    def start(self, total: int) -> None:
        from tqdm import tqdm  # imported only on a terminal

        self._bar = tqdm(total=total, file=self._stream, unit="job", leave=False, dynamic_ncols=True)

    def advance(self, label: str) -> None:
        if self._bar is not None:
            self._bar.set_postfix_str(label, refresh=False)
            self._bar.update(1)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def make_progress(stream: TextIO | None = None) -> TqdmProgress | None:
    stream = stream if stream is not None else sys.stderr
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    if not tty:
        return None
    import importlib.util

    if importlib.util.find_spec("tqdm") is None:
        return None
    return TqdmProgress(stream)


# ----------------------------------------------------------------------------- terminal


def _short(text: str, limit: int = _REASON_LIMIT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def failure_line(v: Verdict) -> str:
    return f"FAIL {v.status.value} {v.job.config} {v.job.mode} {v.job.flavor}: {_short(v.reason)}"


def _jobs_list(verdicts: tuple[Verdict, ...], limit: int = 8) -> str:
    """``wgrad/11-x ll.llvm20, ...``: the jobs of a group, the first ``limit`` of them named."""
    names = [f"{v.job.config} {v.job.key}" for v in verdicts[:limit]]
    more = f", and {len(verdicts) - limit} more" if len(verdicts) > limit else ""
    return ", ".join(names) + more


def _detail(res: JobResult) -> str:
    if res.death is not None and res.death.detail:
        return res.death.detail
    for side in ("py", "c"):
        for run in res.runs(side):
            if run.kind == "error" and run.detail:
                return run.detail
    return ""


def summary_table(run: GateRun) -> list[str]:
    present = [s for s in Status if any(v.status is s for v in run.verdicts)]
    families = sorted({v.job.family for v in run.verdicts})
    headers = ["family", *(s.value for s in present), "jobs", "failed"]
    rows: list[list[str]] = []
    for fam in [*families, "total"]:
        vs = [v for v in run.verdicts if fam == "total" or v.job.family == fam]
        rows.append(
            [
                fam,
                *(str(sum(v.status is s for v in vs)) for s in present),
                str(len(vs)),
                str(sum(not v.passed for v in vs)),
            ]
        )
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def fmt(cells: list[str]) -> str:
        return "  ".join(c.ljust(widths[0]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(cells)).rstrip()

    return [fmt(headers), *(fmt(r) for r in rows)]


def render(run: GateRun, out: TextIO, title: str = "gate") -> None:
    p = lambda s="": print(s, file=out)  # noqa: E731
    for group in group_failures(run.failures):
        v = group.first
        p(failure_line(v))
        detail = _detail(v.result)
        if detail and v.status in (Status.CRASH, Status.TIMEOUT):
            for ln in detail.splitlines()[:_DETAIL_LINES]:
                p(f"    | {ln}")
        if len(group.verdicts) > 1:
            p(f"    + {len(group.verdicts) - 1} more job(s) with the same cause: {_jobs_list(group.verdicts[1:])}")
    explain = [v for v in run.failures if v.status not in (Status.GOLDEN_DRIFT, Status.GOLDEN_MISSING)]
    if explain:
        v = explain[0]
        flavor = v.job.flavor if v.job.flavor != "-" else "llvm22"
        p(f"explain a failure: rocke-parity diff {v.job.config} --mode {v.job.mode} --flavor {flavor}")
    elif run.failures:
        p("record the identical outputs after review: rocke-parity golden --update")
    for prob in (*run.problems, *run.stale_golden):
        p(f"FAIL run-level: {prob}")
    for n in run.notes:
        p(f"note: {n}")
    if run.verdicts:
        p()
        for line in summary_table(run):
            p(line)
    gaps = run.known_gaps
    if gaps:
        p()
        p(
            f"KNOWN GAPS: {len(gaps)} job(s) pass only because parity_configs/known_gaps.toml lists them "
            "(the goal is none):"
        )
        for v in gaps:
            p(f"  KNOWN_GAP {v.job.config} {v.job.mode} {v.job.flavor}: {_short(v.gap.reason if v.gap else '')}")
    p()
    total = len(run.verdicts)
    failed = len(run.failures)
    ident = sum(v.status is Status.IDENTICAL for v in run.verdicts)
    rej = sum(v.status is Status.BOTH_REJECTED for v in run.verdicts)
    modes = ",".join(run.modes) or "-"
    flavors = ",".join(run.flavors) if "ll" in run.modes else "-"
    counts = f"{ident} identical, {rej} both-rejected as expected, {len(gaps)} known gap(s)"
    verdict = "PASSED" if run.passed else "FAILED"
    parts = [f"{failed} of {total} job(s) failed" if failed else f"{total} job(s)"]
    if run.problems or run.stale_golden:
        parts.append(f"{len(run.problems) + len(run.stale_golden)} run-level failure(s)")
    if run.partial:
        p(f"note: {run.partial_note()}")
        verdict += " (PARTIAL RUN)"
    p(
        f"{title} {verdict}: {', '.join(parts)} ({counts}); modes {modes}; flavors {flavors}; "
        f"wall time {run.wall_seconds:.2f} s"
    )


# ----------------------------------------------------------------------------- JSON


def _run_json(run: EngineRun | None) -> dict[str, object] | None:
    if run is None:
        return None
    d: dict[str, object] = {
        "kind": run.kind,
        "code": run.code,
        "message": run.message,
        "sha256": run.sha256,
        "bytes": run.nbytes,
    }
    if run.detail:
        d["detail"] = run.detail
    return d


def job_record(v: Verdict) -> dict[str, object]:
    res = v.result
    rec: dict[str, object] = {
        "config": v.job.config,
        "family": v.job.family,
        "mode": v.job.mode,
        "flavor": v.job.flavor,
        "status": v.status.value,
        "passed": v.passed,
        "expected": v.expected,
        "reason": v.reason,
        "kernel_name": v.kernel_name,
        "py": _run_json(res.py[0] if res.py else None),
        "c": _run_json(res.c[0] if res.c else None),
        "py_repeat": _run_json(res.py[1] if len(res.py) > 1 else None),
        "c_repeat": _run_json(res.c[1] if len(res.c) > 1 else None),
        "durations": {"py": [r.seconds for r in res.py], "c": [r.seconds for r in res.c]},
    }
    if res.death is not None:
        rec["death"] = {
            "kind": res.death.kind,
            "engine": res.death.engine,
            "run": res.death.run,
            "exitcode": res.death.exitcode,
            "signal": res.death.signal_name,
            "detail": res.death.detail,
        }
    if v.evidence:
        rec["evidence"] = dict(v.evidence)
    if v.golden_match:
        rec["golden_match"] = v.golden_match
    if v.gap is not None:
        rec["known_gap"] = {
            "status": v.gap.status.value,
            "reason": v.gap.reason,
            "holds": v.gap_holds,
            "evidence": dict(v.gap.evidence),
        }
    if v.golden is not None:
        rec["golden"] = v.golden.as_json()
    return rec


def write_json(run: GateRun, dest: str | Path, option: str = "--json", full: bool = False) -> None:
    """The JSON report to ``dest`` (a path, or ``-`` for standard output); WriteError if it cannot be."""
    write_output(str(dest), json_text(run, full).encode("utf-8"), option)


#: What a passing job's record leaves out unless --json-full asks for it (the repeat runs, the
#: reason, the golden entry): the report of a green run stays small.
_FULL_ONLY = ("py_repeat", "c_repeat", "reason", "golden")


def run_summary(run: GateRun) -> dict[str, object]:
    """The head of the JSON report: what ran (commit, version, engine build ids) and the counts."""
    from rocke_py.parity.version import engine_ids, git_commit, package_version

    return {
        "commit": git_commit(run.root),
        "version": package_version(),
        "engines": engine_ids(run.engines),
        "passed": run.passed,
        "jobs": len(run.verdicts),
        "failed": len(run.failures),
        "run_level_failures": len(run.problems) + len(run.stale_golden),
        "counts": {s.value: n for s in Status if (n := sum(v.status is s for v in run.verdicts))},
        "wall_seconds": round(run.wall_seconds, 3),
    }


def _compact(rec: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in rec.items() if k not in _FULL_ONLY}


def json_text(run: GateRun, full: bool = False) -> str:
    records = [job_record(v) for v in run.verdicts]
    doc = {
        "schema": JSON_SCHEMA,
        "summary": run_summary(run),
        "passed": run.passed,
        "partial": run.partial_note() or False,
        "coverage": run.manifest.coverage.as_json() if run.manifest and run.manifest.coverage else None,
        "run_level_failures": [*run.problems, *run.stale_golden],
        "notes": list(run.notes),
        "modes": list(run.modes),
        "flavors": list(run.flavors),
        "timeout_seconds": run.timeout,
        "wall_seconds": round(run.wall_seconds, 3),
        "engines": ({"py_modes": list(run.info.py_modes), "c_modes": list(run.info.c_modes)} if run.info else None),
        "counts": {s.value: sum(v.status is s for v in run.verdicts) for s in Status},
        "jobs": [r if full or not v.passed else _compact(r) for r, v in zip(records, run.verdicts)],
    }
    return json.dumps(doc, indent=2) + "\n"


# ----------------------------------------------------------------------------- JUnit


class JunitUnavailable(Exception):
    pass


def write_junit(run: GateRun, dest: str | Path, option: str = "--junit") -> None:
    """The JUnit XML report to ``dest`` (a path, or ``-``); WriteError if it cannot be."""
    write_output(str(dest), junit_text(run).encode("utf-8"), option)


def repro_lines(v: Verdict, relpath: str) -> list[str]:
    """The commands that reproduce a job: the diff, and the C engine alone."""
    flavor = v.job.call_flavor
    return [
        f"rocke-parity diff {v.job.config} --mode {v.job.mode} --flavor {flavor}",
        f"rocke-emit {relpath} --mode {v.job.mode} --flavor {flavor}",
    ]


def divergence_lines(v: Verdict, n_context: int = 2) -> list[str]:
    """Where the two outputs part: the first divergent line with context from each side, or how
    the two rejections differ; empty when there is nothing to compare."""
    res = v.result
    if not res.py or not res.c:
        return []
    py, c = res.py[0], res.c[0]
    if py.kind == "emitted" and c.kind == "emitted" and res.py_text is not None and res.c_text is not None:
        d = first_divergence(res.py_text, res.c_text)
        if d is None:
            return []
        out = [f"first divergent line: {d.line}, column {d.column}"]
        for side, text in (("py", res.py_text), ("c", res.c_text)):
            for n, line in context(text, d.line, n_context):
                out.append(f"{side:2} {'>' if n == d.line else ' '}{n:6d} | {line}")
        return out
    if py.kind == "rejected" or c.kind == "rejected":
        return [f"py: {py.short()}", f"c:  {c.short()}"]
    return []


def failure_body(v: Verdict, relpath: str) -> str:
    """A failing job, for a CI dashboard: the reason, the divergent lines, which engine still
    matches the golden entry, the crash's head, and the repro commands."""
    lines = [f"{v.status.value}: {v.reason}"]
    if v.golden_match:
        lines.append(v.golden_match)
    div = divergence_lines(v)
    if div:
        lines += ["", *div]
    detail = _detail(v.result)
    if detail:
        lines += ["", *detail.splitlines()[:_DETAIL_LINES]]
    lines += ["", "repro:", *(f"  {cmd}" for cmd in repro_lines(v, relpath))]
    return "\n".join(lines)


def config_relpaths(run: GateRun) -> dict[str, str]:
    out = {}
    for c in run.configs:
        try:
            out[c.id] = c.path.relative_to(run.root).as_posix()
        except ValueError:
            out[c.id] = str(c.path)
    return out


def junit_text(run: GateRun) -> str:
    try:
        from junit_xml import TestCase, TestSuite, to_xml_report_string
    except ImportError:
        raise JunitUnavailable("--junit needs the junit-xml package (pip install junit-xml)") from None
    cases = []
    paths = config_relpaths(run)
    for v in run.verdicts:
        res = v.result
        elapsed = sum(r.seconds for r in (*res.py, *res.c))
        relpath = paths.get(v.job.config, f"parity_configs/{v.job.config}.toml")
        tc = TestCase(
            f"{v.job.mode} {v.job.flavor}",
            classname=v.job.config.replace("/", "."),  # a dashboard groups a config's jobs as one class
            elapsed_sec=elapsed,
            status=v.status.value,
            file=relpath,
        )
        if v.status is Status.KNOWN_GAP:
            tc.add_skipped_info(message=f"KNOWN_GAP: {v.gap.reason if v.gap else v.reason}", output=v.reason)
        elif not v.passed:
            tc.add_failure_info(
                message=f"{v.status.value}: {_short(v.reason)}",
                output=failure_body(v, relpath),
                failure_type=v.status.value,
            )
        cases.append(tc)
    for n, prob in enumerate((*run.problems, *run.stale_golden), 1):
        tc = TestCase(f"run-level failure {n}", classname="rocke-parity")
        tc.add_failure_info(message=_short(prob), output=prob, failure_type="RUN_LEVEL")
        cases.append(tc)
    return to_xml_report_string([TestSuite("rocke-parity gate", cases)], prettyprint=True, encoding="utf-8")
