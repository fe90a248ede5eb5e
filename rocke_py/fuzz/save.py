"""A failure's report folder, and its reduction as a parity config through ``new``'s machinery.

``<report>/failures/<n>-<status>/`` holds ``original.toml`` (the case as drawn),
``reduced.toml``, ``reduction.log``, ``outcome.json`` (status, reason, signature) and the
parity config ``<family>-<NN>-<slug>.toml``: the reduced text under a ``[parity]`` table whose
description names the failure and whose expectation is the one the config should have — the
Python engine's verdict (the normative side, docs/reference), or the C engine's when the Python
one crashed; a reviewer confirms it against the reference before the config lands. ``NN`` is
the family's next free number (``new``'s rule: 00-99 emit, 100 up reject). With
``add_configs`` the file is also written into ``parity_configs/`` by
:func:`rocke_py.parity.commands.newconfig.write_new_config` (under its lock, never replacing a file),
unless a config with the same engine tables exists. A reduced text that is not TOML (a
mutation's syntax error) cannot be a parity config: its folder says it belongs in
``tests/data/bad_configs/``. A failure the fuzzer had no time to reduce (it was interrupted)
is saved as it was found: ``original.toml`` and ``outcome.json`` alone (:func:`save_unreduced`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from rocke_py.configtext import Line, config_scalar, join_lines, split_lines
from rocke_py.fuzz.case import Case, encode, key_count
from rocke_py.fuzz.oracles import Outcome
from rocke_py.fuzz.reduce import Reduction
from rocke_py.parity.commands.newconfig import Duplicate, content_duplicate, next_number, write_new_config
from rocke_py.parity.inputs.configs import NEGATIVE_FROM, Expectation, content_key, discover
from rocke_py.parity.judge.jobs import Job
from rocke_py.parity.run.work import JobResult
from rocke_py.parity.store._toml import tomllib

_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f\u0085\u2028\u2029]")


@dataclass(frozen=True)
class Saved:
    folder: Path
    config_file: Path | None  # the parity config in the report folder (None: the text is not TOML)
    added: str | None  # the id written into parity_configs/ (add_configs), if any
    note: str
    keys_before: int
    keys_after: int


def proposed_expectation(results: list[JobResult[Job]]) -> Expectation:
    """The Python engine's verdict in the first mode where it ran to a verdict, else the C
    engine's; emit when neither did (a config that validates must build)."""
    for side in ("py", "c"):
        for res in results:
            runs = res.runs(side)
            if res.death is not None or not runs or runs[0].kind == "error":
                continue
            return Expectation(runs[0].code) if runs[0].kind == "rejected" else Expectation()
    return Expectation()


def strip_parity(text: str) -> str:
    """``text`` without its ``[parity]`` table (the saved config gets a new one)."""
    lines = split_lines(text)
    kept = [ln for ln in lines if ln.table != "parity"]
    spaced: list[Line] = []
    for ln in kept:
        if ln.header and spaced and spaced[-1].text.strip():
            spaced.append(Line(""))  # a blank line before each table, as the shipped configs have
        spaced.append(ln)
    body = join_lines(spaced).lstrip("\n")
    return body if body.endswith("\n") else body + "\n"


def description(seed: int, case: Case, outcome: Outcome, before: int, after: int) -> str:
    reason = _CONTROL_RE.sub(" ", outcome.reason)
    reason = reason if len(reason) <= 200 else reason[:199] + "…"
    return (
        f"fuzz seed {seed} case {case.index} ({case.origin}): {outcome.verdict} in mode {outcome.mode}: {reason} "
        f"(reduced from {before} to {after} keys beyond the required ones)"
    )


def slug_for(outcome: Outcome) -> str:
    return re.sub(r"[^a-z0-9]+", "-", f"fuzz-{outcome.verdict}-{outcome.mode}".lower()).strip("-")[:60]


def _family(text: str, fallback: str) -> tuple[str, dict | None]:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return fallback, None
    spec = doc.get("spec")
    fam = spec.get("family") if isinstance(spec, dict) else None
    return (fam if isinstance(fam, str) and re.match(r"^[a-z][a-z0-9_]*$", fam) else fallback), doc


def _outcome_doc(seed: int, case: Case, outcome: Outcome) -> dict[str, object]:
    return {
        "seed": seed,
        "case": case.index,
        "origin": case.origin,
        "family": case.family,
        "flavor": case.flavor,
        "status": outcome.verdict,
        "mode": outcome.mode,
        "reason": outcome.reason,
        "signature": list(outcome.signature),
    }


def _write_json(path: Path, doc: dict[str, object]) -> None:
    # a reason may hold a lone surrogate (an engine echoing invalid UTF-8): escaped, never fatal
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8", errors="backslashreplace")


def _folder(report: Path, n: int, outcome: Outcome) -> Path:
    folder = report / "failures" / f"{n:02d}-{outcome.verdict.lower()}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def save_unreduced(report: Path, n: int, seed: int, case: Case, outcome: Outcome, why: str) -> Path:
    """A failure as it was found, when there is no time to reduce it (``why``: the fuzzer was
    interrupted): ``original.toml`` and ``outcome.json`` (``"reduced": false``), nothing else."""
    folder = _folder(report, n, outcome)
    (folder / "original.toml").write_bytes(case.data)
    doc = {**_outcome_doc(seed, case, outcome), "reduced": False, "not_reduced": why}
    _write_json(folder / "outcome.json", doc)
    return folder


def save_failure(
    report: Path,
    n: int,
    root: Path,
    seed: int,
    case: Case,
    outcome: Outcome,
    reduction: Reduction,
    results: list[JobResult[Job]],
    add_configs: bool,
) -> Saved:
    folder = _folder(report, n, outcome)
    (folder / "original.toml").write_bytes(case.data)
    (folder / "reduced.toml").write_bytes(encode(reduction.text))
    (folder / "reduction.log").write_text("\n".join(reduction.log) + "\n", encoding="utf-8")
    before, after = key_count(case.text)[1], key_count(reduction.text)[1]
    outcome_doc = {
        **_outcome_doc(seed, case, outcome),
        "reduced": True,
        "keys_beyond_required": {"before": before, "after": after},
        "reduction_tests": reduction.tests,
        "reduction_complete": reduction.complete,
    }
    _write_json(folder / "outcome.json", outcome_doc)
    body = strip_parity(reduction.text)
    family, doc = _family(body, case.family)
    if doc is None:
        note = "the reduced text is not TOML, so it cannot be a parity config: add it to tests/data/bad_configs/"
        return Saved(folder, None, None, note, before, after)
    expect = proposed_expectation(results)
    desc = description(seed, case, outcome, before, after)
    text = (
        f"[parity]\ndescription = {config_scalar(desc)}\nexpect = {config_scalar(str(expect))}\n"
        "# expect: proposed (the Python engine's verdict); confirm it against docs/reference\n\n" + body
    )
    data = encode(text)
    slug = slug_for(outcome)
    disc = discover(root)
    numbers = [c.number for c in disc.configs if c.family == family]
    number = next_number(numbers, family, not expect.emits)
    config_file = folder / f"{family}-{number:02d}-{slug}.toml"
    config_file.write_bytes(data)
    added, note = None, f"expect {expect} (proposed)"
    if add_configs:
        content = content_key(tomllib.loads(text))
        dup = content_duplicate(disc.configs, content)
        if dup is not None:
            note += f"; not added: the same engine tables as {dup.id}"
        else:

            def check() -> None:
                again = content_duplicate(discover(root).configs, content)
                if again is not None:
                    raise Duplicate(again, "the same engine tables")

            try:
                written = write_new_config(root, family, slug, data, number >= NEGATIVE_FROM, check)
                added = written.id
                note += f"; added as {written.id}"
            except Duplicate as d:
                note += f"; not added: the same engine tables as {d.config.id}"
    return Saved(folder, config_file, added, note, before, after)
