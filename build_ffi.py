"""cffi API-mode (out-of-line) builder of rocke_py._rocke_c, the C engine of a wheel install.

The engine's sources are compiled with strict C99 flags as the static library `rocke_c`
(setup.py); the generated wrapper is not clean under -pedantic, so it gets the default flags
and links that library (docs/reference/toolchain.md §10.1). The cdef is read from rocke.h."""

import sys
from pathlib import Path

from cffi import FFI

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
from rocke_py.cbuild import public_declarations  # noqa: E402 - the binding rocke_py.cbuild builds too

HEADER = ROOT / "rocke_c" / "include" / "rocke.h"

ffibuilder = FFI()
ffibuilder.cdef(public_declarations(HEADER.read_text(encoding="utf-8")))
ffibuilder.set_source(
    "rocke_py._rocke_c",
    '#include "rocke.h"',
    libraries=["rocke_c"],
    include_dirs=[str(ROOT / "rocke_c" / "include")],
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
