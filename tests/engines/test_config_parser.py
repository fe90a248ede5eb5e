"""The key table of the Python engine's schema (docs/engine-contract.md §4) against the contract,
key by key: every key exists with its type, bounds, families and requiredness, every integer
key accepts its bounds and rejects one past them, every key rejects every wrong type, each with
the exact message; and emit()'s str input.

The single cases of the input stages (the encoding check, the parser, the schema, emit()'s entry
checks) are data files read by both engines' tests: tests/data/parser_cases/, run by
tests/engines/test_parser_cases.py. These stay code because they are generated from the key
table (one config per key and value, about a hundred each). The C twin is
rocke_c/tests/test_config.c. Expected values come from docs/engine-contract.md, never from
running an engine."""

from __future__ import annotations

import pytest

from rocke_py.engine import emit
from rocke_py.engine.config import Config, parse_config
from rocke_py.engine.result import Rejected
from rocke_py.engine.schema import KEYS, Fields, check_schema, find_key

MAX = 2147483647
MIN = -2147483648

BASE = (
    '[target]\narch = "gfx950"\n\n[problem]\nN = 8\nHi = 56\nWi = 56\nC = 64\nK = 64\n'
    'Y = 3\nX = 3\n\n[spec]\nfamily = "wgrad"\n'
)


def schema(text: str) -> Fields | Rejected:
    config = parse_config(text)
    assert isinstance(config, Config), config
    return check_schema(config)


# ======================================================================================
# §4: the key table, as the contract lists it (independent of schema.KEYS)
# ======================================================================================

U = (MIN, MAX)  # unbounded int
# One string, not one name a line: the contract's list, independent of the engine's KEYS.
SPEC_1_65536 = (
    "tile_m tile_n tile_k warp_m warp_n warp_tile_m warp_tile_n warp_tile_k wave_size vector_size_a "
    "vector_size_b vector_size_c chiplet_wgm chiplet_num_xcds chiplet_chunk_size waves_per_eu"
).split()
CONTRACT: dict[tuple[str, str], tuple[str, tuple[int, int] | None, str, bool]] = {
    ("target", "arch"): ("enum", None, "FWD", True),
    **{("problem", k): ("int", (1, MAX), "FWD", True) for k in ("N", "Hi", "Wi", "C", "K", "Y", "X")},
    **{("problem", k): ("int", (1, MAX), "FWD", False) for k in ("sH", "sW", "dH", "dW", "Di", "Z", "sD", "dD")},
    **{("problem", k): ("int", (0, MAX), "FWD", False) for k in ("pH", "pW", "pD")},
    ("problem", "groups"): ("int", U, "FWD", False),
    ("spec", "family"): ("enum", None, "FWD", True),
    ("spec", "name"): ("name", None, "FWD", False),
    **{("spec", k): ("str", None, "FWD", False) for k in ("dtype_a", "dtype_b", "dtype_d", "pipeline", "epilogue")},
    **{("spec", k): ("int", (1, 65536), "FWD", False) for k in SPEC_1_65536},
    **{("spec", k): ("int", (0, 65536), "FWD", False) for k in ("lds_k_pad", "lds_layout_pad", "lds_layout_xor")},
    **{("spec", k): ("bool", None, "FWD", False) for k in ("async_dma", "unroll_k", "chiplet_swizzle", "relu")},
    **{("spec", k): ("int", U, "FWD", False) for k in ("bias", "scale", "clamp_min", "clamp_max")},
    ("spec", "lds_k_outer"): ("tri", None, "WD", False),
    ("spec", "split_k"): ("int", U, "WD", False),
    ("spec", "two_stage"): ("bool", None, "W", False),
    ("spec", "force_deterministic"): ("bool", None, "W", False),
    ("spec", "group_merge"): ("int", U, "W", False),
    ("spec", "num_load_waves"): ("int", (1, 65536), "D", False),
    ("spec", "cshuffle_no_alias"): ("bool", None, "D", False),
}
FAMILY_OF = {"F": "fwd", "W": "wgrad", "D": "dgrad"}
KINDS = {"an integer": "7", "a boolean": "true", "a string": '"x"'}
EXPECTED = {
    "int": "an integer",
    "bool": "a boolean",
    "str": "a string",
    "enum": "a string",
    "name": "a string",
    "tri": 'true, false or "auto"',
}


def test_key_table_is_the_contracts() -> None:
    assert {(k.table, k.name) for k in KEYS} == set(CONTRACT)
    for (table, name), (type_, bounds, families, required) in CONTRACT.items():
        key = find_key(table, name)
        assert key is not None and key.type == type_, name
        assert sorted(key.families) == sorted(families) and key.required == required, name
        if bounds is not None:
            assert (key.lo, key.hi) == bounds, name


def config_with(table: str, key: str, value: str) -> tuple[str, int]:
    """BASE with table.key = value (family chosen so the key applies); the key's line."""
    families = CONTRACT[(table, key)][2]
    family = "wgrad" if "W" in families else FAMILY_OF[families[0]]
    text = BASE.replace('family = "wgrad"', f'family = "{family}"')
    lines = text.rstrip("\n").split("\n")
    header = {"target": 0, "problem": 3, "spec": 12}[table]
    for i, line in enumerate(lines):
        if line.startswith(f"{key} = "):
            lines[i] = f"{key} = {value}"
            return "\n".join(lines) + "\n", i + 1
    lines.insert(header + 1, f"{key} = {value}")
    return "\n".join(lines) + "\n", header + 2


def int_keys() -> list[tuple[str, str, int, int]]:
    return [(t, k, b[0], b[1]) for (t, k), (ty, b, _, _) in CONTRACT.items() if ty == "int"]


@pytest.mark.parametrize("table,key,lo,hi", int_keys(), ids=[f"{t}.{k}" for t, k, _, _ in int_keys()])
def test_int_key_bounds(table: str, key: str, lo: int, hi: int) -> None:
    for value in (lo, hi):
        text, _ = config_with(table, key, str(value))
        fields = schema(text)
        assert isinstance(fields, Fields), fields
        assert fields.values[key] == value
    for value in (lo - 1, hi + 1):
        if MIN <= value <= MAX:
            text, line = config_with(table, key, str(value))
            assert schema(text) == Rejected(
                "E_RANGE", f"line {line}: key '{key}' in [{table}] must be between {lo} and {hi}, not {value}"
            )


@pytest.mark.parametrize("table,key", list(CONTRACT), ids=[f"{t}.{k}" for t, k in CONTRACT])
def test_every_key_rejects_every_wrong_type(table: str, key: str) -> None:
    type_ = CONTRACT[(table, key)][0]
    accepted = {"int": {"an integer"}, "bool": {"a boolean"}, "tri": {"a boolean", "a string"}}.get(type_, {"a string"})
    for kind, literal in KINDS.items():
        text, line = config_with(table, key, literal)
        out = schema(text)
        if kind in accepted:
            assert not (isinstance(out, Rejected) and out.code == "E_TYPE"), out
        else:
            assert out == Rejected(
                "E_TYPE", f"line {line}: key '{key}' in [{table}] must be {EXPECTED[type_]}, not {kind}"
            )


def test_emit_str_input_is_its_utf8() -> None:
    """Python only: the C entry point takes bytes."""
    assert emit(BASE, "spec", "llvm22") == emit(BASE.encode(), "spec", "llvm22")
    assert emit("# \ud800\n", "spec", "llvm22") == Rejected("E_ENCODING", "line 1: invalid UTF-8")
