"""Text helpers: SSA canonical renumbering, the first divergence, a bounded unified diff.

Canonical renumbering replaces every ``%name`` (``%`` followed by ``[A-Za-z0-9_.]+``) with
``%v<N>``, N counting names in order of first appearance. The numbering restarts at every
line that begins with ``define `` (LLVM value names are per function), and a label definition
at the start of a line (``5:``, ``loop.body:``) counts as an appearance of ``%5`` /
``%loop.body``, so that branch targets renumber together with their labels. Two texts that
differ only by such renaming have equal canonical forms.

:func:`blank_line` is coarser, for one line alone: every SSA name and every number blanked, so
that one changed token reads alike wherever its line is (the failure causes the reports group
by, the fuzzer's signatures).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

_NAME_RE = re.compile(r"%([A-Za-z0-9_.]+)")
_SSA_RE = re.compile(r"%[A-Za-z0-9_.]+")
_NUMBER_RE = re.compile(r"(?<![A-Za-z0-9_])[0-9]+")  # a number alone: i32 stays a type
# a line that is only a label definition, optionally followed by a ; comment
_LABEL_RE = re.compile(r"^([A-Za-z0-9_.]+):(?=[ \t]*(?:;.*)?\r?\n?$)")


def canonicalise(text: str) -> str:
    out: list[str] = []
    names: dict[str, str] = {}

    def name_of(n: str) -> str:
        if n not in names:
            names[n] = f"v{len(names)}"
        return names[n]

    for line in text.splitlines(keepends=True):
        if line.startswith("define "):
            names = {}
        prefix = ""
        m = _LABEL_RE.match(line)
        if m:
            prefix = name_of(m.group(1))
            line = line[m.end(1) :]
        out.append(prefix + _NAME_RE.sub(lambda mm: "%" + name_of(mm.group(1)), line))
    return "".join(out)


def blank_line(line: str) -> str:
    """``line`` with each SSA name as ``%_`` and each number as ``#``: ``%mul11 = mul i32 %bid10, 64``
    and ``%mul11 = mul i32 %num_sub_gemms, 88`` are both ``%_ = mul i32 %_, #``."""
    return _NUMBER_RE.sub("#", _SSA_RE.sub("%_", line))


def renumbering_only(a: str, b: str) -> bool:
    """True when ``a`` and ``b`` differ, but not after canonical renumbering."""
    return a != b and canonicalise(a) == canonicalise(b)


@dataclass(frozen=True)
class Divergence:
    line: int  # 1-based line number of the first line that differs
    column: int  # 1-based column of the first differing character on that line
    a_has_line: bool  # False when text a ended before this line
    b_has_line: bool


#: characters compared per slice by common_prefix_length
PREFIX_BLOCK = 4096


def common_prefix_length(x: str, y: str) -> int:
    """How many leading characters ``x`` and ``y`` share. A block at a time (a slice comparison
    runs in C), then a character at a time inside the first block that differs: a hostile 8 MB
    line costs milliseconds, not the seconds of a character loop."""
    n = min(len(x), len(y))
    i = 0
    while i < n and x[i : i + PREFIX_BLOCK] == y[i : i + PREFIX_BLOCK]:
        i += PREFIX_BLOCK
    i = min(i, n)
    while i < n and x[i] == y[i]:
        i += 1
    return i


def first_divergence(a: str, b: str) -> Divergence | None:
    """The first line where ``a`` and ``b`` differ (None if equal)."""
    if a == b:
        return None
    la, lb = a.splitlines(keepends=True), b.splitlines(keepends=True)
    for i in range(max(len(la), len(lb))):
        x = la[i] if i < len(la) else None
        y = lb[i] if i < len(lb) else None
        if x != y:
            col = 1 if x is None or y is None else common_prefix_length(x, y) + 1
            return Divergence(i + 1, col, x is not None, y is not None)
    return Divergence(len(la) + 1, 1, False, False)  # pragma: no cover - unreachable when a != b


def context(text: str, line: int, n: int) -> list[tuple[int, str]]:
    """Lines ``line-n .. line+n`` (1-based) of ``text`` that exist, without line ends."""
    lines = text.splitlines()
    lo, hi = max(1, line - n), min(len(lines), line + n)
    return [(i, lines[i - 1]) for i in range(lo, hi + 1)]


def bounded_unified_diff(a: str, b: str, a_name: str, b_name: str, cap: int = 200, n: int = 3) -> tuple[list[str], int]:
    """A unified diff cut to ``cap`` lines: (lines without line ends, number of lines cut)."""
    diff = [
        ln.rstrip("\n")
        for ln in difflib.unified_diff(a.splitlines(keepends=True), b.splitlines(keepends=True), a_name, b_name, n=n)
    ]
    if len(diff) <= cap:
        return diff, 0
    return diff[:cap], len(diff) - cap
