"""The cyclic collector: a command's parent runs it rarely (it keeps every job's result to the
end), and a worker it forks runs the engines under the interpreter's own thresholds, with what
it held once the engines were loaded frozen (the collector's passes skip it)."""

from __future__ import annotations

import gc
from pathlib import Path

from rocke_py.parity import cli
from rocke_py.parity.run.engines import EngineSpec
from rocke_py.parity.run.processes import _GC_THRESHOLDS, _RARE_GC_THRESHOLDS, rare_collections
from rocke_py.parity.run.runner import Pool
from rocke_py.parity.run.work import WorkItem
from rocke_py.parity.store._toml import tomllib

GC_ENGINE = """
import gc
from rocke_py.engine.result import Emitted


def emit(config, mode, flavor):
    return Emitted(repr((gc.get_threshold(), gc.isenabled(), gc.get_freeze_count() > 0)))


def implemented_modes():
    return ("spec",)
"""


def test_the_parent_collects_rarely_and_a_worker_as_the_interpreter_does(tmp_path):
    engine = tmp_path / "gc_engine.py"
    engine.write_text(GC_ENGINE)
    spec = EngineSpec(f"{engine}:emit", f"{engine}:emit")
    before = gc.get_threshold()
    with rare_collections():
        assert gc.get_threshold() == _RARE_GC_THRESHOLDS != _GC_THRESHOLDS
        with Pool(spec, 1, 60) as pool:
            (res,) = pool.run([WorkItem("x", b"", "spec", "llvm22")])
    assert gc.get_threshold() == before
    # not the parent's rare ones: the engines run as they would alone; the loaded modules frozen
    assert res.py_text == repr((_GC_THRESHOLDS, True, True))


def test_the_program_freezes_what_main_leaves_so_the_exit_does_not_walk_it(monkeypatch):
    scripts = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["rocke-parity"] == "rocke_py.parity.cli:entry"  # the console script is the program
    monkeypatch.setattr(cli, "main", lambda replace_process=False: 3)
    gc.unfreeze()
    try:
        assert cli.entry() == 3
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()  # this test process goes on
