"""golden.json: format, --check, and --update (refusal, only-run entries, deltas, renumbering)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import standin_tree as pt

from rocke_py.parity.cli import main
from rocke_py.parity.judge import golden


def cli(tmp_path: Path, *args: str, modes: str = "implemented_modes") -> int:
    return main([*args, "--root", str(tmp_path), "--engines", pt.engines_arg(modes), "-j", "1"])


def gpath(root: Path) -> Path:
    return root / "parity_configs" / "golden.json"


def test_update_writes_a_stable_sorted_manifest(tmp_path, capsys):
    pt.make_tree(
        tmp_path,
        {
            "wgrad/01-b": {},
            "wgrad/00-a": {"standin": {"salt": "a"}},
            "wgrad/100-neg": {"expect": "reject:E_X", "standin": {"py": "reject:E_X", "c": "reject:E_X"}},
        },
    )
    assert cli(tmp_path, "golden", "--update") == 0
    out = capsys.readouterr().out
    assert "wgrad/00-a spec: new entry" in out and "wgrad/01-b spec: new entry" in out
    text = gpath(tmp_path).read_text()
    doc = json.loads(text)
    assert text == json.dumps(doc, indent=2, sort_keys=True) + "\n"
    assert doc["schema"] == "rocke-parity.golden/v2"
    assert doc["coverage"] == {"modes": ["spec"], "flavors": [], "tuples": {}}
    assert list(doc["entries"]) == ["wgrad/00-a", "wgrad/01-b", "wgrad/100-neg"]
    e = doc["entries"]["wgrad/00-a"]["spec"]
    _, sha, n = pt.standin_output(tmp_path, "wgrad/00-a")
    assert e == {"verdict": "emit", "sha256": sha, "bytes": n, "kernel_name": e["kernel_name"]}
    assert e["kernel_name"].startswith("standin_")
    r = doc["entries"]["wgrad/100-neg"]["spec"]  # a rejection is pinned by its code and message
    assert r["verdict"] == "reject" and r["code"] == "E_X" and r["message"] == "rejected by the stand-in"
    assert r["message_sha256"] == golden.message_sha256("rejected by the stand-in")
    assert cli(tmp_path, "gate") == 0
    assert cli(tmp_path, "golden", "--check") == 0
    assert "golden OK" in capsys.readouterr().out


def test_check_reports_drift_and_missing(tmp_path, capsys):
    pt.make_tree(tmp_path, {"wgrad/00-a": {}, "wgrad/01-b": {"standin": {"salt": "b"}}})
    pt.write_golden(tmp_path, {"wgrad/00-a": {"spec": ("1" * 64, 3, "")}})
    assert cli(tmp_path, "golden", "--check") == 1
    out = capsys.readouterr().out
    assert "FAIL GOLDEN_DRIFT wgrad/00-a spec -" in out and "FAIL GOLDEN_MISSING wgrad/01-b spec -" in out
    assert "1 drift, 1 missing" in out


def test_update_refuses_on_a_failing_run_and_writes_nothing(tmp_path, capsys):
    pt.make_tree(tmp_path, {"wgrad/00-a": {"standin": {"salt": "new"}}, "wgrad/01-bad": {"standin": {"c": "alt"}}})
    pt.write_golden(tmp_path, {"wgrad/00-a": {"spec": ("1" * 64, 3, "")}})
    before = gpath(tmp_path).read_bytes()
    assert cli(tmp_path, "golden", "--update") == 1
    out = capsys.readouterr().out
    assert "refused: nothing written" in out and "FAIL DIFFER wgrad/01-bad" in out
    assert gpath(tmp_path).read_bytes() == before


def test_update_refuses_on_a_run_level_failure(tmp_path, capsys):
    pt.make_tree(tmp_path, {"wgrad/00-a": {}, "wgrad/00-dup": {}})
    assert cli(tmp_path, "golden", "--update") == 1
    assert "number 00 is used 2 times" in capsys.readouterr().out
    assert not gpath(tmp_path).exists()


def test_filtered_update_rewrites_only_the_entries_of_jobs_that_ran(tmp_path, capsys):
    pt.make_tree(tmp_path, {"wgrad/00-a": {"standin": {"salt": "a2"}}, "wgrad/01-b": {"standin": {"salt": "b2"}}})
    stale = {"spec": ("2" * 64, 5, "")}
    pt.write_golden(
        tmp_path,
        {
            "wgrad/00-a": {"spec": ("0" * 64, 10, "")},
            "wgrad/01-b": {"spec": ("1" * 64, 11, "")},
            "wgrad/07-gone": stale,
        },
    )
    assert cli(tmp_path, "golden", "--update", "--config", "wgrad/00-a") == 0
    out = capsys.readouterr().out
    _, sha, n = pt.standin_output(tmp_path, "wgrad/00-a")
    assert f"wgrad/00-a spec: {n - 10:+d} bytes (renumbering-only: unknown (old text not stored))" in out
    entries = golden.load(gpath(tmp_path)).entries
    assert entries["wgrad/00-a"]["spec"].sha256 == sha
    assert entries["wgrad/01-b"]["spec"].sha256 == "1" * 64  # did not run: untouched
    assert "wgrad/07-gone" in entries  # removals of vanished configs happen on a full update only
    assert cli(tmp_path, "golden", "--update") == 0
    out = capsys.readouterr().out
    assert "wgrad/07-gone: removed (the config no longer exists)" in out
    assert set(golden.load(gpath(tmp_path)).entries) == {"wgrad/00-a", "wgrad/01-b"}


def test_update_tells_a_pure_renumbering_from_a_real_change(tmp_path, capsys):
    cfg = tmp_path / "parity_configs" / "wgrad" / "00-a.toml"
    pt.make_tree(tmp_path, {"wgrad/00-a": {}})
    assert cli(tmp_path, "golden", "--update", modes="all_modes") == 0  # records the texts in the local cache
    capsys.readouterr()
    cfg.write_text(pt.config_text(standin={"py_ir": "renumber", "c_ir": "renumber"}))
    assert cli(tmp_path, "gate", "--mode", "ir", modes="all_modes") == 1
    assert "renumbering-only: yes" in capsys.readouterr().out
    assert cli(tmp_path, "golden", "--update", "--mode", "ir", modes="all_modes") == 0
    out = capsys.readouterr().out
    assert "wgrad/00-a ir: +" in out and "renumbering-only: yes" in out
    cfg.write_text(pt.config_text(standin={"py_ir": "renumber", "c_ir": "renumber", "salt": "real change"}))
    assert cli(tmp_path, "golden", "--update", "--mode", "ir", modes="all_modes") == 0
    assert "renumbering-only: no" in capsys.readouterr().out
    shutil.rmtree(tmp_path / ".rocke-parity")
    cfg.write_text(pt.config_text())
    assert cli(tmp_path, "golden", "--update", "--mode", "ir", modes="all_modes") == 0
    assert "renumbering-only: unknown (old text not stored)" in capsys.readouterr().out


def test_a_passing_gate_keeps_every_agreed_text_for_a_later_drift(tmp_path, capsys):
    """Texts gone from the local cache while the output cache still lists their runs (so it
    stores nothing again): a passing gate stores the texts behind the manifest anew (the workers
    put the big ones; the judge the ones sent over the pipe, such as these small stand-in
    texts), so that a later drift can be told a renumbering or not."""
    cfg = tmp_path / "parity_configs" / "wgrad" / "00-a.toml"
    pt.make_tree(tmp_path, {"wgrad/00-a": {}})
    assert cli(tmp_path, "golden", "--update", modes="all_modes") == 0
    assert cli(tmp_path, "gate", modes="all_modes") == 0  # the output cache now holds every run
    shutil.rmtree(tmp_path / ".rocke-parity" / "objects")
    assert cli(tmp_path, "gate", modes="all_modes") == 0
    entries = golden.load(gpath(tmp_path)).entries["wgrad/00-a"]
    stored = {p.stem for p in (tmp_path / ".rocke-parity" / "objects").glob("*.z")}
    assert {e.sha256 for e in entries.values() if e.emits} <= stored
    capsys.readouterr()
    cfg.write_text(pt.config_text(standin={"py_ir": "renumber", "c_ir": "renumber"}))
    assert cli(tmp_path, "gate", "--mode", "ir", modes="all_modes") == 1
    assert "renumbering-only: yes" in capsys.readouterr().out


def test_a_config_that_now_expects_rejection_changes_its_verdict(tmp_path, capsys):
    pt.make_tree(
        tmp_path,
        {
            "wgrad/00-a": {},
            "wgrad/100-neg": {"expect": "reject:E_X", "standin": {"py": "reject:E_X", "c": "reject:E_X"}},
        },
    )
    g = pt.golden_for(tmp_path, ["wgrad/00-a"])
    g["wgrad/100-neg"] = {"spec": ("3" * 64, 1, "")}
    pt.write_golden(tmp_path, g)
    assert cli(tmp_path, "gate") == 1
    out = capsys.readouterr().out
    assert "FAIL VERDICT_CHANGED wgrad/100-neg spec -: golden.json records emit 1 bytes" in out
    assert cli(tmp_path, "golden", "--update", "--config", "wgrad/100-neg") == 0
    out = capsys.readouterr().out
    assert (
        "wgrad/100-neg spec: verdict changed: emit 1 bytes (sha256 333333333333) -> "
        "reject E_X 'rejected by the stand-in'"
    ) in out
    assert cli(tmp_path, "gate") == 0


def test_a_broken_manifest_is_a_run_level_failure(tmp_path, capsys):
    pt.make_tree(tmp_path, {"wgrad/00-a": {}})
    gpath(tmp_path).write_text('{"schema": "other"}\n')
    assert cli(tmp_path, "gate") == 1
    assert "schema must be" in capsys.readouterr().out
    assert cli(tmp_path, "golden", "--update") == 1
    assert gpath(tmp_path).read_text() == '{"schema": "other"}\n'


def test_a_read_only_manifest_is_refused(tmp_path, capsys):
    """Hole 11: a read-only golden.json was silently replaced."""
    pt.make_tree(tmp_path, {"wgrad/00-a": {"standin": {"salt": "new"}}})
    pt.write_golden(tmp_path, {"wgrad/00-a": {"spec": ("1" * 64, 3, "")}})
    path = gpath(tmp_path)
    before = path.read_bytes()
    path.chmod(0o444)
    try:
        assert cli(tmp_path, "golden", "--update") == 2
        err = capsys.readouterr().err
        assert "golden.json is read-only: not replaced" in err and len(err.strip().splitlines()) == 1
        assert path.read_bytes() == before
    finally:
        path.chmod(0o644)


def _update_proc(root: Path, cid: str):
    import subprocess

    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "rocke_py.parity",
            "golden",
            "--update",
            "--config",
            cid,
            "--root",
            str(root),
            "--engines",
            pt.engines_arg(),
            "-j",
            "1",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_concurrent_updates_of_different_configs_all_land(tmp_path):
    """Hole 11: three concurrent updates all exited 0 but only one config's entries survived."""
    ids = ["wgrad/00-a", "wgrad/01-b", "wgrad/02-c"]
    pt.make_tree(tmp_path, {cid: {"standin": {"salt": cid}} for cid in ids})
    pt.write_golden(tmp_path, {})
    procs = [_update_proc(tmp_path, cid) for cid in ids]
    for p in procs:
        out, _ = p.communicate(timeout=120)
        assert p.returncode == 0, out
    assert set(golden.load(gpath(tmp_path)).entries) == set(ids)
    assert cli(tmp_path, "gate") == 0


def test_update_merges_under_the_lock_what_another_run_wrote(tmp_path):
    """The read-merge-write waits for the lock and re-reads the manifest inside it."""
    import time

    from rocke_py.parity.store.state import file_lock

    pt.make_tree(tmp_path, {"wgrad/00-a": {}, "wgrad/01-b": {"standin": {"salt": "b"}}})
    pt.write_golden(tmp_path, {})
    with file_lock(gpath(tmp_path).with_name(".golden.json.lock")):
        proc = _update_proc(tmp_path, "wgrad/00-a")
        time.sleep(3.0)
        assert proc.poll() is None  # waiting for the lock
        # another run lands its entry while this one waits
        pt.write_golden(tmp_path, pt.golden_for(tmp_path, ["wgrad/01-b"]))
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, out
    assert set(golden.load(gpath(tmp_path)).entries) == {"wgrad/00-a", "wgrad/01-b"}


def test_golden_check_runs_every_job_and_never_says_ok_over_a_failure(tmp_path, capsys):
    """Hole 3: golden --check said OK while a negative config emitted or an engine segfaulted."""
    pt.make_tree(
        tmp_path,
        {"wgrad/00-a": {}, "wgrad/01-segv": {"standin": {"c": "segv"}}, "wgrad/100-neg": {"expect": "reject:E_X"}},
    )
    g = pt.golden_for(tmp_path, ["wgrad/00-a"])
    g["wgrad/01-segv"] = pt.golden_for(tmp_path, ["wgrad/00-a"])["wgrad/00-a"]
    pt.write_golden(tmp_path, g)
    assert cli(tmp_path, "golden", "--check") == 1
    out = capsys.readouterr().out
    assert "FAIL CRASH wgrad/01-segv" in out and "FAIL UNEXPECTED_EMIT wgrad/100-neg" in out
    assert "golden FAILED" in out and "golden OK" not in out
    assert cli(tmp_path, "golden", "--check", "--config", "wgrad/00-a") == 0
    out = capsys.readouterr().out
    assert "golden OK" in out and "partial run" in out and "not checked" in out
