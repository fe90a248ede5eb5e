"""``parity_configs/golden.json``: the pinned coverage of the full gate and every job's verdict.

    {
      "coverage": {"flavors": ["llvm20", "llvm22", "llvm23"], "modes": ["spec", "ir", "ll"]},
      "entries": {
        "wgrad/00-baseline": {
          "ll.llvm22": {"bytes": 51234, "kernel_name": "...", "sha256": "...", "verdict": "emit"},
          "spec": {"bytes": 812, "kernel_name": "...", "sha256": "...", "verdict": "emit"}
        },
        "wgrad/100-unknown-pipeline": {
          "spec": {"code": "WGRAD_UNKNOWN_OPTION", "message": "...", "message_sha256": "...", "verdict": "reject"}
        }
      },
      "schema": "rocke-parity.golden/v2"
    }

Keys sorted, 2-space indent, trailing newline, so that a change reads as a small diff.
Output keys: ``spec``, ``ir``, ``ll.llvm20``, ``ll.llvm22``, ``ll.llvm23``. Every job that
passes has an entry: an emission by its sha256, byte count and kernel name; a rejection by its
code and the sha256 of its message (the message itself is kept beside it, for the reviewer of a
diff; the hash is what is checked, and it must match the text). ``coverage`` pins the modes and
flavors the full gate runs: a full run that covers less fails at run level.

The gate checks each passing job against its entry: no entry is GOLDEN_MISSING; other bytes of
the same verdict are GOLDEN_DRIFT; another verdict (a new rejection code or message, an
emission where a rejection was recorded, or the reverse) is VERDICT_CHANGED.

A version-1 manifest (emissions only, no coverage) is still read, so that ``golden --update``
can migrate it; the gate then reports the missing coverage and rejection entries.

To say whether a moved entry changed only by SSA renumbering, the harness keeps a local,
uncommitted, content-addressed cache of the texts behind the current entries
(``.rocke-parity/objects/``, filled by every gate run with the outputs that match the manifest
and by every update). When the old text is in that cache the update says ``renumbering-only:
yes`` or ``no``; otherwise ``renumbering-only: unknown (old text not stored)``. The same
cache gives the reviewer the text behind a moved entry: :func:`review_lines` is the bounded
canonical diff ``golden --update``, ``golden diff`` and the gate's ``--summary`` print.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

from rocke_py.facts import CONFIG_FAMILY_DIR, CONFIG_STEM, FLAVORLESS_MODES, FLAVORS
from rocke_py.parity.inputs.configs import CONFIG_DIR
from rocke_py.parity.judge.canon import bounded_unified_diff, canonicalise
from rocke_py.parity.run.engines import NO_FLAVOR
from rocke_py.parity.store.fileio import brief, is_text, loads_json, read_data_file
from rocke_py.parity.store.objects import ObjectCache
from rocke_py.parity.store.state import atomic_write

SCHEMA = "rocke-parity.golden/v2"
SCHEMA_V1 = "rocke-parity.golden/v1"
FILE_NAME = "golden.json"
OUTPUT_KEYS = (*FLAVORLESS_MODES, *(f"ll.{f}" for f in FLAVORS))
_SHA_RE = re.compile(r"^[0-9a-f]{64}$")
_CODE_RE = re.compile(r"^[A-Z][A-Z0-9_]*$")
# what configs.discover makes of <family>/<NN>-<slug>.toml: no other key can be a config's
_CONFIG_ID_RE = re.compile(rf"^{CONFIG_FAMILY_DIR}/{CONFIG_STEM}$")
UNKNOWN_RENUMBERING = "renumbering-only: unknown (old text not stored)"
#: What a moved entry's review says when its previous text is not in the local object store.
NOT_KEPT = "previous text not kept here: run the gate on the old revision, or use golden diff REV"
SAME_CANONICAL = "no difference after canonical renumbering (only SSA names moved)"
#: The most diff lines one entry's review prints, and the longest line (an ll line can be long).
REVIEW_LINES = 40
REVIEW_CHARS = 200
EMIT, REJECT = "emit", "reject"


class GoldenError(Exception):
    """golden.json exists but is not a valid manifest (a run-level failure)."""


def is_sha256(text: str) -> bool:
    return bool(_SHA_RE.fullmatch(text))


def output_key(mode: str, flavor: str) -> str:
    return mode if flavor == NO_FLAVOR else f"{mode}.{flavor}"


def golden_path(root: Path) -> Path:
    return root / CONFIG_DIR / FILE_NAME


def message_sha256(message: str) -> str:
    return hashlib.sha256(message.encode("utf-8", "surrogateescape")).hexdigest()


@dataclass(frozen=True)
class GoldenEntry:
    """One job's recorded verdict: an emission (sha256, bytes, kernel name) or a rejection (code, message)."""

    verdict: str  # EMIT or REJECT
    sha256: str = ""
    bytes: int = 0
    kernel_name: str = ""
    code: str = ""
    message_sha256: str = ""
    message: str = ""

    @staticmethod
    def emitted(sha256: str, nbytes: int, kernel_name: str) -> GoldenEntry:
        return GoldenEntry(EMIT, sha256=sha256, bytes=nbytes, kernel_name=kernel_name)

    @staticmethod
    def rejected(code: str, message: str) -> GoldenEntry:
        return GoldenEntry(REJECT, code=code, message_sha256=message_sha256(message), message=message)

    @property
    def emits(self) -> bool:
        return self.verdict == EMIT

    def same_verdict(self, other: GoldenEntry) -> bool:
        """Same kind, and for a rejection the same code and message (the bytes of an emission may differ)."""
        if self.verdict != other.verdict:
            return False
        return self.emits or (self.code == other.code and self.message_sha256 == other.message_sha256)

    def same_record(self, other: GoldenEntry) -> bool:
        """What the gate checks: the same verdict and, for an emission, the same sha256 and size."""
        if not self.same_verdict(other):
            return False
        return not self.emits or (self.sha256 == other.sha256 and self.bytes == other.bytes)

    def short(self) -> str:
        if self.emits:
            return f"emit {self.bytes} bytes (sha256 {self.sha256[:12]})"
        msg = self.message if len(self.message) <= 100 else self.message[:99] + "…"
        return f"reject {self.code} {msg!r}"

    def as_json(self) -> dict[str, object]:
        if self.emits:
            return {"verdict": EMIT, "bytes": self.bytes, "kernel_name": self.kernel_name, "sha256": self.sha256}
        return {"verdict": REJECT, "code": self.code, "message_sha256": self.message_sha256, "message": self.message}


@dataclass(frozen=True)
class Coverage:
    """The modes and flavors the full gate runs, and the stratum of every tuple of the spec's
    axes the shipped configs reach (the coverage ratchet, docs/coverage.md §6), pinned in the
    manifest. ``tuples`` is None in a manifest written before the ratchet."""

    modes: tuple[str, ...]
    flavors: tuple[str, ...]
    tuples: tuple[tuple[str, str], ...] | None = None  # (tuple key, stratum), sorted by key

    def as_json(self) -> dict[str, object]:
        out: dict[str, object] = {"modes": list(self.modes), "flavors": list(self.flavors)}
        if self.tuples is not None:
            by_stratum: dict[str, list[str]] = {}
            for key, stratum in self.tuples:
                by_stratum.setdefault(stratum, []).append(key)
            out["tuples"] = {s: by_stratum[s] for s in sorted(by_stratum)}
        return out

    def describe(self) -> str:
        return f"modes {','.join(self.modes) or '-'}; flavors {','.join(self.flavors) or '-'}"

    def describe_record(self) -> str:
        """describe(), and the count of recorded tuples per stratum (what golden --update moved)."""
        if self.tuples is None:
            return self.describe()
        counts: dict[str, int] = {}
        for _, stratum in self.tuples:
            counts[stratum] = counts.get(stratum, 0) + 1
        return self.describe() + "; tuples " + ", ".join(f"{s} {n}" for s, n in sorted(counts.items()))


@dataclass(frozen=True)
class Manifest:
    entries: Mapping[str, Mapping[str, GoldenEntry]]
    exists: bool = True
    coverage: Coverage | None = None
    schema: str = SCHEMA

    def get(self, config: str, key: str) -> GoldenEntry | None:
        return self.entries.get(config, {}).get(key)

    def count(self) -> int:
        return sum(len(o) for o in self.entries.values())


def _entry(path_name: str, cfg: str, key: str, e: object, v1: bool) -> GoldenEntry:
    where = f"{path_name}: {cfg} {key}"
    if not isinstance(e, dict):
        raise GoldenError(f"{where}: an entry must be an object")
    verdict = EMIT if v1 else e.get("verdict")
    if verdict == EMIT:
        want = {"sha256", "bytes", "kernel_name"} | (set() if v1 else {"verdict"})
        if (
            set(e) != want
            or not isinstance(e["sha256"], str)
            or not _SHA_RE.match(e["sha256"])
            or not isinstance(e["bytes"], int)
            or isinstance(e["bytes"], bool)
            or e["bytes"] < 0
            or not is_text(e["kernel_name"])
        ):
            raise GoldenError(f'{where}: expected {{verdict: "emit", sha256: 64 hex, bytes: int, kernel_name: str}}')
        return GoldenEntry.emitted(e["sha256"], e["bytes"], e["kernel_name"])
    if verdict == REJECT:
        if (
            set(e) != {"verdict", "code", "message_sha256", "message"}
            or not isinstance(e["code"], str)
            or not _CODE_RE.match(e["code"])
            or not isinstance(e["message"], str)
            or not isinstance(e["message_sha256"], str)
            or not _SHA_RE.match(e["message_sha256"])
        ):
            raise GoldenError(
                f'{where}: expected {{verdict: "reject", code: UPPER_SNAKE, message: str, message_sha256: 64 hex}}'
            )
        if not is_text(e["message"]):  # a lone surrogate: the manifest could not be written back
            raise GoldenError(f"{where}: message is not Unicode text (a lone surrogate)")
        if message_sha256(e["message"]) != e["message_sha256"]:
            raise GoldenError(f"{where}: message_sha256 is not the sha256 of message (edited by hand?)")
        return GoldenEntry.rejected(e["code"], e["message"])
    raise GoldenError(f'{where}: verdict must be "emit" or "reject", not {brief(verdict)}')


def _coverage(path_name: str, doc: object) -> Coverage:
    from rocke_py.facts import MODES

    if (
        not isinstance(doc, dict)
        or set(doc) - {"tuples"} != {"modes", "flavors"}
        or not all(isinstance(doc[k], list) and all(isinstance(x, str) for x in doc[k]) for k in ("modes", "flavors"))
    ):
        raise GoldenError(f"{path_name}: coverage must be {{modes: [str], flavors: [str], tuples: {{...}}}}")
    bad = [m for m in doc["modes"] if m not in MODES] + [f for f in doc["flavors"] if f not in FLAVORS]
    if bad or not doc["modes"]:
        names = ", ".join(brief(b) for b in bad) or "no mode"
        raise GoldenError(f"{path_name}: coverage names unknown modes or flavors ({names})")
    modes = tuple(m for m in MODES if m in doc["modes"])
    flavors = tuple(f for f in FLAVORS if f in doc["flavors"])
    return Coverage(modes, flavors, _tuples(path_name, doc.get("tuples")))


def _tuples(path_name: str, doc: object) -> tuple[tuple[str, str], ...] | None:
    """coverage.tuples: {stratum: [tuple key, ...]}, each key under one stratum."""
    if doc is None:
        return None
    if not isinstance(doc, dict) or not all(
        is_text(s) and isinstance(v, list) and all(is_text(k) for k in v) for s, v in doc.items()
    ):
        raise GoldenError(f"{path_name}: coverage.tuples must be {{stratum: [tuple, ...]}}")
    seen: dict[str, str] = {}
    for stratum, keys in doc.items():
        for key in keys:
            if key in seen:
                raise GoldenError(
                    f"{path_name}: coverage.tuples lists {brief(key)} twice ({brief(seen[key])}, {brief(stratum)})"
                )
            seen[key] = stratum
    return tuple(sorted(seen.items()))


def load(path: Path) -> Manifest:
    """Read the manifest; a missing file is an empty manifest (every job GOLDEN_MISSING)."""
    if not path.exists():
        return Manifest({}, exists=False)
    try:
        data = read_data_file(path)  # a regular file of at most 16 MiB
    except OSError as e:
        raise GoldenError(f"{path.name}: cannot be read: {e}") from None
    return loads(data, path.name)


def loads(data: bytes, name: str = FILE_NAME) -> Manifest:
    """The manifest in ``data`` (golden.json's bytes, e.g. as ``git show`` gives them); ``name``
    is what an error names."""
    try:
        doc = loads_json(data)  # a key twice is refused
    except ValueError as e:
        raise GoldenError(f"{name}: cannot be read: {e}") from None
    if not isinstance(doc, dict) or doc.get("schema") not in (SCHEMA, SCHEMA_V1):
        raise GoldenError(f"{name}: schema must be {SCHEMA!r}")
    v1 = doc["schema"] == SCHEMA_V1
    want = {"schema", "entries"} if v1 else {"schema", "entries", "coverage"}
    if set(doc) != want or not isinstance(doc["entries"], dict):
        raise GoldenError(f"{name}: expected exactly the keys {', '.join(sorted(want))} (entries: an object)")
    coverage = None if v1 else _coverage(name, doc["coverage"])
    entries: dict[str, dict[str, GoldenEntry]] = {}
    for cfg, outputs in doc["entries"].items():
        if not _CONFIG_ID_RE.match(cfg):
            raise GoldenError(f"{name}: entry {brief(cfg)} is not a config id (<family>/<NN>-<slug>)")
        if not isinstance(outputs, dict):
            raise GoldenError(f"{name}: entry {cfg!r} must be an object")
        got: dict[str, GoldenEntry] = {}
        for key, e in outputs.items():
            if key not in OUTPUT_KEYS:
                raise GoldenError(f"{name}: {cfg}: unknown output {brief(key)} (one of {', '.join(OUTPUT_KEYS)})")
            got[key] = _entry(name, cfg, key, e, v1)
        entries[cfg] = got
    return Manifest(entries, coverage=coverage, schema=doc["schema"])


def moved_entries(base: Manifest, now: Manifest) -> list[tuple[str, str, GoldenEntry | None, GoldenEntry | None]]:
    """(config, output key, base's entry, now's) of every entry that differs between two
    manifests (None where one has none), in config and key order."""
    out = []
    for cfg in sorted(set(base.entries) | set(now.entries)):
        was, got = base.entries.get(cfg, {}), now.entries.get(cfg, {})
        out += [(cfg, k, was.get(k), got.get(k)) for k in sorted(set(was) | set(got)) if was.get(k) != got.get(k)]
    return out


class RevisionError(Exception):
    """``golden diff REV``: REV is no commit of the tree's repository, or git cannot say (exit 2)."""


def at_revision(root: Path, rev: str) -> Manifest:
    """golden.json as commit ``rev`` has it (``git show REV:parity_configs/golden.json``, read
    only: nothing of that revision runs); an empty manifest (``exists`` False) when it has none."""
    if not rev or rev.startswith("-"):  # never an option of git's
        raise RevisionError(f"{brief(rev)} is not a revision")

    def git(*args: str) -> subprocess.CompletedProcess[bytes]:
        try:
            return subprocess.run(["git", "-C", str(root), *args], capture_output=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise RevisionError(f"git cannot be run: {e}") from None

    done = git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    if done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RevisionError(f"{brief(rev)} is no commit of {root}{': ' + why[-1] if why else ''}")
    where = f"{rev}:./{CONFIG_DIR}/{FILE_NAME}"  # ./: relative to the root, wherever the checkout's top is
    if git("rev-parse", "--verify", "--quiet", where).returncode != 0:
        return Manifest({}, exists=False)
    done = git("show", where)
    if done.returncode != 0:
        raise RevisionError(f"git show {where}: {done.stderr.decode('utf-8', 'replace').strip() or 'failed'}")
    return loads(done.stdout, f"{FILE_NAME} at {rev}")


def dumps(manifest: Manifest) -> str:
    doc: dict[str, object] = {
        "schema": SCHEMA,
        "entries": {cfg: {k: e.as_json() for k, e in outs.items()} for cfg, outs in manifest.entries.items() if outs},
    }
    if manifest.coverage is not None:
        doc["coverage"] = manifest.coverage.as_json()
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write(path: Path, manifest: Manifest) -> None:
    atomic_write(path, dumps(manifest).encode("utf-8"))


# ----------------------------------------------------------------------------- renumbering


def renumbering_verdict(cache: ObjectCache | None, old_sha: str, new_text: str | None) -> str:
    return _renumbering(cache.get(old_sha) if cache is not None else None, new_text)


def _renumbering(old: str | None, new_text: str | None) -> str:
    if old is None or new_text is None:
        return UNKNOWN_RENUMBERING
    same = canonicalise(old) == canonicalise(new_text)
    return f"renumbering-only: {'yes' if same else 'no'}"


def review_lines(old: str | None, new: str | None, old_label: str = "golden", new_label: str = "now") -> list[str]:
    """A moved entry as a reviewer reads it: the unified diff of its previous text against its new
    one, both canonical (as ``diff --canonical``: a renumbering does not bury the real change), cut
    to :data:`REVIEW_LINES` lines of :data:`REVIEW_CHARS` characters; one line when a text is
    missing (the previous one is only in the local store, if anywhere)."""
    if old is None:
        return [NOT_KEPT]
    if new is None:
        return ["new text not available here (not kept, and the engine does not emit the recorded bytes)"]
    a, b = canonicalise(old), canonicalise(new)
    if a == b:
        return [SAME_CANONICAL]
    lines, cut = bounded_unified_diff(a, b, f"{old_label} (canonical)", f"{new_label} (canonical)", REVIEW_LINES)
    lines = [ln if len(ln) <= REVIEW_CHARS else ln[: REVIEW_CHARS - 1] + "…" for ln in lines]
    return lines + ([f"… {cut} more lines"] if cut else [])


# ----------------------------------------------------------------------------- update


@dataclass(frozen=True)
class Output:
    """One job of the run that passes but for the manifest, as ``golden --update`` records it."""

    config: str
    key: str
    entry: GoldenEntry
    text: str | None  # the emitted text, for the renumbering verdict and the cache


@dataclass(frozen=True)
class Change:
    config: str
    key: str  # "" for a whole-config removal
    kind: str  # "new", "moved", "verdict", "removed", "coverage"
    old: GoldenEntry | None
    new: GoldenEntry | None
    note: str = ""
    review: tuple[str, ...] = ()  # a moved emission's text diff (review_lines), printed under line()

    def lines(self) -> list[str]:
        """line(), and under it the review, indented."""
        return [self.line(), *(f"    {r}" for r in self.review)]

    def line(self) -> str:
        where = f"{self.config} {self.key}" if self.key else self.config
        if self.kind == "coverage":
            return f"coverage: {self.note}"
        if self.kind == "new" and self.new is not None:
            what = f"{self.new.bytes} bytes" if self.new.emits else f"rejected {self.new.code}"
            return f"{where}: new entry ({what})"
        if self.kind == "moved" and self.old is not None and self.new is not None:
            delta = self.new.bytes - self.old.bytes
            return f"{where}: {delta:+d} bytes ({self.note})"
        if self.kind == "verdict" and self.old is not None and self.new is not None:
            return f"{where}: verdict changed: {self.old.short()} -> {self.new.short()}"
        return f"{where}: removed ({self.note})"


def plan_update(
    manifest: Manifest,
    outputs: Iterable[Output],
    existing: set[str] | None,
    coverage: Coverage | None,
    cache: ObjectCache | None,
) -> tuple[Manifest, list[Change]]:
    """The manifest after an update and the list of changes.

    ``outputs``: the jobs of the run (only their entries are written; nothing else is touched).
    ``existing``: the job keys of a full run, ``{config: {key, ...}}``: entries of other configs
    or outputs go; ``coverage``: the full run's coverage, pinned. Both are None for a partial
    run, which never deletes what it did not run and never changes the coverage.
    """
    entries: dict[str, dict[str, GoldenEntry]] = {c: dict(o) for c, o in manifest.entries.items()}
    changes: list[Change] = []
    for out in outputs:
        new = out.entry
        old = entries.get(out.config, {}).get(out.key)
        if old == new:
            continue
        entries.setdefault(out.config, {})[out.key] = new
        if old is None:
            changes.append(Change(out.config, out.key, "new", None, new))
        elif not old.same_verdict(new) or not new.emits:
            changes.append(Change(out.config, out.key, "verdict", old, new))
        elif old.sha256 == new.sha256 and old.bytes == new.bytes:
            changes.append(
                Change(
                    out.config,
                    out.key,
                    "moved",
                    old,
                    new,
                    f"kernel name {old.kernel_name or '(none)'} -> {new.kernel_name or '(none)'}",
                )
            )
        else:
            was = cache.get(old.sha256) if cache is not None else None
            review = tuple(review_lines(was, out.text))
            changes.append(Change(out.config, out.key, "moved", old, new, _renumbering(was, out.text), review))
    if existing is not None:
        for cfg in sorted(entries):
            keep = existing.get(cfg)
            if keep is None:
                del entries[cfg]
                changes.append(Change(cfg, "", "removed", None, None, "the config no longer exists"))
                continue
            for key in sorted(set(entries[cfg]) - set(keep)):
                del entries[cfg][key]
                changes.append(Change(cfg, key, "removed", None, None, "no such job in the full run"))
    new_cov = manifest.coverage
    if coverage is not None and coverage != manifest.coverage:
        was = manifest.coverage.describe_record() if manifest.coverage else "none"
        changes.append(Change("", "", "coverage", None, None, f"{was} -> {coverage.describe_record()}"))
        new_cov = coverage
    ordered = {c: entries[c] for c in sorted(entries) if entries[c]}
    if manifest.schema != SCHEMA:
        changes.append(Change("", "", "coverage", None, None, f"schema {manifest.schema} -> {SCHEMA}"))
    return Manifest(ordered, coverage=new_cov), changes
