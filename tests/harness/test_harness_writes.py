"""Hole 11: reports are written atomically or not at all, with one line and exit 2.

``--json``/``--junit``/``emit -o``: temp file + rename in the destination's directory; ``-`` is
standard output (and the human summary then goes to stderr); a destination that is a
directory, a device (``/dev/full``), a FIFO or a read-only file is refused with one line, exit
2, no traceback, and an existing report is never left truncated. The local state under
``.rocke-parity/`` failing to write is a note, never a traceback."""

from __future__ import annotations

import errno
import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import standin_tree as pt

from rocke_py.parity.cli import main


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    pt.make_tree(
        root,
        {"wgrad/00-a": {}, "wgrad/100-n": {"expect": "reject:E_X", "standin": {"py": "reject:E_X", "c": "reject:E_X"}}},
    )
    pt.write_golden(root, pt.golden_for(root, ["wgrad/00-a", "wgrad/100-n"]))
    return root


def gate(root: Path, *args: str) -> int:
    return main(["gate", "--root", str(root), "--engines", pt.engines_arg(), "-j", "1", *args])


def one_error_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_json_dash_is_stdout_and_the_summary_goes_to_stderr(root, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert gate(root, "--json", "-") == 0
    cap = capsys.readouterr()
    doc = json.loads(cap.out)  # stdout is the report and nothing else
    assert doc["schema"] == "rocke-parity.report/v1" and len(doc["jobs"]) == 2
    assert "gate PASSED: 2 job(s)" in cap.err
    assert not (tmp_path / "-").exists()


def test_junit_dash_is_stdout(root, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert gate(root, "--junit", "-", "--json", str(tmp_path / "r.json")) == 0
    cap = capsys.readouterr()
    assert ET.fromstring(cap.out.encode()).tag == "testsuites"
    assert "gate PASSED" in cap.err and json.loads((tmp_path / "r.json").read_text())["passed"] is True
    assert not (tmp_path / "-").exists()


def test_both_reports_on_stdout_is_a_usage_error(root, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # (a harness that took "-" for a file name would write it here)
    assert gate(root, "--json", "-", "--junit", "-") == 2
    assert one_error_line(capsys.readouterr().err) == (
        "rocke-parity gate: --json - and --junit - cannot both write to standard output"
    )


@pytest.mark.parametrize("option", ["--json", "--junit"])
def test_dev_full_is_one_line_and_exit_2(root, capsys, option):
    assert gate(root, option, "/dev/full") == 2
    cap = capsys.readouterr()
    assert one_error_line(cap.err) == (
        f"rocke-parity gate: cannot write {option} /dev/full: it is a character device, not a regular file"
    )
    assert "gate PASSED" not in cap.out  # refused before the run: no half-reported success


def test_directory_destination_is_one_line_and_exit_2(root, tmp_path, capsys):
    assert gate(root, "--json", str(tmp_path)) == 2
    assert one_error_line(capsys.readouterr().err) == (
        f"rocke-parity gate: cannot write --json {tmp_path}: it is a directory"
    )


def test_read_only_report_is_refused_not_replaced(root, tmp_path, capsys):
    out = tmp_path / "report.json"
    out.write_text("keep me\n")
    out.chmod(0o444)
    assert gate(root, "--json", str(out)) == 2
    assert one_error_line(capsys.readouterr().err) == (f"rocke-parity gate: cannot write --json {out}: it is read-only")
    assert out.read_text() == "keep me\n"


class FullDisk:
    """A file object whose write fails with ENOSPC (a full disk), for files named like ``name``."""

    def __init__(self, real) -> None:
        self._real = real

    def write(self, data) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self._real.close()

    def __getattr__(self, name):
        return getattr(self._real, name)


def fill_the_disk_for(monkeypatch, name: str) -> None:
    """Every file opened for writing whose name contains ``name`` fails to write (builtin open and os.fdopen)."""
    real_open, real_fdopen = open, os.fdopen

    def fake_open(file, mode="r", *a, **k):
        f = real_open(file, mode, *a, **k)
        return FullDisk(f) if any(c in mode for c in "wax+") and name in str(file) else f

    def fake_fdopen(fd, mode="r", *a, **k):
        f = real_fdopen(fd, mode, *a, **k)
        return FullDisk(f) if any(c in mode for c in "wax+") and name in os.readlink(f"/proc/self/fd/{fd}") else f

    monkeypatch.setattr("builtins.open", fake_open)
    monkeypatch.setattr(os, "fdopen", fake_fdopen)


@pytest.mark.parametrize("option", ["--json", "--junit"])
def test_full_disk_leaves_the_old_report_whole(root, tmp_path, capsys, monkeypatch, option):
    out = tmp_path / "report.out"
    assert gate(root, option, str(out)) == 0
    before = out.read_bytes()
    capsys.readouterr()
    fill_the_disk_for(monkeypatch, "report.out")
    assert gate(root, option, str(out)) == 2
    cap = capsys.readouterr()
    assert "gate PASSED" in cap.out
    assert one_error_line(cap.err) == (f"rocke-parity gate: cannot write {option} {out}: No space left on device")
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["repo", "report.out"]  # no temp file left


def test_reports_are_complete_files(root, tmp_path):
    out = tmp_path / "deep" / "dir" / "r.json"
    assert gate(root, "--json", str(out), "--junit", str(tmp_path / "r.xml")) == 0
    assert json.loads(out.read_text())["passed"] is True
    assert ET.parse(tmp_path / "r.xml").getroot().tag == "testsuites"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deep", "r.xml", "repo"]


def test_emit_output_destinations(root, tmp_path, capfd):
    text, _, _ = pt.standin_output(root, "wgrad/00-a", side="py")

    def emit(*args: str) -> int:
        return main(["emit", "wgrad/00-a", "--engine", "py", "--root", str(root), "--engines", pt.engines_arg(), *args])

    assert emit("-o", "-") == 0
    assert capfd.readouterr().out == text
    assert emit("-o", "/dev/full") == 2
    assert one_error_line(capfd.readouterr().err) == (
        "rocke-parity emit: cannot write -o /dev/full: it is a character device, not a regular file"
    )
    assert emit("-o", str(tmp_path)) == 2
    assert one_error_line(capfd.readouterr().err) == f"rocke-parity emit: cannot write -o {tmp_path}: it is a directory"
    ro = tmp_path / "ro.ll"
    ro.write_text("old\n")
    ro.chmod(0o444)
    assert emit("-o", str(ro)) == 2 and ro.read_text() == "old\n"
    capfd.readouterr()
    out = tmp_path / "out.ll"
    assert emit("-o", str(out)) == 0 and out.read_text() == text


def test_emit_output_on_a_full_disk(root, tmp_path, capfd, monkeypatch):
    out = tmp_path / "out.ll"
    out.write_text("old output\n")
    fill_the_disk_for(monkeypatch, "out.ll")
    assert (
        main(
            ["emit", "wgrad/00-a", "--engine", "py", "--root", str(root), "--engines", pt.engines_arg(), "-o", str(out)]
        )
        == 2
    )
    assert one_error_line(capfd.readouterr().err) == (
        f"rocke-parity emit: cannot write -o {out}: No space left on device"
    )
    assert out.read_text() == "old output\n"


def test_unwritable_local_state_is_only_a_note(root, capsys):
    (root / ".rocke-parity").write_text("not a directory\n")  # every state write fails
    assert gate(root) == 0
    cap = capsys.readouterr()
    assert "gate PASSED" in cap.out and "Traceback" not in cap.err
    assert [ln for ln in cap.err.splitlines() if ln] and all(
        ln.startswith("note: ") for ln in cap.err.splitlines() if ln
    )


def test_local_state_on_a_full_disk_is_only_a_note(root, capsys, monkeypatch):
    fill_the_disk_for(monkeypatch, ".rocke-parity")
    assert gate(root) == 0
    cap = capsys.readouterr()
    assert "gate PASSED" in cap.out
    notes = [ln for ln in cap.err.splitlines() if ln]
    assert notes and all(ln.startswith("note: could not write") for ln in notes), cap.err
    assert "No space left on device" in cap.err


def test_golden_update_with_unwritable_local_state(root, capsys):
    (root / "parity_configs/golden.json").unlink()
    (root / ".rocke-parity").write_text("not a directory\n")
    assert main(["golden", "--update", "--root", str(root), "--engines", pt.engines_arg(), "-j", "1"]) == 0
    cap = capsys.readouterr()
    assert "golden.json: 3 change(s)" in cap.out and "Traceback" not in cap.err  # two entries and the coverage
    assert all(ln.startswith("note: could not write") for ln in cap.err.splitlines() if ln), cap.err
