"""``gate --changed [REV]`` and ``gate --paths FILE...`` (the pre-commit hook): only the configs
a change can affect, and the other engine's outputs from the cache when one engine changed.

What a changed file affects (repository paths):

- ``parity_configs/<family>/<NN>-<slug>.toml``: that config (every mode);
- a file a config is a symlink to (in the repository: a shared file, another config), or a
  symlink on the way to it: every config that leads there (:func:`config_links`);
- the Python engine (``rocke_py/engine/``): every config, the C outputs reused;
- the C engine (``rocke_c/src/``, ``rocke_c/include/``, the bridge ``rocke_py/cbridge.py``, its
  build ``rocke_py/cbuild.py``, ``build_ffi.py``): every config, the Python outputs reused;
- a stand-in engine file an ``--engines`` reference names: every config, the other side reused;
- what judges the outputs or runs the engines (``golden.json``, ``known_gaps.toml``, the
  harness ``rocke_py/parity/``, ``rocke_py/__init__.py``, ``pyproject.toml``, ``setup.py``):
  every config, both engines run;
- anything else (docs, tests, the C test drivers, the CMake binary): no config (the run-level
  checks only).

Both engines changed: every config, both engines run. The full gate (no ``--changed``) never
reads the cache. Whatever is selected, the gate's run-level checks still look at the whole tree
(``jobs.Selection.changed``): a deleted config or a stray file selects no config, yet fails.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Iterable, Mapping

from rocke_py.parity.inputs.configs import CONFIG_DIR
from rocke_py.parity.run.engines import EngineSpec

_PY_ENGINE = ("rocke_py/engine/",)
# cbuild.py holds the flags and the build of the C engine a tree runs: a change to it is one to the engine
_C_ENGINE = ("rocke_c/src/", "rocke_c/include/", "rocke_py/cbridge.py", "rocke_py/cbuild.py", "build_ffi.py")
_EVERYTHING = (
    f"{CONFIG_DIR}/golden.json",
    f"{CONFIG_DIR}/known_gaps.toml",
    "rocke_py/parity/",
    "rocke_py/__init__.py",
    "rocke_py/facts.py",  # the Python engine's and the harness's shared facts
    "rocke_py/configtext.py",  # the harness writes known_gaps.toml entries with it
    "pyproject.toml",
    "setup.py",
)


class ChangeError(Exception):
    """The change cannot be computed (not a git repository, an unknown revision): exit 2."""


@dataclass(frozen=True)
class Affected:
    configs: tuple[str, ...] | None  # None: every config
    engines: frozenset[str]  # the engines whose sources changed ("py", "c")
    everything: bool  # a file that judges or runs both engines changed: no reuse
    why: tuple[str, ...]  # one line per kind of change, for the note

    @property
    def nothing(self) -> bool:
        return self.configs == () and not self.engines and not self.everything

    @property
    def reuse(self) -> str | None:
        """The engine whose outputs may come from the cache: the one that did not change."""
        if self.everything or len(self.engines) != 1:
            return None
        return "c" if "py" in self.engines else "py"


def _git(root: Path, *args: str) -> list[str]:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        raise ChangeError(f"--changed needs git: {e}") from None
    if done.returncode != 0:
        raise ChangeError(f"--changed: git {' '.join(args)}: {done.stderr.strip() or 'failed'}")
    return [ln for ln in done.stdout.splitlines() if ln.strip()]


def changed_since(root: Path, rev: str) -> list[str]:
    """Files changed since ``rev`` (committed, staged or not) and untracked files, as repository paths."""
    top = Path(_git(root, "rev-parse", "--show-toplevel")[0])
    _git(root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    names = _git(root, "diff", "--name-only", rev, "--") + _git(root, "ls-files", "--others", "--exclude-standard")
    return [_relative(top / n, root) for n in dict.fromkeys(names)]


def _relative(path: Path, root: Path) -> str:
    """``path`` as a repository path. Only its directory is resolved: a changed symlink is the
    link itself (a config), not the file it leads to."""
    try:
        return _real_entry(path.absolute()).relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _real_entry(path: Path, dirs: dict[Path, Path] | None = None) -> Path:
    """``path`` with its directory resolved and its last component kept; ``dirs`` caches the
    resolved directories (a config tree has a few directories for many files)."""
    return _real_dir(path.parent, dirs) / path.name


def _real_dir(path: Path, dirs: dict[Path, Path] | None) -> Path:
    if dirs is None:
        return path.resolve()
    if path not in dirs:
        dirs[path] = path.resolve()
    return dirs[path]


def given_paths(root: Path, paths: list[str]) -> list[str]:
    """``--paths``: files as pre-commit passes them (relative to the current directory)."""
    return [_relative(Path(p), root) for p in paths]


def _standin_files(spec: EngineSpec, root: Path) -> dict[str, str]:
    """Repository path -> side, for engine references that name a file (stand-ins)."""
    out = {}
    for side, ref in (("py", spec.py_emit), ("c", spec.c_emit)):
        module = ref.rpartition(":")[0]
        if module.endswith(".py"):
            out[_relative(Path(module), root)] = side
    return out


def _config_id(path: str) -> str | None:
    p = PurePosixPath(path)
    if len(p.parts) == 3 and p.parts[0] == CONFIG_DIR and p.suffix == ".toml":
        return f"{p.parts[1]}/{p.stem}"
    return None


#: symlinks followed from one config before giving up (the kernel's own limit is 40)
_MAX_HOPS = 40


def _link_chain(path: Path, root: Path, dirs: dict[Path, Path]) -> list[str]:
    """The repository paths whose change changes what the config at ``path`` reads: where each
    symlink on its way sits and the file it ends at (the directories resolved: a symlinked
    family directory leads to its target too). Paths outside ``root`` are left out: the gate
    refuses a config that leads there."""
    out: list[str] = []
    here = path
    for _ in range(_MAX_HOPS):
        try:
            here = _real_entry(here, dirs)
            target = os.readlink(here) if here.is_symlink() else None
        except (OSError, RuntimeError):  # gone, or a loop: discovery reports the config
            break
        if here.is_relative_to(root) and (rel := here.relative_to(root).as_posix()) not in out:
            out.append(rel)
        if target is None:
            break
        here = here.parent / target
    return out


def config_links(configs: Iterable[tuple[str, Path]], root: Path) -> dict[str, tuple[str, ...]]:
    """Repository path -> the ids of the configs (id, path) that read it through a symlink (or
    a symlinked directory): a change to a shared target selects every config that links to it.
    A plain config (the usual case) leads only to itself and is left out."""
    real_root = root.resolve()
    dirs: dict[Path, Path] = {}
    out: dict[str, list[str]] = {}
    for cid, path in configs:
        if _real_dir(path.parent, dirs) == path.parent and not path.is_symlink():
            continue  # the usual config, a plain file in a plain directory: cheap to tell (the hook's time)
        chain = _link_chain(path, real_root, dirs)
        if chain == [f"{CONFIG_DIR}/{cid}.toml"]:
            continue
        for rel in chain:
            out.setdefault(rel, []).append(cid)
    return {rel: tuple(ids) for rel, ids in out.items()}


def _configs_of(f: str, existing: set[str], links: Mapping[str, tuple[str, ...]]) -> list[str]:
    """The configs a changed file ``f`` is read by: the config it names, and those linking to it."""
    cid = _config_id(f)
    named = [cid] if cid is not None and cid in existing else []
    return named + [c for c in links.get(f, ()) if c not in named]


def affected(
    files: list[str],
    spec: EngineSpec,
    root: Path,
    existing: set[str],
    links: Mapping[str, tuple[str, ...]] | None = None,
) -> Affected:
    """What ``files`` (repository paths) can affect; ``existing``: the ids of the tree's configs
    (a deleted config has nothing left to run: the gate's run-level checks report its golden
    entries); ``links``: :func:`config_links` of the tree."""
    configs: list[str] = []
    engines: set[str] = set()
    everything: list[str] = []
    standins = _standin_files(spec, root)
    for f in files:
        hits = _configs_of(f, existing, links or {})
        configs.extend(c for c in hits if c not in configs)
        if hits or _config_id(f) is not None:
            continue
        if f in standins:
            engines.add(standins[f])
        elif f.startswith(_PY_ENGINE):
            engines.add("py")
        elif f.startswith(_C_ENGINE):
            engines.add("c")
        elif f.startswith(_EVERYTHING):
            everything.append(f)
    why = []
    if configs:
        why.append(f"{len(configs)} config(s) changed")
    for side in sorted(engines):
        why.append(f"the {side} engine changed")
    if everything:
        why.append(f"{everything[0]}{f' and {len(everything) - 1} more' if len(everything) > 1 else ''} changed")
    every = bool(engines or everything)
    return Affected(None if every else tuple(configs), frozenset(engines), bool(everything), tuple(why))
