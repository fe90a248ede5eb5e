"""gate --changed [REV], --paths and --reuse (issue 12, item 6): only what a change can affect,
and the other engine's outputs from the content-addressed cache — never read unless asked."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import standin_tree as pt

from rocke_py.parity.changes import affected
from rocke_py.parity.engines import EngineSpec
from rocke_py.parity.objects import ObjectCache
from rocke_py.parity.outcache import cache_path

TREE = {f"wgrad/0{i}-c{i}": {"standin": {"salt": str(i)}} for i in range(3)} | {"fwd/00-f": {"standin": {"salt": "f"}}}
KEYS = ("spec", "ir", "ll.llvm20", "ll.llvm22", "ll.llvm23")


@pytest.fixture
def repo(tmp_path):
    """A git repository holding the tree and its own copies of the stand-ins, one file per engine."""
    root = pt.make_tree(tmp_path / "repo", TREE)
    pt.write_golden(root, pt.golden_for(root, sorted(TREE), KEYS), modes=("spec", "ir", "ll"))
    for side in ("py", "c"):  # a file per engine that the tree holds (the stand-ins themselves live in tests/)
        (root / f"engine_{side}.py").write_text(
            f"# the {side} engine of this tree\nimport sys\n\nsys.path.insert(0, {str(pt.ENGINES_FILE.parent)!r})\n"
            "from standin_engines import all_modes, c_emit, py_emit  # noqa: E402, F401\n"
        )
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "t"]):
        subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)
    return root


def engines(root: Path) -> str:
    py, c = root / "engine_py.py", root / "engine_c.py"
    return f"{py}:py_emit,{c}:c_emit,{py}:all_modes,{c}:all_modes"


def gate(root: Path, *args: str):
    cmd = [sys.executable, "-m", "rocke_py.parity", "gate", "--root", str(root), "--engines", engines(root)]
    done = subprocess.run([*cmd, "--json", "-", *args], capture_output=True, text=True, timeout=120, cwd=root)
    doc = json.loads(done.stdout) if done.stdout.startswith("{") else None
    return done, doc


def test_what_a_change_affects():
    spec = EngineSpec("/r/engine_py.py:py_emit", "/r/engine_c.py:c_emit")
    root, ids = Path("/r"), {"wgrad/00-a", "fwd/01-b"}

    def aff(*files):
        return affected(list(files), EngineSpec(), root, ids)

    one = aff("parity_configs/wgrad/00-a.toml", "docs/user-guide.md", "parity_configs/wgrad/07-deleted.toml")
    assert one.configs == ("wgrad/00-a",) and one.reuse is None and not one.nothing
    c = aff("rocke_c/src/emit.c", "parity_configs/fwd/01-b.toml")
    assert c.configs is None and c.reuse == "py" and c.engines == {"c"}
    assert aff("rocke_py/engine/spec.py").reuse == "c"
    assert aff("rocke_py/engine/spec.py", "rocke_py/cbridge.py").reuse is None  # both engines: both run
    assert aff("parity_configs/golden.json").configs is None and aff("parity_configs/golden.json").reuse is None
    assert aff("rocke_py/parity/gate.py", "rocke_c/src/emit.c").reuse is None
    assert aff("README.md", "tests/x.py", "rocke_c/tests/test_ir.c").nothing
    assert affected(["engine_c.py"], spec, root, ids).reuse == "py"  # a stand-in file an --engines reference names


def test_changed_runs_only_the_changed_config(repo):
    assert gate(repo, "--changed")[0].stdout.startswith("rocke-parity gate: nothing to gate")
    (repo / "parity_configs" / "wgrad" / "01-c1.toml").write_text(pt.config_text(standin={"salt": "1", "c": "alt"}))
    done, doc = gate(repo, "--changed")
    assert done.returncode == 1 and {r["config"] for r in doc["jobs"]} == {"wgrad/01-c1"} and len(doc["jobs"]) == 5
    assert "--changed HEAD: 1 config(s) changed: 1 config(s)" in done.stderr
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "u"])
    assert gate(repo, "--changed", "HEAD~1")[1]["jobs"][0]["config"] == "wgrad/01-c1"  # since a revision
    new = pt.write_config(repo, "fwd/01-new", standin={"salt": "n"})  # an untracked config counts
    assert {r["config"] for r in gate(repo, "--changed")[1]["jobs"]} == {"fwd/01-new"}
    new.unlink()


def test_an_engine_change_reuses_the_other_engines_cached_outputs(repo):
    full, doc = gate(repo)
    assert full.returncode == 0 and not any("cached" in r for r in doc["jobs"])
    (repo / "engine_c.py").write_text((repo / "engine_c.py").read_text() + "\n# edited\n")
    done, doc = gate(repo, "--changed")
    assert done.returncode == 0 and len(doc["jobs"]) == 20
    assert all(r["cached"] == "py" for r in doc["jobs"])  # a cached result says so
    assert "the c engine changed: every config" in done.stderr
    assert "--reuse py: 20 job(s) took the py engine's outputs from the cache" in done.stderr
    # without the cache the py engine runs, and the note says so
    shutil.rmtree(repo / ".rocke-parity" / "outputs")
    done, doc = gate(repo, "--changed")
    assert done.returncode == 0 and not any("cached" in r for r in doc["jobs"])
    assert "20 job(s) were not in the cache and ran both engines" in done.stderr


def test_the_full_gate_never_reads_the_cache_and_reuse_does(repo):
    gate(repo)
    spec = EngineSpec(f"{repo / 'engine_py.py'}:py_emit", f"{repo / 'engine_c.py'}:c_emit")
    from rocke_py.parity.outcache import build_id_of

    path = cache_path(repo, "py", build_id_of(spec, "py"))

    def inject() -> None:  # a fault in the cache: every py spec output is another text
        moved = "rocke.spec v1\nmoved\n"
        sha = hashlib.sha256(moved.encode()).hexdigest()
        ObjectCache(repo).put(sha, moved)
        doc = json.loads(path.read_text())
        for key, runs in doc["runs"].items():
            if ":spec:" in key:
                for run in runs:
                    run["sha256"], run["nbytes"] = sha, len(moved)
        path.write_text(json.dumps(doc))

    inject()
    assert gate(repo)[0].returncode == 0  # the full gate ran both engines (and recorded their outputs again)
    inject()
    done, out = gate(repo, "--reuse", "py")
    assert done.returncode == 1
    spec_jobs = [r for r in out["jobs"] if r["mode"] == "spec"]
    assert spec_jobs and all(
        r["status"] == "DIFFER" and "[py outputs from the cache]" in r["reason"] for r in spec_jobs
    )


def test_changed_usage_errors(repo, tmp_path):
    assert gate(repo, "--changed", "no-such-rev")[0].returncode == 2
    assert gate(repo, "--changed", "--config", "wgrad/00")[0].returncode == 2
    assert gate(repo, "--changed", "HEAD", "--paths", "x")[0].returncode == 2
    plain = pt.make_tree(tmp_path / "plain", TREE)
    done = pt.run_cli(plain, "gate", "--changed")
    assert done.returncode == 2 and "git" in done.stderr


def test_a_recorded_run_has_every_field_the_cache_reads_back():
    from rocke_py.parity import outcache
    from rocke_py.parity.engines import EngineRun

    run = EngineRun("emitted", "", "", "ab" * 32, 12, 0.5)
    assert tuple(outcache._run_json(run)) == outcache._RUN_FIELDS
    assert outcache._run_of(outcache._run_json(run)) == run
    assert run.outcome() == tuple(getattr(run, f) for f in outcache._OUTCOME_FIELDS)  # what a fingerprint hashes


def test_a_gate_that_changes_no_outcome_leaves_the_cache_file_alone(repo):
    gate(repo)
    spec = EngineSpec(f"{repo / 'engine_py.py'}:py_emit", f"{repo / 'engine_c.py'}:c_emit")
    from rocke_py.parity.outcache import build_id_of

    path = cache_path(repo, "py", build_id_of(spec, "py"))
    before = path.read_bytes()
    assert gate(repo)[0].returncode == 0
    assert path.read_bytes() == before  # the same outcomes: not rewritten (the seconds stay the first run's)
    doc = json.loads(before)
    key = next(k for k in doc["runs"] if ":spec:" in k)
    doc["runs"][key][0]["nbytes"] += 1  # a cached outcome that is not this run's
    path.write_text(json.dumps(doc))
    assert gate(repo)[0].returncode == 0
    assert json.loads(path.read_text())["runs"][key] != doc["runs"][key]  # this run's outcome replaced it


def test_a_record_its_fingerprint_vouches_for_is_not_parsed_again(tmp_path, monkeypatch):
    from rocke_py.parity import outcache
    from rocke_py.parity.engines import EngineRun
    from rocke_py.parity.runner import JobResult, WorkItem

    run = EngineRun("rejected", "E_X", "a message", seconds=0.1)
    res = JobResult(WorkItem("k", b"config bytes", "spec", "llvm22"), (run, run), (run, run))
    spec, keep = pt.engine_spec(), {hashlib.sha256(b"config bytes").hexdigest()}
    outcache.record(tmp_path, spec, [res], keep)
    path = cache_path(tmp_path, "py", outcache.build_id_of(spec, "py"))
    parsed: list[bytes] = []
    real_parse = outcache._parse
    monkeypatch.setattr(outcache, "_parse", lambda data: parsed.append(data) or real_parse(data))
    outcache.record(tmp_path, spec, [res], keep)
    assert parsed == []  # the same outcomes on the same tree, the bytes the fingerprint vouches for
    path.write_bytes(path.read_bytes().replace(b'"E_X"', b'"E_Y"'))  # written by someone else
    outcache.record(tmp_path, spec, [res], keep)
    assert len(parsed) == 1 and b'"E_X"' in path.read_bytes()  # the py side's file read again; its outcome back
    outcache.record(tmp_path, spec, [res], keep | {"0" * 64})  # a config more in the tree: compared again
    assert len(parsed) == 3


def test_the_records_of_a_gate_and_of_its_shards_are_all_vouched_for(tmp_path, monkeypatch):
    from rocke_py.parity import outcache
    from rocke_py.parity.engines import EngineRun
    from rocke_py.parity.runner import JobResult, WorkItem

    run = EngineRun("rejected", "E_X", "a message", seconds=0.1)
    both = [JobResult(WorkItem(k, k.encode(), "spec", "llvm22"), (run, run), (run, run)) for k in ("one", "two")]
    spec, keep = pt.engine_spec(), {hashlib.sha256(k.encode()).hexdigest() for k in ("one", "two")}
    parsed: list[bytes] = []
    real_parse = outcache._parse
    monkeypatch.setattr(outcache, "_parse", lambda data: parsed.append(data) or real_parse(data))
    outcache.record(tmp_path, spec, both, keep)  # the full gate
    for shard in ([both[0]], [both[1]]):
        outcache.record(tmp_path, spec, shard, keep)  # a shard: nothing new, but not vouched for yet
    first_round = len(parsed)
    for _ in range(2):  # later rounds: every one of the three records is vouched for
        for results in (both, [both[0]], [both[1]]):
            outcache.record(tmp_path, spec, results, keep)
    assert first_round == 6 and len(parsed) == first_round  # 3 records x 2 sides, then none
