"""The `ll` executor (rocke_py/exec/ll_executor.py) on small hand-written AMDGPU LLVM IR
modules (ll_kit.py): instruction semantics, control flow under per-lane masks, the convergent
operations and the hazards, direct-to-LDS loads and their waits, reader errors, and the MMA
intrinsics against NumPy. Every module that LLVM 22 can verify is verified by llvmlite first, so
the hand-written text is valid LLVM IR and not only text our reader accepts."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from types import SimpleNamespace

import llvmlite.binding as llvm
import numpy as np
import pytest
from ll_kit import POOL, gptr, module, pool, rsrc

from rocke_py.exec import mma
from rocke_py.exec.executor import ExecError, RunResult
from rocke_py.exec.ll_executor import ARCH_WAVE, run_ll, vmcnt_of
from rocke_py.exec.ll_reader import LlReadError, read_ll

# ---- running a hand-written kernel ----

SLOT = 8  # bytes per output slot of a thread's row in %O
STORE_FORMS = {  # type -> (bytes stored, buffer store suffix, cast type or "")
    "i32": (4, "i32", ""),
    "float": (4, "i32", "i32"),
    "i1": (4, "i32", "zext"),
    "half": (2, "i16", "i16"),
    "bfloat": (2, "i16", "i16"),
    "i16": (2, "i16", ""),
    "i64": (8, "v2i32", "<2 x i32>"),
}
DTYPES = {
    "i32": np.int32,
    "float": np.float32,
    "i1": np.int32,
    "half": np.float16,
    "bfloat": np.uint16,
    "i16": np.int16,
    "i64": np.int64,
}


def put(slot: int, ty: str, value: str) -> list[str]:
    """Lines storing `value` of type ty in slot `slot` of the thread's row of %O (%orow)."""
    size, suffix, cast = STORE_FORMS[ty]
    tag = f"%o{slot}.{value.lstrip('%').replace('.', '_')}"
    lines = [f"{tag}.at = add i32 %orow, {SLOT * slot}"]
    stored = {"i32": "i32", "i16": "i16", "v2i32": "<2 x i32>"}[suffix]
    if cast == "zext":
        lines.append(f"{tag}.v = zext i1 {value} to i32")
        value = f"{tag}.v"
    elif cast:
        lines.append(f"{tag}.v = bitcast {ty} {value} to {cast}")
        value = f"{tag}.v"
    lines.append(
        f"call void @llvm.amdgcn.raw.ptr.buffer.store.{suffix}({stored} {value}, ptr addrspace(8) %out, "
        f"i32 {tag}.at, i32 0, i32 0)"
    )
    return lines


@dataclass
class Out:
    cols: list[np.ndarray]  # one per value asked for, a row per thread of the grid
    result: RunResult

    @property
    def kinds(self) -> list[str]:
        return sorted({h.kind for h in self.result.hazards})

    def count(self, kind: str) -> int:
        return sum(h.count for h in self.result.hazards if h.kind == kind)


def verify(text: str) -> None:
    """LLVM 22 parses and verifies the hand-written module (intrinsic signatures included)."""
    llvm.parse_assembly(text).verify()


def compute(
    body: list[str],
    values: list[tuple[str, str]],
    *,
    arch: str = "gfx942",
    block: int = 64,
    grid: tuple[int, int, int] = (1, 1, 1),
    inputs: dict[str, np.ndarray] | None = None,
    scalars: dict[str, int] | None = None,
    params: tuple[str, ...] = (),
    buffers: dict[str, np.ndarray] | None = None,
    lds: int = 0,
    flavor: str = "llvm22",
    extra_slots: int = 0,
    expect: tuple[str, ...] = (),
    kernel: str = "t",
    **kw,
) -> Out:
    """Runs the body after a prelude (%tid, %lane, %wave, the resource %out over %O and one
    %in_<name> per input, read only) and stores `values` (type, name) in slots 0.. of each
    thread's row of %O; extra_slots more slots are the body's own (put()). `buffers` are
    more pointer params, writable, and `params` more scalar params (given by `scalars`).
    The hazard kinds must be exactly `expect`."""
    inputs = inputs or {}
    wave = ARCH_WAVE[arch]
    slots = len(values) + extra_slots
    ptrs = [gptr("O", flavor=flavor)]
    ptrs += [gptr(n, readonly=True, flavor=flavor) for n in inputs]
    ptrs += [gptr(n, flavor=flavor) for n in buffers or {}]
    sizes = [f"i32 %{n}_bytes" for n in ["O", *inputs, *(buffers or {})]]
    prelude = [
        "%tid = call i32 @llvm.amdgcn.workitem.id.x()",
        "%mbcnt_lo = call i32 @llvm.amdgcn.mbcnt.lo(i32 -1, i32 0)",
        "%lane = call i32 @llvm.amdgcn.mbcnt.hi(i32 -1, i32 %mbcnt_lo)",
        f"%wave = sdiv i32 %tid, {wave}",
        *rsrc("%out", "O", flavor),
    ]
    for name in inputs:
        prelude += rsrc(f"%in_{name}", name, flavor)
    row = "%tid"
    if grid != (1, 1, 1):
        prelude += [
            "%g.x = call i32 @llvm.amdgcn.workgroup.id.x()",
            "%g.y = call i32 @llvm.amdgcn.workgroup.id.y()",
            "%g.z = call i32 @llvm.amdgcn.workgroup.id.z()",
            f"%g.zy = mul i32 %g.z, {grid[1]}",
            "%g.zy1 = add i32 %g.zy, %g.y",
            f"%g.zyx = mul i32 %g.zy1, {grid[0]}",
            "%g.lin = add i32 %g.zyx, %g.x",
            f"%g.base = mul i32 %g.lin, {block}",
            "%gid = add i32 %g.base, %tid",
        ]
        row = "%gid"
    prelude.append(f"%orow = mul i32 {row}, {SLOT * slots}")
    tail = [line for j, (ty, v) in enumerate(values) for line in put(j, ty, v)]
    text = module(ptrs + sizes + list(params), prelude + body + tail, block=block, lds=lds, flavor=flavor, name=kernel)
    if flavor != "llvm20":  # LLVM 22 refuses LLVM 20's make.buffer.rsrc signature
        verify(text)
    threads = block * grid[0] * grid[1] * grid[2]
    given = {"O": np.full(threads * slots * SLOT, 0xEE, dtype=np.uint8), **inputs, **(buffers or {})}
    result = run_ll(text, arch, given, scalars, grid, block, **kw)
    raw = result.buffers["O"].reshape(threads, slots, SLOT)
    cols = []
    for j, (ty, _) in enumerate(values):
        size = STORE_FORMS[ty][0]
        col = np.ascontiguousarray(raw[:, j, :size]).view(DTYPES[ty])
        cols.append(col[:, 0])
    out = Out(cols, result)
    assert out.kinds == sorted(expect), [h.message() for h in result.hazards]
    return out


def fx(value: float) -> str:
    """An f32 value as the engines print a float constant: the double holding it, in hex."""
    return "0x%016X" % struct.unpack(">Q", struct.pack(">d", float(np.float32(value))))[0]


def wrap32(x: int) -> int:
    return (x + 2**31) % 2**32 - 2**31


def tdiv(a: int, b: int) -> tuple[int, int]:
    q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    return q, a - q * b


TID64 = np.arange(64)
# gfx9's full wait (vmcnt 0, lgkmcnt 0) and the barrier, as tile.sync lowers
BARRIER = ["call void @llvm.amdgcn.s.waitcnt(i32 112)", "call void @llvm.amdgcn.s.barrier()"]
UNSTORED = int(np.array(0xEEEEEEEE, dtype=np.uint32).view(np.int32))  # %O's bytes before the run

# ---- 1. semantics ----


def test_integer_ops_wrap_and_truncate_toward_zero() -> None:
    body = [
        "%x = sub i32 %tid, 32",
        "%wrap = add i32 %x, 2147483647",
        "%mulw = mul i32 %x, 134217728",
        "%q = sdiv i32 %x, 7",
        "%r = srem i32 %x, 7",
        "%qn = sdiv i32 %x, -7",
        "%rn = srem i32 %x, -7",
        "%andv = and i32 %x, 12",
        "%orv = or i32 %x, 3",
        "%big1 = add i32 %big, 1",  # a 0-d param value wraps too
        "%mq = sdiv i32 %m, 2",
        "%mr = srem i32 %m, 2",
    ]
    names = ["%x", "%wrap", "%mulw", "%q", "%r", "%qn", "%rn", "%andv", "%orv", "%big1", "%mq", "%mr"]
    out = compute(body, [("i32", n) for n in names], params=("i32 %big", "i32 %m"), scalars={"big": 2**31 - 1, "m": -7})
    got = dict(zip(names, out.cols))
    for t in TID64:
        x = int(t) - 32
        want = {
            "%x": x,
            "%wrap": wrap32(x + 2**31 - 1),
            "%mulw": wrap32(x * 2**27),
            "%q": tdiv(x, 7)[0],
            "%r": tdiv(x, 7)[1],
            "%qn": tdiv(x, -7)[0],
            "%rn": tdiv(x, -7)[1],
            "%andv": x & 12,
            "%orv": x | 3,
            "%big1": -(2**31),
            "%mq": -3,
            "%mr": -1,
        }
        assert {n: int(got[n][t]) for n in names} == want, t


ICMP = [
    ("eq", lambda x: x == 3),
    ("ne", lambda x: x != 3),
    ("slt", lambda x: x < 3),
    ("sle", lambda x: x <= 3),
    ("sgt", lambda x: x > 3),
    ("sge", lambda x: x >= 3),
    ("ult", lambda x: (x % 2**32) < 3),  # a negative x is a large unsigned value
]


@pytest.mark.parametrize("pred,want", ICMP, ids=[p for p, _ in ICMP])
def test_icmp_and_select(pred: str, want) -> None:
    body = [
        "%x = sub i32 %tid, 8",
        f"%c = icmp {pred} i32 %x, 3",
        "%s = select i1 %c, i32 %x, i32 -100",
    ]
    out = compute(body, [("i1", "%c"), ("i32", "%s")])
    x = TID64 - 8
    expected = np.array([want(int(v)) for v in x])
    assert out.cols[0].tolist() == expected.astype(int).tolist()
    assert out.cols[1].tolist() == np.where(expected, x, -100).tolist()


# (f32 bits, bf16 bits by round to nearest even)
BF16_CASES = [
    (0x3F808000, 0x3F80),  # 1 + 2^-8: a tie, to the even 1.0
    (0x3F818000, 0x3F82),  # 1 + 3·2^-8: a tie, up to the even 1 + 2^-6
    (0x3F808001, 0x3F81),  # just above the tie
    (0xBF818000, 0xBF82),  # negative tie
    (0x43808000, 0x4380),  # 257 -> 256
    (0x43818000, 0x4382),  # 259 -> 260
    (0x7F7FFFFF, 0x7F80),  # the largest f32 rounds to infinity
    (0x00000001, 0x0000),  # the smallest denormal rounds to zero
]
# (f32 value, f16 value by round to nearest even)
F16_CASES = [
    (1 + 2**-11, 1.0),
    (1 + 3 * 2**-11, 1 + 2**-9),
    (2049.0, 2048.0),
    (2051.0, 2052.0),
    (65520.0, np.inf),  # the tie above the largest half goes to infinity
    (2**-25, 0.0),  # a tie at the smallest half denormal, to zero
    (3 * 2**-25, 2**-23),
    (-(1 + 3 * 2**-11), -(1 + 2**-9)),
]


@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")
def test_fptrunc_rounds_to_nearest_even() -> None:
    n = len(BF16_CASES)
    bits = np.zeros(64, dtype=np.uint32)
    bits[:n] = [b for b, _ in BF16_CASES]
    bits[n : n + len(F16_CASES)] = np.array([v for v, _ in F16_CASES], dtype=np.float32).view(np.uint32)
    bits[63] = 0x7FC00001  # a NaN
    body = [
        "%xo = mul i32 %tid, 4",
        "%xi = call i32 @llvm.amdgcn.raw.ptr.buffer.load.i32(ptr addrspace(8) %in_X, i32 %xo, i32 0, i32 0)",
        "%xf = bitcast i32 %xi to float",
        "%h = fptrunc float %xf to half",
        "%b = fptrunc float %xf to bfloat",
        f"%hc = fptrunc float {fx(1 + 2**-11)} to half",  # constants round alike
        f"%bc = fptrunc float {fx(1 + 3 * 2**-8)} to bfloat",
    ]
    out = compute(body, [("half", "%h"), ("bfloat", "%b"), ("half", "%hc"), ("bfloat", "%bc")], inputs={"X": bits})
    h, b, hc, bc = out.cols
    assert [hex(int(v)) for v in b[:n]] == [hex(w) for _, w in BF16_CASES]
    assert h[n : n + len(F16_CASES)].astype(np.float64).tolist() == [w for _, w in F16_CASES]
    assert np.isnan(h[63]) and (int(b[63]) & 0x7FFF) > 0x7F80
    assert set(hc.tolist()) == {1.0} and set(bc.tolist()) == {0x3F82}


def test_bitcast_between_vectors_and_scalars() -> None:
    x = np.arange(64 * 8, dtype=np.uint16) * 7 + 1  # lane L's 16 bytes: 8 distinct u16
    body = [
        "%xo = mul i32 %tid, 16",
        "%v = call <4 x i32> @llvm.amdgcn.raw.ptr.buffer.load.v4i32(ptr addrspace(8) %in_X, i32 %xo, i32 0, i32 0)",
        "%vh = bitcast <4 x i32> %v to <8 x half>",
        "%h5 = extractelement <8 x half> %vh, i32 5",
        "%h5i = bitcast half %h5 to i16",
        "%vb = bitcast <4 x i32> %v to <8 x bfloat>",
        "%vbi = bitcast <8 x bfloat> %vb to <8 x i16>",
        "%b7 = extractelement <8 x i16> %vbi, i32 7",
        "%v64 = bitcast <4 x i32> %v to <2 x i64>",
        "%q1 = extractelement <2 x i64> %v64, i32 1",
        "%pair = shufflevector <8 x half> %vh, <8 x half> poison, <2 x i32> <i32 2, i32 3>",
        "%pi = bitcast <2 x half> %pair to i32",
        "%back = bitcast i32 %pi to <2 x half>",
        "%b1 = extractelement <2 x half> %back, i32 1",
        "%b1i = bitcast half %b1 to i16",
    ]
    values = [("i16", "%h5i"), ("i16", "%b7"), ("i64", "%q1"), ("i32", "%pi"), ("i16", "%b1i")]
    out = compute(body, values, inputs={"X": x})
    lanes = x.reshape(64, 8)
    assert out.cols[0].view(np.uint16).tolist() == lanes[:, 5].tolist()
    assert out.cols[1].view(np.uint16).tolist() == lanes[:, 7].tolist()
    assert out.cols[2].tolist() == lanes[:, 4:8].copy().view(np.int64)[:, 0].tolist()
    assert out.cols[3].tolist() == lanes[:, 2:4].copy().view(np.int32)[:, 0].tolist()
    assert out.cols[4].view(np.uint16).tolist() == lanes[:, 3].tolist()


def test_zext_of_a_negative_i32_is_unsigned() -> None:
    body = [
        "%x = sub i32 %tid, 3",
        "%w = zext i32 %x to i64",
        "%c = icmp slt i32 %x, 0",
        "%ci = zext i1 %c to i32",
        "%odd0 = and i32 %tid, 1",
        "%odd = icmp ne i32 %odd0, 0",
        "%both = and i1 %c, %odd",
        "%either = or i1 %c, %odd",
    ]
    out = compute(body, [("i64", "%w"), ("i32", "%ci"), ("i1", "%both"), ("i1", "%either")])
    assert out.cols[0].tolist() == [(int(t) - 3) % 2**32 for t in TID64]
    assert out.cols[1].tolist() == [int(t < 3) for t in TID64]
    assert out.cols[2].tolist() == [int(t < 3 and t % 2 == 1) for t in TID64]
    assert out.cols[3].tolist() == [int(t < 3 or t % 2 == 1) for t in TID64]


def test_extract_insert_and_shufflevector_with_poison() -> None:
    body = [
        "%x = mul i32 %tid, 3",
        "%v0 = insertelement <4 x i32> poison, i32 %tid, i32 0",
        "%v1 = insertelement <4 x i32> %v0, i32 10, i32 1",
        "%v2 = insertelement <4 x i32> %v1, i32 %x, i32 2",
        "%v3 = insertelement <4 x i32> %v2, i32 30, i32 3",
        "%w = shufflevector <4 x i32> %v3, <4 x i32> <i32 100, i32 101, i32 102, i32 103>, "
        "<4 x i32> <i32 3, i32 6, i32 poison, i32 0>",
        "%w0 = extractelement <4 x i32> %w, i32 0",
        "%w1 = extractelement <4 x i32> %w, i32 1",
        "%w3 = extractelement <4 x i32> %w, i32 3",
        # the concat of unequal widths (docs/lowering.md §5): pad, then take both
        "%lo2 = shufflevector <4 x i32> %v3, <4 x i32> poison, <2 x i32> <i32 2, i32 0>",
        "%pad = shufflevector <2 x i32> %lo2, <2 x i32> poison, <4 x i32> <i32 0, i32 1, i32 poison, i32 poison>",
        "%cat = shufflevector <4 x i32> %pad, <4 x i32> %v3, <6 x i32> <i32 0, i32 1, i32 4, i32 5, i32 6, i32 7>",
        "%c0 = extractelement <6 x i32> %cat, i32 0",
        "%c1 = extractelement <6 x i32> %cat, i32 1",
        "%c4 = extractelement <6 x i32> %cat, i32 4",
        "%bit = and i32 %tid, 1",
        "%odd = icmp eq i32 %bit, 1",
        "%vs = select i1 %odd, <4 x i32> %v3, <4 x i32> zeroinitializer",
        "%s2 = extractelement <4 x i32> %vs, i32 2",
    ]
    names = ["%w0", "%w1", "%w3", "%c0", "%c1", "%c4", "%s2"]
    out = compute(body, [("i32", n) for n in names])
    t = TID64
    want = [np.full(64, 30), np.full(64, 102), t, 3 * t, t, 3 * t, np.where(t % 2 == 1, 3 * t, 0)]
    for name, got, w in zip(names, out.cols, want):
        assert got.tolist() == w.tolist(), name


def test_constant_vectors_take_their_element_type() -> None:
    """A constant vector operand is a value of its type: float elements (written as hex
    doubles) and i32 elements that wrap like any i32."""
    body = [
        f"%hv = bitcast <2 x half> <half {fx(1.0)}, half {fx(-2.0)}> to i32",
        "%s0 = insertelement <2 x i32> zeroinitializer, i32 %tid, i32 0",
        "%sum = add <2 x i32> %s0, <i32 2147483647, i32 5>",
        "%e0 = extractelement <2 x i32> %sum, i32 0",
        "%neg = icmp slt i32 %e0, 0",
        f"%fv = fmul <2 x float> <float {fx(0.5)}, float {fx(3.0)}>, <float {fx(4.0)}, float {fx(0.25)}>",
        "%f1 = extractelement <2 x float> %fv, i32 1",
    ]
    out = compute(body, [("i32", "%hv"), ("i1", "%neg"), ("i32", "%e0"), ("float", "%f1")])
    assert set(out.cols[0].tolist()) == {int(np.array([1.0, -2.0], np.float16).view(np.int32)[0])}
    assert out.cols[1].tolist() == (TID64 >= 1).astype(int).tolist()  # 2^31 - 1 + tid wraps
    assert out.cols[2].tolist() == [wrap32(2**31 - 1 + int(t)) for t in TID64]
    assert set(out.cols[3].tolist()) == {0.75}


def test_getelementptr_into_a_2d_lds_array_and_back_through_a_barrier() -> None:
    """[16 x [8 x i32]] at pool offset 256 (an i8 GEP): each thread stores its id at
    (tid/8, tid%8), and after the barrier reads (15 - row, col), written by the other wave."""
    arr = "[16 x [8 x i32]]"
    body = [
        f"%base = getelementptr inbounds i8, ptr addrspace(3) {POOL}, i32 256",
        "%row = sdiv i32 %tid, 8",
        "%col = srem i32 %tid, 8",
        f"%p = getelementptr inbounds {arr}, ptr addrspace(3) %base, i32 0, i32 %row, i32 %col",
        "%pa = ptrtoint ptr addrspace(3) %p to i32",
        "store i32 %tid, ptr addrspace(3) %p, align 4",
        "call void @llvm.amdgcn.s.waitcnt(i32 49279)",
        "call void @llvm.amdgcn.s.barrier()",
        "%row2 = sub i32 15, %row",
        f"%q = getelementptr inbounds {arr}, ptr addrspace(3) %base, i32 0, i32 %row2, i32 %col",
        "%got = load i32, ptr addrspace(3) %q, align 4",
        "%c64 = add i64 0, 2",  # an i64 index, and a first index past the pointee
        "%r = getelementptr inbounds [8 x i32], ptr addrspace(3) %base, i32 1, i64 %c64",
        "%ra = ptrtoint ptr addrspace(3) %r to i32",
    ]
    out = compute(body, [("i32", "%pa"), ("i32", "%got"), ("i32", "%ra")], block=128, lds=1024)
    tid = np.arange(128)
    assert out.cols[0].tolist() == (256 + (tid // 8) * 32 + (tid % 8) * 4).tolist()
    assert out.cols[1].tolist() == ((15 - tid // 8) * 8 + tid % 8).tolist()
    assert set(out.cols[2].tolist()) == {256 + 32 + 8}


def test_lds_vector_store_and_load_round_trip() -> None:
    body = [
        "%h = call i32 @llvm.amdgcn.raw.ptr.buffer.load.i32(ptr addrspace(8) %in_X, i32 0, i32 0, i32 0)",
        "%v0 = insertelement <2 x i32> poison, i32 %tid, i32 0",
        "%v = insertelement <2 x i32> %v0, i32 %h, i32 1",
        "%vh = bitcast <2 x i32> %v to <4 x half>",
        f"%p = getelementptr inbounds [64 x <4 x half>], ptr addrspace(3) {POOL}, i32 0, i32 %tid",
        "store <4 x half> %vh, ptr addrspace(3) %p, align 8",
        "call void @llvm.amdgcn.s.waitcnt(i32 49279)",
        "call void @llvm.amdgcn.s.barrier()",
        "%other = sub i32 63, %tid",
        f"%q = getelementptr inbounds [64 x <4 x half>], ptr addrspace(3) {POOL}, i32 0, i32 %other",
        "%back = load <4 x half>, ptr addrspace(3) %q, align 8",
        "%bi = bitcast <4 x half> %back to <2 x i32>",
        "%b0 = extractelement <2 x i32> %bi, i32 0",
        "%b1 = extractelement <2 x i32> %bi, i32 1",
    ]
    out = compute(body, [("i32", "%b0"), ("i32", "%b1")], lds=512, inputs={"X": np.array([-5], np.int32)})
    assert out.cols[0].tolist() == (63 - TID64).tolist()
    assert set(out.cols[1].tolist()) == {-5}


@pytest.mark.parametrize("kernel", ["t", "9t_1e+06"], ids=["bare-name", "quoted-name"])
def test_lds_pool_of_a_kernel_whose_name_is_quoted(kernel: str) -> None:
    """docs/lowering.md §1: a kernel name outside LLVM's bare grammar (a `+`, a leading digit)
    is printed quoted, its pool too: @"smem_pool.<name>" is the same global as the bare one."""
    body = [
        f"%p = getelementptr inbounds [64 x i32], ptr addrspace(3) {pool(kernel)}, i32 0, i32 %tid",
        "store i32 %tid, ptr addrspace(3) %p, align 4",
        *BARRIER,
        "%o = sub i32 63, %tid",
        f"%q = getelementptr inbounds [64 x i32], ptr addrspace(3) {pool(kernel)}, i32 0, i32 %o",
        "%v = load i32, ptr addrspace(3) %q, align 4",
    ]
    out = compute(body, [("i32", "%v")], lds=256, kernel=kernel)
    assert out.cols[0].tolist() == (63 - TID64).tolist()


@pytest.mark.parametrize("flavor", ["llvm20", "llvm22", "llvm23"])
def test_buffer_load_and_store_through_make_buffer_rsrc(flavor: str) -> None:
    x = (np.arange(64 * 4, dtype=np.int32) * 3 - 100).astype(np.int32)
    y = np.zeros(64 * 4, dtype=np.int32)
    body = [
        *rsrc("%ry", "Y", flavor),
        "%xo = mul i32 %tid, 16",
        "%v = call <4 x i32> @llvm.amdgcn.raw.ptr.buffer.load.v4i32(ptr addrspace(8) %in_X, i32 %xo, i32 0, i32 0)",
        "%rev = sub i32 63, %tid",
        "%yo = mul i32 %rev, 16",
        "call void @llvm.amdgcn.raw.ptr.buffer.store.v4i32(<4 x i32> %v, ptr addrspace(8) %ry, i32 %yo, i32 0, i32 0)",
        # the soffset adds to the voffset
        "%two = call <2 x i32> @llvm.amdgcn.raw.ptr.buffer.load.v2i32(ptr addrspace(8) %in_X, i32 %xo, i32 8, i32 0)",
        "%t1 = extractelement <2 x i32> %two, i32 1",
        "%xo2 = mul i32 %tid, 2",
        "%s = call i16 @llvm.amdgcn.raw.ptr.buffer.load.i16(ptr addrspace(8) %in_X, i32 %xo2, i32 0, i32 0)",
    ]
    out = compute(body, [("i32", "%t1"), ("i16", "%s")], inputs={"X": x}, buffers={"Y": y}, flavor=flavor)
    assert out.result.buffers["Y"].reshape(64, 4).tolist() == x.reshape(64, 4)[::-1].tolist()
    assert out.cols[0].tolist() == x.reshape(64, 4)[:, 3].tolist()
    assert out.cols[1].tolist() == x.view(np.int16)[:64].tolist()


def test_buffer_bytes_outside_num_records_read_zero_and_are_dropped() -> None:
    """A resource of 10 bytes: a 16-byte load at byte 4L reads the bytes below 10 and zeros
    (lanes 0-2 are partly inside: rsrc-partial); stores beyond are dropped per byte."""
    x = np.arange(1, 257, dtype=np.uint8)
    y = np.full(64, 0xEE, dtype=np.uint8)
    body = [
        *rsrc("%rx", "X", nbytes="10"),
        *rsrc("%ry", "Y", nbytes="10"),
        "%xo = mul i32 %tid, 4",
        "%v = call <4 x i32> @llvm.amdgcn.raw.ptr.buffer.load.v4i32(ptr addrspace(8) %rx, i32 %xo, i32 0, i32 0)",
        "%v0 = extractelement <4 x i32> %v, i32 0",
        "%v2 = extractelement <4 x i32> %v, i32 2",
        "%v3 = extractelement <4 x i32> %v, i32 3",
        "%far = call i32 @llvm.amdgcn.raw.ptr.buffer.load.i32(ptr addrspace(8) %rx, i32 2147483647, i32 0, i32 0)",
        "%lo = icmp slt i32 %tid, 16",
        "%yo = select i1 %lo, i32 %xo, i32 2147483647",
        "%mark = add i32 %tid, 286331152",  # 0x11111110 + tid: four distinct bytes
        "call void @llvm.amdgcn.raw.ptr.buffer.store.i32(i32 %mark, ptr addrspace(8) %ry, i32 %yo, i32 0, i32 0)",
    ]
    out = compute(
        body,
        [("i32", "%v0"), ("i32", "%v2"), ("i32", "%v3"), ("i32", "%far")],
        inputs={"X": x},
        buffers={"Y": y},
        expect=("rsrc-partial",),
    )
    got = np.stack(out.cols[:3], axis=1).view(np.uint8)  # (64, 12): bytes 0-3, 8-11, 12-15
    want = np.zeros((64, 16), dtype=np.uint8)
    for lane in range(64):
        for b in range(16):
            if 4 * lane + b < 10:
                want[lane, b] = x[4 * lane + b]
    assert got.tolist() == np.concatenate([want[:, 0:4], want[:, 8:16]], axis=1).tolist()
    assert set(out.cols[3].tolist()) == {0}
    ybytes = out.result.buffers["Y"]
    marks = (0x11111110 + np.arange(3, dtype=np.uint32)).view(np.uint8)
    assert ybytes[:10].tolist() == marks[:10].tolist()
    assert set(ybytes[10:].tolist()) == {0xEE}
    # lanes 0-2 load partly inside, lane 2 stores partly inside
    assert {h.where.split(" (")[0]: h.count for h in out.result.hazards} == {
        "%v = llvm.amdgcn.raw.ptr.buffer.load.v4i32": 3,
        "llvm.amdgcn.raw.ptr.buffer.store.i32": 1,
    }


def test_atomicrmw_fadd_f32_and_packed_half() -> None:
    a = np.array([1, 2, 3, 4], dtype=np.float32)
    h = np.array([2048, 0, 5, 0], dtype=np.float16)
    body = [
        "%i = srem i32 %tid, 4",
        "%g = getelementptr inbounds float, ptr addrspace(1) %A, i32 %i",
        f"%at = atomicrmw fadd ptr addrspace(1) %g, float {fx(1.5)} monotonic, "
        "!amdgpu.no.fine.grained.memory !1, !amdgpu.no.remote.memory !1, !amdgpu.ignore.denormal.mode !1",
        "%j0 = srem i32 %tid, 2",
        "%j = mul i32 %j0, 2",
        "%gh = getelementptr inbounds half, ptr addrspace(1) %H, i32 %j",
        f"%pk0 = insertelement <2 x half> poison, half {fx(1.0)}, i32 0",
        f"%pk = insertelement <2 x half> %pk0, half {fx(0.5)}, i32 1",
        "%ah = atomicrmw fadd ptr addrspace(1) %gh, <2 x half> %pk monotonic, "
        "!amdgpu.no.fine.grained.memory !1, !amdgpu.no.remote.memory !1, !amdgpu.ignore.denormal.mode !1",
        "%gb = getelementptr inbounds bfloat, ptr addrspace(1) %B, i32 %j",
        f"%pb0 = insertelement <2 x bfloat> poison, bfloat {fx(1.0)}, i32 0",
        f"%pb = insertelement <2 x bfloat> %pb0, bfloat {fx(0.5)}, i32 1",
        "%ab = atomicrmw fadd ptr addrspace(1) %gb, <2 x bfloat> %pb monotonic, "
        "!amdgpu.no.fine.grained.memory !1, !amdgpu.no.remote.memory !1, !amdgpu.ignore.denormal.mode !1",
    ]
    bf = np.array([0x4380, 0, 0x3F80, 0], dtype=np.uint16)  # bf16 256, 0, 1, 0
    out = compute(body, [], buffers={"A": a, "H": h, "B": bf})
    assert out.result.buffers["A"].tolist() == [25.0, 26.0, 27.0, 28.0]
    # each packed add rounds: 2048 + 1 is a tie in f16 and stays 2048, 32 times
    assert out.result.buffers["H"].tolist() == [2048.0, 16.0, 37.0, 16.0]
    # bf16 alike: 256 + 1 is a tie and stays 256; 1 + 32 = 33 is exact (0x4204)
    assert [hex(v) for v in out.result.buffers["B"].tolist()] == ["0x4380", "0x4180", "0x4204", "0x4180"]


def test_packed_atomic_at_an_odd_half_is_out_of_bounds() -> None:
    body = [
        "%gh = getelementptr inbounds half, ptr addrspace(1) %H, i32 1",
        f"%pk = insertelement <2 x half> zeroinitializer, half {fx(1.0)}, i32 0",
        "%ah = atomicrmw fadd ptr addrspace(1) %gh, <2 x half> %pk monotonic, "
        "!amdgpu.no.fine.grained.memory !1, !amdgpu.no.remote.memory !1, !amdgpu.ignore.denormal.mode !1",
    ]
    out = compute(body, [], buffers={"H": np.zeros(4, np.float16)}, expect=("atomic-bounds",))
    assert out.result.buffers["H"].tolist() == [0.0] * 4


def popcount_below(mask: int, lane: int) -> int:
    return bin(mask & ((1 << lane) - 1)).count("1")


@pytest.mark.parametrize("arch", ["gfx942", "gfx1151"])
def test_mbcnt_gives_the_lane_id(arch: str) -> None:
    wave = ARCH_WAVE[arch]
    body = [
        "%mlo = call i32 @llvm.amdgcn.mbcnt.lo(i32 1431655765, i32 0)",  # 0x55555555
        "%m = call i32 @llvm.amdgcn.mbcnt.hi(i32 -1431655766, i32 %mlo)",  # 0xAAAAAAAA
        "%plus = call i32 @llvm.amdgcn.mbcnt.lo(i32 -1, i32 100)",
    ]
    out = compute(body, [("i32", "%lane"), ("i32", "%m"), ("i32", "%plus")], arch=arch, block=128)
    lane = np.arange(128) % wave
    assert out.cols[0].tolist() == lane.tolist()
    full = 0xAAAAAAAA55555555 if wave == 64 else 0x55555555
    assert out.cols[1].tolist() == [popcount_below(full, int(lane_)) for lane_ in lane]
    assert out.cols[2].tolist() == (100 + np.minimum(lane, 32)).tolist()


def test_readfirstlane() -> None:
    body = [
        "%w = call i32 @llvm.amdgcn.readfirstlane.i32(i32 %wave)",
        "%l3 = add i32 %lane, 3",
        "%f = call i32 @llvm.amdgcn.readfirstlane.i32(i32 %l3)",
    ]
    out = compute(body, [("i32", "%w"), ("i32", "%f")], block=128, expect=("not-uniform",))
    assert out.cols[0].tolist() == (np.arange(128) // 64).tolist()
    assert set(out.cols[1].tolist()) == {3}
    assert [h.where.split(" = ")[0] for h in out.result.hazards] == ["%f"]


@pytest.mark.parametrize("chunk", [64, 1 << 15], ids=["chunk-of-one-workgroup", "one-chunk"])
def test_workitem_and_workgroup_ids_over_a_grid(chunk: int) -> None:
    grid = (3, 2, 2)
    body = [
        "%ty = call i32 @llvm.amdgcn.workitem.id.y()",
        "%tz = call i32 @llvm.amdgcn.workitem.id.z()",
    ]
    values = [("i32", v) for v in ("%tid", "%g.x", "%g.y", "%g.z", "%ty", "%tz")]
    out = compute(body, values, grid=grid, chunk_threads=chunk)
    wg = np.repeat(np.arange(12), 64)
    assert out.cols[0].tolist() == np.tile(TID64, 12).tolist()
    assert out.cols[1].tolist() == (wg % 3).tolist()
    assert out.cols[2].tolist() == (wg // 3 % 2).tolist()
    assert out.cols[3].tolist() == (wg // 6).tolist()
    assert set(out.cols[4].tolist()) == set(out.cols[5].tolist()) == {0}
    assert out.result.stats.chunks == (12 if chunk == 64 else 1)


def test_smin_smax_minnum_maxnum() -> None:
    f = np.linspace(-2, 2, 64).astype(np.float32)
    f[7] = np.nan
    body = [
        "%x = sub i32 %tid, 32",
        "%mn = call i32 @llvm.smin.i32(i32 %x, i32 5)",
        "%mx = call i32 @llvm.smax.i32(i32 %x, i32 -3)",
        "%xo = mul i32 %tid, 4",
        "%fi = call i32 @llvm.amdgcn.raw.ptr.buffer.load.i32(ptr addrspace(8) %in_F, i32 %xo, i32 0, i32 0)",
        "%ff = bitcast i32 %fi to float",
        f"%fmn = call float @llvm.minnum.f32(float %ff, float {fx(0.5)})",
        f"%fmx = call float @llvm.maxnum.f32(float {fx(-0.25)}, float %ff)",
        f"%fm = fmul float %ff, {fx(3.0)}",
        "%fa = fadd float %fm, %ff",
    ]
    values = [("i32", "%mn"), ("i32", "%mx"), ("float", "%fmn"), ("float", "%fmx"), ("float", "%fa")]
    out = compute(body, values, inputs={"F": f})
    x = TID64 - 32
    assert out.cols[0].tolist() == np.minimum(x, 5).tolist()
    assert out.cols[1].tolist() == np.maximum(x, -3).tolist()
    # minnum / maxnum of a NaN and a number give the number
    assert out.cols[2].tolist() == np.where(np.isnan(f), 0.5, np.minimum(f, 0.5)).tolist()
    assert out.cols[3].tolist() == np.where(np.isnan(f), -0.25, np.maximum(f, -0.25)).tolist()
    fa = (f * np.float32(3)) + f
    assert np.array_equal(out.cols[4], fa, equal_nan=True)


# ---- 2. control flow under per-lane masks ----


def test_divergent_if_else_reconverges_with_a_phi() -> None:
    body = [
        "%c = icmp slt i32 %lane, 20",
        "br i1 %c, label %then, label %else",
        "then:",
        "%a = add i32 %tid, 1000",
        *put(1, "i32", "%a"),  # only the lanes taking the branch store
        "br label %join",
        "else:",
        "%b = mul i32 %tid, 2",
        "br label %join",
        "join:",
        "%v = phi i32 [ %a, %then ], [ %b, %else ]",
        "call void @llvm.amdgcn.s.waitcnt(i32 49279)",
        "call void @llvm.amdgcn.s.barrier()",  # every lane is back: a uniform barrier
    ]
    out = compute(body, [("i32", "%v")], extra_slots=1)
    t = TID64
    assert out.cols[0].tolist() == np.where(t < 20, t + 1000, 2 * t).tolist()
    raw = out.result.buffers["O"].reshape(64, 2, SLOT)[:, 1, :4].copy().view(np.int32)[:, 0]
    assert raw.tolist() == np.where(t < 20, t + 1000, UNSTORED).tolist()


def test_if_without_else_as_the_lowering_writes_it() -> None:
    body = [
        "%c = icmp sge i32 %lane, 40",
        "%x = mul i32 %tid, 5",
        "br i1 %c, label %if.then.1, label %if.end.2",
        "if.then.1:",
        "%y = add i32 %x, 7",
        "br label %if.end.2",
        "if.end.2:",
        "%v = phi i32 [ %x, %entry ], [ %y, %if.then.1 ]",
    ]
    out = compute(body, [("i32", "%v")])
    assert out.cols[0].tolist() == np.where(TID64 >= 40, 5 * TID64 + 7, 5 * TID64).tolist()


def counted_loop(
    trip: str,
    carried: list[tuple[str, str, str, str]],
    body_lines: list[str],
    latch: list[str],
    *,
    first: int = 1,
    pred: str = "%entry",
    iv: str = "%i",
    header_extra: tuple[str, ...] = (),
) -> list[str]:
    """An scf.for as docs/lowering.md §6 writes it: `iv` from 0 while `iv` < trip, entered from
    `pred`, with a phi per carried (name, type, initial, next) value; its header, body, latch and
    exit blocks are numbered from `first`."""
    header, body, back, leave = (
        f"for.{part}.{first + k}" for k, part in enumerate(("header", "body", "latch", "exit"))
    )
    return [
        f"br label %{header}",
        f"{header}:",
        f"{iv} = phi i32 [ 0, {pred} ], [ {iv}.next, %{back} ]",
        *(f"{name} = phi {ty} [ {init}, {pred} ], [ {nxt}, %{back} ]" for name, ty, init, nxt in carried),
        *header_extra,
        f"%cmp.{first} = icmp slt i32 {iv}, {trip}",
        f"br i1 %cmp.{first}, label %{body}, label %{leave}",
        f"{body}:",
        *body_lines,
        f"br label %{back}",
        f"{back}:",
        f"{iv}.next = add nsw i32 {iv}, 1",
        *latch,
        f"br label %{header}",
        f"{leave}:",
    ]


def test_loop_with_a_trip_count_per_lane() -> None:
    """lane % 4 iterations: the phis take the incoming edge's value per lane, the header's
    own value (%h) keeps each lane's last one after it left, the exit phi too."""
    body = [
        "%n = srem i32 %lane, 4",
        *counted_loop(
            "%n",
            [("%acc", "i32", "100", "%acc.next")],
            ["%sq = mul i32 %i, %i"],
            ["%acc.next = add i32 %acc, %sq"],
            header_extra=("%h = mul i32 %i, 10",),
        ),
        "%last = phi i32 [ %acc, %for.header.1 ]",
        "%hout = bitcast i32 %h to i32",
    ]
    out = compute(body, [("i32", "%i"), ("i32", "%last"), ("i32", "%hout")], block=128)
    n = np.arange(128) % 64 % 4
    assert out.cols[0].tolist() == n.tolist()
    assert out.cols[1].tolist() == [100 + sum(k * k for k in range(int(m))) for m in n]
    assert out.cols[2].tolist() == (10 * n).tolist()


def test_nested_loops_with_per_lane_trip_counts() -> None:
    """for i < lane % 5: for j < i: acc += 10·i + j, in the lowering's block order (the inner
    loop's blocks between the outer body and latch)."""
    inner = counted_loop(
        "%i",
        [("%acc.j", "i32", "%acc", "%acc.j.next")],
        ["%term = add i32 %i10, %j"],
        ["%acc.j.next = add i32 %acc.j, %term"],
        first=5,
        pred="%for.body.2",
        iv="%j",
    )
    body = [
        "%n = srem i32 %lane, 5",
        *counted_loop(
            "%n",
            [("%acc", "i32", "0", "%acc.inner")],
            ["%i10 = mul i32 %i, 10", *inner, "%acc.inner = bitcast i32 %acc.j to i32"],
            [],
        ),
    ]
    out = compute(body, [("i32", "%acc"), ("i32", "%i")])
    n = TID64 % 5
    assert out.cols[0].tolist() == [sum(10 * i + j for i in range(m) for j in range(i)) for m in n]
    assert out.cols[1].tolist() == n.tolist()


UNIFORM_VECTOR = [  # <1, 2> as the lowering's from_elements would build it: no vector literal
    "%cv0 = insertelement <2 x i32> zeroinitializer, i32 1, i32 0",
    "%cv = insertelement <2 x i32> %cv0, i32 2, i32 1",
]
VECTOR_LOOPS = {
    # the phi's value is the same for every lane (a (2,) value) and is redefined under the
    # narrower mask of each later iteration
    "uniform-vector-phi": (UNIFORM_VECTOR, [], "zeroinitializer"),
    # a value of the body, used in the latch, uniform and redefined at each iteration
    "uniform-vector-in-the-body": ([], UNIFORM_VECTOR, "%start"),
}


@pytest.mark.parametrize("case", list(VECTOR_LOOPS))
def test_vector_values_redefined_in_a_divergent_loop(case: str) -> None:
    """A <2 x i32> that every lane holds alike ((2,), not (threads, 2)), redefined in a loop
    whose lanes leave at different iterations (lane % 3): each lane keeps its own value."""
    entry, in_body, init = VECTOR_LOOPS[case]
    body = [
        "%n = srem i32 %lane, 3",
        "%start = insertelement <2 x i32> zeroinitializer, i32 %tid, i32 0",  # per lane
        *entry,
        *counted_loop(
            "%n", [("%acc", "<2 x i32>", init, "%acc.next")], in_body, ["%acc.next = add <2 x i32> %acc, %cv"]
        ),
        "%a0 = extractelement <2 x i32> %acc, i32 0",
        "%a1 = extractelement <2 x i32> %acc, i32 1",
    ]
    out = compute(body, [("i32", "%a0"), ("i32", "%a1")])
    n = TID64 % 3
    assert out.cols[1].tolist() == (2 * n).tolist()
    assert out.cols[0].tolist() == (n + (TID64 if init == "%start" else 0)).tolist()


# ---- 3. convergent operations under partial waves ----


def under(cond: list[str], inner: list[str]) -> list[str]:
    """inner under the i1 %cond (defined by cond), as an scf.if lowers."""
    return [
        *cond,
        "br i1 %cond, label %if.then.1, label %if.end.2",
        "if.then.1:",
        *inner,
        "br label %if.end.2",
        "if.end.2:",
    ]


CONDITIONS = {
    "uniform": None,
    "whole-waves": ["%cond = icmp eq i32 %wave, 0"],  # wave 0 of two: every wave whole
    "partial-wave": ["%cond = icmp slt i32 %lane, 32"],
}
CONVERGENT = {
    "readfirstlane": ("gfx942", [], ["%r = call i32 @llvm.amdgcn.readfirstlane.i32(i32 %wave)"]),
    "mbcnt": ("gfx942", [], ["%m = call i32 @llvm.amdgcn.mbcnt.lo(i32 -1, i32 0)"]),
    "mfma": (
        "gfx942",
        [],
        [
            "%d = call <16 x float> @llvm.amdgcn.mfma.f32.32x32x8f16(<4 x half> zeroinitializer, "
            "<4 x half> zeroinitializer, <16 x float> zeroinitializer, i32 0, i32 0, i32 0)"
        ],
    ),
    "transpose": (
        "gfx950",
        [
            f"%p = getelementptr inbounds [128 x <4 x i16>], ptr addrspace(3) {POOL}, i32 0, i32 %tid",
            "store <4 x i16> zeroinitializer, ptr addrspace(3) %p, align 8",
            "call void @llvm.amdgcn.s.waitcnt(i32 112)",
            "call void @llvm.amdgcn.s.barrier()",
        ],
        ["%tr = call <4 x i16> @llvm.amdgcn.ds.read.tr16.b64.v4i16(ptr addrspace(3) %p)"],
    ),
}


@pytest.mark.parametrize("cond", list(CONDITIONS))
@pytest.mark.parametrize("op", list(CONVERGENT))
def test_convergent_op_under_a_partial_wave(op: str, cond: str) -> None:
    arch, setup, inner = CONVERGENT[op]
    lines = inner if CONDITIONS[cond] is None else under(CONDITIONS[cond], inner)
    expect = ("partial-wave",) if cond == "partial-wave" else ()
    compute(setup + lines, [], arch=arch, block=128, lds=1024, expect=expect)


BARRIER_CASES = {
    "half-wave": (["%cond = icmp slt i32 %lane, 32"], ("nonuniform-barrier",)),
    "one-wave-of-two": (["%cond = icmp eq i32 %wave, 0"], ("nonuniform-barrier",)),
    "whole-workgroup": (["%bx = call i32 @llvm.amdgcn.workgroup.id.x()", "%cond = icmp eq i32 %bx, 1"], ()),
}


@pytest.mark.parametrize("case", list(BARRIER_CASES))
def test_barrier_reached_by_part_of_a_workgroup(case: str) -> None:
    cond, expect = BARRIER_CASES[case]
    out = compute(under(cond, BARRIER), [], block=128, grid=(2, 1, 1), expect=expect)
    if expect:
        (h,) = out.result.hazards
        assert h.where.startswith("llvm.amdgcn.s.barrier") and h.first_block == (0, 0, 0)


# ---- 4. LDS hazards ----

LDS_CASES = {
    "uninit": (
        [f"%v = load i32, ptr addrspace(3) {POOL}, align 4"],
        ("lds-uninit",),
    ),
    "race": (
        [
            f"%p = getelementptr inbounds [128 x i32], ptr addrspace(3) {POOL}, i32 0, i32 %tid",
            "store i32 %tid, ptr addrspace(3) %p, align 4",
            "%o = sub i32 127, %tid",  # the other wave's element
            f"%q = getelementptr inbounds [128 x i32], ptr addrspace(3) {POOL}, i32 0, i32 %o",
            "%v = load i32, ptr addrspace(3) %q, align 4",
        ],
        ("lds-race",),
    ),
    "race-with-barrier": (
        [
            f"%p = getelementptr inbounds [128 x i32], ptr addrspace(3) {POOL}, i32 0, i32 %tid",
            "store i32 %tid, ptr addrspace(3) %p, align 4",
            *BARRIER,
            "%o = sub i32 127, %tid",
            f"%q = getelementptr inbounds [128 x i32], ptr addrspace(3) {POOL}, i32 0, i32 %o",
            "%v = load i32, ptr addrspace(3) %q, align 4",
        ],
        (),
    ),
    "own-wave-without-barrier": (  # a wave reading its own writes back needs no barrier
        [
            f"%p = getelementptr inbounds [128 x i32], ptr addrspace(3) {POOL}, i32 0, i32 %tid",
            "store i32 %tid, ptr addrspace(3) %p, align 4",
            "%v = load i32, ptr addrspace(3) %p, align 4",
        ],
        (),
    ),
    "bounds": (
        [
            f"%p = getelementptr inbounds [128 x i32], ptr addrspace(3) {POOL}, i32 0, i32 %tid",
            "%q = getelementptr inbounds i8, ptr addrspace(3) %p, i32 1024",
            "store i32 %tid, ptr addrspace(3) %q, align 4",
        ],
        ("lds-bounds",),
    ),
    "misaligned": (
        [
            f"%p = getelementptr inbounds [128 x i32], ptr addrspace(3) {POOL}, i32 0, i32 %tid",
            "%q = getelementptr inbounds i8, ptr addrspace(3) %p, i32 2",  # inside the pool
            "store i32 %tid, ptr addrspace(3) %q, align 4",
        ],
        ("lds-misaligned",),
    ),
}


@pytest.mark.parametrize("case", list(LDS_CASES))
def test_lds_hazards(case: str) -> None:
    body, expect = LDS_CASES[case]
    out = compute(body, [], block=128, lds=1024, expect=expect)
    if case == "bounds":  # every lane: 1024 + 4·tid is past the pool
        assert out.count("lds-bounds") == 128


def test_lds_bounds_counts_only_the_lanes_past_the_pool() -> None:
    body = [
        f"%p = getelementptr inbounds [128 x i32], ptr addrspace(3) {POOL}, i32 0, i32 %tid",
        "%q = getelementptr inbounds i8, ptr addrspace(3) %p, i32 256",
        "store i32 %tid, ptr addrspace(3) %q, align 4",
    ]
    out = compute(body, [], block=128, lds=512, expect=("lds-bounds",))
    assert out.count("lds-bounds") == 64  # 256 + 4·tid + 4 > 512 from tid 64 on


OTHER_HAZARDS = {
    "division-by-zero": (["%z = and i32 %tid, 1", "%q = sdiv i32 100, %z"], ("division-by-zero",)),
    "division-by-nonzero": (["%z = or i32 %tid, 1", "%q = sdiv i32 100, %z"], ()),
    "bad-rsrc": (rsrc("%big", "O", nbytes="100000"), ("bad-rsrc",)),
    "global-rewrite": (
        [
            "%half = sdiv i32 %tid, 2",
            "%at = mul i32 %half, 4",
            "call void @llvm.amdgcn.raw.ptr.buffer.store.i32(i32 %tid, ptr addrspace(8) %out, i32 %at, i32 0, i32 0)",
        ],
        ("global-rewrite",),
    ),
}


@pytest.mark.parametrize("case", list(OTHER_HAZARDS))
def test_other_hazards(case: str) -> None:
    body, expect = OTHER_HAZARDS[case]
    compute(body, [], extra_slots=1, expect=expect)


def test_barrier_in_a_loop_whose_trip_count_differs_between_workgroups() -> None:
    """Workgroup x runs x + 1 iterations (as dgrad's records give), all in one chunk: each
    iteration exchanges LDS between the two waves through barriers, which every thread of a
    workgroup reaches alike."""
    body = [
        "%bx = call i32 @llvm.amdgcn.workgroup.id.x()",
        "%trip = add i32 %bx, 1",
        f"%p = getelementptr inbounds [128 x i32], ptr addrspace(3) {POOL}, i32 0, i32 %tid",
        "%o = sub i32 127, %tid",
        f"%q = getelementptr inbounds [128 x i32], ptr addrspace(3) {POOL}, i32 0, i32 %o",
        "br label %for.header.1",
        "for.header.1:",
        "%i = phi i32 [ 0, %entry ], [ %i.next, %for.latch.3 ]",
        "%acc = phi i32 [ 0, %entry ], [ %acc.next, %for.latch.3 ]",
        "%cmp = icmp slt i32 %i, %trip",
        "br i1 %cmp, label %for.body.2, label %for.exit.4",
        "for.body.2:",
        "%mine = add i32 %tid, %i",
        "store i32 %mine, ptr addrspace(3) %p, align 4",
        *BARRIER,
        "%theirs = load i32, ptr addrspace(3) %q, align 4",
        *BARRIER,
        "br label %for.latch.3",
        "for.latch.3:",
        "%i.next = add nsw i32 %i, 1",
        "%acc.next = add i32 %acc, %theirs",
        "br label %for.header.1",
        "for.exit.4:",
    ]
    out = compute(body, [("i32", "%acc")], block=128, grid=(3, 1, 1), lds=512)
    tid = np.tile(np.arange(128), 3)
    trips = np.repeat(np.arange(3) + 1, 128)
    assert out.cols[0].tolist() == [sum(127 - t + i for i in range(k)) for t, k in zip(tid, trips)]


# ---- 5. direct-to-LDS loads and their waits ----

WAIT_GFX9 = {"vmcnt0": 112, "vmcnt63": 49279}


def gfx9_wait(vm: int) -> int:
    """docs/lowering.md §5: (vm&15) | 7<<4 | 15<<8 | (vm>>4)<<14."""
    return (vm & 15) | 7 << 4 | 15 << 8 | (vm >> 4) << 14


def async_issue(size: int, region: int = 0, tag: str = "") -> list[str]:
    """Lane L copies `size` bytes of X at L·size to the LDS at region·64·size + L·size."""
    return [
        f"%voff{tag} = mul i32 %lane, {size}",
        f"%lds_ptr{tag} = inttoptr i32 {region * 64 * size} to ptr addrspace(3)",
        f"call void @llvm.amdgcn.raw.ptr.buffer.load.lds(ptr addrspace(8) %in_X, ptr addrspace(3) %lds_ptr{tag}, "
        f"i32 {size}, i32 %voff{tag}, i32 0, i32 0, i32 2)",
    ]


def async_read(size: int, region: int = 0) -> list[str]:
    """Each lane reads the bytes lane 63 - L copied, as i32 words."""
    ty = "i32" if size == 4 else f"<{size // 4} x i32>"
    lines = [
        "%rl = sub i32 63, %lane",
        f"%ra0 = mul i32 %rl, {size}",
        f"%ra = add i32 %ra0, {region * 64 * size}",
        "%rp = inttoptr i32 %ra to ptr addrspace(3)",
        f"%got = load {ty}, ptr addrspace(3) %rp, align {size}",
    ]
    if size != 4:
        lines.append(f"%w0 = extractelement {ty} %got, i32 {size // 4 - 1}")
    else:
        lines.append("%w0 = bitcast i32 %got to i32")
    return lines


@pytest.mark.parametrize("size", [4, 16], ids=["4-bytes", "16-bytes"])
def test_async_load_lands_at_vmcnt0(size: int) -> None:
    x = np.arange(64 * size // 4, dtype=np.int32) * 5 + 1
    body = [
        *async_issue(size),
        f"call void @llvm.amdgcn.s.waitcnt(i32 {WAIT_GFX9['vmcnt0']})",
        "call void @llvm.amdgcn.s.barrier()",
        *async_read(size),
    ]
    out = compute(body, [("i32", "%w0")], arch="gfx950", lds=64 * size, inputs={"X": x})
    words = x.reshape(64, size // 4)
    assert out.cols[0].tolist() == words[::-1, -1].tolist()


@pytest.mark.parametrize("size", [4, 16], ids=["4-bytes", "16-bytes"])
def test_async_load_read_before_it_lands(size: int) -> None:
    body = [
        *async_issue(size),
        f"call void @llvm.amdgcn.s.waitcnt(i32 {WAIT_GFX9['vmcnt63']})",
        "call void @llvm.amdgcn.s.barrier()",
        *async_read(size),
    ]
    x = np.arange(64 * size // 4, dtype=np.int32)
    out = compute(
        body,
        [("i32", "%w0")],
        arch="gfx950",
        lds=64 * size,
        inputs={"X": x},
        expect=("async-early", "async-unwaited", "lds-uninit"),
    )
    early = [h for h in out.result.hazards if h.kind == "async-early"]
    assert [h.where.split(" = ")[0] for h in early] == ["%got"] and early[0].count == 64


def test_async_load_never_waited_for() -> None:
    x = np.arange(64, dtype=np.int32)
    out = compute(async_issue(4), [], arch="gfx950", lds=256, inputs={"X": x}, expect=("async-unwaited",))
    (h,) = out.result.hazards
    assert h.where.startswith("llvm.amdgcn.raw.ptr.buffer.load.lds") and h.count == 64


@pytest.mark.parametrize("read,expect", [(0, ()), (16, ("async-early",))], ids=["oldest-landed", "newest-not"])
def test_vmcnt_16_uses_the_high_bits_of_the_gfx9_immediate(read: int, expect: tuple[str, ...]) -> None:
    """17 loads in flight, then vmcnt(16) (bits 15:14 hold its high bits): only the oldest
    lands."""
    body = [line for k in range(17) for line in async_issue(4, region=k, tag=f".{k}")]
    body += [f"call void @llvm.amdgcn.s.waitcnt(i32 {gfx9_wait(16)})", "call void @llvm.amdgcn.s.barrier()"]
    body += async_read(4, region=read)
    body += [f"call void @llvm.amdgcn.s.waitcnt(i32 {gfx9_wait(0)})"]
    x = np.arange(64, dtype=np.int32) + 1000
    lds_expect = expect + (("lds-uninit",) if expect else ())
    out = compute(body, [("i32", "%w0")], arch="gfx950", lds=17 * 256, inputs={"X": x}, expect=lds_expect)
    if not expect:
        assert out.cols[0].tolist() == x[::-1].tolist()


@pytest.mark.parametrize("arch,size", [("gfx942", 16), ("gfx950", 8), ("gfx1151", 4)])
def test_async_load_size_the_arch_lacks(arch: str, size: int) -> None:
    x = np.zeros(64 * size // 4, np.int32)
    with pytest.raises(ExecError, match=f"{size}-byte direct-to-LDS load does not exist on {arch}"):
        compute(async_issue(size), [], arch=arch, lds=64 * size, inputs={"X": x})


def test_gfx942_has_the_4_byte_async_load() -> None:
    x = np.arange(64, dtype=np.int32) * 3
    body = [*async_issue(4), "call void @llvm.amdgcn.s.waitcnt(i32 112)", *BARRIER[1:], *async_read(4)]
    out = compute(body, [("i32", "%w0")], arch="gfx942", lds=256, inputs={"X": x})
    assert out.cols[0].tolist() == x[::-1].tolist()


def test_async_load_past_the_pool_and_a_base_that_is_not_wave_uniform() -> None:
    x = np.arange(64, dtype=np.int32)
    past = async_issue(4, region=1)  # bytes 256..511 of a 384-byte pool: lanes 32-63 outside
    out = compute(
        [*past, "call void @llvm.amdgcn.s.waitcnt(i32 112)"],
        [],
        arch="gfx950",
        lds=384,
        inputs={"X": x},
        expect=("lds-bounds",),
    )
    assert out.count("lds-bounds") == 32
    body = [
        "%lb = mul i32 %lane, 4",
        "%lp = inttoptr i32 %lb to ptr addrspace(3)",
        "call void @llvm.amdgcn.raw.ptr.buffer.load.lds(ptr addrspace(8) %in_X, ptr addrspace(3) %lp, "
        "i32 4, i32 0, i32 0, i32 0, i32 2)",
        "call void @llvm.amdgcn.s.waitcnt(i32 112)",
    ]
    compute(body, [], arch="gfx950", lds=512, inputs={"X": x}, expect=("not-uniform",))


WAITS = [
    ("gfx942", 112, 0),
    ("gfx942", 49279, 63),
    ("gfx950", gfx9_wait(16), 16),
    ("gfx950", 7, 7),  # gfx11's full wait means vmcnt(7) on gfx9
    ("gfx1151", 7, 0),  # gfx11: vmcnt in bits 15:10
    ("gfx1151", 7 | 63 << 4 | 5 << 10, 5),
    ("gfx1151", 64519, 63),  # gfx11's LDS-only wait leaves the vector loads
    ("gfx1201", 64519, 0),  # gfx12: the legacy s_waitcnt waits for everything
    ("gfx1201", 7 | 63 << 4 | 5 << 10, 0),
]


@pytest.mark.parametrize("arch,imm,vm", WAITS, ids=[f"{a}-{i}" for a, i, _ in WAITS])
def test_waitcnt_immediate_decoding_per_arch(arch: str, imm: int, vm: int) -> None:
    """Only gfx942 and gfx950 have direct-to-LDS loads, so the gfx11 and gfx12 decodings are
    checked on the decoder itself."""
    assert vmcnt_of(SimpleNamespace(arch=arch), imm) == vm


def test_wait_loadcnt_exists_on_gfx12_only() -> None:
    body = ["call void @llvm.amdgcn.s.wait.loadcnt(i16 0)", "call void @llvm.amdgcn.s.wait.dscnt(i16 0)"]
    compute(body, [], arch="gfx1250")
    with pytest.raises(ExecError, match="s.wait.loadcnt does not exist on gfx942"):
        compute(body, [], arch="gfx942")


# ---- 6. reader errors ----

# (id, line, [(token the column points at, message)]: one of them; "" points past the end)
BAD_LINES = [
    ("udiv", "%q = udiv i32 1, 2", [("udiv", "instruction 'udiv' is outside the subset")]),
    (
        # a fence at agent scope: outside the subset whether fences are read or not (the
        # barrier's own fences are workgroup-scoped)
        "fence",
        'fence syncscope("agent") release',
        [("fence", "instruction 'fence' is outside the subset"), ('"agent"', "sync scope 'agent' is outside")],
    ),
    ("unknown-type", "%q = load <4 x double>, ptr addrspace(3) %p, align 16", [("double", "expected a type")]),
    ("missing-operand", "%q = add i32 %tid", [("", "expected ','")]),
    ("stray-character", "%q = add i32 %tid, 1 ; a comment", [(";", "unexpected character ';'")]),
    ("no-align", "%q = load i32, ptr addrspace(3) %p", [("", "expected ','")]),
    ("icmp-predicate", "%q = icmp ugt i32 %tid, 1", [("ugt", "icmp predicate 'ugt' is outside the subset")]),
]


@pytest.mark.parametrize("line,accepted", [b[1:] for b in BAD_LINES], ids=[b[0] for b in BAD_LINES])
def test_reader_names_line_and_column(line: str, accepted: list[tuple[str, str]]) -> None:
    body = [
        "%tid = call i32 @llvm.amdgcn.workitem.id.x()",
        f"%p = getelementptr inbounds [64 x i32], ptr addrspace(3) {POOL}, i32 0, i32 %tid",
        line,
    ]
    text = module(["i32 %n"], body, lds=256)
    lines = text.split("\n")
    number = lines.index("  " + line) + 1
    written = lines[number - 1]
    with pytest.raises(LlReadError) as info:
        read_ll(text)
    where = (info.value.line, info.value.column)
    found = [(number, written.index(token) + 1 if token else len(written) + 1, message) for token, message in accepted]
    assert any(where == (n, c) and message in str(info.value) for n, c, message in found), (str(info.value), found)
    with pytest.raises(LlReadError):  # run_ll reads the text first
        run_ll(text, "gfx942", {}, {"n": 1}, (1, 1, 1), 64)


def test_reader_refuses_a_second_global_and_a_seq_cst_atomic() -> None:
    text = module(["i32 %n"], [], lds=256)
    extra = "@other = internal unnamed_addr addrspace(3) global [4 x i32] poison, align 16"
    lines = text.split("\n")
    lines.insert(4, extra)
    with pytest.raises(LlReadError) as info:
        read_ll("\n".join(lines))
    assert info.value.line == 5 and "the only global is the LDS pool" in str(info.value)
    body = [
        f"%a = atomicrmw fadd ptr addrspace(1) %A, float {fx(1.0)} seq_cst, !amdgpu.no.remote.memory !1",
    ]
    text = module([gptr("A")], body)
    with pytest.raises(LlReadError, match="atomic ordering 'seq_cst'") as info:
        read_ll(text)
    assert info.value.column == text.split("\n")[info.value.line - 1].index("seq_cst") + 1


def test_executor_refuses_what_the_reader_reads_but_it_cannot_run() -> None:
    body = ["%v = load i32, ptr addrspace(1) %A, align 4"]
    with pytest.raises(ExecError, match="a load outside addrspace"):
        run_ll(module([gptr("A")], body), "gfx942", {"A": np.zeros(4, np.int32)}, None, (1, 1, 1), 64)
    with pytest.raises(ExecError, match="not a multiple of the wave"):
        run_ll(module([], ["%t = call i32 @llvm.amdgcn.workitem.id.x()"]), "gfx942", {}, None, (1, 1, 1), 32)
    with pytest.raises(ExecError, match="amdgpu-flat-work-group-size"):
        run_ll(module([], [], block=64), "gfx942", {}, None, (1, 1, 1), 128)


# ---- 7. MMA ----


def load_words(name: str, buf: str, words: int) -> list[str]:
    """%<name> = the lane's `words` i32 words of the input %in_<buf> at lane·4·words, as
    <words x i32> (v2i32 or v4i32 loads, concatenated by shufflevector)."""
    lines = [f"%{name}.at = mul i32 %lane, {4 * words}"]
    if words == 2:
        return lines + [
            f"%{name} = call <2 x i32> @llvm.amdgcn.raw.ptr.buffer.load.v2i32(ptr addrspace(8) %in_{buf}, "
            f"i32 %{name}.at, i32 0, i32 0)"
        ]
    parts = []
    for k in range(words // 4):
        lines += [
            f"%{name}.at{k} = add i32 %{name}.at, {16 * k}",
            f"%{name}.p{k} = call <4 x i32> @llvm.amdgcn.raw.ptr.buffer.load.v4i32(ptr addrspace(8) %in_{buf}, "
            f"i32 %{name}.at{k}, i32 0, i32 0)",
        ]
        parts.append((f"%{name}.p{k}", 4))
    level = 0
    while len(parts) > 1:  # concatenate pairs of equal widths
        merged = []
        for k in range(0, len(parts), 2):
            (a, w), (b, _) = parts[k], parts[k + 1]
            out = f"%{name}" if len(parts) == 2 else f"%{name}.c{level}.{k}"
            mask = ", ".join(f"i32 {e}" for e in range(2 * w))
            lines.append(f"{out} = shufflevector <{w} x i32> {a}, <{w} x i32> {b}, <{2 * w} x i32> <{mask}>")
            merged.append((out, 2 * w))
        parts, level = merged, level + 1
    return lines


def store_f32_vector(name: str, n: int) -> list[str]:
    """Stores <n x float> name at byte 4·n·lane of %Y, 4 elements per store."""
    lines = [f"%obase = mul i32 %tid, {4 * n}"]
    for j in range(n // 4):
        mask = ", ".join(f"i32 {4 * j + e}" for e in range(4))
        lines += [
            f"%part{j} = shufflevector <{n} x float> {name}, <{n} x float> poison, <4 x i32> <{mask}>",
            f"%parti{j} = bitcast <4 x float> %part{j} to <4 x i32>",
            f"%pat{j} = add i32 %obase, {16 * j}",
            f"call void @llvm.amdgcn.raw.ptr.buffer.store.v4i32(<4 x i32> %parti{j}, ptr addrspace(8) %ry, "
            f"i32 %pat{j}, i32 0, i32 0)",
        ]
    return lines


def lane_slots(lay: mma.Layout, matrix: np.ndarray, role: str) -> np.ndarray:
    """(wave, frag) f16 lane slots holding A or B by the layout; gfx11's lanes 16-31 repeat
    lanes 0-15."""
    src = lay.a_src if role == "a" else lay.b_src
    flat = np.zeros(lay.wave * lay.frag, dtype=np.float16)
    flat[src] = matrix.reshape(-1)
    slots = flat.reshape(lay.wave, lay.frag)
    if lay.replicated:
        slots[lay.wave // 2 :] = slots[: lay.wave // 2]
    return slots


MFMA_32X32X8 = (
    "%d = call <16 x float> @llvm.amdgcn.mfma.f32.32x32x8f16(<4 x half> %Av, <4 x half> %Bv, "
    "<16 x float> %Cv, i32 0, i32 0, i32 0)"
)
WMMA_GFX11 = (
    "%d = call <8 x float> @llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32.v16f16(<16 x half> %Av, <16 x half> %Bv, "
    "<8 x float> %Cv)"
)


def run_mma(
    arch: str, call: str, a_slots: np.ndarray, b_slots: np.ndarray, c_slots: np.ndarray, expect=()
) -> np.ndarray:
    """D's lane slots (wave, c_len) of one MMA call on A, B and C given as lane slots."""
    wave, frag = a_slots.shape
    c_len = c_slots.shape[1]
    body = [*rsrc("%ry", "Y")]
    for name, n in (("A", frag // 2), ("B", frag // 2), ("C", c_len)):
        elem = "float" if name == "C" else "half"
        body += load_words(f"{name}w", name, n)
        body.append(f"%{name}v = bitcast <{n} x i32> %{name}w to <{n * (2 if name != 'C' else 1)} x {elem}>")
    body += [call, *store_f32_vector("%d", c_len)]
    inputs = {"A": a_slots, "B": b_slots, "C": c_slots.astype(np.float32)}
    y = np.zeros(wave * c_len, dtype=np.float32)
    out = compute(body, [], arch=arch, block=wave, inputs=inputs, buffers={"Y": y}, expect=expect)
    return out.result.buffers["Y"].reshape(wave, c_len)


#: id -> (arch, call, MMA op, seed, (M, K, N), the (m, n) that D's lane L, slot r holds)
MMA_CHECKS = {
    # CDNA3's 32x32 C/D layout: lane L, slot r holds (8·(r//4) + 4·(L//32) + r%4, L%32)
    "mfma-32x32x8-f16-gfx942": (
        "gfx942",
        MFMA_32X32X8,
        "mfma_f32_32x32x8_f16",
        1,
        (32, 8, 32),
        lambda lane, r: (8 * (r // 4) + 4 * (lane // 32) + r % 4, lane % 32),
    ),
    # RDNA3's 16x16 C/D layout: lane L, slot r holds (2·r + L//16, L%16)
    "wmma-16x16x16-f16-gfx1151": (
        "gfx1151",
        WMMA_GFX11,
        "wmma_f32_16x16x16_f16",
        2,
        (16, 16, 16),
        lambda lane, r: (2 * r + lane // 16, lane % 16),
    ),
}


@pytest.mark.parametrize("case", list(MMA_CHECKS))
def test_mma_f16_against_numpy(case: str) -> None:
    arch, call, op_id, seed, (m, k, n), holds = MMA_CHECKS[case]
    rng = np.random.default_rng(seed)
    lay = mma.layout(op_id)
    wave = ARCH_WAVE[arch]
    a = rng.integers(-3, 4, size=(m, k)).astype(np.float16)
    b = rng.integers(-3, 4, size=(k, n)).astype(np.float16)
    c = rng.integers(-8, 8, size=(wave, m * n // wave)) / 4
    d = run_mma(arch, call, lane_slots(lay, a, "a"), lane_slots(lay, b, "b"), c)
    want = a.astype(np.float64) @ b.astype(np.float64)
    for lane, r in np.ndindex(d.shape):
        assert d[lane, r] == want[holds(lane, r)] + c[lane, r], (lane, r)


def test_wmma_gfx1151_replicas_must_repeat() -> None:
    lay = mma.layout("wmma_f32_16x16x16_f16")
    ones = np.ones((16, 16), dtype=np.float16)
    a = lane_slots(lay, ones, "a")
    a[20, 3] = 2.0  # a replica lane that differs from lane 4
    run_mma("gfx1151", WMMA_GFX11, a, lane_slots(lay, ones, "b"), np.zeros((32, 8)), expect=("wmma-replica",))


def test_mfma_needs_wave64() -> None:
    call = (
        "%d = call <16 x float> @llvm.amdgcn.mfma.f32.32x32x8f16(<4 x half> zeroinitializer, "
        "<4 x half> zeroinitializer, <16 x float> zeroinitializer, i32 0, i32 0, i32 0)"
    )
    with pytest.raises(ExecError, match="needs wave64, gfx1151 runs wave32"):
        compute([call], [], arch="gfx1151")


@pytest.mark.parametrize("arch,wide", [("gfx950", False), ("gfx1250", True)], ids=["b64-gfx950", "b128-gfx1250"])
def test_transpose_read_exchanges_lanes(arch: str, wide: bool) -> None:
    """Each lane stores its run (n i16: 100·lane + e), then reads transposed at its own run:
    b64 (groups of 16 lanes) lane L's element e is element L%4 of lane 16·(L//16) + 4e +
    (L%16)//4's run; b128 (groups of 8) lane L's element e is element L%8 of lane 8·(L//8) + e."""
    n = 8 if wide else 4
    wave = ARCH_WAVE[arch]
    vec = f"<{n} x i16>"
    if wide:
        read = [
            "%trh = call <8 x half> @llvm.amdgcn.ds.load.tr16.b128.v8f16(ptr addrspace(3) %p)",
            "%tr = bitcast <8 x half> %trh to <8 x i16>",
        ]
        waits = ["call void @llvm.amdgcn.s.wait.dscnt(i16 0)", "call void @llvm.amdgcn.s.barrier()"]
    else:
        read = [f"%tr = call {vec} @llvm.amdgcn.ds.read.tr16.b64.v4i16(ptr addrspace(3) %p)"]
        waits = BARRIER
    run = [f"%e{e} = add i32 %base, {e}" for e in range(n)]
    body = ["%base = mul i32 %lane, 100", *run]
    # build the run as <n x i16> from i32 words: pairs (e, e+1) packed little-endian
    body += [f"%hi{k} = mul i32 %e{2 * k + 1}, 65536" for k in range(n // 2)]
    body += [f"%wd{k} = or i32 %hi{k}, %e{2 * k}" for k in range(n // 2)]
    prev = "poison"
    for k in range(n // 2):
        body.append(f"%wv{k} = insertelement <{n // 2} x i32> {prev}, i32 %wd{k}, i32 {k}")
        prev = f"%wv{k}"
    body += [
        f"%runv = bitcast <{n // 2} x i32> {prev} to {vec}",
        f"%p = getelementptr inbounds [{wave} x {vec}], ptr addrspace(3) {POOL}, i32 0, i32 %lane",
        f"store {vec} %runv, ptr addrspace(3) %p, align {2 * n}",
        *waits,
        *read,
    ]
    body += [f"%t{e} = extractelement {vec} %tr, i32 {e}" for e in range(n)]
    out = compute(body, [("i16", f"%t{e}") for e in range(n)], arch=arch, block=wave, lds=wave * 2 * n)
    got = np.stack(out.cols, axis=1)
    for lane in range(wave):
        for e in range(n):
            if wide:
                src, elem = 8 * (lane // 8) + e, lane % 8
            else:
                src, elem = 16 * (lane // 16) + 4 * e + (lane % 16) // 4, lane % 4
            assert got[lane, e] == 100 * src + elem, (lane, e)


def test_transpose_read_on_an_arch_without_it() -> None:
    body = [f"%tr = call <4 x i16> @llvm.amdgcn.ds.read.tr16.b64.v4i16(ptr addrspace(3) {POOL})"]
    with pytest.raises(ExecError, match="does not exist on gfx942"):
        compute(body, [], arch="gfx942", lds=256)


# ---- the kit itself ----


def test_kit_declares_each_intrinsic_once_with_its_immargs() -> None:
    body = [
        "%t = call i32 @llvm.amdgcn.workitem.id.x()",
        "%u = call i32 @llvm.amdgcn.workitem.id.x()",
        "call void @llvm.amdgcn.s.waitcnt(i32 112)",
    ]
    text = module([], body)
    decls = [line for line in text.split("\n") if line.startswith("declare")]
    assert decls == ["declare i32 @llvm.amdgcn.workitem.id.x()", "declare void @llvm.amdgcn.s.waitcnt(i32 immarg)"]
    assert text.endswith('"amdgpu-flat-work-group-size"="64,64" norecurse nounwind }\n')
    verify(text)
