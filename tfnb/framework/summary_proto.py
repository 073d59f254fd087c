"""The `Summary` and `Event` protocol-buffer messages that summary ops produce and event files hold.

The few messages tfnb writes are encoded here by hand (tfnb/framework/proto_wire.py), so neither
protobuf nor TensorBoard is needed at run time; TensorBoard reads them as its own. As TF keeps
summary.proto in its framework, summary kernels and event files both use this module.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from tfnb.framework.proto_wire import (
    BYTES,
    FIXED32,
    FIXED64,
    bytes_field,
    double_field,
    fields,
    key,
    optional_varint_field,
    packed_doubles,
)

__all__ = ["Histogram", "SummaryValue", "event_bytes", "histogram_value", "parse_summary", "scalar_value"]

_DBL_MAX = float(np.finfo(np.float64).max)


# -- Summary messages -----------------------------------------------------------------------------


def _default_bucket_limits() -> np.ndarray:
    """TF's histogram bucket limits: ±1e-12 growing by 10% up to 1e20, ±DBL_MAX at the ends, and 0."""
    positive, v = [], 1.0e-12
    while v < 1.0e20:
        positive.append(v)
        v *= 1.1
    positive.append(_DBL_MAX)
    return np.array([-x for x in reversed(positive)] + [0.0] + positive)


DEFAULT_BUCKET_LIMITS = _default_bucket_limits()


@dataclass
class Histogram:
    """A `HistogramProto`: value statistics and counts per bucket (bucket i holds limit[i-1] <= v < limit[i])."""

    min: float
    max: float
    num: float
    sum: float
    sum_squares: float
    bucket_limit: np.ndarray
    bucket: np.ndarray

    @classmethod
    def of(cls, values: np.ndarray) -> Histogram:
        """The histogram TF's HistogramSummary makes of finite `values`, runs of empty buckets merged into one."""
        values = np.asarray(values, np.float64).ravel()
        counts = np.bincount(np.searchsorted(DEFAULT_BUCKET_LIMITS, values, side="right"),
                             minlength=len(DEFAULT_BUCKET_LIMITS)).astype(np.float64)
        # An empty bucket is kept only where the next bucket is full (or at the end): it ends a run of empties.
        keep = (counts > 0) | np.append(counts[1:] > 0, True)
        low, high = (values.min(), values.max()) if values.size else (_DBL_MAX, -_DBL_MAX)
        return cls(float(low), float(high), float(values.size), float(values.sum()), float(np.dot(values, values)),
                   DEFAULT_BUCKET_LIMITS[keep], counts[keep])

    def encode(self) -> bytes:
        """The serialized HistogramProto."""
        return b"".join([double_field(1, self.min), double_field(2, self.max), double_field(3, self.num),
                         double_field(4, self.sum), double_field(5, self.sum_squares),
                         packed_doubles(6, self.bucket_limit), packed_doubles(7, self.bucket)])

    @classmethod
    def decode(cls, data: bytes) -> Histogram:
        """The histogram in a serialized HistogramProto."""
        scalars = {1: 0.0, 2: 0.0, 3: 0.0, 4: 0.0, 5: 0.0}
        repeated = {6: [], 7: []}
        for field, wire_type, value in fields(data):
            if field in scalars and wire_type == FIXED64:
                scalars[field] = struct.unpack("<d", value)[0]
            elif field in repeated:  # packed (proto3's way) or one double per field
                repeated[field].append(np.frombuffer(value, "<f8"))
        limits, counts = (np.concatenate(repeated[f]) if repeated[f] else np.zeros(0) for f in (6, 7))
        return cls(*(scalars[f] for f in range(1, 6)), limits, counts)

    def percentiles(self, fractions: np.ndarray) -> np.ndarray:
        """Values below which `fractions` of the counts lie, interpolated within buckets (as TensorBoard does)."""
        if self.num <= 0:
            return np.full(len(fractions), np.nan)
        lower = np.concatenate([[self.min], self.bucket_limit[:-1]])
        lower, upper = np.clip(lower, self.min, self.max), np.clip(self.bucket_limit, self.min, self.max)
        cumulative = np.concatenate([[0.0], np.cumsum(self.bucket)])
        edges = np.concatenate([[lower[0]], upper])
        return np.interp(np.asarray(fractions) * cumulative[-1], cumulative, edges)


def _summary_value(tag: str, payload: bytes, metadata: bytes = b"") -> bytes:
    """One `Summary.value` entry (a whole Summary with one value: Summaries concatenate into their merge)."""
    value = bytes_field(1, tag.encode()) + payload + (bytes_field(9, metadata) if metadata else b"")
    return bytes_field(1, value)


def scalar_value(tag: str, value: float) -> bytes:
    """A serialized Summary with one `simple_value` (a float32, as in TF)."""
    return _summary_value(tag, key(2, FIXED32) + struct.pack("<f", value))


def histogram_value(tag: str, histogram: Histogram) -> bytes:
    """A serialized Summary with one `histo` value."""
    return _summary_value(tag, bytes_field(5, histogram.encode()))


_KINDS = {(2, FIXED32): "scalar", (5, BYTES): "histogram", (8, BYTES): "tensor"}


@dataclass
class SummaryValue:
    """One value of a parsed Summary: its tag, its kind ('scalar', 'histogram', 'tensor' or 'other') and its
    payload bytes, decoded by `value` only when asked (a training loop may skip most histograms)."""

    tag: str
    kind: str
    payload: bytes

    @property
    def value(self):
        """The value: a float for a scalar, a Histogram for a histogram, else the payload's bytes."""
        if self.kind == "scalar":
            return struct.unpack("<f", self.payload)[0]
        if self.kind == "histogram":
            return Histogram.decode(self.payload)
        return self.payload


def parse_summary(data: bytes) -> list[SummaryValue]:
    """The values of a serialized Summary, in order; raises ValueError if it is not one."""
    values = []
    for field, wire_type, entry in fields(bytes(data)):
        if field != 1 or wire_type != BYTES:
            raise ValueError("not a serialized Summary")
        tag, kind, payload = "", "other", b""
        for number, value_wire_type, value in fields(entry):
            if number == 1 and value_wire_type == BYTES:
                tag = value.decode()
            elif (number, value_wire_type) in _KINDS:
                kind, payload = _KINDS[number, value_wire_type], value
        values.append(SummaryValue(tag, kind, payload))
    return values


# -- events and TFRecords -------------------------------------------------------------------------


def event_bytes(wall_time: float, step: int = 0, *, file_version: str | None = None,
                summary: bytes | None = None, graph_def: bytes | None = None,
                run_metadata: tuple[str, bytes] | None = None) -> bytes:
    """A serialized `Event` with a wall time, a step, and one of: a file version, a serialized Summary, a
    serialized GraphDef, or a (tag, serialized RunMetadata) pair (a TaggedRunMetadata)."""
    out = double_field(1, wall_time) + optional_varint_field(2, step)
    if file_version is not None:
        out += bytes_field(3, file_version.encode())
    if graph_def is not None:
        out += bytes_field(4, graph_def)
    if summary is not None:
        out += bytes_field(5, summary)
    if run_metadata is not None:
        tag, metadata = run_metadata
        out += bytes_field(8, bytes_field(1, tag.encode()) + bytes_field(2, metadata))
    return out
