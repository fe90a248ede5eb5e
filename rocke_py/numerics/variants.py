"""The problem a config is checked on: as shipped, or its `--small` variant (the same kernel
knobs on a problem small enough for the unit tests)."""

from __future__ import annotations

from rocke_py.parity._toml import tomllib
from rocke_py.parity.newconfig import set_value

#: --small: batch, input height and width, depth at most these (every other field as shipped).
SMALL_LIMITS = {"N": 2, "Hi": 9, "Wi": 9, "Di": 4}


def small_variant(text: str, limits: dict[str, int] | None = None) -> str:
    """The config text with its [problem] shrunk to `limits` (default SMALL_LIMITS); one line
    edited per shrunk key, everything else byte for byte."""
    problem = tomllib.loads(text).get("problem", {})
    for key, cap in (limits or SMALL_LIMITS).items():
        value = problem.get(key)
        if isinstance(value, int) and value > cap:
            text = set_value(text, "problem", key, str(cap))
    return text
