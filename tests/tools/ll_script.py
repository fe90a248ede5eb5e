"""Builder scripts lowered to LLVM IR: the Python twin of rocke_c/tests/lower_driver.c.

A script (the format of tests/tools/ir_script.py) is run through the Python builder, then
its kernel is lowered (rocke_py/engine/lower_ll.py) for every arch and flavor;
tests/parity/test_ll_parity.py compares the output with the C driver's byte for byte. Output:

    script error: line N: <what>\\n      a malformed script
    error: <builder failure>\\n          the builder failed: nothing is lowered
    verify: ok|fail\\n                   the verdict (its messages are tests/parity/test_ir_script_parity.py's)
    for each arch and flavor: "== <arch> <flavor>\\n" then the module, or
    "lower error: <EngineFailure message>\\n", or "lower crash\\n" (any other exception:
    Python crashes on the malformed kernel).

A line "# lower-targets: ARCH:FLAVOR ..." replaces the 15 targets (to reach the checks of an
unknown arch or flavor). The kernel is lowered even when it does not verify, to reach the
lowering's own checks.

    python3 tests/tools/ll_script.py SCRIPT...       prints each script's output
    python3 tests/tools/ll_script.py --time N SCRIPT  times N lowerings (gfx950 llvm22)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from rocke_py.facts import ARCHS, FLAVORS

ROOT = Path(__file__).resolve().parents[2]
for p in (str(ROOT), str(ROOT / "tests" / "tools")):
    if p not in sys.path:
        sys.path.insert(0, p)

from ir_script import build_script, run_scripts  # noqa: E402

from rocke_py.engine.lower_ll import lower_kernel  # noqa: E402
from rocke_py.engine.result import EngineFailure  # noqa: E402
from rocke_py.engine.verify import verify_kernel  # noqa: E402


def lower_one(kernel, arch: str, flavor: str) -> str:
    try:
        return lower_kernel(kernel, arch, flavor)
    except EngineFailure as e:
        return f"lower error: {e}\n"
    except Exception:  # noqa: BLE001 - Python's own crash on a malformed kernel
        return "lower crash\n"


def run(text: str) -> str:
    script, head = build_script(text)
    if head:
        return head
    assert script.b is not None
    kernel = script.b.kernel
    bad = verify_kernel(kernel)
    out = ["verify: fail\n" if bad else "verify: ok\n"]
    for arch, flavor in targets(text):
        out.append(f"== {arch} {flavor}\n")
        out.append(lower_one(kernel, arch, flavor))
    return "".join(out)


TARGETS_TAG = "# lower-targets:"


def targets(text: str) -> list[tuple[str, str]]:
    """The 15 (arch, flavor) pairs, or those of the first "# lower-targets:" line."""
    for line in text.split("\n"):
        if line.startswith(TARGETS_TAG):
            pairs = []
            for word in line[len(TARGETS_TAG) :].split():
                arch, _, flavor = word.partition(":")
                pairs.append((arch, flavor))
            return pairs
    return [(arch, flavor) for arch in ARCHS for flavor in FLAVORS]


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[0] == "--time":
        script, head = build_script(Path(argv[2]).read_bytes().decode("utf-8"))
        if head:
            sys.stdout.write(head)
            return 1
        n = int(argv[1])
        t0 = time.perf_counter()
        text = ""
        for _ in range(n):
            text = lower_kernel(script.b.kernel, "gfx950", "llvm22")
        ms = (time.perf_counter() - t0) * 1000 / max(n, 1)
        print(f"{n} lowerings, {len(text.encode())} bytes each, {ms:.3f} ms per lowering")
        return 0
    return run_scripts(argv, run)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
