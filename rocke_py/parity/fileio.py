"""Bounded reading of the files the harness takes in.

Reading (DESIGN.md "Bounded everything"): the harness reads only regular files. A path is
first looked at with ``lstat``/``stat`` (which never open it), so a FIFO, a device, a socket
or a directory named like a config is refused without being opened — a FIFO cannot hang the
run, ``/dev/zero`` cannot fill the memory. A symlink is followed only when its target
resolves inside one of the allowed directories (the repository). The file is then opened
with ``O_NONBLOCK`` and checked again with ``fstat`` (it may have been swapped since the
``stat``), and read in a loop that stops after ``limit + 1`` bytes: a reader never holds more
than one byte past its limit, which is how it tells "at the limit" from "over it".
"""
from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Iterable

#: The engines' config limit (rocke_py/engine/emit.py MAX_CONFIG_BYTES, RK_MAX_CONFIG_BYTES in
#: rocke_c/src/emit.c). The harness reads at most one byte more, so that an over-limit config
#: still reaches the engines over the limit and both reject it with E_TOO_LARGE.
MAX_CONFIG_BYTES = 1048576
#: golden.json, known_gaps.toml and the local state files: generous (the shipped golden.json
#: is tens of kilobytes), but a bound.
DATA_FILE_LIMIT = 16 * 1024 * 1024

_CHUNK = 1 << 16


class NotRegularFile(OSError):
    """A path the harness refuses to read: not a regular file, or a symlink leading outside."""


class FileTooLarge(OSError):
    """A data file over its limit (configs are not refused for size: the engines reject them)."""


def kind_of(mode: int) -> str:
    """``a FIFO``, ``a character device``, ... for a ``st_mode``."""
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symlink"), (stat.S_ISREG, "a regular file")):
        if test(mode):
            return name
    return "not a regular file"


def is_inside(real: str, bases: Iterable[Path]) -> bool:
    """``real`` (a resolved path) is one of ``bases`` or below one (each resolved too)."""
    for b in bases:
        base = os.path.realpath(b)
        if real == base or real.startswith(base.rstrip(os.sep) + os.sep):
            return True
    return False


def check_regular(path: Path, inside: Iterable[Path] | None = None) -> os.stat_result:
    """The ``stat`` of ``path`` if the harness may read it; :class:`NotRegularFile` otherwise.

    Never opens the path. ``inside``: the directories a symlink's target must resolve into
    (None: any target).
    """
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        real = os.path.realpath(path)
        try:
            st = os.stat(path)
        except FileNotFoundError:
            raise NotRegularFile(f"is a symlink to a missing file ({real})") from None
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(f"is a symlink to {real}, {kind_of(st.st_mode)}, not a regular file")
        if inside is not None and not is_inside(real, inside):
            bases = list(inside)
            raise NotRegularFile(f"is a symlink to {real}, outside the repository ({bases[0]}): refused")
        return st
    if not stat.S_ISREG(st.st_mode):
        raise NotRegularFile(f"is {kind_of(st.st_mode)}, not a regular file")
    return st


def read_regular(path: Path, limit: int, inside: Iterable[Path] | None = None) -> tuple[bytes, os.stat_result]:
    """At most ``limit + 1`` bytes of a regular file, and its ``fstat``.

    A result longer than ``limit`` means the file is over the limit (the caller decides
    whether that is an error). Raises :class:`NotRegularFile` or another ``OSError``.
    """
    check_regular(path, inside)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # swapped for something else since the stat
            raise NotRegularFile(f"is {kind_of(st.st_mode)}, not a regular file")
        chunks: list[bytes] = []
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, _CHUNK))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks), st
    finally:
        os.close(fd)


def read_data_file(path: Path, limit: int = DATA_FILE_LIMIT) -> bytes:
    """A whole harness data file (golden.json, known_gaps.toml, local state), at most ``limit`` bytes.

    Symlinks must stay inside the directory above the file's own (the repository root for
    ``<root>/parity_configs/<file>``). Raises :class:`NotRegularFile`, :class:`FileTooLarge`
    or another ``OSError``; their text reads after "cannot be read: ".
    """
    data, _ = read_regular(path, limit, inside=(path.parent.parent, path.parent))
    if len(data) > limit:
        raise FileTooLarge(f"more than {limit} bytes (the limit for {path.name})")
    return data
