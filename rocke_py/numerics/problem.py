"""The problem a config asks for, read by the numerics side itself (docs/numerics.md §1).

The reference must not learn from an engine what a config means: this module reads the config
with the standard library's TOML reader and applies the defaults and deductions of
docs/reference/conv-semantics.md (§1.1 problem defaults, §1.3 dtypes, §1.4 epilogue, §2.4 the
dgrad sub-GEMM records, §3.1 and §11 tile defaults, §10 split-K) on its own. The engines' mode
`spec` is then only compared with this reading (`disagreements`), never used to build the
answer."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from rocke_py.exec.reference import Conv
from rocke_py.parity.store._toml import tomllib

#: config dtype names -> the executor's element types (conv-semantics §1.3; f16 is fp16)
ELEM = {"fp16": "f16", "f16": "f16", "bf16": "bf16", "fp32": "f32"}
#: compute units per arch, for the auto split-K formula (conv-semantics §10.1)
NUM_CUS = {"gfx942": 304, "gfx950": 256, "gfx1151": 64}
DEFAULT_NUM_CUS = 256
#: the 22 fields of a dgrad sub-GEMM record, in record order (conv-semantics §2.4)
RECORD_FIELDS = (
    "block_start num_m_tiles num_n_tiles gemm_m gemm_k h_slice w_slice h_begin w_begin y_dot_slice "
    "x_dot_slice a_h_coeff a_w_coeff b_y_stride b_y_offset b_x_stride b_x_offset d_h_stride "
    "d_h_offset d_w_stride d_w_offset gemm_k_padded"
).split()


class ProblemError(ValueError):
    """The config cannot be read as a problem (the engines reject such a config too)."""


@dataclass(frozen=True)
class Epilogue:
    """The accumulator epilogue (conv-semantics §1.4): bias added, then scale multiplied, then
    relu, then the clamp, in f32."""

    bias: int = 0
    scale: int = 1
    relu: bool = False
    clamp_min: Optional[int] = None
    clamp_max: Optional[int] = None

    @property
    def identity(self) -> bool:
        return self == Epilogue()

    def apply(self, acc: np.ndarray) -> np.ndarray:
        """The f32 values the kernel rounds to dtype_d, for f32 accumulators `acc`."""
        v = np.asarray(acc, dtype=np.float32)
        if self.bias:
            v = v + np.float32(self.bias)
        if self.scale != 1:
            v = v * np.float32(self.scale)
        if self.relu:
            v = np.maximum(v, np.float32(0))
        if self.clamp_min is not None:
            v = np.maximum(v, np.float32(self.clamp_min))
        if self.clamp_max is not None:
            v = np.minimum(v, np.float32(self.clamp_max))
        return v

    def magnitude(self, parts: int) -> tuple[int, int]:
        """(multiplier, addend): |epilogue(x)| summed over `parts` slices is at most
        multiplier·Σ|x| + addend."""
        scale = abs(self.scale)
        addend = parts * abs(self.bias) * scale
        for bound in (self.clamp_min, self.clamp_max):
            if bound is not None:
                addend += parts * abs(bound)
        return scale, addend


@dataclass(frozen=True)
class Problem:
    """What the config asks the kernel to compute, and the launch facts a caller derives."""

    family: str
    arch: str
    conv: Conv
    dtype_a: str  # config names, normalised (fp16, bf16, fp32)
    dtype_b: str
    dtype_d: str
    epilogue: Epilogue
    split_k: int  # resolved: 1 off, > 1 fixed, 0 the runtime degree
    tile_m: int
    tile_n: int
    tile_k: int
    warp_m: int
    warp_n: int
    wave_size: int

    @property
    def taps(self) -> int:
        return int(np.prod(self.conv.filt))

    @property
    def out_pixels(self) -> int:
        """N·Ho·Wo (·Do): fwd's GEMM M, wgrad's reduction wg_K."""
        return self.conv.n * int(np.prod(self.conv.size_out))

    def elem(self, which: str) -> str:
        return ELEM[getattr(self, f"dtype_{which}")]

    @property
    def block_size(self) -> int:
        return self.warp_m * self.warp_n * self.wave_size

    def workgroups(self, parts: int) -> int:
        """The launch grid's size (docs/kernels.md §2, §4) with `parts` split-K slices."""
        c = self.conv
        if self.family == "fwd":
            tiles = ceil_div(self.out_pixels, self.tile_m) * ceil_div(c.kpg, self.tile_n)
        elif self.family == "wgrad":
            tiles = ceil_div(c.kpg, self.tile_m) * ceil_div(self.taps * c.cpg, self.tile_n)
        else:
            tiles = sum(int(r[1]) * int(r[2]) for r in dgrad_records(self))
        return tiles * c.groups * parts

    def grid(self, parts: int) -> tuple[int, int, int]:
        """The launch grid (x, y, z) of docs/kernels.md §2 and §4 with `parts` split-K slices:
        what a host launches the `ll` kernel with (the module does not carry it)."""
        c = self.conv
        if self.family == "fwd":
            return ceil_div(c.kpg, self.tile_n), ceil_div(self.out_pixels, self.tile_m), c.groups
        if self.family == "wgrad":
            return ceil_div(self.taps * c.cpg, self.tile_n), ceil_div(c.kpg, self.tile_m), c.groups * parts
        tiles = sum(int(r[1]) * int(r[2]) for r in dgrad_records(self))
        return tiles, c.groups, parts


def table(doc: dict[str, Any], name: str) -> dict[str, Any]:
    value = doc.get(name, {})
    if not isinstance(value, dict):
        raise ProblemError(f"[{name}] is not a table")
    return value


def integer(tab: dict[str, Any], key: str, default: Optional[int] = None) -> Optional[int]:
    value = tab.get(key, default)
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise ProblemError(f"{key} is not an integer")
    return value


def required(tab: dict[str, Any], key: str) -> int:
    value = integer(tab, key)
    if value is None:
        raise ProblemError(f"missing required key '{key}'")
    return value


def read_conv(problem: dict[str, Any]) -> Conv:
    """conv-semantics §1.1: strides and dilations default to 1, pads to 0; 3-D when Di is set."""
    size_in = [required(problem, "Hi"), required(problem, "Wi")]
    filt = [required(problem, "Y"), required(problem, "X")]
    stride = [integer(problem, "sH", 1), integer(problem, "sW", 1)]
    pad = [integer(problem, "pH", 0), integer(problem, "pW", 0)]
    dil = [integer(problem, "dH", 1), integer(problem, "dW", 1)]
    if "Di" in problem:
        size_in.insert(0, required(problem, "Di"))
        filt.insert(0, required(problem, "Z"))
        stride.insert(0, required(problem, "sD"))
        pad.insert(0, required(problem, "pD"))
        dil.insert(0, required(problem, "dD"))
    return Conv(
        required(problem, "N"),
        required(problem, "C"),
        required(problem, "K"),
        tuple(size_in),
        tuple(filt),
        tuple(stride),  # type: ignore[arg-type]
        tuple(pad),  # type: ignore[arg-type]
        tuple(dil),  # type: ignore[arg-type]
        integer(problem, "groups", 1),  # type: ignore[arg-type]
    )


def read_dtype(spec: dict[str, Any], key: str) -> str:
    value = spec.get(key, "fp16")
    if value not in ELEM:
        raise ProblemError(f"{key} = {value!r} is not fp16, f16, bf16 or fp32")
    return "fp16" if value == "f16" else value


def read_epilogue(spec: dict[str, Any]) -> Epilogue:
    return Epilogue(
        integer(spec, "bias", 0),  # type: ignore[arg-type]
        integer(spec, "scale", 1),  # type: ignore[arg-type]
        spec.get("relu", False) is True,
        integer(spec, "clamp_min"),
        integer(spec, "clamp_max"),
    )


def auto_split_k(family: str, arch: str, conv: Conv, tile_m: int, tile_n: int) -> int:
    """conv-semantics §10: CK's formula for wgrad, 1 for dgrad."""
    if family != "wgrad":
        return 1
    wg_k = conv.n * int(np.prod(conv.size_out))
    base_grid = -(-conv.kpg // tile_m) * -(-(int(np.prod(conv.filt)) * conv.cpg) // tile_n)
    cus = NUM_CUS.get(arch, DEFAULT_NUM_CUS)
    return max(1, min(2 * cus // base_grid, wg_k))


def read_problem(text: str) -> Problem:
    """The config text read as a Problem; ProblemError when it is not one."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ProblemError(f"not TOML: {e}") from e
    spec, problem = table(doc, "spec"), table(doc, "problem")
    family = spec.get("family")
    if family not in ("fwd", "wgrad", "dgrad"):
        raise ProblemError(f"family {family!r} is not fwd, wgrad or dgrad")
    arch = table(doc, "target").get("arch")
    if not isinstance(arch, str):
        raise ProblemError("missing required key 'arch'")
    conv = read_conv(problem)
    if conv.groups < 1 or conv.c % conv.groups or conv.k % conv.groups:
        raise ProblemError(f"groups = {conv.groups} does not divide C and K")
    tile_m, tile_n = integer(spec, "tile_m", 64), integer(spec, "tile_n", 64)
    tile_k = integer(spec, "tile_k", 128 if family == "fwd" else 64)
    split_k = 1 if family == "fwd" else integer(spec, "split_k", 1)
    if split_k == -1:
        split_k = auto_split_k(family, arch, conv, tile_m, tile_n)  # type: ignore[arg-type]
    return Problem(
        family,
        arch,
        conv,
        read_dtype(spec, "dtype_a"),
        read_dtype(spec, "dtype_b"),
        read_dtype(spec, "dtype_d"),
        read_epilogue(spec),
        split_k,  # type: ignore[arg-type]
        tile_m,  # type: ignore[arg-type]
        tile_n,  # type: ignore[arg-type]
        tile_k,  # type: ignore[arg-type]
        integer(spec, "warp_m", 2),  # type: ignore[arg-type]
        integer(spec, "warp_n", 2),  # type: ignore[arg-type]
        integer(spec, "wave_size", 64),  # type: ignore[arg-type]
    )


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def axis_pairs(size: int, filt: int, stride: int, pad: int, dil: int, size_out: int) -> list[dict[str, int]]:
    """conv-semantics §2.4 for one spatial axis: per residue i_t < min(tilde, filt) the dot
    slice, the output slice and the coefficients (None-free: an empty pair has dot or slice ≤ 0)."""
    g = math.gcd(stride, dil)
    tilde = stride // g
    extent = size_out + ceil_div(dil * (filt - 1), stride) if filt > 1 else size_out
    begin = max(0, pad - dil * (tilde - 1)) // stride
    end = min(extent, ceil_div(pad + size - 1, stride) + 1)
    pairs = []
    for i in range(min(tilde, filt)):
        pairs.append(
            {
                "dot": ceil_div(filt - i, tilde),
                "slice": end - begin,
                "begin": begin,
                "a_coeff": -(dil // g),
                "b_stride": tilde,
                "b_offset": i,
                "d_stride": stride,
                "d_offset": dil * i + stride * begin - pad,
            }
        )
    return pairs


def dgrad_records(p: Problem) -> np.ndarray:
    """The dgrad sub-GEMM records, (n, 22) int32 (conv-semantics §2.4): the `sub_gemm_buf`
    kernel argument, computed from the problem alone."""
    c = p.conv
    if len(c.filt) != 2:
        raise ProblemError("3-D dgrad has no sub-GEMM model")
    (hi, wi), (fy, fx), (sh, sw), (ph, pw), (dh, dw) = c.size_in, c.filt, c.stride, c.pad, c.dil
    ho, wo = c.size_out
    rows, block_start = [], 0
    split = max(1, p.split_k)
    for ry in axis_pairs(hi, fy, sh, ph, dh, ho):
        for rx in axis_pairs(wi, fx, sw, pw, dw, wo):
            if ry["dot"] <= 0 or rx["dot"] <= 0 or ry["slice"] <= 0 or rx["slice"] <= 0:
                continue
            gemm_m = c.n * ry["slice"] * rx["slice"]
            gemm_k = ry["dot"] * rx["dot"] * c.kpg
            m_tiles, n_tiles = ceil_div(gemm_m, p.tile_m), ceil_div(c.cpg, p.tile_n)
            padded = ceil_div(gemm_k, p.tile_k * split) * p.tile_k * split
            rows.append(
                [block_start, m_tiles, n_tiles, gemm_m, gemm_k, ry["slice"], rx["slice"], ry["begin"], rx["begin"]]
                + [ry["dot"], rx["dot"], ry["a_coeff"], rx["a_coeff"], ry["b_stride"], ry["b_offset"]]
                + [rx["b_stride"], rx["b_offset"], ry["d_stride"], ry["d_offset"], rx["d_stride"], rx["d_offset"]]
                + [padded]
            )
            block_start += m_tiles * n_tiles
    return np.asarray(rows, dtype=np.int32).reshape(-1, len(RECORD_FIELDS))


def spec_value(value: Optional[int | bool | str]) -> str:
    """How mode `spec` prints a value (docs/engine-contract.md §7)."""
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def expected_fields(p: Problem) -> dict[str, str]:
    """The mode `spec` lines this reading predicts: every field the reference depends on."""
    c = p.conv
    want: dict[str, Optional[int | bool | str]] = {"family": p.family, "arch": p.arch, "N": c.n, "C": c.c, "K": c.k}
    axes2 = dict(zip(("Hi", "Wi"), c.size_in[-2:])) | dict(zip(("Y", "X"), c.filt[-2:]))
    axes2 |= dict(zip(("sH", "sW"), c.stride[-2:])) | dict(zip(("pH", "pW"), c.pad[-2:]))
    axes2 |= dict(zip(("dH", "dW"), c.dil[-2:]))
    want |= axes2
    depth = len(c.filt) == 3
    for key, values in (("Di", c.size_in), ("Z", c.filt), ("sD", c.stride), ("pD", c.pad), ("dD", c.dil)):
        want[key] = values[0] if depth else None
    want |= {"groups": c.groups, "dtype_a": p.dtype_a, "dtype_b": p.dtype_b, "dtype_d": p.dtype_d}
    e = p.epilogue
    want |= {"bias": e.bias, "scale": e.scale, "relu": e.relu, "clamp_min": e.clamp_min, "clamp_max": e.clamp_max}
    want |= {"tile_m": p.tile_m, "tile_n": p.tile_n, "tile_k": p.tile_k}
    if p.family != "fwd":
        want["split_k"] = p.split_k
    return {k: spec_value(v) for k, v in want.items()}


def disagreements(p: Problem, fields: dict[str, str]) -> list[str]:
    """Where an engine's mode `spec` differs from this reading of the config, one line per
    field (the records of dgrad included)."""
    out = []
    for key, want in expected_fields(p).items():
        got = fields.get(key, "absent")
        if got != want:
            out.append(f"{key}: the config says {want}, the engine's spec {got}")
    if p.family == "dgrad":
        records = dgrad_records(p)
        count = fields.get("num_sub_gemms", "absent")
        if count != str(records.shape[0]):
            out.append(f"num_sub_gemms: the config says {records.shape[0]}, the engine's spec {count}")
        else:
            for i, row in enumerate(records):
                want = " ".join(f"{k}={v}" for k, v in zip(RECORD_FIELDS, row))
                got = fields.get(f"sub_gemm.{i}", "absent")
                if got != want:
                    out.append(f"sub_gemm.{i}: the config says {want}, the engine's spec {got}")
    return out
