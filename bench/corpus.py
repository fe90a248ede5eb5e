"""A generated corpus for the gate benchmark, drawn by the fuzz generator and written as a
parity tree (``ROOT/parity_configs/...``).

Case *i* is ``rocke_py.fuzz.generate.draw`` on ``Random("SEED:i")`` for the families in turn
(mostly valid draws over every deep path and arch, the rest crossing one validation rule), so
a corpus is the same for the same seed and size. Each config's expectation is what the Python
engine says in mode ``spec`` (a benchmark corpus, not a test: nothing here is judged against it
but the gate's own bookkeeping). Emitting configs are numbered 00-99, so they are spread over
directories ``s000``, ``s001``, ... of at most 100, and the rejected ones (numbered from 100) go
round-robin into the same directories."""

from __future__ import annotations

import random
from pathlib import Path

PARITY = '[parity]\ndescription = "benchmark corpus case {i} ({origin})"\nexpect = "{expect}"\n\n'


def write_corpus(out_root: Path, n: int, seed: int = 1) -> dict[str, int]:
    """Returns the counts of emitting and rejected configs."""
    from rocke_py import engine as py_engine
    from rocke_py.fuzz.generate import FAMILIES, draw

    emitting: list[str] = []
    rejected: list[str] = []
    for i in range(n):
        origin, text = draw(random.Random(f"{seed}:{i}"), FAMILIES[i % len(FAMILIES)])
        out = py_engine.emit(text, "spec", "llvm22")
        if getattr(out, "text", None) is not None:
            emitting.append(PARITY.format(i=i, origin=origin, expect="emit") + text)
        else:
            rejected.append(PARITY.format(i=i, origin=origin, expect=f"reject:{out.code}") + text)
    if not emitting:
        raise SystemExit("the corpus has no emitting config")
    dirs = (len(emitting) + 99) // 100
    base = out_root / "parity_configs"
    for i, text in enumerate(emitting):
        d = base / f"s{i // 100:03d}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{i % 100:02d}-v{i}.toml").write_text(text)
    for j, text in enumerate(rejected):
        d = base / f"s{j % dirs:03d}"
        (d / f"{100 + j // dirs}-r{j}.toml").write_text(text)
    return {"emitting": len(emitting), "rejected": len(rejected)}
