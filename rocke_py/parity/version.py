"""What ran: the package version, each engine's build id and the repository's commit.

A build id is the first 16 hex digits of a sha256 over what the engine is made of, read from
disk without importing it: the Python engine's package sources (``rocke_py/engine/*.py``), the C
engine's built extension (the shared object the bridge loads), or the file or module a
``--engines`` reference names. Two runs with the same ids ran the same engines."""

from __future__ import annotations

import hashlib
import importlib.util
import subprocess
from pathlib import Path

from rocke_py.parity.engines import EngineSpec

PACKAGE = "rocke-parity"
_C_BRIDGE = "rocke_py.cbridge"
_C_EXTENSION = "rocke_py._rocke_c"


def package_version() -> str:
    import importlib.metadata  # only when a version is asked for: it costs every command's start otherwise

    try:
        return importlib.metadata.version(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _digest(files: list[Path]) -> str:
    h = hashlib.sha256()
    for f in sorted(files):
        try:
            data = f.read_bytes()
        except OSError:
            continue
        h.update(f.name.encode() + b"\0" + len(data).to_bytes(8, "little") + data)
    return h.hexdigest()[:16]


def _module_files(module: str) -> list[Path]:
    if module.endswith(".py"):
        return [Path(module)]
    if module == _C_BRIDGE:
        module = _C_EXTENSION  # the C engine is the extension the bridge loads
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return []
    if spec is None or spec.origin is None:
        return []
    origin = Path(spec.origin)
    if spec.submodule_search_locations:  # a package: every source file in it
        return [p for loc in spec.submodule_search_locations for p in Path(loc).glob("*.py")]
    return [origin]


def build_id(emit_ref: str) -> str:
    """The build id of the engine an ``module:function`` (or ``file.py:function``) reference names."""
    files = _module_files(emit_ref.rpartition(":")[0])
    return _digest(files) if files else "unknown"


def engine_ids(spec: EngineSpec) -> dict[str, dict[str, str]]:
    return {
        "py": {"emit": spec.py_emit, "build_id": build_id(spec.py_emit)},
        "c": {"emit": spec.c_emit, "build_id": build_id(spec.c_emit)},
    }


def git_commit(root: Path) -> str | None:
    """HEAD of the repository at ``root`` (with ``+dirty`` when tracked files changed), or None."""
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def version_line(program: str) -> str:
    ids = engine_ids(EngineSpec())
    return f"{program} {package_version()} (py engine {ids['py']['build_id']}, c engine {ids['c']['build_id']})"
