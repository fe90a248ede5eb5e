"""Seeded faults: how strong the numerics check is, measured (docs/numerics.md "Seeded faults").

Each fault class is a function of the emitted kernel IR text (mode `ir`, `rocke.ir v1`) that
yields its mutants in a fixed order: `Mutant(id, description, text)`. The id names the site by
a description that does not depend on line numbers or value names, `<class>:<op kind>#<ordinal
among such ops>:<variant>`, so the same mutation can be re-applied to the IR of another size
of the same config (`mutate`): the IR differs per size because the sizes are baked in. A size
whose IR has no such site runs unmutated. A mutant whose text equals the original is never
yielded.

A mutant is killed when `check_all_sizes(..., small=True, mutate=...)` (the default sizes of
the mutant run: the small and the edge variant, variants.check_sizes) reports any launch that
is not `.ok`: wrong or unwritten elements or a hazard (`killed`), or only an executor error
(`error`: killed by error). A survivor is either explained in EQUIVALENT (why no input can
tell it from the original) or reported as live: a weakness of the check."""

from __future__ import annotations

import random
import re
import signal
import threading
import time
from dataclasses import dataclass
from typing import Callable, Iterator, NamedTuple, Optional

from .check import Outcome, check_all_sizes

I32_MIN, I32_MAX = -(2**31), 2**31 - 1
#: the flavor the lowering's faults are seeded in (the flavors differ only in the resource
#: lines, docs/lowering.md §8)
LL_FLAVOR = ("llvm22",)


class Mutant(NamedTuple):
    id: str  # <class>:<kind>#<ordinal>[:<variant>]
    description: str
    text: str


# ---------------------------------------------------------------------------------------------
# The IR text as op lines


OP_LINE = re.compile(
    r"^(?P<indent> *)(?:(?P<result>%\w+) : (?P<type>.+?) = )?(?P<op>[a-z]+\.[a-z0-9_]+) "
    r"\( (?P<args>.*?) \)(?P<tail>(?: \{.*\})?)$"
)


@dataclass
class OpLine:
    index: int  # line number (0-based) in the text
    indent: str
    result: Optional[str]
    type: Optional[str]
    op: str
    args: list[str]
    tail: str  # " { attrs }" or ""

    def render(self, op: Optional[str] = None, args: Optional[list[str]] = None, tail: Optional[str] = None) -> str:
        head = f"{self.indent}{self.result} : {self.type} = " if self.result else self.indent
        a = ", ".join(self.args if args is None else args)
        return f"{head}{op or self.op} ( {a} ){self.tail if tail is None else tail}"

    def with_arg(self, slot: int, name: str) -> str:
        """The line with its operand `slot` replaced by `name`."""
        return self.render(args=[name if i == slot else a for i, a in enumerate(self.args)])

    def with_tail_edit(self, old: str, new: str) -> str:
        """The line with `old` in its attributes replaced by `new` (an attribute's value changed)."""
        return self.render(tail=self.tail.replace(old, new))

    def attr(self, key: str) -> Optional[str]:
        m = re.search(rf"\b{key} = (?:i:(-?\d+)|s:\"([^\"]*)\")", self.tail)
        return None if m is None else (m[1] if m[1] is not None else m[2])


class Ir:
    """The lines of one IR text, its ops and where each value is defined and used."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.split("\n")
        self.ops: list[OpLine] = []
        for i, line in enumerate(self.lines):
            m = OP_LINE.match(line)
            if m is None:
                continue
            args = [a for a in m["args"].split(", ") if a] if m["args"].strip() else []
            self.ops.append(OpLine(i, m["indent"], m["result"], m["type"], m["op"], args, m["tail"]))
        self.defs = {o.result: o for o in self.ops if o.result}
        self.uses: dict[str, list[OpLine]] = {}
        for o in self.ops:
            for a in o.args:
                self.uses.setdefault(a, []).append(o)
        header = next((line for line in self.lines if line.startswith("kernel @")), "")
        self.kernel_name = header[len("kernel @") :].split(" ")[0]
        self.attrs_line = next((i for i, line in enumerate(self.lines) if line.strip().startswith("attrs {")), -1)

    def of_kind(self, *kinds: str) -> Iterator[tuple[str, int, OpLine]]:
        """(kind, ordinal among ops of that kind, op), in text order."""
        seen: dict[str, int] = {}
        for o in self.ops:
            if o.op in kinds:
                n = seen.get(o.op, 0)
                seen[o.op] = n + 1
                yield o.op, n, o

    def constant(self, name: str) -> Optional[int]:
        d = self.defs.get(name)
        if d is None or d.op != "arith.constant" or d.type not in ("i32", "i64"):
            return None
        v = d.attr("value")
        return int(v) if v is not None else None

    def edit(self, replace: dict[int, list[str]]) -> str:
        """The text with line i replaced by the lines replace[i] (none: removed)."""
        out: list[str] = []
        for i, line in enumerate(self.lines):
            out.extend(replace[i] if i in replace else [line])
        return "\n".join(out)


def const_line(indent: str, name: str, value: int, ity: str = "i32") -> str:
    return f'{indent}{name} : {ity} = arith.constant (  ) {{ ity = s:"{ity}", value = i:{value} }}'


def emit(ir: Ir, mid: str, desc: str, replace: dict[int, list[str]]) -> Iterator[Mutant]:
    text = ir.edit(replace)
    if text != ir.text:
        yield Mutant(mid, desc, text)


# ---------------------------------------------------------------------------------------------
# The fault classes

#: ops whose two operands do not commute (arith.cmp: unless eq or ne)
NON_COMMUTATIVE = ("tile.mma", "arith.sub", "arith.div", "arith.mod", "arith.cmp", "vector.concat")


def operand_swap(text: str) -> Iterator[Mutant]:
    """The MMA's a and b swapped (the product transposed), or a non-commutative op's two
    operands swapped: arith.sub, div, mod, an ordering arith.cmp, vector.concat of equal
    halves."""
    ir = Ir(text)
    for kind, n, o in ir.of_kind(*NON_COMMUTATIVE):
        if kind == "arith.cmp" and o.attr("pred") in ("eq", "ne"):
            continue
        if kind == "vector.concat" and ir.defs.get(o.args[0], o).type != ir.defs.get(o.args[1], o).type:
            continue
        a, b, *rest = o.args
        yield from emit(
            ir,
            f"operand-swap:{kind}#{n}",
            f"{kind} #{n}: operands {a}, {b} swapped",
            {o.index: [o.render(args=[b, a, *rest])]},
        )


def off_by_one(text: str) -> Iterator[Mutant]:
    """An integer arith.constant (every use of it: constants are bound once per region) ±1."""
    ir = Ir(text)
    for kind, n, o in ir.of_kind("arith.constant"):
        value = ir.constant(o.result)
        if value is None:
            continue
        for delta in (+1, -1):
            new = value + delta
            if not I32_MIN <= new <= I32_MAX:
                continue
            line = o.with_tail_edit(f"value = i:{value} ", f"value = i:{new} ")
            yield from emit(
                ir, f"off-by-one:{kind}#{n}:{delta:+d}", f"constant #{n} {value} -> {new}", {o.index: [line]}
            )


def dropped_barrier(text: str) -> Iterator[Mutant]:
    """A tile.sync or tile.sync_lds_only removed."""
    ir = Ir(text)
    for kind, n, o in ir.of_kind("tile.sync", "tile.sync_lds_only"):
        yield from emit(ir, f"dropped-barrier:{kind}#{n}", f"{kind} #{n} removed", {o.index: []})


def lane_derived(ir: Ir, sources: tuple[str, ...] = ("gpu.lane_id",)) -> set[str]:
    """The values computed from gpu.lane_id (or the ops `sources`), through any op."""
    tainted = {o.result for o in ir.ops if o.op in sources and o.result}
    for o in ir.ops:
        if o.result and any(a in tainted for a in o.args):
            tainted.add(o.result)
    return tainted


def lane_map(text: str) -> Iterator[Mutant]:
    """A lane-derived index `x / C` or `x % C` (x computed from gpu.lane_id, C a constant)
    divided by another constant: 2·C, or C/2."""
    ir = Ir(text)
    lanes = lane_derived(ir)
    n = 0
    for o in ir.ops:
        if o.op not in ("arith.div", "arith.mod") or o.args[0] not in lanes:
            continue
        c = ir.constant(o.args[1])
        if c is None:
            continue
        for variant, new in (("x2", 2 * c), ("/2", c // 2)):
            if new < 1 or new == c:
                continue
            name = f"%mut_lane{n}{'m' if variant == 'x2' else 'd'}"
            yield from emit(
                ir,
                f"lane-map:{o.op}#{n}:{variant}",
                f"{o.op} #{n} of lane value {o.args[0]}: by {new}, not {c}",
                {o.index: [const_line(o.indent, name, new), o.with_arg(1, name)]},
            )
        n += 1


def transpose_without_exchange(text: str) -> Iterator[Mutant]:
    """A transpose read (gfx950 ds_read_tr16_b64, gfx1250 ds_read_tr16_b128) replaced by the
    plain read of the lane's own run: the lane exchange left out."""
    ir = Ir(text)
    for kind, n, o in ir.of_kind("tile.ds_read_tr16_b64", "tile.ds_read_tr16_b128"):
        tail = " { n = i:4, align = i:8 }" if kind.endswith("b64") else " { n = i:8, align = i:16 }"
        yield from emit(
            ir,
            f"transpose-without-exchange:{kind}#{n}",
            f"{kind} #{n} read without its exchange",
            {o.index: [o.render(op="tile.smem_load", tail=tail)]},
        )


FLIP = {"eq": "ne", "ne": "eq", "slt": "sge", "sge": "slt", "sle": "sgt", "sgt": "sle"}


def inverted_predicate(text: str) -> Iterator[Mutant]:
    """An arith.cmp negated: eq<->ne, slt<->sge, sle<->sgt; ult (the IR has no uge) becomes
    uge as the select of its negation."""
    ir = Ir(text)
    for kind, n, o in ir.of_kind("arith.cmp"):
        pred = o.attr("pred")
        if pred in FLIP:
            lines = [o.with_tail_edit(f'pred = s:"{pred}"', f'pred = s:"{FLIP[pred]}"')]
        elif pred == "ult":
            raw = f"{o.result}_ult"
            f, t = f"%mut_f{n}", f"%mut_t{n}"
            lines = [
                o.indent + o.render()[len(o.indent) :].replace(f"{o.result} :", f"{raw} :", 1),
                const_line(o.indent, f, 0, "i1"),
                const_line(o.indent, t, 1, "i1"),
                f"{o.indent}{o.result} : i1 = arith.select ( {raw}, {f}, {t} )",
            ]
            pred = "ult -> uge"
        else:
            continue
        yield from emit(
            ir, f"inverted-predicate:{kind}#{n}", f"{kind} #{n} ({o.result}): {pred} inverted", {o.index: lines}
        )


def k_loop_trip(text: str) -> Iterator[Mutant]:
    """An scf.for's trip changed: upper bound one step lower or higher, lower bound one step
    higher (the first step skipped), or the step doubled."""
    ir = Ir(text)
    split = "split-K" if split_k_kernel(ir)[0] else "no split-K"
    for kind, n, o in ir.of_kind("scf.for"):
        lb, ub, step, *inits = o.args
        iv = f"{o.attr('iv') or '?'}, {split}"
        name = f"%mut_for{n}"
        variants = (
            ("ub-step", "arith.sub", ub, 1, "one step fewer"),
            ("ub+step", "arith.add", ub, 1, "one step more"),
            ("lb+step", "arith.add", lb, 0, "the first step skipped"),
            ("step*2", "arith.add", step, 2, "the step doubled"),
        )
        for variant, op, base, slot, what in variants:
            new_line = f"{o.indent}{name} : i32 = {op} ( {base}, {step} )"
            lines = [new_line, o.with_arg(slot, name)]
            yield from emit(ir, f"k-loop-trip:{kind}#{n}:{variant}", f"scf.for #{n} ({iv}): {what}", {o.index: lines})


def split_k_kernel(ir: Ir) -> tuple[bool, bool]:
    """(a split-K kernel, its degree a runtime value)."""
    runtime = ir.kernel_name.endswith("_spkrt") or "split_k_runtime = b:true" in ir.lines[ir.attrs_line]
    return bool(re.search(r"_spk(\d+|rt)(_|$)", ir.kernel_name)) or runtime, runtime


def dropped_split_k_slice(text: str) -> Iterator[Mutant]:
    """A split-K kernel launched with one slice fewer (grid z − 1, fixed degrees only), or
    its slice index pinned to 0 (z, or z % S when grouped): every slice adds slice 0's K."""
    ir = Ir(text)
    split, runtime = split_k_kernel(ir)
    if not split:
        return
    attrs = ir.lines[ir.attrs_line]
    m = re.search(r"grid = l:\[ i:(\d+), i:(\d+), i:(\d+) \]", attrs)
    if m and not runtime and int(m[3]) >= 2:
        new = attrs.replace(m[0], f"grid = l:[ i:{m[1]}, i:{m[2]}, i:{int(m[3]) - 1} ]")
        yield from emit(
            ir, "dropped-split-k-slice:grid#0:z-1", f"grid z {m[3]} -> {int(m[3]) - 1}", {ir.attrs_line: [new]}
        )
    for kind, n, o in ir.of_kind("gpu.block_id"):
        if o.attr("dim") != "2":
            continue
        mods = [u for u in ir.uses.get(o.result, []) if u.op == "arith.mod" and u.args[0] == o.result]
        target = mods[0] if mods else o
        line = const_line(target.indent, target.result, 0)
        yield from emit(
            ir,
            f"dropped-split-k-slice:{target.op}#{n}:pinned",
            f"slice index {target.result} pinned to 0",
            {target.index: [line]},
        )


def weakened_async_wait(text: str) -> Iterator[Mutant]:
    """A tile.s_waitcnt's vmcnt raised by one, or the wait removed."""
    ir = Ir(text)
    for kind, n, o in ir.of_kind("tile.s_waitcnt"):
        count = o.attr("vmcnt")
        if count is None:
            continue
        after = ir.ops[ir.ops.index(o) + 1].op if ir.ops.index(o) + 1 < len(ir.ops) else ""
        then = " (then tile.sync)" if after == "tile.sync" else ""
        line = o.with_tail_edit(f"vmcnt = i:{count}", f"vmcnt = i:{int(count) + 1}")
        yield from emit(
            ir,
            f"weakened-async-wait:{kind}#{n}:+1",
            f"s_waitcnt #{n}: vmcnt {count} -> {int(count) + 1}{then}",
            {o.index: [line]},
        )
        yield from emit(
            ir,
            f"weakened-async-wait:{kind}#{n}:removed",
            f"s_waitcnt #{n} (vmcnt {count}) removed{then}",
            {o.index: []},
        )


LDS_OPS = ("tile.smem_load", "tile.smem_store", "tile.ds_read_tr16_b64", "tile.ds_read_tr16_b128")


def lds_offset(text: str) -> Iterator[Mutant]:
    """One LDS access's address shifted by a constant: its row +1, its column + its width
    (alignment kept), an async copy's LDS byte address + one lane's bytes."""
    ir = Ir(text)
    for kind, n, o in ir.of_kind(*LDS_OPS, "tile.async_buffer_load_lds"):
        if kind == "tile.async_buffer_load_lds":
            shifts = [("lds+lane", 1, 4 * int(o.attr("dwords") or 1))]
        else:
            if kind == "tile.smem_store":
                vt = ir.defs[o.args[3]].type if o.args[3] in ir.defs else None
                vm = re.fullmatch(r"vec<\w+x(\d+)>", vt or "")
                width = int(vm[1]) if vm else 1
            elif kind == "tile.smem_load":
                width = int(o.attr("n") or 1)
            else:
                width = 4 if kind.endswith("b64") else 8
            shifts = [("row+1", 1, 1), (f"col+{width}", 2, width)]
        for variant, slot, by in shifts:
            c, s = f"%mut_ldsc{n}", f"%mut_lds{n}"
            add = f"{o.indent}{s} : i32 = arith.add ( {o.args[slot]}, {c} )"
            lines = [const_line(o.indent, c, by), add, o.with_arg(slot, s)]
            yield from emit(ir, f"lds-offset:{kind}#{n}:{variant}", f"{kind} #{n}: address {variant}", {o.index: lines})


def horner_depth(ir: Ir, name: str) -> int:
    """How many multiplies follow `name` in an ((x·a + b)·c + d)·… chain (each term one or
    more adds)."""
    depth = 0
    frontier = {name}
    for _ in range(6):
        sums, seen = set(), set()
        todo = list(frontier)
        while todo:
            v = todo.pop()
            for u in ir.uses.get(v, []):
                if u.op == "arith.add" and u.result and u.result not in seen:
                    seen.add(u.result)
                    sums.add(u.result)
                    todo.append(u.result)
        nxt = {u.result for v in sums for u in ir.uses.get(v, []) if u.op == "arith.mul" and u.result}
        if not nxt:
            break
        depth += 1
        frontier = nxt
    return depth


def batch_stride_sites(ir: Ir) -> Iterator[OpLine]:
    """The multiplies of an image index by its per-image extent: `n·Hi` (or `n·Di`) at the head
    of an NHWC offset ((n·Hi + hi)·Wi + wi)·C + c, then ·bytes: a constant multiplying a
    per-thread quotient (n = pixel / pixels per image) that at least three more multiplies
    follow. Not the epilogue's accumulator row (lane / m, then ·4) nor the chiplet remap
    (block ids only): their quotients are of the lane itself or of no thread value."""
    threads = lane_derived(ir, ("gpu.lane_id", "gpu.thread_id"))
    ids = {o.result for o in ir.ops if o.op in ("gpu.lane_id", "gpu.thread_id")}
    for o in ir.ops:
        if o.op != "arith.mul" or len(o.args) != 2 or ir.constant(o.args[1]) is None:
            continue
        d = ir.defs.get(o.args[0])
        if d is None or d.op != "arith.div" or d.args[0] not in threads or d.args[0] in ids:
            continue
        if horner_depth(ir, o.result) >= 3:
            yield o


def batch_stride(text: str) -> Iterator[Mutant]:
    """The N stride of an operand descriptor changed: the per-image extent it multiplies the
    image index by, ±1 at that one multiply."""
    ir = Ir(text)
    for n, o in enumerate(batch_stride_sites(ir)):
        c = ir.constant(o.args[1])
        for delta in (+1, -1):
            if c + delta < 1:
                continue
            name = f"%mut_stride{n}{'p' if delta > 0 else 'm'}"
            yield from emit(
                ir,
                f"batch-stride:arith.mul#{n}:{delta:+d}",
                f"image stride {o.result} = {o.args[0]}·{c} -> ·{c + delta}",
                {o.index: [const_line(o.indent, name, c + delta), o.with_arg(1, name)]},
            )


CLASSES: dict[str, Callable[[str], Iterator[Mutant]]] = {
    "operand-swap": operand_swap,
    "off-by-one": off_by_one,
    "dropped-barrier": dropped_barrier,
    "lane-map": lane_map,
    "transpose-without-exchange": transpose_without_exchange,
    "inverted-predicate": inverted_predicate,
    "k-loop-trip": k_loop_trip,
    "dropped-split-k-slice": dropped_split_k_slice,
    "weakened-async-wait": weakened_async_wait,
    "lds-offset": lds_offset,
    "batch-stride": batch_stride,
}


def class_of(mutant_id: str) -> str:
    return mutant_id.split(":", 1)[0]


def generator(cls: str) -> Callable[[str], Iterator[Mutant]]:
    """The class's mutant generator: of the kernel IR (CLASSES), or of the `ll` (a class
    named ll-*, ll_mutants.CLASSES)."""
    if cls.startswith("ll-"):
        from .ll_mutants import CLASSES as LL_CLASSES

        return LL_CLASSES[cls]
    return CLASSES[cls]


def is_ll(mutant_id: str) -> bool:
    return class_of(mutant_id).startswith("ll-")


def kind_of(mutant_id: str) -> str:
    return mutant_id.split(":")[1].split("#")[0]


def mutate(mutant_id: str, text: str) -> str:
    """The mutant of that id applied to `text` (the IR of any size); the text unchanged when
    it has no such site."""
    for m in generator(class_of(mutant_id))(text):
        if m.id == mutant_id:
            return m.text
    return text


def mutator(mutant_id: str) -> Callable[[str], str]:
    return lambda text: mutate(mutant_id, text)


def sample(text: str, cls: str, per_class: int, seed: int, salt: str = "") -> list[Mutant]:
    """At most `per_class` of the class's mutants of `text`, chosen by a seeded RNG (seed and
    salt: the config id), spread over the op kinds: a shuffled list per kind, taken round-robin
    in kind order."""
    by_kind: dict[str, list[Mutant]] = {}
    for m in generator(cls)(text):
        by_kind.setdefault(kind_of(m.id), []).append(m)
    rng = random.Random(f"{seed}/{salt}/{cls}")
    queues = []
    for kind in sorted(by_kind):
        ms = by_kind[kind]
        rng.shuffle(ms)
        queues.append(ms)
    out: list[Mutant] = []
    while len(out) < per_class and any(queues):
        for q in queues:
            if q and len(out) < per_class:
                out.append(q.pop(0))
    return out


# ---------------------------------------------------------------------------------------------
# Equivalent mutants: (class, site) -> why no input tells the mutant from the original. A site
# is "<config id> <mutant id>", or "* <description pattern>" for every config.

EQUIVALENT: dict[tuple[str, str], str] = {
    # every config
    ("off-by-one", r"* 2147483647 -> 2147483646$"): (
        "the out-of-range offset of a masked load or store: the byte offset 2147483646 is past the "
        "end of every buffer under 2^31 - 16 bytes (every config's, at every size), so the load "
        "still reads zeros and the store is still dropped"
    ),
    ("k-loop-trip", r"* \(%k0, no split-K\): one step more$"): (
        "the extra K step covers k in [K, K + tile_k): every A and B load checks k < K (the "
        "record's gemm_k in dgrad) and reads zeros there, so it adds exact zeros to every "
        "accumulator; without split-K the loop's bound is K itself (a split-K slice's extra step "
        "reads the next slice's K instead: not covered here)"
    ),
    ("weakened-async-wait", r"* vmcnt 0\)? (-> 1 |removed )?\(then tile\.sync\)$"): (
        "the last step's wait for all async loads (vmcnt 0) is followed by a full tile.sync, which "
        "itself waits for every outstanding memory operation of the thread before its barrier: "
        "nothing reads LDS between the two"
    ),
    # dgrad/14: a 1x1 filter, so one tilde record whose gemm_k is kpg = 64 = tile_k at every size
    ("dropped-barrier", "dgrad/14-pointwise-stride2-zeros dropped-barrier:tile.sync#1"): (
        "the barrier after the MMA phase guards the next K step's LDS stores; gemm_k = 64 = tile_k "
        "at every N, Hi, Wi, so the loop runs once, and the default epilogue and the zero phase "
        "after it touch no LDS"
    ),
    ("k-loop-trip", "dgrad/14-pointwise-stride2-zeros k-loop-trip:scf.for#0:step*2"): (
        "the K loop runs from 0 to gemm_k = 64 = tile_k at every N, Hi, Wi: one step either way"
    ),
    ("off-by-one", "dgrad/14-pointwise-stride2-zeros off-by-one:arith.constant#11:-1"): (
        "the record field at byte 28 (h_begin) is 0 at every size; the 4 bytes at 27 are w_slice's "
        "top byte (w_slice < 2^24) and h_begin's three low bytes: 0 as well"
    ),
    ("off-by-one", "dgrad/14-pointwise-stride2-zeros off-by-one:arith.constant#13:+1"): (
        "the field at byte 40 (x_dot = 1) only divides the tap index k / kpg, which is 0 for the "
        "1x1 filter's one tap (k < gemm_k = kpg); read at 41 it is a_coeff_y's low byte (0xFF: "
        "a_coeff_y = -1) times 2^24, nonzero, and 0 / x = 0 % x = 0"
    ),
    ("off-by-one", "dgrad/14-pointwise-stride2-zeros off-by-one:arith.constant#16:+1"): (
        "the field at byte 52 (b_stride_y) only multiplies the tap row, 0 for the 1x1 filter"
    ),
    ("off-by-one", "dgrad/14-pointwise-stride2-zeros off-by-one:arith.constant#23:+1"): (
        "the field at byte 84 (the split-K padded gemm_k) is loaded but not used without split-K"
    ),
    # the GEMM extent bound raised by one admits only the row past the last one
    ("off-by-one", "wgrad/02-split-k4-fp16-cshuffle off-by-one:arith.constant#7:+1"): (
        "wg_K (196 small, 198 edge) in the k < wg_K tests of the dY and X loads: k = wg_K is the "
        "pixel past the last, whose dY offset wg_K·K + k_out is past the end of dY (reads 0), so "
        "its products are 0"
    ),
    ("off-by-one", "fwd/04-async-c64 off-by-one:arith.constant#15:+1"): (
        "M (162 small, 99 edge) in the m < M tests: m = M is image N, row 0, whose X offsets are at "
        "or past N·Hi·Wi·C (reads 0; hi, wi are range-checked) and whose Y store at M·K is past "
        "the end of Y (dropped)"
    ),
    ("off-by-one", "wgrad/03-pointwise-1x1 off-by-one:arith.constant#3:+1"): (
        "wg_K (162 small, 130 edge) as the K loop's bound and in the k < wg_K tests: k = wg_K is "
        "the pixel past the last, whose dY and X offsets are past the ends of their buffers "
        "(reads 0), so the extra step adds zeros"
    ),
    ("off-by-one", "wgrad/11-kouter-cshuffle off-by-one:arith.constant#3:+1"): (
        "wg_K (98 small, 132 edge) as the K loop's bound and in the k < wg_K tests: the pixel past "
        "the last reads zeros from dY and X, so the extra step adds zeros"
    ),
    # wgrad/13: the K-outer B loader compares its column n = 64·block_x + 8·(tid % 8), a
    # multiple of 8 below 576 = wg_N, with wg_N
    ("off-by-one", "wgrad/13-kouter-atom16x16x16 off-by-one:arith.constant#13:+1"): (
        "wg_N = 576 in the B loader's n < wg_N test, where n = 64·block_x + 8·(tid % 8) is a "
        "multiple of 8 at most 568: n < 577 and n < 576 hold alike"
    ),
    ("off-by-one", "wgrad/13-kouter-atom16x16x16 off-by-one:arith.constant#13:-1"): (
        "wg_N = 576 in the B loader's n < wg_N test, where n = 64·block_x + 8·(tid % 8) is a "
        "multiple of 8 at most 568: n < 575 and n < 576 hold alike"
    ),
    # pointwise 1x1 configs: the reduction is the channels alone (fwd K = cpg = 64 < tile_k
    # = 128; dgrad gemm_k = kpg = 64 = tile_k), so the K loop runs once at every N, Hi, Wi
    ("dropped-barrier", "fwd/03-pointwise-1x1 dropped-barrier:tile.sync#1"): (
        "the barrier after the MMA phase guards the next K step's LDS stores; K = cpg = 64 < "
        "tile_k = 128 at every size, so the loop runs once and the default epilogue after it "
        "touches no LDS"
    ),
    ("k-loop-trip", "fwd/03-pointwise-1x1 k-loop-trip:scf.for#0:step*2"): (
        "the K loop runs from 0 to K = cpg = 64 < tile_k at every size: one step either way"
    ),
    ("operand-swap", "fwd/03-pointwise-1x1 operand-swap:tile.mma#6"): (
        "MMA #6 covers 16 values of k in the upper half [64, 128) of the 128-wide K tile, past "
        "K = cpg = 64 at every size: both operands are the zeros the masked loads stored"
    ),
    ("off-by-one", "fwd/03-pointwise-1x1 off-by-one:arith.constant#11:+1"): (
        "for a stride-1 pad-0 1x1 problem the constant is an output and an input extent at once "
        "(Wo = Wi): m is split into (n, ho, wo) by it, tested against it and put back together by "
        "it, which gives m back whatever its value, and the range tests hold"
    ),
    ("dropped-barrier", "dgrad/03-pointwise-1x1 dropped-barrier:tile.sync#1"): (
        "the barrier after the MMA phase guards the next K step's LDS stores; gemm_k = kpg = 64 = "
        "tile_k at every size, so the loop runs once and the default epilogue touches no LDS"
    ),
    ("k-loop-trip", "dgrad/03-pointwise-1x1 k-loop-trip:scf.for#0:step*2"): (
        "the K loop runs from 0 to gemm_k = 64 = tile_k at every size: one step either way"
    ),
    # dgrad records read one byte early or late (docs/reference/conv-semantics.md §2.4 order)
    ("off-by-one", "dgrad/03-pointwise-1x1 off-by-one:arith.constant#11:-1"): (
        "h_begin (byte 28) is 0 for a pad-0 1x1 problem; the 4 bytes at 27 are w_slice's top byte "
        "(w_slice < 2^24) and h_begin's three low bytes: 0 as well"
    ),
    ("off-by-one", "dgrad/03-pointwise-1x1 off-by-one:arith.constant#14:+1"): (
        "a_h_coeff (byte 44) and a_w_coeff (byte 48) are both -1 at stride 1, dilation 1: the 4 "
        "bytes at 45 are 0xFF each, -1 again"
    ),
    ("off-by-one", "dgrad/05-dilation2 off-by-one:arith.constant#17:-1"): (
        "b_y_offset (byte 56) is 0 at stride 1 (one record, i_yt = 0); the 4 bytes at 55 are "
        "b_y_stride's top byte (b_y_stride = 1) and b_y_offset's three low bytes: 0 as well"
    ),
    ("off-by-one", "dgrad/05-dilation2 off-by-one:arith.constant#2:-1"): (
        "the record size (88 bytes) scales the probe index, 0 for the single record at stride 1, "
        "and the record buffer's byte size, which then cuts off byte 87: the top byte of "
        "gemm_k_padded, which is loaded but not used without split-K"
    ),
    ("off-by-one", "dgrad/07-wmma-gfx1151 off-by-one:arith.constant#23:-1"): (
        "the field at byte 84 (the split-K padded gemm_k) is loaded but not used without split-K"
    ),
    ("off-by-one", "dgrad/12-kouter-atom16x16x16 off-by-one:arith.constant#22:-1"): (
        "d_w_offset (byte 80) is dW·0 + sW·w_begin - pW = 1 - 1 = 0 at stride 1, pad 1; the 4 "
        "bytes at 79 are d_w_stride's top byte (d_w_stride = 1) and d_w_offset's low bytes: 0"
    ),
    ("off-by-one", "dgrad/12-kouter-atom16x16x16 off-by-one:arith.constant#7:-1"): (
        "gemm_m (byte 12) read at 11 is num_n_tiles' top byte (0) plus gemm_m·2^8: a larger M bound "
        "admits rows m >= gemm_m, whose images are past N: their dY offsets are past the end of "
        "dY (reads 0) and their dX stores past the end of dX (dropped)"
    ),
    ("lane-map", "dgrad/12-kouter-atom16x16x16 lane-map:arith.mod#5:/2"): (
        "lane % 16 feeds only a division by 16, which is 0 for lane % 16 and for lane % 8 alike"
    ),
    # stride-1 dgrad: one record, so every probe of the record search is past the table
    ("inverted-predicate", "dgrad/00-baseline inverted-predicate:arith.cmp#1"): (
        "the record search's block_start <= flat test is and-ed with cand < num_sub_gemms; with "
        "the one record of a stride-1 problem every probe (cand = 2, then 1) is past the table, so "
        "the and is false whatever the test says"
    ),
    ("inverted-predicate", "dgrad/02-cshuffle inverted-predicate:arith.cmp#1"): (
        "the record search's block_start <= flat test is and-ed with cand < num_sub_gemms; with "
        "the one record of a stride-1 problem every probe (cand = 2, then 1) is past the table, so "
        "the and is false whatever the test says"
    ),
}


def equivalence(config: str, mutant: Mutant) -> Optional[str]:
    cls = class_of(mutant.id)
    table = EQUIVALENT
    if is_ll(mutant.id):
        from .ll_mutants import EQUIVALENT as LL_EQUIVALENT

        table = LL_EQUIVALENT
    reason = table.get((cls, f"{config} {mutant.id}"))
    if reason is not None:
        return reason
    for (c, site), why in table.items():
        if c == cls and site.startswith("* ") and re.search(site[2:], mutant.description):
            return why
    return None


# ---------------------------------------------------------------------------------------------
# The kill decision

KILLED, ERROR, EQUIV, LIVE = "killed", "killed by error", "equivalent", "live"


class Timeout(Exception):
    pass


@dataclass(frozen=True)
class Verdict:
    config: str
    mutant: str
    description: str
    status: str  # KILLED, ERROR, EQUIV, LIVE
    detail: str  # what killed it, or why it is equivalent
    seconds: float


def failure(o: Outcome) -> str:
    where = f"{o.label} {o.size}"
    if o.error is not None:
        return f"{where}: error {o.error}"
    parts = []
    if o.wrong:
        parts.append(f"{o.wrong}/{o.elements} wrong")
    if o.unwritten:
        parts.append(f"{o.unwritten} unwritten")
    if o.hazards:
        parts.append("hazard " + o.hazards[0].split(":")[0])
    if o.mismatch:
        parts.append("spec mismatch")
    if o.lockstep is not None:
        parts.append("lockstep " + o.lockstep.split(":")[0])
    return f"{where} {o.level}: {', '.join(parts)}"


def run_with_limit(fn: Callable[[], list[Outcome]], seconds: Optional[float]) -> list[Outcome]:
    """fn(), raising Timeout after `seconds` (only in the main thread; elsewhere unlimited)."""
    if not seconds or threading.current_thread() is not threading.main_thread():
        return fn()

    def alarm(signum, frame):
        raise Timeout(f"over {seconds:.0f} s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return fn()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def judge(config: str, config_text: str, mutant: Mutant, time_limit: Optional[float] = 120.0) -> Verdict:
    """The kill decision for one mutant of `config` (its text) at the default sizes of the
    mutant run."""
    start = time.perf_counter()
    if is_ll(mutant.id):  # a fault of the lowering: the IR runs as emitted, the ll follows it
        run = lambda: check_all_sizes(  # noqa: E731
            config, config_text, engine="py", small=True, level="both", flavors=LL_FLAVOR, ll_mutate=mutator(mutant.id)
        )
    else:
        run = lambda: check_all_sizes(config, config_text, engine="py", small=True, mutate=mutator(mutant.id))  # noqa: E731
    try:
        outcomes = run_with_limit(run, time_limit)
    except Exception as e:  # a crash of the executor on the mutant, or the time limit
        return Verdict(
            config, mutant.id, mutant.description, ERROR, f"{type(e).__name__}: {e}", time.perf_counter() - start
        )
    seconds = time.perf_counter() - start
    bad = [o for o in outcomes if not o.ok and not o.skipped]
    shown = [o for o in bad if o.error is None]
    if shown:
        return Verdict(config, mutant.id, mutant.description, KILLED, failure(shown[0]), seconds)
    if bad:
        return Verdict(config, mutant.id, mutant.description, ERROR, failure(bad[0]), seconds)
    why = equivalence(config, mutant)
    if why is not None:
        return Verdict(config, mutant.id, mutant.description, EQUIV, why, seconds)
    return Verdict(config, mutant.id, mutant.description, LIVE, "passes at every size", seconds)
