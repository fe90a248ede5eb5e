"""The repository stands alone: no file refers to a path outside it, and every citation of a
reference document resolves inside it (docs/reference/README.md, "Citing them").

Checked over every file git tracks (plus new files not yet added, minus ignored ones):
1. no path that leads outside the repository: the shared checkout of the references
   (`..`/shared, shared/`reference`) or the machine's work tree (/`work`/);
2. a reference document is named by its path, `docs/reference/<name>.md`, never by its bare
   file name or another directory;
3. every `docs/reference/<name>.md` cited exists, and every `§N` cited for it (full path or
   short name `<name> §N`) is a numbered heading of that file;
4. in each file, the first citation of a reference document spells its path.
docs/reference/conv-semantics.md is written on another branch: while it is missing from the
tree, only its § check is skipped; citing it by a wrong spelling still fails."""

from __future__ import annotations

import re
import subprocess

import pytest
from layout import REPO

REF_DIR = "docs/reference"
# The shared reference set; harness-prior-art has no copy here, so citing it always fails.
NAMES = ("conv-semantics", "llvm-ir", "toolchain", "harness-prior-art")
PENDING = {"conv-semantics"}  # may be absent until its branch is merged

# Spelled so that this file does not match itself.
OUTSIDE = (
    ("a path into the shared checkout", re.compile(r"\.\./shared\b")),
    ("the shared reference directory", re.compile(r"shared/(?=reference)")),
    ("an absolute path into the work tree", re.compile(r"/work(?=/)")),
    ("the design document of the steering repository (not in a clone)", re.compile(r"\bDESIGN" r"\.md\b")),
)
# (file, exact text): paths that look like the patterns above but stay inside the repository.
ALLOWED = {
    # a symlink inside the temporary tree the test builds (root/shared/base.toml)
    ("tests/harness/test_harness_inputs.py", '"../../' + 'shared/base.toml"'),  # split: this file must not match
}

_NAME = "|".join(re.escape(n) for n in NAMES)
# Any mention of a reference file name with .md, with whatever directory precedes it.
FILE_MENTION = re.compile(r"(?<![\w./-])([\w./-]*?)(" + _NAME + r")\.md")
_SEC = r"§\d+(?:\.\d+)*(?:\s+step\s+\d+)?"
# A citation: the path or the short name, then § lists, across line breaks and comment leaders.
CITATION = re.compile(
    r"(?<![\w./-])(?:(?P<full>docs/reference/(?P<fname>" + _NAME + r")\.md)|(?P<short>" + _NAME + r"))"
    r"`?[\s*#]*(?P<secs>" + _SEC + r"(?:[\s*#]*(?:,|and|–|-)[\s*#]*" + _SEC + r")*)"
)
HEADING = re.compile(r"^#{1,6}\s+(\d+(?:\.\d+)*)\.?\s", re.M)
BARE_REFERENCE = re.compile(r"\breference(?:'s)?:?\s+§\d")


def repo_files() -> list[str]:
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=REPO,
            capture_output=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return sorted({p for p in out.decode("utf-8").split("\0") if p and (REPO / p).is_file()})


def text_of(path: str) -> str:
    return (REPO / path).read_bytes().decode("utf-8", errors="replace")


def line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def headings(name: str) -> set[str]:
    return set(HEADING.findall(text_of(REF_DIR + "/" + name + ".md")))


@pytest.fixture(scope="module")
def texts() -> dict[str, str]:
    return {p: text_of(p) for p in repo_files()}


def citations(texts: dict[str, str]):
    """(file, line, name, is_full, [section numbers]) for every citation with a §."""
    for path, text in texts.items():
        for m in CITATION.finditer(text):
            name = m.group("fname") or m.group("short")
            secs = re.findall(r"§(\d+(?:\.\d+)*)", m.group("secs"))
            yield path, line_of(text, m.start()), name, m.group("full") is not None, secs


def test_no_path_outside_the_repository(texts: dict[str, str]) -> None:
    bad = []
    for path, text in texts.items():
        allowed = [(m.start(), m.end()) for f, t in ALLOWED if f == path for m in re.finditer(re.escape(t), text)]
        for what, pattern in OUTSIDE:
            for m in pattern.finditer(text):
                if not any(a <= m.start() and m.end() <= b for a, b in allowed):
                    bad.append(f"{path}:{line_of(text, m.start())}: {what}")
    assert not bad, "\n".join(bad)


def test_reference_files_are_named_by_their_path(texts: dict[str, str]) -> None:
    bad = []
    for path, text in texts.items():
        for m in FILE_MENTION.finditer(text):
            if m.group(1) != REF_DIR + "/":
                bad.append(f"{path}:{line_of(text, m.start())}: {m.group(0)} (write {REF_DIR}/{m.group(2)}.md)")
        for m in BARE_REFERENCE.finditer(text):
            bad.append(f"{path}:{line_of(text, m.start())}: '{m.group(0)}' names no document")
    assert not bad, "\n".join(bad)


def test_first_citation_spells_the_path(texts: dict[str, str]) -> None:
    bad = []
    full_path = re.compile(r"(?<![\w./-])docs/reference/(" + _NAME + r")\.md")
    for path, text in texts.items():
        events = [(m.start(), m.group(1), True) for m in full_path.finditer(text)]
        events += [(m.start(), m.group("short"), False) for m in CITATION.finditer(text) if m.group("short")]
        seen = set()
        for pos, name, full in sorted(events):
            if name not in seen and not full:
                bad.append(f"{path}:{line_of(text, pos)}: the first citation of {name} must be {REF_DIR}/{name}.md §N")
            seen.add(name)
    assert not bad, "\n".join(bad)


def cited_names(texts: dict[str, str]) -> list[str]:
    names = set()
    for text in texts.values():
        names.update(re.findall(r"(?<![\w./-])" + REF_DIR + r"/([\w.-]+?)\.md", text))
        names.update(c[2] for c in citations({"": text}))
    return sorted(names)


def test_every_cited_reference_exists(texts: dict[str, str]) -> None:
    missing = [n for n in cited_names(texts) if n not in PENDING and not (REPO / REF_DIR / (n + ".md")).is_file()]
    assert not missing, "cited but not in " + REF_DIR + ": " + ", ".join(missing)


@pytest.mark.parametrize("name", [n for n in NAMES if n != "harness-prior-art"])
def test_cited_sections_exist(texts: dict[str, str], name: str) -> None:
    if not (REPO / REF_DIR / (name + ".md")).is_file():
        if name in PENDING:
            pytest.skip(f"{REF_DIR}/{name}.md is not in this tree yet")
        pytest.fail(f"{REF_DIR}/{name}.md is missing")
    have = headings(name)
    assert have, f"{REF_DIR}/{name}.md has no numbered headings"
    bad = [
        f"{path}:{line}: {name} §{sec} is not a heading of {REF_DIR}/{name}.md"
        for path, line, n, _, secs in citations(texts)
        if n == name
        for sec in secs
        if sec not in have
    ]
    assert not bad, "\n".join(bad)


def test_the_references_keep_the_original_numbering() -> None:
    """The copies keep the shared originals' section numbers (citations rely on them)."""
    expect = {
        "llvm-ir": "1 2 3 4 5 6 7 8 9 10 11 12 12.1 12.2 12.3 12.4 12.5 12.6 12.7 12.8 12.9 13 14 15 16 17",
        "toolchain": "1 2 3 4 5 5.1 5.2 5.3 6 7 8 9 10 10.1",
    }
    for name, numbers in expect.items():
        text = text_of(REF_DIR + "/" + name + ".md")
        assert HEADING.findall(text) == numbers.split(), name


def test_the_readme_lists_every_reference() -> None:
    readme = text_of(REF_DIR + "/README.md")
    for name in NAMES:
        if name != "harness-prior-art":
            assert f"{REF_DIR}/{name}.md" in readme, name
