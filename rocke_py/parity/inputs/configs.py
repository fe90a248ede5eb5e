"""Discovery of parity configs: ``parity_configs/<family>/<NN>-<slug>.toml``.

The harness reads only the ``[parity]`` table (with :mod:`tomllib`; the engines may not use it),
and keeps the tables it parsed in the local state (:class:`ParityTables`) for the next run.
Everything else in a config belongs to the engines, which get the raw file bytes.

Discovery never raises for a bad tree: it returns the configs it could read plus a list of
run-level failures (:class:`Problem`), so that the gate reports all of them at once and exits 1.

Only regular files are read (:mod:`fileio`): a FIFO, device, socket or directory named like a
config, or a symlink whose target resolves outside the repository, is a problem of its family
and is never opened, so it cannot hang or flood a run of any family. A config is read up to
the engines' limit + 1 bytes: an over-limit file reaches the engines as its first
``MAX_CONFIG_BYTES + 1`` bytes, and both reject it with ``E_TOO_LARGE`` as they would the
whole file (their message then says ``config is 1048577 bytes``). :func:`changed_during_run`
tells whether a config file changed after it was read.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Iterable

from rocke_py.facts import CONFIG_FAMILY_DIR, CONFIG_FILE_NAME
from rocke_py.parity.run.root import CONFIG_DIR
from rocke_py.parity.store._toml import TOMLLimitError, tomllib
from rocke_py.parity.store.fileio import (
    MAX_CONFIG_BYTES,
    NotRegularFile,
    brief,
    is_inside,
    is_text,
    key_list,
    loads_json,
    read_data_file,
    read_regular,
)
from rocke_py.parity.store.state import ABSENT, STATE_DIR, atomic_write, ignored, reason, state_dir

#: Emitting configs are numbered 00..99, negative (expect reject) configs from 100.
NEGATIVE_FROM = 100

_FAMILY_RE = re.compile(rf"^{CONFIG_FAMILY_DIR}$")
# NN is two digits below 100 ("00".."99") and three or more digits without a leading zero from 100.
_CODE_RE = re.compile(r"^[A-Z][A-Z0-9_]*$")
_PARITY_KEYS = ("description", "expect", "isa")
_CONTENT_RE = re.compile(r"^(?:[0-9a-f]{64})?$")


@dataclass(frozen=True)
class Expectation:
    """What a config must do: emit (``reject_code is None``) or be rejected with ``reject_code``."""

    reject_code: str | None = None

    @property
    def emits(self) -> bool:
        return self.reject_code is None

    def __str__(self) -> str:
        return "emit" if self.reject_code is None else f"reject:{self.reject_code}"

    @staticmethod
    def parse(text: str) -> Expectation:
        """``"emit"`` or ``"reject:<CODE>"``; raises ValueError otherwise."""
        if text == "emit":
            return Expectation(None)
        if text.startswith("reject:") and _CODE_RE.match(text[len("reject:") :]):
            return Expectation(text[len("reject:") :])
        raise ValueError(f'expect must be "emit" or "reject:<CODE>" with CODE in UPPER_SNAKE, not {brief(text)}')


@dataclass(frozen=True)
class Config:
    id: str  # "<family>/<NN>-<slug>"
    family: str
    number: int
    slug: str
    path: Path
    data: bytes  # the raw file bytes, exactly what the engines get
    description: str
    expect: Expectation
    isa: str | None
    size: int = -1  # the file's size and mtime when it was read (st_size, st_mtime_ns)
    mtime_ns: int = 0
    content: str = ""  # content_key of what the engines read ("" for a file cut at the limit)

    @cached_property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    def relpath(self, root: Path) -> str:
        try:
            return self.path.relative_to(root).as_posix()
        except ValueError:
            return str(self.path)


@dataclass(frozen=True)
class Problem:
    """A run-level failure found by discovery. ``family`` is None for tree-wide problems."""

    message: str
    family: str | None = None


@dataclass(frozen=True)
class Discovery:
    root: Path
    configs: tuple[Config, ...]
    families: tuple[str, ...]
    problems: tuple[Problem, ...]
    # configs with the same engine tables: problems for engines that read only those (the
    # tree's, by the contract), not for a pair plugged in for tests (which may read comments)
    duplicates: tuple[Problem, ...] = ()

    def by_id(self) -> dict[str, Config]:
        return {c.id: c for c in self.configs}


def config_id(family: str, number: int, slug: str) -> str:
    return f"{family}/{number:02d}-{slug}"


def parse_parity_table(text: str) -> tuple[str, Expectation, str | None]:
    """The ``[parity]`` table of a config's text: (description, expectation, isa).

    Raises ValueError (with a message fit for the user) on any problem, tomllib's included.
    """
    desc, expect, isa, _ = parse_config_text(text)
    return desc, expect, isa


def typed_value(v: object) -> object:
    """A value with its type at every level (``1``, ``1.0`` and ``true`` differ in a config),
    tables order-free: JSON that two equal configs spell alike."""
    if isinstance(v, dict):
        return {"table": sorted([k, typed_value(x)] for k, x in v.items())}
    if isinstance(v, list):
        return {"array": [typed_value(x) for x in v]}
    return [type(v).__name__, repr(v)]


def content_key(doc: dict) -> str:
    """What the engines read of a config (every table but [parity], typed, order-free), hashed:
    two configs with the same key differ only in [parity], comments or layout. The gate's
    duplicate check and ``new``'s both compare it."""
    rest = {t: v for t, v in doc.items() if t != "parity"}
    try:
        canon = json.dumps(typed_value(rest), separators=(",", ":"))
    except RecursionError:  # nested almost as deep as the parser reads: compared with nothing
        return ""
    return hashlib.sha256(canon.encode()).hexdigest()


def parse_config_text(text: str) -> tuple[str, Expectation, str | None, str]:
    """:func:`parse_parity_table` and the :func:`content_key` of the text, from one parse."""
    try:
        doc = tomllib.loads(text)
    except TOMLLimitError as e:  # valid TOML, perhaps, but not for a recursive parser
        raise ValueError(str(e)) from None
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"not valid TOML: {e}") from None
    parity = doc.get("parity")
    if not isinstance(parity, dict):
        raise ValueError("no [parity] table")
    unknown = sorted(set(parity) - set(_PARITY_KEYS))
    if unknown:
        raise ValueError(f"unknown key(s) in [parity]: {key_list(unknown)} (known: {', '.join(_PARITY_KEYS)})")
    if "expect" not in parity:
        raise ValueError('[parity] has no expect ("emit" or "reject:<CODE>")')
    if not isinstance(parity["expect"], str):
        raise ValueError("[parity] expect must be a string")
    expect = Expectation.parse(parity["expect"])
    desc = parity.get("description")
    if not isinstance(desc, str) or not desc.strip():
        raise ValueError("[parity] needs a non-empty description string")
    isa = parity.get("isa")
    if isa is not None and not isinstance(isa, str):
        raise ValueError("[parity] isa must be a string")
    return desc, expect, isa, content_key(doc)


class ParityTables:
    """The ``[parity]`` tables discovery parsed before, kept in the local state between runs
    (``.rocke-parity/parity-tables.json``) by the sha256 of the text parsed.

    :func:`parse_parity_table` is a function of the text alone, so a table found here is the
    one parsing would give; the file is keyed by this module's code and the Python version
    (tomllib's), and holds the tables of one discovery's configs. Parsing a config's whole
    TOML is most of what discovery costs; a run whose configs did not change parses none."""

    FILE_NAME = "parity-tables.json"

    def __init__(self, root: Path) -> None:
        self.path = root / STATE_DIR / self.FILE_NAME
        self.code = _parser_code_id()
        self.old = self._load()
        self.now: dict[str, list] = {}

    def _load(self) -> dict[str, list]:
        """The kept tables: {} without a file or for other code; with a note for a file that
        cannot be read or is no table file (each table is checked where it is used, :func:`_is_table`)."""
        try:
            doc = loads_json(read_data_file(self.path), unique=False, finite=False)
        except ABSENT:
            return {}
        except OSError as e:
            ignored(self.path, reason(e))
            return {}
        except ValueError as e:
            ignored(self.path, str(e))
            return {}
        if not isinstance(doc, dict) or not isinstance(doc.get("tables"), dict):
            ignored(self.path, "not a file of [parity] tables")
            return {}
        return doc["tables"] if self.code and doc.get("code") == self.code else {}

    def parse(self, text: str) -> tuple[str, Expectation, str | None]:
        """:func:`parse_parity_table` of ``text``, from the cache when it holds it (ValueError alike)."""
        desc, expect, isa, _ = self.parse_config(text)
        return desc, expect, isa

    def parse_config(self, text: str) -> tuple[str, Expectation, str | None, str]:
        """:func:`parse_config_text` of ``text``, from the cache when it holds it (ValueError alike)."""
        key = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        got = self.old.get(key)
        # the expectation decides verdicts: a kept table must at least name one the text has
        if not _is_table(got) or (got[0] == "ok" and f'"{got[2]}"' not in text):
            try:
                desc, expect, isa, content = parse_config_text(text)
                got = ["ok", desc, str(expect), isa, content]
            except ValueError as e:
                got = ["error", str(e)]
        self.now[key] = got
        if got[0] == "error":
            raise ValueError(got[1])
        return got[1], Expectation.parse(got[2]), got[3], got[4]

    def save(self) -> None:
        """Keep this discovery's tables (best effort: a tree whose state cannot be written parses again)."""
        if self.now == self.old or not self.code:
            return
        try:
            state_dir(self.path.parent.parent)
            doc = {"code": self.code, "tables": self.now}
            atomic_write(self.path, json.dumps(doc, sort_keys=True, separators=(",", ":")).encode())
        except OSError:
            pass


def _is_table(got: object) -> bool:
    """A kept entry as :meth:`ParityTables.parse` writes it: ``["error", message]`` or
    ``["ok", description, expectation, isa or None, content key]``, with text that can be printed."""
    if not isinstance(got, list) or not got:
        return False
    if got[0] == "error":
        return len(got) == 2 and is_text(got[1])
    if got[0] != "ok" or len(got) != 5 or not all(is_text(x) for x in got[1:3]):
        return False
    if not isinstance(got[4], str) or not _CONTENT_RE.match(got[4]):
        return False
    try:
        Expectation.parse(got[2])
    except ValueError:
        return False
    return got[3] is None or is_text(got[3])


def _parser_code_id() -> str:
    """What the tables depend on besides the text: this module's code and tomllib's (the Python
    version); '' when the code cannot be read (an install without sources: no table is kept)."""
    try:
        code = hashlib.sha256(Path(__file__).read_bytes())
    except OSError:
        return ""
    code.update(sys.version.encode())
    return code.hexdigest()[:16]


def repository_dirs(root: Path) -> tuple[Path, Path]:
    """Where a config symlink may lead: the repository, or wherever parity_configs/ itself is."""
    return (root, root / CONFIG_DIR)


def read_config_bytes(path: Path, inside: tuple[Path, ...] | None = None) -> tuple[bytes, os.stat_result]:
    """A config file's bytes as the engines get them: at most ``MAX_CONFIG_BYTES + 1``.

    Raises :class:`fileio.NotRegularFile` (a FIFO, a device, a symlink leading outside
    ``inside``) or another ``OSError``.
    """
    return read_regular(path, MAX_CONFIG_BYTES, inside)


def load_config(
    path: Path,
    family: str,
    number: int,
    slug: str,
    inside: tuple[Path, ...] | None = None,
    tables: ParityTables | None = None,
) -> Config:
    """Read one config file. Raises ValueError/OSError with a user-facing message."""
    data, st = read_config_bytes(path, inside)
    # an over-limit file was cut at limit + 1 bytes: read [parity] from its complete lines
    head = data if len(data) <= MAX_CONFIG_BYTES else data[: data.rfind(b"\n") + 1]
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"not UTF-8 ({e.reason} at byte {e.start})") from None
    desc, expect, isa, content = tables.parse_config(text) if tables is not None else parse_config_text(text)
    return Config(
        id=config_id(family, number, slug),
        family=family,
        number=number,
        slug=slug,
        path=path,
        data=data,
        description=desc,
        expect=expect,
        isa=isa,
        size=st.st_size,
        mtime_ns=st.st_mtime_ns,
        content=content if len(data) <= MAX_CONFIG_BYTES else "",  # a cut file is not what it holds
    )


def changed_during_run(configs: Iterable[Config], root: Path) -> list[str]:
    """Run-level failures for the configs whose file is not what was read (size, mtime, sha256)."""
    out: list[str] = []
    for c in configs:
        now = ""
        try:
            data, st = read_config_bytes(c.path, repository_dirs(root))
        except FileNotFoundError:
            now = "it is gone"
        except OSError as e:
            now = f"it {e}" if isinstance(e, NotRegularFile) else f"cannot be read: {e.strerror or e}"
        else:
            if (c.size < 0 or (st.st_size, st.st_mtime_ns) == (c.size, c.mtime_ns)) and hashlib.sha256(
                data
            ).hexdigest() == c.sha256:
                continue
        why = f" (now: {now})" if now else ""
        out.append(f"{c.relpath(root)} changed during the run{why}: results are for the old content; rerun")
    return out


def _is_hidden(p: Path) -> bool:
    return p.name.startswith(".")


def discover(root: Path) -> Discovery:
    """All configs under ``root/parity_configs`` with every run-level problem found."""
    base = root / CONFIG_DIR
    problems: list[Problem] = []
    configs: list[Config] = []
    families: list[str] = []
    if not base.is_dir():
        return Discovery(root, (), (), (Problem(f"no {CONFIG_DIR}/ directory in {root}"),))
    inside = repository_dirs(root)
    tables = ParityTables(root)
    for fam_dir in sorted(p for p in base.iterdir() if p.is_dir() and not _is_hidden(p)):
        family = fam_dir.name
        if fam_dir.is_symlink() and not is_inside(os.path.realpath(fam_dir), inside):
            problems.append(
                Problem(
                    f"{CONFIG_DIR}/{family}/: is a symlink to {os.path.realpath(fam_dir)}, "
                    f"outside the repository ({root}): refused",
                    family,
                )
            )
            continue
        if not _FAMILY_RE.match(family):
            problems.append(Problem(f"{CONFIG_DIR}/{family}/: a family directory name must match [a-z][a-z0-9_]*"))
            continue
        families.append(family)
        fam_configs: list[Config] = []
        numbers: dict[int, list[str]] = {}
        for f in sorted(fam_dir.iterdir()):
            if _is_hidden(f):
                continue
            rel = f"{CONFIG_DIR}/{family}/{f.name}"
            if f.is_dir():
                problems.append(Problem(f"{rel}/: unexpected directory inside a family", family))
                continue
            m = CONFIG_FILE_NAME.match(f.name)
            if not m:
                problems.append(
                    Problem(
                        f"{rel}: file name does not match <NN>-<slug>.toml "
                        "(NN: 00-99 for emitting configs, 100+ for rejected ones; slug: [a-z0-9][a-z0-9_-]*)",
                        family,
                    )
                )
                continue
            number, slug = int(m["num"]), m["slug"]
            numbers.setdefault(number, []).append(f.name)
            try:
                cfg = load_config(f, family, number, slug, inside, tables)
            except NotRegularFile as e:
                why = str(e)
                if why.endswith("not a regular file"):
                    why += f" (the harness reads only regular files under {CONFIG_DIR}/)"
                problems.append(Problem(f"{rel}: {why}", family))
                continue
            except (OSError, ValueError) as e:
                problems.append(Problem(f"{rel}: cannot be read by the harness: {e}", family))
                continue
            if cfg.expect.emits and number >= NEGATIVE_FROM:
                problems.append(
                    Problem(
                        f"{rel}: expects emit but is numbered {number} (emitting configs are numbered 00-99)", family
                    )
                )
            elif not cfg.expect.emits and number < NEGATIVE_FROM:
                problems.append(
                    Problem(
                        f"{rel}: expects {cfg.expect} but is numbered {number:02d} "
                        f"(configs expecting a rejection are numbered {NEGATIVE_FROM} and up)",
                        family,
                    )
                )
            fam_configs.append(cfg)
        for number, names in sorted(numbers.items()):
            if len(names) > 1:
                problems.append(
                    Problem(
                        f"{CONFIG_DIR}/{family}/: number {number:02d} is used {len(names)} times "
                        f"({', '.join(names)}): numbers are unique within a family",
                        family,
                    )
                )
        if not any(c.expect.emits for c in fam_configs):
            problems.append(
                Problem(
                    f"{CONFIG_DIR}/{family}/: family has no config that expects emit "
                    "(a family that only rejects compares nothing)",
                    family,
                )
            )
        configs.extend(fam_configs)
    tables.save()
    if not families:
        problems.append(Problem(f"no families (directories) in {CONFIG_DIR}/"))
    if not configs:
        problems.append(Problem(f"no configs found in {CONFIG_DIR}/"))
    return Discovery(root, tuple(configs), tuple(families), tuple(problems), tuple(duplicates(configs, root)))


def duplicates(configs: Iterable[Config], root: Path) -> list[Problem]:
    """Configs with the same engine tables (:func:`content_key`; ``new`` refuses to write one,
    a hand copy gets here): the engines cannot tell them apart, so the second compares nothing.
    A problem of their family, or of the tree when they are in several."""
    same: dict[str, list[Config]] = {}
    for c in configs:
        if c.content:
            same.setdefault(c.content, []).append(c)
    out: list[Problem] = []
    for group in same.values():
        if len(group) < 2:
            continue
        names = [c.relpath(root) for c in group]
        files = ", ".join(names[:-1]) + f" and {names[-1]}"
        families = {c.family for c in group}
        out.append(
            Problem(
                f"{files}: the same [target], [problem] and [spec] values (they differ only in [parity], "
                "comments or layout): a second copy compares nothing; remove one",
                families.pop() if len(families) == 1 else None,
            )
        )
    return out


def resolve_id(disc: Discovery, ref: str) -> Config | None:
    """A config by id (``wgrad/11-kouter-cshuffle``), short id (``wgrad/11``) or file path."""
    by_id = disc.by_id()
    if ref in by_id:
        return by_id[ref]
    p = Path(ref)
    if ref.endswith(".toml"):
        try:
            target = (p if p.is_absolute() else Path.cwd() / p).resolve()
        except OSError:
            target = None
        for c in disc.configs:
            if target is not None and c.path.resolve() == target:
                return c
        stem = ref[: -len(".toml")]
        for prefix in (f"{CONFIG_DIR}/", ""):
            if stem.startswith(prefix) and stem[len(prefix) :] in by_id:
                return by_id[stem[len(prefix) :]]
    if "/" in ref:
        family, _, num = ref.partition("/")
        if num.isdigit():
            hits = [c for c in disc.configs if c.family == family and c.number == int(num)]
            if len(hits) == 1:
                return hits[0]
    return None
