"""The parser cases (tests/data/parser_cases/: inputs with their expected outcome, format in its
README.md) through each engine's input stages: the encoding check, the parser, the schema and
the entry checks of emit().

Each engine is compared with the case files, never with the other: the Python runner
(tests/tools/parser_cases.py) and the C one (rocke_c/tests/parser_cases.c, also run by ctest)
read the same files and each compares its own dump of what its stage returned with the expected
text. A failure names the case: <stage>:<id>."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import parser_cases as pc
import pytest
from cbuild import SAN_ENV

CASES = pc.load()
NAMES = [pc.name(c) for c in CASES]
SECRET = "SECRETVALUE"


def run_c(program: Path, directory: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(program), str(directory)], capture_output=True, env=SAN_ENV, timeout=300)


def verdicts(stdout: bytes) -> dict[str, str]:
    """The C runner's output: case name -> its lines (`ok NAME`, or `FAIL NAME ...` and details)."""
    out: dict[str, str] = {}
    for line in stdout.decode().splitlines():
        if line.startswith(("ok ", "FAIL ")):
            last = line.split(" ")[1]
            out[last] = line
        else:
            out[last] += "\n" + line
    return out


@pytest.fixture(scope="session")
def c_verdicts(parser_cases: Path) -> dict[str, str]:
    run = run_c(parser_cases, pc.CASES_DIR)
    assert not run.stderr.strip(b"\n").count(b"\n"), run.stderr.decode()[-4000:]  # only the summary line
    assert run.returncode in (0, 1), run.stderr.decode()[-4000:]
    return verdicts(run.stdout)


@pytest.mark.parametrize("case", CASES, ids=NAMES)
def test_python_engine(case: pc.Case) -> None:
    assert pc.run_case(case) == case.expected


@pytest.mark.parametrize("name", NAMES)
def test_c_engine(name: str, c_verdicts: dict[str, str]) -> None:
    assert c_verdicts.get(name) == f"ok {name}", c_verdicts.get(name, "the C runner did not see this case")


def test_c_runner_reads_the_same_cases(c_verdicts: dict[str, str]) -> None:
    assert list(c_verdicts) == NAMES


def test_expected_rejections_are_one_short_line_without_the_secret() -> None:
    """What every rejection message must be (both engines' dumps equal these)."""
    for case in CASES:
        want = case.expected.decode("utf-8")
        if want.startswith("rejected "):
            assert "\n" not in want and len(want) < 240 and SECRET not in want, pc.name(case)
            assert all(0x20 <= ord(ch) < 0x7F for ch in want), pc.name(case)


def test_a_wrong_expectation_fails_in_both_runners(parser_cases: Path, tmp_path: Path) -> None:
    """One expected message changed in a copy of the files: each runner names that case, and
    only that case."""
    copy = tmp_path / "parser_cases"
    shutil.copytree(pc.CASES_DIR, copy)
    path = copy / "parse.cases"
    text = path.read_text(encoding="utf-8")
    wrong = text.replace("rejected E_SYNTAX line 2: control character 0x01\n", "rejected E_SYNTAX line 2: 0x01\n", 1)
    assert wrong != text
    path.write_text(wrong, encoding="utf-8")

    failed = pc.failures(copy)
    assert len(failed) == 1 and failed[0].startswith("FAIL parse:control-01 "), failed

    run = run_c(parser_cases, copy)
    assert run.returncode == 1, run.stderr.decode()
    c_failed = {name: lines for name, lines in verdicts(run.stdout).items() if not lines.startswith("ok ")}
    assert list(c_failed) == ["parse:control-01"], c_failed
    assert "want: rejected E_SYNTAX line 2: 0x01" in c_failed["parse:control-01"]


@pytest.mark.parametrize(
    "line,why",
    [
        ("a<0x3C", "'<' without its '>'"),
        ("<0xff>", "unknown escape"),
        ("<U+110000>", "unknown escape"),
        ("<x*0>", "unknown escape"),
    ],
    ids=["unclosed", "lower-case-hex", "past-U+10FFFF", "zero-repeats"],
)
def test_a_malformed_case_file_stops_both_runners(parser_cases: Path, tmp_path: Path, line: str, why: str) -> None:
    copy = tmp_path / "parser_cases"
    shutil.copytree(pc.CASES_DIR, copy)
    path = copy / "encoding.cases"
    path.write_text(
        path.read_text(encoding="utf-8").replace("=== empty\n", f"=== empty\n{line}\n", 1), encoding="utf-8"
    )
    with pytest.raises(pc.CaseFileError, match=why):
        pc.load(copy)
    run = run_c(parser_cases, copy)
    assert run.returncode == 2 and why in run.stderr.decode(), run.stderr.decode()
