"""The commands that run the gate and judge its run: ``gate`` (and ``--collect-only``),
``golden`` (``--check``, ``--update``, ``diff``) and ``merge``. They get the workers the parser
started for them (``early``) and hand them to :func:`rocke_py.parity.judge.gate.run_gate`.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Callable, Sequence

from rocke_py.parity.commands.common import csv_items, engines_of, root_of
from rocke_py.parity.commands.exits import EXIT_FAIL, EXIT_OK, EXIT_USAGE
from rocke_py.parity.inputs.configs import discover
from rocke_py.parity.inputs.shards import Shard
from rocke_py.parity.judge import golden as golden_mod
from rocke_py.parity.judge import golden_update, lastrun
from rocke_py.parity.judge.compare import GOLDEN_STATUSES, Status
from rocke_py.parity.judge.gate import GateRun, run_gate
from rocke_py.parity.judge.jobs import Selection, UsageError
from rocke_py.parity.report.bounds import bound_doc
from rocke_py.parity.report.report import doc_text, junit_text, render, report_doc
from rocke_py.parity.report.terminal import Style, failure_line, make_progress, render_doc, use_colour
from rocke_py.parity.run.engines import FLAVORLESS_CALL_FLAVOR, EngineSpec, call_engine, load_side
from rocke_py.parity.run.root import RootNotFound
from rocke_py.parity.run.runner import Pool
from rocke_py.parity.store.fileio import STDOUT, WriteError, check_destination, write_output


def _selection(args: argparse.Namespace) -> Selection:
    fams = tuple(f for item in args.family for f in csv_items(item))
    modes = tuple(csv_items(args.mode)) if args.mode else None
    if modes is not None and not modes:
        raise UsageError("--mode needs at least one mode")
    flavors = None if args.flavor.strip() == "all" else tuple(csv_items(args.flavor))
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
    """--changed or --paths: the change affects no config, engine or harness file, and the
    run-level checks (which run whatever the change selects) pass (exit 0)."""


def _changed(
    args: argparse.Namespace, root: Path, sel: Selection, spec: EngineSpec
) -> tuple[Selection, list[str], str | None]:
    """--changed / --paths: the selection narrowed to what the change can affect, and its note.

    The selection may hold no config: the gate then runs its run-level checks only (a deleted
    config's golden entries, a stray file), never the engines."""
    from rocke_py.parity.inputs.changes import ChangeError, affected, changed_since, config_links, given_paths

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
    configs = discover(root).configs
    links = config_links(((c.id, c.path) for c in configs), root)
    aff = affected(files, spec, root, {c.id for c in configs}, links)
    what = f"--changed {rev}" if rev is not None else f"--paths ({len(files)} file(s))"
    if aff.nothing:
        note = f"{what}: {len(files)} changed file(s), none a config, an engine or a harness file"
        return dataclasses.replace(sel, configs=(), changed=True), [note], None
    if aff.configs is not None:
        sel = dataclasses.replace(sel, configs=aff.configs, changed=True)
    scope = "every config" if aff.configs is None else f"{len(aff.configs)} config(s)"
    return sel, [f"{what}: {'; '.join(aff.why)}: {scope}"], aff.reuse


def _patterns(args: argparse.Namespace) -> tuple[str, ...]:
    """The -k expressions, each checked before anything runs (a malformed one: exit 2)."""
    from rocke_py.parity.inputs.keywords import ExpressionError, compile_expression

    patterns = tuple(getattr(args, "patterns", ()))
    for text in patterns:
        try:
            compile_expression(text)
        except ExpressionError as e:
            raise UsageError(str(e)) from None
    return patterns


def _gate_selection(args: argparse.Namespace, root: Path, spec: EngineSpec) -> tuple[Selection, list[str], str | None]:
    """The selection of the gate's options (--last-failed's jobs, -k, --shard, --changed): the
    selection, its notes and the engine whose outputs come from the cache."""
    only, _ = _last_failed(args, root)
    sel = dataclasses.replace(_selection(args), patterns=_patterns(args), only_jobs=only, shard=_shard(args))
    return _changed(args, root, sel, spec)


def _run(args: argparse.Namespace, record: bool = True, early: Pool | None = None) -> GateRun:
    root = root_of(args)
    _, first = _last_failed(args, root)
    spec = engines_of(args)
    sel, notes, reuse = _gate_selection(args, root, spec)
    reuse = getattr(args, "reuse", None) or reuse
    run = run_gate(root, sel, spec, args.jobs, args.timeout, make_progress(), first, _maxfail(args), reuse, early)
    if sel.changed and not run.configs and run.passed:
        raise NothingToGate(f"{notes[0]} (the run-level checks pass)")
    run = dataclasses.replace(run, notes=[*notes, *run.notes])
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
    review: Callable[[dict], list[str]] | None = None,
) -> int:
    """Each requested report of ``doc``; EXIT_USAGE when one cannot be written, else EXIT_OK."""
    from rocke_py.parity.report.summary import markdown

    status = EXIT_OK
    for opt, d in dests:
        try:
            if opt == "--json":
                text = doc_text(doc)
            elif opt == "--junit":
                text = junit_text(doc)
            else:
                text = markdown(doc, golden, base, args.base_golden or "", review)
            write_output(d, text.encode("utf-8"), opt)
        except WriteError as e:
            print(f"rocke-parity {args.command}: {e}", file=sys.stderr)
            status = EXIT_USAGE
    return status


def collect_only(args: argparse.Namespace) -> int:
    """``gate --collect-only``: the jobs the gate would run, a line each (as a failure line names
    them), and their count; no engine runs and nothing is recorded. The engines are loaded here
    for the modes they implement."""
    from rocke_py.facts import FLAVORS
    from rocke_py.parity.judge.gate import load_inputs
    from rocke_py.parity.judge.jobs import check_names, plan_jobs, run_modes
    from rocke_py.parity.run.engines import load_engines
    from rocke_py.parity.run.work import EngineInfo

    root = root_of(args)
    spec = engines_of(args)
    sel, _, _ = _gate_selection(args, root, spec)
    check_names(sel)
    inputs = load_inputs(root, sel, spec, discover(root))
    engines = load_engines(spec)
    modes, _ = run_modes(EngineInfo(engines.py_modes, engines.c_modes), sel)
    plan = plan_jobs(sel, inputs.configs, modes, sel.flavors or FLAVORS, root, inputs.golden)
    for j in plan.mine:
        print(j.label())
    print(f"{len(plan.mine)} job(s) selected; nothing run (--collect-only)")
    return EXIT_OK


def _style(args: argparse.Namespace, out) -> Style:
    return Style(args.verbose - args.quiet, args.durations, use_colour(out))


def cmd_gate(args: argparse.Namespace, early: Pool | None = None) -> int:
    if args.collect_only:
        return collect_only(args)
    dests = _report_destinations(args)  # a destination that cannot be written: exit 2 before running
    base = _base_golden(args)
    try:
        run = _run(args, early=early)
    except NothingToGate as e:
        print(f"rocke-parity gate: nothing to gate: {e}")
        return EXIT_OK
    # a report on stdout gets stdout to itself: the human summary goes to stderr
    out = sys.stderr if any(d == STDOUT for _, d in dests) else sys.stdout
    if not dests:
        render(run, out, style=_style(args, out))
        return EXIT_OK if run.passed else EXIT_FAIL
    doc = bound_doc(report_doc(run, args.json_full), dests)  # texts cut, the whole kept beside the report
    render_doc(doc, out, style=_style(args, out))
    review = golden_update.drift_reviews(run)  # the summary's text diff of each drifted entry
    written = _write_reports(args, dests, doc, run.manifest if run.golden_ok else None, base, review)
    return written if written != EXIT_OK else (EXIT_OK if run.passed else EXIT_FAIL)


def cmd_merge(args: argparse.Namespace) -> int:
    from rocke_py.parity.report.merge import MergeError, merge_reports

    dests = _report_destinations(args)
    base = _base_golden(args)
    try:
        doc = bound_doc(merge_reports(list(args.reports)), dests)
    except MergeError as e:
        print(f"rocke-parity merge: refused: {e}", file=sys.stderr)
        return EXIT_USAGE
    render_doc(doc, sys.stderr if any(d == STDOUT for _, d in dests) else sys.stdout, "merge")
    golden, review = None, None
    try:
        root = root_of(args)
        review = golden_update.stored_reviews(root)  # the drifted entries' texts, where this tree kept them
        if base is not None:
            golden = golden_mod.load(golden_mod.golden_path(root))
    except (golden_mod.GoldenError, RootNotFound):
        golden = None
    written = _write_reports(args, dests, doc, golden, base, review)
    return written if written != EXIT_OK else (EXIT_OK if doc["passed"] else EXIT_FAIL)


def cmd_golden(args: argparse.Namespace, early: Pool | None = None) -> int:
    run = _run(args, record=args.check, early=early)
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
    golden_update.remember_texts(run, outputs, manifest, cache, changes)
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
        for line in ch.lines():  # a moved emission: its text diff under its line
            print(line, file=out)
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


def cmd_golden_diff(args: argparse.Namespace) -> int:
    """``golden diff [REV]``: golden.json at REV against the working tree's, entry by entry; a
    changed emission with its canonical text diff when both texts can be had. Exit 0; a bad
    revision or an unreadable manifest exit 2."""
    root = root_of(args)
    try:
        base = golden_mod.at_revision(root, args.rev)
        now = golden_mod.load(golden_mod.golden_path(root))
    except (golden_mod.RevisionError, golden_mod.GoldenError) as e:
        raise UsageError(str(e)) from None
    out = sys.stdout
    if not base.exists:
        print(f"note: {args.rev} has no golden.json: every entry is added", file=out)
    moved = golden_mod.moved_entries(base, now)
    if base.coverage != now.coverage and base.exists:
        was, got = (c.describe_record() if c else "none" for c in (base.coverage, now.coverage))
        print(f"coverage: {was} -> {got}", file=out)
    if not moved:
        print(f"golden.json: nothing moved since {args.rev} ({now.count()} entries)", file=out)
        return EXIT_OK
    texts = _TreeTexts(root, args)
    for cfg, key, a, b in moved:
        for line in _moved_entry(cfg, key, a, b, texts, args.rev):
            print(line, file=out)
    n_added = sum(1 for _, _, a, _ in moved if a is None)
    n_removed = sum(1 for _, _, _, b in moved if b is None)
    n_changed = len(moved) - n_added - n_removed
    print(
        f"golden.json: {len(moved)} entr{'y' if len(moved) == 1 else 'ies'} moved since {args.rev} "
        f"({n_added} added, {n_removed} removed, {n_changed} changed)",
        file=out,
    )
    return EXIT_OK


def _moved_entry(
    cfg: str, key: str, a: golden_mod.GoldenEntry | None, b: golden_mod.GoldenEntry | None, texts, rev: str
) -> list[str]:
    """An entry golden diff lists: its line and, for a changed emission, its review."""
    if a is None or b is None:
        return [f"{cfg} {key}: added: {b.short()}" if b is not None else f"{cfg} {key}: removed: was {a.short()}"]
    line = f"{cfg} {key}: changed: {a.short()} -> {b.short()}"
    if not (a.emits and b.emits):
        return [line]
    if a.sha256 == b.sha256:
        return [f"{line} (kernel name {a.kernel_name or '(none)'} -> {b.kernel_name or '(none)'})"]
    old = texts.stored(a.sha256)
    review = golden_mod.review_lines(old, texts.of(cfg, key, b) if old is not None else None, rev, "working tree")
    return [f"{line} ({b.bytes - a.bytes:+d} bytes)", *(f"    {r}" for r in review)]


class _TreeTexts:
    """The texts behind golden.json's entries: from the local object store, else (for the working
    tree's entries) by running this tree's py engine on the config; the engine is loaded once,
    when first needed."""

    def __init__(self, root: Path, args: argparse.Namespace) -> None:
        self.cache = golden_mod.ObjectCache(root)
        self.root, self.args = root, args
        self._emit = None
        self._configs: dict[str, bytes] | None = None

    def stored(self, sha: str) -> str | None:
        return self.cache.get(sha)

    def of(self, cfg: str, key: str, entry: golden_mod.GoldenEntry) -> str | None:
        text = self.cache.get(entry.sha256)
        if text is not None:
            return text
        if self._configs is None:
            self._configs = {c.id: c.data for c in discover(self.root).configs}
            self._emit, _ = load_side(engines_of(self.args, needs_c=False), "py")
        data = self._configs.get(cfg)
        if data is None:
            return None
        mode, _, flavor = key.partition(".")
        run, text = call_engine(self._emit, data, mode, flavor or FLAVORLESS_CALL_FLAVOR)
        return text if run.kind == "emitted" and run.sha256 == entry.sha256 else None
