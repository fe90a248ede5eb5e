"""Barrier checks: does a workgroup barrier order this wave's LDS accesses?

The engines order LDS (shared memory) between the waves of a workgroup with a bare
`call void @llvm.amdgcn.s.barrier()` and an explicit wait before it, never with a
`fence syncscope("workgroup")`. On the hardware that is enough when no LDS operation of the
wave is still in flight at the barrier; LLVM's memory model does not promise it, because
without a fence the compiler may move LDS accesses and waits around the barrier. Two checks
(docs/memory-model.md):

- `fence_lint(ll_text)`: counts the barriers and the fences of an emitted module; a module
  with barriers and no workgroup fence gets a one-line note.
- `outstanding_lds_at_barriers(asm, arch)`: a dataflow over the compiled assembly that finds
  every barrier at which an LDS operation (a `ds_*` instruction) may be issued and not yet
  waited for. `rocke-parity check-llvm` fails such a kernel.

The wait model per arch (the counter that tracks LDS, and what lowers it):

- gfx9, gfx10, gfx11: LDS shares `lgkmcnt` with scalar memory (`s_load_*`, `s_buffer_load_*`)
  and messages (`s_sendmsg`). `s_waitcnt ... lgkmcnt(N)` leaves at most N of those in flight;
  since scalar loads may return out of order, the check credits no completion to position:
  at most min(outstanding LDS, N) LDS operations stay in flight, whatever else is pending.
  That bound is never lower than the in-order count (the LDS operations among the N most
  recent lgkm operations), so it is the conservative one; a scalar load therefore never
  proves an LDS operation complete, and lgkmcnt(N) with N > 0 never proves all of them
  complete unless at most N were in flight. A numeric operand (`s_waitcnt 0`) is decoded per
  arch; `s_waitcnt_lgkmcnt null, N` (gfx10+) counts as lgkmcnt(N).
- gfx12 (gfx1201, gfx1250): LDS has its own counter, `dscnt`: `s_wait_dscnt N`,
  `s_wait_loadcnt_dscnt X` / `s_wait_storecnt_dscnt X` (dscnt = X & 0x3f) and `s_wait_idle`
  lower it. The legacy `s_waitcnt` the gfx11-style wait of the engines lowers to (gfx1201)
  counts as a full LDS wait when its lgkmcnt is 0, and as no LDS wait otherwise.

Barriers are `s_barrier` (gfx9/gfx11) and the split `s_barrier_signal` / `s_barrier_wait`
(gfx12). One problem per barrier instruction at which LDS operations may be in flight; on
gfx12 an LDS operation issued between a signal and its wait is a problem at the wait too
(it is ordered with neither side of the barrier). Direct-to-LDS buffer loads (`buffer_load_*
... lds`) count against `vmcnt`, and the async pipelines keep them in flight across barriers
on purpose; they are out of scope."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

#: Upper bound of the abstract counter (above every hardware counter): the loop fixpoint terminates.
CAP = 64

#: `ds_*` instructions that use the LDS unit but touch no LDS memory.
NOT_LDS_MEMORY = frozenset({"ds_nop", "ds_swizzle_b32", "ds_permute_b32", "ds_bpermute_b32", "ds_bpermute_fi_b32"})

BARRIER_SIGNAL = frozenset({"s_barrier", "s_barrier_signal", "s_barrier_signal_isfirst"})
BARRIER_WAIT = frozenset({"s_barrier_wait"})
BARRIERS = BARRIER_SIGNAL | BARRIER_WAIT
#: No successor: the kernel ends, or jumps through a register.
TERMINATORS = frozenset({"s_endpgm", "s_endpgm_saved", "s_setpc_b64"})


# --- the lint over emitted LLVM IR --------------------------------------------------------

_CALL_BARRIER = re.compile(r"\bcall void @llvm\.amdgcn\.s\.barrier(?:\.signal|\.wait)?\(")
#: A fence at workgroup scope or wider: workgroup, agent, or no syncscope (system).
_FENCE = re.compile(r"^\s*fence\s+(?:syncscope\(\"(?P<scope>[^\"]*)\"\)\s+)?(?P<ordering>\w+)", re.M)
_ORDERING_SCOPES = frozenset({None, "workgroup", "agent"})


class FenceLint(NamedTuple):
    """`fences, barriers, bare = fence_lint(text)`; `.message` is the lint line, or None."""

    fences: int
    barriers: int
    bare: int  # barriers without a workgroup release fence right before and an acquire right after

    @property
    def message(self) -> str | None:
        if self.bare:
            return f"{self.bare} of {self.barriers} barriers order LDS with no workgroup fence around them"
        return None


def fenced(lines: list[str], i: int, ordering: str) -> bool:
    """Whether line i is a workgroup-or-wider fence of that ordering."""
    if not 0 <= i < len(lines):
        return False
    m = _FENCE.match(lines[i])
    return (
        m is not None
        and m.group("scope") in _ORDERING_SCOPES
        and m.group("ordering") in (ordering, "acq_rel", "seq_cst")
    )


def fence_lint(ll_text: str) -> FenceLint:
    """The workgroup-or-wider fences and the `s.barrier` calls of an emitted module, and the
    barriers not between a release fence (the line before) and an acquire fence (the line
    after)."""
    lines = ll_text.split("\n")
    fences = sum(1 for line in lines if (m := _FENCE.match(line)) and m.group("scope") in _ORDERING_SCOPES)
    barriers = [i for i, line in enumerate(lines) if _CALL_BARRIER.search(line)]
    bare = sum(1 for i in barriers if not (fenced(lines, i - 1, "release") and fenced(lines, i + 1, "acquire")))
    return FenceLint(fences, len(barriers), bare)


# --- assembly ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Instr:
    line: int  # 1-based line of the assembly text
    mnemonic: str
    operands: str
    text: str


_LABEL = re.compile(r"^([A-Za-z_.$][\w.$]*):(.*)$")
_MNEMONIC = re.compile(r"[a-z][a-z0-9_]*")
_FUNCTION = re.compile(r"^\s*\.type\s+([^,\s]+)\s*,\s*@function")


def _strip_comment(line: str) -> str:
    for mark in (";", "//"):
        cut = line.find(mark)
        if cut >= 0:
            line = line[:cut]
    return line.strip()


def kernel_regions(asm: str) -> list[tuple[str, list[tuple[int, str]]]]:
    """(name, [(line number, line)]) per function of a listing: from its label to its
    `.Lfunc_end`. A listing without `.type X,@function` (a hand-written snippet) is one region."""
    lines = asm.splitlines()
    names = [m.group(1) for m in map(_FUNCTION.match, lines) if m]
    if not names:
        return [("", list(enumerate(lines, 1)))]
    regions = []
    for name in names:
        start = next((i for i, ln in enumerate(lines) if ln.strip() == f"{name}:"), None)
        if start is None:
            continue
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith(".Lfunc_end")), len(lines))
        regions.append((name, [(i + 1, lines[i]) for i in range(start + 1, end)]))
    return regions


def _items(region: list[tuple[int, str]]) -> list[str | Instr]:
    """A region as labels (str) and instructions, in order."""
    out: list[str | Instr] = []
    for number, raw in region:
        text = _strip_comment(raw)
        while text:
            m = _LABEL.match(text)
            if m:
                out.append(m.group(1))
                text = m.group(2).strip()
                continue
            if text.startswith("."):
                break  # a directive
            word, _, rest = text.partition(" ")
            word = word.split("\t")[0]
            if _MNEMONIC.fullmatch(word):
                out.append(Instr(number, word, text[len(word) :].strip(), text))
            break
    return out


def instructions(asm: str) -> list[Instr]:
    """Every instruction of every function of a listing (directives, labels, comments dropped)."""
    return [it for _, region in kernel_regions(asm) for it in _items(region) if isinstance(it, Instr)]


# --- the wait model ---------------------------------------------------------------------


def arch_major(arch: str) -> int:
    """9 for gfx942 / gfx950 / gfx90a, 11 for gfx1151, 12 for gfx1201 / gfx1250."""
    m = re.fullmatch(r"gfx(\d+)[0-9a-z]{2}", arch)
    if not m:
        raise ValueError(f"not an AMDGPU arch: {arch!r}")
    return int(m.group(1))


def _int(text: str) -> int | None:
    try:
        return int(text, 0)
    except ValueError:
        return None


def legacy_lgkmcnt(operands: str, major: int) -> int | None:
    """The lgkmcnt an `s_waitcnt` waits for; None when it does not wait for lgkm."""
    m = re.search(r"lgkmcnt(?:_sat)?\((\d+)\)", operands)
    if m:
        return int(m.group(1))
    value = _int(operands.strip())
    if value is None:
        return None  # symbolic, without lgkmcnt: vmcnt / expcnt only
    if major <= 9:
        field = (value >> 8) & 0xF
        return None if field == 0xF else field
    if major == 10:
        field = (value >> 8) & 0x3F
    else:
        field = (value >> 4) & 0x3F
    return None if field == 0x3F else field


def lds_wait(ins: Instr, major: int, legacy_waitcnt: bool = True) -> int | None:
    """At most how many LDS operations may stay in flight after `ins`; None if it is no LDS wait.

    `legacy_waitcnt=False` reads gfx12 the way LLVM's wait insertion does: a legacy
    `s_waitcnt` waits for nothing (the bench uses it to count the barriers only it protects)."""
    name, ops = ins.mnemonic, ins.operands
    if name == "s_waitcnt":
        n = legacy_lgkmcnt(ops, major)
        if major >= 12:
            # the legacy full wait on gfx12; partial ones credit nothing
            return 0 if n == 0 and legacy_waitcnt else None
        return n
    if name == "s_waitcnt_lgkmcnt" and major < 12:
        dst, _, imm = ops.partition(",")
        return _int(imm.strip()) if dst.strip() == "null" else None
    if major >= 12:
        if name == "s_wait_dscnt":
            return _int(ops.strip())
        if name in ("s_wait_loadcnt_dscnt", "s_wait_storecnt_dscnt"):
            value = _int(ops.strip())
            return None if value is None else value & 0x3F
        if name == "s_wait_idle":
            return 0
    return None


def is_lds_op(ins: Instr) -> bool:
    return ins.mnemonic.startswith("ds_") and ins.mnemonic not in NOT_LDS_MEMORY


# --- the dataflow -----------------------------------------------------------------------


class State(NamedTuple):
    """In flight at a program point: at most `count` LDS operations, among those at `lines`;
    `window`: LDS operations issued after an `s_barrier_signal` whose wait has not come;
    `signalled`: a signal may be waiting for its `s_barrier_wait`."""

    count: int = 0
    lines: frozenset[int] = frozenset()
    window: frozenset[int] = frozenset()
    signalled: bool = False


def _join(a: State | None, b: State) -> State:
    if a is None:
        return b
    return State(max(a.count, b.count), a.lines | b.lines, a.window | b.window, a.signalled or b.signalled)


def _step(state: State, ins: Instr, major: int, legacy_waitcnt: bool = True) -> State:
    if is_lds_op(ins):
        window = state.window | {ins.line} if state.signalled else state.window
        return State(min(state.count + 1, CAP), state.lines | {ins.line}, window, state.signalled)
    n = lds_wait(ins, major, legacy_waitcnt)
    if n is not None and n < state.count:
        return state._replace(count=n, lines=state.lines if n else frozenset())
    if ins.mnemonic in ("s_barrier_signal", "s_barrier_signal_isfirst"):
        return state._replace(signalled=True)
    if ins.mnemonic in BARRIER_WAIT:
        return state._replace(window=frozenset(), signalled=False)
    return state


@dataclass
class Block:
    instrs: list[Instr]
    succ_labels: list[str]
    falls_through: bool


def _blocks(items: list[str | Instr]) -> tuple[list[Block], dict[str, int]]:
    blocks: list[Block] = [Block([], [], True)]
    label_at: dict[str, int] = {}
    for it in items:
        if isinstance(it, str):
            if blocks[-1].instrs:
                blocks.append(Block([], [], True))
            label_at[it] = len(blocks) - 1
            continue
        cur = blocks[-1]
        cur.instrs.append(it)
        name = it.mnemonic
        if name == "s_branch" or name.startswith("s_cbranch_"):
            target = it.operands.split(",")[0].strip()
            if target:
                cur.succ_labels.append(target)
            cur.falls_through = name != "s_branch"
            blocks.append(Block([], [], True))
        elif name in TERMINATORS:
            cur.falls_through = False
            blocks.append(Block([], [], True))
    return blocks, label_at


def _problem(ins: Instr, state: State) -> str | None:
    parts = []
    if state.count:
        lines = ", ".join(map(str, sorted(state.lines)[-6:]))
        more = "…, " if len(state.lines) > 6 else ""
        parts.append(f"{state.count} LDS op(s) may be outstanding (issued at line(s) {more}{lines})")
    if ins.mnemonic in BARRIER_WAIT and state.window:
        lines = ", ".join(map(str, sorted(state.window)[:6]))
        parts.append(f"LDS op(s) issued between s_barrier_signal and s_barrier_wait (line(s) {lines})")
    if not parts:
        return None
    return f"line {ins.line} `{ins.text}`: " + "; ".join(parts)


def outstanding_lds_at_barriers(asm: str, arch: str, *, legacy_waitcnt: bool = True) -> list[str]:
    """One problem per barrier instruction of `asm` (compiled for `arch`) at which an LDS
    operation of the wave may still be in flight; empty when every barrier is clean.
    (`legacy_waitcnt`: see `lds_wait`.)"""
    major = arch_major(arch)
    problems: list[str] = []
    regions = kernel_regions(asm)
    for name, region in regions:
        blocks, label_at = _blocks(_items(region))
        succs = []
        for i, b in enumerate(blocks):
            s = [label_at[t] for t in b.succ_labels if t in label_at]
            if b.falls_through and i + 1 < len(blocks):
                s.append(i + 1)
            succs.append(s)
        state_in: list[State | None] = [None] * len(blocks)
        state_in[0] = State()
        work = [0]
        while work:
            i = work.pop()
            st = state_in[i]
            assert st is not None
            for ins in blocks[i].instrs:
                st = _step(st, ins, major, legacy_waitcnt)
            for j in succs[i]:
                joined = _join(state_in[j], st)
                if joined != state_in[j]:
                    state_in[j] = joined
                    work.append(j)
        prefix = f"{name}: " if name and len(regions) > 1 else ""
        for i, b in enumerate(blocks):
            st = state_in[i]
            if st is None:
                continue  # unreachable
            for ins in b.instrs:
                if ins.mnemonic in BARRIERS:
                    problem = _problem(ins, st)
                    if problem:
                        problems.append(prefix + problem)
                st = _step(st, ins, major, legacy_waitcnt)
    return problems
