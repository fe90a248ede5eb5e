"""The AMDGPU LLVM IR subset the engines emit (docs/lowering.md), as read from its text:
plain values, no engine objects and no llvmlite objects.

ll_reader.py builds these from an emitted module; ll_executor.py runs them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

#: scalar type name -> (kind, bits)
SCALAR_TYPES = {
    "i1": ("int", 1),
    "i8": ("int", 8),
    "i16": ("int", 16),
    "i32": ("int", 32),
    "i64": ("int", 64),
    "half": ("half", 16),
    "bfloat": ("bfloat", 16),
    "float": ("float", 32),
    "void": ("void", 0),
}


@dataclass(frozen=True)
class LlType:
    kind: str  # "int", "half", "bfloat", "float", "vec", "array", "ptr", "void", "label"
    bits: int = 0  # scalars
    n: int = 0  # vec and array length
    elem: Optional["LlType"] = None  # vec and array element
    addrspace: int = 0  # ptr

    @property
    def nbytes(self) -> int:
        """The bytes of a value in memory (i1 as one byte)."""
        if self.kind in ("vec", "array"):
            assert self.elem is not None
            return self.n * self.elem.nbytes
        if self.kind == "ptr":
            return 8 if self.addrspace in (0, 1, 4) else 16 if self.addrspace == 8 else 4
        return max(1, self.bits // 8)

    @property
    def scalar(self) -> "LlType":
        """The element type of a vector, else the type itself."""
        return self.elem if self.kind == "vec" and self.elem is not None else self

    def text(self) -> str:
        if self.kind == "vec":
            return f"<{self.n} x {self.elem.text()}>"  # type: ignore[union-attr]
        if self.kind == "array":
            return f"[{self.n} x {self.elem.text()}]"  # type: ignore[union-attr]
        if self.kind == "ptr":
            return f"ptr addrspace({self.addrspace})" if self.addrspace else "ptr"
        if self.kind == "int":
            return f"i{self.bits}"
        return self.kind


@dataclass(frozen=True)
class Operand:
    """A typed operand: `%name`, `@name`, an integer or `0x` float literal, `true`, `false`,
    `poison`, `zeroinitializer`, or a constant vector (`elements` set, value `<...>`)."""

    type: LlType
    value: str
    elements: tuple[str, ...] = ()
    #: a `%name` (stored once: the executor asks at every use of every operand)
    is_local: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "is_local", self.value.startswith("%"))


@dataclass(frozen=True)
class Instr:
    opcode: str  # "add", "call", "phi", "br", ...
    result: str  # "%name", or "" for an instruction without one
    type: Optional[LlType]  # the result type (load: the loaded type; store: the stored one)
    args: tuple[Operand, ...]
    line: int
    column: int
    pred: str = ""  # icmp
    callee: str = ""  # call: the name without "@"
    flags: tuple[str, ...] = ()  # nsw, inbounds, volatile, the atomic ordering, metadata names
    align: int = 0  # load / store
    source: Optional[LlType] = None  # getelementptr's source element type
    incoming: tuple[tuple[Operand, str], ...] = ()  # phi: (value, block label)
    targets: tuple[str, ...] = ()  # br: block labels (a conditional br: true, false)

    def where(self) -> str:
        """How a message names this instruction: its result or its callee, and its line."""
        what = self.callee if self.opcode == "call" else self.opcode
        head = f"{self.result} = " if self.result else ""
        return f"{head}{what} (ll line {self.line})"


@dataclass(frozen=True)
class Block:
    label: str
    instrs: tuple[Instr, ...]
    line: int


@dataclass(frozen=True)
class Param:
    type: LlType
    name: str  # with its "%"
    attrs: tuple[str, ...]  # as written: "noalias", "readonly", "align 16", ...


@dataclass(frozen=True)
class Global:
    name: str  # without "@"
    type: LlType
    addrspace: int
    align: int


@dataclass(frozen=True)
class Function:
    name: str
    params: tuple[Param, ...]
    blocks: tuple[Block, ...]
    attrs: dict[str, str]  # the attribute group's string attributes


@dataclass(frozen=True)
class Module:
    datalayout: str
    triple: str
    globals: tuple[Global, ...]
    function: Function
