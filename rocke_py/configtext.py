"""Config text: the one place that writes TOML values for parity configs and splits a config
into lines, so that ``new``, the fuzzer's cases and reduction, ``gaps add`` and the tests write
and read config text the same way.

- Writing a value: :func:`config_string` and :func:`config_scalar` write the config subset the
  engines' parsers take (a basic string with only the escapes ``\\" \\\\ \\n \\t``, a decimal
  integer, ``true``/``false``); :func:`render_tables` writes whole tables. :func:`toml_string`
  writes any text as a TOML basic string, for files only tomllib reads (``known_gaps.toml``).
- Reading lines: :data:`HEADER_RE` and :data:`KEY_RE` classify a line as the engines' grammar
  does (a ``[table]`` header, a ``key = value`` line); :func:`split_lines` gives the classified
  lines the fuzzer mutates and reduces; :func:`value_end` finds where a value ends.
- Editing: :class:`TomlLines`, :func:`set_value` and :func:`remove_key` edit a config one line
  at a time, keeping the rest of the file (comments, layout) as it is.

Engine-free, like :mod:`rocke_py.facts`. tests/engines/test_configtext.py holds it to the
engines' parsers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: a ``[table]`` line (group 1: the name), with blanks and a comment allowed around it
HEADER_RE = re.compile(r"^[ \t]*\[[ \t]*([A-Za-z0-9_-]+)[ \t]*\][ \t]*(?:#.*)?$")
#: a ``key = value`` line: (indent, key, the ``=`` with its blanks, the value and what follows it)
KEY_RE = re.compile(r"^([ \t]*)([A-Za-z0-9_-]+)([ \t]*=[ \t]*)(.*)$")
_BARE_VALUE_RE = re.compile(r"[^ \t#]*")
_TOML_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}
_CONFIG_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t"}

# ----------------------------------------------------------------------------- writing values


def toml_string(text: str) -> str:
    """``text`` as a TOML basic string (any TOML reader, tomllib included, gives ``text`` back)."""
    out = []
    for ch in text:
        if ch in _TOML_ESCAPES:
            out.append(_TOML_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def bad_char(text: str) -> str | None:
    """The first control character or line break in ``text`` (``\\n`` and ``\\t`` included: a
    config line holds none of them raw), or None."""
    for ch in text:
        if ord(ch) < 0x20 or ord(ch) == 0x7F or ch in "\x85\u2028\u2029":
            return ch
    return None


def config_string(text: str) -> str:
    """``text`` as a basic string of the config subset: ``\\" \\\\ \\n \\t`` escaped, and any other
    control character or line break (which no engine takes) written as U+FFFD."""
    out = []
    for ch in text:
        if ch in _CONFIG_ESCAPES:
            out.append(_CONFIG_ESCAPES[ch])
        elif bad_char(ch) is not None:
            out.append("\ufffd")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def config_scalar(value: object) -> str:
    """A value as the config subset writes it: ``true``/``false``, a decimal integer, else a string."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return config_string(str(value))


def render_tables(tables: dict[str, dict[str, object]]) -> str:
    """Tables of values as config text, in the given table and key order, a blank line between."""
    parts = []
    for table, entries in tables.items():
        parts.append(f"[{table}]\n" + "".join(f"{k} = {config_scalar(v)}\n" for k, v in entries.items()))
    return "\n".join(parts)


# ----------------------------------------------------------------------------- reading lines


@dataclass(frozen=True)
class Line:
    """One line of a config: a table header, a ``key = value`` line (with its table), or other."""

    text: str
    table: str | None = None  # the header's name, or the table a key line is in
    key: str | None = None
    value: str | None = None  # the raw value token of a key line
    header: bool = False

    def with_value(self, value: str) -> Line:
        """This key line with its value token replaced (the rest of the line kept)."""
        m = KEY_RE.match(self.text)
        assert m is not None and self.key is not None
        start = m.start(4)
        end = start + value_end(m.group(4))
        return Line(self.text[:start] + value + self.text[end:], self.table, self.key, value)


def split_lines(text: str) -> list[Line]:
    """The lines of ``text`` (split on ``\\n``), each classified as the engines' grammar would."""
    out: list[Line] = []
    table: str | None = None
    for raw in text.split("\n"):
        body = raw[:-1] if raw.endswith("\r") else raw
        h = HEADER_RE.match(body)
        if h:
            table = h.group(1)
            out.append(Line(raw, table, header=True))
            continue
        k = KEY_RE.match(body)
        if k and table is not None:
            rest = k.group(4)
            out.append(Line(raw, table, k.group(2), rest[: value_end(rest)]))
        else:
            out.append(Line(raw))
    return out


def join_lines(lines: list[Line]) -> str:
    return "\n".join(line.text for line in lines)


# ----------------------------------------------------------------------------- editing


def value_end(rest: str) -> int:
    """Length of the value at the start of ``rest``: a basic string up to its closing quote, else
    a bare token up to a blank or ``#`` (an unterminated string is read as a bare token)."""
    if rest.startswith('"'):
        i = 1
        while i < len(rest):
            if rest[i] == "\\":
                i += 2
                continue
            if rest[i] == '"':
                return i + 1
            i += 1
    m = _BARE_VALUE_RE.match(rest)
    return m.end() if m else 0


_Tables = dict[str, tuple[int, dict[str, int], int]]
_NAME_ONLY_RE = re.compile(r"[A-Za-z0-9_-]+")


def table_index(lines: list[str]) -> _Tables:
    """table -> (header line index, {key: line index}, index of its last key line or header)."""
    out: _Tables = {}
    current: str | None = None
    for i, line in enumerate(lines):
        body = line.rstrip("\r\n")
        m = HEADER_RE.match(body)
        if m:
            current = m.group(1)
            out.setdefault(current, (i, {}, i))
            continue
        k = KEY_RE.match(body)
        if k and current is not None and not body.lstrip().startswith("#"):
            hdr, keys, _ = out[current]
            keys.setdefault(k.group(2), i)
            out[current] = (hdr, keys, i)
    return out


def _plain(text: str) -> bool:
    """Every line ends in ``\\n`` or ``\\r\\n`` and holds no other line break: joining the
    lines and splitting them again gives the same lines."""
    return text.endswith("\n") and len(text.splitlines()) == text.count("\n")


def _flat(word: str) -> bool:
    return len((word + "x").splitlines()) == 1


def _shifted(tabs: _Tables, after: int) -> _Tables:
    """The index with every line after ``after`` one further down (a line inserted there)."""

    def at(i: int) -> int:
        return i + 1 if i > after else i

    return {t: (at(h), {k: at(i) for k, i in keys.items()}, at(last)) for t, (h, keys, last) in tabs.items()}


class TomlLines:
    """A config text as lines and their :func:`table_index` index, edited as :func:`set_value` and
    :func:`remove_key` edit it. A run of edits keeps the index by hand where a re-scan provably
    finds the same (a plain text, a one-line key and value), and re-scans otherwise. The index
    is never changed in place, so a copy shares it."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines(keepends=True)
        self.tabs = table_index(self.lines)
        self.plain = _plain(text)
        self.stale = False  # the lines were edited as text: split and scan them again

    def copy(self) -> TomlLines:
        out = TomlLines.__new__(TomlLines)
        out.lines, out.tabs, out.plain, out.stale = list(self.lines), self.tabs, self.plain, self.stale
        return out

    def text(self) -> str:
        return "".join(self.lines)

    def _fresh(self) -> None:
        if self.stale:
            text = self.text()
            self.lines = text.splitlines(keepends=True)
            self.tabs = table_index(self.lines)
            self.plain = _plain(text)
            self.stale = False

    def set(self, table: str, key: str, value: str) -> None:
        """``[table] key`` set to ``value`` (TOML text), by editing one line."""
        self._fresh()
        lines, tabs = self.lines, self.tabs
        kept = self.plain and _flat(value) and _NAME_ONLY_RE.fullmatch(key) is not None
        nl = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
        if table in tabs and key in tabs[table][1]:
            i = tabs[table][1][key]
            body = lines[i].rstrip("\r\n")
            ending = lines[i][len(body) :]
            m = KEY_RE.match(body)
            assert m is not None
            rest = m.group(4)
            end = value_end(rest)
            lines[i] = m.group(1) + m.group(2) + m.group(3) + value + rest[end:] + ending
        elif table in tabs:
            at = tabs[table][2]
            if not lines[at].endswith("\n"):
                lines[at] += nl
            lines.insert(at + 1, f"{key} = {value}{nl}")
            if kept:  # the new line is the table's last key line, after its last one
                self.tabs = _shifted(tabs, at)
                hdr, keys, _ = self.tabs[table]
                self.tabs[table] = (hdr, {**keys, key: at + 1}, at + 1)
        else:
            if lines and not lines[-1].endswith("\n"):
                lines[-1] += nl
            lines.extend([nl, f"[{table}]{nl}", f"{key} = {value}{nl}"])
            if kept and _NAME_ONLY_RE.fullmatch(table) is not None:
                n = len(lines)
                self.tabs = {**tabs, table: (n - 2, {key: n - 1}, n - 1)}
            else:
                kept = False
        self.stale = not kept

    def remove(self, table: str, key: str) -> None:
        """Without the line of ``[table] key`` (unchanged if there is none)."""
        self._fresh()
        if table in self.tabs and key in self.tabs[table][1]:
            del self.lines[self.tabs[table][1][key]]
            # a later line of the same key becomes the key's line: scan again
            if self.plain:
                self.tabs = table_index(self.lines)
            else:
                self.stale = True


def set_value(text: str, table: str, key: str, value: str) -> str:
    """``text`` with ``[table] key`` set to ``value`` (TOML text), by editing one line."""
    doc = TomlLines(text)
    doc.set(table, key, value)
    return doc.text()


def remove_key(text: str, table: str, key: str) -> str:
    """``text`` without the line of ``[table] key`` (unchanged if there is none)."""
    doc = TomlLines(text)
    doc.remove(table, key)
    return doc.text()


def has_comment(text: str) -> bool:
    for line in text.splitlines():
        body = line.strip()
        if body.startswith("#"):
            return True
        k = KEY_RE.match(line)
        if k:
            rest = k.group(4)
            if "#" in rest[value_end(rest) :]:
                return True
        elif "#" in body:
            return True
    return False
