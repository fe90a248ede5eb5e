"""A probe's text: the seed split once and edited setting by setting (feasible.applied, on
configtext.TomlLines) is exactly the text the same edits give one at a time, each on a fresh
scan of the text (configtext.set_value, remove_key), for every shipped seed and for layouts the
kept index must not be trusted on."""

from __future__ import annotations

import random
from pathlib import Path

from rocke_py.configtext import remove_key, set_value
from rocke_py.coverage import axes, feasible, measure

ROOT = Path(__file__).resolve().parents[2]

#: Layouts beside the shipped ones: CRLF, no final newline, a key set twice, a table opened
#: twice, a commented key, an empty last table, line breaks other than "\n".
LAYOUTS = (
    '[target]\r\narch = "gfx942"\r\n\r\n[spec]\r\nfamily = "fwd"\r\ntile_m = 64 # m\r\n',
    '[spec]\nfamily = "fwd"\nrelu = true\nrelu = false\n[problem]\nN = 2',
    '[spec]\nfamily = "fwd"\n[problem]\nN = 2\n[spec]\n# bias = 1\nscale = 2\n[target]\n',
    '[spec]\rfamily = "fwd"\rrelu = true\r[problem]\x85N = 2\n',
    '[spec]\nfamily = "fwd"\u2028relu = true\n[problem]\nN = 2\n',
    '[spec]\nfamily = "fwd"\nrelu = true\x85[problem]\nN = 2\u2028[target]\narch = "gfx942"\x0b',
)

#: Settings no axis writes: new tables, a key no header or key line names, a line break.
ODD = (
    ("extra", "x", "1"),
    ("ex.tra", "x", "1"),
    ("spec", "odd.key", '"a"'),
    ("spec", "relu", "1\n2"),
    ("spec", "relu", None),
)


def one_by_one(text: str, settings: tuple[axes.Setting, ...]) -> str:
    for table, key, value in settings:
        text = remove_key(text, table, key) if value is None else set_value(text, table, key, value)
    return text


def pool() -> list[axes.Setting]:
    out = list(ODD)
    for axis in axes.AXES:
        for value in axis.values:
            for part in axis.settings(value):
                out += part
    return out


def test_a_run_of_edits_gives_the_text_of_edits_one_at_a_time():
    seeds = [s.config.data.decode("utf-8") for s in measure.shipped(ROOT) if s.values]
    settings = pool()
    rnd = random.Random(0)
    for text in seeds + list(LAYOUTS) * 20:
        for _ in range(12):
            run = tuple(rnd.choice(settings) for _ in range(rnd.randint(1, 8)))
            assert feasible.applied(text, run) == one_by_one(text, run), (text, run)
