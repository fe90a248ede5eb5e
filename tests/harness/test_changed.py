"""gate --changed [REV], --paths and --reuse: only what a change can affect,
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

from rocke_py.parity.inputs.changes import affected
from rocke_py.parity.run.engines import EngineSpec
from rocke_py.parity.store.objects import ObjectCache
from rocke_py.parity.store.outcache import cache_path

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
    assert aff("rocke_py/cbuild.py").reuse == "py"  # the C engine's build and its flags
    assert aff("rocke_py/engine/spec.py", "rocke_py/cbridge.py").reuse is None  # both engines: both run
    assert aff("parity_configs/golden.json").configs is None and aff("parity_configs/golden.json").reuse is None
    assert aff("rocke_py/parity/judge/gate.py", "rocke_c/src/emit.c").reuse is None
    assert aff("rocke_py/facts.py").configs is None and aff("rocke_py/facts.py").reuse is None  # both sides read it
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
    from rocke_py.parity.store.outcache import build_id_of

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
    from rocke_py.parity.run.engines import EngineRun
    from rocke_py.parity.store import outcache

    run = EngineRun("emitted", "", "", "ab" * 32, 12, 0.5)
    assert tuple(outcache._run_json(run)) == outcache._RUN_FIELDS
    assert outcache._run_of(outcache._run_json(run)) == run
    assert run.outcome() == tuple(getattr(run, f) for f in outcache._OUTCOME_FIELDS)  # what a fingerprint hashes


def test_a_gate_that_changes_no_outcome_leaves_the_cache_file_alone(repo):
    gate(repo)
    spec = EngineSpec(f"{repo / 'engine_py.py'}:py_emit", f"{repo / 'engine_c.py'}:c_emit")
    from rocke_py.parity.store.outcache import build_id_of

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
    from rocke_py.parity.run.engines import EngineRun
    from rocke_py.parity.run.work import JobResult, WorkItem
    from rocke_py.parity.store import outcache

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
    from rocke_py.parity.run.engines import EngineRun
    from rocke_py.parity.run.work import JobResult, WorkItem
    from rocke_py.parity.store import outcache

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


# ----------------------------------------------------------------------------- selection never hides a failure
# Each test below is a fault the full gate fails on and that a narrowed gate (--changed, --paths:
# the pre-commit hook) once let through as "nothing to gate", exit 0.


def commit(root: Path, message: str = "c") -> None:
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True, capture_output=True)
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message],
        check=True,
        capture_output=True,
    )


def ran(doc: dict) -> set[str]:
    return {r["config"] for r in doc["jobs"]}


def run_level(done: subprocess.CompletedProcess) -> list[str]:
    """The run-level failure lines of a gate run (its human summary: on stderr beside --json -)."""
    return [ln for ln in done.stderr.splitlines() if ln.startswith("FAIL run-level: ")]


@pytest.fixture
def linked(repo):
    """The repository with two symlinked configs: fwd/01-linked leads to a shared file outside
    parity_configs/, wgrad/03-alias to the config wgrad/00-c0; both in golden.json."""
    shared = repo / "shared" / "base.toml"
    shared.parent.mkdir()
    shared.write_text(pt.config_text(standin={"salt": "s"}))
    (repo / "parity_configs" / "fwd" / "01-linked.toml").symlink_to(Path("..", "..", "shared", "base.toml"))
    (repo / "parity_configs" / "wgrad" / "03-alias.toml").symlink_to("00-c0.toml")
    ids = sorted(TREE) + ["fwd/01-linked", "wgrad/03-alias"]
    pt.write_golden(repo, pt.golden_for(repo, ids, KEYS), modes=("spec", "ir", "ll"))
    commit(repo, "linked configs")
    return repo


def test_a_changed_symlink_target_selects_every_config_linking_to_it(linked):
    assert gate(linked)[0].returncode == 0
    (linked / "shared" / "base.toml").write_text(pt.config_text(standin={"salt": "s", "c": "alt"}))  # c now differs
    for args in (["--paths", "shared/base.toml"], ["--changed"], ["--paths", "parity_configs/fwd/01-linked.toml"]):
        done, doc = gate(linked, *args)
        assert done.returncode == 1 and ran(doc) == {"fwd/01-linked"}, args
        assert {r["status"] for r in doc["jobs"] if not r["passed"]} == {"DIFFER"}, args
    subprocess.run(["git", "-C", str(linked), "checkout", "-q", "--", "shared"], check=True)
    (linked / "parity_configs" / "wgrad" / "00-c0.toml").write_text(pt.config_text(standin={"salt": "0", "c": "alt"}))
    for args in (["--paths", "parity_configs/wgrad/00-c0.toml"], ["--changed"]):
        done, doc = gate(linked, *args)
        assert done.returncode == 1 and ran(doc) == {"wgrad/00-c0", "wgrad/03-alias"}, args
    # the link named is that config only, not the one it leads to
    assert ran(gate(linked, "--paths", "parity_configs/wgrad/03-alias.toml")[1]) == {"wgrad/03-alias"}


def test_config_links_follow_every_hop_in_the_repository(tmp_path):
    from rocke_py.parity.inputs.changes import config_links

    root = tmp_path / "r"
    (root / "lib" / "real").mkdir(parents=True)
    (root / "data" / "fam").mkdir(parents=True)
    (root / "parity_configs").mkdir()
    (root / "lib" / "real" / "base.toml").write_text("x")
    (root / "lib" / "mid.toml").symlink_to(Path("real", "base.toml"))
    (root / "data" / "fam" / "00-a.toml").symlink_to(Path("..", "..", "lib", "mid.toml"))
    (root / "data" / "fam" / "01-plain.toml").write_text("x")
    (root / "data" / "fam" / "02-out.toml").symlink_to(tmp_path / "outside.toml")
    (root / "parity_configs" / "fam").symlink_to(Path("..", "data", "fam"))  # a symlinked family directory
    (root / "parity_configs" / "own").mkdir()
    (root / "parity_configs" / "own" / "00-b.toml").write_text("x")
    fam = root / "parity_configs" / "fam"
    ids = [(f"fam/{name}", fam / f"{name}.toml") for name in ("00-a", "01-plain", "02-out")]
    links = config_links([*ids, ("own/00-b", root / "parity_configs" / "own" / "00-b.toml")], root)
    assert links == {
        "data/fam/00-a.toml": ("fam/00-a",),
        "lib/mid.toml": ("fam/00-a",),
        "lib/real/base.toml": ("fam/00-a",),
        "data/fam/01-plain.toml": ("fam/01-plain",),
        "data/fam/02-out.toml": ("fam/02-out",),  # the link itself; its target outside is not a repository path
    }
    spec = EngineSpec()
    assert affected(["lib/real/base.toml"], spec, root, {c for c, _ in ids}, links).configs == ("fam/00-a",)


def test_a_deleted_config_whose_golden_entries_are_left_fails_a_narrowed_gate(repo):
    (repo / "parity_configs" / "wgrad" / "02-c2.toml").unlink()
    stale = (
        "FAIL run-level: golden.json has entries for wgrad/02-c2, which no longer exists: rocke-parity golden --update"
    )
    # the deleted file named (--paths, --changed), another file named (pre-commit does not pass a deleted one)
    for args in (["--paths", "parity_configs/wgrad/02-c2.toml"], ["--changed"], ["--paths", "docs/notes.md"]):
        done, doc = gate(repo, *args)
        assert done.returncode == 1 and doc["jobs"] == [] and run_level(done) == [stale], args
    done, doc = gate(repo, "--paths", "parity_configs/wgrad/01-c1.toml")  # a config selected beside it
    assert done.returncode == 1 and ran(doc) == {"wgrad/01-c1"} and run_level(done) == [stale]


def test_a_stray_file_in_a_family_fails_a_narrowed_gate(repo):
    fwd = repo / "parity_configs" / "fwd"
    for name, text in (("notes.txt", "a note\n"), ("1-misnamed.toml", pt.config_text())):
        (fwd / name).write_text(text)
        expected = f"FAIL run-level: parity_configs/fwd/{name}: file name does not match <NN>-<slug>.toml"
        # the stray file named; a config of another family named (its family's problems were the only ones shown)
        other = "parity_configs/wgrad/01-c1.toml"
        for args in (["--paths", f"parity_configs/fwd/{name}"], ["--changed"], ["--paths", other]):
            done, doc = gate(repo, *args)
            lines = run_level(done)
            assert done.returncode == 1 and len(lines) == 1 and lines[0].startswith(expected), (name, args)
        (fwd / name).unlink()


def test_golden_entries_of_a_mode_no_full_run_runs_fail_a_narrowed_gate(tmp_path):
    root = pt.make_tree(tmp_path, TREE)  # the stand-ins' default: mode spec only, as pinned
    entries = pt.golden_for(root, sorted(TREE), ("spec",))
    entries["wgrad/02-c2"]["ir"] = entries["wgrad/02-c2"]["spec"]  # no full run has a job for it
    pt.write_golden(root, entries, modes=("spec",))
    stale = (
        "FAIL run-level: golden.json has wgrad/02-c2 ir, which the full run does not run: rocke-parity golden --update"
    )
    for args in ((), ("--paths", "parity_configs/wgrad/01-c1.toml"), ("--paths", "docs/notes.md")):
        done = pt.run_cli(root, "gate", *args)
        assert done.returncode == 1 and stale in done.stdout.splitlines(), args


def test_a_clean_narrowed_run_flags_no_entry_of_a_config_it_did_not_select(repo):
    done, _ = gate(repo, "--paths", "docs/user-guide.md")
    assert done.returncode == 0 and done.stdout.startswith("rocke-parity gate: nothing to gate: --paths (1 file(s))")
    assert "(the run-level checks pass)" in done.stdout
    done, doc = gate(repo, "--paths", "parity_configs/wgrad/01-c1.toml")  # golden.json holds every config's entries
    assert done.returncode == 0 and ran(doc) == {"wgrad/01-c1"} and doc["run_level_failures"] == []


def test_a_change_that_selects_no_config_starts_no_engine(tmp_path, monkeypatch):
    from rocke_py.parity.judge import gate as gate_mod
    from rocke_py.parity.judge.jobs import Selection

    root = pt.make_tree(tmp_path, TREE)
    pt.write_golden(root, pt.golden_for(root, sorted(TREE)))

    def no_pool(*args, **kw):
        raise AssertionError("the run-level checks of a change that selects nothing started the engines")

    monkeypatch.setattr(gate_mod, "Pool", no_pool)
    run = gate_mod.run_gate(root, Selection(changed=True), pt.engine_spec())
    assert run.passed and run.verdicts == [] and run.configs == ()
    (root / "parity_configs" / "wgrad" / "00-c0.toml").unlink()
    run = gate_mod.run_gate(root, Selection(changed=True), pt.engine_spec())
    assert not run.passed and run.stale_golden == [
        "golden.json has entries for wgrad/00-c0, which no longer exists: rocke-parity golden --update"
    ]
