"""The cache of compiled kernels (rocke_py.check.llvm): a hit only for exactly the same input.

A cached assembly stands in for an LLVM run, so its key must hold everything the child's answer
depends on — the text, the arch, the optimisation level, llvmlite's version, the child's own
code — and nothing but a success may be kept. Each test here breaks one of those and sees the
cache miss (a child runs) or refuse."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocke_py.check import llvm

needs_llvm = pytest.mark.skipif(llvm._llvmlite_version() is None, reason="llvmlite is not installed")

TINY = (
    'target triple = "amdgcn-amd-amdhsa"\n\ndeclare void @llvm.amdgcn.s.waitcnt(i32 immarg)\n\n'
    "define amdgpu_kernel void @k() {\nentry:\n  call void @llvm.amdgcn.s.waitcnt(i32 112)\n  ret void\n}\n"
)


@pytest.fixture
def children(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[tuple[str, str, int]]:
    """A cache of this test's own, and the list of (text, arch, opt) a child compiled."""
    monkeypatch.setenv("ROCKE_PARITY_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("ROCKE_PARITY_LLVM_CACHE", raising=False)
    seen: list[tuple[str, str, int]] = []
    real = llvm._compile_in_child

    def counted(text: str, arch: str, timeout: float, opt: int) -> tuple[bool, str]:
        seen.append((text, arch, opt))
        return real(text, arch, timeout, opt)

    monkeypatch.setattr(llvm, "_compile_in_child", counted)
    return seen


@needs_llvm
def test_the_same_input_is_compiled_once(children) -> None:
    first = llvm.compile_ll(TINY, "gfx942")
    again = llvm.compile_ll(TINY, "gfx942")
    assert first == again and first[0] and "s_waitcnt" in first[1]
    assert len(children) == 1


@needs_llvm
@pytest.mark.parametrize(
    "other",
    [
        pytest.param((TINY, "gfx950", 3), id="arch"),
        pytest.param((TINY, "gfx942", 2), id="opt"),
        pytest.param((TINY.replace("i32 112", "i32 113"), "gfx942", 3), id="text"),
    ],
)
def test_another_input_is_compiled_again(children, other: tuple[str, str, int]) -> None:
    llvm.compile_ll(TINY, "gfx942")
    text, arch, opt = other
    ok, asm = llvm.compile_ll(text, arch, opt=opt)
    assert ok and len(children) == 2
    assert llvm.cache_entry(text, arch, opt) != llvm.cache_entry(TINY, "gfx942", 3)


def test_another_llvmlite_or_child_code_is_another_entry(
    children, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    before = llvm.cache_entry(TINY, "gfx942", 3)
    monkeypatch.setattr(llvm, "_llvmlite_version", lambda: "0.0.1")
    assert llvm.cache_entry(TINY, "gfx942", 3) not in (before, None)
    monkeypatch.undo()
    monkeypatch.setenv("ROCKE_PARITY_CACHE", str(tmp_path / "cache"))
    edited = tmp_path / "llvm.py"
    edited.write_bytes(Path(llvm.__file__).read_bytes() + b"\n# the child's code changed\n")
    monkeypatch.setattr(llvm, "__file__", str(edited))
    assert llvm.cache_entry(TINY, "gfx942", 3) not in (before, None)


@needs_llvm
def test_a_failure_is_not_kept(children) -> None:
    bad = TINY.replace("ret void", "ret i32 0")
    assert not llvm.compile_ll(bad, "gfx942")[0]
    assert not llvm.compile_ll(bad, "gfx942")[0]
    assert len(children) == 2
    entry = llvm.cache_entry(bad, "gfx942", 3)
    assert entry is not None and not entry.exists()


@needs_llvm
def test_an_unreadable_entry_is_compiled_again(children) -> None:
    good = llvm.compile_ll(TINY, "gfx942")
    entry = llvm.cache_entry(TINY, "gfx942", 3)
    assert entry is not None
    entry.write_bytes(b"not gzip")
    assert llvm.compile_ll(TINY, "gfx942") == good
    assert len(children) == 2
    assert llvm.compile_ll(TINY, "gfx942") == good and len(children) == 2  # written again


@needs_llvm
def test_the_cache_can_be_turned_off(children, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROCKE_PARITY_LLVM_CACHE", "0")
    assert llvm.cache_entry(TINY, "gfx942", 3) is None
    llvm.compile_ll(TINY, "gfx942")
    llvm.compile_ll(TINY, "gfx942")
    assert len(children) == 2
