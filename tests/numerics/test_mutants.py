"""Seeded faults (rocke_py/numerics/mutants.py, docs/numerics.md "Seeded faults"): each fault
class yields mutants on a config where it applies, re-applies by site id to another size's IR,
samples deterministically; selected mutants are killed at the default sizes of the mutant run
(the --small sizes) and the unmutated kernels pass there. The kill rates are
bench/bench_mutants.py's, never measured here."""

from __future__ import annotations

import pytest
from numerics_kit import config_path

from rocke_py.numerics import mutants as mu
from rocke_py.numerics.check import check_all_sizes, emit_text
from rocke_py.numerics.variants import check_sizes


def text_of(cid: str) -> str:
    return config_path(cid).read_text()


def size_irs(cid: str) -> list[str]:
    """The IR of each default size (small, edge)."""
    return [emit_text(t, "ir", "py") for _, t in check_sizes(text_of(cid), True)]


APPLIES = [
    ("operand-swap", "wgrad/00-baseline"),
    ("off-by-one", "fwd/00-baseline"),
    ("dropped-barrier", "fwd/01-cshuffle"),
    ("lane-map", "dgrad/00-baseline"),
    ("transpose-without-exchange", "wgrad/11-kouter-cshuffle"),
    ("transpose-without-exchange", "dgrad/13-gfx1250-kouter"),
    ("inverted-predicate", "dgrad/14-pointwise-stride2-zeros"),
    ("k-loop-trip", "wgrad/07-split-k4-fp32"),
    ("dropped-split-k-slice", "wgrad/09-split-k4-bf16-cshuffle"),
    ("dropped-split-k-slice", "wgrad/20-split-k-runtime"),
    ("weakened-async-wait", "fwd/04-async-c64"),
    ("lds-offset", "wgrad/12-kouter-async-split-k4-fp32"),
    ("batch-stride", "dgrad/14-pointwise-stride2-zeros"),
]


def test_every_class_is_covered() -> None:
    assert {cls for cls, _ in APPLIES} == set(mu.CLASSES)


@pytest.mark.parametrize("cls,cid", APPLIES, ids=[f"{c}-{i}" for c, i in APPLIES])
def test_class_yields_mutants(cls: str, cid: str) -> None:
    small, edge = size_irs(cid)
    found = list(mu.CLASSES[cls](small))
    assert found, f"{cls} yields no mutant of {cid}"
    ids = [m.id for m in found]
    assert len(set(ids)) == len(ids)
    assert all(m.text != small and mu.class_of(m.id) == cls for m in found)
    assert ids == [m.id for m in mu.CLASSES[cls](small)]  # deterministic
    first = found[0]
    assert mu.mutate(first.id, small) == first.text
    assert mu.mutate(first.id, edge) != edge  # the site id finds the same site at the edge size
    picked = mu.sample(small, cls, 3, seed=1, salt=cid)
    assert 1 <= len(picked) <= 3
    assert [m.id for m in picked] == [m.id for m in mu.sample(small, cls, 3, seed=1, salt=cid)]


@pytest.mark.parametrize(
    "cls,cid",
    [
        ("transpose-without-exchange", "wgrad/00-baseline"),  # M-outer: no transpose read
        ("dropped-split-k-slice", "fwd/00-baseline"),
        ("weakened-async-wait", "wgrad/07-split-k4-fp32"),
        ("batch-stride", "wgrad/03-pointwise-1x1"),  # flat pixel offsets: no image stride
    ],
)
def test_class_without_sites(cls: str, cid: str) -> None:
    assert list(mu.CLASSES[cls](size_irs(cid)[0])) == []


def test_unknown_site_leaves_text() -> None:
    ir = size_irs("fwd/00-baseline")[0]
    assert mu.mutate("dropped-barrier:tile.sync#99", ir) == ir


KILLED = [
    # required: the image stride of dgrad/14 (its small size has N = 1, the edge size N >= 2)
    ("dgrad/14-pointwise-stride2-zeros", "batch-stride:arith.mul#0:+1"),
    # required: one slice fewer for each wgrad split-K config
    ("wgrad/02-split-k4-fp16-cshuffle", "dropped-split-k-slice:grid#0:z-1"),
    ("wgrad/07-split-k4-fp32", "dropped-split-k-slice:grid#0:z-1"),
    ("wgrad/09-split-k4-bf16-cshuffle", "dropped-split-k-slice:grid#0:z-1"),
    ("wgrad/12-kouter-async-split-k4-fp32", "dropped-split-k-slice:grid#0:z-1"),
    ("wgrad/14-basic-split-k4-fp32", "dropped-split-k-slice:grid#0:z-1"),
    # one of every other class
    ("wgrad/20-split-k-runtime", "dropped-split-k-slice:gpu.block_id#2:pinned"),
    ("wgrad/00-baseline", "operand-swap:tile.mma#0"),
    ("fwd/00-baseline", "off-by-one:arith.constant#0:+1"),
    ("fwd/00-baseline", "dropped-barrier:tile.sync#0"),
    ("dgrad/00-baseline", "lane-map:arith.mod#0:x2"),
    ("wgrad/11-kouter-cshuffle", "transpose-without-exchange:tile.ds_read_tr16_b64#0"),
    ("dgrad/13-gfx1250-kouter", "transpose-without-exchange:tile.ds_read_tr16_b128#0"),
    ("fwd/00-baseline", "inverted-predicate:arith.cmp#0"),
    ("wgrad/07-split-k4-fp32", "k-loop-trip:scf.for#0:ub+step"),
    ("fwd/04-async-c64", "weakened-async-wait:tile.s_waitcnt#0:+1"),
    ("dgrad/06-split-k2-fp32", "lds-offset:tile.smem_load#0:row+1"),
    ("fwd/07-wmma-gfx1250", "batch-stride:arith.mul#0:-1"),
]


@pytest.mark.parametrize("cid,mid", KILLED, ids=[f"{c}-{m}" for c, m in KILLED])
def test_mutant_is_killed(cid: str, mid: str) -> None:
    small = size_irs(cid)[0]
    mutant = next((m for m in mu.CLASSES[mu.class_of(mid)](small) if m.id == mid), None)
    assert mutant is not None, f"{cid} has no mutant {mid}"
    verdict = mu.judge(cid, text_of(cid), mutant)
    assert verdict.status == mu.KILLED, verdict


@pytest.mark.parametrize("cid", ["dgrad/14-pointwise-stride2-zeros", "wgrad/07-split-k4-fp32"])
def test_unmutated_kernel_survives(cid: str) -> None:
    """The kills are the mutations': the same run with an identity mutation passes."""
    outcomes = check_all_sizes(cid, text_of(cid), engine="py", small=True, mutate=lambda ir: ir)
    assert [o.label for o in outcomes] == ["small", "edge"]
    assert all(o.ok for o in outcomes), [mu.failure(o) for o in outcomes if not o.ok]


def test_equivalent_survivor_is_explained() -> None:
    """A survivor in the table is reported equivalent, with its reason."""
    cid, mid = "dgrad/14-pointwise-stride2-zeros", "k-loop-trip:scf.for#0:step*2"
    mutant = next(m for m in mu.k_loop_trip(size_irs(cid)[0]) if m.id == mid)
    verdict = mu.judge(cid, text_of(cid), mutant)
    assert verdict.status == mu.EQUIV and "one step" in verdict.detail


def test_an_async_copy_moved_off_its_dword_is_killed() -> None:
    """fwd/04: the async copy's LDS base 8192 -> 8193. The executor used to round the byte
    address down to its 2-byte granule, so the copy landed where it did and the mutant lived;
    an async `.lds` copy's destination must be a multiple of 4 (lds-misaligned)."""
    text = text_of("fwd/04-async-c64")
    small = size_irs("fwd/04-async-c64")[0]
    moved = [m for m in mu.CLASSES["off-by-one"](small) if m.description.endswith("8192 -> 8193")]
    assert moved
    outcomes = check_all_sizes("fwd/04", text, small=True, mutate=lambda ir: mu.mutate(moved[0].id, ir))
    assert all(any(h.startswith("lds-misaligned at tile.async_buffer_load_lds") for h in o.hazards) for o in outcomes)
