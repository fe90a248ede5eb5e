"""Prints ir_text's values as `rocke.ir v1` text (docs/ir.md §5), the bytes the engines print;
with reader.py, a round trip that proves the reader lost nothing."""

from __future__ import annotations

from .ir_text import AttrValue, Kernel, Op, Region


def tagged(value: AttrValue) -> str:
    if isinstance(value, bool):
        return "b:true" if value else "b:false"
    if isinstance(value, int):
        return f"i:{value}"
    if isinstance(value, float):
        return f"f:{value!r}"
    if isinstance(value, str):
        text = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
        return f's:"{text}"'
    if isinstance(value, list):
        return "l:[ " + ", ".join(tagged(v) for v in value) + " ]"
    return attr_map(value)


def attr_map(attrs: dict[str, AttrValue]) -> str:
    return "{ " + ", ".join(f"{key} = {tagged(attrs[key])}" for key in sorted(attrs)) + " }"


def op_lines(out: list[str], op: Op, depth: int) -> None:
    head = ", ".join(f"{r.name} : {r.type}" for r in op.results)
    head = head + " = " if head else ""
    tail = " " + attr_map(op.attrs) if op.attrs else ""
    out.append(f"{'  ' * depth}{head}{op.name} ( {', '.join(op.operands)} ){tail}\n")
    for region in op.regions:
        region_lines(out, region, depth + 1)


def region_lines(out: list[str], region: Region, depth: int) -> None:
    out.append(f"{'  ' * depth}region @{region.name} {{\n")
    for op in region.ops:
        op_lines(out, op, depth + 1)
    out.append(f"{'  ' * depth}}}\n")


def print_kernel(kernel: Kernel) -> str:
    out = ["rocke.ir v1\n", f"kernel @{kernel.name} {{\n"]
    if kernel.attrs:
        out.append(f"  attrs {attr_map(kernel.attrs)}\n")
    out.append("  params {\n")
    for p in kernel.params:
        tail = " " + attr_map(p.attrs) if p.attrs else ""
        out.append(f"    {p.value.name} : {p.value.type}{tail}\n")
    out.append("  }\n")
    region_lines(out, kernel.entry, 1)
    out.append("}\n")
    return "".join(out)
