"""The workers' text store: a gate's workers leave the texts the parent does not need in the
local object cache and send only their runs; ``JobResult.text`` reads a text back from there.

Each test runs a real pool on a shipped config and checks one rule of ``worker._run_job``: which
texts go to the store and which still come over the pipe."""

from __future__ import annotations

import pytest
from layout import REPO

from rocke_py import engine as py_engine
from rocke_py.parity.run.engines import EngineSpec
from rocke_py.parity.run.runner import Pool
from rocke_py.parity.run.work import WorkItem
from rocke_py.parity.run.worker import _INLINE_CHARS
from rocke_py.parity.store.objects import ObjectCache

CONFIG = REPO / "parity_configs" / "wgrad" / "00-baseline.toml"
FAULTS = REPO / "tests" / "faults" / "fault_engines.py"


def run_one(mode: str, store, engines: EngineSpec = EngineSpec(), flavor: str = "llvm22"):
    item = WorkItem("wgrad/00", CONFIG.read_bytes(), mode, flavor)
    with Pool(engines, 1, 60, store) as pool:
        (res,) = pool.run([item])
    return res


def real_text(mode: str, flavor: str = "llvm22") -> str:
    return py_engine.emit(CONFIG.read_bytes(), mode, flavor).text


def test_texts_both_engines_agree_on_go_to_the_store_and_read_back_the_same(tmp_path):
    store = ObjectCache(tmp_path)
    res = run_one("ll", store)
    assert (res.py_text, res.c_text) == (None, None)  # nothing big came over the pipe
    assert res.py[0].sha256 == res.c[0].sha256 and store.has(res.py[0].sha256)
    assert res.text("py") == res.text("c") == real_text("ll")


def test_without_a_store_the_texts_come_over_the_pipe():
    res = run_one("ll", None)
    assert res.py_text == real_text("ll") and res.text("c") == res.py_text


def test_a_small_text_is_always_sent(tmp_path):
    res = run_one("spec", ObjectCache(tmp_path))  # the gate reads each kernel's name in mode spec's text
    assert len(real_text("spec")) < _INLINE_CHARS
    assert res.py_text == real_text("spec")


def test_texts_that_differ_are_both_sent_for_the_parent_to_compare(tmp_path):
    store = ObjectCache(tmp_path)
    flip = EngineSpec(f"{FAULTS}:flip_llvm20_py", f"{FAULTS}:flip_llvm20_c", f"{FAULTS}:implemented_modes")
    marked = tmp_path / "marked.toml"
    marked.write_bytes(CONFIG.read_bytes() + b"# fault: emit-target\n")
    item = WorkItem("wgrad/00", marked.read_bytes(), "ll", "llvm20")
    with Pool(flip, 1, 60, store) as pool:
        (res,) = pool.run([item])
    assert res.py_text is not None and res.c_text is not None and res.py_text != res.c_text
    assert not store.has(res.py[0].sha256) and not store.has(res.c[0].sha256)


class FullStore(ObjectCache):
    """A store on a full disk: every write fails."""

    def put(self, sha: str, text: str) -> None:
        raise OSError(28, "No space left on device")


def test_a_text_the_store_cannot_take_is_sent(tmp_path):
    res = run_one("ll", FullStore(tmp_path))
    assert res.py_text == real_text("ll")


@pytest.mark.parametrize("side", ["py", "c"])
def test_a_text_gone_from_the_store_reads_as_none(tmp_path, side):
    store = ObjectCache(tmp_path)
    res = run_one("ir", store)
    (store.dir / f"{res.py[0].sha256}.z").unlink()
    assert res.text(side) is None  # as for a text never kept: the caller says it cannot show it
