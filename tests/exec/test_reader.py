"""The IR reader (rocke_py/exec/reader.py): every emitting config's `ir` text from both engines
reads and prints back to the same bytes; malformed texts fail naming the line."""

from __future__ import annotations

import pytest
from layout import REPO

from rocke_py import cbridge
from rocke_py import engine as py_engine
from rocke_py.engine.result import Emitted
from rocke_py.exec.printer import print_kernel, tagged
from rocke_py.exec.reader import ReadError, read_ir
from rocke_py.parity.inputs.configs import discover

EMITTING = [c for c in discover(REPO).configs if c.expect.emits]
ENGINES = {"py": py_engine.emit, "c": cbridge.emit}


def test_round_trip_every_emitting_config() -> None:
    """Both engines' text of every config; a text both engines print is read once (read_ir
    and print_kernel are pure functions of it)."""
    assert len(EMITTING) >= 40
    for config in EMITTING:
        texts = []
        for engine in sorted(ENGINES):
            out = ENGINES[engine](config.data, "ir", "llvm22")
            assert isinstance(out, Emitted), (engine, config.id, out)
            texts.append(out.text)
        for text in dict.fromkeys(texts):
            kernel = read_ir(text)
            assert print_kernel(kernel) == text, config.id
            assert kernel.attrs["wave_size"] in (32, 64) and len(kernel.attrs["grid"]) == 3, config.id


SMALL = """rocke.ir v1
kernel @k {
  attrs { grid = l:[ i:1, i:1, i:1 ], max_workgroup_size = i:64, wave_size = i:64 }
  params {
    %P : ptr<f32,global> { noalias = b:true }
    %n : i32
  }
  region @entry {
    %c1 : f32 = arith.constant (  ) { ity = s:"f32", value = f:-2.0 }
    %s2 : smem<f16, [4x8]> = tile.smem_alloc (  ) { type = s:"smem<f16, [4x8]>" }
    %for3 : i32 = scf.for ( %n, %n, %n, %n ) { iter_args = l:[ { name = s:"%x", type = s:"i32" } ], iv = s:"%k0", iv_type = s:"i32" }
      region @body {
        scf.yield ( %x ) { num = i:1 }
      }
    cf.return (  )
  }
}
"""  # noqa: E501


def test_small_kernel_fields() -> None:
    k = read_ir(SMALL)
    assert print_kernel(k) == SMALL
    assert [p.value.type for p in k.params] == ["ptr<f32,global>", "i32"]
    c1, s2, for3, ret = k.entry.ops
    assert c1.attrs == {"ity": "f32", "value": -2.0} and c1.line == 9
    assert s2.results[0].type == "smem<f16, [4x8]>"
    assert for3.operands == ("%n", "%n", "%n", "%n") and for3.regions[0].name == "body"
    assert for3.regions[0].ops[0].operands == ("%x",)
    assert ret.name == "cf.return" and ret.operands == ()


#: a fault -> (a piece of SMALL, what replaces it, the line the error names)
FAULTS = {
    "unknown-version": ("rocke.ir v1", "rocke.ir v2", 1),
    "bad-integer": ("i:64, wave", "i:6x4, wave", 3),
    "param-without-colon": ("    %n : i32", "    %n i32", 6),
    "operands-spaced-wrong": ("= arith.constant (  )", "= arith.constant ( )", 9),
    "unterminated-string": ('ity = s:"f32"', 'ity = s:"f32', 9),
    "unclosed-shape": ("smem<f16, [4x8]> =", "smem<f16, [4x8] =", 10),
    "indented-wrong": ("        scf.yield", "       scf.yield", 13),
    "stray-line": ("    cf.return (  )\n", "    cf.return (  )\n    %bad\n", 16),
}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_errors_name_the_line(fault: str) -> None:
    old, new, line = FAULTS[fault]
    assert old in SMALL
    with pytest.raises(ReadError) as info:
        read_ir(SMALL.replace(old, new, 1))
    assert info.value.line == line
    assert str(info.value).startswith(f"line {line}, column ")


def test_truncated_text() -> None:
    with pytest.raises(ReadError, match="unexpected end of the text"):
        read_ir(SMALL[: SMALL.index("  region @entry")])
    with pytest.raises(ReadError, match="does not end with a newline"):
        read_ir(SMALL.rstrip("\n"))


@pytest.mark.parametrize("value", ["", "plain", 'a\\b"c\nd\te', "\\\\"])
def test_strings_round_trip(value: str) -> None:
    text = SMALL.replace('ity = s:"f32"', "ity = " + tagged(value))
    assert read_ir(text).entry.ops[0].attrs["ity"] == value
    assert print_kernel(read_ir(text)) == text


def test_bad_escape_names_the_column() -> None:
    with pytest.raises(ReadError, match=r"line 9, column \d+: a bad escape \\q"):
        read_ir(SMALL.replace('ity = s:"f32"', 'ity = s:"f\\q"'))
