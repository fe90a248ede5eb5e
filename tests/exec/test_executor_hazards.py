"""Every hazard the executor reports (rocke_py/exec/hazards.py) is caught when injected into a
tiny kernel, and the same kernel without the fault runs clean."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from kit import const, kernel_text, ptr

from rocke_py.exec.executor import run_kernel
from rocke_py.exec.hazards import KINDS

PRELUDE = [
    "%tid : i32 = gpu.thread_id (  ) { dim = i:0 }",
    "%lane : i32 = gpu.lane_id (  )",
    const("%zero", 0),
    const("%one", 1),
    const("%c64", 64),
    "%wave : i32 = arith.div ( %tid, %c64 )",
    '%s : smem<f16, [2x64]> = tile.smem_alloc (  ) { type = s:"smem<f16, [2x64]>" }',
    '%x : f32 = arith.constant (  ) { ity = s:"f32", value = f:1.0 }',
    '%h : f16 = arith.fptrunc ( %x ) { to = s:"f16" }',
]
PARAMS = [ptr("O", "f16"), "%O_bytes : i32"]


def hazards(body: list[str], threads: int = 128, **kw) -> dict[str, str]:
    text = kernel_text(PARAMS, PRELUDE + body, block=threads)
    out = run_kernel(text, {"O": np.zeros(4 * threads, np.float16)}, **kw)
    return {h.kind: h.message() for h in out.hazards}


# each wave writes its own row, then reads the other wave's row
EXCHANGE = [
    "tile.smem_store ( %s, %wave, %lane, %h ) { align = i:2 }",
    "tile.sync (  )",
    "%other : i32 = arith.sub ( %one, %wave )",
    "%v : f16 = tile.smem_load ( %s, %other, %lane ) { align = i:2, n = i:1 }",
]


def test_clean_exchange_has_no_hazard() -> None:
    assert hazards(EXCHANGE) == {}


def test_missing_barrier_is_a_race() -> None:
    found = hazards([line for line in EXCHANGE if line != "tile.sync (  )"])
    assert list(found) == ["lds-race"]
    assert "tile.smem_load (line" in found["lds-race"] and "%v = " in found["lds-race"]


def test_write_after_read_without_barrier_is_a_race() -> None:
    # each wave overwrites its own row, which the other wave has just read
    again = "tile.smem_store ( %s, %wave, %lane, %h ) { align = i:2 }"
    found = hazards(EXCHANGE + [again])
    assert list(found) == ["lds-race"] and "tile.smem_store" in found["lds-race"]
    assert hazards(EXCHANGE + ["tile.sync (  )", again]) == {}


def test_read_of_unwritten_lds() -> None:
    found = hazards(["%v : f16 = tile.smem_load ( %s, %zero, %lane ) { align = i:2, n = i:1 }"])
    assert list(found) == ["lds-uninit"]


def test_misaligned_and_out_of_bounds_lds() -> None:
    assert list(hazards(["tile.smem_store ( %s, %wave, %lane, %h ) { align = i:4 }"])) == ["lds-misaligned"]
    assert list(hazards(["tile.smem_store ( %s, %c64, %lane, %h ) { align = i:2 }"])) == ["lds-bounds"]


def test_readfirstlane_of_a_lane_value() -> None:
    assert hazards(["%w : i32 = gpu.readfirstlane ( %wave )"]) == {}
    assert list(hazards(["%w : i32 = gpu.readfirstlane ( %lane )"])) == ["not-uniform"]


def test_global_byte_written_twice() -> None:
    body = [
        "%rsrc : rsrc = tile.make_buffer_rsrc ( %O, %O_bytes )",
        const("%two", 2),
        "%off : i32 = arith.mul ( %lane, %two )",
        "tile.buffer_store ( %rsrc, %off, %h )",
    ]
    found = hazards(body)  # both waves store at the lane's offset
    assert (
        list(found) == ["global-rewrite"] and "64x" in found["global-rewrite"]
    )  # the lanes whose bytes were overwritten
    body[2] = "%off : i32 = arith.mul ( %tid, %two )"
    assert hazards(body) == {}


def under_lane_below(n: int, inner: list[str]) -> list[str]:
    return [
        const("%cut", n),
        '%low : i1 = arith.cmp ( %lane, %cut ) { pred = s:"slt" }',
        "scf.if ( %low )",
        "  region @then {",
        *["    " + line for line in inner],
        "  }",
    ]


def test_barrier_and_transpose_read_under_partial_masks() -> None:
    found = hazards(under_lane_below(32, ["tile.sync (  )"]))
    assert list(found) == ["nonuniform-barrier"]
    setup = ["tile.smem_store ( %s, %wave, %lane, %h ) { align = i:2 }", "tile.sync (  )"]
    read = "%tr : vec<f16x4> = tile.ds_read_tr16_b64 ( %s, %zero, %zero )"
    assert hazards(setup + [read]) == {}
    assert list(hazards(setup + under_lane_below(32, [read]))) == ["partial-wave"]


def test_mma_under_a_partial_wave() -> None:
    mma = [
        "%a : vec<f16x4> = vector.from_elements ( %h, %h, %h, %h )",
        '%cz : vec<f32x4> = arith.constant_vec (  ) { ity = s:"vec<f32x4>", value = i:0 }',
        '%d : vec<f32x4> = tile.mma ( %a, %a, %cz ) { op_id = s:"mfma_f32_16x16x16_f16" }',
    ]
    assert hazards(mma) == {}
    assert list(hazards(under_lane_below(16, mma))) == ["partial-wave"]


def test_loop_bounds_differ_in_a_workgroup() -> None:
    loop = [
        'scf.for ( %zero, %ub, %one ) { iter_args = l:[  ], iv = s:"%k", iv_type = s:"i32" }',
        "  region @body {",
        "    scf.yield (  ) { num = i:0 }",
        "  }",
    ]
    assert list(hazards(["%ub : i32 = arith.add ( %wave, %one )"] + loop)) == ["nonuniform-loop"]
    assert hazards(["%ub : i32 = arith.add ( %one, %one )"] + loop) == {}


ASYNC = [
    "%rsrc : rsrc = tile.make_buffer_rsrc ( %O, %O_bytes )",
    "%sa : i32 = tile.smem_addr ( %s )",
    const("%c4", 4),
    "%off : i32 = arith.mul ( %lane, %c4 )",
    const("%c128", 128),
    "%wb : i32 = arith.mul ( %wave, %c128 )",
    "%base : i32 = arith.add ( %sa, %wb )",
    "%ub : i32 = gpu.readfirstlane ( %base )",
]
ISSUE = "tile.async_buffer_load_lds ( %rsrc, %ub, %off ) { aux = i:2, dwords = i:1 }"
# lane l's dword lands at element 2l of row `wave`: read it back (own wave, after the wait)
READ = [
    const("%two", 2),
    "%col : i32 = arith.mul ( %lane, %two )",
    "%v : f16 = tile.smem_load ( %s, %wave, %col ) { align = i:2, n = i:1 }",
]


def test_async_load_lands_at_its_wait() -> None:
    wait = "tile.s_waitcnt (  ) { vmcnt = i:0 }"
    assert hazards(ASYNC[:7] + ["%ub : i32 = arith.add ( %base, %zero )", ISSUE, wait] + READ, threads=64) == {}
    assert hazards(ASYNC + [ISSUE, "tile.s_waitcnt (  ) { vmcnt = i:0 }"] + READ, threads=64) == {}
    early = hazards(ASYNC + [ISSUE] + READ, threads=64)
    assert set(early) == {"async-early", "lds-uninit", "async-unwaited"}
    weak = hazards(ASYNC + [ISSUE, ISSUE, "tile.s_waitcnt (  ) { vmcnt = i:1 }"] + READ, threads=64)
    assert set(weak) == {"async-early", "async-unwaited"}
    # the LDS-only barrier does not wait for the direct loads
    assert "async-early" in hazards(ASYNC + [ISSUE, "tile.sync_lds_only (  )"] + READ, threads=64)


def test_async_base_not_wave_uniform() -> None:
    body = ASYNC[:7] + ["%ub : i32 = arith.add ( %base, %lane )", ISSUE]
    assert "not-uniform" in hazards(body, threads=64)


def test_async_copy_past_its_allocation() -> None:
    body = ASYNC[:6] + [
        "%wb2 : i32 = arith.add ( %wb, %c128 )",
        "%base : i32 = arith.add ( %sa, %wb2 )",
        "%ub : i32 = gpu.readfirstlane ( %base )",
        ISSUE,
        "tile.sync (  )",
    ]
    assert "lds-bounds" in hazards(body)


def test_every_kind_is_tested() -> None:
    """Here, or (rsrc-partial: only the `ll` has raw buffer offsets) by the `ll` executor's tests."""
    here = open(__file__).read()
    ll = (Path(__file__).parent / "test_ll_executor.py").read_text()
    untested = [k for k in KINDS if f'"{k}"' not in here and f'("{k}",)' not in ll]
    assert untested == []


@pytest.mark.parametrize(
    "body, kind",
    [
        (["%q : i32 = arith.div ( %one, %zero )"], "division-by-zero"),
        (["tile.global_atomic_fadd ( %O, %c4096, %h )"], "atomic-bounds"),
        (["%r : rsrc = tile.make_buffer_rsrc ( %O, %c4096 )"], "bad-rsrc"),
    ],
)
def test_other_kinds(body: list[str], kind: str) -> None:
    assert list(hazards([const("%c4096", 4096)] + body, threads=64)) == [kind]


def test_gfx11_replicas_must_repeat() -> None:
    body = [
        const("%c16", 16),
        "%hi : i32 = arith.div ( %lane, %c16 )",
        '%hf : f32 = arith.constant (  ) { ity = s:"f32", value = f:2.0 }',
        '%odd : i1 = arith.cmp ( %hi, %one ) { pred = s:"eq" }',
        '%h2 : f16 = arith.fptrunc ( %hf ) { to = s:"f16" }',
        "%e : f16 = arith.select ( %odd, %h2, %h )",
        "%a : vec<f16x16> = vector.from_elements ( " + ", ".join(["%e"] * 16) + " )",
        "%b : vec<f16x16> = vector.from_elements ( " + ", ".join(["%h"] * 16) + " )",
        '%cz : vec<f32x8> = arith.constant_vec (  ) { ity = s:"vec<f32x8>", value = i:0 }',
        '%d : vec<f32x8> = tile.mma ( %a, %b, %cz ) { op_id = s:"wmma_f32_16x16x16_f16" }',
        '%d2 : vec<f32x8> = tile.mma ( %b, %b, %cz ) { op_id = s:"wmma_f32_16x16x16_f16" }',
    ]
    text = kernel_text(PARAMS, PRELUDE[:5] + PRELUDE[7:] + body, block=32, wave=32)
    out = run_kernel(text, {"O": np.zeros(4, np.float16)})
    assert [(h.kind, h.where.split(" = ")[0]) for h in out.hazards] == [("wmma-replica", "%d")]
