"""The content-addressed cache of each engine's outputs, for ``gate --changed`` and ``--reuse``.

After a change to one engine only, the other engine would give what it gave before: its outputs
are looked up instead of recomputed. A result is keyed by what it depends on — the engine's
build id (``version.build_id``: a hash of the Python engine's sources, or of the C engine's
built extension, or of a stand-in file) and the config's bytes, mode and flavor — so a key can
only hit a result of the same engine on the same input. Every gate run records both engines'
results (``.rocke-parity/outputs/<side>-<build id>.json``: each run's kind, code, message,
sha256, bytes and seconds; the texts in the object store, ``.rocke-parity/objects/``). Only a
run that asks (``--changed``, ``--reuse SIDE``) reads them, and says which jobs it reused.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import signal
from pathlib import Path
from typing import Iterable

from rocke_py.parity.run.engines import EngineRun, EngineSpec
from rocke_py.parity.run.processes import start_method
from rocke_py.parity.run.work import JobResult, WorkItem
from rocke_py.parity.store.fileio import is_number, loads_json, read_data_file
from rocke_py.parity.store.objects import ObjectCache
from rocke_py.parity.store.state import ABSENT, STATE_DIR, atomic_write, ignored, reason, state_dir

SCHEMA = "rocke-parity.outputs/v1"
SIDES = ("py", "c")
_RUN_FIELDS = ("kind", "code", "message", "sha256", "nbytes", "seconds")
_OUTCOME_FIELDS = _RUN_FIELDS[:-1]  # what a run gave, without how long it took
#: the records a cache file's ``.fp`` vouches for: a full gate's, and its shards' (up to 8)
_FINGERPRINTS = 8
#: a run's sha256 (a rejection's is empty): it names a file of the object store
_SHA_RE = re.compile(r"^([0-9a-f]{64})?$")


def build_id_of(spec: EngineSpec, side: str) -> str:
    from rocke_py.parity.run.version import build_id

    return build_id(spec.py_emit if side == "py" else spec.c_emit)


def cache_path(root: Path, side: str, build: str) -> Path:
    return root / STATE_DIR / "outputs" / f"{side}-{build}.json"


def item_key(item: WorkItem) -> str:
    return f"{_sha(item.data)}:{item.mode}:{item.call_flavor}"


def _load(path: Path) -> dict[str, list]:
    try:
        return _parse(_read(path))
    except ValueError as e:
        ignored(path, str(e))
        return {}


def _read(path: Path) -> bytes:
    """The file's bytes; b"" when there is none, and (with a note) when it cannot be read."""
    try:
        return read_data_file(path)
    except ABSENT:
        return b""
    except OSError as e:
        ignored(path, reason(e))
        return b""


def _parse(data: bytes) -> dict[str, list]:
    """The file's entries (each checked where it is used: :func:`_run_of`); {} for no file,
    ValueError (one line) for one that is not a cache of outputs."""
    if not data:
        return {}
    doc = loads_json(data, unique=False, finite=False)
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA or not isinstance(doc.get("runs"), dict):
        raise ValueError(f"not a cache of outputs ({SCHEMA})")
    return doc["runs"]


def _run_json(run: EngineRun) -> dict[str, object]:
    return {k: getattr(run, k) for k in _RUN_FIELDS}


def _run_of(d: object) -> EngineRun | None:
    """A cached run as :func:`_run_json` wrote it, or None (an entry edited or corrupt is not used)."""
    if not isinstance(d, dict) or any(k not in d for k in _RUN_FIELDS):
        return None
    kind, code, message, sha, nbytes, seconds = (d[k] for k in _RUN_FIELDS)
    if (
        kind not in ("emitted", "rejected")  # what record() keeps: never an error
        or not all(isinstance(x, str) for x in (code, message, sha))
        or not _SHA_RE.match(sha)
        or not isinstance(nbytes, int)
        or isinstance(nbytes, bool)
        or nbytes < 0
        or not is_number(seconds)
    ):
        return None
    return EngineRun(kind=kind, code=code, message=message, sha256=sha, nbytes=nbytes, seconds=seconds)


def _is_entry(runs: object) -> bool:
    return isinstance(runs, list) and len(runs) == 2 and all(_run_of(d) is not None for d in runs)


def _same_outcome(cached: object, runs: tuple[EngineRun, ...]) -> bool:
    """Whether a cache entry holds these two runs' outcomes (every field but their seconds)."""
    if not isinstance(cached, list) or len(cached) != len(runs):
        return False
    return all(
        isinstance(d, dict) and tuple(d.get(k) for k in _OUTCOME_FIELDS) == run.outcome()
        for d, run in zip(cached, runs)
    )


def record(root: Path, spec: EngineSpec, results: Iterable[JobResult], keep: set[str]) -> None:
    """Both engines' results of this run, merged into their cache files; entries whose config
    bytes are no longer any config's (``keep``: the sha256s of the tree's configs) are dropped.

    Next to a side's file, ``.fp`` holds the sha256 of the file's bytes and the fingerprints of
    the records (a run's outcomes and its tree) known to be in those bytes, the last
    ``_FINGERPRINTS``: a run whose record is one of them, finding those very bytes, neither
    parses nor rewrites the file (the common run, or the shards of one: parsing and comparing
    every entry cost more than judging the run). Any other write of the file (another run's, a
    hand's) changes its bytes, and the entries are compared one by one again."""
    results = [r for r in results if r.death is None]
    objects = ObjectCache(root)
    keys = {id(r): item_key(r.item) for r in results}  # one hash of the config's bytes per job, not per side
    for side in SIDES:
        runs = [(r, r.runs(side)) for r in results]
        runs = [(r, rs) for r, rs in runs if len(rs) == 2 and all(x.kind != "error" for x in rs)]
        if not runs:
            continue
        path = cache_path(root, side, build_id_of(spec, side))
        fp = _fingerprint([(keys[id(r)], rs) for r, rs in runs], keep)
        data = _read(path)
        held, known = _read_fingerprints(path)
        if not data or held != _sha(data):
            known = []
        if fp in known:
            continue  # this very record is in the file
        try:
            old = _parse(data)
        except ValueError as e:
            ignored(path, str(e))
            old = {}
        # what is written back: the tree's entries, each one a cached run could be read from
        entries = {k: v for k, v in old.items() if k.split(":", 1)[0] in keep and _is_entry(v)}
        changed = len(entries) != len(old)
        for r, rs in runs:
            key = keys[id(r)]
            if _same_outcome(entries.get(key), rs):
                continue  # what the cache holds already (its seconds may be older: they only guide scheduling)
            if rs[0].kind == "emitted" and not objects.has(rs[0].sha256):
                text = r.text(side)
                if text is not None:
                    objects.put(rs[0].sha256, text)
            entries[key] = [_run_json(x) for x in rs]
            changed = True
        state_dir(root)
        if changed:  # a gate that changed nothing rewrites nothing
            doc = {"schema": SCHEMA, "side": side, "build_id": path.stem.split("-", 1)[1], "runs": entries}
            data = (json.dumps(doc, sort_keys=True) + "\n").encode()
            atomic_write(path, data)
            known = []
        known = [*known, fp][-_FINGERPRINTS:]
        atomic_write(_fingerprint_path(path), "\n".join([_sha(data), *known]).encode())  # after the file


class Recording:
    """:func:`record` under way (:func:`record_aside`); :meth:`wait` for it to end."""

    def __init__(self, pid: int | None = None, fd: int | None = None, problem: str = "") -> None:
        self.pid, self.fd, self.problem = pid, fd, problem

    def wait(self) -> str:
        """'' once the record is written, else why it could not be (one line)."""
        if self.pid is None:
            return self.problem
        assert self.fd is not None
        with os.fdopen(self.fd, "rb") as f:
            said = f.read(4096).decode("utf-8", "replace").strip()
        _, status = os.waitpid(self.pid, 0)
        self.pid = None
        if os.WIFSIGNALED(status):
            self.problem = f"the process writing it died ({signal.Signals(os.WTERMSIG(status)).name})"
        elif said or os.waitstatus_to_exitcode(status) != 0:
            self.problem = said or f"the process writing it exited with {os.waitstatus_to_exitcode(status)}"
        return self.problem


def record_aside(root: Path, spec: EngineSpec, results: list[JobResult], keep: set[str]) -> Recording:
    """:func:`record`, in a forked child while the caller goes on (the gate judges its results
    meanwhile: after the run this process is alone on one core); here and now where this
    process may not fork (``processes.start_method``: another thread could hold a lock). The
    child reports a failure on a pipe, never raises into the copy of the caller's stack."""
    pid = -1
    if start_method() == "fork":
        r, w = os.pipe()
        try:
            pid = os.fork()
        except OSError:  # no process to be had: written here, as where it may not fork
            os.close(r)
            os.close(w)
    if pid < 0:
        try:
            record(root, spec, results, keep)
        except OSError as e:
            return Recording(problem=str(e))
        return Recording()
    if pid == 0:  # the child: whatever happens, it ends here
        status = 1
        try:
            os.close(r)
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            try:
                record(root, spec, results, keep)
                status = 0
            except OSError as e:
                os.write(w, str(e).encode("utf-8", "replace"))
                status = 0
            except BaseException as e:  # noqa: BLE001 - a bug: said, and the caller reports it
                os.write(w, f"{type(e).__name__}: {e}".encode("utf-8", "replace"))
        finally:
            os._exit(status)
    os.close(w)
    return Recording(pid, r)


def _fingerprint(runs: list[tuple[str, tuple[EngineRun, ...]]], keep: set[str]) -> str:
    """A digest of a run's outcomes by key (every field but the seconds) and of the tree's configs."""
    # repr: unambiguous whatever a message holds, and made in C
    lines = sorted(repr((key, [x.outcome() for x in rs])) for key, rs in runs)
    doc = "\n".join([SCHEMA, *sorted(keep), *lines])
    return _sha(doc.encode("utf-8", "surrogatepass"))


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _fingerprint_path(path: Path) -> Path:
    return path.with_suffix(".fp")


def _read_fingerprints(path: Path) -> tuple[str, list[str]]:
    """``.fp``: the sha256 of the file's bytes it vouches for, and the records' fingerprints."""
    try:
        lines = read_data_file(_fingerprint_path(path)).decode("ascii").split("\n")
    except (OSError, UnicodeDecodeError):
        return "", []
    return lines[0], lines[1:]


def lookup(root: Path, spec: EngineSpec, side: str, items: list[WorkItem]) -> dict[int, tuple]:
    """Index of each item -> (its two cached runs, the first run's text) for those the cache holds."""
    entries = _load(cache_path(root, side, build_id_of(spec, side)))
    objects = ObjectCache(root)
    out: dict[int, tuple] = {}
    for i, item in enumerate(items):
        got = entries.get(item_key(item))
        runs = tuple(_run_of(d) for d in got) if isinstance(got, list) and len(got) == 2 else ()
        if len(runs) != 2 or None in runs:
            continue
        text = objects.get(runs[0].sha256) if runs[0].kind == "emitted" else None
        if runs[0].kind == "emitted" and text is None:
            continue  # the text is gone: run the engine
        out[i] = (runs, text)
    return out


def fill(res: JobResult, cached: tuple) -> JobResult:
    """A result of a job whose ``item.skip`` engine did not run, completed with its cached runs."""
    runs, text = cached
    if res.item.skip == "py":
        return dataclasses.replace(res, py=runs, py_text=text)
    return dataclasses.replace(res, c=runs, c_text=text)
