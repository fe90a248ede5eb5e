"""Differential fuzzing of the two engines, with reduction of each failure to a parity config.

One module per job (docs/fuzzing.md): :mod:`case` (a case and its lines), :mod:`generate`
(whole configs drawn over the spec space), :mod:`mutate` (text-level mutations of the shipped
configs), :mod:`oracles` (what makes a case fail), :mod:`reduce` (delta debugging keeping the
failure's signature), :mod:`save` (the report folder and the parity config), :mod:`report`
(progress and the final table) and :mod:`driver` (the budgeted loop over the worker pool).
Like the harness, it never imports an engine: the engines run in the pool's workers.
"""
