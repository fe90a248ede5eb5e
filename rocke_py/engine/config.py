"""Stage parse: the TOML subset of docs/engine-contract.md §3, and the encoding check of §2
step 5 (it is part of reading the file).

Twin of rocke_c/src/config.c, function for function in the same order. Hand-written on
purpose: tomllib accepts far more than the subset, and both engines must refuse the same
inputs with the same bytes. Bad input is returned as a Rejected, never raised.

parse_config_lines is the twin of rk_config_parse, a line at a time; parse_config gives its
result faster, reading the common lines in one regex pass over the text (no C twin: speed)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Optional, Union

from .result import Rejected

Value = Union[int, bool, str]

TABLES = ("parity", "target", "problem", "spec")  # the order of enum rk_table
MAX_NAME = 64
INT_MIN = -2147483648
INT_MAX = 2147483647
# Longest digit run that can still be inside int32: longer runs are out of range without
# converting them (int() of a huge run is slow and past 4300 digits even raises).
MAX_INT_DIGITS = 10
WS_RUN = re.compile("[ \t]*")  # whitespace: space or tab
BARE_RUN = re.compile("[A-Za-z0-9_-]*")  # the characters of a bare name
TOKEN_RUN = re.compile("[^ \t#]*")  # a token runs up to whitespace, '#' or the end
INT_TOKEN = re.compile("[+-]?(0|[1-9][0-9]*)")  # ASCII digits only: [0-9] is a range, not \d
CONTROL_RANGES = r"\x00-\x08\x0a-\x1f\x7f"  # U+0000-U+001F but tab (U+0009), and U+007F
CONTROL_CHAR = re.compile(f"[{CONTROL_RANGES}]")
COMMENT = rf"#[^{CONTROL_RANGES}]*"  # to the end of the line; '.' would also take a '\r'
# The commonest line, `key = value [# comment]` with a boolean, an integer of at most 10
# digits or a string without escapes, read by one match (parse_line); every other line, and
# every error, goes through the scans, which read a line this matches to the same entry. It
# matches no control character, so that within a whole text (text_lines) it matches one line
# and never one with a control character.
SIMPLE_KEY_LINE = re.compile(
    r"[ \t]*([A-Za-z0-9_-]{1,64})[ \t]*=[ \t]*"
    rf'(?:(true|false)|([+-]?(?:0|[1-9][0-9]{{0,9}}))|"([^"\\{CONTROL_RANGES}]*)")[ \t]*(?:{COMMENT})?'
)
ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t"}


@dataclass(frozen=True)
class Entry:
    table: str  # one of TABLES
    key: str  # a bare name of at most 64 characters
    line: int
    value: Value  # int (within int32), bool or str (unescaped)


@dataclass(frozen=True)
class Config:
    entries: tuple[Entry, ...]  # in file order
    table_line: dict[str, int]  # header line of each table present


@dataclass
class _State:
    """What the lines read so far have built (private to one parse_config call)."""

    entries: list[Entry] = field(default_factory=list)
    table_line: dict[str, int] = field(default_factory=dict)
    key_line: dict[tuple[str, str], int] = field(default_factory=dict)
    table: Optional[str] = None  # the table of the last header; None before any


# ---- encoding (contract §2 step 5) ----


def line_of(data: bytes, pos: int) -> int:
    return 1 + data.count(b"\n", 0, pos)


def first_invalid_utf8(data: bytes) -> int:
    """Offset of the first byte of the first ill-formed sequence, or -1. Python's strict
    decoder is RFC 3629 (no overlongs, surrogates, > U+10FFFF or truncations) and reports
    the sequence's first byte, which is what rk_utf8_invalid_at scans for in C."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start
    return -1


def check_encoding(data: bytes) -> Optional[Rejected]:
    nul = data.find(b"\0")
    bad = first_invalid_utf8(data)
    if nul >= 0 and (bad < 0 or nul < bad):
        return Rejected("E_ENCODING", f"line {line_of(data, nul)}: NUL byte")
    if bad >= 0:
        return Rejected("E_ENCODING", f"line {line_of(data, bad)}: invalid UTF-8")
    return None


# ---- lexical helpers ----


def syntax(lineno: int, what: str) -> Rejected:
    return Rejected("E_SYNTAX", f"line {lineno}: {what}")


def find_control_char(line: str) -> int:
    """Index of the first control character (U+0000-U+001F but tab, or U+007F), or -1."""
    found = CONTROL_CHAR.search(line)  # one scan in C rather than a loop over the characters
    return -1 if found is None else found.start()


# The lexical scans below are each one regex match (in C) rather than a loop over characters.


def skip_ws(line: str, i: int) -> int:
    return WS_RUN.match(line, i).end()


def bare_name_end(line: str, i: int) -> int:
    return BARE_RUN.match(line, i).end()


def name_then(line: str, i: int, lineno: int, missing: str, what: str, sep: str) -> Union[tuple[str, int], Rejected]:
    """The table name or key starting at i and the index of the `sep` after it; `missing` says
    what an empty one lacks, `what` names it."""
    end = bare_name_end(line, i)
    if end == i:
        return syntax(lineno, missing)
    if end - i > MAX_NAME:
        return syntax(lineno, f"name longer than {MAX_NAME} characters")
    name = line[i:end]
    at = skip_ws(line, end)
    if at == len(line) or line[at] != sep:
        return syntax(lineno, f"expected '{sep}' after {what} '{name}'")
    return name, at


def at_rest_ok(line: str, i: int) -> bool:
    """True if from i on there is only whitespace, then nothing or a comment."""
    i = skip_ws(line, i)
    return i == len(line) or line[i] == "#"


# ---- values ----


def parse_string(line: str, i: int, lineno: int, key: str) -> Union[tuple[str, int], Rejected]:
    """A basic string whose opening quote is at i: (unescaped text, index after the closing
    quote). A backslash that ends the line escapes nothing: the string is unterminated."""
    out: list[str] = []
    i += 1
    while i < len(line):
        ch = line[i]
        if ch == '"':
            return "".join(out), i + 1
        if ch == "\\":
            if i + 1 == len(line):
                break
            escaped = ESCAPES.get(line[i + 1])
            if escaped is None:
                return syntax(lineno, f"key '{key}': unsupported escape in string")
            out.append(escaped)
            i += 2
            continue
        out.append(ch)
        i += 1
    return syntax(lineno, f"key '{key}': unterminated string")


def token_end(line: str, i: int) -> int:
    return TOKEN_RUN.match(line, i).end()


def is_int_token(token: str) -> bool:
    """[+-]?(0|[1-9][0-9]*), ASCII digits only."""
    return INT_TOKEN.fullmatch(token) is not None


def int_value(token: str) -> Optional[int]:
    """The integer of an int token, or None when it is outside int32."""
    digits = token.lstrip("+-")
    if len(digits) > MAX_INT_DIGITS:
        return None
    value = int(token)
    return value if INT_MIN <= value <= INT_MAX else None


def parse_token(token: str, lineno: int, key: str) -> Union[Value, Rejected]:
    if token == "true":
        return True
    if token == "false":
        return False
    if is_int_token(token):
        value = int_value(token)
        if value is None:
            return Rejected("E_RANGE", f"line {lineno}: key '{key}': integer is outside the 32-bit range")
        return value
    return syntax(lineno, f"key '{key}': invalid value (expected an integer, true, false or a \"string\")")


def parse_value(line: str, i: int, lineno: int, key: str) -> Union[tuple[Value, int], Rejected]:
    """The value starting at i (whitespace already skipped): (value, index after it)."""
    if i == len(line) or line[i] == "#":
        return syntax(lineno, f"key '{key}': missing value")
    if line[i] == '"':
        return parse_string(line, i, lineno, key)
    end = token_end(line, i)
    value = parse_token(line[i:end], lineno, key)
    if isinstance(value, Rejected):
        return value
    return value, end


# ---- lines ----


def parse_header(line: str, i: int, lineno: int, state: _State) -> Optional[Rejected]:
    """A table header whose '[' is at i."""
    start = skip_ws(line, i + 1)
    got = name_then(line, start, lineno, "expected a table name after '['", "table name", "]")
    if isinstance(got, Rejected):
        return got
    name, i = got
    if not at_rest_ok(line, i + 1):
        return syntax(lineno, f"unexpected text after table header [{name}]")
    if name not in TABLES:
        return Rejected(
            "E_UNKNOWN_TABLE",
            f"line {lineno}: unknown table [{name}] (expected [parity], [target], [problem] or [spec])",
        )
    if name in state.table_line:
        return Rejected(
            "E_DUPLICATE_KEY",
            f"line {lineno}: table [{name}] is defined twice (first on line {state.table_line[name]})",
        )
    state.table_line[name] = lineno
    state.table = name
    return None


def add_entry(key: str, value: Value, lineno: int, state: _State) -> Optional[Rejected]:
    if state.table is None:
        return Rejected("E_UNKNOWN_KEY", f"line {lineno}: key '{key}' is outside any table")
    first = state.key_line.get((state.table, key))
    if first is not None:
        return Rejected(
            "E_DUPLICATE_KEY", f"line {lineno}: key '{key}' in [{state.table}] is set twice (first on line {first})"
        )
    state.key_line[(state.table, key)] = lineno
    state.entries.append(Entry(state.table, key, lineno, value))
    return None


def parse_key_line(line: str, i: int, lineno: int, state: _State) -> Optional[Rejected]:
    """`key = value` with the key starting at i."""
    got = name_then(line, i, lineno, "expected a key, a table header or a comment", "key", "=")
    if isinstance(got, Rejected):
        return got
    key, i = got
    parsed = parse_value(line, skip_ws(line, i + 1), lineno, key)
    if isinstance(parsed, Rejected):
        return parsed
    value, i = parsed
    if not at_rest_ok(line, i):
        return syntax(lineno, f"key '{key}': unexpected text after the value")
    return add_entry(key, value, lineno, state)


def simple_value(found: re.Match[str]) -> Optional[Value]:
    """The value of a SIMPLE_KEY_LINE match; None for an integer outside int32 (an error the
    scans report)."""
    word, number, string = found.group(2, 3, 4)
    if word is not None:
        return word == "true"
    if number is not None:
        value = int(number)
        return value if INT_MIN <= value <= INT_MAX else None
    return string


def parse_line(line: str, lineno: int, state: _State) -> Optional[Rejected]:
    """One line, without its '\\n' and without the '\\r' of a CRLF."""
    bad = find_control_char(line)
    if bad >= 0:
        return syntax(lineno, f"control character 0x{ord(line[bad]):02X}")
    simple = SIMPLE_KEY_LINE.fullmatch(line)
    if simple is not None:
        value = simple_value(simple)
        if value is not None:
            return add_entry(simple.group(1), value, lineno, state)
    i = skip_ws(line, 0)
    if i == len(line) or line[i] == "#":
        return None
    if line[i] == "[":
        return parse_header(line, i, lineno, state)
    return parse_key_line(line, i, lineno, state)


def read_lines(text: str, start: int, end: int, lineno: int, state: _State) -> Optional[Rejected]:
    """The lines of text[start:end], the first numbered lineno, each through parse_line; start
    begins a line and end is a '\n' or the end of the text."""
    lines = text[start:end].split("\n")
    for index, line in enumerate(lines):
        if line.endswith("\r") and (index + 1 < len(lines) or end < len(text)):
            line = line[:-1]  # CRLF; a '\r' that no '\n' follows is a control character
        bad = parse_line(line, lineno + index, state)
        if bad:
            return bad
    return None


def parse_config_lines(text: str) -> Union[Config, Rejected]:
    """parse_config by parse_line alone, one call per line: the reference the tests hold
    parse_config's one pass to."""
    state = _State()
    bad = read_lines(text, 0, len(text), 1, state)
    return bad or Config(tuple(state.entries), dict(state.table_line))


# ---- the whole text in one pass ----


@functools.lru_cache(maxsize=None)
def text_lines(simple: re.Pattern[str]) -> re.Pattern[str]:
    """Whole lines, with their '\n' or CRLF, that parse_config reads without parse_line: a
    key line `simple` matches (its groups come first), a table header (group 'table') or a run
    of blank and comment lines (no group). None holds a control character. Built from
    SIMPLE_KEY_LINE when called, so a test that replaces that replaces this too."""
    header = rf"[ \t]*\[[ \t]*(?P<table>parity|target|problem|spec)[ \t]*\][ \t]*(?:{COMMENT})?"
    blanks = rf"[ \t\n]*(?:{COMMENT}[ \t\n]*)*"  # one character class: faster than a group per line
    return re.compile(rf"^(?:{simple.pattern}|{header}|{blanks})(?:\r?\n|\Z)", re.MULTILINE)


def read_match(found: re.Match[str], lineno: int, state: _State) -> bool:
    """Reads the header or key line of a text_lines match into state; False, reading nothing,
    when the line is an error (a table defined twice, a key outside any table or set twice, an
    integer outside int32) for parse_line to word."""
    if found.lastgroup == "table":
        table = found.group("table")
        if table in state.table_line:
            return False
        state.table_line[table] = lineno
        state.table = table
        return True
    key, word, number, string = found.group(1, 2, 3, 4)
    if word is not None:
        value: Value = word == "true"
    elif number is not None:
        value = int(number)
        if not INT_MIN <= value <= INT_MAX:
            return False
    else:
        value = string
    table = state.table
    if table is None or (table, key) in state.key_line:
        return False
    state.key_line[table, key] = lineno
    state.entries.append(Entry(table, key, lineno, value))
    return True


def parse_config(text: str) -> Union[Config, Rejected]:
    """Lines in order, the first error wins. Only '\n' ends a line (never str.splitlines,
    which also breaks on \r, \x0b, \x1c-\x1e, \x85, \u2028, \u2029).

    The result of parse_config_lines, in one regex pass over the text (text_lines) that
    reads the common lines itself and hands each other line to parse_line, so that every
    error is still found and worded there. Most lines of a config are common ones, and a
    parse_line call for each made this the hot spot of the gate, the fuzz and the coverage."""
    state = _State()
    lineno = 1
    pos = 0  # where line `lineno` starts
    for found in text_lines(SIMPLE_KEY_LINE).finditer(text):
        start = found.start()
        if start != pos:  # lines that no match took, up to the '\n' before this match
            bad = read_lines(text, pos, start - 1, lineno, state)
            if bad:
                return bad
            lineno += text.count("\n", pos, start)
        pos = found.end()
        if found.lastindex is None:  # blank and comment lines
            lineno += text.count("\n", start, pos)
            continue
        if not read_match(found, lineno, state):
            bad = parse_line(found.group().rstrip("\r\n"), lineno, state)  # no '\r' or '\n' but its end
            if bad:
                return bad
        lineno += 1
    if pos < len(text):  # the last lines, which no match took
        bad = read_lines(text, pos, len(text), lineno, state)
        if bad:
            return bad
    return Config(tuple(state.entries), dict(state.table_line))
