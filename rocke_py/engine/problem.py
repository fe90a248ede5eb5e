"""ConvProblem: the convolution, its derived sizes, short(), and dgrad's tilde sub-GEMMs.

Twin of rocke_c/src/problem.c (docs/reference/conv-semantics.md §1, §2.4)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Optional, Union

from .result import Rejected

INT32_MAX = 2147483647
_3D_FIELDS = ("Di", "Z", "sD", "pD", "dD")
#: The [problem] keys, in the order of the schema and of mode `spec`'s lines.
PROBLEM_KEYS = ("N", "Hi", "Wi", "C", "K", "Y", "X", "sH", "sW", "pH", "pW", "dH", "dW", "groups") + _3D_FIELDS


@dataclass(frozen=True)
class ConvProblem:
    """The convolution. Its derived sizes are computed once per problem (cached_property keeps
    them out of the fields, so equality and replace() see only the config's values)."""

    N: int
    Hi: int
    Wi: int
    C: int
    K: int
    Y: int
    X: int
    sH: int = 1
    sW: int = 1
    pH: int = 0
    pW: int = 0
    dH: int = 1
    dW: int = 1
    groups: int = 1
    Di: Optional[int] = None
    Z: Optional[int] = None
    sD: Optional[int] = None
    pD: Optional[int] = None
    dD: Optional[int] = None

    @cached_property
    def is_3d(self) -> bool:
        return self.Di is not None

    @cached_property
    def cpg(self) -> int:
        return self.C // self.groups

    @cached_property
    def kpg(self) -> int:
        return self.K // self.groups

    @cached_property
    def Ho(self) -> int:
        return out_size(self.Hi, self.pH, self.dH, self.Y, self.sH)

    @cached_property
    def Wo(self) -> int:
        return out_size(self.Wi, self.pW, self.dW, self.X, self.sW)

    @cached_property
    def Do(self) -> int:
        assert self.is_3d
        return out_size(self.Di, self.pD, self.dD, self.Z, self.sD)

    @cached_property
    def filter_z(self) -> int:
        return self.Z if self.is_3d else 1

    @cached_property
    def out_depth(self) -> int:
        return self.Do if self.is_3d else 1

    @cached_property
    def in_depth(self) -> int:
        return self.Di if self.is_3d else 1

    @cached_property
    def is_pointwise(self) -> bool:
        flat = self.Y == 1 and self.X == 1 and self.sH == 1 and self.sW == 1
        flat = flat and self.pH == 0 and self.pW == 0
        if self.is_3d:
            flat = flat and self.Z == 1 and self.sD == 1 and self.pD == 0
        return flat

    def short(self) -> str:
        if self.is_3d:
            s = f"N{self.N}D{self.Di}H{self.Hi}W{self.Wi}C{self.C}_K{self.K}Z{self.Z}Y{self.Y}X{self.X}"
        else:
            s = f"N{self.N}H{self.Hi}W{self.Wi}C{self.C}_K{self.K}Y{self.Y}X{self.X}"
        if self.groups > 1:
            s += f"G{self.groups}"
        return s


def floordiv(a: int, b: int) -> int:
    return a // b


def ceildiv(a: int, b: int) -> int:
    return -((-a) // b)


def roundup(a: int, b: int) -> int:
    return ceildiv(a, b) * b


def out_size(size: int, pad: int, dil: int, filt: int, stride: int) -> int:
    return floordiv(size + 2 * pad - dil * (filt - 1) - 1, stride) + 1


def _check_groups(p: ConvProblem) -> Optional[Rejected]:
    code = "CONV_GROUPS_INVALID"
    if p.groups < 1:
        return Rejected(code, f"groups = {p.groups} must be at least 1")
    if p.C % p.groups != 0:
        return Rejected(code, f"C = {p.C} is not divisible by groups = {p.groups}")
    if p.K % p.groups != 0:
        return Rejected(code, f"K = {p.K} is not divisible by groups = {p.groups}")
    return None


def _check_3d_fields(values: dict) -> Optional[Rejected]:
    present = [k for k in _3D_FIELDS if k in values]
    if 0 < len(present) < len(_3D_FIELDS):
        missing = [k for k in _3D_FIELDS if k not in values]
        return Rejected(
            "CONV_3D_FIELDS_PARTIAL", f"3-D fields are partial: set {', '.join(present)} but not {', '.join(missing)}"
        )
    return None


def _check_output_size(name: str, value: int) -> Optional[Rejected]:
    if value < 1:
        return Rejected("E_RANGE", f"[problem]: output size {name} = {value} is not positive")
    if value > INT32_MAX:
        return Rejected("E_RANGE", f"[problem]: output size {name} = {value} exceeds {INT32_MAX}")
    return None


def _check_product(label: str, factors: tuple[int, ...]) -> Optional[Rejected]:
    product = 1
    for f in factors:
        product *= f
        if product > INT32_MAX:
            return Rejected("E_RANGE", f"[problem]: {label} exceeds {INT32_MAX}")
    return None


def _check_sizes(p: ConvProblem) -> Optional[Rejected]:
    outs = [("Ho", p.Ho), ("Wo", p.Wo)]
    if p.is_3d:
        outs.append(("Do", p.Do))
    for name, value in outs:
        bad = _check_output_size(name, value)
        if bad:
            return bad
    if p.is_3d:
        products = (
            ("N*Do*Ho*Wo", (p.N, p.Do, p.Ho, p.Wo)),
            ("N*Di*Hi*Wi", (p.N, p.Di, p.Hi, p.Wi)),
            ("Z*Y*X*C", (p.Z, p.Y, p.X, p.C)),
            ("Z*Y*X*K", (p.Z, p.Y, p.X, p.K)),
        )
    else:
        products = (
            ("N*Ho*Wo", (p.N, p.Ho, p.Wo)),
            ("N*Hi*Wi", (p.N, p.Hi, p.Wi)),
            ("Y*X*C", (p.Y, p.X, p.C)),
            ("Y*X*K", (p.Y, p.X, p.K)),
        )
    for label, factors in products:
        bad = _check_product(label, factors)
        if bad:
            return bad
    return None


def build_problem(values: dict) -> ConvProblem | Rejected:
    """values: the present [problem] keys (schema-checked ints); ConvProblem holds the defaults."""
    p = ConvProblem(**{key: values[key] for key in PROBLEM_KEYS if key in values})
    for check in (_check_groups(p), _check_3d_fields(values)):
        if check:
            return check
    return _check_sizes(p) or p


# ---- GEMM views (conv-semantics §2.1, §11) ----


def fwd_gemm(p: ConvProblem) -> tuple[int, int, int]:
    return p.N * p.out_depth * p.Ho * p.Wo, p.kpg, p.filter_z * p.Y * p.X * p.cpg


def wgrad_gemm(p: ConvProblem) -> tuple[int, int, int]:
    return p.kpg, p.filter_z * p.Y * p.X * p.cpg, p.N * p.out_depth * p.Ho * p.Wo


def dgrad_gemm(p: ConvProblem) -> tuple[int, int, int]:
    return p.N * p.in_depth * p.Hi * p.Wi, p.cpg, p.filter_z * p.Y * p.X * p.kpg


# ---- strided dgrad: the tilde decomposition (conv-semantics §2.4) ----

SUB_GEMM_FIELDS = (
    "block_start",
    "num_m_tiles",
    "num_n_tiles",
    "gemm_m",
    "gemm_k",
    "h_slice",
    "w_slice",
    "h_begin",
    "w_begin",
    "y_dot_slice",
    "x_dot_slice",
    "a_h_coeff",
    "a_w_coeff",
    "b_y_stride",
    "b_y_offset",
    "b_x_stride",
    "b_x_offset",
    "d_h_stride",
    "d_h_offset",
    "d_w_stride",
    "d_w_offset",
    "gemm_k_padded",
)


@dataclass(frozen=True)
class Axis:
    """One spatial axis of the tilde decomposition (H with Y, or W with X)."""

    size_in: int
    size_out: int
    filt: int
    stride: int
    pad: int
    dil: int

    @cached_property
    def tilde(self) -> int:
        return self.stride // gcd(self.stride, self.dil)

    @cached_property
    def out_tilde(self) -> int:
        if self.filt > 1:
            return self.size_out + ceildiv(self.dil * (self.filt - 1), self.stride)
        return self.size_out

    def dot_slice(self, i_t: int) -> int:
        return ceildiv(self.filt - i_t, self.tilde)

    def begin(self) -> int:
        return floordiv(max(0, self.pad - self.dil * (self.tilde - 1)), self.stride)

    def end(self) -> int:
        return min(self.out_tilde, ceildiv(self.pad + self.size_in - 1, self.stride) + 1)


def gcd(a: int, b: int) -> int:
    while b:
        a, b = b, a % b
    return a


MAX_SUB_GEMM_CANDIDATES = 4096


def tilde_axes(p: ConvProblem) -> tuple[Axis, Axis]:
    return Axis(p.Hi, p.Ho, p.Y, p.sH, p.pH, p.dH), Axis(p.Wi, p.Wo, p.X, p.sW, p.pW, p.dW)


def sub_gemm_candidates(p: ConvProblem) -> tuple[int, int]:
    """Pairs with i_yt >= Y (or i_xt >= X) have an empty dot slice: only these can be kept."""
    h, w = tilde_axes(p)
    return min(h.tilde, p.Y), min(w.tilde, p.X)


def check_sub_gemm_candidates(p: ConvProblem) -> Optional[Rejected]:
    rows, cols = sub_gemm_candidates(p)
    if rows * cols > MAX_SUB_GEMM_CANDIDATES:
        return Rejected(
            "E_RANGE",
            f"[problem]: strided dgrad would need {rows}*{cols} sub-GEMM "
            f"candidates, more than {MAX_SUB_GEMM_CANDIDATES}",
        )
    return None


INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


def check_sub_gemm_record(index: int, record: tuple[int, ...]) -> Optional[Rejected]:
    """The kernel carries every record field as an i32: a value past it is a range error."""
    if all(INT32_MIN <= v <= INT32_MAX for v in record):
        return None
    return Rejected("E_RANGE", f"[problem]: strided dgrad sub-GEMM {index} has a value outside int32")


def dgrad_sub_gemms(
    p: ConvProblem, tile_m: int, tile_n: int, tile_k: int, split_k: int
) -> Union[tuple[tuple[int, ...], ...], Rejected]:
    h, w = tilde_axes(p)
    rows, cols = sub_gemm_candidates(p)
    records = []
    block_start = 0
    for i_yt in range(rows):
        for i_xt in range(cols):
            y_dot_slice, x_dot_slice = h.dot_slice(i_yt), w.dot_slice(i_xt)
            if y_dot_slice <= 0 or x_dot_slice <= 0:
                continue
            h_begin, w_begin = h.begin(), w.begin()
            h_slice, w_slice = h.end() - h_begin, w.end() - w_begin
            if h_slice <= 0 or w_slice <= 0:
                continue
            gemm_m = p.N * h_slice * w_slice
            gemm_k = y_dot_slice * x_dot_slice * p.kpg
            gemm_k_padded = roundup(gemm_k, tile_k * max(1, split_k))
            num_m_tiles, num_n_tiles = ceildiv(gemm_m, tile_m), ceildiv(p.cpg, tile_n)
            records.append(
                (
                    block_start,
                    num_m_tiles,
                    num_n_tiles,
                    gemm_m,
                    gemm_k,
                    h_slice,
                    w_slice,
                    h_begin,
                    w_begin,
                    y_dot_slice,
                    x_dot_slice,
                    -(p.dH // gcd(p.sH, p.dH)),
                    -(p.dW // gcd(p.sW, p.dW)),
                    h.tilde,
                    i_yt,
                    w.tilde,
                    i_xt,
                    p.sH,
                    p.dH * i_yt + p.sH * h_begin - p.pH,
                    p.sW,
                    p.dW * i_xt + p.sW * w_begin - p.pW,
                    gemm_k_padded,
                )
            )
            bad = check_sub_gemm_record(len(records) - 1, records[-1])
            if bad:
                return bad
            block_start += num_m_tiles * num_n_tiles
    return tuple(records)
