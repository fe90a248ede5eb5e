"""The floating-point formats as NumPy holds them: f16 natively, bf16 as its uint16 bit
pattern, rounding to nearest even (docs/ir.md §4.1 arith.fptrunc)."""

from __future__ import annotations

import numpy as np


def bf16_bits(values: np.ndarray) -> np.ndarray:
    """float32 (or anything NumPy casts to it) -> bf16 bits, round to nearest even; NaN stays
    a (quiet) NaN."""
    u = np.asarray(values, dtype=np.float32).view(np.uint32)
    rounded = ((u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)).astype(np.uint16)
    nan = (u & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
    if nan.any():
        quiet = ((u >> np.uint32(16)) | np.uint32(0x40)).astype(np.uint16)
        rounded = np.where(nan, quiet, rounded)
    return rounded


def bf16_to_f32(bits: np.ndarray) -> np.ndarray:
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)


def to_f64(values: np.ndarray, elem: str) -> np.ndarray:
    """Register values of element type elem (f16, bf16 bits, f32) as float64, exactly."""
    if elem == "bf16":
        return bf16_to_f32(values).astype(np.float64)
    return np.asarray(values).astype(np.float64)


def round_to(values: np.ndarray, elem: str) -> np.ndarray:
    """float32 or float64 values rounded to elem, in its register form. float64 -> bf16 goes
    through float32: it rounds twice only when the value is not exact in float32 and lands
    on a bf16 midpoint there (never for the small-integer inputs of the checks)."""
    if elem == "bf16":
        return bf16_bits(np.asarray(values).astype(np.float32))
    return np.asarray(values).astype(np.float16 if elem == "f16" else np.float32)
