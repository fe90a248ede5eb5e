"""``rocke-parity`` (``main``) and ``parity-diff`` (``diff_main``).

Exit statuses: :mod:`rocke_py.parity.commands.exits`.

This module is the parser and the entry points, and imports little: the commands themselves
(:mod:`commands`) are imported after the parse. For the commands that run the gate, the
workers are started first (:func:`early_pool`), so that they load the engines while this
process imports the commands' modules: that import and the engines' were one after the other,
about 0.05 s of a gate's fixed cost.
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import shlex
import sys
from typing import Callable, Sequence

from rocke_py.facts import FLAVORS, MODES
from rocke_py.fuzz import command as fuzz_command
from rocke_py.parity.commands.exits import EXIT_USAGE, GATE_COMMANDS
from rocke_py.parity.run import tree
from rocke_py.parity.run.engines import DEFAULT_FLAVOR, JOBS_PER_CONFIG, EngineSpec
from rocke_py.parity.run.root import resolve_root
from rocke_py.parity.run.runner import Pool, pool_size
from rocke_py.parity.store.objects import text_store

#: Options prepended to every subcommand's arguments, as PYTEST_ADDOPTS is to pytest's.
ADDOPTS_ENV = "ROCKE_PARITY_ADDOPTS"
#: The longest seconds option: a week (a wait past ~24 days overflows the selector's poll).
MAX_SECONDS = 7 * 24 * 3600.0
#: The shortest time budget (fuzz): the workers take about that to start, so less runs no case.
MIN_BUDGET = 1.0


def seconds(floor: float = 0.0) -> Callable[[str], float]:
    """The argparse type of every seconds option: a finite number above ``floor`` (at least
    ``floor`` when it is not 0) and at most :data:`MAX_SECONDS`. NaN compares false with
    everything, so a bare ``<= 0`` check let it through and disabled the limit."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value <= 0 or value < floor or value > MAX_SECONDS:
            least = f"at least {floor:g}" if floor > 0 else "more than 0"
            raise argparse.ArgumentTypeError(
                f"{text!r} is not a number of seconds: give {least} and at most {MAX_SECONDS:g} (a week)"
            )
        return value

    return parse


class _Version(argparse.Action):
    """--version: the package version, the engines' build ids and the fingerprint of the tree found
    from the working directory (or --root, when given before --version), computed only when asked."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from rocke_py.parity.run.version import version_line

        print(version_line(parser.prog.split()[0], resolve_root(getattr(namespace, "root", None))))
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
    p.set_defaults(usage_parser=p)  # an unknown option is answered with this subcommand's usage


def _switches(p: argparse.ArgumentParser, *switches: tuple[str, str]) -> None:
    """On/off options, each (its flag, its help)."""
    for flag, help in switches:
        p.add_argument(flag, action="store_true", help=help)


def _outputs(p: argparse.ArgumentParser, *outputs: tuple[str, str]) -> None:
    """Options that name a FILE to write, each (its flag, its help)."""
    for flag, help in outputs:
        p.add_argument(flag, metavar="FILE", help=help)


def _count(text: str) -> int:
    """``--durations N``: a whole number, 0 or more."""
    try:
        n = int(text)
    except ValueError:
        n = -1
    if n < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of jobs: give 0 (every job) or more")
    return n


def _selection_options(p: argparse.ArgumentParser, with_reports: bool) -> None:
    p.add_argument("config_ids", nargs="*", default=[], metavar="ID", help="only these configs (as --config)")
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
    p.add_argument("--timeout", type=seconds(), default=60.0, metavar="S", help="per-job limit in seconds (default 60)")
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
        metavar="EXPR",
        help="only jobs whose label ('wgrad/11-x ll llvm20') matches: case-insensitive substrings or globs "
        "with and/or/not/parentheses (repeatable: any)",
    )
    g.add_argument("--collect-only", action="store_true", help="list the selected jobs, one per line, and run nothing")
    g.add_argument("-v", "--verbose", action="count", default=0, help="a line per job, passing ones too")
    g.add_argument("-q", "--quiet", action="count", default=0, help="only the failures and the final line")
    g.add_argument(
        "--durations", type=_count, metavar="N", help="after the summary, the N slowest jobs and their seconds (0: all)"
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
    _outputs(
        mg,
        ("--json", "write the merged JSON report (- for standard output)"),
        ("--junit", "write one JUnit XML report (- for standard output)"),
    )
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
    n.add_argument(
        "--unset",
        dest="unsets",
        action="append",
        default=[],
        metavar="key",
        help="remove a key the source sets, so that it takes its default; repeatable",
    )
    n.add_argument("--slug", metavar="S")
    n.add_argument(
        "--expect",
        metavar="emit|reject:CODE",
        help="required to write the file; without it the observed outcome is proposed",
    )
    n.add_argument("-j", "--jobs", type=int, default=None, help=argparse.SUPPRESS)
    n.add_argument("--timeout", type=seconds(), default=60.0, help=argparse.SUPPRESS)
    _common(n)

    go = sub.add_parser(
        "golden",
        help="check or update parity_configs/golden.json; golden diff [REV]: what it moved since REV",
        epilog="rocke-parity golden diff [REV]: what golden.json moved since REV (default HEAD)",
    )
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
    _golden_diff_parser(sub)

    ck = sub.add_parser(
        "check-llvm",
        help="compile each emitting config's ll (llvm22) with llvmlite for its arch "
        "and check its isa list and transpose reads",
    )
    ck.add_argument("ids", nargs="*", metavar="ID")
    ck.add_argument("-j", "--jobs", type=int, default=None, help="parallel compiles (default: one per core)")
    ck.add_argument("--timeout", type=seconds(), default=300.0, help="seconds per compile (default 300)")
    ck.add_argument(
        "--histogram",
        action="store_true",
        help="print how often each instruction occurs in each kernel (and the isa list the kernel suggests)",
    )
    _common(ck)
    _numerics_parser(sub)
    _coverage_parser(sub)

    fz = sub.add_parser("fuzz", help="differential fuzzing of the two engines; each failure reduced to a config")
    fuzz_command.add_options(fz)
    _common(fz)
    _gaps_parser(sub)
    return ap


#: ``golden diff [REV]`` is parsed as its own subcommand: ``golden`` takes config ids as arguments
GOLDEN_DIFF = "golden-diff"


def _golden_diff_parser(sub) -> None:
    """``golden diff [REV]``: what golden.json moved since REV, with the text diff of each moved
    emission. No help line of its own: the command line reaches it as ``golden diff``."""
    gd = sub.add_parser(
        GOLDEN_DIFF,
        prog="rocke-parity golden diff",
        description="what parity_configs/golden.json moved since a git revision: added, removed and "
        "changed entries, and for a changed emission the canonical diff of its texts",
    )
    gd.add_argument("rev", nargs="?", default="HEAD", metavar="REV", help="the git revision (default HEAD)")
    _common(gd)
    gd.set_defaults(command="golden diff")


def _gaps_parser(sub) -> None:
    """``gaps add|remove``: known_gaps.toml edited through its writer (rocke_py.parity.commands.gaps_edit)."""
    ga = sub.add_parser("gaps", help="add or remove parity_configs/known_gaps.toml entries")
    action = ga.add_subparsers(dest="gaps_action", metavar="add|remove", required=True)
    add = action.add_parser("add", help="list the config's failing jobs, with their status and evidence")
    add.add_argument("target", metavar="ID")
    add.add_argument("--mode", choices=MODES, help="only this mode's jobs (default: every failing job)")
    add.add_argument("--flavor", choices=FLAVORS, help="only this flavor of mode ll")
    add.add_argument("--reason", required=True, help="why the job fails today, and what will remove the entry")
    add.add_argument(
        "--timeout", type=seconds(), default=60.0, metavar="S", help="per-job limit in seconds (default 60)"
    )
    _common(add)
    rm = action.add_parser("remove", help="delete the config's entries (of this mode and flavor)")
    rm.add_argument("target", metavar="ID")
    rm.add_argument("--mode", choices=MODES, help="only entries of this mode")
    rm.add_argument("--flavor", choices=(*FLAVORS, "-", "*"), help="only entries with this flavor (- or * included)")
    _common(rm)


def _coverage_parser(sub) -> None:
    cv = sub.add_parser(
        "coverage",
        help="which combinations of the spec's axes the configs reach, at which oracle's stratum (docs/coverage.md)",
    )
    _outputs(
        cv,
        ("--json", "every tuple, its stratum and feasibility, as JSON (- for stdout)"),
        ("--svg", "a heatmap of the axis pairs, for a pull request page"),
    )
    _switches(
        cv,
        ("--all", "list every axis pair, not only those with gaps"),
        (
            "--propose",
            "print the rocke-parity new commands of the fewest configs that reach the missing feasible tuples",
        ),
        ("--no-numerics", "with --propose: check candidates by the engines only (faster)"),
    )
    _common(cv)


# ---- numerics: the kernels run on the CPU executor against NumPy references


def _numerics_parser(sub) -> None:
    nu = sub.add_parser(
        "numerics",
        help="run each emitting config's kernel on the CPU executor and compare it with a float64 NumPy convolution",
    )
    nu.add_argument("ids", nargs="*", metavar="ID")
    nu.add_argument("--engine", choices=("py", "c"), default="py", help="the engine whose IR is run (default py)")
    nu.add_argument("--json", metavar="FILE", help="write the outcomes as JSON (- for standard output)")
    _switches(
        nu,
        ("--small", "only the small and edge sizes (not the shipped one)"),
        ("--real", "normally distributed inputs, compared within a dtype bound"),
        ("--shrink", "run a size over the budget smaller instead of skipping it"),
    )
    nu.add_argument(
        "--level",
        choices=("ir", "ll", "both"),
        default="both",
        help="run the kernel IR, the AMDGPU ll (every flavor at the small size), or both in lockstep (default both)",
    )
    nu.add_argument("-j", "--jobs", type=int, default=None, metavar="N", help="worker processes (default 2)")
    _common(nu)


def _diff_options(d: argparse.ArgumentParser) -> None:
    d.add_argument("target", metavar="ID")
    d.add_argument("--mode", choices=MODES, help="only this mode (default: every mode both engines implement)")
    d.add_argument("--flavor", choices=FLAVORS, help="only this flavor of mode ll (default: every flavor)")
    d.add_argument("--context", type=int, default=3, metavar="N", help="lines of context (default 3)")
    d.add_argument("--canonical", action="store_true", help="renumber SSA %%names on both sides before diffing")
    d.add_argument("--timeout", type=seconds(), default=60.0, metavar="S", help="per-job limit in seconds (default 60)")
    d.add_argument(
        "--save",
        metavar="DIR",
        help="write both outputs of every job (and their canonical renumberings) under DIR for a diff tool",
    )
    _common(d)


def early_pool(args: argparse.Namespace) -> Pool | None:
    """The gate's workers, started before the commands are imported, for a command that runs
    the gate; None for the others, and where an option the command checks is wrong (it then
    reports it before any worker runs) or no root is found. The gate uses them only when they
    are the workers it needs (``gate.adopt_pool``), and this module closes them in any case."""
    if args.command not in GATE_COMMANDS or (args.jobs is not None and args.jobs < 1) or args.timeout <= 0:
        return None
    if getattr(args, "collect_only", False):
        return None  # nothing runs
    try:
        spec = EngineSpec.parse(args.engines) if args.engines else EngineSpec()
    except ValueError:
        return None
    root = resolve_root(args.root)
    if root is None:
        return None
    try:
        tree.ensure_c_engine(spec.c_emit)  # built here once, before the workers load it
    except ImportError:
        return None  # the command reports the build error itself
    configs = len(args.config)
    size = pool_size(args.jobs, configs * JOBS_PER_CONFIG if configs else None)
    return Pool(spec, size, args.timeout, text_store(root)).launch()


def main(argv: Sequence[str] | None = None, replace_process: bool = False) -> int:
    args_list = list(argv) if argv is not None else sys.argv[1:]
    delegated = _delegate(args_list, replace_process)
    if delegated is not None:
        return delegated
    try:
        args = parse(args_list)
    except SystemExit as e:  # argparse: --help (0) or a usage error (2)
        return int(e.code) if isinstance(e.code, int) else EXIT_USAGE
    pool = early_pool(args)
    try:
        from rocke_py.parity.commands import commands  # while the early workers load the engines

        return commands.run(args, pool)
    finally:
        if pool is not None:
            pool.close()


def parse(argv: list[str]) -> argparse.Namespace:
    """The command line with ROCKE_PARITY_ADDOPTS prepended to the subcommand's arguments; an
    unknown option is reported with the subcommand's usage (argparse's top level would print its
    own). SystemExit as argparse raises it."""
    parser = build_parser()
    added = _addopts()
    args, extra = parser.parse_known_args(_with_addopts(parser, _golden_diff_words(argv), added))
    sub: argparse.ArgumentParser = getattr(args, "usage_parser", parser)
    if extra:
        if added:
            print(f"rocke-parity: note: {ADDOPTS_ENV} adds {shlex.join(added)}", file=sys.stderr)
        sub.error(f"unrecognized arguments: {' '.join(extra)}")
    if hasattr(args, "config_ids"):  # gate wgrad/11 = gate --config wgrad/11
        args.config = [*args.config_ids, *args.config]
    return args


def _golden_diff_words(argv: list[str]) -> list[str]:
    """``golden diff ...`` as the parser's ``golden-diff ...`` (the command is the first word that
    is no option)."""
    for i, word in enumerate(argv):
        if not word.startswith("-"):
            if word == "golden" and argv[i + 1 : i + 2] == ["diff"]:
                return [*argv[:i], GOLDEN_DIFF, *argv[i + 2 :]]
            break
    return argv


def _addopts() -> list[str]:
    text = os.environ.get(ADDOPTS_ENV, "")
    try:
        return shlex.split(text)
    except ValueError as e:
        print(f"rocke-parity: error: {ADDOPTS_ENV}={text!r}: {e}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE) from None


def _with_addopts(parser: argparse.ArgumentParser, argv: list[str], added: list[str]) -> list[str]:
    """``argv`` with ``added`` after the subcommand's name (``gaps add``: after both words)."""
    if not added:
        return argv
    names = _subcommands(parser)
    for i, word in enumerate(argv):
        if word in names:
            inner = _subcommands(names[word])
            at = i + 2 if i + 1 < len(argv) and argv[i + 1] in inner else i + 1
            return [*argv[:at], *added, *argv[at:]]
        if not word.startswith("-"):
            break
    return argv


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _delegate(argv: list[str], replace_process: bool) -> int | None:
    """When the tree this command works on has its own package and it is not this one, that
    tree's harness runs the command (:mod:`rocke_py.parity.run.tree`): its exit status, else None."""
    try:
        root = tree.delegation(argv)
    except tree.TreeError as e:
        print(f"rocke-parity: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    if root is None:
        return None
    return tree.run_delegated(root, argv, replace_process)


def entry() -> int:
    """``rocke-parity`` as a program (the console script, ``python -m rocke_py.parity``): :func:`main`
    (which hands the process over to the tree's own harness where that is another), then what it
    leaves is frozen for the collector, so that the interpreter's exit does not walk every job's
    result once more (about 20 ms of a shipped gate; atexit handlers and file flushes run as
    before). Not in :func:`main`, which tests call in their own process."""
    status = main(replace_process=True)
    gc.freeze()
    return status


def diff_main(argv: Sequence[str] | None = None) -> int:
    """``parity-diff ID [...]`` = ``rocke-parity diff ID [...]``."""
    args = list(argv) if argv is not None else sys.argv[1:]
    return main(["diff", *args], replace_process=argv is None)
