"""``parity_configs/known_gaps.toml``: jobs known to fail today, each with its reason and evidence.

    [[gap]]
    config = "wgrad/11-kouter-cshuffle"
    mode = "ll"            # spec, ir or ll
    flavor = "llvm20"      # llvm20, llvm22, llvm23, "-" (spec/ir) or "*" (any)
    status = "DIFFER"
    reason = "the C lowering of the llvm20 flavor lands in PR 123"
    py_sha256 = "…"        # evidence: what the failure looks like today (see EVIDENCE_KEYS)
    c_sha256 = "…"

Rules (protobuf's failure lists, made stricter): an entry pins the *evidence* of its failure,
not just a status (:data:`EVIDENCE_KEYS`) — the two output hashes of a DIFFER, the codes and
message hashes of a rejection; for a CRASH the engine, the signal, the C engine's stage and the
innermost engine frame; for a NONDETERMINISTIC job the hashes of the varying engine's two runs
and of the stable engine's output; for a VERDICT_SPLIT the verdicts and output hashes of the job
and of the job it splits from. A listed job whose status and evidence are exactly those is
KNOWN_GAP (passes, counted loudly); a listed job that now passes, or fails in any other way
(another divergence, another signal, another function), fails the gate ("known gap no longer
holds"). An entry that matches no job of a full run fails it; an entry without its evidence,
naming a config that does not exist, without a reason (or with the placeholder reason that
``rocke-parity diff`` prints), with an unknown key or status, or matching the same job as
another entry is a run-level failure. GOLDEN_DRIFT, GOLDEN_MISSING and VERDICT_CHANGED cannot
be listed: ``rocke-parity golden --update`` is the fix for those. ``rocke-parity diff`` prints
a failing job's entry and ``rocke-parity gaps add`` writes it (:mod:`gaps_edit`); the gate's
JSON report has every failing job's ``evidence``.

Hashes of a run (:func:`run_sha256`): an emission's is the sha256 of its output; a rejection's
(or an exception's) the sha256 of ``"<kind> <CODE>\n<message>"`` (``rejected E_X\n...``), so
a varying rejection is pinned by its code and message. Where two engines' hashes are pinned in
one key (both vary, or a reference job whose engines emitted different bytes), the value is
``<py>+<c>``; ``-`` stands for "none" (no stable engine, no stage note, no frame).

Frames of a CRASH (:func:`crash_frame`): for a C engine that died, the innermost frame of the
engine in the backtrace of the job re-run under gdb (``backtrace``), libc's frames skipped; for
the Python engine that died, the innermost Python frame of the worker's faulthandler dump; for
an exception, ``<Type> in <function that raised it>``. Without a backtrace (no gdb on the PATH,
or a re-run that did not crash) the frame is ``-``, and an entry's ``-`` matches only ``-``:
an entry recorded with gdb fails on a machine without it (the gate cannot check the frame
there), and one recorded without gdb fails where gdb shows the frame; record gaps where the gate
runs.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from rocke_py.configtext import toml_string
from rocke_py.facts import FLAVORLESS_MODES, FLAVORS, MODES
from rocke_py.parity.judge.compare import GAP_STATUSES, GOLDEN_STATUSES, PASSING, Status
from rocke_py.parity.run import backtrace
from rocke_py.parity.run.engines import NO_FLAVOR, EngineRun
from rocke_py.parity.run.work import JobResult
from rocke_py.parity.store._toml import tomllib
from rocke_py.parity.store.fileio import brief, key_list, read_data_file

FILE_NAME = "known_gaps.toml"
_KEYS = ("config", "mode", "flavor", "status", "reason")

#: The evidence an entry must pin, by status: exactly these keys, each a string.
EVIDENCE_KEYS: Mapping[str, tuple[str, ...]] = {
    Status.DIFFER.value: ("py_sha256", "c_sha256"),
    Status.REJECT_MISMATCH.value: ("py_code", "c_code", "py_message_sha256", "c_message_sha256"),
    Status.PY_ONLY_REJECTED.value: ("code", "message_sha256", "c_sha256"),
    Status.C_ONLY_REJECTED.value: ("code", "message_sha256", "py_sha256"),
    Status.UNEXPECTED_REJECT.value: ("code", "message_sha256"),
    Status.UNEXPECTED_EMIT.value: ("sha256",),
    Status.CRASH.value: ("engine", "cause", "stage", "frame"),
    Status.TIMEOUT.value: ("engine",),
    Status.NONDETERMINISTIC.value: ("engine", "first_sha256", "repeat_sha256", "stable_sha256"),
    Status.BUILD_FAILURE.value: ("engine", "message_sha256"),
    Status.VERDICT_SPLIT.value: ("verdict", "sha256", "reference_job", "reference_verdict", "reference_sha256"),
}
_ALL_EVIDENCE = sorted({k for keys in EVIDENCE_KEYS.values() for k in keys})
assert set(EVIDENCE_KEYS) == set(GAP_STATUSES), "every listable status needs its evidence keys"
#: An evidence value that stands for "none": no stable engine, no stage note, no engine frame.
NONE = "-"
#: The reason ``rocke-parity diff`` prints in a ready-to-paste entry; the loader refuses it, so
#: that an entry pasted without saying why it exists is a run-level failure, never a pass.
PLACEHOLDER_REASON = "TODO: why this job fails today, and what will remove this entry"
#: A frame line of a traceback (``File "x.py", line 3, in f``) or of a faulthandler dump
#: (``File "x.py", line 3 in f``).
_PY_FRAME = re.compile(r'^\s*File "[^"]*", line \d+,? in (\S+)')


def _msg_sha(message: str) -> str:
    return hashlib.sha256(message.encode("utf-8", "surrogateescape")).hexdigest()


def run_sha256(run: EngineRun) -> str:
    """A run's hash: its output's sha256, or for a rejection or an exception the sha256 of
    ``"<kind> <CODE>\n<message>"`` (so that two rejections with another code or message differ)."""
    return run.sha256 if run.kind == "emitted" else _msg_sha(f"{run.kind} {run.code}\n{run.message}")


def _joined(hashes: list[str]) -> str:
    """One key for one engine's hash or both (``<py>+<c>``): "-" for none."""
    return "+".join(hashes) or NONE


def _verdict_word(run: EngineRun | None) -> str:
    if run is None:
        return "none"
    return "emit" if run.kind == "emitted" else (f"reject:{run.code}" if run.kind == "rejected" else "error")


#: Statuses that carry no evidence: the passing ones and the manifest's (a gap cannot name them).
_NO_EVIDENCE: frozenset[str] = PASSING | GOLDEN_STATUSES


def evidence_of(status: Status, res: JobResult, reference: JobResult | None = None) -> dict[str, str]:
    """The evidence of a job's failure, in the keys of :data:`EVIDENCE_KEYS` (empty for other statuses).

    ``reference``: for a VERDICT_SPLIT, the job of the config whose verdict this one departs from."""
    s = status.value
    if s in _NO_EVIDENCE:  # nearly every job of a run: answered before the chain of tests below
        return {}
    py = res.py[0] if res.py else None
    c = res.c[0] if res.c else None
    if s == Status.DIFFER.value and py and c:
        return {"py_sha256": py.sha256, "c_sha256": c.sha256}
    if s == Status.REJECT_MISMATCH.value and py and c:
        return {
            "py_code": py.code,
            "c_code": c.code,
            "py_message_sha256": _msg_sha(py.message),
            "c_message_sha256": _msg_sha(c.message),
        }
    if s == Status.PY_ONLY_REJECTED.value and py and c:
        return {"code": py.code, "message_sha256": _msg_sha(py.message), "c_sha256": c.sha256}
    if s == Status.C_ONLY_REJECTED.value and py and c:
        return {"code": c.code, "message_sha256": _msg_sha(c.message), "py_sha256": py.sha256}
    if s == Status.UNEXPECTED_REJECT.value and py:
        return {"code": py.code, "message_sha256": _msg_sha(py.message)}
    if s == Status.UNEXPECTED_EMIT.value and py:
        return {"sha256": py.sha256}
    if s == Status.CRASH.value:
        return crash_evidence(res)
    if s == Status.TIMEOUT.value:
        return {"engine": res.death.engine if res.death is not None else "?"}
    if s == Status.NONDETERMINISTIC.value:
        return nondeterminism_evidence(res)
    if s == Status.BUILD_FAILURE.value:
        sides = [side for side in ("py", "c") if any(r.kind == "error" for r in res.runs(side))]
        first = next((r for side in sides for r in res.runs(side) if r.kind == "error"), None)
        return {"engine": "+".join(sides) or "?", "message_sha256": _msg_sha(first.message if first else "")}
    if s == Status.VERDICT_SPLIT.value:
        return split_evidence(res, reference)
    return {}


def crash_evidence(res: JobResult) -> dict[str, str]:
    """engine, cause (the signal, ``exit N`` or ``exception Type``), stage (the C engine's stage
    note, else "-") and frame (:func:`crash_frame`) of a CRASH."""
    d = res.death
    if d is not None:
        cause = d.signal_name or f"exit {d.exitcode}"
        return {"engine": d.engine, "cause": cause, "stage": d.stage_name or NONE, "frame": crash_frame(res)}
    # the exception classify() calls a crash: the first that is not an EngineFailure (a build failure)
    for side in ("py", "c"):
        for r in res.runs(side):
            if r.kind == "error" and r.code != "EngineFailure":
                return {"engine": side, "cause": f"exception {r.code}", "stage": NONE, "frame": crash_frame(res)}
    return {"engine": "?", "cause": "?", "stage": NONE, "frame": NONE}


def crash_frame(res: JobResult) -> str:
    """Where a crash happened, as pinned by a CRASH entry: the innermost engine frame of a dead C
    engine (from the gdb re-run), the innermost Python frame of a dead Python engine (from the
    worker's faulthandler dump), ``<Type> in <function>`` for an exception, "-" when unknown."""
    d = res.death
    if d is not None:
        if d.engine == "c":
            return backtrace.innermost_frame(d.c_frames) or NONE
        return _python_frame(d.detail) if d.engine == "py" else NONE
    for side in ("py", "c"):
        for r in res.runs(side):
            if r.kind == "error" and r.code != "EngineFailure":
                return f"{r.code} in {_raising_function(r.detail)}"
    return NONE


def _python_frame(dump: str) -> str:
    """The innermost frame of the crashing thread in a faulthandler dump (it prints that thread
    as "Current thread", innermost frame first), or "-"."""
    lines = dump.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith("Current thread")), 0)
    for ln in lines[start:]:
        m = _PY_FRAME.match(ln)
        if m:
            return m.group(1)
    return NONE


def _raising_function(tail: str) -> str:
    """The function that raised, from the tail of a traceback (innermost frame last), or "?"
    when the tail kept no frame line (an exception message longer than the tail)."""
    names = [m.group(1) for ln in tail.splitlines() if (m := _PY_FRAME.match(ln))]
    return names[-1] if names else "?"


def _varies(runs: tuple[EngineRun, ...]) -> bool:
    return len(runs) >= 2 and runs[0].signature() != runs[1].signature()


def nondeterminism_evidence(res: JobResult) -> dict[str, str]:
    """engine (``py``, ``c`` or ``py+c``: the engines whose two runs differ), the hashes of those
    engines' first and repeat runs, and the hash of the stable engine's output ("-" when both vary)."""
    varying = [side for side in ("py", "c") if _varies(res.runs(side))]
    stable = [side for side in ("py", "c") if side not in varying and res.runs(side)]
    return {
        "engine": "+".join(varying) or "?",
        "first_sha256": _joined([run_sha256(res.runs(side)[0]) for side in varying]),
        "repeat_sha256": _joined([run_sha256(res.runs(side)[1]) for side in varying]),
        "stable_sha256": _joined([run_sha256(res.runs(side)[0]) for side in stable[:1]] if varying else []),
    }


def _agreed_sha256(res: JobResult) -> str:
    """The hash of what both engines gave (``<py>+<c>`` when their hashes differ)."""
    hashes = [run_sha256(res.runs(side)[0]) for side in ("py", "c") if res.runs(side)]
    return _joined(hashes[:1] if len(set(hashes)) == 1 else hashes)


def _job_key(res: JobResult) -> str:
    """The output key of a result's job (``spec``, ``ir``, ``ll.llvm22``), as golden.json names it."""
    item = res.item
    return item.mode if item.mode in FLAVORLESS_MODES else f"{item.mode}.{item.call_flavor}"


def split_evidence(res: JobResult, reference: JobResult | None) -> dict[str, str]:
    """The verdict and the output hash of the job, and those of the job (``reference_job``, the
    config's first job both engines agree on) whose verdict it departs from: "every mode's verdict",
    so that another verdict, or other bytes of the same one, on either side fails the entry."""
    py = res.py[0] if res.py else None
    ref_py = reference.py[0] if reference is not None and reference.py else None
    return {
        "verdict": _verdict_word(py),
        "sha256": _agreed_sha256(res),
        "reference_job": _job_key(reference) if reference is not None else "?",
        "reference_verdict": _verdict_word(ref_py) if reference is not None else "?",
        "reference_sha256": _agreed_sha256(reference) if reference is not None else "?",
    }


def mismatch_hint(gap: "KnownGap", evidence: Mapping[str, str]) -> str:
    """Why a CRASH entry's frame cannot match here, when it cannot: the run has no frame to show."""
    pinned = dict(gap.evidence).get("frame", NONE)
    if gap.status is Status.CRASH and evidence.get("frame") == NONE and pinned != NONE:
        return (
            f" (the entry pins frame {pinned}, but this run has no engine frame: gdb is not on the PATH "
            "or the job re-run under gdb did not crash)"
        )
    return ""


@dataclass(frozen=True)
class KnownGap:
    index: int  # 1-based position in the file, for messages
    config: str
    mode: str
    flavor: str  # a flavor, "-" or "*"
    status: Status
    reason: str
    evidence: tuple[tuple[str, str], ...] = ()

    def holds_for(self, status: Status, evidence: Mapping[str, str]) -> bool:
        """The job still fails exactly as listed: the same status and the same evidence."""
        return status is self.status and dict(self.evidence) == dict(evidence)

    def matches(self, config: str, mode: str, flavor: str) -> bool:
        return self.config == config and self.mode == mode and self.flavor in ("*", flavor)

    def describe(self) -> str:
        return describe_now(self.status, dict(self.evidence))

    def label(self) -> str:
        return f"known_gaps.toml entry {self.index} ({self.config} {self.mode} {self.flavor} {self.status.value})"


def describe_now(status: Status, evidence: Mapping[str, str]) -> str:
    return " ".join([status.value, *(f"{k}={_short(v)}" for k, v in evidence.items())])


_HASH = re.compile(r"^[0-9a-f]{64}$")


def _short(value: str) -> str:
    """An evidence value for a message: each sha256 cut to 16 digits (enough to tell two apart),
    other words (a frame, a stage) whole up to 60 characters."""
    parts = value.split("+")
    if all(_HASH.match(p) for p in parts):
        return "+".join(p[:16] for p in parts)
    return value if len(value) <= 60 else value[:59] + "…"


@dataclass(frozen=True)
class KnownGaps:
    gaps: tuple[KnownGap, ...]
    problems: tuple[str, ...]

    def lookup(self, config: str, mode: str, flavor: str) -> KnownGap | None:
        for g in self.gaps:
            if g.matches(config, mode, flavor):
                return g
        return None


def load(path: Path, config_ids: set[str]) -> KnownGaps:
    """Read the file (absent = no gaps). Problems are run-level failures; bad entries are dropped."""
    if not path.exists() and not path.is_symlink():
        return KnownGaps((), ())
    try:
        text = read_data_file(path).decode("utf-8")  # a regular file of at most 16 MiB
    except (OSError, UnicodeDecodeError) as e:
        return KnownGaps((), (f"{path.name}: cannot be read: {e}",))
    return loads(text, path.name, config_ids)


def loads(text: str, name: str, config_ids: set[str]) -> KnownGaps:
    """The gaps of the file's text (``name`` for messages), as :func:`load` judges them."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        return KnownGaps((), (f"{name}: cannot be read: {e}",))
    problems: list[str] = []
    extra = sorted(set(doc) - {"gap"})
    if extra:
        problems.append(f"{name}: unknown top-level key(s) {key_list(extra)} (only [[gap]] tables)")
    raw = doc.get("gap", [])
    if not isinstance(raw, list) or not all(isinstance(g, dict) for g in raw):
        return KnownGaps((), (*problems, f"{name}: 'gap' must be an array of tables ([[gap]])"))
    gaps: list[KnownGap] = []
    for n, entry in enumerate(raw, 1):
        where = f"{name} entry {n}"
        bad: list[str] = []
        unknown = sorted(set(entry) - set(_KEYS) - set(_ALL_EVIDENCE))
        if unknown:
            bad.append(f"unknown key(s) {key_list(unknown)}")
        missing = [k for k in _KEYS if not isinstance(entry.get(k), str)]
        if missing:
            bad.append(f"needs string key(s) {', '.join(missing)}")
        if bad:
            problems.append(f"{where}: {'; '.join(bad)}")
            continue
        cfg, mode, flavor, status, reason = (entry[k] for k in _KEYS)
        shown = cfg if cfg in config_ids else brief(cfg)  # not yet known to be a config's id
        if not reason.strip():
            problems.append(f"{where} ({shown}): the reason is empty; every known gap says why it exists")
            continue
        if reason.strip() == PLACEHOLDER_REASON:
            problems.append(
                f"{where} ({shown}): the reason is still the placeholder rocke-parity diff prints; "
                "say why the job fails today and what will remove the entry"
            )
            continue
        if cfg not in config_ids:
            problems.append(f"{where}: no config {brief(cfg)}")
            continue
        if mode not in MODES:
            problems.append(f"{where} ({cfg}): mode must be one of {', '.join(MODES)}, not {brief(mode)}")
            continue
        allowed = (NO_FLAVOR, "*") if mode in FLAVORLESS_MODES else (*FLAVORS, "*")
        if flavor not in allowed:
            problems.append(
                f"{where} ({cfg}): flavor for mode {mode} must be one of {', '.join(allowed)}, not {brief(flavor)}"
            )
            continue
        if status not in GAP_STATUSES:
            why = (
                "a golden failure is fixed with rocke-parity golden --update"
                if status in GOLDEN_STATUSES
                else f"one of {', '.join(sorted(GAP_STATUSES))}"
            )
            problems.append(f"{where} ({cfg}): status {brief(status)} cannot be listed ({why})")
            continue
        want = EVIDENCE_KEYS[status]
        lacking = [k for k in want if not isinstance(entry.get(k), str) or not entry[k]]
        other = sorted(k for k in set(entry) & set(_ALL_EVIDENCE) if k not in want)
        if lacking or other:
            parts = []
            if lacking:
                parts.append(
                    f"pins no evidence: a {status} entry needs {', '.join(want)} "
                    f"(missing {', '.join(lacking)}; the gate's --json report and rocke-parity diff "
                    "print them for a failing job)"
                )
            if other:
                parts.append(f"key(s) {', '.join(other)} are not evidence of {status}")
            problems.append(f"{where} ({cfg}): {'; '.join(parts)}")
            continue
        gaps.append(KnownGap(n, cfg, mode, flavor, Status(status), reason.strip(), tuple((k, entry[k]) for k in want)))
    # two entries for the same job
    for i, a in enumerate(gaps):
        for b in gaps[i + 1 :]:
            if a.config == b.config and a.mode == b.mode and (a.flavor == b.flavor or "*" in (a.flavor, b.flavor)):
                problems.append(
                    f"{name}: entries {a.index} and {b.index} both match {a.config} {a.mode} "
                    f"{a.flavor if a.flavor != '*' else b.flavor}"
                )
    return KnownGaps(tuple(gaps), tuple(problems))


def entry_toml(config: str, mode: str, flavor: str, status: Status, reason: str, evidence: Mapping[str, str]) -> str:
    """One whole ``[[gap]]`` entry (the one writer of an entry; see the module's docstring)."""
    keys = {"config": config, "mode": mode, "flavor": flavor, "status": status.value, "reason": reason, **evidence}
    return "\n".join(["[[gap]]", *(f"{k} = {toml_string(v)}" for k, v in keys.items())]) + "\n"
