"""The CI shapes, run for real: the GitHub workflow's shards on two runners that share nothing
(fresh clones at different paths, their own venvs and C build caches) merged by a third, and
the pre-commit hook through the real ``pre-commit run`` of a config naming the hook repository
at a revision, as a user's .pre-commit-config.yaml does: pre-commit installs it into an
environment of its own and runs it on the staged tree.

The venvs see the test environment's packages (cffi, numpy, ...) through a .pth file and
install the clone itself with ``pip install -e`` without the network, as the workflow's
``pip install -e .`` does."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from repo_copy import copy_repository, git_init, replace_in

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"]


@pytest.fixture(scope="module")
def origin(tmp_path_factory) -> Path:
    """A repository holding this working tree as one commit: what the runners clone."""
    root = copy_repository(tmp_path_factory.mktemp("origin") / "repo")
    git_init(root)
    return root


def clone(origin: Path, dest: Path) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "clone", "-q", str(origin), str(dest)], check=True)
    return dest


def runner_venv(where: Path, checkout: Path) -> Path:
    """A venv of its own with ``pip install -e CHECKOUT`` (no network: the dependencies come from
    the test environment through a .pth file); its bin directory."""
    venv = where / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(site, "_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation"]
    done = subprocess.run([*pip, "-e", str(checkout)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return venv / "bin"


def run(bin_dir: Path, cwd: Path, cache: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, ROCKE_PARITY_CACHE=str(cache), PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    env.pop("ROCKE_PARITY_TREE", None)
    return subprocess.run([str(bin_dir / "rocke-parity"), *args], cwd=cwd, env=env, capture_output=True, text=True)


def test_two_runners_shards_merge_and_a_changed_tree_is_refused(origin, tmp_path):
    runners = []
    for n, depth in ((1, "work"), (2, "a/b/work")):  # different paths on each runner
        checkout = clone(origin, tmp_path / f"runner{n}" / depth)
        runners.append((checkout, runner_venv(tmp_path / f"runner{n}", checkout), tmp_path / f"runner{n}" / "cache"))
    reports = []
    for n, (checkout, bin_dir, cache) in enumerate(runners, 1):
        done = run(bin_dir, checkout, cache, "gate", "--shard", f"{n}/2", "--json", f"shard-{n}.json")
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        reports.append(checkout / f"shard-{n}.json")
    ids = [json.loads(r.read_text())["summary"]["engines"] for r in reports]
    assert ids[0] == ids[1]  # the same engines, built apart: the same build ids
    merger = clone(origin, tmp_path / "merge" / "checkout")
    merge_bin = runner_venv(tmp_path / "merge", merger)
    for r in reports:
        shutil.copy2(r, merger / r.name)
    merged = run(merge_bin, merger, tmp_path / "merge" / "cache", "merge", "shard-1.json", "shard-2.json",
                 "--junit", "gate-junit.xml", "--summary", "summary.md")  # fmt: skip
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert "PASSED" in merged.stdout and (merger / "gate-junit.xml").is_file()

    checkout, bin_dir, cache = runners[1]  # runner 2's tree changes: another commit
    (checkout / "parity_configs" / "known_gaps.toml").open("a").write("# another tree\n")
    subprocess.run([*GIT, "-C", str(checkout), "commit", "-qam", "another tree"], check=True)
    assert run(bin_dir, checkout, cache, "gate", "--shard", "2/2", "--json", "shard-2.json").returncode == 0
    shutil.copy2(checkout / "shard-2.json", merger / "shard-2.json")
    refused = run(merge_bin, merger, tmp_path / "merge" / "cache", "merge", "shard-1.json", "shard-2.json")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "not of one tree" in refused.stderr and "Traceback" not in refused.stderr


# ---- the pre-commit hook, as pre-commit runs it


@pytest.fixture
def scratch(origin, tmp_path) -> Path:
    if shutil.which("git") is None:
        pytest.skip("no git")
    return clone(origin, tmp_path / "scratch")


@pytest.fixture(scope="module")
def hook_home(tmp_path_factory) -> Path:
    """One pre-commit store for the module's hook runs: the hook repository and revision are the
    same in each, so pre-commit installs the hook's environment once and reuses it, as it does
    for a user (``try-repo`` would install it again into a throwaway store on every run)."""
    return tmp_path_factory.mktemp("pre-commit-home")


def run_hook(scratch: Path, home: Path, *args: str) -> subprocess.CompletedProcess:
    """``pre-commit run`` of the hook repository (the origin the scratch clone was cloned from) at
    the scratch clone's committed HEAD: the hook is installed from the commit, never from the
    staged change; run in the scratch clone."""
    pre_commit = Path(sys.executable).parent / "pre-commit"
    if not pre_commit.is_file():
        pytest.skip("pre-commit is not installed (pip install -e '.[test]')")
    head = subprocess.run(["git", "-C", str(scratch), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    origin = subprocess.run(
        ["git", "-C", str(scratch), "remote", "get-url", "origin"], capture_output=True, text=True, check=True
    ).stdout.strip()
    config = scratch.parent / "hook-config.yaml"  # JSON is YAML: the config try-repo would write
    hooks = [{"repo": origin, "rev": head.strip(), "hooks": [{"id": "rocke-parity"}]}]
    config.write_text(json.dumps({"repos": hooks}))
    env = dict(os.environ, PRE_COMMIT_HOME=str(home))
    env.pop("ROCKE_PARITY_TREE", None)
    cmd = [str(pre_commit), "run", "--config", str(config), "rocke-parity", "-v", *args]
    return subprocess.run(cmd, cwd=scratch, env=env, capture_output=True, text=True, timeout=900)


def test_the_hook_fails_a_staged_c_regression(scratch, hook_home):
    replace_in(scratch / "rocke_c/src/print_spec.c", '"rocke.spec v1\\n"', '"rocke.spec v9\\n"')
    subprocess.run(["git", "-C", str(scratch), "add", "rocke_c/src/print_spec.c"], check=True)
    done = run_hook(scratch, hook_home)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-2000:]
    assert "DIFFER" in done.stdout and "Failed" in done.stdout


def test_the_hook_gates_only_a_staged_config(scratch, hook_home):
    cfg = scratch / "parity_configs/fwd/00-baseline.toml"
    text = cfg.read_text()
    cfg.write_text(text.replace('description = "', 'description = "(reworded) ', 1))
    subprocess.run(["git", "-C", str(scratch), "add", str(cfg)], check=True)
    done = run_hook(scratch, hook_home)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "gate PASSED (PARTIAL RUN): 5 job(s)" in done.stdout and "1 of " in done.stdout


def test_the_hook_passes_a_clean_tree(scratch, hook_home):
    done = run_hook(scratch, hook_home, "--all-files")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "Passed" in done.stdout
