"""What the pool takes and gives back: a :class:`WorkItem` in, a :class:`JobResult` out (with
its :class:`Death` when the job did not finish), the engines' modes (:class:`EngineInfo`), and
the :class:`TextStore` a worker leaves the texts in that it does not send.

The pool knows nothing about configs or statuses: it takes :class:`WorkItem` s and returns
:class:`JobResult` s in the same order. Classification lives in :mod:`compare`.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from rocke_py.parity.run.engines import EngineRun

K = TypeVar("K")


class EngineLoadError(Exception):
    """The engines could not be loaded in a worker (import error, crash during import)."""


@dataclass(frozen=True)
class WorkItem(Generic[K]):
    key: K  # opaque to the runner (the gate and diff use their Job)
    data: bytes
    mode: str
    call_flavor: str  # the flavor passed to the engines (always a real flavor)
    skip: str = ""  # "py" or "c": that engine is not called (its outputs come from the gate's cache)


@dataclass(frozen=True)
class Death:
    """A job that did not finish: ``kind`` is ``crash`` or ``timeout``."""

    kind: str
    engine: str  # "py", "c" or "?" (unknown: died between calls)
    run: int  # 1 or 2 (0 when unknown)
    exitcode: int | None  # negative: killed by signal -exitcode
    detail: str = ""  # the head of the worker's faulthandler dump (innermost frame first), if any
    stage: str = ""  # the C engine's stage note ("MODE FLAVOR STAGE") when it died in a call, if it keeps one
    c_frames: str = ""  # the C frames of the job re-run under gdb (rocke_py.parity.run.backtrace), if it was
    unread: str = ""  # why the job's result could not be read from its worker (stray bytes in its pipe), if so

    @property
    def stage_name(self) -> str:
        """The stage of the note (its last word: ``lower_kernel`` of ``ll llvm22 lower_kernel``), or ''."""
        return self.stage.split()[-1] if self.stage.strip() else ""

    @property
    def signal_name(self) -> str:
        if self.exitcode is None or self.exitcode >= 0:
            return ""
        try:
            return signal.Signals(-self.exitcode).name
        except ValueError:
            return f"signal {-self.exitcode}"

    def describe(self, timeout: float | None = None) -> str:
        who = f"the {self.engine} engine" if self.engine in ("py", "c") else "the worker"
        when = f" (run {self.run} of 2)" if self.run else ""
        if self.unread:
            why = f"the result of this job could not be read from its worker ({self.unread})"
            return f"{why} while {who} ran{when}; worker replaced"
        if self.kind == "timeout":
            limit = f" after {timeout:g} s" if timeout is not None else ""
            return f"{who} was still running{limit}{when}; worker killed"
        if self.exitcode is not None and self.exitcode < 0:
            how = f"died with {self.signal_name} (signal {-self.exitcode})"
        elif self.exitcode is not None:
            how = f"exited the worker process with status {self.exitcode}"
        else:
            how = "died"
        where = f" in stage {self.stage_name}" if self.stage_name else ""
        return f"{who} {how}{when}{where}"


class TextStore(Protocol):
    """Where a worker leaves the texts it does not send (``objects.ObjectCache``): by sha256."""

    def put(self, sha: str, text: str) -> None: ...

    def get(self, sha: str) -> str | None: ...


@dataclass(frozen=True)
class JobResult(Generic[K]):
    item: WorkItem[K]
    py: tuple[EngineRun, ...] = ()
    c: tuple[EngineRun, ...] = ()
    py_text: str | None = None  # first run's emitted text, when the worker sent it (see text())
    c_text: str | None = None
    death: Death | None = None
    notes: tuple[str, ...] = ()  # what the worker saw besides the runs: engine output, its memory past the limit
    store: TextStore | None = field(default=None, compare=False, repr=False)  # where the unsent texts are

    @property
    def seconds(self) -> float:
        """The engine calls' time, measured in the worker (the job's cost, for scheduling)."""
        return sum(r.seconds for r in (*self.py, *self.c))

    def runs(self, side: str) -> tuple[EngineRun, ...]:
        return self.py if side == "py" else self.c

    def in_store(self, side: str) -> bool:
        """The worker left the side's first emitted text in the pool's store instead of sending it."""
        text = self.py_text if side == "py" else self.c_text
        runs = self.runs(side)
        return text is None and self.store is not None and bool(runs) and runs[0].kind == "emitted"

    def text(self, side: str) -> str | None:
        """The side's first emitted text: as the worker sent it, else read from the pool's store."""
        if self.in_store(side):
            assert self.store is not None
            return self.store.get(self.runs(side)[0].sha256)
        return self.py_text if side == "py" else self.c_text


@dataclass(frozen=True)
class EngineInfo:
    py_modes: tuple[str, ...]
    c_modes: tuple[str, ...]

    @property
    def common_modes(self) -> tuple[str, ...]:
        return tuple(m for m in self.py_modes if m in self.c_modes)
