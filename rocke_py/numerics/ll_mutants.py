"""Seeded faults of the lowering: how strong the `ll` level of numerics is, measured
(docs/ll-executor.md §6).

Each class is a function of an emitted `ll` text (LLVM IR, one instruction per line) that
yields its mutants in a fixed order, as mutants.py does for the kernel IR: `Mutant(id,
description, text)`, the id `<class>:<kind>#<ordinal among such sites>:<variant>` naming the
site without line numbers or value names, so the mutation re-applies to the `ll` of another
size or flavor of the same config. A mutant is judged by the IR and `ll` runs of the small
and edge sizes in lockstep (mutants.judge with level "both"): killed by a wrong or unwritten
element, a hazard or a lockstep departure."""

from __future__ import annotations

import re
from typing import Callable, Iterator, Optional

from .mutants import Mutant

MMA_CALL = re.compile(
    r"^(?P<head>  %\S+ = call <\d+ x float> @llvm\.amdgcn\.(?P<name>(?:mfma|wmma)\.\S+?))\((?P<args>.*)\)$"
)
LDS_GEP = re.compile(
    r"^(?P<head>  %\S+ = getelementptr inbounds \[.*\], ptr addrspace\(3\) [^,]+, i32 0, )(?P<tail>.*)$"
)
POOL_BASE = re.compile(r"^(?P<head>  %\S+ = getelementptr inbounds i8, ptr addrspace\(3\) @\S+, i32 )(?P<off>\d+)$")
BARRIER = "  call void @llvm.amdgcn.s.barrier()"
WAITCNT = re.compile(
    r"^  call void @llvm\.amdgcn\.s\.(?P<kind>waitcnt|wait\.loadcnt)\(i(?P<bits>32|16) (?P<imm>\d+)\)$"
)
BUFFER_ACCESS = re.compile(
    r"^(?P<head>  (?:%\S+ = )?call \S+ @llvm\.amdgcn\.raw\.ptr\.buffer\.(?P<kind>load|store)\.(?P<sfx>\w+)\()"
    r"(?P<args>.*)\)$"
)
WIDTH = {"i16": 2, "i32": 4, "v2i32": 8, "v4i32": 16}


def lines_of(text: str) -> list[str]:
    return text.split("\n")


def replaced(lines: list[str], at: int, new: list[str]) -> str:
    return "\n".join(lines[:at] + new + lines[at + 1 :])


def split_args(args: str) -> list[str]:
    """A call's arguments, split at the top-level commas."""
    out, depth, cur = [], 0, ""
    for ch in args:
        if ch in "<([":
            depth += 1
        elif ch in ">)]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def mma_operand_swap(text: str) -> Iterator[Mutant]:
    """A and B of an MMA call exchanged (their types are equal in every form)."""
    lines = lines_of(text)
    n = 0
    for i, line in enumerate(lines):
        m = MMA_CALL.match(line)
        if m is None:
            continue
        args = split_args(m["args"])
        a, b = (0, 1) if m["name"].startswith("mfma") or len(args) == 3 else (1, 3)
        if args[a] != args[b]:
            args[a], args[b] = args[b], args[a]
            new = f"{m['head']}({', '.join(args)})"
            yield Mutant(
                f"ll-mma-operand-swap:{m['name']}#{n}",
                f"{m['name']} #{n}: A and B exchanged",
                replaced(lines, i, [new]),
            )
        n += 1


def gep_offset(text: str) -> Iterator[Mutant]:
    """An LDS address one element off: the last index of a tile GEP plus one."""
    lines = lines_of(text)
    n = 0
    for i, line in enumerate(lines):
        m = LDS_GEP.match(line)
        if m is None:
            continue
        indices = split_args(m["tail"])
        ty, value = indices[-1].split(" ", 1)
        name = f"%llmut.gep.{n}"
        extra = f"  {name} = add {ty} {value}, 1"
        new = m["head"] + ", ".join(indices[:-1] + [f"{ty} {name}"])
        yield Mutant(
            f"ll-gep-offset:getelementptr#{n}:+1", f"LDS GEP #{n}: last index + 1", replaced(lines, i, [extra, new])
        )
        n += 1


def dropped_barrier(text: str) -> Iterator[Mutant]:
    lines = lines_of(text)
    n = 0
    for i, line in enumerate(lines):
        if line == BARRIER:
            yield Mutant(f"ll-dropped-barrier:s.barrier#{n}", f"s.barrier #{n} removed", replaced(lines, i, []))
            n += 1


def vmcnt_plus_one(imm: int) -> Optional[int]:
    """The immediate with one more outstanding load allowed, for the gfx9 and gfx11 encodings
    (recognised by their fixed expcnt/lgkmcnt fields); None when vmcnt is already 63."""
    if imm & 0x3FF0 == 0x0F70:  # gfx9: vmcnt in bits 3:0 and 15:14, expcnt 7, lgkmcnt 15
        vm = (imm & 15) | ((imm >> 14) & 3) << 4
        if vm >= 63:
            return None
        vm += 1
        return (imm & ~0xC00F) | (vm & 15) | (vm >> 4) << 14
    if imm & 0x3FF == 0x3F7:  # gfx11: vmcnt in bits 15:10
        vm = (imm >> 10) & 63
        return None if vm >= 63 else (imm & 0x3FF) | (vm + 1) << 10
    return None


def wait_counter(text: str) -> Iterator[Mutant]:
    """A wait that lets one more vector-memory load stay outstanding."""
    lines = lines_of(text)
    n = 0
    for i, line in enumerate(lines):
        m = WAITCNT.match(line)
        if m is None:
            continue
        imm = int(m["imm"])
        new_imm = imm + 1 if m["kind"] == "wait.loadcnt" else vmcnt_plus_one(imm)
        if new_imm is not None and new_imm != imm:
            new = f"  call void @llvm.amdgcn.s.{m['kind']}(i{m['bits']} {new_imm})"
            desc = f"s.{m['kind']} #{n}: {imm} -> {new_imm} (one more load outstanding)"
            yield Mutant(f"ll-wait-counter:s.{m['kind']}#{n}:+1", desc, replaced(lines, i, [new]))
        n += 1


def buffer_offset(text: str) -> Iterator[Mutant]:
    """A buffer load or store one element off: its voffset plus the access's element size."""
    lines = lines_of(text)
    n = 0
    for i, line in enumerate(lines):
        m = BUFFER_ACCESS.match(line)
        if m is None or m["sfx"] not in WIDTH:
            continue
        args = split_args(m["args"])
        at = 1 if m["kind"] == "load" else 2
        ty, value = args[at].split(" ", 1)
        step = 2 if m["sfx"] == "i16" else 4
        name = f"%llmut.off.{n}"
        args[at] = f"{ty} {name}"
        new = m["head"] + ", ".join(args) + ")"
        desc = f"buffer {m['kind']} #{n} ({m['sfx']}): voffset + {step}"
        yield Mutant(
            f"ll-buffer-offset:{m['kind']}#{n}:+{step}",
            desc,
            replaced(lines, i, [f"  {name} = add i32 {value}, {step}", new]),
        )
        n += 1


def pool_alias(text: str) -> Iterator[Mutant]:
    """An allocation's pool offset moved: onto offset 0 (aliasing the first allocation) or 16
    bytes lower (overlapping the one below)."""
    lines = lines_of(text)
    sites: dict[int, int] = {}  # pool offset -> ordinal, in order of first use
    for i, line in enumerate(lines):
        m = POOL_BASE.match(line)
        if m is None:
            continue
        off = int(m["off"])
        n = sites.setdefault(off, len(sites))
        for variant, new_off in (("to0", 0), ("-16", off - 16)):
            if new_off < 0:
                continue
            # every base of that allocation moves alike (one per block that uses it)
            new_lines = [
                f"{p['head']}{new_off}" if (p := POOL_BASE.match(x)) is not None and int(p["off"]) == off else x
                for x in lines
            ]
            if i == min(j for j, x in enumerate(lines) if (p := POOL_BASE.match(x)) and int(p["off"]) == off):
                desc = f"pool offset {off} -> {new_off}"
                yield Mutant(f"ll-pool-alias:offset#{n}:{variant}", desc, "\n".join(new_lines))


CLASSES: dict[str, Callable[[str], Iterator[Mutant]]] = {
    "ll-mma-operand-swap": mma_operand_swap,
    "ll-gep-offset": gep_offset,
    "ll-dropped-barrier": dropped_barrier,
    "ll-wait-counter": wait_counter,
    "ll-buffer-offset": buffer_offset,
    "ll-pool-alias": pool_alias,
}
