"""Check the C sources against the project's C style (docs/c-style.md); exit 1 with one line per violation.

    python scripts/check_c_style.py [FILE ...]      default: every .c and .h under rocke_c/

clang-format owns the layout (.clang-format; .ci/run runs `clang-format --dry-run -Werror`):
indents, braces, white space, line ends. This script checks what a formatter cannot: the names of
functions in rocke_c/src, /* */ comments, and the text clang-format leaves as it is (comments,
which it does not rewrap, and literals: no tab in them, no line past the column limit). The rest
of docs/c-style.md (one arena per call, named temporaries, a static keeping its Python twin's
name) is for review.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_COLUMNS = 120
# the tokens that can hold "//" without being a line comment, and the line comment itself
_TOKENS = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|/\*.*?\*/|//', re.S)


_PUBLIC_HEADER = ROOT / "rocke_c" / "include" / "rocke.h"
# a name that repeats its first word(s) right after rk_: rk_validate_validate, rk_build_build_kernel
_STUTTER = re.compile(r"rk_([a-z0-9]+(?:_[a-z0-9]+)*)_\1(?:_|$)")


def public_api() -> set[str]:
    """The functions rocke.h declares (the ABI cffi binds)."""
    return set(re.findall(r"\b(rocke_\w+)\s*\(", _PUBLIC_HEADER.read_text(encoding="utf-8")))


def blank_code(text: str) -> str:
    """The text with comments, string and character literals and preprocessor lines blanked
    (the same length, newlines kept), so that only code is left to scan."""

    def blank(m: re.Match[str]) -> str:
        return re.sub(r"[^\n]", " ", m.group(0))

    code = re.sub(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|/\*.*?\*/|//[^\n]*', blank, text, flags=re.S)
    return re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", blank, code, flags=re.M)


def functions(text: str) -> list[tuple[str, int, bool, bool]]:
    """(name, line, static, definition) of each function declared or defined at file scope."""
    code = blank_code(text)
    out: list[tuple[str, int, bool, bool]] = []
    depth, stmt, i = 0, 0, 0
    name_at = re.compile(r"[A-Za-z_]\w*(?=\s*\()")
    while i < len(code):
        c = code[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            stmt = i + 1
        elif c == ";" and depth == 0:
            stmt = i + 1
        elif depth == 0 and (c.isalpha() or c == "_") and (i == 0 or not (code[i - 1].isalnum() or code[i - 1] == "_")):
            m = name_at.match(code, i)
            prefix = code[stmt:i]
            if m and not re.search(r"\btypedef\b|[=(]", prefix):
                close, level = m.end(), 0
                while close < len(code):
                    level += {"(": 1, ")": -1}.get(code[close], 0)
                    if level == 0 and code[close] == ")":
                        break
                    close += 1
                if m.group(0).isupper():  # a macro expanded at file scope (an X-macro's rows): no function
                    stmt = i = close + 1
                    continue
                rest = code[close + 1 :].lstrip()
                static = re.search(r"\bstatic\b", prefix) is not None
                out.append((m.group(0), code.count("\n", 0, i) + 1, static, rest.startswith("{")))
                i = close + 1
                continue
            if m is None:  # skip the whole word
                while i < len(code) and (code[i].isalnum() or code[i] == "_"):
                    i += 1
                continue
        i += 1
    return out


def check_names(name: str, text: str, public: set[str]) -> list[str]:
    """The naming rules (docs/c-style.md) for a file of rocke_c/src."""
    out: list[str] = []
    header = name.endswith(".h")
    for func, line, static, definition in functions(text):
        if _STUTTER.match(func):
            out.append(f"{name}:{line}: {func} repeats its module word (rk_<x>_<x>)")
        if static and not header and func.startswith("rk_"):
            out.append(f"{name}:{line}: static {func} starts with rk_ (a static carries its Python twin's name)")
        if (definition or header) and (not static or header):
            if func.startswith("rocke_") and func not in public:
                out.append(f"{name}:{line}: {func} is not declared in rocke.h (rocke_ is the public API's prefix)")
            elif not func.startswith(("rk_", "rocke_")):
                out.append(f"{name}:{line}: {func} is used across files but does not start with rk_")
    return out


def check_text(name: str, text: str, public: set[str] | None = None) -> list[str]:
    """The violations of one file's text, as ``name:line: what``."""
    out: list[str] = []
    for n, line in enumerate(text.split("\n"), 1):
        if len(line) > MAX_COLUMNS:  # a comment clang-format does not rewrap, a literal it cannot break
            out.append(f"{name}:{n}: {len(line)} columns (at most {MAX_COLUMNS})")
    for m in _TOKENS.finditer(text):
        if m.group(0) == "//":
            out.append(f"{name}:{text.count(chr(10), 0, m.start()) + 1}: // comment (write /* ... */)")
        elif "\t" in m.group(0):  # clang-format replaces the tabs of code, not those of comments and literals
            at = text.count("\n", 0, m.start() + m.group(0).index("\t")) + 1
            out.append(f"{name}:{at}: tab in a comment or literal (write spaces, or \\t in a literal)")
    if name.startswith("rocke_c/src/"):
        out += check_names(name, text, public_api() if public is None else public)
    return out


def main(argv: list[str]) -> int:
    files = [Path(a) for a in argv] or sorted(p for p in (ROOT / "rocke_c").rglob("*") if p.suffix in (".c", ".h"))
    problems: list[str] = []
    for f in files:
        try:
            name = f.resolve().relative_to(ROOT).as_posix()
        except ValueError:
            name = str(f)
        problems += check_text(name, f.read_text(encoding="utf-8"))
    for p in problems:
        print(p)
    print(f"c style: {len(files)} file(s), {len(problems)} violation(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
