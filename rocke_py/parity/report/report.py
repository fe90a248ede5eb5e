"""Rendering a gate run: terminal summary, progress bar, ``--json`` and ``--junit`` reports.

Reports are written atomically (:func:`fileio.write_output`: temp file + rename, ``-`` for
standard output) or not at all, raising :class:`fileio.WriteError`. Every text in them is
bounded and valid (:func:`bound_doc`): an engine's output is not the harness's to trust, and
one 8 MiB line must not make a 40 MB JUnit file, nor a lone surrogate kill the XML writer."""

from __future__ import annotations

import json
import os
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Callable, Sequence, TextIO

from rocke_py.parity.judge.canon import context, first_divergence
from rocke_py.parity.judge.compare import Status
from rocke_py.parity.judge.gate import GateRun
from rocke_py.parity.judge.verdict import Verdict
from rocke_py.parity.report.groups import cause_of
from rocke_py.parity.run.engines import EngineRun, EngineSpec
from rocke_py.parity.run.work import JobResult
from rocke_py.parity.store.fileio import STDOUT
from rocke_py.parity.store.state import atomic_write

JSON_SCHEMA = "rocke-parity.report/v1"
_REASON_LIMIT = 240
_DETAIL_LINES = 8


# ----------------------------------------------------------------------------- bounds

#: The longest excerpt of one text a report holds (a divergent line, a message, a crash's head,
#: a run-level failure): past it the text is cut, saying its size and which file keeps the whole.
EXCERPT_CHARS = 2048
#: What a writer lets through uncut: an excerpt and the note of its cut (which names a path),
#: so that a bounded report is never cut twice while an unbounded one still is.
LINE_CHARS = EXCERPT_CHARS + 4096
_SURROGATE_RE = re.compile("[\ud800-\udfff]")
#: What XML 1.0 cannot hold (its ``Char`` production), a lone surrogate among it.
_NOT_XML_RE = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_FILE_NAME_RE = re.compile(r"[^A-Za-z0-9._-]+")


def _escape(m: re.Match[str]) -> str:
    n = ord(m.group())
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}"


def escape_surrogates(text: str) -> str:
    """``text`` as Unicode text: a lone surrogate (UTF-8 cannot hold it) as ``\\udc80``."""
    return _SURROGATE_RE.sub(_escape, text)


def xml_text(text: str) -> str:
    """``text`` for XML: each line cut to :data:`LINE_CHARS`, every character XML cannot hold as
    ``\\x00`` or ``\\ufffe`` (a lone surrogate too): the XML writer would die on it."""
    lines = text.split("\n")
    if any(len(ln) > LINE_CHARS for ln in lines):
        text = "\n".join(clip(ln, LINE_CHARS) for ln in lines)
    return _NOT_XML_RE.sub(_escape, text)


def clip(text: str, limit: int = EXCERPT_CHARS, kept: str = "") -> str:
    """``text``, or when it is longer than ``limit`` characters its head, an ellipsis and its size
    in bytes (and ``kept``, the file that keeps the whole of it)."""
    if len(text) <= limit:
        return text
    where = f"; the whole text: {kept}" if kept else ""
    return f"{text[:limit]}… [{len(text.encode('utf-8', 'surrogatepass'))} bytes{where}]"


def spill_dir(dests: Sequence[tuple[str, str]]) -> Path | None:
    """Where the whole of a cut text is kept: ``<report>.d/`` beside the first report written to
    a file (``(option, destination)`` pairs); None when every report goes to standard output."""
    for _, dest in dests:
        if dest != STDOUT:
            return Path(f"{dest}.d")
    return None


class _Bounder:
    """Cuts the texts of a report, keeping each whole one in a file of ``spill`` named by its job
    and field (``wgrad.00-x.ll.llvm20.divergence.3.txt``); the first file that cannot be written
    stops the keeping and becomes a note."""

    def __init__(self, spill: Path | None) -> None:
        self.spill = spill
        self.error: str | None = None

    def bound(self, value: object, path: tuple[str, ...]) -> object:
        if isinstance(value, str):
            cut = value if len(value) <= EXCERPT_CHARS else clip(value, kept=self.keep(value, path))
            return escape_surrogates(cut)
        if isinstance(value, dict):
            return {
                escape_surrogates(k) if isinstance(k, str) else k: self.bound(v, (*path, str(k)))
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [self.bound(v, (*path, str(n))) for n, v in enumerate(value)]
        return value

    def keep(self, text: str, path: tuple[str, ...]) -> str:
        if self.spill is None or self.error is not None:
            return ""
        dest = self.spill / (_FILE_NAME_RE.sub("_", ".".join(path))[:200] + ".txt")
        try:
            atomic_write(dest, text.encode("utf-8", "backslashreplace"))
        except OSError as e:
            self.error = f"could not keep the whole of a cut text in {self.spill}: {e.strerror or e}"
            return ""
        return str(dest)


def _record_name(rec: object) -> str:
    """A job record's part of a kept file's name: ``wgrad.00-x.ll.llvm20`` (``spec``: no flavor)."""
    if not isinstance(rec, dict):
        return "job"
    flavor = rec.get("flavor")
    name = f"{rec.get('config')}.{rec.get('mode')}" + (f".{flavor}" if flavor not in (None, "-") else "")
    return name.replace("/", ".")


def bound_doc(doc: dict, dests: Sequence[tuple[str, str]] = ()) -> dict:
    """``doc`` with every text at most :data:`EXCERPT_CHARS` characters and valid Unicode, for every
    report made from it (terminal, JSON, JUnit, Markdown): a longer text is cut (:func:`clip`) and
    its whole kept in :func:`spill_dir` of ``dests``; a lone surrogate is escaped (``merge`` refuses
    a report that holds one). A file that cannot be kept costs a note, never the report."""
    b = _Bounder(spill_dir(dests))
    out: dict = {}
    for key, value in doc.items():
        if key == "jobs" and isinstance(value, list):
            out[key] = [b.bound(rec, (_record_name(rec),)) for rec in value]
        else:
            out[key] = b.bound(value, ("run", key))
    if b.error is not None and isinstance(out.get("notes"), list):
        out["notes"] = [*out["notes"], b.error]
    return out


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


def detail_lines(res: JobResult, limit: int = _DETAIL_LINES) -> list[str]:
    """What to show of a crash: the C frames of a C engine crash (a re-run under gdb,
    ``backtrace``) and the head of the dead worker's faulthandler dump (it lists the innermost
    frame first), or the tail of an exception's traceback (its last frames and the exception
    line, which Python prints last)."""
    d = res.death
    if d is not None and (d.detail or d.c_frames):
        c_lines = ["C frames (the job re-run under gdb):", *d.c_frames.splitlines()[:12]] if d.c_frames else []
        return c_lines + d.detail.splitlines()[:limit]
    for side in ("py", "c"):
        for run in res.runs(side):
            if run.kind == "error" and run.detail:
                return run.detail.splitlines()[-limit:]
    return []


def count_rows(jobs: list[tuple[str, str, bool]]) -> tuple[list[str], list[list[str]]]:
    """The statuses-by-family table of ``(family, status, passed)`` triples: headers and rows
    (one per family, then ``total``), as the terminal and the Markdown summary print it."""
    # one pass over the jobs (a status-by-job scan per cell was most of a large gate's report)
    by_family: dict[str, Counter] = {}
    failed: Counter = Counter()
    for fam, st, ok in jobs:
        by_family.setdefault(fam, Counter())[st] += 1
        failed[fam] += not ok
    total = sum(by_family.values(), Counter())
    present = [s.value for s in Status if total[s.value]]
    headers = ["family", *present, "jobs", "failed"]
    rows: list[list[str]] = []
    for fam in [*sorted(by_family), "total"]:
        counts = total if fam == "total" else by_family[fam]
        bad = sum(failed.values()) if fam == "total" else failed[fam]
        rows.append([fam, *(str(counts[s]) for s in present), str(sum(counts.values())), str(bad)])
    return headers, rows


def text_table(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def fmt(cells: list[str]) -> str:
        return "  ".join(c.ljust(widths[0]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(cells)).rstrip()

    return [fmt(headers), *(fmt(r) for r in rows)]


#: The statuses whose failure line is followed by the crash's head or the exception's last frames.
_SHOW_DETAIL = (Status.CRASH.value, Status.TIMEOUT.value, Status.BUILD_FAILURE.value)


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


_RED, _GREEN, _RESET = "\x1b[31m", "\x1b[32m", "\x1b[0m"


class Style:
    """How much the terminal summary says (``verbosity``: -1 with -q, 1 with -v), the slowest
    jobs it lists after it (``durations``: None, or N with 0 for all) and whether it is coloured."""

    def __init__(self, verbosity: int = 0, durations: int | None = None, colour: bool = False) -> None:
        self.verbosity = verbosity
        self.durations = durations
        self.colour = colour

    def paint(self, word: str) -> str:
        """FAIL and FAILED red, PASSED green, when coloured."""
        if not self.colour:
            return word
        return f"{_GREEN if word.startswith('PASS') else _RED}{word}{_RESET}"


def use_colour(out: TextIO) -> bool:
    """Colour on a terminal; NO_COLOR (any value) turns it off, FORCE_COLOR on, NO_COLOR first
    (https://no-color.org). Never in a file or a pipe unless forced."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    try:
        return out.isatty()
    except (AttributeError, ValueError):
        return False


def job_seconds(rec: dict) -> float:
    """A job's seconds: both engines' runs, as the JUnit testcase's time."""
    durations = rec.get("durations") or {}
    return sum(float(t) for side in ("py", "c") for t in durations.get(side, ()))


def duration_lines(records: list[dict], n: int) -> list[str]:
    """``slowest N of M job(s):`` and a line per job, slowest first (``n`` 0: every job)."""
    slow = sorted(records, key=lambda r: -job_seconds(r))[: n or len(records)]
    return [f"slowest {len(slow)} of {len(records)} job(s):"] + [
        f"{job_seconds(r):8.2f} s  {r['config']} {r['mode']} {r['flavor']}" for r in slow
    ]


def _record_line(rec: dict, style: Style | None = None) -> str:
    fail = style.paint("FAIL") if style else "FAIL"
    return f"{fail} {rec['status']} {rec['config']} {rec['mode']} {rec['flavor']}: {_short(rec.get('reason', ''))}"


def record_groups(records: list[dict]) -> list[list[dict]]:
    """Failing records by cause (``groups.cause_of``, recorded in each), in the order each cause first appears."""
    groups: dict[tuple[str, ...], list[dict]] = {}
    for rec in records:
        if not rec["passed"]:
            groups.setdefault(tuple(rec.get("cause") or (rec["status"],)), []).append(rec)
    return list(groups.values())


def job_label(rec: dict) -> str:
    return f"{rec['config']} {rec['mode'] if rec['flavor'] == '-' else rec['mode'] + '.' + rec['flavor']}"


def _jobs_list(records: list[dict], limit: int = 8) -> str:
    """``wgrad/11-x ll.llvm20, ...``: the jobs of a group, the first ``limit`` of them named."""
    more = f", and {len(records) - limit} more" if len(records) > limit else ""
    return ", ".join(job_label(r) for r in records[:limit]) + more


def render_doc(doc: dict, out: TextIO, title: str = "gate", style: Style | None = None) -> None:
    """The terminal summary of a JSON report (a gate's, or ``merge``'s; bounded by :func:`bound_doc`)."""
    style = style or Style()
    p = lambda s="": print(escape_surrogates(clip(s, LINE_CHARS)), file=out)  # noqa: E731
    records: list[dict] = doc["jobs"]
    if style.verbosity > 0:
        for r in records:
            word = style.paint("PASSED" if r["passed"] else "FAILED")
            p(f"{word} {r['status']} {r['config']} {r['mode']} {r['flavor']}")
    for group in record_groups(records):
        rec = group[0]
        p(_record_line(rec, style))
        if rec["status"] in _SHOW_DETAIL:
            for ln in rec.get("detail") or ():
                p(f"    | {ln}")
        if len(group) > 1:
            p(f"    + {len(group) - 1} more job(s) with the same cause: {_jobs_list(group[1:])}")
    if style.verbosity >= 0:
        _hint(records, p)
    for prob in doc["run_level_failures"]:
        p(f"{style.paint('FAIL')} run-level: {prob}")
    if style.verbosity >= 0:
        _render_middle(doc, p)
    p(_final_line(doc, title, style))
    if style.durations is not None and records:
        for line in duration_lines(records, style.durations):
            p(line)


def _hint(records: list[dict], p: Callable[..., None]) -> None:
    """What to run next: the diff of the first failure a golden update would not fix (not under -q)."""
    failures = [r for r in records if not r["passed"]]
    golden_only = (Status.GOLDEN_DRIFT.value, Status.GOLDEN_MISSING.value)
    explain = [r for r in failures if r["status"] not in golden_only]
    if explain:
        r = explain[0]
        flavor = r["flavor"] if r["flavor"] != "-" else "llvm22"
        p(f"explain a failure: rocke-parity diff {r['config']} --mode {r['mode']} --flavor {flavor}")
    elif failures:
        p("record the identical outputs after review: rocke-parity golden --update")


def _render_middle(doc: dict, p: Callable[..., None]) -> None:
    """What -q leaves out besides the hint: the notes, the table, the known gaps and the partial-run note."""
    records: list[dict] = doc["jobs"]
    for n in doc["notes"]:
        p(f"note: {n}")
    if records:
        p()
        for line in text_table(*count_rows([(r["family"], r["status"], r["passed"]) for r in records])):
            p(line)
    gaps = [r for r in records if r["status"] == Status.KNOWN_GAP.value]
    if gaps:
        p()
        p(
            f"KNOWN GAPS: {len(gaps)} job(s) pass only because parity_configs/known_gaps.toml lists them "
            "(the goal is none):"
        )
        for r in gaps:
            gap_reason = (r.get("known_gap") or {}).get("reason", "")
            p(f"  KNOWN_GAP {r['config']} {r['mode']} {r['flavor']}: {_short(gap_reason)}")
    p()
    if doc["partial"]:
        p(f"note: {doc['partial']}")


def _final_line(doc: dict, title: str, style: Style) -> str:
    records: list[dict] = doc["jobs"]
    failures = [r for r in records if not r["passed"]]
    gaps = sum(r["status"] == Status.KNOWN_GAP.value for r in records)
    counts = doc["counts"]
    modes = ",".join(doc["modes"]) or "-"
    flavors = ",".join(doc["flavors"]) if "ll" in doc["modes"] else "-"
    tally = (
        f"{counts.get(Status.IDENTICAL.value, 0)} identical, "
        f"{counts.get(Status.BOTH_REJECTED.value, 0)} both-rejected as expected, {gaps} known gap(s)"
    )
    verdict = style.paint("PASSED" if doc["passed"] else "FAILED")
    parts = [f"{len(failures)} of {len(records)} job(s) failed" if failures else f"{len(records)} job(s)"]
    if doc["run_level_failures"]:
        parts.append(f"{len(doc['run_level_failures'])} run-level failure(s)")
    if doc["partial"]:
        verdict += " (PARTIAL RUN)"
    merged = doc.get("merged_from")
    wall = (
        f"wall time {doc['wall_seconds']:.2f} s"
        if not merged
        else f"{merged['count']} shard(s), the slowest {doc['wall_seconds']:.2f} s"
    )
    return f"{title} {verdict}: {', '.join(parts)} ({tally}); modes {modes}; flavors {flavors}; {wall}"


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
                message=x(f"{rec['status']}: {_short(rec.get('reason', ''))}"),
                output=x(failure_body(rec)),
                failure_type=x(rec["status"]),
            )
        cases.append(tc)
    for n, prob in enumerate(doc["run_level_failures"], 1):
        tc = TestCase(f"run-level failure {n}", classname="rocke-parity")
        tc.add_failure_info(message=x(_short(prob)), output=x(prob), failure_type="RUN_LEVEL")
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
