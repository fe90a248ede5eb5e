"""The check is itself tested: each fault seeded into an emitted kernel's IR
text makes `numerics` fail (wrong numbers, an unwritten element or a hazard), while the same
kernel without the fault passes."""

from __future__ import annotations

import re
from typing import Callable

import pytest
from numerics_kit import config_path

from rocke_py.numerics.check import check_config, emit_text
from rocke_py.numerics.variants import small_variant


def swap_mma_operands(ir: str) -> str:
    return re.sub(r"tile\.mma \( (%\w+), (%\w+), ", r"tile.mma ( \2, \1, ", ir)


def drop_lane_exchange(ir: str) -> str:
    """A transpose read becomes the plain read of each lane's own run (no exchange)."""
    return re.sub(
        r"tile\.ds_read_tr16_b(64|128) \( (%\w+), (%\w+), (%\w+) \)",
        lambda m: (
            f"tile.smem_load ( {m[2]}, {m[3]}, {m[4]} ) "
            + ("{ n = i:4, align = i:8 }" if m[1] == "64" else "{ n = i:8, align = i:16 }")
        ),
        ir,
    )


def mix_k_orders(ir: str) -> str:
    """gfx1250's 16x16x32 WMMA: A's two K halves swapped (B's left in order), so A and B
    no longer share one K order."""
    a_names = set(re.findall(r"tile\.mma \( (%\w+), ", ir))
    pattern = r"(%\w+) : (vec<\w+>) = vector\.concat \( (%\w+), (%\w+) \)"

    def swap(m: re.Match) -> str:
        return f"{m[1]} : {m[2]} = vector.concat ( {m[4]}, {m[3]} )" if m[1] in a_names else m[0]

    return re.sub(pattern, swap, ir)


def drop_async_wait(ir: str) -> str:
    return re.sub(r"\n *tile\.s_waitcnt \(  \) \{ vmcnt = i:\d+ \}", "", ir)


def weaken_async_wait(ir: str) -> str:
    return re.sub(r"tile\.s_waitcnt \(  \) \{ vmcnt = i:\d+ \}", "tile.s_waitcnt (  ) { vmcnt = i:99 }", ir)


def remove_barrier(ir: str) -> str:
    """The first barrier (between the tile stores to LDS and the MMA phase) removed."""
    return ir.replace("        tile.sync (  )\n", "", 1)


def shift_index(ir: str) -> str:
    """The first vector load of a tensor reads one 16-bit element further on."""
    m = re.search(r"\n( +)(%\w+ : vec<[^=]+= tile\.buffer_load \( %\w+, )(%\w+) \)", ir)
    assert m is not None
    indent, head, off = m[1], m[2], m[3]
    shifted = (
        f'\n{indent}%fault_two : i32 = arith.constant (  ) {{ ity = s:"i32", value = i:2 }}'
        f"\n{indent}%fault_off : i32 = arith.add ( {off}, %fault_two )"
        f"\n{indent}{head}%fault_off )"
    )
    return ir[: m.start()] + shifted + ir[m.end() :]


FAULTS: list[tuple[str, str, Callable[[str], str], str]] = [
    # (name, config, fault, what shows it: wrong numbers or a hazard kind)
    ("swapped MMA operands", "wgrad/00-baseline", swap_mma_operands, "wrong"),
    ("dropped lane exchange (gfx950)", "wgrad/11-kouter-cshuffle", drop_lane_exchange, "wrong"),
    ("dropped lane exchange (gfx1250)", "dgrad/13-gfx1250-kouter", drop_lane_exchange, "wrong"),
    ("mixed gfx1250 K orders", "wgrad/15-gfx1250-kouter-fp32", mix_k_orders, "wrong"),
    ("dropped async wait", "fwd/04-async-c64", drop_async_wait, "async-early"),
    ("weakened async wait", "wgrad/12-kouter-async-split-k4-fp32", weaken_async_wait, "async-early"),
    ("removed barrier", "fwd/00-baseline", remove_barrier, "lds-race"),
    ("index shifted by one", "dgrad/00-baseline", shift_index, "wrong"),
]


@pytest.mark.parametrize("name,cid,fault,shows", FAULTS, ids=[f[0] for f in FAULTS])
def test_seeded_fault_fails_numerics(name: str, cid: str, fault, shows: str) -> None:
    # N = 8: the async kernels then run two K steps per slice (a wait has work to cover)
    text = small_variant(config_path(cid).read_text(), {"N": 8 if "async" in cid else 2, "Hi": 9, "Wi": 9})
    ir = emit_text(text, "ir", "py")
    assert check_config(cid, text, ir=ir).ok
    faulty = fault(ir)
    assert faulty != ir
    out = check_config(cid, text, ir=faulty)
    assert not out.ok and out.error is None
    if shows == "wrong":
        assert out.wrong > 0
    else:
        assert any(h.startswith(shows) for h in out.hazards), out.hazards
