"""clang-format owns the C layout (.clang-format): the pinned clang-format finds the sources
formatted, exactly as .ci/run checks them, and fails on a file with a layout fault."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from layout import REPO

PINNED = re.search(r'"clang-format==([\d.]+)"', (REPO / "pyproject.toml").read_text()).group(1)


def clang_format() -> str:
    """The clang-format of this environment's venv (the test extras'), else the PATH's."""
    beside = Path(sys.executable).parent / "clang-format"
    found = str(beside) if beside.exists() else shutil.which("clang-format")
    if found is None:
        pytest.skip("clang-format is not installed (pip install -e '.[test]')")
    return found


def dry_run(*files: Path, cwd: Path = REPO) -> subprocess.CompletedProcess:
    """What .ci/run runs on rocke_c/: report, do not rewrite, and fail on any change."""
    return subprocess.run(
        [clang_format(), "--dry-run", "-Werror", *map(str, files)], cwd=cwd, capture_output=True, text=True
    )


def sources() -> list[Path]:
    return sorted(p for p in (REPO / "rocke_c").rglob("*") if p.suffix in (".c", ".h"))


def test_the_pinned_version_runs():
    got = subprocess.run([clang_format(), "--version"], capture_output=True, text=True)
    assert f"clang-format version {PINNED}" in got.stdout, got.stdout
    pre_commit = (REPO / ".pre-commit-config.yaml").read_text()
    hook = pre_commit[pre_commit.index("- id: clang-format") :]
    assert "entry: clang-format -i" in hook and "language: system" in hook  # the environment's, pinned
    workflow = (REPO / ".github" / "workflows" / "parity.yml").read_text()
    assert "clang-format --dry-run -Werror" in workflow  # the lint job checks as .ci/run does


def test_the_c_sources_are_formatted():
    files = sources()
    assert len(files) > 40
    got = dry_run(*files)
    assert got.returncode == 0, got.stderr[-4000:]


# each a fault the old line checks of scripts/check_c_style.py caught, and two they did not
FAULTS = {
    "space before a semicolon": lambda t: t.replace("b->len = 0;", "b->len = 0 ;", 1),
    "a badly indented line": lambda t: t.replace("\n    b->len = 0;", "\n      b->len = 0;", 1),
    "a tab indent": lambda t: t.replace("\n    b->len = 0;", "\n\tb->len = 0;", 1),
    "trailing white space": lambda t: t.replace("b->len = 0;", "b->len = 0;  ", 1),
    "a line past 120 columns": lambda t: t.replace("b->len = 0;", "b->len = 0" + " + 0" * 40 + ";", 1),
    "CRLF line ends": lambda t: t.replace("\n", "\r\n"),
    "no newline at the end": lambda t: t.rstrip("\n"),
    "blank lines at the end": lambda t: t + "\n\n",
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_layout_fault_fails_the_check(tmp_path, fault):
    source = REPO / "rocke_c" / "src" / "buf.c"
    text = source.read_text(encoding="utf-8")
    assert "\n    b->len = 0;\n" in text
    shutil.copy(REPO / ".clang-format", tmp_path / ".clang-format")  # the style is found beside the file
    good, bad = tmp_path / "good.c", tmp_path / "bad.c"
    good.write_text(text, encoding="utf-8", newline="")
    bad.write_text(FAULTS[fault](text), encoding="utf-8", newline="")
    assert bad.read_bytes() != good.read_bytes()
    assert dry_run(good, cwd=tmp_path).returncode == 0
    got = dry_run(bad, cwd=tmp_path)
    assert got.returncode != 0 and "bad.c" in got.stderr and "-Wclang-format-violations" in got.stderr
