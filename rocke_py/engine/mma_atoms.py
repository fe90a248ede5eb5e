"""The MMA atoms the kernels use: op_id, shape, per-lane fragment and accumulator lengths.

Twin of rocke_c/src/mma_atoms.c. Lane layouts are docs/reference/conv-semantics.md §13; the op_ids
are docs/ir.md §4.5."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Optional

from .arch import Target
from .ir import vec, vec_or_scalar

IR_ELEM = {"fp16": "f16", "bf16": "bf16", "fp32": "f32"}


@dataclass(frozen=True)
class Atom:
    op_id: str
    kind: str  # "mfma", "wmma_gfx11", "wmma_gfx12", "wmma_gfx1250"
    m: int
    n: int
    k: int
    elem: str  # IR element type of A and B
    frag: int  # A/B elements per lane
    c_len: int  # accumulator slots per lane


def atom_kind(target: Target) -> str:
    if target.is_mfma:
        return "mfma"
    if target.is_gfx11:
        return "wmma_gfx11"
    return "wmma_gfx1250" if target.arch == "gfx1250" else "wmma_gfx12"


def make_atom(kind: str, elem: str, m: int, n: int, k: int) -> Atom:
    shape = f"{m}x{n}x{k}"
    if kind == "mfma":
        return Atom(f"mfma_f32_{shape}_{elem}", kind, m, n, k, elem, m * k // 64, m * n // 64)
    if kind == "wmma_gfx11":
        return Atom(f"wmma_f32_{shape}_{elem}", kind, m, n, k, elem, k, 8)
    if kind == "wmma_gfx12":
        return Atom(f"wmma_gfx12_f32_{shape}_{elem}", kind, m, n, k, elem, m * k // 32, 8)
    return Atom(f"wmma_gfx1250_f32_{shape}_{elem}", kind, m, n, k, elem, m * k // 32, 8)


def atom_for(target: Target, dtype: str, m: int, n: int, k: int) -> Atom:
    return make_atom(atom_kind(target), IR_ELEM[dtype], m, n, k)


def atom_by_op_id(op_id: str) -> Optional[Atom]:
    """The atom an op_id names, or None for an op_id outside docs/ir.md §4.5."""
    for kind, prefix in (
        ("wmma_gfx1250", "wmma_gfx1250_f32_"),
        ("wmma_gfx12", "wmma_gfx12_f32_"),
        ("wmma_gfx11", "wmma_f32_"),
        ("mfma", "mfma_f32_"),
    ):
        if op_id.startswith(prefix):
            shape, _, elem = op_id[len(prefix) :].partition("_")
            dims = shape.split("x")
            if elem not in IR_ELEM.values() or len(dims) != 3 or not all(d.isdigit() for d in dims):
                return None
            atom = make_atom(kind, elem, int(dims[0]), int(dims[1]), int(dims[2]))
            return atom if atom.op_id == op_id and atom_known(atom) else None
    return None


KNOWN_ATOMS = {
    "mfma": (
        ("f16", 32, 32, 8),
        ("f16", 16, 16, 16),
        ("f16", 32, 32, 16),
        ("f16", 16, 16, 32),
        ("bf16", 32, 32, 8),
        ("bf16", 16, 16, 16),
        ("bf16", 32, 32, 16),
        ("bf16", 16, 16, 32),
        ("f32", 16, 16, 4),
        ("f32", 32, 32, 2),
    ),
    "wmma_gfx11": (("f16", 16, 16, 16), ("bf16", 16, 16, 16)),
    "wmma_gfx12": (("f16", 16, 16, 16), ("bf16", 16, 16, 16)),
    "wmma_gfx1250": (("f16", 16, 16, 32), ("bf16", 16, 16, 32), ("f32", 16, 16, 4)),
}


def atom_known(atom: Atom) -> bool:
    return (atom.elem, atom.m, atom.n, atom.k) in KNOWN_ATOMS[atom.kind]


@functools.lru_cache(maxsize=256)  # pure; the verifier and the lowering ask per tile.mma op
def atom_types(op_id: str) -> Optional[tuple[str, str, str]]:
    atom = atom_by_op_id(op_id)
    if atom is None:
        return None
    frag = vec_or_scalar(atom.elem, atom.frag)
    return frag, frag, vec("f32", atom.c_len)
