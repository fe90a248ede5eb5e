"""What ran: the package version, each engine's build id and the tree's fingerprint.

A build id is the first 16 hex digits of a sha256 over what the engine is made of, read from
disk without importing it: for the Python engine its package's sources (``rocke_py/engine/*.py``,
by name and content) and ``rocke_py/facts.py``; for the C engine the fingerprint of :func:`rocke_py.cbuild.fingerprint`
(its sources, public header, bridge, flags and compiler identity), so the same on any machine
and path; for an ``--engines`` reference the file or module it names. Two runs with the
same ids ran the same engines."""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

from rocke_py.parity.run.engines import EngineSpec

PACKAGE = "rocke-parity"
_C_BRIDGE = "rocke_py.cbridge"


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


#: modules outside an engine's package that it is built from: they count in its build id
_BUILT_WITH = {"rocke_py.engine": ("rocke_py.facts",)}


def build_id(emit_ref: str) -> str:
    """The build id of the engine an ``module:function`` (or ``file.py:function``) reference names."""
    module = emit_ref.rpartition(":")[0]
    if module == _C_BRIDGE:  # the fingerprint of the sources the bridge builds and loads
        from rocke_py import cbuild

        c_root = cbuild.package_c_root()
        return cbuild.build_id(cbuild.current_fingerprint(c_root)) if c_root else "unknown"
    files = _module_files(module)
    for shared in _BUILT_WITH.get(module, ()):
        files += _module_files(shared)
    return _digest(files) if files else "unknown"


def engine_ids(spec: EngineSpec) -> dict[str, dict[str, str]]:
    return {
        "py": {"emit": spec.py_emit, "build_id": build_id(spec.py_emit)},
        "c": {"emit": spec.c_emit, "build_id": build_id(spec.c_emit)},
    }


def version_line(program: str, root: Path | None = None) -> str:
    """The version, the engines' build ids and, inside a tree, the tree's fingerprint."""
    from rocke_py.parity.run import tree

    ids = engine_ids(EngineSpec())
    line = f"{program} {package_version()} (py engine {ids['py']['build_id']}, c engine {ids['c']['build_id']})"
    if root is None:
        return line
    note = tree.engines_note(root)
    return f"{line}\ntree {root}: {tree.short(tree.fingerprint(root))}" + (f"\n{note}" if note else "")
