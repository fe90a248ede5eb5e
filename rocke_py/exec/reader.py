"""Reads `rocke.ir v1` text (docs/ir.md §5) into ir_text's plain values.

It reads exactly what the printers write (two spaces per level, sorted attr keys are not
required), so a kernel read and printed again gives the same bytes (printer.py). Any other
text is a ReadError naming the line and the column."""

from __future__ import annotations

import re

from .gc_pause import gc_paused
from .ir_text import AttrValue, Kernel, Op, Param, Region, Value

HEADER = "rocke.ir v1"
INTEGER = re.compile(r"0|-?[1-9][0-9]*")
STRING_BODY = re.compile(r'((?:[^"\\]|\\.)*)"')
ESCAPE = re.compile(r"\\.")
UNESCAPE = {"\\\\": "\\", '\\"': '"', "\\n": "\n", "\\t": "\t"}
NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
# the scans below as regexes (a character at a time in Python costs most of a read)
NAME_TAIL = re.compile(r"[A-Za-z0-9_]*")
PLAIN_TYPE = re.compile(r"[^ ,<>]*")
UNTIL: dict[str, re.Pattern[str]] = {}


def until_pattern(stops: str) -> re.Pattern[str]:
    pattern = UNTIL.get(stops)
    if pattern is None:
        pattern = UNTIL[stops] = re.compile("[^" + re.escape(stops) + "]*")
    return pattern


class ReadError(ValueError):
    def __init__(self, line: int, column: int, message: str) -> None:
        super().__init__(f"line {line}, column {column}: {message}")
        self.line = line
        self.column = column


class Cursor:
    """One line of text and a position in it."""

    def __init__(self, text: str, line: int, pos: int = 0) -> None:
        self.text = text
        self.line = line
        self.pos = pos

    def fail(self, message: str) -> ReadError:
        return ReadError(self.line, self.pos + 1, message)

    def at(self, word: str) -> bool:
        return self.text.startswith(word, self.pos)

    def expect(self, word: str) -> None:
        if not self.at(word):
            got = self.text[self.pos : self.pos + len(word) + 8] or "the end of the line"
            raise self.fail(f"expected {word!r}, got {got!r}")
        self.pos += len(word)

    def end(self) -> None:
        if self.pos != len(self.text):
            raise self.fail(f"unexpected {self.text[self.pos : self.pos + 16]!r}")

    def until(self, stops: str) -> str:
        start = self.pos
        self.pos = until_pattern(stops).match(self.text, start).end()
        return self.text[start : self.pos]

    def value_name(self) -> str:
        if not self.at("%"):
            raise self.fail("expected a value name (%...)")
        start = self.pos
        self.pos = NAME_TAIL.match(self.text, start + 1).end()
        if self.pos == start + 1:
            raise self.fail("an empty value name")
        return self.text[start : self.pos]

    def type_name(self) -> str:
        """A type: up to the first space or comma outside <...>."""
        start, depth = self.pos, 0
        end = PLAIN_TYPE.match(self.text, start).end()
        if end > start and (end == len(self.text) or self.text[end] in " ,"):  # no <...>
            self.pos = end
            return self.text[start:end]
        while self.pos < len(self.text):
            ch = self.text[self.pos]
            if ch == "<":
                depth += 1
            elif ch == ">":
                depth -= 1
                if depth < 0:
                    raise self.fail("an unbalanced '>' in a type")
            elif depth == 0 and ch in " ,":
                break
            self.pos += 1
        if depth != 0:
            raise self.fail("an unclosed '<' in a type")
        if self.pos == start:
            raise self.fail("expected a type")
        return self.text[start : self.pos]

    def tagged(self) -> AttrValue:
        if self.at("{"):
            return self.attr_map()
        if self.at("b:true"):
            self.pos += 6
            return True
        if self.at("b:false"):
            self.pos += 7
            return False
        if self.at("i:"):
            self.pos += 2
            digits = self.until(", ]}")
            if not INTEGER.fullmatch(digits):
                raise self.fail(f"a bad integer {digits!r}")
            return int(digits)
        if self.at("f:"):
            self.pos += 2
            text = self.until(", ]}")
            try:
                return float(text)
            except ValueError:
                raise self.fail(f"a bad float {text!r}") from None
        if self.at('s:"'):
            self.pos += 3
            return self.string()
        if self.at("l:[ "):
            self.pos += 4
            items: list[AttrValue] = []
            if self.at(" ]"):
                self.pos += 2
                return items
            while True:
                items.append(self.tagged())
                if self.at(" ]"):
                    self.pos += 2
                    return items
                self.expect(", ")
        raise self.fail("expected a tagged value (b: i: f: s: l: or a map)")

    def string(self) -> str:
        """The rest of a string after its opening quote (escapes \\ \" \n \t)."""
        m = STRING_BODY.match(self.text, self.pos)
        if not m:
            raise self.fail("an unterminated string")
        for esc in ESCAPE.finditer(m.group(1)):
            if esc.group(0) not in UNESCAPE:
                self.pos += esc.start()
                raise self.fail(f"a bad escape {esc.group(0)}")
        self.pos = m.end()
        return ESCAPE.sub(lambda e: UNESCAPE[e.group(0)], m.group(1))

    def attr_map(self) -> dict[str, AttrValue]:
        self.expect("{ ")
        out: dict[str, AttrValue] = {}
        if self.at(" }"):
            self.pos += 2
            return out
        while True:
            key = self.until(" ")
            if not key:
                raise self.fail("expected an attr key")
            if key in out:
                raise self.fail(f"attr {key} given twice")
            self.expect(" = ")
            out[key] = self.tagged()
            if self.at(" }"):
                self.pos += 2
                return out
            self.expect(", ")


class Reader:
    def __init__(self, text: str) -> None:
        if not text.endswith("\n"):
            raise ReadError(text.count("\n") + 1, 1, "the text does not end with a newline")
        self.lines = text[:-1].split("\n")
        self.next = 0  # index of the next line

    def line(self, depth: int) -> Cursor:
        """The next line, which must be indented by `depth` levels."""
        if self.next >= len(self.lines):
            raise ReadError(len(self.lines) + 1, 1, "unexpected end of the text")
        text = self.lines[self.next]
        self.next += 1
        cur = Cursor(text, self.next)
        cur.expect("  " * depth)
        if cur.at(" "):
            raise cur.fail("wrong indentation")
        return cur

    def peek_close(self, depth: int) -> bool:
        return self.next < len(self.lines) and self.lines[self.next] == "  " * depth + "}"

    def kernel(self) -> Kernel:
        cur = self.line(0)
        cur.expect(HEADER)
        cur.end()
        cur = self.line(0)
        cur.expect("kernel @")
        if not cur.text.endswith(" {"):
            raise cur.fail("expected 'kernel @<name> {'")
        name = cur.text[cur.pos : len(cur.text) - 2]
        if not name:
            raise cur.fail("an empty kernel name")
        attrs: dict[str, AttrValue] = {}
        cur = self.line(1)
        if cur.at("attrs "):
            cur.pos += 6
            attrs = cur.attr_map()
            cur.end()
            cur = self.line(1)
        cur.expect("params {")
        cur.end()
        params = []
        while not self.peek_close(1):
            cur = self.line(2)
            pname = cur.value_name()
            cur.expect(" : ")
            ptype = cur.type_name()
            pattrs: dict[str, AttrValue] = {}
            if cur.at(" {"):
                cur.pos += 1
                pattrs = cur.attr_map()
            cur.end()
            params.append(Param(Value(pname, ptype), pattrs))
        self.line(1).expect("}")
        entry = self.region(1)
        if entry.name != "entry":
            raise ReadError(self.next, 1, "the kernel's region is not @entry")
        cur = self.line(0)
        cur.expect("}")
        cur.end()
        if self.next != len(self.lines):
            raise ReadError(self.next + 1, 1, "text after the kernel")
        return Kernel(name, attrs, tuple(params), entry)

    def region(self, depth: int) -> Region:
        cur = self.line(depth)
        cur.expect("region @")
        if not cur.text.endswith(" {"):
            raise cur.fail("expected 'region @<name> {'")
        name = cur.text[cur.pos : len(cur.text) - 2]
        ops = []
        while not self.peek_close(depth):
            ops.append(self.op(depth + 1))
        self.line(depth).expect("}")
        return Region(name, tuple(ops))

    def op(self, depth: int) -> Op:
        cur = self.line(depth)
        line = cur.line
        results = []
        if cur.at("%"):
            while True:
                rname = cur.value_name()
                cur.expect(" : ")
                results.append(Value(rname, cur.type_name()))
                if cur.at(" = "):
                    cur.pos += 3
                    break
                cur.expect(", ")
        name = cur.until(" ")
        if not name:
            raise cur.fail("expected an op name")
        cur.expect(" ( ")
        operands = []
        if cur.at(" )"):
            cur.pos += 2
        else:
            while True:
                operands.append(cur.value_name())
                if cur.at(" )"):
                    cur.pos += 2
                    break
                cur.expect(", ")
        attrs: dict[str, AttrValue] = {}
        if cur.at(" {"):
            cur.pos += 1
            attrs = cur.attr_map()
        cur.end()
        regions = []
        while self.next < len(self.lines) and self.lines[self.next].startswith("  " * (depth + 1) + "region @"):
            regions.append(self.region(depth + 1))
        return Op(name, tuple(results), tuple(operands), attrs, tuple(regions), line)


def read_ir(text: str) -> Kernel:
    """The kernel of a `rocke.ir v1` text; a ReadError naming the line when it is not one."""
    with gc_paused():  # every object read lives on: a collection would find nothing
        return Reader(text).kernel()
