"""The pieces every implicit-GEMM kernel is made of (docs/kernels.md): the kernel context,
thread and grid decomposition, buffer resources, LDS tiles, the global->LDS tile loader,
the MMA phase, the K loops and the epilogues. The directions (build_fwd, build_wgrad,
build_dgrad) supply the params, the block decode and the three address descriptors.

Twin of rocke_c/src/build_common.c. Values are created in the order of the statements
below; every temporary is named, so the C twin creates them in the same order."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from .arch import Target
from .ir import AttrValue, Builder, Kernel, Value, ptr, smem, vec
from .mma_atoms import IR_ELEM, Atom, atom_for
from .plan import LdsTile, Plan
from .problem import ConvProblem, ceildiv
from .result import EngineFailure
from .spec import ConvSpec

OOB_OFFSET = 0x7FFFFFFF  # a byte offset past any buffer: loads read 0, stores drop
SCHED_MFMA = 0x008
SCHED_DS_READ = 0x100


@dataclass(frozen=True)
class TileOperand:
    """One GEMM operand's LDS tile and how the loader fills it."""

    name: str  # "a" or "b"
    elem: str  # IR element type
    rows: int  # LDS rows (M-outer: tile_mn)
    cols: int  # LDS columns (M-outer: tile_k + pad)
    mn: int  # the tile's free extent (tile_m or tile_n)
    vec: int  # global load width in elements
    axis: str  # "col": the vector runs along k; "row": along mn
    k_outer: bool  # stored T[k][mn] (docs/reference/conv-semantics.md §7.2) instead of T[mn][k]


@dataclass
class Kc:
    """The kernel under construction and the kernel-wide values the stages share (the plan
    and, for short, its spec, problem and target)."""

    b: Builder
    plan: Plan
    spec: ConvSpec
    problem: ConvProblem
    target: Target
    atom: Atom
    params: dict[str, Value] = field(default_factory=dict)
    tid: Optional[Value] = None
    lane: Optional[Value] = None
    wave: Optional[Value] = None
    wave_m: Optional[Value] = None
    wave_n: Optional[Value] = None
    m0: Optional[Value] = None  # the CTA tile's first GEMM row
    n0: Optional[Value] = None  # the CTA tile's first GEMM column
    group: Optional[Value] = None
    k_lo: Optional[Value] = None
    k_hi: Optional[Value] = None
    rsrc_a: Optional[Value] = None
    rsrc_b: Optional[Value] = None
    rsrc_d: Optional[Value] = None
    record: dict[str, Value] = field(default_factory=dict)  # dgrad: this CTA's sub-GEMM


#: (kc, mn, k) -> (element offset, valid) for A and B; (kc, m, n) -> ... for D.
Desc = Callable[[Kc, Value, Value], tuple[Value, Value]]


def fail(message: str) -> EngineFailure:
    return EngineFailure(f"build: {message}")


# ---- small integer helpers ----


def c(kc: Kc, value: int) -> Value:
    # const_i32, the build's commonest op: the builder's cache asked here first (most
    # constants exist already), the builder called only to make a new one
    made = kc.b.constants.get(("i32", value))
    return made if made is not None else kc.b.constant("i32", value)


def op_c(kc: Kc, op: Callable[[Value, Value], Value], x: Value, value: int) -> Value:
    """x op value, the constant made first (c, inlined: the helpers below all come here)."""
    cv = kc.b.constants.get(("i32", value))
    if cv is None:
        cv = kc.b.constant("i32", value)
    return op(x, cv)


def add_c(kc: Kc, x: Value, value: int) -> Value:
    """x + value, with no op when value is 0."""
    return x if value == 0 else op_c(kc, kc.b.add, x, value)


def mul_c(kc: Kc, x: Value, value: int) -> Value:
    return x if value == 1 else op_c(kc, kc.b.mul, x, value)


def div_c(kc: Kc, x: Value, value: int) -> Value:
    return x if value == 1 else op_c(kc, kc.b.div, x, value)


def mod_c(kc: Kc, x: Value, value: int) -> Value:
    return c(kc, 0) if value == 1 else op_c(kc, kc.b.mod, x, value)


def below(kc: Kc, x: Value, bound: int) -> Value:
    """0 <= x < bound, as one unsigned compare."""
    cv = c(kc, bound)
    return kc.b.cmp("ult", x, cv)


def below_value(kc: Kc, x: Value, bound: Value) -> Value:
    return kc.b.cmp("ult", x, bound)


def all_of(kc: Kc, conds: list[Value]) -> Value:
    acc = conds[0]
    for cond in conds[1:]:
        acc = kc.b.and_(acc, cond)
    return acc


def both_below(kc: Kc, x: Value, x_end: int, y: Value, y_end: int) -> Value:
    """x < x_end and y < y_end: a descriptor's two bounds."""
    return all_of(kc, [below(kc, x, x_end), below(kc, y, y_end)])


def byte_offset(kc: Kc, off: Value, valid: Value, eb: int) -> Value:
    """The buffer byte offset of element `off`, or past the buffer when not valid."""
    nbytes = mul_c(kc, off, eb)
    oob = c(kc, OOB_OFFSET)
    return kc.b.select(valid, nbytes, oob)


def pow2_align(*sizes: int) -> int:
    """The largest power of two, at most 16, dividing every size."""
    align = 16
    while any(size % align for size in sizes):
        align //= 2
    return align


def elem_bytes(elem: str) -> int:
    return 4 if elem == "f32" else 2


# ---- the kernel context ----


def launch_grid(plan: Plan) -> list[AttrValue]:
    """The launch grid in workgroups, x y z (docs/kernels.md §2, §4); wgrad split_k = 0
    counts z per runtime slice."""
    spec, problem = plan.spec, plan.problem
    if spec.family == "dgrad":
        tiles = sum(r[1] * r[2] for r in plan.sub_gemms)
        return [tiles, problem.groups, max(spec.split_k, 1)]
    gemm_m, gemm_n = plan.gemm[:2]
    slices = spec.split_k if spec.family == "wgrad" and spec.split_k > 1 else 1
    return [ceildiv(gemm_n, spec.tile_n), ceildiv(gemm_m, spec.tile_m), problem.groups * slices]


def begin_kernel(plan: Plan) -> Kc:
    spec = plan.spec
    attrs: dict[str, AttrValue] = {"max_workgroup_size": spec.block_size}
    if spec.waves_per_eu is not None:
        attrs["waves_per_eu"] = spec.waves_per_eu
    attrs["grid"] = launch_grid(plan)
    attrs["wave_size"] = spec.wave_size
    if spec.family == "wgrad" and spec.split_k == 0:
        attrs["split_k_runtime"] = True
    b = Builder(plan.kernel_name, attrs)
    b.op_limit = plan.op_limit  # validation kept it within MAX_KERNEL_OPS: an op past it is an engine failure
    atom = atom_for(plan.target, spec.dtype_a, spec.warp_tile_m, spec.warp_tile_n, spec.warp_tile_k)
    return Kc(b, plan, spec, plan.problem, plan.target, atom)


def add_tensor_params(kc: Kc, names: tuple[str, str, str], atomic_d: bool) -> None:
    """The three tensors and their byte sizes: A and B read-only, D write-only unless atomic."""
    s = kc.spec
    elems = (IR_ELEM[s.dtype_a], IR_ELEM[s.dtype_b], IR_ELEM[s.dtype_d])
    d_attrs: dict[str, AttrValue] = {"noalias": True} if atomic_d else {"noalias": True, "writeonly": True}
    attrs = ({"noalias": True, "readonly": True}, {"noalias": True, "readonly": True}, d_attrs)
    for name, elem, attr in zip(names, elems, attrs):
        kc.params[name] = kc.b.param(name, ptr(elem), attr)
    for name in names:
        kc.params[f"{name}_bytes"] = kc.b.param(f"{name}_bytes", "i32")


def thread_prologue(kc: Kc) -> None:
    """tid, lane, and the wave's (wave_m, wave_n) in the warp grid (wave-uniform)."""
    b, s = kc.b, kc.spec
    kc.tid = b.thread_id()
    kc.lane = b.lane_id()
    wave_raw = div_c(kc, kc.tid, s.wave_size)
    wave = b.readfirstlane(wave_raw)
    kc.wave = wave
    kc.wave_m = div_c(kc, wave, s.warp_n)
    kc.wave_n = mod_c(kc, wave, s.warp_n)


def chiplet_remap(kc: Kc, flat: Value, grid_m: int, grid_n: int) -> tuple[Value, Value]:
    """(m_tile, n_tile) of a flat block id under the XCD-aware super-tile remap (docs/kernels.md §3)."""
    b, s = kc.b, kc.spec
    total = grid_m * grid_n
    if total % (s.chiplet_num_xcds * s.chiplet_chunk_size) == 0:
        xcd = mod_c(kc, flat, s.chiplet_num_xcds)
        local = div_c(kc, flat, s.chiplet_num_xcds)
        chunk_id = div_c(kc, local, s.chiplet_chunk_size)
        chunk_base = mul_c(kc, chunk_id, s.chiplet_num_xcds)
        chunk_at = b.add(chunk_base, xcd)
        chunk_start = mul_c(kc, chunk_at, s.chiplet_chunk_size)
        within = mod_c(kc, local, s.chiplet_chunk_size)
        flat = b.add(chunk_start, within)
    width = s.chiplet_wgm * grid_n
    group_id = div_c(kc, flat, width)
    first_m = mul_c(kc, group_id, s.chiplet_wgm)
    grid_m_c = c(kc, grid_m)
    left = b.sub(grid_m_c, first_m)
    wgm_c = c(kc, s.chiplet_wgm)
    group_size = b.min(left, wgm_c)
    in_group = mod_c(kc, flat, width)
    m_in = b.mod(in_group, group_size)
    m_tile = b.add(first_m, m_in)
    n_tile = b.div(in_group, group_size)
    return m_tile, n_tile


def grid_tiles(kc: Kc) -> None:
    """m0, n0 from block ids x (N tiles) and y (M tiles), remapped under chiplet_swizzle."""
    s = kc.spec
    bx = kc.b.block_id(0)
    by = kc.b.block_id(1)
    if s.chiplet_swizzle:
        grid_m, grid_n = ceildiv(kc.plan.gemm[0], s.tile_m), ceildiv(kc.plan.gemm[1], s.tile_n)
        row = mul_c(kc, by, grid_n)
        flat = kc.b.add(row, bx)
        m_tile, n_tile = chiplet_remap(kc, flat, grid_m, grid_n)
    else:
        m_tile, n_tile = by, bx
    kc.m0 = mul_c(kc, m_tile, s.tile_m)
    kc.n0 = mul_c(kc, n_tile, s.tile_n)


def make_rsrcs(kc: Kc, names: tuple[str, str, str], with_d: bool) -> None:
    b = kc.b
    kc.rsrc_a = b.make_buffer_rsrc(kc.params[names[0]], kc.params[f"{names[0]}_bytes"])
    kc.rsrc_b = b.make_buffer_rsrc(kc.params[names[1]], kc.params[f"{names[1]}_bytes"])
    if with_d:
        kc.rsrc_d = b.make_buffer_rsrc(kc.params[names[2]], kc.params[f"{names[2]}_bytes"])


# ---- the input tensor's im2col view (fwd A, wgrad B; conv-semantics §2.2, §11) ----


def group_base(kc: Kc, per_group: int) -> Optional[Value]:
    """group * per_group, or None for an ungrouped problem."""
    if kc.group is None:
        return None
    return mul_c(kc, kc.group, per_group)


def add_opt(kc: Kc, x: Value, y: Optional[Value]) -> Value:
    return x if y is None else kc.b.add(x, y)


def row_offset(kc: Kc, row: Value, width: int, per_group: int, col: Value) -> Value:
    """row*width + group*per_group + col: a row of NHWK (or pointwise NHWC) by GEMM row."""
    start = mul_c(kc, row, width)
    grouped = add_opt(kc, start, group_base(kc, per_group))
    return kc.b.add(grouped, col)


def group_row_offset(kc: Kc, row: Value, per_group: int, width: int, col: Value) -> Value:
    """(group*per_group + row)*width + col: a row of the group's filters (KYXC, dW)."""
    k_out = add_opt(kc, row, group_base(kc, per_group))
    start = mul_c(kc, k_out, width)
    return kc.b.add(start, col)


def digits(kc: Kc, x: Value, radices: tuple[int, ...]) -> list[Value]:
    """x in a mixed radix, innermost first: x % r0, (x / r0) % r1, ..., then what is left."""
    out = []
    for radix in radices:
        out.append(mod_c(kc, x, radix))
        x = div_c(kc, x, radix)
    out.append(x)
    return out


def input_offset(kc: Kc, m: Value, k: Value, m_end: int, k_end: int) -> tuple[Value, Value]:
    """X (NHWC) at GEMM (m, k): m -> (n, [do,] ho, wo), k -> ([z,] y, x, c); valid below
    (m_end, k_end), the im2col view's N*[Do*]Ho*Wo and [Z*]Y*X*cpg."""
    b, p = kc.b, kc.problem
    if p.is_3d:
        wo, ho, do, n = digits(kc, m, (p.Wo, p.Ho, p.Do))
        ch, x, y, z = digits(kc, k, (p.cpg, p.X, p.Y))
    else:
        wo, ho, n = digits(kc, m, (p.Wo, p.Ho))
        ch, x, y = digits(kc, k, (p.cpg, p.X))
    hi = tap(kc, ho, p.sH, y, p.dH, p.pH)
    wi = tap(kc, wo, p.sW, x, p.dW, p.pW)
    conds = [below(kc, hi, p.Hi), below(kc, wi, p.Wi)]
    if p.is_3d:
        di = tap(kc, do, p.sD, z, p.dD, p.pD)
        conds.append(below(kc, di, p.Di))
    conds.append(below(kc, m, m_end))
    conds.append(below(kc, k, k_end))
    valid = all_of(kc, conds)
    if p.is_3d:
        nd = mul_c(kc, n, p.Di)
        spatial = b.add(nd, di)
    else:
        spatial = n
    return pixel_offset(kc, spatial, (hi, p.Hi), (wi, p.Wi), (ch, p.C), p.cpg), valid


def pixel_offset(
    kc: Kc, image: Value, h: tuple[Value, int], w: tuple[Value, int], c: tuple[Value, int], per_group: int
) -> Value:
    """(((image*H + h)*W + w)*C + group*per_group + c): an NHWC (or NHWK) element offset, each
    coordinate given with its extent."""
    b = kc.b
    ih = mul_c(kc, image, h[1])
    row = b.add(ih, h[0])
    rw = mul_c(kc, row, w[1])
    pixel = b.add(rw, w[0])
    base = mul_c(kc, pixel, c[1])
    grouped = add_opt(kc, base, group_base(kc, per_group))
    return b.add(grouped, c[0])


def tap(kc: Kc, out: Value, stride: int, filt: Value, dil: int, pad: int) -> Value:
    """out*stride - pad + filt*dil: the input coordinate a filter tap reads."""
    o = mul_c(kc, out, stride)
    f = mul_c(kc, filt, dil)
    s = kc.b.add(o, f)
    return add_c(kc, s, -pad)


# ---- tiles ----


def fit_width(width: int, extent: int) -> int:
    """The widest power of two <= width (itself a power of two) that divides extent: a chunk
    must not run past its tile row (docs/kernels.md §5)."""
    while extent % width != 0:
        width //= 2
    return width


def operand_tile(kc: Kc, name: str, dtype: str, lds: LdsTile, mn: int, vec_width: int, axis: str) -> TileOperand:
    """A K-outer tile is loaded along mn (one wide store per chunk); a tile loaded along k
    takes the widest width that divides tile_k."""
    axis = "row" if lds.k_outer else axis
    if axis == "col":
        vec_width = fit_width(vec_width, kc.spec.tile_k)
    return TileOperand(name, IR_ELEM[dtype], lds.rows, lds.cols, mn, vec_width, axis, lds.k_outer)


def alloc_tile(kc: Kc, t: TileOperand) -> Value:
    return kc.b.smem_alloc(smem(t.elem, t.rows, t.cols))


@dataclass(frozen=True)
class Staged:
    """One chunk of a tile, loaded from global memory and waiting for its LDS store."""

    row: Value  # tile coordinates of the chunk's first element (mn, k)
    col: Value
    value: Value
    guard: Optional[Value]  # a partial last pass: store only when set


def global_load_tile(kc: Kc, t: TileOperand, rsrc: Value, mn0: Value, k0: Value, desc: Desc) -> list[Staged]:
    """Every chunk this thread loads for one K step of tile t (docs/kernels.md §5)."""
    b, s = kc.b, kc.spec
    ktile = s.tile_k
    chunks = t.mn * ktile // t.vec
    passes = ceildiv(chunks, s.block_size)
    staged = []
    for p in range(passes):
        chunk = add_c(kc, kc.tid, p * s.block_size)
        if t.axis == "col":
            per_row = ktile // t.vec
            mn = div_c(kc, chunk, per_row)
            kq = mod_c(kc, chunk, per_row)
            k = mul_c(kc, kq, t.vec)
        else:
            per_col = t.mn // t.vec
            mq = mod_c(kc, chunk, per_col)
            mn = mul_c(kc, mq, t.vec)
            k = div_c(kc, chunk, per_col)
        g_mn = b.add(mn0, mn)
        g_k = b.add(k0, k)
        off, valid = desc(kc, g_mn, g_k)
        guard = None
        if (p + 1) * s.block_size > chunks:
            guard = below(kc, chunk, chunks)
            valid = b.and_(valid, guard)
        boff = byte_offset(kc, off, valid, elem_bytes(t.elem))
        value = b.buffer_load(rsrc, boff, t.elem, t.vec)
        staged.append(Staged(mn, k, value, guard))
    return staged


def store_tile(kc: Kc, t: TileOperand, tile: Value, staged: list[Staged]) -> None:
    """The LDS stores of the staged chunks: one wide store along k, or one per element along mn."""
    b = kc.b
    eb = elem_bytes(t.elem)
    for chunk in staged:
        if chunk.guard is not None:
            guard_op = b.if_begin(chunk.guard)
        if t.k_outer:
            b.smem_store(tile, chunk.col, chunk.row, chunk.value, pow2_align(t.vec * eb, t.cols * eb))
        elif t.axis == "col":
            b.smem_store(tile, chunk.row, chunk.col, chunk.value, pow2_align(t.vec * eb, t.cols * eb))
        else:
            for i in range(t.vec):
                elem = chunk.value if t.vec == 1 else b.extract(chunk.value, i)
                row = add_c(kc, chunk.row, i)
                b.smem_store(tile, row, chunk.col, elem, eb)
        if chunk.guard is not None:
            b.if_end(guard_op)


# ---- the MMA phase ----


@dataclass(frozen=True)
class FragLanes:
    """The lane-dependent parts of a fragment read: row (mn) and k offsets, per side."""

    mn: Value
    k: Value


def frag_lanes(kc: Kc, edge: int) -> FragLanes:
    """conv-semantics §13: the mn lane and first k of a lane's A (or B) fragment."""
    a = kc.atom
    if a.kind == "mfma":
        mn = mod_c(kc, kc.lane, edge)
        group = div_c(kc, kc.lane, edge)
        k = mul_c(kc, group, a.frag)
        return FragLanes(mn, k)
    mn = mod_c(kc, kc.lane, 16)
    if a.kind == "wmma_gfx11":
        return FragLanes(mn, c(kc, 0))
    half = div_c(kc, kc.lane, 16)
    k = mul_c(kc, half, 4 if a.kind == "wmma_gfx12" else a.frag)
    return FragLanes(mn, k)


@dataclass(frozen=True)
class WaveTile:
    """This wave's sub-tile: its first row and column in the CTA tile, and the atom counts."""

    m: Value
    n: Value
    mfmas_m: int
    mfmas_n: int


def wave_tile(kc: Kc) -> WaveTile:
    s = kc.spec
    per_m, per_n = s.tile_m // s.warp_m, s.tile_n // s.warp_n
    m = mul_c(kc, kc.wave_m, per_m)
    n = mul_c(kc, kc.wave_n, per_n)
    return WaveTile(m, n, per_m // s.warp_tile_m, per_n // s.warp_tile_n)


@dataclass(frozen=True)
class TrLanes:
    """The two wave64 transpose-read lane constants (conv-semantics §7.4), made once per kernel."""

    mod4: Value  # (lane % 4) * 4
    grp16: Value  # (lane % 16) / 4


@dataclass(frozen=True)
class SidePlan:
    """Loop-invariant LDS coordinates of one side's fragments."""

    mns: list[Value]  # per atom index: the mn coordinate of the lane's read
    ks: list[list[Value]]  # per kk step: the k coordinate of each read, in read order


@dataclass(frozen=True)
class FragPlan:
    a: SidePlan
    b: SidePlan


def tr_lanes(kc: Kc) -> TrLanes:
    m4 = mod_c(kc, kc.lane, 4)
    mod4 = mul_c(kc, m4, 4)
    m16 = mod_c(kc, kc.lane, 16)
    grp16 = div_c(kc, m16, 4)
    return TrLanes(mod4, grp16)


def m_outer_side(kc: Kc, wave_mn: Value, edge: int, count: int) -> SidePlan:
    s = kc.spec
    lanes = frag_lanes(kc, edge)
    base = kc.b.add(wave_mn, lanes.mn)
    mns = [add_c(kc, base, i * edge) for i in range(count)]
    ks = [[add_c(kc, lanes.k, kk * s.warp_tile_k)] for kk in range(s.tile_k // s.warp_tile_k)]
    return SidePlan(mns, ks)


def k_outer_side(kc: Kc, wave_mn: Value, edge: int, count: int, tr: Optional[TrLanes]) -> SidePlan:
    """The transpose-read lane map of conv-semantics §7.4: wave64 ds_read_tr16_b64, wave32 b128."""
    b, s = kc.b, kc.spec
    n = kc.atom.frag
    if tr is not None:
        in_edge = mod_c(kc, kc.lane, edge)
        block = div_c(kc, in_edge, 16)
        block_col = mul_c(kc, block, 16)
        col_lane = b.add(block_col, tr.mod4)
        group = div_c(kc, kc.lane, edge)
        group_k = mul_c(kc, group, n)
        row_lane = b.add(group_k, tr.grp16)
        per_read, reads = 4, n // 4
    else:
        l16 = mod_c(kc, kc.lane, 16)
        half = div_c(kc, l16, 8)
        col_lane = mul_c(kc, half, 8)
        group = div_c(kc, kc.lane, 16)
        group_k = mul_c(kc, group, n)
        l8 = mod_c(kc, kc.lane, 8)
        row_lane = b.add(group_k, l8)
        per_read, reads = 8, n // 8
    base = b.add(wave_mn, col_lane)
    mns = [add_c(kc, base, i * edge) for i in range(count)]
    ks = [
        [add_c(kc, row_lane, kk * s.warp_tile_k + per_read * r) for r in range(reads)]
        for kk in range(s.tile_k // s.warp_tile_k)
    ]
    return SidePlan(mns, ks)


def frag_plan(kc: Kc, wt: WaveTile, ta: TileOperand, tb: TileOperand) -> FragPlan:
    s = kc.spec
    tr = tr_lanes(kc) if (ta.k_outer or tb.k_outer) and s.wave_size == 64 else None
    if ta.k_outer:
        a = k_outer_side(kc, wt.m, s.warp_tile_m, wt.mfmas_m, tr)
    else:
        a = m_outer_side(kc, wt.m, s.warp_tile_m, wt.mfmas_m)
    if tb.k_outer:
        b = k_outer_side(kc, wt.n, s.warp_tile_n, wt.mfmas_n, tr)
    else:
        b = m_outer_side(kc, wt.n, s.warp_tile_n, wt.mfmas_n)
    return FragPlan(a, b)


def read_frag(kc: Kc, t: TileOperand, tile: Value, mn: Value, ks: list[Value]) -> Value:
    """One lane's fragment: M-outer, frag consecutive k values (gfx12: two runs of 4);
    K-outer, one transpose read per entry of ks, joined in read order."""
    b, a = kc.b, kc.atom
    eb = elem_bytes(t.elem)
    if t.k_outer:
        frag = None
        for k in ks:
            part = b.ds_read_tr16_b64(tile, k, mn) if kc.spec.wave_size == 64 else b.ds_read_tr16_b128(tile, k, mn)
            frag = part if frag is None else b.concat(frag, part)
        assert frag is not None
        return frag
    k = ks[0]
    if a.kind == "wmma_gfx12":
        lo = b.smem_load(tile, mn, k, 4, pow2_align(4 * eb, t.cols * eb))
        k_hi = add_c(kc, k, 8)
        hi = b.smem_load(tile, mn, k_hi, 4, pow2_align(4 * eb, t.cols * eb))
        return b.concat(lo, hi)
    return b.smem_load(tile, mn, k, a.frag, pow2_align(a.frag * eb, t.cols * eb))


def mma_phase(
    kc: Kc,
    plan: FragPlan,
    ta: TileOperand,
    tb: TileOperand,
    tile_a: Value,
    tile_b: Value,
    accs: list[Value],
    wt: WaveTile,
) -> list[Value]:
    """For each kk step: the A and B fragments, then one MMA per (mi, ni). Schedule policy:
    compv3/compv4 group barriers after each step (MFMA), priority 1 around the phase under
    compv4 and async_dma."""
    b, s = kc.b, kc.spec
    hints = s.pipeline in ("compv3", "compv4") and kc.atom.kind == "mfma" and not s.async_dma
    prio = s.async_dma or (hints and s.pipeline == "compv4")
    if prio:
        b.s_setprio(1)
    accs = list(accs)
    for kk in range(s.tile_k // s.warp_tile_k):
        a_frags = [read_frag(kc, ta, tile_a, mn, plan.a.ks[kk]) for mn in plan.a.mns]
        b_frags = [read_frag(kc, tb, tile_b, mn, plan.b.ks[kk]) for mn in plan.b.mns]
        for mi in range(wt.mfmas_m):
            for ni in range(wt.mfmas_n):
                at = mi * wt.mfmas_n + ni
                accs[at] = b.mma(kc.atom.op_id, a_frags[mi], b_frags[ni], accs[at])
        if hints:
            b.sched_group_barrier(SCHED_DS_READ, wt.mfmas_m + wt.mfmas_n, 0)
            b.sched_group_barrier(SCHED_MFMA, wt.mfmas_m * wt.mfmas_n, 0)
    if prio:
        b.s_setprio(0)
    return accs


# ---- K loops ----


@dataclass(frozen=True)
class Operands:
    """Both operand tiles, their descriptors and where their CTA tile starts."""

    ta: TileOperand
    tb: TileOperand
    desc_a: Desc
    desc_b: Desc
    a_mn0: Value
    b_mn0: Value


def make_operands(kc: Kc, axis_a: str, axis_b: str, desc_a: Desc, desc_b: Desc) -> Operands:
    """The plan's A and B tiles, loaded along axis_a and axis_b (a K-outer tile along mn)."""
    s, plan = kc.spec, kc.plan
    ta = operand_tile(kc, "a", s.dtype_a, plan.lds_a, s.tile_m, plan.vectors[0], axis_a)
    tb = operand_tile(kc, "b", s.dtype_b, plan.lds_b, s.tile_n, plan.vectors[1], axis_b)
    return Operands(ta, tb, desc_a, desc_b, kc.m0, kc.n0)


def acc_names(wt: WaveTile) -> list[str]:
    return [f"acc_m{mi}_n{ni}" for mi in range(wt.mfmas_m) for ni in range(wt.mfmas_n)]


def load_step(kc: Kc, ops: Operands, tile_a: Value, tile_b: Value, k0: Value) -> None:
    """A and B for one K step: every global load first, then the LDS stores."""
    staged_a = global_load_tile(kc, ops.ta, kc.rsrc_a, ops.a_mn0, k0, ops.desc_a)
    staged_b = global_load_tile(kc, ops.tb, kc.rsrc_b, ops.b_mn0, k0, ops.desc_b)
    store_tile(kc, ops.ta, tile_a, staged_a)
    store_tile(kc, ops.tb, tile_b, staged_b)


def k_loop_runtime(kc: Kc, ops: Operands, wt: WaveTile, plan: FragPlan) -> list[Value]:
    """mem/compv3/compv4: scf.for over [k_lo, k_hi) by tile_k, accumulators carried."""
    b, s = kc.b, kc.spec
    tile_a = alloc_tile(kc, ops.ta)
    tile_b = alloc_tile(kc, ops.tb)
    zero = b.zeros(vec("f32", kc.atom.c_len))
    step = c(kc, s.tile_k)
    loop = b.for_begin(kc.k_lo, kc.k_hi, step, "k0", [(name, zero) for name in acc_names(wt)])
    load_step(kc, ops, tile_a, tile_b, loop.iv)
    b.sync()
    accs = mma_phase(kc, plan, ops.ta, ops.tb, tile_a, tile_b, loop.args, wt)
    b.sync()
    return b.for_end(loop, accs)


def k_loop_unrolled(kc: Kc, ops: Operands, wt: WaveTile, plan: FragPlan, k_iters: int) -> list[Value]:
    """unroll_k: the K steps unrolled; ping-pong over two tile pairs unless compv4 (conv-semantics §9.1)."""
    b, s = kc.b, kc.spec
    buffers = 2 if s.double_buffer else 1
    tiles = []
    for _ in range(buffers):
        tile_a = alloc_tile(kc, ops.ta)
        tile_b = alloc_tile(kc, ops.tb)
        tiles.append((tile_a, tile_b))
    zero = b.zeros(vec("f32", kc.atom.c_len))
    accs = [zero for _ in acc_names(wt)]
    if buffers == 2:
        load_step(kc, ops, tiles[0][0], tiles[0][1], kc.k_lo)
        b.sync()
    for it in range(k_iters):
        if buffers == 2:
            if it + 1 < k_iters:
                k_next = add_c(kc, kc.k_lo, (it + 1) * s.tile_k)
                nxt = tiles[(it + 1) % 2]
                load_step(kc, ops, nxt[0], nxt[1], k_next)
            cur = tiles[it % 2]
        else:
            k_cur = add_c(kc, kc.k_lo, it * s.tile_k)
            cur = tiles[0]
            load_step(kc, ops, cur[0], cur[1], k_cur)
            b.sync()
        accs = mma_phase(kc, plan, ops.ta, ops.tb, cur[0], cur[1], accs, wt)
        b.sync()
    return accs


def k_loop_basic(kc: Kc, ops: Operands, wt: WaveTile, plan: FragPlan, k_iters: int) -> list[Value]:
    """pipeline basic: one tile pair; step i+1's global reads overlap step i's MMA (conv-semantics §9.1)."""
    b, s = kc.b, kc.spec
    tile_a = alloc_tile(kc, ops.ta)
    tile_b = alloc_tile(kc, ops.tb)
    zero = b.zeros(vec("f32", kc.atom.c_len))
    accs = [zero for _ in acc_names(wt)]
    staged_a = global_load_tile(kc, ops.ta, kc.rsrc_a, ops.a_mn0, kc.k_lo, ops.desc_a)
    staged_b = global_load_tile(kc, ops.tb, kc.rsrc_b, ops.b_mn0, kc.k_lo, ops.desc_b)
    store_tile(kc, ops.ta, tile_a, staged_a)
    store_tile(kc, ops.tb, tile_b, staged_b)
    for it in range(k_iters):
        has_next = it + 1 < k_iters
        if has_next:
            k_next = add_c(kc, kc.k_lo, (it + 1) * s.tile_k)
            staged_a = global_load_tile(kc, ops.ta, kc.rsrc_a, ops.a_mn0, k_next, ops.desc_a)
            staged_b = global_load_tile(kc, ops.tb, kc.rsrc_b, ops.b_mn0, k_next, ops.desc_b)
        b.sync()
        accs = mma_phase(kc, plan, ops.ta, ops.tb, tile_a, tile_b, accs, wt)
        b.sync()
        if has_next:
            store_tile(kc, ops.ta, tile_a, staged_a)
            store_tile(kc, ops.tb, tile_b, staged_b)
    return accs


# ---- the direct global->LDS loader (AsyncTileLoader, conv-semantics §8) ----

CACHE_STREAM = 2  # aux: SLC


@dataclass(frozen=True)
class AsyncPlan:
    """One operand's async chunking."""

    dwords: int
    elems: int  # elements per chunk
    passes: int
    per_row: int  # chunks per tile row


def async_plan(kc: Kc, t: TileOperand, index: int) -> AsyncPlan:
    dwords = kc.plan.async_dwords[index] if kc.plan.async_dwords else None
    if dwords is None:
        raise fail("async tile without dwords (CONV_ASYNC_NO_DWORDS is checked in mode spec)")
    elems = dwords * 4 // elem_bytes(t.elem)
    chunks = t.rows * t.cols // elems
    return AsyncPlan(dwords, elems, chunks // kc.spec.block_size, t.cols // elems)


def async_bind(kc: Kc, tile: Value, plan: AsyncPlan) -> Value:
    """The wave's LDS base for this tile: smem_addr + wave*(wave_size*dwords*4), in an SGPR."""
    addr = kc.b.smem_addr(tile)
    wave_off = mul_c(kc, kc.wave, kc.spec.wave_size * plan.dwords * 4)
    base = kc.b.add(addr, wave_off)
    return kc.b.readfirstlane(base)


def async_issue(
    kc: Kc, t: TileOperand, plan: AsyncPlan, rsrc: Value, base: Value, mn0: Value, k0: Value, desc: Desc
) -> None:
    b, s = kc.b, kc.spec
    for p in range(plan.passes):
        pass_base = add_c(kc, base, p * s.block_size * plan.dwords * 4)
        chunk = add_c(kc, kc.tid, p * s.block_size)
        row = div_c(kc, chunk, plan.per_row)
        cq = mod_c(kc, chunk, plan.per_row)
        col = mul_c(kc, cq, plan.elems)
        mn, k = (col, row) if t.k_outer else (row, col)
        g_mn = b.add(mn0, mn)
        g_k = b.add(k0, k)
        off, valid = desc(kc, g_mn, g_k)
        boff = byte_offset(kc, off, valid, elem_bytes(t.elem))
        b.async_buffer_load_lds(rsrc, pass_base, boff, plan.dwords, CACHE_STREAM)


def k_loop_async(kc: Kc, ops: Operands, wt: WaveTile, plan: FragPlan, k_iters: int) -> list[Value]:
    """async_dma: ping-pong over two tile pairs, prefetch depth 1 (conv-semantics §9.1)."""
    b, s = kc.b, kc.spec
    pa = async_plan(kc, ops.ta, 0)
    pb = async_plan(kc, ops.tb, 1)
    buffers = []
    for _ in range(2):
        tile_a = alloc_tile(kc, ops.ta)
        tile_b = alloc_tile(kc, ops.tb)
        base_a = async_bind(kc, tile_a, pa)
        base_b = async_bind(kc, tile_b, pb)
        buffers.append((tile_a, tile_b, base_a, base_b))
    zero = b.zeros(vec("f32", kc.atom.c_len))
    accs = [zero for _ in acc_names(wt)]
    per_tile = pa.passes + pb.passes

    def issue(step: int, buf: tuple[Value, Value, Value, Value]) -> None:
        k0 = add_c(kc, kc.k_lo, step * s.tile_k)
        async_issue(kc, ops.ta, pa, kc.rsrc_a, buf[2], ops.a_mn0, k0, ops.desc_a)
        async_issue(kc, ops.tb, pb, kc.rsrc_b, buf[3], ops.b_mn0, k0, ops.desc_b)

    issue(0, buffers[0])
    for it in range(k_iters):
        has_next = it + 1 < k_iters
        if has_next:
            if it > 0:
                b.sync_lds_only()
            issue(it + 1, buffers[(it + 1) % 2])
        b.s_waitcnt_vmcnt(per_tile if has_next else 0)
        if has_next:
            b.sync_lds_only()
        else:
            b.sync()
        cur = buffers[it % 2]
        accs = mma_phase(kc, plan, ops.ta, ops.tb, cur[0], cur[1], accs, wt)
    return accs


# ---- epilogues ----


def acc_epilogue(kc: Kc, v: Value) -> Value:
    """bias, scale, relu, clamp on an f32 accumulator value (conv-semantics §1.4), in that order."""
    b, s = kc.b, kc.spec
    if s.bias != 0:
        bias = b.const_f32(s.bias)
        v = b.fadd(v, bias)
    if s.scale != 1:
        scale = b.const_f32(s.scale)
        v = b.fmul(v, scale)
    if s.relu:
        zero = b.const_f32(0)
        v = b.fmax(v, zero)
    if s.clamp_min is not None:
        lo = b.const_f32(s.clamp_min)
        v = b.fmax(v, lo)
    if s.clamp_max is not None:
        hi = b.const_f32(s.clamp_max)
        v = b.fmin(v, hi)
    return v


def to_d(kc: Kc, v: Value) -> Value:
    d = IR_ELEM[kc.spec.dtype_d]
    return v if d == "f32" else kc.b.fptrunc(v, d)


def c_row_of_slot(kc: Kc, r: int) -> int:
    """The lane-independent part of accumulator slot r's row (conv-semantics §13)."""
    a = kc.atom
    if a.kind == "mfma":
        groups = 64 // a.m
        return 4 * groups * (r // 4) + r % 4
    if a.kind == "wmma_gfx11":
        return 2 * r
    return r


def c_lanes(kc: Kc) -> FragLanes:
    """The lane-dependent row (in .mn) and column (in .k) of the accumulator slots."""
    a = kc.atom
    col = mod_c(kc, kc.lane, a.n)
    if a.kind == "mfma":
        group = div_c(kc, kc.lane, a.m)
        row = mul_c(kc, group, 4)
    elif a.kind == "wmma_gfx11":
        row = div_c(kc, kc.lane, 16)
    else:
        half = div_c(kc, kc.lane, 16)
        row = mul_c(kc, half, 8)
    return FragLanes(row, col)


def atomic_pair(kc: Kc, off: Value, h: Value) -> tuple[Value, Value]:
    """A 16-bit value as a zero-filled packed pair at the even element index below off."""
    b = kc.b
    zero = b.zeros(vec(h.type, 2))
    low = b.insert(zero, h, 0)
    high = b.insert(zero, h, 1)
    parity = mod_c(kc, off, 2)
    zero_i = c(kc, 0)
    odd = b.cmp("ne", parity, zero_i)
    pair = b.select(odd, high, low)
    base = b.sub(off, parity)
    return base, pair


def store_d_value(kc: Kc, off: Value, valid: Value, v: Value) -> None:
    """One value of D (scalar or vector, already in its stored type) at element offset off."""
    b, s = kc.b, kc.spec
    if not s.atomic_split_k:
        boff = byte_offset(kc, off, valid, elem_bytes(IR_ELEM[s.dtype_d]))
        b.buffer_store(kc.rsrc_d, boff, v)
        return
    d_ptr = kc.params[D_NAMES[s.family]]
    guard = b.if_begin(valid)
    if v.type == "f32" or v.type == vec("f16", 2) or v.type == vec("bf16", 2):
        b.global_atomic_fadd(d_ptr, off, v)
    elif v.type in ("f16", "bf16"):
        base, pair = atomic_pair(kc, off, v)
        b.global_atomic_fadd(d_ptr, base, pair)
    else:
        store_d_atomic_vector(kc, d_ptr, off, v)
    b.if_end(guard)


def store_d_atomic_vector(kc: Kc, d_ptr: Value, off: Value, v: Value) -> None:
    """A wide value under atomic split-K: f32 element by element, 16-bit as adjacent pairs."""
    b = kc.b
    n = int(v.type[v.type.rindex("x") + 1 : -1])
    if v.type.startswith("vec<f32"):
        for j in range(n):
            e = b.extract(v, j)
            at = add_c(kc, off, j)
            b.global_atomic_fadd(d_ptr, at, e)
        return
    elem = v.type[4 : v.type.rindex("x")]
    for j in range(0, n, 2):
        e0 = b.extract(v, j)
        e1 = b.extract(v, j + 1)
        pair = b.from_elements([e0, e1])
        at = add_c(kc, off, j)
        if pair.type != vec(elem, 2):
            raise fail("packed atomic pair type")
        b.global_atomic_fadd(d_ptr, at, pair)


D_NAMES = {"fwd": "Y", "wgrad": "dW", "dgrad": "dX"}


def store_slots(
    kc: Kc,
    accs: list[Value],
    wt: WaveTile,
    m_base: Value,
    n_base: Value,
    desc_d: Optional[Desc],
    staging: Optional[Value],
) -> None:
    """Every accumulator slot through the accumulator epilogue, at (m_base, n_base) plus its
    atom's and its own row and column: to D through desc_d, or (desc_d None) to the staging tile."""
    b, s, a = kc.b, kc.spec, kc.atom
    eb = elem_bytes(IR_ELEM[s.dtype_d])
    for mi in range(wt.mfmas_m):
        m_atom = add_c(kc, m_base, mi * s.warp_tile_m)
        for ni in range(wt.mfmas_n):
            n_atom = add_c(kc, n_base, ni * s.warp_tile_n)
            acc = accs[mi * wt.mfmas_n + ni]
            for r in range(a.c_len):
                row = add_c(kc, m_atom, c_row_of_slot(kc, r))
                e = b.extract(acc, r)
                v = acc_epilogue(kc, e)
                d = to_d(kc, v)
                if desc_d is not None:
                    off, valid = desc_d(kc, row, n_atom)
                    store_d_value(kc, off, valid, d)
                else:
                    b.smem_store(staging, row, n_atom, d, eb)


def epilogue_default(kc: Kc, accs: list[Value], wt: WaveTile, desc_d: Desc) -> None:
    """Each accumulator slot stored by its own lane at its (m, n) (guarded by the descriptor)."""
    b = kc.b
    lanes = c_lanes(kc)
    m_wave = b.add(kc.m0, wt.m)
    m_base = b.add(m_wave, lanes.mn)
    n_wave = b.add(kc.n0, wt.n)
    n_base = b.add(n_wave, lanes.k)
    store_slots(kc, accs, wt, m_base, n_base, desc_d, None)


def epilogue_cshuffle(kc: Kc, accs: list[Value], wt: WaveTile, desc_d: Desc, vec_c: int, exclusive: bool) -> None:
    """Stage the CTA tile in LDS, then store it in vec_c-wide runs along n (conv-semantics §10.1)."""
    b, s = kc.b, kc.spec
    d_elem = IR_ELEM[s.dtype_d]
    eb = elem_bytes(d_elem)
    staging = b.smem_alloc(smem(d_elem, s.tile_m, s.tile_n), exclusive)
    lanes = c_lanes(kc)
    m_base = b.add(wt.m, lanes.mn)
    n_base = b.add(wt.n, lanes.k)
    store_slots(kc, accs, wt, m_base, n_base, None, staging)
    b.sync()
    chunks = s.tile_m * s.tile_n // vec_c
    per_row = s.tile_n // vec_c
    for p in range(ceildiv(chunks, s.block_size)):
        chunk = add_c(kc, kc.tid, p * s.block_size)
        inside = None
        if (p + 1) * s.block_size > chunks:
            # a lane past the last chunk reads chunk 0, inside the staging tile, and stores nothing
            inside = below(kc, chunk, chunks)
            zero = b.const_i32(0)
            chunk = b.select(inside, chunk, zero)
        row = div_c(kc, chunk, per_row)
        cq = mod_c(kc, chunk, per_row)
        col = mul_c(kc, cq, vec_c)
        v = b.smem_load(staging, row, col, vec_c, pow2_align(vec_c * eb, s.tile_n * eb))
        gm = b.add(kc.m0, row)
        gn = b.add(kc.n0, col)
        off, valid = desc_d(kc, gm, gn)
        if inside is not None:
            valid = b.and_(valid, inside)
        store_d_value(kc, off, valid, v)


def finish(kc: Kc) -> Kernel:
    return kc.b.ret()
