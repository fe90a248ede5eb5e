"""Wrapped real engines whose outputs are hostile to the reports, and one whose faults come late
enough to interrupt the fuzzer (as tests/faults/fault_engines.py does for the gate's matrix).

Every fault is a pair ``<fault>_py`` / ``<fault>_c``; the wrapped side changes the real engine's
answer only for the config the test tree marks with ``# fault: emit-target`` (the same marker
as fault_engines.py):

- ``huge_line``: in every mode, both engines end the output with one 8 MiB line, and the two
  lines differ in their last byte (a ``DIFFER`` whose first divergent line is 8 MiB);
- ``xml_hostile``: the Python engine's output carries a lone surrogate and the characters XML
  1.0 cannot hold (``\\x00``-``\\x08``, ``\\x0b``, ``\\x0c``, ``\\x0e``-``\\x1f``, ``\\ufffe``,
  ``\\uffff``);
- ``differ_then_hang`` (for ``rocke-parity fuzz``, any config): the C engine's output (or
  rejection code) differs from the Python one's, and every C call after the first ``$ROCKE_FAULT_CALLS`` hangs — each
  call leaves a file in ``$ROCKE_FAULT_DIR``, the hanging ones a ``hang-<pid>`` marker, so a
  test sends its signal once failures were found and the fuzzer is stuck.
"""

from __future__ import annotations

import os
import time
import uuid
from functools import partial
from pathlib import Path

from rocke_py import cbridge
from rocke_py import engine as py_engine
from rocke_py.engine.result import Emitted, Rejected

EMIT_TARGET = b"# fault: emit-target"
HUGE = 8 * 1024 * 1024
#: Every character class XML 1.0 refuses, and a lone surrogate (not even UTF-8).
XML_HOSTILE = "\udc80 \x00\x01\x08\x0b\x0c\x0e\x1f \ufffe\uffff"


def _real(side: str, config: bytes, mode: str, flavor: str):
    return (py_engine.emit if side == "py" else cbridge.emit)(config, mode, flavor)


real_py = partial(_real, "py")
real_c = partial(_real, "c")


def implemented_modes() -> tuple[str, ...]:
    return ("spec", "ir", "ll")


# -- one 8 MiB divergent line, in every mode


def _huge_line(side: str, config, mode, flavor):
    out = _real(side, config, mode, flavor)
    if EMIT_TARGET in config and isinstance(out, Emitted):
        return Emitted(out.text + "x" * HUGE + ("1" if side == "py" else "2") + "\n")
    return out


huge_line_py = partial(_huge_line, "py")
huge_line_c = partial(_huge_line, "c")


# -- characters XML cannot hold, in the Python engine's output


def xml_hostile_py(config, mode, flavor):
    out = _real("py", config, mode, flavor)
    if EMIT_TARGET in config and isinstance(out, Emitted):
        return Emitted(out.text + f"# {XML_HOSTILE}\n")
    return out


xml_hostile_c = real_c


# -- the fuzzer: a divergence on every config, then a hang


differ_then_hang_py = real_py


def differ_then_hang_c(config, mode, flavor):
    calls = Path(os.environ["ROCKE_FAULT_DIR"])
    (calls / f"call-{uuid.uuid4().hex}").touch()
    if sum(1 for p in calls.iterdir() if p.name.startswith("call-")) > int(os.environ["ROCKE_FAULT_CALLS"]):
        (calls / f"hang-{os.getpid()}").touch()
        time.sleep(3600)
    out = _real("c", config, mode, flavor)
    if isinstance(out, Rejected):
        return Rejected(out.code + "_X", out.message)
    return Emitted(out.text + "# c\n") if isinstance(out, Emitted) else out
