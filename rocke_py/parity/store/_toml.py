"""``tomllib``, the standard library's TOML reader. The harness may use it; the engines may not.

``tomllib`` here is that module's ``loads``/``load`` and ``TOMLDecodeError``, hardened: its parser
recurses once per level of nesting, so a small file of arrays nested a thousand deep raises
``RecursionError``, and an integer of more than 4300 digits a bare ``ValueError``. Both are
raised as :class:`TOMLLimitError`, a ``TOMLDecodeError``, so that every reader that already
handles a document that is not TOML (one line naming the file) handles these too.
"""

from __future__ import annotations

import tomllib as _tomllib
from typing import IO, Any, Callable


class TOMLLimitError(_tomllib.TOMLDecodeError):
    """A document beyond what the parser can read: nested too deeply, a number too long (a ``TOMLDecodeError``)."""

    def __init__(self, msg: str) -> None:
        ValueError.__init__(self, msg)  # not TOMLDecodeError's: it wants a document and a position


class _Toml:
    """The parts of ``tomllib`` the harness uses, raising ``TOMLDecodeError`` for any bad document."""

    TOMLDecodeError = _tomllib.TOMLDecodeError

    @staticmethod
    def loads(s: str, /, *, parse_float: Callable[[str], Any] = float) -> dict[str, Any]:
        try:
            return _tomllib.loads(s, parse_float=parse_float)
        except RecursionError:
            raise TOMLLimitError("nested too deeply to read (arrays or tables inside each other)") from None
        except _tomllib.TOMLDecodeError:
            raise
        except ValueError as e:  # int(): more digits than Python converts
            raise TOMLLimitError(f"a value out of range ({str(e).split(':')[0]})") from None

    @classmethod
    def load(cls, fp: IO[bytes], /, *, parse_float: Callable[[str], Any] = float) -> dict[str, Any]:
        return cls.loads(fp.read().decode(), parse_float=parse_float)


tomllib = _Toml()

__all__ = ["TOMLLimitError", "tomllib"]
