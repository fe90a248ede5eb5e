"""Compile emitted `.ll` text with a real LLVM (llvmlite 0.50, LLVM 22.1) in a child process.

AMDGPU codegen failures (`Cannot select`, `Do not know how to expand`, assertions) are LLVM
fatal errors that abort the process, so parse, verify and codegen all run in a child
(docs/reference/toolchain.md §3, §10): an abort becomes a failed result, never a dead test
worker or harness. This file runs as that child too (`python llvm.py --child ARCH OPT`, IR on
stdin); it imports nothing from rocke_py, so the child needs only llvmlite.

compile_ll(text, arch) -> (True, assembly) or (False, reason).

A compiled kernel's assembly is kept in a cache keyed by everything the child's answer depends
on: the text, the arch, the optimisation level, llvmlite's version and this file's own bytes
(the child's code). The same module is compiled by check-llvm, its tests, the README's commands
and CI, each a few seconds of LLVM per large kernel; a changed lowering changes the text and
misses. Only a success is kept (a failure is rare and may be a timeout). The cache lives beside
the C engine's builds (``$ROCKE_PARITY_CACHE``, else ``~/.cache/rocke-parity``), under
``llvm/``; ``ROCKE_PARITY_LLVM_CACHE=0`` turns it off."""

from __future__ import annotations

import gzip
import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

DEFAULT_TIMEOUT = 300.0
TRIPLE = "amdgcn-amd-amdhsa"

# Exit codes of the child for the failures it can report itself.
RC_NO_LLVMLITE = 3
RC_INVALID_IR = 4


def child(arch: str, opt: int) -> int:
    try:
        import llvmlite.binding as llvm
    except ImportError:
        sys.stderr.write("llvmlite is not installed in " + sys.executable + "\n")
        return RC_NO_LLVMLITE
    src = sys.stdin.read()
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    try:
        mod = llvm.parse_assembly(src)
        mod.verify()
    except RuntimeError as e:
        sys.stderr.write("invalid IR: " + str(e).strip() + "\n")
        return RC_INVALID_IR
    tm = llvm.Target.from_triple(TRIPLE).create_target_machine(cpu=arch, opt=opt)
    asm = tm.emit_assembly(mod)  # a codegen failure aborts here (SIGABRT)
    sys.stdout.write(asm)
    sys.stdout.flush()
    return 0


def tail(text: str, limit: int = 2000) -> str:
    text = text.strip()
    return text if len(text) <= limit else "..." + text[-limit:]


def compile_ll(text: str, arch: str, timeout: float = DEFAULT_TIMEOUT, opt: int = 3) -> tuple[bool, str]:
    """Parse, verify and compile `text` for `arch` (`cpu=`) in a child process, or the assembly
    the cache keeps for exactly this input.

    (True, asm) when it compiles to assembly for that CPU with no unresolved llvm.amdgcn.*
    call; otherwise (False, reason): invalid IR, a codegen abort, an unknown CPU, a timeout."""
    entry = cache_entry(text, arch, opt)
    if entry is not None:
        asm = _read_entry(entry)
        if asm is not None:
            return True, asm
    ok, out = _compile_in_child(text, arch, timeout, opt)
    if ok and entry is not None:
        _write_entry(entry, out)
    return ok, out


def _compile_in_child(text: str, arch: str, timeout: float, opt: int) -> tuple[bool, str]:
    try:
        p = subprocess.run(
            [sys.executable, __file__, "--child", arch, str(opt)],
            input=text,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return False, "timeout: codegen for " + arch + " ran past " + str(timeout) + " s"
    if p.returncode == RC_NO_LLVMLITE or p.returncode == RC_INVALID_IR:
        return False, tail(p.stderr)
    if p.returncode != 0:
        return False, "codegen for " + arch + " failed (rc=" + str(p.returncode) + "): " + tail(p.stderr)
    if "not a recognized processor" in p.stderr:
        return False, "unknown CPU " + arch + ": " + tail(p.stderr)
    if '.amdgcn_target "' + TRIPLE + "--" + arch + '"' not in p.stdout:
        return False, "the assembly is not for " + arch
    if "llvm.amdgcn." in p.stdout:
        # An unknown intrinsic name compiles to a call to an undefined external symbol.
        return False, "the assembly calls an llvm.amdgcn.* symbol (an intrinsic LLVM does not know)"
    return True, p.stdout


#: Entries not used for this long are deleted when a process first writes one.
CACHE_KEEP_SECONDS = 14 * 86400
_PRUNED: list[bool] = []


def cache_entry(text: str, arch: str, opt: int) -> Path | None:
    """Where the assembly of (text, arch, opt) is kept; None when the cache is off or llvmlite
    is missing (a failure is never kept)."""
    if os.environ.get("ROCKE_PARITY_LLVM_CACHE", "1") == "0":
        return None
    version = _llvmlite_version()
    if version is None:
        return None
    h = hashlib.sha256(b"rocke-parity llvm cache 1\0")
    for part in (Path(__file__).read_bytes(), version.encode(), arch.encode(), str(opt).encode(), text.encode()):
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    key = h.hexdigest()
    root = _cache_root()
    return None if root is None else root / key[:2] / f"{key}.s.gz"


def _llvmlite_version() -> str | None:
    from importlib import metadata

    try:
        return metadata.version("llvmlite")
    except metadata.PackageNotFoundError:
        return None


def _cache_root() -> Path | None:
    """``llvm/`` in the C engine's build cache; None when run as a bare script without rocke_py."""
    try:
        from rocke_py.cbuild import cache_dir
    except ImportError:
        return None
    return cache_dir() / "llvm"


def _read_entry(entry: Path) -> str | None:
    """The kept assembly, marked as used now; None when absent or unreadable (then compiled again)."""
    try:
        asm = gzip.decompress(entry.read_bytes()).decode("utf-8")
        os.utime(entry)
    except (OSError, EOFError, gzip.BadGzipFile, UnicodeDecodeError, ValueError):
        return None
    return asm


def _write_entry(entry: Path, asm: str) -> None:
    """Written under a temporary name and renamed into place: a reader sees all of it or nothing.
    A cache that cannot be written is no error."""
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        tmp = entry.with_name(f".{entry.name}.{os.getpid()}.tmp")
        tmp.write_bytes(gzip.compress(asm.encode("utf-8"), compresslevel=1))
        os.replace(tmp, entry)
    except OSError:
        return
    if not _PRUNED:
        _PRUNED.append(True)
        _prune(entry.parent.parent)


def _prune(root: Path) -> None:
    horizon = time.time() - CACHE_KEEP_SECONDS
    for old in root.glob("*/*.s.gz"):
        try:
            if old.stat().st_mtime < horizon:
                old.unlink()
        except OSError:
            pass


def main(argv: list[str]) -> int:
    if len(argv) == 4 and argv[1] == "--child":
        return child(argv[2], int(argv[3]))
    if len(argv) not in (3, 4):
        sys.stderr.write("usage: llvm.py FILE.ll ARCH [TIMEOUT]\n")
        return 2
    with open(argv[1], encoding="utf-8") as f:
        text = f.read()
    ok, out = compile_ll(text, argv[2], float(argv[3]) if len(argv) == 4 else DEFAULT_TIMEOUT)
    (sys.stdout if ok else sys.stderr).write(out if out.endswith("\n") else out + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
