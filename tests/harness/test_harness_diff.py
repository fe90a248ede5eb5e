"""rocke-parity diff / parity-diff: first divergence, context, stage, canonical renumbering, caps."""

from __future__ import annotations

from pathlib import Path

import pytest
import standin_tree as pt

from rocke_py.parity.cli import diff_main, main
from rocke_py.parity.judge.canon import (
    PREFIX_BLOCK,
    bounded_unified_diff,
    canonicalise,
    common_prefix_length,
    first_divergence,
    renumbering_only,
)


def diff(tmp_path: Path, *args: str, modes: str = "all_modes") -> int:
    return main(["diff", *args, "--root", str(tmp_path), "--engines", pt.engines_arg(modes)])


def test_first_divergent_line_with_context_and_repro(tmp_path, capsys):
    pt.make_tree(tmp_path, {"wgrad/03-x": {"standin": {"c": "alt"}}})
    assert diff(tmp_path, "wgrad/03-x", "--mode", "spec", "--context", "1") == 1
    out = capsys.readouterr().out
    assert "status: DIFFER" in out
    assert "first divergent line: 5, column 12" in out
    assert "> 5 | field_1 = 7\n" in out and "> 5 | field_1 = 7 ; changed\n" in out
    assert "  4 | field_0 = 0" in out and "  6 | field_2 = 14" in out and "  3 |" not in out
    assert "-field_1 = 7\n+field_1 = 7 ; changed" in out
    assert "sha256 py: " in out and "sha256 c:  " in out
    assert "rocke-parity diff wgrad/03-x --mode spec --flavor llvm22" in out
    assert "rocke-emit parity_configs/wgrad/03-x.toml --mode spec --flavor llvm22" in out


ALL_KEYS = ("spec", "ir", "ll.llvm20", "ll.llvm22", "ll.llvm23")


def test_identical_exits_0_after_every_job(tmp_path, capsys):
    pt.make_tree(tmp_path, {"wgrad/00-a": {}})
    pt.write_golden(tmp_path, pt.golden_for(tmp_path, ["wgrad/00-a"], ALL_KEYS), modes=("spec", "ir", "ll"))
    assert diff(tmp_path, "wgrad/00-a") == 0
    out = capsys.readouterr().out
    assert "5 job(s): every mode and flavor" in out and "all 5 job(s) pass" in out
    assert out.count(" IDENTICAL\n") == 5 and "status: IDENTICAL" in out


def test_without_a_golden_entry_diff_fails_as_the_gate_does(tmp_path, capsys):
    pt.make_tree(tmp_path, {"wgrad/00-a": {}})
    assert diff(tmp_path, "wgrad/00-a", "--mode", "spec") == 1
    assert "status: GOLDEN_MISSING" in capsys.readouterr().out


def test_a_divergence_only_in_llvm20_or_only_in_spec_fails_the_default_diff(tmp_path, capsys):
    """Hole 5: the default diff looked at ll/llvm22 only and said IDENTICAL, exit 0."""
    pt.make_tree(
        tmp_path, {"wgrad/00-a": {"standin": {"c_ll_llvm20": "alt"}}, "wgrad/01-b": {"standin": {"c_spec": "alt"}}}
    )
    pt.write_golden(
        tmp_path, pt.golden_for(tmp_path, ["wgrad/00-a", "wgrad/01-b"], ALL_KEYS), modes=("spec", "ir", "ll")
    )
    assert diff(tmp_path, "wgrad/00-a") == 1
    out = capsys.readouterr().out
    assert "1 of 5 job(s) fail" in out and "job wgrad/00-a  mode ll  flavor llvm20" in out
    assert "status: DIFFER" in out and "py matches golden; c differs" in out
    assert "to list it as a known gap" in out and 'status = "DIFFER"' in out and "c_sha256 = " in out
    assert diff(tmp_path, "wgrad/00-a", "--mode", "ll", "--flavor", "llvm22") == 0  # the job asked for passes
    capsys.readouterr()
    assert diff(tmp_path, "wgrad/01-b") == 1
    out = capsys.readouterr().out
    assert "job wgrad/01-b  mode spec  flavor -" in out and "py matches golden; c differs" in out
    assert diff(tmp_path, "wgrad/01-b", "--mode", "ll") == 0  # every flavor of ll, none fails
    assert "all 3 job(s) pass" in capsys.readouterr().out


def test_diff_names_the_engine_that_moved_for_a_rejection(tmp_path, capsys):
    pt.make_tree(
        tmp_path, {"wgrad/100-n": {"expect": "reject:E_X", "standin": {"py": "reject:E_X:m", "c": "reject:E_X:m"}}}
    )
    pt.write_golden(tmp_path, pt.golden_for(tmp_path, ["wgrad/100-n"]))
    (tmp_path / "parity_configs/wgrad/100-n.toml").write_text(
        pt.config_text("reject:E_X", {"py": "reject:E_X:moved", "c": "reject:E_X:m"})
    )
    assert diff(tmp_path, "wgrad/100-n", modes="implemented_modes") == 1
    assert "c matches golden; py differs" in capsys.readouterr().out


def test_canonical_renumbering_reads_as_such(tmp_path, capsys):
    pt.make_tree(tmp_path, {"wgrad/00-a": {"standin": {"c_ir": "renumber"}}})
    assert diff(tmp_path, "wgrad/00-a", "--mode", "ir") == 1
    raw = capsys.readouterr().out
    assert "first divergent line: 3" in raw
    assert diff(tmp_path, "wgrad/00-a", "--mode", "ir", "--canonical") == 1
    out = capsys.readouterr().out
    assert "identical after canonical renumbering" in out and "unified diff" not in out


def test_names_the_first_stage_that_diverges(tmp_path, capsys):
    pt.make_tree(
        tmp_path,
        {"wgrad/00-a": {"standin": {"c_ir": "alt", "c_ll": "alt"}}, "wgrad/01-b": {"standin": {"c_ll": "tail"}}},
    )
    assert diff(tmp_path, "wgrad/00-a", "--mode", "ll", "--flavor", "llvm20") == 1
    out = capsys.readouterr().out
    assert "first stage that diverges: ir (spec identical; ir differs" in out
    assert diff(tmp_path, "wgrad/01-b", "--mode", "ll") == 1
    out = capsys.readouterr().out
    assert "first stage that diverges: ll (spec identical; ir identical)" in out
    assert "(end of text: py has no line" in out


def test_rejections_compare_code_and_message(tmp_path, capsys):
    pt.make_tree(
        tmp_path,
        {
            "wgrad/100-n": {
                "expect": "reject:E_X",
                "standin": {"py": "reject:E_X:line 3: bad", "c": "reject:E_X:line 4: bad"},
            }
        },
    )
    assert diff(tmp_path, "wgrad/100-n") == 1
    out = capsys.readouterr().out
    assert "status: REJECT_MISMATCH" in out and "codes: same (E_X / E_X); messages: differ" in out
    assert "py: rejected E_X\n    line 3: bad" in out


def test_a_mode_the_engines_do_not_implement_is_a_usage_error(tmp_path, capsys):
    pt.make_tree(tmp_path, {"wgrad/00-a": {}})
    assert diff(tmp_path, "wgrad/00-a", "--mode", "ll", modes="implemented_modes") == 2
    assert "mode ll is not implemented by the py and c engine" in capsys.readouterr().err
    assert diff(tmp_path, "wgrad/99-nope") == 2


def test_parity_diff_is_rocke_parity_diff(tmp_path, capsys):
    pt.make_tree(tmp_path, {"wgrad/00-a": {}})
    pt.write_golden(tmp_path, pt.golden_for(tmp_path, ["wgrad/00-a"]))
    assert diff_main(["wgrad/00", "--mode", "spec", "--root", str(tmp_path), "--engines", pt.engines_arg()]) == 0
    assert "status: IDENTICAL" in capsys.readouterr().out


def test_unified_diff_is_capped():
    a = "".join(f"line {i}\n" for i in range(1000))
    b = "".join(f"line {i} changed\n" for i in range(1000))
    lines, cut = bounded_unified_diff(a, b, "py", "c", cap=200)
    assert len(lines) == 200 and cut == 2003 - 200


def test_canonicalise_renumbers_in_first_appearance_order_per_function():
    a = (
        "define void @f(i32 %x) {\n  %7 = add i32 %x, 1\n  br label %9\n9:  ; preds = %7\n}\n"
        "define void @g() {\n  %7 = add\n}\n"
    )
    b = (
        "define void @f(i32 %y) {\n  %1 = add i32 %y, 1\n  br label %2\n2:  ; preds = %1\n}\n"
        "define void @g() {\n  %3 = add\n}\n"
    )
    assert renumbering_only(a, b)
    assert canonicalise(a).splitlines()[3] == "v2:  ; preds = %v1"
    assert canonicalise(a).splitlines()[6] == "  %v0 = add"
    assert not renumbering_only(a, a.replace("add i32 %x, 1", "add i32 %x, 2"))
    d = first_divergence("a\nb\nc\n", "a\nbX\nc\n")
    assert d is not None and (d.line, d.column) == (2, 2)


def _prefix_one_at_a_time(x: str, y: str) -> int:
    n = 0
    while n < min(len(x), len(y)) and x[n] == y[n]:
        n += 1
    return n


@pytest.mark.parametrize("shared", [0, 1, PREFIX_BLOCK - 1, PREFIX_BLOCK, PREFIX_BLOCK + 1, 3 * PREFIX_BLOCK + 7])
def test_the_column_of_a_long_line_is_the_first_differing_character(shared: int) -> None:
    """The block-wise prefix of a long line agrees with a character loop at and around the
    block's edges: a differing character, a line that is the other's prefix, equal lines."""
    base = "".join(chr(97 + (i * 7) % 26) for i in range(shared))
    cases = [
        (base + "x" + "tail", base + "y" + "tail"),
        (base, base + "more"),
        (base + "more", base),
        (base, base),
        (base + "é" * 3, base + "é" * 2 + "e"),
    ]
    for x, y in cases:
        assert common_prefix_length(x, y) == _prefix_one_at_a_time(x, y), (len(x), len(y))
        d = first_divergence("a\n" + x + "\n", "a\n" + y + "\n")
        if x == y:
            assert d is None
        else:
            assert d is not None and (d.line, d.column) == (2, _prefix_one_at_a_time(x, y) + 1)
