"""The kernel IR as read from its text (docs/ir.md): plain values, no engine objects.

The reader (reader.py) builds these from `rocke.ir v1` text, the printer (printer.py) turns
them back into the same bytes, the executor (executor.py) runs them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

#: A tagged attr value (docs/ir.md §5): b: bool, i: int, f: float, s: str, l: list, a map.
AttrValue = Union[bool, int, float, str, list["AttrValue"], dict[str, "AttrValue"]]


@dataclass(frozen=True)
class Value:
    name: str  # with its "%"
    type: str  # the type name, as printed


@dataclass(frozen=True)
class Region:
    name: str  # without its "@"
    ops: tuple["Op", ...]


@dataclass(frozen=True)
class Op:
    name: str  # e.g. "arith.add"
    results: tuple[Value, ...]
    operands: tuple[str, ...]  # value names
    attrs: dict[str, AttrValue]
    regions: tuple[Region, ...]
    line: int  # 1-based line of the op in the text it was read from

    def where(self) -> str:
        """How a message names this op: its first result, else its name, and its line."""
        head = self.results[0].name + " = " if self.results else ""
        return f"{head}{self.name} (line {self.line})"


@dataclass(frozen=True)
class Param:
    value: Value
    attrs: dict[str, AttrValue]


@dataclass(frozen=True)
class Kernel:
    name: str
    attrs: dict[str, AttrValue]
    params: tuple[Param, ...]
    entry: Region
