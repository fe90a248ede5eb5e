"""Flipping only lds_k_outer changes the LDS layout and the fragment feed, nothing else.

For each K-outer config whose M-outer twin is valid, both kernels' `ir` texts are reduced
the same way: the ops docs/reference/conv-semantics.md §7 says change (tile allocations, LDS
stores, fragment reads and their joins) are dropped, then every pure op left without a use
(the lane arithmetic that only addressed them), then the names are renumbered in
first-definition order with dropped values shown as `%lds`. What is left — global loads,
descriptors, MMAs, epilogue — must be identical, and the dropped parts must really differ."""

from __future__ import annotations

import re

import pytest
from layout import REPO
from two_engines import both

from rocke_py.engine.result import Emitted

LDS_OPS = (
    "tile.smem_alloc",
    "tile.smem_store",
    "tile.smem_load",
    "tile.ds_read_tr16_b64",
    "tile.ds_read_tr16_b128",
    "vector.concat",
)
PURE_PREFIXES = ("arith.", "vector.", "gpu.lane_id")
LINE = re.compile(r"^(\s*)(?:(%[^=]+) = )?([a-z_]+\.[a-z_0-9]+) \((.*?)\)(.*)$")
CONFIGS = [
    "wgrad/11-kouter-cshuffle",
    "wgrad/13-kouter-atom16x16x16",
    "wgrad/15-gfx1250-kouter-fp32",
    "dgrad/11-kouter-cshuffle",
    "dgrad/12-kouter-atom16x16x16",
    "dgrad/13-gfx1250-kouter",
]


def kernel_ir(text: str) -> str:
    """Mode ir of both engines, which must agree."""
    out = both(text, "ir")
    assert isinstance(out, Emitted), out
    return out.text


def parse(ir: str) -> list[tuple[list[str], str, list[str], str]]:
    """(result names, op name, operand names, attrs) per op line."""
    ops = []
    for line in ir.splitlines():
        m = LINE.match(line)
        if m:
            results = [r.split(" : ")[0].strip() for r in m.group(2).split(", %")] if m.group(2) else []
            results = [r if r.startswith("%") else "%" + r for r in results]
            operands = [v.strip() for v in m.group(4).split(",") if v.strip()]
            ops.append((results, m.group(3), operands, m.group(5)))
    return ops


def reduce(ir: str) -> tuple[list[str], int]:
    ops = parse(ir)
    dropped = {i for i, op in enumerate(ops) if op[1] in LDS_OPS}
    while True:
        used = {v for i, op in enumerate(ops) if i not in dropped for v in op[2]}
        dead = {
            i
            for i, op in enumerate(ops)
            if i not in dropped and op[0] and not any(r in used for r in op[0]) and op[1].startswith(PURE_PREFIXES)
        }
        if not dead:
            break
        dropped |= dead
    gone = {r for i in dropped for r in ops[i][0]}
    names: dict[str, str] = {}
    # constants are bound once, so their position depends on who asked first: show them by value
    for results, name, _, rest in ops:
        if name == "arith.constant":
            names[results[0]] = "#" + rest.strip()
    out = []
    count = 0
    for i, (results, name, operands, rest) in enumerate(ops):
        if i in dropped or name == "arith.constant":
            continue
        args = ["%lds" if v in gone else names.get(v, v) for v in operands]
        for r in results:
            names[r] = f"%v{count}"
            count += 1
        # iter_args and iv names are builder-chosen and stable; attrs are kept whole
        out.append(f"{', '.join(names[r] for r in results)} {name} ({', '.join(args)}){rest}")
    return out, len(dropped)


def flipped(text: str) -> str:
    lines = [ln for ln in text.splitlines() if not ln.startswith("lds_k_outer")]
    out, in_spec = [], False
    for ln in lines:
        out.append(ln)
        if ln.strip() == "[spec]":
            in_spec = True
            out.append("lds_k_outer = false")
    assert in_spec
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("cid", CONFIGS)
def test_flip_changes_only_the_lds_tile_and_fragment_feed(cid: str) -> None:
    text = next((REPO / "parity_configs").glob(f"{cid}.toml")).read_text()
    k_outer = kernel_ir(text)
    m_outer = kernel_ir(flipped(text))
    assert "tile.ds_read_tr16" in k_outer and "tile.ds_read_tr16" not in m_outer
    reduced_k, dropped_k = reduce(k_outer)
    reduced_m, dropped_m = reduce(m_outer)
    assert dropped_k and dropped_m
    assert reduced_k == reduced_m, "the kernels differ outside the LDS tile and the fragment feed"
    # the transpose on store is gone: one wide LDS store per chunk instead of one per element
    assert k_outer.count("tile.smem_store") < m_outer.count("tile.smem_store")
