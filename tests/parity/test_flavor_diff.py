"""The three LLVM flavors of every emitting config differ only where docs/reference/llvm-ir.md §3
says: llvm22 -> llvm23 the datalayout line alone; llvm20 -> llvm22 the datalayout, the
make.buffer.rsrc declaration and calls (with llvm22's zext of the byte count), and the
pointer params' `nocapture` -> `captures(none)` on the define line."""

from __future__ import annotations

import engine_memo
import pytest
from layout import REPO

from rocke_py.engine.result import Emitted
from rocke_py.parity.inputs.configs import discover

EMITTING = [c for c in discover(REPO).configs if c.expect.emits]


def ll(data: bytes, flavor: str) -> list[str]:
    """Both engines' (equal) ll, this worker's kept results (other modules run the same jobs)."""
    out, c = engine_memo.py_emit(data, "ll", flavor), engine_memo.c_emit(data, "ll", flavor)
    assert out == c, f"engines disagree:\n py: {out}\n  c: {c}"
    assert isinstance(out, Emitted), out
    return out.text.split("\n")


@pytest.mark.parametrize("cfg", EMITTING, ids=[c.id for c in EMITTING])
def test_flavors_differ_only_where_the_reference_says(cfg) -> None:
    l20, l22, l23 = (ll(cfg.data, f) for f in ("llvm20", "llvm22", "llvm23"))
    assert len(l22) == len(l23)
    assert [i for i, (a, b) in enumerate(zip(l22, l23)) if a != b] == [0]
    assert l22[0].startswith('target datalayout = "e-p:64:64') and l23[0].startswith('target datalayout = "e-m:e-')
    zexts = [line for line in l22 if line.startswith("  %nb64.") and " = zext i32 " in line]
    rest = [line for line in l22 if line not in zexts]
    assert len(rest) == len(l20)
    for i, (a, b) in enumerate(zip(l20, rest)):
        if a == b:
            continue
        allowed = (
            i == 0
            or (a.startswith("define ") and a.replace("nocapture", "captures(none)") == b)
            or ("make.buffer.rsrc" in a and "make.buffer.rsrc" in b)
        )
        assert allowed, f"line {i + 1} differs outside the reference's places:\n  llvm20: {a}\n  llvm22: {b}"
