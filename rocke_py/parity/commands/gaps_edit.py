"""``rocke-parity gaps add|remove``: ``parity_configs/known_gaps.toml`` edited through one writer.

:func:`known_gaps.entry_toml` is the one writer of an entry: ``gaps add`` appends what it returns, and
``rocke-parity diff`` prints it (with :data:`known_gaps.PLACEHOLDER_REASON`, which the gate's
loader refuses, so that an entry pasted without its reason fails the gate instead of passing it).

``gaps add ID [--mode M] [--flavor F] --reason TEXT`` runs both engines on every job of the
config and judges each as a full gate would (``diff``'s machinery: one verdict per config needs
every mode, and a C crash is re-run under gdb for its frames), then appends one entry per
failing job of the selection (``--mode``, and ``--flavor`` for mode ll, as ``diff`` selects)
with that job's status and evidence. It refuses, writing nothing (exit 1), when the selected
jobs all pass, when one fails with a status a gap cannot name (GOLDEN_*, VERDICT_CHANGED: the fix
is ``golden --update``), when one is listed already, or when the new file would not load cleanly.

``gaps remove ID [--mode M] [--flavor F]`` deletes the entries of the config (by id; a config
that no longer exists too) whose mode, and flavor string (``-``, ``*`` or a flavor), are the
ones given; it refuses when none matches (exit 1).

The file is edited as text, so its comments stay: an entry is its ``[[gap]]`` line, the
comment lines right above it (after the first entry), and every line up to the next entry. A
file whose entries are not written that way (each entry parsed alone must give what the whole
file gives) is not edited (exit 2). Every edit re-reads the file under a lock
(``.rocke-parity/known_gaps.lock``) and replaces it atomically (temp file + rename); a file that
cannot be read or written is one line and exit 2.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, TextIO

from rocke_py.parity.inputs.configs import CONFIG_DIR, discover, resolve_id
from rocke_py.parity.judge.compare import GAP_STATUSES, GOLDEN_STATUSES
from rocke_py.parity.judge.jobs import Job, UsageError
from rocke_py.parity.judge.known_gaps import FILE_NAME, PLACEHOLDER_REASON, KnownGaps, entry_toml, loads
from rocke_py.parity.judge.verdict import Verdict
from rocke_py.parity.run.engines import NO_FLAVOR, EngineSpec
from rocke_py.parity.store._toml import tomllib
from rocke_py.parity.store.fileio import read_data_file, write_output
from rocke_py.parity.store.state import file_lock, state_dir

#: What a new file starts with (the shipped one explains the format at length).
NEW_FILE_HEAD = (
    "# Known gaps: jobs that fail today, each with why and the evidence of how it fails\n"
    '# (docs/user-guide.md, "Known gaps"). The goal is an empty file.\n'
)
#: The shipped file's last line while it lists nothing: dropped by the first entry, put back by
#: removing the last.
NO_ENTRIES = "# No entries today.\n"
_HEADER = re.compile(r"^\s*\[\[\s*gap\s*\]\]\s*(#.*)?$")


class GapsRefused(Exception):
    """An edit refused because of what the engines did or the file holds (one line, exit 1)."""


# ----------------------------------------------------------------------------- the file as text


@dataclass(frozen=True)
class GapsText:
    """The file split into the text before its first entry and each entry's text."""

    head: str
    entries: tuple[str, ...]

    def text(self) -> str:
        return self.head + "".join(self.entries)

    def with_added(self, blocks: list[str]) -> GapsText:
        """With ``blocks`` appended, each after a blank line."""
        head, entries = self.head, list(self.entries)
        if not entries:
            head = head.removesuffix(NO_ENTRIES).rstrip("\n")
            head = head + "\n" if head else ""
        else:
            entries[-1] = entries[-1].rstrip("\n") + "\n"
        return GapsText(head, (*entries, *("\n" + b for b in blocks)))

    def without(self, indexes: set[int]) -> GapsText:
        """Without the entries at these 0-based indexes."""
        kept = tuple(e for i, e in enumerate(self.entries) if i not in indexes)
        head = self.head
        if not kept and NO_ENTRIES not in head:
            head = head.rstrip("\n") + "\n\n" + NO_ENTRIES if head.strip() else NO_ENTRIES
        return GapsText(head, kept)


def split_entries(text: str) -> GapsText:
    """The file's text split at its ``[[gap]]`` lines (:class:`GapsText`); UsageError (exit 2)
    when the split does not give the file's own entries."""
    lines = text.splitlines(keepends=True)
    heads = [i for i, ln in enumerate(lines) if _HEADER.match(ln)]
    starts = [_attached_start(lines, h, heads[n - 1] if n else None) for n, h in enumerate(heads)]
    bounds = [*starts, len(lines)]
    head = "".join(lines[: starts[0]]) if starts else text
    entries = tuple("".join(lines[bounds[n] : bounds[n + 1]]) for n in range(len(starts)))
    parsed = _parse(text).get("gap", [])
    if [_entry_of(e) for e in entries] != parsed or _loads(head) != {}:
        raise UsageError(
            f"cannot edit {FILE_NAME}: its entries are not each a [[gap]] line followed by their keys (edit it by hand)"
        )
    return GapsText(head, entries)


def _attached_start(lines: list[str], header: int, previous: int | None) -> int:
    """Where the entry of the ``[[gap]]`` line at ``header`` starts: at the comment lines right
    above it, when it is not the first entry (the first one's are the file's own)."""
    if previous is None:
        return header
    start = header
    while start - 1 > previous and lines[start - 1].lstrip().startswith("#"):
        start -= 1
    return start


def _parse(text: str) -> dict:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise UsageError(f"cannot edit {FILE_NAME}: it is not valid TOML ({' '.join(str(e).split())})") from None


def _loads(piece: str) -> dict | None:
    """A piece of the file parsed alone, or None when it is not TOML alone (a ``[[gap]]`` line
    inside a multi-line string splits the file in the wrong place)."""
    try:
        return tomllib.loads(piece)
    except tomllib.TOMLDecodeError:
        return None


def _entry_of(piece: str) -> dict | None:
    """The one entry of an entry's piece of the file, or None when the piece is not one entry."""
    doc = _loads(piece)
    gaps = doc.get("gap") if doc is not None else None
    return gaps[0] if doc is not None and set(doc) == {"gap"} and isinstance(gaps, list) and len(gaps) == 1 else None


def gaps_path(root: Path) -> Path:
    return root / CONFIG_DIR / FILE_NAME


def _read(path: Path) -> str:
    """The file's text ("" when it does not exist); UsageError (exit 2) when it cannot be read."""
    if not path.exists() and not path.is_symlink():
        return ""
    try:
        return read_data_file(path).decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"cannot read {CONFIG_DIR}/{FILE_NAME}: {e}") from None


def edit(root: Path, change: Callable[[GapsText], GapsText]) -> GapsText:
    """Read, change and write the file under its lock; returns what was written."""
    path = gaps_path(root)
    with file_lock(state_dir(root) / "known_gaps.lock"):
        text = _read(path)
        new = change(split_entries(text or NEW_FILE_HEAD))
        write_output(str(path), new.text().encode("utf-8"), FILE_NAME)
    return new


# ----------------------------------------------------------------------------- gaps add


def _selected(job: Job, mode: str | None, flavor: str | None) -> bool:
    """``--mode`` and ``--flavor`` as ``diff`` takes them: the flavor selects among the ll jobs."""
    return (mode is None or job.mode == mode) and (flavor is None or job.flavor in (flavor, NO_FLAVOR))


def _refusal(v: Verdict) -> str | None:
    """Why a failing job cannot be added, or None."""
    where = f"{v.job.config} {v.job.mode} {v.job.flavor}"
    if v.gap is not None:
        return (
            f"{where} is listed already ({FILE_NAME} entry {v.gap.index}, which no longer holds: "
            f"now {v.status.value}); rocke-parity gaps remove {v.job.config} --mode {v.job.mode} first"
        )
    if v.status.value in GOLDEN_STATUSES:
        return f"{where} is {v.status.value}, which a gap cannot name: rocke-parity golden --update is its fix"
    if v.status.value not in GAP_STATUSES:
        return f"{where} is {v.status.value}, which a gap cannot name"
    return None


def check_reason(reason: str) -> str:
    reason = reason.strip()
    if not reason:
        raise UsageError("--reason must say why the job fails today and what will remove the entry")
    if reason == PLACEHOLDER_REASON:
        raise UsageError("--reason is the placeholder that diff prints: say why the job fails today")
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in reason):
        raise UsageError("--reason is not valid text (undecodable bytes)")
    return reason


def run_add(
    root: Path,
    ref: str,
    mode: str | None,
    flavor: str | None,
    reason: str,
    engines: EngineSpec,
    timeout: float,
    out: TextIO,
) -> int:
    from rocke_py.parity.commands.diff import run_judged

    reason = check_reason(reason)
    split_entries(_read(gaps_path(root)) or NEW_FILE_HEAD)  # a file it cannot edit: exit 2 before the engines run
    target, judged = run_judged(root, ref, engines, timeout)
    if target.family is None:
        raise UsageError(f"{ref} is not a config of {CONFIG_DIR}/: only a config's jobs can be listed")
    picked = [v for v in judged.verdicts if _selected(v.job, mode, flavor)]
    if not picked:
        raise UsageError(f"{target.label} has no job of mode {mode} that both engines implement")
    failing = [v for v in picked if not v.passed]
    if not failing:
        listed = sum(v.gap is not None for v in picked)
        known = f", {listed} of them as a known gap already" if listed else ""
        raise GapsRefused(f"{target.label}: every selected job passes ({len(picked)} job(s){known}): nothing to list")
    refusals = [why for v in failing if (why := _refusal(v)) is not None]
    if refusals:
        raise GapsRefused(refusals[0] + (f" (and {len(refusals) - 1} more job(s))" if len(refusals) > 1 else ""))
    blocks = [entry_toml(v.job.config, v.job.mode, v.job.flavor, v.status, reason, dict(v.evidence)) for v in failing]
    ids = {c.id for c in discover(root).configs}
    new = edit(root, lambda old: _checked(old, old.with_added(blocks), ids))
    first = len(new.entries) - len(blocks) + 1
    for n, v in enumerate(failing, first):
        print(f"{FILE_NAME}: added entry {n}: {v.job.config} {v.job.mode} {v.job.flavor} {v.status.value}", file=out)
    return 0


def _checked(old: GapsText, new: GapsText, ids: set[str]) -> GapsText:
    """``new``, when the gate's loader finds no problem in it that ``old`` did not have."""
    before = set(_loaded(old, ids).problems)
    fresh = [p for p in _loaded(new, ids).problems if p not in before]
    if fresh:
        raise GapsRefused(f"the new entry would not load: {fresh[0]}")
    return new


def _loaded(text: GapsText, ids: set[str]) -> KnownGaps:
    return loads(text.text(), FILE_NAME, ids)


# ----------------------------------------------------------------------------- gaps remove


def run_remove(root: Path, ref: str, mode: str | None, flavor: str | None, out: TextIO) -> int:
    cfg = resolve_id(discover(root), ref)
    config = cfg.id if cfg is not None else ref  # an entry of a deleted config can be removed too
    removed: list[str] = []

    def change(old: GapsText) -> GapsText:
        hits: set[int] = set()
        for n, entry in enumerate(old.entries):
            gap = _parse(entry)["gap"][0]
            if gap.get("config") == config and mode in (None, gap.get("mode")) and flavor in (None, gap.get("flavor")):
                hits.add(n)
                removed.append(f"entry {n + 1}: {config} {gap.get('mode')} {gap.get('flavor')} {gap.get('status')}")
        if not hits:
            what = " ".join(x for x in (config, mode and f"--mode {mode}", flavor and f"--flavor {flavor}") if x)
            raise GapsRefused(f"no entry of {FILE_NAME} matches {what}")
        return old.without(hits)

    edit(root, change)
    for line in removed:
        print(f"{FILE_NAME}: removed {line}", file=out)
    return 0
