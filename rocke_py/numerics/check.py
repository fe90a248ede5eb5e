"""One config through one engine: read the problem from the config itself (problem.py), emit
the engine's spec (compared with that reading) and IR, run the kernel over its whole grid,
compare with the reference (docs/numerics.md §1)."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from rocke_py.exec.executor import ExecError, RunResult, run_kernel
from rocke_py.exec.fp import to_f64
from rocke_py.exec.ll_executor import run_ll
from rocke_py.exec.ll_reader import LlReadError
from rocke_py.exec.reader import ReadError
from rocke_py.exec.spec_text import spec_fields
from rocke_py.facts import FLAVORS
from rocke_py.parity.store._toml import tomllib

from .inputs import Case, build_case, parts_of, reduction, runtime_degrees, shapes_of
from .lockstep import Follower, Recorder
from .problem import Problem, ProblemError, disagreements, read_problem
from .variants import check_sizes, resize

FLAVOR = "llvm22"  # modes spec and ir do not depend on the flavor
#: what --level may ask for (the ll level runs every flavor of rocke_py.facts.FLAVORS)
LEVELS = ("ir", "ll", "both")
#: the sizes at which the ll level runs every flavor; the others run the llvm22 ll only. The
#: flavors differ only in size-free lines (the datalayout, the resource declaration and
#: calls, the zext of num_records, the capture spelling: docs/lowering.md §8), so one size
#: runs each flavor's own module, and the others the flavor that check-llvm compiles
EVERY_FLAVOR_AT = ("small",)
#: a run above any bound is reported too large and skipped (docs/numerics.md §2.2): the
#: multiply-adds of the convolution (output elements × reduction length), about 2× the
#: largest shipped config, and the elements of all its buffers (the executor holds each
#: several times over, the reference in float64)
MAX_MULTIPLY_ADDS = 2_000_000_000
MAX_ELEMENTS = 16_000_000
#: ... and the threads the launch runs (workgroups × block size: the executor interprets every
#: op once per chunk of them), 20× the largest shipped launch (dgrad/06, 200,704)
MAX_THREADS = 4_000_000
#: how many runtime split-K degrees one size is launched with
MAX_DEGREES = 3

Mutate = Callable[[str], str]


@dataclass(frozen=True)
class Outcome:
    config: str
    engine: str
    size: str
    bitwise: bool  # integer inputs: the comparison is exact equality
    elements: int
    wrong: int  # elements outside the tolerance (bitwise: not equal), unwritten ones included
    max_error: float  # over the written elements
    unwritten: int  # NaN left in a NaN-filled output
    hazards: tuple[str, ...]
    seconds: float
    thread_ops: int
    error: Optional[str] = None  # the config was rejected, or the executor could not run it
    mismatch: tuple[str, ...] = ()  # where the engine's spec disagrees with the config
    too_large: Optional[str] = None  # over the budget: not run
    label: str = ""  # which of the check sizes: shipped, small, edge
    level: str = "ir"  # what ran: "ir", or "ll <flavor>"
    lockstep: Optional[str] = None  # where the ll run departed from the IR run of the launch

    @property
    def ok(self) -> bool:
        return (
            self.error is None
            and self.lockstep is None
            and not self.mismatch
            and self.too_large is None
            and self.wrong == 0
            and self.unwritten == 0
            and not self.hazards
        )

    @property
    def skipped(self) -> bool:
        return self.too_large is not None


def emit_text(config: str, mode: str, engine: str, flavor: str = FLAVOR) -> str:
    """Mode `mode`'s text from the engine, or ValueError naming the rejection."""
    from rocke_py import engine as py_engine
    from rocke_py.engine.result import Emitted

    if engine == "py":
        out = py_engine.emit(config, mode, flavor)
    else:
        from rocke_py import cbridge  # only when asked: it needs the built extension

        out = cbridge.emit(config, mode, flavor)
    if not isinstance(out, Emitted):
        raise ValueError(f"{mode}: rejected {out.code}: {out.message}")
    return out.text


def compare(case: Case, got: np.ndarray) -> tuple[int, float, int]:
    """(wrong, max error over the written elements, unwritten)."""
    unwritten = int(np.isnan(got).sum()) if case.nan_filled else 0
    written = ~np.isnan(got)
    with np.errstate(invalid="ignore", over="ignore"):  # equal infinities are equal, not NaN apart
        err = np.where(written & (got != case.want), np.abs(got - case.want), 0.0)
    max_error = float(err.max()) if err.size else 0.0
    bad = err > case.tolerance if case.tolerance is not None else err > 0
    wrong = int((bad | ~written).sum())
    return wrong, max_error, unwritten


def check_kernel(name: str, engine: str, case: Case, ir: str, start: float, check_hazards: bool = True) -> Outcome:
    """Runs `ir` on `case` and compares."""
    result = run_kernel(ir, case.buffers, case.scalars, split_degree=case.split_degree, check_hazards=check_hazards)
    return judged(name, engine, case, result, start)


def judged(name: str, engine: str, case: Case, result: RunResult, start: float, level: str = "ir") -> Outcome:
    """The outcome of one run of `case`: its output against the reference, its hazards."""
    got = to_f64(result.buffers[case.output], case.out_elem)
    wrong, max_error, unwritten = compare(case, got)
    return Outcome(
        name,
        engine,
        case.size(),
        case.tolerance is None,
        got.size,
        wrong,
        max_error,
        unwritten,
        tuple(h.message() for h in result.hazards),
        time.perf_counter() - start,
        result.stats.thread_ops,
        level=level,
    )


def over_budget(p: Problem, max_macs: int = MAX_MULTIPLY_ADDS, max_threads: int = MAX_THREADS) -> Optional[str]:
    """Why the problem is too large to run (more than `max_macs` multiply-adds, MAX_ELEMENTS
    buffer elements or `max_threads` threads at the largest launch), or None."""
    shapes = shapes_of(p)
    macs = int(np.prod(shapes[2])) * reduction(p.family, p.conv)[0]
    elements = sum(int(np.prod(s)) for s in shapes)
    degrees = runtime_degrees(p) if p.split_k == 0 else (max(1, p.split_k),)
    threads = p.workgroups(max(degrees)) * p.block_size
    if macs > max_macs:
        return f"{macs:,} multiply-adds, over the budget of {max_macs:,}"
    if elements > MAX_ELEMENTS:
        return f"{elements:,} buffer elements, over the budget of {MAX_ELEMENTS:,}"
    if threads > max_threads:
        return f"{threads:,} threads, over the budget of {max_threads:,}"
    return None


def failed(name: str, engine: str, start: float, real: bool, size: str = "?", **why) -> Outcome:
    return Outcome(name, engine, size, not real, 0, 0, 0.0, 0, (), time.perf_counter() - start, 0, **why)


def check_config(name: str, config: str, **options: Any) -> Outcome:
    """The config (its text) checked at its own size at the IR level: the first outcome of
    :func:`check_levels`, which takes the same ``options`` (``engine``, ``real``, ``seed``,
    ``ir`` to replace the emitted IR, ``mutate`` to edit it, ``degree`` for the launch's runtime
    split-K degree, ``max_macs``, ``max_threads``)."""
    return check_levels(name, config, **options)[0]


def check_levels(
    name: str,
    config: str,
    engine: str = "py",
    real: bool = False,
    seed: int = 0,
    ir: Optional[str] = None,
    degree: Optional[int] = None,
    mutate: Optional[Mutate] = None,
    max_macs: int = MAX_MULTIPLY_ADDS,
    max_threads: int = MAX_THREADS,
    level: str = "ir",
    flavors: tuple[str, ...] = FLAVORS,
    ll_mutate: Optional[Mutate] = None,
) -> list[Outcome]:
    """One launch of the config at each level asked: the IR (level "ir"), the `ll` of each
    flavor ("ll"), or both, where each `ll` run also follows the IR run in lockstep. One
    Outcome per run; a problem before any run (a rejection, a spec mismatch, the budget) is
    one Outcome. `ll_mutate` edits each `ll` text (a seeded fault of the lowering)."""
    start = time.perf_counter()
    first = "ir" if level != "ll" else f"ll {flavors[0] if flavors else FLAVOR}"
    try:
        fields = spec_fields(emit_text(config, "spec", engine))  # a rejection stops here
        problem = read_problem(config)
        mismatch = disagreements(problem, fields)  # before the budget: a misread config is reported at any size
        if mismatch:
            return [failed(name, engine, start, real, mismatch=tuple(mismatch), level=first)]
        too_large = over_budget(problem, max_macs, max_threads)
        if too_large is not None:
            return [failed(name, engine, start, real, too_large=too_large, level=first)]
        if problem.split_k == 0 and degree is None:
            degree = runtime_degrees(problem)[0]
        with np.errstate(over="ignore", invalid="ignore"):  # rounding to dtype_d may overflow to inf
            case = build_case(problem, real, seed, degree)
    except (ValueError, ExecError, ReadError, ProblemError, OverflowError) as e:
        return [failed(name, engine, start, real, error=str(e), level=first)]
    except MemoryError:
        return [failed(name, engine, start, real, error=OUT_OF_MEMORY, level=first)]
    out = []
    recorder = Recorder() if level == "both" else None
    if level in ("ir", "both"):
        out.append(run_ir_level(name, config, engine, case, ir, mutate, recorder, real))
        if not out[-1].ok and out[-1].error is not None:
            recorder = None  # nothing to follow
    if level in ("ll", "both"):
        grid = problem.grid(parts_of(problem, degree))
        for flavor in flavors:
            out.append(
                run_ll_level(
                    name,
                    config,
                    engine,
                    case,
                    flavor,
                    problem.arch,
                    grid,
                    problem.block_size,
                    ll_mutate,
                    recorder,
                    real,
                )
            )
    return out


OUT_OF_MEMORY = "out of memory (a smaller size fits: --shrink)"


def run_ir_level(
    name: str,
    config: str,
    engine: str,
    case: Case,
    ir: Optional[str],
    mutate: Optional[Mutate],
    recorder: Optional[Recorder],
    real: bool,
) -> Outcome:
    start = time.perf_counter()
    try:
        kernel = ir if ir is not None else emit_text(config, "ir", engine)
        if mutate is not None:
            kernel = mutate(kernel)
        result = run_kernel(kernel, case.buffers, case.scalars, split_degree=case.split_degree, tracer=recorder)
        return judged(name, engine, case, result, start)
    except (ValueError, ExecError, ReadError, OverflowError) as e:
        return failed(name, engine, start, real, error=str(e), size=case.size())
    except MemoryError:
        return failed(name, engine, start, real, error=OUT_OF_MEMORY, size=case.size())


def run_ll_level(
    name: str,
    config: str,
    engine: str,
    case: Case,
    flavor: str,
    arch: str,
    grid: tuple[int, int, int],
    block: int,
    mutate: Optional[Mutate],
    recorder: Optional[Recorder],
    real: bool,
) -> Outcome:
    """The `ll` of one flavor run on `case` with the launch the config's own reading gives
    (grid, block), and, when the IR run was recorded, followed in lockstep."""
    start = time.perf_counter()
    level = f"ll {flavor}"
    try:
        text = emit_text(config, "ll", engine, flavor)
        if mutate is not None:
            text = mutate(text)
        follower = Follower(recorder) if recorder is not None else None
        result = run_ll(text, arch, case.buffers, case.scalars, grid, block, tracer=follower)
        outcome = judged(name, engine, case, result, start, level)
        if follower is not None and follower.finish() is not None:
            outcome = dataclasses.replace(outcome, lockstep=follower.departure)
        return outcome
    except (ValueError, ExecError, LlReadError, OverflowError) as e:
        return failed(name, engine, start, real, error=str(e), size=case.size(), level=level)
    except MemoryError:
        return failed(name, engine, start, real, error=OUT_OF_MEMORY, size=case.size(), level=level)


def spread(values: tuple[int, ...], most: int) -> tuple[int, ...]:
    """At most `most` of `values`: the first, the last and the middle ones."""
    if len(values) <= most:
        return values
    picks = {values[0], values[-1], values[len(values) // 2]}
    return tuple(sorted(picks))[:most]


def launches(config: str) -> tuple[Optional[int], ...]:
    """The runtime split-K degrees a size is launched with ((None,): not a runtime kernel)."""
    try:
        problem = read_problem(config)
    except ProblemError:
        return (None,)
    if problem.split_k != 0:
        return (None,)
    return spread(runtime_degrees(problem), MAX_DEGREES) or (None,)


def shrunk(config: str) -> str:
    """The config with its batch, then its input extents, halved until it fits the budget."""
    text = config
    for key in ("N", "Hi", "Wi", "Di", "N", "Hi", "Wi", "Di") * 8:
        problem = read_problem(text)
        if over_budget(problem) is None:
            return text
        value = tomllib.loads(text)["problem"].get(key)
        if isinstance(value, int) and value > 1:
            text = resize(text, {key: -(-value // 2)})
    return text


def check_all_sizes(
    name: str,
    config: str,
    engine: str = "py",
    small: bool = False,
    real: bool = False,
    shrink: bool = False,
    flavors: tuple[str, ...] = FLAVORS,
    **options: Any,
) -> list[Outcome]:
    """The config checked at each of its check sizes (variants.check_sizes) and, for a runtime
    split-K kernel, at several degrees each, at each level asked (check_levels): one Outcome
    per run; the `ll` of every flavor runs at the EVERY_FLAVOR_AT sizes, the llvm22 `ll` at the
    others. `shrink`: a size over the budget runs shrunk (label `shrunk`) instead of being
    skipped. `options` are check_levels' keywords (seed, mutate, the budget, level, ll_mutate)."""
    out = []
    for label, text in check_sizes(config, small):
        if shrink:
            try:
                if over_budget(read_problem(text)) is not None:
                    label, text = "shrunk", shrunk(text)
            except ProblemError:
                pass
        for degree in launches(text):
            at = flavors if label in EVERY_FLAVOR_AT else tuple(f for f in flavors if f == FLAVOR) or flavors
            runs = check_levels(name, text, engine, real, degree=degree, flavors=at, **options)
            out.extend(dataclasses.replace(o, label=label) for o in runs)
    return out
