"""rocke-parity: the harness that runs both engines on every parity config and compares them.

Modules, one job each:

- ``configs``     discovery of ``parity_configs/<family>/<NN>-<slug>.toml`` and their ``[parity]`` tables
- ``engines``     the pluggable engine pair (import paths), loaded in a worker or in-process
- ``runner``      the crash-isolating worker pool (CRASH, TIMEOUT, determinism re-run)
- ``compare``     the closed status set and its pass rule; classification of one job
- ``known_gaps``  ``parity_configs/known_gaps.toml``
- ``golden``      ``parity_configs/golden.json`` and its renumbering checks (old texts from ``objects``)
- ``canon``       SSA renumbering and first-divergence helpers
- ``gate``        one gate run: discovery → jobs → pool → classification → gaps → golden
- ``diff``        ``rocke-parity diff``: one job, in-process, explained
- ``report``      terminal summary, progress bar, JSON and JUnit reports
- ``lastrun``     ``.rocke-parity/last-run.json`` (for ``rocke-parity list``)
- ``newconfig``   ``rocke-parity new``
- ``state``       ``.rocke-parity/`` (local, self-ignoring) and atomic writes
- ``_toml``       tomllib, hardened: a document too deep or a number too long is a TOMLDecodeError
- ``root``        the repository root (the nearest directory holding ``parity_configs/``)
- ``objects``     the local object cache of texts by sha256 (``.rocke-parity/objects/``)
- ``cli``         argparse front end (``rocke-parity``, ``parity-diff``), and the gate's early workers
- ``commands``    the commands behind the parser
"""
