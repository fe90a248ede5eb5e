"""rocke-parity: the harness that runs both engines on every parity config and compares them.

docs/harness.md maps every module (its one job, what it imports) and every file the harness
keeps under ``.rocke-parity/``; tests/repository/test_harness_doc.py keeps the map true.
"""
