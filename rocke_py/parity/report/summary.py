"""``gate --summary FILE`` and ``merge --summary FILE``: a run as Markdown, for a reviewer
(``$GITHUB_STEP_SUMMARY``, a PR comment).

Made from the JSON report alone (a gate's or a merged one): the verdict and what ran, the
counts by family and status, each failure cause with its first divergent lines and the commands
that reproduce it, the golden entries this run moved (with their byte deltas and, for a gate's
summary, each drifted entry's bounded canonical text diff: ``review``), and — with
``--base-golden FILE`` (the target branch's manifest) — what the tree's golden.json changes
against it. Long lists are cut (a step summary has a size limit), saying how much was cut,
every line is bounded, and the whole summary stays under :data:`MAX_SUMMARY_BYTES` whatever the
run (:func:`fit`)."""

from __future__ import annotations

from typing import Callable

from rocke_py.parity.judge.compare import GOLDEN_STATUSES
from rocke_py.parity.judge.golden import GoldenEntry, Manifest
from rocke_py.parity.report.bounds import LINE_CHARS, clip, escape_surrogates
from rocke_py.parity.report.terminal import count_rows, job_label, record_groups

MAX_GROUPS = 25
MAX_ROWS = 60
#: GitHub refuses a step summary over 1 MiB (1048576 bytes): the summary keeps well under it.
MAX_SUMMARY_BYTES = 1_000_000
#: Kept free under the limit for what closes a cut summary (a code fence and the note).
_CLOSING_BYTES = 1024


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def md_table(headers: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(_cell(h) for h in headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    return out + ["| " + " | ".join(_cell(c) for c in r) + " |" for r in rows]


def _block(lines: list[str], lang: str = "text") -> list[str]:
    fence = "~~~~" if any("```" in ln for ln in lines) else "```"
    return [f"{fence}{lang}", *lines, fence]


def _cut(n_shown: int, n_all: int, what: str, where: str = " (see the JSON report)") -> list[str]:
    return [f"_… and {n_all - n_shown} more {what}{where}_"] if n_all > n_shown else []


def _head(doc: dict) -> list[str]:
    s = doc.get("summary") or {}
    failed = sum(not r["passed"] for r in doc["jobs"])
    verdict = ("PASSED" if doc["passed"] else "FAILED") + (" (partial run)" if doc["partial"] else "")
    merged = doc.get("merged_from")
    title = "merge of " + str(merged["count"]) + " shards" if merged else "gate"
    ids = s.get("engines") or {}
    engines = ", ".join(f"{side} engine `{(ids.get(side) or {}).get('build_id', '?')}`" for side in ("py", "c"))
    wall = f"slowest shard {doc['wall_seconds']:.2f} s" if merged else f"wall time {doc['wall_seconds']:.2f} s"
    lines = [
        f"## rocke-parity {title}: {verdict}",
        "",
        f"{len(doc['jobs'])} job(s), {failed} failed, {len(doc['run_level_failures'])} run-level failure(s); "
        f"modes {','.join(doc['modes']) or '-'}; flavors {','.join(doc['flavors']) or '-'}; {wall}",
        "",
        f"commit `{s.get('commit') or 'unknown'}`, rocke-parity {s.get('version', '?')}, {engines}",
        *_tree_line(s.get("tree")),
    ]
    if doc["partial"]:
        lines += ["", f"> {doc['partial']}"]
    return lines


def _tree_line(fp: object) -> list[str]:
    """The tree's fingerprint (the judging files' hashes, what is dirty) under the commit line."""
    if not isinstance(fp, dict):
        return []

    def h(key: str) -> str:
        return f"`{str(fp.get(key))[:12]}`" if fp.get(key) else "none"

    dirty = [str(d) for d in fp.get("dirty") or []]
    rest = len(dirty) - min(len(dirty), 5) + int(fp.get("dirty_more") or 0)
    where = f"; dirty: {', '.join(f'`{d}`' for d in dirty[:5])}" if dirty else ""
    where += f" and {rest} more" if rest else ""
    return [
        "",
        f"tree: golden.json {h('golden_sha256')}, known_gaps.toml {h('known_gaps_sha256')}, "
        f"configs {h('configs_sha256')}{where}",
    ]


def _failures(doc: dict) -> list[str]:
    groups = record_groups(doc["jobs"])
    if not groups:
        return []
    n_failed = sum(len(g) for g in groups)
    out = ["", f"### Failures: {n_failed} job(s), {len(groups)} cause(s)"]
    for n, group in enumerate(groups[:MAX_GROUPS], 1):
        rec = group[0]
        more = f" (+{len(group) - 1} more with the same cause)" if len(group) > 1 else ""
        out += ["", f"#### {n}. `{rec['status']}` {job_label(rec)}{more}", "", _cell(rec.get("reason", ""))]
        if len(group) > 1:
            names = ", ".join(f"`{job_label(r)}`" for r in group[:MAX_ROWS])
            out += ["", f"jobs: {names}", *_cut(min(len(group), MAX_ROWS), len(group), "job(s)")]
        evidence = [*(rec.get("divergence") or ()), *(rec.get("detail") or ())]
        if evidence:
            out += ["", *_block(evidence)]
        if rec.get("repro"):
            out += ["", "reproduce:", "", *_block(list(rec["repro"]), "sh")]
    return out + _cut(min(len(groups), MAX_GROUPS), len(groups), "cause(s)")


def _moved(doc: dict, review: Callable[[dict], list[str]] | None = None) -> list[str]:
    """This run's golden failures: what the manifest records, what the engines give now, and
    under the table the text diff of each drifted entry the table shows."""
    rows, drifted = [], []
    for rec in doc["jobs"]:
        if rec["status"] not in GOLDEN_STATUSES or rec["passed"]:
            continue
        g = rec.get("golden") or {}
        now = rec.get("py") or {}
        was = g.get("bytes") if g.get("verdict") == "emit" else None
        got = now.get("bytes") if now.get("kind") == "emitted" else None
        delta = f"{got - was:+d}" if was is not None and got is not None else "-"
        rows.append([f"`{job_label(rec)}`", rec["status"], _entry_text(g), _run_text(now), delta])
        if rec["status"] == "GOLDEN_DRIFT" and len(rows) <= MAX_ROWS:
            drifted.append(rec)
    if not rows:
        return []
    head = ["job", "status", "golden.json", "now", "Δ bytes"]
    out = ["", f"### Golden entries this run moved: {len(rows)}", "", *md_table(head, rows[:MAX_ROWS])]
    out += _cut(min(len(rows), MAX_ROWS), len(rows), "entries")
    for rec in drifted if review is not None else ():
        lines = review(rec)  # bounded per entry; fit() bounds the whole
        if lines:
            out += ["", f"`{job_label(rec)}`:", "", *_block(lines, "diff")]
    return out + ["", "after review: `rocke-parity golden --update`"]


def _entry_text(g: dict) -> str:
    if not g:
        return "no entry"
    if g.get("verdict") == "emit":
        return f"{g.get('bytes')} bytes `{str(g.get('sha256', ''))[:12]}`"
    return f"reject {g.get('code')}"


def _run_text(r: dict) -> str:
    if r.get("kind") == "emitted":
        return f"{r.get('bytes')} bytes `{str(r.get('sha256', ''))[:12]}`"
    if r.get("kind") == "rejected":
        return f"reject {r.get('code')}"
    return str(r.get("kind", "-"))


def _entry_short(e: GoldenEntry) -> str:
    return f"{e.bytes} bytes" if e.emits else f"reject {e.code}"


def golden_changes(base: Manifest, now: Manifest) -> list[list[str]]:
    """[job, change, base, now, Δ bytes] for every entry that differs between two manifests."""
    rows = []
    for cfg in sorted(set(base.entries) | set(now.entries)):
        was, got = base.entries.get(cfg, {}), now.entries.get(cfg, {})
        for key in sorted(set(was) | set(got)):
            a, b = was.get(key), got.get(key)
            if a is not None and b is not None and a.same_record(b):
                continue
            if a is None or b is None:
                change = "added" if a is None else "removed"
            else:
                change = "bytes moved" if a.same_verdict(b) else "verdict changed"
            delta = (b.bytes if b and b.emits else 0) - (a.bytes if a and a.emits else 0)
            rows.append(
                [
                    f"`{cfg} {key}`",
                    change,
                    _entry_short(a) if a else "-",
                    _entry_short(b) if b else "-",
                    f"{delta:+d}" if delta else "0",
                ]
            )
    return rows


def _against_base(base: Manifest | None, base_label: str, now: Manifest | None) -> list[str]:
    if base is None:
        return []
    out = ["", f"### golden.json against the base ({_cell(base_label)})"]
    if now is None:
        return out + ["", "this tree's golden.json could not be read"]
    rows = golden_changes(base, now)
    if not rows:
        return out + ["", "no entry changed"]
    total = sum(int(r[4]) for r in rows)
    kinds = {k: sum(r[1] == k for r in rows) for k in ("added", "removed", "bytes moved", "verdict changed")}
    tally = ", ".join(f"{n} {k}" for k, n in kinds.items() if n)
    out += ["", f"{len(rows)} entr{'y' if len(rows) == 1 else 'ies'} changed ({tally}); {total:+d} bytes in all", ""]
    grouped = _by_config(rows)
    out += md_table(["outputs", "change", "base", "this tree", "Δ bytes"], grouped[:MAX_ROWS])
    return out + _cut(min(len(grouped), MAX_ROWS), len(grouped), "configs", "")


def _by_config(rows: list[list[str]]) -> list[list[str]]:
    """One row for the outputs of a config that changed alike (a new negative config: its five
    rejections), the output keys listed; the byte delta is then the sum."""
    out: list[list[str]] = []
    for job, *rest in rows:
        cfg, key = job.strip("`").split(" ", 1)
        last = out[-1] if out else None
        if last is not None and last[0].startswith(f"`{cfg}`") and last[1:4] == rest[:3]:
            last[0] += f", {key}"
            last[4] = f"{int(last[4]) + int(rest[3]):+d}" if int(last[4]) + int(rest[3]) else "0"
            continue
        out.append([f"`{cfg}` {key}", *rest])
    return out


def fit(lines: list[str], limit: int = MAX_SUMMARY_BYTES) -> str:
    """The summary's text: each line cut to :data:`LINE_CHARS` (a lone surrogate escaped, so that
    it can be written as UTF-8), and the lines that would take it past ``limit`` bytes left out —
    a code block they leave open is closed, and a last line says how much was cut."""
    out: list[str] = []
    size, fence = 0, ""
    for n, raw in enumerate(lines):
        line = escape_surrogates(clip(raw, LINE_CHARS))
        cost = len(line.encode("utf-8")) + 1
        if size + cost > limit - _CLOSING_BYTES:
            out += [fence] if fence else []
            out += [
                "",
                f"_… the summary is cut here: {len(lines) - n} more line(s) would pass {limit} bytes "
                "(a step summary holds 1 MiB); the JSON report has everything_",
            ]
            break
        out.append(line)
        size += cost
        if not fence and line.startswith(("```", "~~~~")):
            fence = line[:4] if line.startswith("~~~~") else "```"
        elif fence and line == fence:
            fence = ""
    return "\n".join(out) + "\n"


def markdown(
    doc: dict,
    golden: Manifest | None = None,
    base: Manifest | None = None,
    base_label: str = "",
    review: Callable[[dict], list[str]] | None = None,
) -> str:
    lines = _head(doc)
    if doc["jobs"]:
        headers, rows = count_rows([(r["family"], r["status"], r["passed"]) for r in doc["jobs"]])
        lines += ["", "### Counts by family and status", "", *md_table(headers, rows)]
    lines += _failures(doc)
    if doc["run_level_failures"]:
        lines += ["", "### Run-level failures", ""]
        lines += [f"- {_cell(p)}" for p in doc["run_level_failures"]]
    lines += _moved(doc, review)
    lines += _against_base(base, base_label, golden)
    if doc["notes"]:
        lines += ["", "notes:", ""] + [f"- {_cell(n)}" for n in doc["notes"]]
    return fit(lines)
