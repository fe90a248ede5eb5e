"""Stand-in engine pair for the harness tests (never the real engines).

Both sides read an optional ``[standin]`` table of the config (with tomllib: stand-ins may)
and behave as it says; without one both emit the same text. Keys, looked up most specific
first: ``<side>_<mode>_<flavor>``, ``<side>_<mode>``, ``<side>`` (side = py or c), default
``emit``. Behaviours:

    emit        the base text (deterministic, from the config bytes, mode and flavor)
    alt         the base text with line 5 changed
    renumber    the base text with every SSA number shifted (a pure renumbering)
    tail        the base text plus one extra line
    reject:CODE[:MESSAGE]   Rejected(CODE, MESSAGE or "rejected by the stand-in")
    raise       raise ValueError
    failure     raise EngineFailure
    abort       os.abort()                      (a real SIGABRT)
    segv        ctypes.string_at(0)             (a real SIGSEGV; innermost non-libc frame string_at)
    segv_w      ctypes.wstring_at(0)            (a SIGSEGV in another function: wstring_at)
    segv@STAGE  the stage note set to "MODE FLAVOR STAGE" (as the C engine keeps it, when the gate
                attached one: attach_note), then segv
    keyerror:F  raise KeyError from the function F (build_tile or lower_kernel)
    kill:SIG    os.kill(own pid, SIG)           (a real SIGSEGV, SIGBUS, ... from one and the same frame)
    hang        sleep for an hour (first writing a file named after the process id into the
                directory $ROCKE_STANDIN_HANG_DIR, when set, so a test knows who hangs)
    sleep:S     the base text, after sleeping S seconds (a slow job that still finishes)
    nondet      the base text plus a call counter (differs on the second run)
    vary:TAG    the base text plus "TAG run 0" on a job's first call in the process and "TAG run 1"
                on its repeat: nondeterministic, but the same two outputs in every run
    exit        os._exit(7)
    none        return None (a contract violation)

``[standin] salt = "..."`` changes the base text (to move an output, e.g. for golden drift);
``[standin] name = "..."`` sets the kernel name printed in mode spec.
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.util
import itertools
import os
import signal
import sys
import time
import tomllib
from pathlib import Path

_RESULT = Path(__file__).resolve().parents[2] / "rocke_py" / "engine" / "result.py"


def _contract_types():
    """The contract's own classes, loaded by path (never via the engine package's __init__)."""
    spec = importlib.util.spec_from_file_location("_standin_result", _RESULT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("_standin_result", mod)  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod.Emitted, mod.Rejected, mod.EngineFailure


Emitted, Rejected, EngineFailure = _contract_types()
_counter = itertools.count()
_calls: dict[tuple, int] = {}  # vary: the calls of each job in this process
_note = None  # the stage note the gate attached (attach_note), as the C bridge keeps it


def attach_note(buffer) -> None:
    """The gate's shared page for the C side's stage note (worker._attach_note)."""
    global _note
    _note = buffer


def build_tile() -> None:
    raise KeyError("tile")


def lower_kernel() -> None:
    raise KeyError("kernel")


def implemented_modes() -> tuple[str, ...]:
    return ("spec",)


def all_modes() -> tuple[str, ...]:
    return ("spec", "ir", "ll")


def spec_ir_modes() -> str:
    return "spec,ir"  # the C bridge's comma-separated form


def base_text(config: bytes, mode: str, flavor: str, table: dict) -> str:
    digest = hashlib.sha256(config).hexdigest()[:10]
    salt = str(table.get("salt", ""))
    name = str(table.get("name", f"standin_{digest}"))
    if mode == "spec":
        lines = ["rocke.spec v1", f"kernel_name = {name}", f"salt = {salt}"]
        lines += [f"field_{i} = {i * 7}" for i in range(27)]
        return "\n".join(lines) + "\n"
    head = "rocke.ir v1" if mode == "ir" else f"; ModuleID = 'standin' flavor {flavor}"
    lines = [head, f"; salt {salt}", "define void @k(ptr %0) {", "entry:"]
    for i in range(1, 30):
        lines.append(f"  %{i} = add i32 %{i - 1}, {i}")
    lines += ["  ret void", "}"]
    return "\n".join(lines) + "\n"


def _renumber(text: str) -> str:
    import re

    return re.sub(r"%(\d+)", lambda m: f"%{int(m.group(1)) + 100}", text)


def _table(config: bytes) -> dict:
    try:
        doc = tomllib.loads(config.decode("utf-8"))
    except Exception:  # noqa: BLE001 - a config the stand-in cannot read: reject like an engine would
        return {"__bad__": True}
    t = doc.get("standin", {})
    return t if isinstance(t, dict) else {}


def _behave(side: str, config: bytes, mode: str, flavor: str):
    table = _table(config)
    if table.get("__bad__"):
        return Rejected("E_SYNTAX", "line 1: the stand-in cannot read this config")
    if mode not in all_modes():
        return Rejected("E_MODE", f"unknown mode '{mode}' (expected spec, ir or ll)")
    what = str(table.get(f"{side}_{mode}_{flavor}", table.get(f"{side}_{mode}", table.get(side, "emit"))))
    text = base_text(config, mode, flavor, table)
    if what == "emit":
        return Emitted(text)
    if what == "alt":
        lines = text.splitlines(keepends=True)
        lines[4] = lines[4].rstrip("\n") + " ; changed\n"
        return Emitted("".join(lines))
    if what == "renumber":
        return Emitted(_renumber(text))
    if what == "tail":
        return Emitted(text + "; one more line\n")
    if what.startswith("reject:"):
        _, code, *msg = what.split(":", 2)
        return Rejected(code, msg[0] if msg else "rejected by the stand-in")
    if what == "raise":
        raise ValueError("stand-in bug")
    if what == "failure":
        raise EngineFailure("internal check failed")
    if what == "abort":
        os.abort()
    if what == "segv":
        ctypes.string_at(0)
    if what == "segv_w":
        ctypes.wstring_at(0)
    if what.startswith("segv@"):
        if _note is not None:
            _note.value = f"{mode} {flavor} {what[5:]}".encode()
        ctypes.string_at(0)
    if what.startswith("kill:"):
        os.kill(os.getpid(), signal.Signals[what[5:]])
    if what.startswith("keyerror:"):
        {"build_tile": build_tile, "lower_kernel": lower_kernel}[what[9:]]()
    if what == "hang":
        marks = os.environ.get("ROCKE_STANDIN_HANG_DIR")
        if marks:
            Path(marks, f"{os.getpid()}.{side}").write_text(f"{mode} {flavor}\n")
        time.sleep(3600)
    if what.startswith("sleep:"):
        time.sleep(float(what.split(":", 1)[1]))
        return Emitted(text)
    if what == "nondet":
        return Emitted(text + f"; call {next(_counter)}\n")
    if what.startswith("vary:"):
        key = (side, hashlib.sha256(config).hexdigest(), mode, flavor)
        _calls[key] = _calls.get(key, 0) + 1
        return Emitted(text + f"; {what[5:]} run {(_calls[key] - 1) % 2}\n")
    if what == "exit":
        os._exit(7)
    if what == "none":
        return None
    raise AssertionError(f"unknown stand-in behaviour {what!r}")


def py_emit(config: bytes, mode: str, flavor: str):
    return _behave("py", config, mode, flavor)


def c_emit(config: bytes, mode: str, flavor: str):
    return _behave("c", config, mode, flavor)
