"""``rocke-parity gaps add|remove`` and the entry ``rocke-parity diff`` prints: one writer of
known_gaps.toml entries, whose output is valid TOML the gate accepts once its reason is real."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest
import standin_tree as pt
from layout import REPO

from rocke_py.parity.cli import main
from rocke_py.parity.judge.gate import run_gate
from rocke_py.parity.judge.known_gaps import PLACEHOLDER_REASON

ENGINES = pt.engines_arg("all_modes")
KEYS = ("spec", "ir", "ll.llvm20", "ll.llvm22", "ll.llvm23")
OK = "wgrad/01-ok"


def tree(root: Path, cid: str, standin: dict, failing: tuple[str, ...] = (), expect: str = "emit") -> Path:
    """``cid`` failing in the jobs ``failing`` as ``standin`` says, beside a passing config; golden
    entries for every other job."""
    pt.write_config(root, cid, expect, {**standin, "name": "k"})
    pt.write_config(root, OK, standin={"name": "k"})
    golden = pt.golden_for(root, [cid], tuple(k for k in KEYS if k not in failing)) if len(failing) < 5 else {}
    golden |= pt.golden_for(root, [OK], KEYS)
    pt.write_golden(root, golden, modes=("spec", "ir", "ll"))
    return root


def cli(root: Path, *args: str) -> int:
    return main([*args, "--root", str(root), "--engines", ENGINES])


def gaps_file(root: Path) -> Path:
    return root / "parity_configs" / "known_gaps.toml"


def one_line_refusal(capsys, needle: str) -> None:
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and needle in err, err


def gate_passes(root: Path) -> tuple[bool, list[str], list[str]]:
    run = run_gate(root, engines=pt.engine_spec("all_modes"), workers=2)
    return run.passed, run.problems, [v.status.value for v in run.verdicts]


# ----------------------------------------------------------------------------- diff's printed entry

FAILURES = {
    "DIFFER": ({"c_spec": "alt"}, ("spec",)),
    "NONDETERMINISTIC": ({"c_spec": "vary:A"}, ("spec",)),
    "CRASH": ({"c_ir": "segv@build_kernel"}, ("ir",)),
    "VERDICT_SPLIT": ({"py_ir": "reject:E_X:m", "c_ir": "reject:E_X:m"}, ("ir",)),
}


@pytest.mark.parametrize("status", sorted(FAILURES))
def test_diff_prints_a_whole_entry_the_gate_refuses_until_its_reason_is_filled_in(tmp_path, capsys, status):
    standin, failing = FAILURES[status]
    root = tree(tmp_path, "wgrad/00-x", standin, failing)
    assert cli(root, "diff", "wgrad/00-x") == 1
    out = capsys.readouterr().out
    block = out[out.index("[[gap]]") :]
    (entry,) = tomllib.loads(block)["gap"]  # the whole block is valid TOML: pasted as printed
    assert entry["status"] == status and entry["reason"] == PLACEHOLDER_REASON
    assert f"rocke-parity gaps add wgrad/00-x --mode {failing[0]}" in out
    gaps_file(root).write_text(block)
    passed, problems, _ = gate_passes(root)
    assert not passed and any("reason is still the placeholder" in p for p in problems), problems
    gaps_file(root).write_text(block.replace(PLACEHOLDER_REASON, "the C side lags behind"))
    passed, problems, statuses = gate_passes(root)
    assert passed and problems == [] and statuses.count("KNOWN_GAP") == 1


# ----------------------------------------------------------------------------- gaps add


def test_add_appends_one_entry_per_failing_job_and_remove_restores_the_shipped_file(tmp_path, capsys):
    root = tree(tmp_path, "wgrad/00-x", {"py_ll": "keyerror:build_tile"}, ("ll.llvm20", "ll.llvm22", "ll.llvm23"))
    shipped = (REPO / "parity_configs" / "known_gaps.toml").read_bytes()
    gaps_file(root).write_bytes(shipped)
    reason = 'the "tile" \\ builder lands next\n\tin two steps — é'
    assert cli(root, "gaps", "add", "wgrad/00-x", "--reason", reason) == 0
    out = capsys.readouterr().out
    assert [ln.split()[3:8] for ln in out.splitlines()] == [
        [f"{n}:", "wgrad/00-x", "ll", f, "CRASH"] for n, f in ((1, "llvm20"), (2, "llvm22"), (3, "llvm23"))
    ]
    text = gaps_file(root).read_text()
    assert text.startswith(shipped.decode().removesuffix("\n# No entries today.\n"))  # the comments stay
    entries = tomllib.loads(text)["gap"]
    assert [e["flavor"] for e in entries] == ["llvm20", "llvm22", "llvm23"]
    assert {e["reason"] for e in entries} == {reason.strip()} and entries[0]["frame"] == "KeyError in build_tile"
    assert gate_passes(root)[0]
    assert cli(root, "gaps", "remove", "wgrad/00-x", "--mode", "ll", "--flavor", "llvm22") == 0
    assert [e["flavor"] for e in tomllib.loads(gaps_file(root).read_text())["gap"]] == ["llvm20", "llvm23"]
    assert cli(root, "gaps", "remove", "wgrad/00-x") == 0
    assert gaps_file(root).read_bytes() == shipped


def test_add_with_a_flavor_lists_that_job_only_and_creates_the_file(tmp_path, capsys):
    root = tree(tmp_path, "wgrad/00-x", {"py_ll": "keyerror:build_tile"}, ("ll.llvm20", "ll.llvm22", "ll.llvm23"))
    assert cli(root, "gaps", "add", "wgrad/00-x", "--mode", "ll", "--flavor", "llvm22", "--reason", "staged") == 0
    (entry,) = tomllib.loads(gaps_file(root).read_text())["gap"]
    assert (entry["mode"], entry["flavor"], entry["status"]) == ("ll", "llvm22", "CRASH")


def test_add_refuses_a_passing_job_in_one_line_and_writes_nothing(tmp_path, capsys):
    root = tree(tmp_path, "wgrad/00-x", {"c_spec": "alt"}, ("spec",))
    assert cli(root, "gaps", "add", OK, "--reason", "staged") == 1
    one_line_refusal(capsys, f"refused: {OK}: every selected job passes (5 job(s))")
    assert cli(root, "gaps", "add", "wgrad/00-x", "--mode", "ir", "--reason", "staged") == 1
    one_line_refusal(capsys, "every selected job passes (1 job(s))")
    assert not gaps_file(root).exists()
    assert cli(root, "gaps", "add", "wgrad/00-x", "--reason", "staged") == 0
    assert cli(root, "gaps", "add", "wgrad/00-x", "--reason", "again") == 1  # listed: it passes now
    one_line_refusal(capsys, "1 of them as a known gap already")


def test_add_refuses_a_job_listed_already_and_one_the_manifest_must_fix(tmp_path, capsys):
    root = tree(tmp_path, "wgrad/00-x", {"c_spec": "vary:A"}, ("spec",))
    assert cli(root, "gaps", "add", "wgrad/00-x", "--reason", "staged") == 0
    before = gaps_file(root).read_text()
    pt.write_config(root, "wgrad/00-x", standin={"c_spec": "vary:B", "name": "k"})  # another failure
    assert cli(root, "gaps", "add", "wgrad/00-x", "--reason", "staged") == 1
    one_line_refusal(capsys, "wgrad/00-x spec - is listed already (known_gaps.toml entry 1, which no longer holds")
    pt.write_config(root, "wgrad/02-new", standin={"name": "k"})  # no golden entry: GOLDEN_MISSING
    assert cli(root, "gaps", "add", "wgrad/02-new", "--reason", "staged") == 1
    one_line_refusal(capsys, "is GOLDEN_MISSING, which a gap cannot name: rocke-parity golden --update")
    assert gaps_file(root).read_text() == before


@pytest.mark.parametrize(
    "args,needle",
    [
        (("gaps", "add", "wgrad/00-x"), "the following arguments are required: --reason"),
        (("gaps", "add", "wgrad/00-x", "--reason", "  "), "--reason must say why"),
        (("gaps", "add", "wgrad/00-x", "--reason", PLACEHOLDER_REASON), "--reason is the placeholder"),
        (("gaps", "add", "wgrad/99-none", "--reason", "x"), "unknown config 'wgrad/99-none'"),
        (("gaps", "remove"), "the following arguments are required: ID"),
    ],
)
def test_usage_errors_exit_2(tmp_path, capsys, args, needle):
    root = tree(tmp_path, "wgrad/00-x", {"c_spec": "alt"}, ("spec",))
    assert cli(root, *args) == 2
    assert needle in capsys.readouterr().err
    assert not gaps_file(root).exists()


@pytest.mark.parametrize(
    "content,needle",
    [
        ("[[gap]\n", "is not valid TOML"),
        ('[[gap]]\nconfig = """a\n[[gap]]\n"""\n', "its entries are not each a [[gap]] line"),
    ],
)
def test_a_file_it_cannot_edit_is_exit_2_and_left_alone(tmp_path, capsys, content, needle):
    root = tree(tmp_path, "wgrad/00-x", {"c_spec": "alt"}, ("spec",))
    gaps_file(root).write_text(content)
    for args in (("add", "wgrad/00-x", "--reason", "x"), ("remove", "wgrad/00-x")):
        assert cli(root, "gaps", *args) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and needle in err, err
        assert gaps_file(root).read_text() == content


def test_a_read_only_file_is_a_one_line_write_error(tmp_path, capsys):
    root = tree(tmp_path, "wgrad/00-x", {"c_spec": "alt"}, ("spec",))
    gaps_file(root).write_text("# nothing yet\n")
    os.chmod(gaps_file(root), 0o444)
    assert cli(root, "gaps", "add", "wgrad/00-x", "--reason", "x") == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "cannot write known_gaps.toml" in err and "read-only" in err, err
    assert gaps_file(root).read_text() == "# nothing yet\n"


# ----------------------------------------------------------------------------- gaps remove

TWO = """# two entries written by hand
[[gap]]
config = "wgrad/00-x"
mode = "spec"
flavor = "-"
status = "DIFFER"
reason = "one"
py_sha256 = "a"
c_sha256 = "b"

# the second entry, about wgrad/99-gone
[[gap]]
config = "wgrad/99-gone"
mode = "ll"
flavor = "*"
status = "DIFFER"
reason = "two"
py_sha256 = "a"
c_sha256 = "b"
"""


def test_remove_deletes_the_matching_entries_only_and_refuses_when_none_matches(tmp_path, capsys):
    root = tree(tmp_path, "wgrad/00-x", {"c_spec": "alt"}, ("spec",))
    gaps_file(root).write_text(TWO)
    assert cli(root, "gaps", "remove", "wgrad/00-x", "--mode", "ir") == 1
    one_line_refusal(capsys, "refused: no entry of known_gaps.toml matches wgrad/00-x --mode ir")
    assert cli(root, "gaps", "remove", "wgrad/99-gone", "--flavor", "llvm22") == 1  # the entry says "*"
    one_line_refusal(capsys, "matches wgrad/99-gone --flavor llvm22")
    assert gaps_file(root).read_text() == TWO
    assert cli(root, "gaps", "remove", "wgrad/00-x") == 0
    assert "removed entry 1: wgrad/00-x spec - DIFFER" in capsys.readouterr().out
    assert gaps_file(root).read_text() == "# two entries written by hand\n" + TWO.split("\n\n", 1)[1]
    assert cli(root, "gaps", "remove", "wgrad/99-gone", "--mode", "ll", "--flavor", "*") == 0  # a deleted config
    # the comments above the first entry are the file's: they stay (the header must never go with an entry)
    rest = "# two entries written by hand\n# the second entry, about wgrad/99-gone\n\n# No entries today.\n"
    assert gaps_file(root).read_text() == rest
    assert cli(root, "gaps", "remove", "wgrad/00-x") == 1
