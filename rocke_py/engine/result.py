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
    """An engine bug (e.g. an internal check failed): the harness reports CRASH, never a rejection."""
