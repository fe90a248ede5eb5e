"""The executor's memories: global buffers (byte arrays, with a shadow of the bytes stored
non-atomically) and the LDS of the workgroups of one chunk (2-byte granules, poisoned, with
the shadows the hazard checks need). docs/executor.md §3."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .fp import round_to, to_f64
from .types import BYTES, DTYPES

POISON = 0xFFFF  # a NaN in f16, bf16 and (as a pair) f32: an unwritten LDS element shows
LDS_ALIGN = 16


class Buffer:
    """One pointer param's memory: the caller's array as bytes (padded, so that typed views
    and wide reads past the end need no special case)."""

    def __init__(self, name: str, array: np.ndarray, elem: str, track_writes: bool) -> None:
        array = np.ascontiguousarray(array)
        self.name = name
        self.elem = elem
        self.shape = array.shape
        self.dtype = array.dtype
        self.size = array.nbytes
        self.data = np.zeros((self.size + 2 * LDS_ALIGN) // LDS_ALIGN * LDS_ALIGN, dtype=np.uint8)
        self.data[: self.size] = array.reshape(-1).view(np.uint8)
        # per byte, 0 or the serial of the non-atomic store that wrote it
        self.written = np.zeros(self.data.size, dtype=np.int64) if track_writes else None
        self.serial = 1

    def result(self) -> np.ndarray:
        return self.data[: self.size].view(self.dtype).reshape(self.shape).copy()

    def gather(self, off: np.ndarray, limit: np.ndarray, width: int) -> np.ndarray:
        """(L, width) bytes at byte offsets off (int64, per lane); bytes outside [0, limit) read 0."""
        addr = off[:, None] + np.arange(width, dtype=np.int64)
        inside = (addr >= 0) & (addr < limit[:, None])
        if inside.all():
            return np.take(self.data, addr)
        out = np.take(self.data, np.where(inside, addr, 0))
        out[~inside] = 0
        return out

    def scatter(self, off: np.ndarray, limit: np.ndarray, data: np.ndarray) -> np.ndarray:
        """Stores (L, width) bytes at off; bytes outside [0, limit) are dropped. Returns, per
        lane, whether it wrote a byte already written by a non-atomic store."""
        width = data.shape[1]
        addr = off[:, None] + np.arange(width, dtype=np.int64)
        inside = (addr >= 0) & (addr < limit[:, None])
        flat, values = addr[inside], data[inside]
        self.data[flat] = values
        rewrote = np.zeros(off.shape[0], dtype=bool)
        if self.written is not None and flat.size:
            # each stored byte gets a serial of its own; reading one back that is not ours
            # means another lane of this store wrote it too (np.add.at would be far slower)
            serial = self.serial + np.arange(flat.size, dtype=np.int64)
            again = self.written[flat] != 0
            self.written[flat] = serial
            again |= self.written[flat] != serial
            self.serial += flat.size
            if again.any():
                lane_of = np.nonzero(inside)[0]
                rewrote[lane_of[again]] = True
        return rewrote

    def atomic_add(self, index: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Adds values (L, n) of the buffer's element type at element index..index+n-1, one
        rounding per add, in lane order. Returns the lanes outside the buffer (dropped)."""
        eb = BYTES[self.elem]
        n = values.shape[1]
        outside = (index < 0) | ((index + n) * eb > self.size)
        idx = (index[~outside][:, None] + np.arange(n)).reshape(-1)
        vals = to_f64(values[~outside], self.elem).reshape(-1)
        view = self.data.view(DTYPES[self.elem])
        if self.elem == "f32":
            np.add.at(view, idx, vals.astype(np.float32))
            return outside
        order = np.argsort(idx, kind="stable")
        sorted_idx = idx[order]
        starts = np.ones(sorted_idx.size, dtype=bool)
        starts[1:] = sorted_idx[1:] != sorted_idx[:-1]
        positions = np.arange(sorted_idx.size)
        rank = positions - np.maximum.accumulate(np.where(starts, positions, 0))
        for r in range(int(rank.max(initial=-1)) + 1):  # the adds to one element, one at a time
            pick = order[rank == r]
            at = idx[pick]
            view[at] = round_to(to_f64(view[at], self.elem) + vals[pick], self.elem)
        return outside


@dataclass(frozen=True)
class Alloc:
    """One tile.smem_alloc: its byte address in the pool and its shape."""

    name: str
    base: int
    rows: int
    cols: int
    elem: str

    @property
    def nbytes(self) -> int:
        return self.rows * self.cols * BYTES[self.elem]


class Lds:
    """The LDS pools of a chunk's workgroups, one row of granules per workgroup. Shadows (when
    tracked), as stamps epoch·64 + wave (epoch: the workgroup's barrier interval): the last
    write (-1: never written); the last read, and the last interval in which two waves read;
    and the async writes still in flight."""

    def __init__(self, workgroups: int, pool_bytes: int, track: bool) -> None:
        self.granules = max(pool_bytes // 2, 1)
        size = workgroups * self.granules
        self.data = np.full(size, POISON, dtype=np.uint16)
        self.epoch = np.zeros(workgroups, dtype=np.int32)
        self.track = track
        self.in_flight = 0  # granules with an async write pending (none: no check)
        if track:
            self.written = np.full(size, -1, dtype=np.int32)
            self.read_by = np.full(size, -1, dtype=np.int32)
            self.read_twice = np.full(size, -1, dtype=np.int32)
            self.pending = np.zeros(size, dtype=np.int16)

    def granule_index(self, wg: np.ndarray, byte: np.ndarray, count: int) -> np.ndarray:
        """(L, count) flat granules from byte addresses (even) in each lane's workgroup pool."""
        first = wg * self.granules + byte // 2
        return first[:, None] + np.arange(count, dtype=np.int64)

    def stamps(self, wg: np.ndarray, wave: np.ndarray) -> np.ndarray:
        return (self.epoch[wg] * 64 + wave).astype(np.int32)

    def read(self, gi: np.ndarray, wg: np.ndarray, wave: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """The granules gi (L, c) read by lanes of waves `wave` (in their workgroup); with
        tracking, per lane: never written, written by another wave in this interval, in flight."""
        data = np.take(self.data, gi)
        if not self.track:
            return data, {}
        stamp = self.stamps(wg, wave)[:, None]
        w = np.take(self.written, gi)
        uninit = w < 0
        race = (w >> 6 == stamp >> 6) & (w != stamp)
        found = {}
        if (uninit | race).any():  # one reduction on the common path
            found = {"lds-uninit": uninit.any(axis=1), "lds-race": race.any(axis=1)}
        if self.in_flight:
            found["async-early"] = (np.take(self.pending, gi) > 0).any(axis=1)
        flat = gi.reshape(-1)
        mine = np.broadcast_to(stamp, gi.shape).reshape(-1)
        before = np.take(self.read_by, flat)
        twice = (before >> 6 == mine >> 6) & (before != mine)
        self.read_by[flat] = mine
        twice |= np.take(self.read_by, flat) != mine  # another wave's lane read it in this op
        if twice.any():
            self.read_twice[flat[twice]] = mine[twice] >> 6
        return data, found

    def write(
        self, gi: np.ndarray, data: np.ndarray, wg: np.ndarray, wave: np.ndarray, since: np.ndarray | None = None
    ) -> dict[str, np.ndarray]:
        """Stores data (L, c) at gi; with tracking, per lane: read by another wave in this
        interval (or, for an async write, since the interval it was issued in)."""
        self.data[gi] = data
        if not self.track:
            return {}
        stamp = self.stamps(wg, wave)[:, None]
        first = stamp >> 6 if since is None else since[:, None]
        r = np.take(self.read_by, gi)
        other_read = ((r >> 6 >= first) & ((r & 63) != (stamp & 63))) | (np.take(self.read_twice, gi) >= first)
        self.written[gi] = np.broadcast_to(stamp, gi.shape)
        return {"lds-race": other_read.any(axis=1)} if other_read.any() else {}

    def barrier(self, workgroups: np.ndarray) -> None:
        self.epoch[workgroups] += 1


@dataclass
class AsyncLoad:
    """One tile.async_buffer_load_lds in flight: its data, read at issue, lands at a wait."""

    where: str
    active: np.ndarray  # (T,) the lanes whose copy has not landed
    gi: np.ndarray  # (T, c) destination granules
    data: np.ndarray  # (T, c)
    issued: np.ndarray  # (T,) the epoch of each lane's workgroup at issue
