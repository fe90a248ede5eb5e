"""cffi API-mode (out-of-line) builder of rocke_py._rocke_c.

The engine's sources are compiled with strict C99 flags as the static library `rocke_c`
(setup.py); the generated wrapper is not clean under -pedantic, so it gets the default flags
and links that library (docs/reference/toolchain.md §10.1). The cdef is read from rocke.h."""

from pathlib import Path

from cffi import FFI

ROOT = Path(__file__).resolve().parent

HEADER = ROOT / "rocke_c" / "include" / "rocke.h"


def public_declarations(header: str) -> str:
    """The declarations of rocke.h, read from the header itself (between its extern "C" lines)
    so the binding cannot drift from it; ROCKE_API (a visibility attribute) means nothing to cffi."""
    start = header.index('extern "C" {\n#endif\n') + len('extern "C" {\n#endif\n')
    end = header.index("#ifdef __cplusplus\n}", start)
    return header[start:end].replace("ROCKE_API ", "")


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
