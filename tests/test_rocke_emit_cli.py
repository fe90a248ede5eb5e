"""rocke-emit, the C engine as a program: same bytes as the Python engine, exit 0/1/2."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from rocke_py import engine as py_engine
from rocke_py.engine.result import Emitted, Rejected
from engines import config_text

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                                reason="no C compiler")


@pytest.fixture(scope="module")
def rocke_emit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("rocke_emit") / "rocke-emit"
    cc = shutil.which("cc") or shutil.which("gcc")
    sources = sorted(str(p) for p in (ROOT / "rocke_c" / "src").glob("*.c"))
    subprocess.run([cc, "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-O1",
                    "-I", str(ROOT / "rocke_c" / "include"), *sources,
                    str(ROOT / "rocke_c" / "cli" / "rocke-emit.c"), "-o", str(out)], check=True)
    return out


def run(exe: Path, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(exe), *args], input=stdin, capture_output=True, timeout=60)


def test_emit_matches_python(rocke_emit: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(config_text("wgrad"))
    got = run(rocke_emit, str(cfg), "--mode", "spec", "--flavor", "llvm22")
    want = py_engine.emit(cfg.read_bytes(), "spec", "llvm22")
    assert isinstance(want, Emitted)
    assert got.returncode == 0, got.stderr
    assert got.stdout == want.text.encode()


def test_output_file_and_stdin(rocke_emit: Path, tmp_path: Path) -> None:
    text = config_text("dgrad", problem={"sH": 2, "sW": 2}).encode()
    out = tmp_path / "out.txt"
    assert run(rocke_emit, "-", "--mode", "spec", "-o", str(out), stdin=text).returncode == 0
    want = py_engine.emit(text, "spec", "llvm22")
    assert out.read_bytes() == want.text.encode()


def test_rejection_exit_1(rocke_emit: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "bad.toml"
    cfg.write_text(config_text("wgrad", tile_k=7))
    got = run(rocke_emit, str(cfg), "--mode", "spec")
    want = py_engine.emit(cfg.read_bytes(), "spec", "llvm22")
    assert isinstance(want, Rejected)
    assert got.returncode == 1
    first, message = got.stderr.decode().split("\n", 1)
    assert first == f"REJECTED {want.code}"
    assert message == want.message + "\n"
    assert got.stdout == b""


@pytest.mark.parametrize("args", [[], ["a.toml", "b.toml"], ["--mode"], ["--bogus", "x.toml"]],
                         ids=["no-config", "two-configs", "missing-value", "unknown-option"])
def test_usage_exit_2(rocke_emit: Path, args: list[str]) -> None:
    got = run(rocke_emit, *args)
    assert got.returncode == 2
    assert b"usage: rocke-emit" in got.stderr


def test_unreadable_file_exit_2(rocke_emit: Path, tmp_path: Path) -> None:
    got = run(rocke_emit, str(tmp_path / "missing.toml"))
    assert got.returncode == 2
    assert b"cannot read" in got.stderr
