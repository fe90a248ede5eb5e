"""`rocke-parity numerics`: every emitting config's small variant passes bitwise with no
hazard and no unwritten element, through either engine; the table, the JSON and the exit codes."""

from __future__ import annotations

import json

import numpy as np
import pytest
from numerics_kit import REPO, config_path

from rocke_py.exec.fp import to_f64
from rocke_py.numerics.check import check_config
from rocke_py.numerics.inputs import EXACT, build_case, reduction
from rocke_py.numerics.problem import read_problem
from rocke_py.numerics.run import select
from rocke_py.numerics.variants import small_variant
from rocke_py.parity.cli import main

CONFIGS = [c.id for c in select(REPO, [])]


def test_every_emitting_config_is_selected() -> None:
    assert len(CONFIGS) >= 41 and "dgrad/14-pointwise-stride2-zeros" in CONFIGS


# Every config's small variant bitwise at the IR level: test_ll_level.py's
# test_every_flavor_is_bitwise_and_in_lockstep, on the one IR run its ll runs follow.


THROUGH_C = ["fwd/04-async-c64", "wgrad/02-split-k4-fp16-cshuffle", "dgrad/14-pointwise-stride2-zeros"]


@pytest.mark.parametrize("cid", THROUGH_C)
def test_the_c_engine_and_real_inputs(cid: str) -> None:
    text = small_variant(config_path(cid).read_text())
    assert check_config(cid, text, engine="c").ok
    real = check_config(cid, text, real=True)
    assert real.ok and not real.bitwise and real.max_error >= 0.0


def test_sixteen_bit_split_k_inputs_keep_partial_sums_exact() -> None:
    """wgrad/09 (bf16 dW, split-K 4) at shipped size: the reduction (8·54·54 = 23,328 pixels) is thinned
    so that no partial sum passes 256, bf16's exact-integer bound."""
    case = build_case(read_problem(config_path("wgrad/09-split-k4-bf16-cshuffle").read_text()))
    dy = to_f64(case.buffers["dY"], "bf16")
    nonzero_pixels = int((dy.reshape(-1, dy.shape[-1]) != 0).any(axis=1).sum())
    assert reduction("wgrad", case.conv)[0] == 23328
    assert 0 < nonzero_pixels <= EXACT["bf16"] // 9
    assert np.abs(case.want).max() <= EXACT["bf16"]


def test_cli_table_json_and_exit_codes(tmp_path, capsys) -> None:
    out = tmp_path / "n.json"
    ids = ["fwd/03-pointwise-1x1", "dgrad/14-pointwise-stride2-zeros"]
    assert main(["numerics", *ids, "--small", "-j", "1", "--json", str(out), "--root", str(REPO)]) == 0
    text = capsys.readouterr().out
    assert "numerics OK: 2 of 2 config(s) pass, 4 launch(es) (12 runs)" in text and "0 (bitwise)" in text
    record = json.loads(out.read_text())
    assert record["passed"] and record["level"] == "both"
    assert [c["config"] for c in record["configs"]] == [i for i in ids for _ in range(6)]
    # small: the IR and every flavor; edge: the IR and llvm22
    levels = ["ir", "ll llvm20", "ll llvm22", "ll llvm23", "ir", "ll llvm22"]
    assert [c["level"] for c in record["configs"]] == levels * 2
    assert all(c["lockstep"] is None for c in record["configs"])
    assert main(["numerics", "fwd/100-unknown-epilogue", "--root", str(REPO)]) == 2
    assert main(["numerics", "nope/00", "--root", str(REPO)]) == 2
