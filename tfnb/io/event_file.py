"""TensorBoard event files: TFRecord framing with masked CRC32C, and FileWriter.

The records hold `Event` messages encoded by tfnb/framework/summary_proto.py; the graph and traced
runs go in them as TF's GraphDef and RunMetadata (tfnb/io/graph_proto.py), which TensorBoard's
Graphs tab reads.
"""

from __future__ import annotations

import os
import socket
import struct
import threading
import time
from typing import Self

from tfnb.framework.graph import Graph
from tfnb.framework.importer import extend_graph
from tfnb.framework.summary_proto import event_bytes
from tfnb.io.graph_proto import graph_def_bytes, run_metadata_bytes

__all__ = ["FileWriter", "crc32c", "tfrecord"]


def _crc32c_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1  # Castagnoli polynomial, bit-reversed
        table.append(crc)
    return table


_CRC32C_TABLE = _crc32c_table()


def crc32c(data: bytes) -> int:
    """The CRC-32C (Castagnoli) checksum of `data`, in pure Python."""
    crc, table = 0xFFFFFFFF, _CRC32C_TABLE
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _masked_crc(data: bytes) -> bytes:
    # TFRecord masks its checksums so that a CRC of data holding CRCs stays well distributed.
    crc = crc32c(data)
    return struct.pack("<I", (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF)


def tfrecord(data: bytes) -> bytes:
    """`data` framed as one TFRecord: length, masked CRC of the length, data, masked CRC of the data."""
    length = struct.pack("<Q", len(data))
    return length + _masked_crc(length) + data + _masked_crc(data)


# -- writers --------------------------------------------------------------------------------------


def _new_event_file(logdir: str, suffix: str) -> str:
    """A fresh path named as TF names event files; a writer opened in the same second gets a counter."""
    base = os.path.join(logdir, f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}")
    path, count = base + suffix, 0
    while os.path.exists(path):
        count += 1
        path = f"{base}.{count}{suffix}"
    return path


class FileWriter:
    """Writes summaries and the graph to an event file in `logdir` that TensorBoard reads.

    tfnb differs from TF: events are written on the caller's thread (no queue thread); the file is flushed
    after `max_queue` events or when an event arrives `flush_secs` after the last flush, and on close.
    `session` is accepted for TF1's signature and not used.
    """

    def __init__(self, logdir: str, graph=None, max_queue: int = 10, flush_secs: float = 120,
                 graph_def=None, filename_suffix: str | None = None, session=None) -> None:
        self._logdir = str(logdir)
        self._max_queue, self._flush_secs = max_queue, flush_secs
        self._suffix = filename_suffix or ""
        self._lock = threading.Lock()
        self._file = None
        self.reopen()
        if graph is not None or graph_def is not None:
            self.add_graph(graph, graph_def=graph_def)

    def get_logdir(self) -> str:
        """The directory the event file is in."""
        return self._logdir

    def reopen(self) -> None:
        """Opens a new event file after `close()`; does nothing while one is open."""
        with self._lock:
            if self._file is not None:
                return
            os.makedirs(self._logdir, exist_ok=True)
            self._path = _new_event_file(self._logdir, self._suffix)
            self._file = open(self._path, "wb")  # noqa: SIM115 - closed by close()
            self._pending, self._last_flush = 0, time.monotonic()
            self._file.write(tfrecord(event_bytes(time.time(), file_version="brain.Event:2")))

    @property
    def path(self) -> str:
        """The path of the event file being written (or, after close, the last one)."""
        return self._path

    def add_summary(self, summary, global_step: int | None = None) -> None:
        """Writes a Summary (serialized bytes, as `sess.run` of a summary op returns) at `global_step`."""
        if hasattr(summary, "SerializeToString"):
            summary = summary.SerializeToString()
        self._write(event_bytes(time.time(), int(global_step or 0), summary=bytes(summary)))

    def add_graph(self, graph, global_step: int | None = None, graph_def=None) -> None:
        """Writes the graph as TF's GraphDef, which TensorBoard's Graphs tab draws (nodes with their requested
        devices and output shapes); `graph_def` (tfnb's JSON GraphDef) is written when no graph is given."""
        if graph is None:
            graph = Graph()
            extend_graph(graph, graph_def)
        self._write(event_bytes(time.time(), int(global_step or 0), graph_def=graph_def_bytes(graph.get_operations())))

    def add_run_metadata(self, run_metadata, tag: str, global_step: int | None = None) -> None:
        """Writes a traced run (its per-node times, shapes and bytes) under `tag`; TensorBoard's Graphs tab offers
        it as a session run to colour the graph by compute time and memory."""
        self._write(event_bytes(time.time(), int(global_step or 0),
                                run_metadata=(tag, run_metadata_bytes(run_metadata))))

    def _write(self, event: bytes) -> None:
        with self._lock:
            if self._file is None:
                raise RuntimeError("FileWriter is closed; call reopen() first")
            self._file.write(tfrecord(event))
            self._pending += 1
            if self._pending >= self._max_queue or time.monotonic() - self._last_flush >= self._flush_secs:
                self._flush_locked()

    def _flush_locked(self) -> None:
        self._file.flush()
        self._pending, self._last_flush = 0, time.monotonic()

    def flush(self) -> None:
        """Writes everything added so far to disk."""
        with self._lock:
            if self._file is not None:
                self._flush_locked()

    def close(self) -> None:
        """Flushes and closes the event file; `reopen()` starts a new one."""
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
