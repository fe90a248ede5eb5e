"""The tree under review: its own code runs, its C engine is built from its sources, and every
report names it by a fingerprint.

- :func:`delegation`: a command works on a tree (``--root``, or the one found from the working
  directory). When that tree carries its own ``rocke_py`` package and the running one is
  another (a venv installed from another checkout, the hook's copy of the repository at its
  ``rev``, an installed wheel), the command is run again by this interpreter with the tree's
  package first on the path: the harness, the Python engine and the C engine's sources are
  then all the tree's. A tree without a ``rocke_py`` of its own (a directory of configs) is
  gated by the running package's engines, and the reports say so.
- :func:`ensure_c_engine`: the C engine built (or found in the content-keyed cache) before any
  worker loads it; a compile error is a setup error naming the compiler's first error.
- :func:`fingerprint`: the commit (``+dirty`` and what is dirty), and the sha256 of
  ``golden.json``, ``known_gaps.toml`` and the config set. ``merge`` accepts only shards whose
  fingerprints and engine ids are equal.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Sequence

from rocke_py.parity.run.root import CONFIG_DIR, resolve_root

#: Set in a delegated run to the tree it was delegated to (a second delegation would loop).
DELEGATED_ENV = "ROCKE_PARITY_TREE"
GOLDEN_FILE = "golden.json"
GAPS_FILE = "known_gaps.toml"
#: At most this many dirty paths are listed in a fingerprint (and how many more there are).
MAX_DIRTY = 40


class TreeError(Exception):
    """The tree's own code cannot be run (exit 2)."""


def package_root() -> Path:
    """The directory holding the running ``rocke_py`` package."""
    return Path(__file__).resolve().parents[3]


def has_own_package(root: Path) -> bool:
    return (root / "rocke_py" / "__init__.py").is_file() and (root / "rocke_py" / "engine").is_dir()


def _root_argument(argv: Sequence[str]) -> str | None:
    pre = argparse.ArgumentParser(add_help=False, allow_abbrev=False, exit_on_error=False)
    pre.add_argument("--root")
    try:
        known, _ = pre.parse_known_args(list(argv))
    except argparse.ArgumentError:  # --root without a value: the command's own parser says so
        return None
    return known.root


def tree_of(argv: Sequence[str]) -> Path | None:
    """The tree a command line works on, or None (none found: the command reports that itself)."""
    root = resolve_root(_root_argument(argv))
    return root if root is not None and root.is_dir() else None


def delegation(argv: Sequence[str]) -> Path | None:
    """The tree whose own harness must run this command line, or None (this one is it, or the tree
    has no package of its own). TreeError when a delegated run still is not the tree's own."""
    root = tree_of(argv)
    if root is None or not has_own_package(root) or root == package_root():
        return None
    if os.environ.get(DELEGATED_ENV):
        raise TreeError(
            f"the harness of {root} was asked to run, but this interpreter imports rocke_py from "
            f"{package_root()} (is PYTHONPATH or a .pth file in the way?)"
        )
    return root


def delegated_command(root: Path, argv: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """The command line and environment that run ``argv`` with ``root``'s own package."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), env.get("PYTHONPATH", "")) if p)
    env[DELEGATED_ENV] = str(root)
    # -P: the working directory is not put first on the path (it may hold yet another checkout)
    return [sys.executable, "-P", "-m", "rocke_py.parity", *argv], env


def run_delegated(root: Path, argv: Sequence[str], replace_process: bool) -> int:
    """Runs ``argv`` as ``root``'s harness: in place of this process (the console script), or as
    a child whose exit status is returned (a caller of :func:`rocke_py.parity.cli.main`)."""
    cmd, env = delegated_command(root, argv)
    sys.stdout.flush()
    sys.stderr.flush()
    if replace_process:
        os.execve(sys.executable, cmd, env)
    return subprocess.run(cmd, env=env).returncode


def ensure_c_engine(c_emit: str) -> None:
    """Builds the C engine of the running package's tree (the tree under review) before workers
    load it, when ``c_emit`` is the default bridge; BuildError (exit 2) when it does not build."""
    from rocke_py import cbuild
    from rocke_py.parity.run.engines import EngineSpec

    if c_emit != EngineSpec.c_emit:
        return
    c_root = cbuild.package_c_root()
    if c_root is not None:  # without one, loading the bridge says so
        cbuild.build(c_root)


def engines_note(root: Path) -> str | None:
    """What a report says when the tree has no engines of its own, so that it is never mistaken
    for a verdict about engines it does not hold; None when the tree's own engines ran."""
    if has_own_package(root):
        return None
    return f"{root} holds no engines of its own: the engines are those of {package_root()}"


# ----------------------------------------------------------------------------- fingerprint


def _git(root: Path, *args: str) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(root), *args], capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.decode("utf-8", "replace") if out.returncode == 0 else None


#: Where an untracked file changes what the gate runs or judges; untracked files elsewhere (a
#: shard's report written into the checkout, notes) do not make the tree dirty.
UNDER_REVIEW = ("parity_configs/", "rocke_py/", "rocke_c/", "pyproject.toml")


def git_state(root: Path) -> tuple[str | None, list[str]]:
    """HEAD (``+dirty`` when a tracked file differs, or an untracked file sits where it changes
    the verdict: :data:`UNDER_REVIEW`) and what differs."""
    head = _git(root, "rev-parse", "HEAD")
    if head is None:
        return None, []
    status = _git(root, "status", "--porcelain=v1", "--untracked-files=all") or ""
    dirty = sorted(line.rstrip() for line in status.splitlines() if _counts(line))
    return head.strip() + ("+dirty" if dirty else ""), dirty


def _counts(line: str) -> bool:
    if not line.strip():
        return False
    return not line.startswith("?? ") or line[3:].startswith(UNDER_REVIEW)


def _file_sha(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def config_set_sha(root: Path) -> str:
    """The sha256 over every file under the family directories of ``parity_configs/``, by path and content."""
    h = hashlib.sha256(b"rocke-parity config set 1\0")
    base = root / CONFIG_DIR
    for path in sorted(p for p in base.glob("*/**/*") if not p.is_dir()):
        rel = path.relative_to(base).as_posix().encode()
        try:
            data = path.read_bytes()
        except OSError:
            data = b"\xff unreadable"
        h.update(len(rel).to_bytes(8, "little") + rel + len(data).to_bytes(8, "little") + data)
    return h.hexdigest()


def fingerprint(root: Path) -> dict[str, object]:
    """What the verdict is about, beside the engines: the commit and the judging files' contents."""
    commit, dirty = git_state(root)
    out: dict[str, object] = {
        "commit": commit,
        "dirty": dirty[:MAX_DIRTY],
        "golden_sha256": _file_sha(root / CONFIG_DIR / GOLDEN_FILE),
        "known_gaps_sha256": _file_sha(root / CONFIG_DIR / GAPS_FILE),
        "configs_sha256": config_set_sha(root),
    }
    if len(dirty) > MAX_DIRTY:
        out["dirty_more"] = len(dirty) - MAX_DIRTY
    return out


#: The fingerprint's fields in the order a difference is named.
FINGERPRINT_FIELDS = ("commit", "golden_sha256", "known_gaps_sha256", "configs_sha256", "dirty", "dirty_more")


def short(fp: dict[str, object]) -> str:
    """One line for a person: the commit and the first 12 hex digits of each hash."""

    def h(key: str) -> str:
        v = fp.get(key)
        return str(v)[:12] if v else "none"

    commit = fp.get("commit") or "no commit"
    return (
        f"commit {commit}, golden {h('golden_sha256')}, known gaps {h('known_gaps_sha256')}, "
        f"configs {h('configs_sha256')}"
    )
