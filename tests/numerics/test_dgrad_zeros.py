"""Strided dgrad writes every dX element: on NaN-filled outputs, the kernel
leaves no element unwritten, and without its zero phase the positions no tap reaches stay NaN."""

from __future__ import annotations

import pytest
from numerics_kit import config_path
from two_engines import config_text

from rocke_py import cbridge
from rocke_py import engine as py_engine
from rocke_py.engine import build_dgrad
from rocke_py.numerics.check import check_config

CASES = [
    {"Y": 1, "X": 1, "sH": 2, "sW": 2},  # a dropped tilde pair: only even (hi, wi) stored
    {"Y": 3, "X": 3, "sH": 2, "sW": 2, "dH": 2, "dW": 2, "pH": 2, "pW": 2},  # gcd 2: odd rows untouched
    {"Y": 1, "X": 3, "sH": 3, "sW": 1, "pW": 1},  # one axis only
    {"Y": 2, "X": 2, "sH": 3, "sW": 3, "dH": 3, "dW": 2},
    {"Y": 3, "X": 3, "sH": 2, "sW": 2, "pH": 0, "pW": 0, "Hi": 10, "Wi": 11},  # untouched edges
]


def text_of(extra: dict, **spec) -> str:
    problem = {"N": 2, "Hi": 9, "Wi": 9, "C": 64, "K": 64} | extra
    return config_text("dgrad", problem=problem, **spec)


@pytest.mark.parametrize("extra", CASES, ids=[str(i) for i in range(len(CASES))])
def test_every_element_is_written(extra: dict) -> None:
    text = text_of(extra)
    assert py_engine.emit(text, "ir", "llvm22") == cbridge.emit(text, "ir", "llvm22")
    out = check_config("case", text)
    assert out.ok, out


def test_grouped_strided_dgrad_is_written_too() -> None:
    text = text_of({"Y": 1, "X": 1, "sH": 2, "sW": 2, "groups": 2})
    assert check_config("grouped", text).ok


def test_without_the_zero_phase_the_nan_shows(monkeypatch) -> None:
    text = config_path("dgrad/14-pointwise-stride2-zeros").read_text()
    assert check_config("dgrad/14", text).ok
    monkeypatch.setattr(build_dgrad, "zero_untouched", lambda kc: None)
    out = check_config("dgrad/14", text)
    assert (out.unwritten, out.elements) == (4800, 6400) and not out.ok


def test_stride_one_and_split_k_emit_no_zero_phase() -> None:
    stride_one = text_of({"Y": 3, "X": 3, "pH": 1, "pW": 1})
    split = text_of({"Y": 1, "X": 1, "sH": 2, "sW": 2}, split_k=2, dtype_d="fp32")
    for text in (stride_one, split):
        assert "%z0" not in py_engine.emit(text, "ir", "llvm22").text
