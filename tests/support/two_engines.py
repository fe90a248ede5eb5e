"""Both engines behind one call, for tests that check semantics in both at once."""

from __future__ import annotations

from rocke_py import cbridge
from rocke_py import engine as py_engine
from rocke_py.configtext import config_scalar
from rocke_py.engine.result import Emitted, Rejected

BASE_PROBLEM = {"N": 8, "Hi": 56, "Wi": 56, "C": 64, "K": 64, "Y": 3, "X": 3, "pH": 1, "pW": 1}


def config_text(family: str, arch: str = "gfx950", problem: dict | None = None, **spec: object) -> str:
    """A config from the baseline problem with `problem` overrides and `spec` fields."""
    merged = dict(BASE_PROBLEM)
    merged.update(problem or {})
    lines = ["[target]", f'arch = "{arch}"', "", "[problem]"]
    lines += [f"{k} = {config_scalar(v)}" for k, v in merged.items() if v is not None]
    lines += ["", "[spec]", f'family = "{family}"']
    lines += [f"{k} = {config_scalar(v)}" for k, v in spec.items()]
    return "\n".join(lines) + "\n"


def both(text: str | bytes, mode: str = "spec", flavor: str = "llvm22") -> Emitted | Rejected:
    """Runs both engines; asserts they agree and returns the common result."""
    data = text.encode() if isinstance(text, str) else text
    py = py_engine.emit(data, mode, flavor)
    c = cbridge.emit(data, mode, flavor)
    assert py == c, f"engines disagree:\n py: {py}\n  c: {c}"
    return py


def spec_lines(text: str) -> dict[str, str]:
    """Mode `spec` of both engines (which must agree), as key -> value."""
    out = both(text)
    assert isinstance(out, Emitted), out
    pairs = [line.split(" = ", 1) for line in out.text.splitlines()[1:]]
    return {k: v for k, v in pairs}


def rejection(text: str) -> Rejected:
    out = both(text)
    assert isinstance(out, Rejected), f"expected a rejection, got:\n{getattr(out, 'text', out)}"
    return out
