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
    r"^(?P<head>  (?:%\S+ = )?call (?:<\d+ x \w+>|\S+) "
    r"@llvm\.amdgcn\.raw\.ptr\.buffer\.(?P<kind>load|store)\.(?P<sfx>\w+)\()(?P<args>.*)\)$"
)
WIDTH = {"i16": 2, "i32": 4, "v2i32": 8, "v4i32": 16}


def lines_of(text: str) -> list[str]:
    return text.split("\n")


def replaced(lines: list[str], at: int, new: list[str]) -> str:
    return "\n".join(lines[:at] + new + lines[at + 1 :])


def matches(
    lines: list[str], pattern: re.Pattern[str], keep: Callable[[re.Match[str]], bool] = bool
) -> Iterator[tuple[int, int, re.Match[str]]]:
    """(n, line index, match) for each line the pattern matches and `keep` accepts: n counts
    those lines, and numbers the mutants of a class."""
    n = 0
    for i, line in enumerate(lines):
        m = pattern.match(line)
        if m is not None and keep(m):
            yield n, i, m
            n += 1


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
    for n, i, m in matches(lines, MMA_CALL):
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


def gep_offset(text: str) -> Iterator[Mutant]:
    """An LDS address one element off: the last index of a tile GEP plus one."""
    lines = lines_of(text)
    for n, i, m in matches(lines, LDS_GEP):
        indices = split_args(m["tail"])
        ty, value = indices[-1].split(" ", 1)
        name = f"%llmut.gep.{n}"
        extra = f"  {name} = add {ty} {value}, 1"
        new = m["head"] + ", ".join(indices[:-1] + [f"{ty} {name}"])
        yield Mutant(
            f"ll-gep-offset:getelementptr#{n}:+1", f"LDS GEP #{n}: last index + 1", replaced(lines, i, [extra, new])
        )


def dropped_barrier(text: str) -> Iterator[Mutant]:
    lines = lines_of(text)
    n = 0
    for i, line in enumerate(lines):
        if line == BARRIER:
            yield Mutant(f"ll-dropped-barrier:s.barrier#{n}", f"s.barrier #{n} removed", replaced(lines, i, []))
            n += 1


def gfx9_vmcnt(imm: int) -> int:
    """The vmcnt of a gfx9 `s_waitcnt` immediate (bits 3:0 and 15:14). Only gfx942 and gfx950
    have direct-to-LDS loads, so the waits this class weakens are gfx9's."""
    return (imm & 15) | ((imm >> 14) & 3) << 4


def vmcnt_plus_one(imm: int) -> Optional[int]:
    """The immediate with one more outstanding load allowed; None when vmcnt is already 63."""
    vm = gfx9_vmcnt(imm)
    if vm >= 63:
        return None
    vm += 1
    return (imm & ~0xC00F) | (vm & 15) | (vm >> 4) << 14


def is_full_wait(line: str) -> bool:
    """A wait for every outstanding load: s.waitcnt with vmcnt 0, or s.wait.loadcnt(0)."""
    m = WAITCNT.match(line)
    if m is None:
        return False
    imm = int(m["imm"])
    return imm == 0 if m["kind"] == "wait.loadcnt" else gfx9_vmcnt(imm) == 0


def wait_counter(text: str) -> Iterator[Mutant]:
    """A wait that lets one more direct-to-LDS load stay outstanding. Only kernels with such
    loads (elsewhere a wait orders nothing the explicit waits are for: LLVM guards a load's
    result register itself), and only waits without a full wait right before or after them
    (that one drains alike)."""
    lines = lines_of(text)
    if "@llvm.amdgcn.raw.ptr.buffer.load.lds(" not in text:
        return
    for n, i, m in matches(lines, WAITCNT):
        imm = int(m["imm"])
        new_imm = imm + 1 if m["kind"] == "wait.loadcnt" else vmcnt_plus_one(imm)
        beside_full = is_full_wait(lines[i - 1]) or is_full_wait(lines[i + 1])  # the other drains alike
        if new_imm is not None and new_imm != imm and not beside_full:
            new = f"  call void @llvm.amdgcn.s.{m['kind']}(i{m['bits']} {new_imm})"
            desc = f"s.{m['kind']} #{n}: {imm} -> {new_imm} (one more load outstanding)"
            yield Mutant(f"ll-wait-counter:s.{m['kind']}#{n}:+1", desc, replaced(lines, i, [new]))


def buffer_offset(text: str) -> Iterator[Mutant]:
    """A buffer load or store one element off: its voffset plus the access's element size."""
    lines = lines_of(text)
    for n, i, m in matches(lines, BUFFER_ACCESS, lambda m: m["sfx"] in WIDTH):
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


POOL_GLOBAL = re.compile(r"^@(\S+) = internal unnamed_addr addrspace\(3\) global")
TILE_GEP = re.compile(
    r"getelementptr inbounds \[(\d+) x \[(\d+) x (half|bfloat|float|i16|i32)\]\], ptr addrspace\(3\) (\S+),"
)
ADDRESS_TAKEN = re.compile(r"^  (?P<name>%\S+) = ptrtoint ptr addrspace\(3\) (?P<base>\S+) to i32$")


def allocations(lines: list[str]) -> dict[int, list[int]]:
    """Pool offset -> [first line, last line] of the allocation's accesses: the tile GEPs on
    its base and the uses of its address taken by ptrtoint (an async copy's destination); the
    pool global itself is offset 0. An allocation whose address is taken but never used has
    no span."""
    pool = next((m[1] for x in lines if (m := POOL_GLOBAL.match(x)) is not None), None)
    if pool is None:
        return {}
    bases = {f"@{pool}": 0}
    for line in lines:
        m = POOL_BASE.match(line)
        if m is not None:
            bases[line.split(" = ", 1)[0].strip()] = int(m["off"])
    spans: dict[int, list[int]] = {}

    def touch(off: int, i: int) -> None:
        span = spans.setdefault(off, [i, i])
        span[1] = max(span[1], i)

    for i, line in enumerate(lines):
        tile = TILE_GEP.search(line)
        if tile is not None and tile[4] in bases:
            touch(bases[tile[4]], i)
        taken = ADDRESS_TAKEN.match(line)
        if taken is not None and taken["base"] in bases:
            for j in address_uses(lines, i, taken["name"]):
                touch(bases[taken["base"]], j)
    return spans


def address_uses(lines: list[str], at: int, name: str) -> Iterator[int]:
    """The lines after `at` that access LDS through an address computed from `name` (an async
    copy's destination), following the values derived from it."""
    derived = {name}
    for j in range(at + 1, len(lines)):
        words = set(re.findall(r"%[\w.]+", lines[j]))
        if not words & derived:
            continue
        result = lines[j].split(" = ", 1)[0].strip() if " = " in lines[j] else ""
        if result:
            derived.add(result)
        if "@llvm.amdgcn.raw.ptr.buffer.load.lds(" in lines[j]:
            yield j


def pool_alias(text: str) -> Iterator[Mutant]:
    """An allocation moved onto another allocation that is live at the same time (their uses
    interleave in the text): the pool sharing the lowering must never do (docs/lowering.md §7)."""
    lines = lines_of(text)
    spans = allocations(lines)
    for n, off in enumerate(sorted(o for o in spans if o > 0)):
        first, last = spans[off]
        for other in sorted(spans):
            o_first, o_last = spans[other]
            if other == off or o_last < first or last < o_first:
                continue
            new_lines = [
                f"{p['head']}{other}" if (p := POOL_BASE.match(x)) is not None and int(p["off"]) == off else x
                for x in lines
            ]
            desc = f"pool offset {off} -> {other} (onto the allocation there, live at the same time)"
            yield Mutant(f"ll-pool-alias:offset#{n}:onto{other}", desc, "\n".join(new_lines))


# Equivalent mutants of the lowering's classes, by why no input tells the mutant from the
# original: "<config id> <mutant id>" (the mutant id starts with its class). Read by
# mutants.equivalence through EQUIVALENT.
EQUIVALENT_BY_REASON: dict[str, tuple[str, ...]] = {
    (
        "the record search's probe offset is the out-of-range 2147483647 at every size (a stride-1 "
        "problem has one record, so every probe, cand >= 1, is past the table); + 4 wraps to "
        "-2147483645, outside the buffer as well, so the load still reads 0"
    ): (
        "dgrad/01-compv4 ll-buffer-offset:load#1:+4",
        "dgrad/03-pointwise-1x1 ll-buffer-offset:load#0:+4",
        "dgrad/06-split-k2-fp32 ll-buffer-offset:load#1:+4",
    ),
    (
        "the MMA covers k in the upper half [64, 128) of the 128-wide K tile, past K = cpg = 64 at "
        "every size: both operands are the zeros the masked loads stored, and A·B = B·A = 0"
    ): (
        "fwd/03-pointwise-1x1 ll-mma-operand-swap:mfma.f32.32x32x16.f16#4",
        "fwd/03-pointwise-1x1 ll-mma-operand-swap:mfma.f32.32x32x16.f16#5",
    ),
    (
        "the barrier after the MMA phase guards the next K step's LDS stores; gemm_k = 64 = tile_k "
        "at every N, Hi, Wi, so the loop runs once, and the default epilogue and the zero phase "
        "after it touch no LDS"
    ): ("dgrad/14-pointwise-stride2-zeros ll-dropped-barrier:s.barrier#1",),
    ("the record field at byte 44 (a_h_coeff) read at byte 48 is a_w_coeff: both are -1 at stride 1, dilation 1"): (
        "dgrad/11-kouter-cshuffle ll-buffer-offset:load#11:+4",
        "dgrad/00-baseline ll-buffer-offset:load#11:+4",
    ),
    (
        "the record field at byte 12 (gemm_m) read at byte 16 is gemm_k (576, larger at every "
        "size): the larger M bound admits rows m >= gemm_m, whose images are past N: their dY "
        "offsets are past the end of dY (reads 0) and their dX stores past the end of dX (dropped)"
    ): ("dgrad/11-kouter-cshuffle ll-buffer-offset:load#4:+4",),
    "the record field at byte 84 (the split-K padded gemm_k) is loaded but not used without split-K": (
        "dgrad/03-pointwise-1x1 ll-buffer-offset:load#21:+4",
        "dgrad/07-wmma-gfx1151 ll-buffer-offset:load#21:+4",
    ),
    (
        "the barrier after the MMA phase guards the next K step's LDS stores; gemm_k = kpg = 64 = "
        "tile_k at every size, so the loop runs once and the default epilogue touches no LDS"
    ): ("dgrad/03-pointwise-1x1 ll-dropped-barrier:s.barrier#1",),
    (
        "the barrier after the MMA phase guards the next K step's LDS stores; K = cpg = 64 < "
        "tile_k = 128 at every size, so the loop runs once and the default epilogue after it "
        "touches no LDS"
    ): ("fwd/03-pointwise-1x1 ll-dropped-barrier:s.barrier#1",),
    (
        "the record field at byte 48 (a_w_coeff) only multiplies the filter tap column xdot, 0 "
        "for the 1x1 filter: any value read gives the same wo"
    ): ("dgrad/14-pointwise-stride2-zeros ll-buffer-offset:load#12:+4",),
}
#: (class, "<config id> <mutant id>") -> why, the form mutants.equivalence reads
EQUIVALENT: dict[tuple[str, str], str] = {
    (site.split(" ")[1].split(":")[0], site): why for why, sites in EQUIVALENT_BY_REASON.items() for site in sites
}

CLASSES: dict[str, Callable[[str], Iterator[Mutant]]] = {
    "ll-mma-operand-swap": mma_operand_swap,
    "ll-gep-offset": gep_offset,
    "ll-dropped-barrier": dropped_barrier,
    "ll-wait-counter": wait_counter,
    "ll-buffer-offset": buffer_offset,
    "ll-pool-alias": pool_alias,
}
