"""The wheel, as a user gets it: built from the tree under test, installed into a venv of its own
without the network, and every console script of pyproject.toml's [project.scripts] run from
there on a copy of the parity configs.

- The wheel holds exactly rocke_py/'s packages (its directories with an ``__init__.py``) and the
  C engine's sources (``rocke_py/_c/``): pyproject.toml discovers the packages from package-dir,
  so a new subpackage is in the wheel without an edit there, and nothing else is (tests/,
  rocke_c/tests/). The check is shown to fail on a forgotten and on a stray package.
- The venv sees the test environment's packages (cffi, numpy, ...) through a .pth file written
  after the wheel is installed (pip then sees no other rocke-parity), and every command runs
  outside the checkout, so that ``rocke_py`` is the wheel's: the configs tree holds no package of
  its own, and its commands run the installed engines. The C engine is built from the wheel's
  sources into a cache of this module's own.

The wheel is built and installed once per module (per xdist worker), into pytest's tmp paths."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path, PurePosixPath

import pytest
from repo_copy import copy_repository

from rocke_py import cbuild as engine_build

#: The C engine's sources a wheel carries under rocke_py/_c/ (pyproject.toml's package-data).
C_SOURCES = ("src/*.c", "src/*.h", "include/*.h")
C_PACKAGE = "rocke_py._c"
#: What the installed gate runs: a config of each family (the whole gate is the gate's tests' job).
BASELINES = ("fwd/00-baseline", "dgrad/00-baseline", "wgrad/00-baseline")
PIP = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input"]


def build_wheel(src: Path, out: Path) -> Path:
    """``pip wheel`` of the tree at src, without the network (the build backend is the test
    environment's, as in tests/repository/test_ci_runners.py); the wheel's path."""
    cmd = [*PIP, "wheel", "-q", "--no-deps", "--no-build-isolation", "--no-index", "--no-cache-dir", "-w", str(out)]
    done = subprocess.run([*cmd, str(src)], cwd=out, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (wheel,) = out.glob("*.whl")
    return wheel


def wheel_packages(names: list[str]) -> set[str]:
    """The packages a wheel's file list ships: the directory of every file, dotted (everything
    under rocke_py/_c/ is the one package of the C sources); a top-level file is named as it is.
    The .dist-info directory is left out."""
    out = set()
    for name in names:
        path = PurePosixPath(name)
        if name.endswith("/") or path.parts[0].endswith(".dist-info"):
            continue
        if path.parts[:2] == ("rocke_py", "_c"):
            out.add(C_PACKAGE)
        else:
            out.add(".".join(path.parent.parts) if len(path.parts) > 1 else name)
    return out


def source_packages(root: Path) -> set[str]:
    """What the wheel must ship: rocke_py and each directory under it holding an __init__.py,
    and the C sources."""
    found = {".".join(init.parent.relative_to(root).parts) for init in (root / "rocke_py").rglob("__init__.py")}
    return found | {C_PACKAGE}


def package_drift(in_wheel: set[str], in_source: set[str]) -> list[str]:
    """How the wheel's packages differ from the tree's: [] when they are the same."""
    out = [f"missing from the wheel: {p}" for p in sorted(in_source - in_wheel)]
    return out + [f"in the wheel, not a package of rocke_py/: {p}" for p in sorted(in_wheel - in_source)]


def c_sources(c_root: Path) -> set[str]:
    return {p.relative_to(c_root).as_posix() for pattern in C_SOURCES for p in c_root.glob(pattern)}


@pytest.fixture(scope="module")
def src(tmp_path_factory) -> Path:
    """A copy of this working tree: the tree under test."""
    return copy_repository(tmp_path_factory.mktemp("tree") / "repo")


@pytest.fixture(scope="module")
def built(src, tmp_path_factory) -> tuple[Path, Path]:
    """The wheel built from the copy, and the copy."""
    return build_wheel(src, tmp_path_factory.mktemp("dist")), src


# ---- what the wheel holds


def test_the_wheel_holds_rocke_py_packages_and_the_c_sources(built):
    wheel, src = built
    names = zipfile.ZipFile(wheel).namelist()
    assert package_drift(wheel_packages(names), source_packages(src)) == []
    carried = {n.removeprefix("rocke_py/_c/") for n in names if n.startswith("rocke_py/_c/")}
    assert carried == c_sources(src / "rocke_c") and "include/rocke.h" in carried


def test_a_new_subpackage_is_shipped_and_a_forgotten_or_stray_one_is_caught(src, tmp_path):
    """A tree with a new subpackage (in no list), a package under tests/ and a .py file in
    rocke_c/tests/ (never shipped), and a directory under rocke_py/ without an __init__.py
    (shipped as a namespace package: the check names it)."""
    tree = tmp_path / "repo"
    tree.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(src / name, tree / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(src / "rocke_py", tree / "rocke_py", ignore=ignore)
    for part in ("src", "include", "tests"):
        shutil.copytree(src / "rocke_c" / part, tree / "rocke_c" / part, ignore=ignore)
    extra = {
        "rocke_py/newsub/__init__.py": '"""a subpackage no list names"""\n',
        "rocke_py/newsub/deeper/__init__.py": "",
        "rocke_py/scratch/notes.py": "# a directory without an __init__.py\n",
        "tests/__init__.py": "",
        "rocke_c/tests/helper.py": "",
    }
    for rel, text in extra.items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(text)
    (tmp_path / "dist").mkdir()
    names = zipfile.ZipFile(build_wheel(tree, tmp_path / "dist")).namelist()
    shipped, expected = wheel_packages(names), source_packages(tree)
    assert {"rocke_py.newsub", "rocke_py.newsub.deeper"} <= shipped & expected
    assert not [n for n in names if n.startswith(("tests/", "rocke_py/_c/tests/"))]
    assert package_drift(shipped, expected) == ["in the wheel, not a package of rocke_py/: rocke_py.scratch"]
    forgotten = shipped - {"rocke_py.scratch", "rocke_py.newsub.deeper"}  # a wheel that left one out
    assert package_drift(forgotten, expected) == ["missing from the wheel: rocke_py.newsub.deeper"]


# ---- the installed wheel's commands


def purelib(python: Path) -> Path:
    done = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(done.stdout.strip())


@pytest.fixture(scope="module")
def installed(built, tmp_path_factory) -> Path:
    """A venv of its own with the wheel installed (pip runs in the venv's interpreter before the
    .pth exists, so that it sees no other rocke-parity and leaves the test environment alone);
    the venv's directory."""
    wheel, _ = built
    venv = tmp_path_factory.mktemp("wheel-venv") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    install = [*PIP, "--python", str(python), "install", "-q", "--no-deps", "--no-index", "--no-cache-dir"]
    done = subprocess.run([*install, str(wheel)], cwd=venv, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (purelib(python) / "_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv


def scrubbed_env(venv: Path, cache: Path) -> dict[str, str]:
    """Nothing that could put another rocke_py first: no PYTHONPATH, no delegation marker."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "ROCKE_PARITY_TREE")}
    env.update(ROCKE_PARITY_CACHE=str(cache), VIRTUAL_ENV=str(venv))
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


def test_the_installed_wheel_runs_every_console_script(src, installed, tmp_path):
    project = tomllib.loads((src / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    configs = tmp_path / "configs"  # a tree of configs only: the installed package's engines gate it
    shutil.copytree(src / "parity_configs", configs / "parity_configs")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    cache = tmp_path / "cache"
    env = scrubbed_env(installed, cache)
    site = purelib(installed / "bin" / "python")

    probe = "import rocke_py, rocke_py.cbuild as b; print(rocke_py.__file__); print(b.package_c_root())"
    done = subprocess.run([str(installed / "bin" / "python"), "-c", probe], cwd=elsewhere, env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    package_file, c_root = map(Path, done.stdout.split())
    assert package_file == site / "rocke_py" / "__init__.py" and c_root == site / "rocke_py" / "_c"

    # the tree's C engine and bridge, as the wheel must carry them: the same build id
    c_id = engine_build.build_id(engine_build.fingerprint(engine_build.read_sources(src / "rocke_c")))
    # (script, arguments, working directory, exit status, what the output must hold)
    runs = [
        ("rocke-parity", ["--version"], configs, 0,
         [f"rocke-parity {project['version']} (py engine ", f"c engine {c_id})", f"the engines are those of {site}"]),
        ("rocke-parity", ["gate", "--root", str(configs), "-j", "2", "--config", *BASELINES], elsewhere, 0,
         ["gate PASSED (PARTIAL RUN): ", f"{len(BASELINES)} of "]),
        ("rocke-parity", ["numerics", "--small", "-j", "1", "fwd/00-baseline"], configs, 0,
         ["numerics OK: 1 of 1 config(s) pass"]),
        ("rocke-parity", ["fuzz", "--seed", "1", "--budget", "30", "--cases", "12", "-j", "1", "--max-reductions", "0"],
         configs, 0, ["12 case(s) in ", "; 0 failing case(s)"]),
        ("parity-diff", ["fwd/00-baseline", "--mode", "spec"], configs, 0, ["status: IDENTICAL"]),
        ("rocke-emit", ["parity_configs/fwd/00-baseline.toml", "--mode", "spec"], configs, 0, ["rocke.spec v1\n"]),
        ("rocke-emit", ["parity_configs/fwd/101-tile-divisibility.toml"], configs, 1,
         ["REJECTED FWD_TILE_DIVISIBILITY"]),
    ]  # fmt: skip
    assert {script for script, *_ in runs} == set(project["scripts"])  # a new console script needs a run here
    for script, args, cwd, status, expected in runs:
        cmd = [str(installed / "bin" / script), *args]
        done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
        output = done.stdout + done.stderr
        assert done.returncode == status, f"{' '.join([script, *args])}: exit {done.returncode}\n{output[-3000:]}"
        for text in expected:
            assert text in output, f"{' '.join([script, *args])}: no {text!r} in\n{output[-3000:]}"
        assert "Traceback" not in output, output[-3000:]
    assert any(p.is_file() for p in cache.rglob("*")), "the C engine was not built into the test's own cache"
