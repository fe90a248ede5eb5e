"""Helpers for the `ll` executor tests: small hand-written AMDGPU LLVM IR modules in the form
the engines print (docs/lowering.md §4): the datalayout and triple lines, an optional LDS
pool, one declaration per intrinsic the body calls, `define amdgpu_kernel void @t(...) #0 {`,
the blocks, and the attributes line."""

from __future__ import annotations

import re

TRIPLE = "amdgcn-amd-amdhsa"
_DL_HEAD = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32"
_DL_TAIL = (
    "-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512"
    "-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
)
#: the datalayout line of each flavor (docs/lowering.md §2)
DATALAYOUT = {
    "llvm20": _DL_HEAD + "-p8:128:128" + _DL_TAIL,
    "llvm22": _DL_HEAD + "-p8:128:128:128:48" + _DL_TAIL,
    "llvm23": "e-m:e-" + _DL_HEAD[2:] + "-p8:128:128:128:48" + _DL_TAIL,
}
#: LLVM's unquoted global-name grammar (LangRef "Identifiers"); other names are quoted
BARE_NAME = re.compile(r"[-a-zA-Z$._][-a-zA-Z$._0-9]*")


def global_ref(name: str) -> str:
    """A global's name as the engines print it (docs/lowering.md §1): bare, or quoted."""
    return f"@{name}" if BARE_NAME.fullmatch(name) else f'@"{name}"'


def pool(kernel: str = "t") -> str:
    """The LDS pool of kernel `kernel` (address 0 of the pool)."""
    return global_ref(f"smem_pool.{kernel}")


#: the LDS pool of the kit's default kernel @t
POOL = pool()
#: buffer resource word 3 of every arch but RDNA (the value does not matter to the executor)
WORD3 = 159744

#: the immarg parameters of the intrinsics (by name prefix, after `llvm.amdgcn.`)
IMMARGS = (
    ("raw.ptr.buffer.load.lds", (2, 5, 6)),
    ("raw.ptr.buffer.load.", (3,)),
    ("raw.ptr.buffer.store.", (4,)),
    ("s.wait", (0,)),
    ("s.setprio", (0,)),
    ("sched.group.barrier", (0, 1, 2)),
    ("sched.barrier", (0,)),
    ("mfma.", (3, 4, 5)),
    ("wmma.f32.16x16x32.", (0, 2, 4, 6, 7)),
    ("wmma.f32.16x16x4.", (0, 2, 4, 6, 7)),
)
CALL = re.compile(r"call (?P<ret>.+?) @(?P<name>llvm\.[A-Za-z0-9_.]+)\((?P<args>.*)\)\s*$")


def split_type(text: str) -> tuple[str, str]:
    """(type, rest) of `<type> <value>`: a vector or array type up to its closing bracket, a
    pointer with its address space, else the first word."""
    text = text.strip()
    if text[0] in "<[":
        depth = 0
        for i, c in enumerate(text):
            depth += c in "<["
            depth -= c in ">]"
            if depth == 0:
                return text[: i + 1], text[i + 1 :].strip()
    m = re.match(r"ptr(?: addrspace\(\d+\))?|\S+", text)
    assert m is not None
    return m.group(), text[m.end() :].strip()


def split_args(text: str) -> list[str]:
    """The call's arguments, split at the commas outside brackets."""
    out, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += c in "<[("
        depth -= c in ">])"
        if c == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    if text.strip():
        out.append(text[start:])
    return out


def declaration(line: str) -> tuple[str, str] | None:
    """(name, `declare …` line) of the intrinsic a body line calls, or None."""
    m = CALL.search(line)
    if m is None:
        return None
    name = m.group("name")
    short = name[len("llvm.amdgcn.") :] if name.startswith("llvm.amdgcn.") else ""
    imm = next((idx for prefix, idx in IMMARGS if short.startswith(prefix)), ())
    types = [split_type(a)[0] for a in split_args(m.group("args"))]
    params = ", ".join(t + (" immarg" if i in imm else "") for i, t in enumerate(types))
    return name, f"declare {m.group('ret')} @{name}({params})"


def gptr(name: str, *, readonly: bool = False, flavor: str = "llvm22") -> str:
    """A global pointer param as the engines print it."""
    capture = "nocapture" if flavor == "llvm20" else "captures(none)"
    return f"ptr addrspace(1) noalias {'readonly ' if readonly else ''}{capture} %{name}"


def rsrc(result: str, buffer: str, flavor: str = "llvm22", nbytes: str = "") -> list[str]:
    """The lines making a buffer resource over the pointer param `buffer` (nbytes: an i32
    value, default `%<buffer>_bytes`): llvm22/23 `.p8.p1` with an i64 count, llvm20 `.p1`."""
    n = nbytes or f"%{buffer}_bytes"
    if flavor == "llvm20":
        return [
            f"{result} = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p1("
            f"ptr addrspace(1) %{buffer}, i16 0, i32 {n}, i32 {WORD3})"
        ]
    wide = f"%nb64{result[1:]}"
    return [
        f"{wide} = zext i32 {n} to i64",
        f"{result} = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1("
        f"ptr addrspace(1) %{buffer}, i16 0, i64 {wide}, i32 {WORD3})",
    ]


def is_label(line: str) -> bool:
    return line.endswith(":") and " " not in line


def module(
    params: list[str],
    body: list[str],
    *,
    block: int = 64,
    lds: int = 0,
    flavor: str = "llvm22",
    name: str = "t",
) -> str:
    """A module of one kernel `@<name>(params)`: body lines are instructions (indented here)
    and block labels (`label:`); `entry:` is added when the body does not start with a label,
    and `ret void` when it does not end with a terminator. lds > 0 adds the pool pool(name) of
    that many bytes; the attributes line allows workgroups of up to `block` threads."""
    body = list(body)
    if not body or not is_label(body[0]):
        body.insert(0, "entry:")
    if not body[-1].startswith(("br ", "ret ")):
        body.append("ret void")
    decls: dict[str, str] = {}
    for line in body:
        found = declaration(line)
        if found is not None:
            decls.setdefault(*found)
    lines = [f'target datalayout = "{DATALAYOUT[flavor]}"', f'target triple = "{TRIPLE}"', ""]
    if lds:
        lines += [f"{pool(name)} = internal unnamed_addr addrspace(3) global [{lds} x i8] poison, align 16", ""]
    if decls:
        lines += [*decls.values(), ""]
    lines.append(f"define amdgpu_kernel void {global_ref(name)}({', '.join(params)}) #0 {{")
    lines += [line if is_label(line) else "  " + line for line in body]
    lines += [
        "}",
        "",
        'attributes #0 = { "uniform-work-group-size"="true" '
        f'"amdgpu-flat-work-group-size"="64,{block}" norecurse nounwind }}',
    ]
    if any(" atomicrmw " in line for line in body):
        lines += ["", "!1 = !{}"]
    return "\n".join(lines) + "\n"
