"""The `Summary` and `Event` protocol-buffer messages that summary ops produce and event files hold.

The few messages tfnb writes are encoded here by hand (varints, length-delimited fields, doubles and
floats), so neither protobuf nor TensorBoard is needed at run time; TensorBoard reads them as its own.
As TF keeps summary.proto in its framework, summary kernels and event files both use this module.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

__all__ = ["Histogram", "SummaryValue", "event_bytes", "parse_summary", "scalar_value", "histogram_value",
           "graph_value", "GRAPH_PLUGIN"]

_VARINT, _FIXED64, _BYTES, _FIXED32 = 0, 1, 2, 5
_DBL_MAX = float(np.finfo(np.float64).max)
_DT_STRING = 7

GRAPH_PLUGIN = "tfnb_graph"
"""Plugin name (and tag) of the summary value that holds a graph as tfnb's JSON."""


# -- protocol-buffer wire format ------------------------------------------------------------------


def _varint(n: int) -> bytes:
    n &= 0xFFFFFFFFFFFFFFFF  # negative int64s are written as their 64-bit two's complement
    out = bytearray()
    while n > 0x7F:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _key(field: int, wire_type: int) -> bytes:
    return _varint(field << 3 | wire_type)


def _bytes_field(field: int, data: bytes) -> bytes:
    return _key(field, _BYTES) + _varint(len(data)) + data


def _double_field(field: int, value: float) -> bytes:
    # proto3 leaves out fields that hold their default value, and so does TF
    return _key(field, _FIXED64) + struct.pack("<d", value) if value else b""


def _packed_doubles(field: int, values: np.ndarray) -> bytes:
    return _bytes_field(field, np.asarray(values, "<f8").tobytes()) if len(values) else b""


def _fields(data: bytes) -> list[tuple[int, int, object]]:
    """(field number, wire type, value) for each field of a message; values are ints or raw bytes."""
    fields, position, end = [], 0, len(data)
    while position < end:
        key = data[position]
        if key < 0x80:  # every field number below 16 has a one-byte key: skip the call
            position += 1
        else:
            key, position = _read_varint(data, position)
        wire_type = key & 7
        if wire_type == _BYTES:
            length, position = _read_varint(data, position)
            value, position = data[position:position + length], position + length
        elif wire_type == _VARINT:
            value, position = _read_varint(data, position)
        elif wire_type == _FIXED64 or wire_type == _FIXED32:
            width = 8 if wire_type == _FIXED64 else 4
            value, position = data[position:position + width], position + width
        else:
            raise ValueError(f"unsupported protocol-buffer wire type {wire_type}")
        if position > end:
            raise ValueError("truncated protocol buffer")
        fields.append((key >> 3, wire_type, value))
    return fields


def _read_varint(data: bytes, position: int) -> tuple[int, int]:
    try:
        byte = data[position]
        if byte < 0x80:  # keys and short lengths: one byte
            return byte, position + 1
        result, shift = byte & 0x7F, 7
        while True:
            position += 1
            byte = data[position]
            result |= (byte & 0x7F) << shift
            if byte < 0x80:
                return result, position + 1
            shift += 7
    except IndexError:
        raise ValueError("truncated protocol buffer") from None


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
        return b"".join([_double_field(1, self.min), _double_field(2, self.max), _double_field(3, self.num),
                         _double_field(4, self.sum), _double_field(5, self.sum_squares),
                         _packed_doubles(6, self.bucket_limit), _packed_doubles(7, self.bucket)])

    @classmethod
    def decode(cls, data: bytes) -> Histogram:
        """The histogram in a serialized HistogramProto."""
        scalars = {1: 0.0, 2: 0.0, 3: 0.0, 4: 0.0, 5: 0.0}
        repeated = {6: [], 7: []}
        for field, wire_type, value in _fields(data):
            if field in scalars and wire_type == _FIXED64:
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
    value = _bytes_field(1, tag.encode()) + payload + (_bytes_field(9, metadata) if metadata else b"")
    return _bytes_field(1, value)


def scalar_value(tag: str, value: float) -> bytes:
    """A serialized Summary with one `simple_value` (a float32, as in TF)."""
    return _summary_value(tag, _key(2, _FIXED32) + struct.pack("<f", value))


def histogram_value(tag: str, histogram: Histogram) -> bytes:
    """A serialized Summary with one `histo` value."""
    return _summary_value(tag, _bytes_field(5, histogram.encode()))


def graph_value(graph_json: bytes) -> bytes:
    """A serialized Summary holding tfnb's JSON graph as a string tensor of plugin `tfnb_graph`.

    tfnb differs from TF: the graph is not an Event's `graph_def` (TensorBoard would parse that as a
    GraphDef protocol buffer); TensorBoard stores this value under its plugin name and shows nothing for it.
    """
    tensor = _key(1, _VARINT) + _varint(_DT_STRING) + _bytes_field(2, b"") + _bytes_field(8, graph_json)
    metadata = _bytes_field(1, _bytes_field(1, GRAPH_PLUGIN.encode()))
    return _summary_value(GRAPH_PLUGIN, _bytes_field(8, tensor), metadata)


_KINDS = {(2, _FIXED32): "scalar", (5, _BYTES): "histogram", (8, _BYTES): "tensor"}


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
    for field, wire_type, entry in _fields(bytes(data)):
        if field != 1 or wire_type != _BYTES:
            raise ValueError("not a serialized Summary")
        tag, kind, payload = "", "other", b""
        for number, value_wire_type, value in _fields(entry):
            if number == 1 and value_wire_type == _BYTES:
                tag = value.decode()
            elif (number, value_wire_type) in _KINDS:
                kind, payload = _KINDS[number, value_wire_type], value
        values.append(SummaryValue(tag, kind, payload))
    return values


# -- events and TFRecords -------------------------------------------------------------------------


def event_bytes(wall_time: float, step: int = 0, *, file_version: str | None = None,
                summary: bytes | None = None) -> bytes:
    """A serialized `Event` with a wall time, a step, and a file version or a serialized Summary."""
    out = _double_field(1, wall_time) + (_key(2, _VARINT) + _varint(step) if step else b"")
    if file_version is not None:
        out += _bytes_field(3, file_version.encode())
    if summary is not None:
        out += _bytes_field(5, summary)
    return out
