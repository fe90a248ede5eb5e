"""The axes of the spec that coverage counts combinations of (docs/coverage.md §2).

Each axis names the config keys it reads (rows of the engine's key table, `schema.KEYS`), the
families it applies to, its values (bucketed where the key is numeric), how to read a config's
value, and how to give a config each value (the settings a probe or a proposal writes). The
value domains come from the engine's own tables (archs, MMA rows, pipelines, epilogues), so a
new arch or pipeline widens the axis without an edit here. `UNCOUNTED` lists every key no axis
reads, with the reason; a test checks that the two together are exactly the key table."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from rocke_py.engine import arch as arch_table
from rocke_py.engine import schema, validate
from rocke_py.engine.config import parse_config
from rocke_py.engine.problem import ConvProblem, build_problem
from rocke_py.engine.result import Rejected
from rocke_py.engine.spec import ConvSpec, build_spec, deduce
from rocke_py.facts import ARCHS

WD = ("wgrad", "dgrad")

#: One setting a probe writes: (table, key, TOML value), or a None value to remove the key.
Setting = tuple[str, str, Optional[str]]


@dataclass(frozen=True)
class Reading:
    """What a config names, after the engine's defaults and deductions (not its validation)."""

    family: str
    arch: str
    spec: ConvSpec
    problem: ConvProblem


@dataclass(frozen=True)
class Axis:
    name: str
    keys: tuple[str, ...]  # the schema keys it reads
    values: tuple[str, ...]
    value_of: Callable[[Reading], str]
    settings: Callable[[str], tuple[tuple[Setting, ...], ...]]  # ways to give a config the value
    families: tuple[str, ...] = schema.FAMILIES
    core: bool = False  # one of the axes of the 3-way strata (besides arch and family)


def read_config(text: str) -> Optional[Reading]:
    """The config's spec and problem as the engine reads them before validation; None when the
    file does not get that far (a syntax, schema or problem error names no combination)."""
    config = parse_config(text)
    if isinstance(config, Rejected):
        return None
    fields = schema.check_schema(config)
    if isinstance(fields, Rejected):
        return None
    problem = build_problem(fields.values)
    if isinstance(problem, Rejected):
        return None
    arch = str(fields.values["arch"])
    spec = build_spec(fields.family, arch, fields.values)
    return Reading(fields.family, arch, deduce(spec, problem, arch_table.target_for(arch)), problem)


def _q(word: str) -> str:
    return f'"{word}"'


def _one(*settings: Setting) -> tuple[tuple[Setting, ...], ...]:
    return (tuple(settings),)


def _flag(r: bool) -> str:
    return "on" if r else "off"


def _toml_bool(value: str) -> str:
    return "true" if value == "on" else "false"


# ---- value domains, from the engine's tables ----


def atom_values() -> tuple[str, ...]:
    shapes = {(m, n, k) for t in arch_table.TARGETS.values() for _, m, n, k in t.mma}
    return tuple(f"{m}x{n}x{k}" for m, n, k in sorted(shapes, key=lambda s: (-s[0], -s[2])))


def pipeline_values() -> tuple[str, ...]:
    seen: list[str] = []
    for family in schema.FAMILIES:
        seen += [p for p in validate.PIPELINES[family] if p not in seen]
    return tuple(seen)


DTYPES = ("fp16", "bf16", "fp32")

# ---- how a reading is bucketed ----


def atom_of(r: Reading) -> str:
    return f"{r.spec.warp_tile_m}x{r.spec.warp_tile_n}x{r.spec.warp_tile_k}"


def split_k_of(r: Reading) -> str:
    asked = r.spec.split_k_requested
    return {1: "1", 0: "0 runtime", -1: "-1 auto"}.get(asked, ">1")


def dtype_in_of(r: Reading) -> str:
    return r.spec.dtype_a if r.spec.dtype_a == r.spec.dtype_b else "mixed"


def greater_than_one(*values: Optional[int]) -> str:
    return ">1" if any(v is not None and v > 1 for v in values) else "1"


def pad_of(r: Reading) -> str:
    p = r.problem
    return ">0" if any(v for v in (p.pH, p.pW, p.pD) if v) else "0"


def groups_of(r: Reading) -> str:
    p = r.problem
    if p.groups == 1:
        return "1"
    return "depthwise" if p.groups == p.C == p.K else "grouped"


def clamps_of(r: Reading) -> str:
    return "none" if r.spec.clamp_min is None and r.spec.clamp_max is None else "set"


def vector_caps_of(r: Reading) -> str:
    s = r.spec
    return "default" if s.vector_size_a is None and s.vector_size_b is None and s.vector_size_c is None else "set"


# ---- how a config is given a value ----


def atom_settings(value: str) -> tuple[tuple[Setting, ...], ...]:
    m, n, k = value.split("x")
    return _one(("spec", "warp_tile_m", m), ("spec", "warp_tile_n", n), ("spec", "warp_tile_k", k))


def dtype_in_settings(value: str) -> tuple[tuple[Setting, ...], ...]:
    a, b = ("fp16", "bf16") if value == "mixed" else (value, value)
    plain = (("spec", "dtype_a", _q(a)), ("spec", "dtype_b", _q(b)))
    if value != "fp32":
        return (plain,)
    # an fp32 operand needs an fp32 atom: the 16x16x4 one where the arch has it
    return (plain, plain + atom_settings("16x16x4")[0])


def split_k_settings(value: str) -> tuple[tuple[Setting, ...], ...]:
    number = {"1": "1", "0 runtime": "0", "-1 auto": "-1"}.get(value)
    if number is not None:
        return _one(("spec", "split_k", number))
    return _one(("spec", "split_k", "2")) + _one(("spec", "split_k", "4"))


def dims_settings(value: str) -> tuple[tuple[Setting, ...], ...]:
    keys = ("Di", "Z", "sD", "pD", "dD")
    if value == "2d":
        return (tuple(("problem", k, None) for k in keys),)
    depth = (("problem", "sD", "1"), ("problem", "dD", "1"))
    flat = (("problem", "Di", "4"), ("problem", "Z", "1"), ("problem", "pD", "0")) + depth
    deep = (("problem", "Di", "6"), ("problem", "Z", "3"), ("problem", "pD", "1")) + depth
    return (flat, deep)


def groups_settings(value: str) -> tuple[tuple[Setting, ...], ...]:
    if value == "1":
        return _one(("problem", "groups", None))
    if value == "grouped":
        return _one(("problem", "groups", "2")) + _one(("problem", "groups", "4"))
    return _one(("problem", "groups", "64"), ("problem", "C", "64"), ("problem", "K", "64"))


def clamps_settings(value: str) -> tuple[tuple[Setting, ...], ...]:
    if value == "none":
        return _one(("spec", "clamp_min", None), ("spec", "clamp_max", None))
    return _one(("spec", "clamp_min", "-4"), ("spec", "clamp_max", "4")) + _one(("spec", "clamp_max", "6"))


def vector_caps_settings(value: str) -> tuple[tuple[Setting, ...], ...]:
    keys = ("vector_size_a", "vector_size_b", "vector_size_c")
    if value == "default":
        return (tuple(("spec", k, None) for k in keys),)
    caps = (("vector_size_b", "2"), ("vector_size_a", "2"), ("vector_size_a", "1"))
    return tuple((("spec", key, value),) for key, value in caps)


def numeric_settings(keys: tuple[str, ...], table: str, plain: str, other: tuple[str, ...]):
    """An axis of two buckets over numeric keys: `plain` removes them, the other writes one."""

    def settings(value: str) -> tuple[tuple[Setting, ...], ...]:
        if value == plain:
            return (tuple((table, k, None) for k in keys),)
        return tuple(tuple((table, k, v) for k in keys[:2]) for v in other)

    return settings


def key_settings(key: str, words: dict[str, str]) -> Callable[[str], tuple[tuple[Setting, ...], ...]]:
    return lambda value: _one(("spec", key, words[value]))


def arch_settings(value: str) -> tuple[tuple[Setting, ...], ...]:
    """The arch alone, then the arch with its wave size and each of its 16-bit MMA atoms."""
    target = arch_table.TARGETS[value]
    arch = (("target", "arch", _q(value)), ("spec", "wave_size", str(target.wave_size)))
    atoms = sorted({(m, n, k) for dtype, m, n, k in target.mma if dtype != "fp32"}, reverse=True)
    return _one(arch[0]) + tuple(arch + atom_settings(f"{m}x{n}x{k}")[0] for m, n, k in atoms)


def switch(name: str, key: str, families: tuple[str, ...] = schema.FAMILIES, core: bool = False) -> Axis:
    """An off/on axis of one boolean [spec] key (its value after the deductions)."""
    return Axis(
        name,
        (key,),
        ("off", "on"),
        lambda r: _flag(getattr(r.spec, key)),
        lambda v: _one(("spec", key, _toml_bool(v))),
        families,
        core,
    )


def choice(name: str, key: str, values: tuple[str, ...], core: bool = False) -> Axis:
    """An axis of one string [spec] key, a value per word."""
    return Axis(name, (key,), values, lambda r: getattr(r.spec, key), lambda v: _one(("spec", key, _q(v))), core=core)


AXES: tuple[Axis, ...] = (
    Axis("arch", ("arch",), ARCHS, lambda r: r.arch, arch_settings, core=False),
    Axis("family", ("family",), schema.FAMILIES, lambda r: r.family, lambda v: ()),
    Axis("atom", ("warp_tile_m", "warp_tile_n", "warp_tile_k"), atom_values(), atom_of, atom_settings, core=True),
    choice("pipeline", "pipeline", pipeline_values(), core=True),
    choice("epilogue", "epilogue", validate.EPILOGUES, core=True),
    switch("async", "async_dma", core=True),
    switch("k_outer", "lds_k_outer", WD, core=True),
    Axis("split_k", ("split_k",), ("1", ">1", "0 runtime", "-1 auto"), split_k_of, split_k_settings, WD, core=True),
    switch("unroll", "unroll_k"),
    Axis(
        "vector_caps",
        ("vector_size_a", "vector_size_b", "vector_size_c"),
        ("default", "set"),
        vector_caps_of,
        vector_caps_settings,
    ),
    Axis("dtype_in", ("dtype_a", "dtype_b"), DTYPES + ("mixed",), dtype_in_of, dtype_in_settings),
    choice("dtype_out", "dtype_d", DTYPES),
    Axis(
        "stride",
        ("sH", "sW", "sD"),
        ("1", ">1"),
        lambda r: greater_than_one(r.problem.sH, r.problem.sW, r.problem.sD),
        numeric_settings(("sH", "sW", "sD"), "problem", "1", ("2", "3")),
    ),
    Axis(
        "dilation",
        ("dH", "dW", "dD"),
        ("1", ">1"),
        lambda r: greater_than_one(r.problem.dH, r.problem.dW, r.problem.dD),
        numeric_settings(("dH", "dW", "dD"), "problem", "1", ("2",)),
    ),
    Axis("pad", ("pH", "pW", "pD"), ("0", ">0"), pad_of, numeric_settings(("pH", "pW", "pD"), "problem", "0", ("1",))),
    Axis("groups", ("groups",), ("1", "grouped", "depthwise"), groups_of, groups_settings),
    Axis(
        "dims",
        ("Di", "Z", "sD", "pD", "dD"),
        ("2d", "3d"),
        lambda r: "3d" if r.problem.is_3d else "2d",
        dims_settings,
    ),
    Axis(
        "bias",
        ("bias",),
        ("0", "set"),
        lambda r: "set" if r.spec.bias else "0",
        lambda v: _one(("spec", "bias", None if v == "0" else "3")),
    ),
    Axis(
        "scale",
        ("scale",),
        ("1", "set"),
        lambda r: "1" if r.spec.scale == 1 else "set",
        lambda v: _one(("spec", "scale", None if v == "1" else "2")),
    ),
    switch("relu", "relu"),
    Axis("clamps", ("clamp_min", "clamp_max"), ("none", "set"), clamps_of, clamps_settings),
    Axis(
        "waves_per_eu",
        ("waves_per_eu",),
        ("default", "set"),
        lambda r: "default" if r.spec.waves_per_eu is None else "set",
        lambda v: _one(("spec", "waves_per_eu", None if v == "default" else "2")),
    ),
    Axis(
        "wave_size",
        ("wave_size",),
        ("32", "64"),
        lambda r: str(r.spec.wave_size),
        lambda v: _one(("spec", "wave_size", v)),
    ),
    switch("chiplet", "chiplet_swizzle"),
)
AXIS = {a.name: a for a in AXES}

#: The keys of schema.KEYS no axis reads, and why each is not a combination coverage counts.
UNCOUNTED = {
    ("N", "Hi", "Wi", "C", "K", "Y", "X"): "problem sizes: numerics runs each kernel at several",
    ("name",): "a label: it changes the kernel's name, nothing else",
    ("tile_m", "tile_n", "tile_k", "warp_m", "warp_n"): "the block tile: a shape, reached by engine coverage",
    ("lds_k_pad", "lds_layout_pad", "lds_layout_xor"): "LDS layout knobs, reached by engine coverage and their configs",
    ("chiplet_wgm", "chiplet_num_xcds", "chiplet_chunk_size"): "parameters of the chiplet swizzle (the chiplet axis)",
    ("two_stage", "force_deterministic", "group_merge"): "wgrad's split-K reductions, reached by engine coverage",
    ("num_load_waves", "cshuffle_no_alias"): "dgrad-only knobs, reached by engine coverage",
}

#: The axes of the 3-way strata: arch × family × each core axis.
CORE = tuple(a.name for a in AXES if a.core)


def values_of(r: Reading) -> dict[str, str]:
    """The reading's value on every axis that applies to its family."""
    return {a.name: a.value_of(r) for a in AXES if r.family in a.families}
