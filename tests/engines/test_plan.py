"""The plan stage (docs/engine-contract.md §1): derived once after validation, read by mode
`spec`'s print and by the builders, which compute none of its facts again; modes `ir` and `ll`
build no spec text."""

from __future__ import annotations

import dataclasses
import importlib

import pytest
from two_engines import both, config_text

from rocke_py.engine.arch import target_for
from rocke_py.engine.build import build_kernel
from rocke_py.engine.config import parse_config
from rocke_py.engine.plan import Plan, make_plan
from rocke_py.engine.print_ir import print_ir
from rocke_py.engine.print_spec import print_spec
from rocke_py.engine.problem import build_problem
from rocke_py.engine.result import Emitted, EngineFailure, Rejected
from rocke_py.engine.schema import check_schema
from rocke_py.engine.spec import build_spec, deduce
from rocke_py.engine.validate import validate

py_emit = importlib.import_module("rocke_py.engine.emit")  # the module (the package exports the function)


def plan_of(text: str) -> Plan:
    """The plan of a config that validates, as emit_text makes it."""
    fields = check_schema(parse_config(text))
    values = fields.values
    target = target_for(values["arch"])
    problem = build_problem(values)
    spec = deduce(build_spec(fields.family, values["arch"], values), problem, target)
    assert validate(spec, problem, target) is None
    plan = make_plan(spec, problem, target)
    assert isinstance(plan, Plan), plan
    return plan


def test_the_plan_is_frozen() -> None:
    plan = plan_of(config_text("fwd"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.kernel_name = "x"  # type: ignore[misc]


def test_a_dgrad_record_outside_int32_is_the_plans_rejection_in_every_mode() -> None:
    """The record rule (engine-contract §6) now runs in the plan: one verdict in every mode."""
    text = config_text("dgrad", problem={"sH": 2, "sW": 2}, split_k=100000000)
    for mode in ("spec", "ir", "ll"):
        out = both(text, mode)
        assert out == Rejected("E_RANGE", "[problem]: strided dgrad sub-GEMM 0 has a value outside int32"), out


@pytest.mark.parametrize("mode", ["ir", "ll"])
def test_modes_ir_and_ll_build_no_spec_text(monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    def no_spec_text(plan: Plan) -> str:
        raise AssertionError("mode spec's text was built")

    monkeypatch.setattr(py_emit, "print_spec", no_spec_text)
    for family in ("fwd", "wgrad", "dgrad"):
        assert isinstance(py_emit.emit(config_text(family), mode, "llvm22"), Emitted)
    with pytest.raises(AssertionError, match="mode spec's text was built"):
        py_emit.emit(config_text("fwd"), "spec", "llvm22")


def test_print_spec_reads_the_plan() -> None:
    plan = plan_of(config_text("wgrad"))
    text = print_spec(dataclasses.replace(plan, lds_bytes=12345, kernel_name="planned"))
    assert "\nlds_bytes = 12345\n" in text and text.endswith("\nkernel_name = planned\n")


def test_the_builder_reads_the_plan() -> None:
    """The kernel's name, its unrolled K steps and its async chunking come from the plan: a
    plan without async dwords is the builder's own failure, not a silent recomputation."""
    plan = plan_of(config_text("wgrad", unroll_k=True, problem={"N": 1, "Hi": 8, "Wi": 8}))
    ir = print_ir(build_kernel(dataclasses.replace(plan, kernel_name="planned")))
    assert "planned" in ir.splitlines()[1]
    full = print_ir(build_kernel(plan)).count("tile.mma")
    assert print_ir(build_kernel(dataclasses.replace(plan, k_iters=1))).count("tile.mma") == full // plan.k_iters
    async_plan = plan_of(config_text("fwd", async_dma=True, lds_layout_pad=0, tile_k=64))
    assert async_plan.async_dwords is not None
    with pytest.raises(EngineFailure, match="async tile without dwords"):
        build_kernel(dataclasses.replace(async_plan, async_dwords=(None, None)))
