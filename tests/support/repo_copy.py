"""A copy of this repository's working tree (tracked and untracked-but-not-ignored files): a second
checkout for the tests that gate another tree than the running package's, and for the benches
that time a scratch copy (bench/bench_loop.py)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from layout import REPO


def copy_repository(dest: Path) -> Path:
    """The tracked and untracked-but-not-ignored files of the working tree, copied into dest."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        import pytest  # only a test skips; a bench needs a checkout

        pytest.skip("not a git checkout: no file list to copy")
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for rel in filter(None, listed.split("\0")):
        src = REPO / rel
        if not src.is_file():  # deleted in the working tree, not yet in the index
            continue
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest / rel, follow_symlinks=False)
    return dest


def git_init(root: Path) -> None:
    """Makes ``root`` a repository with everything committed (a fresh clone's state)."""
    env_args = ["-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(["git", *env_args, "-C", str(root), "commit", "-q", "-m", "copy"], check=True)


def replace_in(path: Path, old: str, new: str) -> None:
    """One edit of a file of the copy, which must find ``old`` exactly once."""
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} in {path}"
    path.write_text(text.replace(old, new), encoding="utf-8")
