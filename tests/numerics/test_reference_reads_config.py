"""The reference is built from the config itself (rocke_py/numerics/problem.py), never from an
engine's spec: an engine that misreads the config fails numerics, by a SPEC MISMATCH naming the
field or by wrong elements. Also: the whole accumulator epilogue, per split-K slice; the edge
sizes; runtime split-K degrees; the run budget."""

from __future__ import annotations

import re

import numpy as np
import pytest
from numerics_kit import REPO, config_path

from rocke_py.exec.executor import ExecError, run_kernel
from rocke_py.exec.reference import conv_fwd
from rocke_py.numerics import check as numerics_check
from rocke_py.numerics.check import check_all_sizes, check_config, over_budget
from rocke_py.numerics.inputs import build_case, runtime_degrees
from rocke_py.numerics.problem import Epilogue, read_problem
from rocke_py.numerics.run import select
from rocke_py.numerics.variants import check_sizes, edge_goals, m_extents, slices_all_real, small_variant
from rocke_py.parity.cli import main
from rocke_py.parity.commands.newconfig import set_value
from rocke_py.parity.store._toml import tomllib

REAL_EMIT = numerics_check.emit_text


def without_padding(text: str) -> str:
    return "".join(line for line in text.splitlines(keepends=True) if not re.match(r"p[HW] = ", line))


def wrapped(monkeypatch, edit, modes=("spec", "ir")) -> None:
    """An engine that reads an edited config in the given modes."""

    def emit(config: str, mode: str, engine: str) -> str:
        return REAL_EMIT(edit(config) if mode in modes else config, mode, engine)

    monkeypatch.setattr(numerics_check, "emit_text", emit)


@pytest.mark.parametrize("cid", ["fwd/00-baseline", "dgrad/04-stride2-3x3", "dgrad/15-epilogue-stride2"])
def test_an_engine_that_drops_padding_is_a_spec_mismatch(monkeypatch, cid: str) -> None:
    text = small_variant(config_path(cid).read_text())
    assert check_config(cid, text).ok
    wrapped(monkeypatch, without_padding)
    out = check_config(cid, text)
    assert not out.ok and "pH: the config says 1, the engine's spec 0" in out.mismatch


@pytest.mark.parametrize("cid", ["fwd/00-baseline", "dgrad/04-stride2-3x3"])
def test_a_kernel_built_without_padding_computes_wrong_elements(monkeypatch, cid: str) -> None:
    """The spec is honest, the IR comes from the padless config: the numbers catch it."""
    text = small_variant(config_path(cid).read_text())
    wrapped(monkeypatch, without_padding, modes=("ir",))
    out = check_config(cid, text)
    assert out.mismatch == () and (out.wrong > 0 or out.hazards or out.error)


#: a field the reference uses -> (its table, the value the engine's spec is given, a config)
COMPARED_FIELDS = {
    "bias": ("spec", "4", "fwd/08-epilogue-bias-scale-relu-clamp"),
    "groups": ("problem", "2", "fwd/00-baseline"),
    "dtype_d": ("spec", '"fp32"', "fwd/00-baseline"),
    "sW": ("problem", "2", "fwd/00-baseline"),
    "split_k": ("spec", "2", "wgrad/07-split-k4-fp32"),
}


@pytest.mark.parametrize("key", list(COMPARED_FIELDS))
def test_each_field_the_reference_uses_is_compared(monkeypatch, key: str) -> None:
    table, value, cid = COMPARED_FIELDS[key]
    text = small_variant(config_path(cid).read_text())
    wrapped(monkeypatch, lambda t: set_value(t, table, key, value), modes=("spec",))
    out = check_config(cid, text)
    assert any(line.startswith(f"{key}: the config says") for line in out.mismatch), out


def test_the_dgrad_records_are_computed_by_the_reference(monkeypatch) -> None:
    """A record field of the engine's spec that differs from docs/reference/conv-semantics.md §2.4
    is named."""
    text = small_variant(config_path("dgrad/04-stride2-3x3").read_text())

    def emit(config: str, mode: str, engine: str) -> str:
        out = REAL_EMIT(config, mode, engine)
        return out.replace("h_begin=0 ", "h_begin=1 ", 1) if mode == "spec" else out

    monkeypatch.setattr(numerics_check, "emit_text", emit)
    out = check_config("dgrad/04", text)
    assert out.mismatch and out.mismatch[0].startswith("sub_gemm.0: the config says")


def test_the_epilogue_is_applied_in_order() -> None:
    """fwd/08: bias 3, then scale 2, then relu, then the clamp [0, 40], as NumPy says."""
    problem = read_problem(small_variant(config_path("fwd/08-epilogue-bias-scale-relu-clamp").read_text()))
    assert problem.epilogue == Epilogue(3, 2, True, 0, 40)
    case = build_case(problem)
    x = case.buffers["X"].astype(np.float64)
    w = case.buffers["W"].astype(np.float64)
    expected = np.clip(np.maximum((conv_fwd(problem.conv, x, w) + 3) * 2, 0), 0, 40)
    assert np.array_equal(case.want, expected)
    assert 0 < (expected == 40).sum() < expected.size and (expected == 0).sum() > 0  # both bounds bite


def test_ignoring_the_epilogue_fails(monkeypatch) -> None:
    """The check can fail: a reference without the epilogue disagrees with the kernel."""
    text = small_variant(config_path("fwd/08-epilogue-bias-scale-relu-clamp").read_text())
    monkeypatch.setattr(Epilogue, "apply", lambda self, acc: np.asarray(acc, dtype=np.float32))
    assert check_config("fwd/08", text).wrong > 0


@pytest.mark.parametrize("cid", ["wgrad/18-epilogue-split-k4-fp32", "dgrad/16-epilogue-split-k2-fp32"])
def test_split_k_applies_the_epilogue_to_each_slice(monkeypatch, cid: str) -> None:
    """Each slice's partial sum gets the epilogue before its atomic add: a reference that applies
    it once to the total sum is wrong on these kernels."""
    text = small_variant(config_path(cid).read_text())
    assert check_config(cid, text).ok
    import rocke_py.numerics.inputs as inputs

    monkeypatch.setattr(inputs, "slice_masks", lambda p, parts: (0, [np.ones(1)] + [np.zeros(1)] * (parts - 1)))
    wrong_model = check_config(cid, text)
    assert wrong_model.wrong > 0


ZERO_PHASE_EPILOGUE = """[target]
arch = "gfx942"
[problem]
N = 1
Hi = 4
Wi = 3
C = 1
K = 1
Y = 1
X = 1
sH = 2
[spec]
family = "dgrad"
warp_tile_m = 16
warp_tile_n = 16
clamp_min = 1
"""


@pytest.mark.parametrize("split_k", [1, 2])
def test_positions_no_record_stores_get_zero_not_the_epilogue(split_k: int) -> None:
    """dgrad stride 2, 1x1: the odd rows of dX are stored by no record. The kernel writes zero
    there (the zero phase, or the caller's zeroing under split-K) and clamp(acc, 1) on the even
    rows: the reference says the same (found by fuzz --numerics)."""
    text = set_value(ZERO_PHASE_EPILOGUE, "spec", "split_k", str(split_k))
    text = set_value(text, "spec", "dtype_d", '"fp32"') if split_k > 1 else text
    case = build_case(read_problem(text))
    assert np.all(case.want[:, 1::2] == 0) and np.all(case.want[:, 0::2] >= 1)
    assert all(o.ok for o in check_all_sizes("zeros", text, small=True))


EMITTING = [c.id for c in select(REPO, [])]


@pytest.mark.parametrize("cid", EMITTING)
def test_the_edge_size_reaches_every_edge(cid: str) -> None:
    text = config_path(cid).read_text()
    sizes = dict(check_sizes(text, small=True))
    small, edge = read_problem(sizes["small"]), read_problem(sizes["edge"])
    avoid = {m % small.tile_m for m in m_extents(small)}
    goals = edge_goals(edge, avoid)
    if tomllib.loads(text).get("spec", {}).get("split_k") == -1 and not slices_all_real(read_problem(text)):
        # auto split-K chose more slices than the shipped size has K tiles: padding-only slices
        # are the deduction's own (conv-semantics §10.1) at every size, so the two slice goals
        # (every slice real, each slice two K tiles wide) cannot hold
        goals = goals[:-2]
    else:
        assert slices_all_real(small) and slices_all_real(edge)
    assert all(goals), goals
    assert edge.conv.n >= 2


def test_split_k_slices_all_hold_real_k_at_the_small_size() -> None:
    """At 2x9x9 a 3x3 wgrad has 98 pixels of K: slices 2 and 3 of split_k 4 (64 wide) would be
    padding only, so the small variant grows its batch."""
    text = config_path("wgrad/07-split-k4-fp32").read_text()
    assert not slices_all_real(read_problem(small_variant(text, {"N": 2, "Hi": 9, "Wi": 9})))
    assert slices_all_real(read_problem(small_variant(text)))


def test_runtime_split_k_runs_at_several_degrees() -> None:
    """wgrad/20 (split_k = 0): each size at the degrees that divide its K tiles, the last slice
    short (wg_K is not a multiple of tile_k)."""
    outcomes = check_all_sizes("wgrad/20", config_path("wgrad/20-split-k-runtime").read_text(), small=True)
    degrees = [o.size.rsplit("ks×", 1)[1] for o in outcomes]
    assert all(o.ok for o in outcomes), outcomes
    assert len(degrees) >= 3 and len(set(degrees)) >= 2
    edge = read_problem(dict(check_sizes(config_path("wgrad/20-split-k-runtime").read_text(), True))["edge"])
    assert edge.out_pixels % edge.tile_k != 0 and len(runtime_degrees(edge)) >= 2


def test_a_scalar_param_the_caller_does_not_give_is_an_error() -> None:
    text = small_variant(config_path("wgrad/20-split-k-runtime").read_text())
    case = build_case(read_problem(text), degree=2)
    ir = REAL_EMIT(text, "ir", "py")
    scalars = {k: v for k, v in case.scalars.items() if k != "ks"}
    with pytest.raises(ExecError, match="%ks"):
        run_kernel(ir, case.buffers, scalars, split_degree=2)


OVERSIZED = """[target]
arch = "gfx950"
[problem]
N = 64
Hi = 224
Wi = 224
C = 64
K = 64
Y = 3
X = 3
pH = 1
pW = 1
[spec]
family = "fwd"
"""


def test_an_oversized_problem_is_skipped_with_its_budget() -> None:
    why = over_budget(read_problem(OVERSIZED))
    assert why is not None and "over the budget" in why
    out = check_config("big", OVERSIZED)
    assert out.skipped and not out.ok and out.too_large == why and out.seconds < 5


def test_shrink_runs_an_oversized_problem_smaller() -> None:
    outcomes = check_all_sizes("big", OVERSIZED, shrink=True)
    assert [o.label for o in outcomes] == ["shrunk", "small", "edge"]
    assert all(o.ok for o in outcomes) and over_budget(read_problem(OVERSIZED)) is not None


def test_the_cli_reports_a_skipped_size(tmp_path, capsys) -> None:
    root = tmp_path / "repo"
    (root / "parity_configs" / "fwd").mkdir(parents=True)
    big = set_value(OVERSIZED, "parity", "expect", '"emit"')
    big = set_value(big, "parity", "description", '"fwd N=64 224x224: over the run budget"')
    (root / "parity_configs" / "fwd" / "00-big.toml").write_text(big)
    assert main(["numerics", "--root", str(root), "-j", "1"]) == 0
    text = capsys.readouterr().out
    assert "SKIPPED fwd/00-big (shipped" in text and "1 skipped as too large" in text
    (root / "parity_configs" / "fwd" / "00-big.toml").unlink()
    assert main(["numerics", "--root", str(root), "-j", "1"]) == 2  # nothing to run is no pass


def test_a_launch_of_too_many_threads_is_skipped_not_run() -> None:
    """fwd with K = 4,194,304 output channels on one pixel: 4·10⁶ multiply-adds, but 65,536
    workgroups — the fuzzer once spent 146 s on it. The thread budget skips it at once."""
    text = OVERSIZED.replace("N = 64\nHi = 224\nWi = 224\nC = 64", "N = 1\nHi = 1\nWi = 1\nC = 1").replace(
        "K = 64\nY = 3\nX = 3\npH = 1\npW = 1", "K = 4194304\nY = 1\nX = 1"
    )
    problem = read_problem(text)
    assert problem.workgroups(1) == 65536
    why = over_budget(problem)
    assert why is not None and why.startswith("16,777,216 threads")
    assert check_config("wide", text).skipped


def test_a_runtime_split_k_kernel_of_one_k_tile_runs_at_degree_one() -> None:
    """wg_K within one K tile leaves degree 1 alone (found by fuzz --numerics): the kernel still
    adds by atomics, so its output starts zeroed, not NaN."""
    text = "\n".join(
        ["[target]", 'arch = "gfx942"', "[problem]", "N = 1", "Hi = 1", "Wi = 1", "C = 2", "K = 1", "Y = 1", "X = 1"]
        + ["[spec]", 'family = "wgrad"', "warp_tile_m = 16", "warp_tile_n = 16", "split_k = 0", 'epilogue = "cshuffle"']
    )
    problem = read_problem(text)
    assert problem.split_k == 0 and runtime_degrees(problem) == (1,)
    out = check_config("one-tile", text)
    assert out.ok and out.size.endswith("ks×1"), out
