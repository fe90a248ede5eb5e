"""The ``--set`` and ``--unset`` settings of ``rocke-parity new``: parsed, checked against the
config subset and the engines' key table, and resolved to their tables.

``--set`` is strict (docs/adding-a-config.md): the key is a name ``[A-Za-z_][A-Za-z0-9_]*``,
bare or after ``target.``, ``problem.``, ``spec.`` or ``parity.``, and must be a key of the
engines' key table for that table (:data:`rocke_py.facts.KEYS`) or a key the source already sets
there; a bare key is looked up in the source's ``[spec]``, ``[problem]``, ``[target]``, then in
the key table. Only ``parity.description`` can be set in ``[parity]``. A key goes only into a
table the source has. The value is exactly one scalar of the config subset: a decimal integer
(optional sign, no leading zero, 32-bit), ``true``/``false``, a one-line basic string ``"..."``
with only the escapes ``\\" \\\\ \\n \\t``, or bare words of ``[A-Za-z0-9_./:+,()-]`` separated
by single spaces, written as a string (``auto`` gives ``"auto"``). No control character or line
break anywhere.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from rocke_py.configtext import bad_char, config_string
from rocke_py.facts import KEYS, TABLES
from rocke_py.parity.inputs.configs import Config
from rocke_py.parity.judge.jobs import UsageError
from rocke_py.parity.store._toml import tomllib

_INT_RE = re.compile(r"^[+-]?(0|[1-9][0-9]*)$")
_NAME_RE = re.compile(r"^(?:([A-Za-z_][A-Za-z0-9_]*)\.)?([A-Za-z_][A-Za-z0-9_]*)$")
_BASIC_STRING_RE = re.compile(r'^"((?:[^"\\]|\\["\\nt])*)"$')
_BARE_WORDS_RE = re.compile(r"^[A-Za-z0-9_./:+,()-]+(?: [A-Za-z0-9_./:+,()-]+)*$")
_NUMBERISH_RE = re.compile(r"^[+-]?[0-9]")
_LOOKUP_ORDER = ("spec", "problem", "target")
_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t"}

_SUBSET = (
    'an integer (decimal, optional sign, no leading zero), true, false, a "string" (one line, escapes '
    '\\" \\\\ \\n \\t only), or bare words of [A-Za-z0-9_./:+,()-] (written as a string)'
)

Scalar = int | bool | str


@dataclass(frozen=True)
class Setting:
    table: str | None  # None: look the key up in [spec], [problem], [target]
    key: str
    value: str  # TOML text of the value
    parsed: Scalar = ""  # what the TOML text means
    unset: bool = False  # --unset: the key is removed (it takes its default)

    @staticmethod
    def parse_unset(text: str) -> Setting:
        m = _NAME_RE.match(text.strip(" "))
        if not m or (m.group(1) is not None and m.group(1) not in TABLES) or m.group(1) == "parity":
            raise UsageError(f"--unset takes a key of [spec], [problem] or [target] (or table.key), not {text!r}")
        return Setting(m.group(1), m.group(2), "", "", unset=True)

    @staticmethod
    def parse(text: str) -> Setting:
        bad = bad_char(text)
        if bad is not None:
            raise UsageError(
                f"--set {text!r}: control character or line break {bad!r}: a setting is one key=value on one line"
            )
        name, eq, raw = text.partition("=")
        name = name.strip(" ")
        if not eq or not name:
            raise UsageError(f"--set takes key=value or table.key=value, not {text!r}")
        m = _NAME_RE.match(name)
        if not m:
            raise UsageError(
                f"--set {name!r}: a key is a name of [A-Za-z_][A-Za-z0-9_]*, bare or after "
                f"{', '.join(t + '.' for t in TABLES)}"
            )
        table, key = m.group(1), m.group(2)
        if table is not None and table not in TABLES:
            raise UsageError(f"--set {name}: unknown table [{table}] (tables: {', '.join(TABLES)})")
        if table == "parity" or (table is None and key in ("description", "expect", "isa")):
            if key == "expect":
                raise UsageError("--set parity.expect: set the expectation with --expect emit|reject:CODE")
            if key == "isa":
                raise UsageError(
                    "--set parity.isa: new writes the isa list the compiled kernel suggests; edit it in "
                    "the written file and prove it with rocke-parity check-llvm ID"
                )
            if key != "description":
                raise UsageError(
                    f"--set {name}: new sets only parity.description in [parity] (the expectation comes from --expect)"
                )
            if table is None:
                raise UsageError(f"--set {name}: the description is parity.description")
        value, parsed = toml_value(raw.strip(" "), name)
        if table == "parity" and not isinstance(parsed, str):
            raise UsageError(f"--set {name}: the description is a string, not {raw.strip(' ')!r}")
        bad = bad_char(str(parsed)) if table == "parity" else None
        if bad is not None:  # the \n and \t escapes are for engine values; a description is one line
            raise UsageError(
                f"--set {name}: a description is one line without control characters, not {str(parsed)[:60]!r} "
                f"(it has {bad!r})"
            )
        return Setting(table, key, value, parsed)

    @property
    def shown(self) -> str:
        """The value as the description and the slug show it."""
        if self.unset:
            return "default"
        if isinstance(self.parsed, bool):
            return "true" if self.parsed else "false"
        return str(self.parsed)


def _unescape(body: str) -> str:
    out, i = [], 0
    while i < len(body):
        if body[i] == "\\":
            out.append(_ESCAPES[body[i + 1]])
            i += 2
        else:
            out.append(body[i])
            i += 1
    return "".join(out)


def toml_value(raw: str, name: str = "value") -> tuple[str, Scalar]:
    """(TOML text, value) of one ``--set`` value; UsageError unless it is one scalar of the subset."""
    if raw == "":
        raise UsageError(f"--set {name}=: missing value (expected {_SUBSET})")
    if _INT_RE.match(raw):
        n = int(raw)
        if not -(2**31) <= n < 2**31:
            raise UsageError(f"--set {name}={raw}: outside the 32-bit range of parity configs")
        return str(n), n
    if raw in ("true", "false"):
        return raw, raw == "true"
    if raw.startswith('"'):
        m = _BASIC_STRING_RE.match(raw)
        if not m:
            raise UsageError(
                f"--set {name}={raw}: not one basic string of the config subset "
                '(one "..." with only the escapes \\" \\\\ \\n \\t, nothing after it)'
            )
        value = _unescape(m.group(1))
        if tomllib.loads(f"x = {raw}\n") != {"x": value}:  # belt and braces: tomllib reads it the same
            raise UsageError(f"--set {name}={raw}: not a TOML basic string")
        return raw, value
    if raw.startswith("'"):
        raise UsageError(f'--set {name}={raw}: literal strings are not in the config subset; use "..."')
    if _NUMBERISH_RE.match(raw):
        raise UsageError(
            f"--set {name}={raw}: not an integer of the config subset (decimal, optional sign, "
            "no leading zero, no underscores, hex or fractions); quote it to mean a string"
        )
    if _BARE_WORDS_RE.match(raw):
        return config_string(raw), raw
    raise UsageError(f"--set {name}={raw}: not one value of the config subset: {_SUBSET}")


def resolve(settings: list[Setting], doc: dict, source_id: str) -> list[tuple[str, Setting]]:
    """The table of each setting, checked against the key table and the source's tables."""
    out: list[tuple[str, Setting]] = []
    seen: set[tuple[str, str]] = set()
    for s in settings:
        table = s.table
        if table is None:
            table = next((t for t in _LOOKUP_ORDER if isinstance(doc.get(t), dict) and s.key in doc[t]), None)
            if table is None:
                table = next((t for t in _LOOKUP_ORDER if s.key in KEYS[t]), None)
            if table is None:
                every = [k for ks in KEYS.values() for k in ks]
                raise UsageError(
                    f"--set {s.key}: unknown key (not a key of [spec], [problem] or [target], nor set "
                    f"in {source_id}){_did_you_mean(s.key, every)}"
                )
        elif table != "parity":
            there = doc.get(table)
            if s.key not in KEYS[table] and not (isinstance(there, dict) and s.key in there):
                raise UsageError(
                    f"--set {table}.{s.key}: [{table}] has no key {s.key!r}{_did_you_mean(s.key, list(KEYS[table]))}"
                )
        if not isinstance(doc.get(table), dict):
            raise UsageError(
                f"--set {table}.{s.key}: {source_id} has no [{table}] table "
                "(new adds keys only to the tables the source has)"
            )
        if s.unset and not (isinstance(doc.get(table), dict) and s.key in doc[table]):
            raise UsageError(f"--unset {table}.{s.key}: {source_id} does not set it")
        if (table, s.key) in seen:
            raise UsageError(f"--set {table}.{s.key} is given twice")
        seen.add((table, s.key))
        out.append((table, s))
    return out


def _did_you_mean(key: str, names: list[str]) -> str:
    close = difflib.get_close_matches(key, names, n=3)
    return f" (did you mean {', '.join(close)}?)" if close else ""


def derived_from(source: Config, resolved: list[tuple[str, Setting]]) -> str:
    what = ", ".join(f"{s.key}={s.shown}" for t, s in resolved if t != "parity")
    return f"derived from {source.id}" + (f" with {what}" if what else "")


def rejected_description(code: str, message: str, derived: str) -> str:
    first = message.splitlines()[0].strip() if message.strip() else ""
    return f"rejected: {code}" + (f" \u2014 {first}" if first else "") + f" ({derived})"
