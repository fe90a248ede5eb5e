"""docs/harness.md is the map of the harness, and this keeps it true.

- Its module table has one row per module of ``rocke_py/parity/`` (every ``.py`` file), no row
  for a module that does not exist, and each row's imports column names exactly the harness
  modules the module imports (at its top or inside a function).
- Its state table has a row for every file of ``.rocke-parity/`` the code names: a path
  ``.rocke-parity/NAME`` anywhere in ``rocke_py``'s source text (docstrings, messages), and a
  name joined to the state directory (``state_dir(root) / "NAME"``, ``root / STATE_DIR / "NAME"``
  or ``/ FILE_NAME`` with ``FILE_NAME = "NAME"`` in the same file, and the ``.gitignore``
  :func:`rocke_py.parity.store.state.state_dir` writes).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from layout import REPO

DOC = REPO / "docs" / "harness.md"
PACKAGE = REPO / "rocke_py" / "parity"
SOURCES = REPO / "rocke_py"
MODULE_HEADING = "## Modules"
STATE_HEADING = "## The local state: `.rocke-parity/`"
STATE_DIR = ".rocke-parity"

#: what the scan must find today: a scan that stops finding one of these is broken, not the code
KNOWN_STATE = {".gitignore", "last-run.json", "parity-tables.json", "objects", "outputs", "new.lock", "known_gaps.lock"}

_CELL_NAME = re.compile(r"`([^`]+)`")
_PATH_IN_TEXT = re.compile(re.escape(STATE_DIR) + r"/([\w.-]+)")
_PLACEHOLDER = re.compile(r"[A-Z]+$")  # ``.rocke-parity/FILE`` in a docstring: any file
_JOINED = (
    re.compile(r"state_dir\([^()]*\)\s*/\s*\"([^\"]+)\""),  # state_dir(root) / "new.lock"
    re.compile(r"STATE_DIR\s*/\s*\"([^\"]+)\""),  # root / STATE_DIR / "outputs"
)
_JOINED_CONSTANT = re.compile(r"STATE_DIR\s*/\s*(?:self\.)?([A-Z][A-Z0-9_]*)\b")  # root / STATE_DIR / FILE_NAME


def table(text: str, heading: str) -> list[list[str]]:
    """The cells of each body row of the first table after ``heading`` (up to the next heading)."""
    assert f"\n{heading}\n" in text, f"docs/harness.md has no section {heading!r}"
    body = text.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.strip() for line in body.splitlines() if line.lstrip().startswith("|")]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows[2:]]  # no header, no ---


def module_rows(text: str) -> dict[str, set[str]]:
    """Module path (``run/runner.py``) -> the harness modules its row says it imports."""
    out: dict[str, set[str]] = {}
    for cells in table(text, MODULE_HEADING):
        name = _CELL_NAME.fullmatch(cells[0])
        assert name, f"a module row's first cell is not one `path.py`: {cells[0]!r}"
        assert name.group(1) not in out, f"two rows for {name.group(1)}"
        out[name.group(1)] = set(_CELL_NAME.findall(cells[-1]))
    return out


def state_rows(text: str) -> set[str]:
    """The first name under ``.rocke-parity/`` of each row of the state table."""
    out = set()
    for cells in table(text, STATE_HEADING):
        path = _CELL_NAME.search(cells[0])
        named = path.group(1) if path else ""
        assert named.startswith(f"{STATE_DIR}/"), f"a state row names no .rocke-parity path: {cells[0]!r}"
        out.add(named[len(STATE_DIR) + 1 :].split("/", 1)[0])
    return out


def harness_imports(path: Path, package: Path = PACKAGE) -> set[str]:
    """The modules of ``rocke_py.parity`` that ``path`` imports, anywhere in it and relative
    imports included, each by its dotted name below the package (``run.engines``; a
    subpackage's ``__init__`` by its own name)."""
    here = path.relative_to(package).parent.parts  # the importing module's folders
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            named = node.module.split(".") if node.module else []
            if node.level:
                parts = [*here[: len(here) - node.level + 1], *named]
            elif named[:2] == ["rocke_py", "parity"]:
                parts = named[2:]
            else:
                continue
            base = ".".join(parts)
            if not base or (package / base.replace(".", "/")).is_dir():
                out.update(_module_name(f"{base}.{a.name}".lstrip("."), package) for a in node.names)
            else:
                out.add(_module_name(base, package))
        elif isinstance(node, ast.Import):
            out.update(a.name[len("rocke_py.parity.") :] for a in node.names if a.name.startswith("rocke_py.parity."))
    return out


def _module_name(dotted: str, package: Path) -> str:
    """``dotted`` when it is a module of the package, else the package part it names."""
    while dotted and not (package / (dotted.replace(".", "/") + ".py")).is_file():
        if (package / dotted.replace(".", "/")).is_dir():
            return dotted
        dotted = dotted.rpartition(".")[0]
    return dotted


def modules(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Module path below the package -> the dotted names of the harness modules it imports."""
    return {
        p.relative_to(package).as_posix(): harness_imports(p, package)
        for p in sorted(package.rglob("*.py"))
        if "__pycache__" not in p.parts
    }


def state_names(sources: Path = SOURCES) -> set[str]:
    """Every name directly under ``.rocke-parity/`` that the source of ``rocke_py`` names."""
    out: set[str] = set()
    for path in sorted(sources.rglob("*.py")):
        text = path.read_text()
        out.update(name.rstrip(".") for name in _PATH_IN_TEXT.findall(text) if not _PLACEHOLDER.match(name))
        for pattern in _JOINED:
            out.update(pattern.findall(text))
        for constant in _JOINED_CONSTANT.findall(text):
            value = re.search(rf"^\s*{constant}\s*=\s*\"([^\"]+)\"", text, re.MULTILINE)
            assert value, f"{path.relative_to(REPO)} joins {constant} to the state directory but sets it to no string"
            out.add(value.group(1))
    state = ast.parse((sources / "parity" / "store" / "state.py").read_text())
    (fn,) = [n for n in state.body if isinstance(n, ast.FunctionDef) and n.name == "state_dir"]
    out.update(
        n.right.value
        for n in ast.walk(fn)
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div) and isinstance(n.right, ast.Constant)
    )
    out.discard(STATE_DIR)
    return out


def module_problems(text: str, package: Path = PACKAGE) -> list[str]:
    rows, real = module_rows(text), modules(package)
    problems = [f"no row for rocke_py/parity/{m}" for m in sorted(real.keys() - rows.keys())]
    problems += [f"a row for {m}, which is not a module of rocke_py/parity/" for m in sorted(rows.keys() - real.keys())]
    for m in sorted(real.keys() & rows.keys()):
        if rows[m] != real[m]:
            problems.append(f"{m} imports {sorted(real[m])}, its row says {sorted(rows[m])}")
    return problems


def state_problems(text: str, sources: Path = SOURCES) -> list[str]:
    return [f"no row for .rocke-parity/{n}" for n in sorted(state_names(sources) - state_rows(text))]


def test_the_scan_finds_the_state_files_the_code_names() -> None:
    assert KNOWN_STATE <= state_names(), sorted(KNOWN_STATE - state_names())


def test_every_module_has_its_row_and_every_row_its_module() -> None:
    assert module_problems(DOC.read_text()) == []
    assert len(modules()) >= 30  # the glob still finds the package


def test_every_state_file_the_code_names_has_a_row() -> None:
    assert state_problems(DOC.read_text()) == []
