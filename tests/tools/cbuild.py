"""Compiling the C engine's programs for the tests and tools: one place for the flags.

The flags are CMakeLists.txt's (ROCKE_WARNINGS; ROCKE_SAN_FLAGS, the ROCKE_SANITIZE build),
read from it, so the tests build the programs the way CMake does. A program is built straight
from the sources into a directory the caller owns (pytest's tmp_path_factory, so xdist workers
never share a binary); the CMake build is not needed.

    build("rocke_c/tests/emit_driver.c", out_dir, sanitize=True)

A sanitized program runs with SAN_ENV: a report makes it exit nonzero (halt_on_error) and always
writes to stderr. Used by tests/conftest.py (one fixture per program) and the tools
(compare_ir.py, fuzz_parser.py) when they build a driver themselves."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Iterable, Optional

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "rocke_c" / "src"
INCLUDE = ROOT / "rocke_c" / "include"


def _cmake_list(name: str) -> list[str]:
    """The words of `set(NAME ...)` in CMakeLists.txt."""
    text = (ROOT / "CMakeLists.txt").read_text()
    found = re.search(rf"set\({name}\s+([^)]*)\)", text)
    if found is None:
        raise RuntimeError(f"CMakeLists.txt has no set({name} ...)")
    return found.group(1).split()


#: -std=c99 (CMAKE_C_STANDARD 99, extensions off) and the project's warnings.
CFLAGS = ["-std=c99", *_cmake_list("ROCKE_WARNINGS")]
#: AddressSanitizer + UBSan, as CMake's ROCKE_SANITIZE adds them.
SAN_FLAGS = _cmake_list("ROCKE_SAN_FLAGS")
SAN_ENV = {
    "ASAN_OPTIONS": "detect_leaks=1:halt_on_error=1:abort_on_error=0:exitcode=86",
    "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1:exitcode=87",
}


class BuildError(RuntimeError):
    """A program did not compile (the message is the compiler's output)."""

    @property
    def no_sanitizer_runtime(self) -> bool:
        text = str(self).lower()
        return "cannot find" in text and "san" in text


def compiler(sanitize: bool = False) -> Optional[str]:
    """gcc for a sanitized build (the sanitizer runtimes are gcc's here), else cc or gcc."""
    return shutil.which("gcc") if sanitize else (shutil.which("cc") or shutil.which("gcc"))


def engine_sources() -> list[Path]:
    return sorted(SRC.glob("*.c"))


def _run(cmd: list[str]) -> None:
    run = subprocess.run(cmd, capture_output=True)
    if run.returncode != 0:
        raise BuildError(run.stderr.decode("utf-8", "replace")[-4000:])


def build(
    main: str | Path,
    out_dir: Path,
    *,
    sanitize: bool = False,
    opt: str = "-O1",
    as_library: bool = False,
    extra: Iterable[str] = (),
    name: Optional[str] = None,
) -> Path:
    """Compiles `main` (a path relative to the repository, or absolute) with the engine's
    sources (every rocke_c/src/*.c) into out_dir/<name or main's stem>. Sanitized builds are
    -O1 -g. as_library: the sources become a static library the program links against (as
    CMake links the C tests against rocke_c_static), so the program gets only the objects it
    needs: no list of sources to keep by hand. FileNotFoundError without a compiler,
    BuildError when the program does not compile."""
    cc = compiler(sanitize)
    if cc is None:
        raise FileNotFoundError("no C compiler (gcc)" if sanitize else "no C compiler (cc or gcc)")
    main = ROOT / main
    out_dir = Path(out_dir)
    out = out_dir / (name or main.stem)
    flags = CFLAGS + (["-O1", "-g", *SAN_FLAGS] if sanitize else [opt])
    includes = [f"-I{INCLUDE}", f"-I{SRC}"]
    srcs = [str(p) for p in engine_sources()]
    if not as_library:
        _run([cc, *flags, *extra, *includes, *srcs, str(main), "-o", str(out)])
        return out
    ar = shutil.which("ar")
    if ar is None:
        raise FileNotFoundError("no ar for the static library")
    objects = []
    for src in srcs:
        obj = out_dir / (Path(src).stem + ".o")
        _run([cc, *flags, *includes, "-c", src, "-o", str(obj)])
        objects.append(str(obj))
    lib = out_dir / "librocke_c.a"
    _run([ar, "rcs", str(lib), *objects])
    _run([cc, *flags, *extra, *includes, str(main), str(lib), "-o", str(out)])
    return out


def shared_library(out_dir: Path, *, defines: Iterable[str] = (), name: str = "librocke_c.so") -> Path:
    """The engine as a shared library (-g, for readable frames), to be opened in cffi's ABI mode;
    ``defines``: -D flags of a test build (ROCKE_CRASH_AT_STAGE, rocke_c/src/emit.c)."""
    cc = compiler()
    if cc is None:
        raise FileNotFoundError("no C compiler (cc or gcc)")
    out = Path(out_dir) / name
    srcs = [str(p) for p in engine_sources()]
    _run([cc, *CFLAGS, "-O1", "-g", "-fPIC", "-shared", *defines, f"-I{INCLUDE}", f"-I{SRC}", *srcs, "-o", str(out)])
    return out


def parse_records(data: bytes) -> list[tuple[str, Optional[str], bytes]]:
    """emit_driver's and build_driver's output: per file `E <n>` or `R|X <code> <n>`, a newline,
    n bytes, a newline. ("E", None, text) | ("R"|"X", code, message)."""
    out: list[tuple[str, Optional[str], bytes]] = []
    pos = 0
    while pos < len(data):
        nl = data.index(b"\n", pos)
        head = data[pos:nl].split(b" ")
        n = int(head[-1])
        body = data[nl + 1 : nl + 1 + n]
        pos = nl + 1 + n + 1
        out.append(("E", None, body) if head[0] == b"E" else (head[0].decode(), head[1].decode(), body))
    return out


def parse_outputs(data: bytes) -> list[bytes]:
    """ir_driver's and lower_driver's output: per script `<n>`, a newline, n bytes, a newline."""
    outputs: list[bytes] = []
    pos = 0
    while pos < len(data):
        nl = data.index(b"\n", pos)
        n = int(data[pos:nl])
        outputs.append(data[nl + 1 : nl + 1 + n])
        pos = nl + 1 + n + 1
    return outputs
