"""The test programs' build cache (tests/tools/cbuild.py): a unit compiles once per content, a
program links once per content, and an edit of a unit, of a header a unit includes or of the
program's own files gives a new key, so the tree under test is what runs.

A stand-in engine in tmp_path (two units, a private header, a program with its own header)
against a cache of its own (ROCKE_PARITY_CACHE)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cbuild
import pytest

pytestmark = pytest.mark.skipif(cbuild.compiler() is None, reason="no C compiler")

FILES = {
    "include/rocke.h": "#ifndef ROCKE_H\n#define ROCKE_H\nint rocke_version(void);\nint rk_other(void);\n#endif\n",
    "src/a.c": '#include "../include/rocke.h"\n#include "b.h"\nint rocke_version(void) { return B; }\n',
    "src/b.h": "#define B 7\n",
    "src/c.c": '#include "rocke.h"\nint rk_other(void) { return 1; }\n',
    "tests/tiny.h": "#define ADD 0\n",
    "tests/tiny.c": '#include <stdio.h>\n#include "rocke.h"\n#include "tiny.h"\n'
    'int main(void) { printf("%d\\n", rocke_version() + rk_other() + ADD); return 0; }\n',
}


@pytest.fixture
def c_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ROCKE_PARITY_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "tree" / "rocke_c"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def tiny(c_root: Path) -> cbuild.Program:
    return cbuild.program(c_root / "tests" / "tiny.c", c_root=c_root)


def run(program: cbuild.Program) -> str:
    return subprocess.run([str(program.path)], capture_output=True, text=True, check=True).stdout.strip()


def test_a_program_builds_once_and_again_after_each_edit(c_root: Path, tmp_path: Path) -> None:
    first = tiny(c_root)
    assert first.compiled == ("src/a.c", "src/c.c", "link") and run(first) == "8"
    assert first.path.is_relative_to(tmp_path / "cache" / "test-programs")

    again = tiny(c_root)
    assert again == cbuild.Program(first.path, ())  # a cache hit: nothing compiled, nothing linked

    edit(c_root / "src/c.c", "{ return 1; }", "{ return 1; } /* a comment */")
    unit = tiny(c_root)
    assert unit.compiled == ("src/c.c", "link") and unit.path != first.path

    edit(c_root / "src/b.h", "7", "8")  # included by a.c only
    header = tiny(c_root)
    assert header.compiled == ("src/a.c", "link") and header.path not in (first.path, unit.path)
    assert run(header) == "9"

    edit(c_root / "tests/tiny.h", "0", "10")  # the program's own header: only the link again
    main = tiny(c_root)
    assert main.compiled == ("link",) and run(main) == "19"

    edit(c_root / "src/b.h", "8", "7")  # back to an earlier content: that build again
    edit(c_root / "tests/tiny.h", "10", "0")
    assert tiny(c_root) == cbuild.Program(unit.path, ())


def test_each_flag_set_has_its_objects(c_root: Path) -> None:
    plain = tiny(c_root)
    o2 = cbuild.program(c_root / "tests" / "tiny.c", c_root=c_root, opt="-O2")
    assert o2.compiled == ("src/a.c", "src/c.c", "link") and o2.path != plain.path
    lib = cbuild.program(c_root / "tests" / "tiny.c", c_root=c_root, as_library=True)
    assert lib.compiled == ("link",) and lib.path != plain.path  # the -O1 objects, archived
    assert run(lib) == run(o2) == "8"


def test_the_shared_library_builds_once_per_content(c_root: Path) -> None:
    defines = ["-DROCKE_CRASH_AT_STAGE=1"]
    first = cbuild.shared_library_program(defines=defines, c_root=c_root)
    assert first.compiled == ("src/a.c", "src/c.c", "link")
    assert cbuild.shared_library_program(defines=defines, c_root=c_root) == cbuild.Program(first.path, ())
    other = cbuild.shared_library_program(c_root=c_root)  # other defines: other objects
    assert other.compiled == ("src/a.c", "src/c.c", "link") and other.path != first.path
    edit(c_root / "src/c.c", "{ return 1; }", "{ return 2; }")
    assert cbuild.shared_library_program(defines=defines, c_root=c_root).compiled == ("src/c.c", "link")


def test_two_processes_at_once_build_it_once(c_root: Path) -> None:
    tools = Path(cbuild.__file__).parent
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import cbuild; from pathlib import Path\n"
        "p = cbuild.program(Path(sys.argv[2]) / 'tests' / 'tiny.c', c_root=Path(sys.argv[2]))\n"
        "print(json.dumps([str(p.path), p.compiled]))"
    )
    cmd = [sys.executable, "-c", code, str(tools), str(c_root)]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [json.loads(p.communicate(timeout=120)[0]) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert outs[0][0] == outs[1][0]
    assert sorted(outs[0][1] + outs[1][1]) == ["link", "src/a.c", "src/c.c"]
