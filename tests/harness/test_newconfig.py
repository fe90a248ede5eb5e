"""``rocke-parity new`` writes only right configs (issue hole 13): no duplicate, no family
mismatch, no injected TOML, no stale claim in [parity], an atomic write at a free number."""

from __future__ import annotations

import shutil
import threading
import tomllib
from pathlib import Path

import pytest
import standin_tree as pt
from layout import REPO

from rocke_py.parity.cli import main
from rocke_py.parity.commands import newconfig
from rocke_py.parity.inputs.configs import CONFIG_DIR

ISA = 'isa = "v_mfma_f32_32x32x16_f16 ds_read_b64_tr_b16"'


def run(root: Path, *args: str, modes: str = "implemented_modes") -> int:
    return main([*args, "--root", str(root), "--engines", pt.engines_arg(modes), "-j", "1"])


def tree(tmp_path: Path, **standin) -> Path:
    """wgrad/00-a (emits, with an isa list and a description making claims) and wgrad/100-n."""
    pt.make_tree(
        tmp_path,
        {
            "wgrad/00-a": {
                "description": "tile_k 64 with a 64x72 LDS tile",
                **({"standin": standin} if standin else {}),
            },
            "wgrad/100-n": {
                "expect": "reject:E_X",
                "description": "E_X: the tile_k = 64 rule",
                "extra": '[standin]\npy = "reject:E_X:tile_k is wrong\\nsecond line"\n'
                'c = "reject:E_X:tile_k is wrong\\nsecond line"\n',
            },
        },
    )
    for cid in ("wgrad/00-a", "wgrad/100-n"):
        path = tmp_path / CONFIG_DIR / f"{cid}.toml"
        text = path.read_text()
        path.write_text(text.replace('expect = "', ISA + '\nexpect = "', 1))
    return tmp_path


def files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root / CONFIG_DIR).as_posix(): p.read_bytes()
        for p in sorted((root / CONFIG_DIR).rglob("*"))
        if p.is_file()
    }


def written(before: dict[str, bytes], after: dict[str, bytes]) -> list[str]:
    assert all(after.get(k) == v for k, v in before.items()), "an existing file changed"
    return sorted(set(after) - set(before))


# ----------------------------------------------------------------------------- 1. duplicates


def test_running_the_same_new_twice_is_refused_the_second_time(tmp_path, capsys):
    root = tree(tmp_path)
    assert run(root, "new", "wgrad", "--from", "wgrad/00-a", "--set", "tile_k=32", "--expect", "emit") == 0
    capsys.readouterr()
    before = files(root)
    assert run(root, "new", "wgrad", "--from", "wgrad/00-a", "--set", "tile_k=32", "--expect", "emit") == 1
    out = capsys.readouterr().out
    assert "duplicate of wgrad/01-a-tile-k-32" in out and "nothing written" in out
    assert written(before, files(root)) == []
    # the same content under another slug, or with a different [parity] or layout, is still a duplicate
    assert (
        run(root, *pt.new_args("wgrad/01-a-tile-k-32", "parity.description=another text", expect="emit", slug="other"))
        == 1
    )
    assert "duplicate of wgrad/01-a-tile-k-32" in capsys.readouterr().out
    # setting a value the source already has is a duplicate of the source (type matters: 64, not "64")
    assert run(root, "new", "wgrad", "--from", "wgrad/00-a", "--set", "tile_k=+64", "--expect", "emit") == 1
    assert "duplicate of wgrad/00-a" in capsys.readouterr().out
    assert written(before, files(root)) == []
    assert run(root, "new", "wgrad", "--from", "wgrad/00-a", "--set", 'tile_k="64"', "--expect", "emit") == 0


def test_a_negative_twice_is_refused_the_second_time(tmp_path, capsys):
    root = tree(tmp_path)
    args = ("new", "wgrad", "--from", "wgrad/100-n", "--set", "tile_k=7", "--expect", "reject:E_X")
    assert run(root, *args) == 0
    capsys.readouterr()
    before = files(root)
    assert run(root, *args) == 1
    assert "duplicate of wgrad/101-n-tile-k-7" in capsys.readouterr().out
    assert written(before, files(root)) == []


def test_same_spec_output_is_a_duplicate(tmp_path, capsys):
    # the stand-in's spec output ignores the config's values when [standin] name is set: two
    # configs with the same normalised spec (a default spelled out, say) look like this
    root = tree(tmp_path, name="k_fixed")
    before = files(root)
    assert run(root, "new", "wgrad", "--from", "wgrad/00-a", "--set", "tile_n=64", "--expect", "emit") == 1
    out = capsys.readouterr().out
    assert "duplicate of wgrad/00-a" in out and "spec output" in out and "nothing written" in out
    assert written(before, files(root)) == []
    # without --expect the proposal says so too
    assert run(root, "new", "wgrad", "--from", "wgrad/00-a", "--set", "tile_n=64") == 1
    assert "duplicate of wgrad/00-a" in capsys.readouterr().out


def real_repo(tmp_path: Path) -> Path:
    shutil.copytree(REPO / CONFIG_DIR, tmp_path / CONFIG_DIR)
    return tmp_path


def real(root: Path, *args: str) -> int:
    return main([*args, "--root", str(root), "-j", "2"])


def test_real_engines_a_default_spelled_out_is_a_duplicate(tmp_path, capsys):
    root = real_repo(tmp_path)
    before = files(root)
    assert real(root, "new", "wgrad", "--from", "wgrad/11", "--set", "pipeline=mem", "--expect", "emit") == 1
    out = capsys.readouterr().out
    assert "duplicate of wgrad/11-kouter-cshuffle" in out, out
    assert written(before, files(root)) == []


# ----------------------------------------------------------------------------- 2. family


def test_family_mismatch_is_refused(tmp_path, capsys):
    root = tree(tmp_path)
    before = files(root)
    assert run(root, "new", "fwd", "--from", "wgrad/00-a", "--set", "tile_k=32", "--expect", "emit") == 2
    err = capsys.readouterr().err
    assert "[spec] family is 'wgrad'" in err and "--set family=fwd" in err
    assert written(before, files(root)) == []
    assert run(root, "new", "fwd", "--from", "wgrad/00-a", "--set", "family=fwd", "--expect", "emit") == 0
    new = written(before, files(root))
    assert new == ["fwd/00-a-family-fwd.toml"]
    assert tomllib.loads(files(root)[new[0]].decode())["spec"]["family"] == "fwd"
    # the result must agree too: a wgrad source moved to the fwd family cannot stay in wgrad/
    before = files(root)
    assert run(root, "new", "wgrad", "--from", "wgrad/00-a", "--set", "family=dgrad", "--expect", "emit") == 2
    assert "[spec] family is 'dgrad'" in capsys.readouterr().err
    assert written(before, files(root)) == []


# ----------------------------------------------------------------------------- 3. --set values and keys

BAD_SETS = [
    'name="a"\n[bogus]',
    'name="a"\n[bogus]\nx = "b"',
    "name=a\n[bogus]",
    'name="a"  # comment',
    'name="a" "b"',
    'name="a"b"',
    'name="a\\x"',
    "name='a'",
    "name=a=b",
    "name=a#b",
    "name=[a]",
    'name=a"b',
    "name=a\tb",
    "name=a\rb",
    "name=",
    "tile_k=007",
    "tile_k=1.5",
    "tile_k=1_000",
    "tile_k=0x10",
    "tile_k=4294967296",
    "bogus=1",
    "spec.bogus=1",
    "problem.tile_k=1",
    "spec.a-b=1",
    "1a=1",
    "standin.py=emit",
    "spec.tile.k=1",
    "parity.isa=v_mfma",
    "parity.expect=emit",
    "parity.bogus=1",
    "parity.description=1",
    "tile_k=32",  # and once more below: a key set twice
]


@pytest.mark.parametrize("setting", BAD_SETS, ids=repr)
def test_a_set_that_is_not_one_scalar_of_a_known_key_is_refused(tmp_path, capsys, setting):
    root = tree(tmp_path)
    before = files(root)
    extra = ["--set", "tile_k=16"] if setting == "tile_k=32" else []
    assert run(root, "new", "wgrad", "--from", "wgrad/00-a", "--set", setting, *extra, "--expect", "emit") == 2
    err = capsys.readouterr().err
    assert err.startswith("rocke-parity new: --set") and err.count("\n") == 1, err
    assert written(before, files(root)) == []


GOOD_SETS = [
    ("name=abc", "spec", "name", "abc"),
    ('name="a\\"b\\\\c\\td\\ne"', "spec", "name", 'a"b\\c\td\ne'),
    ("name=K-outer tile 32", "spec", "name", "K-outer tile 32"),
    ("lds_k_outer=auto", "spec", "lds_k_outer", "auto"),
    ("spec.async_dma=true", "spec", "async_dma", True),
    ("pH=-1", "problem", "pH", -1),
    ("arch=gfx942", "target", "arch", "gfx942"),
    ("tile_m=32", "spec", "tile_m", 32),
]


@pytest.mark.parametrize("setting,table,key,value", GOOD_SETS, ids=lambda v: repr(v))
def test_the_written_file_parses_to_exactly_the_intended_values(tmp_path, capsys, setting, table, key, value):
    root = tree(tmp_path)
    src = tomllib.loads((root / CONFIG_DIR / "wgrad/00-a.toml").read_text())
    before = files(root)
    assert run(root, "new", "wgrad", "--from", "wgrad/00-a", "--set", setting, "--expect", "emit") == 0, (
        capsys.readouterr()
    )
    [new] = written(before, files(root))
    doc = tomllib.loads(files(root)[new].decode())
    want = {t: dict(v) for t, v in src.items() if t != "parity"}
    want[table][key] = value
    assert {t: v for t, v in doc.items() if t != "parity"} == want
    assert type(doc[table][key]) is type(value)
    assert set(doc) == set(src)


def test_a_key_goes_only_to_a_table_the_source_has(tmp_path, capsys):
    root = tree(tmp_path)
    path = root / CONFIG_DIR / "wgrad/01-notarget.toml"
    path.write_text(
        '[parity]\ndescription = "no target"\nexpect = "emit"\n\n[problem]\nN = 1\n\n[spec]\nfamily = "wgrad"\n'
    )
    before = files(root)
    assert run(root, "new", "wgrad", "--from", "wgrad/01", "--set", "arch=gfx942", "--expect", "emit") == 2
    assert "has no [target] table" in capsys.readouterr().err
    assert written(before, files(root)) == []


# ----------------------------------------------------------------------------- 4./5. [parity] claims


def test_a_derived_description_drops_the_sources_claims(tmp_path, capsys):
    root = tree(tmp_path)
    before = files(root)
    assert (
        run(
            root, "new", "wgrad", "--from", "wgrad/00-a", "--set", "tile_m=32", "--set", "tile_k=32", "--expect", "emit"
        )
        == 0
    )
    out = capsys.readouterr().out
    [new] = written(before, files(root))
    parity = tomllib.loads(files(root)[new].decode())["parity"]
    assert parity["description"] == "derived from wgrad/00-a with tile_m=32, tile_k=32"
    # the source's list is not copied; this stand-in config compiles to no kernel, so none is suggested
    assert "isa" not in parity
    assert "rocke-parity check-llvm wgrad/01-a-tile-m-32-tile-k-32" in out and "--histogram" in out
    before = files(root)
    assert (
        run(
            root,
            *pt.new_args(
                "wgrad/00-a", "tile_m=16", 'parity.description="tile_m 16: the smallest M tile"', expect="emit"
            ),
        )
        == 0
    )
    [new] = written(before, files(root))
    assert tomllib.loads(files(root)[new].decode())["parity"]["description"] == "tile_m 16: the smallest M tile"


def test_a_negative_names_its_rejection_and_has_no_isa(tmp_path, capsys):
    root = tree(tmp_path)
    before = files(root)
    assert run(root, "new", "wgrad", "--from", "wgrad/100-n", "--set", "tile_k=7", "--expect", "reject:E_X") == 0
    [new] = written(before, files(root))
    assert new == "wgrad/101-n-tile-k-7.toml"
    parity = tomllib.loads(files(root)[new].decode())["parity"]
    assert parity == {
        "description": "rejected: E_X \u2014 tile_k is wrong (derived from wgrad/100-n with tile_k=7)",
        "expect": "reject:E_X",
    }
    assert "check-llvm" not in capsys.readouterr().out


def test_real_engines_description_and_negative(tmp_path, capsys):
    root = real_repo(tmp_path)
    before = files(root)
    assert real(root, "new", "wgrad", "--from", "wgrad/11", "--set", "tile_k=32", "--expect", "emit") == 0
    [new] = written(before, files(root))
    parity = tomllib.loads(files(root)[new].decode())["parity"]
    isa = parity.pop("isa")  # the compiled kernel's suggestion, not wgrad/11's list
    assert parity == {"description": "derived from wgrad/11-kouter-cshuffle with tile_k=32", "expect": "emit"}
    assert isa.startswith("v_mfma_f32_32x32x16_f16 ds_read_b64_tr_b16 ") and isa.endswith(" buffer_store_dwordx4")
    capsys.readouterr()
    before = files(root)
    assert (
        real(
            root,
            "new",
            "wgrad",
            "--from",
            "wgrad/11",
            "--set",
            "tile_k=7",
            "--expect",
            "reject:WGRAD_TILE_DIVISIBILITY",
        )
        == 0
    )
    [new] = written(before, files(root))
    parity = tomllib.loads(files(root)[new].decode())["parity"]
    assert parity["description"].startswith("rejected: WGRAD_TILE_DIVISIBILITY \u2014 tile_k = 7 ")
    assert "isa" not in parity and "64x72" not in parity["description"]


# ----------------------------------------------------------------------------- expectation, writing


def test_a_negative_whose_modes_disagree_on_the_message_is_not_written(tmp_path, capsys):
    root = tree(tmp_path)
    (root / CONFIG_DIR / "wgrad/100-n.toml").write_text(
        pt.config_text(
            "reject:E_X",
            {"py": "reject:E_X:one", "c": "reject:E_X:one", "py_ir": "reject:E_X:two", "c_ir": "reject:E_X:two"},
        )
    )
    before = files(root)
    assert run(root, *pt.new_args("wgrad/100-n", "tile_k=7", expect="reject:E_X"), modes="all_modes") == 1
    assert "not one verdict" in capsys.readouterr().out
    assert written(before, files(root)) == []


def test_the_number_is_taken_at_write_time_never_reused(tmp_path, capsys, monkeypatch):
    root = tree(tmp_path)
    # a file the harness cannot read still holds its number
    (root / CONFIG_DIR / "wgrad/01-broken.toml").write_text("not toml [")
    real_run = newconfig.Pool.run

    def run_and_race(self, items, *a, **kw):  # another writer takes the next number during the run
        res = real_run(self, items, *a, **kw)
        other = root / CONFIG_DIR / "wgrad/02-other.toml"
        if not other.exists():
            other.write_text(pt.config_text(description="another config", extra='[standin]\nsalt = "x"\n'))
        return res

    monkeypatch.setattr(newconfig.Pool, "run", run_and_race)
    assert run(root, "new", "wgrad", "--from", "wgrad/00-a", "--set", "tile_k=32", "--expect", "emit") == 0
    names = sorted(p.name for p in (root / CONFIG_DIR / "wgrad").iterdir())
    assert names == ["00-a.toml", "01-broken.toml", "02-other.toml", "03-a-tile-k-32.toml", "100-n.toml"]


def test_concurrent_writers_get_different_numbers(tmp_path):
    root = tree(tmp_path)
    ids: list[str] = []
    errors: list[BaseException] = []

    def write(i: int) -> None:
        try:
            data = pt.config_text(description=f"config {i}").encode()
            ids.append(newconfig.write_new_config(root, "wgrad", f"c{i}", data, reject=False, check=None).id)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    numbers = sorted(int(i.split("/")[1][:2]) for i in ids)
    assert numbers == list(range(1, 9))
    assert not [p for p in (root / CONFIG_DIR / "wgrad").iterdir() if p.name.startswith(".")]


def test_a_failed_write_leaves_nothing(tmp_path, capsys, monkeypatch):
    root = tree(tmp_path)
    before = files(root)

    def no_link(*a, **kw):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(newconfig.os, "link", no_link)
    assert run(root, "new", "wgrad", "--from", "wgrad/00-a", "--set", "tile_k=32", "--expect", "emit") == 2
    err = capsys.readouterr().err
    assert "cannot write" in err and "No space left" in err and err.count("\n") == 1
    assert written(before, files(root)) == []
    assert not [p for p in (root / CONFIG_DIR / "wgrad").iterdir() if p.name.startswith(".")]
