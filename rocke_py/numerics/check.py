"""One config through one engine: emit its spec and IR, run the kernel over its whole grid,
compare with the reference (docs/numerics.md §1)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Optional

import numpy as np

from rocke_py.exec.executor import ExecError, run_kernel
from rocke_py.exec.fp import to_f64
from rocke_py.exec.reader import ReadError
from rocke_py.exec.spec_text import spec_fields

from .inputs import Case, build_case

FLAVOR = "llvm22"  # modes spec and ir do not depend on the flavor


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

    @property
    def ok(self) -> bool:
        return self.error is None and self.wrong == 0 and self.unwritten == 0 and not self.hazards


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
    err = np.where(written, np.abs(got - case.want), 0.0)
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


def check_config(
    name: str, config: str, engine: str = "py", real: bool = False, seed: int = 0, ir: Optional[str] = None
) -> Outcome:
    """The config (its text) checked through `engine`; `ir` replaces the emitted IR (a seeded
    fault)."""
    start = time.perf_counter()
    try:
        case = build_case(spec_fields(emit_text(config, "spec", engine)), real, seed)
        kernel = ir if ir is not None else emit_text(config, "ir", engine)
        return check_kernel(name, engine, case, kernel, start)
    except (ValueError, ExecError, ReadError) as e:
        return Outcome(name, engine, "?", not real, 0, 0, 0.0, 0, (), time.perf_counter() - start, 0, str(e))
