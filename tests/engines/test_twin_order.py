"""Each stage's twins, rocke_py/engine/X.py and rocke_c/src/X.c, define the functions they share
in the same order, so that they read side by side; a C function without a Python twin is
static (a helper of its file) or listed here with why it is not. The C names drop their `rk_`
prefix (`rocke_` for the public API; in ir.c also `b_` and `ir_`, Python's Builder methods and
IR helpers); Python's names include methods. Each check is shown to see its fault."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from layout import REPO

PY = REPO / "rocke_py" / "engine"
C = REPO / "rocke_c" / "src"
#: prefixes a C name drops, besides rk_, to meet its Python twin
EXTRA_PREFIXES = {"ir": ("b_", "ir_")}
#: the C functions other files call that have no Python twin of that name, by file
C_ONLY = {
    # helpers build_fwd.c, build_wgrad.c and build_dgrad.c share (Python: arguments or methods)
    "build_common": (
        "build_common_fail build_common_param build_common_set_param build_common_frag_lanes "
        "build_common_wave_tile build_common_tr_lanes build_common_frag_plan build_common_async_plan "
        "build_common_d_name"
    ).split(),
    "config": ["config_parse"],  # parse_config_lines's twin: the parser the C engine has
    "emit": "version context_new context_set_note emit_in context_free result_free".split(),  # rocke.h's API
    # attributes are Python dicts; values and regions Python objects; init/check the builder's life.
    # (The binary ops' rk_b_add ... rk_b_fmin, Python's add ... fmin, are made by a macro and a
    # function, RK_B_BINARY_OPS and binary_method: neither side defines them by name.)
    "ir": (
        "is_scalar printf attr_bool attr_int attr_float attr_str attr_list attr_map attr_list_append "
        "attrs_set attrs_get attrs_del attrs_copy attr_py_cmp_int attr_py_eq_int attr_is_str attr_py_eq "
        "attr_py_str make_value make_region region_append init check"
    ).split(),
    "mma_atoms": ["mma_ir_elem"],  # the element type string Python reads off its dtype table
    "print_ir": ["print_ir_attr_map"],  # print_ir.py prints a dict in place
    "schema": ["schema_check"],  # check_schema's twin under the C file's naming (rk_schema_...)
    "spec": ["spec_is_sixteen_bit"],  # a predicate Python writes inline
}
C_FUNCTION = re.compile(
    r"^(?:static\s+)?(?:inline\s+)?(?:const\s+)?(?:struct\s+|enum\s+|unsigned\s+)?\w+[\s*]+(\w+)\([^;{]*\)\s*\{",
    re.M,
)


def twins() -> list[str]:
    return sorted(p.stem for p in PY.glob("*.py") if (C / f"{p.stem}.c").is_file())


def py_names(text: str) -> list[str]:
    """Every def, methods included, in file order (first occurrence)."""
    return list(dict.fromkeys(re.findall(r"^\s*def (\w+)\(", text, re.M)))


def c_names(text: str, stem: str) -> list[tuple[str, bool]]:
    """(name without its prefixes, static) of every function definition, in file order."""
    out: dict[str, bool] = {}
    for m in C_FUNCTION.finditer(text):
        name = re.sub(r"^(rk_|rocke_)", "", m.group(1))
        for prefix in EXTRA_PREFIXES.get(stem, ()):
            name = name.removeprefix(prefix)
        out.setdefault(name, m.group(0).startswith("static"))
    return list(out.items())


def order_problems(py_text: str, c_text: str, stem: str) -> list[str]:
    py = py_names(py_text)
    c = c_names(c_text, stem)
    c_order = [n for n, _ in c if n in py]
    py_order = [n for n in py if n in set(c_order)]
    problems = []
    if py_order != c_order:
        first = next(i for i, (a, b) in enumerate(zip(py_order, c_order)) if a != b)
        problems.append(f"{stem}: shared function {first + 1} is {py_order[first]} in Python, {c_order[first]} in C")
    unlisted = [n for n, static in c if n not in py and not static and n not in C_ONLY.get(stem, ())]
    if unlisted:
        problems.append(f"{stem}: C functions with no Python twin, neither static nor listed: {unlisted}")
    return problems


@pytest.mark.parametrize("stem", twins())
def test_twins_share_their_names_in_order(stem: str) -> None:
    py_text, c_text = (PY / f"{stem}.py").read_text(), (C / f"{stem}.c").read_text()
    assert len([n for n, _ in c_names(c_text, stem) if n in py_names(py_text)]) > 0
    assert order_problems(py_text, c_text, stem) == []


def test_every_listed_c_function_exists() -> None:
    for stem, names in C_ONLY.items():
        defined = {n for n, _ in c_names((C / f"{stem}.c").read_text(), stem)}
        assert set(names) <= defined, (stem, sorted(set(names) - defined))


def test_a_moved_function_and_an_unlisted_one_are_found(tmp_path: Path) -> None:
    py_text, c_text = (PY / "validate.py").read_text(), (C / "validate.c").read_text()
    names = [n for n, _ in c_names(c_text, "validate") if n in py_names(py_text)]
    a, b = names[3], names[4]
    swapped = re.sub(rf"^def {a}\(", "def __swap__(", py_text, flags=re.M)
    swapped = re.sub(rf"^def {b}\(", f"def {a}(", swapped, flags=re.M).replace("def __swap__(", f"def {b}(")
    assert any("shared function" in p for p in order_problems(swapped, c_text, "validate"))
    extra = c_text + "\nint rk_validate_only_in_c(int x)\n{\n    return x;\n}\n"
    assert any("validate_only_in_c" in p for p in order_problems(py_text, extra, "validate"))
    helper = c_text + "\nstatic int validate_helper_in_c(int x)\n{\n    return x;\n}\n"
    assert order_problems(py_text, helper, "validate") == []
