"""pytest's and lit's conventions in ``rocke-parity``: ``-k`` expressions over the label a failure
line prints, config ids as positional arguments, "did you mean" for a mistyped id, a subcommand's
own usage on an unknown option, exit 2 for a usage error in every program, ``--collect-only``,
``-v``/``-q``, ``--durations``, colour, ``ROCKE_PARITY_ADDOPTS`` and a shard's partial-run note."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import standin_tree as pt

from rocke_py import rocke_emit
from rocke_py.parity.cli import diff_main, main

A = "wgrad/11-kouter-ab"  # its C side differs on ll llvm20
B = "wgrad/12-other"
F = "fwd/00-base"
KEYS = ("spec", "ir", "ll.llvm20", "ll.llvm22", "ll.llvm23")
ESC = "\x1b["
#: [spec] keys that keep the configs apart (two configs with the same values are a run-level failure)
DISTINCT = ({"extra": "tile_n = 32\n"}, {"extra": "tile_n = 16\n"})


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = pt.make_tree(tmp_path / "t", {A: {"standin": {"c_ll_llvm20": "alt"}}, B: DISTINCT[0], F: DISTINCT[1]})
    pt.write_golden(r, pt.golden_for(r, [A, B, F], KEYS), modes=("spec", "ir", "ll"))
    return r


def gate(root: Path, tmp_path: Path, *args: str) -> tuple[int, list[tuple[str, str, str]]]:
    """The gate's exit status and the jobs it ran (config, mode, flavor)."""
    report = tmp_path / "r.json"
    report.unlink(missing_ok=True)
    status = _main(root, "gate", *args, "--json", str(report))
    jobs = json.loads(report.read_text())["jobs"] if report.exists() else []
    return status, sorted((j["config"], j["mode"], j["flavor"]) for j in jobs)


def _main(root: Path, *args: str) -> int:
    return main([*args, "--root", str(root), "--engines", pt.engines_arg("all_modes"), "-j", "2"])


# ----------------------------------------------------------------------------- 1. -k


def test_k_matches_the_label_a_failure_line_prints(root, tmp_path, capsys):
    assert _main(root, "gate") == 1
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("FAIL DIFFER"))
    label = line.split(":")[0].removeprefix("FAIL DIFFER ")
    assert label == f"{A} ll llvm20"
    status, jobs = gate(root, tmp_path, "-k", label)
    assert status == 1 and jobs == [(A, "ll", "llvm20")]


@pytest.mark.parametrize(
    "expr,want",
    [
        ("LL LLVM20", {(c, "ll", "llvm20") for c in (A, B, F)}),  # case-insensitive
        ("ll.llvm20", {(c, "ll", "llvm20") for c in (A, B, F)}),  # the old job key
        ("ll and not llvm20", {(c, "ll", f) for c in (A, B, F) for f in ("llvm22", "llvm23")}),
        ("(wgrad/12 or FWD) and spec", {(B, "spec", "-"), (F, "spec", "-")}),
        ("not wgrad and not ll", {(F, "spec", "-"), (F, "ir", "-")}),
        ("*llvm2[02]", {(c, "ll", f) for c in (A, B, F) for f in ("llvm20", "llvm22")}),  # a glob still
    ],
)
def test_k_is_an_expression_of_case_insensitive_substrings(root, tmp_path, expr, want):
    _, jobs = gate(root, tmp_path, "-k", expr)
    assert set(jobs) == want


@pytest.mark.parametrize("expr", ["ll and", "(spec", "spec)", "not", "and ll", "spec or or ir"])
def test_a_malformed_k_expression_is_a_usage_error(root, capsys, expr):
    assert _main(root, "gate", "-k", expr) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "-k" in err[0] and repr(expr) in err[0], err


# ----------------------------------------------------------------------------- 2a. positional ids


def test_config_ids_as_positional_arguments(root, tmp_path):
    assert gate(root, tmp_path, "wgrad/12", "--mode", "spec") == (0, [(B, "spec", "-")])
    assert gate(root, tmp_path, "wgrad/12", F, "--mode", "spec")[1] == [(F, "spec", "-"), (B, "spec", "-")]


def test_golden_check_takes_positional_ids(root, capsys):
    assert _main(root, "golden", "--check", "wgrad/12") == 0
    assert "15 of" not in capsys.readouterr().out


# ----------------------------------------------------------------------------- 2b. did you mean


@pytest.mark.parametrize(
    "args",
    [
        ["gate", "--config", "wgrad/12-othr"],
        ["gate", "wgrad/12-othr"],
        ["golden", "--check", "--config", "wgrad/12-othr"],
        ["diff", "wgrad/12-othr"],
        ["emit", "wgrad/12-othr", "--engine", "py"],
        ["new", "wgrad", "--from", "wgrad/12-othr", "--set", "tile_k=32"],
        ["gaps", "add", "wgrad/12-othr", "--reason", "r"],
        ["gaps", "remove", "wgrad/12-othr"],
        ["gate", "wgrad/13"],
    ],
    ids=" ".join,
)
def test_a_mistyped_config_id_gets_did_you_mean(root, capsys, args):
    assert main([*args, "--root", str(root), "--engines", pt.engines_arg("all_modes")]) in (1, 2)
    err = capsys.readouterr().err
    assert err.rstrip().endswith(f"did you mean {B}?") or f"did you mean {B} or" in err, err


# ----------------------------------------------------------------------------- 2c, 2d. usage errors


@pytest.mark.parametrize(
    "args,usage",
    [
        (["gate", "--bogus"], "usage: rocke-parity gate"),
        (["diff", "x", "--bogus"], "usage: rocke-parity diff"),
        (["gaps", "add", "x", "--reason", "r", "--bogus"], "usage: rocke-parity gaps add"),
    ],
)
def test_an_unknown_option_gets_the_subcommands_usage(capsys, args, usage):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith(usage) and "unrecognized arguments: --bogus" in err, err


def _exit_status(fn, argv: list[str]) -> int:
    try:
        return fn(argv)
    except SystemExit as e:
        return int(e.code) if isinstance(e.code, int) else 2


@pytest.mark.parametrize("bad", [["--mode", "foo"], ["--flavor", "llvm99"], ["--bogus"]])
def test_rocke_emit_usage_errors_exit_2(root, capsys, bad):
    cfg = str(root / "parity_configs" / f"{B}.toml")
    assert _exit_status(rocke_emit.main, [cfg, *bad]) == 2
    assert "usage: rocke-emit" in capsys.readouterr().err


def test_parity_diff_usage_errors_exit_2(capsys):
    assert _exit_status(diff_main, ["x", "--mode", "foo"]) == 2
    assert "usage: rocke-parity diff" in capsys.readouterr().err


# ----------------------------------------------------------------------------- 2e. --collect-only


def test_collect_only_lists_the_jobs_without_running_them(tmp_path, capsys):
    r = pt.make_tree(tmp_path / "t", {B: {"standin": {"py": "segv"}}, F: DISTINCT[1]})  # running it would crash
    assert _main(r, "gate", "--collect-only", "-k", "ll and not llvm23") == 0
    out = capsys.readouterr().out.splitlines()
    want = [f"{c} ll {f}" for c in (F, B) for f in ("llvm20", "llvm22")]
    assert sorted(out[:-1]) == sorted(want) and out[-1] == "4 job(s) selected; nothing run (--collect-only)"
    assert not (r / ".rocke-parity" / "last-run.json").exists()


# ----------------------------------------------------------------------------- 2f, 2g, 2h. output


def test_quiet_prints_only_failures_and_the_final_line(root, capsys):
    assert _main(root, "gate", "-q") == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"FAIL DIFFER {A} ll llvm20:") and out[-1].startswith("gate FAILED")
    assert len(out) == 2, out


def test_verbose_prints_a_line_per_job(root, capsys):
    assert _main(root, "gate", "-v") == 1
    out = capsys.readouterr().out.splitlines()
    assert f"PASSED IDENTICAL {B} ll llvm22" in out and f"FAILED DIFFER {A} ll llvm20" in out
    assert sum(ln.startswith(("PASSED ", "FAILED ")) for ln in out) == 15


def test_durations_lists_the_slowest_jobs_after_the_summary(root, capsys):
    assert _main(root, "gate", "--mode", "spec", "--durations", "2") == 0
    out = capsys.readouterr().out.splitlines()
    final = next(i for i, ln in enumerate(out) if ln.startswith("gate PASSED"))
    tail = out[final + 1 :]
    assert tail[0] == "slowest 2 of 3 job(s):" and len(tail) == 3, tail
    assert all(re.fullmatch(r" *\d+\.\d{2} s  \S+ spec -", ln) for ln in tail[1:]), tail


def test_durations_needs_a_number(root, capsys):
    assert _main(root, "gate", "--durations", "-1") == 2
    assert "--durations" in capsys.readouterr().err


@pytest.mark.parametrize(
    "env,coloured",
    [({}, False), ({"FORCE_COLOR": "1"}, True), ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, False)],
)
def test_colour_only_when_forced_or_on_a_terminal(root, capsys, monkeypatch, env, coloured):
    for k in ("FORCE_COLOR", "NO_COLOR"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert _main(root, "gate", "--json", str(root / "r.json")) == 1
    out = capsys.readouterr().out
    assert (ESC in out) == coloured
    if coloured:
        assert f"{ESC}31mFAIL{ESC}0m DIFFER" in out and f"gate {ESC}31mFAILED{ESC}0m" in out
    assert ESC not in (root / "r.json").read_text()


# ----------------------------------------------------------------------------- 2i. addopts


def test_addopts_are_prepended_to_the_subcommands_arguments(root, tmp_path, monkeypatch):
    monkeypatch.setenv("ROCKE_PARITY_ADDOPTS", "--mode spec -k wgrad")
    assert gate(root, tmp_path) == (0, [(A, "spec", "-"), (B, "spec", "-")])


def test_malformed_addopts_are_a_usage_error(root, capsys, monkeypatch):
    monkeypatch.setenv("ROCKE_PARITY_ADDOPTS", "--mode 'spec")
    assert _main(root, "gate") == 2
    assert "ROCKE_PARITY_ADDOPTS" in capsys.readouterr().err


# ----------------------------------------------------------------------------- 2j. shard notes


def test_a_shards_partial_note_counts_its_own_configs(root, capsys):
    assert _main(root, "gate", "--mode", "spec", "--shard", "1/3") == 0
    note = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("note: partial run"))
    assert "1 of 3 config(s)" in note, note
