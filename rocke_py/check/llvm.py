"""Compile emitted `.ll` text with a real LLVM (llvmlite 0.50, LLVM 22.1) in a child process.

AMDGPU codegen failures (`Cannot select`, `Do not know how to expand`, assertions) are LLVM
fatal errors that abort the process, so parse, verify and codegen all run in a child
(docs/reference/toolchain.md §3, §10): an abort becomes a failed result, never a dead test
worker or harness. This file runs as that child too (`python llvm.py --child ARCH OPT`, IR on
stdin); it imports nothing from rocke_py, so the child needs only llvmlite.

compile_ll(text, arch) -> (True, assembly) or (False, reason)."""

from __future__ import annotations

import subprocess
import sys

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
    """Parse, verify and compile `text` for `arch` (`cpu=`) in a child process.

    (True, asm) when it compiles to assembly for that CPU with no unresolved llvm.amdgcn.*
    call; otherwise (False, reason): invalid IR, a codegen abort, an unknown CPU, a timeout."""
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
