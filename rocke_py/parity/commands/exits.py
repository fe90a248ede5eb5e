"""The exit statuses of ``rocke-parity`` and the commands that run the gate.

0 success / every job passed (and ``gate --changed`` with nothing to gate); 1 a failing job, a
run-level failure, a rejection (``emit``) or a refusal (``new``, ``golden --update``); 2 a usage
error (bad option, unknown config id, empty selection, a mode the engines do not implement, a
bad ``--shard`` or ``--changed`` revision), a setup error (a C build older than its sources,
``check-llvm`` without llvmlite), shards that ``merge`` refuses, or an output that cannot be
written (``--json``, ``--junit``, ``--summary``, ``emit -o``: one line, and nothing
half-written); 3 an engine crash in ``emit``; 128 + the signal for SIGINT (130) and SIGTERM
(143), after every worker was killed.

A module of its own so that the parser (:mod:`rocke_py.parity.cli`) and the commands share them
without importing each other.
"""

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_CRASH = 0, 1, 2, 3
#: the commands that run the gate, and so take the early workers
GATE_COMMANDS = ("gate", "golden")
