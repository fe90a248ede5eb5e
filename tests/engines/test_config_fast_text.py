"""parse_config reads the common lines of a text in one regex pass (text_lines) and hands the
rest to parse_line; parse_config_lines sends every line through parse_line. Both give the same
result, to the repr (a bool is not an int): the same Config, or the same Rejected code and
message, on every shipped config, the bad-input corpus, the parser cases, and mutated texts
that aim at what the one pass decides itself (blank runs, headers, int32 bounds, duplicate keys
and tables, CRLF and a lone '\r', control characters in comments and strings)."""

from __future__ import annotations

import random

import fuzz_parser
import parser_cases
import pytest
from layout import REPO

from rocke_py.engine import config

# Each one a line or a piece of one, inserted or appended by mutate().
PIECES = [
    "\n",
    "\r\n",
    "\r",
    "\r\r\n",
    "\t",
    " ",
    "#",
    " # c ",
    "# =",
    '"',
    "\\",
    "[spec]",
    "[ target ]  # t",
    "[parity]",
    "[problem]\r\n",
    "[bogus]",
    "[spec",
    "key = 1",
    "key=1#",
    'k = "a\\tb"',
    'k = "x\ty"',
    'k = "x\x01y"',
    "k = true  # c\x7f",
    "k = 2147483647",
    "k = 2147483648",
    "k = -2147483648",
    "k = -2147483649",
    "k = 9999999999",
    "k = 0000000001",
    "k = 12345678901",
    "k = +0",
    "k = -0",
    "k = 1.0",
    "k =",
    "= 1",
    "a" * 64 + " = 1",
    "a" * 65 + " = 1",
    "k = 1 2",
    "\x00",
    "\x0b",
    "\x1f",
    "\x7f",
    "\x85",
    "\u2028",
    "é",
]


def shipped_texts() -> list[str]:
    return [p.read_text(encoding="utf-8") for p in sorted((REPO / "parity_configs").glob("*/*.toml"))]


def corpus_texts() -> list[str]:
    paths = sorted(p for p in (REPO / "tests" / "data" / "bad_configs").iterdir() if p.suffix in (".toml", ".bin"))
    return [p.read_bytes().decode("utf-8", "surrogateescape") for p in paths]


def case_texts() -> list[str]:
    return [c.data.decode("utf-8", "surrogateescape") for c in parser_cases.load()]


def mutate(rng: random.Random, text: str) -> str:
    lines = text.split("\n")
    op = rng.randrange(6)
    if op == 0:  # a piece at a random offset
        i = rng.randrange(len(text) + 1)
        return text[:i] + rng.choice(PIECES) + text[i:]
    if op == 1:  # a piece as a line of its own
        lines.insert(rng.randrange(len(lines) + 1), rng.choice(PIECES))
    elif op == 2:  # a line twice: a key or a table set twice
        i = rng.randrange(len(lines))
        lines.insert(rng.randrange(len(lines) + 1), lines[i])
    elif op == 3:  # a run of blank and comment lines
        run = [rng.choice(["", " ", "\t", "# c", "  # c\t", "\r"]) for _ in range(rng.randint(1, 5))]
        i = rng.randrange(len(lines) + 1)
        lines[i:i] = run
    elif op == 4:  # CRLF throughout, or at the very end
        return text.replace("\n", "\r\n") if rng.random() < 0.5 else text + "\r"
    else:  # a key line's value replaced
        keyed = [i for i, line in enumerate(lines) if "=" in line]
        if keyed:
            i = rng.choice(keyed)
            lines[i] = lines[i].split("=", 1)[0] + "= " + rng.choice(PIECES + ["1", "true", '"s"'])
    return "\n".join(lines)


def mutated_texts(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    pool = shipped_texts() + corpus_texts()
    out = [b.decode("utf-8", "surrogateescape") for b in fuzz_parser.make_cases(count // 2, seed)]
    for _ in range(count - len(out)):
        text = rng.choice(pool)
        for _ in range(rng.randint(1, 4)):
            text = mutate(rng, text)
        out.append(text)
    return out


def assert_same(texts: list[str]) -> None:
    for text in texts:
        fast, slow = config.parse_config(text), config.parse_config_lines(text)
        assert repr(fast) == repr(slow), f"{text!r}:\n fast: {fast!r}\n slow: {slow!r}"


def test_shipped_configs_parse_alike() -> None:
    texts = shipped_texts()
    assert texts
    assert_same(texts)


def test_bad_config_corpus_parses_alike() -> None:
    texts = corpus_texts()
    assert len(texts) >= 90
    assert_same(texts)


def test_parser_cases_parse_alike() -> None:
    texts = case_texts()
    assert texts
    assert_same(texts)


def test_mutated_texts_parse_alike() -> None:
    assert_same(mutated_texts(3000, 20261207))


def test_edge_texts_parse_alike() -> None:
    """What the one pass decides at the edges of the text and of its matches."""
    texts = ["", "\n", "\r\n", "\r", "#", "[spec]", "[spec]\n", "[spec]\r\n", "[spec]\nk = 1\r", "k = 1"]
    texts += ["[spec]\n" + "\n" * n + "k = 1" + "\n" * m for n in range(3) for m in range(3)]
    texts += ["[spec]\nk = 1\n[spec]\n", "[spec]\nk = 1\nk = 2\n", "[spec]\nk = 1\n[target]\nk = 2\n"]
    texts += ["[spec]\nk = 2147483648\n", "[spec]\nk = 9999999999\r\n", '[spec]\nk = "a\nb"\n']
    texts += ["[spec]\nk = \\\n1\n", "[spec]\n# a\x01\nk = 1\n", "[spec]\nk = 1\n\n \t\n# c\n\nx = 1\r\r\n"]
    assert_same(texts)


def test_the_one_pass_takes_the_common_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pass, not the fallback, reads a shipped config's lines (here all of them): else the
    tests above would compare parse_line with itself."""
    calls = []
    real = config.parse_line
    monkeypatch.setattr(config, "parse_line", lambda *args: calls.append(args) or real(*args))
    parsed = config.parse_config((REPO / "parity_configs" / "fwd" / "00-baseline.toml").read_text(encoding="utf-8"))
    assert isinstance(parsed, config.Config) and len(parsed.entries) > 10
    assert calls == []
