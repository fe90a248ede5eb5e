"""A gate run as a report document: the records of ``--json``, the ``--junit`` XML, and the
terminal summary made from the same document (:func:`render`).

Reports are written atomically (:func:`fileio.write_output`: temp file + rename, ``-`` for
standard output) or not at all, raising :class:`fileio.WriteError`. Every text in them is
bounded and valid (:func:`rocke_py.parity.report.bounds.bound_doc`)."""

from __future__ import annotations

import json
from collections import Counter
from typing import TextIO

from rocke_py.parity.judge.canon import context, first_divergence
from rocke_py.parity.judge.compare import Status
from rocke_py.parity.judge.gate import GateRun
from rocke_py.parity.judge.verdict import Verdict
from rocke_py.parity.report.bounds import bound_doc, xml_text
from rocke_py.parity.report.groups import cause_of
from rocke_py.parity.report.terminal import Style, detail_lines, one_line, render_doc
from rocke_py.parity.run.engines import EngineRun, EngineSpec

JSON_SCHEMA = "rocke-parity.report/v1"


def render(run: GateRun, out: TextIO, title: str = "gate", style: Style | None = None) -> None:
    render_doc(bound_doc(report_doc(run, with_summary=False, terminal=True)), out, title, style)


def _terminal_record(v: Verdict) -> dict[str, object]:
    """What the terminal summary reads of a passing job that is not a known gap: its table cell,
    its line under -v and its seconds under --durations."""
    res = v.result
    return {
        "config": v.job.config,
        "family": v.job.family,
        "mode": v.job.mode,
        "flavor": v.job.flavor,
        "status": v.status.value,
        "passed": True,
        "durations": {"py": [r.seconds for r in res.py], "c": [r.seconds for r in res.c]},
    }


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


def job_record(v: Verdict, relpath: str = "", c_emit: str = EngineSpec.c_emit) -> dict[str, object]:
    """One job's JSON record. A failing job's record carries what a report made from the JSON
    alone needs (``merge``, the Markdown summary, JUnit): the first divergent lines, the
    failure's cause (its group), the crash's head and the repro commands."""
    res = v.result
    relpath = relpath or f"parity_configs/{v.job.config}.toml"
    rec: dict[str, object] = {
        "config": v.job.config,
        "family": v.job.family,
        "mode": v.job.mode,
        "flavor": v.job.flavor,
        "file": relpath,
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
            "stage": res.death.stage,
            "detail": res.death.detail,
            "c_frames": res.death.c_frames,
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
    if res.notes:
        rec["notes"] = list(res.notes)  # what its worker saw besides the runs: engine output, memory past the limit
    if res.item.skip:
        rec["cached"] = res.item.skip  # that engine did not run: its outputs came from the cache
    if not v.passed:
        rec["cause"] = list(cause_of(v))
        rec["divergence"] = divergence_lines(v)
        rec["detail"] = detail_lines(v.result)
        rec["repro"] = repro_lines(v, relpath, c_emit)
    return rec


#: What a passing job's record leaves out unless --json-full asks for it (the repeat runs, the
#: reason — kept for a known gap — and the golden entry): the report of a green run stays small.
_FULL_ONLY = ("py_repeat", "c_repeat", "reason", "golden")


def run_summary(run: GateRun) -> dict[str, object]:
    """The head of the JSON report: what ran (commit, version, engine build ids) and the counts."""
    from rocke_py.parity.run import tree
    from rocke_py.parity.run.version import engine_ids, package_version

    fingerprint = tree.fingerprint(run.root)
    foreign = tree.engines_note(run.root)
    return {
        "commit": fingerprint["commit"],
        "tree": fingerprint,
        "version": package_version(),
        "engines": engine_ids(run.engines),
        **({"engines_from": foreign} if foreign else {}),
        "passed": run.passed,
        "jobs": len(run.verdicts),
        "failed": len(run.failures),
        "run_level_failures": len(run.problems) + len(run.stale_golden),
        "counts": status_counts(run, nonzero=True),
        "wall_seconds": round(run.wall_seconds, 3),
    }


def status_counts(run: GateRun, nonzero: bool = False) -> dict[str, int]:
    """Jobs by status, every status in the set's order (``nonzero``: only those some job has)."""
    got = Counter(v.status for v in run.verdicts)
    return {s.value: got[s] for s in Status if got[s] or not nonzero}


def _compact(rec: dict[str, object]) -> dict[str, object]:
    keep = ("reason",) if rec.get("status") == Status.KNOWN_GAP.value else ()
    return {k: v for k, v in rec.items() if k not in _FULL_ONLY or k in keep}


def report_doc(
    run: GateRun, full: bool = False, with_summary: bool = True, terminal: bool = False
) -> dict[str, object]:
    """The JSON report as a dict (``--json`` writes it; the terminal summary, ``--summary`` and
    JUnit are made from it). ``with_summary=False``: without the head (it asks git for the commit);
    ``terminal``: only what :func:`render_doc` reads (a passing job's record is its table cell)."""
    paths = config_relpaths(run)
    records = [
        _terminal_record(v)
        if terminal and v.passed and v.status is not Status.KNOWN_GAP
        else job_record(v, paths.get(v.job.config, ""), run.engines.c_emit)
        for v in run.verdicts
    ]
    return {
        "schema": JSON_SCHEMA,
        "summary": run_summary(run) if with_summary else None,
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
        "counts": status_counts(run),
        "not_run": run.not_run,
        "shard": None if run.shard is None else {**run.shard.as_json(), "partial": run.partial_note(False) or False},
        "jobs": [r if full or not v.passed else _compact(r) for r, v in zip(records, run.verdicts)],
    }


def json_text(run: GateRun, full: bool = False) -> str:
    return doc_text(bound_doc(report_doc(run, full)))


def doc_text(doc: dict[str, object]) -> str:
    return json.dumps(doc, indent=2) + "\n"


# ----------------------------------------------------------------------------- JUnit


class JunitUnavailable(Exception):
    pass


def repro_lines(v: Verdict, relpath: str, c_emit: str = EngineSpec.c_emit) -> list[str]:
    """The commands that reproduce a job: the diff, the C engine alone, and for a C crash the
    job under gdb (``c_emit``: the C side's import path)."""
    flavor = v.job.call_flavor
    lines = [
        f"rocke-parity diff {v.job.config} --mode {v.job.mode} --flavor {flavor}",
        f"rocke-emit {relpath} --mode {v.job.mode} --flavor {flavor}",
    ]
    death = v.result.death
    if death is not None and death.kind == "crash" and death.engine == "c":
        # the dump has the Python frames only: the job alone under gdb gives the C frames
        rerun = f"python -m rocke_py.parity.run.backtrace {c_emit} {relpath} {v.job.mode} {flavor}"
        lines.append(f"gdb -batch -ex run -ex bt --args {rerun}")
    return lines


def divergence_lines(v: Verdict, n_context: int = 2) -> list[str]:
    """Where the two outputs part: the first divergent line with context from each side, or how
    the two rejections differ; empty when there is nothing to compare."""
    res = v.result
    if not res.py or not res.c:
        return []
    py, c = res.py[0], res.c[0]
    py_text, c_text = (res.text("py"), res.text("c")) if py.kind == c.kind == "emitted" else (None, None)
    if py_text is not None and c_text is not None:
        d = first_divergence(py_text, c_text)
        if d is None:
            return []
        out = [f"first divergent line: {d.line}, column {d.column}"]
        for side, text in (("py", py_text), ("c", c_text)):
            for n, line in context(text, d.line, n_context):
                out.append(f"{side:2} {'>' if n == d.line else ' '}{n:6d} | {line}")
        return out
    if py.kind == "rejected" or c.kind == "rejected":
        return [f"py: {py.short()}", f"c:  {c.short()}"]
    return []


def failure_body(rec: dict) -> str:
    """A failing job's record, for a CI dashboard: the reason, which engine still matches the
    golden entry, the divergent lines, the crash's head, and the repro commands."""
    lines = [f"{rec['status']}: {rec.get('reason', '')}"]
    if rec.get("golden_match"):
        lines.append(str(rec["golden_match"]))
    for key in ("divergence", "detail"):
        if rec.get(key):
            lines += ["", *rec[key]]
    lines += ["", "repro:", *(f"  {cmd}" for cmd in rec.get("repro", ()))]
    return "\n".join(lines)


def config_relpaths(run: GateRun) -> dict[str, str]:
    out = {}
    for c in run.configs:
        try:
            out[c.id] = c.path.relative_to(run.root).as_posix()
        except ValueError:
            out[c.id] = str(c.path)
    return out


def junit_text(doc: dict) -> str:
    """JUnit XML from a JSON report (a gate's or a merged one). Every text goes through
    :func:`xml_text`: well-formed XML whatever the engines printed."""
    try:
        from junit_xml import TestCase, TestSuite, to_xml_report_string
    except ImportError:
        raise JunitUnavailable("--junit needs the junit-xml package (pip install junit-xml)") from None
    x = xml_text
    cases = []
    for rec in doc["jobs"]:
        durations = rec.get("durations") or {}
        elapsed = sum(float(t) for side in ("py", "c") for t in durations.get(side, ()))
        tc = TestCase(
            x(f"{rec['mode']} {rec['flavor']}"),
            classname=x(rec["config"].replace("/", ".")),  # a dashboard groups a config's jobs as one class
            elapsed_sec=elapsed,
            status=x(rec["status"]),
            file=x(rec.get("file") or f"parity_configs/{rec['config']}.toml"),
        )
        if rec["status"] == Status.KNOWN_GAP.value:
            gap = rec.get("known_gap") or {}
            reason = rec.get("reason", "")
            tc.add_skipped_info(message=x(f"KNOWN_GAP: {gap.get('reason') or reason}"), output=x(reason))
        elif not rec["passed"]:
            tc.add_failure_info(
                message=x(f"{rec['status']}: {one_line(rec.get('reason', ''))}"),
                output=x(failure_body(rec)),
                failure_type=x(rec["status"]),
            )
        cases.append(tc)
    for n, prob in enumerate(doc["run_level_failures"], 1):
        tc = TestCase(f"run-level failure {n}", classname="rocke-parity")
        tc.add_failure_info(message=x(one_line(prob)), output=x(prob), failure_type="RUN_LEVEL")
        cases.append(tc)
    properties = {x(k): x(v) for k, v in junit_properties(doc).items()}
    suite = TestSuite("rocke-parity gate", cases, properties=properties)
    return to_xml_report_string([suite], prettyprint=True, encoding="utf-8")


def junit_properties(doc: dict) -> dict[str, str]:
    """What the verdict is about, as the suite's properties: the engines' build ids and the tree's
    fingerprint (a dashboard shows them beside the cases)."""
    s = doc.get("summary") or {}
    out: dict[str, str] = {"version": str(s.get("version") or "unknown")}
    for side, ids in sorted((s.get("engines") or {}).items()):
        out[f"{side}_engine"] = str((ids or {}).get("build_id", "unknown"))
    for key, value in (s.get("tree") or {}).items():
        out[f"tree.{key}"] = "; ".join(map(str, value)) if isinstance(value, list) else str(value)
    return out
