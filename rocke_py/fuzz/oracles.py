"""What makes a case fail, and the signature a reduction must keep.

A case runs as one pool job per mode (``ll`` with the case's flavor); each job is both engines
twice (:mod:`rocke_py.parity.run.worker`). The oracles, in order, the first that fails wins:

1. per job, in mode order (spec, ir, ll), :func:`rocke_py.parity.judge.compare.classify` with an
   expectation of ``emit``: IDENTICAL and UNEXPECTED_REJECT mean the engines agree; any other
   status (CRASH, TIMEOUT, BUILD_FAILURE, NONDETERMINISTIC, DIFFER, PY_ONLY_REJECTED,
   C_ONLY_REJECTED, REJECT_MISMATCH) is the failure — no crash or hang, determinism, the two
   engines agree (bytes, or code and message);
2. one verdict in every mode (:func:`rocke_py.parity.judge.verdict.verdict_splits`): VERDICT_SPLIT;
3. bounded output: an emission over :data:`MAX_OUTPUT_BYTES` (the engines' own bound,
   engine-contract §8.3) is UNBOUNDED_OUTPUT;
4. with ``--numerics``, the executor's check of the emitted kernel (:func:`load_numerics`).

The signature is what the failure *is*, not where it happens to be: the status, the mode it
shows first in, and its shape — for DIFFER the first divergent line of each side with numbers
and SSA names blanked out; for a crash the engine and the signal (or exception type); for a
rejection mismatch the two codes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from rocke_py.parity.inputs.configs import Expectation
from rocke_py.parity.judge.canon import blank_line, first_divergence
from rocke_py.parity.judge.compare import Status, classify
from rocke_py.parity.judge.jobs import Job
from rocke_py.parity.judge.verdict import agreed_verdict, verdict_splits
from rocke_py.parity.run.work import JobResult

MAX_OUTPUT_BYTES = 16 * 1024 * 1024
#: Statuses of a job on which the engines agree (the case's verdict is then emit or reject).
_AGREED = (Status.IDENTICAL, Status.UNEXPECTED_REJECT)
_EMIT = Expectation()


@dataclass(frozen=True)
class Outcome:
    """A case's verdict: ``emit``, ``reject`` (with the agreed code) or a failure status."""

    verdict: str
    code: str = ""  # the agreed rejection code (reject), or the code involved in a failure
    reason: str = ""
    signature: tuple[str, ...] = ()
    mode: str = ""  # the job the failure shows in ("ll llvm22"), empty when it passed

    @property
    def failed(self) -> bool:
        return self.verdict not in ("emit", "reject")


def line_shape(line: str | None) -> str:
    """A line with its numbers and SSA names blanked: what stays when a reduction shrinks values."""
    if line is None:
        return "<no line>"
    return " ".join(blank_line(line).split())[:200]


def _job_name(job: Job) -> str:
    return job.mode if job.flavor == "-" else f"{job.mode} {job.flavor}"


def _first_error(res: JobResult, engine_failure: bool) -> tuple[str, str]:
    """(side, exception type or message shape) of the first run that raised."""
    for side in ("py", "c"):
        for run in res.runs(side):
            if run.kind == "error" and (run.code == "EngineFailure") == engine_failure:
                return side, line_shape(run.message) if engine_failure else run.code
    return "?", ""


def job_signature(status: Status, res: JobResult[Job]) -> tuple[str, ...]:
    mode = _job_name(res.item.key)
    if res.death is not None:
        how = res.death.signal_name or (f"exit {res.death.exitcode}" if res.death.exitcode is not None else "")
        return (status.value, mode, res.death.engine, how or res.death.kind)
    if status in (Status.CRASH, Status.BUILD_FAILURE):
        side, what = _first_error(res, status is Status.BUILD_FAILURE)
        return (status.value, mode, side, what)
    if status is Status.NONDETERMINISTIC:
        side = next((s for s in ("py", "c") if len({r.signature() for r in res.runs(s)}) > 1), "?")
        return (status.value, mode, side)
    py, c = res.py[0], res.c[0]
    if status is Status.DIFFER:
        a, b = res.py_text or "", res.c_text or ""
        d = first_divergence(a, b)
        la = a.splitlines()[d.line - 1] if d is not None and d.a_has_line else None
        lb = b.splitlines()[d.line - 1] if d is not None and d.b_has_line else None
        return (status.value, mode, line_shape(la), line_shape(lb))
    if status is Status.PY_ONLY_REJECTED:
        return (status.value, mode, py.code)
    if status is Status.C_ONLY_REJECTED:
        return (status.value, mode, c.code)
    if status is Status.REJECT_MISMATCH:
        return (status.value, mode, py.code, c.code)
    return (status.value, mode)


def judge(results: list[JobResult[Job]], timeout: float, numerics: NumericsCheck | None = None) -> Outcome:
    """The outcome of one case from its jobs (in mode order)."""
    for res in results:
        cls = classify(res, _EMIT, timeout)
        if cls.status not in _AGREED:
            job = res.item.key
            code = res.py[0].code if res.py and res.py[0].kind == "rejected" else ""
            return Outcome(cls.status.value, code, cls.reason, job_signature(cls.status, res), _job_name(job))
    splits = verdict_splits(results)
    if splits:
        res = next(r for r in results if id(r) in splits)
        verdicts = tuple(
            f"{_job_name(r.item.key)}={'emit' if v == ('emit',) else v[1]}"
            for r in results
            if (v := agreed_verdict(r)) is not None
        )
        return Outcome(
            Status.VERDICT_SPLIT.value, "", splits[id(res)], ("VERDICT_SPLIT", *verdicts), _job_name(res.item.key)
        )
    for res in results:
        for side in ("py", "c"):
            run = res.runs(side)[0]
            if run.kind == "emitted" and run.nbytes > MAX_OUTPUT_BYTES:
                reason = f"the {side} engine emitted {run.nbytes} bytes, more than {MAX_OUTPUT_BYTES}"
                job = _job_name(res.item.key)
                return Outcome("UNBOUNDED_OUTPUT", "", reason, ("UNBOUNDED_OUTPUT", job, side), job)
    first = results[0].py[0]
    if first.kind == "rejected":
        return Outcome("reject", first.code, f"{first.code}: {first.message}")
    if numerics is not None:
        ll = next((r for r in results if r.item.key.mode == "ll"), None)
        if ll is not None and ll.py_text is not None:
            problem = numerics(ll.item.data, ll.py_text)
            if problem is not None:
                job = _job_name(ll.item.key)
                return Outcome("NUMERICS", "", problem, ("NUMERICS", job, line_shape(problem)), job)
    return Outcome("emit", "", f"{first.nbytes} bytes")


# ----------------------------------------------------------------------------- --numerics

#: The executor's check: (config bytes, emitted ll text) -> None if the kernel's result matches
#: the NumPy convolution on a small problem, else why not.
NumericsCheck = Callable[[bytes, str], "str | None"]


def load_numerics() -> NumericsCheck:
    """The executor's ``fuzz_check``, the one place the fuzzer meets it (imported when asked:
    a run without --numerics does not load the executors)."""
    from rocke_py.numerics import fuzz_check

    return fuzz_check
