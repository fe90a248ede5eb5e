"""Mode `ll` (rocke_py/engine/lower_ll.py): small kernels built with the IR builder that use
every op of docs/ir.md §4 on every arch, checked with a real LLVM (llvmlite 0.50, LLVM 22.1).

Parse, verify and codegen run in a child process (rocke_py.check.llvm.compile_ll), so an
LLVM abort fails one test and never kills an xdist worker. The asm checks name the
instructions each op must select on each arch."""

from __future__ import annotations

import importlib.util

import pytest
from layout import REPO

from rocke_py.check.llvm import compile_ll
from rocke_py.engine.arch import target_for
from rocke_py.engine.build import build_kernel
from rocke_py.engine.config import parse_config
from rocke_py.engine.ir import Builder, Kernel, ptr, smem, vec
from rocke_py.engine.lower_ll import f32_literal, lower_kernel, plan_lds
from rocke_py.engine.lower_ll_tables import DECLS, FLAVORS, MMA_ROWS, decl_text
from rocke_py.engine.mma_atoms import atom_types
from rocke_py.engine.plan import make_plan
from rocke_py.engine.problem import build_problem
from rocke_py.engine.result import EngineFailure, Rejected
from rocke_py.engine.schema import check_schema
from rocke_py.engine.spec import build_spec, deduce
from rocke_py.engine.validate import validate
from rocke_py.engine.verify import verify_kernel
from rocke_py.facts import ARCHS
from rocke_py.parity.inputs.configs import discover

HAVE_LLVMLITE = importlib.util.find_spec("llvmlite") is not None
needs_llvm = pytest.mark.skipif(not HAVE_LLVMLITE, reason="llvmlite is not installed")


def finish(b: Builder) -> Kernel:
    kernel = b.ret()
    problem = verify_kernel(kernel)
    assert problem is None, problem
    return kernel


def compiled(text: str, arch: str) -> str:
    ok, out = compile_ll(text, arch, 300.0)
    assert ok, out
    return out


def has(have: set[str], name: str) -> bool:
    """name is in the asm, also as its _e32/_e64 encoding."""
    return name in have or (name + "_e32") in have or (name + "_e64") in have


def mnemonics(asm: str) -> set[str]:
    found = set()
    for line in asm.splitlines():
        words = line.split()
        if words and not line.startswith((".", ";")) and not words[0].endswith(":"):
            found.add(words[0])
    return found


# ---- the all-ops kernel: every non-MMA op of docs/ir.md §4, per arch ----


def all_ops_kernel(arch: str) -> Kernel:
    b = Builder("all_ops_" + arch, {"max_workgroup_size": 256, "waves_per_eu": 2})
    pa = b.param("A", ptr("f16"), {"noalias": True, "readonly": True})
    pd = b.param("D", ptr("f32"), {"noalias": True})
    ph = b.param("H", ptr("f16"), {"noalias": True})
    pg = b.param("G", ptr("bf16"), {"noalias": True})
    nbytes = b.param("n", "i32")
    c0, c1, c2, c4, c16, c64 = (
        b.const_i32(0),
        b.const_i32(1),
        b.const_i32(2),
        b.const_i32(4),
        b.const_i32(16),
        b.const_i32(64),
    )
    tid = b.thread_id()
    bx = b.block_id(0)
    by = b.block_id(1)
    bz = b.block_id(2)
    lane = b.lane_id()
    wave = b.readfirstlane(b.div(tid, c64))
    ra = b.make_buffer_rsrc(pa, nbytes)
    rd = b.make_buffer_rsrc(pd, nbytes)
    off16 = b.mul(tid, c16)
    v8 = b.buffer_load(ra, off16, "f16", 8)  # 16 bytes
    v4 = b.buffer_load(ra, off16, "f16", 4)  # 8 bytes
    v2 = b.buffer_load(ra, off16, "f16", 2)  # 4 bytes
    h1 = b.buffer_load(ra, off16, "f16", 1)  # 2 bytes
    f1 = b.buffer_load(rd, off16, "f32", 1)
    i1v = b.buffer_load(rd, off16, "i32", 1)
    # arith
    s = b.add(bx, by)
    s = b.sub(s, bz)
    s = b.mul(s, c4)
    q = b.div(s, c16)
    m = b.mod(s, c16)
    lo = b.min(q, m)
    hi = b.max(q, m)
    both_ = b.and_(lo, hi)
    either = b.or_(both_, i1v)
    flags = [b.cmp(pred, tid, c64) for pred in ("eq", "ne", "slt", "sle", "sgt", "sge", "ult")]
    flag = flags[0]
    for f in flags[1:]:
        flag = b.or_(flag, f)
    flag = b.and_(flag, b.cmp("ne", lane, c0))
    pick = b.select(flag, either, wave)
    x = b.fadd(f1, b.const_f32(2))
    x = b.fmul(x, f1)
    x = b.fmax(x, b.const_f32(-1))
    x = b.fmin(x, b.const_f32(1000))
    xh = b.fptrunc(x, "f16")
    xb = b.fptrunc(x, "bf16")
    xi = b.bitcast(x, "i32")
    # LDS: a tile, an exclusive staging tile, an i64 tile that is never used
    tile = b.smem_alloc(smem("f16", 64, 72))
    stage = b.smem_alloc(smem("f32", 16, 64), exclusive=True)
    b.smem_alloc(smem("i64", 4, 4))
    row = b.div(tid, c16)
    col = b.mul(b.mod(tid, c16), c4)
    b.smem_store(tile, row, col, v4, 8)
    b.smem_store(tile, row, c0, xh, 2)
    b.sync()
    back8 = b.smem_load(tile, row, c0, 8, 16)
    back1 = b.smem_load(tile, row, col, 1, 2)
    # vector
    e0 = b.extract(back8, 0)
    ins = b.insert(v4, back1, 3)
    pair = b.from_elements([e0, h1])
    wide = b.concat(ins, v4)  # 4 + 4
    mixed = b.concat(v2, ins)  # 2 + 4 (unequal widths)
    b.smem_store(tile, row, c0, wide, 16)
    b.smem_store(tile, row, c16, b.concat(mixed, pair), 16)
    # a loop carrying a scalar and a vector; an if inside
    loop = b.for_begin(c0, b.const_i32(8), c1, "k0", [("accf", x), ("accv", v2)])
    kk = loop.iv
    ld = b.smem_load(tile, kk, col, 2, 4)
    b.sched_group_barrier(0x100, 1, 0)
    b.sched_barrier(0)
    b.s_setprio(1)
    nxt = b.fadd(loop.args[0], b.const_f32(1))
    cond = b.cmp("slt", kk, c4)
    branch = b.if_begin(cond)
    b.smem_store(stage, kk, col, nxt, 4)
    b.if_end(branch)
    b.s_setprio(0)
    accf, accv = b.for_end(loop, [nxt, ld])
    b.sync_lds_only()
    addr = b.smem_addr(stage)
    st = b.smem_load(stage, c0, col, 4, 16)
    # atomics: f32, packed f16, packed bf16
    gate = b.if_begin(b.cmp("slt", tid, c64))
    b.global_atomic_fadd(pd, tid, accf)
    two = b.mul(tid, c2)
    b.global_atomic_fadd(ph, two, accv)
    b.global_atomic_fadd(pg, two, b.from_elements([xb, xb]))
    b.if_end(gate)
    # stores of 16, 8, 4 and 2 bytes
    b.buffer_store(rd, off16, st)
    b.buffer_store(ra, off16, v4)
    b.buffer_store(ra, off16, v8)
    b.buffer_store(rd, off16, b.add(pick, b.add(addr, xi)))
    b.buffer_store(ra, off16, b.extract(back8, 7))
    b.s_waitcnt_vmcnt(0)
    # arch-specific LDS reads and the async loader
    if arch == "gfx950":
        tr = b.ds_read_tr16_b64(tile, row, col)
        b.buffer_store(ra, off16, tr)
    if arch == "gfx1250":
        tr = b.ds_read_tr16_b128(tile, row, c0)
        b.buffer_store(ra, off16, tr)
    if arch in ("gfx942", "gfx950"):
        dwords = 4 if arch == "gfx950" else 1
        lds = b.readfirstlane(b.smem_addr(tile))
        b.async_buffer_load_lds(ra, lds, off16, dwords, 2)
        b.s_waitcnt_vmcnt(0)
        b.sync()
        b.buffer_store(rd, off16, b.smem_load(tile, row, c0, 8, 16))
    return finish(b)


# Instructions the all-ops kernel must contain, per arch.
ALL_OPS_ISA = {
    "gfx942": (
        "buffer_load_dwordx4 buffer_load_dwordx2 buffer_load_dword buffer_load_ushort buffer_store_dwordx4"
        " buffer_store_dwordx2 buffer_store_dword buffer_store_short ds_write_b64 ds_read_b128"
        " v_mbcnt_lo_u32_b32 v_mbcnt_hi_u32_b32 v_readfirstlane_b32 s_barrier s_setprio v_cvt_f16_f32"
        " global_atomic_add_f32 global_atomic_pk_add_f16 global_atomic_pk_add_bf16 v_max_f32 v_min_f32"
    ),
    "gfx950": (
        "buffer_load_dwordx4 buffer_load_dwordx2 buffer_load_dword buffer_load_ushort buffer_store_dwordx4"
        " buffer_store_dwordx2 buffer_store_dword buffer_store_short ds_write_b64 ds_read_b128"
        " v_mbcnt_lo_u32_b32 v_mbcnt_hi_u32_b32 v_readfirstlane_b32 s_barrier s_setprio"
        " global_atomic_add_f32 global_atomic_pk_add_f16 global_atomic_pk_add_bf16 ds_read_b64_tr_b16"
    ),
    "gfx1151": (
        "buffer_load_b128 buffer_load_b64 buffer_load_b32 buffer_load_u16 buffer_store_b128 buffer_store_b64"
        " buffer_store_b32 buffer_store_b16 ds_store_b64 ds_load_b128 v_mbcnt_lo_u32_b32 v_readfirstlane_b32"
        " s_barrier s_setprio global_atomic_add_f32 global_atomic_cmpswap_b32"
    ),
    "gfx1201": (
        "buffer_load_b128 buffer_load_b64 buffer_load_b32 buffer_load_u16 buffer_store_b128 buffer_store_b64"
        " buffer_store_b32 buffer_store_b16 ds_store_b64 ds_load_b128 v_mbcnt_lo_u32_b32 v_readfirstlane_b32"
        " s_barrier_signal s_barrier_wait s_setprio global_atomic_add_f32 global_atomic_pk_add_f16"
        " global_atomic_pk_add_bf16"
    ),
    "gfx1250": (
        "buffer_load_b128 buffer_load_b64 buffer_load_b32 buffer_load_u16 buffer_store_b128 buffer_store_b64"
        " buffer_store_b32 buffer_store_b16 ds_store_b64 ds_load_b128 v_mbcnt_lo_u32_b32 v_readfirstlane_b32"
        " s_barrier_signal s_barrier_wait s_wait_loadcnt s_wait_dscnt s_setprio global_atomic_add_f32"
        " global_atomic_pk_add_f16 global_atomic_pk_add_bf16 ds_load_tr16_b128"
    ),
}
ASYNC_ISA = {"gfx942": "buffer_load_dword", "gfx950": "buffer_load_dwordx4"}


@needs_llvm
@pytest.mark.parametrize("flavor", ("llvm22", "llvm23"))
@pytest.mark.parametrize("arch", ARCHS)
def test_all_ops_compile(arch: str, flavor: str) -> None:
    # llvm20's make.buffer.rsrc.p1 (i32 size) is refused by LLVM 22 (docs/reference/toolchain.md §4).
    text = lower_kernel(all_ops_kernel(arch), arch, flavor)
    asm = compiled(text, arch)
    have = mnemonics(asm)
    missing = [name for name in ALL_OPS_ISA[arch].split() if not has(have, name)]
    assert not missing, missing
    if arch in ASYNC_ISA:
        assert any(
            line.split()[:1] == [ASYNC_ISA[arch]] and line.rstrip().endswith(" lds") for line in asm.splitlines()
        ), "no buffer load to LDS"
    if arch not in ("gfx950", "gfx1250"):
        assert "_tr" not in " ".join(sorted(have))


# ---- the MMA catalog: every op_id of docs/ir.md §4.5 on every arch ----


def mma_kernel(arch: str, op_ids: list[str]) -> Kernel:
    b = Builder("mma_" + arch, {"max_workgroup_size": 256})
    pd = b.param("D", ptr("f32"), {"noalias": True})
    nbytes = b.param("n", "i32")
    c0, c16 = b.const_i32(0), b.const_i32(16)
    tid = b.thread_id()
    rd = b.make_buffer_rsrc(pd, nbytes)
    off = b.mul(tid, c16)
    row = b.div(tid, c16)
    tiles = {
        "f16": b.smem_alloc(smem("f16", 64, 64)),
        "bf16": b.smem_alloc(smem("bf16", 64, 64)),
        "f32": b.smem_alloc(smem("f32", 64, 64)),
    }
    for elem, tile in tiles.items():
        width = 4 if elem == "f32" else 8
        b.smem_store(tile, row, c0, b.buffer_load(rd, off, elem, width), 16)
    b.sync()
    for op_id in op_ids:
        a_t, b_t, c_t = atom_types(op_id)
        elem = a_t[4 : a_t.index("x")] if a_t.startswith("vec<") else a_t
        n = int(a_t[a_t.rindex("x") + 1 : -1]) if a_t.startswith("vec<") else 1
        a = b.smem_load(tiles[elem], row, c0, n, 16 if n > 1 else 4)
        bb = b.smem_load(tiles[elem], row, c16, n, 16 if n > 1 else 4)
        acc = b.mma(op_id, a, bb, b.zeros(c_t))
        acc = b.mma(op_id, a, bb, acc)
        b.buffer_store(rd, off, b.extract(acc, 0))
    return finish(b)


def mma_mnemonic(op_id: str) -> str:
    """mfma_f32_32x32x8_f16 -> v_mfma_f32_32x32x8_f16; wmma_gfx12_f32_16x16x16_f16 -> v_wmma_f32_16x16x16_f16."""
    return "v_" + op_id.replace("gfx1250_", "").replace("gfx12_", "")


@needs_llvm
@pytest.mark.parametrize("arch", ARCHS)
def test_mma_catalog_compiles(arch: str) -> None:
    op_ids = [row.op_id for row in MMA_ROWS if arch in row.archs]
    assert op_ids
    asm = compiled(lower_kernel(mma_kernel(arch, op_ids), arch, "llvm22"), arch)
    have = mnemonics(asm)
    missing = [mma_mnemonic(op_id) for op_id in op_ids if not has(have, mma_mnemonic(op_id))]
    assert not missing, missing


@pytest.mark.parametrize("arch", ARCHS)
def test_mma_off_its_arch_is_rejected(arch: str) -> None:
    for row in MMA_ROWS:
        if arch in row.archs:
            continue
        with pytest.raises(EngineFailure) as info:
            lower_kernel(mma_kernel(arch, [row.op_id]), arch, "llvm22")
        assert str(info.value) == "lower: tile.mma " + row.op_id + " is not available on " + arch


def test_mma_table_covers_every_op_id() -> None:
    documented = []
    for elem in ("f16", "bf16"):
        for shape in ("32x32x8", "16x16x16", "32x32x16", "16x16x32"):
            documented.append("mfma_f32_" + shape + "_" + elem)
        documented += [
            "wmma_f32_16x16x16_" + elem,
            "wmma_gfx12_f32_16x16x16_" + elem,
            "wmma_gfx1250_f32_16x16x32_" + elem,
        ]
    documented += ["mfma_f32_16x16x4_f32", "mfma_f32_32x32x2_f32", "wmma_gfx1250_f32_16x16x4_f32"]
    assert sorted(row.op_id for row in MMA_ROWS) == sorted(documented)
    assert all(atom_types(op_id) is not None for op_id in documented)


# ---- arch gating of the other arch-specific ops ----


def one_op_kernel(arch: str, what: str) -> Kernel:
    b = Builder("one_" + what, {"max_workgroup_size": 256})
    pd = b.param("D", ptr("f16"), {"noalias": True})
    n = b.param("n", "i32")
    c0 = b.const_i32(0)
    tile = b.smem_alloc(smem("f16", 64, 64))
    r = b.make_buffer_rsrc(pd, n)
    if what == "tr64":
        b.buffer_store(r, c0, b.ds_read_tr16_b64(tile, c0, c0))
    elif what == "tr128":
        b.buffer_store(r, c0, b.ds_read_tr16_b128(tile, c0, c0))
    else:
        b.async_buffer_load_lds(r, b.smem_addr(tile), c0, 4 if what == "async16" else 1, 0)
    return finish(b)


@pytest.mark.parametrize("arch", ARCHS)
def test_arch_specific_ops_are_gated(arch: str) -> None:
    cases = (
        ("tr64", ("gfx950",), "tile.ds_read_tr16_b64 is not available on " + arch + " (gfx950 only)"),
        ("tr128", ("gfx1250",), "tile.ds_read_tr16_b128 is not available on " + arch + " (gfx1250 only)"),
        ("async4", ("gfx942", "gfx950"), "tile.async_buffer_load_lds of 4 bytes is not available on " + arch),
        ("async16", ("gfx950",), "tile.async_buffer_load_lds of 16 bytes is not available on " + arch),
    )
    for what, ok_archs, message in cases:
        kernel = one_op_kernel(arch, what)
        if arch in ok_archs:
            assert lower_kernel(kernel, arch, "llvm22").endswith("\n")
        else:
            with pytest.raises(EngineFailure) as info:
                lower_kernel(kernel, arch, "llvm22")
            assert str(info.value) == "lower: " + message


# ---- module layout, flavors, determinism ----


def test_module_layout() -> None:
    text = lower_kernel(all_ops_kernel("gfx950"), "gfx950", "llvm22")
    lines = text.split("\n")
    assert lines[0].startswith('target datalayout = "e-p:64:64-')
    assert lines[1] == 'target triple = "amdgcn-amd-amdhsa"'
    assert lines[2] == ""
    assert lines[3].startswith("@smem_pool.all_ops_gfx950 = internal unnamed_addr addrspace(3) global [")
    assert lines[3].endswith(" x i8] poison, align 16") and lines[4] == ""
    assert text.endswith(
        '"amdgpu-waves-per-eu"="2,2" norecurse nounwind }\n\n!1 = !{}\n!2 = !{!"amdgpu-synchronize-as", !"local"}\n'
    )
    assert not text.endswith("\n\n")
    assert 'attributes #0 = { "uniform-work-group-size"="true" "amdgpu-flat-work-group-size"="64,256" ' in text
    assert "target-cpu" not in text
    body = lines[lines.index("entry:") : lines.index("}")]
    for line in body:
        assert line.endswith(":") or (line.startswith("  ") and line[2] != " "), line
        assert line == line.rstrip()
    declares = [line for line in lines if line.startswith("declare ")]
    keys = [row[0] for row in DECLS]
    order = [next(i for i, row in enumerate(DECLS) if decl_text(row, FLAVORS[1]) == d) for d in declares]
    assert order == sorted(order) and len(set(order)) == len(order), "declarations out of table order"
    assert keys.index("workitem.id.x") < keys.index("s.barrier")


def test_declarations_follow_the_table_not_first_use() -> None:
    b = Builder("order", {})
    b.sync()
    b.thread_id()
    text = lower_kernel(finish(b), "gfx942", "llvm22")
    declares = [line for line in text.split("\n") if line.startswith("declare ")]
    assert declares == [
        "declare i32 @llvm.amdgcn.workitem.id.x()",
        "declare void @llvm.amdgcn.s.waitcnt(i32 immarg)",
        "declare void @llvm.amdgcn.s.barrier()",
    ]
    assert text.endswith(
        '"amdgpu-flat-work-group-size"="64,256" norecurse nounwind }\n\n!2 = !{!"amdgpu-synchronize-as", !"local"}\n'
    )
    assert "@smem_pool" not in text


def test_empty_kernel() -> None:
    text = lower_kernel(finish(Builder("empty", {"max_workgroup_size": 64})), "gfx1201", "llvm23")
    assert text == (
        'target datalayout = "' + FLAVORS[2].datalayout + '"\ntarget triple = "amdgcn-amd-amdhsa"\n\n'
        "define amdgpu_kernel void @empty() #0 {\nentry:\n  ret void\n}\n\n"
        'attributes #0 = { "uniform-work-group-size"="true" "amdgpu-flat-work-group-size"="64,64"'
        " norecurse nounwind }\n"
    )


def allowed_flavor_difference(old: str, new: str) -> bool:
    if old.startswith("target datalayout") and new.startswith("target datalayout"):
        return True
    if "make.buffer.rsrc" in old and "make.buffer.rsrc" in new:
        return True
    if old.startswith("define ") and old.replace("nocapture", "captures(none)") == new:
        return True
    return False


@pytest.mark.parametrize("arch", ARCHS)
def test_flavors_differ_only_where_the_reference_says(arch: str) -> None:
    kernel = all_ops_kernel(arch)
    texts = [lower_kernel(kernel, arch, f.name).split("\n") for f in FLAVORS]
    l20, l22, l23 = texts
    # llvm22 -> llvm23: the datalayout line only.
    assert [i for i in range(len(l22)) if l22[i] != l23[i]] == [0] and len(l22) == len(l23)
    assert l23[0].startswith('target datalayout = "e-m:e-')
    # llvm20 -> llvm22: the datalayout, make.buffer.rsrc, the define line's capture spelling, and
    # the zext of each byte count, which llvm20 does not print (its temp number is taken anyway).
    zexts = [line for line in l22 if line.startswith("  %nb64.") and " = zext i32 " in line]
    rest = [line for line in l22 if line not in zexts]
    assert len(zexts) == sum(1 for line in l22 if "call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc" in line) > 0
    assert len(rest) == len(l20)
    for old, new in zip(l20, rest):
        assert old == new or allowed_flavor_difference(old, new), (old, new)
    assert "ptr addrspace(1) noalias readonly nocapture %A" in "\n".join(l20)
    assert "ptr addrspace(1) noalias readonly captures(none) %A" in "\n".join(l22)
    assert "@llvm.amdgcn.make.buffer.rsrc.p1(ptr addrspace(1) %A, i16 0, i32 %n, i32 " in "\n".join(l20)


def test_deterministic_and_stateless() -> None:
    first = {arch: lower_kernel(all_ops_kernel(arch), arch, "llvm22") for arch in ARCHS}
    for arch in reversed(ARCHS):
        assert lower_kernel(all_ops_kernel(arch), arch, "llvm22") == first[arch]
    kernel = all_ops_kernel("gfx950")
    assert lower_kernel(kernel, "gfx950", "llvm20") == lower_kernel(kernel, "gfx950", "llvm20")


def test_bad_arch_flavor_and_attrs() -> None:
    kernel = finish(Builder("k", {}))
    with pytest.raises(EngineFailure, match="^lower: unknown arch gfx90a$"):
        lower_kernel(kernel, "gfx90a", "llvm22")
    with pytest.raises(EngineFailure, match="^lower: unknown flavor llvm21$"):
        lower_kernel(kernel, "gfx950", "llvm21")
    with pytest.raises(EngineFailure, match="^lower: unknown kernel attr bogus$"):
        lower_kernel(finish(Builder("k", {"bogus": 1})), "gfx950", "llvm22")


# ---- constants and small shapes ----


def test_f32_literals() -> None:
    assert f32_literal(2.0) == "0x4000000000000000"
    assert f32_literal(1.4426950408889634) == "0x3FF7154760000000"
    assert f32_literal(-1.0) == "0xBFF0000000000000"
    assert f32_literal(0.0) == "0x0000000000000000"
    assert f32_literal(0.1) == "0x3FB99999A0000000"


def test_constants_print_inline_and_zero_vectors_are_named() -> None:
    b = Builder("consts", {})
    pd = b.param("D", ptr("f32"), {})
    n = b.param("n", "i32")
    r = b.make_buffer_rsrc(pd, n)
    z = b.zeros(vec("f32", 4))
    b.buffer_store(r, b.const_i32(16), b.fadd(b.extract(z, 1), b.const_f32(2)))
    text = lower_kernel(finish(b), "gfx950", "llvm22")
    assert "  %cz2 = select i1 true, <4 x float> zeroinitializer, <4 x float> zeroinitializer\n" in text
    assert "  %e4 = extractelement <4 x float> %cz2, i32 1\n" in text
    assert "  %fadd6 = fadd float %e4, 0x4000000000000000\n" in text
    assert "(i32 %bsi32.2, ptr addrspace(8) %rsrc1, i32 16, i32 0, i32 0)\n" in text
    assert "ptr addrspace(1) captures(none) %D" in text


def test_loop_shape() -> None:
    b = Builder("loop", {})
    pd = b.param("D", ptr("f32"), {})
    n = b.param("n", "i32")
    r = b.make_buffer_rsrc(pd, n)
    c0, c1 = b.const_i32(0), b.const_i32(1)
    loop = b.for_begin(c0, n, c1, "k0", [("acc", b.const_f32(0))])
    nxt = b.fadd(loop.args[0], b.const_f32(1))
    (res,) = b.for_end(loop, [nxt])
    b.buffer_store(r, c0, res)
    text = lower_kernel(finish(b), "gfx942", "llvm22")
    expected = (
        "  br label %for.header.1\n"
        "for.header.1:\n"
        "  %k0 = phi i32 [ 0, %entry ], [ %iv.next.for.header.1, %for.latch.3 ]\n"
        "  %acc = phi float [ 0x0000000000000000, %entry ], [ %acc.next.for.header.1, %for.latch.3 ]\n"
        "  %cmp.2 = icmp slt i32 %k0, %n\n"
        "  br i1 %cmp.2, label %for.body.2, label %for.exit.4\n"
        "for.body.2:\n"
        "  %fadd7 = fadd float %acc, 0x3FF0000000000000\n"
        "  br label %for.latch.3\n"
        "for.latch.3:\n"
        "  %iv.next.for.header.1 = add nsw i32 %k0, 1\n"
        "  %acc.next.for.header.1 = bitcast float %fadd7 to float\n"
        "  br label %for.header.1\n"
        "for.exit.4:\n"
        "  %for5 = bitcast float %acc to float\n"
        "  %bsi32.3 = bitcast float %for5 to i32\n"
    )
    assert expected in text


def test_if_shape_and_nested_blocks() -> None:
    b = Builder("ifs", {})
    c0 = b.const_i32(0)
    tid = b.thread_id()
    outer = b.if_begin(b.cmp("eq", tid, c0))
    inner = b.if_begin(b.cmp("ne", tid, c0))
    b.sync()
    b.if_end(inner)
    b.if_end(outer)
    text = lower_kernel(finish(b), "gfx1151", "llvm22")
    assert (
        "  br i1 %cmp3, label %if.then.1, label %if.end.4\nif.then.1:\n  %cmp4 = icmp ne i32 %tid2, 0\n"
        "  br i1 %cmp4, label %if.then.2, label %if.end.3\nif.then.2:\n  call void @llvm.amdgcn.s.waitcnt(i32 7)\n"
        '  fence syncscope("workgroup") release, !mmra !2\n'
        "  call void @llvm.amdgcn.s.barrier()\n"
        '  fence syncscope("workgroup") acquire, !mmra !2\n'
        "  br label %if.end.3\nif.end.3:\n  br label %if.end.4\n"
        "if.end.4:\n  ret void\n}\n"
    ) in text


@needs_llvm
def test_unrolled_loop() -> None:
    b = Builder("unrolled", {})
    pd = b.param("D", ptr("f32"), {})
    n = b.param("n", "i32")
    r = b.make_buffer_rsrc(pd, n)
    c0, c1, c3 = b.const_i32(0), b.const_i32(1), b.const_i32(3)
    tile = b.smem_alloc(smem("f32", 4, 64))
    tid = b.thread_id()
    loop = b.for_begin(c0, c3, c1, "u", [("acc", b.const_f32(0))], unroll=True)
    b.smem_store(tile, loop.iv, tid, loop.args[0], 4)
    x = b.fadd(loop.args[0], b.smem_load(tile, c0, tid, 1, 4))
    b.sync()
    (res,) = b.for_end(loop, [x])
    b.buffer_store(r, c0, res)
    text = lower_kernel(finish(b), "gfx950", "llvm22")
    assert text.count("= add i32 0, ") == 3 and "%iv_const.2 = add i32 0, 0" in text
    assert "%fadd10.unroll0 = fadd float 0x0000000000000000, %av9.unroll0" in text
    assert "%fadd10.unroll2 = fadd float %fadd10.unroll1, %av9.unroll2" in text
    assert text.count("call void @llvm.amdgcn.s.barrier()") == 1
    assert "  %for8 = bitcast float %fadd10.unroll2 to float\n" in text
    assert "[4 x [64 x float]], ptr addrspace(3) @smem_pool.unrolled, i32 0, i32 %iv_const.5, i32 %tid6\n" in text
    assert "for.header" not in text
    compiled(text, "gfx950")


def test_unrolled_loop_needs_constant_bounds() -> None:
    b = Builder("unrolled", {})
    n = b.param("n", "i32")
    loop = b.for_begin(b.const_i32(0), n, b.const_i32(1), "u", [], unroll=True)
    b.for_end(loop, [])
    with pytest.raises(EngineFailure, match="^lower: an unrolled scf.for needs constant bounds$"):
        lower_kernel(finish(b), "gfx950", "llvm22")


FENCED_BARRIER = (
    'fence syncscope("workgroup") release, !mmra !2',
    "call void @llvm.amdgcn.s.barrier()",
    'fence syncscope("workgroup") acquire, !mmra !2',
)


def test_waits_per_arch() -> None:
    def waits(arch: str) -> list[str]:
        b = Builder("w", {})
        b.s_waitcnt_vmcnt(0)
        b.s_waitcnt_vmcnt(5)
        b.s_waitcnt_vmcnt(100)
        b.sync()
        b.sync_lds_only()
        text = lower_kernel(finish(b), arch, "llvm22")
        return [line.strip() for line in text.split("\n") if line.startswith(("  call", "  fence"))]

    gfx9 = [
        "call void @llvm.amdgcn.s.waitcnt(i32 3952)",
        "call void @llvm.amdgcn.s.waitcnt(i32 3957)",
        "call void @llvm.amdgcn.s.waitcnt(i32 53119)",
        "call void @llvm.amdgcn.s.waitcnt(i32 112)",
        *FENCED_BARRIER,
        "call void @llvm.amdgcn.s.waitcnt(i32 49279)",
        *FENCED_BARRIER,
    ]
    gfx11 = [
        "call void @llvm.amdgcn.s.waitcnt(i32 1015)",
        "call void @llvm.amdgcn.s.waitcnt(i32 6135)",
        "call void @llvm.amdgcn.s.waitcnt(i32 65527)",
        "call void @llvm.amdgcn.s.waitcnt(i32 7)",
        *FENCED_BARRIER,
        "call void @llvm.amdgcn.s.waitcnt(i32 64519)",
        *FENCED_BARRIER,
    ]
    assert waits("gfx942") == gfx9 and waits("gfx950") == gfx9
    assert waits("gfx1151") == gfx11
    assert (
        waits("gfx1250")
        == waits("gfx1201")
        == [
            "call void @llvm.amdgcn.s.wait.loadcnt(i16 0)",
            "call void @llvm.amdgcn.s.wait.storecnt(i16 0)",
            "call void @llvm.amdgcn.s.wait.loadcnt(i16 5)",
            "call void @llvm.amdgcn.s.wait.storecnt(i16 5)",
            "call void @llvm.amdgcn.s.wait.loadcnt(i16 63)",
            "call void @llvm.amdgcn.s.wait.storecnt(i16 63)",
            "call void @llvm.amdgcn.s.wait.loadcnt(i16 0)",
            "call void @llvm.amdgcn.s.wait.dscnt(i16 0)",
            *FENCED_BARRIER,
            "call void @llvm.amdgcn.s.wait.dscnt(i16 0)",
            *FENCED_BARRIER,
        ]
    )


@needs_llvm
@pytest.mark.parametrize("arch", ARCHS)
def test_waits_compile_in_every_flavor(arch: str) -> None:
    b = Builder("w", {})
    b.s_waitcnt_vmcnt(3)
    b.sync()
    b.sync_lds_only()
    kernel = finish(b)
    for flavor in ("llvm20", "llvm23"):
        compiled(lower_kernel(kernel, arch, flavor), arch)
    asm = compiled(lower_kernel(kernel, arch, "llvm22"), arch)
    have = mnemonics(asm)
    if arch in ("gfx1201", "gfx1250"):  # LLVM merges the split waits (s_wait_loadcnt_dscnt)
        assert "s_wait_storecnt" in have and "s_wait_dscnt" in have
        assert any(name.startswith("s_wait_loadcnt") for name in have)
    else:
        assert "s_waitcnt" in have


# ---- the LDS pool ----


def pool_of(kernel: Kernel) -> dict[str, int]:
    return {a.name: a.offset for a in plan_lds(kernel).allocs}


def test_lds_disjoint_lifetimes_share_bytes() -> None:
    b = Builder("lds", {})
    c0 = b.const_i32(0)
    tid = b.thread_id()
    t1 = b.smem_alloc(smem("f32", 8, 8))
    b.smem_store(t1, c0, tid, b.smem_load(t1, c0, c0, 1, 4), 4)
    t2 = b.smem_alloc(smem("f32", 4, 4))
    b.smem_store(t2, c0, tid, b.smem_load(t2, c0, c0, 1, 4), 4)
    kernel = finish(b)
    assert pool_of(kernel) == {t1.name: 0, t2.name: 0}
    assert plan_lds(kernel).size == 256


def test_lds_exclusive_is_never_shared() -> None:
    b = Builder("lds", {})
    c0 = b.const_i32(0)
    t1 = b.smem_alloc(smem("f32", 8, 8), exclusive=True)
    b.smem_store(t1, c0, c0, b.const_f32(1), 4)
    t2 = b.smem_alloc(smem("f32", 4, 4))
    b.smem_store(t2, c0, c0, b.const_f32(1), 4)
    t3 = b.smem_alloc(smem("f32", 4, 4), exclusive=True)
    b.smem_store(t3, c0, c0, b.const_f32(1), 4)
    t4 = b.smem_alloc(smem("f32", 4, 4))
    b.smem_store(t4, c0, c0, b.const_f32(1), 4)
    kernel = finish(b)
    assert pool_of(kernel) == {t1.name: 0, t2.name: 256, t3.name: 320, t4.name: 256}
    assert plan_lds(kernel).size == 384


def test_lds_use_in_a_loop_lives_to_the_end_of_the_outermost_loop() -> None:
    b = Builder("lds", {})
    c0, c1, c4 = b.const_i32(0), b.const_i32(1), b.const_i32(4)
    t1 = b.smem_alloc(smem("f32", 8, 8))
    outer = b.for_begin(c0, c4, c1, "i", [])
    inner = b.for_begin(c0, c4, c1, "j", [])
    b.smem_store(t1, inner.iv, c0, b.const_f32(1), 4)  # t1's last use, deep in the loop
    b.for_end(inner, [])
    t2 = b.smem_alloc(smem("f32", 8, 8))  # defined later in the same loop
    b.smem_store(t2, outer.iv, c0, b.const_f32(2), 4)
    b.for_end(outer, [])
    t3 = b.smem_alloc(smem("f32", 8, 8))  # after the loop: reuses t1's bytes
    b.smem_store(t3, c0, c0, b.const_f32(3), 4)
    kernel = finish(b)
    assert pool_of(kernel) == {t1.name: 0, t2.name: 256, t3.name: 0}
    text = lower_kernel(kernel, "gfx950", "llvm22")
    assert "global [512 x i8] poison, align 16" in text
    assert (
        "for.exit.6:\n  %smem_base.4 = getelementptr inbounds i8, ptr addrspace(3) @smem_pool.lds, i32 256\n"
        "  %gep.5 = getelementptr inbounds [8 x [8 x float]], ptr addrspace(3) %smem_base.4, i32 0, i32 %i, i32 0\n"
        in text
    )
    assert "for.exit.8:\n  %gep.6 = getelementptr inbounds [8 x [8 x float]], ptr addrspace(3) @smem_pool.lds," in text


def test_lds_alignment_rounding_and_unreferenced() -> None:
    b = Builder("lds", {})
    c0 = b.const_i32(0)
    t1 = b.smem_alloc(smem("f16", 3, 3))  # 18 bytes
    unused = b.smem_alloc(smem("f32", 64, 64))
    t2 = b.smem_alloc(smem("f16", 1, 8))
    x = b.smem_load(t1, c0, c0, 1, 2)
    b.smem_store(t2, c0, c0, x, 4)
    kernel = finish(b)
    plan = plan_lds(kernel)
    assert pool_of(kernel) == {t1.name: 0, unused.name: -1, t2.name: 20}
    assert plan.size == 48
    text = lower_kernel(kernel, "gfx950", "llvm22")
    assert "global [48 x i8] poison, align 16" in text
    # An access that claims more alignment than the allocation's pool offset has is refused.
    b = Builder("lds", {})
    t1 = b.smem_alloc(smem("f16", 3, 3))
    t2 = b.smem_alloc(smem("f16", 1, 8))
    b.smem_store(t2, b.const_i32(0), b.const_i32(0), b.smem_load(t1, b.const_i32(0), b.const_i32(0), 8, 16), 16)
    with pytest.raises(
        EngineFailure,
        match="^lower: tile.smem_store on %smem2 claims align 16 but the allocation is at pool offset 20$",
    ):
        lower_kernel(finish(b), "gfx950", "llvm22")


def test_lds_over_capacity_is_an_engine_failure() -> None:
    b = Builder("big", {})
    t = b.smem_alloc(smem("f32", 256, 65))
    b.smem_store(t, b.const_i32(0), b.const_i32(0), b.const_f32(0), 4)
    kernel = finish(b)
    assert lower_kernel(kernel, "gfx950", "llvm22")
    with pytest.raises(EngineFailure, match="^lower: the LDS pool of 66560 bytes exceeds the 65536 bytes of gfx942$"):
        lower_kernel(kernel, "gfx942", "llvm22")


# ---- the declaration table against LLVM 22's intrinsic signatures ----


@needs_llvm
def test_declarations_match_llvm() -> None:
    import llvmlite.binding as llvm

    for flavor in FLAVORS[1:]:
        for row in DECLS:
            text = decl_text(row, flavor)
            mod = llvm.parse_assembly(text + "\n")
            mod.verify()
            printed = [line for line in str(mod).split("\n") if line.startswith("declare ")][0]
            name = text[text.index("@") : text.index("(", text.index("@"))]
            ours = text[text.index("(", text.index("@")) :]
            theirs = printed[printed.index(name) + len(name) :]
            theirs = theirs[: theirs.rindex(")") + 1]
            for noise in (" readonly", " writeonly", " readnone", " captures(none)", " noundef"):
                theirs = theirs.replace(noise, "")
            assert ours == theirs, (row[0], ours, theirs)


# ---- compile_ll itself ----

TINY = (
    'target triple = "amdgcn-amd-amdhsa"\n\ndeclare void @llvm.amdgcn.s.waitcnt(i32 immarg)\n\n'
    "define amdgpu_kernel void @k() {\nentry:\n  call void @llvm.amdgcn.s.waitcnt(i32 112)\n  ret void\n}\n"
)


@needs_llvm
def test_compile_ll_reports_failures_without_dying(monkeypatch: pytest.MonkeyPatch) -> None:
    ok, asm = compile_ll(TINY, "gfx942")
    assert ok and "s_waitcnt" in asm
    ok, err = compile_ll(TINY, "gfx1250")  # Cannot select: an abort in the child
    assert not ok and err.startswith("codegen for gfx1250 failed (rc=")
    ok, err = compile_ll(TINY.replace("ret void", "ret i32 0"), "gfx942")
    assert not ok and err.startswith("invalid IR: ")
    ok, err = compile_ll(TINY.replace("s.waitcnt", "s.no.such.intrinsic"), "gfx942")
    assert not ok and "llvm.amdgcn" in err
    ok, err = compile_ll(TINY, "gfx9999")
    assert not ok
    monkeypatch.setenv("ROCKE_PARITY_LLVM_CACHE", "0")  # a kept assembly would answer before any timeout
    ok, err = compile_ll(TINY, "gfx942", timeout=0.001)
    assert not ok and err.startswith("timeout: ")


# ---- the real kernels ----

#: every emitting config: built in its test, not at collection (each xdist worker collects)
EMITTING = [cfg for cfg in discover(REPO).configs if cfg.expect.emits]


def real_kernel(cfg) -> tuple[object, str]:
    """The Python builder's kernel for an emitting config, and its arch."""
    fields = check_schema(parse_config(cfg.data.decode("utf-8")))
    assert not isinstance(fields, Rejected), fields
    arch = fields.values["arch"]
    target = target_for(arch)
    problem = build_problem(fields.values)
    spec = deduce(build_spec(fields.family, arch, fields.values), problem, target)
    assert not validate(spec, problem, target)
    plan = make_plan(spec, problem, target)
    assert not isinstance(plan, Rejected), plan
    return build_kernel(plan), arch


@needs_llvm
@pytest.mark.parametrize("cfg", EMITTING, ids=[c.id for c in EMITTING])
def test_real_kernel_lowers_and_compiles(cfg) -> None:
    cid = cfg.id
    kernel, arch = real_kernel(cfg)
    text = lower_kernel(kernel, arch, "llvm22")
    assert text == lower_kernel(kernel, arch, "llvm22")
    assert lower_kernel(kernel, arch, "llvm23") != text
    asm = compiled(text, arch)
    have = mnemonics(asm)
    mma = {"gfx942": "v_mfma", "gfx950": "v_mfma", "gfx1151": "v_wmma", "gfx1201": "v_wmma", "gfx1250": "v_wmma"}[arch]
    assert any(name.startswith(mma) for name in have), cid


def test_datalayouts() -> None:
    dl20, dl22, dl23 = (f.datalayout for f in FLAVORS)
    assert dl20 == (
        "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128"
        "-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512"
        "-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
    )
    assert dl22 == dl20.replace("-p8:128:128-", "-p8:128:128:128:48-")
    assert dl23 == "e-m:e-" + dl22[len("e-") :]
