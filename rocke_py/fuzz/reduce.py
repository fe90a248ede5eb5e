"""Shrink a failing case while its failure keeps its signature (:mod:`rocke_py.fuzz.oracles`).

Delta debugging (Zeller's ddmin) over the lines that can go — every key but the required ones
(a deleted key falls back to its default), comments and blank lines — then over values: each
integer moves toward the smallest magnitude that keeps the failure (0, 1, then powers of two,
half, one less, tried smallest first), each string toward ``""``, ``"a"``, its first half or its
word characters, each ``true`` toward ``false``; after each ddmin, every pair of the keys left
is tried (coupled keys, such as dtype_a and dtype_b, go only together); then the keys once more, since a smaller value
can make another key unnecessary; last, headers of tables left empty. Every step tests its
candidates in one batch (the caller runs them over the worker pool) and takes the first, in a
fixed order, that keeps the signature, so a reduction is deterministic.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Callable

from rocke_py.configtext import Line, join_lines, split_lines
from rocke_py.fuzz.case import is_required, key_count

#: texts -> the signature of each (the empty tuple when the text does not fail)
Tester = Callable[[list[str]], list[tuple[str, ...]]]
_INT_RE = re.compile(r"^[+-]?(0|[1-9][0-9]*)$")
_WORD_RE = re.compile(r"[^A-Za-z0-9_]")
_MOVES_PER_VALUE = 40
_PAIRS_UP_TO = 16  # deletable lines left after ddmin for which every pair is tried


@dataclass
class Reduction:
    text: str
    log: list[str] = field(default_factory=list)
    tests: int = 0
    complete: bool = True  # False when the deadline cut it short


def smaller_ints(token: str) -> list[str]:
    """Integer tokens of smaller magnitude than ``token`` (same sign), smallest first."""
    if not _INT_RE.match(token):
        return ["0"] if token not in ("0", "true", "false") else []
    v = int(token)
    out = [] if token == str(v) else [str(v)]  # "+7" and "-0" are spelt plainly first
    a, sign = abs(v), (-1 if v < 0 else 1)
    mags = {0, 1, a // 2, a - 1} | {1 << i for i in range(1, 32) if 1 << i < a}
    out[:0] = [str(sign * m) for m in sorted(m for m in mags if 0 <= m < a)]
    return out


def simpler_strings(token: str) -> list[str]:
    body = token[1:-1] if len(token) >= 2 and token.endswith('"') else token[1:]
    out = ['""', '"a"', f'"{body[: len(body) // 2]}"', '"' + _WORD_RE.sub("", body) + '"']
    seen: list[str] = []
    for t in sorted(out, key=len):
        if t != token and t not in seen and len(t) < len(token):
            seen.append(t)
    return seen


def simpler_values(token: str) -> list[str]:
    if token.startswith('"'):
        return simpler_strings(token)
    if token == "true":
        return ["false"]
    return smaller_ints(token)


class Reducer:
    def __init__(self, signature: tuple[str, ...], test: Tester, deadline: float) -> None:
        self.signature = signature
        self._test = test
        self.deadline = deadline
        self._cache: dict[str, bool] = {}
        self.result = Reduction("")

    def _first(self, texts: list[str]) -> int | None:
        """Index of the first text that keeps the signature (None: none does, or out of time)."""
        todo = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if todo:
            if time.monotonic() > self.deadline:
                self.result.complete = False
                return None
            self.result.tests += len(todo)
            for t, sig in zip(todo, self._test(todo)):
                self._cache[t] = sig == self.signature
        return next((i for i, t in enumerate(texts) if self._cache[t]), None)

    # -- keys
    def _without(self, lines: list[Line], keep: set[int], deletable: list[int]) -> str:
        gone = set(deletable) - keep
        return join_lines([ln for i, ln in enumerate(lines) if i not in gone])

    def ddmin(self, lines: list[Line]) -> list[Line]:
        deletable = [i for i, ln in enumerate(lines) if not ln.header and not is_required(ln)]
        items = list(deletable)
        if not items:
            return lines
        if self._first([self._without(lines, set(), deletable)]) == 0:
            items = []
        n = 2
        while len(items) >= 2:
            size = -(-len(items) // n)
            chunks = [items[i : i + size] for i in range(0, len(items), size)]
            rests = [[x for x in items if x not in c] for c in chunks] if len(chunks) > 2 else []
            cands = chunks + rests
            hit = self._first([self._without(lines, set(c), deletable) for c in cands])
            if hit is None:
                if n >= len(items) or not self.result.complete:
                    break
                n = min(len(items), 2 * n)
            elif hit < len(chunks):
                items, n = cands[hit], 2
            else:
                items, n = cands[hit], max(n - 1, 2)
        keep = set(items)
        return [ln for i, ln in enumerate(lines) if i not in set(deletable) - keep]

    def pairs(self, lines: list[Line]) -> list[Line]:
        """Delete two keys at once where ddmin left a 1-minimal set: coupled keys (dtype_a and
        dtype_b, warp_tile_m and warp_tile_n) go only together, and ddmin's chunks only take
        neighbours."""
        while True:
            deletable = [i for i, ln in enumerate(lines) if not ln.header and not is_required(ln)]
            if not 2 <= len(deletable) <= _PAIRS_UP_TO:
                return lines
            cands = [(a, b) for n, a in enumerate(deletable) for b in deletable[n + 1 :]]
            texts = [join_lines([ln for i, ln in enumerate(lines) if i not in (a, b)]) for a, b in cands]
            hit = self._first(texts)
            if hit is None:
                return lines
            a, b = cands[hit]
            self.result.log.append(f"pair: {lines[a].text.strip()!r} and {lines[b].text.strip()!r} deleted together")
            lines = [ln for i, ln in enumerate(lines) if i not in (a, b)]

    # -- values
    def values(self, lines: list[Line]) -> list[Line]:
        for _ in range(3):
            changed = False
            for i in range(len(lines)):
                for _step in range(_MOVES_PER_VALUE):  # each move strictly shrinks; a bound all the same
                    if lines[i].key is None or lines[i].value is None:
                        break
                    cands = [lines[i].with_value(v) for v in simpler_values(lines[i].value or "")]
                    hit = self._first([join_lines(lines[:i] + [c] + lines[i + 1 :]) for c in cands])
                    if hit is None:
                        break
                    self.result.log.append(
                        f"value {lines[i].table}.{lines[i].key}: {lines[i].value} -> {cands[hit].value}"
                    )
                    lines = lines[:i] + [cands[hit]] + lines[i + 1 :]
                    changed = True
            if not changed or not self.result.complete:
                break
        return lines

    def empty_tables(self, lines: list[Line]) -> list[Line]:
        for i in reversed(range(len(lines))):
            ln = lines[i]
            if ln.header and not any(x.key is not None and x.table == ln.table for x in lines):
                cand = lines[:i] + lines[i + 1 :]
                if self._first([join_lines(cand)]) == 0:
                    self.result.log.append(f"table [{ln.table}] dropped (no keys left)")
                    lines = cand
        return lines


def reduce_case(text: str, signature: tuple[str, ...], test: Tester, seconds: float) -> Reduction:
    """The smallest text found within ``seconds`` whose failure has ``signature``."""
    r = Reducer(signature, test, time.monotonic() + seconds)
    lines = split_lines(text)
    before = key_count(text)
    r.result.log.append(f"start: {before[0]} keys ({before[1]} beyond the required ones), {len(lines)} lines")
    for step in ("keys", "values", "keys", "tables"):
        start = len(lines)
        if step == "keys":
            lines = r.pairs(r.ddmin(lines))
            now = key_count(join_lines(lines))
            r.result.log.append(
                f"keys: {start} -> {len(lines)} lines, {now[0]} keys ({now[1]} beyond the required ones)"
            )
        elif step == "values":
            lines = r.values(lines)
        else:
            lines = r.empty_tables(lines)
    r.result.text = join_lines(lines)
    r.result.log.append(f"done: {r.result.tests} tests" + ("" if r.result.complete else " (stopped at the deadline)"))
    return r.result
