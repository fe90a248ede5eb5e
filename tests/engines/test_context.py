"""The bridge's reusable rocke_context (rocke.h): calls through one context, rejections and
bad arguments among them, give the bytes and verdicts of a fresh rocke_emit per call, and each
thread gets its own context."""

from __future__ import annotations

import threading
from pathlib import Path

from rocke_py import cbridge
from rocke_py.engine.result import Emitted

ffi, lib = cbridge.ffi, cbridge.lib

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = [
    "wgrad/00-baseline",
    "dgrad/101-tile-divisibility",
    "fwd/00-baseline",
    "dgrad/04-stride2-3x3",
]


def fresh(data: bytes, mode: str, flavor: str) -> tuple[int, bytes, str]:
    """rocke_emit with no context: its status, text and code."""
    result = ffi.new("rocke_result *")
    status = lib.rocke_emit(data, len(data), mode.encode(), flavor.encode(), result)
    try:
        text = ffi.unpack(result.text, result.text_len) if result.text != ffi.NULL else b""
        code = ffi.string(result.code).decode() if result.code != ffi.NULL else ""
        return status, text, code
    finally:
        lib.rocke_result_free(result)


def through_bridge(data: bytes, mode: str, flavor: str) -> tuple[int, bytes, str]:
    out = cbridge.emit(data, mode, flavor)
    if isinstance(out, Emitted):
        return lib.ROCKE_EMITTED, out.text.encode(), ""
    return lib.ROCKE_REJECTED, b"", out.code


def test_reuse_gives_fresh_bytes() -> None:
    datas = [(ROOT / "parity_configs" / f"{c}.toml").read_bytes() for c in CONFIGS]
    calls = [(d, m, "llvm22") for _ in range(2) for d in datas for m in ("ll", "ir", "spec")]
    calls += [(datas[0], "asm", "llvm22"), (b"\xff", "ll", "llvm22"), (datas[0], "ll", "llvm20")]
    for data, mode, flavor in calls:
        assert through_bridge(data, mode, flavor) == fresh(data, mode, flavor)


def test_one_context_per_thread() -> None:
    data = (ROOT / "parity_configs" / "fwd" / "00-baseline.toml").read_bytes()
    want = fresh(data, "ll", "llvm22")
    seen: list[tuple[object, tuple[int, bytes, str]]] = []

    def run() -> None:
        seen.append((cbridge._engine._thread().ctx, through_bridge(data, "ll", "llvm22")))

    threads = [threading.Thread(target=run) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [out for _, out in seen] == [want] * 3
    assert len({int(ffi.cast("uintptr_t", ctx)) for ctx, _ in seen}) == 3
