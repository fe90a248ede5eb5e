"""Mode `ll` in both engines, byte for byte: rocke_py/engine/lower_ll.py vs rocke_c/src/lower_ll.c.

Each builder script (tests/data/ll_scripts/*.irs, the lowering corpus, and
tests/data/ir_scripts/*.irs, the IR core's) is built by each engine's builder and lowered for
the five archs and three flavors, by tests/tools/ll_script.py (Python) and
rocke_c/tests/lower_driver.c (C, built here under AddressSanitizer + UBSan); the outputs
(modules, refusal messages, crash markers) must be the same bytes. Then random scripts
(the IR core's generator, fixed seeds), the lowering under allocation failure
(rocke_c/tests/lower_oom.c), and coverage checks: every op lowers somewhere, every MMA row on
each of its arches, every refusal of lower_ll.py is reached.

xdist-safe: each worker builds its own drivers under tmp_path_factory; skipped without gcc."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
from pathlib import Path

import ll_script
import pytest
import script_runs
from cbuild import SAN_ENV
from layout import REPO
from script_runs import run_c, same

from rocke_py.engine import lower_ll_tables

LL_SCRIPTS = sorted((REPO / "tests" / "data" / "ll_scripts").glob("*.irs"))
IR_SCRIPTS = sorted((REPO / "tests" / "data" / "ir_scripts").glob("*.irs"))
SCRIPTS = LL_SCRIPTS + IR_SCRIPTS
N_RANDOM = 600


def run_py(text: str) -> bytes:
    return script_runs.run_py(ll_script.run, text)


@pytest.fixture(scope="session")
def c_corpus(lower_driver: Path) -> dict[str, bytes]:
    return dict(zip(map(str, SCRIPTS), run_c(lower_driver, SCRIPTS)))


@pytest.fixture(scope="session")
def py_corpus() -> dict[str, bytes]:
    return {str(p): run_py(p.read_bytes().decode("utf-8")) for p in SCRIPTS}


# ---- the fixed corpora ----


@pytest.mark.parametrize("path", SCRIPTS, ids=[f"{p.parent.name}/{p.stem}" for p in SCRIPTS])
def test_script_parity(path: Path, c_corpus: dict[str, bytes], py_corpus: dict[str, bytes]) -> None:
    py = py_corpus[str(path)]
    assert not py.startswith(b"script error"), py.decode()
    same(py, c_corpus[str(path)], path.name)


def modules(out: bytes) -> dict[str, str]:
    """(arch flavor) -> the module text, for the targets that lowered."""
    found: dict[str, str] = {}
    for part in out.decode().split("\n== ")[1:]:
        head, _, body = part.partition("\n")
        if body.startswith("target datalayout"):
            found[head] = body
    return found


def ll_corpus(py_corpus: dict[str, bytes]) -> dict[str, bytes]:
    return {k: v for k, v in py_corpus.items() if "/ll_scripts/" in k}


def script_commands(path: str) -> set[str]:
    """The builder commands a script uses (its statements' command words)."""
    found = set()
    for line in Path(path).read_text().splitlines():
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        found.add(words[2] if len(words) > 2 and words[1] == "=" else words[0])
    return found


BUILDER_COMMANDS = {
    "thread_id",
    "block_id",
    "lane_id",
    "readfirstlane",
    "make_buffer_rsrc",
    "buffer_load",
    "buffer_store",
    "global_atomic_fadd",
    "smem_alloc",
    "smem_load",
    "smem_store",
    "smem_addr",
    "ds_read_tr16_b64",
    "ds_read_tr16_b128",
    "async_buffer_load_lds",
    "s_waitcnt_vmcnt",
    "sync",
    "sync_lds_only",
    "extract",
    "insert",
    "from_elements",
    "concat",
    "mma",
    "sched_group_barrier",
    "sched_barrier",
    "s_setprio",
    "for_begin",
    "if_begin",
    "constant",
    "const_i32",
    "const_i1",
    "const_f32",
    "zeros",
    "add",
    "sub",
    "mul",
    "div",
    "mod",
    "min",
    "max",
    "and",
    "or",
    "cmp",
    "select",
    "fadd",
    "fmul",
    "fmax",
    "fmin",
    "fptrunc",
    "bitcast",
    "ret",
}


def test_every_op_lowers(py_corpus: dict[str, bytes]) -> None:
    """Every builder op (so every handler of lower_ll.py) is in a script of the lowering corpus
    that lowers without a refusal on some target."""
    used: set[str] = set()
    for path, out in ll_corpus(py_corpus).items():
        if modules(out):
            used |= script_commands(path)
    assert BUILDER_COMMANDS <= used, sorted(BUILDER_COMMANDS - used)


def test_every_mma_row_on_each_arch(py_corpus: dict[str, bytes]) -> None:
    for row in lower_ll_tables.MMA_ROWS:
        out = py_corpus[str(REPO / "tests" / "data" / "ll_scripts" / f"mma_{row.op_id}.irs")]
        lowered = {head.split()[0] for head in modules(out)}
        assert lowered == set(row.archs), (row.op_id, lowered)
        assert f"@llvm.amdgcn.{row.intrinsic}(" in out.decode()


def test_every_decl_row_is_printed(py_corpus: dict[str, bytes]) -> None:
    text = "".join(out.decode() for out in ll_corpus(py_corpus).values())
    for flavor in lower_ll_tables.FLAVORS:
        for row in lower_ll_tables.DECLS:
            assert lower_ll_tables.decl_text(row, flavor) + "\n" in text, (flavor.name, row[0])


# The refusals of lower_ll.py (each `fail(` message stem), reached by the corpora.
REFUSALS = [
    "unknown arch ",
    "unknown flavor ",
    "the kernel name has a character LLVM would need escaped",
    "no LLVM type for ",
    "a buffer access of ",
    "the f32 constant ",
    " is an LDS value that no tile.smem_alloc",
    " is used before it is defined",
    " needs an integer attr ",
    " does not fit in i32",
    " is not a placed LDS allocation",
    " claims align ",
    "the LDS pool of ",
    "unknown param attr ",
    "unknown addr_space on ",
    "a scalar param carries attrs: ",
    "a kernel param of type ",
    " must be an integer",
    "must be an integer or a pair",
    "unknown kernel attr ",
    "unknown scheduler_strategy",
    "cf.return must be the last op of the kernel",
    "scf.yield outside the end of an scf.for body",
    "no lowering for op ",
    "an f32 arith.constant needs a float value",
    "an integer arith.constant needs an integer value",
    "arith.constant of type ",
    "arith.constant_vec other than the zero vector",
    "arith.cmp with an unknown pred",
    "gpu.block_id dim ",
    "gpu.thread_id dim ",
    "tile.ds_read_tr16_b64 is not available on ",
    "tile.ds_read_tr16_b128 is not available on ",
    "tile.async_buffer_load_lds of ",
    "tile.async_buffer_load_lds aux ",
    "has no lowering",
    "is not available on ",
    " operand types",
    "does not fit in u16",
    "scf.for iv or iter_args",
    "scf.for iter_arg ",
    "scf.for carries a value of type ",
    "scf.for body must end with a matching scf.yield",
    "an unrolled scf.for needs constant bounds",
    "an unrolled scf.for needs a positive step",
    "an unrolled scf.for of ",
]


def test_every_refusal_is_reached(py_corpus: dict[str, bytes]) -> None:
    errors = [
        line
        for out in py_corpus.values()
        for line in out.decode().splitlines()
        if line.startswith("lower error: lower: ")
    ]
    missing = [stem for stem in REFUSALS if not any(stem in e for e in errors)]
    assert not missing, missing
    # the stems cover every fail( call of lower_ll.py
    source = (REPO / "rocke_py" / "engine" / "lower_ll.py").read_text()
    assert source.count("raise fail(") <= len(REFUSALS) + 6, "a new refusal: add it to REFUSALS and the corpus"
    assert any(out.count(b"lower crash") for out in py_corpus.values())


def test_flavors_differ_only_where_documented(py_corpus: dict[str, bytes]) -> None:
    """docs/lowering.md §8: the datalayout, make.buffer.rsrc, the zext and the capture spelling."""
    for out in ll_corpus(py_corpus).values():
        mods = modules(out)
        for arch in ll_script.ARCHS:
            texts = [mods.get(f"{arch} {fl}") for fl in ll_script.FLAVORS]
            if None in texts:
                continue
            norm = []
            for t in texts:
                lines = [
                    line
                    for line in t.splitlines()
                    if not line.startswith("target datalayout")
                    and " = zext " not in line
                    and "make.buffer.rsrc" not in line
                ]
                norm.append("\n".join(lines).replace("captures(none)", "nocapture"))
            assert norm[0] == norm[1] == norm[2]


# ---- random scripts (the IR core's generator) ----


def ir_core_generator():
    path = REPO / "tests" / "parity" / "test_ir_script_parity.py"
    spec = importlib.util.spec_from_file_location("_ir_core_parity_gen", path)
    if spec is None or spec.loader is None or not path.exists():
        pytest.skip("tests/parity/test_ir_script_parity.py is not available")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not hasattr(module, "random_script"):
        pytest.skip("the IR core's random_script generator is gone")
    return module.random_script


def test_random_scripts(lower_driver: Path, tmp_path: Path) -> None:
    random_script = ir_core_generator()
    paths = []
    for seed in range(N_RANDOM):
        p = tmp_path / f"r{seed}.irs"
        p.write_text(random_script(20261203 + seed))
        paths.append(p)
    for path, c in zip(paths, run_c(lower_driver, paths)):
        same(run_py(path.read_text()), c, f"random script {path.name}:\n{path.read_text()[:2000]}")


# ---- allocation failure ----


def test_lowering_under_allocation_failure(lower_oom: Path) -> None:
    proc = subprocess.run(
        [str(lower_oom), *map(str, LL_SCRIPTS)], capture_output=True, timeout=600, env={**os.environ, **SAN_ENV}
    )
    assert proc.returncode == 0 and not proc.stderr, (proc.stdout + proc.stderr).decode(errors="replace")[-4000:]
    runs = sum(int(m) for m in re.findall(rb": (\d+) failing runs ok", proc.stdout))
    assert runs > 500
