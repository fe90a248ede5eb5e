"""The C engine in-process, through cffi.

The engine is built from the sources of this package's tree by :mod:`rocke_py.cbuild` (on
demand, incrementally, into a cache keyed by content) and loaded from there: in a checkout
``rocke_c/`` beside this package, in a wheel install the copy the wheel carries
(``rocke_py/_c/``). So an edit is never run stale, and no other tree's build is ever run.

Same operation and result types as rocke_py.engine.emit, so the harness and the tests can
compare the two engines' results directly. ROCKE_ERROR (an engine failure, never a
rejection) raises the engine's own EngineFailure (rocke_py.engine.result), so one class means
an engine bug on both sides."""

from __future__ import annotations

import threading
from typing import Union

from rocke_py import cbuild
from rocke_py.engine.result import Emitted, EngineFailure, Rejected

_C_ROOT = cbuild.package_c_root()
if _C_ROOT is None:
    raise cbuild.BuildError("the C engine's sources are not beside this package (rocke_c/ or rocke_py/_c/)")
_BUILT = cbuild.build(_C_ROOT)
_module = cbuild.load(_BUILT)
#: The build id of the engine loaded here (rocke_py.cbuild.fingerprint's first 16 hex digits).
BUILD_ID = _BUILT.build_id
ffi, lib = _module.ffi, _module.lib


def _encode_arg(value: str) -> bytes:
    # A mode or flavor with a NUL would be cut short by C; the engine rejects the remainder as unknown.
    return value.encode("utf-8", "surrogatepass").replace(b"\0", b"\xff")


_ARGS: dict[str, bytes] = {}  # a caller passes the same few modes and flavors: encoded once


def _arg(value: str) -> bytes:
    encoded = _ARGS.get(value)
    if encoded is None:
        encoded = _encode_arg(value)
        if len(_ARGS) < 64:
            _ARGS[value] = encoded
    return encoded


class CEngine:
    """The C engine behind one cffi binding of rocke.h: the extension's (the module functions
    below), or a test build's opened in ABI mode (tests/support/crashing_c_engine.py). One
    rocke_context and one result struct per thread, kept across calls: the engine then reuses
    its arena memory instead of returning it to the OS after every emit."""

    def __init__(self, ffi, lib) -> None:
        self.ffi = ffi
        self.lib = lib
        self.local = threading.local()
        # what every call uses, looked up once: a spec job's C time is a few microseconds, and
        # attribute lookups on the binding were a measurable part of the bridge's share
        self._emit_in = lib.rocke_emit_in
        self._result_free = lib.rocke_result_free
        self._buffer = ffi.buffer
        self._emitted = lib.ROCKE_EMITTED
        self._rejected = lib.ROCKE_REJECTED

    def _thread(self):
        local = self.local
        if not hasattr(local, "ctx"):
            ctx = self.lib.rocke_context_new()
            local.ctx = self.ffi.gc(ctx, self.lib.rocke_context_free) if ctx != self.ffi.NULL else self.ffi.NULL
            local.result = self.ffi.new("rocke_result *")
            local.note = None  # the stage note's buffer (attach_note), kept alive while the context uses it
        return local

    def emit(self, config: Union[bytes, str], mode: str, flavor: str) -> Union[Emitted, Rejected]:
        local = self.local
        try:
            ctx, result = local.ctx, local.result
        except AttributeError:
            local = self._thread()
            ctx, result = local.ctx, local.result
        if type(config) is bytes:
            data = config
        else:
            data = config.encode("utf-8", "surrogatepass") if isinstance(config, str) else bytes(config)
        status = self._emit_in(ctx, data, len(data), _arg(mode), _arg(flavor), result)
        if status == self._emitted:
            try:
                text = str(self._buffer(result.text, result.text_len), "utf-8")  # decoded in place: one copy
            finally:
                self._result_free(result)
            return Emitted(text)
        try:
            return self._refusal(status, result)
        finally:
            self._result_free(result)

    def _refusal(self, status: int, result) -> Rejected:
        """A rejection as a value; an engine failure (ROCKE_ERROR) raised."""
        ffi = self.ffi
        code = ffi.string(result.code).decode("ascii") if result.code != ffi.NULL else "?"
        message = ffi.string(result.message).decode("utf-8", "replace") if result.message != ffi.NULL else ""
        if status == self._rejected:
            return Rejected(code, message)
        raise EngineFailure(f"{code}: {message}")

    def attach_note(self, buffer) -> None:
        """Give this thread's context a stage note (rocke.h, rocke_context_set_note): ``buffer`` is
        a writable buffer (a gate worker passes a page shared with the gate) in which the engine
        keeps "MODE FLAVOR STAGE" while a call runs, so that a crash can be placed in a stage."""
        local = self._thread()
        if local.ctx == self.ffi.NULL:
            return
        view = self.ffi.from_buffer(buffer, require_writable=True)
        self.lib.rocke_context_set_note(local.ctx, self.ffi.cast("char *", view), len(view))
        local.note = view

    def implemented_modes(self) -> tuple[str, ...]:
        text = self.ffi.string(self.lib.rocke_implemented_modes()).decode("ascii")
        return tuple(m for m in text.split(",") if m)


_engine = CEngine(ffi, lib)

# the engine's operations as module functions (the harness names them rocke_py.cbridge:emit, ...)
emit = _engine.emit
attach_note = _engine.attach_note
implemented_modes = _engine.implemented_modes
