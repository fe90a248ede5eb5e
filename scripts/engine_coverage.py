"""Which lines and branches of each engine the parity configs reach, twin file beside twin file.

    python scripts/engine_coverage.py [--json FILE] [FILE ...]

Every input (default: every parity config and every bad config of tests/data/bad_configs) goes
through both engines in every mode and flavor: the Python engine under coverage.py (branch
coverage, rocke_py/engine only), the C engine as an `emit_driver` built with gcc's --coverage
in a temporary CMake build, read back with gcovr (rocke_c/src only). The table pairs the twins
by file name (rocke_py/engine/spec.py with rocke_c/src/spec.c) and lists the files without a
twin after them. The numbers are the inputs' reach, not a verdict; the C engine's own unit
tests (ctest) are not run, so the C numbers are what the configs alone reach."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from rocke_py.facts import FLAVORS, MODES

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import engine_unreached  # noqa: E402  (the script's sibling, not a package)

PY_DIR = ROOT / "rocke_py" / "engine"
C_DIR = ROOT / "rocke_c" / "src"


def default_inputs() -> list[Path]:
    configs = sorted((ROOT / "parity_configs").glob("*/*.toml"))
    bad = sorted(p for p in (ROOT / "tests" / "data" / "bad_configs").iterdir() if p.is_file())
    return configs + bad


def jobs() -> list[tuple[str, str]]:
    """(mode, flavor) pairs: spec and ir do not depend on the flavor."""
    return [("spec", "llvm22"), ("ir", "llvm22")] + [("ll", f) for f in FLAVORS]


def python_coverage(inputs: list[Path], full: dict | None = None) -> dict[str, dict[str, int]]:
    """Per rocke_py/engine file: statements, covered statements, branches, covered branches
    (`full`, when given, receives coverage.py's whole JSON report).
    Call it in a process that has not imported the engine yet: a module imported before the
    measurement starts has its top-level lines (defs, tables) counted as not run."""
    import coverage

    cov = coverage.Coverage(branch=True, source=[str(PY_DIR)], data_file=None)
    cov.start()
    try:
        from rocke_py import engine

        for path in inputs:
            data = path.read_bytes()
            for mode, flavor in jobs():
                engine.emit(data, mode, flavor)
    finally:
        cov.stop()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "py.json"
        cov.json_report(outfile=str(out))
        report = json.loads(out.read_text())
    if full is not None:
        full.update(report)
    files = {}
    for name, entry in report["files"].items():
        s = entry["summary"]
        files[Path(name).name] = {
            "lines": s["num_statements"],
            "lines_covered": s["covered_lines"],
            "branches": s.get("num_branches", 0),
            "branches_covered": s.get("covered_branches", 0),
        }
    return files


def rule_reach(inputs: list[Path]) -> list[dict[str, str]]:
    """Every validation rule of the Python engine (validate.RULES, row by row) and the first
    input whose rejection came from it ("" where none did). The C engine's rules are the same
    rows in the same order, and the gate compares both engines' rejection code and message
    byte for byte, so a config that reaches a row here reaches its twin there."""
    from rocke_py import engine
    from rocke_py.engine import validate

    original = dict(validate.RULES)
    fired: dict[tuple[str, int], str] = {}
    current = [""]

    def watched(family: str, row: int, check):
        def run(ctx):
            message = check(ctx)
            if message is not None:
                fired.setdefault((family, row), current[0])
            return message

        return run

    try:
        for family, rows in original.items():
            validate.RULES[family] = tuple(
                (code, layer, watched(family, i, check)) for i, (code, layer, check) in enumerate(rows)
            )
        for path in inputs:
            current[0] = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
            engine.emit(path.read_bytes(), "spec", "llvm22")
    finally:
        validate.RULES.update(original)
    return [
        {"family": family, "code": code, "check": check.__name__, "reached_by": fired.get((family, i), "")}
        for family, rows in original.items()
        for i, (code, _, check) in enumerate(rows)
    ]


def c_coverage(inputs: list[Path], build: Path, full: dict | None = None) -> dict[str, dict[str, int]]:
    """Per rocke_c/src file, the same numbers from a --coverage build of emit_driver (`full`,
    when given, receives gcovr's line-by-line JSON report)."""
    flags = ["-DCMAKE_BUILD_TYPE=Debug", "-DCMAKE_C_FLAGS=--coverage", "-DCMAKE_EXE_LINKER_FLAGS=--coverage"]
    subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), *flags], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(
        ["cmake", "--build", str(build), "--target", "emit_driver", "-j", str(os.cpu_count() or 1)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    driver = build / "emit_driver"
    names = [str(p) for p in inputs]
    for mode, flavor in jobs():
        subprocess.run([str(driver), mode, flavor, *names], check=True, stdout=subprocess.DEVNULL)
    out = build / "c.json"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "gcovr",
            "--root",
            str(ROOT),
            "--filter",
            str(C_DIR) + "/",
            "--json-summary",
            str(out),
            "--json",
            str(build / "c-lines.json"),
            str(build),
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    report = json.loads(out.read_text())
    if full is not None:
        full.update(json.loads((build / "c-lines.json").read_text()))
    return {
        Path(f["filename"]).name: {
            "lines": f["line_total"],
            "lines_covered": f["line_covered"],
            "branches": f["branch_total"],
            "branches_covered": f["branch_covered"],
        }
        for f in report["files"]
    }


def percent(covered: int, total: int) -> str:
    return f"{100 * covered / total:5.1f}%" if total else "    -"


def twins(py: dict[str, dict], c: dict[str, dict]) -> list[tuple[str, str, str]]:
    """(name, python file, C file) for every file of either engine, the twins first, by
    stem ("" where a file has no twin; a C header with inline code is its own row)."""
    rows = {}
    for name in py:
        rows.setdefault(Path(name).stem, ["", ""])[0] = name
    for name in c:
        key = Path(name).stem if name.endswith(".c") else name
        rows.setdefault(key, ["", ""])[1] = name
    out = [(key, pf, cf) for key, (pf, cf) in rows.items()]
    return sorted(out, key=lambda r: (not (r[1] and r[2]), r[0]))


def table(py: dict[str, dict], c: dict[str, dict]) -> list[str]:
    head = f"{'twin':18s} {'py lines':>9s} {'py branches':>12s}   {'C lines':>8s} {'C branches':>11s}"
    lines = [head]
    for stem, pf, cf in twins(py, c):
        p = py.get(pf, {})
        q = c.get(cf, {})
        cells = [
            percent(p.get("lines_covered", 0), p.get("lines", 0)) if pf else "    (none)",
            percent(p.get("branches_covered", 0), p.get("branches", 0)) if pf else "",
            percent(q.get("lines_covered", 0), q.get("lines", 0)) if cf else "   (none)",
            percent(q.get("branches_covered", 0), q.get("branches", 0)) if cf else "",
        ]
        lines.append(f"{stem:18s} {cells[0]:>9s} {cells[1]:>12s}   {cells[2]:>8s} {cells[3]:>11s}")
    for name, files in (("python", py), ("C", c)):
        total = {
            k: sum(f[k] for f in files.values()) for k in ("lines", "lines_covered", "branches", "branches_covered")
        }
        lines.append(
            f"{name} engine: lines {percent(total['lines_covered'], total['lines'])}, "
            f"branches {percent(total['branches_covered'], total['branches'])}"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", type=Path, help="inputs (default: every parity and bad config)")
    ap.add_argument("--json", type=Path, help="write the per-file numbers of both engines here")
    ap.add_argument("--python-only", action="store_true", help="only the Python engine (no C build)")
    ap.add_argument("--why", action="store_true", help="list why each set-aside line or branch is left unreached")
    args = ap.parse_args(argv)
    inputs = args.files or default_inputs()
    py_full: dict = {}
    c_full: dict = {}
    py = python_coverage(inputs, py_full)
    rules = rule_reach(inputs)
    c: dict[str, dict[str, int]] = {}
    if not args.python_only:
        with tempfile.TemporaryDirectory(prefix="rocke-gcov-") as tmp:
            c = c_coverage(inputs, Path(tmp), c_full)
    print(f"{len(inputs)} input(s), modes {', '.join(MODES)}, flavors {', '.join(FLAVORS)}")
    print("\n".join(table(py, c)))
    print("build and lowering files, guards and the IR constructs no builder emits set aside:")
    reach = engine_unreached.python_reach(py_full, PY_DIR)
    print("\n".join(engine_unreached.report_lines("py", reach, args.why)))
    if c_full:
        c_files = engine_unreached.c_reach(c_full, C_DIR)
        print("\n".join(engine_unreached.report_lines("C ", c_files, args.why)))
        reach += c_files
    unreached = [r for r in rules if not r["reached_by"]]
    print(f"validation rules: {len(rules) - len(unreached)} of {len(rules)} reached by an input")
    for r in unreached:
        print(f"  not reached: {r['family']} {r['code']} ({r['check']})")
    if args.json:
        record = {
            "inputs": len(inputs),
            "python": py,
            "c": c,
            "rules": rules,
            "build_and_lower": [dataclasses.asdict(r) for r in reach],
        }
        args.json.write_text(json.dumps(record, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
