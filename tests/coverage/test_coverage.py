"""rocke-parity coverage: axes from the engine's key table, strata, feasibility decided by both
engines (a validator that lets a probe through alone is caught), the propose step, and the
ratchet that fails the gate when a config is deleted."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import standin_tree as pt

from rocke_py import facts
from rocke_py.coverage import analyse, axes, feasible, measure, propose, ratchet
from rocke_py.engine import arch, schema
from rocke_py.engine.result import Emitted
from rocke_py.parity.cli import main
from rocke_py.parity.judge import golden

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def ships() -> list[measure.Shipped]:
    return measure.shipped(ROOT)


@pytest.fixture(scope="module")
def prober(ships) -> feasible.Prober:
    return feasible.Prober([s for s in ships if measure.RANK[s.stratum] >= measure.RANK["gate"] and s.values])


def test_every_key_of_the_engine_table_is_an_axis_or_says_why_not():
    read = {k for a in axes.AXES for k in a.keys}
    uncounted = {k for keys in axes.UNCOUNTED for k in keys}
    assert not read & uncounted
    assert read | uncounted == {k.name for k in schema.KEYS}


def test_value_domains_come_from_the_engine_tables():
    shapes = {f"{m}x{n}x{k}" for t in arch.TARGETS.values() for _, m, n, k in t.mma}
    assert set(axes.AXIS["atom"].values) == shapes
    assert axes.AXIS["arch"].values == facts.ARCHS
    assert "wavelet" in axes.AXIS["pipeline"].values and "basic" in axes.AXIS["pipeline"].values


def test_a_config_reads_as_its_axis_values(ships):
    by_id = {s.config.id: s for s in ships}
    epi = by_id["fwd/08-epilogue-bias-scale-relu-clamp"].values
    assert (epi["bias"], epi["scale"], epi["relu"], epi["clamps"]) == ("set", "set", "on", "set")
    assert "split_k" not in epi and "k_outer" not in epi  # wgrad/dgrad axes only
    base = by_id["wgrad/00-baseline"].values
    assert base["family"] == "wgrad" and base["split_k"] == "1" and base["dims"] == "2d"


def test_the_stratum_of_a_config_follows_the_oracles_that_check_it(ships):
    by_id = {s.config.id: s for s in ships}
    assert by_id["wgrad/11-kouter-cshuffle"].stratum == "numerics-ll"
    negative = next(s for s in ships if not s.config.expect.emits)
    assert negative.stratum == "named"


def test_an_infeasible_tuple_is_named_by_the_rule_that_rejects_it(prober):
    got = prober.decide((("family", "dgrad"), ("async", "on")))
    assert got.status == "infeasible" and got.codes == ("DGRAD_ASYNC_UNSUPPORTED",)
    assert got.tried > 1


def test_a_feasible_tuple_comes_with_a_completion_both_engines_accept(prober):
    got = prober.decide((("family", "fwd"), ("dims", "3d")))
    assert got.status == "feasible" and got.probe is not None
    values = axes.values_of(axes.read_config(got.probe.text))
    assert values["family"] == "fwd" and values["dims"] == "3d"


def lax_c(family: str):
    """A C engine whose validator lets every async config of `family` through."""
    real = feasible.c_emit

    def emit(text, mode, flavor):
        if f'family = "{family}"' in text and "async_dma = true" in text:
            return Emitted("spec text")
        return real(text, mode, flavor)

    return emit


def test_a_validator_that_lets_a_probe_through_alone_is_a_parity_failure(ships, monkeypatch):
    monkeypatch.setattr(feasible, "c_emit", lax_c("dgrad"))  # C forgets DGRAD_ASYNC_UNSUPPORTED
    p = feasible.Prober([s for s in ships if s.stratum == "numerics-ll"])
    got = p.decide((("family", "dgrad"), ("async", "on")))
    assert got.status == "disagree" and "only the C engine accepts it" in got.note


def _only_config_tuple(ships) -> tuple[measure.Tuple, str]:
    reached = measure.reach(ships, 2)
    for t, r in reached.items():
        if r.stratum == "numerics-ll" and len(r.configs) == 1 and "family" not in dict(t):
            return t, r.configs[0]
    raise AssertionError("every tuple is reached by two configs or more")


def test_propose_covers_a_tuple_whose_only_config_was_removed(ships, prober):
    t, only = _only_config_tuple(ships)
    rest = [s.config for s in ships if s.config.id != only]
    an = analyse.analyse(ROOT, rest, probe=False, strengths=(2,))
    row = next(r for r in an.rows if r.tuple == t)
    assert row.stratum != "numerics-ll"
    an.rows = [analyse.Row(t, 2, row.stratum, row.configs, prober.decide(t))]
    assert an.rows[0].feasibility.status == "feasible"
    done, refused, left = propose.propose(an, prober, strengths=(2,), check_numerics=False)
    assert not refused and not left and len(done) == 1
    cand = done[0]
    assert t in cand.covers and propose.engines_agree(cand.text) == ""
    assert cand.command("cover-x").startswith(f"rocke-parity new {cand.family} --from ")


def test_a_candidate_numerics_refuses_is_not_proposed(ships, prober, monkeypatch):
    t, only = _only_config_tuple(ships)
    an = analyse.analyse(ROOT, [s.config for s in ships if s.config.id != only], probe=False, strengths=(2,))
    row = next(r for r in an.rows if r.tuple == t)
    an.rows = [analyse.Row(t, 2, row.stratum, row.configs, prober.decide(t))]
    monkeypatch.setattr(propose, "numerics_exact", lambda name, text: "numerics small ir: 3 wrong")
    done, refused, left = propose.propose(an, prober, strengths=(2,))
    assert not done and len(refused) == 1 and refused[0].problem == "numerics small ir: 3 wrong"


# ---- the ratchet: golden.json records the tuples, the gate fails when they fall


RATCHET_CONFIGS = ("fwd/00-baseline", "fwd/08-epilogue-bias-scale-relu-clamp", "wgrad/11-kouter-cshuffle")


def _tree(tmp_path: Path) -> Path:
    for cid in RATCHET_CONFIGS:
        dest = tmp_path / "parity_configs" / f"{cid}.toml"
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / "parity_configs" / f"{cid}.toml", dest)
    return tmp_path


def cli(root: Path, *args: str) -> int:
    return main([*args, "--root", str(root), "--engines", pt.engines_arg(), "-j", "1"])


def test_deleting_a_config_fails_the_gate_naming_the_tuples_lost(tmp_path, capsys):
    root = _tree(tmp_path)
    assert cli(root, "golden", "--update") == 0
    doc = json.loads((root / "parity_configs" / "golden.json").read_text())
    assert "fwd/08-epilogue-bias-scale-relu-clamp" in json.dumps(doc) and "bias=set" in json.dumps(doc["coverage"])
    assert cli(root, "gate") == 0
    capsys.readouterr()
    (root / "parity_configs" / "fwd" / "08-epilogue-bias-scale-relu-clamp.toml").unlink()
    assert cli(root, "gate") == 1
    out = capsys.readouterr().out
    assert "FAIL run-level: coverage:" in out and "(numerics-ll -> none)" in out and "bias=set" in out


def test_dropping_an_isa_list_lowers_the_stratum_and_fails_the_gate(tmp_path, capsys):
    root = _tree(tmp_path)
    assert cli(root, "golden", "--update") == 0
    path = root / "parity_configs" / "wgrad" / "11-kouter-cshuffle.toml"
    path.write_text("".join(line for line in path.read_text().splitlines(True) if not line.startswith("isa")))
    capsys.readouterr()
    assert cli(root, "gate") == 1
    assert "(numerics-ll -> gate)" in capsys.readouterr().out


def test_a_partial_run_does_not_judge_the_ratchet(tmp_path, capsys):
    root = _tree(tmp_path)
    assert cli(root, "golden", "--update") == 0
    (root / "parity_configs" / "fwd" / "08-epilogue-bias-scale-relu-clamp.toml").unlink()
    assert cli(root, "gate", "--family", "wgrad") == 0


def test_a_new_tuple_asks_for_golden_update(tmp_path, capsys):
    root = _tree(tmp_path)
    (root / "parity_configs" / "fwd" / "08-epilogue-bias-scale-relu-clamp.toml").rename(tmp_path / "held.toml")
    assert cli(root, "golden", "--update") == 0
    (tmp_path / "held.toml").rename(root / "parity_configs" / "fwd" / "08-epilogue-bias-scale-relu-clamp.toml")
    assert cli(root, "golden", "--update") == 0
    out = capsys.readouterr().out
    assert "coverage:" in out and "numerics-ll" in out
    assert cli(root, "gate") == 0


def test_golden_refuses_a_tuple_recorded_twice(tmp_path):
    path = tmp_path / "golden.json"
    cov = {
        "modes": ["spec"],
        "flavors": [],
        "tuples": {"gate": ["arch=gfx942 bias=0"], "named": ["arch=gfx942 bias=0"]},
    }
    path.write_text(json.dumps({"schema": golden.SCHEMA, "entries": {}, "coverage": cov}))
    with pytest.raises(golden.GoldenError, match="twice"):
        golden.load(path)


def test_lost_names_each_fallen_tuple():
    pinned = {"a=1 b=2": "numerics-ll", "a=1 b=3": "gate"}
    assert ratchet.lost(pinned, {"a=1 b=3": "gate"}) == ["a=1 b=2 (numerics-ll -> none)"]
    assert ratchet.risen(pinned, {"a=1 b=3": "numerics-ll", "a=1 b=2": "numerics-ll"}) == ["a=1 b=3"]


def test_the_command_writes_its_report_json_and_heatmap(tmp_path, monkeypatch, capsys):
    root = _tree(tmp_path)
    monkeypatch.setattr(feasible, "REPAIR_SEEDS", 0)  # three seeds: keep the probing short
    assert (
        main(["coverage", "--root", str(root), "--json", str(tmp_path / "c.json"), "--svg", str(tmp_path / "c.svg")])
        == 0
    )
    out = capsys.readouterr().out
    assert "coverage of 3 readable configs" in out and "2-way" in out and "3-way core" in out
    doc = json.loads((tmp_path / "c.json").read_text())
    assert doc["schema"] == "rocke-parity.coverage/v1"
    row = next(t for t in doc["tuples"] if t["tuple"] == "bias=set relu=on")
    assert row["stratum"] == "numerics-ll" and row["configs"] == ["fwd/08-epilogue-bias-scale-relu-clamp"]
    svg = (tmp_path / "c.svg").read_text()
    assert svg.startswith("<svg") and svg.count("<rect") == len(axes.AXES) ** 2


def test_the_command_exits_1_on_a_parity_failure(tmp_path, monkeypatch, capsys):
    root = _tree(tmp_path)
    monkeypatch.setattr(feasible, "REPAIR_SEEDS", 0)
    monkeypatch.setattr(feasible, "c_emit", lax_c("wgrad"))
    assert main(["coverage", "--root", str(root)]) == 1
    assert "PARITY FAILURE" in capsys.readouterr().out


def test_a_run_a_change_narrowed_judges_the_whole_tree(tmp_path, capsys):
    """--paths selects one config, but the ratchet counts every config of the tree: the other
    configs' tuples do not fall, and a deleted one's do."""
    root = _tree(tmp_path)
    assert cli(root, "golden", "--update") == 0
    one = str(root / "parity_configs" / "fwd" / "00-baseline.toml")
    assert cli(root, "gate", "--paths", one) == 0
    (root / "parity_configs" / "fwd" / "08-epilogue-bias-scale-relu-clamp.toml").unlink()
    capsys.readouterr()
    assert cli(root, "gate", "--paths", one) == 1
    assert "bias=set (numerics-ll -> none)" in capsys.readouterr().out


def test_json_on_standard_output_is_the_json_alone(tmp_path, monkeypatch, capsys):
    root = _tree(tmp_path)
    monkeypatch.setattr(feasible, "REPAIR_SEEDS", 0)
    assert main(["coverage", "--root", str(root), "--json", "-"]) == 0
    got = capsys.readouterr()
    assert json.loads(got.out)["schema"] == "rocke-parity.coverage/v1" and "2-way" in got.err
