"""Bounded reading of the files the harness takes in, and safe writing of the files it puts out.

Reading (docs/gate-honesty.md; docs/user-guide.md, "Inputs, outputs and signals"): the harness
reads only regular files. A path is
first looked at with ``lstat``/``stat`` (which never open it), so a FIFO, a device, a socket
or a directory named like a config is refused without being opened — a FIFO cannot hang the
run, ``/dev/zero`` cannot fill the memory. A symlink is followed only when its target
resolves inside one of the allowed directories (the repository). The file is then opened
with ``O_NONBLOCK`` and checked again with ``fstat`` (it may have been swapped since the
``stat``), and read in a loop that stops after ``limit + 1`` bytes: a reader never holds more
than one byte past its limit, which is how it tells "at the limit" from "over it".

Writing (the same sections): a report goes to a temporary file in the
destination's directory, then ``os.replace`` (:func:`state.atomic_write`), so a reader — or a
full disk — never leaves half a report. ``-`` means standard output. A destination that is a
directory, not a regular file (``/dev/full``, a FIFO) or a read-only file is refused before
anything is written. Every failure is a :class:`WriteError` whose text is one line, for
``rocke-parity CMD: cannot write --json FILE: <reason>`` and exit 2.
"""

from __future__ import annotations

import json
import math
import os
import re
import reprlib
import stat
import sys
from pathlib import Path
from typing import BinaryIO, Callable, Iterable

from rocke_py.parity.store.state import atomic_write

#: The engines' config limit (rocke_py/engine/emit.py MAX_CONFIG_BYTES, RK_MAX_CONFIG_BYTES in
#: rocke_c/src/emit.c). The harness reads at most one byte more, so that an over-limit config
#: still reaches the engines over the limit and both reject it with E_TOO_LARGE.
MAX_CONFIG_BYTES = 1048576
#: golden.json, known_gaps.toml and the local state files: generous (the shipped golden.json
#: is tens of kilobytes), but a bound.
DATA_FILE_LIMIT = 16 * 1024 * 1024
STDOUT = "-"

_CHUNK = 1 << 16


class NotRegularFile(OSError):
    """A path the harness refuses to read: not a regular file, or a symlink leading outside."""


class FileTooLarge(OSError):
    """A data file over its limit (configs are not refused for size: the engines reject them)."""


def kind_of(mode: int) -> str:
    """``a FIFO``, ``a character device``, ... for a ``st_mode``."""
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symlink"),
        (stat.S_ISREG, "a regular file"),
    ):
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
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
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


class DataError(ValueError):
    """A data file's text that its reader does not take; ``str`` is one line."""


def loads_json(data: bytes, unique: bool = True, finite: bool = True) -> object:
    """The JSON document of a harness data file; :class:`DataError` (one line) if it is none.

    Any document: UTF-8, and one nested deeper than json's recursive parser follows is said to
    be so, never a ``RecursionError``. ``unique``: no key twice in one object (json keeps the
    last while a reviewer reads the first). ``finite``: no NaN or Infinity (not JSON; 1e999 is
    one). The local state is read without either (its readers check every value they use, and
    its larger files are read on the hook's time); ``merge`` checks numbers itself, naming the field.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DataError(f"not UTF-8 ({e.reason} at byte {e.start})") from None
    hooks: dict[str, Callable] = {}
    if unique:
        hooks["object_pairs_hook"] = _unique_keys
    if finite:
        hooks.update(parse_constant=_no_constant, parse_float=_finite)
    try:
        return json.loads(text, **hooks)
    except RecursionError:
        raise DataError("nested too deeply to read") from None
    except DataError:
        raise
    except json.JSONDecodeError as e:
        raise DataError(f"not JSON: {e}") from None
    except ValueError as e:  # int(): more digits than Python converts
        raise DataError(f"a number out of range ({str(e).split(':')[0]})") from None


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    doc = dict(pairs)
    if len(doc) != len(pairs):  # the first key seen twice, for the message
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DataError(f"key {brief(key)} twice in one object")
            seen.add(key)
    return doc


def _no_constant(name: str) -> object:
    raise DataError(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise DataError(f"the number {brief(text)} is out of range")
    return value


_BRIEF = reprlib.Repr()
_BRIEF.maxstring = _BRIEF.maxother = 60
_BRIEF.maxlevel = 2


def brief(value: object) -> str:
    """A value of a data file for a one-line message: its repr, cut short and never nested deep."""
    try:
        return _BRIEF.repr(value)
    except ValueError:  # an int of more digits than repr converts
        return "<an integer too long to show>"


def is_number(value: object) -> bool:
    """A JSON number a reader may compute with: an int or a float (never a bool), finite, and in
    a float's range (a 400-digit int is JSON too, but no float, and no number of seconds)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def is_text(value: object) -> bool:
    """A string that is Unicode text: JSON can hold a lone surrogate, which neither ``print`` nor
    a UTF-8 write takes."""
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]{1,60}$")


def key_list(keys: Iterable[object]) -> str:
    """Keys for a one-line message, ``a, b``: a bare TOML/JSON-ish key as it is, any other quoted
    and cut short (a key may hold a newline or a megabyte)."""
    return ", ".join(k if isinstance(k, str) and _BARE_KEY.match(k) else brief(k) for k in keys)


# ----------------------------------------------------------------------------- writing


class WriteError(Exception):
    """An output that cannot be written; ``str`` is the one-line message (exit 2)."""


def _reason(e: OSError) -> str:
    return e.strerror or str(e)


def check_destination(dest: str, what: str) -> None:
    """Refuse, before anything runs, a destination that cannot take the output.

    ``what`` names the option for the message (``--json``). Accepts ``-`` (standard output),
    a new file in an existing or creatable directory, or an existing writable regular file
    (through a symlink too). Raises :class:`WriteError`.
    """
    if dest == STDOUT:
        return
    if not dest:
        raise WriteError(f"cannot write {what}: an empty file name")
    real = os.path.realpath(dest)
    try:
        st = os.stat(real)
    except FileNotFoundError:
        return
    except OSError as e:
        raise WriteError(f"cannot write {what} {dest}: {_reason(e)}") from None
    if stat.S_ISDIR(st.st_mode):
        raise WriteError(f"cannot write {what} {dest}: it is a directory")
    if not stat.S_ISREG(st.st_mode):
        raise WriteError(f"cannot write {what} {dest}: it is {kind_of(st.st_mode)}, not a regular file")
    if not st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) or not os.access(real, os.W_OK):
        raise WriteError(f"cannot write {what} {dest}: it is read-only")


def write_output(dest: str, data: bytes, what: str, stdout: BinaryIO | None = None) -> None:
    """Write ``data`` to ``dest`` atomically (or to standard output for ``-``); :class:`WriteError` if not.

    An existing file is replaced only once the new content is complete on disk (written,
    flushed and fsync'ed in a temporary file next to it); on any failure the old file is
    left as it was and the temporary file is removed.
    """
    check_destination(dest, what)
    try:
        if dest == STDOUT:
            out = stdout if stdout is not None else sys.stdout.buffer
            sys.stdout.flush()
            out.write(data)
            out.flush()
            return
        atomic_write(Path(os.path.realpath(dest)), data, fsync=True)
    except BrokenPipeError:
        raise
    except OSError as e:
        raise WriteError(f"cannot write {what} {dest}: {_reason(e)}") from None
