"""A failure's cause, by which the reports group failures (``report.record_groups``): one changed
token that fails 18 jobs is one group of 18, and a crash storm (the same abort on every ``ll``
job) is one group.

A cause is the status plus what the status turns on: the first divergent line of the two
outputs with its SSA names and numbers blanked (DIFFER: ``canon.blank_line``, as in the fuzzer's
signature; the group's first job shows the real lines), the engine that answered twice
differently (NONDETERMINISTIC), the engine and the signal or exit status (CRASH, TIMEOUT), the
two verdicts and the expectation (rejection mismatches, an exception), the new verdict
(VERDICT_CHANGED), or the status alone (GOLDEN_DRIFT and GOLDEN_MISSING, whose cause is the
manifest, not a line)."""

from __future__ import annotations

from rocke_py.parity.judge.canon import blank_line, first_divergence
from rocke_py.parity.judge.compare import GOLDEN_STATUSES, Status
from rocke_py.parity.judge.verdict import Verdict
from rocke_py.parity.run.work import JobResult


def _line(text: str | None, n: int) -> str:
    if text is None:
        return "<no output>"
    lines = text.splitlines()
    return lines[n - 1] if 0 < n <= len(lines) else "<end of output>"


def _first_lines(res: JobResult) -> tuple[str, str]:
    """The first divergent line of the two engines' texts, blanked: one changed token is one
    cause, whichever SSA names and numbers its line holds in each config."""
    a, b = res.text("py"), res.text("c")
    d = first_divergence(a or "", b or "")
    if d is None:
        return ("", "")
    return (blank_line(_line(a, d.line)), blank_line(_line(b, d.line)))


def _verdict_of(res: JobResult, side: str) -> str:
    runs = res.runs(side)
    if not runs:
        return "-"
    r = runs[0]
    return f"{r.kind} {r.code or ''} {r.message or ''}".strip()


def cause_of(v: Verdict) -> tuple[str, ...]:
    status = v.status
    res = v.result
    if status in (Status.CRASH, Status.TIMEOUT) and res.death is not None:
        d = res.death
        # one crash storm per stage the engine died in; a result that could not be read is its own
        how = d.signal_name or ("unreadable result" if d.unread else str(d.exitcode))
        return (status.value, d.engine, how, d.stage_name)
    if status is Status.DIFFER:
        return (status.value, *_first_lines(res))
    if status is Status.NONDETERMINISTIC:  # which engine gave two answers
        return (status.value, *(side for side in ("py", "c") if len({r.sha256 for r in res.runs(side)}) > 1))
    if status is Status.VERDICT_CHANGED:  # the verdict it changed to
        return (status.value, _verdict_of(res, "py"))
    if status.value in GOLDEN_STATUSES:
        return (status.value,)
    return (status.value, _verdict_of(res, "py"), _verdict_of(res, "c"), v.expected)
