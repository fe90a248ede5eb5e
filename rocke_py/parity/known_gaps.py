"""``parity_configs/known_gaps.toml``: jobs known to fail today, each with its reason.

    [[gap]]
    config = "wgrad/11-kouter-cshuffle"
    mode = "ir"            # spec, ir or ll
    flavor = "*"           # llvm20, llvm22, llvm23, "-" (spec/ir) or "*" (any)
    status = "UNEXPECTED_REJECT"
    reason = "K-outer cshuffle lowering lands in PR 123; until then both engines reject"

Rules (protobuf's failure lists): a listed job with exactly that status is KNOWN_GAP (passes,
counted loudly); a listed job that now passes, or fails differently, fails the gate ("known
gap no longer holds"); an entry that matches no job of a full run fails it; an entry naming a
config that does not exist, without a reason, with an unknown key or status, or matching the
same job as another entry is a run-level failure. GOLDEN_DRIFT and GOLDEN_MISSING cannot be
listed: ``rocke-parity golden --update`` is the fix for those.
"""
from __future__ import annotations

from rocke_py.parity._toml import tomllib
from dataclasses import dataclass
from pathlib import Path

from rocke_py.parity.compare import GAP_STATUSES, Status
from rocke_py.parity.engines import FLAVORLESS_MODES, FLAVORS, MODES, NO_FLAVOR
from rocke_py.parity.fileio import read_data_file

FILE_NAME = "known_gaps.toml"
_KEYS = ("config", "mode", "flavor", "status", "reason")
_OPTIONAL_KEYS = ("code",)   # the rejection code the job has today, for a *_REJECT* status


@dataclass(frozen=True)
class KnownGap:
    index: int  # 1-based position in the file, for messages
    config: str
    mode: str
    flavor: str  # a flavor, "-" or "*"
    status: Status
    reason: str
    code: str | None = None

    def holds_for(self, status: Status, code: str | None) -> bool:
        """The job still has exactly the listed outcome (status, and code when listed)."""
        return status is self.status and (self.code is None or self.code == code)

    def matches(self, config: str, mode: str, flavor: str) -> bool:
        return self.config == config and self.mode == mode and self.flavor in ("*", flavor)

    def label(self) -> str:
        return f"known_gaps.toml entry {self.index} ({self.config} {self.mode} {self.flavor} {self.status.value})"


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
    if not path.exists():
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
        unknown = sorted(set(entry) - set(_KEYS) - set(_OPTIONAL_KEYS))
        if unknown:
            bad.append(f"unknown key(s) {', '.join(unknown)}")
        missing = [k for k in _KEYS if not isinstance(entry.get(k), str)]
        if missing:
            bad.append(f"needs string key(s) {', '.join(missing)}")
        if bad:
            problems.append(f"{where}: {'; '.join(bad)}")
            continue
        if "code" in entry and not isinstance(entry["code"], str):
            problems.append(f"{where}: code must be a string")
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
            problems.append(f"{where} ({cfg}): flavor for mode {mode} must be one of {', '.join(allowed)}, not {flavor!r}")
            continue
        if status not in GAP_STATUSES:
            why = ("golden drift is fixed with rocke-parity golden --update"
                   if status in (Status.GOLDEN_DRIFT.value, Status.GOLDEN_MISSING.value)
                   else f"one of {', '.join(sorted(GAP_STATUSES))}")
            problems.append(f"{where} ({cfg}): status {status!r} cannot be listed ({why})")
            continue
        gaps.append(KnownGap(n, cfg, mode, flavor, Status(status), reason.strip(), entry.get("code")))
    # two entries for the same job
    for i, a in enumerate(gaps):
        for b in gaps[i + 1:]:
            if a.config == b.config and a.mode == b.mode and (a.flavor == b.flavor or "*" in (a.flavor, b.flavor)):
                problems.append(f"{path.name}: entries {a.index} and {b.index} both match {a.config} {a.mode} "
                                f"{a.flavor if a.flavor != '*' else b.flavor}")
    return KnownGaps(tuple(gaps), tuple(problems))
