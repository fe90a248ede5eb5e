"""A fuzz case (config bytes plus where it came from) and which of its lines the reducer keeps.

The line view itself is :mod:`rocke_py.configtext`'s.

Config text is handled as ``str`` decoded with ``surrogateescape``, so a case whose bytes are
not UTF-8 (a mutation may make one) survives the round trip to bytes unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

from rocke_py.configtext import Line, split_lines

#: The keys a config must set (engine-contract §4 step 2): never deleted by the reducer and
#: not counted in "keys beyond the required ones".
REQUIRED: frozenset[tuple[str, str]] = frozenset(
    {("target", "arch"), ("spec", "family")} | {("problem", k) for k in ("N", "Hi", "Wi", "C", "K", "Y", "X")}
)
ENGINE_TABLES = ("target", "problem", "spec")


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


def is_required(line: Line) -> bool:
    """A key line of a key every config must set."""
    return line.key is not None and (line.table, line.key) in REQUIRED


def key_count(text: str) -> tuple[int, int]:
    """(keys in the engine tables, of which beyond the required ones)."""
    keys = [ln for ln in split_lines(text) if ln.key is not None and ln.table in ENGINE_TABLES]
    return len(keys), sum(1 for ln in keys if not is_required(ln))
