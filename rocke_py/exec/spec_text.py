"""What a kernel's caller needs from mode `spec`'s text (`rocke.spec v1`, docs/engine-contract.md):
the problem as a reference.Conv, the data types and the dgrad sub-GEMM records (kernel
arguments, docs/reference/conv-semantics.md §2.4). Read from the text, like the IR: no engine objects."""

from __future__ import annotations

import numpy as np

from .reference import Conv

DTYPES = {"fp16": "f16", "bf16": "bf16", "fp32": "f32"}


def spec_fields(text: str) -> dict[str, str]:
    lines = text.splitlines()
    if not lines or lines[0] != "rocke.spec v1":
        raise ValueError("not a rocke.spec v1 text")
    pairs = [line.split(" = ", 1) for line in lines[1:] if " = " in line]
    return {key: value for key, value in pairs}


def conv_of(fields: dict[str, str]) -> Conv:
    def num(key: str) -> int:
        return int(fields[key])

    axes = ("H", "W")
    size_in, filt = [num("Hi"), num("Wi")], [num("Y"), num("X")]
    stride, pad, dil = [num("s" + a) for a in axes], [num("p" + a) for a in axes], [num("d" + a) for a in axes]
    if fields.get("is_3d") == "true":
        size_in.insert(0, num("Di"))
        filt.insert(0, num("Z"))
        stride.insert(0, num("sD"))
        pad.insert(0, num("pD"))
        dil.insert(0, num("dD"))
    return Conv(
        num("N"), num("C"), num("K"), tuple(size_in), tuple(filt), tuple(stride), tuple(pad), tuple(dil), num("groups")
    )


def sub_gemm_records(fields: dict[str, str]) -> np.ndarray:
    """The dgrad records, (n, 22) int32 in record order: the `sub_gemm_buf` argument."""
    rows = []
    for i in range(int(fields.get("num_sub_gemms", "0"))):
        rows.append([int(item.split("=", 1)[1]) for item in fields[f"sub_gemm.{i}"].split()])
    return np.asarray(rows, dtype=np.int32).reshape(-1, 22)
