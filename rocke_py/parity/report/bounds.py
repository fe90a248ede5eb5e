"""The bounds every text of a report keeps: an excerpt cut at :data:`EXCERPT_CHARS` (the whole
text spilled to a file beside a report written to a file), no lone surrogate, and only what XML
1.0 can hold in JUnit. An engine's output is not the harness's to trust: one 8 MiB line must
not make a 40 MB JUnit file, nor a lone surrogate kill the XML writer."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Sequence

from rocke_py.parity.store.fileio import STDOUT
from rocke_py.parity.store.state import atomic_write

#: The longest excerpt of one text a report holds (a divergent line, a message, a crash's head,
#: a run-level failure): past it the text is cut, saying its size and which file keeps the whole.
EXCERPT_CHARS = 2048
#: What a writer lets through uncut: an excerpt and the note of its cut (which names a path),
#: so that a bounded report is never cut twice while an unbounded one still is.
LINE_CHARS = EXCERPT_CHARS + 4096
_SURROGATE_RE = re.compile("[\ud800-\udfff]")
#: What XML 1.0 cannot hold (its ``Char`` production), a lone surrogate among it.
_NOT_XML_RE = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_FILE_NAME_RE = re.compile(r"[^A-Za-z0-9._-]+")


def _escape(m: re.Match[str]) -> str:
    n = ord(m.group())
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}"


def escape_surrogates(text: str) -> str:
    """``text`` as Unicode text: a lone surrogate (UTF-8 cannot hold it) as ``\\udc80``."""
    return _SURROGATE_RE.sub(_escape, text)


def xml_text(text: str) -> str:
    """``text`` for XML: each line cut to :data:`LINE_CHARS`, every character XML cannot hold as
    ``\\x00`` or ``\\ufffe`` (a lone surrogate too): the XML writer would die on it."""
    lines = text.split("\n")
    if any(len(ln) > LINE_CHARS for ln in lines):
        text = "\n".join(clip(ln, LINE_CHARS) for ln in lines)
    return _NOT_XML_RE.sub(_escape, text)


def clip(text: str, limit: int = EXCERPT_CHARS, kept: str = "") -> str:
    """``text``, or when it is longer than ``limit`` characters its head, an ellipsis and its size
    in bytes (and ``kept``, the file that keeps the whole of it)."""
    if len(text) <= limit:
        return text
    where = f"; the whole text: {kept}" if kept else ""
    return f"{text[:limit]}… [{len(text.encode('utf-8', 'surrogatepass'))} bytes{where}]"


def spill_dir(dests: Sequence[tuple[str, str]]) -> Path | None:
    """Where the whole of a cut text is kept: ``<report>.d/`` beside the first report written to
    a file (``(option, destination)`` pairs); None when every report goes to standard output."""
    for _, dest in dests:
        if dest != STDOUT:
            return Path(f"{dest}.d")
    return None


class _Bounder:
    """Cuts the texts of a report, keeping each whole one in a file of ``spill`` named by its job
    and field (``wgrad.00-x.ll.llvm20.divergence.3.txt``); the first file that cannot be written
    stops the keeping and becomes a note."""

    def __init__(self, spill: Path | None) -> None:
        self.spill = spill
        self.error: str | None = None

    def bound(self, value: object, path: tuple[str, ...]) -> object:
        if isinstance(value, str):
            cut = value if len(value) <= EXCERPT_CHARS else clip(value, kept=self.keep(value, path))
            return escape_surrogates(cut)
        if isinstance(value, dict):
            return {
                escape_surrogates(k) if isinstance(k, str) else k: self.bound(v, (*path, str(k)))
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [self.bound(v, (*path, str(n))) for n, v in enumerate(value)]
        return value

    def keep(self, text: str, path: tuple[str, ...]) -> str:
        if self.spill is None or self.error is not None:
            return ""
        dest = self.spill / (_FILE_NAME_RE.sub("_", ".".join(path))[:200] + ".txt")
        try:
            atomic_write(dest, text.encode("utf-8", "backslashreplace"))
        except OSError as e:
            self.error = f"could not keep the whole of a cut text in {self.spill}: {e.strerror or e}"
            return ""
        return str(dest)


def _record_name(rec: object) -> str:
    """A job record's part of a kept file's name: ``wgrad.00-x.ll.llvm20`` (``spec``: no flavor)."""
    if not isinstance(rec, dict):
        return "job"
    flavor = rec.get("flavor")
    name = f"{rec.get('config')}.{rec.get('mode')}" + (f".{flavor}" if flavor not in (None, "-") else "")
    return name.replace("/", ".")


def bound_doc(doc: dict, dests: Sequence[tuple[str, str]] = ()) -> dict:
    """``doc`` with every text at most :data:`EXCERPT_CHARS` characters and valid Unicode, for every
    report made from it (terminal, JSON, JUnit, Markdown): a longer text is cut (:func:`clip`) and
    its whole kept in :func:`spill_dir` of ``dests``; a lone surrogate is escaped (``merge`` refuses
    a report that holds one). A file that cannot be kept costs a note, never the report."""
    b = _Bounder(spill_dir(dests))
    out: dict = {}
    for key, value in doc.items():
        if key == "jobs" and isinstance(value, list):
            out[key] = [b.bound(rec, (_record_name(rec),)) for rec in value]
        else:
            out[key] = b.bound(value, ("run", key))
    if b.error is not None and isinstance(out.get("notes"), list):
        out["notes"] = [*out["notes"], b.error]
    return out
