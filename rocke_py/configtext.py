"""Config text, written: TOML values as the engines' config parsers and tomllib read them back.

Engine-free, like :mod:`rocke_py.facts`: the harness, the fuzzer and the tests import it.
"""

from __future__ import annotations

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def toml_string(text: str) -> str:
    """``text`` as a TOML basic string (any TOML reader, tomllib included, gives ``text`` back)."""
    out = []
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'
