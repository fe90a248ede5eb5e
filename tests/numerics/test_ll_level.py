"""The `ll` level of numerics: every emitting config's `ll`, in every flavor, gives the
reference's bits at the small size and follows its IR run in lockstep; a fault in the `ll`
(swapped MMA operands, a moved LDS address, a dropped barrier, a weakened wait) is caught and
named by its `ll` line."""

from __future__ import annotations

import re

import pytest
from numerics_kit import REPO, config_path

from rocke_py.facts import FLAVORS
from rocke_py.numerics.check import check_levels
from rocke_py.numerics.run import select
from rocke_py.numerics.variants import small_variant
from rocke_py.parity.cli import main

CONFIGS = [c.id for c in select(REPO, [])]


def small(cid: str) -> str:
    return small_variant(config_path(cid).read_text())


@pytest.mark.parametrize("cid", CONFIGS)
def test_every_flavor_is_bitwise_and_in_lockstep(cid: str) -> None:
    """Also the IR level's own check of every config's small variant (its run is the one the
    `ll` runs follow: a second run of it would compute the same outcome)."""
    outcomes = check_levels(cid, small(cid), level="both")
    assert [o.level for o in outcomes] == ["ir"] + [f"ll {f}" for f in FLAVORS]
    for o in outcomes:
        assert o.error is None and o.hazards == () and o.lockstep is None, (o.level, o.error, o.hazards, o.lockstep)
        assert o.mismatch == () and o.too_large is None and o.ok, (o.level, o.mismatch, o.too_large)
        assert o.wrong == 0 and o.unwritten == 0 and o.max_error == 0.0 and o.bitwise, o.level


def ll_run(cid: str, mutate) -> object:
    ir, ll = check_levels(cid, small(cid), level="both", flavors=("llvm22",), ll_mutate=mutate)
    assert ir.ok
    return ll


def one(pattern: str, repl: str):
    def mutate(text: str) -> str:
        out, n = re.subn(pattern, repl, text, count=1)
        assert n == 1, pattern
        return out

    return mutate


def test_swapped_mma_operands_depart_at_the_mma() -> None:
    ll = ll_run(
        "wgrad/11-kouter-cshuffle",
        one(r"(mfma\.f32\.32x32x16\.f16\(<8 x half> )(%[\w.]+)(, <8 x half> )(%[\w.]+)", r"\1\4\3\2"),
    )
    assert not ll.ok and ll.wrong > 0
    assert re.match(
        r"%\S+ = llvm\.amdgcn\.mfma\.f32\.32x32x16\.f16 \(ll line \d+\): the mma-a values differ", ll.lockstep
    )


def test_a_moved_lds_address_departs_at_the_store() -> None:
    ll = ll_run(
        "wgrad/11-kouter-cshuffle",
        one(
            r"(getelementptr inbounds \[\d+ x \[\d+ x half\]\], ptr addrspace\(3\) [^,]+, i32 0, i32 [^,]+, i32 )%\S+",
            r"\g<1>7",
        ),
    )
    assert not ll.ok
    assert ll.lockstep is not None and ll.lockstep.startswith("store (ll line ")
    assert "tile.smem_store" in ll.lockstep


def test_a_dropped_barrier_is_a_race() -> None:
    ll = ll_run("wgrad/11-kouter-cshuffle", one(r"  call void @llvm\.amdgcn\.s\.barrier\(\)\n", ""))
    assert not ll.ok
    assert any(h.startswith("lds-race at ") for h in ll.hazards)


def test_a_weakened_wait_lands_async_loads_late() -> None:
    """fwd/04 (gfx950, direct-to-LDS loads): the first stage's wait, vmcnt(8) (imm 3960: the
    next stage's 8 copies may stay in flight), becomes vmcnt(63) (imm 49279), so this stage's
    copies have not landed when its tile is read."""
    ll = ll_run("fwd/04-async-c64", one(r"s\.waitcnt\(i32 3960\)", "s.waitcnt(i32 49279)"))
    assert not ll.ok
    assert any(h.startswith("async-early at ") for h in ll.hazards)


def test_cli_levels(capsys) -> None:
    ids = ["fwd/03-pointwise-1x1"]
    assert main(["numerics", *ids, "--small", "-j", "1", "--level", "ll", "--root", str(REPO)]) == 0
    text = capsys.readouterr().out
    assert "ll llvm20" in text and "ll llvm23" in text and " ir " not in text
    assert "ll (every flavor at the small size)" in text
    assert main(["numerics", *ids, "--small", "-j", "1", "--level", "ir", "--root", str(REPO)]) == 0
    text = capsys.readouterr().out
    assert " ir " in text and "ll llvm" not in text
    assert main(["numerics", *ids, "--small", "-j", "1", "--root", str(REPO)]) == 0
    text = capsys.readouterr().out
    assert " ir " in text and "ll llvm22" in text and "in lockstep" in text
