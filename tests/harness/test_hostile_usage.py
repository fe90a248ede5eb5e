"""Hostile command lines and faults whose failure text must still tell the user what happened:
every seconds option refuses what is not a finite positive number (exit 2, naming the option); two
messages that differ only in whitespace show the difference in the gate's line, the Markdown
summary and ``diff``; a nondeterministic job's golden hint says which call of which engine
matches golden; ``new`` refuses a multi-line description and an over-long slug before any work."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import standin_tree as pt

from rocke_py.parity.cli import build_parser, main
from rocke_py.parity.commands import newconfig

CID = "wgrad/00-a"
NEG = "wgrad/100-n"


def _err_line(capsys) -> str:
    """The last line on stderr (argparse puts its usage lines above the error)."""
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    return err.strip().splitlines()[-1] if err.strip() else ""


# ----------------------------------------------------------------------------- seconds options

#: Each command that takes a seconds option: the arguments before the option.
SECONDS_OPTIONS = [
    (["gate"], "--timeout"),
    (["golden", "--check"], "--timeout"),
    (["diff", CID], "--timeout"),
    (["new", "wgrad", "--from", CID, "--set", "tile_k=32"], "--timeout"),
    (["check-llvm"], "--timeout"),
    (["gaps", "add", CID, "--reason", "r"], "--timeout"),
    (["fuzz", "--seed", "1", "--budget", "5"], "--timeout"),
    (["fuzz", "--seed", "1", "--budget", "5"], "--reduce-seconds"),
    (["fuzz", "--seed", "1"], "--budget"),
]
NOT_SECONDS = ["nan", "NaN", "inf", "-inf", "infinity", "-1", "0", "-0", "1e300", "abc", ""]


@pytest.mark.parametrize("value", NOT_SECONDS)
@pytest.mark.parametrize("head,option", SECONDS_OPTIONS, ids=lambda v: " ".join(v) if isinstance(v, list) else v)
def test_a_seconds_option_takes_only_a_finite_positive_number(tmp_path, capsys, head, option, value):
    root = pt.make_tree(tmp_path, {CID: {}, NEG: {"expect": "reject:E_X", "standin": {"py": "reject:E_X"}}})
    args = [*head, f"{option}={value}", "--root", str(root), "--engines", pt.engines_arg(), "-j", "1"]
    assert main(args) == 2
    line = _err_line(capsys)
    assert line.startswith("rocke-parity") and option in line and repr(value) in line, line


@pytest.mark.parametrize("value", ["1e-9", "0.5", "0.999"])
def test_a_fuzz_budget_too_short_to_run_a_case_is_refused(tmp_path, capsys, value):
    root = pt.make_tree(tmp_path, {CID: {}})
    args = ["fuzz", "--seed", "1", "--budget", value, "--root", str(root), "--engines", pt.engines_arg()]
    assert main(args) == 2
    line = _err_line(capsys)
    assert "--budget" in line and "at least 1" in line, line


@pytest.mark.parametrize(
    "argv",
    [
        ["gate", "--timeout", "0.001"],
        ["gate", "--timeout", "604800"],
        ["diff", CID, "--timeout", "2.5"],
        ["fuzz", "--seed", "1", "--budget", "1"],
        ["fuzz", "--seed", "1", "--budget", "3600", "--reduce-seconds", "1", "--timeout", "0.5"],
    ],
    ids=" ".join,
)
def test_sensible_seconds_still_parse(argv):
    build_parser().parse_args(argv)


def test_a_fuzz_run_that_judged_no_case_is_not_a_pass(tmp_path, capsys, monkeypatch):
    """However the budget was spent (the workers' start on a loaded machine), zero cases is exit 1."""
    from rocke_py.fuzz import driver
    from rocke_py.fuzz.report import Tally

    root = pt.make_tree(tmp_path, {CID: {}})
    monkeypatch.setattr(driver, "run_fuzz", lambda *a, **k: driver.FuzzRun(Tally(), 1.0, [], [], ["(table)"]))
    args = ["fuzz", "--seed", "1", "--budget", "1", "--root", str(root), "--engines", pt.engines_arg()]
    assert main(args) == 1
    line = _err_line(capsys)
    assert "no case" in line and "--budget" in line, line


# ----------------------------------------------------------------------------- whitespace in messages

#: (py's message, c's message, how py's shows, how c's shows)
WHITESPACE = [
    ("tile  too big", "tile too big", r"'tile\x20\x20too big'", "'tile too big'"),
    ("tile too big ", "tile too big", r"too big\x20'", "too big'"),
    ("tile\ttoo big", "tile too big", r"'tile\ttoo big'", "'tile too big'"),
    ("tile too\u00a0big", "tile too big", r"too\xa0big'", "too big'"),
    ("a" * 150 + " z", "a" * 150 + "  z", "aa z'", r"aa\x20\x20z'"),
]


def _whitespace_tree(root: Path, py_msg: str, c_msg: str) -> Path:
    standin = {"py": f"reject:E_X:{py_msg}", "c": f"reject:E_X:{c_msg}"}
    return pt.make_tree(root, {CID: {}, NEG: {"expect": "reject:E_X", "standin": standin}})


@pytest.mark.parametrize(
    "py_msg,c_msg,py_shown,c_shown", WHITESPACE, ids=["two-spaces", "trailing", "tab", "nbsp", "long"]
)
def test_messages_that_differ_only_in_whitespace_show_the_difference(
    tmp_path, capsys, py_msg, c_msg, py_shown, c_shown
):
    root = _whitespace_tree(tmp_path, py_msg, c_msg)
    summary = tmp_path / "summary.md"
    common = ["--root", str(root), "--engines", pt.engines_arg(), "-j", "1"]
    assert main(["gate", *common, "--summary", str(summary)]) == 1
    out = capsys.readouterr().out
    (line,) = [ln for ln in out.splitlines() if ln.startswith(f"FAIL REJECT_MISMATCH {NEG}")]
    md = summary.read_text()
    assert main(["diff", NEG, "--root", str(root), "--engines", pt.engines_arg()]) == 1
    diff = capsys.readouterr().out
    for where, text in (("gate", line), ("summary", md), ("diff", diff)):
        # the same visible difference everywhere, and where they part
        assert py_shown in text and c_shown in text, (where, text)
        assert "messages differ at character" in text, (where, text)


@pytest.mark.parametrize(
    "was,now,was_shown,now_shown", WHITESPACE, ids=["two-spaces", "trailing", "tab", "nbsp", "long"]
)
def test_a_golden_message_that_differs_only_in_whitespace_shows_the_difference(
    tmp_path, capsys, was, now, was_shown, now_shown
):
    standin = {"py": f"reject:E_X:{now}", "c": f"reject:E_X:{now}"}
    root = pt.make_tree(tmp_path / "t", {NEG: {"expect": "reject:E_X", "standin": standin}})
    pt.write_golden(root, {NEG: {"spec": ("reject", "E_X", was)}})
    summary = tmp_path / "summary.md"
    assert main(["gate", "--root", str(root), "--engines", pt.engines_arg(), "-j", "1", "--summary", str(summary)]) == 1
    out = capsys.readouterr().out
    (line,) = [ln for ln in out.splitlines() if ln.startswith(f"FAIL VERDICT_CHANGED {NEG}")]
    assert main(["diff", NEG, "--root", str(root), "--engines", pt.engines_arg()]) == 1
    diff = capsys.readouterr().out
    for where, text in (("gate", line), ("summary", summary.read_text()), ("diff", diff)):
        assert was_shown in text and now_shown in text and "messages differ at character" in text, (where, text)
        assert "golden.json records another E_X message" in text and "--update" in text, (where, text)


# ----------------------------------------------------------------------------- nondeterminism vs golden

#: Wrapped stand-ins: the side and call named by ``[standin] hostile_vary`` (py1, py2, c1, c2)
#: answers otherwise — an emission with one more line, a rejection with a trailing space.
VARY_ENGINES = """
import hashlib
import tomllib

from rocke_py.parity.run.engines import load_callable

_STANDINS = {standins!r}
_calls = {{}}


def _call(side, config, mode, flavor):
    out = load_callable(f"{{_STANDINS}}:{{side}}_emit")(config, mode, flavor)
    key = (side, hashlib.sha256(config).hexdigest(), mode, flavor)
    _calls[key] = n = _calls.get(key, 0) + 1
    want = tomllib.loads(config.decode()).get("standin", {{}}).get("hostile_vary", "")
    if want != f"{{side}}{{2 - n % 2}}":
        return out
    if hasattr(out, "text"):
        return type(out)(out.text + "; varied\\n")
    return type(out)(out.code, out.message + " ")


def py_emit(config, mode, flavor):
    return _call("py", config, mode, flavor)


def c_emit(config, mode, flavor):
    return _call("c", config, mode, flavor)


def implemented_modes():
    return ("spec",)
"""


def _vary_engines(tmp_path: Path) -> str:
    path = tmp_path / "vary_engines.py"
    path.write_text(VARY_ENGINES.format(standins=str(pt.ENGINES_FILE)))
    return f"{path}:py_emit,{path}:c_emit,{path}:implemented_modes,{path}:implemented_modes"


HINTS = [
    ("c2", "py matches golden on both calls; c matches golden on its first call only"),
    ("c1", "py matches golden on both calls; c matches golden on its second call only"),
    ("py2", "py matches golden on its first call only; c matches golden on both calls"),
]


@pytest.mark.parametrize("vary,hint", HINTS, ids=[h[0] for h in HINTS])
def test_a_nondeterministic_job_says_which_call_matches_golden(tmp_path, capsys, vary, hint):
    root = pt.make_tree(tmp_path / "t", {CID: {"standin": {"hostile_vary": vary}}})
    _, sha, size = pt.standin_output(root, CID)
    pt.write_golden(root, {CID: {"spec": (sha, size, "k")}})
    eng = _vary_engines(tmp_path)
    report = tmp_path / "r.json"
    assert main(["gate", "--root", str(root), "--engines", eng, "-j", "1", "--json", str(report)]) == 1
    out = capsys.readouterr().out
    (line,) = [ln for ln in out.splitlines() if ln.startswith(f"FAIL NONDETERMINISTIC {CID}")]
    (rec,) = json.loads(report.read_text())["jobs"]
    assert main(["diff", CID, "--root", str(root), "--engines", eng]) == 1
    diff = capsys.readouterr().out
    for where, text in (("gate", line), ("json", rec["golden_match"]), ("diff", diff)):
        assert hint in text and "both engines match golden" not in text, (where, text)


def test_a_rejection_varying_in_whitespace_shows_the_difference(tmp_path, capsys):
    root = pt.make_tree(
        tmp_path / "t",
        {NEG: {"expect": "reject:E_X", "standin": {"py": "reject:E_X", "c": "reject:E_X", "hostile_vary": "c2"}}},
    )
    assert main(["gate", "--root", str(root), "--engines", _vary_engines(tmp_path), "-j", "1"]) == 1
    out = capsys.readouterr().out
    (line,) = [ln for ln in out.splitlines() if ln.startswith(f"FAIL NONDETERMINISTIC {NEG}")]
    assert "messages differ at character 25" in line and r"stand-in' / second" in line, line
    assert r"stand-in\x20'" in line, line


# ----------------------------------------------------------------------------- new: description and slug


def _refused_before_work(monkeypatch):
    def no_pool(*a, **k):
        raise AssertionError("new started the engines before refusing its arguments")

    monkeypatch.setattr(newconfig, "Pool", no_pool)


@pytest.mark.parametrize(
    "description",
    ['"two\\nlines"', '"a\\ttab"', '"trailing line break\\n"'],
    ids=["line-break", "tab", "trailing-break"],
)
def test_new_refuses_a_description_of_more_than_one_line_before_any_work(tmp_path, capsys, monkeypatch, description):
    root = pt.make_tree(tmp_path, {CID: {}})
    _refused_before_work(monkeypatch)
    args = pt.new_args(CID, "tile_k=32", f"parity.description={description}", expect="emit")
    assert main([*args, "--root", str(root), "--engines", pt.engines_arg(), "-j", "1"]) == 2
    captured = capsys.readouterr()
    err = captured.err
    assert err.count("\n") == 1 and "parity.description" in err and "one line" in err, err
    assert captured.out == ""
    assert sorted(p.name for p in (root / "parity_configs" / "wgrad").iterdir()) == ["00-a.toml"]


def test_new_refuses_an_over_long_slug_before_any_work(tmp_path, capsys, monkeypatch):
    root = pt.make_tree(tmp_path, {CID: {}})
    _refused_before_work(monkeypatch)
    args = pt.new_args(CID, "tile_k=32", expect="emit", slug="s" * 300)
    assert main([*args, "--root", str(root), "--engines", pt.engines_arg(), "-j", "1"]) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and "--slug" in captured.err and "at most 60" in captured.err, captured.err
    assert captured.out == ""
    assert sorted(p.name for p in (root / "parity_configs" / "wgrad").iterdir()) == ["00-a.toml"]


def test_new_takes_a_slug_of_the_limit(tmp_path, capsys):
    root = pt.make_tree(tmp_path, {CID: {}})
    args = pt.new_args(CID, "tile_k=32", expect="emit", slug="s" * 60)
    assert main([*args, "--root", str(root), "--engines", pt.engines_arg(), "-j", "1"]) == 0
    assert (root / "parity_configs" / "wgrad" / f"01-{'s' * 60}.toml").is_file()
