"""Property fuzz of the harness's own readers, as the engines' parsers are fuzzed (Hypothesis).

The readers: golden.json (:func:`golden.load`), known_gaps.toml (:func:`known_gaps.load`), a
config's ``[parity]`` table, the shard reports ``merge`` reads (:func:`merge.load_report`,
:func:`merge.merge_reports`) and the local state (``.rocke-parity/last-run.json``,
``parity-tables.json``, ``outputs/``). Inputs: arbitrary bytes; a valid file truncated, with
bytes changed, inserted (invalid UTF-8 among them), deleted or repeated; a value of the
document replaced by any value (a wrong type, a huge number, NaN, control characters, nesting
hundreds or thousands deep); a key given twice in one object.

The property: no input gives a Python exception other than the reader's own error, whose text
is one line naming the file (golden.json: a run-level failure, exit 1; known_gaps.toml: one
problem line per bad entry; a shard report: ``merge`` exits 2); a local state file is read or
ignored with one note, and what a reader returns is safe to use (what ``list`` prints, the
costs that order the jobs, the cached runs), never a verdict the config does not name. A few
end-to-end cases run the command line's ``main()``.

How long: by default :data:`EXAMPLES` examples per reader from a fixed seed (a few seconds in
all). ``ROCKE_READER_FUZZ_SECONDS=N`` gives the readers N seconds in all: each runs batches of
:data:`BATCH` examples from the seeds ``SEED``, ``SEED + 1``, ... until its share is spent
(``ROCKE_READER_FUZZ_SEED`` picks ``SEED``; a failure prints the seed of its batch)::

    ROCKE_READER_FUZZ_SECONDS=60 python -m pytest -q -n 2 tests/harness/test_reader_fuzz.py
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Callable

import pytest
import standin_tree as pt
from hypothesis import HealthCheck, example, given, seed, settings
from hypothesis import strategies as st

from rocke_py.parity.cli import main
from rocke_py.parity.inputs import configs
from rocke_py.parity.judge import golden, known_gaps, lastrun
from rocke_py.parity.judge.compare import Status
from rocke_py.parity.report import merge
from rocke_py.parity.report.report import doc_text
from rocke_py.parity.report.terminal import render_doc
from rocke_py.parity.run.engines import EngineRun
from rocke_py.parity.run.work import JobResult, WorkItem
from rocke_py.parity.store import outcache
from rocke_py.parity.store.state import STATE_DIR

BUDGET = float(os.environ.get("ROCKE_READER_FUZZ_SECONDS") or 0)
SEED = int(os.environ.get("ROCKE_READER_FUZZ_SEED") or 20250607)
EXAMPLES = 40  # per reader, without a budget
BATCH = 200  # per seed, with one
#: the readers below, which share the budget
READERS = 8
#: longer than any message a reader should give (it quotes what a file holds briefly)
LINE_LIMIT = 2000


def fuzz(test: Callable[[], None]) -> None:
    """Run a ``@given`` test: :data:`EXAMPLES` examples from :data:`SEED`, or batches from
    ``SEED``, ``SEED + 1``, ... for the reader's share of the budget."""
    if BUDGET <= 0:
        seed(SEED)(test)()
        return
    end = time.monotonic() + BUDGET / READERS
    batch = 0
    while batch == 0 or time.monotonic() < end:
        try:
            seed(SEED + batch)(test)()
        except Exception as e:
            e.add_note(f"ROCKE_READER_FUZZ_SEED={SEED + batch} reproduces this batch")
            raise
        batch += 1


SETTINGS = settings(
    max_examples=BATCH if BUDGET > 0 else EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)


def one_line(message: str, starts: str) -> None:
    assert message.startswith(starts), message[:300]
    assert "\n" not in message and "\r" not in message and len(message) < LINE_LIMIT, message[:300]
    assert "Traceback" not in message


# ----------------------------------------------------------------------------- hostile values


@dataclass(frozen=True)
class Raw:
    """JSON text put in as it is (what json.dumps cannot write: NaN, 1e999, a key twice, depth)."""

    text: str


@dataclass(frozen=True)
class Pairs:
    """An object written from its pairs, so that a key may be given twice."""

    items: tuple[tuple[str, object], ...]


def dump(value: object) -> str:
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, (dict, Pairs)):
        items = value.items if isinstance(value, Pairs) else tuple(value.items())
        return "{" + ", ".join(f"{json.dumps(k)}: {dump(v)}" for k, v in items) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(dump(v) for v in value) + "]"
    return json.dumps(value)


def _deep(depth: int, open_: str = "[", close: str = "]") -> str:
    return open_ * depth + close * depth


RAW_JSON = st.sampled_from(
    [
        "NaN",
        "Infinity",
        "-Infinity",
        "1e999",
        "-1e999",
        "1" + "0" * 5000,
        "1" + "0" * 30,
        "-0",
        *(_deep(n) for n in (100, 600, 950, 5000)),
        _deep(3000, '{"a": ', "}").replace("}", "1}", 1),
        '"\\ud800"',
        '"\\udcff"',
        '"a\\nb\\u0000\\r"',
        '"' + "x" * 100_000 + '"',
    ]
).map(Raw)
LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(),
    st.text(max_size=12),
    st.sampled_from(["", "emit", "reject", "spec", "ll.llvm22", "IDENTICAL", "DIFFER", "0" * 64, "a" * 64]),
    RAW_JSON,
)
JSON_VALUES = st.recursive(
    LEAVES,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=10,
)


#: values with nothing wrong in themselves (the key twice is the only fault)
PLAIN_JSON = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**60), 2**60),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=12),
    ),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=6,
)


def paths_of(doc: object, limit: int = 3000) -> list[tuple]:
    """The paths (keys and indices) to every value of ``doc``, the document itself first."""
    out: list[tuple] = []
    stack: list[tuple[tuple, object]] = [((), doc)]
    while stack and len(out) < limit:
        path, value = stack.pop()
        out.append(path)
        if isinstance(value, dict):
            stack.extend(((*path, k), v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend(((*path, i), v) for i, v in enumerate(value))
    return out


def _at(doc: object, path: tuple) -> object:
    for step in path:
        doc = doc[step]  # type: ignore[index]
    return doc


def _replace(doc: object, path: tuple, value: object) -> object:
    """A copy of ``doc`` with the value at ``path`` replaced (the parents copied, the rest shared)."""
    if not path:
        return value
    parent = _at(doc, path[:-1])
    copy: object = dict(parent) if isinstance(parent, dict) else list(parent)  # type: ignore[call-overload]
    copy[path[-1]] = value  # type: ignore[index]
    return _replace(doc, path[:-1], copy)


@st.composite
def structural(draw, doc: object, paths: list[tuple]) -> bytes:
    """``doc`` with one value replaced or removed, a key added, or a key given twice, as JSON."""
    path = draw(st.sampled_from(paths))
    value = _at(doc, path)
    op = draw(st.sampled_from(["replace", "remove", "add", "twice"]))
    if op == "remove" and path:
        parent = _at(doc, path[:-1])
        if isinstance(parent, dict):
            new = {k: v for k, v in parent.items() if k != path[-1]}
        else:
            new = [v for i, v in enumerate(parent) if i != path[-1]]  # type: ignore[arg-type]
        return dump(_replace(doc, path[:-1], new)).encode("utf-8", "surrogatepass")
    if op in ("add", "twice") and isinstance(value, dict):
        key = draw(st.sampled_from(list(value))) if op == "twice" and value else draw(st.text(max_size=8))
        pairs = ((key, draw(JSON_VALUES)), *value.items())  # the first is what a reviewer reads
        return dump(_replace(doc, path, Pairs(pairs))).encode("utf-8", "surrogatepass")
    return dump(_replace(doc, path, draw(JSON_VALUES))).encode("utf-8", "surrogatepass")


INSERTS = st.one_of(
    st.binary(max_size=8),
    st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\n", b'"', b"{", b"[", b"]", b"}", b",", b"\\"]),
)


@st.composite
def byte_mutant(draw, data: bytes) -> bytes:
    """``data`` truncated, or with bytes changed, inserted, deleted or repeated."""
    i = draw(st.integers(0, len(data)))
    j = draw(st.integers(i, min(len(data), i + 64)))
    op = draw(st.sampled_from(["truncate", "change", "insert", "delete", "repeat"]))
    if op == "truncate":
        return data[:i]
    if op == "change" and i < len(data):
        return data[:i] + bytes([draw(st.integers(0, 255))]) + data[i + 1 :]
    if op == "delete":
        return data[:i] + data[j:]
    if op == "repeat":
        return data[:j] + data[i:j] + data[j:]
    return data[:i] + draw(INSERTS) + data[i:]


def json_inputs(valid: bytes) -> st.SearchStrategy[bytes]:
    doc = json.loads(valid)
    paths = paths_of(doc)
    mutants = structural(doc, paths)
    return st.one_of(
        st.binary(max_size=300),
        byte_mutant(valid),
        mutants,
        mutants.flatmap(byte_mutant),
        st.just(valid),
    )


def json_examples(valid: bytes) -> list[bytes]:
    """The hostile inputs every run tries first, whatever the seed: deep nesting (too deep to
    parse, and deep enough to parse and then trip a reader), numbers out of range, a key
    twice, invalid UTF-8, a lone surrogate, nothing, half a file."""
    doc = json.loads(valid)
    deepest = max(paths_of(doc), key=len)
    top = next(iter(doc)) if isinstance(doc, dict) and doc else "x"
    inner = [
        Raw(_deep(950)),
        Raw(_deep(5000)),
        Raw("NaN"),
        Raw("1" + "0" * 5000),
        Raw('"\\ud800"'),
        Pairs((("k", 1), ("k", 2))),
        [],
        "\n",
    ]
    return [
        _deep(100_000).encode(),
        b"NaN",
        b"1e999",
        b"",
        b"\xff" + valid,
        valid[: len(valid) // 2],
        b"{" + json.dumps(top).encode() + b": null, " + valid.lstrip()[1:],
        *(dump(_replace(doc, deepest, v)).encode("utf-8", "surrogatepass") for v in inner),
        dump(_replace(doc, (top,), Raw(_deep(950)))).encode() if isinstance(doc, dict) else valid,
        *(dump(_replace(doc, p, v)).encode("utf-8", "surrogatepass") for p in _each_field(doc) for v in FIELD_VALUES),
    ]


#: what every field of a file gets once, in :func:`json_examples`
FIELD_VALUES = (Raw('"\\ud800"'), Raw(_deep(950)), Raw("1" + "0" * 400), Raw("-1.5e300"), "a\nb")


def _each_field(doc: object) -> list[tuple]:
    """One path for each key name of the document (the first place it holds a value)."""
    firsts: dict[object, tuple] = {}
    for path in paths_of(doc):
        if path and isinstance(path[-1], str) and path[-1] not in firsts:
            firsts[path[-1]] = path
    return list(firsts.values())[:60]


def toml_examples(valid: str) -> list[bytes]:
    """As :func:`json_examples`, for a TOML file."""
    lines = valid.splitlines()
    key_line = next((i for i, ln in enumerate(lines) if " = " in ln), 0)
    return [
        f"x = {_deep(1000)}\n".encode(),
        ("x = " + "{a = " * 1000 + "1" + "}" * 1000 + "\n").encode(),
        ("a." * 3000 + "b = 1\n").encode(),
        ("x = 1" + "0" * 5000 + "\n").encode(),
        b"\xff" + valid.encode(),
        ("\n".join(lines[: key_line + 1] + lines[key_line:]) + "\n").encode(),  # a key twice
        (valid + f"x = {_deep(1000)}\n").encode(),
        b"",
    ]


def with_examples(test: Callable, inputs: list[bytes]) -> Callable:
    for data in inputs:
        test = example(data)(test)
    return test


# TOML: a line of the file replaced, repeated or added
RAW_TOML = st.sampled_from(
    [
        "nan",
        "-inf",
        "1" + "0" * 5000,
        "0x" + "f" * 5000,
        "1e999",
        _deep(1000),
        _deep(300),
        "{a = " * 1000 + "1" + "}" * 1000,
        '"\\ud800"',
        '"""\nline\n"""',
        "'" + "x" * 100_000 + "'",
        "1979-05-27T07:32:00Z",
    ]
)
TOML_VALUES = st.recursive(
    st.one_of(
        st.integers().map(str),
        st.floats().map(
            lambda f: "nan" if math.isnan(f) else ("inf" if f > 0 else "-inf") if math.isinf(f) else repr(f)
        ),
        st.text(max_size=12).map(lambda s: json.dumps(s)),
        st.booleans().map(lambda b: str(b).lower()),
        RAW_TOML,
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]"),
        st.lists(inner, max_size=3).map(lambda xs: "{" + ", ".join(f"k{i} = {x}" for i, x in enumerate(xs)) + "}"),
    ),
    max_leaves=8,
)
TOML_LINES = st.one_of(
    st.builds(
        lambda k, v: f"{k} = {v}", st.sampled_from(["config", "mode", "status", "reason", "x", '"a\\nb"']), TOML_VALUES
    ),
    st.sampled_from(["[[gap]]", "[gap]", "gap = 1", "[parity]", "a." * 3000 + "b = 1", "[" + "a." * 3000 + "b]", "x"]),
)


@st.composite
def toml_mutant(draw, text: str) -> bytes:
    lines = text.splitlines()
    i = draw(st.integers(0, len(lines)))
    op = draw(st.sampled_from(["value", "repeat", "add"]))
    if op == "value" and i < len(lines) and " = " in lines[i]:
        lines[i] = lines[i].split(" = ", 1)[0] + " = " + draw(TOML_VALUES)
    elif op == "repeat" and i < len(lines):
        lines.insert(i, lines[i])  # a key twice in one table, or a table twice
    else:
        lines.insert(i, draw(TOML_LINES))
    return ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")


def toml_inputs(valid: str) -> st.SearchStrategy[bytes]:
    mutants = toml_mutant(valid)
    return st.one_of(
        st.binary(max_size=300),
        byte_mutant(valid.encode()),
        mutants,
        mutants.flatmap(byte_mutant),
        st.just(valid.encode()),
    )


def fuzz_json(valid: bytes, check: Callable[[bytes], None]) -> None:
    """Fuzz a reader's check on JSON around a valid file: json_examples, then json_inputs."""
    fuzz(with_examples(SETTINGS(given(json_inputs(valid))(check)), json_examples(valid)))


def fuzz_toml(valid: str, check: Callable[[bytes], None]) -> None:
    """Fuzz a reader's check on TOML around a valid file: toml_examples, then toml_inputs."""
    fuzz(with_examples(SETTINGS(given(toml_inputs(valid))(check)), toml_examples(valid)))


# ----------------------------------------------------------------------------- the valid files


@dataclass(frozen=True)
class Samples:
    root: Path  # a stand-in tree that ran: golden.json, the shard reports and the state are real
    ids: frozenset[str]
    config_text: str
    golden: bytes
    gaps: str
    reports: tuple[Path, Path]
    last_run: bytes
    tables: bytes
    outputs: bytes
    items: tuple[WorkItem, ...]  # the jobs whose runs outputs holds


@pytest.fixture(scope="module")
def samples(tmp_path_factory) -> Samples:
    root = tmp_path_factory.mktemp("reader-fuzz")
    pt.make_tree(
        root,
        {
            "wgrad/00-a": {},
            "fwd/00-b": {},
            "wgrad/100-n": {"expect": "reject:E_X", "standin": {"py": "reject:E_X", "c": "reject:E_X"}},
        },
    )
    args = ["--root", str(root), "--engines", pt.engines_arg(), "-j", "1"]
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["golden", "--update", *args]) == 0
        reports = (root / "shard-1.json", root / "shard-2.json")
        for i, report in enumerate(reports, 1):
            assert main(["gate", "--shard", f"{i}/2", "--json", str(report), *args]) == 0
        assert main(["gate", *args]) == 0
    pt.write_gaps(
        root,
        [
            {
                "config": "wgrad/00-a",
                "mode": "spec",
                "flavor": "-",
                "status": "DIFFER",
                "reason": "a staged change",
                "py_sha256": "1" * 64,
                "c_sha256": "2" * 64,
            }
        ],
    )
    state = root / STATE_DIR
    spec = pt.engine_spec()
    disc = configs.discover(root)
    return Samples(
        root=root,
        ids=frozenset(disc.by_id()),
        config_text=(root / "parity_configs/wgrad/00-a.toml").read_text(),
        golden=golden.golden_path(root).read_bytes(),
        gaps=(root / "parity_configs/known_gaps.toml").read_text(),
        reports=reports,
        last_run=(state / "last-run.json").read_bytes(),
        tables=(state / "parity-tables.json").read_bytes(),
        outputs=outcache.cache_path(root, "py", outcache.build_id_of(spec, "py")).read_bytes(),
        items=tuple(WorkItem(c.id, c.data, "spec", "llvm22") for c in disc.configs),
    )


@pytest.fixture
def fresh(tmp_path) -> Callable[..., Path]:
    """A new directory per example: a state note is given once per file and reason in a process.
    Given a state file's name and bytes, it holds that file in its state directory."""

    def make(state_file: str | None = None, data: bytes = b"") -> Path:
        root = Path(tempfile.mkdtemp(dir=tmp_path))
        if state_file is not None:
            (root / STATE_DIR).mkdir()
            (root / STATE_DIR / state_file).write_bytes(data)
        return root

    return make


def _notes(err: str, name: str) -> list[str]:
    lines = err.splitlines()
    for ln in lines:
        one_line(ln, f"note: {STATE_DIR}/{name} cannot be read (")
        assert ln.endswith("): ignored"), ln
    assert len(lines) <= 1, err
    return lines


def _valid_empty(data: bytes, schema_key: str, schema: str | None) -> bool:
    """Whether ``data`` is a record its reader takes with nothing in it (no note is owed)."""
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return False
    return isinstance(doc, dict) and (schema is None or doc.get("schema") == schema) and doc.get(schema_key) == {}


# ----------------------------------------------------------------------------- the readers


def test_golden_json(samples, tmp_path):
    path = golden.golden_path(tmp_path)
    path.parent.mkdir(parents=True)

    def run(data: bytes) -> None:
        path.write_bytes(data)
        try:
            manifest = golden.load(path)
        except golden.GoldenError as e:
            one_line(str(e), "golden.json: ")
            return
        golden.dumps(manifest).encode("utf-8")  # what golden --update writes back
        for outputs in manifest.entries.values():
            for entry in outputs.values():
                entry.short()

    fuzz_json(samples.golden, run)


def test_golden_json_refuses_every_key_given_twice(samples, tmp_path):
    path = golden.golden_path(tmp_path)
    path.parent.mkdir(parents=True)
    doc = json.loads(samples.golden)
    objects = [p for p in paths_of(doc) if isinstance(_at(doc, p), dict) and _at(doc, p)]

    @SETTINGS
    @given(st.sampled_from(objects), st.data())
    def run(where: tuple, data) -> None:
        obj = _at(doc, where)
        key = data.draw(st.sampled_from(sorted(obj)))
        path.write_text(dump(_replace(doc, where, Pairs(((key, data.draw(PLAIN_JSON)), *obj.items())))))
        with pytest.raises(golden.GoldenError) as e:
            golden.load(path)
        assert str(e.value).startswith(f"golden.json: cannot be read: key {key!r} twice in one object")

    fuzz(run)


def test_known_gaps_toml(samples, tmp_path):
    path = tmp_path / "known_gaps.toml"

    def run(data: bytes) -> None:
        path.write_bytes(data)
        gaps = known_gaps.load(path, set(samples.ids))
        for problem in gaps.problems:
            one_line(problem, "known_gaps.toml")
        for gap in gaps.gaps:
            assert gap.config in samples.ids
            gap.label()
            gap.describe()

    fuzz_toml(samples.gaps, run)


def test_parity_table_of_a_config(samples):
    def run(data: bytes) -> None:
        try:
            configs.parse_parity_table(data.decode("utf-8", "surrogateescape"))
        except ValueError as e:
            one_line(str(e), "")

    fuzz_toml(samples.config_text, run)


def test_shard_reports(samples, tmp_path):
    path = tmp_path / "shard-1.json"
    other = str(samples.reports[1])

    def run(data: bytes) -> None:
        path.write_bytes(data)
        try:
            merge.load_report(str(path))
            doc = merge.merge_reports([str(path), other])
        except merge.MergeError as e:
            assert str(path) in str(e) or other in str(e), str(e)[:300]
            one_line(str(e), "")
            return
        doc_text(doc)
        render_doc(doc, io.StringIO(), "merge")

    fuzz_json(samples.reports[0].read_bytes(), run)


def test_last_run_json(samples, fresh):
    def run(data: bytes) -> None:
        root = fresh("last-run.json", data)
        with contextlib.redirect_stderr(io.StringIO()) as err:
            got = lastrun.load(root)
        notes = _notes(err.getvalue(), "last-run.json")
        if not got and not _valid_empty(data, "configs", lastrun.SCHEMA):
            assert notes, "ignored without a note"
        for entry in got.values():
            lastrun.summary(entry, "0" * 64)
        lastrun.job_seconds(got)
        lastrun.failed_jobs(got)
        # the next run records its statuses over it, and the file is whole again
        verdict = SimpleNamespace(
            job=SimpleNamespace(config="wgrad/00-a", key="spec"),
            status=Status.IDENTICAL,
            passed=True,
            result=SimpleNamespace(seconds=0.5),
        )
        with contextlib.redirect_stderr(io.StringIO()):
            lastrun.record(root, [verdict], {"wgrad/00-a": "1" * 64})
        with contextlib.redirect_stderr(io.StringIO()) as err:
            assert lastrun.load(root)["wgrad/00-a"]["jobs"]["spec"]["status"] == "IDENTICAL"
        assert not err.getvalue()

    fuzz_json(samples.last_run, run)


def test_parity_tables_json(samples, fresh):
    def run(data: bytes) -> None:
        root = fresh("parity-tables.json", data)
        with contextlib.redirect_stderr(io.StringIO()) as err:
            tables = configs.ParityTables(root)
            _, expect, _ = tables.parse(samples.config_text)
        _notes(err.getvalue(), "parity-tables.json")
        assert str(expect) == "emit"  # never a verdict the config does not name
        tables.save()
        with contextlib.redirect_stderr(io.StringIO()) as err:
            assert str(configs.ParityTables(root).parse(samples.config_text)[1]) == "emit"
        assert not err.getvalue()

    fuzz_json(samples.tables, run)


def test_outputs_cache(samples, fresh):
    spec = pt.engine_spec()
    build = outcache.build_id_of(spec, "py")
    mine = EngineRun("rejected", "E_X", "a message", seconds=0.1)
    result = JobResult(samples.items[0], (mine, mine), (mine, mine))
    keep = {outcache.item_key(i).split(":", 1)[0] for i in samples.items}

    def run(data: bytes) -> None:
        root = fresh()
        path = outcache.cache_path(root, "py", build)
        path.parent.mkdir(parents=True)
        path.write_bytes(data)
        with contextlib.redirect_stderr(io.StringIO()) as err:
            got = outcache.lookup(root, spec, "py", list(samples.items))
        _notes(err.getvalue(), f"outputs/{path.name}")
        for runs, text in got.values():
            for r in runs:
                assert r.kind in ("emitted", "rejected") and isinstance(r.message, str) and math.isfinite(r.seconds)
            assert text is None or isinstance(text, str)
        with contextlib.redirect_stderr(io.StringIO()):
            outcache.record(root, spec, [result], keep)  # written anew over what it could not use
        with contextlib.redirect_stderr(io.StringIO()) as err:
            runs, _ = outcache.lookup(root, spec, "py", [samples.items[0]])[0]
        assert runs == (mine, mine) and not err.getvalue()

    fuzz_json(samples.outputs, run)


# ----------------------------------------------------------------------------- end to end

DEEP = "[" * 100_000 + "]" * 100_000
#: (file, its content, the gate's exit status, a line the output must hold)
END_TO_END = [
    ("parity_configs/golden.json", b'{"schema": 1, "schema": 2}', 1, "golden.json: cannot be read: key 'schema' twice"),
    ("parity_configs/golden.json", b"\xff\xfe", 1, "golden.json: cannot be read: not UTF-8"),
    ("parity_configs/golden.json", b'{"schema": NaN}', 1, "golden.json: cannot be read: NaN is not a JSON number"),
    ("parity_configs/known_gaps.toml", b"x = " + b"1" * 5000, 1, "known_gaps.toml: cannot be read: a value out of"),
    ("parity_configs/known_gaps.toml", b"x = " + b"{a = " * 1000 + b"1" + b"}" * 1000, 1, "nested too deeply"),
    (f"{STATE_DIR}/last-run.json", b'{"schema": "rocke-parity.last-run/v1", "configs": {"x": []}}', 0, "note: "),
    (f"{STATE_DIR}/parity-tables.json", DEEP.encode(), 0, "note: .rocke-parity/parity-tables.json cannot be read"),
]


@pytest.mark.parametrize(
    "name, data, code, want", END_TO_END, ids=[f"{n.split('/')[-1]}-{i}" for i, (n, *_) in enumerate(END_TO_END)]
)
def test_the_gate_on_a_hostile_file(tmp_path, capsys, name, data, code, want):
    pt.make_tree(tmp_path, {"wgrad/00-a": {}})
    pt.write_golden(tmp_path, pt.golden_for(tmp_path, ["wgrad/00-a"]))
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_bytes(data)
    got = main(["gate", "--root", str(tmp_path), "--engines", pt.engines_arg(), "-j", "1"])
    out, err = capsys.readouterr()
    assert got == code, out + err
    assert "Traceback" not in out + err and want in out + err, out + err
    for ln in err.splitlines():
        one_line(ln, "note: ")


@pytest.mark.parametrize(
    "text", ['{"schema": 1, "schema": 2}', DEEP, '{"a": 1e999}', "\udcff"], ids=["twice", "deep", "huge", "surrogate"]
)
def test_merge_of_a_hostile_report_is_one_line_and_exit_2(samples, tmp_path, capsys, text):
    bad = tmp_path / "shard-1.json"
    bad.write_bytes(text.encode("utf-8", "surrogateescape"))
    got = main(["merge", str(bad), str(samples.reports[1]), "--root", str(samples.root)])
    out, err = capsys.readouterr()
    assert got == 2, out + err
    one_line(err.strip(), f"rocke-parity merge: refused: {bad}")
