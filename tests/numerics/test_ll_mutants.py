"""The lowering's seeded faults (rocke_py/numerics/ll_mutants.py): each class yields the same
mutants every time, re-applies to the `ll` of another size, and one mutant of each class is
killed by the IR and `ll` runs in lockstep, while the unmutated `ll` passes."""

from __future__ import annotations

import pytest
from numerics_kit import config_path

from rocke_py.numerics import ll_mutants as lm
from rocke_py.numerics import mutants as mu
from rocke_py.numerics.check import check_all_sizes, emit_text
from rocke_py.numerics.variants import check_sizes

#: a config with sites of each class, and one mutant id of it that must be killed
KILLED = [
    ("wgrad/11-kouter-cshuffle", "ll-mma-operand-swap:mfma.f32.32x32x16.f16#0"),
    ("fwd/00-baseline", "ll-gep-offset:getelementptr#0:+1"),
    ("wgrad/11-kouter-cshuffle", "ll-dropped-barrier:s.barrier#0"),
    ("fwd/04-async-c64", "ll-wait-counter:s.waitcnt#0:+1"),
    ("fwd/00-baseline", "ll-buffer-offset:load#0:+4"),
    ("fwd/00-baseline", "ll-pool-alias:offset#0:onto0"),
]


def text_of(cid: str) -> str:
    return config_path(cid).read_text()


def size_lls(cid: str) -> list[str]:
    return [emit_text(t, "ll", "py", mu.LL_FLAVOR[0]) for _, t in check_sizes(text_of(cid), True)]


@pytest.mark.parametrize("cid,mid", KILLED, ids=[m.split(":")[0] for _, m in KILLED])
def test_each_class_is_deterministic_and_reapplies(cid: str, mid: str) -> None:
    small, edge = size_lls(cid)
    cls = mu.class_of(mid)
    ids = [m.id for m in lm.CLASSES[cls](small)]
    assert mid in ids and ids == [m.id for m in lm.CLASSES[cls](small)]
    assert len(set(ids)) == len(ids)
    assert mu.mutate(mid, edge) != edge  # the same site exists at the edge size


@pytest.mark.parametrize("cid,mid", KILLED, ids=[m.split(":")[0] for _, m in KILLED])
def test_one_mutant_of_each_class_is_killed(cid: str, mid: str) -> None:
    mutant = next(m for m in lm.CLASSES[mu.class_of(mid)](size_lls(cid)[0]) if m.id == mid)
    verdict = mu.judge(cid, text_of(cid), mutant)
    assert verdict.status == mu.KILLED, verdict
    assert " ll llvm22: " in verdict.detail


def test_the_unmutated_ll_passes() -> None:
    outcomes = check_all_sizes(
        "fwd/04", text_of("fwd/04-async-c64"), small=True, level="both", flavors=mu.LL_FLAVOR, ll_mutate=lambda t: t
    )
    assert [o.level for o in outcomes] == ["ir", "ll llvm22"] * 2 and all(o.ok for o in outcomes)


def test_waits_are_weakened_only_where_they_order_async_loads() -> None:
    assert list(lm.wait_counter(size_lls("fwd/00-baseline")[0])) == []  # no direct-to-LDS load
    ll = size_lls("fwd/04-async-c64")[0]
    lines = ll.split("\n")
    for m in lm.wait_counter(ll):
        at = next(i for i, (a, b) in enumerate(zip(lines, m.text.split("\n"))) if a != b)
        assert not lm.is_full_wait(lines[at + 1]) and not lm.is_full_wait(lines[at - 1]), m.description


def test_pool_alias_moves_only_onto_a_live_allocation() -> None:
    """fwd/01: the cshuffle buffer (pool offset 34816) is used only after the tiles at 0 and
    17408 are dead, so moving it onto them is the sharing the lowering may do, not a fault."""
    ll = size_lls("fwd/01-cshuffle")[0]
    assert [m.id for m in lm.pool_alias(ll)] == ["ll-pool-alias:offset#0:onto0"]
    spans = lm.allocations(ll.split("\n"))
    assert sorted(spans) == [0, 17408, 34816]
    assert spans[34816][0] > max(spans[0][1], spans[17408][1])
