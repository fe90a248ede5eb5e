"""Discovery of parity configs and the run-level failures it reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import standin_tree as pt

from rocke_py.parity.cli import main
from rocke_py.parity.inputs import configs as configs_mod
from rocke_py.parity.inputs.configs import Expectation, discover, resolve_id
from rocke_py.parity.run.root import RootNotFound, find_root


def problems(root: Path) -> list[str]:
    return [p.message for p in discover(root).problems]


def test_discovers_ids_expectations_and_raw_bytes(tmp_path):
    pt.make_tree(tmp_path, {"wgrad/00-base": {}, "wgrad/100-neg": {"expect": "reject:WGRAD_X"}, "fwd/07-a": {}})
    d = discover(tmp_path)
    assert d.problems == ()
    assert [c.id for c in d.configs] == ["fwd/07-a", "wgrad/00-base", "wgrad/100-neg"]
    assert d.families == ("fwd", "wgrad")
    neg = d.by_id()["wgrad/100-neg"]
    assert neg.expect == Expectation("WGRAD_X") and not neg.expect.emits and str(neg.expect) == "reject:WGRAD_X"
    assert neg.data == (tmp_path / "parity_configs/wgrad/100-neg.toml").read_bytes()
    assert resolve_id(d, "wgrad/00") is d.by_id()["wgrad/00-base"]
    assert resolve_id(d, "parity_configs/wgrad/00-base.toml") is d.by_id()["wgrad/00-base"]
    assert resolve_id(d, "wgrad/99") is None


def test_no_configs_found(tmp_path):
    (tmp_path / "parity_configs").mkdir()
    msgs = problems(tmp_path)
    assert any("no configs found" in m for m in msgs)
    (tmp_path / "parity_configs/wgrad").mkdir()
    assert any("no configs found" in m for m in problems(tmp_path))


def test_gate_exits_1_when_no_configs_are_found(tmp_path, capsys):
    (tmp_path / "parity_configs" / "wgrad").mkdir(parents=True)
    assert main(["gate", "--root", str(tmp_path), "--engines", pt.engines_arg()]) == 1
    assert "no configs found" in capsys.readouterr().out


def test_family_without_an_emitting_config(tmp_path):
    pt.make_tree(tmp_path, {"wgrad/00-a": {}, "dgrad/100-only-rejects": {"expect": "reject:E_X"}})
    msgs = problems(tmp_path)
    assert len(msgs) == 1 and "dgrad/" in msgs[0] and "no config that expects emit" in msgs[0]


def test_duplicate_numbers_within_a_family(tmp_path):
    pt.make_tree(tmp_path, {"wgrad/16-mine": {}, "wgrad/16-theirs": {}, "fwd/16-fine": {}})
    msgs = problems(tmp_path)
    assert len(msgs) == 1 and "number 16 is used 2 times" in msgs[0] and "16-mine.toml" in msgs[0]


@pytest.mark.parametrize(
    "content, needle",
    [
        (b"[parity\nexpect = 1\n", "not valid TOML"),
        (b"\xff\xfe[parity]\n", "not UTF-8"),
        (b'[target]\narch = "gfx950"\n', "no [parity] table"),
        (b'[parity]\ndescription = "d"\n', "has no expect"),
        (b'[parity]\ndescription = "d"\nexpect = "reject"\n', "expect must be"),
        (b'[parity]\ndescription = "d"\nexpect = "reject:lower"\n', "expect must be"),
        (b'[parity]\ndescription = "d"\nexpect = "maybe"\n', "expect must be"),
        (b'[parity]\nexpect = "emit"\n', "non-empty description"),
        (b'[parity]\ndescription = "d"\nexpect = "emit"\nexpcet = "emit"\n', "unknown key(s) in [parity]: expcet"),
    ],
)
def test_unreadable_configs_are_run_level_failures(tmp_path, content, needle):
    pt.make_tree(tmp_path, {"wgrad/00-good": {}})
    (tmp_path / "parity_configs/wgrad/01-bad.toml").write_bytes(content)
    for _ in range(2):  # the second discovery takes the parse error from the kept tables: the same problem
        d = discover(tmp_path)
        assert [c.id for c in d.configs] == ["wgrad/00-good"]
        (msg,) = [p.message for p in d.problems]
        assert "01-bad.toml: cannot be read by the harness" in msg and needle in msg


@pytest.mark.parametrize("name", ["1-short.toml", "007-lead.toml", "16_x.toml", "16-Upper.toml", "16-x.txt", "README"])
def test_file_names_must_match_the_pattern(tmp_path, name):
    pt.make_tree(tmp_path, {"wgrad/00-good": {}})
    (tmp_path / "parity_configs/wgrad" / name).write_text(pt.config_text())
    (msg,) = problems(tmp_path)
    assert "does not match <NN>-<slug>.toml" in msg


def test_hidden_files_are_ignored(tmp_path):
    pt.make_tree(tmp_path, {"wgrad/00-good": {}})
    (tmp_path / "parity_configs/wgrad/.gitkeep").write_text("")
    assert problems(tmp_path) == []


def test_numbering_must_match_the_expectation(tmp_path):
    pt.make_tree(
        tmp_path,
        {"wgrad/00-good": {}, "wgrad/05-neg-too-low": {"expect": "reject:E_X"}, "wgrad/100-emits-too-high": {}},
    )
    msgs = problems(tmp_path)
    assert len(msgs) == 2
    assert any("05-neg-too-low" in m and "numbered 100 and up" in m for m in msgs)
    assert any("100-emits-too-high" in m and "numbered 00-99" in m for m in msgs)


def test_root_is_found_upwards_from_cwd(tmp_path, monkeypatch):
    pt.make_tree(tmp_path, {"wgrad/00-good": {}})
    sub = tmp_path / "docs" / "deep"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    assert find_root() == tmp_path.resolve()
    with pytest.raises(RootNotFound):
        find_root(Path("/"))


# ----------------------------------------------------------------------------- kept [parity] tables


def _no_parsing(monkeypatch):
    def refuse(text):
        raise AssertionError("parsed a config the kept tables hold")

    monkeypatch.setattr(configs_mod, "parse_parity_table", refuse)


def test_a_discovery_of_unchanged_configs_parses_none(tmp_path, monkeypatch):
    pt.make_tree(tmp_path, {"wgrad/00-base": {}, "wgrad/100-neg": {"expect": "reject:WGRAD_X"}})
    first = discover(tmp_path)
    _no_parsing(monkeypatch)
    again = discover(tmp_path)
    assert [(c.id, c.expect, c.description, c.isa) for c in again.configs] == [
        (c.id, c.expect, c.description, c.isa) for c in first.configs
    ]


def test_a_changed_config_is_parsed_again(tmp_path):
    pt.make_tree(tmp_path, {"wgrad/00-base": {}, "wgrad/100-neg": {"expect": "reject:WGRAD_X"}})
    discover(tmp_path)
    path = tmp_path / "parity_configs/wgrad/100-neg.toml"
    path.write_text(path.read_text().replace("reject:WGRAD_X", "reject:WGRAD_Y"))
    assert discover(tmp_path).by_id()["wgrad/100-neg"].expect == Expectation("WGRAD_Y")


@pytest.mark.parametrize("edit", ["expectation", "code"])
def test_kept_tables_that_do_not_fit_are_not_trusted(tmp_path, edit):
    pt.make_tree(tmp_path, {"wgrad/00-base": {}, "wgrad/100-neg": {"expect": "reject:WGRAD_X"}})
    discover(tmp_path)
    path = tmp_path / ".rocke-parity" / configs_mod.ParityTables.FILE_NAME
    doc = json.loads(path.read_text())
    if edit == "expectation":  # a table that turns the rejection into an emission: its text says otherwise
        doc["tables"] = {k: [v[0], v[1], "emit", v[3]] for k, v in doc["tables"].items()}
    else:  # written by another version of the harness, whose tables may read differently
        doc["tables"] = {k: [v[0], "another reading", *v[2:]] for k, v in doc["tables"].items()}
        doc["code"] = "0" * 16
    path.write_text(json.dumps(doc))
    neg = discover(tmp_path).by_id()["wgrad/100-neg"]
    assert neg.expect == Expectation("WGRAD_X") and neg.description != "another reading"


def test_without_its_sources_the_harness_keeps_no_tables(tmp_path, monkeypatch):
    monkeypatch.setattr(configs_mod, "_parser_code_id", lambda: "")  # an install without .py files
    pt.make_tree(tmp_path, {"wgrad/00-base": {}})
    discover(tmp_path)
    assert not (tmp_path / ".rocke-parity" / configs_mod.ParityTables.FILE_NAME).exists()
