"""A fuzz case (config bytes plus where it came from) and the line view the reducer edits.

Config text is handled as ``str`` decoded with ``surrogateescape``, so a case whose bytes are
not UTF-8 (a mutation may make one) survives the round trip to bytes unchanged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: The keys a config must set (engine-contract §4 step 2): never deleted by the reducer and
#: not counted in "keys beyond the required ones".
REQUIRED: frozenset[tuple[str, str]] = frozenset(
    {("target", "arch"), ("spec", "family")} | {("problem", k) for k in ("N", "Hi", "Wi", "C", "K", "Y", "X")}
)
ENGINE_TABLES = ("target", "problem", "spec")

_HEADER_RE = re.compile(r"^[ \t]*\[[ \t]*([A-Za-z0-9_-]+)[ \t]*\][ \t]*(?:#.*)?$")
_KEY_RE = re.compile(r'^[ \t]*([A-Za-z0-9_-]+)[ \t]*=[ \t]*("(?:[^"\\]|\\.)*"|[^ \t#]*)(.*)$')


@dataclass(frozen=True)
class Case:
    """One config the fuzzer runs. ``index`` orders cases within a seed; ``origin`` says which
    draw made it (``gen:<path>``, ``cross:<rule>``, ``mut:<kind>``); ``flavor`` is the ll
    flavor it runs with."""

    index: int
    origin: str
    family: str
    text: str
    flavor: str

    @property
    def data(self) -> bytes:
        return encode(self.text)

    @property
    def kind(self) -> str:
        return self.origin.partition(":")[0]


def encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def decode(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


@dataclass(frozen=True)
class Line:
    """One line of a config: a table header, a ``key = value`` line (with its table), or other."""

    text: str
    table: str | None = None  # the header's name, or the table a key line is in
    key: str | None = None
    value: str | None = None  # the raw value token of a key line
    header: bool = False

    @property
    def required(self) -> bool:
        return self.key is not None and (self.table, self.key) in REQUIRED

    def with_value(self, value: str) -> Line:
        m = _KEY_RE.match(self.text)
        assert m is not None and self.key is not None
        start, end = m.span(2)
        return Line(self.text[:start] + value + self.text[end:], self.table, self.key, value)


def split_lines(text: str) -> list[Line]:
    """The lines of ``text`` (split on ``\\n``), each classified as the engines' grammar would."""
    out: list[Line] = []
    table: str | None = None
    for raw in text.split("\n"):
        body = raw[:-1] if raw.endswith("\r") else raw
        h = _HEADER_RE.match(body)
        if h:
            table = h.group(1)
            out.append(Line(raw, table, header=True))
            continue
        k = _KEY_RE.match(body)
        if k and table is not None:
            out.append(Line(raw, table, k.group(1), k.group(2)))
        else:
            out.append(Line(raw))
    return out


def join_lines(lines: list[Line]) -> str:
    return "\n".join(line.text for line in lines)


def key_count(text: str) -> tuple[int, int]:
    """(keys in the engine tables, of which beyond the required ones)."""
    keys = [ln for ln in split_lines(text) if ln.key is not None and ln.table in ENGINE_TABLES]
    return len(keys), sum(1 for ln in keys if not ln.required)


def toml_scalar(value: object) -> str:
    """A value as the config subset writes it (strings: only the escapes the engines take)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    text = str(value)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t") + '"'


def render(tables: dict[str, dict[str, object]]) -> str:
    """Tables of values as config text, in the given table and key order."""
    parts = []
    for table, entries in tables.items():
        parts.append(f"[{table}]\n" + "".join(f"{k} = {toml_scalar(v)}\n" for k, v in entries.items()))
    return "\n".join(parts)
