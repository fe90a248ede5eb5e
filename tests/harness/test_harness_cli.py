"""The rocke-parity CLI: exit statuses, emit, list, new (check-llvm: tests/engines/test_check_llvm.py)."""

from __future__ import annotations

import difflib
import tomllib
from pathlib import Path

import standin_tree as pt

from rocke_py.parity.cli import main
from rocke_py.parity.commands.newconfig import set_value


def run(root: Path, *args: str, modes: str = "implemented_modes", c_modes: str | None = None) -> int:
    return main([*args, "--root", str(root), "--engines", pt.engines_arg(modes, c_modes)])


def green(tmp_path: Path) -> Path:
    pt.make_tree(
        tmp_path,
        {"wgrad/00-a": {}, "wgrad/100-n": {"expect": "reject:E_X", "standin": {"py": "reject:E_X", "c": "reject:E_X"}}},
    )
    pt.write_golden(tmp_path, pt.golden_for(tmp_path, ["wgrad/00-a", "wgrad/100-n"]))
    return tmp_path


def test_gate_exit_statuses(tmp_path, capsys):
    root = green(tmp_path)
    assert run(root, "gate", "-j", "1") == 0
    assert "gate PASSED: 2 job(s)" in capsys.readouterr().out
    assert run(root, "gate", "--config", "wgrad/42-nope") == 2
    assert "unknown config 'wgrad/42-nope'" in capsys.readouterr().err
    assert run(root, "gate", "--family", "fwd") == 2
    assert run(root, "gate", "--mode", "ir") == 2
    err = capsys.readouterr().err
    assert "--mode ir (not implemented by the py and c engines)" in err and "both engines implement: spec" in err
    assert run(root, "gate", "--mode", "asm") == 2
    assert run(root, "gate", "--bogus") == 2
    (root / "parity_configs/wgrad/01-b.toml").write_text(pt.config_text(standin={"c": "tail"}))
    assert run(root, "gate", "-j", "1") == 1


def test_gate_notes_a_mode_only_one_engine_implements(tmp_path, capsys):
    root = green(tmp_path)
    assert run(root, "gate", "-j", "1", modes="spec_ir_modes", c_modes="implemented_modes") == 0
    assert "note: mode ir is implemented by the py engine only: not gated" in capsys.readouterr().out


def test_emit(tmp_path, capfd):
    root = green(tmp_path)
    assert run(root, "emit", "wgrad/00-a", "--engine", "c") == 0
    text, _, _ = pt.standin_output(root, "wgrad/00-a", side="c")
    assert capfd.readouterr().out == text
    out = tmp_path / "out.ll"
    assert run(root, "emit", str(root / "parity_configs/wgrad/00-a.toml"), "--engine", "py", "-o", str(out)) == 0
    assert out.read_text() == text
    assert run(root, "emit", "wgrad/100-n", "--engine", "py") == 1
    assert capfd.readouterr().err.splitlines() == ["REJECTED E_X", "rejected by the stand-in"]
    (root / "parity_configs/wgrad/01-boom.toml").write_text(pt.config_text(standin={"py": "raise"}))
    assert run(root, "emit", "wgrad/01-boom", "--engine", "py") == 3


def rows(out: str) -> dict[str, list[str]]:
    return {ln.split()[0]: ln.split()[1:] for ln in out.splitlines() if ln.startswith("wgrad/")}


def test_list_shows_expectation_and_last_status(tmp_path, capsys):
    root = green(tmp_path)
    assert run(root, "list") == 0
    out = capsys.readouterr().out
    assert rows(out)["wgrad/00-a"][:2] == ["emit", "-"] and "2 config(s)" in out
    run(root, "gate", "-j", "1")
    capsys.readouterr()
    assert run(root, "list", "--family", "wgrad") == 0
    out = capsys.readouterr().out
    assert rows(out)["wgrad/00-a"][:2] == ["emit", "IDENTICAL"]
    assert rows(out)["wgrad/100-n"][:2] == ["reject:E_X", "BOTH_REJECTED"]
    (root / "parity_configs/wgrad/00-a.toml").write_text(pt.config_text(description="edited"))
    run(root, "list")
    assert "(config changed since)" in capsys.readouterr().out
    assert (root / ".rocke-parity/.gitignore").read_text().splitlines()[-1] == "*"
    assert run(root, "list", "--family", "nope") == 2


def test_new_refuses_without_an_expectation_and_proposes_one(tmp_path, capsys):
    root = green(tmp_path)
    before = sorted(p.name for p in (root / "parity_configs/wgrad").iterdir())
    assert run(root, "new", "wgrad", "--from", "wgrad/00-a", "--set", "tile_k=32", "-j", "1") == 1
    out = capsys.readouterr().out
    assert "rerun with --expect emit" in out and "nothing written" in out
    src = root / "parity_configs/wgrad/00-a.toml"
    src.write_text(pt.config_text(standin={"py": "reject:WGRAD_K:k too small", "c": "reject:WGRAD_K:k too small"}))
    assert run(root, "new", "wgrad", "--from", "wgrad/00-a", "--set", "tile_k=32", "-j", "1") == 1
    assert "both engines reject with WGRAD_K — rerun with --expect reject:WGRAD_K" in capsys.readouterr().out
    src.write_text(pt.config_text(standin={"c": "alt"}))
    assert run(root, "new", "wgrad", "--from", "wgrad/00-a", "--set", "tile_k=32", "-j", "1") == 1
    assert "no expectation to propose" in capsys.readouterr().out
    assert sorted(p.name for p in (root / "parity_configs/wgrad").iterdir()) == before


def test_new_writes_the_next_number_with_line_edits(tmp_path, capsys):
    root = green(tmp_path)
    src = (root / "parity_configs/wgrad/00-a.toml").read_text()
    assert (
        run(root, *pt.new_args("wgrad/00-a", "tile_k=32", "Hi=56", "spec.lds_k_outer=auto", expect="emit"), "-j", "1")
        == 0
    )
    out = capsys.readouterr().out
    path = root / "parity_configs/wgrad/01-a-tile-k-32-hi-56-lds-k-outer-auto.toml"
    assert f"wrote {path.relative_to(root).as_posix()}" in out
    assert "rocke-parity golden --update --config wgrad/01-a-tile-k-32-hi-56-lds-k-outer-auto" in out
    text = path.read_text()
    assert "tile_k = 32  # the K tile\n" in text  # the line's comment is kept
    changed = [ln for ln in difflib.ndiff(src.splitlines(), text.splitlines()) if ln[:1] in "+-"]
    assert [ln.split("=")[0].strip() for ln in changed] == [  # only these lines moved; the rest is as it was
        "- description",
        "+ description",
        "+ Hi",
        "- tile_k",
        "+ tile_k",
        "+ lds_k_outer",
    ]
    doc = tomllib.loads(text)
    assert doc["problem"] == {"N": 8, "C": 64, "Hi": 56}
    assert doc["spec"]["lds_k_outer"] == "auto" and doc["spec"]["tile_k"] == 32
    assert doc["parity"]["description"] == "derived from wgrad/00-a with tile_k=32, Hi=56, lds_k_outer=auto"
    assert doc["parity"]["expect"] == "emit"
    assert run(root, "new", "wgrad", "--from", "wgrad/00-a", "--set", "bad", "--expect", "emit") == 2
    assert "--set takes key=value" in capsys.readouterr().err
    assert run(root, *pt.new_args("wgrad/100-n", "tile_k=7", expect="reject:E_X", slug="neg-tile-k"), "-j", "1") == 0
    assert (root / "parity_configs/wgrad/101-neg-tile-k.toml").exists()
    assert (
        run(root, "new", "wgrad", "--from", "wgrad/00-a", "--set", "tile_k=16", "--expect", "reject:E_X", "-j", "1")
        == 1
    )
    assert "nothing written: with --expect reject:E_X not every job passes" in capsys.readouterr().out


def test_set_value_edits_one_line():
    text = '[parity]\nexpect = "emit"\n\n[spec]\nfamily = "wgrad"  # fam\ntile_k = 64 # k\n'
    assert set_value(text, "spec", "tile_k", "32") == text.replace("tile_k = 64 # k", "tile_k = 32 # k")
    assert set_value(text, "spec", "split_k", "4").endswith("tile_k = 64 # k\nsplit_k = 4\n")
    assert set_value(text, "target", "arch", '"gfx942"').endswith('\n[target]\narch = "gfx942"\n')
