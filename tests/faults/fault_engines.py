"""Wrapped real engines, each with one injected fault, for the gate's fault-injection tests.

Every fault is a pair ``<fault>_py`` / ``<fault>_c`` (and, for a dropped mode, ``<fault>_py_modes``
/ ``<fault>_c_modes``); a side without the fault, or a body both sides share, is one function
given its side with functools.partial. A wrapper calls the real engine (``rocke_py.engine.emit`` or
``rocke_py.cbridge.emit``) and changes its answer only for the configs a fault targets, which the
test tree marks with a comment line (comments are ignored by both engines):

    # fault: emit-target      an emitting config (wgrad/00-baseline in the tree)
    # fault: reject-target    a negative config (wgrad/100-unknown-pipeline in the tree)

``FAULTS`` (in tests/harness/test_gate_faults.py) names each fault, the job it should break and the
status the gate must give it.
"""

from __future__ import annotations

import ctypes
import itertools
import os
import sys
import time
from functools import partial

from rocke_py import cbridge
from rocke_py import engine as py_engine
from rocke_py.engine.result import Emitted, EngineFailure, Rejected

EMIT_TARGET = b"# fault: emit-target"
REJECT_TARGET = b"# fault: reject-target"
_counter = itertools.count()


def _real(side: str, config: bytes, mode: str, flavor: str):
    return (py_engine.emit if side == "py" else cbridge.emit)(config, mode, flavor)


def implemented_modes() -> tuple[str, ...]:
    return ("spec", "ir", "ll")


def without_ll() -> tuple[str, ...]:
    return ("spec", "ir")


def _flip_one_byte(text: str) -> str:
    i = len(text) // 2
    return text[:i] + ("X" if text[i] != "X" else "Y") + text[i + 1 :]


# -- one byte changed in one engine, for one flavor only
flip_llvm20_py = partial(_real, "py")  # this side is the real engine


def flip_llvm20_c(config, mode, flavor):
    out = _real("c", config, mode, flavor)
    if EMIT_TARGET in config and mode == "ll" and flavor == "llvm20" and isinstance(out, Emitted):
        return Emitted(_flip_one_byte(out.text))
    return out


# -- one config's rejection code changed in one engine
reject_code_py = partial(_real, "py")  # this side is the real engine


def reject_code_c(config, mode, flavor):
    out = _real("c", config, mode, flavor)
    if REJECT_TARGET in config and isinstance(out, Rejected):
        return Rejected(out.code + "_X", out.message)
    return out


# -- a nondeterministic engine
nondet_py = partial(_real, "py")  # this side is the real engine


def nondet_c(config, mode, flavor):
    out = _real("c", config, mode, flavor)
    if EMIT_TARGET in config and mode == "spec" and isinstance(out, Emitted):
        return Emitted(out.text + f"# call {next(_counter)}\n")
    return out


# -- an engine that dies on one config (a real SIGSEGV in the worker)
segv_py = partial(_real, "py")  # this side is the real engine


def segv_c(config, mode, flavor):
    if EMIT_TARGET in config and mode == "ir":
        ctypes.string_at(0)
    return _real("c", config, mode, flavor)


# -- an engine that hangs on one config
def hang_py(config, mode, flavor):
    if EMIT_TARGET in config and mode == "spec":
        time.sleep(3600)
    return _real("py", config, mode, flavor)


hang_c = partial(_real, "c")  # this side is the real engine


# -- identical message changes in both engines (every rejection reworded alike)
def _reword(side, config, mode, flavor):
    out = _real(side, config, mode, flavor)
    return Rejected(out.code, out.message + " (reworded)") if isinstance(out, Rejected) else out


reword_py = partial(_reword, "py")
reword_c = partial(_reword, "c")


# -- a negative config that now emits, alike in both engines
def _negative_emits(side, config, mode, flavor):
    if REJECT_TARGET in config:
        return Emitted(f"rocke.fake v1 {mode} {flavor}\n")
    return _real(side, config, mode, flavor)


negative_emits_py = partial(_negative_emits, "py")
negative_emits_c = partial(_negative_emits, "c")


# -- a config that validates but fails to build (EngineFailure after validation) in one engine
def build_failure_py(config, mode, flavor):
    if EMIT_TARGET in config and mode == "ir":
        raise EngineFailure("build: injected failure after validation")
    return _real("py", config, mode, flavor)


build_failure_c = partial(_real, "c")  # this side is the real engine


# -- one config, different verdicts per mode (both engines reject it in ll only, alike)
def _verdict_split(side, config, mode, flavor):
    if EMIT_TARGET in config and mode == "ll":
        return Rejected("E_INJECTED", "line 1: rejected in mode ll only")
    return _real(side, config, mode, flavor)


verdict_split_py = partial(_verdict_split, "py")
verdict_split_c = partial(_verdict_split, "c")


# -- one engine rejects a config the other emits
def py_only_reject_py(config, mode, flavor):
    if EMIT_TARGET in config and mode == "spec":
        return Rejected("E_INJECTED", "line 1: rejected by py only")
    return _real("py", config, mode, flavor)


py_only_reject_c = partial(_real, "c")  # this side is the real engine


# -- both engines change one output identically (golden drift)
def _both_drift(side, config, mode, flavor):
    out = _real(side, config, mode, flavor)
    if EMIT_TARGET in config and mode == "ir" and isinstance(out, Emitted):
        return Emitted(out.text + "; drift\n")
    return out


both_drift_py = partial(_both_drift, "py")
both_drift_c = partial(_both_drift, "c")


# -- an engine that returns something that is neither Emitted nor Rejected
bad_return_py = partial(_real, "py")  # this side is the real engine


def bad_return_c(config, mode, flavor):
    if EMIT_TARGET in config and mode == "spec":
        return None
    return _real("c", config, mode, flavor)


# -- no fault: the real engines
real_py = partial(_real, "py")
real_c = partial(_real, "c")


# -- the worker pool's faults (tests/harness/test_hostile_workers.py): every call, not one target


def _noisy(side, config, mode, flavor):
    """Writes to standard output and error on every call, through Python and at the descriptors
    (as a C engine's write(2) would)."""
    print(f"noise from {side} {mode} on stdout")
    print(f"noise from {side} {mode} on stderr", file=sys.stderr)
    os.write(1, f"fd-1 noise from {side}\n".encode())
    os.write(2, f"fd-2 noise from {side}\n".encode())
    return _real(side, config, mode, flavor)


noisy_py = partial(_noisy, "py")
noisy_c = partial(_noisy, "c")

_LEAKED: list[bytearray] = []
LEAK_BYTES = 4 << 20


def _leak(side, config, mode, flavor):
    """Keeps 4 MiB (touched, so resident) on every call."""
    _LEAKED.append(bytearray(b"\1" * LEAK_BYTES))
    return _real(side, config, mode, flavor)


leak_py = partial(_leak, "py")
leak_c = partial(_leak, "c")


# -- stray bytes in the worker's result pipe, from inside one call: a framed message that is no
# pickle, a pickle of the wrong shape, a length no message has, a length (1 MiB) no bytes follow
def _result_pipe():
    """The worker's end of its pipe to the gate (``conn`` of worker._worker_main, up the stack)."""
    frame = sys._getframe()
    while "conn" not in frame.f_locals:
        frame = frame.f_back
    return frame.f_locals["conn"]


def _stray(write, config, mode, flavor):
    if EMIT_TARGET in config and mode == "spec":
        write(_result_pipe())
        time.sleep(0.5)  # the gate reads them while this job runs: the job they came from
    return _real("c", config, mode, flavor)


stray_py = stray_shape_py = stray_length_py = stray_stall_py = partial(_real, "py")  # the real engine
stray_c = partial(_stray, lambda conn: conn.send_bytes(b"\x80\x05stray bytes, not a pickle"))
stray_shape_c = partial(_stray, lambda conn: conn.send(("results", [("not", "a", "result")])))
stray_length_c = partial(_stray, lambda conn: os.write(conn.fileno(), b"\x7f\xff\xff\xf0stray bytes"))
stray_stall_c = partial(_stray, lambda conn: os.write(conn.fileno(), b"\x00\x10\x00\x00stray bytes"))


# -- a crash (a real SIGSEGV) on every call of the C engine
crash_every_call_py = partial(_real, "py")  # this side is the real engine


def crash_every_call_c(config, mode, flavor):
    ctypes.string_at(0)
