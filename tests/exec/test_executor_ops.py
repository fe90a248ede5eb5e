"""The executor's op semantics (docs/ir.md §4) on tiny hand-written kernels."""

from __future__ import annotations

import numpy as np
import pytest
from kit import const, fconst, kernel_text, ptr

from rocke_py.exec.executor import ExecError, run_kernel
from rocke_py.exec.fp import bf16_bits, bf16_to_f32

STORE_I32 = [
    "%rsrc : rsrc = tile.make_buffer_rsrc ( %O, %O_bytes )",
    "%tid : i32 = gpu.thread_id (  ) { dim = i:0 }",
    const("%four", 4),
    "%off : i32 = arith.mul ( %tid, %four )",
]


def store(value: str) -> str:
    return f"tile.buffer_store ( %rsrc, %off, {value} )"


def run_i32(body: list[str], threads: int = 64, wave: int = 64, **kw) -> np.ndarray:
    text = kernel_text([ptr("O", "i32"), "%O_bytes : i32"], STORE_I32 + body, block=threads, wave=wave)
    out = run_kernel(text, {"O": np.full(threads, -99, dtype=np.int32)}, **kw)
    assert out.ok, [h.message() for h in out.hazards]
    return out.buffers["O"]


def test_integer_division_truncates_toward_zero() -> None:
    body = [
        const("%c10", 10),
        const("%m7", -7),
        "%x : i32 = arith.sub ( %tid, %c10 )",
        "%q : i32 = arith.div ( %x, %m7 )",
        "%r : i32 = arith.mod ( %x, %m7 )",
        const("%c100", 100),
        "%q100 : i32 = arith.mul ( %q, %c100 )",
        "%v : i32 = arith.add ( %q100, %r )",
        store("%v"),
    ]
    x = np.arange(64) - 10
    q = np.trunc(x / -7).astype(int)
    assert run_i32(body).tolist() == (q * 100 + (x - q * -7)).tolist()


def test_cmp_ult_select_min_max() -> None:
    body = [
        const("%c3", 3),
        const("%c40", 40),
        "%x : i32 = arith.sub ( %tid, %c3 )",
        '%u : i1 = arith.cmp ( %x, %c40 ) { pred = s:"ult" }',
        '%s : i1 = arith.cmp ( %x, %c40 ) { pred = s:"slt" }',
        "%both : i1 = arith.and ( %u, %s )",
        "%lo : i32 = arith.min ( %x, %c3 )",
        "%hi : i32 = arith.max ( %x, %c40 )",
        "%v : i32 = arith.select ( %both, %lo, %hi )",
        store("%v"),
    ]
    x = np.arange(64) - 3
    both = (x >= 0) & (x < 40)  # ult rejects the negative x
    assert run_i32(body).tolist() == np.where(both, np.minimum(x, 3), np.maximum(x, 40)).tolist()


def test_fptrunc_rounds_to_nearest_even_and_bitcast() -> None:
    # f32 values exactly between two bf16 (and two f16) values: the even one wins
    ties = np.array([1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-11, 1 + 3 * 2**-11], dtype=np.float32)
    body = [
        "%rin : rsrc = tile.make_buffer_rsrc ( %I, %I_bytes )",
        '%x : f32 = tile.buffer_load ( %rin, %off ) { elem = s:"f32", n = i:1 }',
        '%b : bf16 = arith.fptrunc ( %x ) { to = s:"bf16" }',
        '%h : f16 = arith.fptrunc ( %x ) { to = s:"f16" }',
        "%pair : vec<bf16x2> = vector.from_elements ( %b, %b )",
        "%hp : vec<f16x2> = vector.from_elements ( %h, %h )",
        '%bi : i32 = arith.bitcast ( %pair ) { to = s:"i32" }',
        '%hi : i32 = arith.bitcast ( %hp ) { to = s:"i32" }',
        "tile.buffer_store ( %rsrc, %off, %bi )",
        "%rh : rsrc = tile.make_buffer_rsrc ( %H, %H_bytes )",
        "tile.buffer_store ( %rh, %off, %hi )",
    ]
    params = [ptr("O", "i32"), ptr("I", "f32"), ptr("H", "i32"), "%O_bytes : i32", "%I_bytes : i32", "%H_bytes : i32"]
    text = kernel_text(params, STORE_I32 + body, block=64)
    x = np.resize(ties, 64)
    out = run_kernel(text, {"O": np.zeros(64, np.int32), "I": x, "H": np.zeros(64, np.int32)})
    bits = out.buffers["O"].view(np.uint16).reshape(64, 2)[:, 0]
    assert (bf16_to_f32(bits) == bf16_to_f32(bf16_bits(x))).all()
    assert bf16_to_f32(bits[:2]).tolist() == [1.0, 1 + 4 * 2**-8]
    halves = out.buffers["H"].view(np.float16).reshape(64, 2)[:, 0]
    assert halves[2:4].astype(np.float64).tolist() == [1.0, 1 + 4 * 2**-11]


def test_buffer_bounds_read_zero_and_drop_stores() -> None:
    body = [
        "%rin : rsrc = tile.make_buffer_rsrc ( %I, %I_bytes )",
        const("%two", 2),
        "%o2 : i32 = arith.sub ( %off, %two )",  # lane 0 straddles the start, the last lanes the end
        '%v : vec<i32x1> = tile.buffer_load ( %rin, %off ) { elem = s:"i32", n = i:1 }',
        "%e : i32 = vector.extract ( %v ) { index = i:0 }",
        const("%limit", 100),
        "%r2 : rsrc = tile.make_buffer_rsrc ( %O, %limit )",
        "tile.buffer_store ( %r2, %o2, %e )",
    ]
    text = kernel_text(
        [ptr("O", "i32"), ptr("I", "i32"), "%O_bytes : i32", "%I_bytes : i32"], STORE_I32[:1] + STORE_I32[1:] + body
    )
    data = np.arange(1, 65, dtype=np.int32)
    out = run_kernel(text, {"O": np.zeros(64, np.int32), "I": data}, {"I_bytes": 4 * 50})
    got = out.buffers["O"].view(np.uint8)
    want = np.zeros(256, np.uint8)
    src = np.where(np.arange(64) < 50, data, 0).astype(np.int32).view(np.uint8)
    want[:100] = np.concatenate([src[2:], np.zeros(2, np.uint8)])[:100]
    assert got.tolist() == want.tolist()
    assert not out.hazards


def test_scf_if_and_for_per_thread() -> None:
    """A loop whose bound depends on the workgroup (uniform inside it), an if per thread."""
    body = [
        "%bid : i32 = gpu.block_id (  ) { dim = i:0 }",
        const("%zero", 0),
        const("%one", 1),
        "%ub : i32 = arith.add ( %bid, %one )",
        "%sum : i32 = scf.for ( %zero, %ub, %one, %zero ) "
        '{ iter_args = l:[ { name = s:"%acc", type = s:"i32" } ], iv = s:"%k", iv_type = s:"i32" }',
        "  region @body {",
        "    %a2 : i32 = arith.add ( %acc, %k )",
        "    scf.yield ( %a2 ) { num = i:1 }",
        "  }",
        const("%c8", 8),
        "%tmod : i32 = arith.mod ( %tid, %c8 )",
        '%odd : i1 = arith.cmp ( %tmod, %one ) { pred = s:"eq" }',
        const("%c64", 64),
        "%row : i32 = arith.mul ( %bid, %c64 )",
        "%at : i32 = arith.add ( %row, %tid )",
        "%boff : i32 = arith.mul ( %at, %four )",
        "scf.if ( %odd )",
        "  region @then {",
        "    tile.buffer_store ( %rsrc, %boff, %sum )",
        "  }",
    ]
    text = kernel_text([ptr("O", "i32"), "%O_bytes : i32"], STORE_I32 + body, block=64, grid=(3, 1, 1))
    out = run_kernel(text, {"O": np.full(192, -1, np.int32)}, chunk_threads=128)
    got = out.buffers["O"].reshape(3, 64)
    for b in range(3):
        want = np.where(np.arange(64) % 8 == 1, sum(range(b + 1)), -1)
        assert got[b].tolist() == want.tolist()
    assert out.ok and out.stats.chunks == 2


def test_atomics_add_in_f32_and_packed_f16() -> None:
    body = [
        "%tid : i32 = gpu.thread_id (  ) { dim = i:0 }",
        const("%c4", 4),
        "%slot : i32 = arith.mod ( %tid, %c4 )",
        fconst("%half", 0.5),
        "tile.global_atomic_fadd ( %F, %slot, %half )",
        const("%two", 2),
        "%pair : i32 = arith.mul ( %slot, %two )",
        '%h : f16 = arith.fptrunc ( %half ) { to = s:"f16" }',
        "%hv : vec<f16x2> = vector.from_elements ( %h, %h )",
        "tile.global_atomic_fadd ( %P, %pair, %hv )",
    ]
    params = ["%F : ptr<f32,global> { noalias = b:true }", "%P : ptr<f16,global> { noalias = b:true }"]
    text = kernel_text(params, body, block=64)
    out = run_kernel(text, {"F": np.zeros(4, np.float32), "P": np.full(8, 2048, np.float16)})
    assert out.buffers["F"].tolist() == [8.0] * 4
    # 2048 + 0.5 rounds back to 2048 in f16 (ulp 2), each add rounded on its own
    assert out.buffers["P"].tolist() == [2048.0] * 8
    assert out.ok


def test_vector_ops() -> None:
    body = [
        '%cz : vec<i32x4> = arith.constant_vec (  ) { ity = s:"vec<i32x4>", value = i:0 }',
        "%v1 : vec<i32x4> = vector.insert ( %cz, %tid ) { index = i:2 }",
        "%p : vec<i32x2> = vector.from_elements ( %four, %tid )",
        "%cat : vec<i32x6> = vector.concat ( %v1, %p )",
        "%e2 : i32 = vector.extract ( %cat ) { index = i:2 }",
        "%e4 : i32 = vector.extract ( %cat ) { index = i:4 }",
        "%e5 : i32 = vector.extract ( %cat ) { index = i:5 }",
        "%s : i32 = arith.add ( %e2, %e5 )",
        "%v : i32 = arith.mul ( %s, %e4 )",
        store("%v"),
    ]
    assert run_i32(body).tolist() == (np.arange(64) * 2 * 4).tolist()


def test_unknown_op_and_missing_input_are_errors() -> None:
    with pytest.raises(ExecError, match="no semantics for arith.frobnicate"):
        run_i32(["%x : i32 = arith.frobnicate ( %tid )"])
    text = kernel_text([ptr("O", "i32"), "%n : i32"], ["%t : i32 = gpu.thread_id (  ) { dim = i:0 }"])
    with pytest.raises(ExecError, match="no value given for the scalar param %n"):
        run_kernel(text, {"O": np.zeros(1, np.int32)})


def test_mma_observer_sees_every_call() -> None:
    body = [
        '%x : f32 = arith.constant (  ) { ity = s:"f32", value = f:1.0 }',
        '%h : f16 = arith.fptrunc ( %x ) { to = s:"f16" }',
        "%a : vec<f16x4> = vector.from_elements ( %h, %h, %h, %h )",
        '%cz : vec<f32x4> = arith.constant_vec (  ) { ity = s:"vec<f32x4>", value = i:0 }',
        '%d : vec<f32x4> = tile.mma ( %a, %a, %cz ) { op_id = s:"mfma_f32_16x16x16_f16" }',
        '%d2 : vec<f32x4> = tile.mma ( %a, %a, %d ) { op_id = s:"mfma_f32_16x16x16_f16" }',
        "%e : f32 = vector.extract ( %d2 ) { index = i:3 }",
        '%ri : i32 = arith.bitcast ( %e ) { to = s:"i32" }',
        store("%ri"),
    ]
    seen = []
    text = kernel_text([ptr("O", "i32"), "%O_bytes : i32"], STORE_I32 + body, block=64)
    out = run_kernel(
        text, {"O": np.zeros(64, np.int32)}, on_mma=lambda op, blocks, a, b: seen.append((op.line, a.shape))
    )
    assert out.ok and out.buffers["O"].view(np.float32).tolist() == [32.0] * 64  # 2 MMAs of 16 ones
    assert seen == [(17, (64, 4)), (18, (64, 4))]
