"""rocke-emit, the C engine as a program: same bytes as the Python engine, exit 0/1/2.

Every test runs twice: the CMake binary (rocke_c/cli/rocke-emit.c) and the console script that
`pip install .` puts on the PATH (rocke_py/rocke_emit.py, the engine through the cffi bridge),
which keep one command-line contract."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cbuild import compiler
from two_engines import config_text

from rocke_py import engine as py_engine
from rocke_py.engine.result import Emitted, Rejected

pytestmark = pytest.mark.skipif(compiler() is None, reason="no C compiler")


SCRIPT = Path(sys.executable).parent / "rocke-emit"


@pytest.fixture(params=["cmake-binary", "console-script"])
def program(request: pytest.FixtureRequest) -> list[str]:
    if request.param == "cmake-binary":
        return [str(request.getfixturevalue("rocke_emit"))]
    assert SCRIPT.is_file(), f"{SCRIPT} is missing: `pip install -e .` installs the rocke-emit console script"
    return [str(SCRIPT)]


def run(program: list[str], *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*program, *args], input=stdin, capture_output=True, timeout=60)


def test_console_script_is_on_the_path_of_the_install() -> None:
    assert shutil.which("rocke-emit", path=str(SCRIPT.parent)) == str(SCRIPT)


def test_emit_matches_python(program: list[str], tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(config_text("wgrad"))
    got = run(program, str(cfg), "--mode", "spec", "--flavor", "llvm22")
    want = py_engine.emit(cfg.read_bytes(), "spec", "llvm22")
    assert isinstance(want, Emitted)
    assert got.returncode == 0, got.stderr
    assert got.stdout == want.text.encode()


def test_output_file_and_stdin(program: list[str], tmp_path: Path) -> None:
    text = config_text("dgrad", problem={"sH": 2, "sW": 2}).encode()
    out = tmp_path / "out.txt"
    assert run(program, "-", "--mode", "spec", "-o", str(out), stdin=text).returncode == 0
    want = py_engine.emit(text, "spec", "llvm22")
    assert out.read_bytes() == want.text.encode()


def test_rejection_exit_1(program: list[str], tmp_path: Path) -> None:
    cfg = tmp_path / "bad.toml"
    cfg.write_text(config_text("wgrad", tile_k=7))
    got = run(program, str(cfg), "--mode", "spec")
    want = py_engine.emit(cfg.read_bytes(), "spec", "llvm22")
    assert isinstance(want, Rejected)
    assert got.returncode == 1
    first, message = got.stderr.decode().split("\n", 1)
    assert first == f"REJECTED {want.code}"
    assert message == want.message + "\n"
    assert got.stdout == b""


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["a.toml", "b.toml"],
        ["--mode"],
        ["--bogus", "x.toml"],
        ["x.toml", "--mode", "asm"],
        ["x.toml", "--flavor", "llvm99"],
    ],
    ids=["no-config", "two-configs", "missing-value", "unknown-option", "unknown-mode", "unknown-flavor"],
)
def test_usage_exit_2(program: list[str], args: list[str]) -> None:
    got = run(program, *args)
    assert got.returncode == 2
    assert b"usage: rocke-emit" in got.stderr


def test_unreadable_file_exit_2(program: list[str], tmp_path: Path) -> None:
    got = run(program, str(tmp_path / "missing.toml"))
    assert got.returncode == 2
    assert b"cannot read" in got.stderr


# ---- bounded input (hole 10): at most limit + 1 bytes are read, whatever CONFIG is ----

LIMIT = 1048576
TOO_LARGE = f"REJECTED E_TOO_LARGE\nconfig is {LIMIT + 1} bytes; the limit is {LIMIT}\n".encode()


def padded(n: int) -> bytes:
    head = config_text("wgrad").encode()
    return head + b"#" + b"x" * (n - len(head) - 2) + b"\n"


def cap_mib(program: list[str]) -> int:
    """Room for the program itself: a C binary needs little, a Python interpreter with numpy more."""
    return 64 if program[0] != str(SCRIPT) else 1024


def capped(megabytes: int):
    """preexec_fn: cap the child's address space, so an unbounded reader fails instead of eating RAM."""
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (megabytes << 20, megabytes << 20))

    return limit


@pytest.mark.parametrize("size", [LIMIT, LIMIT + 1, 10 * LIMIT])
def test_large_file_is_read_up_to_the_limit_plus_one(program: list[str], tmp_path: Path, size: int) -> None:
    cfg = tmp_path / "big.toml"
    data = padded(size)
    cfg.write_bytes(data)
    got = run(program, str(cfg), "--mode", "spec")
    want = py_engine.emit(data[: LIMIT + 1], "spec", "llvm22")  # what the harness hands the engines
    if size <= LIMIT:
        assert got.returncode == 0 and got.stdout == want.text.encode()
    else:
        assert (got.returncode, got.stderr) == (1, TOO_LARGE)
        assert want == Rejected("E_TOO_LARGE", f"config is {LIMIT + 1} bytes; the limit is {LIMIT}")


def test_dev_zero_is_rejected_without_reading_it_all(program: list[str]) -> None:
    got = subprocess.run(
        [*program, "/dev/zero", "--mode", "spec"], capture_output=True, timeout=60, preexec_fn=capped(cap_mib(program))
    )
    assert (got.returncode, got.stderr) == (1, TOO_LARGE)


def test_endless_fifo_is_read_bounded(program: list[str], tmp_path: Path) -> None:
    import os
    import threading

    fifo = tmp_path / "endless.toml"
    os.mkfifo(fifo)
    data = padded(16 * LIMIT)

    def writer() -> None:
        try:
            with open(fifo, "wb") as f:
                f.write(data)
        except BrokenPipeError:  # the reader stopped at limit + 1 bytes: expected
            pass

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    got = run(program, str(fifo), "--mode", "spec")
    t.join(30)
    assert (got.returncode, got.stderr) == (1, TOO_LARGE)


def test_directory_says_why_it_cannot_be_read(program: list[str], tmp_path: Path) -> None:
    got = run(program, str(tmp_path))
    assert got.returncode == 2
    assert got.stderr.decode() == f"rocke-emit: cannot read {tmp_path}: Is a directory\n"
