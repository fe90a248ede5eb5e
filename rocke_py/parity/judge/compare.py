"""The closed status set (docs/user-guide.md, "Statuses") and the classification of one job.

The pass rule is an allow-list: :func:`passes` is true only for IDENTICAL, BOTH_REJECTED and
KNOWN_GAP; anything else, a status this module has never heard of included, fails.

Classification order (the first that applies wins):

1. TIMEOUT — the job was killed past its limit (never a rejection).
2. CRASH — a worker died (signal, abort, exit) or an engine raised / returned something that is
   neither Emitted nor Rejected (never a rejection).
   BUILD_FAILURE — an engine raised EngineFailure: it failed after validating the config (an
   internal check of the builder, verifier or lowering), never a rejection.
3. NONDETERMINISTIC — an engine's second run differs from its first (kind, code, message, sha256).
4. both emitted: different bytes → DIFFER; same bytes → IDENTICAL if the config expects emit,
   else UNEXPECTED_EMIT.
5. one side rejected → PY_ONLY_REJECTED / C_ONLY_REJECTED.
6. both rejected: code or message differ → REJECT_MISMATCH; same code and message → BOTH_REJECTED
   if the config expects exactly that code, else UNEXPECTED_REJECT.

Then, per config (:mod:`verdict`): VERDICT_SPLIT replaces the status of a job whose verdict
(emit, or the rejection code and message) differs from the config's verdict in its first mode —
every mode must give the same verdict. GOLDEN_MISSING / GOLDEN_DRIFT / VERDICT_CHANGED refine a
passing job against the manifest (:mod:`golden`), and KNOWN_GAP replaces a listed status whose
evidence still holds (:mod:`known_gaps`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from rocke_py.parity.inputs.configs import Expectation
from rocke_py.parity.judge.canon import first_divergence
from rocke_py.parity.run.engines import EngineRun
from rocke_py.parity.run.work import JobResult


class Status(str, Enum):
    IDENTICAL = "IDENTICAL"
    BOTH_REJECTED = "BOTH_REJECTED"
    DIFFER = "DIFFER"
    REJECT_MISMATCH = "REJECT_MISMATCH"
    PY_ONLY_REJECTED = "PY_ONLY_REJECTED"
    C_ONLY_REJECTED = "C_ONLY_REJECTED"
    UNEXPECTED_REJECT = "UNEXPECTED_REJECT"
    UNEXPECTED_EMIT = "UNEXPECTED_EMIT"
    CRASH = "CRASH"
    TIMEOUT = "TIMEOUT"
    NONDETERMINISTIC = "NONDETERMINISTIC"
    GOLDEN_DRIFT = "GOLDEN_DRIFT"
    GOLDEN_MISSING = "GOLDEN_MISSING"
    VERDICT_CHANGED = "VERDICT_CHANGED"
    VERDICT_SPLIT = "VERDICT_SPLIT"
    BUILD_FAILURE = "BUILD_FAILURE"
    KNOWN_GAP = "KNOWN_GAP"

    def __str__(self) -> str:
        return self.value


#: The only statuses that pass. Everything else fails, unknown values included.
PASSING: frozenset[str] = frozenset({Status.IDENTICAL.value, Status.BOTH_REJECTED.value, Status.KNOWN_GAP.value})
#: Failures that ``golden --update`` tolerates (it exists to record them, after review).
GOLDEN_STATUSES: frozenset[str] = frozenset(
    {Status.GOLDEN_DRIFT.value, Status.GOLDEN_MISSING.value, Status.VERDICT_CHANGED.value}
)
#: Statuses a known_gaps.toml entry may name (failures that are not about the golden manifest).
GAP_STATUSES: frozenset[str] = frozenset(
    s.value for s in Status if s.value not in PASSING and s.value not in GOLDEN_STATUSES
)


def passes(status: object) -> bool:
    """The pass rule. A status outside the closed set fails."""
    value = status.value if isinstance(status, Status) else status
    return isinstance(value, str) and value in PASSING


@dataclass(frozen=True)
class Classified:
    status: Status
    reason: str


def _q(msg: str, limit: int = 160) -> str:
    msg = msg.replace("\n", "\\n")
    return msg if len(msg) <= limit else msg[: limit - 1] + "…"


#: Characters shown on each side of the first difference of two messages.
_AROUND = 24


def _visible_chars(msg: str) -> list[str]:
    """``msg`` one character at a time, as a repr shows it, and a space at either end or beside
    other whitespace as ``\\x20``: the failure line collapses runs of whitespace and Markdown
    does too, so a difference of whitespace alone would read as two equal strings."""
    out = []
    for i, ch in enumerate(msg):
        if ch == " ":
            edge = i == 0 or i == len(msg) - 1
            out.append("\\x20" if edge or msg[i - 1].isspace() or msg[i + 1].isspace() else " ")
        else:
            out.append(repr(ch)[1:-1])
    return out


def message_difference(a: str, b: str, names: tuple[str, str] = ("py", "c")) -> str:
    """Where two different messages part, with both around that point, whitespace made visible:
    ``messages differ at character 12: py 'tile\\x20\\x20too big' / c 'tile too big'`` (long
    messages cut to the part around the difference, the cut marked by … outside the quotes)."""
    at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    start = max(0, at - _AROUND)

    def show(msg: str) -> str:
        chars = _visible_chars(msg)
        end = at + _AROUND
        return ("…" if start else "") + "'" + "".join(chars[start:end]) + "'" + ("…" if end < len(chars) else "")

    return f"messages differ at character {at + 1}: {names[0]} {show(a)} / {names[1]} {show(b)}"


def _second_run(side: str, first: EngineRun, second: EngineRun) -> str:
    """Why an engine's two runs are not the same result (NONDETERMINISTIC)."""
    head = f"the {side} engine gave a different result on the second run: "
    if first.kind == second.kind == "rejected" and first.code == second.code:
        differ = message_difference(first.message, second.message, ("first", "second"))
        return head + f"rejected {first.code} both times, {differ}"
    return head + f"{first.short()} then {second.short()}"


def classify(res: JobResult, expect: Expectation, timeout: float | None = None) -> Classified:
    """The status of one job from its engine runs and the config's expectation."""
    if res.death is not None:
        st = Status.TIMEOUT if res.death.kind == "timeout" else Status.CRASH
        return Classified(st, res.death.describe(timeout))
    failed = [side for side in ("py", "c") if any(r.kind == "error" for r in res.runs(side))]
    for side in failed:
        for n, run in enumerate(res.runs(side), 1):
            if run.kind == "error" and run.code != "EngineFailure":
                return Classified(
                    Status.CRASH, f"the {side} engine raised {run.code}: {_q(run.message)} (run {n} of 2)"
                )
    if failed:
        run = next(r for r in res.runs(failed[0]) if r.kind == "error")
        who = "both engines" if len(failed) == 2 else f"the {failed[0]} engine"
        return Classified(
            Status.BUILD_FAILURE,
            f"{who} failed after validating the config (EngineFailure: {_q(run.message)}); "
            "a config that validates must build",
        )
    for side in ("py", "c"):
        runs = res.runs(side)
        if len(runs) >= 2 and runs[0].signature() != runs[1].signature():
            return Classified(Status.NONDETERMINISTIC, _second_run(side, runs[0], runs[1]))
    if not res.py or not res.c:
        return Classified(Status.CRASH, "the job returned no engine results")
    py, c = res.py[0], res.c[0]
    if py.kind == "emitted" and c.kind == "emitted":
        if py.sha256 != c.sha256:
            where = ""
            py_text, c_text = res.text("py"), res.text("c")
            if py_text is not None and c_text is not None:
                d = first_divergence(py_text, c_text)
                if d is not None:
                    where = f" from line {d.line}"
            return Classified(Status.DIFFER, f"outputs differ{where} (py {py.nbytes} bytes, c {c.nbytes} bytes)")
        if expect.emits:
            return Classified(Status.IDENTICAL, f"{py.nbytes} identical bytes")
        return Classified(
            Status.UNEXPECTED_EMIT, f"both engines emitted {py.nbytes} identical bytes; expected {expect}"
        )
    if py.kind == "rejected" and c.kind == "emitted":
        return Classified(
            Status.PY_ONLY_REJECTED, f"py rejected {py.code}: {_q(py.message)}; c emitted {c.nbytes} bytes"
        )
    if c.kind == "rejected" and py.kind == "emitted":
        return Classified(Status.C_ONLY_REJECTED, f"c rejected {c.code}: {_q(c.message)}; py emitted {py.nbytes} bytes")
    # both rejected
    if py.code != c.code:
        return Classified(Status.REJECT_MISMATCH, f"codes differ: py {py.code}, c {c.code}")
    if py.message != c.message:
        return Classified(Status.REJECT_MISMATCH, f"same code {py.code}, {message_difference(py.message, c.message)}")
    if expect.reject_code == py.code:
        return Classified(Status.BOTH_REJECTED, f"{py.code}: {_q(py.message)}")
    return Classified(
        Status.UNEXPECTED_REJECT, f"both engines rejected {py.code} ({_q(py.message, 100)}); expected {expect}"
    )
