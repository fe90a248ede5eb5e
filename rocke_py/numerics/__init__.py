"""`rocke-parity numerics`: run emitted kernels on the CPU executor (rocke_py/exec) and compare
them with float64 NumPy convolutions (docs/numerics.md)."""

from .fuzzcheck import fuzz_check

__all__ = ["fuzz_check"]
