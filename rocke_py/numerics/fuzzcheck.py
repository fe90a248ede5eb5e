"""The fuzzer's numerics oracle (``rocke-parity fuzz --numerics``, docs/fuzzing.md).

A generated config's problem is usually too large to execute case after case, so the check
runs the kernel of its small variant (the same kernel knobs, the problem shrunk as ``numerics
--small`` shrinks it) through the Python engine and the executor, against the float64 NumPy
convolution. A small variant that the engines reject (a filter wider than the shrunk input,
say) cannot be checked and is no failure; anything else that is not exact — a wrong or
unwritten element, a hazard, an executor error — is."""

from __future__ import annotations

from typing import Optional

from .check import check_config
from .variants import small_variant


def fuzz_check(config: bytes, emitted: str) -> Optional[str]:
    """None when the small variant of ``config`` computes its convolution exactly; else why not.

    ``emitted`` (the full-size output the fuzzer compared) is not executed: its small variant
    is re-emitted instead."""
    try:
        text = small_variant(config.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None  # not a config the engines emit for: nothing to run
    got = check_config("fuzz", text)
    if got.error is not None:
        return None if " rejected " in f" {got.error}" else f"executor: {got.error}"
    if got.ok:
        return None
    parts = [f"{got.wrong} of {got.elements} element(s) wrong (max error {got.max_error:g})"]
    if got.unwritten:
        parts.append(f"{got.unwritten} unwritten")
    if got.hazards:
        parts.append(f"hazard: {got.hazards[0]}")
    return "; ".join(parts)
