"""The engine pair, pluggable by import path, and one guarded engine call.

An import path is ``package.module:function`` or ``/path/to/file.py:function`` (tests use the
latter for their stand-in engines). The default pair is the real one:
``rocke_py.engine:emit`` and ``rocke_py.cbridge:emit``, with ``implemented_modes`` looked up in
the same module as each ``emit`` unless given explicitly.

The harness itself never imports an engine (``rocke_py.engine``'s package init imports the whole
Python engine): results are recognised by shape, as in ``rocke_py/engine/result.py`` — an
object of a class named ``Emitted`` with a str ``text``, or ``Rejected`` with str ``code`` and
``message``; an exception whose class (or a base) is named ``EngineFailure`` is an engine bug.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.util
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from rocke_py.facts import FLAVORLESS_MODES, FLAVORS, MODES

#: Modes whose output does not depend on the flavor: run once, recorded with flavor "-".
NO_FLAVOR = "-"
#: The flavor passed to the engines for flavorless modes (the contract wants it explicit).
FLAVORLESS_CALL_FLAVOR = "llvm22"
#: The flavor ``emit`` prints when none is asked for.
DEFAULT_FLAVOR = "llvm22"
#: A config's jobs at most: one per flavorless mode, and mode ll once per flavor.
JOBS_PER_CONFIG = len(FLAVORLESS_MODES) + len(FLAVORS)

EmitFn = Callable[[bytes, str, str], object]


@dataclass(frozen=True)
class EngineSpec:
    py_emit: str = "rocke_py.engine:emit"
    c_emit: str = "rocke_py.cbridge:emit"
    py_modes: str | None = None  # default: <module of py_emit>:implemented_modes
    c_modes: str | None = None

    @staticmethod
    def parse(text: str) -> EngineSpec:
        """``PY_EMIT,C_EMIT[,PY_MODES,C_MODES]`` (the hidden ``--engines`` option)."""
        parts = [p.strip() for p in text.split(",")]
        if len(parts) not in (2, 4) or not all(parts) or not all(":" in p for p in parts):
            raise ValueError(
                "--engines takes PY_EMIT,C_EMIT[,PY_MODES,C_MODES], each module:function or file.py:function"
            )
        spec = EngineSpec(parts[0], parts[1]) if len(parts) == 2 else EngineSpec(*parts)
        for ref in (spec.py_emit, spec.c_emit, spec.modes_path("py"), spec.modes_path("c")):
            check_file_ref(ref)
        return spec

    def modes_path(self, side: str) -> str:
        emit_path, modes = (self.py_emit, self.py_modes) if side == "py" else (self.c_emit, self.c_modes)
        if modes:
            return modes
        return emit_path.rpartition(":")[0] + ":implemented_modes"


def check_file_ref(ref: str) -> None:
    """A ``file.py:function`` reference checked without running the file: it exists, compiles
    and binds ``function`` at its top level; ``ValueError`` (one line naming ``--engines``) if
    not. A missing engine file or a typo found here is a usage error, not a traceback from
    each worker that loads it. A ``module:function`` reference is left to the import."""
    module, _, attr = ref.rpartition(":")
    if not module.endswith(".py"):
        return
    path = Path(module)
    if not path.exists():
        raise ValueError(f"--engines {ref}: no such file")
    if not path.is_file():
        raise ValueError(f"--engines {ref}: {path.name} is not a regular file")
    try:
        tree = ast.parse(path.read_bytes(), str(path))
    except OSError as e:
        raise ValueError(f"--engines {ref}: cannot read {path.name}: {e.strerror or e}") from None
    except SyntaxError as e:
        raise ValueError(f"--engines {ref}: {path.name} line {e.lineno}: {e.msg}") from None
    except ValueError as e:  # null bytes in the source
        raise ValueError(f"--engines {ref}: {path.name}: {e}") from None
    names = _bound_names(tree)
    if names is not None and attr not in names:
        raise ValueError(f"--engines {ref}: {path.name} defines no {attr!r}")


#: Calls that may bind a module's names where no statement shows it.
_DYNAMIC_BINDERS = frozenset({"globals", "vars", "setattr", "exec", "eval"})


def _bound_names(tree: ast.Module) -> set[str] | None:
    """The names a module binds at its top level (in ``if``/``try``/``with``/``for`` blocks too,
    and those its functions declare ``global``); None when it may bind others no statement shows
    (``import *``, a module ``__getattr__``, ``globals()``, ``setattr``, ``exec``)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            names.update(node.names)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _DYNAMIC_BINDERS:
            return None
    blocks: list[list[ast.stmt]] = [tree.body]
    while blocks:
        for stmt in blocks.pop():
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(stmt.name)
                continue
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                if any(a.name == "*" for a in stmt.names):
                    return None
                names.update(a.asname or a.name.split(".")[0] for a in stmt.names)
                continue
            for field in ("body", "orelse", "finalbody"):
                blocks.append(getattr(stmt, field, []))
            blocks.extend(h.body for h in getattr(stmt, "handlers", []))
            blocks.extend(c.body for c in getattr(stmt, "cases", []))
            for node in ast.walk(stmt):  # assignment targets, loop and with variables, :=
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    names.add(node.id)
    return None if "__getattr__" in names else names


def _load_module(ref: str):
    if ref.endswith(".py"):
        path = Path(ref).resolve()
        name = "_rocke_parity_plugin_" + hashlib.sha256(str(path).encode()).hexdigest()[:16]
        if name in sys.modules:
            return sys.modules[name]
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {path}")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        try:
            spec.loader.exec_module(mod)
        except BaseException:
            del sys.modules[name]
            raise
        return mod
    return importlib.import_module(ref)


def load_callable(path: str) -> Callable:
    module, _, attr = path.rpartition(":")
    if not module or not attr:
        raise ImportError(f"bad import path {path!r} (expected module:function)")
    obj = getattr(_load_module(module), attr, None)
    if not callable(obj):
        raise ImportError(f"{path}: no callable {attr!r}")
    return obj


def normalise_modes(value: object) -> tuple[str, ...]:
    """``implemented_modes()`` may return a tuple/list or a comma-separated string."""
    if isinstance(value, (bytes, bytearray)):
        value = value.decode("ascii", "replace")
    if isinstance(value, str):
        items = [v.strip() for v in value.split(",")]
    else:
        items = [str(v).strip() for v in value]  # type: ignore[union-attr]
    return tuple(m for m in MODES if m in items)


@dataclass
class LoadedEngines:
    py: EmitFn
    c: EmitFn
    py_modes: tuple[str, ...]
    c_modes: tuple[str, ...]

    def emit_fn(self, side: str) -> EmitFn:
        return self.py if side == "py" else self.c

    def modes(self, side: str) -> tuple[str, ...]:
        return self.py_modes if side == "py" else self.c_modes

    @property
    def common_modes(self) -> tuple[str, ...]:
        return tuple(m for m in MODES if m in self.py_modes and m in self.c_modes)


def load_side(spec: EngineSpec, side: str) -> tuple[EmitFn, tuple[str, ...]]:
    """One engine of the pair and its modes (``emit`` loads only the engine it runs)."""
    fn = load_callable(spec.py_emit if side == "py" else spec.c_emit)
    return fn, normalise_modes(load_callable(spec.modes_path(side))())


def load_engines(spec: EngineSpec) -> LoadedEngines:
    py, py_modes = load_side(spec, "py")
    c, c_modes = load_side(spec, "c")
    return LoadedEngines(py, c, py_modes, c_modes)


@dataclass(frozen=True)
class EngineRun:
    """One engine call, reduced to what the harness compares and reports.

    ``kind``: ``emitted``, ``rejected`` or ``error`` (an exception or a bad return value: an
    engine bug, reported as CRASH). For ``error``, ``code`` is the exception type and
    ``message`` its text; ``detail`` holds the end of the traceback.
    """

    kind: str
    code: str = ""
    message: str = ""
    sha256: str = ""
    nbytes: int = 0
    seconds: float = 0.0
    detail: str = ""

    def signature(self) -> tuple[str, str, str, str]:
        """What must be equal for two runs to count as the same result."""
        return (self.kind, self.code, self.message, self.sha256)

    def outcome(self) -> tuple[str, str, str, str, int]:
        """Every field but the seconds (the output cache's ``_OUTCOME_FIELDS``, in that order)."""
        return (self.kind, self.code, self.message, self.sha256, self.nbytes)

    def short(self) -> str:
        if self.kind == "emitted":
            return f"emitted {self.nbytes} bytes (sha256 {self.sha256[:12]})"
        if self.kind == "rejected":
            return f"rejected {self.code}: {self.message}"
        return f"raised {self.code}: {self.message}"


def text_bytes(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape") if _all_escapes(text) else text.encode("utf-8", "surrogatepass")


def _all_escapes(text: str) -> bool:
    return all(not (0xD800 <= ord(ch) <= 0xDFFF) or 0xDC80 <= ord(ch) <= 0xDCFF for ch in text)


def call_engine(
    fn: EmitFn, config: bytes, mode: str, flavor: str, like: tuple[EngineRun, str | None] | None = None
) -> tuple[EngineRun, str | None]:
    """Call one engine, never raising: returns the run and, for an emission, its text.

    ``like``: an earlier emission (its run and text) that this one probably repeats; when the text
    is the same, its sha256 is taken from there (comparing two texts costs far less than hashing one)."""
    t0 = time.perf_counter()
    try:
        out = fn(config, mode, flavor)
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # noqa: BLE001 - any exception is an engine bug, SystemExit included
        dt = time.perf_counter() - t0
        name = "EngineFailure" if _is_named(type(e), "EngineFailure") else type(e).__name__
        return EngineRun("error", name, str(e)[:4000], seconds=dt, detail=_tb_tail()), None
    dt = time.perf_counter() - t0
    if _is_named(type(out), "Emitted") and isinstance(getattr(out, "text", None), str):
        text: str = out.text  # type: ignore[attr-defined]
        if like is not None and like[0].kind == "emitted" and like[1] == text:
            return EngineRun("emitted", sha256=like[0].sha256, nbytes=like[0].nbytes, seconds=dt), text
        data = text_bytes(text)
        return EngineRun("emitted", sha256=hashlib.sha256(data).hexdigest(), nbytes=len(data), seconds=dt), text
    if (
        _is_named(type(out), "Rejected")
        and isinstance(getattr(out, "code", None), str)
        and isinstance(getattr(out, "message", None), str)
    ):
        return EngineRun("rejected", out.code, out.message, seconds=dt), None  # type: ignore[attr-defined]
    return EngineRun(
        "error",
        "BadReturn",
        f"returned {type(out).__name__} ({out!r:.200}), not Emitted(text) or Rejected(code, message)",
        seconds=dt,
    ), None


def _is_named(cls: type, name: str) -> bool:
    return any(k.__name__ == name for k in cls.__mro__)


def _tb_tail(limit: int = 12) -> str:
    lines = traceback.format_exc().rstrip("\n").splitlines()
    return "\n".join(lines[-limit:])
