"""Helpers for the executor tests: hand-written IR texts and emitted kernels run on small
problems against the float64 reference convolutions."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from two_engines import config_text

from rocke_py import cbridge
from rocke_py import engine as py_engine
from rocke_py.engine.result import Emitted
from rocke_py.exec import reference as ref
from rocke_py.exec.executor import RunResult, run_kernel
from rocke_py.exec.fp import bf16_bits, bf16_to_f32
from rocke_py.exec.spec_text import DTYPES, conv_of, spec_fields, sub_gemm_records

# ---- hand-written IR ----


def kernel_text(params: list[str], body: list[str], block: int = 64, wave: int = 64, grid=(1, 1, 1)) -> str:
    """A kernel `@t` with the given param lines and entry-region op lines (indented here)."""
    g = ", ".join(f"i:{v}" for v in grid)
    lines = [
        "rocke.ir v1",
        "kernel @t {",
        f"  attrs {{ grid = l:[ {g} ], max_workgroup_size = i:{block}, wave_size = i:{wave} }}",
        "  params {",
        *[f"    {p}" for p in params],
        "  }",
        "  region @entry {",
        *[f"    {op}" for op in body],
        "    cf.return (  )",
        "  }",
        "}",
    ]
    return "\n".join(lines) + "\n"


def const(name: str, value: int, ty: str = "i32") -> str:
    return f'{name} : {ty} = arith.constant (  ) {{ ity = s:"{ty}", value = i:{value} }}'


def fconst(name: str, value: float) -> str:
    return f'{name} : f32 = arith.constant (  ) {{ ity = s:"f32", value = f:{float(value)!r} }}'


def ptr(name: str, elem: str) -> str:
    return f"%{name} : ptr<{elem},global> {{ noalias = b:true }}"


# ---- emitted kernels on small problems ----

REPO = Path(__file__).resolve().parents[2]
NUMPY = {"f16": np.float16, "bf16": np.uint16, "f32": np.float32}
NAMES = {"fwd": ("X", "W", "Y"), "wgrad": ("dY", "X", "dW"), "dgrad": ("dY", "W", "dX")}


def emit(text: str, mode: str, engine: str = "py") -> str:
    out = (py_engine.emit if engine == "py" else cbridge.emit)(text, mode, "llvm22")
    assert isinstance(out, Emitted), out
    return out.text


def small_variant(config_path: Path, n: int = 2, hw: int = 9, depth: int = 4) -> str:
    """The config's text with its problem shrunk (batch, input height, width, depth), every
    other field as shipped."""
    cfg = tomllib.loads(config_path.read_text())
    spec = {k: v for k, v in cfg["spec"].items() if k != "family"}
    prob = dict(cfg["problem"])
    prob["N"] = min(prob["N"], n)
    prob["Hi"], prob["Wi"] = min(prob["Hi"], hw), min(prob["Wi"], hw)
    if "Di" in prob:
        prob["Di"] = min(prob["Di"], depth)
    return config_text(cfg["spec"]["family"], arch=cfg["target"]["arch"], problem=prob, **spec)


def to_dtype(values: np.ndarray, elem: str) -> np.ndarray:
    return bf16_bits(values.astype(np.float32)) if elem == "bf16" else values.astype(NUMPY[elem])


def as_f64(values: np.ndarray, elem: str) -> np.ndarray:
    return bf16_to_f32(values).astype(np.float64) if elem == "bf16" else values.astype(np.float64)


@dataclass(frozen=True)
class ConvRun:
    result: RunResult
    got: np.ndarray  # the output as float64
    want: np.ndarray  # the reference rounded to dtype_d, as float64
    output: str


def run_conv(text: str, engine: str = "py", seed: int = 0, ir: str | None = None) -> ConvRun:
    """Emits the config, builds small-integer inputs, runs the kernel and the reference.
    Outputs start as NaN, except where the caller must zero them: split-K atomics, and
    (until issue 10 item 6) dgrad, whose strided kernels skip the dX positions no tap reaches."""
    fields = spec_fields(emit(text, "spec", engine))
    family = fields["family"]
    ir = ir if ir is not None else emit(text, "ir", engine)
    conv = conv_of(fields)
    ea, eb, ed = (DTYPES[fields[k]] for k in ("dtype_a", "dtype_b", "dtype_d"))
    rng = np.random.default_rng(seed)

    def ints(shape: tuple[int, ...]) -> np.ndarray:
        return rng.integers(-3, 4, size=shape).astype(np.float64)

    if family == "fwd":
        a, b = ints(conv.x_shape()), ints(conv.w_shape())
        want, d_shape = ref.conv_fwd(conv, a, b), conv.y_shape()
    elif family == "wgrad":
        a, b = ints(conv.y_shape()), ints(conv.x_shape())
        want, d_shape = ref.conv_wgrad(conv, b, a), conv.w_shape()
    else:
        a, b = ints(conv.y_shape()), ints(conv.w_shape())
        want, d_shape = ref.conv_dgrad(conv, a, b), conv.x_shape()
    zero_fill = family == "dgrad" or int(fields.get("split_k", "1")) != 1
    na, nb, nd = NAMES[family]
    d = np.zeros(d_shape) if zero_fill else np.full(d_shape, np.nan)
    buffers = {na: to_dtype(a, ea), nb: to_dtype(b, eb), nd: to_dtype(d, ed)}
    scalars: dict[str, int] = {}
    if family == "dgrad":
        records = sub_gemm_records(fields)
        buffers["sub_gemm_buf"] = records
        scalars["num_sub_gemms"] = records.shape[0]
    result = run_kernel(ir, buffers, scalars)
    got = as_f64(result.buffers[nd], ed)
    return ConvRun(result, got, as_f64(to_dtype(want, ed), ed), nd)


def emitting_configs() -> list[Path]:
    out = []
    for path in sorted((REPO / "parity_configs").glob("*/*.toml")):
        text = path.read_text()
        if 'expect = "emit"' in text:
            out.append(path)
    return out
