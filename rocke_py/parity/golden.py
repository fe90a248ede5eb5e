"""``parity_configs/golden.json``: the sha256, byte count and kernel name of every identical output.

    {
      "entries": {
        "wgrad/00-baseline": {
          "ll.llvm22": {"bytes": 51234, "kernel_name": "...", "sha256": "..."},
          "spec": {"bytes": 812, "kernel_name": "...", "sha256": "..."}
        }
      },
      "schema": "rocke-parity.golden/v1"
    }

Keys sorted, 2-space indent, trailing newline, so that a change reads as a small diff.
Output keys: ``spec``, ``ir``, ``ll.llvm20``, ``ll.llvm22``, ``ll.llvm23``. Configs that expect a
rejection have no entry. The gate checks each IDENTICAL job against its entry: a different
sha256 or byte count is GOLDEN_DRIFT, no entry is GOLDEN_MISSING.

The manifest stores nothing more than that. To say whether a moved entry changed only by SSA
renumbering, the harness keeps a local, uncommitted, content-addressed cache of the texts
behind the current entries (``.rocke-parity/objects/``, filled by every gate run with the
outputs that match the manifest and by every update). When the old text is in that cache the
update says ``renumbering-only: yes`` or ``no``; otherwise ``renumbering-only: unknown (old
text not stored)`` — e.g. in a fresh clone whose first run is already after the change.
"""
from __future__ import annotations

import json
import re
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

from rocke_py.parity.canon import canonicalise
from rocke_py.parity.configs import CONFIG_DIR
from rocke_py.parity.engines import FLAVORLESS_MODES, FLAVORS, NO_FLAVOR
from rocke_py.parity.fileio import read_data_file
from rocke_py.parity.state import atomic_write, state_dir

SCHEMA = "rocke-parity.golden/v1"
FILE_NAME = "golden.json"
OUTPUT_KEYS = (*FLAVORLESS_MODES, *(f"ll.{f}" for f in FLAVORS))
_SHA_RE = re.compile(r"^[0-9a-f]{64}$")
UNKNOWN_RENUMBERING = "renumbering-only: unknown (old text not stored)"


class GoldenError(Exception):
    """golden.json exists but is not a valid manifest (a run-level failure)."""


def output_key(mode: str, flavor: str) -> str:
    return mode if flavor == NO_FLAVOR else f"{mode}.{flavor}"


def golden_path(root: Path) -> Path:
    return root / CONFIG_DIR / FILE_NAME


@dataclass(frozen=True)
class GoldenEntry:
    sha256: str
    bytes: int
    kernel_name: str

    def as_json(self) -> dict[str, object]:
        return {"bytes": self.bytes, "kernel_name": self.kernel_name, "sha256": self.sha256}


@dataclass(frozen=True)
class Manifest:
    entries: Mapping[str, Mapping[str, GoldenEntry]]
    exists: bool = True

    def get(self, config: str, key: str) -> GoldenEntry | None:
        return self.entries.get(config, {}).get(key)


def load(path: Path) -> Manifest:
    """Read the manifest; a missing file is an empty manifest (every output GOLDEN_MISSING)."""
    if not path.exists():
        return Manifest({}, exists=False)
    try:
        doc = json.loads(read_data_file(path).decode("utf-8"))  # a regular file of at most 16 MiB
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise GoldenError(f"{path.name}: cannot be read: {e}") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise GoldenError(f"{path.name}: schema must be {SCHEMA!r}")
    if set(doc) != {"schema", "entries"} or not isinstance(doc["entries"], dict):
        raise GoldenError(f"{path.name}: expected exactly the keys 'schema' and 'entries' (an object)")
    entries: dict[str, dict[str, GoldenEntry]] = {}
    for cfg, outputs in doc["entries"].items():
        if not isinstance(outputs, dict):
            raise GoldenError(f"{path.name}: entry {cfg!r} must be an object")
        got: dict[str, GoldenEntry] = {}
        for key, e in outputs.items():
            if key not in OUTPUT_KEYS:
                raise GoldenError(f"{path.name}: {cfg}: unknown output {key!r} (one of {', '.join(OUTPUT_KEYS)})")
            if (not isinstance(e, dict) or set(e) != {"sha256", "bytes", "kernel_name"}
                    or not isinstance(e["sha256"], str) or not _SHA_RE.match(e["sha256"])
                    or not isinstance(e["bytes"], int) or isinstance(e["bytes"], bool) or e["bytes"] < 0
                    or not isinstance(e["kernel_name"], str)):
                raise GoldenError(f"{path.name}: {cfg} {key}: expected {{sha256: 64 hex, bytes: int, kernel_name: str}}")
            got[key] = GoldenEntry(e["sha256"], e["bytes"], e["kernel_name"])
        entries[cfg] = got
    return Manifest(entries)


def dumps(manifest: Manifest) -> str:
    doc = {
        "schema": SCHEMA,
        "entries": {cfg: {k: e.as_json() for k, e in outs.items()} for cfg, outs in manifest.entries.items() if outs},
    }
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write(path: Path, manifest: Manifest) -> None:
    atomic_write(path, dumps(manifest).encode("utf-8"))


# ----------------------------------------------------------------------------- output cache

class ObjectCache:
    """Texts by sha256 under ``.rocke-parity/objects/`` (zlib), local and never committed."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._dir: Path | None = None

    @property
    def dir(self) -> Path:
        if self._dir is None:
            self._dir = state_dir(self.root) / "objects"
            self._dir.mkdir(exist_ok=True)
        return self._dir

    def _path(self, sha: str) -> Path:
        return self.dir / f"{sha}.z"

    def has(self, sha: str) -> bool:
        return self._path(sha).exists()

    def get(self, sha: str) -> str | None:
        try:
            return zlib.decompress(read_data_file(self._path(sha))).decode("utf-8", "surrogateescape")
        except (OSError, zlib.error):
            return None

    def put(self, sha: str, text: str) -> None:
        if not self.has(sha):
            atomic_write(self._path(sha), zlib.compress(text.encode("utf-8", "surrogateescape"), 6))

    def prune(self, keep: set[str]) -> None:
        try:
            stored = list(self.dir.glob("*.z"))
        except OSError:  # no cache directory and none can be made: nothing to prune
            return
        for p in stored:
            if p.stem not in keep:
                try:
                    p.unlink()
                except OSError:
                    pass


def renumbering_verdict(cache: ObjectCache | None, old_sha: str, new_text: str | None) -> str:
    old = cache.get(old_sha) if cache is not None else None
    if old is None or new_text is None:
        return UNKNOWN_RENUMBERING
    same = canonicalise(old) == canonicalise(new_text)
    return f"renumbering-only: {'yes' if same else 'no'}"


# ----------------------------------------------------------------------------- update

@dataclass(frozen=True)
class Output:
    """One identical emission of the run, as ``golden --update`` records it."""

    config: str
    key: str
    sha256: str
    bytes: int
    kernel_name: str
    text: str | None


@dataclass(frozen=True)
class Change:
    config: str
    key: str  # "" for a whole-config removal
    kind: str  # "new", "moved", "removed"
    old: GoldenEntry | None
    new: GoldenEntry | None
    note: str = ""

    def line(self) -> str:
        where = f"{self.config} {self.key}" if self.key else self.config
        if self.kind == "new" and self.new is not None:
            return f"{where}: new entry ({self.new.bytes} bytes)"
        if self.kind == "moved" and self.old is not None and self.new is not None:
            delta = self.new.bytes - self.old.bytes
            return f"{where}: {delta:+d} bytes ({self.note})"
        return f"{where}: removed ({self.note})"


def plan_update(manifest: Manifest, outputs: Iterable[Output], ran_rejecting: Iterable[str],
                existing: set[str] | None, cache: ObjectCache | None) -> tuple[Manifest, list[Change]]:
    """The manifest after an update and the list of changes.

    ``outputs``: the identical emissions of the run (only those entries are written).
    ``ran_rejecting``: configs of the run that expect a rejection (their entries go).
    ``existing``: all config ids, on a full (unfiltered) update only: entries of other configs go.
    """
    entries: dict[str, dict[str, GoldenEntry]] = {c: dict(o) for c, o in manifest.entries.items()}
    changes: list[Change] = []
    for out in outputs:
        new = GoldenEntry(out.sha256, out.bytes, out.kernel_name)
        old = entries.get(out.config, {}).get(out.key)
        if old == new:
            continue
        entries.setdefault(out.config, {})[out.key] = new
        if old is None:
            changes.append(Change(out.config, out.key, "new", None, new))
        elif old.sha256 == new.sha256 and old.bytes == new.bytes:
            changes.append(Change(out.config, out.key, "moved", old, new,
                                  f"kernel name {old.kernel_name or '(none)'} -> {new.kernel_name or '(none)'}"))
        else:
            changes.append(Change(out.config, out.key, "moved", old, new,
                                  renumbering_verdict(cache, old.sha256, out.text)))
    for cfg in sorted(set(ran_rejecting)):
        if cfg in entries:
            del entries[cfg]
            changes.append(Change(cfg, "", "removed", None, None, "the config expects a rejection"))
    if existing is not None:
        for cfg in sorted(set(entries) - existing):
            del entries[cfg]
            changes.append(Change(cfg, "", "removed", None, None, "the config no longer exists"))
    ordered = {c: entries[c] for c in sorted(entries) if entries[c]}
    return Manifest(ordered), changes
