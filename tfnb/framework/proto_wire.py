"""The protocol-buffer wire format, by hand: varints, field keys, length-delimited and fixed-width fields.

tfnb writes the few messages TensorBoard reads (Summary, Event, GraphDef, RunMetadata) with these,
so neither protobuf nor TensorBoard is needed at run time. A message is its fields' bytes
concatenated; an embedded message is a length-delimited field holding the message's bytes.
"""

from __future__ import annotations

import struct

import numpy as np

VARINT, FIXED64, BYTES, FIXED32 = 0, 1, 2, 5


def varint(n: int) -> bytes:
    """`n` as a base-128 varint; negative int64s are written as their 64-bit two's complement."""
    n &= 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while n > 0x7F:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def key(field: int, wire_type: int) -> bytes:
    """A field's key: its number and wire type."""
    return varint(field << 3 | wire_type)


def bytes_field(field: int, data: bytes) -> bytes:
    """A length-delimited field: bytes, a string's UTF-8, or an embedded message."""
    return key(field, BYTES) + varint(len(data)) + data


def string_field(field: int, text: str) -> bytes:
    """A string field, left out when empty (proto3 does not write default values)."""
    return bytes_field(field, text.encode()) if text else b""


def varint_field(field: int, n: int) -> bytes:
    """An integer, bool or enum field, written even when 0 (a member of a oneof must be)."""
    return key(field, VARINT) + varint(int(n))


def optional_varint_field(field: int, n: int) -> bytes:
    """An integer field, left out when 0."""
    return varint_field(field, n) if n else b""


def double_field(field: int, value: float) -> bytes:
    """A double field, left out when 0 (as TF writes them)."""
    return key(field, FIXED64) + struct.pack("<d", value) if value else b""


def float_field(field: int, value: float) -> bytes:
    """A float field, written even when 0."""
    return key(field, FIXED32) + struct.pack("<f", value)


def packed_doubles(field: int, values: np.ndarray) -> bytes:
    """A repeated double field, packed (proto3's default); nothing when empty."""
    return bytes_field(field, np.asarray(values, "<f8").tobytes()) if len(values) else b""


def packed_floats(field: int, values) -> bytes:
    """A repeated float field, packed; nothing when empty."""
    return bytes_field(field, np.asarray(values, "<f4").tobytes()) if len(values) else b""


def packed_varints(field: int, values) -> bytes:
    """A repeated integer, bool or enum field, packed; nothing when empty."""
    return bytes_field(field, b"".join(varint(int(v)) for v in values)) if len(values) else b""


def fields(data: bytes) -> list[tuple[int, int, object]]:
    """(field number, wire type, value) for each field of a message; values are ints or raw bytes."""
    found, position, end = [], 0, len(data)
    while position < end:
        field_key = data[position]
        if field_key < 0x80:  # every field number below 16 has a one-byte key: skip the call
            position += 1
        else:
            field_key, position = read_varint(data, position)
        wire_type = field_key & 7
        if wire_type == BYTES:
            length, position = read_varint(data, position)
            value, position = data[position:position + length], position + length
        elif wire_type == VARINT:
            value, position = read_varint(data, position)
        elif wire_type == FIXED64 or wire_type == FIXED32:
            width = 8 if wire_type == FIXED64 else 4
            value, position = data[position:position + width], position + width
        else:
            raise ValueError(f"unsupported protocol-buffer wire type {wire_type}")
        if position > end:
            raise ValueError("truncated protocol buffer")
        found.append((field_key >> 3, wire_type, value))
    return found


def read_varint(data: bytes, position: int) -> tuple[int, int]:
    """The varint at `position` and the position after it; ValueError if the data ends inside it."""
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
