"""The bad-input corpus (tests/data/bad_configs/) through both engines.

For every case file, and for the large files generated here (a 10 MB one and files just
under, at and just over the 1048576-byte limit), the Python engine and the C engine (in
process, through cbridge) give the identical Rejected code and message, and they match
expected.tsv: the code, and a substring that pins the line number and key the message must
name. Messages are one short ASCII line that never echoes a value (the cases plant
SECRETVALUE in values to check). Then the same files run through the C engine built with
AddressSanitizer + UBSan as a subprocess (skipped without gcc): no sanitizer output and the
same records as Python (each Python result computed once per worker, tests/support/engine_memo.py,
as the other modules that run these jobs share it). Finally a small fixed-seed smoke of tests/tools/fuzz_parser.py."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import engine_memo
import pytest
import sanitized_driver
from layout import REPO

from rocke_py import cbridge
from rocke_py import engine as py_engine
from rocke_py.engine.result import Emitted, Rejected
from rocke_py.facts import FLAVORS

CORPUS = REPO / "tests" / "data" / "bad_configs"
EXPECTED = CORPUS / "expected.tsv"
LIMIT = 1048576
SECRET = "SECRETVALUE"
NAME = re.compile(r"^(\d\d)-[A-Za-z0-9]+(-[A-Za-z0-9]+)*\.(toml|bin)$")

BASE = (
    '[target]\narch = "gfx950"\n\n[problem]\nN = 8\nHi = 56\nWi = 56\nC = 64\nK = 64\n'
    'Y = 3\nX = 3\n\n[spec]\nfamily = "wgrad"\n'
)


def load_expected() -> dict[str, tuple[str, str]]:
    with EXPECTED.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    assert rows and list(rows[0]) == ["file", "code", "message-substring"]
    return {r["file"]: (r["code"], r["message-substring"]) for r in rows}


CASES = load_expected()
CASE_FILES = sorted(p for p in CORPUS.iterdir() if p.is_file() and not p.name.startswith(".") and p != EXPECTED)


def modes() -> tuple[str, ...]:
    return tuple(m for m in py_engine.implemented_modes() if m in cbridge.implemented_modes())


def check_message(message: str, data: bytes) -> None:
    """One line of printable ASCII, short, no planted value; a line it names exists."""
    assert message and len(message) <= 200, message
    assert all(0x20 <= ord(ch) < 0x7F for ch in message), message
    assert SECRET not in message, message
    m = re.match(r"line (\d+): ", message)
    if m:
        assert 1 <= int(m.group(1)) <= data.count(b"\n") + 1, message


# ---- the corpus itself ----


def test_corpus_names_and_expectations_match() -> None:
    on_disk = {p.name for p in CASE_FILES}
    assert on_disk == set(CASES), "every case file needs a row in expected.tsv and vice versa"
    assert all(NAME.match(name) for name in on_disk), sorted(n for n in on_disk if not NAME.match(n))
    numbers = [NAME.match(name).group(1) for name in on_disk]
    assert len(numbers) == len(set(numbers)), "case numbers must be unique"
    for name, (code, sub) in CASES.items():
        assert re.fullmatch(r"E_[A-Z_]+", code), (name, code)
        assert sub.strip() == sub and sub, name


def test_corpus_text_cases_are_utf8_and_bin_cases_are_not_plain_text() -> None:
    for path in CASE_FILES:
        data = path.read_bytes()
        if path.suffix == ".toml":
            data.decode("utf-8")
            assert not any(b < 0x20 and b not in b"\t\r\n" for b in data) and b"\x7f" not in data, path.name


# ---- both engines, in process ----


@pytest.mark.parametrize("path", CASE_FILES, ids=[p.stem for p in CASE_FILES])
def test_both_engines_reject_alike(path: Path) -> None:
    data = path.read_bytes()
    code, sub = CASES[path.name]
    for mode in modes():
        for flavor in FLAVORS:
            py = engine_memo.py_emit(data, mode, flavor)
            c = engine_memo.c_emit(data, mode, flavor)
            assert isinstance(py, Rejected), f"python emitted for {path.name}"
            assert c == py, f"engines disagree on {path.name}:\n py: {py}\n  c: {c}"
            assert py.code == code and sub in py.message, f"{path.name}: {py}"
            check_message(py.message, data)


def sized(n: int, tail: str = "") -> bytes:
    """BASE, `tail`, then one comment line padding the file to exactly n bytes."""
    head = (BASE + tail).encode()
    pad = n - len(head) - 2
    assert pad >= 0
    return head + b"#" + b"x" * pad + b"\n"


def large_cases() -> dict[str, tuple[bytes, object]]:
    """name -> (bytes, expected): "emit", or (code, exact message)."""
    return {
        "under-limit": (sized(LIMIT - 1), "emit"),
        "at-limit": (sized(LIMIT), "emit"),
        "over-limit": (sized(LIMIT + 1), ("E_TOO_LARGE", f"config is {LIMIT + 1} bytes; the limit is {LIMIT}")),
        "ten-megabytes": (sized(10 * LIMIT), ("E_TOO_LARGE", f"config is {10 * LIMIT} bytes; the limit is {LIMIT}")),
        "over-limit-and-bad-utf8": (
            sized(LIMIT + 1)[:-2] + b"\xff\n",
            ("E_TOO_LARGE", f"config is {LIMIT + 1} bytes; the limit is {LIMIT}"),
        ),
        "at-limit-error-on-last-line": (
            b"\n" * (LIMIT - len(BASE) - len("tile_m = 0")) + BASE.encode() + b"tile_m = 0",
            (
                "E_RANGE",
                f"line {LIMIT - len(BASE) - len('tile_m = 0') + 15}: key 'tile_m' in [spec] "
                "must be between 1 and 65536, not 0",
            ),
        ),
        "at-limit-bad-utf8-at-end": (sized(LIMIT)[:-2] + b"\xc3\n", ("E_ENCODING", "line 15: invalid UTF-8")),
        "at-limit-one-long-string": (
            (BASE + 'pipeline = "').encode() + b"a" * (LIMIT - len(BASE) - len('pipeline = ""\n')) + b'"\n',
            ("WGRAD_UNKNOWN_OPTION", "pipeline is not one of mem, compv3, compv4, basic"),
        ),
    }


LARGE = large_cases()


@pytest.fixture(scope="module")
def large_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("large_configs")
    files = {}
    for name, (data, _) in LARGE.items():
        path = out / f"{name}.toml"
        path.write_bytes(data)
        files[name] = path
    return files


@pytest.mark.parametrize("name", list(LARGE))
def test_large_files(name: str, large_files: dict[str, Path]) -> None:
    data = large_files[name].read_bytes()
    expected = LARGE[name][1]
    assert len(data) == len(LARGE[name][0])
    for mode in modes():
        py = engine_memo.py_emit(data, mode, "llvm22")
        c = engine_memo.c_emit(data, mode, "llvm22")
        assert c == py, f"engines disagree on {name}:\n py: {str(py)[:300]}\n  c: {str(c)[:300]}"
        if expected == "emit":
            assert isinstance(py, Emitted), py
        else:
            assert py == Rejected(*expected)


def test_limit_boundary_is_exact() -> None:
    assert len(LARGE["at-limit"][0]) == LIMIT and len(LARGE["over-limit"][0]) == LIMIT + 1
    assert len(LARGE["at-limit-error-on-last-line"][0]) == LIMIT
    assert len(LARGE["at-limit-one-long-string"][0]) == LIMIT


# ---- the C engine under AddressSanitizer + UBSan, as a subprocess ----


def test_sanitized_driver_on_corpus_and_large_files(sanitized_emit_driver: Path, large_files: dict[str, Path]) -> None:
    files = CASE_FILES + [large_files[name] for name in LARGE]
    for mode in modes():
        run = sanitized_driver.run_driver(sanitized_emit_driver, files, mode, "llvm22")
        assert run.returncode == 0 and not run.stderr, run.stderr.decode("utf-8", "replace")[-4000:]
        assert len(run.records) == len(files)
        for path, c in zip(files, run.records):
            py = sanitized_driver.python_record(path.read_bytes(), mode, "llvm22", engine_memo.py_emit)
            assert c == py, f"{path.name}:\n py: {py[0]} {py[1]} {py[2][:300]!r}\n  c: {c[0]} {c[1]} {c[2][:300]!r}"


def test_fuzz_smoke(sanitized_emit_driver: Path, tmp_path: Path) -> None:
    import fuzz_parser

    stats = fuzz_parser.run_fuzz(200, 20261202, sanitized_emit_driver, tmp_path)
    assert stats.cases == 200
    assert stats.ok(), "\n".join(why for _, why in (stats.divergent + stats.sanitizer)[:5])
