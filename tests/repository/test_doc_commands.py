"""Every command the README, the user guide and adding-a-config show is run, and exits as shown.

How a command is found (the convention the three documents follow):

- Only code blocks are read: fenced blocks tagged ```console, ```sh, ```shell or ```bash, and
  indented code blocks (4 or more spaces, after a blank line). Other fences (```toml, a bare
  ```) are text.
- In a ```console block a command is a line with the prompt `$ `; the lines after it are its
  output (shown for the reader, not compared). In the other blocks every line is a candidate.
- A candidate is run only if its program is `rocke-parity`, `parity-diff` or `rocke-emit`;
  any other program (`git`, `python3`) is left to the reader.
- Skipped explicitly, and listed by `skipped_lines`: a synopsis, i.e. a line with a
  placeholder — an argument in `[...]`, a `|` alternative (`ID|FILE`, `py|c`), `...`, or an
  upper-case word (`ID`, `FILE`, `FAMILY`, `CODE`); and an output line that starts with the
  program's name, like `rocke-parity gate: cannot write ...` (a word ending in `:` after the
  program's name).
- The expected exit status is 0, or the one a trailing shell comment names: `# exit 1`
  (the comment may go on, `# exit 1: the engines disagree`). It is a comment, so the line
  stays copy-pasteable.
- In a ```console block the lines shown after a command are its expected output (standard
  output then standard error), compared line by line after `normalise`: wall times and the
  counts that grow with the tree (`N of M config(s)`, a run's job totals) are blanked; byte
  counts, statuses, codes and messages are compared as shown. A line `...` stands for any
  number of lines.

How they run: each document gets its own temporary copy of the repository (the files `git
ls-files --cached --others --exclude-standard` lists: what the gate would see, without
ignored local state), and its commands run there in document order, through bash, with the
copy as the working directory — so a command that writes (`new ... --expect`, `golden
--update`) changes the tree the next commands see, as it would for a reader following along.
`rocke-parity` and `parity-diff` are this interpreter's installed package (`python -P -m
rocke_py.parity`: -P, so that the copy's sources do not shadow the built extension);
`rocke-emit` is the rocke_emit fixture's (tests/conftest.py, as
tests/engines/test_rocke_emit_cli.py uses). Every command of a document runs even after a failure,
and the failure lists each one that did not exit as documented, with its output."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from layout import REPO
from repo_copy import copy_repository

DOCS = ("README.md", "docs/user-guide.md", "docs/adding-a-config.md")
PROGRAMS = ("rocke-parity", "parity-diff", "rocke-emit")
SHELL_FENCES = ("console", "sh", "shell", "bash")
EXIT_COMMENT = re.compile(r"\s#\s*exit\s+(\d+)\b")
PLACEHOLDER = re.compile(r"^[A-Z][A-Z_]*(\.\.\.)?$")
TIMEOUT = 900


@dataclass(frozen=True)
class Command:
    doc: str
    line: int  # 1-based line number in the document
    text: str  # the command as bash runs it (prompt and indentation removed)
    exit: int  # the documented exit status
    output: tuple[str, ...] = ()  # the lines a ```console block shows after it


#: What differs from run to run or grows with the tree, in a command's output.
VOLATILE = (
    (re.compile(r"wall time \d+(\.\d+)? s"), "wall time <T> s"),
    (re.compile(r"\b\d+ of \d+ config\(s\)"), "<N> of <M> config(s)"),
    (re.compile(r"\b\d+ job\(s\) \((\d+ identical|\d+ of)"), "<N> job(s) (<...>"),
    (re.compile(r"\(\d+ identical, \d+ both-rejected"), "(<N> identical, <N> both-rejected"),
    (re.compile(r"^(dgrad|fwd|wgrad|total)( +)\d+( +)\d+( +)\d+( +)\d+$"), r"\1 <counts>"),
)


def normalise(line: str) -> str:
    for pattern, blank in VOLATILE:
        line = pattern.sub(blank, line)
    return line.rstrip()


def output_mismatch(shown: tuple[str, ...], got: str) -> str | None:
    """Where the output a document shows differs from the output a command gave (None: it
    matches); `...` in shown skips any number of lines."""
    actual = [normalise(x) for x in got.splitlines() if x.strip()]
    i = 0
    skipping = False
    for want in shown:
        if want.strip() == "...":
            skipping = True
            continue
        want = normalise(want)
        if skipping:
            while i < len(actual) and actual[i] != want:
                i += 1
        if i >= len(actual) or actual[i] != want:
            seen = actual[i] if i < len(actual) else "(end of output)"
            return f"shown: {want}\n      got:   {seen}"
        i += 1
        skipping = False
    return None


@dataclass(frozen=True)
class Skipped:
    doc: str
    line: int
    text: str
    why: str


def code_lines(markdown: str):
    """(line number, the line, fence tag or "indented") of every line inside a code block."""
    fence: str | None = None
    prev_blank, in_indented = True, False
    for n, line in enumerate(markdown.splitlines(), 1):
        stripped = line.lstrip()
        if fence is not None:
            if stripped.startswith("```"):
                fence = None
            else:
                yield n, line, fence
            prev_blank = False
            continue
        if stripped.startswith("```"):
            fence = stripped[3:].strip().lower()
            in_indented = False
            continue
        if line.startswith("    ") and stripped and (prev_blank or in_indented):
            in_indented = True
            yield n, line, "indented"
        elif stripped:
            in_indented = False
        prev_blank = not stripped


def classify(text: str) -> str | None:
    """Why a candidate line is not run (None: it is a command to run)."""
    try:
        words = shlex.split(text, comments=True)
    except ValueError as e:
        return f"unparsable ({e})"
    if not words or words[0] not in PROGRAMS:
        return "another program"
    if len(words) > 1 and words[1].endswith(":"):
        return "output"
    for w in words[1:]:
        if w.startswith("[") or "|" in w or w.endswith("...") or w.endswith("…") or PLACEHOLDER.match(w):
            return f"synopsis ({w})"
    return None


def extract(doc: str, markdown: str) -> tuple[list[Command], list[Skipped]]:
    commands: list[Command] = []
    skipped: list[Skipped] = []
    outputs: dict[int, list[str]] = {}  # a console command's line -> the lines shown after it
    last: int | None = None
    for n, line, tag in code_lines(markdown):
        if tag not in SHELL_FENCES and tag != "indented":
            last = None
            continue
        text = line.strip()
        if tag == "console":
            if not text.startswith("$ "):
                if last is not None and text:
                    outputs.setdefault(last, []).append(line)
                continue
            text = text[2:].strip()
            last = n
        else:
            last = None
        why = classify(text)
        if why == "another program":
            continue
        if why is not None:
            if why.startswith("unparsable"):
                raise ValueError(f"{doc}:{n}: {text}: {why}")
            skipped.append(Skipped(doc, n, text, why))
            continue
        m = EXIT_COMMENT.search(text)
        commands.append(Command(doc, n, text, int(m.group(1)) if m else 0))
    shown = [Command(c.doc, c.line, c.text, c.exit, tuple(outputs.get(c.line, ()))) for c in commands]
    return shown, skipped


def doc_commands(doc: str) -> tuple[list[Command], list[Skipped]]:
    return extract(doc, (REPO / doc).read_text(encoding="utf-8"))


# ---- running them ----


@pytest.fixture(scope="session")
def bin_dir(tmp_path_factory: pytest.TempPathFactory, rocke_emit: Path) -> Path:
    """rocke-parity and parity-diff (this interpreter, the installed package) and rocke-emit."""
    out = tmp_path_factory.mktemp("doc_bin")
    shutil.copy2(rocke_emit, out / "rocke-emit")
    for name, args in (("rocke-parity", ""), ("parity-diff", " diff")):
        script = out / name
        script.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -P -m rocke_py.parity{args} "$@"\n')
        script.chmod(0o755)
    return out


def run_commands(commands: list[Command], root: Path, bin_dir: Path) -> list[str]:
    """Runs each command in root, in order; a report per command that did not exit as documented."""
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    failures = []
    for c in commands:
        try:
            got = subprocess.run(
                ["bash", "-c", c.text],
                cwd=root,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            failures.append(f"{c.doc}:{c.line}: {c.text}\n    timed out after {TIMEOUT} s")
            continue
        if got.returncode != c.exit:
            tail = (got.stdout[-1500:] + b"\n--- stderr ---\n" + got.stderr[-1500:]).decode("utf-8", "replace")
            failures.append(
                f"{c.doc}:{c.line}: {c.text}\n    documented exit {c.exit}, got {got.returncode}\n"
                + "\n".join("    | " + x for x in tail.splitlines())
            )
            continue
        if c.output:
            printed = (got.stdout + got.stderr).decode("utf-8", "replace")
            differs = output_mismatch(c.output, printed)
            if differs:
                failures.append(f"{c.doc}:{c.line}: {c.text}\n    output differs from the document:\n      {differs}")
    return failures


@pytest.mark.parametrize("doc", DOCS)
def test_documented_commands_exit_as_documented(doc: str, bin_dir: Path, tmp_path: Path) -> None:
    commands, _ = doc_commands(doc)
    assert commands, f"{doc}: no command found (is the convention of tests/repository/test_doc_commands.py followed?)"
    failures = run_commands(commands, copy_repository(tmp_path / "repo"), bin_dir)
    assert not failures, (
        f"{len(failures)} of {len(commands)} command(s) of {doc} did not exit as documented:\n" + "\n".join(failures)
    )


# ---- the convention itself ----

SAMPLE = """\
Text.

```sh
python3 -m venv .venv && .venv/bin/pip install -e .
rocke-parity gate                      # every config; exit 0/1
rocke-parity golden --check | --update
```

    rocke-parity emit ID|FILE --engine py|c [--mode M]
    rocke-parity gate: cannot write --json /dev/full: it is a character device
    rocke-emit parity_configs/wgrad/00-baseline.toml --mode ll

```console
$ rocke-parity new wgrad --from wgrad/18 --set tile_n=0x80 --expect emit   # exit 2
rocke-parity new: --set tile_n=0x80: not an integer
$ rocke-parity list --family F
$ git commit
```

```toml
# rocke-parity gate
```
  rocke-parity list   (two spaces: prose of a list item, not code)
"""


def test_the_convention_finds_commands_exits_and_skips() -> None:
    commands, skipped = extract("sample.md", SAMPLE)
    assert [(c.line, c.text, c.exit) for c in commands] == [
        (5, "rocke-parity gate                      # every config; exit 0/1", 0),
        (11, "rocke-emit parity_configs/wgrad/00-baseline.toml --mode ll", 0),
        (14, "rocke-parity new wgrad --from wgrad/18 --set tile_n=0x80 --expect emit   # exit 2", 2),
    ]
    assert [(s.line, s.why) for s in skipped] == [
        (6, "synopsis (|)"),
        (9, "synopsis (ID|FILE)"),
        (10, "output"),
        (16, "synopsis (F)"),
    ]


def test_each_document_has_commands_and_skips_only_synopses_and_output() -> None:
    for doc in DOCS:
        commands, skipped = doc_commands(doc)
        assert commands, doc
        for s in skipped:
            assert s.why == "output" or s.why.startswith("synopsis"), s


def test_a_command_that_does_not_exit_as_documented_fails(bin_dir: Path, tmp_path: Path) -> None:
    """The check can fail: a rejection (exit 1) documented as exit 0, and an emission documented
    as exit 1, are both reported; a command that exits as documented is not."""
    cfg = tmp_path / "parity_configs" / "wgrad"
    cfg.mkdir(parents=True)
    shutil.copy2(REPO / "parity_configs" / "wgrad" / "00-baseline.toml", cfg / "00-baseline.toml")
    shutil.copy2(REPO / "parity_configs" / "wgrad" / "101-tile-divisibility.toml", cfg / "101-tile-divisibility.toml")
    doc = """\
```console
$ rocke-parity emit parity_configs/wgrad/101-tile-divisibility.toml --engine py --mode spec
$ rocke-emit parity_configs/wgrad/00-baseline.toml --mode spec   # exit 1
$ rocke-parity emit parity_configs/wgrad/101-tile-divisibility.toml --engine c --mode spec   # exit 1
```
"""
    commands, _ = extract("wrong.md", doc)
    failures = run_commands(commands, tmp_path, bin_dir)
    assert len(failures) == 2, failures
    assert failures[0].startswith("wrong.md:2: ") and "documented exit 0, got 1" in failures[0]
    assert failures[1].startswith("wrong.md:3: ") and "documented exit 1, got 0" in failures[1]


def test_shown_output_is_compared_and_a_stale_number_fails(bin_dir: Path, tmp_path: Path) -> None:
    """The check can fail: a byte count the document shows that the command no longer prints
    is reported; wall times, tree-wide counts and `...` are not compared."""
    cfg = tmp_path / "parity_configs" / "wgrad"
    cfg.mkdir(parents=True)
    shutil.copy2(REPO / "parity_configs" / "wgrad" / "101-tile-divisibility.toml", cfg / "101-tile-divisibility.toml")
    wrong = "wgrad/101-tile-divisibility: rejected WGRAD_TILE_DIVISIBILITY (a stale message)"
    doc = f"""\
```console
$ rocke-parity emit parity_configs/wgrad/101-tile-divisibility.toml --engine py --mode spec   # exit 1
{wrong}
```
"""
    commands, _ = extract("stale.md", doc)
    assert commands[0].output == (wrong,)
    failures = run_commands(commands, tmp_path, bin_dir)
    assert len(failures) == 1 and "output differs from the document" in failures[0], failures


def test_the_output_comparison_blanks_only_what_varies() -> None:
    passed = "gate PASSED: 1250 job(s) (585 identical, 665 both-rejected; wall time 3.1 s"
    got = f"a\n\nb 14659 identical bytes\n{passed}\nz\n"
    shown_ok = ("a", "...", "gate PASSED: 870 job(s) (205 identical, 665 both-rejected; wall time 9.99 s", "z")
    assert output_mismatch(shown_ok, got) is None
    assert output_mismatch(("a", "b 14613 identical bytes"), got) is not None  # a byte count is compared
    assert output_mismatch(("a", "z"), got) is not None  # lines are not skipped without `...`
    assert normalise("wgrad         255            240   495       0") == "wgrad <counts>"
