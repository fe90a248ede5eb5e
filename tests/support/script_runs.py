"""What the two builder-script parity tests share (tests/parity/test_ir_script_parity.py through
rocke_c/tests/ir_driver.c, tests/parity/test_ll_parity.py through lower_driver.c): running the C
driver over many scripts, the Python output of one script, and the comparison."""

from __future__ import annotations

import difflib
import os
import subprocess
from pathlib import Path
from typing import Callable

import pytest
from cbuild import SAN_ENV, parse_outputs
from ir_script import ScriptError

BATCH = 100  # scripts per driver run


def run_c(driver: Path, paths: list[Path], timeout: int = 600) -> list[bytes]:
    """The C outputs of the scripts, in order; a sanitizer report fails the run."""
    outputs: list[bytes] = []
    for i in range(0, len(paths), BATCH):
        chunk = paths[i : i + BATCH]
        proc = subprocess.run(
            [str(driver), *map(str, chunk)], capture_output=True, timeout=timeout, env={**os.environ, **SAN_ENV}
        )
        assert proc.returncode in (0, 1) and not proc.stderr, proc.stderr.decode(errors="replace")[-4000:]
        outputs.extend(parse_outputs(proc.stdout))
    assert len(outputs) == len(paths)
    return outputs


def run_py(run: Callable[[str], str], text: str) -> bytes:
    """run(text) (ir_script.run or ll_script.run) as bytes; a malformed script's line as the C
    driver writes it."""
    try:
        return run(text).encode()
    except ScriptError as e:
        return f"script error: {e}\n".encode()


def same(py: bytes, c: bytes, what: str) -> None:
    if py != c:
        diff = "\n".join(
            difflib.unified_diff(
                py.decode(errors="replace").splitlines(),
                c.decode(errors="replace").splitlines(),
                "python",
                "c",
                lineterm="",
                n=2,
            )
        )
        pytest.fail(f"{what}: the engines differ\n{diff[:4000]}")
