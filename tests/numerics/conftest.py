"""tests/numerics: `rocke-parity numerics` (rocke_py/numerics): the check on every emitting
config's small variant, the dgrad zeros, K-outer = M-outer and seeded faults. numerics_kit.py,
beside this file, locates the configs."""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
