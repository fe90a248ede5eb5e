"""Stage schema (docs/engine-contract.md §4): parsed entries -> typed fields.

Twin of rocke_c/src/schema.c, function for function in the same order. KEYS is the one key
table, row for row in the order of RK_KEYS (rocke_c/src/internal.h), so both engines
check the entries of a file the same way and report the same first error."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union

from rocke_py.facts import ARCHS, FAMILIES

from .config import Config, Entry, Value
from .result import Rejected

MAX = 2147483647
MIN = -2147483648
NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_/")
MAX_NAME = 64
#: The tile and wave shape keys of [spec], in table order (mode `spec` prints them so too).
TILE_KEYS = ("tile_m", "tile_n", "tile_k", "warp_m", "warp_n", "warp_tile_m", "warp_tile_n", "warp_tile_k", "wave_size")

# Key types. "enum" and "name" are strings with a rule on the value; "tri" is true, false
# or the string "auto".
INT, BOOL, STR, ENUM, NAME, TRI = "int", "bool", "str", "enum", "name", "tri"
EXPECTED = {
    INT: "an integer",
    BOOL: "a boolean",
    STR: "a string",
    ENUM: "a string",
    NAME: "a string",
    TRI: 'true, false or "auto"',
}


@dataclass(frozen=True)
class Key:
    name: str
    table: str
    type: str
    lo: int = MIN  # INT only; MIN..MAX = unbounded
    hi: int = MAX
    families: str = "FWD"  # [spec] only: F fwd, W wgrad, D dgrad
    required: bool = False
    choices: tuple[str, ...] = ()  # ENUM only, in the order the message lists them


def _problem(name: str, lo: int = 1, required: bool = False) -> Key:
    return Key(name, "problem", INT, lo, MAX, required=required)


def _spec(name: str, type_: str, lo: int = MIN, hi: int = MAX, families: str = "FWD") -> Key:
    return Key(name, "spec", type_, lo, hi, families)


KEYS: tuple[Key, ...] = (
    # [target]
    Key("arch", "target", ENUM, required=True, choices=ARCHS),
    # [problem]
    *(_problem(n, required=True) for n in ("N", "Hi", "Wi", "C", "K", "Y", "X")),
    _problem("sH"),
    _problem("sW"),
    _problem("pH", 0),
    _problem("pW", 0),
    _problem("dH"),
    _problem("dW"),
    _problem("groups", MIN),
    _problem("Di"),
    _problem("Z"),
    _problem("sD"),
    _problem("pD", 0),
    _problem("dD"),
    # [spec]
    Key("family", "spec", ENUM, required=True, choices=FAMILIES),
    _spec("name", NAME),
    _spec("dtype_a", STR),
    _spec("dtype_b", STR),
    _spec("dtype_d", STR),
    *(_spec(n, INT, 1, 65536) for n in TILE_KEYS),
    _spec("pipeline", STR),
    _spec("epilogue", STR),
    _spec("async_dma", BOOL),
    _spec("unroll_k", BOOL),
    _spec("lds_k_pad", INT, 0, 65536),
    _spec("lds_layout_pad", INT, 0, 65536),
    _spec("lds_layout_xor", INT, 0, 65536),
    _spec("vector_size_a", INT, 1, 65536),
    _spec("vector_size_b", INT, 1, 65536),
    _spec("vector_size_c", INT, 1, 65536),
    _spec("chiplet_swizzle", BOOL),
    _spec("chiplet_wgm", INT, 1, 65536),
    _spec("chiplet_num_xcds", INT, 1, 65536),
    _spec("chiplet_chunk_size", INT, 1, 65536),
    _spec("waves_per_eu", INT, 1, 65536),
    _spec("bias", INT),
    _spec("scale", INT),
    _spec("relu", BOOL),
    _spec("clamp_min", INT),
    _spec("clamp_max", INT),
    _spec("lds_k_outer", TRI, families="WD"),
    _spec("split_k", INT, families="WD"),
    _spec("two_stage", BOOL, families="W"),
    _spec("force_deterministic", BOOL, families="W"),
    _spec("group_merge", INT, families="W"),
    _spec("num_load_waves", INT, 1, 65536, families="D"),
    _spec("cshuffle_no_alias", BOOL, families="D"),
)
KEY_BY_TABLE_NAME = {(k.table, k.name): k for k in KEYS}
FAMILY_LETTER = {"fwd": "F", "wgrad": "W", "dgrad": "D"}


@dataclass(frozen=True)
class Fields:
    family: str  # "fwd", "wgrad" or "dgrad"
    values: dict[str, Value]  # present keys only; lds_k_outer True, False or "auto"
    lines: dict[str, int]  # the line of each present key


def find_key(table: str, name: str) -> Optional[Key]:
    return KEY_BY_TABLE_NAME.get((table, name))


def kind_name(value: Value) -> str:
    """What the value is, for E_TYPE (bool first: in Python a bool is an int)."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    return "a string"


def type_ok(key: Key, value: Value) -> bool:
    if key.type == INT:
        return isinstance(value, int) and not isinstance(value, bool)
    if key.type == BOOL:
        return isinstance(value, bool)
    if key.type == TRI:
        return isinstance(value, (bool, str))
    return isinstance(value, str)


def is_name(value: str) -> bool:
    return 1 <= len(value) <= MAX_NAME and all(ch in NAME_CHARS for ch in value)


def check_value(key: Key, entry: Entry) -> Optional[Rejected]:
    """The range or rule of an already type-checked value."""
    where = f"line {entry.line}: key '{key.name}' in [{key.table}] must be"
    value = entry.value
    if key.type == INT and not key.lo <= value <= key.hi:
        return Rejected("E_RANGE", f"{where} between {key.lo} and {key.hi}, not {value}")
    if key.type == ENUM and value not in key.choices:
        return Rejected("E_RANGE", f"{where} one of {', '.join(key.choices)}")
    if key.type == NAME and not is_name(value):
        return Rejected("E_RANGE", f"{where} 1 to {MAX_NAME} characters from [A-Za-z0-9_/]")
    if key.type == TRI and isinstance(value, str) and value != "auto":
        return Rejected("E_RANGE", f'{where} true, false or "auto"')
    return None


def check_entry(entry: Entry) -> Optional[Rejected]:
    """§4 step 1 for one entry of [target], [problem] or [spec]."""
    key = find_key(entry.table, entry.key)
    if key is None:
        return Rejected("E_UNKNOWN_KEY", f"line {entry.line}: unknown key '{entry.key}' in [{entry.table}]")
    if not type_ok(key, entry.value):
        return Rejected(
            "E_TYPE",
            f"line {entry.line}: key '{key.name}' in [{key.table}] must be "
            f"{EXPECTED[key.type]}, not {kind_name(entry.value)}",
        )
    return check_value(key, entry)


def check_required(values: dict[str, Value]) -> Optional[Rejected]:
    """§4 step 2, in key-table order: arch; N, Hi, Wi, C, K, Y, X; family."""
    for key in KEYS:
        if key.required and key.name not in values:
            return Rejected("E_MISSING", f"missing required key '{key.name}' in [{key.table}]")
    return None


def check_family_fit(config: Config, family: str) -> Optional[Rejected]:
    """§4 step 3: [spec] keys that are not fields of the family, in file order."""
    letter = FAMILY_LETTER[family]
    for entry in config.entries:
        key = find_key(entry.table, entry.key) if entry.table == "spec" else None
        if key is not None and letter not in key.families:
            return Rejected(
                "E_UNKNOWN_KEY", f"line {entry.line}: key '{entry.key}' in [spec] does not apply to family '{family}'"
            )
    return None


def check_schema(config: Config) -> Union[Fields, Rejected]:
    values: dict[str, Value] = {}
    lines: dict[str, int] = {}
    for entry in config.entries:
        if entry.table == "parity":
            continue  # the harness's table: never checked by the engines
        bad = check_entry(entry)
        if bad:
            return bad
        values[entry.key] = entry.value
        lines[entry.key] = entry.line
    bad = check_required(values) or check_family_fit(config, str(values["family"]))
    if bad:
        return bad
    return Fields(str(values["family"]), values, lines)
