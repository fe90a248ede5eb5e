"""Prints ir_text's values as `rocke.ir v1` text (docs/ir.md §5), the bytes the engines print;
with reader.py, a round trip that proves the reader lost nothing."""

from __future__ import annotations

from typing import Iterator

from .ir_text import AttrValue, Kernel, Region

ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t"})


def tagged(value: AttrValue) -> str:
    if isinstance(value, dict):
        return attr_map(value)
    if isinstance(value, list):
        return "l:[ " + ", ".join(map(tagged, value)) + " ]"
    if isinstance(value, bool):
        return "b:" + str(value).lower()
    if isinstance(value, str):
        return 's:"' + value.translate(ESCAPES) + '"'
    return ("f:" if isinstance(value, float) else "i:") + repr(value)


def attr_map(attrs: dict[str, AttrValue]) -> str:
    return "{ " + ", ".join(f"{key} = {tagged(attrs[key])}" for key in sorted(attrs)) + " }"


def region_text(region: Region, depth: int) -> Iterator[str]:
    """A region's lines, its ops one level deeper and theirs below them."""
    pad = "  " * depth
    yield f"{pad}region @{region.name} {{"
    for op in region.ops:
        results = ", ".join(f"{r.name} : {r.type}" for r in op.results)
        assign = results + " = " if results else ""
        attrs = " " + attr_map(op.attrs) if op.attrs else ""
        yield f"{pad}  {assign}{op.name} ( {', '.join(op.operands)} ){attrs}"
        for inner in op.regions:
            yield from region_text(inner, depth + 2)
    yield f"{pad}}}"


def kernel_text(kernel: Kernel) -> Iterator[str]:
    yield "rocke.ir v1"
    yield f"kernel @{kernel.name} {{"
    if kernel.attrs:
        yield f"  attrs {attr_map(kernel.attrs)}"
    yield "  params {"
    for p in kernel.params:
        yield f"    {p.value.name} : {p.value.type}" + (" " + attr_map(p.attrs) if p.attrs else "")
    yield "  }"
    yield from region_text(kernel.entry, 1)
    yield "}"


def print_kernel(kernel: Kernel) -> str:
    return "".join(line + "\n" for line in kernel_text(kernel))
