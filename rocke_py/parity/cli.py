"""``rocke-parity`` (``main``) and ``parity-diff`` (``diff_main``).

Exit statuses: 0 success / every job passed; 1 a failing job, a run-level failure, a rejection
(``emit``) or a refusal (``new``, ``golden --update``); 2 a usage error (bad option, unknown
config id, empty selection, a mode the engines do not implement) or an output that cannot be
written (``--json``, ``--junit``, ``emit -o``: one line, and nothing half-written); 3 an
engine crash in ``emit``; 128 + the signal for SIGINT (130) and SIGTERM (143), after every
worker was killed.
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
from rocke_py.parity.engines import FLAVORS, MODES, EngineSpec, call_engine, load_engines, text_bytes
from rocke_py.parity.fileio import STDOUT, WriteError, check_destination, write_output
from rocke_py.parity.gate import GateRun, Selection, UsageError, run_gate
from rocke_py.parity.report import JunitUnavailable, failure_line, make_progress, render, write_json, write_junit
from rocke_py.parity.runner import Interrupted, interrupts_raise

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
    _common(g)

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

    fz = sub.add_parser("fuzz", help="differential fuzzing of the two engines; each failure reduced to a config")
    fuzz_command.add_options(fz)
    _common(fz)
    return ap


def _diff_options(d: argparse.ArgumentParser) -> None:
    d.add_argument("target", metavar="ID")
    d.add_argument("--mode", choices=MODES, help="only this mode (default: every mode both engines implement)")
    d.add_argument("--flavor", choices=FLAVORS, help="only this flavor of mode ll (default: every flavor)")
    d.add_argument("--context", type=int, default=3, metavar="N", help="lines of context (default 3)")
    d.add_argument("--canonical", action="store_true", help="renumber SSA %%names on both sides before diffing")
    d.add_argument("--timeout", type=float, default=60.0, metavar="S", help="per-job limit in seconds (default 60)")
    _common(d)


def _engines(args: argparse.Namespace) -> EngineSpec:
    try:
        return EngineSpec.parse(args.engines) if args.engines else EngineSpec()
    except ValueError as e:
        raise UsageError(str(e)) from None


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


def _run(args: argparse.Namespace, record: bool = True) -> GateRun:
    root = _root(args)
    only, first = _last_failed(args, root)
    sel = dataclasses.replace(_selection(args), patterns=tuple(getattr(args, "patterns", ())), only_jobs=only)
    run = run_gate(root, sel, _engines(args), args.jobs, args.timeout, make_progress(), first, _maxfail(args))
    if record:
        _record(run, run.verdicts)
    return run


def _record(run: GateRun, verdicts: Sequence) -> None:
    if verdicts:
        shas = {c.id: c.sha256 for c in run.configs}
        try:
            lastrun.record(run.root, verdicts, shas)
        except OSError as e:
            print(f"note: could not write {lastrun.path_for(run.root)}: {e}", file=sys.stderr)


# ----------------------------------------------------------------------------- commands


def _report_destinations(args: argparse.Namespace) -> list[tuple[str, str]]:
    """(option, destination) of the requested reports, checked before the run (WriteError, UsageError)."""
    dests = [(opt, d) for opt, d in (("--json", args.json), ("--junit", args.junit)) if d is not None]
    if sum(d == STDOUT for _, d in dests) > 1:
        raise UsageError("--json - and --junit - cannot both write to standard output")
    for opt, d in dests:
        check_destination(d, opt)
    return dests


def cmd_gate(args: argparse.Namespace) -> int:
    dests = _report_destinations(args)  # a destination that cannot be written: exit 2 before running
    run = _run(args)
    # a report on stdout gets stdout to itself: the human summary goes to stderr
    render(run, sys.stderr if any(d == STDOUT for _, d in dests) else sys.stdout)
    status = EXIT_OK if run.passed else EXIT_FAIL
    for opt, d in dests:
        try:
            if opt == "--json":
                write_json(run, d, opt, args.json_full)
            else:
                write_junit(run, d, opt)
        except WriteError as e:
            print(f"rocke-parity {args.command}: {e}", file=sys.stderr)
            status = EXIT_USAGE
    return status


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
    )


def cmd_emit(args: argparse.Namespace) -> int:
    try:
        root: Path | None = _root(args)
    except RootNotFound:
        root = None
    if args.output is not None:
        check_destination(args.output, "-o")
    target = resolve_target(root, args.target)
    eng = load_engines(_engines(args))
    modes = eng.modes(args.engine)
    mode = args.mode or (modes[-1] if modes else "spec")
    run, text = call_engine(eng.emit_fn(args.engine), target.data, mode, args.flavor)
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


def cmd_list(args: argparse.Namespace) -> int:
    root = _root(args)
    disc = discover(root)
    configs = list(disc.configs)
    if args.family:
        if args.family not in disc.families:
            raise UsageError(f"unknown family {args.family!r} (families: {', '.join(disc.families) or 'none'})")
        configs = [c for c in configs if c.family == args.family]
    last = lastrun.load(root)
    rows = [(c.id, str(c.expect), lastrun.summary(last.get(c.id), c.sha256), c.description) for c in configs]
    if rows:
        w0 = max(len(r[0]) for r in rows)
        w1 = max(len(r[1]) for r in rows)
        w2 = max(len(r[2]) for r in rows)
        for r in rows:
            print(f"{r[0].ljust(w0)}  {r[1].ljust(w1)}  {r[2].ljust(w2)}  {r[3]}".rstrip())
    print(f"{len(rows)} config(s)")
    problems = [p.message for p in disc.problems if not args.family or p.family in (None, args.family)]
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
    "golden": cmd_golden,
    "diff": cmd_diff,
    "emit": cmd_emit,
    "list": cmd_list,
    "new": cmd_new,
    "check-llvm": cmd_check_llvm,
    "fuzz": cmd_fuzz,
}


def _run_command(args: argparse.Namespace) -> int:
    """The command, with SIGTERM and SIGINT turned into one line and 128 + the signal.

    Pool.run has killed every worker by the time Interrupted gets here; the message is printed
    while the handlers are still installed, so a second signal cannot add a traceback.
    """
    with interrupts_raise():
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
