"""scripts/check_c_style.py: the C sources follow docs/c-style.md, and the check can fail."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

from layout import REPO

_SPEC = importlib.util.spec_from_file_location("check_c_style", REPO / "scripts" / "check_c_style.py")
assert _SPEC is not None and _SPEC.loader is not None
check_c_style = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(check_c_style)


def test_the_c_sources_follow_the_style():
    got = subprocess.run([sys.executable, str(REPO / "scripts" / "check_c_style.py")], capture_output=True, text=True)
    assert got.returncode == 0, got.stdout
    assert got.stdout.strip().endswith("0 violation(s)")


def test_each_rule_catches_its_fault():
    bad = (
        "int a; // a line comment\n"
        '\tchar *s = "http://not-a-comment"; /* nor // this */ \n'
        "int b = 1;" + " " * 120 + "\r\n"
    )
    got = check_c_style.check_text("x.c", bad)
    assert "x.c:1: // comment (write /* ... */)" in got
    assert "x.c:2: tab (indent with 4 spaces)" in got and "x.c:2: trailing white space" in got
    assert any("x.c:3:" in g and "columns" in g for g in got)
    assert "x.c: carriage return (line ends are LF)" in got
    assert not any(":2: // comment" in g for g in got)  # "//" inside a string or a block comment is not one
    assert check_c_style.check_text("y.c", "int x;") == ["y.c: no newline at the end of the file"]
    assert check_c_style.check_text("z.c", "int x;\n\n") == ["z.c: blank lines at the end of the file"]
    assert check_c_style.check_text("ok.c", "/* fine */\nint x; /* // */\n") == []
