"""The C test drivers read their input files bounded (rocke_c/tests/driver_io.h): a loop that
stops at the drivers' limit + 1 bytes, so /dev/zero is refused instead of read as an empty
file (or forever), and a FIFO is read like a file instead of being refused for not seeking."""

from __future__ import annotations

import os
import resource
import subprocess
import threading
from pathlib import Path

import cbuild
import pytest
import sanitized_driver
from layout import REPO

DRIVER_LIMIT = 64 << 20  # DRIVER_MAX_BYTES in driver_io.h
pytestmark = pytest.mark.skipif(cbuild.compiler() is None, reason="no C compiler")


def capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (512 << 20, 512 << 20))


def drive(exe: Path, *files: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(exe), "spec", "llvm22", *files], capture_output=True, timeout=60, preexec_fn=capped)


CONFIG = (REPO / "parity_configs" / "wgrad" / "00-baseline.toml").read_bytes()


def test_dev_zero_is_refused_not_read_as_empty(emit_driver: Path) -> None:
    got = drive(emit_driver, "/dev/zero")
    assert got.returncode == 2 and got.stdout == b""
    assert got.stderr == f"cannot read /dev/zero: more than {DRIVER_LIMIT} bytes\n".encode()


def test_fifo_is_read_like_a_file(emit_driver: Path, tmp_path: Path) -> None:
    plain = tmp_path / "plain.toml"
    plain.write_bytes(CONFIG)
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)

    def writer() -> None:
        with open(fifo, "wb") as f:
            f.write(CONFIG)

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    got = drive(emit_driver, str(fifo), str(plain))
    t.join(30)
    assert got.returncode == 0, got.stderr
    records = sanitized_driver.parse_records(got.stdout)
    assert len(records) == 2 and records[0] == records[1] and records[0][0] == "E"


def test_ten_megabytes_is_within_the_driver_limit(emit_driver: Path, tmp_path: Path) -> None:
    big = tmp_path / "big.toml"
    big.write_bytes(CONFIG + b"#" + b"x" * (10 << 20) + b"\n")
    got = drive(emit_driver, str(big))
    assert got.returncode == 0, got.stderr
    n = big.stat().st_size
    assert sanitized_driver.parse_records(got.stdout) == [
        ("R", "E_TOO_LARGE", f"config is {n} bytes; the limit is 1048576".encode())
    ]


def test_missing_file_says_why(emit_driver: Path, tmp_path: Path) -> None:
    got = drive(emit_driver, str(tmp_path / "missing.toml"))
    assert got.returncode == 2
    assert got.stderr == f"cannot read {tmp_path / 'missing.toml'}: No such file or directory\n".encode()
