"""The harness's shape: its folders import one way, no module imports itself back, and no module
is longer than a reader can hold.

- The folders of ``rocke_py/parity/`` are layers, top to bottom: the command line (``cli``,
  ``__main__``), ``commands``, ``report``, ``judge``, ``inputs``, ``store``, ``run``. A module
  imports its own folder and the folders below, never one above (docs/harness.md, "Layers").
- No import circle among the modules, counting imports inside functions: a circle is two
  modules that can only be understood together.
- No module over :data:`MOST_LINES` lines.

Each rule is shown to catch the fault it guards against on a made-up graph.
"""

from __future__ import annotations

import pytest
from test_harness_doc import PACKAGE, harness_imports, modules

#: top to bottom; the top-level modules of the package are the command line's layer
LAYERS = ("", "commands", "report", "judge", "inputs", "store", "run")
MOST_LINES = 600


def layer_of(module: str) -> str:
    """``run.engines`` -> ``run``; ``cli`` -> ``''``."""
    return module.split(".")[0] if "." in module else ""


def dotted(path: str) -> str:
    """``run/engines.py`` -> ``run.engines``; ``run/__init__.py`` -> ``run``."""
    return path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def graph() -> dict[str, set[str]]:
    return {dotted(path): imports for path, imports in modules().items()}


def upward_imports(imports: dict[str, set[str]]) -> list[str]:
    """Each import of a module from a layer above its own."""
    problems = []
    for module, used in sorted(imports.items()):
        rank = LAYERS.index(layer_of(module))
        for other in sorted(used):
            other_layer = layer_of(other)
            assert other_layer in LAYERS, f"{other}: its folder is no layer (add it to LAYERS and docs/harness.md)"
            if LAYERS.index(other_layer) < rank:
                problems.append(
                    f"{module} ({layer_of(module)}/) imports {other} ({other_layer or 'top'}/), a layer above"
                )
    return problems


def circles(imports: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (and a module importing itself),
    by Tarjan's algorithm."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(imports.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1 or v in imports.get(v, ()):
                found.append(sorted(group))

    for v in sorted(imports):
        if v not in index:
            visit(v)
    return found


def long_modules(package=PACKAGE) -> list[str]:
    out = []
    for path in sorted(package.rglob("*.py")):
        n = len(path.read_text().splitlines())
        if n > MOST_LINES:
            out.append(f"{path.relative_to(package).as_posix()}: {n} lines")
    return out


def test_every_folder_is_a_layer() -> None:
    assert {layer_of(m) for m in graph()} == set(LAYERS)


def test_imports_run_down_the_layers() -> None:
    assert upward_imports(graph()) == []


def test_no_import_circle() -> None:
    assert circles(graph()) == []


def test_no_module_is_over_the_line_limit() -> None:
    assert long_modules() == []


# ------------------------------------------------------------------- each rule, shown to fail


def test_an_upward_import_is_caught() -> None:
    imports = graph()
    imports["run.runner"] = imports["run.runner"] | {"judge.gate"}
    assert upward_imports(imports) == ["run.runner (run/) imports judge.gate (judge/), a layer above"]


def test_a_top_level_import_from_below_is_caught() -> None:
    imports = graph()
    imports["commands.commands"] = imports["commands.commands"] | {"cli"}
    assert upward_imports(imports) == ["commands.commands (commands/) imports cli (top/), a layer above"]


@pytest.mark.parametrize(
    "back",
    [("commands.diff", "commands.gaps_edit"), ("judge.compare", "judge.gate"), ("store.state", "store.state")],
    ids=["two-modules", "through-a-third", "itself"],
)
def test_a_circle_is_caught(back: tuple[str, str]) -> None:
    imports = graph()
    importer, imported = back
    imports[importer] = imports[importer] | {imported}
    found = circles(imports)
    assert len(found) == 1 and importer in found[0] and imported in found[0]


def test_a_long_module_is_caught(tmp_path) -> None:
    (tmp_path / "short.py").write_text("x = 1\n" * MOST_LINES)
    (tmp_path / "deep").mkdir()
    (tmp_path / "deep" / "long.py").write_text("x = 1\n" * (MOST_LINES + 1))
    assert long_modules(tmp_path) == [f"deep/long.py: {MOST_LINES + 1} lines"]


def test_a_relative_upward_import_is_caught(tmp_path) -> None:
    (tmp_path / "run").mkdir()
    (tmp_path / "judge").mkdir()
    (tmp_path / "judge" / "gate.py").write_text("")
    (tmp_path / "run" / "runner.py").write_text("from ..judge import gate\nfrom . import engines\n")
    (tmp_path / "run" / "engines.py").write_text("")
    found = harness_imports(tmp_path / "run" / "runner.py", tmp_path)
    assert found == {"judge.gate", "run.engines"}
    assert upward_imports({"run.runner": found}) == ["run.runner (run/) imports judge.gate (judge/), a layer above"]
