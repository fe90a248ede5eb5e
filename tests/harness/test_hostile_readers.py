"""Hostile input to the harness's own readers: no traceback, no lost report, no silent limit.

- A config nested too deeply for tomllib's recursive parser is a run-level failure of its
  family that names the file ("cannot be read by the harness"); every other family's configs
  are still read, run and judged, by every command.
- golden.json and known_gaps.toml nested too deeply are what any unreadable manifest is: one
  line naming the file, the same exit status as a file that is not JSON or TOML at all.
- A local state file (``.rocke-parity/``) nested too deeply is ignored with a note naming it.
- golden.json with a key twice in one object (json keeps the last; a reviewer reads the first)
  is refused, naming the key; so is a shard report that ``merge`` reads.

The property fuzz of the same readers is tests/harness/test_reader_fuzz.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import standin_tree as pt
from cli_run import Done, run_main

from rocke_py.parity.inputs import configs
from rocke_py.parity.judge import golden
from rocke_py.parity.report.merge import MergeError, load_report
from rocke_py.parity.report.report import JSON_SCHEMA

#: the row's input: arrays nested 1000 deep (a 2 KB file); tomllib recurses once per level or more
DEEP_TOML = "x = " + "[" * 1000 + "]" * 1000 + "\n"
#: JSON nested far past any recursion limit (json's C scanner recurses too): 200 KB
DEEP_JSON = "[" * 100_000 + "]" * 100_000 + "\n"
DEEP_CONFIG = "parity_configs/fwd/01-deep.toml"


def tree(tmp_path: Path) -> Path:
    """Two families of one emitting stand-in config each, with a correct golden.json."""
    root = tmp_path / "repo"
    pt.make_tree(root, {"wgrad/00-a": {}, "fwd/00-b": {}})
    pt.write_golden(root, pt.golden_for(root, ["wgrad/00-a", "fwd/00-b"]))
    return root


def run(root: Path, capsys, *args: str) -> Done:
    extra = ["-j", "1"] if args[0] in ("gate", "golden") else []
    return run_main(capsys, [*args, "--root", str(root), "--engines", pt.engines_arg(), *extra])


# ----------------------------------------------------------------------------- a deep config


def deep_config(root: Path) -> None:
    text = pt.config_text(description="nested too deeply", extra="[parity_extra]\n" + DEEP_TOML)
    (root / DEEP_CONFIG).write_text(text)


def test_a_deep_parity_table_is_a_value_error_naming_the_nesting():
    with pytest.raises(ValueError, match="nested too deeply"):
        configs.parse_parity_table('[parity]\ndescription = "d"\nexpect = "emit"\n' + DEEP_TOML)


def test_the_gate_judges_every_other_config_beside_a_deep_one(tmp_path, capsys):
    root = tree(tmp_path)
    deep_config(root)
    report = tmp_path / "report.json"
    done = run(root, capsys, "gate", "--json", str(report))
    assert done.code == 1, done.text
    lines = [ln for ln in done.out.splitlines() if ln.startswith("FAIL run-level:")]
    assert len(lines) == 1 and lines[0].startswith(f"FAIL run-level: {DEEP_CONFIG}: cannot be read by the harness: ")
    assert "nested too deeply" in lines[0]
    jobs = {j["config"]: j["status"] for j in json.loads(report.read_text())["jobs"]}
    assert jobs == {"wgrad/00-a": "IDENTICAL", "fwd/00-b": "IDENTICAL"}


@pytest.mark.parametrize(
    "args, code",
    [
        (("gate", "--family", "wgrad"), 0),
        (("gate", "--family", "fwd"), 1),
        (("golden", "--check"), 1),
        (("golden", "--update", "--family", "wgrad"), 0),
        (("list",), 1),
        (("list", "--family", "wgrad"), 0),
        (("diff", "wgrad/00-a"), 0),
        (("new", "wgrad", "--from", "wgrad/00-a", "--set", "tile_k=32", "--expect", "emit"), 0),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, tuple) else None,
)
def test_a_deep_config_fails_its_family_in_every_command_and_no_other(tmp_path, capsys, args, code):
    root = tree(tmp_path)
    deep_config(root)
    done = run(root, capsys, *args)
    assert done.code == code, done.text
    named = [ln for ln in done.text.splitlines() if DEEP_CONFIG in ln]
    if code == 0:
        assert not named, done.text
    else:
        assert len(named) == 1 and "cannot be read by the harness" in named[0], done.text
        assert "nested too deeply" in named[0]


# ----------------------------------------------------------------------------- deep manifests

#: (file, its deep text, a plainly malformed text of the same file: the control)
MANIFESTS = [
    ("golden.json", DEEP_JSON, "{\n"),
    ("known_gaps.toml", DEEP_TOML, "x = \n"),
]
MANIFEST_COMMANDS = [
    ("gate",),
    ("golden", "--check"),
    ("golden", "--update"),
    ("diff", "wgrad/00-a"),
]


@pytest.mark.parametrize("name, deep, malformed", MANIFESTS, ids=[m[0] for m in MANIFESTS])
@pytest.mark.parametrize("args", MANIFEST_COMMANDS, ids=" ".join)
def test_a_deep_manifest_is_what_any_unreadable_manifest_is(tmp_path, capsys, name, deep, malformed, args):
    """The same exit status as for a file that is not JSON/TOML at all; one line naming the file."""
    root = tree(tmp_path)
    path = root / "parity_configs" / name
    path.write_text(malformed)
    control = run(root, capsys, *args)
    path.write_text(deep)
    done = run(root, capsys, *args)
    assert done.code == control.code, (control.text, done.text)
    said = [ln for ln in control.text.splitlines() if f"{name}: cannot be read" in ln]
    named = [ln for ln in done.text.splitlines() if f"{name}: cannot be read" in ln]
    assert len(named) == len(said), (control.text, done.text)
    assert all("nested too deeply" in ln for ln in named), done.text


def test_gaps_remove_refuses_a_deep_known_gaps_file_in_one_line(tmp_path, capsys):
    root = tree(tmp_path)
    (root / "parity_configs" / "known_gaps.toml").write_text(DEEP_TOML)
    done = run(root, capsys, "gaps", "remove", "wgrad/00-a", "--mode", "spec", "--flavor", "-")
    assert done.code == 2, done.text
    assert len(done.err.strip().splitlines()) == 1 and "known_gaps.toml" in done.err, done.text
    assert "nested too deeply" in done.err


# ----------------------------------------------------------------------------- deep local state


def _state_file(root: Path, name: str) -> Path:
    if name == "outputs":  # the Python engine's output cache (build id: the stand-in file's)
        return next((root / ".rocke-parity" / "outputs").glob("py-*.json"))
    return root / ".rocke-parity" / name


@pytest.mark.parametrize(
    "name, args",
    [
        ("last-run.json", ("gate",)),
        ("last-run.json", ("list",)),
        ("parity-tables.json", ("gate",)),
        ("parity-tables.json", ("list",)),
        ("outputs", ("gate", "--reuse", "py")),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, tuple) else v,
)
def test_a_deep_local_state_file_is_ignored_with_a_note(tmp_path, capsys, name, args):
    root = tree(tmp_path)
    assert run(root, capsys, "gate").code == 0  # writes the state
    path = _state_file(root, name)
    path.write_text(DEEP_JSON)
    done = run(root, capsys, *args)
    assert done.code == 0, done.text
    notes = [ln for ln in done.err.splitlines() if path.name in ln]
    assert len(notes) == 1, done.err
    assert notes[0].startswith("note: ") and "nested too deeply" in notes[0] and notes[0].endswith(": ignored")
    assert run(root, capsys, *args).code == 0  # and the next run is clean again


# ----------------------------------------------------------------------------- a key twice in golden.json


def _insert_after(text: str, anchor: str, pair: str) -> str:
    """``text`` with ``pair`` (``"key": value``) made the first member of the object ``anchor`` opens."""
    at = text.index(anchor) + len(anchor)
    return text[:at] + pair + ", " + text[at:]


#: (where, the object's opening, the duplicate inserted first: a reviewer reads it, json keeps the other)
DUPLICATES = [
    ("top level", "{", '"schema": "rocke-parity.golden/v1"', "schema"),
    ("entries", '"entries": {', '"fwd/00-b": {}', "fwd/00-b"),
    ("an entry", '"spec": {', '"sha256": "' + "0" * 64 + '"', "sha256"),
    ("coverage", '"coverage": {', '"modes": ["spec", "ir"]', "modes"),
]


@pytest.mark.parametrize("where, anchor, pair, key", DUPLICATES, ids=[d[0] for d in DUPLICATES])
def test_a_key_twice_in_golden_json_is_refused_naming_the_key(tmp_path, where, anchor, pair, key):
    root = tree(tmp_path)
    path = golden.golden_path(root)
    text = json.dumps(json.loads(path.read_text()), sort_keys=True)
    path.write_text(_insert_after(text, anchor, pair))
    with pytest.raises(golden.GoldenError) as e:
        golden.load(path)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("golden.json: cannot be read: ")
    assert f"key {key!r} twice" in msg, msg


def test_a_key_twice_in_a_nested_tuples_object_is_refused(tmp_path):
    root = tree(tmp_path)
    path = golden.golden_path(root)
    doc = json.loads(path.read_text())
    doc["coverage"]["tuples"] = {"oracle": ["a"]}
    text = json.dumps(doc, sort_keys=True)
    path.write_text(text.replace('{"oracle": ["a"]}', '{"oracle": ["a"], "oracle": []}'))
    with pytest.raises(golden.GoldenError, match="key 'oracle' twice"):
        golden.load(path)


def test_the_gate_fails_on_a_key_twice_in_golden_json(tmp_path, capsys):
    root = tree(tmp_path)
    path = golden.golden_path(root)
    text = json.dumps(json.loads(path.read_text()), sort_keys=True)
    path.write_text(_insert_after(text, '"spec": {', '"sha256": "' + "0" * 64 + '"'))
    done = run(root, capsys, "gate")
    assert done.code == 1, done.text
    lines = [ln for ln in done.out.splitlines() if ln.startswith("FAIL run-level:")]
    assert lines == ["FAIL run-level: golden.json: cannot be read: key 'sha256' twice in one object"], done.out


def test_merge_refuses_a_report_with_a_key_twice(tmp_path):
    path = tmp_path / "shard-1.json"
    path.write_text('{"schema": "rocke-parity.report/v0", "schema": "' + JSON_SCHEMA + '", "shard": {}}')
    with pytest.raises(MergeError) as e:
        load_report(str(path))
    assert str(e.value) == f"{path} is not a JSON report: key 'schema' twice in one object"


@pytest.mark.parametrize(
    "edit, want",
    [
        (lambda d: d["entries"]["wgrad/00-a"]["spec"].update(kernel_name="\ud800"), "wgrad/00-a spec: expected"),
        (
            lambda d: d["entries"]["wgrad/00-a"].update(
                spec={
                    "verdict": "reject",
                    "code": "E_X",
                    "message": "\udcff",
                    "message_sha256": golden.message_sha256("\udcff"),
                }
            ),
            "message is not Unicode text",
        ),
        (lambda d: d["coverage"].update(tuples={"oracle": ["\ud800"]}), "coverage.tuples must be"),
        (lambda d: d["entries"].update({"wgrad/00-a\nFAIL": {}}), "entry 'wgrad/00-a\\nFAIL' is not a config id"),
    ],
    ids=["kernel-name", "message", "tuple", "entry-key"],
)
def test_golden_json_text_that_could_not_be_written_back_or_shown_is_refused(tmp_path, edit, want):
    """A lone surrogate (JSON can hold one; no UTF-8 write or print takes it) or a key that is no
    config id: refused on load, in one line, rather than a traceback at golden --update."""
    root = tree(tmp_path)
    path = golden.golden_path(root)
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc))
    with pytest.raises(golden.GoldenError) as e:
        golden.load(path)
    assert "\n" not in str(e.value) and want in str(e.value), str(e.value)
