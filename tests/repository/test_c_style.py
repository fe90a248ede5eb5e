"""scripts/check_c_style.py: the C sources follow docs/c-style.md, and the check can fail."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

from layout import PUBLIC_API, REPO

_SPEC = importlib.util.spec_from_file_location("check_c_style", REPO / "scripts" / "check_c_style.py")
assert _SPEC is not None and _SPEC.loader is not None
check_c_style = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(check_c_style)


def test_the_c_sources_follow_the_style():
    got = subprocess.run([sys.executable, str(REPO / "scripts" / "check_c_style.py")], capture_output=True, text=True)
    assert got.returncode == 0, got.stdout
    assert got.stdout.strip().endswith("0 violation(s)")


def test_each_rule_catches_its_fault():
    # the layout of code (tabs, trailing white space, line ends, the end of the file) is
    # clang-format's: tests/repository/test_c_format.py injects those faults
    bad = (
        "int a; // a line comment\n"
        'char *s = "http://not-a-comment"; /* nor // this */\n'
        "int b = 1; /* a comment clang-format does not rewrap" + " x" * 60 + " */\n"
        'char *t = "a\tb"; /* a tab in a literal */\n'
        "/* a comment\n * with\ta tab */\n"
    )
    got = check_c_style.check_text("x.c", bad)
    assert got == [
        "x.c:3: 175 columns (at most 120)",
        "x.c:1: // comment (write /* ... */)",
        "x.c:4: tab in a comment or literal (write spaces, or \\t in a literal)",
        "x.c:6: tab in a comment or literal (write spaces, or \\t in a literal)",
    ]  # "//" inside a string or a block comment (line 2) is not one
    assert check_c_style.check_text("ok.c", "/* fine */\nint x; /* // */\n") == []
    assert check_c_style.check_text("ok.c", "\tint x;  \r\n\n") == []  # clang-format's to report


def test_each_naming_rule_catches_its_fault():
    public = {"rocke_emit"}
    bad = (
        "static int rk_spec_get_str(int x) { return x; }\n"  # a static with the rk_ prefix
        "int get_int(int x) { return x; }\n"  # used across files without rk_
        "int rk_validate_validate(int x);\n"  # stutter (a declaration counts too)
        "int rocke_private(void) { return 0; }\n"  # rocke_ but not in rocke.h
        "int rocke_emit(void) { return 0; }\n"  # the public API: fine
        "static int get_str(int x) { return x; }\n"  # fine
        "int rk_get(int x) { return x; }\n"  # fine
        'static const char *s = "rk_a_a(";\n'  # inside a string: not a function
        "/* int bad_name(void) { } */\n"  # inside a comment: not a function
    )
    got = check_c_style.check_text("rocke_c/src/x.c", bad, public)
    assert got == [
        "rocke_c/src/x.c:1: static rk_spec_get_str starts with rk_ (a static carries its Python twin's name)",
        "rocke_c/src/x.c:2: get_int is used across files but does not start with rk_",
        "rocke_c/src/x.c:3: rk_validate_validate repeats its module word (rk_<x>_<x>)",
        "rocke_c/src/x.c:4: rocke_private is not declared in rocke.h (rocke_ is the public API's prefix)",
    ]
    # a static inline in a header is used across files: it carries rk_
    assert check_c_style.check_text("rocke_c/src/x.h", "static inline int put(int x) { return x; }\n", public) == [
        "rocke_c/src/x.h:1: put is used across files but does not start with rk_"
    ]
    assert check_c_style.check_text("rocke_c/src/y.c", "int rk_build_build_kernel(void) { return 0; }\n", public) == [
        "rocke_c/src/y.c:1: rk_build_build_kernel repeats its module word (rk_<x>_<x>)"
    ]
    # an X-macro expanded at file scope is no function, and the declaration after it is checked
    xmacro = "#define RK_ROWS(X) X(a) X(b)\nRK_ROWS(RK_ROW_DECL)\nint get_int(int x);\n"
    assert check_c_style.check_text("rocke_c/src/x.h", xmacro, public) == [
        "rocke_c/src/x.h:3: get_int is used across files but does not start with rk_"
    ]
    # the naming rules are for the engine's sources; the tests' own helpers are free
    assert check_c_style.check_text("rocke_c/tests/t.c", "static int rk_x_x(void) { return 0; }\n", public) == []
    assert check_c_style.public_api() == PUBLIC_API
