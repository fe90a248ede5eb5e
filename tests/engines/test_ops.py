"""The one table of IR ops (rocke_py/engine/ops.py <-> rocke_c/src/ops.h, docs/ir.md §4).

Checks that docs/ir.md's op tables list exactly the table's ops (and hints), in its order; that
the C table has the same rows; and that the builder's passes, the verifier and the lowering, have
a rule or handler for every op in both engines. Each check is shown to catch its fault: an op
missing from the doc, a C row that differs, a pass without a handler."""

from __future__ import annotations

import re

from layout import REPO

from rocke_py.engine import lower_ll, ops, verify
from rocke_py.engine.ops import OPS

IR_DOC = REPO / "docs" / "ir.md"
OPS_H = REPO / "rocke_c" / "src" / "ops.h"
VERIFY_C = REPO / "rocke_c" / "src" / "verify.c"
LOWER_C = REPO / "rocke_c" / "src" / "lower_ll.c"

# The ops each pass handles inline rather than through its per-op table.
VERIFY_INLINE = (ops.FOR, ops.IF, ops.YIELD)  # they need the scope
LOWER_INLINE = (ops.YIELD,)  # read by lower_for


def doc_ops(text: str) -> list[tuple[str, str]]:
    """(op, hint) of every row of the op tables of docs/ir.md §4, in document order."""
    section = text[text.index("\n## 4. Ops") : text.index("\n## 5.")]
    out: list[tuple[str, str]] = []
    has_hint = False
    for line in section.split("\n"):
        if line.startswith("| op |"):
            has_hint = line.rstrip().rstrip("|").rstrip().endswith("hint")
        if not line.startswith("| `"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        names = re.findall(r"`([^`]+)`", cells[0])
        hints = re.findall(r"`([^`]+)`", cells[-1]) if has_hint else []
        if len(hints) == 1 and len(names) > 1:
            hints = hints * len(names)
        hints = hints or [""] * len(names)
        assert len(hints) == len(names), line
        out += list(zip(names, hints))
    return out


def table_ops() -> list[tuple[str, str]]:
    return [(info.name, info.hint) for info in OPS]


def c_rows(text: str) -> list[tuple[str, str, str, int, int, str]]:
    """(code, name, hint, operands, results, region) of each X(...) row of RK_OPS in ops.h."""
    row = re.compile(r'^\s*X\((\w+), "([^"]*)", "([^"]*)", (-?\d+), (-?\d+), "([^"]*)"\)', re.M)
    return [(m[1], m[2], m[3], int(m[4]), int(m[5]), m[6]) for m in row.finditer(text)]


def py_rows() -> list[tuple[str, str, str, int, int, str]]:
    code_names = {
        getattr(ops, name): name for name in dir(ops) if name.isupper() and isinstance(getattr(ops, name), int)
    }
    del code_names[ops.UNKNOWN]
    return [
        (code_names[code], info.name, info.hint, info.operands, info.results, info.region)
        for code, info in enumerate(OPS)
    ]


def uncovered(codes: set[int], exempt: tuple[int, ...]) -> list[str]:
    """The ops that a pass has neither a table entry for nor handles inline."""
    return [info.name for code, info in enumerate(OPS) if code not in codes and code not in exempt]


def c_table_codes(source: str, array: str) -> set[int]:
    """The op codes that a C pass's per-op array `array[RK_N_OPS] = {...}` has an entry for."""
    start = source.index(array + "[RK_N_OPS] = {")
    body = source[start : source.index("\n};", start)]
    return {getattr(ops, name) for name in re.findall(r"\[RK_OP_(\w+)\] =", body)}


# ---- docs/ir.md ----


def test_doc_lists_exactly_the_ops_in_order() -> None:
    assert doc_ops(IR_DOC.read_text()) == table_ops()


def test_an_op_missing_from_the_doc_is_caught() -> None:
    text = IR_DOC.read_text()
    row = next(line for line in text.split("\n") if line.startswith("| `tile.smem_addr`"))
    assert doc_ops(text.replace(row + "\n", "")) != table_ops()


def test_a_wrong_hint_in_the_doc_is_caught() -> None:
    text = IR_DOC.read_text().replace("| `rfl` |", "| `rl` |")
    assert doc_ops(text) != table_ops()


# ---- the C table ----


def test_c_table_has_the_same_rows() -> None:
    assert c_rows(OPS_H.read_text()) == py_rows()


def test_a_c_row_that_differs_is_caught() -> None:
    text = OPS_H.read_text()
    assert c_rows(text.replace('"sel", 3, 1', '"sel", 2, 1')) != py_rows()
    assert c_rows(re.sub(r"\n\s*X\(SYNC, [^\n]*", "", text)) != py_rows()


# ---- every pass has a handler for every op ----


def test_python_passes_cover_every_op() -> None:
    assert uncovered(set(verify.CHECKS), VERIFY_INLINE) == []
    assert uncovered(set(lower_ll.HANDLERS), LOWER_INLINE) == []


def test_c_passes_cover_every_op() -> None:
    assert uncovered(c_table_codes(VERIFY_C.read_text(), "rk_verify_checks"), VERIFY_INLINE) == []
    assert uncovered(c_table_codes(LOWER_C.read_text(), "rk_ll_handlers"), LOWER_INLINE) == []


def test_a_pass_without_a_handler_is_caught() -> None:
    checks = {code: rule for code, rule in verify.CHECKS.items() if code != ops.MMA}
    assert uncovered(set(checks), VERIFY_INLINE) == ["tile.mma"]
    source = re.sub(r"\n\s*\[RK_OP_CONCAT\] = [^\n]*", "", LOWER_C.read_text())
    assert uncovered(c_table_codes(source, "rk_ll_handlers"), LOWER_INLINE) == ["vector.concat"]
