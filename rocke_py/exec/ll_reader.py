"""Reads the AMDGPU LLVM IR the engines emit (docs/lowering.md, all three flavors) into
ll_text's plain values.

It reads the subset the lowering writes, one construct per line, and nothing else: any other
instruction, type, constant or intrinsic form is an LlReadError naming the line and the
column, so that a lowering change the executor has no semantics for is found here, not
guessed at. llvmlite is the second reader (tests/exec/test_ll_reader.py)."""

from __future__ import annotations

import functools
import re
from typing import Callable, Optional, TypeVar

from .gc_pause import gc_paused
from .ll_text import SCALAR_TYPES, Block, Function, Global, Instr, LlType, Module, Operand, Param

TOKEN = re.compile(
    r"""(?P<ws>\s+)
    |(?P<local>%[-a-zA-Z$._0-9]+)
    |(?P<global>@(?:"[^"\\]*"|[-a-zA-Z$._][-a-zA-Z$._0-9]*))
    |(?P<meta>![-a-zA-Z$._0-9]*)
    |(?P<group>\#[0-9]+)
    |(?P<num>0x[0-9A-F]{16}|-?[0-9]+)
    |(?P<str>"[^"\\]*")
    |(?P<word>[A-Za-z_][A-Za-z0-9_.]*)
    |(?P<punct>[()\[\]{}<>,=*:])""",
    re.VERBOSE,
)
BINARY = ("add", "sub", "mul", "sdiv", "srem", "and", "or", "fadd", "fmul")
CASTS = ("fptrunc", "bitcast", "zext", "inttoptr", "ptrtoint")
ICMP_PREDS = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult")
PARAM_ATTRS = ("noalias", "readonly", "writeonly", "nocapture", "nonnull", "immarg")
PARAM_ATTRS_WITH_ARG = ("align", "dereferenceable", "captures")
#: the MMRA of the barrier fences: they order LDS only
LDS_ONLY = ("amdgpu-synchronize-as", "local")
ATOMIC_MD = ("!amdgpu.no.fine.grained.memory", "!amdgpu.no.remote.memory", "!amdgpu.ignore.denormal.mode")


class LlReadError(ValueError):
    def __init__(self, line: int, column: int, message: str) -> None:
        super().__init__(f"line {line}, column {column}: {message}")
        self.line = line
        self.column = column


def slow_tokens(text: str, line: int) -> list[str]:
    """The tokens of a line the fast path could not vouch for; LlReadError at a character no
    token matches."""
    matches = list(TOKEN.finditer(text))
    pos = 0
    for m in matches:
        if m.start() != pos:
            break
        pos = m.end()
    if pos != len(text):
        raise LlReadError(line, pos + 1, f"unexpected character {text[pos]!r}")
    return [m.group() for m in matches if m.lastgroup != "ws"]


#: the same tokens without the kinds, for the fast path (findall gives plain strings)
PLAIN_TOKEN = re.compile(
    r'%[-a-zA-Z$._0-9]+|@(?:"[^"\\]*"|[-a-zA-Z$._][-a-zA-Z$._0-9]*)|![-a-zA-Z$._0-9]*|#[0-9]+'
    r'|0x[0-9A-F]{16}|-?[0-9]+|"[^"\\]*"|[A-Za-z_][A-Za-z0-9_.]*|[()\[\]{}<>,=*:]'
)
KIND_OF_FIRST = {"%": "local", "@": "global", "!": "meta", "#": "group", '"': "str"}
PUNCT = frozenset("()[]{}<>,=*:")


def kind_of(token: str) -> str:
    first = token[0]
    kind = KIND_OF_FIRST.get(first)
    if kind is not None:
        return kind
    if first.isdigit() or first == "-":
        return "num"
    return "punct" if first in PUNCT else "word"


class Tokens:
    """The tokens of one line, and a position in them. The tokens are plain strings (their
    kind follows from the first character); columns are found only when asked for."""

    def __init__(self, text: str, line: int) -> None:
        self.line = line
        self.text = text
        toks = PLAIN_TOKEN.findall(text)
        # every character but the spaces between tokens is in a token (a string with a space
        # in it, or a stray character, takes the slow path: it reads or says where it fails)
        if sum(map(len, toks)) + text.count(" ") != len(text):
            toks = slow_tokens(text, line)
        self.toks: list[str] = toks
        self.n = len(toks)
        self.i = 0
        self._cols: list[int] = []  # the columns of the first tokens, found so far

    def column_of(self, index: int) -> int:
        """The 1-based column of token `index` (past the end: after the line)."""
        if index >= self.n:
            return len(self.text) + 1
        cols = self._cols
        while len(cols) <= index:
            k = len(cols)
            start = cols[-1] - 1 + len(self.toks[k - 1]) if cols else 0
            cols.append(self.text.index(self.toks[k], start) + 1)
        return cols[index]

    def column(self) -> int:
        return self.column_of(self.i)

    def fail(self, message: str) -> LlReadError:
        return LlReadError(self.line, self.column(), message)

    def fail_last(self, message: str) -> LlReadError:
        """An error at the token just taken."""
        self.i -= 1
        return self.fail(message)

    def peek(self) -> str:
        return self.toks[self.i] if self.i < self.n else ""

    def kind(self) -> str:
        return kind_of(self.toks[self.i]) if self.i < self.n else ""

    def take(self) -> str:
        if self.i >= self.n:
            raise self.fail("unexpected end of the line")
        self.i += 1
        return self.toks[self.i - 1]

    def take_kind(self, kind: str, what: str) -> str:
        if self.kind() != kind:
            raise self.fail(f"expected {what}, got {self.peek() or 'the end of the line'!r}")
        return self.take()

    def accept(self, word: str) -> bool:
        if self.peek() == word:
            self.i += 1
            return True
        return False

    def expect(self, word: str) -> None:
        if not self.accept(word):
            raise self.fail(f"expected {word!r}, got {self.peek() or 'the end of the line'!r}")

    def end(self) -> None:
        if self.i != self.n:
            raise self.fail(f"unexpected {self.peek()!r}")

    def integer(self) -> int:
        text = self.take_kind("num", "an integer")
        if text.startswith("0x"):
            raise self.fail_last("expected an integer")
        return int(text)


# ---- types ----


def read_type(t: Tokens) -> LlType:
    """The type at the cursor: a spelling met before is looked up by its tokens (vectors,
    arrays of arrays, pointers: each LlType built once); anything else goes through the token
    reader, which says what is wrong."""
    i, toks = t.i, t.toks
    if i < t.n:
        word = toks[i]
        if word in SCALAR_TYPES:
            t.i += 1
            return scalar_type(word)
        span = TYPE_SPANS.get(word)
        if span is not None and i + span <= t.n:
            key = tuple(toks[i : i + span])
            ty = KNOWN_TYPES.get(key)
            if ty is None:
                ty = read_type_tokens(t)
                if t.i == i + span:
                    KNOWN_TYPES[key] = ty
                return ty
            t.i += span
            return ty
    return read_type_tokens(t)


#: the tokens of a type after its first: <N x T>, [R x [C x T]], ptr addrspace(K)
TYPE_SPANS = {"<": 5, "[": 9, "ptr": 5}
KNOWN_TYPES: dict[tuple[str, ...], LlType] = {}


@functools.lru_cache(maxsize=None)
def scalar_type(word: str) -> LlType:
    kind, bits = SCALAR_TYPES[word]
    return LlType(kind, bits)


def read_type_tokens(t: Tokens) -> LlType:
    word = t.peek()
    if word in SCALAR_TYPES:
        t.take()
        kind, bits = SCALAR_TYPES[word]
        return LlType(kind, bits)
    if word == "ptr":
        t.take()
        space = 0
        if t.accept("addrspace"):
            t.expect("(")
            space = t.integer()
            t.expect(")")
        if space not in (0, 1, 3, 4, 8):
            raise t.fail(f"address space {space} is outside the subset")
        return LlType("ptr", addrspace=space)
    if word in ("<", "["):
        t.take()
        n = t.integer()
        t.expect("x")
        elem = read_type_tokens(t)
        t.expect(">" if word == "<" else "]")
        if n < 1:
            raise t.fail("a vector or array needs at least one element")
        if word == "<" and elem.kind not in ("int", "half", "bfloat", "float"):
            raise t.fail("a vector of this element type is outside the subset")
        return LlType("vec" if word == "<" else "array", n=n, elem=elem)
    raise t.fail(f"expected a type, got {word or 'the end of the line'!r}")


# ---- operands ----


def read_value(t: Tokens, ty: LlType) -> Operand:
    word = t.peek()
    if word[:1] == "%":  # the common case first, without classifying the token
        t.i += 1
        return Operand(ty, word)
    kind = t.kind()
    if kind == "global":  # a quoted name is its name: @"a+b" and the global a+b are one
        return Operand(ty, "@" + t.take()[1:].strip('"'))
    if kind == "num":
        text = t.take()
        if text.startswith("0x") != (ty.kind in ("float", "half", "bfloat")):
            raise t.fail_last(f"a {ty.text()} constant cannot be written {text}")
        return Operand(ty, text)
    if word in ("true", "false"):
        if ty != LlType("int", 1):
            raise t.fail(f"{word} is an i1 constant")
        return Operand(ty, t.take())
    if word in ("poison", "zeroinitializer"):
        return Operand(ty, t.take())
    if word == "<" and ty.kind == "vec":
        t.take()
        elements = []
        while True:
            elem_ty = read_type(t)
            if elem_ty != ty.elem:
                raise t.fail("a constant vector element of another type")
            elements.append(read_value(t, elem_ty).value)
            if not t.accept(","):
                break
        t.expect(">")
        if len(elements) != ty.n:
            raise t.fail(f"{len(elements)} elements for {ty.text()}")
        return Operand(ty, "<...>", tuple(elements))
    raise t.fail(f"expected a value, got {word or 'the end of the line'!r}")


def read_typed(t: Tokens) -> Operand:
    ty = read_type(t)
    return read_value(t, ty)


def read_operands(t: Tokens, n: int) -> list[Operand]:
    """n typed operands, separated by commas."""
    operands = [read_typed(t)]
    for _ in range(n - 1):
        t.expect(",")
        operands.append(read_typed(t))
    return operands


def read_pointer(t: Tokens, what: str) -> Operand:
    """A typed operand that must be a pointer (`what`: how the error says it is used)."""
    ptr = read_typed(t)
    if ptr.type.kind != "ptr":
        raise t.fail(f"{what} a non-pointer")
    return ptr


Item = TypeVar("Item")


def read_list(t: Tokens, read_item: Callable[[Tokens], Item]) -> tuple[Item, ...]:
    """`(item, item, ...)`, possibly empty: each item read by read_item."""
    t.expect("(")
    items = []
    if not t.accept(")"):
        while True:
            items.append(read_item(t))
            if t.accept(")"):
                break
            t.expect(",")
    return tuple(items)


def read_label(t: Tokens) -> str:
    t.expect("label")
    return t.take_kind("local", "a block label")[1:]


def read_align(t: Tokens) -> int:
    t.expect(",")
    t.expect("align")
    align = t.integer()
    if align < 1 or align & (align - 1):
        raise t.fail_last("an alignment is a power of two")
    return align


# ---- instructions, one reader per opcode ----


def read_binary(t: Tokens, opcode: str, result: str, line: int, col: int) -> Instr:
    flags = ("nsw",) if t.accept("nsw") else ()
    a = read_typed(t)
    t.expect(",")
    b = read_value(t, a.type)
    return Instr(opcode, result, a.type, (a, b), line, col, flags=flags)


def read_icmp(t: Tokens, opcode: str, result: str, line: int, col: int) -> Instr:
    pred = t.take()
    if pred not in ICMP_PREDS:
        raise t.fail_last(f"icmp predicate {pred!r} is outside the subset")
    a = read_typed(t)
    t.expect(",")
    b = read_value(t, a.type)
    return Instr(opcode, result, LlType("int", 1), (a, b), line, col, pred=pred)


def read_select(t: Tokens, opcode: str, result: str, line: int, col: int) -> Instr:
    c, a, b = read_operands(t, 3)
    if a.type != b.type:
        raise t.fail("select operands of two types")
    return Instr(opcode, result, a.type, (c, a, b), line, col)


def read_cast(t: Tokens, opcode: str, result: str, line: int, col: int) -> Instr:
    a = read_typed(t)
    t.expect("to")
    to = read_type(t)
    return Instr(opcode, result, to, (a,), line, col)


def read_extract(t: Tokens, opcode: str, result: str, line: int, col: int) -> Instr:
    v, index = read_operands(t, 2)
    if v.type.kind != "vec" or v.type.elem is None:
        raise t.fail("extractelement of a non-vector")
    return Instr(opcode, result, v.type.elem, (v, index), line, col)


def read_insert(t: Tokens, opcode: str, result: str, line: int, col: int) -> Instr:
    v, x, index = read_operands(t, 3)
    if v.type.kind != "vec" or x.type != v.type.elem:
        raise t.fail("insertelement of a mismatched element")
    return Instr(opcode, result, v.type, (v, x, index), line, col)


def read_shuffle(t: Tokens, opcode: str, result: str, line: int, col: int) -> Instr:
    a, b, mask = read_operands(t, 3)
    if a.type != b.type or a.type.kind != "vec" or mask.type.kind != "vec" or mask.type.elem != LlType("int", 32):
        raise t.fail("shufflevector operands outside the subset")
    if mask.value != "<...>":
        raise t.fail("a shufflevector mask is a constant vector")
    return Instr(opcode, result, LlType("vec", n=mask.type.n, elem=a.type.elem), (a, b, mask), line, col)


def read_gep(t: Tokens, opcode: str, result: str, line: int, col: int) -> Instr:
    flags = ("inbounds",) if t.accept("inbounds") else ()
    source = read_type(t)
    t.expect(",")
    base = read_pointer(t, "getelementptr of")
    indices = [base]
    while t.accept(","):
        index = read_typed(t)
        if index.type.kind != "int" or index.type.bits not in (32, 64):
            raise t.fail("a getelementptr index is i32 or i64")
        indices.append(index)
    return Instr(opcode, result, base.type, tuple(indices), line, col, flags=flags, source=source)


def read_load(t: Tokens, opcode: str, result: str, line: int, col: int) -> Instr:
    flags = ("volatile",) if t.accept("volatile") else ()
    ty = read_type(t)
    t.expect(",")
    ptr = read_pointer(t, "load from")
    return Instr(opcode, result, ty, (ptr,), line, col, flags=flags, align=read_align(t))


def read_store(t: Tokens, opcode: str, result: str, line: int, col: int) -> Instr:
    flags = ("volatile",) if t.accept("volatile") else ()
    v = read_typed(t)
    t.expect(",")
    ptr = read_pointer(t, "store to")
    return Instr(opcode, result, v.type, (v, ptr), line, col, flags=flags, align=read_align(t))


def read_atomicrmw(t: Tokens, opcode: str, result: str, line: int, col: int) -> Instr:
    t.expect("fadd")
    ptr, v = read_operands(t, 2)
    if ptr.type.kind != "ptr" or ptr.type.addrspace != 1:
        raise t.fail("atomicrmw on a pointer outside addrspace(1)")
    ordering = t.take_kind("word", "an atomic ordering")
    if ordering != "monotonic":
        raise t.fail_last(f"atomic ordering {ordering!r} is outside the subset")
    marks = []
    while t.accept(","):
        mark = t.take_kind("meta", "a metadata name")
        if mark not in ATOMIC_MD:
            raise t.fail_last(f"metadata {mark} is outside the subset")
        t.take_kind("meta", "a metadata node")
        marks.append(mark)
    return Instr(opcode, result, v.type, (ptr, v), line, col, flags=(ordering, *marks))


def read_call(t: Tokens, opcode: str, result: str, line: int, col: int) -> Instr:
    ret = read_type(t)
    callee = t.take_kind("global", "a callee")[1:]
    args = read_list(t, read_typed)
    if (ret.kind == "void") != (result == ""):
        raise t.fail("a call's result and its type disagree")
    return Instr(opcode, result, ret, args, line, col, callee=callee)


def read_phi(t: Tokens, opcode: str, result: str, line: int, col: int) -> Instr:
    ty = read_type(t)
    incoming = []
    while True:
        t.expect("[")
        value = read_value(t, ty)
        t.expect(",")
        label = t.take_kind("local", "a block label")[1:]
        t.expect("]")
        incoming.append((value, label))
        if not t.accept(","):
            break
    return Instr(opcode, result, ty, (), line, col, incoming=tuple(incoming))


def read_br(t: Tokens, opcode: str, result: str, line: int, col: int) -> Instr:
    if t.peek() == "label":
        return Instr(opcode, result, None, (), line, col, targets=(read_label(t),))
    c = read_typed(t)
    if c.type != LlType("int", 1):
        raise t.fail("a conditional br needs an i1")
    t.expect(",")
    then = read_label(t)
    t.expect(",")
    other = read_label(t)
    return Instr(opcode, result, None, (c,), line, col, targets=(then, other))


def read_fence(t: Tokens, opcode: str, result: str, line: int, col: int) -> Instr:
    """`fence syncscope("workgroup") release|acquire, !mmra !N` (the fences around a barrier)."""
    t.expect("syncscope")
    t.expect("(")
    scope = t.take_kind("str", "a sync scope")[1:-1]
    if scope != "workgroup":
        raise t.fail_last(f"sync scope '{scope}' is outside the subset")
    t.expect(")")
    ordering = t.take_kind("word", "an ordering")
    if ordering not in ("release", "acquire"):
        raise t.fail_last(f"fence ordering '{ordering}' is outside the subset")
    t.expect(",")
    t.expect("!mmra")
    mmra = t.take_kind("meta", "a metadata node")
    return Instr(opcode, result, None, (), line, col, flags=(ordering, scope, mmra))


def read_ret(t: Tokens, opcode: str, result: str, line: int, col: int) -> Instr:
    t.expect("void")
    return Instr(opcode, result, None, (), line, col)


READERS = {
    **{op: read_binary for op in BINARY},
    **{op: read_cast for op in CASTS},
    "icmp": read_icmp,
    "select": read_select,
    "extractelement": read_extract,
    "insertelement": read_insert,
    "shufflevector": read_shuffle,
    "getelementptr": read_gep,
    "load": read_load,
    "store": read_store,
    "atomicrmw": read_atomicrmw,
    "call": read_call,
    "phi": read_phi,
    "br": read_br,
    "ret": read_ret,
    "fence": read_fence,
}
NO_RESULT = ("store", "br", "ret", "fence")


def read_instr(t: Tokens) -> Instr:
    result = ""
    if t.kind() == "local":
        result = t.take()
        t.expect("=")
    col = t.column()
    opcode = t.take_kind("word", "an instruction")
    reader = READERS.get(opcode)
    if reader is None:
        raise t.fail_last(f"instruction {opcode!r} is outside the subset")
    if (opcode in NO_RESULT) != (result == "") and opcode != "call":
        raise t.fail_last(f"{opcode} {'has no result' if result else 'needs a result'}")
    instr = reader(t, opcode, result, t.line, col)
    t.end()
    return instr


# ---- module-level lines ----


def read_param(t: Tokens) -> Param:
    ty = read_type(t)
    attrs = []
    while t.kind() == "word" and (t.peek() in PARAM_ATTRS or t.peek() in PARAM_ATTRS_WITH_ARG):
        word = t.take()
        if word == "align":
            word = f"align {t.integer()}"
        elif word in PARAM_ATTRS_WITH_ARG:
            t.expect("(")
            arg = t.take()
            t.expect(")")
            word = f"{word}({arg})"
        attrs.append(word)
    name = t.take_kind("local", "a parameter name")
    return Param(ty, name, tuple(attrs))


def read_define(t: Tokens) -> tuple[str, tuple[Param, ...]]:
    t.expect("define")
    t.expect("amdgpu_kernel")
    t.expect("void")
    name = t.take_kind("global", "the kernel name")[1:].strip('"')
    params = read_list(t, read_param)
    t.expect("#0")
    t.expect("{")
    t.end()
    return name, params


def read_declare(t: Tokens) -> None:
    """A `declare` line: an llvm intrinsic whose types are in the subset. Nothing of it is kept:
    the executor knows each intrinsic by the callee's name."""
    t.expect("declare")
    read_type(t)
    name = t.take_kind("global", "a function name")[1:]
    if not name.startswith("llvm."):
        raise t.fail(f"declaration of {name}: only llvm intrinsics are declared")
    read_list(t, read_declared_param)
    t.end()


def read_declared_param(t: Tokens) -> LlType:
    ty = read_type(t)
    while t.accept("immarg"):
        pass
    return ty


def read_global(t: Tokens) -> Global:
    name = t.take_kind("global", "a global")[1:].strip('"')
    t.expect("=")
    for word in ("internal", "unnamed_addr", "addrspace"):
        t.expect(word)
    t.expect("(")
    space = t.integer()
    t.expect(")")
    t.expect("global")
    ty = read_type(t)
    if space != 3 or ty.kind != "array" or ty.elem != LlType("int", 8):
        raise t.fail("the only global is the LDS pool, an addrspace(3) [N x i8]")
    t.expect("poison")
    align = read_align(t)
    t.end()
    return Global(name, ty, space, align)


def read_attributes(t: Tokens) -> dict[str, str]:
    t.expect("attributes")
    t.expect("#0")
    t.expect("=")
    t.expect("{")
    attrs: dict[str, str] = {}
    while not t.accept("}"):
        if t.kind() == "str":
            key = t.take()[1:-1]
            t.expect("=")
            attrs[key] = t.take_kind("str", "a string")[1:-1]
        else:
            attrs[t.take_kind("word", "an attribute")] = ""
    t.end()
    return attrs


def read_metadata(t: Tokens) -> tuple[str, ...]:
    """` = !{}` or ` = !{!"a", !"b"}`: the node's strings."""
    t.expect("=")
    t.expect("!")
    t.expect("{")
    strings = []
    while not t.accept("}"):
        if strings:
            t.expect(",")
        t.expect("!")
        strings.append(t.take_kind("str", "a metadata string")[1:-1])
    t.end()
    return tuple(strings)


def read_target(t: Tokens, what: str) -> str:
    t.expect("target")
    t.expect(what)
    t.expect("=")
    value = t.take_kind("str", "a string")[1:-1]
    t.end()
    return value


#: instruction lines read so far, by their text (the flavors and sizes of a config share most
#: of their lines): a line read once is not tokenized again. Bounded: cleared when full.
READ_LINES: dict[str, Instr] = {}
MAX_READ_LINES = 200_000


def at_line(instr: Instr, line: int) -> Instr:
    """The instruction read again at another line: a copy with that line (every other field
    shared; dataclasses.replace costs several times more, and this runs per line)."""
    new = object.__new__(Instr)
    state = new.__dict__
    state.update(instr.__dict__)
    state["line"] = line
    return new


def read_ll(text: str) -> Module:
    """The module of an emitted `ll` text; LlReadError for anything outside the subset."""
    with gc_paused():  # every object read lives on: a collection would find nothing
        return read_module(text)


def read_module(text: str) -> Module:
    lines = text.split("\n")
    datalayout = triple = ""
    globals_: list[Global] = []
    function: Optional[tuple[str, tuple[Param, ...]]] = None
    blocks: list[Block] = []
    attrs: Optional[dict[str, str]] = None
    label: Optional[tuple[str, int]] = None
    instrs: list[Instr] = []
    in_body = False
    metadata: dict[str, tuple[str, ...]] = {}
    for number, raw in enumerate(lines, start=1):
        if in_body and label is not None:
            known = READ_LINES.get(raw)
            if known is not None:  # read before, in this module or another: the same instruction
                instrs.append(known if known.line == number else at_line(known, number))
                continue
        t = Tokens(raw, number)
        if not t.n:
            continue
        head = t.peek()
        if in_body:
            if head == "}" and t.n == 1:
                if label is not None:
                    blocks.append(Block(label[0], tuple(instrs), label[1]))
                in_body = False
                continue
            if t.kind() == "word" and t.n == 2 and t.toks[1] == ":":
                if label is not None:
                    blocks.append(Block(label[0], tuple(instrs), label[1]))
                label, instrs = (head, number), []
                continue
            if label is None:
                raise t.fail("an instruction before the first block label")
            instr = read_instr(t)
            if len(READ_LINES) >= MAX_READ_LINES:
                READ_LINES.clear()
            READ_LINES[raw] = instr
            instrs.append(instr)
            continue
        if head == "target" and t.n > 1 and t.toks[1] == "datalayout":
            datalayout = read_target(t, "datalayout")
        elif head == "target":
            triple = read_target(t, "triple")
        elif t.kind() == "global":
            globals_.append(read_global(t))
        elif head == "declare":
            read_declare(t)
        elif head == "define":
            if function is not None:
                raise t.fail("a second function")
            function = read_define(t)
            in_body = True
        elif head == "attributes":
            attrs = read_attributes(t)
        elif t.kind() == "meta" and head in ("!1", "!2"):
            key = t.take()
            metadata[key] = read_metadata(t)
        else:
            raise t.fail(f"a line outside the subset starting with {head!r}")
    if in_body:
        raise LlReadError(len(lines), 1, "the function body is not closed")
    if function is None:
        raise LlReadError(len(lines), 1, "no function defined")
    if triple != "amdgcn-amd-amdhsa":
        raise LlReadError(1, 1, f"target triple {triple!r}, not amdgcn-amd-amdhsa")
    if attrs is None:
        raise LlReadError(len(lines), 1, "no attributes #0 line")
    for block in blocks:
        for ins in block.instrs:
            if ins.opcode == "fence" and metadata.get(ins.flags[2]) != LDS_ONLY:
                raise LlReadError(ins.line, ins.column, f"a fence whose {ins.flags[2]} is not {LDS_ONLY}")
    name, params = function
    return Module(datalayout, triple, tuple(globals_), Function(name, params, tuple(blocks), attrs))
