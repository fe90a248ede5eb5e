"""The C frames of a C engine crash: the job run again, alone, under gdb.

A worker that dies in the C engine leaves the gate its faulthandler dump (Python frames only)
and the engine's stage note (rocke.h, ``rocke_context_set_note``). For the frames inside the
engine, the gate runs the job once more in a fresh interpreter under ``gdb -batch`` (when gdb is
on the PATH) and keeps the frames from the crash up to the first frame outside the engine:

    python -m rocke_py.parity.run.backtrace C_EMIT CONFIG MODE FLAVOR    (what gdb runs)

The re-run calls only the C side's ``emit`` (an import path, as ``--engines`` takes it), so the
frames are the engine's whatever the engine pair. A re-run that does not crash says so: the
crash then depended on the worker's state, which is a finding too.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

#: frames kept from the innermost one; the rest are the interpreter's
MAX_FRAMES = 12
GDB_TIMEOUT = 60.0
#: a frame that is not the engine's: the cffi call, libffi, the interpreter, libc's start
_OUTSIDE = re.compile(r"\b(_cffi_f_|ffi_call|cdata_call|_PyEval|_PyObject|PyObject_|Py_|_Py|__libc_start)")
_FRAME = re.compile(r"^#\d+\s")
#: libc's frames above a raise() or an abort(): how the signal came, not where
_RAISING = re.compile(r"^#\d+\s+(?:0x[0-9a-f]+ in )?(__pthread_kill\w*|__GI_raise|raise|__GI_abort|abort) ")
_PACKAGE_PARENT = str(Path(__file__).resolve().parents[3])  # where this rocke_py is imported from
_ROOT = _PACKAGE_PARENT + os.sep  # in a source checkout, the repository: its files are named from there


def gdb_command(c_emit: str, config: Path, mode: str, flavor: str) -> list[str] | None:
    """The gdb command line that re-runs one C job, or None without gdb."""
    gdb = shutil.which("gdb")
    if gdb is None:
        return None
    rerun = [sys.executable, "-m", "rocke_py.parity.run.backtrace", c_emit, str(config), mode, flavor]
    return [gdb, "-batch", "-nx", "-q", "-ex", "run", "-ex", "bt", "--args", *rerun]


def engine_frames(gdb_output: str) -> list[str]:
    """The frames of gdb's ``bt`` from the innermost one (past libc's raise/abort frames) to the
    last before the engine's caller; the addresses and the argument values are dropped (they
    differ from run to run)."""
    frames: list[str] = []
    for line in gdb_output.splitlines():
        if not _FRAME.match(line):
            continue
        if not frames and _RAISING.search(line):
            continue
        if _OUTSIDE.search(line) and frames:
            break
        frames.append(_tidy(line))
        if len(frames) == MAX_FRAMES:
            break
    return frames


def _tidy(frame: str) -> str:
    """``#3  0x00007f... in emit_text (text=0x..., ...) at rocke_c/src/emit.c:140`` ->
    ``#3 emit_text at rocke_c/src/emit.c:140``."""
    frame = re.sub(r"\s0x[0-9a-f]+ in\s", " ", frame, count=1)
    number, _, rest = frame.partition(" ")
    name = rest.strip().split(" ", 1)[0]
    where = re.search(r"\s(at|from)\s(\S+)$", rest)
    place = f" {where.group(1)} {where.group(2).removeprefix(_ROOT)}" if where else ""
    return f"{number} {name}{place}"


#: a frame of the C library, not the engine's: a reserved name (C99 7.1.3: a leading ``__``, as in
#: ``__strlen_avx2``), a glibc source file, or a system library without debug information
_LIBC_NAME = re.compile(r"^(__|\?\?$)")
_LIBC_PLACE = re.compile(r"(/sysdeps/|^from .*/(libc|libm|libpthread|libdl|ld-linux)[-.\w]*\.so)")


def innermost_frame(frames: str) -> str:
    """The function of the innermost frame of :func:`c_frames`'s text that is not the C library's
    (``note_stage`` of ``#4 note_stage at rocke_c/src/emit.c:101``), or "" when there is none: no
    gdb, a re-run that did not crash, or only libc and unnamed frames."""
    for line in frames.splitlines():
        parts = line.split(" ", 2)
        if len(parts) < 2 or not _FRAME.match(line + " "):
            continue  # a one-line note such as "(gdb showed no frames)"
        name, place = parts[1], parts[2] if len(parts) > 2 else ""
        if not _LIBC_NAME.match(name) and not _LIBC_PLACE.search(place):
            return name
    return ""


def c_frames(c_emit: str, data: bytes, mode: str, flavor: str, timeout: float = GDB_TIMEOUT) -> str:
    """The C frames of the crash, one a line; an empty string when gdb is not there, and a one-line
    note when the re-run did not crash or gdb could not run it."""
    with tempfile.TemporaryDirectory(prefix="rocke-parity-bt-") as tmp:
        config = Path(tmp) / "config.toml"
        config.write_bytes(data)
        cmd = gdb_command(_absolute(c_emit), config, mode, flavor)
        if cmd is None:
            return ""
        # the re-run imports this very rocke_py (not one its working folder might hold) and starts
        # in the empty folder, so a relative import path of an engine file was made absolute above
        path = os.pathsep.join(p for p in (_PACKAGE_PARENT, os.environ.get("PYTHONPATH", "")) if p)
        env = {**os.environ, "PYTHONPATH": path, "PYTHONFAULTHANDLER": ""}
        try:
            done = subprocess.run(
                cmd, capture_output=True, text=True, errors="replace", timeout=timeout, env=env, cwd=tmp
            )
        except (OSError, subprocess.TimeoutExpired) as e:
            return f"(gdb could not re-run the job: {type(e).__name__})"
    if "received signal" not in done.stdout:
        return "(the job re-run alone under gdb did not crash)"
    frames = engine_frames(done.stdout)
    return "\n".join(frames) if frames else "(gdb showed no frames)"


def _absolute(ref: str) -> str:
    """An engine's import path with a file part made absolute (``file.py:emit``)."""
    module, _, attr = ref.rpartition(":")
    return f"{Path(module).resolve()}:{attr}" if module.endswith(".py") else ref


def main(argv: list[str]) -> int:
    from rocke_py.parity.run.engines import load_callable

    c_emit, config, mode, flavor = argv
    emit = load_callable(c_emit)
    emit(Path(config).read_bytes(), mode, flavor)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
