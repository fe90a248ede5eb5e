"""The harness's local state directory ``<root>/.rocke-parity/`` and atomic file writes.

The directory ignores itself for git (it holds a ``.gitignore`` containing ``*``), so it needs
no entry in the repository's ``.gitignore``. Writes go to a per-write unique temporary file in
the destination directory, then ``os.replace`` — safe with concurrent runs (pytest-xdist, two
terminals): a reader sees the old file or the new one, never half of one.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

STATE_DIR = ".rocke-parity"


def state_dir(root: Path) -> Path:
    d = root / STATE_DIR
    d.mkdir(parents=True, exist_ok=True)
    ignore = d / ".gitignore"
    if not ignore.exists():
        atomic_write(ignore, b"# local state of rocke-parity (last run, output cache): never committed\n*\n")
    return d


def atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o777
    except OSError:
        mode = 0o644
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, mode)  # mkstemp creates 0600; keep the file's mode (0644 for a new one)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def read_bounded(path: Path, limit: int) -> bytes:
    """At most ``limit`` bytes of a regular file; a larger or non-regular file is an OSError.

    Opens without blocking (a FIFO never hangs the reader) and reads at most limit + 1 bytes.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        import stat as _stat

        if not _stat.S_ISREG(st.st_mode):
            raise OSError(f"{path.name} is not a regular file")
        chunks: list[bytes] = []
        left = limit + 1
        while left > 0:
            b = os.read(fd, min(left, 1 << 20))
            if not b:
                break
            chunks.append(b)
            left -= len(b)
        data = b"".join(chunks)
        if len(data) > limit:
            raise OSError(f"{path.name} is larger than {limit} bytes")
        return data
    finally:
        os.close(fd)


class LockTimeout(OSError):
    pass


class file_lock:
    """An exclusive advisory lock (``fcntl.flock``) on ``path``, waiting up to ``timeout`` seconds."""

    def __init__(self, path: Path, timeout: float = 600.0) -> None:
        self.path = path
        self.timeout = timeout
        self.fd: int | None = None

    def __enter__(self) -> "file_lock":
        import fcntl
        import time

        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
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
