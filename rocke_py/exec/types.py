"""The IR's type names (docs/ir.md §1) as the executor needs them: kind, element, shape and
the NumPy dtype a register of that type is held in (bf16 as its uint16 bit pattern)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

SCALARS = ("i1", "i32", "i64", "f16", "bf16", "f32")
DTYPES = {
    "i1": np.dtype(np.bool_),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(np.uint16),
    "f32": np.dtype(np.float32),
}
BYTES = {"i1": 1, "i32": 4, "i64": 8, "f16": 2, "bf16": 2, "f32": 4}

VEC = re.compile(r"vec<([a-z0-9]+)x([0-9]+)>")
PTR = re.compile(r"ptr<([a-z0-9]+),global>")
SMEM = re.compile(r"smem<([a-z0-9]+), \[([0-9]+)x([0-9]+)\]>")


@dataclass(frozen=True)
class IrType:
    kind: str  # "scalar", "vec", "ptr", "rsrc", "smem"
    elem: str = ""  # the scalar (element) type
    n: int = 1  # vector length
    rows: int = 0  # smem shape
    cols: int = 0

    @property
    def dtype(self) -> np.dtype:
        return DTYPES[self.elem]

    @property
    def nbytes(self) -> int:
        return BYTES[self.elem] * self.n


@lru_cache(maxsize=None)
def parse_type(name: str) -> IrType:
    """The type of a type name; ValueError for a name outside docs/ir.md §1."""
    if name in SCALARS:
        return IrType("scalar", name)
    if name == "rsrc":
        return IrType("rsrc")
    m = VEC.fullmatch(name)
    if m and m.group(1) in SCALARS and int(m.group(2)) >= 1:
        return IrType("vec", m.group(1), int(m.group(2)))
    m = PTR.fullmatch(name)
    if m and m.group(1) in SCALARS:
        return IrType("ptr", m.group(1))
    m = SMEM.fullmatch(name)
    if m and m.group(1) in SCALARS:
        return IrType("smem", m.group(1), 1, int(m.group(2)), int(m.group(3)))
    raise ValueError(f"unknown type {name!r}")
