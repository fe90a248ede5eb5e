"""A gate run on the terminal: the progress bar, the summary table, the failures with their
details, the slowest jobs and the final line, all read from the run's report document."""

from __future__ import annotations

import os
import sys
from collections import Counter
from typing import Callable, TextIO

from rocke_py.parity.judge.compare import Status
from rocke_py.parity.judge.verdict import Verdict
from rocke_py.parity.report.bounds import LINE_CHARS, clip, escape_surrogates
from rocke_py.parity.run.work import JobResult

_REASON_LIMIT = 240
_RED, _GREEN, _RESET = "\x1b[31m", "\x1b[32m", "\x1b[0m"
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


def one_line(text: str, limit: int = _REASON_LIMIT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def failure_line(v: Verdict) -> str:
    return f"FAIL {v.status.value} {v.job.config} {v.job.mode} {v.job.flavor}: {one_line(v.reason)}"


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
    return f"{fail} {rec['status']} {rec['config']} {rec['mode']} {rec['flavor']}: {one_line(rec.get('reason', ''))}"


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
            p(f"  KNOWN_GAP {r['config']} {r['mode']} {r['flavor']}: {one_line(gap_reason)}")
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
