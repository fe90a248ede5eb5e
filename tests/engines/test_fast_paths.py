"""The Python engine's fast paths decide exactly what the general code
decides: the verifier's inline checks in verify_region against verify_op alone, on every op of
shipped kernels and on kernels with one fault injected per op; parse's one-match key line
against the scans; Value equal and hashed by name and type, as the NamedTuple it replaced."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from rocke_py.engine import config, verify
from rocke_py.engine.arch import target_for
from rocke_py.engine.build import build_kernel
from rocke_py.engine.ir import Builder, Kernel, Op, Region, Value
from rocke_py.engine.plan import make_plan
from rocke_py.engine.problem import build_problem
from rocke_py.engine.schema import check_schema
from rocke_py.engine.spec import build_spec, deduce

REPO = Path(__file__).resolve().parents[2]
CONFIGS = ("fwd/00-baseline", "wgrad/00-baseline", "dgrad/00-baseline")


def kernel_of(config_id: str) -> Kernel:
    parsed = config.parse_config((REPO / "parity_configs" / f"{config_id}.toml").read_text())
    fields = check_schema(parsed)
    values = fields.values
    target = target_for(values["arch"])
    problem = build_problem(values)
    spec = deduce(build_spec(fields.family, values["arch"], values), problem, target)
    return build_kernel(make_plan(spec, problem, target))


def slow_verify(kernel: Kernel, monkeypatch: pytest.MonkeyPatch) -> str | None:
    """verify_kernel with no op taking an inline path: every op through verify_op."""
    with monkeypatch.context() as m:
        m.setattr(verify, "BINARY_TYPES_BY_CODE", (None,) * len(verify.BINARY_TYPES_BY_CODE))
        m.setattr(verify, "CHECKS_BY_CODE", (None,) * len(verify.CHECKS_BY_CODE))
        return verify.verify_kernel(kernel)


def all_ops(region: Region) -> list[Op]:
    out = []
    for op in region.ops:
        out.append(op)
        for inner in op.regions:
            out.extend(all_ops(inner))
    return out


def faults(op: Op, other: Value) -> list:
    """Edits of one op that a verifier must see (each undone by the returned undo)."""
    edits = []
    for j in sorted({0, len(op.operands) - 1}) if op.operands else ():
        v = op.operands[j]
        for bad in (Value(v.name, "i64" if v.type != "i64" else "i32"), Value("%never_defined", v.type)):
            edits.append(
                (
                    lambda j=j, bad=bad: op.operands.__setitem__(j, bad),
                    lambda j=j, v=v: op.operands.__setitem__(j, v),
                )
            )
    if op.results:
        r = op.results[0]
        twice = Value(other.name, r.type)
        edits.append((lambda: op.results.__setitem__(0, twice), lambda: op.results.__setitem__(0, r)))
        wrong = Value(r.name, "f16" if r.type != "f16" else "i32")
        edits.append((lambda: op.results.__setitem__(0, wrong), lambda: op.results.__setitem__(0, r)))
        edits.append((lambda: op.results.pop(), lambda: op.results.append(r)))
    edits.append((lambda: op.regions.append(Region("body")), lambda: op.regions.pop()))
    extra = Value(other.name, other.type)
    edits.append((lambda: op.operands.append(extra), lambda: op.operands.pop()))
    return edits


@pytest.mark.parametrize("config_id", CONFIGS)
def test_inline_checks_decide_as_verify_op(config_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    kernel = kernel_of(config_id)
    assert verify.verify_kernel(kernel) is None and slow_verify(kernel, monkeypatch) is None
    ops = all_ops(kernel.entry)
    first = kernel.params[0].value
    caught = 0
    for op in random.Random(13).sample(ops, min(len(ops), 150)):
        for apply, undo in faults(op, first):
            apply()
            try:
                fast, slow = verify.verify_kernel(kernel), slow_verify(kernel, monkeypatch)
            finally:
                undo()
            assert fast == slow, (op.name, fast, slow)
            caught += fast is not None
    assert caught > 500  # the faults are real: most of them fail the kernel
    assert verify.verify_kernel(kernel) is None


def test_a_weakened_inline_check_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison above sees an inline path that accepts too much: an arith.add of f32
    (the builder makes it, the verifier refuses it) passes a table loosened to f32."""
    b = Builder("k", {})
    x = b.const_f32(1)
    b.add(x, x)
    kernel = b.ret()
    strict = verify.verify_kernel(kernel)
    assert strict is not None and strict == slow_verify(kernel, monkeypatch)
    with monkeypatch.context() as m:
        loose = tuple(None if t is None else (*t, "f32") for t in verify.BINARY_TYPES_BY_CODE)
        m.setattr(verify, "BINARY_TYPES_BY_CODE", loose)
        assert verify.verify_kernel(kernel) is None  # what the fault test would report as a mismatch


LINES = [
    "key = 5",
    "  k_2-x\t=\t-0  # c",
    'k = "a#b"',
    'k = ""',
    "k = true#x",
    "k = false",
    "k = 2147483647",
    "k = -2147483648",
    "k = 2147483648",
    "k = 01",
    "k = 5x",
    'k = "a\\"b"',
    'k = "unterminated',
    "a" * 64 + " = 1",
    "a" * 65 + " = 1",
    "k = 1 2",
    "k =",
    "= 1",
]


@pytest.mark.parametrize("line", LINES)
def test_simple_key_line_reads_as_the_scans(line: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = f"[spec]\nother = 1\n{line}\n"
    fast = config.parse_config(text)
    with monkeypatch.context() as m:
        m.setattr(config, "SIMPLE_KEY_LINE", config.re.compile("(?!)"))  # matches nothing: the scans only
        slow = config.parse_config(text)
    assert repr(fast) == repr(slow)


def test_value_is_equal_and_hashed_by_name_and_type() -> None:
    a, b = Value("%a1", "i32"), Value("%a1", "i32")
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != Value("%a1", "i64") and a != Value("%a2", "i32")
    assert repr(a) == "Value(name='%a1', type='i32')"
