"""The barrier checks (rocke_py/check/barriers.py): the fence lint over emitted IR, and the
dataflow that finds LDS operations in flight at a barrier of the compiled assembly.

Every check is shown able to fail: each clean snippet has a faulty twin (no wait, a wait on
one side of a diamond only, an operation carried around a loop's back edge), and the real
assembly of one shipped config per arch is checked clean and then with an LDS store put
right before its first barrier."""

from __future__ import annotations

import functools
import importlib.util
import io

import pytest
from layout import REPO

from rocke_py.check.barriers import fence_lint, instructions, legacy_lgkmcnt, outstanding_lds_at_barriers
from rocke_py.check.isa import FLAVOR, check_asm, run_check_llvm, spec_value
from rocke_py.parity.inputs.configs import discover, resolve_id

HAVE_LLVMLITE = importlib.util.find_spec("llvmlite") is not None
needs_llvm = pytest.mark.skipif(not HAVE_LLVMLITE, reason="llvmlite is not installed")

# --- hand-written snippets, in each arch's own spelling ----------------------------------

#: arch -> (an LDS store, an LDS load, the wait that drains LDS, the barrier lines)
SPELLING = {
    "gfx942": ("ds_write_b128 v1, v[2:5]", "ds_read_b128 v[6:9], v1", "s_waitcnt lgkmcnt(0)", ["s_barrier"]),
    "gfx950": (
        "ds_write_b128 v1, v[2:5]",
        "ds_read_b64_tr_b16 v[6:7], v1",
        "s_waitcnt vmcnt(0) lgkmcnt(0)",
        ["s_barrier"],
    ),
    "gfx1151": ("ds_store_b128 v1, v[2:5]", "ds_load_b128 v[6:9], v1", "s_waitcnt lgkmcnt(0)", ["s_barrier"]),
    "gfx1201": (
        "ds_store_b128 v1, v[2:5]",
        "ds_load_2addr_b64 v[6:9], v1 offset1:2",
        "s_wait_dscnt 0x0",
        ["s_barrier_signal -1", "s_barrier_wait -1"],
    ),
    "gfx1250": (
        "ds_store_b128 v1, v[2:5]",
        "ds_load_tr16_b128 v[6:9], v1",
        "s_wait_loadcnt_dscnt 0x0",
        ["s_barrier_signal -1", "s_barrier_wait -1"],
    ),
}
ARCHS = list(SPELLING)


def asm(*lines: str) -> str:
    """Labels at column 0, instructions tab-indented, as LLVM prints them."""
    return "".join(f"{ln}\n" if ln.endswith(":") or ln.startswith(";") else f"\t{ln}\n" for ln in lines)


def no_wait(arch: str) -> str:
    store, _, _, barrier = SPELLING[arch]
    return asm(store, *barrier, "s_endpgm")


def waited(arch: str) -> str:
    store, _, wait, barrier = SPELLING[arch]
    return asm(store, wait, *barrier, "s_endpgm")


def diamond(arch: str, both_sides: bool) -> str:
    store, _, wait, barrier = SPELLING[arch]
    return asm(
        store,
        "s_cbranch_scc0 .LBB0_2",
        "; %bb.1:",
        wait,
        "s_branch .LBB0_3",
        ".LBB0_2:",
        wait if both_sides else "v_mov_b32_e32 v0, 0",
        ".LBB0_3:",
        *barrier,
        "s_endpgm",
    )


def loop(arch: str, wait_in_body: bool) -> str:
    """The first entry into the barrier is clean; only the back edge can carry the load."""
    _, load, wait, barrier = SPELLING[arch]
    return asm(
        "s_mov_b32 s0, 0",
        ".LBB0_1:",
        *barrier,
        load,
        "v_add_f32_e32 v0, v0, v6",
        *([wait] if wait_in_body else []),
        "s_add_i32 s0, s0, 1",
        "s_cmp_lt_i32 s0, 8",
        "s_cbranch_scc1 .LBB0_1",
        "; %bb.2:",
        "s_endpgm",
    )


FAULTY = {
    "no-wait": no_wait,
    "wait-on-one-side-of-a-diamond": lambda arch: diamond(arch, both_sides=False),
    "loop-back-edge-carries-a-load": lambda arch: loop(arch, wait_in_body=False),
}
CLEAN = {
    "waited": waited,
    "diamond-waits-on-both-sides": lambda arch: diamond(arch, both_sides=True),
    "loop-waits-before-the-back-edge": lambda arch: loop(arch, wait_in_body=True),
}


def barrier_lines(text: str) -> list[int]:
    return [i.line for i in instructions(text) if i.mnemonic.startswith("s_barrier")]


@pytest.mark.parametrize("case", list(FAULTY))
@pytest.mark.parametrize("arch", ARCHS)
def test_faulty_snippet_is_a_problem(arch: str, case: str) -> None:
    text = FAULTY[case](arch)
    problems = outstanding_lds_at_barriers(text, arch)
    assert problems, text
    # each problem names a barrier's line; the (first) barrier is among them
    named = {int(p.split()[1]) for p in problems}
    assert named <= set(barrier_lines(text)) and barrier_lines(text)[0] in named, problems
    assert all("may be outstanding" in p for p in problems)


@pytest.mark.parametrize("case", list(CLEAN))
@pytest.mark.parametrize("arch", ARCHS)
def test_clean_snippet_has_no_problem(arch: str, case: str) -> None:
    assert outstanding_lds_at_barriers(CLEAN[case](arch), arch) == []


# --- the wait model's corners -------------------------------------------------------------

#: id -> (arch, the lines before the barrier) of a corner the check must flag; the snippet ends
#: with its arch's barrier (SPELLING)
FAULTY_CORNERS = {
    "gfx9-lgkmcnt1-leaves-one": ("gfx942", ["ds_write_b32 v1, v2", "s_waitcnt lgkmcnt(1)"]),
    "gfx9-two-stores-lgkmcnt1": ("gfx950", ["ds_write_b32 v1, v2", "ds_write_b32 v1, v3", "s_waitcnt lgkmcnt(1)"]),
    "gfx9-vmcnt-only": ("gfx950", ["ds_write_b32 v1, v2", "s_waitcnt vmcnt(0)"]),
    "gfx11-lgkmcnt-sopk-sgpr": ("gfx1151", ["ds_store_b32 v1, v2", "s_waitcnt_lgkmcnt s0, 0x0"]),
    "gfx11-vmcnt-only": ("gfx1151", ["ds_store_b32 v1, v2", "s_waitcnt vmcnt(0)"]),
    # gfx1201: a partial legacy wait credits nothing
    "gfx1201-legacy-partial-wait": ("gfx1201", ["ds_store_b32 v1, v2", "s_waitcnt lgkmcnt(1)"]),
    "gfx1201-dscnt1-leaves-one": ("gfx1201", ["ds_store_b32 v1, v2", "ds_store_b32 v1, v3", "s_wait_dscnt 0x1"]),
    "gfx1201-kmcnt-is-not-lds": ("gfx1201", ["ds_store_b32 v1, v2", "s_wait_kmcnt 0x0"]),
    "gfx1250-loadcnt-dscnt-nonzero": ("gfx1250", ["ds_store_b32 v1, v2", "s_wait_loadcnt_dscnt 0x1"]),
    # a younger scalar load does not prove the older LDS store complete: scalar loads return out of order
    "gfx9-smem-younger-than-lds": (
        "gfx942",
        ["ds_write_b32 v1, v2", "s_load_dwordx2 s[0:1], s[4:5], 0x0", "s_waitcnt lgkmcnt(1)"],
    ),
    "gfx11-smem-younger-than-lds": (
        "gfx1151",
        ["ds_store_b32 v1, v2", "s_load_b64 s[0:1], s[4:5], 0x0", "s_waitcnt lgkmcnt(1)"],
    ),
}
#: the same for corners the check must pass
CLEAN_CORNERS = {
    "gfx9-bare-full-wait": ("gfx942", ["ds_write_b32 v1, v2", "s_waitcnt 0"]),
    "gfx9-expcnt-combined": ("gfx950", ["ds_write_b32 v1, v2", "s_waitcnt vmcnt(0) expcnt(0) lgkmcnt(0)"]),
    "gfx11-lgkmcnt-sopk": ("gfx1151", ["ds_store_b32 v1, v2", "s_waitcnt_lgkmcnt null, 0x0"]),
    "gfx11-permute-is-not-memory": ("gfx1151", ["ds_bpermute_b32 v1, v2, v3"]),
    # gfx1201: the legacy full wait the engines emit
    "gfx1201-legacy-full-wait": ("gfx1201", ["ds_store_b32 v1, v2", "s_waitcnt vmcnt(0) lgkmcnt(0)"]),
    "gfx1250-storecnt-dscnt": ("gfx1250", ["ds_store_b32 v1, v2", "s_wait_storecnt_dscnt 0x100"]),
    # the kernel ends on one side: that side carries nothing to the barrier
    "gfx9-endpgm-stops-fallthrough": (
        "gfx942",
        ["ds_write_b32 v1, v2", "s_cbranch_scc0 .LBB0_1", "s_endpgm", ".LBB0_1:", "s_waitcnt lgkmcnt(0)"],
    ),
    # a full wait does drain the older LDS store, scalar load or not
    "gfx9-smem-then-full-wait": (
        "gfx942",
        ["ds_write_b32 v1, v2", "s_load_dwordx2 s[0:1], s[4:5], 0x0", "s_waitcnt lgkmcnt(0)"],
    ),
}


def corner(case: str) -> tuple[str, str]:
    """(arch, snippet) of a corner: its lines, then its arch's barrier."""
    arch, lines = FAULTY_CORNERS.get(case) or CLEAN_CORNERS[case]
    return arch, asm(*lines, *SPELLING[arch][3])


@pytest.mark.parametrize("case", list(FAULTY_CORNERS))
def test_wait_model_flags_the_corner(case: str) -> None:
    arch, text = corner(case)
    assert outstanding_lds_at_barriers(text, arch), text


@pytest.mark.parametrize("case", list(CLEAN_CORNERS))
def test_wait_model_passes_the_corner(case: str) -> None:
    arch, text = corner(case)
    assert outstanding_lds_at_barriers(text, arch) == []


#: what stands between gfx1250's s_barrier_signal and s_barrier_wait, and whether it is a problem:
#: an LDS op there is ordered with neither side, even when drained
INSIDE_SIGNAL_WAIT = {
    "op-inside-signal-wait": (["ds_load_b32 v1, v2", "s_wait_dscnt 0x0"], True),
    "alu-inside-signal-wait": (["v_mov_b32_e32 v1, 0"], False),
}


@pytest.mark.parametrize("case", list(INSIDE_SIGNAL_WAIT))
def test_wait_model_inside_signal_wait(case: str) -> None:
    between, bad = INSIDE_SIGNAL_WAIT[case]
    text = asm("s_barrier_signal -1", *between, "s_barrier_wait -1")
    assert bool(outstanding_lds_at_barriers(text, "gfx1250")) == bad


def test_inside_signal_wait_is_reported_at_the_wait() -> None:
    text = asm("s_barrier_signal -1", "ds_load_b32 v1, v2", "s_wait_dscnt 0x0", "s_barrier_wait -1")
    (problem,) = outstanding_lds_at_barriers(text, "gfx1250")
    assert (
        problem.startswith("line 4 `s_barrier_wait -1`")
        and "between s_barrier_signal and s_barrier_wait (line(s) 2)" in problem
    )


def test_legacy_waitcnt_off_reads_gfx1201_as_llvm_does() -> None:
    text = asm("ds_store_b32 v1, v2", "s_waitcnt vmcnt(0) lgkmcnt(0)", "s_barrier_signal -1", "s_barrier_wait -1")
    assert outstanding_lds_at_barriers(text, "gfx1201") == []
    assert len(outstanding_lds_at_barriers(text, "gfx1201", legacy_waitcnt=False)) == 2


@pytest.mark.parametrize(
    ("operand", "major", "lgkm"),
    [
        ("112", 9, 0),  # gfx9 full drain (docs/lowering.md, Backends)
        ("49279", 9, 0),  # gfx9 LDS-only drain
        (str(0 | 7 << 4 | 15 << 8 | 3 << 14), 9, None),  # gfx9 vmcnt-only wait
        ("7", 11, 0),  # gfx11 full drain
        ("64519", 11, 0),  # gfx11 LDS-only drain
        (str(7 | 63 << 4 | 5 << 10), 11, None),  # gfx11 vmcnt-only wait
        ("0x0", 12, 0),
        ("vmcnt(0) lgkmcnt(3)", 9, 3),
        ("lgkmcnt_sat(2)", 11, 2),
        ("vmcnt(0) expcnt(0)", 9, None),
    ],
    ids=[
        "gfx9-112",
        "gfx9-49279",
        "gfx9-vm-only",
        "gfx11-7",
        "gfx11-64519",
        "gfx11-vm-only",
        "gfx12-hex0",
        "symbolic",
        "sat",
        "no-lgkm",
    ],
)
def test_legacy_lgkmcnt_decoding(operand: str, major: int, lgkm: int | None) -> None:
    assert legacy_lgkmcnt(operand, major) == lgkm


def test_regions_skip_metadata_and_name_lines_of_the_whole_listing() -> None:
    text = (
        "\t.text\n\t.type\tk,@function\nk:\n\tds_write_b32 v1, v2\n\ts_barrier\n\ts_endpgm\n.Lfunc_end0:\n"
        "\t.amdgpu_metadata\namdhsa.kernels:\n  - .name: k\n"
    )
    (problem,) = outstanding_lds_at_barriers(text, "gfx942")
    assert problem.startswith("line 5 `s_barrier`: 1 LDS op(s) may be outstanding (issued at line(s) 4)")
    assert [i.mnemonic for i in instructions(text)] == ["ds_write_b32", "s_barrier", "s_endpgm"]


def test_check_asm_reports_the_barrier_problem() -> None:
    problems = check_asm(None, "gfx942", False, no_wait("gfx942"))
    assert len(problems) == 1 and problems[0].startswith("LDS in flight at a barrier: line 2 `s_barrier`")
    assert check_asm(None, "gfx942", False, waited("gfx942")) == []


# --- the fence lint -----------------------------------------------------------------------

BARE = """\
define amdgpu_kernel void @k() {
  call void @llvm.amdgcn.s.waitcnt(i32 49279)
  call void @llvm.amdgcn.s.barrier()
  call void @llvm.amdgcn.sched.barrier(i32 0)
  call void @llvm.amdgcn.s.barrier()
  ret void
}
declare void @llvm.amdgcn.s.barrier()
"""
FENCED = BARE.replace(
    "  call void @llvm.amdgcn.s.barrier()\n",
    '  fence syncscope("workgroup") release\n  call void @llvm.amdgcn.s.barrier()\n'
    '  fence syncscope("workgroup") acquire\n',
)


def test_fence_lint_counts_and_message() -> None:
    assert fence_lint(BARE) == (0, 2, 2)
    assert fence_lint(BARE).message == "2 of 2 barriers order LDS with no workgroup fence around them"
    assert fence_lint(FENCED) == (4, 2, 0) and fence_lint(FENCED).message is None
    wavefront = BARE.replace("  ret void", '  fence syncscope("wavefront") acq_rel\n  ret void')
    assert fence_lint(wavefront) == (0, 2, 2)  # narrower than a workgroup: orders nothing between waves
    assert fence_lint("define void @f() {\n  ret void\n}\n").message is None


def test_fence_lint_is_per_barrier() -> None:
    """A fence pair around one barrier does not cover the other; an acquire before a barrier
    is not its release."""
    one = BARE.replace(
        "  call void @llvm.amdgcn.s.waitcnt(i32 49279)\n  call void @llvm.amdgcn.s.barrier()\n",
        '  call void @llvm.amdgcn.s.waitcnt(i32 49279)\n  fence syncscope("workgroup") release\n'
        '  call void @llvm.amdgcn.s.barrier()\n  fence syncscope("workgroup") acquire\n',
    )
    assert fence_lint(one) == (2, 2, 1)
    swapped = FENCED.replace("release", "TMP").replace("acquire", "release").replace("TMP", "acquire")
    assert fence_lint(swapped).bare == 2


def test_fence_lint_of_an_emitted_module() -> None:
    from rocke_py import engine

    cfg = resolve_id(discover(REPO), "fwd/00-baseline")
    text = engine.emit(cfg.data, "ll", FLAVOR).text
    fences, barriers, bare = fence_lint(text)
    assert barriers == text.count("call void @llvm.amdgcn.s.barrier()") > 0
    assert fences == 2 * barriers and bare == 0  # the engines fence every barrier
    stripped = "\n".join(line for line in text.split("\n") if not line.lstrip().startswith("fence "))
    assert fence_lint(stripped) == (0, barriers, barriers)


# --- the real assembly of one shipped config per arch -------------------------------------

#: One small config per arch (each compiles in well under a second; the 180-barrier split-K
#: kernels take seconds and are left to `rocke-parity check-llvm`).
REAL = {
    "gfx942": "fwd/02-gfx942-atom16x16x16",
    "gfx950": "fwd/00-baseline",
    "gfx1151": "wgrad/05-wmma-gfx1151",
    "gfx1201": "fwd/06-wmma-gfx1201",
    "gfx1250": "fwd/07-wmma-gfx1250",
}
STRAY_STORE = {"gfx942": "ds_write_b32 v0, v0", "gfx950": "ds_write_b32 v0, v0"}


@functools.lru_cache(maxsize=None)
def compiled(config_id: str) -> tuple[str, str]:
    """(arch, assembly) of a shipped config's llvm22 ll; once per test worker."""
    from rocke_py import engine
    from rocke_py.check.llvm import compile_ll

    cfg = resolve_id(discover(REPO), config_id)
    arch = spec_value(engine.emit(cfg.data, "spec", FLAVOR).text, "arch")
    ok, out = compile_ll(engine.emit(cfg.data, "ll", FLAVOR).text, arch, timeout=300)
    assert ok, out
    return arch, out


@needs_llvm
@pytest.mark.parametrize("config_id", list(REAL.values()), ids=[f"{a}-{c}" for a, c in REAL.items()])
def test_shipped_kernel_is_clean(config_id: str) -> None:
    arch, out = compiled(config_id)
    assert barrier_lines(out), "the kernel has no barrier: the check would prove nothing"
    assert outstanding_lds_at_barriers(out, arch) == []


@needs_llvm
@pytest.mark.parametrize("config_id", list(REAL.values()), ids=[f"{a}-{c}" for a, c in REAL.items()])
def test_shipped_kernel_with_a_stray_store_fails(config_id: str) -> None:
    arch, out = compiled(config_id)
    first = barrier_lines(out)[0]
    lines = out.splitlines()
    lines.insert(first - 1, "\t" + STRAY_STORE.get(arch, "ds_store_b32 v0, v0"))
    problems = outstanding_lds_at_barriers("\n".join(lines) + "\n", arch)
    assert problems and problems[0].startswith(f"line {first + 1} "), problems


@needs_llvm
def test_gfx1201_barriers_do_not_rest_on_the_legacy_wait() -> None:
    """The engines give gfx1201 the split waits: read as LLVM's wait insertion reads it (the
    legacy s_waitcnt waits for nothing), no LDS is in flight at a barrier, and no legacy full
    wait is left. (With the gfx11-style waits the engines used to emit, every barrier of this
    kernel had LDS in flight read that way: docs/memory-model.md.)"""
    arch, out = compiled(REAL["gfx1201"])
    assert "s_waitcnt vmcnt(0) lgkmcnt(0)" not in out
    assert outstanding_lds_at_barriers(out, arch, legacy_waitcnt=False) == []


@needs_llvm
def test_check_llvm_summary_notes_the_fence_lint() -> None:
    out = io.StringIO()
    assert run_check_llvm(REPO, [REAL["gfx950"]], 1, 300, out) == 0
    text = out.getvalue()
    assert f"PASS {REAL['gfx950']} (gfx950): compiled; isa:" in text
    assert (
        "check-llvm: note: fence lint: 0 of 1 compiled kernel(s) order LDS with bare barriers (0 of 2 barrier(s)"
        in text
    )
