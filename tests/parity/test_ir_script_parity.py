"""The kernel-IR core of both engines, byte for byte: builder, `rocke.ir v1` printer, verifier.

Each builder script (tests/data/ir_scripts/*.irs; format in tests/tools/ir_script.py) runs
through the Python engine (tests/tools/ir_script.py) and through the C engine
(rocke_c/tests/ir_driver.c, built here under AddressSanitizer + UBSan); the printed IR and
the verifier verdict must be the same bytes. Then a few hundred random scripts (fixed seed)
do the same. xdist-safe: each worker builds its own driver under tmp_path_factory."""

from __future__ import annotations

import copy
import random
import re
from pathlib import Path
from typing import Optional

import ir_script
import pytest
import script_runs
from layout import REPO
from script_runs import run_c, same

from rocke_py.engine import verify
from rocke_py.engine.ops import OPS

SCRIPTS = sorted((REPO / "tests" / "data" / "ir_scripts").glob("*.irs"))
N_RANDOM = 400


# ---- the two engines (the C one: the ir_driver fixture, tests/conftest.py) ----


def run_py(text: str) -> bytes:
    return script_runs.run_py(ir_script.run, text)


@pytest.fixture(scope="session")
def c_corpus(ir_driver: Path) -> dict[str, bytes]:
    return dict(zip((p.stem for p in SCRIPTS), run_c(ir_driver, SCRIPTS)))


@pytest.fixture(scope="session")
def py_corpus() -> dict[str, bytes]:
    return {p.stem: run_py(p.read_bytes().decode("utf-8")) for p in SCRIPTS}


# ---- the fixed corpus ----


@pytest.mark.parametrize("path", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_script_parity(path: Path, c_corpus: dict[str, bytes], py_corpus: dict[str, bytes]) -> None:
    py = py_corpus[path.stem]
    assert not py.startswith(b"script error"), py.decode()
    same(py, c_corpus[path.stem], path.name)


def corpus_verdicts(py_corpus: dict[str, bytes]) -> list[str]:
    return [out.decode().rstrip("\n").rsplit("\n", 1)[-1] for out in py_corpus.values()]


def test_corpus_covers_every_op(py_corpus: dict[str, bytes]) -> None:
    """Every op of docs/ir.md §4 is printed by some script, and passes the verifier there."""
    ops = {info.name for info in OPS}
    text = py_corpus["all_ops"].decode()
    assert text.endswith("verify: ok\n")
    printed = set(re.findall(r"(?:= |^\s+)([a-z]+\.[a-z_0-9]+) \(", text, re.M))
    assert ops <= printed, sorted(ops - printed)


# The verifier's rules (verify.py), as the stem of each failure message.
RULES = [
    "takes {} operands and gives {} results",
    "needs attr",
    "arith.constant of type",
    "arith.constant value has the wrong tag",
    "arith.constant_vec needs a vec type",
    " on ",
    "arith.cmp needs",
    "arith.select types",
    "arith.fptrunc is",
    "arith.bitcast widths",
    "gives i32",
    "gpu.block_id dim",
    "gpu.readfirstlane is i32",
    "tile.make_buffer_rsrc(ptr, i32)",
    "tile.buffer_load(rsrc, i32)",
    "tile.buffer_store(rsrc, i32",
    "tile.global_atomic_fadd(ptr<T>",
    "tile.smem_alloc type",
    "align must be a power of two",
    "tile.smem_load(smem<T>",
    "tile.smem_store(smem<T>",
    "tile.smem_addr(smem)",
    "tile.ds_read_tr16_b64(smem",
    "tile.ds_read_tr16_b128(smem",
    "tile.async_buffer_load_lds(rsrc",
    "vector.extract element type or index",
    "vector.insert types or index",
    "vector.from_elements takes operands",
    "vector.from_elements types",
    "vector.concat types",
    "tile.mma: unknown op_id",
    "operand types",
    "is defined twice",
    "has an invalid type",
    "scf.for needs lb, ub, step",
    "scf.for bounds and iv must be i32",
    "scf.for iter_args, inits and results",
    "scf.for iter_arg, init and result types differ",
    "scf.for body must end with scf.yield",
    "scf.yield does not match the iter_args",
    "scf.if takes one i1 condition",
    "scf.if needs a @then region",
    "is not visible",
    "is used as",
    "scf.yield outside the end of a for body",
    "scf.yield num",
    "has no regions",
    "unknown op",
    "param: ",
    "the kernel region must be @entry",
    "the kernel must end with cf.return",
]


def test_corpus_covers_every_verifier_rule(py_corpus: dict[str, bytes]) -> None:
    verdicts = corpus_verdicts(py_corpus)
    arity = re.compile(r"takes \d+ operands and gives \d+ results")
    missing = [
        rule
        for rule in RULES
        if not any((arity.search(v) if rule.startswith("takes") else rule in v) for v in verdicts)
    ]
    assert not missing, missing
    # every op kind of CHECKS fails at least once in the corpus
    failing = {re.findall(r"op \d+ \(([^)]+)\): ", v)[-1] for v in verdicts if re.search(r"op \d+ \(", v)}
    checked = {OPS[code].name for code in verify.CHECKS}
    assert checked <= failing, sorted(checked - failing)


# ---- random scripts ----

SCALARS = ["i1", "i32", "i64", "f16", "bf16", "f32"]
ELEMS = SCALARS + ["i8"]
PREDS = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "lt"]
OP_IDS = [
    "mfma_f32_32x32x8_f16",
    "mfma_f32_16x16x16_f16",
    "mfma_f32_16x16x4_f32",
    "mfma_f32_32x32x16_bf16",
    "wmma_f32_16x16x16_f16",
    "wmma_gfx12_f32_16x16x16_bf16",
    "wmma_gfx1250_f32_16x16x4_f32",
    "wmma_gfx1250_f32_16x16x32_f16",
    "mfma_f32_8x8x8_f16",
    "mfma_f32_16x16x16_f8",
]


INVALID_TYPES = ["i8", "u32", "vec<f32x0>", "vec<i8x4>", "ptr<f16,lds>", "ptr<i8,global>", "smem<i8, [4x4]>"]


def random_type(rng: random.Random, valid: float = 0.95) -> str:
    if rng.random() > valid:
        return rng.choice(INVALID_TYPES)
    r = rng.random()
    if r < 0.45:
        return rng.choice(["i32", "i32", "f32", "i1", "i64", "f16", "bf16"])
    if r >= 0.95:
        return "rsrc"
    elem = rng.choice(SCALARS)  # a vector's, pointer's or LDS tile's element
    if r < 0.75:
        return f"vec<{elem}x{rng.choice([1, 2, 2, 4, 4, 8, 16])}>"
    if r < 0.85:
        return f"ptr<{elem},global>"
    return f"smem<{elem}, [{rng.choice([1, 4, 64])}x{rng.choice([4, 32])}]>"


def random_string(rng: random.Random) -> str:
    return "".join(
        rng.choice('ab_Z9"\\ %<>,') if rng.random() < 0.3 else rng.choice("xyz") for _ in range(rng.randint(0, 8))
    )


def escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")


def random_float(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.4:
        return f"{rng.randint(-(1 << 53), 1 << 53)}.0" if rng.random() < 0.5 else f"{rng.randint(-100, 100)}.0"
    if r < 0.5:
        return rng.choice(["inf", "-inf", "nan", "0.0", "-0.0", "1e16", "1e-5", "5e-324"])
    x = rng.uniform(-1, 1) * 10.0 ** rng.randint(-30, 30)
    return repr(x).replace("e+", "e")


def random_tagged(rng: random.Random, depth: int = 0, scalar: bool = False) -> str:
    r = rng.random()
    if r < 0.2:
        return f"b:{rng.choice(['true', 'false'])}"
    if r < 0.45:
        return f"i:{rng.choice([0, 1, 2, 3, 4, 16, -1, rng.randint(-(1 << 63), (1 << 63) - 1)])}"
    if r < 0.6:
        return f"f:{random_float(rng)}"
    if r < 0.8 or scalar or depth > 2:
        return f's:"{escape(random_string(rng))}"'
    if r < 0.9:
        return "l:[ " + ", ".join(random_tagged(rng, depth + 1) for _ in range(rng.randint(0, 3))) + " ]"
    return random_map(rng, depth + 1)


def random_key(rng: random.Random) -> str:
    return rng.choice(["a", "b", "B", "Z", "_x", "a1", "a_", "noalias", "readonly", "k.x", "max_workgroup_size"])


def random_map(rng: random.Random, depth: int = 0) -> str:
    items = [f"{random_key(rng)} = {random_tagged(rng, depth)}" for _ in range(rng.randint(0, 4))]
    return "{ " + ", ".join(items) + " }"


class Gen:
    """A random builder script: mostly well-typed calls on visible values, with some wrong."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.clean = self.rng.random() < 0.4  # keep only steps after which the kernel verifies
        self.lines: list[str] = []
        self.n = 0
        self.frames: list[list[tuple[str, str]]] = [[]]  # visible (var, type) per open region
        self.dead: list[tuple[str, str]] = []  # values of closed regions
        self.open: list[tuple[str, str, list[str]]] = []  # ("for", var, carried types) / ("if", var, [])

    def var(self) -> str:
        self.n += 1
        return f"v{self.n}"

    def emit(self, line: str, result_type: Optional[str] = None) -> None:
        if result_type is None:
            self.lines.append(line)
            return
        v = self.var()
        self.lines.append(f"{v} = {line}")
        self.frames[-1].append((v, result_type))

    def pick(self, want: Optional[str] = None, pred=None, strict: bool = False) -> Optional[str]:
        """A visible value of type want (or matching pred); now and then (unless strict) any
        value at all, or one of a closed region."""
        rng = self.rng
        pool = [x for f in self.frames for x in f]
        if self.dead and not self.clean and rng.random() < 0.01:
            pool = self.dead
        if not pool:
            return None
        strict = strict or self.clean
        if (want is None and pred is None) or (not strict and rng.random() < 0.015):
            return rng.choice(pool)[0]
        good = [x for x in pool if (x[1] == want if want is not None else pred(x[1]))]
        return rng.choice(good)[0] if good else None

    def type_of(self, var: str) -> str:
        for f in self.frames + [self.dead]:
            for v, t in f:
                if v == var:
                    return t
        raise KeyError(var)

    def step(self) -> None:
        rng, p = self.rng, self.pick
        r = rng.random()
        if r < 0.12:
            kind = rng.choice(["const_i32", "const_i32", "const_f32", "const_i1", "constant"])
            if kind == "const_i32":
                self.emit(f"const_i32 {rng.choice([0, 1, 2, 4, 16, 64, -3])}", "i32")
            elif kind == "const_f32":
                self.emit(f"const_f32 {rng.choice([0, 1, -1, 2, 1 << 40])}", "f32")
            elif kind == "const_i1":
                self.emit(f"const_i1 {rng.choice(['true', 'false'])}", "i1")
            else:
                ity = rng.choice(["i32", "f32", "i64", "i1", "i8"])
                self.emit(f"constant {ity} {random_tagged(rng, scalar=True)}", ity)
            return
        if r < 0.30:
            op = rng.choice(
                ["add", "sub", "mul", "div", "mod", "min", "max", "and", "or", "fadd", "fmul", "fmax", "fmin"]
            )
            want = "f32" if op.startswith("f") else rng.choice(["i32", "i32", "i64", "i1"])
            a = p(want)
            b = p(self.type_of(a)) if a else None
            if a and b:
                self.emit(f"{op} {a} {b}", self.type_of(a))
            return
        if r < 0.36:
            a = p("i32")
            b = p(self.type_of(a)) if a else None
            if a and b:
                self.emit(f"cmp {rng.choice(PREDS)} {a} {b}", "i1")
            return
        if r < 0.40:
            c, a = p("i1"), p()
            b = p(self.type_of(a)) if a else None
            if c and a and b:
                self.emit(f"select {c} {a} {b}", self.type_of(a))
            return
        if r < 0.48:
            kind = rng.choice(["thread_id", "lane_id", "block_id", "readfirstlane", "zeros", "fptrunc", "bitcast"])
            if kind in ("thread_id", "lane_id"):
                self.emit(kind, "i32")
            elif kind == "block_id":
                self.emit(f"block_id {rng.choice([0, 1, 2, 3])}", "i32")
            elif kind == "readfirstlane":
                a = p("i32")
                if a:
                    self.emit(f"readfirstlane {a}", "i32")
            elif kind == "zeros":
                t = rng.choice(["vec<f32x4>", "vec<f32x16>", "vec<f16x8>", "i32", random_type(rng)])
                self.emit(f"zeros {t}", t)
            else:
                a = p("f32")
                to = (
                    rng.choice(["f16", "bf16", "i32", "f32", random_type(rng)])
                    if kind == "bitcast"
                    else rng.choice(["f16", "bf16", "f32"])
                )
                if a:
                    self.emit(f"{kind} {a} {to}", to)
            return
        if r < 0.60:
            self.memory()
            return
        if r < 0.70:
            self.vector()
            return
        if r < 0.74:
            kind = rng.choice(
                [
                    "sync",
                    "sync_lds_only",
                    "sched_barrier 8",
                    "s_setprio 2",
                    "s_waitcnt_vmcnt 0",
                    "sched_group_barrier 8 1 0",
                ]
            )
            self.emit(kind)
            return
        if r < 0.77:
            a, b, c = p(), p(), p()
            if a and b and c:
                self.emit(f"mma {rng.choice(OP_IDS)} {a} {b} {c}", self.type_of(c))
            return
        if r < 0.81:
            t = random_type(rng)
            if rng.random() < 0.5:
                self.emit(f"new_value {rng.choice(['t', 'x'])} {t}", t)
            else:
                self.emit(f"value %ghost{rng.randint(0, 3)} {t}", t)
            return
        if r < 0.83:
            name = rng.choice(["x.raw", "arith.add", "tile.sync", "gpu.lane_id"])
            ops = " ".join(x for x in (p(), p()) if x and rng.random() < 0.6)
            attrs = random_map(rng) if rng.random() < 0.5 else ""
            if rng.random() < 0.5:
                self.emit(f"op {name} - - {ops} {attrs}".rstrip())
            else:
                t = random_type(rng)
                self.emit(f"op {name} raw {t} {ops} {attrs}".rstrip(), t)
            return
        self.control()

    def memory(self) -> None:
        rng, p = self.rng, self.pick
        kind = rng.choice(["rsrc", "load", "store", "atomic", "alloc", "sload", "sstore", "saddr", "tr", "async"])
        if kind == "rsrc":
            a, n = p(pred=lambda t: t.startswith("ptr<")), p("i32")
            if a and n:
                self.emit(f"make_buffer_rsrc {a} {n}", "rsrc")
        elif kind == "load":
            r, off = p("rsrc"), p("i32")
            elem, n = rng.choice(ELEMS), rng.choice([1, 2, 3, 4, 8])
            if r and off:
                self.emit(f"buffer_load {r} {off} {elem} {n}", elem if n == 1 else f"vec<{elem}x{n}>")
        elif kind in ("store", "atomic"):
            a = p("rsrc") if kind == "store" else p(pred=lambda t: t.startswith("ptr<"))
            off, v = p("i32"), p()
            if a and off and v:
                self.emit(f"{'buffer_store' if kind == 'store' else 'global_atomic_fadd'} {a} {off} {v}")
        elif kind == "alloc":
            t = rng.choice(["smem<f16, [64x32]>", "smem<bf16, [16x16]>", "smem<f32, [4x4]>", random_type(rng)])
            flag = " exclusive" if rng.random() < 0.3 else ""
            if not t.startswith("smem<") or "," in t:
                self.emit(f"smem_alloc {t}{flag}", t)
        elif kind in ("sload", "tr", "sstore", "saddr"):
            s = p(pred=lambda t: t.startswith("smem<") or t.startswith("ptr<"), strict=True)  # a ','
            # in the type: Python's smem_elem raises without one
            if not s:
                return
            row, col = p("i32"), p("i32")
            st = self.type_of(s)
            elem = st[5 : st.index(",")]
            if kind == "saddr":
                self.emit(f"smem_addr {s}", "i32")
            elif not (row and col):
                return
            elif kind == "sload":
                n = rng.choice([1, 2, 4, 8])
                self.emit(
                    f"smem_load {s} {row} {col} {n} {rng.choice([1, 2, 3, 4, 8, 16, 32])}",
                    elem if n == 1 else f"vec<{elem}x{n}>",
                )
            elif kind == "tr":
                w = rng.choice([4, 8])
                self.emit(f"ds_read_tr16_b{64 if w == 4 else 128} {s} {row} {col}", f"vec<{elem}x{w}>")
            else:
                v = p()
                if v:
                    self.emit(f"smem_store {s} {row} {col} {v} {rng.choice([2, 4, 16, 5])}")
        else:
            r, lds, off = p("rsrc"), p("i32"), p("i32")
            if r and lds and off:
                self.emit(f"async_buffer_load_lds {r} {lds} {off} {rng.choice([1, 2, 3, 4])} {rng.choice([0, 3])}")

    def vector(self) -> None:
        rng, p = self.rng, self.pick
        kind = rng.choice(["extract", "insert", "from", "concat"])
        is_vec = lambda t: t.startswith("vec<")  # noqa: E731
        if kind == "extract":
            v = p(pred=is_vec) if rng.random() < 0.9 else p()
            if v:
                t = self.type_of(v)
                self.emit(f"extract {v} {rng.choice([0, 1, 3, 15, -1])}", t[4 : t.rindex("x")] if is_vec(t) else t)
        elif kind == "insert":
            v, x = p(pred=is_vec), p()
            if v and x:
                self.emit(f"insert {v} {x} {rng.choice([0, 1, 5])}", self.type_of(v))
        elif kind == "from":
            x = p()
            if x:
                xs = [x] + [p(self.type_of(x)) or x for _ in range(rng.randint(0, 3))]
                self.emit("from_elements " + " ".join(xs), f"vec<{self.type_of(x)}x{len(xs)}>")
        else:
            a = p(pred=is_vec) if rng.random() < 0.9 else p()
            b = p(self.type_of(a)) if a else None
            if a and b:
                ta, tb = self.type_of(a), self.type_of(b)
                elem = ta[4 : ta.rindex("x")] if is_vec(ta) else ta
                n = (int(ta[ta.rindex("x") + 1 : -1]) if is_vec(ta) else 1) + (
                    int(tb[tb.rindex("x") + 1 : -1]) if is_vec(tb) else 1
                )
                self.emit(f"concat {a} {b}", f"vec<{elem}x{n}>")

    def control(self) -> None:
        rng, p = self.rng, self.pick
        if self.open and (rng.random() < 0.45 or len(self.open) > 3):
            self.close()
            return
        if rng.random() < 0.6:
            lb, ub, step = p("i32"), p("i32"), p("i32")
            if not (lb and ub and step):
                return
            carried = []
            for k in range(rng.randint(0, 3)):
                init = p()
                if init:
                    carried.append((f"{rng.choice(['acc', 's', 'n'])}{k}", init))
            lv = self.var()
            iv = rng.choice(["k0", "i", "j", "k0", "n"])
            unroll = " unroll" if rng.random() < 0.2 else ""
            self.lines.append(
                f"{lv} = for_begin {lb} {ub} {step} {iv} " + " ".join(f"{nm}:{v}" for nm, v in carried) + unroll
            )
            types = [self.type_of(v) for _, v in carried]
            self.frames.append([(f"{lv}.iv", "i32")] + [(f"{lv}.{i}", t) for i, t in enumerate(types)])
            self.open.append(("for", lv, types))
        else:
            c = p("i1")
            if c:
                hv = self.var()
                self.lines.append(f"{hv} = if_begin {c}")
                self.frames.append([])
                self.open.append(("if", hv, []))

    def close(self) -> None:
        rng = self.rng
        kind, handle, types = self.open.pop()
        if rng.random() < 0.01 and self.open and not self.clean:
            kind, handle, types = self.open[0]  # the wrong one: a builder error
        self.dead.extend(self.frames.pop())
        if kind == "if":
            self.lines.append(f"if_end {handle}")
            return
        yielded = [self.pick(t) for t in types] if rng.random() < 0.95 else []
        yielded = [y for y in yielded if y is not None]
        rv = self.var()
        self.lines.append(f"{rv} = for_end {handle} " + " ".join(yielded))
        for i, t in enumerate(types):
            self.frames[-1].append((f"{rv}.{i}", t))

    def script(self) -> str:
        rng = self.rng
        self.lines.append(f"kernel k{rng.randint(0, 99)} {random_map(rng)}" if rng.random() < 0.5 else "kernel k")
        params = [("A", "ptr<f16,global>"), ("n", "i32")]
        params += [(f"p{i}", random_type(rng, valid=0.98)) for i in range(rng.randint(0, 3))]
        if rng.random() < 0.04:
            params.append((rng.choice(["A", "n", "c1"]), "i32"))  # a name defined twice
        for name, t in params:
            attrs = f" {random_map(rng)}" if rng.random() < 0.3 else ""
            v = self.var()
            self.lines.append(f"{v} = param {name} {t}{attrs}")
            self.frames[-1].append((v, t))
        for line, t in (
            ("thread_id", "i32"),
            ("const_i32 0", "i32"),
            ("const_i32 1", "i32"),
            ("const_f32 1", "f32"),
            ("make_buffer_rsrc v1 v2", "rsrc"),
        ):
            if rng.random() < 0.8:
                self.emit(line, t)
        for _ in range(rng.randint(5, 40 if self.clean else 60)):
            self.checked_step()
        while self.open and (self.clean or rng.random() < 0.99):
            self.close()
        if self.clean or rng.random() < 0.95:
            self.lines.append("ret")
        return "\n".join(self.lines) + "\n"

    def closing(self) -> list[str]:
        """Lines that close the open loops (yielding their own carried values) and ifs, and ret."""
        out = []
        for kind, handle, types in reversed(self.open):
            out.append(
                f"if_end {handle}"
                if kind == "if"
                else f"for_end {handle} " + " ".join(f"{handle}.{i}" for i in range(len(types)))
            )
        return out + ["ret"]

    def checked_step(self) -> None:
        """step(); in clean mode, undone unless the kernel (closed) still verifies."""
        if not self.clean:
            self.step()
            return
        saved = copy.deepcopy((self.lines, self.n, self.frames, self.dead, self.open))
        self.step()
        if not run_py("\n".join(self.lines + self.closing()) + "\n").endswith(b"verify: ok\n"):
            self.lines, self.n, self.frames, self.dead, self.open = saved


def tamper_lines(rng: random.Random, text: str) -> list[str]:
    """A few t_* edits on ops of the kernel the script builds (paths found by running it)."""
    s = ir_script.Script()
    try:
        for line in text.split("\n"):
            line = line.strip()
            if line and not line.startswith("#"):
                lhs, cmd, cur = ir_script.statement(line)
                s.call(lhs, cmd, cur)
    except Exception:
        return []
    if s.b is None:
        return []
    paths: list[tuple[str, object]] = []

    def walk(region, prefix: str) -> None:
        for i, op in enumerate(region.ops):
            paths.append((f"{prefix}{i}", op))
            for j, sub in enumerate(op.regions):
                walk(sub, f"{prefix}{i}.{j}.")

    walk(s.b.kernel.entry, "@")
    values = [k for k, v in s.env.items() if isinstance(v, ir_script.Value)]
    out = []
    for _ in range(rng.randint(1, 3)):
        if not paths:
            break
        path, op = rng.choice(paths)
        r = rng.random()
        key = rng.choice(list(op.attrs) + ["align", "n", "num", "dim", "iv", "index"]) if op.attrs else "note"
        if r < 0.35:
            if key in ("index",):
                value = f"i:{rng.choice([0, 1, 99])}" if rng.random() < 0.5 else f"f:{rng.choice(['1.0', '0.5'])}"
            elif key in ("iv", "op_id", "iter_args"):
                value = (
                    rng.choice(['s:"%z"', "i:3", "b:true", 'l:[ { name = s:"%q", type = s:"i32" } ]'])
                    if key == "iter_args"
                    else rng.choice(['s:"%z"', "i:3", "b:true", "f:2.0"])
                )
            else:
                value = random_tagged(rng)
            out.append(f"t_set_attr {path} {key} {value}")
        elif r < 0.5 and op.attrs:
            out.append(f"t_del_attr {path} {rng.choice(list(op.attrs))}")
        elif r < 0.6:
            out.append(f"t_drop {path}")
            break  # later paths may have moved
        elif r < 0.7 and values:
            out.append(f"t_add_operand {path} {rng.choice(values)}")
        elif r < 0.8 and op.operands and values:
            out.append(f"t_set_operand {path} {rng.randrange(len(op.operands))} {rng.choice(values)}")
        elif r < 0.85:
            out.append(f"t_add_result {path} %r{rng.randint(0, 9)} {random_type(rng)}")
        elif r < 0.9 and op.results:
            out.append(f"t_drop_result {path} {rng.randrange(len(op.results))}")
        elif r < 0.95:
            out.append(f"t_add_region {path} {rng.choice(['body', 'then', 'x'])}")
        elif op.regions:
            out.append(f"t_rename_region {path} 0 {rng.choice(['body', 'then', 'x'])}")
    return out


def random_script(seed: int) -> str:
    text = Gen(seed).script()
    rng = random.Random(seed ^ 0x5EED)
    if rng.random() < 0.25:
        text += "\n".join(tamper_lines(rng, text)) + "\n"
    return text


def test_random_scripts(ir_driver: Path, tmp_path: Path) -> None:
    paths = []
    for seed in range(N_RANDOM):
        path = tmp_path / f"random_{seed:04d}.irs"
        path.write_text(random_script(seed), encoding="utf-8")
        paths.append(path)
    outputs = run_c(ir_driver, paths)
    verdicts = set()
    for path, c in zip(paths, outputs):
        py = run_py(path.read_text(encoding="utf-8"))
        assert not py.startswith(b"script error"), (path.name, py.decode(), path.read_text())
        same(py, c, f"{path.name}:\n{path.read_text()}\n")
        verdicts.add(py.decode().rstrip("\n").rsplit("\n", 1)[-1].split(":")[0])
    # the generator reaches both outcomes, well-formed kernels and verifier failures
    assert "verify" in verdicts
    oks = sum(o.endswith(b"verify: ok\n") for o in outputs)
    assert 0 < oks < len(outputs), oks
