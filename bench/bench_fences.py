"""What workgroup fences around the barriers would cost: every emitting config's Python-engine
`ll` (llvm22), compiled for its arch (a) as emitted, (b) with
`fence syncscope("workgroup") release` before and `fence syncscope("workgroup") acquire` after
each `call void @llvm.amdgcn.s.barrier()`, and (c) with the same fences restricted to LDS
(`!mmra !{!"amdgpu-synchronize-as", !"local"}`).

    python bench/bench_fences.py [--timeout 300] [--out FILE] [ID ...]

Per arch: instructions, wait instructions (`s_waitcnt*`, `s_wait_*`, `s_wait_alu` included),
barriers (`s_barrier`, or `s_barrier_signal` on gfx12: one per barrier), cache invalidates /
write-backs, and the per-kernel deltas (median, max); the barrier check
(rocke_py/check/barriers.py) on all three; on gfx1201 how many split waits (`s_wait_*cnt*`)
follow a legacy full `s_waitcnt` directly, and how many barriers only the legacy wait drains
(LDS in flight when it is read as LLVM's wait insertion reads it: as no wait). Static counts
of the listing, not run time. One compile at a time (the LLVM child is one process). Prints a
Markdown report (docs/memory-model.md quotes it).

bench/results/fences.md was measured before the engines took the decision: (a) there is the
bare-barrier `ll` with gfx1201's legacy waits. The engines now emit (c), and (e) — split waits on
gfx1201 and the LDS-only fences everywhere — so a run today measures that as (a), and (b)/(c)
add a second pair of fences."""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rocke_py import engine  # noqa: E402
from rocke_py.check.barriers import Instr, arch_major, instructions, outstanding_lds_at_barriers  # noqa: E402
from rocke_py.check.isa import FLAVOR, select_configs, spec_value  # noqa: E402
from rocke_py.check.llvm import compile_ll  # noqa: E402
from rocke_py.engine.result import Emitted  # noqa: E402

BARRIER_CALL = "  call void @llvm.amdgcn.s.barrier()\n"
#: (b): fences at workgroup scope, every address space.
FENCED_CALL = '  fence syncscope("workgroup") release\n' + BARRIER_CALL + '  fence syncscope("workgroup") acquire\n'
#: (c): the same fences restricted to LDS by LLVM's `amdgpu-synchronize-as` MMRA.
MMRA_ID = "!900"  # clear of the engines' `!1`
LDS_ONLY_CALL = (
    f'  fence syncscope("workgroup") release, !mmra {MMRA_ID}\n'
    + BARRIER_CALL
    + f'  fence syncscope("workgroup") acquire, !mmra {MMRA_ID}\n'
)
MMRA_NODE = f'\n{MMRA_ID} = !{{!"amdgpu-synchronize-as", !"local"}}\n'
VARIANTS = ("a", "b", "c")
ARCH_ORDER = ["gfx942", "gfx950", "gfx1151", "gfx1201", "gfx1250"]
#: Cache write-back / invalidate instructions a fence may add (their cost is at run time).
CACHE_OPS = (
    "buffer_gl0_inv",
    "buffer_gl1_inv",
    "buffer_inv",
    "buffer_wbl2",
    "buffer_wbinvl1",
    "global_inv",
    "global_wb",
)


_LEGACY_WAIT = re.compile(r"^  call void @llvm\.amdgcn\.s\.waitcnt\(i32 (\d+)\)\n", re.M)
SPLIT_DECLS = {
    "loadcnt": "declare void @llvm.amdgcn.s.wait.loadcnt(i16 immarg)\n",
    "storecnt": "declare void @llvm.amdgcn.s.wait.storecnt(i16 immarg)\n",
    "dscnt": "declare void @llvm.amdgcn.s.wait.dscnt(i16 immarg)\n",
}


def split_waits(ll_text: str) -> str:
    """(d), gfx12 only: each gfx11-style `s.waitcnt(i32 V)` as the split waits gfx1250 gets
    (docs/lowering.md §5): lgkmcnt 0 -> `s.wait.dscnt(0)`, after `s.wait.loadcnt(vm)` when
    vmcnt < 63; a vmcnt-only wait -> `s.wait.loadcnt(vm)`, `s.wait.storecnt(vm)`."""
    used: set[str] = set()

    def one(m: re.Match[str]) -> str:
        value = int(m.group(1))
        vm, lgkm = (value >> 10) & 63, (value >> 4) & 63
        calls = []
        if vm < 63:
            calls.append(("loadcnt", vm))
            if lgkm == 63:
                calls.append(("storecnt", vm))
        if lgkm < 63:
            calls.append(("dscnt", lgkm))
        used.update(name for name, _ in calls)
        return "".join(f"  call void @llvm.amdgcn.s.wait.{name}(i16 {n})\n" for name, n in calls)

    text = _LEGACY_WAIT.sub(one, ll_text)
    decls = "".join(d for name, d in SPLIT_DECLS.items() if name in used and d not in text)
    return text.replace("declare void @llvm.amdgcn.s.barrier()\n", decls + "declare void @llvm.amdgcn.s.barrier()\n")


def add_fences(ll_text: str, lds_only: bool = False) -> str:
    if not lds_only:
        return ll_text.replace(BARRIER_CALL, FENCED_CALL)
    return ll_text.replace(BARRIER_CALL, LDS_ONLY_CALL) + MMRA_NODE


def is_wait(ins: Instr) -> bool:
    return ins.mnemonic.startswith(("s_waitcnt", "s_wait_"))


def is_split_wait(ins: Instr) -> bool:
    return ins.mnemonic.startswith("s_wait_") and "cnt" in ins.mnemonic


def is_legacy_full_wait(ins: Instr) -> bool:
    """A legacy `s_waitcnt` that waits for LDS to drain (lgkmcnt(0), or the bare `s_waitcnt 0`)."""
    ops = ins.operands.replace(" ", "")
    return ins.mnemonic == "s_waitcnt" and ("lgkmcnt(0)" in ops or ops in ("0", "0x0"))


@dataclass
class Listing:
    instrs: int
    waits: int
    barriers: int
    cache_ops: int
    vm_in_flight: int  # barriers right after a wait that leaves global loads in flight (vmcnt / loadcnt > 0)
    problems: int  # barriers with LDS in flight (the check-llvm failure)
    split_after_legacy: int  # split waits right after a legacy full wait
    legacy_only: int  # barriers only a legacy s_waitcnt drains


def partial_vm_wait(ins: Instr) -> bool:
    """`s_waitcnt vmcnt(N)` / `s_wait_loadcnt N` (or `_dscnt` combined) with N > 0."""
    if ins.mnemonic == "s_waitcnt":
        m = re.search(r"vmcnt\((\d+)\)", ins.operands)
        return m is not None and int(m.group(1)) > 0
    if ins.mnemonic == "s_wait_loadcnt":
        return int(ins.operands.strip(), 0) > 0
    if ins.mnemonic == "s_wait_loadcnt_dscnt":
        return (int(ins.operands.strip(), 0) >> 8) & 0x3F > 0
    return False


def at_barriers(problems: list[str]) -> int:
    """How many barriers the problems name: `s_barrier` or `s_barrier_signal` (its wait is the same barrier)."""
    return sum(re.search(r"`s_barrier(?:`| |_signal)", p) is not None for p in problems)


def measure(asm: str, arch: str) -> Listing:
    ins = instructions(asm)
    split_after = 0
    for i, cur in enumerate(ins):
        if is_legacy_full_wait(cur):
            j = i + 1
            while j < len(ins) and is_split_wait(ins[j]):
                split_after += 1
                j += 1
    vm_in_flight = sum(
        cur.mnemonic in ("s_barrier", "s_barrier_signal") and i > 0 and partial_vm_wait(ins[i - 1])
        for i, cur in enumerate(ins)
    )
    problems = at_barriers(outstanding_lds_at_barriers(asm, arch))
    legacy_blind = at_barriers(outstanding_lds_at_barriers(asm, arch, legacy_waitcnt=False))
    return Listing(
        instrs=len(ins),
        waits=sum(map(is_wait, ins)),
        barriers=sum(i.mnemonic in ("s_barrier", "s_barrier_signal") for i in ins),
        cache_ops=sum(i.mnemonic.startswith(CACHE_OPS) for i in ins),
        vm_in_flight=vm_in_flight,
        problems=problems,
        split_after_legacy=split_after,
        legacy_only=max(0, legacy_blind - problems),
    )


def fmt_delta(values: list[int]) -> str:
    """`total (median / max)` of per-kernel deltas; max is the largest in magnitude."""
    if not values:
        return "–"
    med = statistics.median(values)
    mx = max(values, key=abs)
    return f"{sum(values):+d} ({med:+g} / {mx:+d})".replace("+0 ", "0 ").replace("(+0 ", "(0 ").replace("/ +0)", "/ 0)")


def per_variant(listings: dict[str, Listing], field: str, variants: tuple[str, ...] = VARIANTS) -> str:
    return " / ".join(str(getattr(listings[v], field)) for v in variants)


def report(rows: list[tuple[str, str, dict[str, Listing]]], seconds: float, skipped: list[str]) -> str:
    archs = sorted({r[1] for r in rows}, key=lambda a: (ARCH_ORDER + [a]).index(a))
    out = [
        f"# Workgroup fences around barriers: {len(rows)} kernels compiled three ways (LLVM 22, llvmlite)",
        "",
        '(a) as emitted; (b) with `fence syncscope("workgroup") release` before and `... acquire` after',
        "each `s.barrier` call; (c) the same fences with `!mmra` `amdgpu-synchronize-as` = `local` (they",
        "order LDS only). Δ = (b) − (a) or (c) − (a) per kernel: total (median / max). Waits are",
        "`s_waitcnt*` and `s_wait_*` (gfx12's `s_wait_alu` included); cache ops are L0/L1/L2",
        "invalidates and write-backs (`buffer_gl0_inv`, `global_inv`, ...); LDS at barrier = barriers",
        "with an LDS operation in flight (rocke_py/check/barriers.py); barriers with loads in flight =",
        "barriers right after a wait that leaves global loads (`vmcnt` / `loadcnt` > 0) in flight, the",
        "async prefetch. Counts are static, of the listing.",
        "",
        "| arch | kernels | barriers | instructions (a) | Δ (b) | Δ (c) | waits (a) | Δ (b) | Δ (c) "
        "| cache ops a / b / c | barriers with loads in flight a / b / c | LDS at barrier a / b / c |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for arch in archs:
        mine = [r[2] for r in rows if r[1] == arch]

        def total(field: str, v: str) -> int:
            return sum(getattr(m[v], field) for m in mine)

        def delta(field: str, v: str) -> str:
            return fmt_delta([getattr(m[v], field) - getattr(m["a"], field) for m in mine])

        out.append(
            f"| {arch} | {len(mine)} | {total('barriers', 'a')} | {total('instrs', 'a')} "
            f"| {delta('instrs', 'b')} | {delta('instrs', 'c')} | {total('waits', 'a')} "
            f"| {delta('waits', 'b')} | {delta('waits', 'c')} "
            f"| {' / '.join(str(total('cache_ops', v)) for v in VARIANTS)} "
            f"| {' / '.join(str(total('vm_in_flight', v)) for v in VARIANTS)} "
            f"| {' / '.join(str(total('problems', v)) for v in VARIANTS)} |"
        )
    legacy = [r for r in rows if "d" in r[2]]
    if legacy:
        more = (*VARIANTS, "d", "e")
        out += [
            "",
            "gfx1201: the engines' gfx11-style waits lower to the legacy `s_waitcnt` (a full wait here,",
            "`vmcnt(0) lgkmcnt(0)`), which LLVM's wait insertion does not count as a wait. (d) replaces each",
            "with the split waits gfx1250 gets (`s.wait.loadcnt(0)`, `s.wait.dscnt(0)`), no fences; (e) is",
            "(d) with the LDS-only fences of (c). Split waits after it = `s_wait_*cnt*` directly after a",
            "legacy full wait; barriers only it drains = barriers with LDS in flight when the legacy wait",
            "is read as no wait.",
            "",
            "| kernel | barriers | instructions a / b / c / d / e | waits a / b / c / d / e "
            "| cache ops a / b / c / d / e | split waits after it a / b / c / d / e "
            "| barriers only it drains a / b / c / d / e | LDS at barrier a / b / c / d / e |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for cid, _, m in legacy:
            cells = [per_variant(m, f, more) for f in ("instrs", "waits", "cache_ops", "split_after_legacy")]
            cells += [per_variant(m, f, more) for f in ("legacy_only", "problems")]
            out.append(f"| {cid} | {m['a'].barriers} | " + " | ".join(cells) + " |")
    out += [
        "",
        "Per kernel, the kernels whose counts changed:",
        "",
        "| kernel | arch | instructions (a) | Δ (b) | Δ (c) | waits (a) | Δ (b) | Δ (c) | cache ops a / b / c "
        "| loads in flight a / b / c |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    changed = 0
    for cid, arch, m in rows:
        key = [(m[v].instrs, m[v].waits, m[v].cache_ops, m[v].vm_in_flight) for v in VARIANTS]
        if key[0] == key[1] == key[2]:
            continue
        changed += 1
        a = m["a"]
        out.append(
            f"| {cid} | {arch} | {a.instrs} | {m['b'].instrs - a.instrs:+d} | {m['c'].instrs - a.instrs:+d} "
            f"| {a.waits} | {m['b'].waits - a.waits:+d} | {m['c'].waits - a.waits:+d} | {per_variant(m, 'cache_ops')} "
            f"| {per_variant(m, 'vm_in_flight')} |"
        )
    if not changed:
        out.append("| (none) | | | | | | | | | |")
    compiles = sum(len(r[2]) for r in rows)
    out += ["", f"{len(rows)} kernels, {compiles} compiles in {seconds:.0f} s (one at a time)."]
    if skipped:
        out.append("Skipped: " + "; ".join(skipped) + ".")
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ids", nargs="*")
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--out", type=Path, help="also write the report here")
    args = ap.parse_args()

    rows: list[tuple[str, str, dict[str, Listing]]] = []
    skipped: list[str] = []
    start = time.perf_counter()
    for cfg in select_configs(ROOT, args.ids):
        spec = engine.emit(cfg.data, "spec", FLAVOR)
        ll = engine.emit(cfg.data, "ll", FLAVOR)
        if not isinstance(spec, Emitted) or not isinstance(ll, Emitted):
            skipped.append(f"{cfg.id} (does not emit)")
            continue
        arch = spec_value(spec.text, "arch") or "?"
        texts = {"a": ll.text, "b": add_fences(ll.text), "c": add_fences(ll.text, lds_only=True)}
        if arch_major(arch) >= 12 and "call void @llvm.amdgcn.s.waitcnt(" in ll.text:
            texts["d"] = split_waits(ll.text)
            texts["e"] = add_fences(texts["d"], lds_only=True)
            assert "call void @llvm.amdgcn.s.waitcnt(" not in texts["d"]
        assert texts["b"].count("fence syncscope") == 2 * ll.text.count(BARRIER_CALL)
        listings: dict[str, Listing] = {}
        for variant, text in texts.items():
            ok, asm = compile_ll(text, arch, args.timeout)
            if not ok:
                skipped.append(f"{cfg.id} (LLVM refused variant ({variant}): {asm.strip()[:120]})")
                break
            listings[variant] = measure(asm, arch)
        else:
            rows.append((cfg.id, arch, listings))
            print(f"{cfg.id} ({arch}): compiled 3 ways", file=sys.stderr)
    text = report(rows, time.perf_counter() - start, skipped)
    sys.stdout.write(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
