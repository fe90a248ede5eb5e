"""Hole 10: input that is not a config file.

The harness takes only regular files under parity_configs/ (a FIFO, a device, a socket or a
symlink leading outside the repository is a run-level failure of its family, never opened),
every reader reads at most its limit + 1 bytes, and a config that changes while the gate runs
is reported instead of being silently used in its old form. Anything that could hang runs in a
child process with a timeout, and anything that could slurp /dev/zero with a capped address
space, so that a regression fails the test instead of hanging it or eating the machine."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import standin_tree as pt
from layout import REPO

from rocke_py.parity.cli import main
from rocke_py.parity.inputs import configs
from rocke_py.parity.judge.gate import run_gate
from rocke_py.parity.judge.jobs import Selection

LIMIT = 1048576
DATA_LIMIT = 16 * 1024 * 1024  # golden.json, known_gaps.toml, the local state files

AS_CAP = 1 << 30  # 1 GiB of address space: plenty for a stand-in gate, far from /dev/zero's "forever"


def two_families(root: Path) -> Path:
    pt.make_tree(root, {"wgrad/00-a": {}, "fwd/00-b": {}})
    pt.write_golden(root, pt.golden_for(root, ["wgrad/00-a", "fwd/00-b"]))
    return root


def run_level(out: str) -> list[str]:
    return [ln for ln in out.splitlines() if ln.startswith(("FAIL run-level:", "problem:"))]


def test_fifo_named_like_a_config_fails_its_family_and_hangs_nothing(tmp_path):
    root = two_families(tmp_path)
    os.mkfifo(root / "parity_configs/wgrad/50-x.toml")
    other = pt.run_cli(root, "gate", "--family", "fwd", "-j", "1")
    assert other.returncode == 0, other.stdout + other.stderr
    assert "gate PASSED (PARTIAL RUN): 1 job(s)" in other.stdout and not run_level(other.stdout)
    own = pt.run_cli(root, "gate", "--family", "wgrad", "-j", "1")
    assert own.returncode == 1, own.stdout + own.stderr
    assert run_level(own.stdout) == [
        "FAIL run-level: parity_configs/wgrad/50-x.toml: is a FIFO, not a regular file (the harness reads only "
        "regular files under parity_configs/)"
    ]
    full = pt.run_cli(root, "gate", "-j", "1")
    assert full.returncode == 1 and len(run_level(full.stdout)) == 1
    listed = pt.run_cli(root, "list")
    assert listed.returncode == 1 and "problem: parity_configs/wgrad/50-x.toml: is a FIFO" in listed.stdout
    assert pt.run_cli(root, "list", "--family", "fwd").returncode == 0
    assert "Traceback" not in own.stderr + full.stderr + listed.stderr


def test_symlink_to_a_device_is_refused_without_reading_it(tmp_path):
    root = two_families(tmp_path)
    os.symlink("/dev/zero", root / "parity_configs/wgrad/51-zero.toml")
    got = pt.run_cli(root, "gate", "--family", "wgrad", "-j", "1", address_space=AS_CAP)
    assert "Traceback" not in got.stderr, got.stderr[-2000:]
    assert got.returncode == 1
    assert run_level(got.stdout) == [
        "FAIL run-level: parity_configs/wgrad/51-zero.toml: is a symlink to /dev/zero, a character device, "
        "not a regular file (the harness reads only regular files under parity_configs/)"
    ]
    assert pt.run_cli(root, "gate", "--family", "fwd", "-j", "1", address_space=AS_CAP).returncode == 0


def test_symlinks_inside_the_repository_are_followed_outside_refused(tmp_path):
    root = tmp_path / "repo"
    two_families(root)
    shared = root / "shared" / "base.toml"
    shared.parent.mkdir()
    shared.write_text(pt.config_text(description="shared inside the repository"))
    os.symlink("../../shared/base.toml", root / "parity_configs/wgrad/01-inside.toml")
    outside = tmp_path / "elsewhere.toml"
    outside.write_text(pt.config_text(description="outside"))
    os.symlink(outside, root / "parity_configs/wgrad/02-outside.toml")
    os.symlink(root / "parity_configs/wgrad/missing.toml", root / "parity_configs/wgrad/03-dangling.toml")
    disc = configs.discover(root)
    ids = {c.id: c for c in disc.configs}
    assert ids["wgrad/01-inside"].description == "shared inside the repository"
    assert "wgrad/02-outside" not in ids and "wgrad/03-dangling" not in ids
    msgs = sorted(p.message for p in disc.problems)
    assert msgs == [
        f"parity_configs/wgrad/02-outside.toml: is a symlink to {outside}, outside the repository ({root}): refused",
        "parity_configs/wgrad/03-dangling.toml: is a symlink to a missing file "
        f"({root / 'parity_configs/wgrad/missing.toml'})",
    ]
    assert {p.family for p in disc.problems} == {"wgrad"}


def test_socket_named_like_a_config_is_refused(tmp_path):
    root = two_families(tmp_path)
    path = root / "parity_configs/fwd/07-sock.toml"
    s = socket.socket(socket.AF_UNIX)
    try:
        s.bind(str(path))
        disc = configs.discover(root)
    finally:
        s.close()
    assert [(p.message, p.family) for p in disc.problems] == [
        (
            "parity_configs/fwd/07-sock.toml: is a socket, not a regular file (the harness reads only regular files "
            "under parity_configs/)",
            "fwd",
        )
    ]


def big_config(n: int, expect: str = "reject:E_TOO_LARGE") -> bytes:
    """A config with its [parity] table first, padded by one comment line to exactly n bytes."""
    base = (REPO / "parity_configs/wgrad/00-baseline.toml").read_text()
    base = base.replace('expect = "emit"', f'expect = "{expect}"')
    head = base.encode() + b"\n"
    return head + b"#" + b"x" * (n - len(head) - 2) + b"\n"


@pytest.mark.parametrize("size", [LIMIT, LIMIT + 1, 10 * LIMIT])
def test_config_reader_reads_at_most_the_limit_plus_one(tmp_path, monkeypatch, size):
    path = tmp_path / "parity_configs/wgrad/100-big.toml"
    path.parent.mkdir(parents=True)
    data = big_config(size)
    path.write_bytes(data)
    asked: list[int] = []
    real_read = os.read

    def counting_read(fd: int, n: int) -> bytes:
        asked.append(n)
        return real_read(fd, n)

    monkeypatch.setattr(os, "read", counting_read)
    cfg = configs.load_config(path, "wgrad", 100, "big")
    assert cfg.data == data[: LIMIT + 1]
    assert sum(asked) <= LIMIT + 2  # at most limit + 1 bytes asked for, plus the one-byte EOF probe
    assert str(cfg.expect) == "reject:E_TOO_LARGE"


def test_over_limit_config_is_still_rejected_by_both_engines(tmp_path):
    """Real engines: a 10 MiB config reaches them as its first limit + 1 bytes: E_TOO_LARGE, both alike."""
    root = tmp_path
    (root / "parity_configs/wgrad").mkdir(parents=True)
    (root / "parity_configs/wgrad/00-baseline.toml").write_bytes(
        (REPO / "parity_configs/wgrad/00-baseline.toml").read_bytes()
    )
    (root / "parity_configs/wgrad/100-huge.toml").write_bytes(big_config(10 * LIMIT))
    (root / "parity_configs/wgrad/101-just-over.toml").write_bytes(big_config(LIMIT + 1))
    report = tmp_path / "report.json"
    got = subprocess.run(
        [
            sys.executable,
            "-m",
            "rocke_py.parity",
            "gate",
            "--root",
            str(root),
            "--mode",
            "spec",
            "-j",
            "1",
            "--json",
            str(report),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "Traceback" not in got.stderr, got.stderr[-3000:]
    jobs = {j["config"]: j for j in json.loads(report.read_text())["jobs"]}
    for cid in ("wgrad/100-huge", "wgrad/101-just-over"):
        assert jobs[cid]["status"] in ("BOTH_REJECTED", "GOLDEN_MISSING"), jobs[cid]  # no golden.json here
        assert jobs[cid]["py"]["code"] == jobs[cid]["c"]["code"] == "E_TOO_LARGE"
        assert jobs[cid]["py"]["message"] == f"config is {LIMIT + 1} bytes; the limit is {LIMIT}"


def test_emit_and_diff_of_a_file_read_it_bounded(tmp_path, capfd):
    big = tmp_path / "big.toml"
    big.write_bytes(big_config(10 * LIMIT))
    assert main(["emit", str(big), "--engine", "c", "--mode", "spec", "--root", str(REPO)]) == 1
    assert capfd.readouterr().err.splitlines() == [
        "REJECTED E_TOO_LARGE",
        f"config is {LIMIT + 1} bytes; the limit is {LIMIT}",
    ]
    assert main(["diff", str(big), "--mode", "spec", "--root", str(REPO)]) == 0
    out = capfd.readouterr().out
    assert f"config is {LIMIT + 1} bytes" in out and "10485760" not in out
    os.mkfifo(tmp_path / "fifo.toml")
    assert main(["emit", str(tmp_path / "fifo.toml"), "--engine", "c", "--root", str(REPO)]) == 2


@pytest.mark.parametrize("name", ["golden.json", "known_gaps.toml"])
def test_fifo_golden_or_known_gaps_is_a_run_level_failure(tmp_path, name):
    root = two_families(tmp_path)
    path = root / "parity_configs" / name
    path.unlink(missing_ok=True)
    os.mkfifo(path)
    got = pt.run_cli(root, "gate", "--family", "wgrad", "-j", "1")
    assert got.returncode == 1, got.stdout + got.stderr
    assert f"FAIL run-level: {name}: cannot be read: is a FIFO, not a regular file" in got.stdout, got.stdout


def test_oversized_golden_is_a_run_level_failure(tmp_path):
    root = two_families(tmp_path)
    path = root / "parity_configs/golden.json"
    doc = path.read_bytes()
    path.write_bytes(doc[:-2] + b" " * (DATA_LIMIT + 1 - len(doc)) + doc[-2:])
    run = run_gate(root, Selection(families=("wgrad",)), pt.engine_spec(), 1)
    assert (f"golden.json: cannot be read: more than {DATA_LIMIT} bytes (the limit for golden.json)") in run.problems
    path.write_bytes(doc[:-2] + b" " * (DATA_LIMIT - len(doc)) + doc[-2:])  # at the limit: fine
    assert run_gate(root, Selection(families=("wgrad",)), pt.engine_spec(), 1).passed


def test_fifo_local_state_hangs_nothing(tmp_path):
    root = two_families(tmp_path)
    (root / ".rocke-parity").mkdir()
    os.mkfifo(root / ".rocke-parity/last-run.json")
    got = pt.run_cli(root, "list")
    assert got.returncode == 0 and "2 config(s)" in got.stdout
    got = pt.run_cli(root, "gate", "-j", "1")
    assert got.returncode == 0, got.stdout + got.stderr
    assert "Traceback" not in got.stderr


class Editor:
    """A progress sink that edits a config file after the first job finished (mid-run)."""

    def __init__(self, edit) -> None:
        self.edit = edit
        self.done = False

    def start(self, total: int) -> None:
        pass

    def advance(self, label: str) -> None:
        if not self.done:
            self.done = True
            self.edit()

    def close(self) -> None:
        pass


def changed_msg(cid: str, extra: str = "") -> str:
    return f"parity_configs/{cid}.toml changed during the run{extra}: results are for the old content; rerun"


def test_config_changed_during_the_run_is_reported(tmp_path):
    root = two_families(tmp_path)
    path = root / "parity_configs/wgrad/00-a.toml"
    run = run_gate(
        root,
        Selection(),
        pt.engine_spec(),
        1,
        60,
        Editor(lambda: path.write_text(pt.config_text(description="edited while the gate ran"))),
    )
    assert changed_msg("wgrad/00-a") in run.problems and not run.passed
    # same size, same mtime, other bytes: the sha256 still tells
    before = path.stat()
    text = path.read_text()

    def sneaky() -> None:
        path.write_text(text.replace("edited", "EDITED"))
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))

    run = run_gate(root, Selection(), pt.engine_spec(), 1, 60, Editor(sneaky))
    assert changed_msg("wgrad/00-a") in run.problems
    run = run_gate(
        root,
        Selection(configs=("fwd/00-b",)),
        pt.engine_spec(),
        1,
        60,
        Editor(lambda: (root / "parity_configs/fwd/00-b.toml").unlink()),
    )
    assert [p for p in run.problems if "changed during the run" in p] == [changed_msg("fwd/00-b", " (now: it is gone)")]
    # and nothing is reported when nothing changed
    run = run_gate(root, Selection(families=("wgrad",)), pt.engine_spec(), 1)
    assert run.verdicts and not [p for p in run.problems if "changed during the run" in p]
