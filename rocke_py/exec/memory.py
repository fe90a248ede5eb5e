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
        self._windows: dict[int, np.ndarray] = {}

    def result(self) -> np.ndarray:
        return self.data[: self.size].view(self.dtype).reshape(self.shape).copy()

    def windows(self, width: int) -> np.ndarray:
        """Every run of `width` bytes as one item (overlapping, read only): a lane's load is
        one fancy index instead of `width`."""
        view = self._windows.get(width)
        if view is None:
            item = np.dtype((np.void, width))
            view = np.ndarray((self.data.size - width + 1,), item, buffer=self.data, strides=(1,))
            view.flags.writeable = False
            self._windows[width] = view
        return view

    def gather(self, off: np.ndarray, limit: np.ndarray, width: int) -> np.ndarray:
        """(L, width) bytes at byte offsets off (int64, per lane); bytes outside [0, limit) read 0."""
        whole = (off >= 0) & (off + width <= limit)
        if whole.all():  # (np.take would copy the overlapping view whole)
            return self.windows(width)[off].view(np.uint8).reshape(off.size, width)
        windows = self.windows(width)
        items = np.zeros(off.size, dtype=windows.dtype)  # a lane's bytes as one item
        at = np.flatnonzero(whole)
        items[at] = windows[off[at]]
        out = items.view(np.uint8).reshape(off.size, width)
        part = np.flatnonzero(~whole & (off < limit) & (off + width > 0))
        if part.size:  # lanes with some bytes inside: byte by byte
            addr = off[part, None] + np.arange(width, dtype=np.int64)
            inside = (addr >= 0) & (addr < limit[part, None])
            bytes_ = np.take(self.data, np.where(inside, addr, 0))
            bytes_[~inside] = 0
            out[part] = bytes_
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

    def atomic_add(self, index: np.ndarray, values: np.ndarray, elem: str = "") -> np.ndarray:
        """Adds values (L, n) of element type `elem` (default: the buffer's) at element
        index..index+n-1, one rounding per add, in lane order. Returns the lanes outside the
        buffer (dropped)."""
        elem = elem or self.elem
        eb = BYTES[elem]
        n = values.shape[1]
        outside = (index < 0) | ((index + n) * eb > self.size)
        idx = (index[~outside][:, None] + np.arange(n)).reshape(-1)
        vals = to_f64(values[~outside], elem).reshape(-1)
        view = self.data.view(DTYPES[elem])
        if elem == "f32":
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
            view[at] = round_to(to_f64(view[at], elem) + vals[pick], elem)
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


MAX_BLOCK = 16  # granules moved as one item by the block gathers (the pools are padded to it)
_VOID: dict[int, np.dtype] = {}


def void(nbytes: int) -> np.dtype:
    """The void dtype of nbytes (made once: np.dtype((np.void, n)) costs more than a view)."""
    item = _VOID.get(nbytes)
    if item is None:
        item = _VOID[nbytes] = np.dtype((np.void, nbytes))
    return item


def any_rows(hit: np.ndarray) -> np.ndarray:
    """hit (L, c) bool: per row, whether any is set. A contiguous row of 1, 2, 4 or 8 bytes is
    read as one integer: far faster than .any(axis=1) over short rows."""
    c = hit.shape[1]
    if c in (1, 2, 4, 8) and hit.flags.c_contiguous:
        return hit.view(UINT_OF[c]).reshape(-1) != 0
    return hit.any(axis=1)


UINT_OF = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}


def run_block(first: np.ndarray, count: int) -> int:
    """The largest power of two (at most MAX_BLOCK) dividing count and every run's first
    granule: the runs are then whole blocks, gathered as one void item each, which costs a
    fraction of a per-granule fancy index."""
    block = min(count & -count, MAX_BLOCK)
    if block > 1 and first.size:
        low = int(np.bitwise_or.reduce(first))
        if low:
            block = min(block, low & -low)
    return block


class Access:
    """The granules one LDS access touches: lane i (of `lanes`) its run first[i] ..
    first[i]+count-1 of the chunk's pools. Built once per distinct address (the executor
    keeps it while the addresses stay the same objects), with what only depends on them."""

    def __init__(self, lanes: np.ndarray, first: np.ndarray, count: int, wg: np.ndarray, wave: np.ndarray) -> None:
        self.lanes = lanes
        self.first = first
        self.count = count
        self.wg = wg
        self.wave = wave
        self.block = run_block(first, count)
        per = count // self.block
        rows = first // self.block
        self.rows = rows if per == 1 else rows[:, None] + np.arange(per, dtype=np.int64)
        self._gi: np.ndarray | None = None
        self.version = -1  # the Lds.version its stamps are of
        self.stamp = np.zeros(0, dtype=np.int32)
        self._stamp_runs: np.ndarray | None = None
        # per (lane, granule): another wave's lane of this access reads the same granule and
        # comes later in lane order (static: lanes of one workgroup share its epoch); those
        # granules, each once, and a flat position of each
        self.cross: np.ndarray | None = None
        self.cross_at = np.zeros(0, dtype=np.int64)
        self.cross_gi = np.zeros(0, dtype=np.int64)
        self._cross_epochs = (-1, np.zeros(0, dtype=np.int32))  # (version, epochs at cross_at)
        self.initialized = False  # every granule was written (a shadow never unwrites)
        self.reused = False  # the executor runs it again (then what is static is kept)

    @property
    def gi(self) -> np.ndarray:
        """(L, count) flat granule indices."""
        if self._gi is None:
            if self.count == 1:
                self._gi = self.first.reshape(-1, 1)
            else:
                self._gi = self.first[:, None] + np.arange(self.count, dtype=np.int64)
        return self._gi

    def flat(self, at: np.ndarray) -> np.ndarray:
        """The granules at flat positions `at` of an (L, count) array."""
        if self.count & (self.count - 1):
            return self.gi.take(at)
        shift = self.count.bit_length() - 1  # a power of two: no integer division
        return self.first[at >> shift] + (at & (self.count - 1))

    def cross_epochs(self) -> np.ndarray:
        """The epochs at the cross positions (what read_twice gets there), per stamp version."""
        version, epochs = self._cross_epochs
        if version != self.version:
            epochs = self.stamp_runs().take(self.cross_at) >> 6
            self._cross_epochs = (self.version, epochs)
        return epochs

    def stamp_runs(self) -> np.ndarray:
        """The lanes' stamps repeated over their runs, (L, count) contiguous."""
        if self._stamp_runs is None:
            self._stamp_runs = np.repeat(self.stamp, self.count).reshape(-1, self.count)
        return self._stamp_runs


class Lds:
    """The LDS pools of a chunk's workgroups, one row of granules per workgroup. Shadows (when
    tracked), as stamps epoch·64 + wave (epoch: the workgroup's barrier interval): the last
    write (-1: never written); the last read, and the last interval in which two waves read;
    and the async writes still in flight."""

    def __init__(
        self, workgroups: int, pool_bytes: int, track: bool, thread_wg: np.ndarray, thread_wave: np.ndarray
    ) -> None:
        self.thread_wg = thread_wg  # per thread of the chunk: its workgroup, its wave in it
        self.thread_wave = thread_wave
        self._thread_stamps = (-1, np.zeros(0, dtype=np.int32))  # (version, stamps)
        self.granules = max(pool_bytes // 2, 1)
        size = workgroups * self.granules
        size += -size % MAX_BLOCK  # whole blocks (the tail is never addressed)
        self.data = np.full(size, POISON, dtype=np.uint16)
        self.epoch = np.zeros(workgroups, dtype=np.int32)
        self.version = 0  # counts barriers: the stamps an Access computed stay valid until then
        self.track = track
        self.in_flight = 0  # granules with an async write pending (none: no check)
        if track:
            self.written = np.full(size, -1, dtype=np.int32)
            self.read_by = np.full(size, -1, dtype=np.int32)
            self.read_twice = np.full(size, -1, dtype=np.int32)
            self.pending = np.zeros(size, dtype=np.int16)
        # per workgroup, the epoch of a read (a write) in it, or later: an interval in which
        # no workgroup read (wrote) skips the checks that need such a read (write). Marked
        # for all the workgroups at once, which only costs a check, never misses one.
        self.last_read = np.full(workgroups, -1, dtype=np.int32)
        self.last_write = np.full(workgroups, -1, dtype=np.int32)
        # the same as Python flags: some workgroup may have read (written) in its current
        # interval; every workgroup is marked at its current epoch
        self.read_open = self.write_open = False
        self.read_marked = self.write_marked = False
        self._runs: tuple[int, dict[int, np.ndarray]] = (-1, {})  # (version, count -> thread stamp runs)

    def mark_read(self) -> None:
        if not self.read_marked:
            self.last_read[:] = self.epoch
            self.read_marked = self.read_open = True

    def mark_write(self) -> None:
        if not self.write_marked:
            self.last_write[:] = self.epoch
            self.write_marked = self.write_open = True

    def first_granule(self, wg: np.ndarray, byte: np.ndarray) -> np.ndarray:
        """Flat granules of byte addresses (even) in each lane's workgroup pool."""
        return wg * self.granules + byte // 2

    def granule_index(self, wg: np.ndarray, byte: np.ndarray, count: int) -> np.ndarray:
        """(L, count) flat granules from byte addresses (even) in each lane's workgroup pool."""
        return self.first_granule(wg, byte)[:, None] + np.arange(count, dtype=np.int64)

    def thread_stamps(self) -> np.ndarray:
        """Every thread's stamp (T,) int32, recomputed only after a barrier."""
        version, stamps = self._thread_stamps
        if version != self.version:
            stamps = (self.epoch[self.thread_wg] * 64 + self.thread_wave).astype(np.int32)
            self._thread_stamps = (self.version, stamps)
        return stamps

    def stamps(self, acc: Access) -> np.ndarray:
        """The access's lanes' stamps (L,) int32."""
        if acc.version != self.version:
            every = self.thread_stamps()
            if acc.lanes.size == every.size:  # every thread: the runs are shared too
                acc.stamp = every
                acc._stamp_runs = self.thread_stamp_runs(acc.count)
            else:
                acc.stamp = every[acc.lanes]
                acc._stamp_runs = None
            acc.version = self.version
        return acc.stamp

    def thread_stamp_runs(self, count: int) -> np.ndarray:
        """Every thread's stamp repeated over a run of count granules, (T, count)."""
        version, runs = self._runs
        if version != self.version:
            runs = {}
            self._runs = (self.version, runs)
        if count not in runs:
            runs[count] = np.repeat(self.thread_stamps(), count).reshape(-1, count)
        return runs[count]

    @staticmethod
    def gather(arr: np.ndarray, acc: Access) -> np.ndarray:
        """arr at the access's granules, (L, count)."""
        if acc.block == 1:
            return arr.take(acc.gi)
        items = arr.view(void(acc.block * arr.itemsize))
        return items.take(acc.rows).view(arr.dtype).reshape(acc.first.size, acc.count)

    @staticmethod
    def scatter(arr: np.ndarray, acc: Access, values: np.ndarray) -> None:
        """arr at the access's granules = values (L, count), in lane order (the last lane wins)."""
        if acc.block == 1:
            arr[acc.gi] = values
            return
        item = void(acc.block * arr.itemsize)
        src = np.ascontiguousarray(values, dtype=arr.dtype).view(item).reshape(acc.rows.shape)
        arr.view(item)[acc.rows] = src

    def read(self, acc: Access) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """The access's granules (L, c) read by its lanes; with tracking, per lane: never
        written, written by another wave in this interval, in flight."""
        data = self.gather(self.data, acc)
        if not self.track:
            return data, {}
        self.stamps(acc)
        runs = acc.stamp_runs()  # the lanes' stamps over their runs: no broadcast of (L, 1)
        found = {}
        if not acc.initialized or self.write_open:
            w = self.gather(self.written, acc)
            # another wave's write in this interval: same epoch bits, other wave bits, i.e.
            # 0 < w ^ stamp < 64 (an unwritten -1 gives a negative xor)
            race = same_interval_other_wave(w, runs)
            uninit_any = bool(w.size) and int(w.min()) < 0
            if uninit_any or race.any():  # one reduction on the common path
                found = {"lds-uninit": any_rows(w < 0), "lds-race": any_rows(race)}
            acc.initialized = not uninit_any
        if self.in_flight:
            found["async-early"] = any_rows(self.gather(self.pending, acc) > 0)
        # two waves reading a granule in one interval: before this read, or within it
        earlier = self.read_open
        twice = same_interval_other_wave(self.gather(self.read_by, acc), runs) if earlier else None
        self.scatter(self.read_by, acc, runs)
        self.mark_read()
        if acc.reused:  # another wave's lane of this access reading the same granule: static
            if acc.cross is None:
                self.find_cross(acc)
            if twice is not None and twice.any():
                if acc.cross_at.size:
                    twice |= acc.cross
            elif acc.cross_at.size:  # only the static granules (their epochs kept per barrier)
                self.read_twice[acc.cross_gi] = acc.cross_epochs()
                return data, found
            else:
                return data, found
        else:
            cross = self.gather(self.read_by, acc) != runs
            twice = cross if twice is None else twice | cross
        if twice.any():
            at = twice.reshape(-1).nonzero()[0]
            self.read_twice[acc.flat(at)] = runs.take(at) >> 6
        return data, found

    def find_cross(self, acc: Access) -> None:
        """acc.cross, right after the access stored its stamps in read_by: a granule whose
        stamp is not the lane's own was read by a later lane of another wave."""
        acc.cross = self.gather(self.read_by, acc) != acc.stamp_runs()
        at = np.flatnonzero(acc.cross)
        # each granule once (sorted): its lanes are of one workgroup, so they store one epoch
        acc.cross_gi, first = np.unique(acc.gi.take(at), return_index=True)
        acc.cross_at = at[first]

    def write(self, acc: Access, data: np.ndarray, since: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """Stores data (L, c) at the access's granules; with tracking, per lane: read by
        another wave in this interval (or, for an async write, since the interval it was
        issued in)."""
        self.scatter(self.data, acc, data)
        if not self.track:
            return {}
        self.stamps(acc)
        runs = acc.stamp_runs()
        found = {}
        if since is None:
            if self.read_open:
                r = self.gather(self.read_by, acc)
                twice = self.gather(self.read_twice, acc)
                # the shadows never run ahead of the workgroup's epoch: ">= epoch" is "== epoch"
                other_read = same_interval_other_wave(r, runs)
                other_read |= twice == runs >> 6
                if other_read.any():
                    found = {"lds-race": any_rows(other_read)}
        elif since.size and int(self.last_read.max()) >= int(since.min()):  # a read since the issue
            r = self.gather(self.read_by, acc)
            twice = self.gather(self.read_twice, acc)
            first = np.repeat(since, acc.count).reshape(-1, acc.count)
            other_read = ((r >> 6 >= first) & ((r & 63) != (runs & 63))) | (twice >= first)
            if other_read.any():
                found = {"lds-race": any_rows(other_read)}
        self.scatter(self.written, acc, runs)
        self.mark_write()
        return found

    def barrier(self, workgroups: np.ndarray) -> None:
        """The workgroups (distinct) pass a barrier."""
        self.epoch[workgroups] += 1
        self.version += 1
        self.read_marked = self.write_marked = False
        if workgroups.size == self.epoch.size:  # every interval is new
            self.read_open = self.write_open = False
        else:
            self.read_open = bool((self.last_read == self.epoch).any())
            self.write_open = bool((self.last_write == self.epoch).any())


def same_interval_other_wave(shadow: np.ndarray, stamp: np.ndarray) -> np.ndarray:
    """shadow (a stamp, or -1) from the same barrier interval as stamp but another wave."""
    x = shadow ^ stamp
    x -= 1
    return x.view(np.uint32) < 63


@dataclass
class AsyncLoad:
    """One tile.async_buffer_load_lds in flight: its data, read at issue, lands at a wait."""

    where: str
    active: np.ndarray  # (T,) the lanes whose copy has not landed
    acc: Access  # the destination granules of the lanes that issued a copy (L of them)
    data: np.ndarray  # (L, c)
    issued: np.ndarray  # (L,) the epoch of each lane's workgroup at issue

    def landing(self, now: np.ndarray) -> tuple[Access, np.ndarray, np.ndarray]:
        """The access, data and issue epochs of the lanes landing now (now: (L,) over acc's
        lanes); the whole load's own when they all land together."""
        if now.all():
            return self.acc, self.data, self.issued
        at = np.flatnonzero(now)
        a = self.acc
        acc = Access(a.lanes[at], a.first[at], a.count, a.wg[at], a.wave[at])
        return acc, self.data[at], self.issued[at]
