"""``rocke-parity new FAMILY --from ID [--set key=value ...] [--slug S] [--expect emit|reject:CODE]``.

Copies the source config's text and edits it line by line (the rest of the file, comments
included, is kept as it is): each ``--set`` replaces the value of an existing key, keeping the
line's comment, or adds the key at the end of its table.

``--set`` and ``--unset`` are strict: :mod:`settings` says how. The edited text must parse
(tomllib) to exactly the source's values with the settings applied, or nothing is written.

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
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, TextIO

from rocke_py.configtext import config_string, has_comment, remove_key, set_value
from rocke_py.facts import CONFIG_FILE_NAME, CONFIG_SLUG
from rocke_py.parity.commands.settings import Setting, derived_from, rejected_description, resolve
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

_SLUG_RE = re.compile(rf"^{CONFIG_SLUG}$")
#: The longest slug: a derived one is cut to it, a given one refused over it (the file name and
#: the temporary name beside it stay far below the file systems' 255 bytes).
SLUG_MAX = 60


class WriteError(UsageError):
    """Writing the config failed (exit 2 with one line, like every write of the harness)."""


class Duplicate(Exception):
    def __init__(self, config: Config, why: str) -> None:
        super().__init__(f"duplicate of {config.id}")
        self.config = config
        self.why = why


def derive_slug(source: Config, settings: list[Setting]) -> str:
    parts = [source.slug]
    for s in settings:
        if s.table == "parity":
            continue
        parts.append(f"{s.key}-{s.shown}")
    slug = re.sub(r"[^a-z0-9]+", "-", "-".join(parts).lower()).strip("-")
    return slug[:SLUG_MAX].rstrip("-") or "config"


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
    text = set_value(text, "parity", "description", config_string(desc))
    text = set_value(text, "parity", "expect", config_string(expect))
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
            text = set_value(text, "parity", "isa", config_string(isa))
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
        shown = config_string(isa)
        p(f"isa = {shown}: read from the compiled kernel (llvm22, llvmlite); keep what this config is about")
        p(f"  and prove it with rocke-parity check-llvm {w.id}")
    elif expect.emits:
        p("note: no isa list (llvmlite could not compile the kernel here, or is not installed)")
        p(
            f'  an emitting config needs one: add [parity] isa = "..." to {rel} and prove it with '
            f"rocke-parity check-llvm {w.id} (rocke-parity check-llvm --histogram {w.id} suggests one)"
        )
    if has_comment(text):
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
