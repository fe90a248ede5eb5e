"""What no config reaches in the build and lowering files of both engines, function by function,
each unreached function either explained or flagged (docs/coverage.md §7).

Used by engine_coverage.py. Two kinds of code are set aside from the "reached" figure and listed:

- guards: a failure raised or returned for malformed input that the engine's own stages never
  produce (`raise fail(...)`, `return fail(...)`, `return crash(...)`, the C engine's
  out-of-memory returns and the size test of its allocations). The builders emit verified
  kernels, so a config cannot reach them; the lowering's unit tests do, with hand-written
  kernels.
- constructs of the kernel IR (docs/ir.md) that the lowering implements but no builder emits
  today (EXPLAINED, by function name: the twins share their names).

What is neither is UNEXPLAINED: a branch a config should reach and none does."""

from __future__ import annotations

import ast
import re
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

#: Functions no config reaches, and why. Keys are function names, the same in both engines.
EXPLAINED = {
    "unroll_value": "the iteration value of an unrolled scf.for, which no builder emits",
    "fail": "the failure reporter: it runs only when a guard fires",
    "crash": "the internal-error reporter: it runs only when a guard fires",
    "rk_build_common_fail": "the failure reporter: it runs only when a guard fires",
    "lower_for_unrolled": "scf.for with unroll = true (docs/ir.md §4.6): the builders unroll K loops themselves",
    "const_operand": "the bounds of an unrolled scf.for, which no builder emits",
    "ll_get_int": "the bounds of an unrolled scf.for, which no builder emits",
    "lower_sched_barrier": "rocdl.sched_barrier (docs/ir.md): no builder schedules by hand today",
    "lower_s_waitcnt": "rocdl.s_waitcnt as an op: the builders wait through tile.sync and the async ops",
    "widen": "a concat of unequal halves: the builders concatenate equal vectors",
}


#: Lines no config reaches inside functions that are otherwise reached: (function, a pattern of
#: the line's text) -> why. The kernel IR allows more than the builders use.
EXPLAINED_LINES = {
    ("attributes", r"scheduler_strategy|strategy|agpr_alloc|SCHED"): "kernel attrs no builder sets",
    ("ll_attributes", r"scheduler_strategy|strategy|agpr_alloc|SCHED"): "kernel attrs no builder sets",
    ("attributes", r"max_workgroup_size"): "every builder sets max_workgroup_size (the block size)",
    ("pair_attr", r"."): "waves_per_eu as a [lo, hi] pair: the builders give one integer",
    ("signature", r"constant|noalias|nocapture|nonnull|align|dereferenceable|readonly|writeonly|addrspace\(4\)"): (
        "param attrs the builders always or never set"
    ),
    ("ll_signature", r"constant|noalias|nocapture|nonnull|align|dereferenceable|readonly|writeonly|addrspace"): (
        "param attrs the builders always or never set"
    ),
    ("as_vector", r"."): "a concat with a scalar operand: the builders concatenate vectors",
    ("lower_concat", r"widen|na < width|nb < width"): "a concat of unequal vectors: no atom needs 3 transpose reads",
    ("lower_bitcast", r"."): "arith.bitcast: no builder emits it",
    ("lower_for", r"unroll|^\s*return"): "scf.for with unroll = true, which no builder emits",
    ("lower_sync_lds_only", r"WAIT_SPLIT|wait\.dscnt|dscnt"): (
        "an LDS-only sync on gfx1250: only the async pipeline syncs LDS alone, and WMMA archs refuse async_dma"
    ),
    ("decl_text", r"generation >= 2|row\[3\]|llvm23"): "no declaration row has a form of its own for the newest flavor",
    ("find_row", r"for \(i = 0"): "a key that is not in the table (its caller fails)",
    ("scalar_row", r"for \(i = 0"): "a type that is not in the table (its caller fails)",
    ("type_n", r"for \(i = 0|rk_strndup|!copy|ll_type\(lw, copy\)"): "a type not in the table (its caller fails)",
    ("ll_decl_row", r"for \(i = 0"): "a declaration that is not in the table (its caller fails)",
    ("buffer_width", r"for \(i = 0"): "an access width that is not in the table (its caller fails)",
    ("mask_text", r"indices\[i\] < 0|poison"): "a poison lane: only a concat of unequal vectors (widen) has one",
    ("f32_literal", r"0x1\.fffffep127|value == value"): "an f32 constant out of range or not finite (a guard)",
    ("vemit", r"default:|\$|!\*p|p--"): "format directives no line of the lowering uses",
    ("lower_op", r"."): "the slow dispatch: every op the builders emit has a direct handler",
    ("lower_region", r"handler is None|lower_op"): "the slow dispatch: every op the builders emit has a direct handler",
    ("lower", r"terminated|ret void|plan.size > 0|printed > 0|block.lines|markers|fences"): (
        "true of every builder kernel: it returns, uses LDS, declares intrinsics, fences its barriers"
    ),
    ("clamp_count", r"."): "a wait count below 0 or above the counter: the builders' waits are in range",
    (
        "ll_type",
        r"is_smem|IS_SMEM|addrspace\(3\)",
    ): "an LDS value is lowered through its pool offset, never by its type",
    ("find_alloc", r"return None|for a in allocs"): "an LDS value that no allocation defines (its caller fails)",
    ("f32_literal", r"OverflowError"): "an f32 constant out of range (a guard)",
    ("lower_binary", r"is None|lw.typed|lw.val"): "an operand used before its definition (a guard)",
    # The C engine's sides of the same facts: gcov counts every condition of a && / || chain,
    # where coverage.py counts the decision, so a C line can carry a side its twin line does not.
    (
        "scalar_row",
        r"ir\[n\] == '\\0'",
    ): "a type that is the start of a longer row's name: no scalar name prefixes another",
    (
        "type_n",
        r"ir\[n\] == '\\0'",
    ): "an empty element type, or one that starts a longer row: the builders' types are whole",
    ("find_alloc", r"for \(i = 0"): "an LDS value that no allocation defines (its caller fails)",
    ("f32_literal", r"rk_f32_literal\(value|repr"): "an f32 constant out of range (a guard)",
    ("ll_add_alloc", r"elem_bytes == 1"): "an LDS tile of 1-byte elements (i1): no builder stages predicates in LDS",
    ("scan_lds", r"exclusive &&"): "an exclusive attr that is not true: the builders set it only as true",
    ("ll_add_alloc", r"RK_LL_HUGE"): "an LDS allocation past RK_LL_HUGE bytes, a guard (plan_lds fails on it)",
    ("scan_lds", r"RK_OP_FOR && loop_end"): "an scf.for inside another: a builder's kernel has one loop level",
    ("plan_lds", r"p->exclusive|p\.exclusive"): (
        "an allocation made after an exclusive one: the exclusive one (the epilogue's staging) is made last"
    ),
    ("plan_lds", r"conflicts\[k - 1\]->offset > p->offset"): (
        "conflicts found out of offset order: a builder's allocations are placed at rising offsets"
    ),
    ("plan_lds", r"off \+ a\.size <= c\.offset|off \+ a->size <= c->offset|^\s*break|align_up\(c"): (
        "first fit into a gap below a live allocation: a builder's allocations are placed at rising "
        "offsets (the lowering's LDS tests place into gaps)"
    ),
    ("vemit", r"switch \(\*p\)"): "format directives no line of the lowering uses",
    ("define", r"suffix"): "the name suffix of an unrolled scf.for's copies, which no builder emits",
    ("is_int", r"a && a->kind"): "an integer attr that is missing or not an integer (its caller fails)",
    ("flag_set", r"a && a->kind"): "a flag attr set to false or to a non-bool: the builders set flags only as true",
    ("flag_cleared", r"a && a->kind"): "nocapture set on a param: no builder sets it (every pointer is nocapture)",
    ("lower", r"n_ids > 0|count_ops"): "a kernel without builder ids (one read from text): the IR-script tests",
    ("lower", r"signature\.len|attributes\.len|block->lines\.len"): (
        "true of every builder kernel: it has params and attributes, and no block is empty"
    ),
    ("ll_signature", r'"i64"'): "an i64 kernel param, or one of another type (a guard): the builders' scalars are i32",
    ("lower_constant", r'value->i != 0|"i64"'): (
        "an i1 true or an i64 constant: the builders make i1 false (dgrad's guard) and i32 constants"
    ),
    ("lower_smem_load", r"lds_v8_volatile"): "a scalar LDS load on an arch with volatile 8-wide LDS loads: none",
    ("lower_ds_read_tr16_b128", r'"f16", 3'): "a 3-letter element other than f16: transpose reads are of f16 or bf16",
    ("lower_mma", r"row->archs\[i\] &&"): "an MMA row without the kernel's arch (its caller fails)",
    ("lower_mma", r"lw->atom\.op_id &&|rk_atom_types"): (
        "a kernel with two MMA atoms, or an atom without types (a guard): a builder uses one atom"
    ),
    ("bare_name", r"."): "a kernel name with a character outside [A-Za-z0-9_]: the config's name rule refuses it",
    ("quotable", r"."): "a kernel name with a character outside [A-Za-z0-9_]: the config's name rule refuses it",
    ("block_decode", r"groups > 1 && count"): "count is NULL only after a failed param lookup (a guard)",
    ("failed", r"."): "the failure test: true only after a guard fired",
    ("pow2_align", r"rk_floormod\(b, align\)"): "a row that is not a whole number of accesses: every tile row is",
    ("build_common_param", r"for \(i = 0"): "a param the direction did not add (its caller fails)",
    (
        "mma_phase",
        r'kind\(kc, "mfma"\)',
    ): "compv3/compv4 on a WMMA arch: the validator allows WMMA the mem pipeline only",
    (
        "build_common_d_name",
        r"RK_FAMILY_FWD \?",
    ): "fwd's D name: only atomic split-K stores ask, and fwd has no split-K",
    (
        "epilogue_cshuffle",
        r"accs->n != wt->mfmas_m",
    ): "an accumulator list of the wrong length, after a failed step (a guard)",
    ("progressions", r"out\.items\[j\]\.(offset|count)"): (
        "a run with an earlier one's offset and stride but another count: an axis' records share one slice length"
    ),
    ("zero_untouched", r"n_sub_gemms == 0"): "a dgrad without sub-GEMMs: a problem with a positive output size has one",
    ("zero_untouched", r"rows\.n == 0"): "progressions' empty result after an allocation failed (C-only)",
    (
        "lower_kernel",
        r"quotable\(\*p\)",
    ): "a kernel name with a character outside [A-Za-z0-9_]: refused by the config's name rule",
    ("lower_kernel", r"lw\.block && !lw\.oom|lines\.failed|status != 0"): (
        "a lowering that failed or ran out of memory: C-only clean-up (rocke_c/tests/lower_oom.c reaches it)"
    ),
}


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


def c_functions(path: Path) -> list[tuple[int, int, str]]:
    """(first line, last line, name) of every function definition: a declarator line, a body
    from the next `{` at column 0 to the next `}` at column 0 (docs/c-style.md's layout)."""
    lines = path.read_text().splitlines()
    out = []
    i = 0
    while i < len(lines):
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
