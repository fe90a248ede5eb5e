"""The `ll` reader (rocke_py/exec/ll_reader.py): every emitting config's `ll` of both engines in
every flavor reads; llvmlite, the second reader, parses and verifies the llvm22 and llvm23
modules and sees the same blocks and opcodes; the llvm20 flavor fails LLVM 22's verifier only on
LLVM 20's make.buffer.rsrc signature; text outside the subset fails naming line and column."""

from __future__ import annotations

import functools
import re

import llvmlite.binding as llvm
import pytest
from layout import REPO

from rocke_py import cbridge
from rocke_py import engine as py_engine
from rocke_py.engine.result import Emitted
from rocke_py.exec.ll_reader import LlReadError, read_ll
from rocke_py.facts import FLAVORS
from rocke_py.parity.inputs.configs import discover

EMITTING = [c for c in discover(REPO).configs if c.expect.emits]
ENGINES = {"py": py_engine.emit, "c": cbridge.emit}


def emitted(engine: str, config, flavor: str) -> str:
    out = ENGINES[engine](config.data, "ll", flavor)
    assert isinstance(out, Emitted), (config.id, out)
    return out.text


@functools.lru_cache(maxsize=None)
def read_opcodes(text: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(label, opcodes) per block, as our reader sees the module: read_ll is a pure function
    of the text, so a text read once (the engines print the same text) is not read again."""
    fn = read_ll(text).function
    return tuple((b.label, tuple(i.opcode for i in b.instrs)) for b in fn.blocks)


def opcodes(text: str) -> list[tuple[str, list[str]]]:
    """(label, opcodes) per block, as our reader sees the module."""
    return [(label, list(ops)) for label, ops in read_opcodes(text)]


def llvmlite_opcodes(module) -> list[tuple[str, list[str]]]:
    (fn,) = [f for f in module.functions if not f.is_declaration]
    return [(b.name, [i.opcode for i in b.instructions]) for b in fn.blocks]


@pytest.mark.parametrize("flavor", FLAVORS)
def test_every_emitted_module_reads(flavor: str) -> None:
    """Both engines' module of every config (a text both print is read once)."""
    assert len(EMITTING) >= 40
    for engine in sorted(ENGINES):
        for config in EMITTING:
            blocks = read_opcodes(emitted(engine, config, flavor))
            assert blocks[0][0] == "entry", (engine, config.id)
            assert blocks[-1][1][-1] == "ret", (engine, config.id)


@pytest.mark.parametrize("flavor", ("llvm22", "llvm23"))
@pytest.mark.parametrize("config", EMITTING, ids=lambda c: c.id)
def test_llvmlite_reads_the_same_module(config, flavor: str) -> None:
    text = emitted("py", config, flavor)
    module = llvm.parse_assembly(text)
    module.verify()
    assert llvmlite_opcodes(module) == opcodes(text)


def verifier_errors(text: str) -> list[str]:
    """LLVM 22's verifier messages for the module (parsed by llvmlite), minus the lines about
    LLVM 20's make.buffer.rsrc signature (which takes an i32 num_records; LLVM 22 an i64)."""
    module = llvm.parse_assembly(text)
    try:
        module.verify()
    except RuntimeError as e:
        lines = [line for line in str(e).splitlines() if line.strip()]
        return [
            line
            for line in lines
            if line != "Intrinsic has incorrect argument type!" and "@llvm.amdgcn.make.buffer.rsrc.p1" not in line
        ] or ([] if lines else ["(an empty message)"])
    return ["(the module verified: LLVM 20's signature is expected to fail)"]


@pytest.mark.parametrize("config", EMITTING[::6], ids=lambda c: c.id)
def test_llvm20_fails_llvm22s_verifier_only_on_its_rsrc_signature(config) -> None:
    """Everything but LLVM 20's rsrc signature is checked: it parses, reads alike, and the
    verifier finds nothing else."""
    text = emitted("py", config, "llvm20")
    assert llvmlite_opcodes(llvm.parse_assembly(text)) == opcodes(text)
    assert verifier_errors(text) == []


def test_the_llvm20_check_sees_another_verifier_error() -> None:
    """The check above can fail: an unrelated verifier error is not filtered out."""
    text = emitted("py", EMITTING[0], "llvm20")
    broken, n = re.subn(r"(%div4) = sdiv i32 %tid1,", r"\1 = sdiv i32 \1,", text, count=1)
    assert n == 1
    assert any("PHI" in line or "reference their own" in line for line in verifier_errors(broken))


BAD = [  # (id, line, message, the text the column points at)
    ("udiv", "  %q = udiv i32 %tid1, 2", "instruction 'udiv' is outside the subset", "udiv"),
    ("fence", '  fence syncscope("agent") release, !mmra !2', "sync scope 'agent' is outside the subset", '"agent"'),
    ("type", "  %q = add i24 %tid1, 2", "expected a type, got 'i24'", "i24"),
    ("ordering", "  %q = icmp ugt i32 %tid1, 2", "icmp predicate 'ugt' is outside the subset", "ugt"),
    ("char", "  %q = add i32 %tid1, ~2", "unexpected character '~'", "~"),
]


@pytest.mark.parametrize("line,message,token", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_text_outside_the_subset_names_line_and_column(line: str, message: str, token: str) -> None:
    text = emitted("py", EMITTING[0], "llvm22")
    lines = text.split("\n")
    at = lines.index("entry:") + 2  # after the first instruction
    lines.insert(at, line)
    with pytest.raises(LlReadError) as info:
        read_ll("\n".join(lines))
    assert info.value.line == at + 1
    assert message in str(info.value)
    assert info.value.column == line.index(token) + 1


def test_an_unclosed_body_is_refused() -> None:
    text = emitted("py", EMITTING[0], "llvm22")
    with pytest.raises(LlReadError, match="not closed"):
        read_ll(text[: text.index("\n}\n") + 1])
    with pytest.raises(LlReadError, match="'attributes' is outside the subset"):
        read_ll(text.replace("\n}\n", "\n", 1))
