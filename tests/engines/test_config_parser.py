"""Unit tests of the Python engine's input stages: check_encoding (contract §2 step 5),
parse_config (§3) and check_schema (§4), and the entry checks of emit() (§2), each error
asserted by code and exact message.

The C twin is rocke_c/tests/test_config.c; tests/parity/test_bad_configs_parity.py checks that the
two engines agree on the bad-input corpus. Expected values here come from
docs/engine-contract.md, never from running an engine."""

from __future__ import annotations

import pytest

from rocke_py.engine import emit
from rocke_py.engine.config import Config, Entry, check_encoding, parse_config
from rocke_py.engine.result import Rejected
from rocke_py.engine.schema import KEYS, Fields, check_schema, find_key

MAX = 2147483647
MIN = -2147483648

BASE = (
    '[target]\narch = "gfx950"\n\n[problem]\nN = 8\nHi = 56\nWi = 56\nC = 64\nK = 64\n'
    'Y = 3\nX = 3\n\n[spec]\nfamily = "wgrad"\n'
)  # 14 lines; line 15 is next
NEXT = 15


def parsed(text: str) -> Config:
    out = parse_config(text)
    assert isinstance(out, Config), out
    return out


def entries(text: str) -> list[tuple[str, str, int, object]]:
    return [(e.table, e.key, e.line, e.value) for e in parsed(text).entries]


def schema(text: str) -> Fields | Rejected:
    config = parse_config(text)
    assert isinstance(config, Config), config
    return check_schema(config)


def with_spec(*lines: str, family: str = "wgrad") -> str:
    return BASE.replace('family = "wgrad"', f'family = "{family}"') + "".join(f"{x}\n" for x in lines)


def with_problem(key: str, value: str) -> str:
    """BASE with `key = value` in [problem]: replacing the key's line, or as line 12."""
    lines = BASE.split("\n")
    for i, line in enumerate(lines):
        if line.startswith(f"{key} = "):
            lines[i] = f"{key} = {value}"
            return "\n".join(lines)
    lines[11] = f"{key} = {value}"  # the blank line before [spec]
    return "\n".join(lines)


# ======================================================================================
# §2 step 5: encoding
# ======================================================================================

ENCODING_OK = {
    "empty": b"",
    "ascii": BASE.encode(),
    "two-byte": "# é\n".encode(),
    "three-byte": "# \u20ac \ufeff\n".encode(),
    "four-byte": "# \U0001f600\n".encode(),
    "max-code-point": b"# \xf4\x8f\xbf\xbf\n",
    "last-before-surrogates": b"# \xed\x9f\xbf\n",
    "first-after-surrogates": b"# \xee\x80\x80\n",
    "control-chars-are-not-encoding": b"\x01\x7f\r\x0b",
}

ENCODING_BAD = {
    "nul-line-1": (b"\x00", "line 1: NUL byte"),
    "nul-line-5": (BASE.encode().replace(b"N = 8", b"N = 8\x00"), "line 5: NUL byte"),
    "ff": (b"a\nb\n\xff", "line 3: invalid UTF-8"),
    "fe": (b"\xfe", "line 1: invalid UTF-8"),
    "latin1": (b"# caf\xe9\n", "line 1: invalid UTF-8"),
    "lone-continuation": (b"\n\x80", "line 2: invalid UTF-8"),
    "overlong-c0": (b"\xc0\xaf", "line 1: invalid UTF-8"),
    "overlong-c1": (b"\xc1\xbf", "line 1: invalid UTF-8"),
    "overlong-e0": (b"\xe0\x80\xaf", "line 1: invalid UTF-8"),
    "overlong-e0-9f": (b"\xe0\x9f\xbf", "line 1: invalid UTF-8"),
    "overlong-f0": (b"\xf0\x80\x80\xaf", "line 1: invalid UTF-8"),
    "overlong-f0-8f": (b"\xf0\x8f\xbf\xbf", "line 1: invalid UTF-8"),
    "surrogate-high": (b"\xed\xa0\x80", "line 1: invalid UTF-8"),
    "surrogate-low": (b"\xed\xbf\xbf", "line 1: invalid UTF-8"),
    "above-10ffff": (b"\xf4\x90\x80\x80", "line 1: invalid UTF-8"),
    "f5": (b"\xf5\x80\x80\x80", "line 1: invalid UTF-8"),
    "truncated-2": (b"\n\n\xc3", "line 3: invalid UTF-8"),
    "truncated-3": (b"\xe2\x82", "line 1: invalid UTF-8"),
    "truncated-4": (b"\xf0\x9f\x98", "line 1: invalid UTF-8"),
    "bad-continuation": (b"\xe2\x41\x82", "line 1: invalid UTF-8"),
    "newline-inside-sequence": (b"\xe2\n\x82", "line 1: invalid UTF-8"),
    "nul-before-bad": (b"\n\x00\n\xff", "line 2: NUL byte"),
    "bad-before-nul": (b"\n\xff\n\x00", "line 2: invalid UTF-8"),
}


@pytest.mark.parametrize("data", ENCODING_OK.values(), ids=ENCODING_OK.keys())
def test_encoding_ok(data: bytes) -> None:
    assert check_encoding(data) is None


@pytest.mark.parametrize("data,message", ENCODING_BAD.values(), ids=ENCODING_BAD.keys())
def test_encoding_rejected(data: bytes, message: str) -> None:
    assert check_encoding(data) == Rejected("E_ENCODING", message)


# ======================================================================================
# §3: parse, good input
# ======================================================================================

PARSE_GOOD = {
    "empty": ("", []),
    "only-comments": ("# one\n  # two\n\t# three", []),
    "blank-lines": ("\n\n \t \n", []),
    "every-table": (
        '[parity]\nexpect = "emit"\n[target]\narch = "gfx942"\n[problem]\nN = 1\n[spec]\nfamily = "fwd"\n',
        [
            ("parity", "expect", 2, "emit"),
            ("target", "arch", 4, "gfx942"),
            ("problem", "N", 6, 1),
            ("spec", "family", 8, "fwd"),
        ],
    ),
    "comments-after-values": (
        '[spec] # the spec\nrelu = true # on\nname = "a#b"  # not a comment inside\nsplit_k = 4#glued\n',
        [("spec", "relu", 2, True), ("spec", "name", 3, "a#b"), ("spec", "split_k", 4, 4)],
    ),
    "whitespace-everywhere": (
        "\t[ spec ]\t\n   tile_m\t=\t64   \nbias=3\n",
        [("spec", "tile_m", 2, 64), ("spec", "bias", 3, 3)],
    ),
    "escapes": (
        '[parity]\na = "q\\"q"\nb = "back\\\\slash"\nc = "n\\nl"\nd = "t\\tt"\ne = ""\nf = "\\\\"\n',
        [
            ("parity", "a", 2, 'q"q'),
            ("parity", "b", 3, "back\\slash"),
            ("parity", "c", 4, "n\nl"),
            ("parity", "d", 5, "t\tt"),
            ("parity", "e", 6, ""),
            ("parity", "f", 7, "\\"),
        ],
    ),
    "raw-tab-and-unicode-in-string": (
        '[parity]\nd = "a\tb é \u2028 \ufeff"\n',
        [("parity", "d", 2, "a\tb é \u2028 \ufeff")],
    ),
    "signs-and-limits": (
        "[spec]\na = 0\nb = -0\nc = +0\nd = +7\ne = -7\nf = 2147483647\ng = -2147483648\nh = +2147483647\n",
        [
            ("spec", "a", 2, 0),
            ("spec", "b", 3, 0),
            ("spec", "c", 4, 0),
            ("spec", "d", 5, 7),
            ("spec", "e", 6, -7),
            ("spec", "f", 7, MAX),
            ("spec", "g", 8, MIN),
            ("spec", "h", 9, MAX),
        ],
    ),
    "booleans": (
        "[spec]\nrelu = true\nunroll_k = false\n",
        [("spec", "relu", 2, True), ("spec", "unroll_k", 3, False)],
    ),
    "crlf": (
        '[target]\r\narch = "gfx950"\r\n\r\n[problem]\r\nN = 8\r\n',
        [("target", "arch", 2, "gfx950"), ("problem", "N", 5, 8)],
    ),
    "mixed-lf-crlf": ('[target]\narch = "gfx950"\r\n', [("target", "arch", 2, "gfx950")]),
    "no-final-newline": ('[target]\narch = "gfx950"', [("target", "arch", 2, "gfx950")]),
    "bare-name-chars": (
        "[parity]\nA-b_9 = 1\n-- = 2\n_ = 3\n0 = 4\n",
        [("parity", "A-b_9", 2, 1), ("parity", "--", 3, 2), ("parity", "_", 4, 3), ("parity", "0", 5, 4)],
    ),
    "name-64-chars": ("[parity]\n" + "k" * 64 + " = 1\n", [("parity", "k" * 64, 2, 1)]),
    "same-key-other-table": ("[parity]\nN = 1\n[problem]\nN = 2\n", [("parity", "N", 2, 1), ("problem", "N", 4, 2)]),
    "unchecked-parity-values": (
        '[parity]\nexpect = "reject:X"\nisa = "v_mfma"\nanything = true\n',
        [("parity", "expect", 2, "reject:X"), ("parity", "isa", 3, "v_mfma"), ("parity", "anything", 4, True)],
    ),
}


@pytest.mark.parametrize("text,want", PARSE_GOOD.values(), ids=PARSE_GOOD.keys())
def test_parse_good(text: str, want: list) -> None:
    got = entries(text)
    assert got == want
    for (_, _, _, value), (_, _, _, expected) in zip(got, want):
        assert type(value) is type(expected)  # True is not 1


def test_parse_table_lines() -> None:
    config = parsed("# c\n[spec]\n\n[target]\n[parity]\n")
    assert config.table_line == {"spec": 2, "target": 4, "parity": 5}


def test_parse_entries_keep_file_order_across_tables() -> None:
    config = parsed("[spec]\nb = 1\n[problem]\na = 2\n[parity]\nc = 3\n")
    assert [e.key for e in config.entries] == ["b", "a", "c"]
    assert config.entries[0] == Entry("spec", "b", 2, 1)


def test_parse_base_has_every_table_line() -> None:
    assert parsed(BASE).table_line == {"target": 1, "problem": 4, "spec": 13}


# ======================================================================================
# §3: parse, every error message
# ======================================================================================

LONG = "k" * 65
INVALID = 'invalid value (expected an integer, true, false or a "string")'

PARSE_BAD = {
    # 1. control characters
    "control-01": ("[spec]\na = 1\x01\n", "E_SYNTAX", "line 2: control character 0x01"),
    "control-1f": ("\x1f", "E_SYNTAX", "line 1: control character 0x1F"),
    "control-7f": ("# \x7f", "E_SYNTAX", "line 1: control character 0x7F"),
    "control-in-comment": ("# ok\n# \x08\n", "E_SYNTAX", "line 2: control character 0x08"),
    "control-in-string": ('[spec]\nname = "a\x1bb"\n', "E_SYNTAX", "line 2: control character 0x1B"),
    "control-first-of-two": ("\x02\x01", "E_SYNTAX", "line 1: control character 0x02"),
    "control-before-other-errors": ("[bogus] \x03", "E_SYNTAX", "line 1: control character 0x03"),
    "vertical-tab": ("[spec]\x0b\n", "E_SYNTAX", "line 1: control character 0x0B"),
    "form-feed": ("\x0c\n", "E_SYNTAX", "line 1: control character 0x0C"),
    "lone-cr-mid-line": ("[spec]\ra = 1\n", "E_SYNTAX", "line 1: control character 0x0D"),
    "lone-cr-at-eof": ("[spec]\n\r", "E_SYNTAX", "line 2: control character 0x0D"),
    "lone-cr-eof-after-value": ("[spec]\na = 1\r", "E_SYNTAX", "line 2: control character 0x0D"),
    "cr-cr-lf": ("[spec]\r\r\n", "E_SYNTAX", "line 1: control character 0x0D"),
    # 3. headers
    "header-empty": ("[]", "E_SYNTAX", "line 1: expected a table name after '['"),
    "header-blank": ("[  ]", "E_SYNTAX", "line 1: expected a table name after '['"),
    "header-array-of-tables": ("[[spec]]", "E_SYNTAX", "line 1: expected a table name after '['"),
    "header-quoted": ('["spec"]', "E_SYNTAX", "line 1: expected a table name after '['"),
    "header-bom-name": ("[\ufeffspec]", "E_SYNTAX", "line 1: expected a table name after '['"),
    "header-unclosed": ("[spec", "E_SYNTAX", "line 1: expected ']' after table name 'spec'"),
    "header-unclosed-comment": ("[spec # x", "E_SYNTAX", "line 1: expected ']' after table name 'spec'"),
    "header-space-in-name": ("[sp ec]", "E_SYNTAX", "line 1: expected ']' after table name 'sp'"),
    "header-dotted": ("[spec.a]", "E_SYNTAX", "line 1: expected ']' after table name 'spec'"),
    "header-trailing-text": ("[spec] x", "E_SYNTAX", "line 1: unexpected text after table header [spec]"),
    "header-double-close": ("[spec]]", "E_SYNTAX", "line 1: unexpected text after table header [spec]"),
    "header-name-too-long": (f"[{LONG}]", "E_SYNTAX", "line 1: name longer than 64 characters"),
    "header-long-before-close": (f"[{LONG}", "E_SYNTAX", "line 1: name longer than 64 characters"),
    "unknown-table": (
        "[specs]",
        "E_UNKNOWN_TABLE",
        "line 1: unknown table [specs] (expected [parity], [target], [problem] or [spec])",
    ),
    "unknown-table-case": (
        "\n[Spec]",
        "E_UNKNOWN_TABLE",
        "line 2: unknown table [Spec] (expected [parity], [target], [problem] or [spec])",
    ),
    "duplicate-table": (
        "[spec]\n\n[target]\n[spec]\n",
        "E_DUPLICATE_KEY",
        "line 4: table [spec] is defined twice (first on line 1)",
    ),
    "duplicate-parity": (
        "[parity]\n[parity]\n",
        "E_DUPLICATE_KEY",
        "line 2: table [parity] is defined twice (first on line 1)",
    ),
    # 4. keys
    "no-key": ("[spec]\n= 1\n", "E_SYNTAX", "line 2: expected a key, a table header or a comment"),
    "quoted-key": ('[spec]\n"a" = 1\n', "E_SYNTAX", "line 2: expected a key, a table header or a comment"),
    "literal-key": ("[spec]\n'a' = 1\n", "E_SYNTAX", "line 2: expected a key, a table header or a comment"),
    "non-ascii-key": ("[spec]\né = 1\n", "E_SYNTAX", "line 2: expected a key, a table header or a comment"),
    "bom": ("\ufeff[spec]\n", "E_SYNTAX", "line 1: expected a key, a table header or a comment"),
    "stray-bracket": ("[spec]\n]\n", "E_SYNTAX", "line 2: expected a key, a table header or a comment"),
    "key-too-long": (f"[spec]\n{LONG} = 1\n", "E_SYNTAX", "line 2: name longer than 64 characters"),
    "key-too-long-no-equals": (f"{LONG}", "E_SYNTAX", "line 1: name longer than 64 characters"),
    "missing-equals": ("[spec]\na 1\n", "E_SYNTAX", "line 2: expected '=' after key 'a'"),
    "key-alone": ("[spec]\na", "E_SYNTAX", "line 2: expected '=' after key 'a'"),
    "colon": ("[spec]\na: 1\n", "E_SYNTAX", "line 2: expected '=' after key 'a'"),
    "dotted-key": ("[spec]\na.b = 1\n", "E_SYNTAX", "line 2: expected '=' after key 'a'"),
    "space-in-key": ("[spec]\nsplit k = 1\n", "E_SYNTAX", "line 2: expected '=' after key 'split'"),
    "missing-value": ("[spec]\na =\n", "E_SYNTAX", "line 2: key 'a': missing value"),
    "missing-value-ws": ("[spec]\na = \t \n", "E_SYNTAX", "line 2: key 'a': missing value"),
    "missing-value-comment": ("[spec]\na = # c\n", "E_SYNTAX", "line 2: key 'a': missing value"),
    # strings
    "unterminated": ('[spec]\na = "abc\n', "E_SYNTAX", "line 2: key 'a': unterminated string"),
    "unterminated-escaped-quote": ('[spec]\na = "abc\\"\n', "E_SYNTAX", "line 2: key 'a': unterminated string"),
    "unterminated-backslash-eol": ('[spec]\na = "abc\\\n', "E_SYNTAX", "line 2: key 'a': unterminated string"),
    "unterminated-at-eof": ('[spec]\na = "', "E_SYNTAX", "line 2: key 'a': unterminated string"),
    "escape-x": ('[spec]\na = "\\x41"\n', "E_SYNTAX", "line 2: key 'a': unsupported escape in string"),
    "escape-u": ('[spec]\na = "\\u0041"\n', "E_SYNTAX", "line 2: key 'a': unsupported escape in string"),
    "escape-r": ('[spec]\na = "\\r"\n', "E_SYNTAX", "line 2: key 'a': unsupported escape in string"),
    "escape-space": ('[spec]\na = "\\ "\n', "E_SYNTAX", "line 2: key 'a': unsupported escape in string"),
    "escape-non-ascii": ('[spec]\na = "\\é"\n', "E_SYNTAX", "line 2: key 'a': unsupported escape in string"),
    "escape-before-unterminated": ('[spec]\na = "\\q', "E_SYNTAX", "line 2: key 'a': unsupported escape in string"),
    "string-trailing-text": ('[spec]\na = "x" y\n', "E_SYNTAX", "line 2: key 'a': unexpected text after the value"),
    "string-glued-text": ('[spec]\na = "x"y\n', "E_SYNTAX", "line 2: key 'a': unexpected text after the value"),
    "multi-line-basic": ('[spec]\na = """x"""\n', "E_SYNTAX", "line 2: key 'a': unexpected text after the value"),
    "multi-line-open": ('[spec]\na = """\nx\n"""\n', "E_SYNTAX", "line 2: key 'a': unexpected text after the value"),
    "literal-string": ("[spec]\na = 'x'\n", "E_SYNTAX", f"line 2: key 'a': {INVALID}"),
    "multi-line-literal": ("[spec]\na = '''x'''\n", "E_SYNTAX", f"line 2: key 'a': {INVALID}"),
    # tokens
    "float": ("[spec]\na = 1.5\n", "E_SYNTAX", f"line 2: key 'a': {INVALID}"),
    "float-leading-dot": ("[spec]\na = .5\n", "E_SYNTAX", f"line 2: key 'a': {INVALID}"),
    "exponent": ("[spec]\na = 1e3\n", "E_SYNTAX", f"line 2: key 'a': {INVALID}"),
    "inf": ("[spec]\na = inf\n", "E_SYNTAX", f"line 2: key 'a': {INVALID}"),
    "nan": ("[spec]\na = -nan\n", "E_SYNTAX", f"line 2: key 'a': {INVALID}"),
    "hex": ("[spec]\na = 0x10\n", "E_SYNTAX", f"line 2: key 'a': {INVALID}"),
    "octal": ("[spec]\na = 0o17\n", "E_SYNTAX", f"line 2: key 'a': {INVALID}"),
    "binary": ("[spec]\na = 0b1\n", "E_SYNTAX", f"line 2: key 'a': {INVALID}"),
    "underscores": ("[spec]\na = 1_000\n", "E_SYNTAX", f"line 2: key 'a': {INVALID}"),
    "leading-zero": ("[spec]\na = 01\n", "E_SYNTAX", f"line 2: key 'a': {INVALID}"),
    "leading-zeros-negative": ("[spec]\na = -007\n", "E_SYNTAX", f"line 2: key 'a': {INVALID}"),
    "sign-only": ("[spec]\na = +\n", "E_SYNTAX", f"line 2: key 'a': {INVALID}"),
    "double-sign": ("[spec]\na = +-1\n", "E_SYNTAX", f"line 2: key 'a': {INVALID}"),
    "unicode-digit": ("[spec]\na = \u0661\n", "E_SYNTAX", f"line 2: key 'a': {INVALID}"),
    "fullwidth-digit": ("[spec]\na = \uff11\n", "E_SYNTAX", f"line 2: key 'a': {INVALID}"),
    "capital-true": ("[spec]\na = True\n", "E_SYNTAX", f"line 2: key 'a': {INVALID}"),
    "yes": ("[spec]\na = yes\n", "E_SYNTAX", f"line 2: key 'a': {INVALID}"),
    "array": ("[spec]\na = [1, 2]\n", "E_SYNTAX", f"line 2: key 'a': {INVALID}"),
    "empty-array": ("[spec]\na = []\n", "E_SYNTAX", f"line 2: key 'a': {INVALID}"),
    "inline-table": ("[spec]\na = { b = 1 }\n", "E_SYNTAX", f"line 2: key 'a': {INVALID}"),
    "date": ("[spec]\na = 1979-05-27\n", "E_SYNTAX", f"line 2: key 'a': {INVALID}"),
    "number-then-quote": ('[spec]\na = 1"x"\n', "E_SYNTAX", f"line 2: key 'a': {INVALID}"),
    "double-equals": ("[spec]\na == 1\n", "E_SYNTAX", f"line 2: key 'a': {INVALID}"),
    "trailing-number": ("[spec]\na = 1 2\n", "E_SYNTAX", "line 2: key 'a': unexpected text after the value"),
    "trailing-word": ("[spec]\na = true false\n", "E_SYNTAX", "line 2: key 'a': unexpected text after the value"),
    "u2028-is-not-whitespace": ("[spec]\na = 1\u2028\n", "E_SYNTAX", f"line 2: key 'a': {INVALID}"),
    "nel-is-not-whitespace": ("[spec]\na = 1\u0085\n", "E_SYNTAX", f"line 2: key 'a': {INVALID}"),
    # ranges
    "int32-max-plus-1": ("[spec]\na = 2147483648\n", "E_RANGE", "line 2: key 'a': integer is outside the 32-bit range"),
    "int32-min-minus-1": (
        "[spec]\na = -2147483649\n",
        "E_RANGE",
        "line 2: key 'a': integer is outside the 32-bit range",
    ),
    "int32-plus-sign-over": (
        "[spec]\na = +2147483648\n",
        "E_RANGE",
        "line 2: key 'a': integer is outside the 32-bit range",
    ),
    "ten-digits-over": ("[spec]\na = 9999999999\n", "E_RANGE", "line 2: key 'a': integer is outside the 32-bit range"),
    "eleven-digits": ("[spec]\na = 10000000000\n", "E_RANGE", "line 2: key 'a': integer is outside the 32-bit range"),
    "forty-digits": (
        "[spec]\na = " + "9" * 40 + "\n",
        "E_RANGE",
        "line 2: key 'a': integer is outside the 32-bit range",
    ),
    "forty-digits-negative": (
        "[spec]\na = -" + "1" * 40 + "\n",
        "E_RANGE",
        "line 2: key 'a': integer is outside the 32-bit range",
    ),
    "five-thousand-digits": (
        "[spec]\na = " + "7" * 5000 + "\n",
        "E_RANGE",
        "line 2: key 'a': integer is outside the 32-bit range",
    ),
    "range-before-trailing-text": (
        "[spec]\na = 2147483648 x\n",
        "E_RANGE",
        "line 2: key 'a': integer is outside the 32-bit range",
    ),
    # placement
    "outside-any-table": ("a = 1\n[spec]\n", "E_UNKNOWN_KEY", "line 1: key 'a' is outside any table"),
    "outside-after-comment": ("# c\n\nN = 8\n", "E_UNKNOWN_KEY", "line 3: key 'N' is outside any table"),
    "syntax-before-outside": ("a = 1.5\n", "E_SYNTAX", f"line 1: key 'a': {INVALID}"),
    "duplicate-key": (
        "[problem]\nN = 8\nHi = 1\nN = 8\n",
        "E_DUPLICATE_KEY",
        "line 4: key 'N' in [problem] is set twice (first on line 2)",
    ),
    "duplicate-key-other-type": (
        '[spec]\nrelu = true\nrelu = "x"\n',
        "E_DUPLICATE_KEY",
        "line 3: key 'relu' in [spec] is set twice (first on line 2)",
    ),
    "duplicate-key-parity": (
        "[parity]\nx = 1\nx = 1\n",
        "E_DUPLICATE_KEY",
        "line 3: key 'x' in [parity] is set twice (first on line 2)",
    ),
    "first-error-wins": ("[spec]\na = 1.5\n[bogus]\n", "E_SYNTAX", f"line 2: key 'a': {INVALID}"),
    "error-on-last-line-without-newline": ("[spec]\n\n\na = ", "E_SYNTAX", "line 4: key 'a': missing value"),
    "crlf-line-numbers": ("[spec]\r\n\r\na = 1.5\r\n", "E_SYNTAX", f"line 3: key 'a': {INVALID}"),
}


@pytest.mark.parametrize("text,code,message", PARSE_BAD.values(), ids=PARSE_BAD.keys())
def test_parse_rejected(text: str, code: str, message: str) -> None:
    assert parse_config(text) == Rejected(code, message)


def test_parse_messages_never_echo_values() -> None:
    secret = "SECRETVALUE"
    for text in (
        f'[spec]\na = "{secret}\n',
        f'[spec]\na = "{secret}\\q"\n',
        f"[spec]\na = {secret}\n",
        f'[spec]\na = "x" {secret}\n',
        f"[spec]\na = 1{secret}\n",
        f"[spec]\na = 9{'9' * 20}\n",
    ):
        out = parse_config(text)
        assert isinstance(out, Rejected) and secret not in out.message and "999" not in out.message


def test_parse_unknown_table_check_comes_after_the_syntax_of_the_line() -> None:
    assert parse_config("[bogus] x").code == "E_SYNTAX"
    assert parse_config("[bogus] # c").code == "E_UNKNOWN_TABLE"


# ======================================================================================
# §4: the key table, as the contract lists it (independent of schema.KEYS)
# ======================================================================================

U = (MIN, MAX)  # unbounded int
SPEC_1_65536 = (
    "tile_m",
    "tile_n",
    "tile_k",
    "warp_m",
    "warp_n",
    "warp_tile_m",
    "warp_tile_n",
    "warp_tile_k",
    "wave_size",
    "vector_size_a",
    "vector_size_b",
    "vector_size_c",
    "chiplet_wgm",
    "chiplet_num_xcds",
    "chiplet_chunk_size",
    "waves_per_eu",
)
CONTRACT: dict[tuple[str, str], tuple[str, tuple[int, int] | None, str, bool]] = {
    ("target", "arch"): ("enum", None, "FWD", True),
    **{("problem", k): ("int", (1, MAX), "FWD", True) for k in ("N", "Hi", "Wi", "C", "K", "Y", "X")},
    **{("problem", k): ("int", (1, MAX), "FWD", False) for k in ("sH", "sW", "dH", "dW", "Di", "Z", "sD", "dD")},
    **{("problem", k): ("int", (0, MAX), "FWD", False) for k in ("pH", "pW", "pD")},
    ("problem", "groups"): ("int", U, "FWD", False),
    ("spec", "family"): ("enum", None, "FWD", True),
    ("spec", "name"): ("name", None, "FWD", False),
    **{("spec", k): ("str", None, "FWD", False) for k in ("dtype_a", "dtype_b", "dtype_d", "pipeline", "epilogue")},
    **{("spec", k): ("int", (1, 65536), "FWD", False) for k in SPEC_1_65536},
    **{("spec", k): ("int", (0, 65536), "FWD", False) for k in ("lds_k_pad", "lds_layout_pad", "lds_layout_xor")},
    **{("spec", k): ("bool", None, "FWD", False) for k in ("async_dma", "unroll_k", "chiplet_swizzle", "relu")},
    **{("spec", k): ("int", U, "FWD", False) for k in ("bias", "scale", "clamp_min", "clamp_max")},
    ("spec", "lds_k_outer"): ("tri", None, "WD", False),
    ("spec", "split_k"): ("int", U, "WD", False),
    ("spec", "two_stage"): ("bool", None, "W", False),
    ("spec", "force_deterministic"): ("bool", None, "W", False),
    ("spec", "group_merge"): ("int", U, "W", False),
    ("spec", "num_load_waves"): ("int", (1, 65536), "D", False),
    ("spec", "cshuffle_no_alias"): ("bool", None, "D", False),
}
FAMILY_OF = {"F": "fwd", "W": "wgrad", "D": "dgrad"}
KINDS = {"an integer": "7", "a boolean": "true", "a string": '"x"'}
EXPECTED = {
    "int": "an integer",
    "bool": "a boolean",
    "str": "a string",
    "enum": "a string",
    "name": "a string",
    "tri": 'true, false or "auto"',
}


def test_key_table_is_the_contracts() -> None:
    assert {(k.table, k.name) for k in KEYS} == set(CONTRACT)
    for (table, name), (type_, bounds, families, required) in CONTRACT.items():
        key = find_key(table, name)
        assert key is not None and key.type == type_, name
        assert sorted(key.families) == sorted(families) and key.required == required, name
        if bounds is not None:
            assert (key.lo, key.hi) == bounds, name


def config_with(table: str, key: str, value: str) -> tuple[str, int]:
    """BASE with table.key = value (family chosen so the key applies); the key's line."""
    families = CONTRACT[(table, key)][2]
    family = "wgrad" if "W" in families else FAMILY_OF[families[0]]
    text = BASE.replace('family = "wgrad"', f'family = "{family}"')
    lines = text.rstrip("\n").split("\n")
    header = {"target": 0, "problem": 3, "spec": 12}[table]
    for i, line in enumerate(lines):
        if line.startswith(f"{key} = "):
            lines[i] = f"{key} = {value}"
            return "\n".join(lines) + "\n", i + 1
    lines.insert(header + 1, f"{key} = {value}")
    return "\n".join(lines) + "\n", header + 2


def int_keys() -> list[tuple[str, str, int, int]]:
    return [(t, k, b[0], b[1]) for (t, k), (ty, b, _, _) in CONTRACT.items() if ty == "int"]


@pytest.mark.parametrize("table,key,lo,hi", int_keys(), ids=[f"{t}.{k}" for t, k, _, _ in int_keys()])
def test_int_key_bounds(table: str, key: str, lo: int, hi: int) -> None:
    for value in (lo, hi):
        text, _ = config_with(table, key, str(value))
        fields = schema(text)
        assert isinstance(fields, Fields), fields
        assert fields.values[key] == value
    for value in (lo - 1, hi + 1):
        if MIN <= value <= MAX:
            text, line = config_with(table, key, str(value))
            assert schema(text) == Rejected(
                "E_RANGE", f"line {line}: key '{key}' in [{table}] must be between {lo} and {hi}, not {value}"
            )


@pytest.mark.parametrize("table,key", list(CONTRACT), ids=[f"{t}.{k}" for t, k in CONTRACT])
def test_every_key_rejects_every_wrong_type(table: str, key: str) -> None:
    type_ = CONTRACT[(table, key)][0]
    accepted = {"int": {"an integer"}, "bool": {"a boolean"}, "tri": {"a boolean", "a string"}}.get(type_, {"a string"})
    for kind, literal in KINDS.items():
        text, line = config_with(table, key, literal)
        out = schema(text)
        if kind in accepted:
            assert not (isinstance(out, Rejected) and out.code == "E_TYPE"), out
        else:
            assert out == Rejected(
                "E_TYPE", f"line {line}: key '{key}' in [{table}] must be {EXPECTED[type_]}, not {kind}"
            )


# ======================================================================================
# §4: schema, good input
# ======================================================================================


def test_schema_base() -> None:
    fields = schema(BASE)
    assert isinstance(fields, Fields)
    assert fields.family == "wgrad"
    assert fields.values == {
        "arch": "gfx950",
        "N": 8,
        "Hi": 56,
        "Wi": 56,
        "C": 64,
        "K": 64,
        "Y": 3,
        "X": 3,
        "family": "wgrad",
    }
    assert fields.lines["arch"] == 2 and fields.lines["X"] == 11 and fields.lines["family"] == 14


def test_schema_ignores_parity_entirely() -> None:
    text = '[parity]\narch = 7\nN = "x"\nbogus = true\ntile_m = 0\n' + BASE
    fields = schema(text)
    assert isinstance(fields, Fields) and fields.values["arch"] == "gfx950"
    assert "bogus" not in fields.values


@pytest.mark.parametrize("arch", ["gfx942", "gfx950", "gfx1151", "gfx1201", "gfx1250"])
def test_schema_every_arch(arch: str) -> None:
    fields = schema(BASE.replace("gfx950", arch))
    assert isinstance(fields, Fields) and fields.values["arch"] == arch


@pytest.mark.parametrize("family", ["fwd", "wgrad", "dgrad"])
def test_schema_every_family(family: str) -> None:
    fields = schema(with_spec(family=family))
    assert isinstance(fields, Fields) and fields.family == family


@pytest.mark.parametrize(
    "value,expected", [("true", True), ("false", False), ('"auto"', "auto")], ids=["true", "false", "auto"]
)
def test_schema_tri(value: str, expected: object) -> None:
    fields = schema(with_spec(f"lds_k_outer = {value}"))
    assert isinstance(fields, Fields) and fields.values["lds_k_outer"] == expected


def test_schema_every_table_and_type() -> None:
    text = with_spec(
        'name = "my/kernel_1"',
        'dtype_a = "bf16"',
        'pipeline = "anything goes"',
        "tile_m = 128",
        "async_dma = true",
        "bias = -5",
        "split_k = -1",
        "two_stage = false",
        "group_merge = 2",
    )
    text = text.replace("X = 3\n", "X = 3\nsH = 2\npH = 0\ngroups = -3\nDi = 4\nZ = 1\nsD = 1\npD = 0\ndD = 1\n")
    fields = schema(text)
    assert isinstance(fields, Fields), fields
    v = fields.values
    assert (v["name"], v["dtype_a"], v["pipeline"]) == ("my/kernel_1", "bf16", "anything goes")
    assert (v["tile_m"], v["async_dma"], v["bias"], v["split_k"]) == (128, True, -5, -1)
    assert (v["sH"], v["pH"], v["groups"], v["Di"], v["pD"]) == (2, 0, -3, 4, 0)


def test_schema_name_limits() -> None:
    assert isinstance(schema(with_spec('name = "' + "a" * 64 + '"')), Fields)
    assert isinstance(schema(with_spec('name = "A_z/9"')), Fields)


# ======================================================================================
# §4: schema, every error message
# ======================================================================================

RANGE_NAME = "must be 1 to 64 characters from [A-Za-z0-9_/]"
SCHEMA_BAD = {
    "unknown-key-target": (
        BASE.replace('arch = "gfx950"', 'arch = "gfx950"\nwave = 64'),
        "E_UNKNOWN_KEY",
        "line 3: unknown key 'wave' in [target]",
    ),
    "unknown-key-problem": (with_problem("Ho", "56"), "E_UNKNOWN_KEY", "line 12: unknown key 'Ho' in [problem]"),
    "unknown-key-spec": (
        with_spec("lds_layout = 1"),
        "E_UNKNOWN_KEY",
        f"line {NEXT}: unknown key 'lds_layout' in [spec]",
    ),
    "key-of-another-table": (
        with_problem("tile_m", "64"),
        "E_UNKNOWN_KEY",
        "line 12: unknown key 'tile_m' in [problem]",
    ),
    "key-case-matters": (with_problem("HI", "56"), "E_UNKNOWN_KEY", "line 12: unknown key 'HI' in [problem]"),
    "unknown-before-type": (
        with_spec("bogus = 1", "tile_m = true"),
        "E_UNKNOWN_KEY",
        f"line {NEXT}: unknown key 'bogus' in [spec]",
    ),
    "type-in-file-order": (
        with_spec("tile_m = true", "bogus = 1"),
        "E_TYPE",
        f"line {NEXT}: key 'tile_m' in [spec] must be an integer, not a boolean",
    ),
    "string-for-int": (
        with_problem("N", '"8"'),
        "E_TYPE",
        "line 5: key 'N' in [problem] must be an integer, not a string",
    ),
    "bool-for-int": (
        with_spec("tile_m = false"),
        "E_TYPE",
        f"line {NEXT}: key 'tile_m' in [spec] must be an integer, not a boolean",
    ),
    "int-for-bool": (
        with_spec("relu = 1"),
        "E_TYPE",
        f"line {NEXT}: key 'relu' in [spec] must be a boolean, not an integer",
    ),
    "string-for-bool": (
        with_spec('relu = "true"'),
        "E_TYPE",
        f"line {NEXT}: key 'relu' in [spec] must be a boolean, not a string",
    ),
    "bool-for-str": (
        with_spec("dtype_a = true"),
        "E_TYPE",
        f"line {NEXT}: key 'dtype_a' in [spec] must be a string, not a boolean",
    ),
    "int-for-str": (
        with_spec("pipeline = 3"),
        "E_TYPE",
        f"line {NEXT}: key 'pipeline' in [spec] must be a string, not an integer",
    ),
    "int-for-enum": (
        BASE.replace('"gfx950"', "950"),
        "E_TYPE",
        "line 2: key 'arch' in [target] must be a string, not an integer",
    ),
    "bool-for-family": (
        BASE.replace('"wgrad"', "true"),
        "E_TYPE",
        "line 14: key 'family' in [spec] must be a string, not a boolean",
    ),
    "int-for-name": (
        with_spec("name = 1"),
        "E_TYPE",
        f"line {NEXT}: key 'name' in [spec] must be a string, not an integer",
    ),
    "int-for-tri": (
        with_spec("lds_k_outer = 1"),
        "E_TYPE",
        f"line {NEXT}: key 'lds_k_outer' in [spec] must be true, false or \"auto\", not an integer",
    ),
    "tri-bad-string": (
        with_spec('lds_k_outer = "yes"'),
        "E_RANGE",
        f"line {NEXT}: key 'lds_k_outer' in [spec] must be true, false or \"auto\"",
    ),
    "tri-case": (
        with_spec('lds_k_outer = "Auto"'),
        "E_RANGE",
        f"line {NEXT}: key 'lds_k_outer' in [spec] must be true, false or \"auto\"",
    ),
    "tri-string-true": (
        with_spec('lds_k_outer = "true"'),
        "E_RANGE",
        f"line {NEXT}: key 'lds_k_outer' in [spec] must be true, false or \"auto\"",
    ),
    "bad-arch": (
        BASE.replace('"gfx950"', '"gfx900"'),
        "E_RANGE",
        "line 2: key 'arch' in [target] must be one of gfx942, gfx950, gfx1151, gfx1201, gfx1250",
    ),
    "arch-case": (
        BASE.replace('"gfx950"', '"GFX950"'),
        "E_RANGE",
        "line 2: key 'arch' in [target] must be one of gfx942, gfx950, gfx1151, gfx1201, gfx1250",
    ),
    "bad-family": (
        BASE.replace('"wgrad"', '"bwd"'),
        "E_RANGE",
        "line 14: key 'family' in [spec] must be one of fwd, wgrad, dgrad",
    ),
    "empty-family": (
        BASE.replace('"wgrad"', '""'),
        "E_RANGE",
        "line 14: key 'family' in [spec] must be one of fwd, wgrad, dgrad",
    ),
    "name-space": (with_spec('name = "a b"'), "E_RANGE", f"line {NEXT}: key 'name' in [spec] {RANGE_NAME}"),
    "name-empty": (with_spec('name = ""'), "E_RANGE", f"line {NEXT}: key 'name' in [spec] {RANGE_NAME}"),
    "name-65": (with_spec('name = "' + "a" * 65 + '"'), "E_RANGE", f"line {NEXT}: key 'name' in [spec] {RANGE_NAME}"),
    "name-dash": (with_spec('name = "a-b"'), "E_RANGE", f"line {NEXT}: key 'name' in [spec] {RANGE_NAME}"),
    "name-non-ascii": (with_spec('name = "é"'), "E_RANGE", f"line {NEXT}: key 'name' in [spec] {RANGE_NAME}"),
    "name-newline-escape": (with_spec('name = "a\\nb"'), "E_RANGE", f"line {NEXT}: key 'name' in [spec] {RANGE_NAME}"),
    "negative-N": (
        with_problem("N", "-8"),
        "E_RANGE",
        "line 5: key 'N' in [problem] must be between 1 and 2147483647, not -8",
    ),
    "zero-C": (
        with_problem("C", "0"),
        "E_RANGE",
        "line 8: key 'C' in [problem] must be between 1 and 2147483647, not 0",
    ),
    "minus-zero-K": (
        with_problem("K", "-0"),
        "E_RANGE",
        "line 9: key 'K' in [problem] must be between 1 and 2147483647, not 0",
    ),
    "plus-sign-printed-plain": (
        with_problem("Y", "+0"),
        "E_RANGE",
        "line 10: key 'Y' in [problem] must be between 1 and 2147483647, not 0",
    ),
    "zero-stride": (
        with_problem("sH", "0"),
        "E_RANGE",
        "line 12: key 'sH' in [problem] must be between 1 and 2147483647, not 0",
    ),
    "zero-dilation": (
        with_problem("dW", "0"),
        "E_RANGE",
        "line 12: key 'dW' in [problem] must be between 1 and 2147483647, not 0",
    ),
    "negative-pad": (
        with_problem("pW", "-1"),
        "E_RANGE",
        "line 12: key 'pW' in [problem] must be between 0 and 2147483647, not -1",
    ),
    "int32-min-size": (
        with_problem("Hi", "-2147483648"),
        "E_RANGE",
        "line 6: key 'Hi' in [problem] must be between 1 and 2147483647, not -2147483648",
    ),
    "tile-65537": (
        with_spec("tile_k = 65537"),
        "E_RANGE",
        f"line {NEXT}: key 'tile_k' in [spec] must be between 1 and 65536, not 65537",
    ),
    "tile-int32-max": (
        with_spec("tile_m = 2147483647"),
        "E_RANGE",
        f"line {NEXT}: key 'tile_m' in [spec] must be between 1 and 65536, not 2147483647",
    ),
    "lds-pad-negative": (
        with_spec("lds_k_pad = -1"),
        "E_RANGE",
        f"line {NEXT}: key 'lds_k_pad' in [spec] must be between 0 and 65536, not -1",
    ),
    "missing-everything": ("", "E_MISSING", "missing required key 'arch' in [target]"),
    "missing-arch": (BASE.replace('arch = "gfx950"\n', ""), "E_MISSING", "missing required key 'arch' in [target]"),
    "missing-target-table": (
        BASE.replace('[target]\narch = "gfx950"\n', ""),
        "E_MISSING",
        "missing required key 'arch' in [target]",
    ),
    "missing-arch-only-in-parity": (
        '[parity]\narch = "gfx950"\n' + BASE.replace('arch = "gfx950"\n', ""),
        "E_MISSING",
        "missing required key 'arch' in [target]",
    ),
    **{
        f"missing-{k}": (
            BASE.replace(f"\n{k} = ", f"\n# {k} = "),
            "E_MISSING",
            f"missing required key '{k}' in [problem]",
        )
        for k in ("N", "Hi", "Wi", "C", "K", "Y", "X")
    },
    "missing-N-and-X-reports-N": (
        BASE.replace("N = 8\n", "").replace("X = 3\n", ""),
        "E_MISSING",
        "missing required key 'N' in [problem]",
    ),
    "missing-family": (BASE.replace('family = "wgrad"\n', ""), "E_MISSING", "missing required key 'family' in [spec]"),
    "missing-spec-table": (
        BASE.replace('[spec]\nfamily = "wgrad"\n', ""),
        "E_MISSING",
        "missing required key 'family' in [spec]",
    ),
    "range-before-missing": (
        BASE.replace('family = "wgrad"', "tile_m = 0"),
        "E_RANGE",
        "line 14: key 'tile_m' in [spec] must be between 1 and 65536, not 0",
    ),
    "misfit-fwd-split-k": (
        with_spec("split_k = 2", family="fwd"),
        "E_UNKNOWN_KEY",
        f"line {NEXT}: key 'split_k' in [spec] does not apply to family 'fwd'",
    ),
    "misfit-fwd-lds-k-outer": (
        with_spec('lds_k_outer = "auto"', family="fwd"),
        "E_UNKNOWN_KEY",
        f"line {NEXT}: key 'lds_k_outer' in [spec] does not apply to family 'fwd'",
    ),
    "misfit-dgrad-two-stage": (
        with_spec("two_stage = true", family="dgrad"),
        "E_UNKNOWN_KEY",
        f"line {NEXT}: key 'two_stage' in [spec] does not apply to family 'dgrad'",
    ),
    "misfit-dgrad-group-merge": (
        with_spec("group_merge = 1", family="dgrad"),
        "E_UNKNOWN_KEY",
        f"line {NEXT}: key 'group_merge' in [spec] does not apply to family 'dgrad'",
    ),
    "misfit-wgrad-num-load-waves": (
        with_spec("num_load_waves = 4"),
        "E_UNKNOWN_KEY",
        f"line {NEXT}: key 'num_load_waves' in [spec] does not apply to family 'wgrad'",
    ),
    "misfit-wgrad-cshuffle-no-alias": (
        with_spec("cshuffle_no_alias = true"),
        "E_UNKNOWN_KEY",
        f"line {NEXT}: key 'cshuffle_no_alias' in [spec] does not apply to family 'wgrad'",
    ),
    "misfit-first-in-file-order": (
        with_spec("cshuffle_no_alias = true", "num_load_waves = 4"),
        "E_UNKNOWN_KEY",
        f"line {NEXT}: key 'cshuffle_no_alias' in [spec] does not apply to family 'wgrad'",
    ),
    "misfit-before-family-line": (
        BASE.replace('family = "wgrad"', 'split_k = 2\nfamily = "fwd"'),
        "E_UNKNOWN_KEY",
        "line 14: key 'split_k' in [spec] does not apply to family 'fwd'",
    ),
    "type-of-misfit-key-first": (
        with_spec("split_k = true", family="fwd"),
        "E_TYPE",
        f"line {NEXT}: key 'split_k' in [spec] must be an integer, not a boolean",
    ),
    "missing-before-misfit": (
        with_spec("split_k = 2", family="fwd").replace("N = 8\n", ""),
        "E_MISSING",
        "missing required key 'N' in [problem]",
    ),
}


@pytest.mark.parametrize("text,code,message", SCHEMA_BAD.values(), ids=SCHEMA_BAD.keys())
def test_schema_rejected(text: str, code: str, message: str) -> None:
    assert schema(text) == Rejected(code, message)


def test_schema_messages_never_echo_string_values() -> None:
    secret = "SECRETVALUE"
    for text in (
        BASE.replace('"gfx950"', f'"{secret}"'),
        BASE.replace('"wgrad"', f'"{secret}"'),
        with_spec(f'name = "{secret} x"'),
        with_spec(f'lds_k_outer = "{secret}"'),
        with_spec(f'relu = "{secret}"'),
        with_problem("N", f'"{secret}"'),
    ):
        out = schema(text)
        assert isinstance(out, Rejected) and secret not in out.message, out


# ======================================================================================
# §2 through emit(): the entry checks, their order, the size limit (C twin: test_config.c)
# ======================================================================================


NUL_AND_BAD = b"[target]\n\xff\n\x00"
EMIT_BAD = {
    "mode": (BASE.encode(), "asm", "llvm22", "E_MODE", "unknown mode 'asm' (expected spec, ir or ll)"),
    "mode-no-echo": (BASE.encode(), "ASM!", "llvm22", "E_MODE", "unknown mode (expected spec, ir or ll)"),
    "mode-17": (BASE.encode(), "a" * 17, "llvm22", "E_MODE", "unknown mode (expected spec, ir or ll)"),
    "mode-empty": (BASE.encode(), "", "llvm22", "E_MODE", "unknown mode (expected spec, ir or ll)"),
    "flavor": (
        BASE.encode(),
        "spec",
        "llvm99",
        "E_FLAVOR",
        "unknown flavor 'llvm99' (expected llvm20, llvm22 or llvm23)",
    ),
    "flavor-no-echo": (
        BASE.encode(),
        "spec",
        "LLVM 22",
        "E_FLAVOR",
        "unknown flavor (expected llvm20, llvm22 or llvm23)",
    ),
    "mode-before-flavor": (BASE.encode(), "x", "y", "E_MODE", "unknown mode 'x' (expected spec, ir or ll)"),
    "flavor-before-encoding": (
        NUL_AND_BAD,
        "spec",
        "y",
        "E_FLAVOR",
        "unknown flavor 'y' (expected llvm20, llvm22 or llvm23)",
    ),
    "encoding-first-of-two": (NUL_AND_BAD, "spec", "llvm22", "E_ENCODING", "line 2: invalid UTF-8"),
    "parse-after-encoding": (b"[x]\n\x00", "spec", "llvm22", "E_ENCODING", "line 2: NUL byte"),
    "empty": (b"", "spec", "llvm22", "E_MISSING", "missing required key 'arch' in [target]"),
    "crlf-lines": (b"[spec]\r\n\r\nx = 1\r\n", "spec", "llvm23", "E_UNKNOWN_KEY", "line 3: unknown key 'x' in [spec]"),
}


@pytest.mark.parametrize("data,mode,flavor,code,message", EMIT_BAD.values(), ids=EMIT_BAD.keys())
def test_emit_entry_checks(data: bytes, mode: str, flavor: str, code: str, message: str) -> None:
    assert emit(data, mode, flavor) == Rejected(code, message)


def sized_config(n: int) -> bytes:
    head = BASE.encode()
    return head + b"#" + b"x" * (n - len(head) - 2) + b"\n"


@pytest.mark.parametrize("size", [1048575, 1048576, 1048577, 10 * 1048576])
def test_emit_size_limit(size: int) -> None:
    data = sized_config(size)
    assert len(data) == size
    out = emit(data, "spec", "llvm22")
    bad_utf8 = emit(data[:-2] + b"\xff\n", "spec", "llvm22")
    if size <= 1048576:
        assert not isinstance(out, Rejected), out
        assert bad_utf8 == Rejected("E_ENCODING", "line 15: invalid UTF-8")
    else:
        too_large = Rejected("E_TOO_LARGE", f"config is {size} bytes; the limit is 1048576")
        assert out == too_large and bad_utf8 == too_large  # size before encoding


def test_emit_str_input_is_its_utf8() -> None:
    assert emit(BASE, "spec", "llvm22") == emit(BASE.encode(), "spec", "llvm22")
    assert emit("# \ud800\n", "spec", "llvm22") == Rejected("E_ENCODING", "line 1: invalid UTF-8")
