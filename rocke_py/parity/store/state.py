"""The harness's local state directory ``<root>/.rocke-parity/`` and atomic file writes.

The directory ignores itself for git (it holds a ``.gitignore`` containing ``*``), so it needs
no entry in the repository's ``.gitignore``. Writes go to a per-write unique temporary file in
the destination directory, then ``os.replace`` — safe with concurrent runs (pytest-xdist, two
terminals): a reader sees the old file or the new one, never half of one. A state file that
cannot be read, or holds what its reader does not take, is ignored with a note (:func:`ignored`):
it is a cache or a record, and the run goes on without it.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

STATE_DIR = ".rocke-parity"

#: a state file that is not there: no file, or ``.rocke-parity`` itself not a directory (the
#: writes say so: ``note: could not write``)
ABSENT = (FileNotFoundError, NotADirectoryError)

_noted: set[tuple[str, str]] = set()


def ignored(path: Path, why: str) -> None:
    """``note: .rocke-parity/FILE cannot be read (WHY): ignored`` on stderr, once per file and
    reason in a process (a run reads some files twice)."""
    if (str(path), why) in _noted:
        return
    _noted.add((str(path), why))
    parts = path.parts
    shown = "/".join(parts[parts.index(STATE_DIR) :]) if STATE_DIR in parts else str(path)
    print(f"note: {shown} cannot be read ({why}): ignored", file=sys.stderr)


def reason(e: OSError) -> str:
    """An ``OSError``'s text for a one-line message (``Permission denied``, ``is a FIFO, ...``)."""
    return e.strerror or str(e) or type(e).__name__


def state_dir(root: Path) -> Path:
    d = root / STATE_DIR
    d.mkdir(parents=True, exist_ok=True)
    ignore = d / ".gitignore"
    if not ignore.exists():
        atomic_write(ignore, b"# local state of rocke-parity (last run, output cache): never committed\n*\n")
    return d


def atomic_write(path: Path, data: bytes, fsync: bool = False) -> None:
    """Replace ``path`` with ``data`` all at once, or leave it as it was (raising ``OSError``).

    ``fsync``: make the new content durable before the rename (reports; the cache skips it).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o777
    except OSError:
        mode = 0o644
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            if fsync:
                f.flush()
                os.fsync(f.fileno())
        os.chmod(tmp, mode)  # mkstemp creates 0600; keep the file's mode (0644 for a new one)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class LockTimeout(OSError):
    pass


class file_lock:
    """An exclusive advisory lock (``fcntl.flock``) on ``path``, waiting up to ``timeout`` seconds
    (``None``: as long as it takes)."""

    def __init__(self, path: Path, timeout: float | None = 600.0) -> None:
        self.path = path
        self.timeout = timeout
        self.fd: int | None = None

    def __enter__(self) -> "file_lock":
        import fcntl
        import time

        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        if self.timeout is None:
            fcntl.flock(fd, fcntl.LOCK_EX)
            self.fd = fd
            return self
        end = time.monotonic() + self.timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= end:
                    os.close(fd)
                    raise LockTimeout(f"{self.path} is held by another run for more than {self.timeout:g} s") from None
                time.sleep(0.05)
        self.fd = fd
        return self

    def __exit__(self, *exc) -> None:
        import fcntl

        if self.fd is not None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None
