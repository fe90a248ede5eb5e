"""``gate -k EXPR``: pytest's ``-k`` over the label a failure line prints for a job.

A term is a case-insensitive substring of the job's label — ``wgrad/11-kouter-cshuffle ll
llvm20`` as the failure line prints it, or ``wgrad/11-kouter-cshuffle ll.llvm20`` with the job
key — or, when it holds ``*``, ``?`` or ``[``, a glob matched against the whole label or the
config id. Terms combine with ``and``, ``or``, ``not`` and parentheses; words next to each other
(``ll llvm20``) are one term, so that a label copied from a failure line is a pattern."""

from __future__ import annotations

import fnmatch
import functools
import re
from typing import Callable, Iterable

_GLOB_CHARS = frozenset("*?[")
_TOKEN_RE = re.compile(r"\(|\)|[^\s()]+")
_OPERATORS = frozenset({"and", "or", "not"})

Matcher = Callable[[tuple[str, ...]], bool]


class ExpressionError(ValueError):
    pass


def _term(text: str) -> Matcher:
    low = text.lower()
    if any(ch in _GLOB_CHARS for ch in low):
        return lambda labels: any(fnmatch.fnmatchcase(label, low) for label in labels)
    return lambda labels: any(low in label for label in labels)


class _Parser:
    """expr := and ('or' and)*; and := not ('and' not)*; not := 'not' not | '(' expr ')' | term."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _TOKEN_RE.findall(text)
        self.pos = 0

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def fail(self, what: str) -> ExpressionError:
        return ExpressionError(f"-k {self.text!r}: {what}")

    def parse(self) -> Matcher:
        if not self.tokens:
            raise self.fail("an empty expression")
        m = self.expr()
        if self.peek() is not None:
            raise self.fail(f"unexpected {self.peek()!r}")
        return m

    def expr(self) -> Matcher:
        return self.chain("or", self.conj, any)

    def conj(self) -> Matcher:
        return self.chain("and", self.neg, all)

    def chain(self, word: str, operand: Callable[[], Matcher], combine: Callable[[Iterable[bool]], bool]) -> Matcher:
        """operand (word operand)*: the operands' matchers joined by `combine` (any for or, all
        for and), the two levels of the grammar."""
        parts = [operand()]
        while self.peek() == word:
            self.pos += 1
            parts.append(operand())
        return parts[0] if len(parts) == 1 else (lambda labels: combine(p(labels) for p in parts))

    def neg(self) -> Matcher:
        tok = self.peek()
        if tok == "not":
            self.pos += 1
            inner = self.neg()
            return lambda labels: not inner(labels)
        if tok == "(":
            self.pos += 1
            inner = self.expr()
            if self.peek() != ")":
                raise self.fail("a '(' without its ')'")
            self.pos += 1
            return inner
        if tok is None or tok in _OPERATORS or tok == ")":
            raise self.fail(f"a term expected {'at the end' if tok is None else f'before {tok!r}'}")
        words = []
        while (tok := self.peek()) is not None and tok not in _OPERATORS and tok not in "()":
            words.append(tok)
            self.pos += 1
        return _term(" ".join(words))


@functools.lru_cache(maxsize=64)
def compile_expression(text: str) -> Matcher:
    """The matcher of ``-k text``; ExpressionError (naming -k and the text) when it does not parse."""
    return _Parser(text).parse()


def labels(config: str, mode: str, flavor: str, key: str) -> tuple[str, ...]:
    """What a term is matched against, lowercased: the printed label, the key's label, the config id."""
    return (f"{config} {mode} {flavor}".lower(), f"{config} {key}".lower(), config.lower())


def matches(text: str, config: str, mode: str, flavor: str, key: str) -> bool:
    return compile_expression(text)(labels(config, mode, flavor, key))
