"""`rocke-parity check-llvm`: compile every emitting config's `ll` (llvm22) with a real LLVM
for its arch and check the assembly against the config's `isa` list and its LDS layout.

Byte identity proves the engines agree; this proves what they agree on is a kernel LLVM 22
accepts and selects as intended: every instruction the config's `isa` names is present, a
K-outer kernel contains its transpose read, an M-outer kernel contains none, and no barrier
leaves an LDS operation of the wave in flight (rocke_py/check/barriers.py). The summary adds
a note with the fence lint: barriers that order LDS with no workgroup fence
(docs/memory-model.md)."""

from __future__ import annotations

import concurrent.futures
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from rocke_py.check.barriers import FenceLint, fence_lint, outstanding_lds_at_barriers
from rocke_py.parity.inputs.configs import CONFIG_DIR, Config, discover, resolve_id
from rocke_py.parity.judge import known_gaps
from rocke_py.parity.judge.known_gaps import KnownGaps

TRANSPOSE_READS = ("ds_read_b64_tr_b16", "ds_load_tr16_b128")
TRANSPOSE_BY_ARCH = {"gfx950": "ds_read_b64_tr_b16", "gfx1250": "ds_load_tr16_b128"}
FLAVOR = "llvm22"


@dataclass(frozen=True)
class CheckResult:
    config: str
    arch: str
    ok: bool
    detail: str
    skipped: bool = False  # nothing to compile: a negative config, or a known gap listed with this rejection
    fences: FenceLint | None = None  # the fence lint of the emitted module, when it compiled


def spec_value(spec_text: str, key: str) -> str | None:
    prefix = f"{key} = "
    for line in spec_text.splitlines():
        if line.startswith(prefix):
            return line[len(prefix) :]
    return None


def mnemonics(asm: str) -> set[str]:
    """The instruction mnemonics of an assembly listing (first word of each instruction line)."""
    return set(histogram(asm))


def has_instruction(asm: str, token: str) -> bool:
    """`mnemonic`, or `mnemonic+word`: an instruction with that mnemonic whose operands or
    modifiers include word (e.g. `buffer_load_dwordx4+lds`, the direct-to-LDS form)."""
    mnemonic, _, modifier = token.partition("+")
    for line in asm.splitlines():
        words = line.replace(",", " ").split()
        if words and words[0] == mnemonic and (not modifier or modifier in words[1:]):
            return True
    return False


def histogram(asm: str) -> dict[str, int]:
    """How many times each instruction mnemonic occurs in an assembly listing."""
    counts: dict[str, int] = {}
    for line in asm.splitlines():
        word = line.strip().split(maxsplit=1)[0] if line.strip() else ""
        if re.fullmatch(r"[a-z][a-z0-9_]*", word):
            counts[word] = counts.get(word, 0) + 1
    return counts


#: The instruction kinds an isa list names, one mnemonic each (the widest where there are
#: several): what a kernel's shape decides — its MMA atom, transpose read, global loads, LDS
#: writes and reads, and how it stores D.
ISA_KINDS = (
    ("mma", re.compile(r"v_(mfma|wmma)_\w+")),
    ("transpose read", re.compile(r"ds_(read_b64_tr_b16|load_tr16_b128)")),
    ("global load", re.compile(r"(buffer|global)_load_\w+")),
    ("LDS write", re.compile(r"ds_(write|store)\w*")),
    ("LDS read", re.compile(r"ds_(read|load)_b\d+")),
    ("atomic", re.compile(r"(global|buffer)_atomic_\w+")),
    ("store", re.compile(r"(buffer|global)_store_\w+")),
)


def access_bits(mnemonic: str) -> int:
    """The width an access mnemonic moves, in bits (0 where it names none)."""
    m = re.search(r"dwordx(\d)", mnemonic)
    if m:
        return 32 * int(m.group(1))
    for word, bits in (("dword", 32), ("short", 16), ("byte", 8)):
        if word in mnemonic:
            return bits
    m = re.search(r"_b(\d+)", mnemonic)
    return int(m.group(1)) if m else 0


def propose_isa(asm: str) -> str:
    """An isa list for a compiled kernel: for each kind in ISA_KINDS that the kernel has, its
    widest mnemonic (ties: the most frequent); the direct-to-LDS load form as `+lds`."""
    counts = histogram(asm)
    out = []
    for _, pattern in ISA_KINDS:
        found = [m for m in counts if pattern.fullmatch(m) and m not in out]
        if found:
            out.append(max(found, key=lambda m: (access_bits(m), -len(m), counts[m], m)))
    lds_loads = [m for m in counts if m.startswith("buffer_load_") and has_instruction(asm, m + "+lds")]
    if lds_loads:
        out.append(max(lds_loads, key=access_bits) + "+lds")
    return " ".join(out)


def check_asm(cfg_isa: str | None, arch: str, k_outer: bool, asm: str) -> list[str]:
    """The problems of one kernel's assembly; empty when it passes."""
    have = mnemonics(asm)
    problems = [f"missing {token}" for token in (cfg_isa or "").split() if not has_instruction(asm, token)]
    if k_outer:
        want = TRANSPOSE_BY_ARCH.get(arch)
        if want is None or want not in have:
            problems.append(f"K-outer kernel without its transpose read ({want})")
    else:
        stray = [name for name in TRANSPOSE_READS if name in have]
        if stray:
            problems.append(f"M-outer kernel contains a transpose read ({', '.join(stray)})")
    at_barriers = outstanding_lds_at_barriers(asm, arch)
    problems += [f"LDS in flight at a barrier: {p}" for p in at_barriers[:3]]
    if len(at_barriers) > 3:
        problems.append(f"LDS in flight at {len(at_barriers) - 3} more barrier(s)")
    return problems


def check_config(cfg: Config, timeout: float, gaps: KnownGaps | None = None) -> CheckResult:
    from rocke_py import engine
    from rocke_py.check.llvm import compile_ll
    from rocke_py.engine.result import Emitted

    if not cfg.expect.emits:
        return CheckResult(cfg.id, "?", True, f"negative config (expects {cfg.expect}): no kernel to compile", True)
    spec = engine.emit(cfg.data, "spec", FLAVOR)
    if not isinstance(spec, Emitted):
        return CheckResult(cfg.id, "?", False, f"mode spec rejected it: {spec.code}")
    arch = spec_value(spec.text, "arch") or "?"
    ll = engine.emit(cfg.data, "ll", FLAVOR)
    if not isinstance(ll, Emitted):
        gap = gaps.lookup(cfg.id, "ll", FLAVOR) if gaps else None
        if gap is not None and gap.code == ll.code:
            return CheckResult(cfg.id, arch, True, f"known gap ({gap.reason})", skipped=True)
        return CheckResult(cfg.id, arch, False, f"mode ll rejected it: {ll.code}: {ll.message}")
    ok, out = compile_ll(ll.text, arch, timeout)
    if not ok:
        return CheckResult(cfg.id, arch, False, f"LLVM refused it: {out.strip()[:600]}")
    problems = check_asm(cfg.isa, arch, spec_value(spec.text, "lds_k_outer") == "true", out)
    if not cfg.isa:
        problems.insert(0, f'no isa list: add [parity] isa = "{propose_isa(out)}" (what this kernel contains)')
    lint = fence_lint(ll.text)
    if problems:
        return CheckResult(cfg.id, arch, False, "; ".join(problems), fences=lint)
    return CheckResult(cfg.id, arch, True, f"compiled; isa: {cfg.isa}", fences=lint)


def compiled_asm(cfg: Config, timeout: float) -> tuple[str, str | None]:
    """(arch, assembly) of an emitting config's ll (llvm22); (arch, None) when it does not
    compile. The arch is "?" when mode spec rejects the config."""
    return compiled_asm_of(cfg.data, timeout)


def compiled_asm_of(data: bytes, timeout: float) -> tuple[str, str | None]:
    from rocke_py import engine
    from rocke_py.check.llvm import compile_ll
    from rocke_py.engine.result import Emitted

    spec = engine.emit(data, "spec", FLAVOR)
    arch = spec_value(spec.text, "arch") or "?" if isinstance(spec, Emitted) else "?"
    ll = engine.emit(data, "ll", FLAVOR)
    if not isinstance(ll, Emitted):
        return arch, None
    ok, out = compile_ll(ll.text, arch, timeout)
    return arch, out if ok else None


def suggested_isa(data: bytes, timeout: float) -> str | None:
    """The isa list a config's compiled kernel suggests (propose_isa); None without llvmlite
    or when the kernel does not compile."""
    if llvmlite_missing():
        return None
    _, asm = compiled_asm_of(data, timeout)
    return propose_isa(asm) if asm else None


def run_histogram(root: Path, ids: list[str], timeout: float, out: TextIO = sys.stdout) -> int:
    """`check-llvm --histogram`: each selected emitting config's instruction counts, most
    frequent first, and the isa list its kernel suggests."""
    configs = [c for c in select_configs(root, ids) if c.expect.emits]
    if configs and llvmlite_missing():
        print(f"rocke-parity check-llvm: {INSTALL_HINT}", file=sys.stderr)
        return EXIT_SETUP
    failed = 0
    for cfg in configs:
        arch, asm = compiled_asm(cfg, timeout)
        if asm is None:
            print(f"{cfg.id} ({arch}): no kernel compiled (run rocke-parity check-llvm {cfg.id})", file=out)
            failed += 1
            continue
        counts = histogram(asm)
        print(f"{cfg.id} ({arch}): {sum(counts.values())} instruction(s), {len(counts)} distinct", file=out)
        for name, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
            print(f"  {n:6d}  {name}", file=out)
        print(
            f'  suggested isa = "{propose_isa(asm)}"' + (f' (the config has "{cfg.isa}")' if cfg.isa else ""), file=out
        )
    return 1 if failed else 0


def select_configs(root: Path, ids: list[str]) -> list[Config]:
    disc = discover(root)
    if not ids:
        return [c for c in disc.configs if c.expect.emits]
    chosen = []
    for ref in ids:
        cfg = resolve_id(disc, ref)
        if cfg is None:
            raise ValueError(f"no config {ref!r}")
        chosen.append(cfg)
    return chosen


#: What to say, once, when the interpreter has no llvmlite (exit 2: a setup error, not a failed kernel).
INSTALL_HINT = (
    "needs llvmlite 0.50 (LLVM 22) in this interpreter: pip install 'llvmlite==0.50.0' (or pip install -e '.[test]')"
)
EXIT_SETUP = 2


def llvmlite_missing() -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec("llvmlite") is None
    except (ImportError, ValueError):
        return True


def run_check_llvm(root: Path, ids: list[str], jobs: int | None, timeout: float, out: TextIO = sys.stdout) -> int:
    configs = select_configs(root, ids)
    if any(c.expect.emits for c in configs) and llvmlite_missing():
        print(f"rocke-parity check-llvm: {INSTALL_HINT}", file=sys.stderr)
        return EXIT_SETUP
    gaps = known_gaps.load(root / CONFIG_DIR / known_gaps.FILE_NAME, {c.id for c in discover(root).configs})
    workers = jobs or os.cpu_count() or 1
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(lambda c: check_config(c, timeout, gaps), configs))
    for r in results:
        word = "SKIP" if r.skipped else ("PASS" if r.ok else "FAIL")
        arch = f" ({r.arch})" if r.arch != "?" else ""
        print(f"{word} {r.config}{arch}: {r.detail}", file=out)
    failed = [r for r in results if not r.ok]
    skipped = [r for r in results if r.skipped]
    archs = sorted({r.arch for r in results if not r.skipped})
    negative = sum(r.skipped and r.detail.startswith("negative config") for r in results)
    print(
        f"check-llvm: {len(results) - len(failed) - len(skipped)} of {len(results)} config(s) passed on "
        f"{', '.join(archs) or 'no arch'}; {len(skipped) - negative} known gap(s) skipped; "
        + (f"{negative} negative config(s) skipped; " if negative else "")
        + f"{len(failed)} failed",
        file=out,
    )
    linted = [r.fences for r in results if r.fences is not None]
    if linted:
        bare = sum(lint.message is not None for lint in linted)
        print(
            f"check-llvm: note: fence lint: {bare} of {len(linted)} compiled kernel(s) order LDS with bare "
            f"barriers ({sum(lint.bare for lint in linted)} of {sum(lint.barriers for lint in linted)} barrier(s) "
            "without fences, "
            f"{sum(lint.fences for lint in linted)} workgroup fence(s)); not a failure, see docs/memory-model.md",
            file=out,
        )
    return 1 if failed else 0
