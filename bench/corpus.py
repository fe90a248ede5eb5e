"""A generated corpus for the gate benchmark: the shipped emitting configs swept over archs,
problem sizes and tile_k, written as a parity tree (``ROOT/parity_configs/...``).

Each config's expectation is what the Python engine says in mode ``spec`` (a benchmark corpus,
not a test: nothing here is judged against it but the gate's own bookkeeping). Emitting configs
are numbered 00-99, so they are spread over directories ``s000``, ``s001``, ... of at most 100,
and the rejected ones (numbered from 100) go round-robin into the same directories."""

from __future__ import annotations

import random
import re
from pathlib import Path

ARCHS = ("gfx942", "gfx950", "gfx1151", "gfx1201", "gfx1250")
EDITS: dict[str, tuple[int, ...]] = {"N": (1, 2, 4, 8), "C": (16, 32, 64, 128), "K": (16, 32, 64, 128)}
TILE_K = (32, 64, 128)


def variant(text: str, rng: random.Random) -> str:
    text = re.sub(r'(?m)^arch = ".*"$', f'arch = "{rng.choice(ARCHS)}"', text)
    for key, values in EDITS.items():
        text = re.sub(rf"(?m)^{key} = [0-9]+$", f"{key} = {rng.choice(values)}", text)
    if rng.random() < 0.5 and not re.search(r"(?m)^tile_k = ", text):
        text = text.replace("\n[spec]\n", f"\n[spec]\ntile_k = {rng.choice(TILE_K)}\n", 1)
    return re.sub(r'(?m)^expect = ".*"$', "expect = @EXPECT@", text)


def write_corpus(shipped: list[tuple[str, bytes]], out_root: Path, n: int, seed: int = 1) -> dict[str, int]:
    """``shipped``: (id, bytes) of emitting configs. Returns the counts of emitting and rejected configs."""
    from rocke_py import engine as py_engine

    rng = random.Random(seed)
    emitting: list[str] = []
    rejected: list[tuple[str, str]] = []
    for i in range(n):
        _, data = shipped[i % len(shipped)]
        text = variant(data.decode(), rng)
        out = py_engine.emit(text.replace("@EXPECT@", '"emit"'), "spec", "llvm22")
        if getattr(out, "text", None) is not None:
            emitting.append(text.replace("@EXPECT@", '"emit"'))
        else:
            rejected.append((text.replace("@EXPECT@", f'"reject:{out.code}"'), out.code))
    if not emitting:
        raise SystemExit("the corpus has no emitting config")
    dirs = (len(emitting) + 99) // 100
    base = out_root / "parity_configs"
    for i, text in enumerate(emitting):
        d = base / f"s{i // 100:03d}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{i % 100:02d}-v{i}.toml").write_text(text)
    for j, (text, _) in enumerate(rejected):
        d = base / f"s{j % dirs:03d}"
        (d / f"{100 + j // dirs}-r{j}.toml").write_text(text)
    return {"emitting": len(emitting), "rejected": len(rejected)}
