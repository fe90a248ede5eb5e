"""The fuzzer's parts without the pool: determinism of the draws, each oracle failing on the
fault it exists for (and passing without it), the signature's shape, and the reducer on a
synthetic failure."""

from __future__ import annotations

import hashlib
import random

import pytest
from layout import REPO

from rocke_py.configtext import split_lines
from rocke_py.fuzz import generate, oracles
from rocke_py.fuzz.case import key_count
from rocke_py.fuzz.driver import CaseSource
from rocke_py.fuzz.reduce import reduce_case, simpler_values, smaller_ints
from rocke_py.parity.judge.jobs import Job
from rocke_py.parity.run.engines import EngineRun
from rocke_py.parity.run.work import Death, JobResult, WorkItem


def test_a_seed_draws_the_same_cases() -> None:
    a, b = CaseSource(5, generate.FAMILIES, REPO), CaseSource(5, generate.FAMILIES, REPO)
    assert [a.case(i) for i in range(60)] == [b.case(i) for i in range(60)]
    other = CaseSource(6, generate.FAMILIES, REPO)
    assert [a.case(i).text for i in range(20)] != [other.case(i).text for i in range(20)]
    kinds = {a.case(i).kind for i in range(300)}
    assert kinds == {"gen", "cross", "mut"}


def test_crossings_cover_every_family() -> None:
    for family in generate.FAMILIES:
        rules = {r for r, (fams, _) in generate.CROSSINGS.items() if family in fams}
        assert len(rules) >= 25
        rng = random.Random(1)
        origin, text = generate.draw(rng, family)
        assert f'family = "{family}"' in text


# ----------------------------------------------------------------------------- oracles


def _run(text: str | None = None, code: str = "", message: str = "", kind: str = "") -> EngineRun:
    if text is not None:
        data = text.encode()
        return EngineRun("emitted", sha256=hashlib.sha256(data).hexdigest(), nbytes=len(data))
    return EngineRun(kind or "rejected", code, message)


def _res(mode: str, py: EngineRun, c: EngineRun, py_text=None, c_text=None, c2: EngineRun | None = None, death=None):
    job = Job("case-0", "wgrad", mode, "-" if mode != "ll" else "llvm22")
    item = WorkItem(job, b"", mode, "llvm22")
    if death is not None:
        return JobResult(item, death=death)
    return JobResult(item, (py, py), (c, c2 or c), py_text, c_text)


def _emit(mode: str, text: str = "a\nb\n") -> JobResult:
    return _res(mode, _run(text), _run(text), text, text)


def test_agreeing_jobs_pass() -> None:
    assert oracles.judge([_emit("spec"), _emit("ir"), _emit("ll")], 10).verdict == "emit"
    rej = _run(code="E_X", message="m")
    got = oracles.judge([_res("spec", rej, rej), _res("ir", rej, rej)], 10)
    assert (got.verdict, got.code, got.failed) == ("reject", "E_X", False)


def test_differ_signature_blanks_numbers() -> None:
    a, b = "x = 1\nlds_bytes = 18432\n", "x = 1\nlds_bytes = 118432\n"
    got = oracles.judge([_res("spec", _run(a), _run(b), a, b)], 10)
    assert got.signature == ("DIFFER", "spec", "lds_bytes = #", "lds_bytes = #")
    assert oracles.line_shape("%12 = add i32 %a.b, 7") == "%_ = add i32 %_, #"


@pytest.mark.parametrize(
    ("jobs", "head"),
    [
        ([_res("spec", _run("a\n"), _run(code="E_X", message="m"), "a\n")], ("C_ONLY_REJECTED", "spec", "E_X")),
        ([_res("spec", _run(code="E_X", message="m"), _run("a\n"), None, "a\n")], ("PY_ONLY_REJECTED", "spec", "E_X")),
        (
            [_res("ir", _run(code="E_X", message="m"), _run(code="E_Y", message="m"))],
            ("REJECT_MISMATCH", "ir", "E_X", "E_Y"),
        ),
        ([_res("spec", _run("a\n"), _run("a\n"), "a\n", "a\n", c2=_run("b\n"))], ("NONDETERMINISTIC", "spec", "c")),
        (
            [_res("ll", _run("a\n"), _run(kind="error", code="ZeroDivisionError", message="x"))],
            ("CRASH", "ll llvm22", "c", "ZeroDivisionError"),
        ),
        ([_res("ir", None, None, death=Death("crash", "c", 1, -11))], ("CRASH", "ir", "c", "SIGSEGV")),
        ([_res("ir", None, None, death=Death("timeout", "py", 2, None))], ("TIMEOUT", "ir", "py", "timeout")),
        (
            [_emit("spec"), _res("ir", _run(code="E_X", message="m"), _run(code="E_X", message="m"))],
            ("VERDICT_SPLIT", "spec=emit", "ir=E_X"),
        ),
    ],
)
def test_each_oracle_fails_on_its_fault(jobs, head) -> None:
    got = oracles.judge(jobs, 10)
    assert got.failed
    assert got.signature[: len(head)] == head


def test_unbounded_output(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(oracles, "MAX_OUTPUT_BYTES", 3)
    got = oracles.judge([_emit("spec", "abcd\n")], 10)
    assert got.signature == ("UNBOUNDED_OUTPUT", "spec", "py")


def test_numerics_hook() -> None:
    jobs = [_emit("spec"), _emit("ll", "define void @k()\n")]
    assert oracles.judge(jobs, 10, lambda config, ll: None).verdict == "emit"
    got = oracles.judge(jobs, 10, lambda config, ll: "max abs error 0.5 at (0, 1, 2, 3)")
    assert got.signature == ("NUMERICS", "ll llvm22", "max abs error #.# at (#, #, #, #)")
    from rocke_py.numerics import fuzz_check

    assert oracles.load_numerics() is fuzz_check


# ----------------------------------------------------------------------------- reduction


def test_value_candidates() -> None:
    assert smaller_ints("37") == ["0", "1", "2", "4", "8", "16", "18", "32", "36"]
    assert smaller_ints("-5")[:3] == ["0", "-1", "-2"]
    assert smaller_ints("+7")[-1] == "7" and smaller_ints("0") == []
    assert simpler_values("true") == ["false"] and simpler_values("false") == []
    assert simpler_values('"cshuffle"') == ['""', '"a"', '"cshu"']


CONFIG = """# a comment
[target]
arch = "gfx950"

[problem]
N = 8
Hi = 56
Wi = 56
C = 64
K = 64
Y = 3
X = 3
pH = 1

[spec]
family = "wgrad"
tile_k = 48
epilogue = "cshuffle"
dtype_a = "bf16"
dtype_b = "bf16"
relu = true
"""


def test_reducer_keeps_the_signature_and_shrinks() -> None:
    """A synthetic failure: it needs tile_k >= 20, relu on, and dtype_a equal to dtype_b."""

    def fails(text: str) -> bool:
        kv = {ln.key: ln.value for ln in split_lines(text) if ln.key is not None}
        tk = kv.get("tile_k", "64")
        return tk.isdigit() and int(tk) >= 20 and kv.get("relu") == "true" and kv.get("dtype_a") == kv.get("dtype_b")

    red = reduce_case(CONFIG, ("X",), lambda texts: [("X",) if fails(t) else () for t in texts], 30)
    assert fails(red.text) and red.complete
    assert key_count(red.text) == (10, 1)  # relu only: tile_k's default (64) keeps it
    # values the failure does not need go to the smallest: 0 and the empty string
    assert "N = 0" in red.text and 'arch = ""' in red.text
    assert "pH" not in red.text and "# a comment" not in red.text


def test_proposed_expectation() -> None:
    from rocke_py.fuzz.save import proposed_expectation

    rej = _run(code="E_X", message="m")
    assert str(proposed_expectation([_res("spec", rej, _run("a\n"), None, "a\n")])) == "reject:E_X"
    dead = _res("spec", None, None, death=Death("crash", "c", 1, -11))
    assert str(proposed_expectation([dead, _res("ir", rej, rej)])) == "reject:E_X"
    crash = _run(kind="error", code="ValueError", message="x")
    assert str(proposed_expectation([_res("spec", crash, rej)])) == "reject:E_X"  # the C engine's, py crashed
    assert str(proposed_expectation([dead])) == "emit"
