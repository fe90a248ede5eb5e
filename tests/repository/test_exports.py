"""The cffi extension built from the tree (rocke_py.cbuild) exports rocke.h's API and nothing of
the engine's internals, and its binding is read from rocke.h, so the two cannot drift apart."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from layout import PUBLIC_API, REPO

from rocke_py import cbridge, cbuild

HEADER = (REPO / "rocke_c" / "include" / "rocke.h").read_text(encoding="utf-8")


def test_the_extension_exports_only_the_public_api():
    if shutil.which("nm") is None:
        pytest.skip("no nm on this machine")
    got = subprocess.run(["nm", "-D", "--defined-only", cbridge._module.__file__], capture_output=True, text=True)
    assert got.returncode == 0, got.stderr
    exported = {line.split()[-1] for line in got.stdout.splitlines() if line.split()}
    api = set(re.findall(r"\b(rocke_\w+)\(", HEADER))
    assert api == PUBLIC_API
    assert exported == api | {f"PyInit_{cbuild.MODULE}"}, sorted(exported - api)


def test_the_binding_is_the_header():
    decls = cbuild.public_declarations(HEADER)
    assert "ROCKE_API" not in decls and "#" not in decls
    names = ("rocke_emit(", "rocke_result_free(", "rocke_implemented_modes(", "rocke_version(", "} rocke_result;")
    for name in names + (
        "rocke_context_new(",
        "rocke_emit_in(",
        "rocke_context_free(",
        "rocke_context_set_note(",
        "struct rocke_context rocke_context;",
    ):
        assert name in decls
