"""The parser cases (tests/data/parser_cases/, format in its README.md) through the Python engine.

The twin of rocke_c/tests/parser_cases.c, which runs the same files through the C engine: the
same reader, function for function in the same order, and the same dump of what a stage
returned. Each runner compares its own dump with the expected text of the case file; neither
reads the other's output.

    python3 tests/tools/parser_cases.py [DIR]     checks every case, prints the failures"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Union

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from rocke_py.engine import emit  # noqa: E402
from rocke_py.engine.config import Config, Value, check_encoding, parse_config  # noqa: E402
from rocke_py.engine.result import Rejected  # noqa: E402
from rocke_py.engine.schema import Fields, check_schema  # noqa: E402

CASES_DIR = ROOT / "tests" / "data" / "parser_cases"
STAGES = ("encoding", "parse", "schema", "emit")  # one file each: <stage>.cases
NO_EOL = "\\ No newline at end of file"
NAMED = {"TAB": b"\t", "CR": b"\r"}
ESCAPE = re.compile(r"<([^<>]*)>")


class CaseFileError(ValueError):
    """A case file that does not follow the format (the message names file and line)."""


@dataclass(frozen=True)
class Case:
    stage: str
    id: str
    line: int  # of the `===` header in the case file
    data: bytes  # the input
    mode: str  # emit only
    flavor: str  # emit only
    expected: bytes


def unescape(escape: str, where: str) -> bytes:
    """The bytes of one <...> escape: <0xHH>, <U+HHHH>, <TAB>, <CR> or <TEXT*N>."""
    if escape in NAMED:
        return NAMED[escape]
    if re.fullmatch(r"0x[0-9A-F]{2}", escape):
        return bytes([int(escape[2:], 16)])
    if re.fullmatch(r"U\+[0-9A-F]{4,6}", escape) and int(escape[2:], 16) <= 0x10FFFF:
        return chr(int(escape[2:], 16)).encode("utf-8", "surrogatepass")
    repeat = re.fullmatch(r"([^*]+)\*([1-9][0-9]{0,8})", escape)
    if repeat:
        return repeat.group(1).encode() * int(repeat.group(2))
    raise CaseFileError(f"{where}: unknown escape <{escape}>")


def decode(line: str, where: str) -> bytes:
    """A line of a case file as bytes: its text (UTF-8) with every <...> escape replaced."""
    out = bytearray()
    pos = 0
    for m in [*ESCAPE.finditer(line), None]:
        text = line[pos : m.start() if m else len(line)]
        if "<" in text:
            raise CaseFileError(f"{where}: '<' without its '>' (write <0x3C> for a '<')")
        out += text.encode()
        if m:
            out += unescape(m.group(1), where)
            pos = m.end()
    return bytes(out)


def header(line: str, where: str) -> tuple[str, str, str]:
    """`=== ID [mode=M flavor=F]` -> (id, mode, flavor)."""
    words = line.split(" ")
    if len(words) not in (2, 4) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9-]*", words[1]):
        raise CaseFileError(f"{where}: expected '=== ID' or '=== ID mode=M flavor=F'")
    if len(words) == 2:
        return words[1], "", ""
    if not (words[2].startswith("mode=") and words[3].startswith("flavor=")):
        raise CaseFileError(f"{where}: expected mode=M flavor=F after the id")
    mode = decode(words[2][len("mode=") :], where).decode()
    flavor = decode(words[3][len("flavor=") :], where).decode()
    return words[1], mode, flavor


def input_bytes(lines: list[str], base: bytes, where: str) -> bytes:
    """The input section: each line and a newline; `@base` is base.toml; a last line NO_EOL
    takes the final newline away."""
    out = bytearray()
    for n, line in enumerate(lines, 1):
        if line == NO_EOL:
            if not out.endswith(b"\n") or n != len(lines):
                raise CaseFileError(f"{where}: '{NO_EOL}' must be the input's last line")
            del out[-1]
        elif line == "@base":
            out += base
        else:
            out += decode(line, where) + b"\n"
    return bytes(out)


def read_cases(path: Path, base: bytes) -> list[Case]:
    """Every case of one <stage>.cases file, in file order."""
    stage = path.stem
    lines = path.read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    cases: list[Case] = []
    i = 0
    while i < len(lines) and not lines[i].startswith("=== "):
        i += 1  # the file's own comments
    while i < len(lines):
        where = f"{path.name}:{i + 1}"
        case_id, mode, flavor = header(lines[i], where)
        start = i
        i += 1
        body = i
        while i < len(lines) and lines[i] != "---":
            if lines[i].startswith("=== "):
                raise CaseFileError(f"{where}: case {case_id} has no '---' line")
            i += 1
        if i == len(lines):
            raise CaseFileError(f"{where}: case {case_id} has no '---' line")
        data = input_bytes(lines[body:i], base, where)
        i += 1
        want: list[bytes] = []
        while i < len(lines) and not lines[i].startswith("=== "):
            if lines[i] and not lines[i].startswith("#"):
                want.append(decode(lines[i], f"{path.name}:{i + 1}"))
            i += 1
        cases.append(Case(stage, case_id, start + 1, data, mode, flavor, b"\n".join(want)))
    return cases


def load(directory: Path = CASES_DIR) -> list[Case]:
    """The cases of every stage file of `directory`, stage by stage; ids unique per stage."""
    base = (directory / "base.toml").read_bytes()
    found = sorted(p.stem for p in directory.glob("*.cases"))
    if found != sorted(STAGES):
        raise CaseFileError(f"{directory}: expected exactly {', '.join(STAGES)}.cases, found {found}")
    cases: list[Case] = []
    for stage in STAGES:
        these = read_cases(directory / f"{stage}.cases", base)
        ids = [c.id for c in these]
        if len(ids) != len(set(ids)):
            raise CaseFileError(f"{stage}.cases: an id is used twice")
        cases += these
    return cases


# ---- the dump: what a stage returned, as the case files write it ----


def dump_value(value: Value) -> bytes:
    if isinstance(value, bool):
        return b"true" if value else b"false"
    if isinstance(value, int):
        return str(value).encode()
    return b'"' + value.encode() + b'"'


def dump_rejected(out: Rejected) -> bytes:
    return f"rejected {out.code} {out.message}".encode()


def dump_parse(config: Config) -> bytes:
    """`parsed`, then the table headers and entries in line order: `LINE [TABLE]`,
    `LINE TABLE.KEY = VALUE`."""
    rows = [(line, f"{line} [{table}]".encode()) for table, line in config.table_line.items()]
    rows += [(e.line, f"{e.line} {e.table}.{e.key} = ".encode() + dump_value(e.value)) for e in config.entries]
    return b"\n".join([b"parsed"] + [text for _, text in sorted(rows)])


def dump_schema(config: Config, fields: Fields) -> bytes:
    """`schema family=F`, then the field of each entry outside [parity], in file order, with
    the line and value the fields hold; `extra fields N` if more fields are set."""
    rows = [f"schema family={fields.family}".encode()]
    shown = 0
    for e in config.entries:
        if e.table == "parity":
            continue
        if e.key not in fields.values:
            rows.append(f"{e.line} {e.table}.{e.key} missing".encode())
            continue
        shown += 1
        rows.append(f"{fields.lines[e.key]} {e.table}.{e.key} = ".encode() + dump_value(fields.values[e.key]))
    if len(fields.values) != shown:
        rows.append(f"extra fields {len(fields.values) - shown}".encode())
    return b"\n".join(rows)


def run_case(case: Case) -> bytes:
    """The dump of the Python engine's stage on the case's input."""
    if case.stage == "encoding":
        bad = check_encoding(case.data)
        return b"ok" if bad is None else dump_rejected(bad)
    if case.stage == "emit":
        out = emit(case.data, case.mode, case.flavor)
        return dump_rejected(out) if isinstance(out, Rejected) else b"emitted"
    config = parse_config(case.data.decode("utf-8"))
    if isinstance(config, Rejected):
        return dump_rejected(config)
    if case.stage == "parse":
        return dump_parse(config)
    fields: Union[Fields, Rejected] = check_schema(config)
    return dump_rejected(fields) if isinstance(fields, Rejected) else dump_schema(config, fields)


def name(case: Case) -> str:
    return f"{case.stage}:{case.id}"


def failures(directory: Path = CASES_DIR) -> list[str]:
    """One line per case whose dump is not the expected text (empty when all pass)."""
    out = []
    for case in load(directory):
        got = run_case(case)
        if got != case.expected:
            out.append(f"FAIL {name(case)} (line {case.line})\n  want: {case.expected!r}\n   got: {got!r}")
    return out


def main(argv: list[str]) -> int:
    bad = failures(Path(argv[0]) if argv else CASES_DIR)
    for line in bad:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
