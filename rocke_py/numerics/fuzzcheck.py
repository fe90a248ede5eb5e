"""The fuzzer's numerics oracle (``rocke-parity fuzz --numerics``, docs/fuzzing.md).

A generated config's problem is usually too large to execute case after case, so the check
runs the kernel at the sizes of ``numerics --small`` (its small and edge variants: the same
kernel knobs on small problems) through the Python engine and both executors — the IR and the
``ll`` of every flavor in lockstep with it — against the reference built from the config
itself. A variant that the engines reject (a filter wider than the shrunk input, say) cannot
be checked and is no failure; anything else that is not exact — a wrong or unwritten element,
a hazard, a lockstep departure, a spec that disagrees with the config, an executor error — is."""

from __future__ import annotations

from typing import Optional

from .check import Outcome, check_all_sizes

#: a generated config keeps its channels at the small sizes: one over this many multiply-adds
#: or threads is not run (no failure), so that one case cannot take the fuzzer's whole budget
FUZZ_MAX_MULTIPLY_ADDS = 50_000_000
FUZZ_MAX_THREADS = 250_000


def fuzz_check(config: bytes, emitted: str) -> Optional[str]:
    """None when ``config`` computes its convolution exactly at the --small sizes; else why not.

    ``emitted`` (the full-size output the fuzzer compared) is not executed: the small sizes
    are re-emitted instead."""
    try:
        outcomes = check_all_sizes(
            "fuzz",
            config.decode("utf-8"),
            small=True,
            max_macs=FUZZ_MAX_MULTIPLY_ADDS,
            max_threads=FUZZ_MAX_THREADS,
            level="both",
        )
    except (UnicodeDecodeError, ValueError):
        return None  # not a config the engines emit for: nothing to run
    for got in outcomes:
        why = failure(got)
        if why is not None:
            return f"{got.label} size, {got.level}: {why}"
    return None


def failure(got: Outcome) -> Optional[str]:
    """Why one launch is not exact, or None (a rejected variant is no failure)."""
    if got.mismatch:
        return f"spec mismatch: {got.mismatch[0]}"
    if got.error is not None:
        return None if " rejected " in f" {got.error}" else f"executor: {got.error}"
    if got.ok or got.skipped:
        return None
    if got.lockstep is not None and not got.wrong and not got.hazards:
        return f"lockstep: the ll departs from the IR at {got.lockstep}"
    parts = [f"{got.wrong} of {got.elements} element(s) wrong (max error {got.max_error:g})"]
    if got.unwritten:
        parts.append(f"{got.unwritten} unwritten")
    if got.hazards:
        parts.append(f"hazard: {got.hazards[0]}")
    if got.lockstep is not None:
        parts.append(f"lockstep: {got.lockstep}")
    return "; ".join(parts)
