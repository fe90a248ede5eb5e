"""Helpers for the numerics tests: where the shipped configs are."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def config_path(cid: str) -> Path:
    return REPO / "parity_configs" / f"{cid}.toml"
