"""scripts/engine_unreached.py: what no config reaches in the build and lowering files is split
into guards, explained functions and the rest, which is flagged by function."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

import engine_unreached  # noqa: E402

SOURCE = textwrap.dedent(
    """\
    def fail(m):
        return m
    def lower_sched_barrier(x):
        return x + 1
    def used(x):
        if x < 0:
            raise fail("negative")
        if x > 10:
            return 2
        return 1
    """
)


def report(missing_lines, missing_branches, covered_branches):
    summary = {"num_statements": 10, "covered_lines": 10 - len(missing_lines), "num_branches": 4}
    summary["covered_branches"] = covered_branches
    entry = {"summary": summary, "missing_lines": missing_lines, "missing_branches": missing_branches}
    return {"files": {"engine/lower_ll.py": entry}}


def test_a_guard_and_an_explained_function_are_set_aside_and_the_rest_is_flagged(tmp_path):
    (tmp_path / "lower_ll.py").write_text(SOURCE)
    [got] = engine_unreached.python_reach(report([2, 4, 7, 9], [[6, 7], [8, 9]], 2), tmp_path)
    assert got.guard_lines == 1
    assert got.explained == {"fail": 1, "lower_sched_barrier": 1}
    assert set(got.unexplained) == {"used"} and 9 in got.unexplained["used"]
    assert (got.branches, got.branches_reached) == (3, 2)  # the branch into the guard is set aside
    lines = engine_unreached.report_lines("py", [got])
    assert "UNEXPLAINED used" in lines[1]


def test_a_function_no_config_should_miss_is_not_hidden(tmp_path):
    (tmp_path / "lower_ll.py").write_text(SOURCE.replace("lower_sched_barrier", "lower_mma"))
    [got] = engine_unreached.python_reach(report([4], [], 4), tmp_path)
    assert set(got.unexplained) == {"lower_mma"} and not got.explained


def test_c_function_extents_follow_the_house_layout(tmp_path):
    path = tmp_path / "lower_ll.c"
    path.write_text(
        "static int f(int x)\n{\n    return x;\n}\n\nint g(void)\n{\n    return 0;\n}\n\n"
        "static int h(const int *a) { return a && *a; }\n"
    )
    assert engine_unreached.c_functions(path) == [(1, 4, "f"), (6, 9, "g"), (11, 11, "h")]


C_SOURCE = textwrap.dedent(
    """\
    static int ll_type(rk_lowerer *lw, const char *t)
    {
        if (RK_TYPE_IS_SMEM(t)) {
            rk_buf_puts(o, "ptr addrspace(3)");
            return 0;
        }
        if (t[0] == 'q' && t[1] == 'z') {
            rk_buf_puts(o, "qz");
            return 0;
        }
        if (!row) {
            fail(lw, "no LLVM type for %s",
                 t);
            return -1;
        }
        s = rk_strndup(lw->arena, lw->scratch.data ? lw->scratch.data : "", lw->scratch.len);
        if (emit(lw, "a")
            || emit(lw, "b"))
            return -1;
        return 1;
    }
    """
)


def c_report(counts: dict[int, int], branches: dict[int, list[int]]) -> dict:
    """gcovr's JSON for lower_ll.c: a count per line, branch counts where given."""
    lines = [
        {"line_number": n, "count": c, "branches": [{"count": b} for b in branches.get(n, [])]}
        for n, c in sorted(counts.items())
    ]
    return {"files": [{"file": "rocke_c/src/lower_ll.c", "lines": lines}]}


def test_c_lines_under_a_guard_or_an_explained_condition_are_set_aside_with_their_reason(tmp_path):
    (tmp_path / "lower_ll.c").write_text(C_SOURCE)
    counts = {n: 5 for n in range(1, 21)}
    for n in (4, 5, 12, 13, 14):  # the smem body; the guard, its continuation, its early return
        counts[n] = 0
    branches = {3: [5, 0], 11: [0, 5], 16: [5, 0], 17: [5, 0, 0, 5]}
    [got] = engine_unreached.c_reach(c_report(counts, branches), tmp_path)
    assert got.unexplained == {}
    assert got.guard_lines == 3
    why = "an LDS value is lowered through its pool offset, never by its type"
    assert got.reasons[why] == 3  # two body lines and the untaken side of their condition
    assert (got.branches, got.branches_reached) == (5, 5)  # 10 branches, the 5 untaken set aside


def test_c_lines_under_an_unexplained_condition_are_flagged(tmp_path):
    """The fault the set-asides must not hide: a condition no entry explains, its body
    unreached and one of its && sides never taken."""
    (tmp_path / "lower_ll.c").write_text(C_SOURCE)
    counts = {n: 5 for n in range(1, 21)}
    counts[8] = counts[9] = 0
    [got] = engine_unreached.c_reach(c_report(counts, {7: [5, 0, 5, 0]}), tmp_path)
    assert got.unexplained == {"ll_type": [8, 9, 7]}
    lines = engine_unreached.report_lines("C ", [got], why=True)
    assert any("UNEXPLAINED ll_type: line(s) 7, 8, 9" in line for line in lines)
