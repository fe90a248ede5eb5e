"""Helpers for the harness tests: a tiny synthetic parity_configs tree and the stand-in engines."""

from __future__ import annotations

from pathlib import Path

from rocke_py.configtext import config_string
from rocke_py.parity.run.engines import EngineSpec

ENGINES_FILE = Path(__file__).resolve().parent / "standin_engines.py"


def engine_spec(modes: str = "implemented_modes", c_modes: str | None = None) -> EngineSpec:
    f = str(ENGINES_FILE)
    return EngineSpec(f"{f}:py_emit", f"{f}:c_emit", f"{f}:{modes}", f"{f}:{c_modes or modes}")


def engines_arg(modes: str = "implemented_modes", c_modes: str | None = None) -> str:
    s = engine_spec(modes, c_modes)
    return ",".join([s.py_emit, s.c_emit, s.py_modes or "", s.c_modes or ""])


def config_text(
    expect: str = "emit", standin: dict | None = None, description: str = "a stand-in config", extra: str = ""
) -> str:
    lines = [
        "[parity]",
        f"description = {config_string(description)}",
        f"expect = {config_string(expect)}",
        "",
        "[target]",
        'arch = "gfx950"',
        "",
        "[problem]",
        "N = 8",
        "C = 64",
        "",
        "[spec]",
        'family = "wgrad"',
        "tile_m = 64",
        "tile_k = 64  # the K tile",
        "",
    ]
    if standin:
        lines.append("[standin]")
        for k, v in standin.items():
            lines.append(f"{k} = {config_string(v) if isinstance(v, str) else str(v).lower()}")
    text = "\n".join(lines) + "\n" + extra
    return text


def write_config(root: Path, cid: str, expect: str = "emit", standin: dict | None = None, **kw) -> Path:
    path = root / "parity_configs" / f"{cid}.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(config_text(expect, standin, **kw))
    return path


def make_tree(root: Path, configs: dict[str, dict]) -> Path:
    """``configs``: id -> keyword arguments of :func:`write_config`."""
    (root / "parity_configs").mkdir(parents=True, exist_ok=True)
    for cid, kw in configs.items():
        write_config(root, cid, **kw)
    return root


def standin_output(root: Path, cid: str, mode: str = "spec", flavor: str = "llvm22", side: str = "py"):
    """What the stand-in engine emits for a config of the tree (to build golden entries)."""
    import hashlib

    from rocke_py.parity.run.engines import load_callable

    data = (root / "parity_configs" / f"{cid}.toml").read_bytes()
    out = load_callable(f"{ENGINES_FILE}:{side}_emit")(data, mode, flavor)
    text = out.text
    return text, hashlib.sha256(text.encode()).hexdigest(), len(text.encode())


def standin_result(root: Path, cid: str, mode: str = "spec", flavor: str = "llvm22", side: str = "py"):
    from rocke_py.parity.run.engines import load_callable

    data = (root / "parity_configs" / f"{cid}.toml").read_bytes()
    return load_callable(f"{ENGINES_FILE}:{side}_emit")(data, mode, flavor)


def write_golden(
    root: Path,
    entries: dict[str, dict[str, tuple]],
    modes: tuple[str, ...] | None = ("spec",),
    flavors: tuple[str, ...] = ("llvm20", "llvm22", "llvm23"),
) -> Path:
    """``entries``: config -> output key -> (sha256, bytes, kernel_name) or ("reject", code, message).

    ``modes``: the pinned coverage (None: no coverage key, an invalid v2 manifest is not written —
    a version-1 manifest is written instead). The coverage ratchet's tuples are recorded empty:
    a stand-in config is no spec an engine reads, so it reaches no tuple."""
    import hashlib
    import json

    def one(e: tuple) -> dict:
        if e[0] == "reject":
            return {
                "verdict": "reject",
                "code": e[1],
                "message": e[2],
                "message_sha256": hashlib.sha256(e[2].encode()).hexdigest(),
            }
        return {"verdict": "emit", "sha256": e[0], "bytes": e[1], "kernel_name": e[2]}

    if modes is None:
        doc: dict = {
            "schema": "rocke-parity.golden/v1",
            "entries": {
                c: {k: {"sha256": s, "bytes": b, "kernel_name": n} for k, (s, b, n) in outs.items()}
                for c, outs in entries.items()
            },
        }
    else:
        doc = {
            "schema": "rocke-parity.golden/v2",
            "coverage": {"modes": list(modes), "flavors": list(flavors), "tuples": {}},
            "entries": {c: {k: one(e) for k, e in outs.items()} for c, outs in entries.items()},
        }
    path = root / "parity_configs" / "golden.json"
    path.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    return path


def golden_for(root: Path, cids: list[str], keys: tuple[str, ...] = ("spec",)) -> dict:
    """Correct golden entries for ``cids`` (the py stand-in's verdicts), for :func:`write_golden`."""
    import hashlib

    out: dict = {}
    for cid in cids:
        for key in keys:
            mode, _, flavor = key.partition(".")
            res = standin_result(root, cid, mode, flavor or "llvm22")
            if hasattr(res, "text"):
                out.setdefault(cid, {})[key] = (
                    hashlib.sha256(res.text.encode()).hexdigest(),
                    len(res.text.encode()),
                    "",
                )
            else:
                out.setdefault(cid, {})[key] = ("reject", res.code, res.message)
    return out


def write_gaps(root: Path, gaps: list[dict]) -> Path:
    lines = ["# test known gaps"]
    for g in gaps:
        lines.append("[[gap]]")
        lines += [f"{k} = {config_string(v)}" for k, v in g.items()]
    path = root / "parity_configs" / "known_gaps.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def new_args(
    source: str, *settings: str, expect: str | None = None, slug: str | None = None, family: str = "wgrad"
) -> list[str]:
    """The arguments of `rocke-parity new FAMILY --from SOURCE [--set S]... [--slug] [--expect]`."""
    args = ["new", family, "--from", source]
    for setting in settings:
        args += ["--set", setting]
    if slug is not None:
        args += ["--slug", slug]
    if expect is not None:
        args += ["--expect", expect]
    return args


def cli_command(root: Path, *args: str, modes: str = "implemented_modes") -> list[str]:
    """``rocke-parity ARGS --root ROOT --engines <stand-ins>`` as a subprocess command line."""
    import sys

    return [sys.executable, "-m", "rocke_py.parity", *args, "--root", str(root), "--engines", engines_arg(modes)]


def run_cli(
    root: Path,
    *args: str,
    timeout: float = 60,
    address_space: int | None = None,
    env: dict | None = None,
    modes: str = "implemented_modes",
):
    """Run the CLI in a child process (so a hang is a failed test, not a hung one).

    ``address_space`` caps the child's virtual memory (RLIMIT_AS, bytes), so that a reader that
    would slurp ``/dev/zero`` fails fast instead of eating the machine's memory.
    """
    import os
    import resource
    import subprocess

    def limit() -> None:
        if address_space is not None:
            resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))

    return subprocess.run(
        cli_command(root, *args, modes=modes),
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=limit,
        env={**os.environ, **(env or {})},
    )
