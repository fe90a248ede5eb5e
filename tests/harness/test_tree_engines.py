"""The engines under test are the tree's: the C engine is built from the tree's own sources into
a cache keyed by content (rocke_py/cbuild.py), a command on another tree runs that tree's own
harness (rocke_py/parity/run/tree.py), and a build error is a setup error naming file and line.

The cbuild tests use a two-unit stand-in engine (a header, two units, a private header) so that
they build in a second; the second-checkout tests copy the repository and edit its engines."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from layout import REPO
from repo_copy import copy_repository, git_init, replace_in

from rocke_py import cbuild
from rocke_py.parity import cli
from rocke_py.parity.run import tree
from rocke_py.parity.run.version import build_id

BIN = Path(sys.executable).parent
HEADER = """#ifndef ROCKE_H
#define ROCKE_H
#ifdef __cplusplus
extern "C" {
#endif
int rocke_version(void);
#ifdef __cplusplus
}
#endif
#endif
"""
UNITS = {
    "rocke_c/include/rocke.h": HEADER,
    "rocke_c/src/a.c": '#include "../include/rocke.h"\n#include "b.h"\nint rocke_version(void) { return B; }\n',
    "rocke_c/src/b.h": "#define B 7\n",
    "rocke_c/src/c.c": "int rk_other(void);\nint rk_other(void) { return 1; }\n",
}


def small_engine(root: Path) -> Path:
    for rel, text in UNITS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.fixture
def own_cache(tmp_path, monkeypatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("ROCKE_PARITY_CACHE", str(cache))
    return cache


def fp(root: Path) -> str:
    return cbuild.fingerprint(cbuild.read_sources(root / "rocke_c"))


def test_the_build_id_is_the_same_at_any_path_and_moves_with_every_input(tmp_path, monkeypatch):
    a, b = small_engine(tmp_path / "a"), small_engine(tmp_path / "elsewhere" / "b")
    assert fp(a) == fp(b)
    replace_in(b / "rocke_c/src/b.h", "7", "8")
    assert fp(a) != fp(b)  # a source
    same = fp(a)
    replace_in(a / "rocke_c/include/rocke.h", "int rocke_version(void);", "int rocke_version(void); ")
    assert fp(a) != same  # the public header
    same = fp(a)
    monkeypatch.setattr(cbuild, "CFLAGS", (*cbuild.CFLAGS, "-O3"))
    assert fp(a) != same  # the flags
    monkeypatch.undo()
    monkeypatch.setitem(cbuild._IDENTITY, tuple(cbuild.compiler()), "cc (another) 99.1")
    assert fp(a) != same  # the compiler


def test_only_the_changed_units_are_compiled_again(tmp_path, own_cache):
    root = small_engine(tmp_path / "t")
    first = cbuild.build(root / "rocke_c")
    assert sorted(first.compiled) == ["src/a.c", "src/c.c"]
    assert cbuild.load(first).lib.rocke_version() == 7
    replace_in(root / "rocke_c/src/c.c", "return 1;", "return 2;")
    assert cbuild.build(root / "rocke_c").compiled == ("src/c.c",)
    replace_in(root / "rocke_c/src/b.h", "7", "8")  # a private header: only the unit including it
    again = cbuild.build(root / "rocke_c")
    assert again.compiled == ("src/a.c",)
    assert cbuild.load(again).lib.rocke_version() == 8  # the new build is what loads
    other = small_engine(tmp_path / "elsewhere")  # another tree, same sources: nothing compiles
    replace_in(other / "rocke_c/src/c.c", "return 1;", "return 2;")
    replace_in(other / "rocke_c/src/b.h", "7", "8")
    assert cbuild.build(other / "rocke_c").compiled == () and cbuild.build(other / "rocke_c").path == again.path


def test_a_compile_error_names_the_file_and_line(tmp_path, own_cache):
    root = small_engine(tmp_path / "t")
    replace_in(root / "rocke_c/src/c.c", "return 1;", "return 1")
    with pytest.raises(cbuild.BuildError) as err:
        cbuild.build(root / "rocke_c")
    assert str(err.value).startswith("the C engine does not compile: rocke_c/src/c.c:2:")
    assert "error:" in str(err.value) and "\n" not in str(err.value)


def test_two_builds_at_once_share_the_cache(tmp_path, own_cache):
    root = small_engine(tmp_path / "t")
    code = (
        "import sys; from pathlib import Path; from rocke_py import cbuild\n"
        "b = cbuild.build(Path(sys.argv[1])); print(len(b.compiled), b.path)"
    )
    cmd = [sys.executable, "-c", code, str(root / "rocke_c")]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) for _ in range(3)]
    outs = [p.communicate(timeout=300)[0].split() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert len({path for _, path in outs}) == 1
    assert sorted(int(n) for n, _ in outs) == [0, 0, 2]  # one build compiled; the others waited and loaded it


# ---- a second checkout: its own engines, never the running package's


@pytest.fixture
def checkout(tmp_path) -> Path:
    return copy_repository(tmp_path / "second")


def regress_both_engines(root: Path) -> None:
    """The same one-token change in both engines' spec printer: they agree, golden does not."""
    replace_in(root / "rocke_py/engine/print_spec.py", '"rocke.spec v1\\n"', '"rocke.spec v9\\n"')
    replace_in(root / "rocke_c/src/print_spec.c", '"rocke.spec v1\\n"', '"rocke.spec v9\\n"')


def gate(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BIN / "rocke-parity"), "gate", "--mode", "spec", *args], cwd=cwd, capture_output=True, text=True
    )


@pytest.mark.parametrize("how", ["--root", "cwd"])
def test_a_second_checkout_is_gated_with_its_own_engines(checkout, tmp_path, how):
    report = tmp_path / "r.json"

    def run() -> subprocess.CompletedProcess:
        where = ["--root", str(checkout)] if how == "--root" else []
        return gate(REPO if how == "--root" else checkout, *where, "--json", str(report))

    clean = run()
    assert clean.returncode == 0, clean.stdout + clean.stderr  # the copy as it is passes
    regress_both_engines(checkout)
    done = run()
    assert done.returncode == 1, done.stdout + done.stderr
    assert "GOLDEN_DRIFT" in done.stdout
    ids = json.loads(report.read_text())["summary"]["engines"]
    assert ids["py"]["build_id"] != build_id("rocke_py.engine:emit")
    assert ids["c"]["build_id"] == cbuild.build_id(fp(checkout)) != build_id("rocke_py.cbridge:emit")


def test_main_in_process_on_another_tree_runs_that_trees_harness(checkout, capfd):
    regress_both_engines(checkout)
    assert cli.main(["gate", "--mode", "spec", "--config", "fwd/00", "--root", str(checkout)]) == 1
    assert "GOLDEN_DRIFT" in capfd.readouterr().out


def test_changed_in_a_second_checkout_sees_its_own_engines_fail(checkout):
    git_init(checkout)
    regress_both_engines(checkout)
    done = gate(checkout, "--changed")
    assert "the c engine changed" in done.stdout + done.stderr
    assert done.returncode == 1 and "GOLDEN_DRIFT" in done.stdout


def test_a_c_engine_that_does_not_compile_is_a_setup_error(checkout):
    replace_in(checkout / "rocke_c/src/print_spec.c", '"rocke.spec v1\\n");', '"rocke.spec v1\\n")')
    done = gate(checkout)
    assert done.returncode == 2, done.stdout + done.stderr
    line = [ln for ln in done.stderr.splitlines() if "does not compile" in ln]
    assert line and "rocke_c/src/print_spec.c:" in line[0] and "error:" in line[0], done.stderr
    assert "Traceback" not in done.stderr


def test_a_delegated_run_that_is_still_not_the_trees_own_is_refused(checkout, monkeypatch, capsys):
    monkeypatch.setenv(tree.DELEGATED_ENV, str(checkout))  # as if PYTHONPATH had not put the tree first
    assert cli.main(["list", "--root", str(checkout)]) == 2
    assert "imports rocke_py from" in capsys.readouterr().err


def test_a_root_option_without_a_value_is_the_command_parsers_usage_error(capsys):
    assert cli.main(["gate", "--root"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: rocke-parity gate") and "--root: expected one argument" in err


def test_a_tree_without_engines_says_whose_engines_ran(tmp_path):
    (tmp_path / "parity_configs").symlink_to(REPO / "parity_configs")
    assert tree.delegation(["gate", "--root", str(tmp_path)]) is None
    assert "holds no engines of its own" in (tree.engines_note(tmp_path) or "")
    assert tree.engines_note(REPO) is None


def test_the_fingerprint_names_what_is_dirty(checkout):
    git_init(checkout)
    clean = tree.fingerprint(checkout)
    assert clean["dirty"] == [] and not str(clean["commit"]).endswith("+dirty")
    gaps = checkout / "parity_configs/known_gaps.toml"
    gaps.write_text(gaps.read_text() + "# edited\n")
    dirty = tree.fingerprint(checkout)
    assert str(dirty["commit"]).endswith("+dirty") and dirty["dirty"] == [" M parity_configs/known_gaps.toml"]
    assert dirty["known_gaps_sha256"] != clean["known_gaps_sha256"]
    assert dirty["golden_sha256"] == clean["golden_sha256"] and dirty["configs_sha256"] == clean["configs_sha256"]
    (checkout / "s1.json").write_text("{}")  # a shard's report in the checkout: not under review
    assert tree.fingerprint(checkout)["dirty"] == dirty["dirty"]
    (checkout / "rocke_py" / "parity" / "new_module.py").write_text("")  # an untracked source is
    assert "?? rocke_py/parity/new_module.py" in tree.fingerprint(checkout)["dirty"]


def test_the_cache_location_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("ROCKE_PARITY_CACHE", str(tmp_path / "x"))
    assert cbuild.cache_dir() == tmp_path / "x"
    monkeypatch.delenv("ROCKE_PARITY_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cbuild.cache_dir() == tmp_path / "xdg" / "rocke-parity"
    assert os.environ.get("ROCKE_PARITY_CACHE") is None
