"""rocke-emit (rocke_c/cli/rocke-emit.c), the C engine as a program, compiled straight from the
sources into a directory the caller owns (pytest's tmp_path, so xdist workers never share a
binary). The CMake build (`.ci/run`) makes the same program; the tests do not depend on it.

Used by tests/test_rocke_emit_cli.py, tests/test_kernel_limits.py and tests/test_doc_commands.py."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[1]


def compiler() -> Optional[str]:
    return shutil.which("cc") or shutil.which("gcc")


def build_rocke_emit(out_dir: Path, opt: str = "-O1") -> Path:
    """Compiles rocke-emit with the project's warnings into out_dir/rocke-emit; CalledProcessError
    when it does not compile."""
    cc = compiler()
    if cc is None:
        raise FileNotFoundError("no C compiler (cc or gcc)")
    out = Path(out_dir) / "rocke-emit"
    sources = sorted(str(p) for p in (ROOT / "rocke_c" / "src").glob("*.c"))
    subprocess.run([cc, "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", opt,
                    "-I", str(ROOT / "rocke_c" / "include"), *sources,
                    str(ROOT / "rocke_c" / "cli" / "rocke-emit.c"), "-o", str(out)], check=True)
    return out
