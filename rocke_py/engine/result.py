"""The values that cross the engine boundary: an emission or a rejection, never an exception."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Emitted:
    text: str


@dataclass(frozen=True)
class Rejected:
    code: str
    message: str


class EngineFailure(Exception):
    """An engine bug, in either engine: an internal check failed (typically in the builder, the
    verifier or the lowering, after the config validated). The Python engine raises it, and
    rocke_py.cbridge raises it for the C engine's ROCKE_ERROR. The harness reports it as
    BUILD_FAILURE, never as a rejection."""
