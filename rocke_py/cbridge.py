"""The C engine in-process, through the cffi extension rocke_py._rocke_c.

Same operation and result types as rocke_py.engine.emit, so the harness and the tests can
compare the two engines' results directly. ROCKE_ERROR (an engine failure, never a
rejection) raises the engine's own EngineFailure (rocke_py.engine.result), so one class means
an engine bug on both sides."""

from __future__ import annotations

import functools
import os
import threading
from pathlib import Path
from typing import Union

from rocke_py import _rocke_c
from rocke_py._rocke_c import ffi, lib
from rocke_py.engine.result import Emitted, EngineFailure, Rejected


def _stale_sources() -> list[str]:
    """In a source checkout (editable install), the C files changed since the extension was built."""
    src = Path(__file__).resolve().parent.parent / "rocke_c"
    built = Path(_rocke_c.__file__).stat().st_mtime
    if not src.is_dir():
        return []
    files = list(src.glob("src/*.[ch]")) + list(src.glob("include/*.h"))
    return sorted(str(f.relative_to(src.parent)) for f in files if f.stat().st_mtime > built)


if os.environ.get("ROCKE_PARITY_ALLOW_STALE") != "1":
    _stale = _stale_sources()
    if _stale:
        raise ImportError(
            f"the C engine extension is older than {_stale[0]} ({len(_stale)} file(s) changed): "
            "rebuild it with `pip install -e .` (or set ROCKE_PARITY_ALLOW_STALE=1)"
        )


@functools.lru_cache(maxsize=64)  # a caller passes the same few modes and flavors: encoded once
def _arg(value: str) -> bytes:
    # A mode or flavor with a NUL would be cut short by C; the engine rejects the remainder as unknown.
    return value.encode("utf-8", "surrogatepass").replace(b"\0", b"\xff")


class _PerThread(threading.local):
    """One rocke_context (rocke.h) and one result struct per thread, kept across calls: the
    engine then reuses its arena memory instead of returning it to the OS after every emit."""

    def __init__(self) -> None:
        ctx = lib.rocke_context_new()
        self.ctx = ffi.gc(ctx, lib.rocke_context_free) if ctx != ffi.NULL else ffi.NULL
        self.result = ffi.new("rocke_result *")


_local = _PerThread()


def emit(config: Union[bytes, str], mode: str, flavor: str) -> Union[Emitted, Rejected]:
    data = config.encode("utf-8", "surrogatepass") if isinstance(config, str) else bytes(config)
    result = _local.result
    status = lib.rocke_emit_in(_local.ctx, data, len(data), _arg(mode), _arg(flavor), result)
    try:
        if status == lib.ROCKE_EMITTED:
            return Emitted(ffi.unpack(result.text, result.text_len).decode("utf-8"))
        code = ffi.string(result.code).decode("ascii") if result.code != ffi.NULL else "?"
        message = ffi.string(result.message).decode("utf-8", "replace") if result.message != ffi.NULL else ""
        if status == lib.ROCKE_REJECTED:
            return Rejected(code, message)
        raise EngineFailure(f"{code}: {message}")
    finally:
        lib.rocke_result_free(result)


def implemented_modes() -> tuple[str, ...]:
    text = ffi.string(lib.rocke_implemented_modes()).decode("ascii")
    return tuple(m for m in text.split(",") if m)
