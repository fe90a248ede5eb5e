# The C engine for a wheel install: a strict-C99 static library (rocke_py.cbuild's flags) linked
# by the cffi wrapper, which gets the default flags (docs/reference/toolchain.md §10.1). Hidden
# visibility: the extension exports only rocke.h's ROCKE_API functions (and its own PyInit).
# An editable install builds nothing: a source tree runs its C engine as rocke_py.cbuild builds
# it from the tree's own sources, on demand (docs/engine-contract.md, "How the engines are loaded").
import sys
from glob import glob
from pathlib import Path

from setuptools import setup
from setuptools.command.build_clib import build_clib
from setuptools.command.build_ext import build_ext

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rocke_py.cbuild import CFLAGS  # noqa: E402 - the one home of the engine's flags


def _editable(command) -> bool:
    return bool(getattr(command, "editable_mode", False) or getattr(command.distribution, "_rocke_editable", False))


class BuildExt(build_ext):
    def run(self) -> None:
        if self.editable_mode:
            self.distribution._rocke_editable = True
            return
        super().run()


class BuildClib(build_clib):
    def run(self) -> None:
        build = self.get_finalized_command("build_ext")
        if getattr(build, "editable_mode", False) or _editable(self):
            return
        super().run()


setup(
    libraries=[
        (
            "rocke_c",
            {
                "sources": sorted(glob("rocke_c/src/*.c")),
                "include_dirs": ["rocke_c/include"],
                "cflags": list(CFLAGS),
            },
        )
    ],
    cffi_modules=["build_ffi.py:ffibuilder"],
    cmdclass={"build_ext": BuildExt, "build_clib": BuildClib},
)
