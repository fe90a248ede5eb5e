"""Seeded faults: which of a list of one-spot mistakes the test suite catches.

    python scripts/seeded_faults.py --rev REV [--only ID ...] [--json OUT] [--timeout S]
                                    [--baseline] [--keep] [-- PYTEST_ARGS]
    python scripts/seeded_faults.py --list

For each fault of FAULTS: `git archive REV` into a fresh temporary directory, the one edit applied
(its `old` text must occur exactly once in its file, or the run stops), the copy made a git
repository with that state committed (the tests that copy a checkout need one), then the suite
run there with this interpreter:

    python -m pytest -n auto -q -x -p no:cacheprovider -rfE
        --ignore=tests/repository/test_seeded_fault_runner.py [PYTEST_ARGS]

with PYTHONPATH = the copy, so that the copy's rocke_py is imported and not the editable install
(checked first: the run stops if `import rocke_py` resolves elsewhere). The C engine is built from
the copy's sources into the content-keyed cache, so a C fault gets its own build. pytest's exit 1
is "caught" (a test failed; so is exit 2 when it is xdist's "Interrupted: stopping after N
failures" with a failed test), 0 "not caught", anything else (a usage or collection error, an
interrupt, the timeout) "error". Each row gives the first failing test and the seconds until the
run stopped; the JSON (--json) is rewritten after every fault. --baseline first runs the copy with
no fault: a copy that fails by itself would make every fault look caught."""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WHERE = ("py-engine", "c-engine", "harness", "numerics", "check-llvm")
DEFAULT_TIMEOUT = 1800.0
#: where each kind of fault is likeliest caught: those tests run first (scripts/seeded_first.py),
#: so that -x stops a caught fault early; the whole suite still runs when nothing fails
#: (in-process comparisons of both engines before the modules that first build sanitized programs)
ENGINE_FIRST = (
    "tests/parity/test_config_parity.py",
    "tests/parity/test_verdict_per_mode.py",
    "tests/engines/test_config_parser.py",
    "tests/engines/test_spec_semantics.py",
    "tests/engines/",
    "tests/parity/",
)
FIRST_BY_WHERE = {
    "py-engine": ENGINE_FIRST,
    "c-engine": ENGINE_FIRST,
    "harness": ("tests/harness/",),
    "numerics": ("tests/numerics/", "tests/exec/"),
    "check-llvm": ("tests/engines/test_check_llvm.py", "tests/engines/test_lower_ll.py"),
}
#: this script's own tests are left out: in a copy with a fault applied they fail by design (the
#: fault's text is no longer there), and would take every fault for caught
PYTEST = (
    "-m",
    "pytest",
    "-n",
    "auto",
    "-q",
    "-x",
    "-p",
    "no:cacheprovider",
    "-rfE",
    "--ignore=tests/repository/test_seeded_fault_runner.py",
    "-p",
    "seeded_first",
)


@dataclass(frozen=True)
class Fault:
    id: str
    where: str  # one of WHERE
    path: str  # relative to the repository root
    old: str  # occurs exactly once in path
    new: str
    why: str  # the mistake, and what should notice it


FAULTS: list[Fault] = [
    # --- the Python engine
    Fault(
        "py-config-int-digits",
        "py-engine",
        "rocke_py/engine/config.py",
        "    if len(digits) > MAX_INT_DIGITS:\n",
        "    if len(digits) >= MAX_INT_DIGITS:\n",
        "the parser's digit cap off by one: a 10-digit int32 such as 2147483647 reads as out of range "
        "(subtle: only where the fast path for a simple line does not apply)",
    ),
    Fault(
        "py-config-duplicate-key",
        "py-engine",
        "rocke_py/engine/config.py",
        "    first = state.key_line.get((state.table, key))\n",
        "    first = state.key_line.get(key)\n",
        "the duplicate-key lookup forgets the table: a key set twice in a table is never refused",
    ),
    Fault(
        "py-validate-block-size",
        "py-engine",
        "rocke_py/engine/validate.py",
        "    if s.block_size > 1024:\n",
        "    if s.block_size > 2048:\n",
        "the block-size rule's bound doubled: a 2048-thread block validates in Python only",
    ),
    Fault(
        "py-build-tap-pad-sign",
        "py-engine",
        "rocke_py/engine/build_common.py",
        "    return add_c(kc, s, -pad)\n",
        "    return add_c(kc, s, pad)\n",
        "the filter tap adds the padding instead of subtracting it (wrong input offsets when pad > 0)",
    ),
    Fault(
        "py-print-ir-attr-order",
        "py-engine",
        "rocke_py/engine/print_ir.py",
        "    for k, v in sorted(attrs.items()) if len(attrs) > 1 else attrs.items():\n",
        "    for k, v in attrs.items():\n",
        "the IR printer writes attributes in insertion order, not sorted by key",
    ),
    Fault(
        "py-lower-lds-pool-round",
        "py-engine",
        "rocke_py/engine/lower_ll.py",
        "    return LdsPlan(allocs, align_up(end, 16))\n",
        "    return LdsPlan(allocs, end)\n",
        "the LDS pool's size is not rounded up to 16 bytes in the ll lowering",
    ),
    # --- the C engine
    Fault(
        "c-config-int-max",
        "c-engine",
        "rocke_c/src/config.c",
        "    if (v < RK_INT_MIN || v > RK_INT_MAX)\n",
        "    if (v < RK_INT_MIN || v >= RK_INT_MAX)\n",
        "the C parser's int32 range off by one: INT_MAX itself is rejected",
    ),
    Fault(
        "c-validate-split-k-vector-a",
        "c-engine",
        "rocke_c/src/validate.c",
        "    if (s->split_k > 1 && s->vector_size_a.set && s->vector_size_a.v > 1) {\n",
        "    if (s->split_k > 1 && s->vector_size_a.set && s->vector_size_a.v > 4) {\n",
        "the C rule against vector_size_a with split-K dgrad lets 2 and 4 through",
    ),
    Fault(
        "c-build-width-pad",
        "c-engine",
        "rocke_c/src/build_common.c",
        "    wi = rk_tap(kc, wo, p->sW, x, p->dW, p->pW);\n",
        "    wi = rk_tap(kc, wo, p->sW, x, p->dW, p->pH);\n",
        "a copy-paste slip: the width tap uses the height padding (differs only when pH != pW)",
    ),
    Fault(
        "c-print-float-exponent",
        "c-engine",
        "rocke_c/src/print_ir.c",
        "    if (decpt <= -4 || decpt > 16) {\n",
        "    if (decpt < -4 || decpt > 16) {\n",
        "the C float printer leaves exponent form one decade late: 1e-05 prints as 0.00001, not repr's",
    ),
    Fault(
        "c-lower-lds-align",
        "c-engine",
        "rocke_c/src/lower_ll.c",
        '        rk_buf_puts(out, " x i8] poison, align 16\\n\\n");\n',
        '        rk_buf_puts(out, " x i8] poison, align 8\\n\\n");\n',
        "the C lowering declares the LDS pool global with align 8",
    ),
    Fault(
        "c-lower-leak-signature",
        "c-engine",
        "rocke_c/src/lower_ll.c",
        "    rk_buf_free(&signature);\n",
        "",
        "the ll lowering no longer frees its signature buffer: right output, only the leak sanitizer "
        "sees it (an off-by-one heap write is no such fault here: glibc's own checks may abort)",
    ),
    # --- the harness
    Fault(
        "harness-classify-reject-code",
        "harness",
        "rocke_py/parity/judge/compare.py",
        "    if expect.reject_code == py.code:\n",
        "    if expect.reject_code is not None:\n",
        "both engines rejecting with another code than the expected one passes as BOTH_REJECTED",
    ),
    Fault(
        "harness-golden-drift-size-only",
        "harness",
        "rocke_py/parity/judge/verdict.py",
        "        elif now.emits and (entry.sha256 != now.sha256 or entry.bytes != now.bytes):\n",
        "        elif now.emits and entry.bytes != now.bytes:\n",
        "the golden check compares sizes only: a drift that keeps the byte count passes",
    ),
    Fault(
        "harness-gap-ignores-evidence",
        "harness",
        "rocke_py/parity/judge/known_gaps.py",
        "        return status is self.status and dict(self.evidence) == dict(evidence)\n",
        "        return status is self.status\n",
        "a known gap matches on its status alone: a changed failure stays hidden behind the entry",
    ),
    Fault(
        "harness-junit-gap-not-skipped",
        "harness",
        "rocke_py/parity/report/report.py",
        '        if rec["status"] == Status.KNOWN_GAP.value:\n',
        '        if rec["status"] == Status.KNOWN_GAP.value and not rec["passed"]:\n',
        "JUnit shows a known gap as a plain pass, not as skipped with its reason",
    ),
    Fault(
        "harness-deadline-from-post",
        "harness",
        "rocke_py/parity/run/runner.py",
        "        return max(self.posted, self.started.value) + timeout\n",
        "        return self.posted + timeout\n",
        "a job's timeout counts from its batch's posting, not its own start: a job late in a batch "
        "is killed early (subtle: needs a slow batch)",
    ),
    Fault(
        "harness-canon-no-restart",
        "harness",
        "rocke_py/parity/judge/canon.py",
        '        if line.startswith("define "):\n            names = {}\n',
        "",
        "canonical renumbering does not restart at each function",
    ),
    Fault(
        "harness-diff-first-stage",
        "harness",
        "rocke_py/parity/commands/diff.py",
        '            return stage, seen + [f"{stage} differs: py {py.short()}; c {c.short()}"]\n',
        '            return mode, seen + [f"{stage} differs: py {py.short()}; c {c.short()}"]\n',
        "diff names the job's own mode as the first divergent stage, not the earlier stage that differs",
    ),
    # --- the executor and numerics
    Fault(
        "numerics-ignores-hazards",
        "numerics",
        "rocke_py/numerics/check.py",
        "            and self.unwritten == 0\n            and not self.hazards\n",
        "            and self.unwritten == 0\n",
        "a kernel with a memory hazard (a missing barrier, a weak wait) passes the numerics check",
    ),
    Fault(
        "exec-mfma16-c-rows",
        "numerics",
        "rocke_py/exec/mma.py",
        "        row = 4 * (lane // 16) + r\n",
        "        row = (lane // 16) + 4 * r\n",
        "the executor's 16x16 MFMA accumulator layout puts rows in the wrong lane slots",
    ),
    # --- check-llvm
    Fault(
        "llvm-unknown-intrinsic",
        "check-llvm",
        "rocke_py/check/llvm.py",
        '    if "llvm.amdgcn." in p.stdout:\n',
        '    if "llvm.amdgcn.unknown." in p.stdout:\n',
        "assembly calling an unknown llvm.amdgcn.* intrinsic (an undefined symbol) counts as compiled",
    ),
    Fault(
        "llvm-no-verify",
        "check-llvm",
        "rocke_py/check/llvm.py",
        "        mod.verify()\n",
        "",
        "check-llvm parses but no longer verifies the module (subtle: codegen still rejects much)",
    ),
]


class SeededFaultError(Exception):
    pass


def apply_fault(root: Path, fault: Fault) -> None:
    """The fault's one edit in the tree at root; SeededFaultError unless `old` occurs exactly once."""
    path = root / fault.path
    text = path.read_text(encoding="utf-8")
    n = text.count(fault.old)
    if n != 1:
        raise SeededFaultError(f"{fault.id}: the text to replace occurs {n} times in {fault.path}, not once")
    path.write_text(text.replace(fault.old, fault.new), encoding="utf-8")


def resolve(rev: str) -> str:
    proc = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--verify", f"{rev}^{{commit}}"], capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise SeededFaultError(f"not a commit: {rev}: {proc.stderr.strip()}")
    return proc.stdout.strip()


def make_copy(commit: str, dest: Path, fault: Fault | None) -> None:
    """`git archive commit` extracted at dest, the fault applied, and that state committed."""
    data = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", commit], capture_output=True, check=True)
    with tarfile.open(fileobj=io.BytesIO(data.stdout)) as tar:
        tar.extractall(dest, filter="tar")
    if fault is not None:
        apply_fault(dest, fault)
    ident = ["-c", "user.name=seeded", "-c", "user.email=seeded@example.invalid", "-c", "commit.gpgsign=false"]
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], [*ident, "commit", "-q", "-m", "copy"]):
        subprocess.run(["git", *args], cwd=dest, check=True, capture_output=True)


def copy_env(copy: Path, first: tuple[str, ...] = ()) -> dict[str, str]:
    """The copy's rocke_py first on the path, then this script's plugin (seeded_first.py)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join((str(copy), str(Path(__file__).resolve().parent)))
    env["ROCKE_SEEDED_FIRST"] = os.pathsep.join(first)
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_XDIST_WORKER", None)  # when run from inside a test worker
    return env


def check_import(copy: Path, env: dict[str, str]) -> None:
    """Stops unless the copy's rocke_py is the one a run imports (not the editable install)."""
    proc = subprocess.run(
        [sys.executable, "-c", "import rocke_py; print(rocke_py.__file__)"],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
    )
    where = Path(proc.stdout.strip()).resolve() if proc.returncode == 0 else None
    if where is None or not where.is_relative_to(copy.resolve()):
        raise SeededFaultError(
            f"import rocke_py resolves to {where or proc.stderr.strip()!s}, not into the copy {copy}"
        )


#: pytest-xdist ends a run that -x stopped with exit 2 (Interrupted), not 1: a failure all the same
STOPPED = "Interrupted: stopping after"
FAILED_LINE = re.compile(r"^(FAILED|ERROR) (\S+)")


def first_failure(output: str) -> str:
    """The test id of pytest's first FAILED (else ERROR) short-summary line, or ""."""
    found = {}
    for line in output.splitlines():
        m = FAILED_LINE.match(line)
        if m and m[1] not in found:
            found[m[1]] = m[2]
    return found.get("FAILED") or found.get("ERROR") or ""


def verdict(rc: int | None, output: str) -> str:
    """ "caught", "not caught" or "error", from pytest's exit status (None: timed out) and output."""
    if rc == 1 or (rc == 2 and first_failure(output) and STOPPED in output):
        return "caught"
    return "not caught" if rc == 0 else "error"


@dataclass
class Outcome:
    id: str
    where: str
    status: str  # "caught", "not caught", "error"
    exit: int | None  # pytest's exit status; None on a timeout
    first_failure: str
    seconds: float
    note: str = ""


def run_pytest(copy: Path, env: dict[str, str], args: list[str], timeout: float) -> tuple[int | None, str, float]:
    """(exit status or None on timeout, combined output, seconds)."""
    start = time.monotonic()
    with tempfile.TemporaryFile("w+b") as log:
        proc = subprocess.Popen(
            [sys.executable, *PYTEST, *args],
            cwd=copy,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # the whole group can be killed on a timeout
        )
        try:
            rc: int | None = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            rc = None
        except BaseException:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise
        if rc is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        else:
            try:  # workers and engines left behind by -x
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        seconds = time.monotonic() - start
        log.seek(0)
        return rc, log.read().decode(errors="replace"), seconds


def first_tests(fault: Fault | None, earlier: dict[str, str]) -> tuple[str, ...]:
    """The test file an earlier run saw fail first (--first-from), then the fault's kind's."""
    if fault is None:
        return ()
    seen = earlier.get(fault.id, "").split("::")[0]
    return ((seen,) if seen else ()) + FIRST_BY_WHERE.get(fault.where, ())


def earlier_failures(path: Path | None) -> dict[str, str]:
    """fault id -> the first failing test of an earlier run's JSON (--first-from)."""
    if path is None:
        return {}
    doc = json.loads(path.read_text(encoding="utf-8"))
    return {r["id"]: r["first_failure"] for r in doc["results"] if r.get("first_failure")}


def run_one(
    commit: str, fault: Fault | None, args: list[str], timeout: float, keep: bool, first: tuple[str, ...] = ()
) -> Outcome:
    fid, where = (fault.id, fault.where) if fault else ("baseline", "-")
    copy = Path(tempfile.mkdtemp(prefix=f"seeded-{fid}-"))
    try:
        make_copy(commit, copy, fault)
        env = copy_env(copy, first)
        check_import(copy, env)
        rc, output, seconds = run_pytest(copy, env, args, timeout)
    finally:
        if keep:
            print(f"  (kept {copy})", flush=True)
        else:
            shutil.rmtree(copy, ignore_errors=True)
    failing = first_failure(output)
    status = verdict(rc, output)
    if status != "error":
        return Outcome(fid, where, status, rc, failing, round(seconds, 1))
    tail = " | ".join(output.strip().splitlines()[-3:])
    note = f"timeout after {timeout:g} s" if rc is None else f"pytest exit {rc}: {tail[-300:]}"
    return Outcome(fid, where, "error", rc, failing, round(seconds, 1), note)


def row(o: Outcome) -> str:
    return f"{o.id:34} {o.where:10} {o.status:10} {o.seconds:8.1f}  {o.first_failure or o.note}"


def summary(outcomes: list[Outcome]) -> str:
    parts = []
    for where in WHERE:
        mine = [o for o in outcomes if o.where == where]
        if mine:
            caught = sum(o.status == "caught" for o in mine)
            missed = sum(o.status == "not caught" for o in mine)
            errors = len(mine) - caught - missed
            parts.append(f"{where} {caught} caught, {missed} not caught" + (f", {errors} error" if errors else ""))
    return "; ".join(parts)


def write_json(path: Path, commit: str, rev: str, args: list[str], outcomes: list[Outcome]) -> None:
    doc = {
        "rev": rev,
        "commit": commit,
        "pytest": [*PYTEST[1:], *args],
        "faults": {f.id: asdict(f) for f in FAULTS},
        "results": [asdict(o) for o in outcomes],
    }
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")


def main(argv: list[str]) -> int:
    if "--" in argv:
        cut = argv.index("--")
        argv, pytest_args = argv[:cut], argv[cut + 1 :]
    else:
        pytest_args = []
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rev", help="the commit to seed the faults into")
    ap.add_argument("--only", nargs="+", metavar="ID", help="run these faults only")
    ap.add_argument("--json", type=Path, metavar="OUT", help="write the results as JSON")
    ap.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per pytest run")
    ap.add_argument("--baseline", action="store_true", help="first run the copy with no fault")
    ap.add_argument("--keep", action="store_true", help="keep the copies")
    ap.add_argument("--list", action="store_true", help="print the faults and exit")
    ap.add_argument(
        "--first-from",
        type=Path,
        metavar="JSON",
        help="an earlier run's --json: each fault's first failing test there runs first",
    )
    opts = ap.parse_args(argv)

    if opts.list:
        for f in FAULTS:
            print(f"{f.id:34} {f.where:10} {f.path}\n    {f.why}")
        return 0
    if not opts.rev:
        ap.error("--rev is required (or --list)")
    by_id = {f.id: f for f in FAULTS}
    unknown = [i for i in opts.only or () if i not in by_id]
    if unknown:
        ap.error(f"unknown fault id(s): {', '.join(unknown)}")
    chosen: list[Fault | None] = [by_id[i] for i in opts.only] if opts.only else list(FAULTS)
    if opts.baseline:
        chosen.insert(0, None)
    try:
        commit = resolve(opts.rev)
    except SeededFaultError as e:
        print(f"seeded_faults: {e}", file=sys.stderr)
        return 2

    print(f"{'fault':34} {'where':10} {'result':10} {'seconds':>8}  first failing test", flush=True)
    outcomes: list[Outcome] = []
    earlier = earlier_failures(opts.first_from)
    for fault in chosen:
        try:
            outcome = run_one(commit, fault, pytest_args, opts.timeout, opts.keep, first_tests(fault, earlier))
        except SeededFaultError as e:
            print(f"seeded_faults: {e}", file=sys.stderr)
            return 2
        outcomes.append(outcome)
        print(row(outcome), flush=True)
        if opts.json:
            write_json(opts.json, commit, opts.rev, pytest_args, outcomes)
    print(summary([o for o in outcomes if o.id != "baseline"]), flush=True)
    base = next((o for o in outcomes if o.id == "baseline"), None)
    if base is not None and base.status != "not caught":
        print("the copy without a fault does not pass: the faults' results mean nothing", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
