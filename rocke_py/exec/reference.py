"""Float64 NumPy convolutions to check executed kernels against (docs/reference/conv-semantics.md
§1, §2): fwd Y, wgrad dW, dgrad dX, channels-last, grouped, strided, dilated, padded, 2-D or 3-D.

Layouts: X (N, [Di,] Hi, Wi, C), W (K, [Z,] Y, X, C/groups), Y (N, [Do,] Ho, Wo, K); every
spatial parameter is a tuple with one entry per spatial axis (depth first)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Conv:
    n: int
    c: int
    k: int
    size_in: tuple[int, ...]  # ([Di,] Hi, Wi)
    filt: tuple[int, ...]  # ([Z,] Y, X)
    stride: tuple[int, ...]
    pad: tuple[int, ...]
    dil: tuple[int, ...]
    groups: int = 1

    @property
    def size_out(self) -> tuple[int, ...]:
        return tuple(
            (i + 2 * p - d * (f - 1) - 1) // s + 1
            for i, f, s, p, d in zip(self.size_in, self.filt, self.stride, self.pad, self.dil)
        )

    @property
    def cpg(self) -> int:
        return self.c // self.groups

    @property
    def kpg(self) -> int:
        return self.k // self.groups

    def x_shape(self) -> tuple[int, ...]:
        return (self.n, *self.size_in, self.c)

    def w_shape(self) -> tuple[int, ...]:
        return (self.k, *self.filt, self.cpg)

    def y_shape(self) -> tuple[int, ...]:
        return (self.n, *self.size_out, self.k)


def tap_window(conv: Conv, tap: tuple[int, ...]) -> tuple[slice, ...]:
    """The slices of the padded input that output positions read at filter tap `tap`."""
    return tuple(
        slice(t * d, t * d + s * (o - 1) + 1, s) for t, d, s, o in zip(tap, conv.dil, conv.stride, conv.size_out)
    )


def padded(conv: Conv, x: np.ndarray) -> np.ndarray:
    widths = [(0, 0)] + [(p, p) for p in conv.pad] + [(0, 0)]
    return np.pad(x.astype(np.float64), widths)


def grouped(a: np.ndarray, groups: int) -> np.ndarray:
    """(..., C) -> (..., groups, C/groups)."""
    return a.reshape(a.shape[:-1] + (groups, a.shape[-1] // groups))


def conv_fwd(conv: Conv, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    xp = padded(conv, x)
    wg = w.astype(np.float64).reshape((conv.groups, conv.kpg) + w.shape[1:])
    y = np.zeros(conv.y_shape()[:-1] + (conv.groups, conv.kpg))
    fast = exact_sums(xp, wg, conv.cpg * int(np.prod(conv.filt)))
    for tap in itertools.product(*[range(f) for f in conv.filt]):
        window = grouped(xp[(slice(None),) + tap_window(conv, tap)], conv.groups)
        taps = wg[(slice(None), slice(None)) + tap]
        if fast:
            y += grouped_matmul(window, np.swapaxes(taps, 1, 2))
        else:
            y += np.einsum("...gc,gkc->...gk", window, taps)
    return y.reshape(conv.y_shape())


def conv_wgrad(conv: Conv, x: np.ndarray, dy: np.ndarray) -> np.ndarray:
    xp = padded(conv, x)
    dyg = grouped(dy.astype(np.float64), conv.groups)
    dw = np.zeros((conv.groups, conv.kpg) + conv.filt + (conv.cpg,))
    spatial = "".join("dhw"[3 - len(conv.filt) :])
    fast = exact_sums(xp, dyg, conv.n * int(np.prod(conv.size_out)))
    rows = (-1, conv.groups)
    dy_rows = np.ascontiguousarray(np.moveaxis(dyg.reshape(rows + (conv.kpg,)), 1, 0)) if fast else dyg
    for tap in itertools.product(*[range(f) for f in conv.filt]):
        window = grouped(xp[(slice(None),) + tap_window(conv, tap)], conv.groups)
        at = (slice(None), slice(None)) + tap
        if fast:  # per group: dY rows (M, k) transposed @ window rows (M, c)
            x_rows = np.moveaxis(window.reshape(rows + (conv.cpg,)), 1, 0)
            dw[at] = np.matmul(np.swapaxes(dy_rows, 1, 2), x_rows) + 0.0  # -0 as np.einsum: +0
        else:
            dw[at] = np.einsum(f"n{spatial}gk,n{spatial}gc->gkc", dyg, window)
    return dw.reshape(conv.w_shape())


def conv_dgrad(conv: Conv, dy: np.ndarray, w: np.ndarray) -> np.ndarray:
    dyg = grouped(dy.astype(np.float64), conv.groups)
    wg = w.astype(np.float64).reshape((conv.groups, conv.kpg) + w.shape[1:])
    size_pad = tuple(i + 2 * p for i, p in zip(conv.size_in, conv.pad))
    dxp = np.zeros((conv.n,) + size_pad + (conv.groups, conv.cpg))
    fast = exact_sums(dyg, wg, conv.kpg * int(np.prod(conv.filt)))
    for tap in itertools.product(*[range(f) for f in conv.filt]):
        window = (slice(None),) + tap_window(conv, tap)
        taps = wg[(slice(None), slice(None)) + tap]
        if fast:
            dxp[window] += grouped_matmul(dyg, taps)
        else:
            dxp[window] += np.einsum("...gk,gkc->...gc", dyg, taps)
    inner = (slice(None),) + tuple(slice(p, p + i) for p, i in zip(conv.pad, conv.size_in))
    return dxp[inner].reshape(conv.x_shape())


def grouped_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(..., g, i) @ (g, i, j) -> (..., g, j): one matrix product per group."""
    lead, groups = a.shape[:-2], a.shape[-2]
    rows = np.moveaxis(a.reshape(-1, groups, a.shape[-1]), 1, 0)  # (g, M, i)
    out = np.matmul(rows, b)  # (g, M, j)
    return np.moveaxis(out, 0, 1).reshape(lead + (groups, b.shape[-1]))


def exact_sums(a: np.ndarray, b: np.ndarray, terms: int) -> bool:
    """Whether every partial sum of up to `terms` products of a and b is an integer below
    2^53, so exact in float64 whatever the order of the additions: then np.matmul (BLAS)
    gives the very values np.einsum's own loop gives, many times faster. Any other input
    (real values) keeps np.einsum and its order."""
    bound = 1.0
    for x in (a, b):
        if x.size == 0:
            return False
        top = float(np.abs(x).max())
        if not np.isfinite(top) or not np.array_equal(x, np.trunc(x)):
            return False
        bound *= top
    return bound * terms < 2.0**53
