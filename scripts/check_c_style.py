"""Check the C sources against the project's C style (docs/c-style.md); exit 1 with one line per violation.

    python scripts/check_c_style.py [FILE ...]      default: every .c and .h under rocke_c/

The style is checked, not reformatted: the rules are the mechanical ones (layout of lines); the
rest of docs/c-style.md (names, one arena per call, named temporaries) is for review.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_COLUMNS = 120
# the tokens that can hold "//" without being a line comment, and the line comment itself
_TOKENS = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|/\*.*?\*/|//', re.S)


def check_text(name: str, text: str) -> list[str]:
    """The violations of one file's text, as ``name:line: what``."""
    out: list[str] = []
    if "\r" in text:
        out.append(f"{name}: carriage return (line ends are LF)")
    if text and not text.endswith("\n"):
        out.append(f"{name}: no newline at the end of the file")
    if text.endswith("\n\n"):
        out.append(f"{name}: blank lines at the end of the file")
    for n, line in enumerate(text.split("\n"), 1):
        if "\t" in line:
            out.append(f"{name}:{n}: tab (indent with 4 spaces)")
        if line != line.rstrip():
            out.append(f"{name}:{n}: trailing white space")
        if len(line) > MAX_COLUMNS:
            out.append(f"{name}:{n}: {len(line)} columns (at most {MAX_COLUMNS})")
    for m in _TOKENS.finditer(text):
        if m.group(0) == "//":
            out.append(f"{name}:{text.count(chr(10), 0, m.start()) + 1}: // comment (write /* ... */)")
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
