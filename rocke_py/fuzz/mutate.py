"""Text-level mutations of the shipped configs: value swaps between configs, boundary integers,
dropped and duplicated keys, keys grafted from another config, a renamed table, and (rarely)
byte damage.

A mutation edits the config's lines (:func:`rocke_py.configtext.split_lines`), so everything else
in the file (comments, ``[parity]``, layout) stays; what comes out need not be valid TOML.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from rocke_py.configtext import Line, join_lines, split_lines
from rocke_py.fuzz.case import ENGINE_TABLES, decode

#: Integers at the edges of the schema's ranges and of the parser's 32-bit range.
BOUNDARY_INTS = (
    "0",
    "1",
    "-1",
    "2",
    "3",
    "65535",
    "65536",
    "65537",
    "2147483647",
    "-2147483648",
    "2147483648",
    "-2147483649",
    "+7",
    "-0",
    "07",
)
_BYTE_DAMAGE = ("\x00", "\udcff", "\udcc0\udc80", "\x0b", "\r", "\ufeff", "\u2028")
_TOO_LARGE = 1048577  # one byte past the entry check of engine-contract §2 item 4


@dataclass(frozen=True)
class Seed:
    """A shipped config to mutate: its family, id and lines."""

    family: str
    id: str
    lines: tuple[Line, ...]


def seeds(configs: list[tuple[str, str, bytes]]) -> list[Seed]:
    """(family, id, bytes) of the shipped configs, in id order."""
    out = [Seed(fam, cid, tuple(split_lines(decode(data)))) for fam, cid, data in sorted(configs, key=lambda c: c[1])]
    return out


def value_pool(all_seeds: list[Seed]) -> dict[tuple[str, str], list[str]]:
    """Every (table, key) of the engine tables with the raw values the shipped configs give it."""
    pool: dict[tuple[str, str], set[str]] = {}
    for s in all_seeds:
        for ln in s.lines:
            if ln.key is not None and ln.table in ENGINE_TABLES and ln.value is not None:
                pool.setdefault((ln.table, ln.key), set()).add(ln.value)
    return {k: sorted(v) for k, v in sorted(pool.items())}


def _key_lines(lines: list[Line]) -> list[int]:
    return [i for i, ln in enumerate(lines) if ln.key is not None and ln.table in ENGINE_TABLES]


def _swap(rng: random.Random, lines: list[Line], pool: dict[tuple[str, str], list[str]]) -> str:
    keys = _key_lines(lines)
    if not keys:
        return "none"
    i = rng.choice(keys)
    ln = lines[i]
    values = [v for v in pool.get((str(ln.table), str(ln.key)), []) if v != ln.value]
    if not values:
        return "none"
    lines[i] = ln.with_value(rng.choice(values))
    return "swap"


def _boundary(rng: random.Random, lines: list[Line]) -> str:
    ints = [i for i in _key_lines(lines) if (lines[i].value or "").lstrip("+-").isdigit()]
    if not ints:
        return "none"
    i = rng.choice(ints)
    lines[i] = lines[i].with_value(rng.choice(BOUNDARY_INTS))
    return "boundary"


def _drop(rng: random.Random, lines: list[Line]) -> str:
    keys = _key_lines(lines)
    if not keys:
        return "none"
    del lines[rng.choice(keys)]
    return "drop"


def _duplicate(rng: random.Random, lines: list[Line]) -> str:
    keys = _key_lines(lines)
    headers = [i for i, ln in enumerate(lines) if ln.header]
    if not keys:
        return "none"
    if headers and rng.random() < 0.2:
        i = rng.choice(headers)
        lines.append(lines[i])
        return "duplicate-table"
    i = rng.choice(keys)
    lines.insert(rng.randint(i + 1, len(lines)), lines[i])
    return "duplicate"


def _graft(rng: random.Random, lines: list[Line], pool: dict[tuple[str, str], list[str]]) -> str:
    """A key of another config (another family's included) put into its table here."""
    table, key = rng.choice(sorted(pool))
    at = [i for i, ln in enumerate(lines) if ln.header and ln.table == table]
    if not at:
        return "none"
    value = rng.choice(pool[(table, key)])
    lines.insert(at[0] + 1, Line(f"{key} = {value}", table, key, value))
    return "graft"


def _rename_table(rng: random.Random, lines: list[Line]) -> str:
    headers = [i for i, ln in enumerate(lines) if ln.header]
    if not headers:
        return "none"
    i = rng.choice(headers)
    lines[i] = Line(f"[{lines[i].table}s]", f"{lines[i].table}s", header=True)
    return "rename-table"


def _damage(rng: random.Random, lines: list[Line]) -> str:
    if rng.random() < 0.05:
        lines.append(Line("# " + "x" * _TOO_LARGE))
        return "too-large"
    i = rng.randrange(len(lines))
    text = lines[i].text
    j = rng.randint(0, len(text))
    lines[i] = Line(text[:j] + rng.choice(_BYTE_DAMAGE) + text[j:])
    return "bytes"


def mutate(rng: random.Random, seed: Seed, pool: dict[tuple[str, str], list[str]]) -> tuple[str, str]:
    """(origin, text): ``seed`` with one or two mutations."""
    lines = list(seed.lines)
    done: list[str] = []
    for _ in range(rng.choice((1, 1, 2))):
        roll = rng.random()
        if roll < 0.3:
            what = _swap(rng, lines, pool)
        elif roll < 0.55:
            what = _boundary(rng, lines)
        elif roll < 0.7:
            what = _drop(rng, lines)
        elif roll < 0.8:
            what = _duplicate(rng, lines)
        elif roll < 0.92:
            what = _graft(rng, lines, pool)
        elif roll < 0.95:
            what = _rename_table(rng, lines)
        else:
            what = _damage(rng, lines)
        done.append(what)
    kinds = "+".join(w for w in done if w != "none") or "none"
    return f"mut:{kinds}", join_lines(lines)
