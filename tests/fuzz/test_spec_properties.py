"""Property tests of the spec layer (Hypothesis, with shrinking): both engines agree, in mode
``spec``, on every generated config — the fuzzer's own draws (a Hypothesis-chosen Random
driving rocke_py.fuzz.generate and mutate) and configs built key by key from the schema's
types, in range and out of it. ``two_engines.both`` asserts the agreement (text, or code and
message)."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from layout import REPO
from two_engines import both

from rocke_py.configtext import render_tables
from rocke_py.facts import KEYS
from rocke_py.fuzz import generate, mutate
from rocke_py.parity.inputs.configs import discover

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_SHIPPED = [(c.family, c.id, c.data) for c in discover(REPO).configs]
_SEEDS = mutate.seeds(_SHIPPED)
_POOL = mutate.value_pool(_SEEDS)


@FAST
@given(st.randoms(use_true_random=False), st.sampled_from(generate.FAMILIES))
def test_engines_agree_on_generated_draws(rng: random.Random, family: str) -> None:
    _, text = generate.draw(rng, family)
    both(text)


@FAST
@given(st.randoms(use_true_random=False), st.sampled_from(range(len(_SEEDS))))
def test_engines_agree_on_mutated_shipped_configs(rng: random.Random, n: int) -> None:
    _, text = mutate.mutate(rng, _SEEDS[n], _POOL)
    both(text.encode("utf-8", "surrogateescape"))


_INTS = st.one_of(
    st.integers(-3, 300),
    st.sampled_from((0, 1, 2, 16, 32, 64, 65536, 65537, 2**31 - 1, -(2**31))),
)
_STRINGS = st.one_of(
    st.sampled_from(("fp16", "f16", "bf16", "fp32", "mem", "compv3", "compv4", "basic", "default", "cshuffle", "auto")),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=20),
)
_VALUES = st.one_of(_INTS, st.booleans(), _STRINGS)
_ARCHS = st.sampled_from(("gfx942", "gfx950", "gfx1151", "gfx1201", "gfx1250"))


@st.composite
def schema_configs(draw: st.DrawFn) -> str:
    """The required keys with plausible values, then any keys of the key table with any value."""
    problem: dict[str, object] = {k: draw(st.integers(1, 64)) for k in ("N", "Hi", "Wi", "C", "K")}
    problem.update({k: draw(st.integers(1, 5)) for k in ("Y", "X")})
    spec: dict[str, object] = {"family": draw(st.sampled_from(generate.FAMILIES))}
    for key in draw(st.lists(st.sampled_from(KEYS["problem"][7:]), max_size=4, unique=True)):
        problem[key] = draw(_INTS)
    for key in draw(st.lists(st.sampled_from(KEYS["spec"][1:]), max_size=8, unique=True)):
        spec[key] = draw(_VALUES)
    return render_tables({"target": {"arch": draw(_ARCHS)}, "problem": problem, "spec": spec})


@settings(max_examples=300, deadline=None)
@given(schema_configs())
def test_engines_agree_on_schema_built_configs(text: str) -> None:
    both(text)
