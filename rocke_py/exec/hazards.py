"""What the executor reports instead of hiding it under lockstep execution
(docs/executor.md §4): each hazard names its kind and the op, counted over threads."""

from __future__ import annotations

from dataclasses import dataclass

#: kind -> what it means
KINDS = {
    "lds-race": "LDS bytes written by one wave and read by another within one barrier interval (or read, then written)",
    "lds-uninit": "a read of LDS bytes never written",
    "async-early": "LDS bytes read before the wait that covers the async load writing them",
    "async-unwaited": "an async load still outstanding at the end of the kernel",
    "not-uniform": "a readfirstlane operand or an async LDS base that is not wave-uniform",
    "partial-wave": "a wave-level convergent op (MMA, transpose read, readfirstlane, mbcnt) under a partial wave",
    "lds-misaligned": "an LDS access at an address that is not a multiple of its alignment",
    "lds-bounds": "an LDS access outside its allocation",
    "global-rewrite": "a global byte written twice by non-atomic stores",
    "atomic-bounds": "an atomic outside its buffer",
    "nonuniform-loop": "scf.for bounds or step that differ between threads of a workgroup",
    "nonuniform-barrier": "a barrier reached by only some threads of a workgroup",
    "division-by-zero": "arith.div or arith.mod by zero on an active thread",
    "wmma-replica": "gfx11 WMMA operands of lanes 16-31 that do not repeat lanes 0-15",
    "bad-rsrc": "a buffer resource over more bytes than its buffer holds",
    "rsrc-partial": "a buffer access with some of its bytes inside the resource and some outside",
}


@dataclass(frozen=True)
class Hazard:
    kind: str
    where: str  # the op, as Op.where() names it
    count: int  # threads (or bytes) it happened to, summed over the grid
    first_block: tuple[int, int, int]  # the first workgroup it was seen in

    def message(self) -> str:
        return f"{self.kind} at {self.where}: {KINDS[self.kind]} ({self.count}x, first in block {self.first_block})"


class HazardLog:
    """Hazards by (kind, op), in the order first seen."""

    def __init__(self) -> None:
        self.seen: dict[tuple[str, str], list] = {}

    def add(self, kind: str, where: str, count: int, block: tuple[int, int, int]) -> None:
        if count <= 0:
            return
        entry = self.seen.get((kind, where))
        if entry is None:
            self.seen[(kind, where)] = [count, block]
        else:
            entry[0] += count

    def hazards(self) -> tuple[Hazard, ...]:
        return tuple(Hazard(kind, where, n, block) for (kind, where), (n, block) in self.seen.items())
