"""The lockstep checksum with the lanes' checksum kept (LanesCrc) is the one computed whole."""

from __future__ import annotations

import numpy as np
import pytest

from rocke_py.numerics.lockstep import LanesCrc, digest


def test_a_kept_lanes_checksum_gives_the_same_digest() -> None:
    crc = LanesCrc()
    lanes = np.arange(256)
    other = np.nonzero(np.arange(256) % 3 == 0)[0]
    values = np.linspace(0, 1, 256 * 4, dtype=np.float32).reshape(256, 4)
    for x in (lanes, lanes, other, other, lanes):  # misses, hits, and a miss after a hit
        v = values[: x.size]
        assert digest(x, v, crc(x)) == digest(x, v)
    assert digest(other, values[: other.size], crc(other)) != digest(lanes, values[: other.size].copy())


def test_a_kept_lanes_array_changed_in_place_raises_not_a_stale_checksum() -> None:
    crc = LanesCrc()
    lanes = np.arange(64)
    crc(lanes)
    with pytest.raises(ValueError, match="read-only"):
        lanes[0] = 7  # the kept checksum would no longer be the lanes'
