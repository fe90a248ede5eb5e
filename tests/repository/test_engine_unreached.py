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
    path.write_text("static int f(int x)\n{\n    return x;\n}\n\nint g(void)\n{\n    return 0;\n}\n")
    assert engine_unreached.c_functions(path) == [(1, 4, "f"), (6, 9, "g")]
