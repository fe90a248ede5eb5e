"""cffi API-mode (out-of-line) builder of rocke_py._rocke_c.

The engine's sources are compiled with strict C99 flags as the static library `rocke_c`
(setup.py); the generated wrapper is not clean under -pedantic, so it gets the default flags
and links that library (docs/reference/toolchain.md §10.1). The cdef mirrors rocke.h exactly."""

from pathlib import Path

from cffi import FFI

ROOT = Path(__file__).resolve().parent

CDEF = """
typedef enum rocke_status { ROCKE_EMITTED = 0, ROCKE_REJECTED = 1, ROCKE_ERROR = 2 } rocke_status;
typedef struct rocke_result {
    rocke_status status;
    char *text;
    size_t text_len;
    const char *code;
    char *message;
} rocke_result;
rocke_status rocke_emit(const char *config, size_t config_len, const char *mode,
                        const char *flavor, rocke_result *out);
void rocke_result_free(rocke_result *result);
const char *rocke_implemented_modes(void);
const char *rocke_version(void);
"""

ffibuilder = FFI()
ffibuilder.cdef(CDEF)
ffibuilder.set_source(
    "rocke_py._rocke_c",
    '#include "rocke.h"',
    libraries=["rocke_c"],
    include_dirs=[str(ROOT / "rocke_c" / "include")],
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
