# The C engine is built as a strict-C99 static library; the cffi wrapper links it with default flags
# (docs/reference/toolchain.md §10.1). Hidden visibility: the extension exports only rocke.h's ROCKE_API
# functions (and its own PyInit), not the engine's internal rk_ functions. -fno-plt: the engine's calls
# into libc (memcpy, strlen, ...) go straight through the GOT, not through a PLT stub each.
from glob import glob

from setuptools import setup

setup(
    libraries=[
        (
            "rocke_c",
            {
                "sources": sorted(glob("rocke_c/src/*.c")),
                "include_dirs": ["rocke_c/include"],
                "cflags": [
                    "-std=c99",
                    "-pedantic",
                    "-Wall",
                    "-Wextra",
                    "-Werror",
                    "-O2",
                    "-fvisibility=hidden",
                    "-fno-plt",
                ],
            },
        )
    ],
    cffi_modules=["build_ffi.py:ffibuilder"],
)
