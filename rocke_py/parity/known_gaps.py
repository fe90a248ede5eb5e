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
not just a status — the two output hashes of a DIFFER, the codes and message hashes of a
rejection, the engine and signal of a CRASH (:data:`EVIDENCE_KEYS`). A listed job whose status
and evidence are exactly those is KNOWN_GAP (passes, counted loudly); a listed job that now
passes, or fails in any other way (another divergence, another signal), fails the gate ("known
gap no longer holds"). An entry that matches no job of a full run fails it; an entry without
its evidence, naming a config that does not exist, without a reason, with an unknown key or
status, or matching the same job as another entry is a run-level failure. GOLDEN_DRIFT,
GOLDEN_MISSING and VERDICT_CHANGED cannot be listed: ``rocke-parity golden --update`` is the
fix for those. The gate's JSON report (``evidence``) and ``rocke-parity diff`` print the
evidence of a failing job, ready to paste.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from rocke_py.parity._toml import tomllib
from rocke_py.parity.compare import GAP_STATUSES, GOLDEN_STATUSES, PASSING, Status
from rocke_py.parity.engines import FLAVORLESS_MODES, FLAVORS, MODES, NO_FLAVOR, EngineRun
from rocke_py.parity.fileio import read_data_file
from rocke_py.parity.runner import JobResult

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
    Status.CRASH.value: ("engine", "cause"),
    Status.TIMEOUT.value: ("engine",),
    Status.NONDETERMINISTIC.value: ("engine",),
    Status.BUILD_FAILURE.value: ("engine", "message_sha256"),
    Status.VERDICT_SPLIT.value: ("verdict",),
}
_ALL_EVIDENCE = sorted({k for keys in EVIDENCE_KEYS.values() for k in keys})
assert set(EVIDENCE_KEYS) == set(GAP_STATUSES), "every listable status needs its evidence keys"


def _msg_sha(message: str) -> str:
    return hashlib.sha256(message.encode("utf-8", "surrogateescape")).hexdigest()


def _verdict_word(run: EngineRun | None) -> str:
    if run is None:
        return "none"
    return "emit" if run.kind == "emitted" else (f"reject:{run.code}" if run.kind == "rejected" else "error")


#: Statuses that carry no evidence: the passing ones and the manifest's (a gap cannot name them).
_NO_EVIDENCE: frozenset[str] = PASSING | GOLDEN_STATUSES


def evidence_of(status: Status, res: JobResult) -> dict[str, str]:
    """The evidence of a job's failure, in the keys of :data:`EVIDENCE_KEYS` (empty for other statuses)."""
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
    if s in (Status.CRASH.value, Status.TIMEOUT.value):
        if res.death is not None:
            ev = {"engine": res.death.engine}
            if s == Status.CRASH.value:
                ev["cause"] = res.death.signal_name or f"exit {res.death.exitcode}"
            return ev
        for side in ("py", "c"):
            for r in res.runs(side):
                if r.kind == "error":
                    return {"engine": side, "cause": f"exception {r.code}"}
        return {"engine": "?", "cause": "?"} if s == Status.CRASH.value else {"engine": "?"}
    if s == Status.NONDETERMINISTIC.value:
        sides = [
            side
            for side in ("py", "c")
            if len(res.runs(side)) >= 2 and res.runs(side)[0].signature() != res.runs(side)[1].signature()
        ]
        return {"engine": "+".join(sides) or "?"}
    if s == Status.BUILD_FAILURE.value:
        sides = [side for side in ("py", "c") if any(r.kind == "error" for r in res.runs(side))]
        first = next((r for side in sides for r in res.runs(side) if r.kind == "error"), None)
        return {"engine": "+".join(sides) or "?", "message_sha256": _msg_sha(first.message if first else "")}
    if s == Status.VERDICT_SPLIT.value:
        return {"verdict": _verdict_word(py)}
    return {}


def evidence_toml(status: Status, evidence: Mapping[str, str]) -> str:
    """The evidence as TOML lines, for pasting into a [[gap]] entry."""
    return "\n".join([f'status = "{status.value}"', *(f'{k} = "{v}"' for k, v in evidence.items())])


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
        return " ".join([self.status.value, *(f"{k}={v[:16]}" for k, v in self.evidence)])

    def label(self) -> str:
        return f"known_gaps.toml entry {self.index} ({self.config} {self.mode} {self.flavor} {self.status.value})"


def describe_now(status: Status, evidence: Mapping[str, str]) -> str:
    return " ".join([status.value, *(f"{k}={v[:16]}" for k, v in evidence.items())])


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
        doc = tomllib.loads(read_data_file(path).decode("utf-8"))  # a regular file of at most 16 MiB
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        return KnownGaps((), (f"{path.name}: cannot be read: {e}",))
    problems: list[str] = []
    extra = sorted(set(doc) - {"gap"})
    if extra:
        problems.append(f"{path.name}: unknown top-level key(s) {', '.join(extra)} (only [[gap]] tables)")
    raw = doc.get("gap", [])
    if not isinstance(raw, list) or not all(isinstance(g, dict) for g in raw):
        return KnownGaps((), (*problems, f"{path.name}: 'gap' must be an array of tables ([[gap]])"))
    gaps: list[KnownGap] = []
    for n, entry in enumerate(raw, 1):
        where = f"{path.name} entry {n}"
        bad: list[str] = []
        unknown = sorted(set(entry) - set(_KEYS) - set(_ALL_EVIDENCE))
        if unknown:
            bad.append(f"unknown key(s) {', '.join(unknown)}")
        missing = [k for k in _KEYS if not isinstance(entry.get(k), str)]
        if missing:
            bad.append(f"needs string key(s) {', '.join(missing)}")
        if bad:
            problems.append(f"{where}: {'; '.join(bad)}")
            continue
        cfg, mode, flavor, status, reason = (entry[k] for k in _KEYS)
        if not reason.strip():
            problems.append(f"{where} ({cfg}): the reason is empty; every known gap says why it exists")
            continue
        if cfg not in config_ids:
            problems.append(f"{where}: no config {cfg!r}")
            continue
        if mode not in MODES:
            problems.append(f"{where} ({cfg}): mode must be one of {', '.join(MODES)}, not {mode!r}")
            continue
        allowed = (NO_FLAVOR, "*") if mode in FLAVORLESS_MODES else (*FLAVORS, "*")
        if flavor not in allowed:
            problems.append(
                f"{where} ({cfg}): flavor for mode {mode} must be one of {', '.join(allowed)}, not {flavor!r}"
            )
            continue
        if status not in GAP_STATUSES:
            why = (
                "a golden failure is fixed with rocke-parity golden --update"
                if status in GOLDEN_STATUSES
                else f"one of {', '.join(sorted(GAP_STATUSES))}"
            )
            problems.append(f"{where} ({cfg}): status {status!r} cannot be listed ({why})")
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
                    f"{path.name}: entries {a.index} and {b.index} both match {a.config} {a.mode} "
                    f"{a.flavor if a.flavor != '*' else b.flavor}"
                )
    return KnownGaps(tuple(gaps), tuple(problems))
