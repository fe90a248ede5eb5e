"""Mutation fuzzing of the config parser: both engines on mutated parity configs.

    python3 tests/tools/fuzz_parser.py [--count N] [--seed S] [--driver PATH] [--keep DIR]

Takes the shipped configs (parity_configs/*/*.toml, a built-in baseline, and the bad-input
corpus tests/data/bad_configs/), applies 1-4
random mutations to each case (bit and byte flips, truncations, line duplications, deletions
and swaps, insertions of TOML-ish tokens and of bytes that stress the encoding check, value
swaps), runs every case through the C engine built with AddressSanitizer + UBSan
(rocke_c/tests/emit_driver.c, built into a temporary directory unless --driver is given) and
through the Python engine, and reports every case where the results differ (status, code,
message or text bytes) or the sanitized driver says anything. Deterministic for a seed.

--keep DIR writes the divergent/failing cases there. Exit status 1 on any finding.
tests/parity/test_bad_configs_parity.py runs a small fixed-seed smoke of this (run_fuzz)."""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "support"))

from sanitized_driver import build_driver, python_record, run_batches  # noqa: E402

BASELINE = (
    b'[parity]\ndescription = "fuzz seed"\nexpect = "emit"\n\n[target]\narch = "gfx950"\n\n'
    b"[problem]\nN = 8\nHi = 56\nWi = 56\nC = 64\nK = 64\nY = 3\nX = 3\npH = 1\npW = 1\n\n"
    b'[spec]\nfamily = "wgrad"\nlds_k_outer = "auto"   # deduced\nsplit_k = 1\n'
)

TOKENS = [
    b"[",
    b"]",
    b"[[",
    b"]]",
    b"=",
    b"==",
    b'"',
    b'""',
    b'"""',
    b"'",
    b"\\",
    b'\\"',
    b"\\n",
    b"\\u0041",
    b"\\x",
    b"#",
    b" # c",
    b"\n",
    b"\r\n",
    b"\r",
    b"\t",
    b" ",
    b"  ",
    b".",
    b",",
    b"{",
    b"}",
    b"{ a = 1 }",
    b"[1, 2]",
    b"[spec]",
    b"[parity]",
    b"[target]",
    b"[problem]",
    b"[bogus]",
    b"[ spec ]",
    b"true",
    b"false",
    b"True",
    b"-",
    b"+",
    b"0",
    b"00",
    b"-0",
    b"+1",
    b"1.5",
    b"1e3",
    b"0x10",
    b"0o7",
    b"1_000",
    b"inf",
    b"nan",
    b"2147483647",
    b"2147483648",
    b"-2147483648",
    b"-2147483649",
    b"9" * 40,
    b"65536",
    b"65537",
    b'"auto"',
    b'"fp16"',
    b'"gfx942"',
    b'"dgrad"',
    b'"fwd"',
    b'"cshuffle"',
    b'"compv4"',
    b"k" * 65,
    b"\x00",
    b"\x01",
    b"\x1f",
    b"\x7f",
    b"\xff",
    b"\xfe",
    b"\x80",
    b"\xc0\x80",
    b"\xc0\xaf",
    b"\xe0\x80\xaf",
    b"\xed\xa0\x80",
    b"\xf4\x90\x80\x80",
    b"\xf5",
    b"\xe2\x82",
    b"\xef\xbb\xbf",
    "é".encode(),
    "\u2028".encode(),
    "\u0085".encode(),
    "\U0001f600".encode(),
]
KEYS = [
    b"arch",
    b"N",
    b"Hi",
    b"Wi",
    b"C",
    b"K",
    b"Y",
    b"X",
    b"sH",
    b"sW",
    b"pH",
    b"pW",
    b"dH",
    b"dW",
    b"groups",
    b"Di",
    b"Z",
    b"sD",
    b"pD",
    b"dD",
    b"family",
    b"name",
    b"dtype_a",
    b"dtype_d",
    b"tile_m",
    b"tile_k",
    b"warp_m",
    b"warp_tile_k",
    b"wave_size",
    b"pipeline",
    b"epilogue",
    b"async_dma",
    b"unroll_k",
    b"lds_k_pad",
    b"lds_layout_xor",
    b"vector_size_c",
    b"chiplet_swizzle",
    b"bias",
    b"clamp_min",
    b"clamp_max",
    b"lds_k_outer",
    b"split_k",
    b"two_stage",
    b"group_merge",
    b"num_load_waves",
    b"cshuffle_no_alias",
    b"bogus",
]
VALUES = [
    b"0",
    b"1",
    b"-1",
    b"2",
    b"3",
    b"4",
    b"8",
    b"16",
    b"32",
    b"64",
    b"128",
    b"256",
    b"1024",
    b"65536",
    b"65537",
    b"2147483647",
    b"-2147483648",
    b"true",
    b"false",
    b'"auto"',
    b'"fp32"',
    b'"bf16"',
    b'"f16"',
    b'"int8"',
    b'"x"',
    b'""',
    b'"gfx1151"',
    b'"gfx1250"',
    b'"mem"',
    b'"basic"',
    b'"wavelet"',
    b'"cshuffle"',
    b'"a\\tb"',
]


def seeds() -> list[bytes]:
    """The shipped configs (most picks) and the bad-input corpus (near misses)."""
    good = sorted((ROOT / "parity_configs").glob("*/*.toml"))
    bad = sorted(p for p in (ROOT / "tests" / "data" / "bad_configs").glob("[0-9]*"))
    return [BASELINE] * 8 + [f.read_bytes() for f in good] * 3 + [f.read_bytes() for f in bad]


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def mutate(rng: random.Random, data: bytes) -> bytes:
    op = rng.randrange(11)
    if op == 0 and data:  # flip one bit
        i = rng.randrange(len(data))
        return data[:i] + bytes([data[i] ^ (1 << rng.randrange(8))]) + data[i + 1 :]
    if op == 1 and data:  # replace one byte
        i = rng.randrange(len(data))
        return data[:i] + bytes([rng.randrange(256)]) + data[i + 1 :]
    if op == 2:  # truncate
        return data[: rng.randrange(len(data) + 1)]
    lines = _lines(data)
    if op == 3:  # duplicate a line
        i = rng.randrange(len(lines))
        lines.insert(rng.randrange(len(lines) + 1), lines[i])
        return b"\n".join(lines)
    if op == 4 and len(lines) > 1:  # delete a line
        del lines[rng.randrange(len(lines))]
        return b"\n".join(lines)
    if op == 5 and len(lines) > 1:  # swap two lines
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
        return b"\n".join(lines)
    if op == 6:  # set a key (maybe in the wrong table)
        i = rng.randrange(len(lines) + 1)
        lines.insert(i, rng.choice(KEYS) + b" = " + rng.choice(VALUES))
        return b"\n".join(lines)
    if op == 7:  # replace the value of a key line
        cands = [i for i, line in enumerate(lines) if b"=" in line and not line.startswith(b"[")]
        if cands:
            i = rng.choice(cands)
            key = lines[i].split(b"=", 1)[0]
            lines[i] = key + b"= " + rng.choice(VALUES + TOKENS)
            return b"\n".join(lines)
    if op == 8:  # CRLF some or all lines
        if rng.random() < 0.5:
            return data.replace(b"\n", b"\r\n")
        i = rng.randrange(len(lines))
        lines[i] += b"\r"
        return b"\n".join(lines)
    # insert a token at a random byte offset (ops 9, 10 and the fallbacks above)
    i = rng.randrange(len(data) + 1)
    return data[:i] + rng.choice(TOKENS) + data[i:]


def make_cases(count: int, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    pool = seeds()
    out = []
    for _ in range(count):
        data = rng.choice(pool)
        for _ in range(rng.randint(1, 4)):
            data = mutate(rng, data)
        out.append(data)
    return out


@dataclass
class FuzzStats:
    cases: int = 0
    identical: int = 0
    divergent: list[tuple[int, str]] = field(default_factory=list)
    sanitizer: list[tuple[int, str]] = field(default_factory=list)
    outcomes: Counter = field(default_factory=Counter)

    def ok(self) -> bool:
        return not self.divergent and not self.sanitizer

    def summary(self) -> str:
        top = ", ".join(f"{k} {v}" for k, v in sorted(self.outcomes.items(), key=lambda kv: -kv[1]))
        return (
            f"{self.cases} cases: {self.identical} identical, {len(self.divergent)} divergent, "
            f"{len(self.sanitizer)} sanitizer/crash; outcomes: {top}"
        )


def run_fuzz(
    count: int, seed: int, driver: Path, workdir: Path, mode: str = "spec", keep: Path | None = None
) -> FuzzStats:
    cases = make_cases(count, seed)
    files = []
    for n, data in enumerate(cases):
        path = workdir / f"case-{n:06d}.toml"
        path.write_bytes(data)
        files.append(path)
    records, failures = run_batches(driver, files, mode)
    stats = FuzzStats(cases=len(cases))
    failed = {p for p, _ in failures}
    for path, why in failures:
        stats.sanitizer.append((files.index(path), why))
    for n, (path, c) in enumerate(zip(files, records)):
        if path in failed:
            continue
        py = python_record(cases[n], mode)
        stats.outcomes["EMITTED" if py[0] == "E" else py[1]] += 1
        if py == c:
            stats.identical += 1
        else:
            stats.divergent.append((n, f"py: {py[0]} {py[1]} {py[2][:200]!r}\n    c: {c[0]} {c[1]} {c[2][:200]!r}"))
    if keep is not None and not stats.ok():
        keep.mkdir(parents=True, exist_ok=True)
        for n, _ in stats.divergent + stats.sanitizer:
            (keep / f"case-{n:06d}.toml").write_bytes(cases[n])
    return stats


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--mode", default="spec")
    ap.add_argument("--driver", type=Path, help="a prebuilt sanitized emit_driver")
    ap.add_argument("--keep", type=Path, help="write divergent/failing cases here")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="fuzz_parser.") as tmp:
        work = Path(tmp)
        driver = args.driver or build_driver(work)
        stats = run_fuzz(args.count, args.seed, driver, work, args.mode, args.keep)
    for n, why in stats.divergent[:20]:
        print(f"DIFFER case {n}\n    {why}")
    for n, why in stats.sanitizer[:5]:
        print(f"SANITIZER case {n}: {why}")
    print(stats.summary())
    return 0 if stats.ok() else 1


if __name__ == "__main__":
    sys.exit(main())
