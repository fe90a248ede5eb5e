"""The parent's reader of a worker's messages: multiprocessing's frame (a 4-byte big-endian
length, or -1 and an 8-byte length, then the bytes), read with a bound on waiting.

``Connection.recv_bytes`` blocks until the whole frame has come. Stray bytes in a worker's pipe
(an engine writing to a descriptor it does not own) can read as a length that no bytes follow;
the gate would then wait for ever, its job deadlines unchecked, while the worker waits for work.
A worker writes each message whole, so a frame that makes no progress for ``stall`` seconds is
stray bytes, not a slow writer."""

from __future__ import annotations

import os
import select
import struct
from multiprocessing.connection import Connection

#: the longest message the parent reads from a worker: a longer length is stray bytes in the pipe
MAX_MESSAGE = 1 << 30
#: seconds a frame may go without a byte once it has begun (a worker writes a message at once)
STALL = 30.0
_CHUNK = 1 << 20


class StrayBytes(Exception):
    """What came is no frame a worker wrote: its length is out of range, or it stalled."""


def read_frame(conn: Connection, stall: float | None = None) -> bytes:
    """The next message's bytes (EOFError when the worker's end is closed); ``stall``: STALL."""
    stall = STALL if stall is None else stall
    fd = conn.fileno()
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    (size,) = struct.unpack("!i", read_exact(fd, poller, 4, stall))
    if size == -1:
        (size,) = struct.unpack("!Q", read_exact(fd, poller, 8, stall))
    if size < 0 or size > MAX_MESSAGE:
        raise StrayBytes("a message length past 1 GiB")
    return read_exact(fd, poller, size, stall)


def read_exact(fd: int, poller: select.poll, n: int, stall: float) -> bytes:
    """n bytes from fd, waiting at most ``stall`` seconds for each piece."""
    chunks: list[bytes] = []
    got = 0
    while got < n:
        if not poller.poll(stall * 1000):
            raise StrayBytes(f"a message of {n} bytes stalled after {got}: its length was stray bytes")
        chunk = os.read(fd, min(n - got, _CHUNK))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)
