"""Helpers for the executor tests: hand-written IR texts. (Emitted kernels on small problems
against the reference convolutions: rocke_py/numerics, tests/numerics.)"""

from __future__ import annotations

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
