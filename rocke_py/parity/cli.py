"""``rocke-parity`` (``main``) and ``parity-diff`` (``diff_main``).

Exit statuses: 0 success / every job passed (and ``gate --changed`` with nothing to gate); 1 a
failing job, a run-level failure, a rejection (``emit``) or a refusal (``new``, ``golden
--update``); 2 a usage error (bad option, unknown config id, empty selection, a mode the
engines do not implement, a bad ``--shard`` or ``--changed`` revision), a setup error (a C
build older than its sources, ``check-llvm`` without llvmlite), shards that ``merge`` refuses,
or an output that cannot be written (``--json``, ``--junit``, ``--summary``, ``emit -o``: one
line, and nothing half-written); 3 an engine crash in ``emit``; 128 + the signal for SIGINT
(130) and SIGTERM (143), after every worker was killed.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path
from typing import Sequence

from rocke_py.fuzz import command as fuzz_command
from rocke_py.parity import golden as golden_mod
from rocke_py.parity import golden_update, lastrun
from rocke_py.parity.compare import GOLDEN_STATUSES, Status
from rocke_py.parity.configs import RootNotFound, discover, find_root
from rocke_py.parity.diff import DEFAULT_FLAVOR, DiffUsageError, resolve_target, run_diff
from rocke_py.parity.engines import FLAVORS, MODES, EngineSpec, call_engine, load_side, text_bytes
from rocke_py.parity.fileio import STDOUT, WriteError, check_destination, write_output
from rocke_py.parity.gate import GateRun, Selection, UsageError, run_gate
from rocke_py.parity.report import (
    JunitUnavailable,
    doc_text,
    failure_line,
    junit_text,
    make_progress,
    render,
    render_doc,
    report_doc,
)
from rocke_py.parity.runner import Interrupted, interrupts_raise, rare_collections
from rocke_py.parity.shards import Shard

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_CRASH = 0, 1, 2, 3


def _csv(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


class _Version(argparse.Action):
    """--version: the package version and the engines' build ids, computed only when asked."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from rocke_py.parity.version import version_line

        print(version_line(parser.prog.split()[0]))
        parser.exit()


def _version(p: argparse.ArgumentParser) -> None:
    p.add_argument("--version", action=_Version, help="print the version and the engines' build ids, and exit")


def _common(p: argparse.ArgumentParser) -> None:
    _version(p)
    p.add_argument(
        "--root",
        metavar="DIR",
        help="repository root (default: the nearest directory at or above cwd containing parity_configs/)",
    )
    p.add_argument("--engines", metavar="PY_EMIT,C_EMIT[,PY_MODES,C_MODES]", help=argparse.SUPPRESS)


def _selection_options(p: argparse.ArgumentParser, with_reports: bool) -> None:
    p.add_argument("--family", action="append", default=[], metavar="F", help="only this family (repeatable, or F,G)")
    p.add_argument("--config", action="extend", nargs="+", default=[], metavar="ID", help="only these configs")
    p.add_argument("--mode", metavar="spec,ir,ll", help="modes to run (default: every mode both engines implement)")
    p.add_argument(
        "--flavor",
        default="all",
        metavar="all",
        help="flavors for mode ll: all (default) or a list such as llvm20,llvm22",
    )
    p.add_argument(
        "-j", "--jobs", type=int, default=None, metavar="N", help="worker processes (default: the number of CPUs)"
    )
    p.add_argument("--timeout", type=float, default=60.0, metavar="S", help="per-job limit in seconds (default 60)")
    if with_reports:
        p.add_argument(
            "--json",
            metavar="FILE",
            help="write one JSON record per job (- for standard output; the summary then goes to stderr)",
        )
        p.add_argument("--junit", metavar="FILE", help="write a JUnit XML report (- for standard output)")
        p.add_argument(
            "--json-full",
            action="store_true",
            help="every job's whole record in --json (default: passing jobs without repeats, reason and golden entry)",
        )
        _summary_options(p)


def _summary_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--summary", metavar="FILE", help="write a Markdown summary (for $GITHUB_STEP_SUMMARY; - for stdout)"
    )
    p.add_argument(
        "--base-golden",
        metavar="FILE",
        help="in --summary, compare the tree's golden.json with this manifest (e.g. the target branch's)",
    )


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="rocke-parity", description="Run the Python and C engines on the parity configs and compare them."
    )
    _version(ap)
    sub = ap.add_subparsers(dest="command", metavar="COMMAND", required=True)

    g = sub.add_parser("gate", help="the byte-identity gate: every config, both engines; exit 1 on any failure")
    _selection_options(g, with_reports=True)
    g.add_argument(
        "-k",
        dest="patterns",
        action="append",
        default=[],
        metavar="PATTERN",
        help="only jobs whose '<config id> <job key>' contains PATTERN, or matches it as a glob (repeatable: any)",
    )
    g.add_argument(
        "--lf", "--last-failed", dest="last_failed", action="store_true", help="only the jobs that failed last time"
    )
    g.add_argument(
        "--ff", "--failed-first", dest="failed_first", action="store_true", help="the jobs that failed last time first"
    )
    g.add_argument("--maxfail", type=int, metavar="N", help="stop handing out jobs after N failing ones")
    g.add_argument("-x", "--exitfirst", action="store_true", help="--maxfail 1")
    g.add_argument(
        "--shard",
        metavar="I/N",
        help="run shard I of N: a deterministic partition of the configs, balanced by cost (merge the --json reports)",
    )
    g.add_argument(
        "--changed",
        nargs="?",
        const="HEAD",
        metavar="REV",
        help="only what the change since REV (default HEAD: uncommitted changes) can affect; "
        "after one engine changed, the other's outputs come from the cache",
    )
    g.add_argument(
        "--paths",
        nargs="+",
        metavar="FILE",
        help="as --changed, for these changed files (the pre-commit hook passes them)",
    )
    g.add_argument(
        "--reuse",
        choices=("py", "c"),
        help="take this engine's outputs from the cache where it has them (same build id and config bytes)",
    )
    _common(g)

    mg = sub.add_parser("merge", help="combine the --json reports of gate --shard I/N into one run")
    mg.add_argument("reports", nargs="+", metavar="REPORT.json")
    mg.add_argument("--json", metavar="FILE", help="write the merged JSON report (- for standard output)")
    mg.add_argument("--junit", metavar="FILE", help="write one JUnit XML report (- for standard output)")
    _summary_options(mg)
    _common(mg)

    d = sub.add_parser("diff", help="why do the engines disagree on this config?")
    _diff_options(d)

    e = sub.add_parser("emit", help="run one engine on one config and print its output")
    e.add_argument("target", metavar="ID|FILE")
    e.add_argument("--engine", choices=("py", "c"), required=True)
    e.add_argument("--mode", choices=MODES, help="default: the deepest mode the engine implements")
    e.add_argument("--flavor", choices=FLAVORS, default=DEFAULT_FLAVOR, help=f"default {DEFAULT_FLAVOR}")
    e.add_argument("-o", "--output", metavar="FILE", help="write the output here instead of stdout (- is stdout)")
    _common(e)

    ls = sub.add_parser("list", help="configs with their expectation and last status")
    ls.add_argument("--family", metavar="F")
    ls.add_argument("--json", action="store_true", help="the list as JSON (configs and problems)")
    _common(ls)

    n = sub.add_parser("new", help="add a config derived from an existing one")
    n.add_argument("family", metavar="FAMILY")
    n.add_argument("--from", dest="source", required=True, metavar="ID")
    n.add_argument(
        "--set",
        dest="sets",
        action="append",
        default=[],
        metavar="key=value",
        help="key (looked up in [spec], [problem], [target]) or table.key; repeatable",
    )
    n.add_argument("--slug", metavar="S")
    n.add_argument(
        "--expect",
        metavar="emit|reject:CODE",
        help="required to write the file; without it the observed outcome is proposed",
    )
    n.add_argument("-j", "--jobs", type=int, default=None, help=argparse.SUPPRESS)
    n.add_argument("--timeout", type=float, default=60.0, help=argparse.SUPPRESS)
    _common(n)

    go = sub.add_parser("golden", help="check or update parity_configs/golden.json")
    mx = go.add_mutually_exclusive_group(required=True)
    mx.add_argument(
        "--check",
        action="store_true",
        help="run the gate and check every verdict against the manifest (exit 1 on any failure)",
    )
    mx.add_argument(
        "--update",
        action="store_true",
        help="record the verdicts of the jobs that ran (refused while a job fails for another reason)",
    )
    _selection_options(go, with_reports=False)
    _common(go)

    ck = sub.add_parser(
        "check-llvm",
        help="compile each emitting config's ll (llvm22) with llvmlite for its arch "
        "and check its isa list and transpose reads",
    )
    ck.add_argument("ids", nargs="*", metavar="ID")
    ck.add_argument("-j", "--jobs", type=int, default=None, help="parallel compiles (default: one per core)")
    ck.add_argument("--timeout", type=float, default=300.0, help="seconds per compile (default 300)")
    _common(ck)
    _numerics_parser(sub)

    fz = sub.add_parser("fuzz", help="differential fuzzing of the two engines; each failure reduced to a config")
    fuzz_command.add_options(fz)
    _common(fz)
    return ap


# ---- numerics (issue 10 item 4): the kernels run on the CPU executor against NumPy references


def _numerics_parser(sub) -> None:
    nu = sub.add_parser(
        "numerics",
        help="run each emitting config's kernel on the CPU executor and compare it with a float64 NumPy convolution",
    )
    nu.add_argument("ids", nargs="*", metavar="ID")
    nu.add_argument("--engine", choices=("py", "c"), default="py", help="the engine whose IR is run (default py)")
    nu.add_argument("--json", metavar="FILE", help="write the outcomes as JSON (- for standard output)")
    nu.add_argument("--small", action="store_true", help="each config's small variant (batch <= 2, input <= 9x9)")
    nu.add_argument("--real", action="store_true", help="normally distributed inputs, compared within a dtype bound")
    nu.add_argument("-j", "--jobs", type=int, default=None, metavar="N", help="worker processes (default 2)")
    _common(nu)


def cmd_numerics(args: argparse.Namespace) -> int:
    from rocke_py.numerics.run import run_numerics

    if args.jobs is not None and args.jobs < 1:
        raise UsageError("-j needs a positive number")
    try:
        return run_numerics(
            _root(args), list(args.ids), args.engine, args.small, args.real, args.jobs, args.json, sys.stdout
        )
    except ValueError as e:
        raise UsageError(str(e)) from None


# ---- end of numerics


def _diff_options(d: argparse.ArgumentParser) -> None:
    d.add_argument("target", metavar="ID")
    d.add_argument("--mode", choices=MODES, help="only this mode (default: every mode both engines implement)")
    d.add_argument("--flavor", choices=FLAVORS, help="only this flavor of mode ll (default: every flavor)")
    d.add_argument("--context", type=int, default=3, metavar="N", help="lines of context (default 3)")
    d.add_argument("--canonical", action="store_true", help="renumber SSA %%names on both sides before diffing")
    d.add_argument("--timeout", type=float, default=60.0, metavar="S", help="per-job limit in seconds (default 60)")
    d.add_argument(
        "--save",
        metavar="DIR",
        help="write both outputs of every job (and their canonical renumberings) under DIR for a diff tool",
    )
    _common(d)


def _engines(args: argparse.Namespace, needs_c: bool = True) -> EngineSpec:
    """The engine pair; a stale C build is a usage error (exit 2) when the command runs the C engine."""
    from rocke_py.parity.stale import stale_build

    try:
        spec = EngineSpec.parse(args.engines) if args.engines else EngineSpec()
    except ValueError as e:
        raise UsageError(str(e)) from None
    problem = stale_build(spec) if needs_c else None
    if problem:
        raise UsageError(problem)
    return spec


def _root(args: argparse.Namespace) -> Path:
    if args.root:
        return Path(args.root).resolve()
    return find_root()


def _selection(args: argparse.Namespace) -> Selection:
    fams = tuple(f for item in args.family for f in _csv(item))
    modes = tuple(_csv(args.mode)) if args.mode else None
    if modes is not None and not modes:
        raise UsageError("--mode needs at least one mode")
    flavors = None if args.flavor.strip() == "all" else tuple(_csv(args.flavor))
    if flavors is not None and not flavors:
        raise UsageError("--flavor needs all or at least one flavor")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("-j needs a positive number")
    if args.timeout <= 0:
        raise UsageError("--timeout needs a positive number of seconds")
    return Selection(fams, tuple(args.config), modes, flavors)


def _last_failed(args: argparse.Namespace, root: Path) -> tuple[frozenset[tuple[str, str]] | None, frozenset]:
    """(--last-failed's job set or None, --failed-first's job set), from the last run's record."""
    want_only = getattr(args, "last_failed", False)
    if not want_only and not getattr(args, "failed_first", False):
        return None, frozenset()
    failed = lastrun.failed_jobs(lastrun.load(root))
    if want_only and not failed:
        print("note: no job failed in the last run: --last-failed runs everything", file=sys.stderr)
        return None, failed
    return (failed if want_only else None), failed


def _maxfail(args: argparse.Namespace) -> int | None:
    n = 1 if getattr(args, "exitfirst", False) else getattr(args, "maxfail", None)
    if n is not None and n < 1:
        raise UsageError("--maxfail needs a positive number")
    return n


def _shard(args: argparse.Namespace) -> Shard | None:
    text = getattr(args, "shard", None)
    if text is None:
        return None
    try:
        return Shard.parse(text)
    except ValueError as e:
        raise UsageError(str(e)) from None


class NothingToGate(Exception):
    """--changed or --paths: the change affects no config, engine or harness file (exit 0)."""


def _changed(
    args: argparse.Namespace, root: Path, sel: Selection, spec: EngineSpec
) -> tuple[Selection, list[str], str | None]:
    """--changed / --paths: the selection narrowed to what the change can affect, and its note."""
    from rocke_py.parity.changes import ChangeError, affected, changed_since, given_paths

    rev, paths = getattr(args, "changed", None), getattr(args, "paths", None)
    if rev is None and not paths:
        return sel, [], None
    if rev is not None and paths:
        raise UsageError("--changed and --paths cannot be combined")
    if sel.configs:
        raise UsageError(f"{'--changed' if rev is not None else '--paths'} chooses the configs: not with --config")
    try:
        files = changed_since(root, rev) if rev is not None else given_paths(root, paths)
    except ChangeError as e:
        raise UsageError(str(e)) from None
    aff = affected(files, spec, root, set(discover(root).by_id()))
    what = f"--changed {rev}" if rev is not None else f"--paths ({len(files)} file(s))"
    if aff.nothing:
        raise NothingToGate(f"{what}: {len(files)} changed file(s), none a config, an engine or a harness file")
    if aff.configs is not None:
        sel = dataclasses.replace(sel, configs=aff.configs)
    scope = "every config" if aff.configs is None else f"{len(aff.configs)} config(s)"
    return sel, [f"{what}: {'; '.join(aff.why)}: {scope}"], aff.reuse


def _run(args: argparse.Namespace, record: bool = True) -> GateRun:
    root = _root(args)
    only, first = _last_failed(args, root)
    sel = dataclasses.replace(
        _selection(args), patterns=tuple(getattr(args, "patterns", ())), only_jobs=only, shard=_shard(args)
    )
    spec = _engines(args)
    sel, notes, reuse = _changed(args, root, sel, spec)
    reuse = getattr(args, "reuse", None) or reuse
    run = run_gate(root, sel, spec, args.jobs, args.timeout, make_progress(), first, _maxfail(args), reuse)
    run.notes[:0] = notes
    if record:
        _record(run, run.verdicts)
    return run


def _record(run: GateRun, verdicts: Sequence) -> None:
    if verdicts:
        shas = {c.id: c.sha256 for c in run.configs}
        try:
            lastrun.record(run.root, verdicts, shas, keep_seconds=run.shard is not None)
        except OSError as e:
            print(f"note: could not write {lastrun.path_for(run.root)}: {e}", file=sys.stderr)


# ----------------------------------------------------------------------------- commands


_REPORTS = (("--json", "json"), ("--junit", "junit"), ("--summary", "summary"))


def _report_destinations(args: argparse.Namespace) -> list[tuple[str, str]]:
    """(option, destination) of the requested reports, checked before the run (WriteError, UsageError)."""
    dests = [(opt, d) for opt, attr in _REPORTS if (d := getattr(args, attr, None)) is not None]
    on_stdout = [opt for opt, d in dests if d == STDOUT]
    if len(on_stdout) > 1:
        raise UsageError(f"{' and '.join(f'{o} -' for o in on_stdout)} cannot both write to standard output")
    for opt, d in dests:
        check_destination(d, opt)
    if getattr(args, "base_golden", None) is not None and getattr(args, "summary", None) is None:
        raise UsageError("--base-golden goes with --summary")
    return dests


def _base_golden(args: argparse.Namespace) -> golden_mod.Manifest | None:
    """The --base-golden manifest, read before the run (a usage error when it cannot be)."""
    if getattr(args, "base_golden", None) is None:
        return None
    path = Path(args.base_golden)
    if not path.is_file():
        raise UsageError(f"--base-golden: no file {args.base_golden}")
    try:
        return golden_mod.load(path)
    except golden_mod.GoldenError as e:
        raise UsageError(f"--base-golden: {e}") from None


def _write_reports(
    args: argparse.Namespace,
    dests: list[tuple[str, str]],
    doc: dict,
    golden: golden_mod.Manifest | None,
    base: golden_mod.Manifest | None,
) -> int:
    """Each requested report of ``doc``; EXIT_USAGE when one cannot be written, else EXIT_OK."""
    from rocke_py.parity.summary import markdown

    status = EXIT_OK
    for opt, d in dests:
        try:
            if opt == "--json":
                text = doc_text(doc)
            elif opt == "--junit":
                text = junit_text(doc)
            else:
                text = markdown(doc, golden, base, args.base_golden or "")
            write_output(d, text.encode("utf-8"), opt)
        except WriteError as e:
            print(f"rocke-parity {args.command}: {e}", file=sys.stderr)
            status = EXIT_USAGE
    return status


def cmd_gate(args: argparse.Namespace) -> int:
    dests = _report_destinations(args)  # a destination that cannot be written: exit 2 before running
    base = _base_golden(args)
    try:
        run = _run(args)
    except NothingToGate as e:
        print(f"rocke-parity gate: nothing to gate: {e}")
        return EXIT_OK
    # a report on stdout gets stdout to itself: the human summary goes to stderr
    out = sys.stderr if any(d == STDOUT for _, d in dests) else sys.stdout
    if not dests:
        render(run, out)
        return EXIT_OK if run.passed else EXIT_FAIL
    doc = report_doc(run, args.json_full)
    render_doc(doc, out)
    written = _write_reports(args, dests, doc, run.manifest if run.golden_ok else None, base)
    return written if written != EXIT_OK else (EXIT_OK if run.passed else EXIT_FAIL)


def cmd_merge(args: argparse.Namespace) -> int:
    from rocke_py.parity.merge import MergeError, merge_reports

    dests = _report_destinations(args)
    base = _base_golden(args)
    try:
        doc = merge_reports(list(args.reports))
    except MergeError as e:
        print(f"rocke-parity merge: refused: {e}", file=sys.stderr)
        return EXIT_USAGE
    render_doc(doc, sys.stderr if any(d == STDOUT for _, d in dests) else sys.stdout, "merge")
    golden = None
    if base is not None:
        try:
            golden = golden_mod.load(golden_mod.golden_path(_root(args)))
        except (golden_mod.GoldenError, RootNotFound):
            golden = None
    written = _write_reports(args, dests, doc, golden, base)
    return written if written != EXIT_OK else (EXIT_OK if doc["passed"] else EXIT_FAIL)


def cmd_golden(args: argparse.Namespace) -> int:
    run = _run(args, record=args.check)
    return _golden_check(run) if args.check else _golden_update(run)


def _golden_check(run: GateRun) -> int:
    """Every verdict of the run against the manifest: OK only when the whole run passes.

    A run is a real gate run (the same jobs, statuses and run-level checks); this command only
    words its summary around the manifest, and never says OK about a job it did not run."""
    out = sys.stdout
    for v in run.failures:
        print(failure_line(v), file=out)
    for prob in (*run.problems, *run.stale_golden):
        print(f"FAIL run-level: {prob}", file=out)
    manifest = run.manifest or golden_mod.Manifest({})
    ran = {(v.job.config, v.job.key) for v in run.verdicts}
    unchecked = sum(1 for c, outs in manifest.entries.items() for k in outs if (c, k) not in ran)
    emitted = sum(1 for v in run.verdicts if v.golden is not None and v.golden.emits)
    rejected = sum(1 for v in run.verdicts if v.golden is not None and not v.golden.emits)
    by = {
        s: sum(v.status is s for v in run.verdicts)
        for s in (Status.GOLDEN_DRIFT, Status.GOLDEN_MISSING, Status.VERDICT_CHANGED)
    }
    other = sum(1 for v in run.failures if v.status.value not in GOLDEN_STATUSES)
    ok = run.passed
    scope = (
        ""
        if not run.partial
        else f" ({run.partial_note()}; {unchecked} manifest entr{'y' if unchecked == 1 else 'ies'} not checked)"
    )
    print(
        f"golden {'OK' if ok else 'FAILED'}: {len(run.verdicts)} job(s) run against golden.json "
        f"({emitted} emission(s), {rejected} rejection(s) recorded); {by[Status.GOLDEN_DRIFT]} drift, "
        f"{by[Status.GOLDEN_MISSING]} missing, {by[Status.VERDICT_CHANGED]} verdict(s) changed, "
        f"{other} other failure(s), {len(run.problems) + len(run.stale_golden)} run-level failure(s)"
        f"{scope}; wall time {run.wall_seconds:.2f} s",
        file=out,
    )
    return EXIT_OK if ok else EXIT_FAIL


def _golden_update(run: GateRun) -> int:
    out = sys.stdout
    if golden_update.refused(run):
        _record(run, run.verdicts)
        print("golden --update refused: nothing written. The run fails for reasons other than the manifest:", file=out)
        for v in golden_update.blocking(run):
            print(failure_line(v), file=out)
        for prob in run.problems:
            print(f"FAIL run-level: {prob}", file=out)
        return EXIT_FAIL
    if not run.verdicts:
        _record(run, run.verdicts)
        print("golden --update: no job ran; nothing written", file=out)
        return EXIT_FAIL
    path = golden_mod.golden_path(run.root)
    outputs = golden_update.recorded(run)
    existing, coverage = golden_update.full_scope(run)
    cache = golden_mod.ObjectCache(run.root)
    try:
        manifest, changes = golden_update.write_locked(path, outputs, existing, coverage, cache)
    except golden_update.UpdateError as e:
        raise UsageError(str(e)) from None
    golden_update.remember_texts(run, outputs, manifest, cache)
    # what the gate would say now: the recorded outputs are no longer golden failures
    _record(
        run,
        [
            dataclasses.replace(
                v, status=Status.IDENTICAL if v.result.py[0].kind == "emitted" else Status.BOTH_REJECTED, passed=True
            )
            if v.status.value in GOLDEN_STATUSES
            else v
            for v in run.verdicts
        ],
    )
    for ch in changes:
        print(ch.line(), file=out)
    rel = path.relative_to(run.root).as_posix()
    scope = f" ({run.partial_note()}: entries of other jobs untouched)" if run.partial else ""
    if changes:
        print(f"{rel}: {len(changes)} change(s) from {len(outputs)} job(s) of this run{scope}", file=out)
        print(
            "commit it with a message that says why each entry moved (or as its own regenerate-only commit)", file=out
        )
    else:
        print(f"{rel} is up to date ({len(outputs)} job(s) of this run){scope}", file=out)
    return EXIT_OK


def cmd_diff(args: argparse.Namespace) -> int:
    try:
        root: Path | None = _root(args)
    except RootNotFound:
        root = None
    if args.timeout <= 0:
        raise UsageError("--timeout needs a positive number of seconds")
    return run_diff(
        root,
        args.target,
        args.mode,
        args.flavor,
        max(0, args.context),
        args.canonical,
        _engines(args),
        sys.stdout,
        args.timeout,
        Path(args.save) if args.save else None,
    )


def cmd_emit(args: argparse.Namespace) -> int:
    try:
        root: Path | None = _root(args)
    except RootNotFound:
        root = None
    if args.output is not None:
        check_destination(args.output, "-o")
    target = resolve_target(root, args.target)
    emit_fn, modes = load_side(_engines(args, needs_c=args.engine == "c"), args.engine)  # only the engine asked for
    mode = args.mode or (modes[-1] if modes else "spec")
    run, text = call_engine(emit_fn, target.data, mode, args.flavor)
    if run.kind == "emitted" and text is not None:
        data = text_bytes(text)
        if args.output is not None:
            write_output(args.output, data, "-o")
        else:
            sys.stdout.flush()
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        return EXIT_OK
    if run.kind == "rejected":
        print(f"REJECTED {run.code}", file=sys.stderr)
        print(run.message, file=sys.stderr)
        return EXIT_FAIL
    print(f"ENGINE CRASH ({args.engine}): {run.code}: {run.message}", file=sys.stderr)
    if run.detail:
        print(run.detail, file=sys.stderr)
    return EXIT_CRASH


LIST_WIDTH = 100
_STATUS_WIDTH = 40
_CHANGED = " (config changed since)"
_MIN_DESCRIPTION = 24


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


def _fit_status(text: str) -> str:
    """The last-run cell, cut to its column; "(config changed since)" is never cut off."""
    if text.endswith(_CHANGED):
        return _fit(text[: -len(_CHANGED)], _STATUS_WIDTH - len(_CHANGED)) + _CHANGED
    return _fit(text, _STATUS_WIDTH)


def cmd_list(args: argparse.Namespace) -> int:
    import json

    root = _root(args)
    disc = discover(root)
    configs = sorted(disc.configs, key=lambda c: (c.family, c.number, c.slug))  # 2 < 11 < 100
    if args.family:
        if args.family not in disc.families:
            raise UsageError(f"unknown family {args.family!r} (families: {', '.join(disc.families) or 'none'})")
        configs = [c for c in configs if c.family == args.family]
    last = lastrun.load(root)
    problems = [p.message for p in disc.problems if not args.family or p.family in (None, args.family)]
    if args.json:
        records = [
            {
                "id": c.id,
                "family": c.family,
                "number": c.number,
                "file": c.relpath(root),
                "expect": str(c.expect),
                "last_run": lastrun.summary(last.get(c.id), c.sha256),
                "description": c.description,
            }
            for c in configs
        ]
        print(json.dumps({"configs": records, "problems": problems}, indent=2))
        return EXIT_OK if not problems else EXIT_FAIL
    rows = [("config", "expect", "last run", "description")]
    rows += [
        (c.id, str(c.expect), _fit_status(lastrun.summary(last.get(c.id), c.sha256)), c.description) for c in configs
    ]
    w0, w1, w2 = (max(len(r[i]) for r in rows) for i in range(3))
    room = LIST_WIDTH - (w0 + w1 + w2 + 6)
    for n, r in enumerate(rows):
        head = f"{r[0].ljust(w0)}  {r[1].ljust(w1)}  {r[2].ljust(w2)}"
        if room >= _MIN_DESCRIPTION:
            print(f"{head}  {_fit(r[3], room)}".rstrip())
        else:  # the long codes of the negative configs leave no room: the description goes below
            print(head.rstrip())
            print(f"    {_fit(r[3], LIST_WIDTH - 4)}")
    print(f"{len(configs)} config(s)")
    for prob in problems:
        print(f"problem: {prob}")
    return EXIT_OK if not problems else EXIT_FAIL


def cmd_new(args: argparse.Namespace) -> int:
    from rocke_py.parity.newconfig import run_new

    if args.jobs is not None and args.jobs < 1:
        raise UsageError("-j needs a positive number")
    return run_new(
        _root(args),
        args.family,
        args.source,
        args.sets,
        args.slug,
        args.expect,
        _engines(args),
        args.jobs,
        args.timeout,
        sys.stdout,
    )


def cmd_check_llvm(args: argparse.Namespace) -> int:
    from rocke_py.check.isa import run_check_llvm

    try:
        return run_check_llvm(_root(args), list(args.ids), args.jobs, args.timeout, sys.stdout)
    except ValueError as e:
        raise UsageError(str(e)) from None


def cmd_fuzz(args: argparse.Namespace) -> int:
    return fuzz_command.run(args, _root(args), _engines(args), sys.stdout)


_COMMANDS = {
    "gate": cmd_gate,
    "merge": cmd_merge,
    "golden": cmd_golden,
    "diff": cmd_diff,
    "emit": cmd_emit,
    "list": cmd_list,
    "new": cmd_new,
    "check-llvm": cmd_check_llvm,
    "numerics": cmd_numerics,
    "fuzz": cmd_fuzz,
}


def _run_command(args: argparse.Namespace) -> int:
    """The command, with SIGTERM and SIGINT turned into one line and 128 + the signal.

    Pool.run has killed every worker by the time Interrupted gets here; the message is printed
    while the handlers are still installed, so a second signal cannot add a traceback.
    """
    with interrupts_raise(), rare_collections():
        try:
            return _COMMANDS[args.command](args)
        except Interrupted as e:
            jobs = f": {e.not_run} job(s) not run" if e.not_run is not None else ""
            print(f"rocke-parity {args.command}: interrupted by {e.name}{jobs}", file=sys.stderr)
            return e.exit_status


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
    except SystemExit as e:  # argparse: --help (0) or a usage error (2)
        return int(e.code) if isinstance(e.code, int) else EXIT_USAGE
    try:
        return _run_command(args)
    except (UsageError, DiffUsageError, JunitUnavailable, WriteError) as e:
        print(f"rocke-parity {args.command}: {e}", file=sys.stderr)
        return EXIT_USAGE
    except RootNotFound as e:
        print(f"rocke-parity {args.command}: {e}", file=sys.stderr)
        # no parity_configs/ at all: for the gate that is "no configs found", a run-level failure
        return EXIT_FAIL if args.command in ("gate", "golden") else EXIT_USAGE
    except ImportError as e:
        print(f"rocke-parity {args.command}: cannot load the engines: {e}", file=sys.stderr)
        return EXIT_FAIL
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        except OSError:
            pass
        return EXIT_FAIL


def diff_main(argv: Sequence[str] | None = None) -> int:
    """``parity-diff ID [...]`` = ``rocke-parity diff ID [...]``."""
    args = list(argv) if argv is not None else sys.argv[1:]
    return main(["diff", *args])
