"""A pause of the cyclic garbage collector around the executors' bulk work."""

from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def gc_paused():
    """No cyclic garbage collection inside (a run of either executor): compiling and running
    allocate many small objects that live until the run ends, and each collection those
    allocations trigger scans every object the process holds, again and again. Reference
    counting still frees; once the collector resumes, one young collection sees what the
    run left, the program's own cycles included."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
