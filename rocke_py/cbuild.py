"""The C engine built from its own sources, on demand, into a cache keyed by content.

The sources are the tree's: in a checkout ``rocke_c/`` beside ``rocke_py/``; in a wheel install
the copy the wheel carries as ``rocke_py/_c/`` (nothing is compiled at install time). A tree
never runs a build made from other sources. :func:`build` compiles each translation unit with the
engine's strict C99 flags into an object named by the sha256 of what it is made of (its text,
the text of every header it includes, the flags, the compiler's identity), links the objects
with cffi's wrapper of ``rocke.h`` into a Python extension named by the engine's fingerprint,
and returns it; :func:`load` imports it. After an edit only the changed units compile again.

The fingerprint (:func:`fingerprint`, its first 16 hex digits are the C engine's build id) is a
sha256 over the engine's sources and public header, the bridge that loads it, the flags and
the compiler's identity: the same on any machine and at any path for the same inputs, and
different when any of them changes. A build from other sources cannot carry the same id.

The cache (``$ROCKE_PARITY_CACHE``, else ``$XDG_CACHE_HOME/rocke-parity``, else
``~/.cache/rocke-parity``) is shared by every tree and process of the user: each file is
written under a temporary name and renamed into place, and one build of a fingerprint at a
time holds its lock, so two gates at once build it once. A build that fails is a
:class:`BuildError` naming the compiler's first error by file and line.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import io
import os
import re
import shlex
import subprocess
import sys
import sysconfig
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

#: The engine's flags: strict C99 (the contract), position-independent for the shared object,
#: hidden visibility so that only rocke.h's ROCKE_API functions are exported.
CFLAGS = ("-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-O2", "-fvisibility=hidden", "-fno-plt")
#: cffi's generated wrapper is not clean under -pedantic: it gets plain flags.
WRAPPER_CFLAGS = ("-O2",)
PIC = ("-fPIC",)
#: The extension's module name (its PyInit function): another name than the wheel's prebuilt
#: ``rocke_py._rocke_c``, so that both can be loaded in one process without meeting.
MODULE = "_rocke_c_tree"
#: The engine's files, relative to its C root (``rocke_c/`` in a checkout, ``rocke_py/_c/`` in a wheel).
SRC_DIR = "src"
INCLUDE_DIR = "include"
HEADER = "include/rocke.h"
#: The bridge that loads the build, in the fingerprint under this name.
BRIDGE = "cbridge.py"
#: The newest builds (linked extensions) the cache keeps; objects are kept as long as one of
#: them, or a build of the last few days, uses them.
KEEP_BUILDS = 24
_FORMAT = b"rocke-c-build 1\0"
_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)
_FIRST_ERROR = re.compile(r"^(\S[^:\n]*:\d+(?::\d+)?: (?:fatal )?error: .*)$", re.M)


class BuildError(ImportError):
    """The tree's C engine cannot be built (a compile or link error, no compiler): a setup
    error, never an engine verdict. An ImportError, so that whatever loads the engine reports
    it as an engine that cannot be loaded."""


def is_c_root(c_root: Path) -> bool:
    return (c_root / SRC_DIR).is_dir() and (c_root / HEADER).is_file()


def cache_dir() -> Path:
    explicit = os.environ.get("ROCKE_PARITY_CACHE")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "rocke-parity"


def compiler() -> list[str]:
    return shlex.split(os.environ.get("CC") or "cc")


_IDENTITY: dict[tuple[str, ...], str] = {}


def compiler_identity(cc: list[str]) -> str:
    """What ``CC --version`` prints (name, version, configuration): two machines with the same
    compiler build the same objects. Asked once per process."""
    key = tuple(cc)
    known = _IDENTITY.get(key)
    if known is None:
        try:
            out = subprocess.run([*cc, "--version"], capture_output=True, timeout=60)
        except (OSError, subprocess.SubprocessError) as e:
            raise BuildError(f"no C compiler to build the C engine with ({' '.join(cc)}: {e})") from None
        if out.returncode != 0:
            raise BuildError(f"the C compiler {' '.join(cc)} does not answer --version")
        known = _IDENTITY[key] = out.stdout.decode("utf-8", "replace").strip()
    return known


@dataclass(frozen=True)
class Sources:
    """A C engine as bytes: every file that goes into its build, by its path under the C root."""

    root: Path  # the C root
    files: dict[str, bytes]

    @property
    def units(self) -> list[str]:
        return sorted(p for p in self.files if p.startswith(SRC_DIR + "/") and p.endswith(".c"))

    def deps(self, unit: str) -> list[str]:
        """The unit and every header it includes, directly or not, that is part of the engine."""
        seen: list[str] = []
        todo = [unit]
        while todo:
            path = todo.pop()
            if path in seen:
                continue
            seen.append(path)
            for name in _INCLUDE.findall(self.files[path]):
                found = self._resolve(path, name.decode("utf-8", "replace"))
                if found is not None:
                    todo.append(found)
        return sorted(seen)

    def _resolve(self, includer: str, name: str) -> str | None:
        here = os.path.normpath(os.path.join(os.path.dirname(includer), name))
        for candidate in (here, os.path.normpath(os.path.join(INCLUDE_DIR, name))):
            if candidate in self.files:
                return candidate
        return None


def read_sources(c_root: Path, bridge: Path | None = None) -> Sources:
    """The engine under ``c_root`` and the bridge that loads it (default: the one beside it)."""
    files = {name: path.read_bytes() for name, path in _source_paths(c_root, bridge)}
    return Sources(c_root, files)


def _source_paths(c_root: Path, bridge: Path | None = None) -> list[tuple[str, Path]]:
    """Every file of the engine's build, by its name in the fingerprint."""
    out = []
    for pattern in (f"{SRC_DIR}/*.c", f"{SRC_DIR}/*.h", f"{INCLUDE_DIR}/*.h"):
        out += [(f.relative_to(c_root).as_posix(), f) for f in sorted(c_root.glob(pattern))]
    bridge = bridge if bridge is not None else _bridge_beside(c_root)
    if bridge is not None and bridge.is_file():
        out.append((BRIDGE, bridge))
    return out


def _stat_signature(c_root: Path, cc: list[str]) -> tuple:
    """What changes when any file of the build is edited, added or removed (or CC changes): a
    process asks :func:`build` again (the command, then its forked workers) without reading and
    hashing every source again while this stays the same."""
    stats = [(name, os.stat(path)) for name, path in _source_paths(c_root)]
    return (tuple(cc), *((n, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns) for n, st in stats))


def _bridge_beside(c_root: Path) -> Path | None:
    """The tree's own bridge: ``rocke_py/cbridge.py`` beside a checkout's ``rocke_c/``, or the
    package's beside a wheel's ``rocke_py/_c/``."""
    for bridge in (c_root.parent / "rocke_py" / BRIDGE, c_root.parent / BRIDGE):
        if bridge.is_file():
            return bridge
    return None


def _digest(parts: list[bytes]) -> str:
    h = hashlib.sha256(_FORMAT)
    for part in parts:
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()


def _file_parts(sources: Sources, paths: list[str]) -> list[bytes]:
    return [b for p in paths for b in (p.encode(), sources.files[p])]


def fingerprint(sources: Sources, cc: list[str] | None = None) -> str:
    """The sha256 (hex) over the engine's files, the flags and the compiler's identity."""
    cc = cc if cc is not None else compiler()
    head = [" ".join(CFLAGS).encode(), " ".join(WRAPPER_CFLAGS).encode(), compiler_identity(cc).encode()]
    return _digest(head + _file_parts(sources, sorted(sources.files)))


def build_id(fp: str) -> str:
    return fp[:16]


def _unit_key(sources: Sources, unit: str, cc_id: str) -> str:
    return _digest([" ".join(CFLAGS).encode(), cc_id.encode(), *_file_parts(sources, sources.deps(unit))])


def _python_tag() -> str:
    """What the extension's binary depends on beside the engine: this interpreter's ABI and cffi."""
    import cffi

    return f"{sysconfig.get_config_var('EXT_SUFFIX')} {sys.version} cffi {cffi.__version__}"


@dataclass(frozen=True)
class Built:
    path: Path  # the extension to load
    fingerprint: str
    compiled: tuple[str, ...]  # the units compiled by this call (none: every object was cached)

    @property
    def build_id(self) -> str:
        return build_id(self.fingerprint)


#: Per process, by C root: the stat signature of the build's files, the sources and their
#: fingerprint as last read; and each build by root and fingerprint (workers forked after the
#: command's build reuse both).
_SEEN: dict[Path, tuple[tuple, Sources, str]] = {}
_BUILT: dict[str, Built] = {}


def current_fingerprint(c_root: Path) -> str:
    """The fingerprint of the engine under ``c_root`` as its files are now."""
    return _current(c_root.resolve(), compiler())[1]


def _current(root: Path, cc: list[str]) -> tuple[Sources, str]:
    """The sources and their fingerprint, read and hashed again only when a file changed."""
    signature = _stat_signature(root, cc)
    seen = _SEEN.get(root)
    if seen is not None and seen[0] == signature:
        return seen[1], seen[2]
    sources = read_sources(root)
    fp = fingerprint(sources, cc)
    _SEEN[root] = (signature, sources, fp)
    return sources, fp


def build(c_root: Path, jobs: int | None = None) -> Built:
    """The extension of the C engine under ``c_root``, built if the cache does not hold it yet."""
    root = c_root.resolve()
    cc = compiler()
    sources, fp = _current(root, cc)
    memo = _BUILT.get(f"{root}\0{fp}")
    if memo is not None:
        return memo
    if not sources.units:
        raise BuildError(f"{root / SRC_DIR} holds no C source")
    tag = hashlib.sha256(_python_tag().encode()).hexdigest()[:16]
    cache = cache_dir()
    lib = cache / "lib" / f"{fp}-{tag}" / f"{MODULE}{sysconfig.get_config_var('EXT_SUFFIX')}"
    compiled: tuple[str, ...] = ()
    if not _touch(lib):
        with _locked(cache / "lock" / f"{fp}-{tag}"):
            if not _touch(lib):
                compiled = _build_into(lib, sources, cc, jobs)
                _prune(cache)
    out = Built(lib, fp, compiled)
    _BUILT[f"{root}\0{fp}"] = out
    return out


class _locked:
    """An exclusive lock on a file of the cache (flock: released when the process dies)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)


def _build_into(lib: Path, sources: Sources, cc: list[str], jobs: int | None) -> tuple[str, ...]:
    cc_id = compiler_identity(cc)
    objdir = cache_dir() / "obj"
    objdir.mkdir(parents=True, exist_ok=True)
    objects = {u: objdir / f"{_unit_key(sources, u, cc_id)}.o" for u in sources.units}
    missing = [u for u, o in objects.items() if not _touch(o)]
    workers = max(1, min(len(missing), jobs or os.cpu_count() or 1))
    if missing:
        with ThreadPoolExecutor(workers) as pool:
            errors = [e for e in pool.map(lambda u: _compile_unit(sources, u, objects[u], cc), missing) if e]
        if errors:
            raise BuildError(errors[0])
    wrapper = _wrapper_object(sources, cc, cc_id, objdir)
    _link(lib, [wrapper, *objects.values()], cc)
    return tuple(missing)


def _touch(path: Path) -> bool:
    """Marks a cached file as used now (the pruning keeps it); False when it is not there."""
    try:
        os.utime(path)
    except OSError:
        return False
    return True


def _compile_unit(sources: Sources, unit: str, obj: Path, cc: list[str]) -> str | None:
    """Compiles one unit (from the C root's parent, so that messages name ``rocke_c/src/x.c`` in a
    checkout); its error or None."""
    tmp = _temp_name(obj)
    top = sources.root.name
    cmd = [*cc, *CFLAGS, *PIC, "-I", f"{top}/{INCLUDE_DIR}", "-c", f"{top}/{unit}", "-o", str(tmp)]
    try:
        out = subprocess.run(cmd, cwd=sources.root.parent, capture_output=True, timeout=600)
    except (OSError, subprocess.SubprocessError) as e:
        return f"the C engine does not compile: {' '.join(cc)}: {e}"
    if out.returncode != 0:
        tmp.unlink(missing_ok=True)
        return "the C engine does not compile: " + first_error(out.stderr.decode("utf-8", "replace"), f"{top}/{unit}")
    os.replace(tmp, obj)
    return None


def first_error(stderr: str, unit: str) -> str:
    """The compiler's first error line (``file:line:col: error: ...``), or its first line."""
    m = _FIRST_ERROR.search(stderr)
    if m:
        return m.group(1).strip()
    lines = [x for x in stderr.splitlines() if x.strip()]
    return f"{unit}: {lines[0].strip() if lines else 'the compiler failed without a message'}"


def public_declarations(header: str) -> str:
    """The declarations of rocke.h, read from the header itself (between its extern "C" lines)
    so that the binding cannot drift from it; ROCKE_API (a visibility attribute) means nothing to cffi."""
    start = header.index('extern "C" {\n#endif\n') + len('extern "C" {\n#endif\n')
    end = header.index("#ifdef __cplusplus\n}", start)
    return header[start:end].replace("ROCKE_API ", "")


def _wrapper_object(sources: Sources, cc: list[str], cc_id: str, objdir: Path) -> Path:
    """cffi's API-mode wrapper of rocke.h, compiled for this interpreter (keyed by its own text)."""
    from cffi import FFI

    ffi = FFI()
    ffi.cdef(public_declarations(sources.files[HEADER].decode("utf-8")))
    ffi.set_source(MODULE, '#include "rocke.h"')
    with tempfile.TemporaryDirectory(prefix="rocke-wrapper-") as tmpdir:
        c_file = Path(tmpdir) / f"{MODULE}.c"
        with contextlib.redirect_stdout(io.StringIO()):  # cffi says "generating ..." on stdout
            ffi.emit_c_code(str(c_file))
        text = c_file.read_bytes()
        py_include = sysconfig.get_paths()["include"]
        key = _digest(
            [text, sources.files[HEADER], " ".join(WRAPPER_CFLAGS).encode(), cc_id.encode(), py_include.encode()]
        )
        obj = objdir / f"wrapper-{key}.o"
        if _touch(obj):
            return obj
        tmp = _temp_name(obj)
        cmd = [*cc, *WRAPPER_CFLAGS, *PIC, "-I", py_include, "-I", str(sources.root / INCLUDE_DIR), "-c", str(c_file)]
        out = subprocess.run([*cmd, "-o", str(tmp)], capture_output=True, timeout=600)
        if out.returncode != 0:
            tmp.unlink(missing_ok=True)
            raise BuildError("cffi's wrapper of rocke.h does not compile: " + first_error(out.stderr.decode(), HEADER))
        os.replace(tmp, obj)
        return obj


def _link(lib: Path, objects: list[Path], cc: list[str]) -> None:
    lib.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temp_name(lib)
    out = subprocess.run([*cc, "-shared", "-o", str(tmp), *map(str, objects)], capture_output=True, timeout=600)
    if out.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise BuildError("the C engine does not link: " + first_error(out.stderr.decode("utf-8", "replace"), "ld"))
    os.replace(tmp, lib)


def _temp_name(dest: Path) -> Path:
    return dest.with_name(f".{dest.name}.{os.getpid()}.tmp")


def _prune(cache: Path) -> None:
    """Keeps the newest :data:`KEEP_BUILDS` builds and the objects touched in the last 14 days."""
    builds = sorted((cache / "lib").glob("*"), key=_last_used, reverse=True)
    for old in builds[KEEP_BUILDS:]:
        for f in old.glob("*"):
            f.unlink(missing_ok=True)
        try:
            old.rmdir()
        except OSError:
            pass
    horizon = max((_last_used(p) for p in builds[:1]), default=0.0) - 14 * 86400
    for obj in (cache / "obj").glob("*.o"):
        try:
            if obj.stat().st_mtime < horizon:
                obj.unlink()
        except OSError:
            pass


def _last_used(build_dir: Path) -> float:
    try:
        return max((f.stat().st_mtime for f in build_dir.iterdir()), default=0.0)
    except OSError:
        return 0.0


_LOADED: dict[Path, ModuleType] = {}


def load(built: Built) -> ModuleType:
    """The built extension as a module (``.ffi``, ``.lib``); once per path and process."""
    module = _LOADED.get(built.path)
    if module is None:
        spec = importlib.util.spec_from_file_location(MODULE, built.path)
        if spec is None or spec.loader is None:
            raise BuildError(f"cannot load the C engine built at {built.path}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _LOADED[built.path] = module
    return module


def package_c_root() -> Path | None:
    """The C engine's sources for the running ``rocke_py`` package: its checkout's ``rocke_c/``, or
    the copy a wheel carries (``rocke_py/_c/``); None when neither is there."""
    here = Path(__file__).resolve().parent
    for c_root in (here.parent / "rocke_c", here / "_c"):
        if is_c_root(c_root):
            return c_root
    return None
