"""Compiling the C engine's programs for the tests and tools: one place for the flags.

The flags are CMakeLists.txt's (ROCKE_WARNINGS; ROCKE_SAN_FLAGS, the ROCKE_SANITIZE build),
read from it, so the tests build the programs the way CMake does; the CMake build is not needed.

    build("rocke_c/tests/emit_driver.c", out_dir, sanitize=True)

Every engine unit is compiled once per content into an object of a cache keyed by what it is made
of (its text, the text of every header it includes, the flags, the compiler's identity), and the
program once per content (main's text and headers, its objects, the link flags) into the same
cache: every xdist worker and every run of the same tree shares them, and an edit of a source
or header gives a new key, so the tree under test is what runs. The machinery (the cache
directory, include closure, locks, digests) is rocke_py/cbuild.py's; the test programs live
under its cache's ``test-programs/``. The program is then hardlinked (or copied) to
out_dir/<name>, the directory the caller owns.

A sanitized program runs with SAN_ENV: a report makes it exit nonzero (halt_on_error) and always
writes to stderr. Used by tests/conftest.py (one fixture per program) and the tools
(compare_ir.py, fuzz_parser.py) when they build a driver themselves."""

from __future__ import annotations

import fcntl
import os
import random
import re
import shutil
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

from rocke_py import cbuild as engine_build
from rocke_py.cbuild import INCLUDE_DIR, SRC_DIR, Sources, _digest, _locked, _temp_name, _touch

ROOT = Path(__file__).resolve().parents[2]
C_ROOT = ROOT / "rocke_c"
SRC = C_ROOT / SRC_DIR
INCLUDE = C_ROOT / INCLUDE_DIR
_FORMAT = b"rocke test program 1"


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


def engine_sources(c_root: Path = C_ROOT) -> list[Path]:
    return sorted((c_root / SRC_DIR).glob("*.c"))


def cache() -> Path:
    """The test programs' part of rocke_py/cbuild.py's cache: obj/<key>.o, lib/<key>/<program>."""
    return engine_build.cache_dir() / "test-programs"


@dataclass(frozen=True)
class _Tree(Sources):
    """The engine's files and the program's directory (its main, the headers and units it
    includes), an include resolved as the compiler resolves it: beside the includer, then in
    the -I directories (include/, src/)."""

    def _resolve(self, includer: str, name: str) -> str | None:
        for base in (os.path.dirname(includer), INCLUDE_DIR, SRC_DIR):
            candidate = os.path.normpath(os.path.join(base, name))
            if candidate in self.files:
                return candidate
        return None


def _read_tree(c_root: Path, main: Path) -> tuple[_Tree, str]:
    """The engine under c_root and every .c/.h beside main; main's name in it."""
    rel = main.resolve().relative_to(c_root.resolve()).as_posix()
    files = dict(engine_build.read_sources(c_root).files)
    for f in sorted(main.parent.glob("*.[ch]")):
        files.setdefault(f.resolve().relative_to(c_root.resolve()).as_posix(), f.read_bytes())
    files[rel] = main.read_bytes()
    return _Tree(c_root, files), rel


@dataclass(frozen=True)
class Program:
    path: Path  # the program (or library) in the cache
    compiled: tuple[str, ...]  # what this call compiled: units by name under the C root, and "link"


def _run(cmd: list[str], cwd: Optional[Path] = None) -> None:
    run = subprocess.run(cmd, capture_output=True, cwd=cwd)
    if run.returncode != 0:
        raise BuildError(run.stderr.decode("utf-8", "replace")[-4000:])


def _try_lock(path: Path) -> Optional[int]:
    """The lock's fd when it is free now, else None (another build holds it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def _objects(tree: _Tree, cc: str, flags: list[str], cc_id: str) -> tuple[dict[str, Path], tuple[str, ...]]:
    """Every engine unit as a cached object compiled with cc and flags; the units compiled here.
    Units another process is compiling are left to it first (tried without waiting), then
    waited for, so that two workers building at once share the work instead of repeating it."""
    objdir = cache() / "obj"
    objdir.mkdir(parents=True, exist_ok=True)
    head = [_FORMAT, " ".join(flags).encode(), cc_id.encode()]
    objects = {}
    for unit in tree.units:
        parts = [b for p in tree.deps(unit) for b in (p.encode(), tree.files[p])]
        objects[unit] = objdir / f"{_digest(head + parts)}.o"
    missing = [u for u, o in objects.items() if not _touch(o)]
    random.Random(os.getpid()).shuffle(missing)
    lockdir = cache() / "lock"

    def compile_unit(unit: str) -> None:
        obj = objects[unit]
        tmp = _temp_name(obj)
        includes = ["-I", f"{tree.root.name}/{INCLUDE_DIR}", "-I", f"{tree.root.name}/{SRC_DIR}"]
        try:
            _run([cc, *flags, *includes, "-c", f"{tree.root.name}/{unit}", "-o", str(tmp)], cwd=tree.root.parent)
        except BuildError:
            tmp.unlink(missing_ok=True)
            raise
        os.replace(tmp, obj)

    def first_try(unit: str) -> Optional[str]:
        fd = _try_lock(lockdir / objects[unit].stem)
        if fd is None:
            return unit
        try:
            if not _touch(objects[unit]):
                compile_unit(unit)
                compiled.append(unit)
        finally:
            os.close(fd)  # closing the last fd releases the flock
        return None

    def waited(unit: str) -> None:
        with _locked(lockdir / objects[unit].stem):
            if not _touch(objects[unit]):
                compile_unit(unit)
                compiled.append(unit)

    compiled: list[str] = []
    if missing:
        with ThreadPoolExecutor(max(1, min(len(missing), os.cpu_count() or 1))) as pool:
            busy = [u for u in pool.map(first_try, missing) if u is not None]
            list(pool.map(waited, busy))
    return objects, tuple(sorted(compiled))


def program(
    main: str | Path,
    *,
    sanitize: bool = False,
    opt: str = "-O1",
    as_library: bool = False,
    extra: Iterable[str] = (),
    name: Optional[str] = None,
    c_root: Path = C_ROOT,
) -> Program:
    """`main` (a path relative to the repository, or absolute; under c_root) built with the
    engine's units (every c_root/src/*.c), in the cache. Sanitized builds are -O1 -g.
    as_library: the units become a static library the program links against (as CMake links
    the C tests against rocke_c_static), so the program gets only the objects it needs: no list
    of sources to keep by hand; the units are compiled without `extra` then (it is main's and
    the link's). FileNotFoundError without a compiler, BuildError when it does not compile."""
    cc = compiler(sanitize)
    if cc is None:
        raise FileNotFoundError("no C compiler (gcc)" if sanitize else "no C compiler (cc or gcc)")
    ar = shutil.which("ar") if as_library else None
    if as_library and ar is None:
        raise FileNotFoundError("no ar for the static library")
    main = ROOT / main
    extra = list(extra)
    flags = CFLAGS + (["-O1", "-g", *SAN_FLAGS] if sanitize else [opt])
    cc_id = engine_build.compiler_identity([cc])
    tree, rel = _read_tree(c_root, main)
    objects, compiled = _objects(tree, cc, flags if as_library else flags + extra, cc_id)
    out_name = name or main.stem
    key = _digest(
        [
            _FORMAT,
            b"library" if as_library else b"objects",
            " ".join(flags).encode(),
            "\0".join(extra).encode(),
            cc_id.encode(),
            out_name.encode(),
            *(b for p in tree.deps(rel) for b in (p.encode(), tree.files[p])),
            *(o.name.encode() for o in objects.values()),
        ]
    )
    includes = [f"-I{c_root / INCLUDE_DIR}", f"-I{c_root / SRC_DIR}"]

    def link(tmp: Path, work: Path) -> None:
        if as_library:
            lib = work / "librocke_c.a"
            _run([ar, "rcs", str(lib), *map(str, objects.values())])
            inputs = [str(main), str(lib)]
        else:
            inputs = [*map(str, objects.values()), str(main)]
        _run([cc, *flags, *extra, *includes, *inputs, "-o", str(tmp)])

    return _linked_once(key, out_name, compiled, link)


def _linked_once(key: str, name: str, compiled: tuple[str, ...], link) -> Program:
    """The program cached under key, linked by ``link(tmp, workdir)`` unless it is there: under
    the key's lock, into a temporary name renamed into place (a reader never sees half a file)."""
    out = cache() / "lib" / key / name
    if _touch(out):
        return Program(out, compiled)
    with _locked(cache() / "lock" / key):
        if _touch(out):
            return Program(out, compiled)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = _temp_name(out)
        with tempfile.TemporaryDirectory(prefix="rocke-link-") as work:
            try:
                link(tmp, Path(work))
            except BuildError:
                tmp.unlink(missing_ok=True)
                raise
        os.replace(tmp, out)
        _prune()
    return Program(out, (*compiled, "link"))


def _prune() -> None:
    """rocke_py/cbuild.py's pruning of old programs and objects, and locks of the same age (a lock
    removed while held only lets a second build write the same file again)."""
    engine_build._prune(cache())
    horizon = time.time() - 14 * 86400
    for lock in (cache() / "lock").glob("*"):
        try:
            if lock.stat().st_mtime < horizon:
                lock.unlink()
        except OSError:
            pass


def _place(built: Path, out: Path) -> Path:
    """The cached file at out (a hardlink, a copy across file systems)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)
    try:
        os.link(built, out)
    except OSError:
        shutil.copy2(built, out)
    return out


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
    """:func:`program`, placed at out_dir/<name or main's stem>."""
    built = program(main, sanitize=sanitize, opt=opt, as_library=as_library, extra=extra, name=name)
    return _place(built.path, Path(out_dir) / (name or Path(main).stem))


def shared_library(out_dir: Path, *, defines: Iterable[str] = (), name: str = "librocke_c.so") -> Path:
    """The engine as a shared library (-g, for readable frames), to be opened in cffi's ABI mode;
    ``defines``: -D flags of a test build (ROCKE_CRASH_AT_STAGE, rocke_c/src/emit.c)."""
    return _place(shared_library_program(defines=defines, name=name).path, Path(out_dir) / name)


def shared_library_program(
    *, defines: Iterable[str] = (), name: str = "librocke_c.so", c_root: Path = C_ROOT
) -> Program:
    cc = compiler()
    if cc is None:
        raise FileNotFoundError("no C compiler (cc or gcc)")
    flags = [*CFLAGS, "-O1", "-g", "-fPIC", *defines]
    cc_id = engine_build.compiler_identity([cc])
    tree = _Tree(c_root, engine_build.read_sources(c_root).files)
    objects, compiled = _objects(tree, cc, flags, cc_id)
    key = _digest(
        [
            _FORMAT,
            b"shared",
            " ".join(flags).encode(),
            cc_id.encode(),
            name.encode(),
            *(o.name.encode() for o in objects.values()),
        ]
    )
    shared = [cc, *flags, "-shared", *map(str, objects.values())]
    return _linked_once(key, name, compiled, lambda tmp, _work: _run([*shared, "-o", str(tmp)]))


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
