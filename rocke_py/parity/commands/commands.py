"""The commands of ``rocke-parity`` (:func:`run`), once :mod:`rocke_py.parity.cli` has parsed the
command line: the table of commands, the ones that do not run the gate, and the one-line errors.
Exit statuses are :mod:`exits`'.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import os
import re
import sys
from pathlib import Path

from rocke_py.fuzz import command as fuzz_command
from rocke_py.parity.commands.common import engines_of, root_of
from rocke_py.parity.commands.diff import DiffUsageError, resolve_target, run_diff
from rocke_py.parity.commands.exits import EXIT_CRASH, EXIT_FAIL, EXIT_OK, EXIT_USAGE, GATE_COMMANDS
from rocke_py.parity.commands.gating import cmd_gate, cmd_golden, cmd_golden_diff, cmd_merge
from rocke_py.parity.inputs.configs import discover
from rocke_py.parity.judge import lastrun
from rocke_py.parity.judge.jobs import UsageError
from rocke_py.parity.report.report import JunitUnavailable
from rocke_py.parity.run.engines import call_engine, load_side, text_bytes
from rocke_py.parity.run.processes import Interrupted, interrupts_raise, rare_collections
from rocke_py.parity.run.root import RootNotFound
from rocke_py.parity.run.runner import Pool
from rocke_py.parity.store.fileio import WriteError, check_destination, write_output


def cmd_numerics(args: argparse.Namespace) -> int:
    from rocke_py.numerics.run import run_numerics

    if args.jobs is not None and args.jobs < 1:
        raise UsageError("-j needs a positive number")
    try:
        return run_numerics(
            root_of(args),
            list(args.ids),
            args.engine,
            args.small,
            args.real,
            args.jobs,
            args.json,
            sys.stdout,
            shrink=args.shrink,
            level=args.level,
        )
    except ValueError as e:
        raise UsageError(str(e)) from None


def cmd_diff(args: argparse.Namespace) -> int:
    try:
        root: Path | None = root_of(args)
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
        engines_of(args),
        sys.stdout,
        args.timeout,
        Path(args.save) if args.save else None,
    )


def cmd_emit(args: argparse.Namespace) -> int:
    try:
        root: Path | None = root_of(args)
    except RootNotFound:
        root = None
    if args.output is not None:
        check_destination(args.output, "-o")
    target = resolve_target(root, args.target)
    emit_fn, modes = load_side(engines_of(args, needs_c=args.engine == "c"), args.engine)  # only the engine asked for
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

    root = root_of(args)
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
    from rocke_py.parity.commands.newconfig import run_new

    if args.jobs is not None and args.jobs < 1:
        raise UsageError("-j needs a positive number")
    return run_new(
        root_of(args),
        args.family,
        args.source,
        args.sets,
        args.slug,
        args.expect,
        engines_of(args),
        args.jobs,
        args.timeout,
        sys.stdout,
        unsets=tuple(args.unsets),
    )


def cmd_check_llvm(args: argparse.Namespace) -> int:
    from rocke_py.check.isa import run_check_llvm, run_histogram

    try:
        if args.histogram:
            return run_histogram(root_of(args), list(args.ids), args.timeout, sys.stdout)
        return run_check_llvm(root_of(args), list(args.ids), args.jobs, args.timeout, sys.stdout)
    except ValueError as e:
        raise UsageError(str(e)) from None


def cmd_coverage(args: argparse.Namespace) -> int:
    from rocke_py.coverage.command import run_coverage

    return run_coverage(
        root_of(args),
        sys.stdout,
        json_path=args.json,
        svg_path=args.svg,
        do_propose=args.propose,
        check_numerics=not args.no_numerics,
        all_pairs=args.all,
    )


def cmd_fuzz(args: argparse.Namespace) -> int:
    return fuzz_command.run(args, root_of(args), engines_of(args), sys.stdout)


def cmd_gaps(args: argparse.Namespace) -> int:
    """``gaps add|remove``: a refusal is one line and exit 1; a file it cannot edit, exit 2."""
    from rocke_py.parity.commands import gaps_edit

    root = root_of(args)
    try:
        if args.gaps_action == "add":
            if args.timeout <= 0:
                raise UsageError("--timeout needs a positive number of seconds")
            return gaps_edit.run_add(
                root, args.target, args.mode, args.flavor, args.reason, engines_of(args), args.timeout, sys.stdout
            )
        return gaps_edit.run_remove(root, args.target, args.mode, args.flavor, sys.stdout)
    except gaps_edit.GapsRefused as e:
        print(
            f"rocke-parity gaps {args.gaps_action}: refused: {did_you_mean(args, str(e), args.target)}", file=sys.stderr
        )
        return EXIT_FAIL


_GATE_COMMANDS = {"gate": cmd_gate, "golden": cmd_golden}
_COMMANDS = {
    "merge": cmd_merge,
    "diff": cmd_diff,
    "emit": cmd_emit,
    "list": cmd_list,
    "new": cmd_new,
    "check-llvm": cmd_check_llvm,
    "numerics": cmd_numerics,
    "coverage": cmd_coverage,
    "fuzz": cmd_fuzz,
    "gaps": cmd_gaps,
    "golden diff": cmd_golden_diff,
}


def _run_command(args: argparse.Namespace, early: Pool | None) -> int:
    """The command, with SIGTERM and SIGINT turned into one line and 128 + the signal.

    Pool.run has killed every worker by the time Interrupted gets here; the message is printed
    while the handlers are still installed, so a second signal cannot add a traceback.
    """
    with interrupts_raise(), rare_collections():
        try:
            if args.command in GATE_COMMANDS:
                return _GATE_COMMANDS[args.command](args, early)
            return _COMMANDS[args.command](args)
        except Interrupted as e:
            jobs = f": {e.not_run} job(s) not run" if e.not_run is not None else ""
            print(f"rocke-parity {args.command}: interrupted by {e.name}{jobs}", file=sys.stderr)
            return e.exit_status


#: An unknown config as the commands name it: ``unknown config 'x'`` (gate, diff, emit, new, gaps
#: add), ``no config 'x'`` (check-llvm).
_UNKNOWN_CONFIG_RE = re.compile(r"(?:unknown config|no config) ('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")")


def did_you_mean(args: argparse.Namespace, message: str, ref: str | None = None) -> str:
    """``message`` and, when it names an unknown config id (or ``ref`` is not one), the closest
    ids of the tree."""
    from rocke_py.parity.inputs.configs import resolve_id

    m = _UNKNOWN_CONFIG_RE.search(message) if ref is None else None
    if ref is None and m is None:
        return message
    try:
        ref = str(ast.literal_eval(m.group(1))) if m is not None else str(ref)
        disc = discover(root_of(args))
    except (ValueError, SyntaxError, RootNotFound, OSError):
        return message
    if resolve_id(disc, ref) is not None:
        return message
    close = close_ids(ref, [c.id for c in disc.configs])
    return f"{message}; did you mean {' or '.join(close)}?" if close else message


def close_ids(ref: str, ids: list[str]) -> list[str]:
    """The ids closest to ``ref`` (difflib): among the full ids, or the short ones (``wgrad/11``)
    when ``ref`` is short."""
    if not _SHORT_ID_RE.match(ref):
        return difflib.get_close_matches(ref, ids, n=3)
    short = {_SHORT_ID_RE.match(i).group(0): i for i in ids if _SHORT_ID_RE.match(i)}  # type: ignore[union-attr]
    return [short[s] for s in difflib.get_close_matches(ref, list(short), n=3)]


_SHORT_ID_RE = re.compile(r"^[^/]+/\d+(?=-|$)")


def run(args: argparse.Namespace, early: Pool | None = None) -> int:
    """The parsed command; ``early``: the workers :func:`cli.early_pool` started for it."""
    try:
        return _run_command(args, early)
    except (UsageError, DiffUsageError, JunitUnavailable, WriteError) as e:
        print(f"rocke-parity {args.command}: {did_you_mean(args, str(e))}", file=sys.stderr)
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
