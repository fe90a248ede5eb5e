"""The fuzz run's progress line and final table.

The table: cases per family and verdict (``emit``, ``reject``, then each failure status), the
same by origin (valid draws, rule crossings, mutations), the reason codes reached, the codes
the reference lists that no case reached (those ``parity_configs/UNREACHABLE.md`` explains, and
the entry checks of the mode and flavor arguments, which no config reaches, marked), and cases
per second.
"""

from __future__ import annotations

import re
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from rocke_py.fuzz.case import Case
from rocke_py.fuzz.oracles import Outcome

#: Where the reference lists the reason codes (docs/reference/README.md: the contract refines it).
REFERENCE_DOCS = ("docs/reference/conv-semantics.md", "docs/engine-contract.md")
_CODE_RE = re.compile(r"\b(?:E|CONV|FWD|WGRAD|DGRAD)_[A-Z0-9_]*[A-Z0-9]\b")
#: Codes of the entry checks on the mode and flavor arguments, not on the config.
NOT_FROM_A_CONFIG = frozenset({"E_MODE", "E_FLAVOR"})
_PASSING = ("emit", "reject")


def reference_codes(root: Path) -> list[str]:
    codes: set[str] = set()
    for rel in REFERENCE_DOCS:
        try:
            codes |= set(_CODE_RE.findall((root / rel).read_text(encoding="utf-8")))
        except OSError:
            continue
    return sorted(c for c in codes if not c.endswith("_"))


def unreachable_codes(root: Path) -> set[str]:
    """The codes ``parity_configs/UNREACHABLE.md`` gives a reason no config reaches."""
    try:
        text = (root / "parity_configs" / "UNREACHABLE.md").read_text(encoding="utf-8")
    except OSError:
        return set()
    return set(re.findall(r"^- `([A-Z0-9_]+)`", text, re.M))


@dataclass
class Tally:
    by_family: dict[str, Counter[str]] = field(default_factory=dict)
    by_origin: dict[str, Counter[str]] = field(default_factory=dict)
    codes: Counter[str] = field(default_factory=Counter)
    cases: int = 0
    failures: int = 0

    def add(self, case: Case, outcome: Outcome) -> None:
        self.cases += 1
        self.failures += outcome.failed
        self.by_family.setdefault(case.family, Counter())[outcome.verdict] += 1
        self.by_origin.setdefault(case.kind, Counter())[outcome.verdict] += 1
        if outcome.code:
            self.codes[outcome.code] += 1


def _table(title: str, rows: dict[str, Counter[str]]) -> list[str]:
    verdicts = [v for v in _PASSING if any(r[v] for r in rows.values())]
    verdicts += sorted({v for r in rows.values() for v in r if v not in _PASSING})
    head = [title, *verdicts, "cases"]
    body = [[name, *(str(r[v]) for v in verdicts), str(sum(r.values()))] for name, r in sorted(rows.items())]
    total = Counter[str]()
    for r in rows.values():
        total.update(r)
    body.append(["total", *(str(total[v]) for v in verdicts), str(sum(total.values()))])
    widths = [max(len(x[i]) for x in [head, *body]) for i in range(len(head))]
    fmt = lambda cells: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))  # noqa: E731
    return [fmt(head), *(fmt(b) for b in body)]


def _wrap(items: list[str], indent: str = "  ", width: int = 100) -> list[str]:
    lines, cur = [], indent
    for it in items:
        if len(cur) + len(it) + 1 > width and cur.strip():
            lines.append(cur.rstrip())
            cur = indent
        cur += it + " "
    if cur.strip():
        lines.append(cur.rstrip())
    return lines


def render(tally: Tally, root: Path, seconds: float) -> list[str]:
    out = _table("family", tally.by_family) + [""] + _table("origin", tally.by_origin) + [""]
    listed = reference_codes(root)
    reached = sorted(tally.codes)
    out.append(
        f"reason codes reached: {len(reached)} "
        f"({sum(c in listed for c in reached)} of the {len(listed)} the reference lists)"
    )
    out += _wrap([f"{c}×{tally.codes[c]}" for c in reached])
    missing = [c for c in listed if c not in tally.codes]
    why = unreachable_codes(root)
    marked = [
        c + (" (UNREACHABLE.md)" if c in why else " (not a config check)" if c in NOT_FROM_A_CONFIG else "")
        for c in missing
    ]
    out.append(f"listed in the reference, not reached: {len(missing)}")
    out += _wrap(marked)
    rate = tally.cases / seconds if seconds > 0 else 0.0
    out.append(f"{tally.cases} case(s) in {seconds:.1f} s: {rate:.1f} cases/s; {tally.failures} failing case(s)")
    return out


class Progress:
    """A tqdm bar over the budget's seconds on a terminal, else a plain line every 10 s."""

    def __init__(self, budget: float, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.budget = budget
        self.start = time.monotonic()
        self._last = self.start
        self._bar = None
        try:
            tty = self.stream.isatty()
        except (AttributeError, ValueError):
            tty = False
        if tty:
            try:
                from tqdm import tqdm
            except ImportError:
                tqdm = None
            if tqdm is not None:
                self._bar = tqdm(total=int(budget), file=self.stream, unit="s", leave=False, dynamic_ncols=True)

    def update(self, tally: Tally) -> None:
        now = time.monotonic()
        label = f"{tally.cases} cases, {tally.failures} failing"
        if self._bar is not None:
            self._bar.n = min(int(now - self.start), int(self.budget))
            self._bar.set_postfix_str(label, refresh=False)
            self._bar.refresh()
        elif now - self._last >= 10:
            self._last = now
            print(f"fuzz: {now - self.start:.0f} of {self.budget:g} s, {label}", file=self.stream, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
