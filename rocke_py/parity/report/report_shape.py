"""The shape of a JSON gate report, checked before ``merge`` reads anything in it: a small
schema language (an object's required and optional fields, a list, a map, alternatives), the
report's schema in it, and the bounds on nesting, text and numbers anywhere in the document.
A report that does not fit is :class:`Malformed`, naming the field.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Union

#: A gate report nests about six levels; far deeper is no report, and it would exhaust the
#: recursion of the comparisons and of the JSON writer.
MAX_DEPTH = 32
#: JSON integers beyond 64 bits are out of range for every field (and for float formatting).
_INT_BITS = 63


class Malformed(Exception):
    """What is wrong with a report, naming the field (``shard.index``)."""


def show(value: object, limit: int = 12) -> str:
    """A report's value in a one-line message: control characters escaped, a long value cut."""
    if value is None:
        return "none"
    text = json.dumps(value, ensure_ascii=False)
    text = text[1:-1] if isinstance(value, str) else text
    return text if len(text) <= limit else text[:limit] + "…"


@dataclass(frozen=True)
class _Obj:
    """An object with these fields; others are passed on as they are (merge never reads them)."""

    required: dict[str, _Spec]
    optional: dict[str, _Spec] = field(default_factory=dict)


@dataclass(frozen=True)
class _Each:
    """A list (``container`` is ``list``) or an object with any keys (``dict``) whose every item
    is of ``item``'s kind."""

    container: type
    item: _Spec


#: A kind: ``str``, ``bool``, ``int`` (an integer, never a boolean), ``float`` (a finite number),
#: ``None`` (null), ``dict``/``list`` (any), a structure, or a tuple of alternatives.
_Spec = Union[type, None, _Obj, _Each, tuple]

_STRS = _Each(list, str)
_OPT_STR = (str, None)
_RUN = _Obj({}, {"kind": str, "code": _OPT_STR, "message": _OPT_STR, "sha256": _OPT_STR, "bytes": (int, None)})
_GOLDEN = _Obj({}, {"verdict": str, "sha256": str, "bytes": int, "code": str, "message": str})
#: What the terminal summary, JUnit and the Markdown summary read of a job record.
_RECORD = _Obj(
    {"config": str, "family": str, "mode": str, "flavor": str, "status": str},
    {
        "passed": bool,
        "file": str,
        "reason": str,
        "cause": _STRS,
        "divergence": _STRS,
        "detail": _STRS,
        "repro": _STRS,
        "golden_match": str,
        "known_gap": _Obj({}, {"status": str, "reason": str, "holds": bool}),
        "durations": _Obj({}, {"py": _Each(list, float), "c": _Each(list, float)}),
        "golden": (_GOLDEN, None),
        "py": (_RUN, None),
        "c": (_RUN, None),
        "py_repeat": (_RUN, None),
        "c_repeat": (_RUN, None),
    },
)
_TREE = _Obj(
    {
        "commit": _OPT_STR,
        "dirty": _STRS,
        "golden_sha256": _OPT_STR,
        "known_gaps_sha256": _OPT_STR,
        "configs_sha256": _OPT_STR,
    },
    {"dirty_more": int},
)
_ENGINE = _Obj({"emit": str, "build_id": str})
_SUMMARY = _Obj({"tree": _TREE, "engines": _Obj({"py": _ENGINE, "c": _ENGINE})}, {"version": _OPT_STR})
_SHARD = _Obj(
    {
        "index": int,
        "count": int,
        "jobs_total": int,
        "job_list_sha256": str,
        "partition_sha256": str,
        "all_jobs": _Each(list, _STRS),
        "assignment": _Each(dict, int),
        "config_sha256": _Each(dict, str),
        "partial": (str, bool),
    }
)
REPORT_SHAPE = _Obj(
    {
        "schema": str,
        "summary": _SUMMARY,
        "shard": _SHARD,
        "jobs": _Each(list, _RECORD),
        "run_level_failures": _STRS,
        "notes": _STRS,
        "modes": _STRS,
        "flavors": _STRS,
        "coverage": (dict, None),
        "engines": (_Obj({}, {"py_modes": _STRS, "c_modes": _STRS}), None),
        "timeout_seconds": (float, None),
        "wall_seconds": float,
        "not_run": int,
    }
)


def _fits(value: object, spec: _Spec) -> bool:
    """Whether ``value`` is of ``spec``'s kind at the top (its parts are checked by :func:`check_shape`)."""
    if spec is None:
        return value is None
    if spec is bool:
        return isinstance(value, bool)
    if spec is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if spec is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(spec, _Each):
        return isinstance(value, spec.container)
    if isinstance(spec, _Obj):
        return isinstance(value, dict)
    return isinstance(value, spec)  # type: ignore[arg-type]


def _name(spec: _Spec) -> str:
    if spec is None:
        return "null"
    if isinstance(spec, _Each):
        return _name(spec.container)
    if spec is list:
        return "a list"
    if isinstance(spec, _Obj) or spec is dict:
        return "an object"
    return {bool: "true or false", int: "an integer", float: "a number", str: "a string"}[spec]  # type: ignore[index]


def _what(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"


def _where(path: tuple[object, ...]) -> str:
    """``shard.all_jobs[3]`` from the keys and indices on the way (made only for a message)."""
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{show(step, 40)}" if out else show(step, 40))
    return out


_NONE = object()  # no alternative fits


def check_shape(value: object, spec: _Spec, path: tuple[object, ...] = ()) -> None:
    """Raises Malformed at the first part of ``value`` that is not of ``spec``'s kind."""
    alternatives = spec if isinstance(spec, tuple) else (spec,)
    chosen = _NONE
    for alt in alternatives:
        if _fits(value, alt):
            chosen = alt
            break
    if chosen is _NONE:
        raise Malformed(f"{_where(path)} is {_what(value)}, not {' or '.join(_name(a) for a in alternatives)}")
    if isinstance(chosen, _Each):
        items = enumerate(value) if chosen.container is list else value.items()  # type: ignore[arg-type, union-attr]
        for key, item in items:
            check_shape(item, chosen.item, (*path, key))
    elif isinstance(chosen, _Obj):
        for key, sub in chosen.required.items():
            if key not in value:  # type: ignore[operator]
                raise Malformed(f"{_where((*path, key))} is missing")
            check_shape(value[key], sub, (*path, key))  # type: ignore[index]
        for key, sub in chosen.optional.items():
            if key in value:  # type: ignore[operator]
                check_shape(value[key], sub, (*path, key))  # type: ignore[index]


def check_leaves(doc: object) -> None:
    """Bounded nesting, text that is Unicode, and numbers that are finite and in range, anywhere
    in the document (the fields merge does not read are written out again as they are)."""
    stack: list[tuple[object, int]] = [(doc, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise Malformed(f"it is nested more than {MAX_DEPTH} levels deep")
        if isinstance(value, dict):
            stack.extend((item, depth + 1) for item in value.values())
            items: list[object] = list(value)
        elif isinstance(value, list):
            stack.extend((item, depth + 1) for item in value)
            items = []
        else:
            items = [value]
        for leaf in items:
            _check_leaf(leaf)


def _check_leaf(value: object) -> None:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise Malformed("it holds a string that is not Unicode text (a lone surrogate)") from None
    elif isinstance(value, float) and not math.isfinite(value):
        raise Malformed("it holds a number that is not finite (NaN or Infinity)")
    elif isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > _INT_BITS:
        raise Malformed("it holds an integer out of range (more than 64 bits)")
