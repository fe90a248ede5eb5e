"""rocke_py.configtext, held to the engines' config parser.

- Its line view (``split_lines``) finds exactly the tables, keys and values the Python engine's
  parser reads, line for line, on every config that parser accepts among the parser cases
  (tests/data/parser_cases/, which the C engine's runner reads too) and the shipped configs.
- Its writers give back what they were given: a value written by ``config_scalar`` parses, in
  the engine, to that value (a string with a character no config may hold, to U+FFFD in its
  place); ``toml_string`` reads back through tomllib for any text.
- Its line editor keeps the rest of a line: a value set keeps its comment.

Each comparison is shown to catch a broken configtext: a header pattern without blanks, a
writer that forgets an escape.
"""

from __future__ import annotations

import tomllib

import parser_cases
import pytest
from hypothesis import given
from hypothesis import strategies as st
from layout import REPO

from rocke_py import configtext
from rocke_py.engine.config import Config, parse_config, parse_token

INT32 = st.integers(-(2**31), 2**31 - 1)


def accepted_texts() -> list[tuple[str, str]]:
    """(name, text) of every parser case and shipped config the engine's parser accepts."""
    out = []
    for case in parser_cases.load():
        text = case.data.decode("utf-8", "surrogateescape")
        if isinstance(parse_config(text), Config):
            out.append((parser_cases.name(case), text))
    for path in sorted((REPO / "parity_configs").rglob("*.toml")):
        text = path.read_text()
        if isinstance(parse_config(text), Config):
            out.append((path.relative_to(REPO).as_posix(), text))
    return out


ACCEPTED = accepted_texts()


def token_value(token: str, lineno: int, key: str) -> object:
    """A value token as the engine reads it (a string through tomllib, which unescapes alike)."""
    return tomllib.loads(f"v = {token}")["v"] if token.startswith('"') else parse_token(token, lineno, key)


def split_differences(text: str) -> list[str]:
    """Where configtext's line view and the engine's parser read ``text`` differently."""
    parsed = parse_config(text)
    assert isinstance(parsed, Config)
    engine = [(e.table, e.key, e.line, e.value) for e in parsed.entries]
    lines = list(enumerate(configtext.split_lines(text), 1))
    mine = [(ln.table, ln.key, n, token_value(ln.value or "", n, ln.key)) for n, ln in lines if ln.key is not None]
    headers = {ln.table: n for n, ln in lines if ln.header}
    out = [f"entries: engine {engine}, configtext {mine}"] if engine != mine else []
    if headers != parsed.table_line:
        out.append(f"tables: engine {parsed.table_line}, configtext {headers}")
    return out


def test_the_corpus_is_not_empty() -> None:
    assert len(ACCEPTED) > 150
    assert any(name.startswith("parse") for name, _ in ACCEPTED)


@pytest.mark.parametrize("name,text", ACCEPTED, ids=[name for name, _ in ACCEPTED])
def test_split_lines_reads_what_the_engine_reads(name: str, text: str) -> None:
    assert split_differences(text) == []


def test_a_header_pattern_without_blanks_is_caught(monkeypatch) -> None:
    import re

    monkeypatch.setattr(configtext, "HEADER_RE", re.compile(r"^\[([A-Za-z0-9_-]+)\](?:#.*)?$"))
    assert any(split_differences(text) for _, text in ACCEPTED)


def engine_value(scalar_text: str) -> object:
    parsed = parse_config(f"[spec]\nname = {scalar_text}\n")
    assert isinstance(parsed, Config), parsed
    (entry,) = parsed.entries
    return entry.value


@given(st.one_of(st.booleans(), INT32, st.text(max_size=40)))
def test_config_scalar_parses_back_to_its_value(value: object) -> None:
    expected = value
    if isinstance(value, str):
        expected = "".join("\ufffd" if configtext.bad_char(c) and c not in "\n\t" else c for c in value)
    assert engine_value(configtext.config_scalar(value)) == expected


@pytest.mark.parametrize("text", ['a"b', "a\\b", "line\nbreak", "tab\there", 'all "\\\n\t', "é ü ∑", ""])
def test_config_string_escapes_what_the_subset_escapes(text: str) -> None:
    assert engine_value(configtext.config_string(text)) == text
    assert tomllib.loads(f"v = {configtext.config_string(text)}")["v"] == text


def test_a_writer_that_forgets_an_escape_is_caught(monkeypatch) -> None:
    monkeypatch.setattr(configtext, "_CONFIG_ESCAPES", {'"': '\\"', "\\": "\\\\", "\n": "\\n"})
    assert engine_value(configtext.config_string("tab\there")) != "tab\there"


@given(st.text(max_size=60))
def test_toml_string_reads_back_through_tomllib(text: str) -> None:
    assert tomllib.loads(f"v = {configtext.toml_string(text)}")["v"] == text


def test_render_tables_is_a_config_the_engine_reads() -> None:
    tables = {"target": {"arch": "gfx950"}, "spec": {"family": "fwd", "tile_m": 128, "bias": True}}
    parsed = parse_config(configtext.render_tables(tables))
    assert isinstance(parsed, Config)
    assert [(e.table, e.key, e.value) for e in parsed.entries] == [
        ("target", "arch", "gfx950"),
        ("spec", "family", "fwd"),
        ("spec", "tile_m", 128),
        ("spec", "bias", True),
    ]


@pytest.mark.parametrize(
    "line,value,expected",
    [
        ("tile_m = 128  # the tile", "256", "tile_m = 256  # the tile"),
        ('name = "a # b" # c', '"x"', 'name = "x" # c'),
        ('name = "a \\" b"', '"y"', 'name = "y"'),
        ("  k=1", "2", "  k=2"),
    ],
)
def test_with_value_keeps_the_rest_of_the_line(line: str, value: str, expected: str) -> None:
    (_, key_line) = configtext.split_lines(f"[spec]\n{line}")
    assert key_line.with_value(value).text == expected


def test_set_value_keeps_the_comment_and_the_layout() -> None:
    text = '# head\n[spec]\nfamily = "fwd"  # why\n\n[problem]\nN = 1\n'
    assert configtext.set_value(text, "spec", "family", '"wgrad"') == text.replace('"fwd"', '"wgrad"')
    assert configtext.remove_key(text, "problem", "N") == '# head\n[spec]\nfamily = "fwd"  # why\n\n[problem]\n'
