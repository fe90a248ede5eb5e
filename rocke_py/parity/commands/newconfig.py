"""``rocke-parity new FAMILY --from ID [--set key=value ...] [--slug S] [--expect emit|reject:CODE]``.

Copies the source config's text and edits it line by line (the rest of the file, comments
included, is kept as it is): each ``--set`` replaces the value of an existing key, keeping the
line's comment, or adds the key at the end of its table.

``--set`` is strict (docs/adding-a-config.md): the key is a name ``[A-Za-z_][A-Za-z0-9_]*``,
bare or after ``target.``, ``problem.``, ``spec.`` or ``parity.``, and must be a key of the
engines' key table for that table (:data:`KNOWN_KEYS`) or a key the source already sets there;
a bare key is looked up in the source's ``[spec]``, ``[problem]``, ``[target]``, then in the key
table. Only ``parity.description`` can be set in ``[parity]``. A key goes only into a table the
source has. The value is exactly one scalar of the config subset: a decimal integer (optional
sign, no leading zero, 32-bit), ``true``/``false``, a one-line basic string ``"..."`` with only
the escapes ``\\" \\\\ \\n \\t``, or bare words of ``[A-Za-z0-9_./:+,()-]`` separated by single
spaces, written as a string (``auto`` gives ``"auto"``). No control character or line break
anywhere. The edited text must parse (tomllib) to exactly the source's values with the settings
applied, or nothing is written.

Claims the new file cannot keep true are regenerated or dropped: the description becomes
``derived from SRC with k=v, ...`` (a negative: ``rejected: CODE — <first line of the engines'
message> (derived from ...)``) unless ``--set parity.description=...`` gives one; the source's
``isa`` list is never copied: an emitting config gets the list its own compiled kernel suggests
(``check-llvm``'s ``propose_isa``, llvmlite; without llvmlite, none and a note).

Refused, nothing written: a family other than the result's ``[spec] family`` (exit 2: add
``--set family=...``); a duplicate (exit 1) — the same ``[target]``/``[problem]``/``[spec]``
values as an existing config (typed, whatever the ``[parity]``, comments or layout), or, for an
emitting config, the same ``spec`` output (the normalised spec, defaults spelled out) as an
existing emitting config.

The candidate runs through the worker pool (both engines, every mode both implement, every
flavor for ``ll``). Without ``--expect`` nothing is written: the command proposes the observed
outcome. With ``--expect`` the file is written only when every job passes with that
expectation and all jobs give one verdict (the same code and message for a rejection). The
number is chosen when the file is written, under a lock (``.rocke-parity/new.lock``), as the
next after the highest number of the family's file names (00-99 for emit, 100+ for reject); the
file is written to a hidden temporary file and linked into place, so it appears whole, never
replaces a file, and two concurrent ``new`` runs get different numbers.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, TextIO

from rocke_py.facts import CONFIG_FILE_NAME, CONFIG_SLUG, KEYS
from rocke_py.parity.inputs.configs import (
    CONFIG_DIR,
    NEGATIVE_FROM,
    Config,
    Discovery,
    Expectation,
    config_id,
    content_key,
    discover,
    parse_parity_table,
    resolve_id,
    typed_value,
)
from rocke_py.parity.judge.compare import Status, classify, passes
from rocke_py.parity.judge.jobs import Job, UsageError, build_jobs
from rocke_py.parity.run.engines import FLAVORLESS_CALL_FLAVOR, JOBS_PER_CONFIG, EngineSpec
from rocke_py.parity.run.runner import Pool, pool_size
from rocke_py.parity.run.work import EngineLoadError, JobResult, WorkItem
from rocke_py.parity.store._toml import tomllib
from rocke_py.parity.store.state import file_lock, state_dir

_HEADER_RE = re.compile(r"^[ \t]*\[[ \t]*([A-Za-z0-9_-]+)[ \t]*\][ \t]*(?:#.*)?$")
_KEY_RE = re.compile(r"^([ \t]*)([A-Za-z0-9_-]+)([ \t]*=[ \t]*)(.*)$")
_INT_RE = re.compile(r"^[+-]?(0|[1-9][0-9]*)$")
_NAME_RE = re.compile(r"^(?:([A-Za-z_][A-Za-z0-9_]*)\.)?([A-Za-z_][A-Za-z0-9_]*)$")
_BASIC_STRING_RE = re.compile(r'^"((?:[^"\\]|\\["\\nt])*)"$')
_BARE_WORDS_RE = re.compile(r"^[A-Za-z0-9_./:+,()-]+(?: [A-Za-z0-9_./:+,()-]+)*$")
_NUMBERISH_RE = re.compile(r"^[+-]?[0-9]")
_TABLES = ("parity", "target", "problem", "spec")
_LOOKUP_ORDER = ("spec", "problem", "target")
_SLUG_RE = re.compile(rf"^{CONFIG_SLUG}$")
#: The longest slug: a derived one is cut to it, a given one refused over it (the file name and
#: the temporary name beside it stay far below the file systems' 255 bytes).
SLUG_MAX = 60
_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t"}

#: The engines' keys, by table (rocke_py/facts.py, which the engines read too).
KNOWN_KEYS = KEYS
_SUBSET = (
    'an integer (decimal, optional sign, no leading zero), true, false, a "string" (one line, escapes '
    '\\" \\\\ \\n \\t only), or bare words of [A-Za-z0-9_./:+,()-] (written as a string)'
)

Scalar = int | bool | str


class WriteError(UsageError):
    """Writing the config failed (exit 2 with one line, like every write of the harness)."""


class Duplicate(Exception):
    def __init__(self, config: Config, why: str) -> None:
        super().__init__(f"duplicate of {config.id}")
        self.config = config
        self.why = why


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
        if not m or (m.group(1) is not None and m.group(1) not in _TABLES) or m.group(1) == "parity":
            raise UsageError(f"--unset takes a key of [spec], [problem] or [target] (or table.key), not {text!r}")
        return Setting(m.group(1), m.group(2), "", "", unset=True)

    @staticmethod
    def parse(text: str) -> Setting:
        bad = _bad_char(text)
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
                f"{', '.join(t + '.' for t in _TABLES)}"
            )
        table, key = m.group(1), m.group(2)
        if table is not None and table not in _TABLES:
            raise UsageError(f"--set {name}: unknown table [{table}] (tables: {', '.join(_TABLES)})")
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
        bad = _bad_char(str(parsed)) if table == "parity" else None
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


def _bad_char(text: str) -> str | None:
    for ch in text:
        if ord(ch) < 0x20 or ord(ch) == 0x7F or ch in "\x85\u2028\u2029":
            return ch
    return None


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
        return _q(raw), raw
    raise UsageError(f"--set {name}={raw}: not one value of the config subset: {_SUBSET}")


def _q(s: str) -> str:
    """``s`` as a one-line basic string of the config subset (other control characters: U+FFFD)."""
    out = []
    for ch in s:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif _bad_char(ch) is not None:
            out.append("\ufffd")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


# ----------------------------------------------------------------------------- line edits


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


_Tables = dict[str, tuple[int, dict[str, int], int]]
_NAME_ONLY_RE = re.compile(r"[A-Za-z0-9_-]+")


def _tables(lines: list[str]) -> _Tables:
    """table -> (header line index, {key: line index}, index of its last key line or header)."""
    out: _Tables = {}
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


def _plain(text: str) -> bool:
    """Every line ends in ``\\n`` or ``\\r\\n`` and holds no other line break: joining the
    lines and splitting them again gives the same lines."""
    return text.endswith("\n") and len(text.splitlines()) == text.count("\n")


def _flat(word: str) -> bool:
    return len((word + "x").splitlines()) == 1


def _shifted(tabs: _Tables, after: int) -> _Tables:
    """The index with every line after ``after`` one further down (a line inserted there)."""

    def at(i: int) -> int:
        return i + 1 if i > after else i

    return {t: (at(h), {k: at(i) for k, i in keys.items()}, at(last)) for t, (h, keys, last) in tabs.items()}


class TomlLines:
    """A config text as lines and their :func:`_tables` index, edited as :func:`set_value` and
    :func:`remove_key` edit it. A run of edits keeps the index by hand where a re-scan provably
    finds the same (a plain text, a one-line key and value), and re-scans otherwise. The index
    is never changed in place, so a copy shares it."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines(keepends=True)
        self.tabs = _tables(self.lines)
        self.plain = _plain(text)
        self.stale = False  # the lines were edited as text: split and scan them again

    def copy(self) -> TomlLines:
        out = TomlLines.__new__(TomlLines)
        out.lines, out.tabs, out.plain, out.stale = list(self.lines), self.tabs, self.plain, self.stale
        return out

    def text(self) -> str:
        return "".join(self.lines)

    def _fresh(self) -> None:
        if self.stale:
            text = self.text()
            self.lines = text.splitlines(keepends=True)
            self.tabs = _tables(self.lines)
            self.plain = _plain(text)
            self.stale = False

    def set(self, table: str, key: str, value: str) -> None:
        """``[table] key`` set to ``value`` (TOML text), by editing one line."""
        self._fresh()
        lines, tabs = self.lines, self.tabs
        kept = self.plain and _flat(value) and _NAME_ONLY_RE.fullmatch(key) is not None
        nl = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
        if table in tabs and key in tabs[table][1]:
            i = tabs[table][1][key]
            body = lines[i].rstrip("\r\n")
            ending = lines[i][len(body) :]
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
            if kept:  # the new line is the table's last key line, after its last one
                self.tabs = _shifted(tabs, at)
                hdr, keys, _ = self.tabs[table]
                self.tabs[table] = (hdr, {**keys, key: at + 1}, at + 1)
        else:
            if lines and not lines[-1].endswith("\n"):
                lines[-1] += nl
            lines.extend([nl, f"[{table}]{nl}", f"{key} = {value}{nl}"])
            if kept and _NAME_ONLY_RE.fullmatch(table) is not None:
                n = len(lines)
                self.tabs = {**tabs, table: (n - 2, {key: n - 1}, n - 1)}
            else:
                kept = False
        self.stale = not kept

    def remove(self, table: str, key: str) -> None:
        """Without the line of ``[table] key`` (unchanged if there is none)."""
        self._fresh()
        if table in self.tabs and key in self.tabs[table][1]:
            del self.lines[self.tabs[table][1][key]]
            # a later line of the same key becomes the key's line: scan again
            if self.plain:
                self.tabs = _tables(self.lines)
            else:
                self.stale = True


def set_value(text: str, table: str, key: str, value: str) -> str:
    """``text`` with ``[table] key`` set to ``value`` (TOML text), by editing one line."""
    doc = TomlLines(text)
    doc.set(table, key, value)
    return doc.text()


def remove_key(text: str, table: str, key: str) -> str:
    """``text`` without the line of ``[table] key`` (unchanged if there is none)."""
    doc = TomlLines(text)
    doc.remove(table, key)
    return doc.text()


def _has_comment(text: str) -> bool:
    for line in text.splitlines():
        body = line.strip()
        if body.startswith("#"):
            return True
        k = _KEY_RE.match(line)
        if k:
            rest = k.group(4)
            if "#" in rest[_value_end(rest) :]:
                return True
        elif "#" in body:
            return True
    return False


# ----------------------------------------------------------------------------- settings


def resolve(settings: list[Setting], doc: dict, source_id: str) -> list[tuple[str, Setting]]:
    """The table of each setting, checked against the key table and the source's tables."""
    out: list[tuple[str, Setting]] = []
    seen: set[tuple[str, str]] = set()
    for s in settings:
        table = s.table
        if table is None:
            table = next((t for t in _LOOKUP_ORDER if isinstance(doc.get(t), dict) and s.key in doc[t]), None)
            if table is None:
                table = next((t for t in _LOOKUP_ORDER if s.key in KNOWN_KEYS[t]), None)
            if table is None:
                every = [k for ks in KNOWN_KEYS.values() for k in ks]
                raise UsageError(
                    f"--set {s.key}: unknown key (not a key of [spec], [problem] or [target], nor set "
                    f"in {source_id}){_did_you_mean(s.key, every)}"
                )
        elif table != "parity":
            there = doc.get(table)
            if s.key not in KNOWN_KEYS[table] and not (isinstance(there, dict) and s.key in there):
                raise UsageError(
                    f"--set {table}.{s.key}: [{table}] has no key {s.key!r}"
                    f"{_did_you_mean(s.key, list(KNOWN_KEYS[table]))}"
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


def derive_slug(source: Config, settings: list[Setting]) -> str:
    parts = [source.slug]
    for s in settings:
        if s.table == "parity":
            continue
        parts.append(f"{s.key}-{s.shown}")
    slug = re.sub(r"[^a-z0-9]+", "-", "-".join(parts).lower()).strip("-")
    return slug[:SLUG_MAX].rstrip("-") or "config"


def derived_from(source: Config, resolved: list[tuple[str, Setting]]) -> str:
    what = ", ".join(f"{s.key}={s.shown}" for t, s in resolved if t != "parity")
    return f"derived from {source.id}" + (f" with {what}" if what else "")


def rejected_description(code: str, message: str, derived: str) -> str:
    first = message.splitlines()[0].strip() if message.strip() else ""
    return f"rejected: {code}" + (f" \u2014 {first}" if first else "") + f" ({derived})"


# ----------------------------------------------------------------------------- duplicates


def content_duplicate(configs: tuple[Config, ...] | list[Config], content: str) -> Config | None:
    """The config whose engine tables are `content` (configs.content_key), as discovery read
    them; "" (a text too deep to key) matches nothing."""
    if not content:
        return None
    return next((c for c in configs if c.content == content), None)


_SAME_CONTENT = "the same [target], [problem] and [spec] values (it differs only in [parity], comments or layout)"
_SAME_SPEC = (
    "both engines give it the same spec output (the normalised spec: every default and deduction "
    "spelled out), so it compares nothing new"
)


def _spec_text(res: JobResult) -> str | None:
    """The spec output when both engines emitted the same text, else None."""
    if not res.py or not res.c or res.death is not None:
        return None
    if res.py[0].kind != "emitted" or res.c[0].kind != "emitted" or res.py[0].sha256 != res.c[0].sha256:
        return None
    return res.py_text


def spec_duplicate(pool: Pool, disc: Discovery, candidate: list[JobResult]) -> Config | None:
    """An existing emitting config with the candidate's spec output, if any."""
    mine = next((_spec_text(r) for r in candidate if r.item.mode == "spec"), None)
    if mine is None:
        return None
    others = [c for c in disc.configs if c.expect.emits]
    results = pool.run([WorkItem(c.id, c.data, "spec", FLAVORLESS_CALL_FLAVOR) for c in others])
    by_id = {c.id: c for c in others}
    for res in results:
        if _spec_text(res) == mine:
            return by_id[str(res.item.key)]
    return None


# ----------------------------------------------------------------------------- writing


def _numbers(family_dir: Path) -> list[int]:
    try:
        names = os.listdir(family_dir)
    except FileNotFoundError:
        return []
    return [int(m["num"]) for n in names if (m := CONFIG_FILE_NAME.match(n))]


def next_number(numbers: list[int], family: str, reject: bool) -> int:
    nums = [n for n in numbers if (n >= NEGATIVE_FROM) == reject]
    n = max(nums) + 1 if nums else (NEGATIVE_FROM if reject else 0)
    if not reject and n >= NEGATIVE_FROM:
        raise UsageError(f"family {family} has no free number below {NEGATIVE_FROM} after {max(nums):02d}")
    return n


@contextlib.contextmanager
def _new_lock(root: Path) -> Iterator[None]:
    """Serialises the number choice and the write of concurrent ``new`` runs (released if one dies)."""
    try:
        import fcntl  # noqa: F401 - only to know whether the platform has flock
    except ImportError:  # no flock here: the hard link alone still never replaces a file
        yield
        return
    with file_lock(state_dir(root) / "new.lock", timeout=None):
        yield


@dataclass(frozen=True)
class Written:
    id: str
    path: Path
    number: int


def write_new_config(
    root: Path, family: str, slug: str, data: bytes, reject: bool, check: Callable[[], None] | None
) -> Written:
    """Write ``data`` as ``<family>/<next number>-<slug>.toml``: under the lock, ``check()`` first
    (it raises to refuse), then the number from the directory as it is now; a hidden temporary
    file hard-linked into place, so the file appears whole and never replaces another. A number
    that a writer outside ``new`` took meanwhile is given back and the next one tried."""
    family_dir = root / CONFIG_DIR / family
    where = family_dir
    try:
        family_dir.mkdir(parents=True, exist_ok=True)
        with _new_lock(root):
            if check is not None:
                check()
            fd, tmp = tempfile.mkstemp(prefix=f".new-{slug}.", suffix=".tmp", dir=family_dir)
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                    f.flush()
                    os.fsync(f.fileno())
                os.chmod(tmp, 0o644)
                for _ in range(1000):
                    number = next_number(_numbers(family_dir), family, reject)
                    path = where = family_dir / f"{number:02d}-{slug}.toml"
                    try:
                        os.link(tmp, path)
                    except FileExistsError:
                        continue
                    if _numbers(family_dir).count(number) > 1:
                        path.unlink()
                        continue
                    return Written(config_id(family, number, slug), path, number)
                raise WriteError(f"cannot write {where}: no free number found")
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
    except OSError as e:
        raise WriteError(f"cannot write {where}: {e}") from None


# ----------------------------------------------------------------------------- the command


def _check_family(family: str, doc: dict, source: Config, resolved: list[tuple[str, Setting]]) -> None:
    spec = doc.get("spec")
    got = spec.get("family") if isinstance(spec, dict) else None
    set_here = any(t == "spec" and s.key == "family" for t, s in resolved)
    if isinstance(got, str):
        if got == family:
            return
        if set_here:
            raise UsageError(
                f"{family}/ holds configs whose [spec] family is {family!r}, but with --set "
                f"family={got} the new config's [spec] family is {got!r}: run rocke-parity new {got} ..."
            )
        raise UsageError(
            f"{family}/ holds configs whose [spec] family is {family!r}, but the new config's "
            f"[spec] family is {got!r} (from {source.id}): add --set family={family} to derive a "
            f"{family} config from it, or run rocke-parity new {got} ..."
        )
    if source.family != family:
        raise UsageError(
            f"{source.id} is a {source.family} config with no [spec] family string: derive it into "
            f"{source.family}/, or add --set family={family}"
        )


def _expected_doc(source_doc: dict, resolved: list[tuple[str, Setting]], desc: str, expect: str) -> dict:
    want = {t: dict(v) if isinstance(v, dict) else v for t, v in source_doc.items()}
    for table, s in resolved:
        if s.unset:
            del want[table][s.key]
        elif table != "parity":
            want[table][s.key] = s.parsed
    want["parity"].pop("isa", None)
    want["parity"]["description"] = desc
    want["parity"]["expect"] = expect
    return want


def build_text(source_text: str, source_doc: dict, resolved: list[tuple[str, Setting]], desc: str, expect: str) -> str:
    """The new config's text; UsageError unless it parses to exactly the intended values."""
    text = source_text
    for table, s in resolved:
        if s.unset:
            text = remove_key(text, table, s.key)
        elif table != "parity":
            text = set_value(text, table, s.key, s.value)
    text = remove_key(text, "parity", "isa")
    text = set_value(text, "parity", "description", _q(desc))
    text = set_value(text, "parity", "expect", _q(expect))
    try:
        doc = tomllib.loads(text)
        parse_parity_table(text)
    except (tomllib.TOMLDecodeError, ValueError) as e:
        raise UsageError(f"the new config would not be readable by the harness: {e}") from None
    want = _expected_doc(source_doc, resolved, desc, expect)
    if typed_value(doc) != typed_value(want) or list(doc) != list(source_doc):
        raise UsageError(
            "the edited text does not parse to the intended values (is a key of the source on "
            "an unusual line?): nothing written; write this config by hand"
        )
    return text


def _run(pool: Pool, source: Config, data: bytes) -> list[JobResult[Job]]:
    assert pool.info is not None
    modes = pool.info.common_modes
    if not modes:
        raise UsageError("the engines implement no common mode")
    jobs = build_jobs([source], modes, ("llvm20", "llvm22", "llvm23"))
    return pool.run([WorkItem(j, data, j.mode, j.call_flavor) for j in jobs])


def _where(res: JobResult[Job]) -> str:
    job = res.item.key
    return f"{job.mode} {job.flavor}"


def run_new(
    root: Path,
    family: str,
    source_ref: str,
    sets: list[str],
    slug: str | None,
    expect_text: str | None,
    engines: EngineSpec,
    workers: int | None,
    timeout: float,
    out: TextIO,
    unsets: tuple[str, ...] = (),
) -> int:
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
    settings = [Setting.parse(s) for s in sets] + [Setting.parse_unset(u) for u in unsets]
    try:
        source_text = source.data.decode("utf-8")
        source_doc = tomllib.loads(source_text)
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        raise UsageError(f"{source.id} is not UTF-8 TOML text") from None
    resolved = resolve(settings, source_doc, source.id)
    slug = slug or derive_slug(source, settings)
    if len(slug) > SLUG_MAX:  # checked before any work: the write would fail only after every job ran
        raise UsageError(f"--slug: a slug is at most {SLUG_MAX} characters, not {len(slug)} ({slug[:20]}…)")
    if not _SLUG_RE.match(slug):
        raise UsageError(f"--slug {slug!r}: a slug matches {CONFIG_SLUG}")
    own_desc = next((str(s.parsed) for t, s in resolved if t == "parity" and s.key == "description"), None)
    derived = derived_from(source, resolved)
    expect_str = str(expect) if expect is not None else str(source.expect)
    if own_desc is not None:
        desc = own_desc
    elif expect is not None and not expect.emits:
        desc = rejected_description(expect.reject_code or "", "", derived)  # the message comes after the run
    else:
        desc = derived
    text = build_text(source_text, source_doc, resolved, desc, expect_str)
    doc = tomllib.loads(text)
    _check_family(family, doc, source, resolved)

    applied = [f"{t}.{s.key}" + (" unset" if s.unset else f"={s.value}") for t, s in resolved]
    p(f"candidate: {family}/NN-{slug} from {source.id}" + (f" with {', '.join(applied)}" if applied else ""))
    content = content_key(doc)
    dup = content_duplicate(disc.configs, content)
    if dup is not None:
        p(f"nothing written: the new config would be a duplicate of {dup.id}: {_SAME_CONTENT}")
        return 1

    data = text.encode("utf-8")
    try:
        with Pool(engines, pool_size(workers, JOBS_PER_CONFIG), timeout) as pool:
            results = _run(pool, source, data)
            if expect is None:
                return _propose(p, pool, disc, results, timeout)
            judged = [(res, classify(res, expect, timeout)) for res in results]
            for res, cls in judged:
                p(f"  {_where(res)}: {cls.status.value} \u2014 {cls.reason}")
            if not all(passes(c.status) for _, c in judged):
                p(f"nothing written: with --expect {expect} not every job passes")
                return 1
            verdicts = {(r.py[0].kind, r.py[0].code, r.py[0].message) for r, _ in judged}
            if len(verdicts) > 1:
                p(
                    "nothing written: not one verdict for the config: its jobs reject with different messages "
                    f"({'; '.join(sorted(repr(m) for _, _, m in verdicts))})"
                )
                return 1
            if expect.emits:
                dup = spec_duplicate(pool, disc, results)
                if dup is not None:
                    p(f"nothing written: the new config would be a duplicate of {dup.id}: {_SAME_SPEC}")
                    return 1
            elif own_desc is None:
                # the description names the engines' message: rebuild, run again, judge what is written
                first = results[0].py[0]
                desc = rejected_description(first.code, first.message, derived)
                text = build_text(source_text, source_doc, resolved, desc, expect_str)
                data = text.encode("utf-8")
                again = _run(pool, source, data)
                if (
                    any(not passes(classify(r, expect, timeout).status) for r in again)
                    or {(r.py[0].kind, r.py[0].code, r.py[0].message) for r in again} != verdicts
                ):
                    p("nothing written: the engines' verdict changed when only [parity] description changed")
                    return 1
    except EngineLoadError as e:
        p(f"cannot run the engines: {e}")
        return 1

    isa = None
    if expect.emits:
        isa = _suggested_isa(data, timeout)
        if isa:
            text = set_value(text, "parity", "isa", _q(isa))
            data = text.encode("utf-8")

    def check() -> None:  # under the lock: a config that another writer added since the start
        dup = content_duplicate(discover(root).configs, content)
        if dup is not None:
            raise Duplicate(dup, _SAME_CONTENT)

    try:
        w = write_new_config(root, family, slug, data, not expect.emits, check)
    except Duplicate as d:
        p(f"nothing written: the new config would be a duplicate of {d.config.id}: {d.why}")
        return 1
    rel = w.path.relative_to(root).as_posix() if w.path.is_relative_to(root) else str(w.path)
    p(f"wrote {rel} ({w.id}, expects {expect})")
    if expect.emits:
        p(f"next: rocke-parity golden --update --config {w.id}")
    p(f"then: rocke-parity gate --config {w.id}")
    if expect.emits and isa:
        p(f"isa = {_q(isa)}: read from the compiled kernel (llvm22, llvmlite); keep what this config is about")
        p(f"  and prove it with rocke-parity check-llvm {w.id}")
    elif expect.emits:
        p("note: no isa list (llvmlite could not compile the kernel here, or is not installed)")
        p(
            f'  an emitting config needs one: add [parity] isa = "..." to {rel} and prove it with '
            f"rocke-parity check-llvm {w.id} (rocke-parity check-llvm --histogram {w.id} suggests one)"
        )
    if _has_comment(text):
        p(f"note: the comments were copied from {source.id} as they are: check that they still hold")
    return 0


def _suggested_isa(data: bytes, timeout: float) -> str | None:
    """The isa list the new config's compiled kernel suggests; None where it cannot be had."""
    from rocke_py.check.isa import suggested_isa

    try:
        return suggested_isa(data, max(timeout, 60.0))
    except (OSError, RuntimeError):
        return None


def _propose(p: Callable[[str], None], pool: Pool, disc: Discovery, results: list[JobResult], timeout: float) -> int:
    observed = [classify(r, Expectation(), timeout) for r in results]
    for res, cls in zip(results, observed):
        if cls.status in (Status.IDENTICAL, Status.UNEXPECTED_REJECT):
            what = (
                f"both engines emit {res.py[0].nbytes} identical bytes"
                if cls.status is Status.IDENTICAL
                else f"both engines reject {res.py[0].code}: {res.py[0].message}"
            )
        else:
            what = f"{cls.status.value} \u2014 {cls.reason}"
        p(f"  {_where(res)}: {what}")
    verdicts = {
        (r.py[0].code, r.py[0].message) for r, c in zip(results, observed) if c.status is Status.UNEXPECTED_REJECT
    }
    if all(c.status is Status.IDENTICAL for c in observed):
        dup = spec_duplicate(pool, disc, results)
        if dup is not None:
            p(
                f"both engines emit identical output for every job, but the config would be a duplicate of "
                f"{dup.id}: {_SAME_SPEC}"
            )
        else:
            p("both engines emit identical output for every job \u2014 rerun with --expect emit")
    elif all(c.status is Status.UNEXPECTED_REJECT for c in observed) and len(verdicts) == 1:
        code = verdicts.pop()[0]
        p(f"both engines reject with {code} \u2014 rerun with --expect reject:{code}")
    else:
        p(
            "the engines disagree, or the jobs differ in outcome: there is no expectation to propose "
            "(rocke-parity diff explains a disagreement once the file exists)"
        )
    p("nothing written: a config is never written without its expectation (--expect emit|reject:CODE)")
    return 1
