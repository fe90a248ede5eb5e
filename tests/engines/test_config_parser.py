"""The key table of the Python engine's schema (docs/engine-contract.md §4) against the contract,
key by key: every key exists with its type, bounds, families and requiredness, every integer
key accepts its bounds and rejects one past them, every key rejects every wrong type, each with
the exact message; and emit()'s str input.

The single cases of the input stages (the encoding check, the parser, the schema, emit()'s entry
checks) are data files read by both engines' tests: tests/data/parser_cases/, run by
tests/engines/test_parser_cases.py. These stay code because they are generated from the key
table (one config per key and value, about a hundred each); the table is
tests/data/parser_cases/keys.tsv, read by both. The C twin is
rocke_c/tests/test_config.c. Expected values come from docs/engine-contract.md, never from
running an engine."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from layout import REPO

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

# The contract's key table (docs/engine-contract.md §4), independent of the engine's KEYS: one
# row per key of tests/data/parser_cases/keys.tsv, which rocke_c/tests/test_config.c reads too.
KEYS_TSV = REPO / "tests" / "data" / "parser_cases" / "keys.tsv"


def read_contract(path: Path = KEYS_TSV) -> dict[tuple[str, str], tuple[str, tuple[int, int] | None, str, bool]]:
    """(table, key) -> (type, (lo, hi) for an int, families F/W/D, required)."""
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    assert rows and list(rows[0]) == ["table", "key", "type", "lo", "hi", "families", "required"]
    return {
        (r["table"], r["key"]): (
            r["type"],
            None if r["type"] != "int" else (int(r["lo"]), int(r["hi"])),
            r["families"],
            r["required"] == "yes",
        )
        for r in rows
    }


CONTRACT = read_contract()
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


def key_table_differences(contract: dict) -> list[str]:
    """Where the engine's KEYS differ from a contract table (empty when they agree)."""
    out = sorted(f"{t}.{k}: not in both" for t, k in {(k.table, k.name) for k in KEYS} ^ set(contract))
    for (table, name), (type_, bounds, families, required) in contract.items():
        key = find_key(table, name)
        if key is None:
            continue
        if key.type != type_ or sorted(key.families) != sorted(families) or key.required != required:
            out.append(f"{table}.{name}: type, families or requiredness")
        if bounds is not None and (key.lo, key.hi) != bounds:
            out.append(f"{table}.{name}: bounds {key.lo}..{key.hi}, not {bounds[0]}..{bounds[1]}")
    return out


def test_key_table_is_the_contracts() -> None:
    assert key_table_differences(CONTRACT) == []


def test_a_wrong_row_of_keys_tsv_is_caught(tmp_path) -> None:
    """One bound changed in a copy of keys.tsv (the C twin, test_config.c, reads the same file)."""
    wrong = tmp_path / "keys.tsv"
    text = KEYS_TSV.read_text(encoding="utf-8")
    wrong.write_text(text.replace("spec\ttile_m\tint\t1\t65536", "spec\ttile_m\tint\t1\t65535"), encoding="utf-8")
    assert key_table_differences(read_contract(wrong)) == ["spec.tile_m: bounds 1..65536, not 1..65535"]


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
