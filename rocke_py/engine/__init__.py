"""The Python engine: emit(config, mode, flavor) -> Emitted | Rejected."""

from .emit import emit, implemented_modes
from .result import Emitted, EngineFailure, Rejected

__all__ = ["emit", "implemented_modes", "Emitted", "Rejected", "EngineFailure"]
