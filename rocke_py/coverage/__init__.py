"""rocke-parity coverage: which combinations of the spec's axes the configs reach, the strongest
oracle that checks each, feasibility decided by both engines, proposals that close the gaps, and
the ratchet the gate applies (docs/coverage.md).

axes (what a config names) -> measure (tuples and strata) -> feasible (probes) -> analyse (one
analysis) -> report / propose / ratchet; command is the CLI's entry."""
