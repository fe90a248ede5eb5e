"""rocke-emit after `pip install .`: the C engine as a program, through the cffi bridge.

The same command-line contract as the CMake binary (rocke_c/cli/rocke-emit.c), which stays for
sanitizer and valgrind runs:

    rocke-emit CONFIG [--mode spec|ir|ll] [--flavor llvm20|llvm22|llvm23] [-o FILE]

Exit 0 on emit (the text on stdout or in FILE); 1 on rejection, with "REJECTED <CODE>" and then
the message on stderr; 2 on a usage error (an unknown option, mode or flavor), an unreadable file
or an engine failure. CONFIG "-" reads standard input. At most the engine's config limit + 1 bytes
are read, whatever CONFIG is (a file, a FIFO, a device), so an over-limit input is rejected as the
harness rejects it."""

from __future__ import annotations

import argparse
import os
import sys
from typing import BinaryIO, Optional, Sequence

from rocke_py.engine.emit import MAX_CONFIG_BYTES
from rocke_py.facts import FLAVORS, MODES

READ_LIMIT = MAX_CONFIG_BYTES + 1
USAGE = "rocke-emit CONFIG [--mode spec|ir|ll] [--flavor llvm20|llvm22|llvm23] [-o FILE]"


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="rocke-emit", usage=USAGE, description="The C engine as a program.")
    parser.add_argument("config", metavar="CONFIG", help='a parity config file, or "-" for standard input')
    # the choices are the contract's: a mistyped one is a usage error (exit 2), not a rejection
    parser.add_argument("--mode", default="ll", choices=MODES, help="spec, ir or ll (default ll)")
    parser.add_argument("--flavor", default="llvm22", choices=FLAVORS, help="llvm20, llvm22 or llvm23 (default llvm22)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the text here instead of stdout")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    if "--version" in argv:  # before CONFIG is required
        print(version_line())
        sys.exit(0)
    return parser.parse_args(argv)


def version_line() -> str:
    from rocke_py.parity.run.version import build_id, package_version

    return f"rocke-emit {package_version()} (c engine {build_id('rocke_py.cbridge:emit')}, through the bridge)"


def read_bounded(stream: BinaryIO) -> bytes:
    """At most READ_LIMIT bytes: the engine sees an over-limit input as over the limit, and never more."""
    chunks: list[bytes] = []
    left = READ_LIMIT
    while left > 0:
        chunk = stream.read(min(left, 1 << 16))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_config(path: str) -> bytes:
    if path == "-":
        return read_bounded(sys.stdin.buffer)
    with open(path, "rb", buffering=0) as f:
        return read_bounded(f)  # type: ignore[arg-type]


def write_text(path: Optional[str], text: str) -> None:
    data = text.encode("utf-8")
    if path is None:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    with open(path, "wb") as f:
        f.write(data)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        from rocke_py import cbridge
        from rocke_py.engine.result import EngineFailure, Rejected
    except ImportError as e:  # the stale-build guard, or no extension: a setup error
        print(f"rocke-emit: {e}", file=sys.stderr)
        return 2
    try:
        config = read_config(args.config)
    except OSError as e:
        reason = f": {os.strerror(e.errno)}" if e.errno else ""
        print(f"rocke-emit: cannot read {args.config}{reason}", file=sys.stderr)
        return 2
    try:
        result = cbridge.emit(config, args.mode, args.flavor)
    except EngineFailure as e:
        print(f"rocke-emit: engine failure {e}", file=sys.stderr)
        return 2
    if isinstance(result, Rejected):
        print(f"REJECTED {result.code}\n{result.message}", file=sys.stderr)
        return 1
    try:
        write_text(args.output, result.text)
    except OSError:
        print("rocke-emit: cannot write output", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
