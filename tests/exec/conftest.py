"""tests/exec: the IR reader and the CPU executor (rocke_py/exec). kit.py, beside this file,
writes small IR texts and runs emitted kernels against the reference convolutions."""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
