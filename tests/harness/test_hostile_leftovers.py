"""Hostile input left over: the object store, ``diff``'s manifest and texts, the fuzzer's lines,
and the hidden ``--engines`` option.

- An object of ``.rocke-parity/objects/`` that inflates past the store's limit (a zlib bomb), or
  is no zlib data at all, is absent, with a note naming it; it is never inflated whole.
- ``diff`` over an unreadable golden.json says so in one line naming the file and why (as the
  gate does), and still shows the engines' comparison.
- ``diff`` prints every line bounded (an 8 MB divergent line is cut, with its size); ``--save``
  keeps the whole text.
- The fuzzer's ``FAIL`` line escapes a lone surrogate of a failure's reason (stdout is UTF-8).
- A bad path in ``--engines`` (no such function, no such file, a syntax error) is one line
  naming the option and the problem, exit 2, never a traceback.
"""

from __future__ import annotations

import hashlib
import io
import zlib
from pathlib import Path

import pytest
import standin_tree as pt
from cli_run import Done, run_main

from rocke_py.parity.store.objects import ObjectCache

CID = "wgrad/00-a"


def run(capsys, *args: str) -> Done:
    return run_main(capsys, list(args))


def tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    pt.make_tree(root, {CID: {}})
    pt.write_golden(root, pt.golden_for(root, [CID]))
    return root


# ----------------------------------------------------------------------------- the object store


def _bomb(size: int) -> bytes:
    """zlib data that inflates to ``size`` zero bytes (about a thousandth of it, compressed)."""
    z = zlib.compressobj(9)
    chunk = bytes(1 << 20)
    parts = [z.compress(chunk) for _ in range(size >> 20)]
    return b"".join([*parts, z.compress(bytes(size & ((1 << 20) - 1))), z.flush()])


@pytest.mark.parametrize(
    "data, why",
    [
        (_bomb(32 << 20), "more than 16777216 bytes"),  # twice the limit: never inflated whole
        (b"not zlib at all", "not zlib data"),
        (zlib.compress(b"x" * 5000)[:-20], "not zlib data"),  # cut short
    ],
    ids=["bomb", "garbage", "truncated"],
)
def test_an_object_past_the_limit_or_corrupt_is_absent_with_a_note(tmp_path, capsys, data, why):
    cache = ObjectCache(tmp_path)
    sha = "ab" * 32
    (cache.dir / f"{sha}.z").write_bytes(data)
    assert cache.get(sha) is None
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith(f"note: .rocke-parity/objects/{sha}.z cannot be read (") and why in err, err
    assert err.rstrip().endswith(": ignored")


def test_an_object_at_the_limit_and_a_missing_one_are_read_without_a_note(tmp_path, capsys):
    cache = ObjectCache(tmp_path)
    text = "y" * (16 << 20)
    sha = hashlib.sha256(text.encode()).hexdigest()
    cache.put(sha, text)
    assert cache.get(sha) == text
    assert cache.get("cd" * 32) is None
    assert capsys.readouterr().err == ""


# ----------------------------------------------------------------------------- diff: golden.json


def test_diff_over_an_unreadable_golden_json_says_so_and_still_compares(tmp_path, capsys):
    root = tree(tmp_path)
    (root / "parity_configs" / "golden.json").write_text('{"schema": ')
    done = run(capsys, "diff", CID, "--root", str(root), "--engines", pt.engines_arg())
    assert done.code == 1, done.text  # the gate fails on it: so does diff
    said = [ln for ln in done.text.splitlines() if "golden.json" in ln]
    assert len(said) == 1, done.text
    assert "cannot be read" in said[0] and "not JSON" in said[0], said
    assert "status: IDENTICAL" in done.out and "sha256 py: " in done.out  # the comparison is shown


# ----------------------------------------------------------------------------- diff: bounded lines

LONG_LINE = 8_000_000

#: The stand-ins, the C side's line 5 replaced by one 8 MB line.
LONG_ENGINES = """
from rocke_py.parity.run.engines import load_callable

_STANDINS = {standins!r}


def py_emit(config, mode, flavor):
    return load_callable(f"{{_STANDINS}}:py_emit")(config, mode, flavor)


def c_emit(config, mode, flavor):
    out = load_callable(f"{{_STANDINS}}:c_emit")(config, mode, flavor)
    lines = out.text.splitlines(keepends=True)
    lines[4] = "x" * {n} + "\\n"
    return type(out)("".join(lines))


def implemented_modes():
    return ("spec",)
"""


def _long_engines(tmp_path: Path) -> str:
    path = tmp_path / "long_engines.py"
    path.write_text(LONG_ENGINES.format(standins=str(pt.ENGINES_FILE), n=LONG_LINE))
    return f"{path}:py_emit,{path}:c_emit"


def test_diff_bounds_an_8mb_divergent_line_and_save_keeps_it_whole(tmp_path, capsys):
    root = tree(tmp_path)
    saved = tmp_path / "saved"
    eng = _long_engines(tmp_path)
    done = run(capsys, "diff", CID, "--root", str(root), "--engines", eng, "--save", str(saved))
    assert done.code == 1, done.text[-3000:]
    assert "first divergent line: 5" in done.out
    longest = max(len(ln) for ln in done.out.splitlines())
    assert longest < 3000, longest
    cut = [ln for ln in done.out.splitlines() if "xxxx" in ln]
    assert cut and all("bytes; the whole text: " in ln and str(saved) in ln for ln in cut), cut[:1]
    assert any(f"[{LONG_LINE + 6} bytes" in ln for ln in cut), [ln[-80:] for ln in cut]  # "> 5 | " + the line
    (kept,) = (saved / "c").iterdir()
    assert "x" * LONG_LINE + "\n" in kept.read_text()
    # without --save, the cut says how to keep the whole
    done = run(capsys, "diff", CID, "--root", str(root), "--engines", eng)
    assert max(len(ln) for ln in done.out.splitlines()) < 3000
    assert "the whole text: --save DIR" in done.out


# ----------------------------------------------------------------------------- the fuzzer's FAIL line


def test_the_fuzzers_fail_line_escapes_a_lone_surrogate(monkeypatch):
    from rocke_py.fuzz import driver
    from rocke_py.fuzz.case import Case
    from rocke_py.fuzz.oracles import Outcome

    class Stop(Exception):
        pass

    def stop(*_a, **_k):
        raise Stop

    monkeypatch.setattr(driver, "reduce_case", stop)  # the FAIL lines come first
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")  # strict, as a terminal's stdout
    case = Case(3, "gen:x", "wgrad", "a = 1\n", "llvm22")
    outcome = Outcome("CRASH", "", "raised ValueError: bad \udc80 byte", ("CRASH", "spec", "bad \udc80"), "spec")
    s = driver.Settings(seed=1, budget=1.0)
    with pytest.raises(Stop):
        driver.reduce_all(None, Path("."), s, ("spec",), [(case, outcome, 1)], None, out, [])  # type: ignore[arg-type]
    out.flush()
    text = out.buffer.getvalue().decode("utf-8")  # type: ignore[attr-defined]
    assert "FAIL CRASH case 3" in text and "bad \\udc80 byte" in text, text
    assert "bad \\udc80" in text.splitlines()[1], text


# ----------------------------------------------------------------------------- --engines


def _bad_refs(tmp_path: Path) -> dict[str, tuple[str, str]]:
    """name -> (the --engines value, what the one line must say)."""
    f = str(pt.ENGINES_FILE)
    bad = tmp_path / "bad_syntax.py"
    bad.write_text("def py_emit(:\n    pass\n")
    missing = tmp_path / "no_such_engines.py"
    return {
        "no such function": (f"{f}:missing,{f}:c_emit", f"{f}:missing: {pt.ENGINES_FILE.name} defines no 'missing'"),
        "no such file": (f"{missing}:py_emit,{f}:c_emit", f"{missing}:py_emit: no such file"),
        "syntax error": (f"{bad}:py_emit,{f}:c_emit", f"{bad}:py_emit: {bad.name} line 1: invalid syntax"),
        "no modes function": (
            f"{f}:py_emit,{f}:c_emit,{f}:py_emit,{f}:nothing",
            f"{f}:nothing: {pt.ENGINES_FILE.name} defines no 'nothing'",
        ),
    }


@pytest.mark.parametrize("case", ["no such function", "no such file", "syntax error", "no modes function"])
@pytest.mark.parametrize(
    "args",
    [
        ("golden", "--update", "-j", "1"),
        ("gate", "-j", "1"),
        ("diff", CID),
        ("emit", f"parity_configs/{CID}.toml", "--engine", "py"),
    ],
    ids=lambda a: " ".join(a[:2]),
)
def test_a_bad_engines_path_is_one_line_exit_2(tmp_path, capsys, monkeypatch, case, args):
    root = tree(tmp_path)
    monkeypatch.chdir(root)
    value, says = _bad_refs(tmp_path)[case]
    done = run(capsys, *args, "--root", str(root), "--engines", value)
    assert done.code == 2, done.text
    assert done.out == "", done.out
    assert done.err.count("\n") == 1, done.err
    assert done.err.startswith(f"rocke-parity {args[0]}: --engines ") and says in done.err, done.err
    assert (root / "parity_configs" / "golden.json").exists()


def test_good_engines_paths_still_parse():
    from rocke_py.parity.run.engines import EngineSpec

    assert EngineSpec.parse(pt.engines_arg()) == pt.engine_spec()
    assert EngineSpec.parse("rocke_py.engine:emit,rocke_py.cbridge:emit") == EngineSpec()
