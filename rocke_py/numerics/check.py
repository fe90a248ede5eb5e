"""One config through one engine: read the problem from the config itself (problem.py), emit
the engine's spec (compared with that reading) and IR, run the kernel over its whole grid,
compare with the reference (docs/numerics.md §1)."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from rocke_py.exec.executor import ExecError, run_kernel
from rocke_py.exec.fp import to_f64
from rocke_py.exec.reader import ReadError
from rocke_py.exec.spec_text import spec_fields
from rocke_py.parity._toml import tomllib

from .inputs import Case, build_case, reduction, runtime_degrees, shapes_of
from .problem import Problem, ProblemError, disagreements, read_problem
from .variants import check_sizes, resize

FLAVOR = "llvm22"  # modes spec and ir do not depend on the flavor
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

    @property
    def ok(self) -> bool:
        return (
            self.error is None
            and not self.mismatch
            and self.too_large is None
            and self.wrong == 0
            and self.unwritten == 0
            and not self.hazards
        )

    @property
    def skipped(self) -> bool:
        return self.too_large is not None


def emit_text(config: str, mode: str, engine: str) -> str:
    """Mode `mode`'s text from the engine, or ValueError naming the rejection."""
    from rocke_py import engine as py_engine
    from rocke_py.engine.result import Emitted

    if engine == "py":
        out = py_engine.emit(config, mode, FLAVOR)
    else:
        from rocke_py import cbridge  # only when asked: it needs the built extension

        out = cbridge.emit(config, mode, FLAVOR)
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


def failed(name: str, engine: str, start: float, real: bool, **why) -> Outcome:
    return Outcome(name, engine, "?", not real, 0, 0, 0.0, 0, (), time.perf_counter() - start, 0, **why)


def check_config(
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
) -> Outcome:
    """The config (its text) checked through `engine` at its own size; `ir` replaces the
    emitted IR, `mutate` edits it (a seeded fault); `degree` is the launch's runtime split-K
    degree (default: the first that `runtime_degrees` allows)."""
    start = time.perf_counter()
    try:
        fields = spec_fields(emit_text(config, "spec", engine))  # a rejection stops here
        problem = read_problem(config)
        mismatch = disagreements(problem, fields)  # before the budget: a misread config is reported at any size
        if mismatch:
            return failed(name, engine, start, real, mismatch=tuple(mismatch))
        too_large = over_budget(problem, max_macs, max_threads)
        if too_large is not None:
            return failed(name, engine, start, real, too_large=too_large)
        if problem.split_k == 0 and degree is None:
            degree = runtime_degrees(problem)[0]
        with np.errstate(over="ignore", invalid="ignore"):  # rounding to dtype_d may overflow to inf
            case = build_case(problem, real, seed, degree)
        kernel = ir if ir is not None else emit_text(config, "ir", engine)
        if mutate is not None:
            kernel = mutate(kernel)
        return check_kernel(name, engine, case, kernel, start)
    except (ValueError, ExecError, ReadError, ProblemError, OverflowError) as e:
        return failed(name, engine, start, real, error=str(e))
    except MemoryError:
        return failed(name, engine, start, real, error="out of memory (a smaller size fits: --shrink)")


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
    seed: int = 0,
    mutate: Optional[Mutate] = None,
    shrink: bool = False,
    max_macs: int = MAX_MULTIPLY_ADDS,
    max_threads: int = MAX_THREADS,
) -> list[Outcome]:
    """The config checked at each of its check sizes (variants.check_sizes) and, for a runtime
    split-K kernel, at several degrees each: one Outcome per launch. `shrink`: a size over the
    budget runs shrunk (label `shrunk`) instead of being skipped."""
    out = []
    for label, text in check_sizes(config, small):
        if shrink:
            try:
                if over_budget(read_problem(text)) is not None:
                    label, text = "shrunk", shrunk(text)
            except ProblemError:
                pass
        for degree in launches(text):
            o = check_config(
                name, text, engine, real, seed, degree=degree, mutate=mutate, max_macs=max_macs, max_threads=max_threads
            )
            out.append(dataclasses.replace(o, label=label))
    return out
