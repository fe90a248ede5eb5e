"""Crash reports worth reading: a crash storm shown once, an exception's last
frames, and check-llvm's setup errors and negative configs."""

from __future__ import annotations

import json
import subprocess
import sys

import standin_tree as pt
from layout import REPO

from rocke_py.parity import cli


def test_an_exception_shows_its_last_frames_and_the_exception_line(tmp_path):
    root = pt.make_tree(tmp_path, {"wgrad/00-boom": {"standin": {"py": "raise"}}})
    done = pt.run_cli(root, "gate", "--mode", "spec")
    detail = [ln for ln in done.stdout.splitlines() if ln.startswith("    | ")]
    assert detail[-1] == "    | ValueError: stand-in bug"
    assert any("standin_engines.py" in ln and "_behave" in ln for ln in detail)


def test_a_crash_storm_is_shown_once_with_the_c_frames_hint(tmp_path):
    root = pt.make_tree(tmp_path, {f"wgrad/0{i}-segv": {"standin": {"c": "segv"}} for i in range(3)})
    done = pt.run_cli(root, "gate", "--mode", "spec", "--json", str(tmp_path / "r.json"), "-j", "2")
    assert done.stdout.count("FAIL CRASH") == 1 and done.stdout.count("Fatal Python error: Segmentation fault") == 1
    assert "+ 2 more job(s) with the same cause" in done.stdout
    rec = json.loads((tmp_path / "r.json").read_text())["jobs"][0]
    assert rec["death"]["engine"] == "c" and rec["death"]["run"] == 1
    gdb = "gdb -batch -ex run -ex bt --args python -m rocke_py.parity.run.backtrace"
    assert any(line.startswith(f"{gdb} {pt.ENGINES_FILE}:c_emit") for line in rec["repro"])


def test_check_llvm_without_llvmlite_says_how_to_install_it_once_and_exits_2():
    code = (
        "import sys; sys.modules['llvmlite'] = None\n"
        "from rocke_py.parity.cli import main\n"
        f"sys.exit(main(['check-llvm', '--root', {str(REPO)!r}]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert "pip install 'llvmlite==0.50.0'" in done.stderr and len(done.stderr.splitlines()) == 1


def test_check_llvm_skips_a_negative_config_with_its_reason(capsys):
    assert cli.main(["check-llvm", "wgrad/100", "--root", str(REPO)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("SKIP wgrad/100-unknown-pipeline: negative config (expects reject:WGRAD_UNKNOWN_OPTION)")
    assert "(?)" not in out and "FAIL" not in out and "1 negative config(s) skipped" in out
