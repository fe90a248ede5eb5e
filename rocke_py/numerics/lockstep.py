"""The `ll` run of a launch in lockstep with its IR run (docs/ll-executor.md §5).

Both executors call a tracer at every LDS read, LDS write and MMA, with the lanes and their
values. The IR run records a checksum of each event; the `ll` run, over the same chunks of
workgroups, compares its events one by one. The lowering maps every IR op that touches LDS or
multiplies to one instruction, in order, so the first event that differs names the first
operation where the lowering departs from the IR: its `ll` line and the IR op it stands for."""

from __future__ import annotations

import zlib
from typing import Optional

import numpy as np


def digest(lanes: np.ndarray, values: np.ndarray, lanes_crc: Optional[int] = None) -> int:
    """A checksum of an event's lanes and value bytes (no copy: both are contiguous);
    lanes_crc: the lanes' own checksum, when known."""
    if lanes_crc is None:
        lanes_crc = zlib.crc32(np.ascontiguousarray(lanes, dtype=np.int64))
    raw = np.ascontiguousarray(values)
    return zlib.crc32(raw.view(np.uint8).reshape(-1), lanes_crc)


class LanesCrc:
    """The lanes' checksum, kept for the last lanes array: the executors pass the same array
    object for event after event (every lane, or the lanes of an access). A kept array is made
    read-only, so that changing it in place (which would leave the kept checksum stale and
    the lockstep comparison wrong) raises instead."""

    def __init__(self) -> None:
        self.lanes: Optional[np.ndarray] = None
        self.crc = 0

    def __call__(self, lanes: np.ndarray) -> int:
        if lanes is not self.lanes:
            self.crc = zlib.crc32(np.ascontiguousarray(lanes, dtype=np.int64))
            lanes.flags.writeable = False
            self.lanes = lanes
        return self.crc


def where(op: object) -> str:
    return op.where() if hasattr(op, "where") else str(op)  # type: ignore[attr-defined]


class Recorder:
    """The IR run's tracer: every event's kind, op and checksum, in order."""

    def __init__(self) -> None:
        self.events: list[tuple[str, object, int]] = []
        self.lanes_crc = LanesCrc()

    def __call__(self, kind: str, op: object, lanes: np.ndarray, values: np.ndarray) -> None:
        self.events.append((kind, op, digest(lanes, values, self.lanes_crc(lanes))))


class Follower:
    """The `ll` run's tracer: compares each event with the recorded one; the first that
    differs is the departure."""

    def __init__(self, recorded: Recorder) -> None:
        self.events = recorded.events
        self.next = 0
        self.departure: Optional[str] = None
        self.lanes_crc = LanesCrc()

    def __call__(self, kind: str, instr: object, lanes: np.ndarray, values: np.ndarray) -> None:
        if self.departure is not None:
            return
        k = self.next
        self.next += 1
        if k >= len(self.events):
            self.departure = f"{where(instr)}: a {kind} after the IR's last event ({len(self.events)} events)"
            return
        ir_kind, op, ir_digest = self.events[k]
        if ir_kind != kind:
            self.departure = f"{where(instr)}: a {kind} where the IR has a {ir_kind} at {where(op)} (event {k + 1})"
        elif ir_digest != digest(lanes, values, self.lanes_crc(lanes)):
            self.departure = f"{where(instr)}: the {kind} values differ from the IR's at {where(op)} (event {k + 1})"

    def finish(self) -> Optional[str]:
        """The departure, or the IR events the `ll` run never reached."""
        if self.departure is None and self.next < len(self.events):
            kind, op, _ = self.events[self.next]
            self.departure = (
                f"the ll run ends after {self.next} of the IR's {len(self.events)} events; "
                f"the next is a {kind} at {where(op)}"
            )
        return self.departure
