"""rocke_py/facts.py is the one Python home of the shared facts; the engines' own tables agree
with it: the Python engine's key table (rocke_py/engine/schema.py KEYS) and flavor table, and
the C engine's key rows (internal.h's RK_KEYS X-macro, which makes enum rk_key and schema.c's key
table), arch, family and table lists, modes and flavors. Each
reader of the C text is shown to see a change: a C list that drifts fails here."""

from __future__ import annotations

import re

from layout import REPO

from rocke_py import facts
from rocke_py.engine import lower_ll_tables, schema
from rocke_py.parity.judge import golden

C_SRC = REPO / "rocke_c" / "src"


def block(text: str, start: str, end: str = "};") -> str:
    i = text.index(start) + len(start)
    return text[i : text.index(end, i)]


def c_strings(text: str, start: str) -> tuple[str, ...]:
    """The string literals of a C initializer `start ... };`."""
    return tuple(re.findall(r'"([^"]*)"', block(text, start)))


def c_keys(text: str) -> tuple[tuple[str, str], ...]:
    """internal.h's RK_KEYS rows, in order: (id, name), the id naming RK_KEY_<id>."""
    rows = block(text, "#define RK_KEYS(KEY)", "\n\n")
    return tuple(re.findall(r'KEY\((\w+), \w+, "([A-Za-z_][A-Za-z0-9_]*)"', rows))


def all_keys() -> tuple[str, ...]:
    return tuple(k for table in ("target", "problem", "spec") for k in facts.KEYS[table])


def test_the_python_engine_key_table_is_the_facts() -> None:
    assert tuple(facts.KEYS) == facts.TABLES[1:]  # [parity] is the harness's alone
    for table, names in facts.KEYS.items():
        assert tuple(k.name for k in schema.KEYS if k.table == table) == names, table
    assert tuple(k.name for k in schema.KEYS) == all_keys()  # the tables in order, too


def test_the_c_key_rows_are_the_facts() -> None:
    """RK_KEYS makes enum rk_key and schema.c's key table: its names are the facts' keys, in
    order, and each id is its name in capitals (the enum's RK_KEY_<ID>)."""
    internal = (C_SRC / "internal.h").read_text()
    rows = c_keys(internal)
    assert tuple(name for _, name in rows) == all_keys()
    assert all(key_id == name.upper() for key_id, name in rows)
    assert "RK_KEYS(RK_KEY_ENUM)" in internal and "RK_KEYS(RK_KEY_ROW)" in (C_SRC / "schema.c").read_text()
    swapped = internal.replace('KEY(SH, PROBLEM, "sH", 1, 0)', 'KEY(SW, PROBLEM, "sW", 1, 0)', 1)
    assert swapped != internal and tuple(name for _, name in c_keys(swapped)) != all_keys()
    dropped = internal.replace('    KEY(RELU, SPEC_OF, "relu", RK_T_BOOL) \\\n', "")
    assert dropped != internal and tuple(name for _, name in c_keys(dropped)) != all_keys()


def test_the_c_lists_are_the_facts() -> None:
    schema_c = (C_SRC / "schema.c").read_text()
    emit_c = (C_SRC / "emit.c").read_text()
    tables_c = (C_SRC / "lower_ll_tables.c").read_text()
    assert c_strings(schema_c, "rk_archs[] = {") == facts.ARCHS
    assert c_strings(schema_c, "rk_families[] = {") == facts.FAMILIES
    assert c_strings(schema_c, "rk_table_names[RK_TABLE_COUNT] = {") == facts.TABLES
    assert c_strings(emit_c, "rk_modes[] = {") == facts.MODES
    assert c_strings(emit_c, "rk_flavors[] = {") == facts.FLAVORS
    rows = block(tables_c, "rk_ll_flavors[] = {")
    assert tuple(re.findall(r'\{"(llvm\d+)"', rows)) == facts.FLAVORS
    assert tuple(f.name for f in lower_ll_tables.FLAVORS) == facts.FLAVORS
    moved = schema_c.replace('"gfx1201", "gfx1250"', '"gfx1250", "gfx1201"')
    assert moved != schema_c and c_strings(moved, "rk_archs[] = {") != facts.ARCHS


def test_the_config_file_name_rule() -> None:
    ok = ("00-baseline.toml", "11-kouter-cshuffle.toml", "100-unknown-pipeline.toml", "07-split_k4.toml")
    bad = ("0-a.toml", "011-a.toml", "11_a.toml", "11-A.toml", "11-.toml", "11--a.toml", "11-a.TOML", "a-11.toml")
    assert all(facts.CONFIG_FILE_NAME.match(n) for n in ok)
    assert not any(facts.CONFIG_FILE_NAME.match(n) for n in bad)
    shipped = [p for p in (REPO / "parity_configs").glob("*/*.toml")]
    assert shipped and all(facts.CONFIG_FILE_NAME.match(p.name) for p in shipped)
    ids = [f"{p.parent.name}/{p.stem}" for p in shipped]
    assert all(golden._CONFIG_ID_RE.match(i) for i in ids)  # golden.json's ids follow the same rule
    assert not any(golden._CONFIG_ID_RE.match(i) for i in ("Wgrad/00-a", "wgrad/0-a", "wgrad/00-A", "wgrad/00-a.toml"))
