"""The engine's one operation: emit(config, mode, flavor) -> Emitted | Rejected.

Twin of rocke_c/src/emit.c; docs/engine-contract.md §2 gives the order of the checks."""

from __future__ import annotations

import gc
from typing import Optional, Union

from rocke_py.facts import FLAVORS, MODES

from .arch import target_for
from .build import build_kernel
from .config import check_encoding, parse_config
from .limits import MAX_OUTPUT_BYTES
from .lower_ll import lower_kernel
from .plan import make_plan
from .print_ir import print_ir
from .print_spec import print_spec
from .problem import build_problem, check_sub_gemm_candidates
from .result import Emitted, EngineFailure, Rejected
from .schema import check_schema
from .spec import build_spec, check_dtypes, deduce
from .validate import validate

MAX_CONFIG_BYTES = 1048576


def implemented_modes() -> tuple[str, ...]:
    """The modes this engine implements: every mode (the harness gates the modes both advertise)."""
    return MODES


def _echo(word: str) -> bool:
    return 1 <= len(word) <= 16 and all(c in "abcdefghijklmnopqrstuvwxyz0123456789" for c in word)


def check_mode_flavor(mode: str, flavor: str) -> Optional[Rejected]:
    if mode not in MODES:
        what = f"unknown mode '{mode}'" if _echo(mode) else "unknown mode"
        return Rejected("E_MODE", f"{what} (expected spec, ir or ll)")
    if flavor not in FLAVORS:
        what = f"unknown flavor '{flavor}'" if _echo(flavor) else "unknown flavor"
        return Rejected("E_FLAVOR", f"{what} (expected llvm20, llvm22 or llvm23)")
    return None


def check_size(data: bytes) -> Optional[Rejected]:
    if len(data) > MAX_CONFIG_BYTES:
        return Rejected("E_TOO_LARGE", f"config is {len(data)} bytes; the limit is {MAX_CONFIG_BYTES}")
    return None


def check_output_size(text: str) -> str:
    """The documented bound on any emitted text (docs/kernels.md §9): past it, an engine bug."""
    if len(text) > MAX_OUTPUT_BYTES:
        raise EngineFailure(f"emit: the output is {len(text)} bytes, more than {MAX_OUTPUT_BYTES}")
    return text


def emit_text(text: str, mode: str, flavor: str) -> Union[str, Rejected]:
    """Every mode runs the spec stages first, so all modes give one verdict per config."""
    config = parse_config(text)
    if isinstance(config, Rejected):
        return config
    fields = check_schema(config)
    if isinstance(fields, Rejected):
        return fields
    values = fields.values
    target = target_for(values["arch"])
    problem = build_problem(values)
    if isinstance(problem, Rejected):
        return problem
    bad = (check_sub_gemm_candidates(problem) if fields.family == "dgrad" else None) or check_dtypes(values)
    if bad:
        return bad
    spec = build_spec(fields.family, values["arch"], values)
    spec = deduce(spec, problem, target)
    bad = validate(spec, problem, target)
    if bad:
        return bad
    plan = make_plan(spec, problem, target)
    if isinstance(plan, Rejected):
        return plan
    if mode == "spec":
        return print_spec(plan)  # mode `ir` and `ll` build no spec text
    kernel = build_kernel(plan)
    text = print_ir(kernel) if mode == "ir" else lower_kernel(kernel, values["arch"], flavor)
    return check_output_size(text)


def emit(config: Union[bytes, str], mode: str, flavor: str) -> Union[Emitted, Rejected]:
    # A build allocates tens of thousands of objects that all stay alive until the text is
    # printed, so the cyclic collector's passes during the call only re-walk the growing kernel
    # (about a tenth of an `ir` job); it is paused for the call, and whatever the call leaves
    # is collected after it as usual.
    enabled = gc.isenabled()
    gc.disable()
    try:
        bad = check_mode_flavor(mode, flavor)
        if bad:
            return bad
        data = config.encode("utf-8", "surrogatepass") if isinstance(config, str) else bytes(config)
        bad = check_size(data) or check_encoding(data)
        if bad:
            return bad
        out = emit_text(data.decode("utf-8"), mode, flavor)
        return out if isinstance(out, Rejected) else Emitted(out)
    finally:
        if enabled:
            gc.enable()
