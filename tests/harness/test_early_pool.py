"""The gate's early workers: started by the command line before it imports the commands (so they
load the engines meanwhile), used by the gate when they are the workers it needs, and never left
behind."""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys

import pytest
import standin_tree as pt

from rocke_py.parity import cli
from rocke_py.parity.judge.gate import adopt_pool
from rocke_py.parity.run.runner import Pool
from rocke_py.parity.store.objects import text_store

TREE = {"fwd/00-a": {}, "fwd/01-b": {"standin": {"salt": "b"}}}

# the launches of a gate run from the command line: how many, and whether the commands' modules
# were already imported at the first (they must not be: the workers load the engines meanwhile)
PROBE = """
import json, sys
from rocke_py.parity.run import runner
launches = []
launch = runner.Pool.launch
def spy(self):
    launches.append("rocke_py.parity.commands.commands" in sys.modules)
    return launch(self)
runner.Pool.launch = spy
from rocke_py.parity import cli
rc = cli.main(sys.argv[1:])
print(json.dumps({"rc": rc, "launches": launches}), file=sys.stderr)
"""


def probe(root, *args: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "gate", "--root", str(root), "--engines", pt.engines_arg(), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return json.loads(done.stderr.strip().splitlines()[-1])


def test_the_gate_runs_on_the_workers_started_before_the_commands_were_imported(tmp_path):
    root = pt.make_tree(tmp_path, TREE)
    got = probe(root, "-j", "2")
    assert got["launches"] == [False]  # one pool, launched before the commands' import


def test_workers_the_run_cannot_use_are_closed_and_others_started(tmp_path):
    root = pt.make_tree(tmp_path, TREE)
    early = Pool(pt.engine_spec(), 2, 10.0, text_store(root)).launch()
    assert adopt_pool(early, root, pt.engine_spec(), 2, 10.0) is early
    assert adopt_pool(early, root, pt.engine_spec(), 1, 10.0) is None  # a named selection wants fewer
    assert not early._workers and not multiprocessing.active_children()
    other = Pool(pt.engine_spec(), 1, 10.0, text_store(root)).launch()
    try:
        assert adopt_pool(other, root, pt.engine_spec(), 1, 30.0) is None  # another timeout
        assert not multiprocessing.active_children()
    finally:
        other.close()


def test_a_usage_error_after_the_launch_leaves_no_worker(tmp_path, capsys):
    root = pt.make_tree(tmp_path, TREE)
    rc = cli.main(["gate", "--root", str(root), "--engines", pt.engines_arg(), "-j", "2", "--shard", "3/2"])
    assert rc == cli.EXIT_USAGE
    assert "--shard 3/2" in capsys.readouterr().err
    assert not multiprocessing.active_children()


def test_no_early_workers_for_a_command_that_runs_no_gate_or_a_bad_option(tmp_path):
    root = pt.make_tree(tmp_path, TREE)
    parser = cli.build_parser()
    for argv in (["list"], ["gate", "-j", "0"], ["gate", "--engines", "nonsense"]):
        args = parser.parse_args([*argv, "--root", str(root)])
        assert cli.early_pool(args) is None, argv
    with pytest.raises(SystemExit):  # a bad --timeout does not even parse
        parser.parse_args(["gate", "--timeout", "0", "--root", str(root)])
