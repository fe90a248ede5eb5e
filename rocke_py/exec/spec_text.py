"""Mode `spec`'s text (`rocke.spec v1`, docs/engine-contract.md §7) as key-value fields, read from
the text like the IR: no engine objects. numerics compares these fields with its own reading of
the config (rocke_py/numerics/problem.py); it never builds a reference from them."""

from __future__ import annotations


def spec_fields(text: str) -> dict[str, str]:
    lines = text.splitlines()
    if not lines or lines[0] != "rocke.spec v1":
        raise ValueError("not a rocke.spec v1 text")
    pairs = [line.split(" = ", 1) for line in lines[1:] if " = " in line]
    return {key: value for key, value in pairs}
