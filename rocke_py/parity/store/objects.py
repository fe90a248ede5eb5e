"""The local object cache: texts by sha256 under ``.rocke-parity/objects/`` (zlib), never committed.

The gate's workers leave in it the texts both engines agree on (the parent reads one back only
when it must show it), ``golden --update`` keeps the texts behind the manifest's entries in it
(for its renumbering verdicts), and ``outcache`` the texts behind its entries. Its own small
module so that the command line can hand it to the gate's workers before it imports the gate.

An object is read back bounded: at most :data:`OBJECT_LIMIT` bytes inflated (a 16 MiB zlib bomb
would inflate to gigabytes); one past it, or no zlib data, is absent, with a note (the store is a
cache: the run goes on without it)."""

from __future__ import annotations

import zlib
from pathlib import Path

from rocke_py.parity.store.fileio import DATA_FILE_LIMIT, read_data_file
from rocke_py.parity.store.state import ABSENT, atomic_write, ignored, reason, state_dir

#: The most bytes an object inflates to: the local state's limit (16 MiB), which is also the
#: engines' bound on an emitted text, so no text an engine may emit is refused.
OBJECT_LIMIT = DATA_FILE_LIMIT


class ObjectCache:
    """Texts by sha256 under ``.rocke-parity/objects/`` (zlib), local and never committed."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._dir: Path | None = None

    @property
    def dir(self) -> Path:
        if self._dir is None:
            self._dir = state_dir(self.root) / "objects"
            self._dir.mkdir(exist_ok=True)
        return self._dir

    def _path(self, sha: str) -> Path:
        return self.dir / f"{sha}.z"

    def has(self, sha: str) -> bool:
        try:
            return self._path(sha).exists()
        except OSError:  # no cache directory and none can be made: nothing is there
            return False

    def get(self, sha: str) -> str | None:
        """The text stored under ``sha``; None when there is none, or it cannot be read (noted)."""
        path = self._path(sha)
        try:
            data = inflate(read_data_file(path))
        except ABSENT:
            return None
        except OSError as e:
            ignored(path, reason(e))
            return None
        except ValueError as e:
            ignored(path, str(e))
            return None
        return data.decode("utf-8", "surrogateescape")

    def put(self, sha: str, text: str) -> None:
        if not self.has(sha):
            atomic_write(self._path(sha), zlib.compress(text.encode("utf-8", "surrogateescape"), 6))

    def prune(self, keep: set[str]) -> None:
        try:
            stored = list(self.dir.glob("*.z"))
        except OSError:  # no cache directory and none can be made: nothing to prune
            return
        for p in stored:
            if p.stem not in keep:
                try:
                    p.unlink()
                except OSError:
                    pass


def inflate(data: bytes, limit: int = OBJECT_LIMIT) -> bytes:
    """``data`` inflated, at most ``limit`` bytes of it; ``ValueError`` (one line) past the limit
    or for data that is no whole zlib stream."""
    d = zlib.decompressobj()
    try:
        out = d.decompress(data, limit + 1)  # never more than one byte past the limit
    except zlib.error as e:
        raise ValueError(f"not zlib data: {e}") from None
    if len(out) > limit:
        raise ValueError(f"more than {limit} bytes inflated")
    if not d.eof:
        raise ValueError("not zlib data: the stream is cut short")
    return out


def text_store(root: Path) -> ObjectCache | None:
    """Where the workers leave the texts they do not send back: the local object cache (made
    here, before they fork); None when it cannot be made (the texts then come over the pipe)."""
    cache = ObjectCache(root)
    try:
        cache.dir  # made now, by this process
    except OSError:
        return None
    return cache
