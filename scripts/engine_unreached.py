"""What no config reaches in the build and lowering files of both engines, function by function,
each unreached function either explained or flagged (docs/coverage.md §7).

Used by engine_coverage.py. Two kinds of code are set aside from the "reached" figure and listed:

- guards: a failure raised or returned for malformed input that the engine's own stages never
  produce (`raise fail(...)`, `return fail(...)`, `return crash(...)`, the C engine's
  out-of-memory returns and the size test of its allocations). The builders emit verified
  kernels, so a config cannot reach them; the lowering's unit tests do, with hand-written
  kernels.
- constructs of the kernel IR (docs/ir.md) that the lowering implements but no builder emits
  today (the [functions] of engine_unreached.toml, by function name: the twins share their
  names), and lines the kernel IR allows that no builder uses (its [[lines]]).

What is neither is UNEXPLAINED: a branch a config should reach and none does."""

from __future__ import annotations

import ast
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

#: The build and lowering files, by stem (the twins share it).
FILES = (
    "build",
    "build_common",
    "build_dgrad",
    "build_fwd",
    "build_wgrad",
    "lower_ll",
    "lower_ll_tables",
    "lower_ll_state",
)

PY_GUARD = re.compile(r"^\s*raise (\w+\.)?(fail|EngineFailure)\(")
#: A C allocation: its size's `n > 0 ? n : 1` and its out-of-memory test are guards too.
C_ALLOC = re.compile(r"rk_alloc\(|rk_arena_\w+\(|rk_map_put\(|rk_names_init\(|rk_buf_room\(|\? \w+ : 1\)")
#: The C form of Python's raise: a test for an earlier failure or a NULL result (`if (failed(kc))`,
#: `if (!loop)`, `x ? f(x) : NULL`, `items && i < n`) whose other side only returns early.
C_PROPAGATE = re.compile(
    r"if \((!\w|!\(|failed\(|\w+->failed|\w+\.failed|\w+ == NULL)|\? [^:;]+ : ((NULL|0)\b|\"\")|\? NULL :|\? 0 : -1"
    r"|\.items \?|\.items &&"
    r"|\b(h|elem|bytes|names|args\.items|out\.items) \?"
)
C_EARLY_RETURN = re.compile(r"^\s*(return( \w+)?;|out\.n = 0;|plan\.n_\w+ = .*;|\}?)\s*$")
C_GUARD = re.compile(
    r"^\s*((return\s+)?(fail|crash|rk_\w*fail\w*)\(|return -1;|return NULL;|goto (oom|done|fail);"
    r"|lw->oom = 1;|status = -1;)"
)

#: What is set aside and why, a table of data (engine_unreached.toml beside this script):
#: functions no config reaches, keyed by the name the twins share, and lines no config reaches
#: inside reached functions, keyed by (function, a pattern of the line's text).
TABLE = tomllib.loads((Path(__file__).with_name("engine_unreached.toml")).read_text(encoding="utf-8"))
EXPLAINED: dict[str, str] = TABLE["functions"]
EXPLAINED_LINES: dict[tuple[str, str], str] = {(e["function"], e["pattern"]): e["why"] for e in TABLE["lines"]}


def twin_name(fn: str) -> str:
    """The function's name without the C engine's `rk_` prefix: the name its twin has."""
    return fn[3:] if fn.startswith("rk_") else fn


def is_explained(fn: str) -> bool:
    return fn in EXPLAINED or twin_name(fn) in EXPLAINED


def explained_line(fn: str, text: str) -> bool:
    return line_reason(fn, text) is not None


def line_reason(fn: str, text: str) -> str | None:
    """Why `text`, a line of function `fn`, is left unreached (None: no entry says)."""
    for (f, pattern), why in EXPLAINED_LINES.items():
        if f == twin_name(fn) and re.search(pattern, text):
            return why
    return None


def reason(fn: str, *texts: str) -> str | None:
    """The first explanation for a line of fn: the function's own, else the first of the
    texts (the line, the statement that controls it) an EXPLAINED_LINES entry matches."""
    if is_explained(fn):
        return EXPLAINED.get(fn) or EXPLAINED[twin_name(fn)]
    for text in texts:
        why = line_reason(fn, text)
        if why is not None:
            return why
    return None


@dataclass
class FileReach:
    name: str
    lines: int = 0
    lines_reached: int = 0
    branches: int = 0
    branches_reached: int = 0
    guard_lines: int = 0
    explained: dict[str, int] = field(default_factory=dict)  # function -> unreached lines
    reasons: dict[str, int] = field(default_factory=dict)  # why -> lines and branches it sets aside
    unexplained: dict[str, list[int]] = field(default_factory=dict)  # function -> unreached line numbers

    def percent(self) -> tuple[float, float]:
        lines = 100.0 * self.lines_reached / self.lines if self.lines else 100.0
        branches = 100.0 * self.branches_reached / self.branches if self.branches else 100.0
        return lines, branches


def py_functions(path: Path) -> list[tuple[int, int, str]]:
    """(first line, last line, name) of every function, innermost last."""
    tree = ast.parse(path.read_text())
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append((node.lineno, node.end_lineno or node.lineno, node.name))
    return sorted(out)


C_FUNC = re.compile(r"^(?:static\s+)?(?:inline\s+)?[A-Za-z_][\w\s\*]*?\b(\w+)\s*\([^;]*$")
#: A function whose declarator and body share one line: `static int f(int x) { return x; }`.
C_ONE_LINE_FUNC = re.compile(r"^(?:static\s+)?(?:inline\s+)?[A-Za-z_][\w\s\*]*?\b(\w+)\s*\([^;{]*\)\s*\{.*\}\s*$")


def c_functions(path: Path) -> list[tuple[int, int, str]]:
    """(first line, last line, name) of every function definition: a declarator line, a body
    from the next `{` at column 0 to the next `}` at column 0 (docs/c-style.md's layout), or
    a function written on one line."""
    lines = path.read_text().splitlines()
    out = []
    i = 0
    while i < len(lines):
        one_line = C_ONE_LINE_FUNC.match(lines[i])
        if one_line and not lines[i].startswith((" ", "\t", "#", "/", "}")):
            out.append((i + 1, i + 1, one_line.group(1)))
            i += 1
            continue
        m = C_FUNC.match(lines[i])
        if m and not lines[i].startswith((" ", "\t", "#", "/", "}")):
            j = i
            while j < len(lines) and lines[j] != "{" and not lines[j].endswith(";"):
                j += 1
            if j < len(lines) and lines[j] == "{":
                k = j
                while k < len(lines) and lines[k] != "}":
                    k += 1
                out.append((i + 1, k + 1, m.group(1)))
                i = k
        i += 1
    return out


def function_at(funcs: list[tuple[int, int, str]], line: int) -> str:
    best = "(module)"
    for first, last, name in funcs:
        if first <= line <= last:
            best = name  # sorted by first line: the innermost enclosing function wins
    return best


def next_statement(text: list[str], line: int) -> str:
    """The first statement after the condition that starts on `line` (1-based): the
    condition's continuation lines, blank lines, braces and comments skipped."""
    k = line - 1
    depth = text[k].count("(") - text[k].count(")")
    while k < min(line + 4, len(text) - 1) and (depth > 0 or not text[k].rstrip().endswith((";", "{", ")", ":"))):
        k += 1  # a condition that runs over several lines: to its closing parenthesis
        depth += text[k].count("(") - text[k].count(")")
    for j in range(k + 1, min(k + 5, len(text))):
        s = text[j].strip()
        if s and s not in ("{", "}") and not s.startswith(("/*", "*", "#")):
            return text[j]
    return ""


def early_return(text: list[str], line: int) -> bool:
    """A C line that only returns early, in the block of a failure or NULL test above it."""
    if not C_EARLY_RETURN.match(text[line - 1]):
        return False
    for k in range(line - 2, max(-1, line - 5), -1):
        if C_PROPAGATE.search(text[k]):
            return True
        if not C_EARLY_RETURN.match(text[k]) and text[k].strip() not in ("{", ""):
            return False
    return False


def guard_continuation(text: list[str], line: int, guard: re.Pattern) -> bool:
    """A line that continues a guard's statement (`fail(lw, "...",` then its arguments)."""
    depth = 0
    for k in range(line - 2, max(-1, line - 5), -1):
        if text[k].rstrip().endswith((";", "{", "}")):
            return False
        depth += text[k].count("(") - text[k].count(")")
        if guard.match(text[k]):
            return depth > 0
    return False


def after_guard(text: list[str], line: int) -> bool:
    """A C line after a guard in the same block (`fail(...);` then `return;` or a fallback
    value): it runs only once the guard has fired."""
    for k in range(line - 2, max(-1, line - 5), -1):
        here = text[k].strip()
        if here.endswith("{") or here.startswith("}"):
            return False
        if C_GUARD.match(text[k]):
            return True
    return False


def indent(text: str) -> int:
    return len(text) - len(text.lstrip())


def controlling_line(text: list[str], line: int) -> str:
    """The statement that controls `line` (1-based): the nearest line above it that is less
    indented (an if, a loop, a case, or the line a continuation belongs to)."""
    depth = indent(text[line - 1])
    for k in range(line - 2, max(-1, line - 40), -1):
        here = text[k].strip()
        if here and not here.startswith(("}", "/*", "*", "#")) and indent(text[k]) < depth:
            return text[k]
    return ""


def classify(reach: FileReach, funcs, text: list[str], guard: re.Pattern, missing_lines, missing_branch_lines):
    """Fills reach.explained / reach.unexplained from the unreached lines and the lines with an
    untaken branch; returns the number of lines and branches set aside (guards, explained)."""
    aside_lines = 0
    for line in sorted(set(missing_lines)):
        here = text[line - 1]
        c_guard = guard is C_GUARD and (early_return(text, line) or after_guard(text, line))
        if guard.match(here) or guard_continuation(text, line, guard) or c_guard:
            reach.guard_lines += 1
            aside_lines += 1
            continue
        fn = function_at(funcs, line)
        why = reason(fn, here, controlling_line(text, line))
        if why is not None:
            reach.explained[fn] = reach.explained.get(fn, 0) + 1
            reach.reasons[why] = reach.reasons.get(why, 0) + 1
            aside_lines += 1
        else:
            reach.unexplained.setdefault(fn, []).append(line)
    aside_branches = 0
    for line, untaken in missing_branch_lines:
        here = text[line - 1]
        fn = function_at(funcs, line)
        allocation = guard is C_GUARD and (C_ALLOC.search(here) or C_PROPAGATE.search(here))
        why = reason(fn, here)
        if guard.search(here) or guard.match(next_statement(text, line)) or allocation:
            aside_branches += untaken
        elif why is not None:
            aside_branches += untaken
            reach.reasons[why] = reach.reasons.get(why, 0) + untaken
        else:
            reach.unexplained.setdefault(fn, []).append(line)
    return aside_lines, aside_branches


def python_reach(report: dict, engine_dir: Path) -> list[FileReach]:
    """From coverage.py's JSON report of the Python engine."""
    out = []
    for stem in FILES:
        path = engine_dir / f"{stem}.py"
        entry = next((e for n, e in report["files"].items() if Path(n).name == path.name), None)
        if entry is None:
            continue
        s = entry["summary"]
        text = path.read_text().splitlines()
        reach = FileReach(path.name, s["num_statements"], s["covered_lines"], s.get("num_branches", 0))
        reach.branches_reached = s.get("covered_branches", 0)
        untaken: dict[int, int] = {}
        for src, _ in entry.get("missing_branches", []):
            untaken[src] = untaken.get(src, 0) + 1
        # a branch into a guard line: its source is judged by the guard it leads to
        guard_targets = {
            src for src, dst in entry.get("missing_branches", []) if dst > 0 and PY_GUARD.match(text[dst - 1])
        }
        lines_aside, branches_aside = classify(
            reach,
            py_functions(path),
            text,
            PY_GUARD,
            entry["missing_lines"],
            [(line, n) for line, n in untaken.items() if line not in guard_targets],
        )
        branches_aside += sum(untaken[line] for line in guard_targets)
        reach.lines -= lines_aside
        reach.branches -= branches_aside
        out.append(reach)
    return out


def c_reach(report: dict, src_dir: Path) -> list[FileReach]:
    """From gcovr's full JSON report of the C engine."""
    out = []
    for stem in FILES:
        path = src_dir / f"{stem}.c"
        entry = next((f for f in report["files"] if Path(f["file"]).name == path.name), None)
        if entry is None:
            continue
        text = path.read_text().splitlines()
        reach = FileReach(path.name)
        counts: dict[int, int] = {}  # line -> its highest count (gcovr may list a line twice)
        branches_of: dict[int, list[dict]] = {}
        for ln in entry["lines"]:
            number = ln["line_number"]
            branches_of.setdefault(number, []).extend(ln.get("branches", []))
            if not ln.get("gcovr/noncode"):
                counts[number] = max(counts.get(number, 0), ln["count"])
        reach.lines = len(counts)
        reach.lines_reached = sum(1 for c in counts.values() if c > 0)
        partial = []
        for number, branches in branches_of.items():
            reach.branches += len(branches)
            taken = sum(1 for b in branches if b["count"] > 0)
            reach.branches_reached += taken
            if taken < len(branches):
                partial.append((number, len(branches) - taken))
        missing = [n for n, c in counts.items() if c == 0]
        lines_aside, branches_aside = classify(reach, c_functions(path), text, C_GUARD, missing, partial)
        reach.lines -= lines_aside
        reach.branches -= branches_aside
        out.append(reach)
    return out


def report_lines(engine: str, files: list[FileReach], why: bool = False) -> list[str]:
    out = []
    for r in files:
        lines, branches = r.percent()
        explained = ", ".join(f"{fn} ({n})" for fn, n in sorted(r.explained.items()))
        out.append(
            f"{engine} {r.name:20s} reached: lines {lines:5.1f}%  branches {branches:5.1f}%  "
            f"(set aside: {r.guard_lines} guard line(s){'; ' + explained if explained else ''})"
        )
        if why:
            for text, n in sorted(r.reasons.items(), key=lambda kv: -kv[1]):
                out.append(f"    {n:3d} set aside: {text}")
        for fn, where in sorted(r.unexplained.items()):
            shown = ", ".join(str(n) for n in sorted(set(where))[:8])
            out.append(f"    UNEXPLAINED {fn}: line(s) {shown}{' ...' if len(set(where)) > 8 else ''}")
    return out
