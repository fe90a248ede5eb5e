"""``rocke-parity new FAMILY --from ID [--set key=value ...] [--slug S] [--expect emit|reject:CODE]``.

Copies the source config's text and edits it line by line (the rest of the file, comments
included, is kept as it is): each ``--set`` replaces the value of an existing key, keeping the
line's comment, or adds the key at the end of its table. A bare ``key`` is looked up in
``[spec]``, then ``[problem]``, then ``[target]`` of the source; a key the source leaves out
goes to ``[problem]`` if it is a ConvProblem field, to ``[target]`` if it is ``arch``, else to
``[spec]``; ``table.key`` names the table. Values are
written as TOML integers (``32``, ``-1``), booleans (``true``), or strings (anything else;
``"auto"`` and ``auto`` both give ``"auto"``).

The candidate runs through the worker pool (both engines, every mode both implement, every
flavor for ``ll``). Without ``--expect`` nothing is written: the command proposes the observed
outcome. With ``--expect`` the file is written only when every job passes with that
expectation, at the next free number of the family (00-99 for emit, 100+ for reject).
"""
from __future__ import annotations

import os
import re
from rocke_py.parity._toml import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from rocke_py.parity.compare import Classified, Status, classify, passes
from rocke_py.parity.configs import (CONFIG_DIR, NEGATIVE_FROM, Config, Expectation, config_id, discover,
                                     parse_parity_table, resolve_id)
from rocke_py.parity.engines import EngineSpec
from rocke_py.parity.gate import UsageError, build_jobs
from rocke_py.parity.runner import EngineLoadError, Pool, WorkItem

_HEADER_RE = re.compile(r"^[ \t]*\[[ \t]*([A-Za-z0-9_-]+)[ \t]*\][ \t]*(?:#.*)?$")
_KEY_RE = re.compile(r"^([ \t]*)([A-Za-z0-9_-]+)([ \t]*=[ \t]*)(.*)$")
_INT_RE = re.compile(r"^[+-]?(0|[1-9][0-9]*)$")
_TABLES = ("parity", "target", "problem", "spec")
_LOOKUP_ORDER = ("spec", "problem", "target")
#: DESIGN.md's [problem] and [target] keys: where a key that the source leaves out goes
PROBLEM_KEYS = frozenset("N Hi Wi C K Y X sH sW pH pW dH dW groups Di Z sD pD dD".split())
TARGET_KEYS = frozenset({"arch"})
_SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


@dataclass(frozen=True)
class Setting:
    table: str | None  # None: look the key up in [spec], [problem], [target]
    key: str
    value: str  # TOML text of the value

    @staticmethod
    def parse(text: str) -> Setting:
        name, eq, raw = text.partition("=")
        name = name.strip()
        if not eq or not name:
            raise UsageError(f"--set takes key=value or table.key=value, not {text!r}")
        table, dot, key = name.rpartition(".")
        if dot and table not in _TABLES:
            raise UsageError(f"--set {name}: unknown table [{table}] (tables: {', '.join(_TABLES)})")
        if not re.match(r"^[A-Za-z0-9_-]+$", key):
            raise UsageError(f"--set {name}: a key is made of [A-Za-z0-9_-]")
        if table == "parity" and key == "expect":
            raise UsageError("set the expectation with --expect emit|reject:CODE, not --set")
        return Setting(table or None, key, toml_value(raw.strip()))


def toml_value(raw: str) -> str:
    if _INT_RE.match(raw):
        n = int(raw)
        if not -2**31 <= n < 2**31:
            raise UsageError(f"--set value {raw} is outside the 32-bit range of parity configs")
        return str(n)
    if raw in ("true", "false"):
        return raw
    if len(raw) >= 2 and raw.startswith('"') and raw.endswith('"'):
        try:
            tomllib.loads(f"x = {raw}")
        except tomllib.TOMLDecodeError:
            raise UsageError(f"--set value {raw} is not a valid TOML basic string") from None
        return raw
    escaped = raw.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{escaped}"'


def _value_end(rest: str) -> int:
    """Length of the value at the start of ``rest`` (a string or a bare token)."""
    if rest.startswith('"'):
        i = 1
        while i < len(rest):
            if rest[i] == "\\":
                i += 2
                continue
            if rest[i] == '"':
                return i + 1
            i += 1
        return len(rest)
    m = re.match(r"[^ \t#]*", rest)
    return m.end() if m else 0


def _tables(lines: list[str]) -> dict[str, tuple[int, dict[str, int], int]]:
    """table -> (header line index, {key: line index}, index of its last key line or header)."""
    out: dict[str, tuple[int, dict[str, int], int]] = {}
    current: str | None = None
    for i, line in enumerate(lines):
        body = line.rstrip("\r\n")
        m = _HEADER_RE.match(body)
        if m:
            current = m.group(1)
            out.setdefault(current, (i, {}, i))
            continue
        k = _KEY_RE.match(body)
        if k and current is not None and not body.lstrip().startswith("#"):
            hdr, keys, _ = out[current]
            keys.setdefault(k.group(2), i)
            out[current] = (hdr, keys, i)
    return out


def set_value(text: str, table: str, key: str, value: str) -> str:
    """``text`` with ``[table] key`` set to ``value`` (TOML text), by editing one line."""
    lines = text.splitlines(keepends=True)
    nl = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    tabs = _tables(lines)
    if table in tabs and key in tabs[table][1]:
        i = tabs[table][1][key]
        body = lines[i].rstrip("\r\n")
        ending = lines[i][len(body):]
        m = _KEY_RE.match(body)
        assert m is not None
        rest = m.group(4)
        end = _value_end(rest)
        lines[i] = m.group(1) + m.group(2) + m.group(3) + value + rest[end:] + ending
    elif table in tabs:
        at = tabs[table][2]
        if not lines[at].endswith("\n"):
            lines[at] += nl
        lines.insert(at + 1, f"{key} = {value}{nl}")
    else:
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += nl
        lines.extend([nl, f"[{table}]{nl}", f"{key} = {value}{nl}"])
    return "".join(lines)


def apply_setting(text: str, s: Setting, source_id: str) -> tuple[str, str]:
    """Apply one ``--set``; returns the new text and the table it went to."""
    table = s.table
    if table is None:
        tabs = _tables(text.splitlines(keepends=True))
        table = next((t for t in _LOOKUP_ORDER if t in tabs and s.key in tabs[t][1]), None)
        if table is None:  # not set in the source: place it by name (the engines still validate it)
            table = "problem" if s.key in PROBLEM_KEYS else "target" if s.key in TARGET_KEYS else "spec"
    return set_value(text, table, s.key, s.value), table


def next_number(configs: list[Config], family: str, reject: bool) -> int:
    nums = [c.number for c in configs if c.family == family and (c.number >= NEGATIVE_FROM) == reject]
    n = max(nums) + 1 if nums else (NEGATIVE_FROM if reject else 0)
    if not reject and n >= NEGATIVE_FROM:
        raise UsageError(f"family {family} has no free number below {NEGATIVE_FROM} after {max(nums):02d}")
    return n


def derive_slug(source: Config, settings: list[Setting]) -> str:
    parts = [source.slug]
    for s in settings:
        if s.table == "parity":
            continue
        parts.append(f"{s.key}-{s.value.strip(chr(34))}")
    slug = re.sub(r"[^a-z0-9]+", "-", "-".join(parts).lower()).strip("-")
    return slug[:60].rstrip("-") or "config"


def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def run_new(root: Path, family: str, source_ref: str, sets: list[str], slug: str | None, expect_text: str | None,
            engines: EngineSpec, workers: int | None, timeout: float, out: TextIO) -> int:
    p = lambda s="": print(s, file=out)  # noqa: E731
    if not re.match(r"^[a-z][a-z0-9_]*$", family):
        raise UsageError(f"family {family!r}: a family name matches [a-z][a-z0-9_]*")
    disc = discover(root)
    source = resolve_id(disc, source_ref)
    if source is None:
        raise UsageError(f"unknown config {source_ref!r} for --from (see rocke-parity list)")
    expect: Expectation | None = None
    if expect_text is not None:
        try:
            expect = Expectation.parse(expect_text)
        except ValueError as e:
            raise UsageError(f"--expect: {e}") from None
    settings = [Setting.parse(s) for s in sets]
    try:
        text = source.data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{source.id} is not UTF-8 text") from None
    applied: list[str] = []
    for s in settings:
        text, table = apply_setting(text, s, source.id)
        applied.append(f"{table}.{s.key}={s.value}")
    if not any(s.table == "parity" and s.key == "description" for s in settings):
        what = ", ".join(f"{s.key}={s.value.strip(chr(34))}" for s in settings if s.table != "parity")
        desc = f"{source.description} (from {source.id}" + (f", {what})" if what else ")")
        text = set_value(text, "parity", "description", _q(desc))
    if expect is not None:
        text = set_value(text, "parity", "expect", _q(str(expect)))
    try:
        parse_parity_table(text)
    except ValueError as e:
        raise UsageError(f"the new config would not be readable by the harness: {e}") from None
    spec_family = tomllib.loads(text).get("spec", {}).get("family")
    if isinstance(spec_family, str) and spec_family != family:
        p(f"warning: the config's [spec] family is {spec_family!r}, but it goes to the {family}/ directory")
    slug = slug or derive_slug(source, settings)
    if not _SLUG_RE.match(slug):
        raise UsageError(f"--slug {slug!r}: a slug matches [a-z0-9][a-z0-9_-]*")

    data = text.encode("utf-8")
    try:
        with Pool(engines, min(workers or os.cpu_count() or 1, 5), timeout) as pool:
            assert pool.info is not None
            modes = pool.info.common_modes
            if not modes:
                raise UsageError("the engines implement no common mode")
            jobs = build_jobs([source], modes, ("llvm20", "llvm22", "llvm23"))
            results = pool.run([WorkItem(j, data, j.mode, j.call_flavor) for j in jobs])
    except EngineLoadError as e:
        p(f"cannot run the engines: {e}")
        return 1

    p(f"candidate: {family}/NN-{slug} from {source.id}" + (f" with {', '.join(applied)}" if applied else ""))
    if expect is None:
        observed = [classify(r, Expectation(), timeout) for r in results]
        for res, cls in zip(results, observed):
            job = res.item.key
            if cls.status in (Status.IDENTICAL, Status.UNEXPECTED_REJECT):
                what = (f"both engines emit {res.py[0].nbytes} identical bytes" if cls.status is Status.IDENTICAL
                        else f"both engines reject {res.py[0].code}: {res.py[0].message}")
            else:
                what = f"{cls.status.value} — {cls.reason}"
            p(f"  {job.mode} {job.flavor}: {what}")  # type: ignore[attr-defined]
        codes = {r.py[0].code for r, c in zip(results, observed) if c.status is Status.UNEXPECTED_REJECT}
        if all(c.status is Status.IDENTICAL for c in observed):
            p("both engines emit identical output for every job — rerun with --expect emit")
        elif all(c.status is Status.UNEXPECTED_REJECT for c in observed) and len(codes) == 1:
            code = codes.pop()
            p(f"both engines reject with {code} — rerun with --expect reject:{code}")
        else:
            p("the engines disagree, or the jobs differ in outcome: there is no expectation to propose "
              "(rocke-parity diff explains a disagreement once the file exists)")
        p("nothing written: a config is never written without its expectation (--expect emit|reject:CODE)")
        return 1

    judged: list[tuple[str, Classified]] = []
    for res in results:
        job = res.item.key
        judged.append((f"{job.mode} {job.flavor}", classify(res, expect, timeout)))  # type: ignore[attr-defined]
    for where, cls in judged:
        p(f"  {where}: {cls.status.value} — {cls.reason}")
    if not all(passes(c.status) for _, c in judged):
        p(f"nothing written: with --expect {expect} not every job passes")
        return 1
    number = next_number(list(disc.configs), family, not expect.emits)
    new_id = config_id(family, number, slug)
    path = root / CONFIG_DIR / family / f"{number:02d}-{slug}.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        p(f"nothing written: {path} exists")
        return 1
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    p(f"wrote {path.relative_to(root).as_posix()} ({new_id}, expects {expect})")
    if expect.emits:
        p(f"next: rocke-parity golden --update --config {new_id}")
    p(f"then: rocke-parity gate --config {new_id}")
    if expect.emits and b"\nisa = " in data:
        p(f"and: the isa list was copied from {source.id}: prove it for this kernel with "
          f"rocke-parity check-llvm {new_id} (edit [parity] isa to what this config must contain)")
    return 0
