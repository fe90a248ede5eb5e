"""Mode `ir`: the `rocke.ir v1` text of a kernel (docs/ir.md §5).

Twin of rocke_c/src/print_ir.c."""

from __future__ import annotations

import functools
from operator import attrgetter

from .ir import AttrValue, Kernel, Op, Region

value_name = attrgetter("name")  # Value.name, as a C-level function for map()


def escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")


def format_float(value: float) -> str:
    """repr(float(n)) for the integral values below 2**53 that our kernels carry."""
    return repr(value)


@functools.lru_cache(maxsize=1024)  # pure; a kernel's string attrs are a handful of words
def string_text(value: str) -> str:
    return f's:"{escape(value)}"'


def tagged(value: AttrValue) -> str:
    if isinstance(value, bool):
        return "b:true" if value else "b:false"
    if isinstance(value, int):
        return f"i:{value}"
    if isinstance(value, float):
        return f"f:{format_float(value)}"
    if isinstance(value, str):
        return string_text(value)
    if isinstance(value, list):
        return "l:[ " + ", ".join(tagged(v) for v in value) + " ]"
    return attr_map(value)


def attr_map(attrs: dict[str, AttrValue]) -> str:
    parts = []
    for k, v in sorted(attrs.items()) if len(attrs) > 1 else attrs.items():
        # most attrs are plain ints or strings: tagged() inlined for them (bool is an int
        # subclass, hence type())
        kind = type(v)
        if kind is int:
            parts.append(f"{k} = i:{v}")
        elif kind is str:
            parts.append(f"{k} = {string_text(v)}")
        else:
            parts.append(f"{k} = {tagged(v)}")
    return f"{{ {', '.join(parts)} }}"


def print_op(out: list[str], op: Op, depth: int) -> None:
    pad = "  " * depth
    results = op.results
    if len(results) == 1:
        head = f"{results[0].name} : {results[0].type} = "
    elif results:
        head = ", ".join([f"{r.name} : {r.type}" for r in results]) + " = "
    else:
        head = ""
    operands = ", ".join(map(value_name, op.operands))
    if op.attrs:
        out.append(f"{pad}{head}{op.name} ( {operands} ) {attr_map(op.attrs)}\n")
    else:
        out.append(f"{pad}{head}{op.name} ( {operands} )\n")
    for region in op.regions:
        print_region(out, region, depth + 1)


def print_region(out: list[str], region: Region, depth: int) -> None:
    pad = "  " * depth
    out.append(f"{pad}region @{region.name} {{\n")
    inner = pad + "  "
    for op in region.ops:
        results = op.results
        if len(results) == 1 and not op.regions:
            # print_op, inlined for an op with one result and no regions (all but a few), and
            # for the commonest (a binary: two operands, no attrs) without a join
            r = results[0]
            operands = op.operands
            attrs = op.attrs
            if not attrs and len(operands) == 2:
                out.append(f"{inner}{r.name} : {r.type} = {op.name} ( {operands[0].name}, {operands[1].name} )\n")
            else:
                text = f"{inner}{r.name} : {r.type} = {op.name} ( {', '.join(map(value_name, operands))} )"
                out.append(f"{text} {attr_map(attrs)}\n" if attrs else f"{text}\n")
        else:
            print_op(out, op, depth + 1)
    out.append(f"{pad}}}\n")


def print_ir(kernel: Kernel) -> str:
    out = ["rocke.ir v1\n", f"kernel @{kernel.name} {{\n"]
    if kernel.attrs:
        out.append(f"  attrs {attr_map(kernel.attrs)}\n")
    out.append("  params {\n")
    for p in kernel.params:
        attrs = f" {attr_map(p.attrs)}" if p.attrs else ""
        out.append(f"    {p.value.name} : {p.value.type}{attrs}\n")
    out.append("  }\n")
    print_region(out, kernel.entry, 1)
    out.append("}\n")
    return "".join(out)
