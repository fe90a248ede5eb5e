"""Running `rocke-parity` in-process for a test: exit status and output together, and never a
traceback (the hostile-input tests' first assertion)."""

from __future__ import annotations

from dataclasses import dataclass

from rocke_py.parity.cli import main


@dataclass(frozen=True)
class Done:
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err


def run_main(capsys, argv: list[str]) -> Done:
    """main(argv) with its output captured; fails the test on a traceback."""
    code = main(argv)
    got = capsys.readouterr()
    done = Done(code, got.out, got.err)
    assert "Traceback" not in done.text, done.text[-3000:]
    return done
