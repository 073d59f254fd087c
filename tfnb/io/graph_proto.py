"""TF's `GraphDef` and `RunMetadata` protocol buffers, encoded by hand, as TensorBoard's Graphs tab reads them.

A FileWriter writes the graph as an Event's `graph_def` and a traced run as its `tagged_run_metadata`
(tfnb/io/event_file.py). Each node carries its op, inputs ('x', 'x:1', '^control'), requested device
and attrs, and `_output_shapes` (the static shapes, which TensorBoard draws on edges); a run adds
per-node times, output shapes and bytes, and the nodes each device ran. The wire format is
tfnb/framework/proto_wire.py: no protobuf is needed at run time.
"""

from __future__ import annotations

import numpy as np

from tfnb.framework.dtypes import DType
from tfnb.framework.proto_wire import (
    bytes_field,
    float_field,
    optional_varint_field,
    packed_floats,
    packed_varints,
    string_field,
    varint_field,
)
from tfnb.framework.tensor_shape import TensorShape

__all__ = ["graph_def_bytes", "run_metadata_bytes"]

# TF's DataType enum (tensorflow/core/framework/types.proto)
DATA_TYPES = {"float32": 1, "float64": 2, "int32": 3, "uint8": 4, "int16": 5, "int8": 6, "string": 7,
              "complex64": 8, "int64": 9, "bool": 10, "bfloat16": 14, "uint16": 17, "complex128": 18,
              "float16": 19, "resource": 20, "variant": 21, "uint32": 22, "uint64": 23}


def graph_def_bytes(ops) -> bytes:
    """The serialized GraphDef of `ops` (a graph's operations, in creation order)."""
    return b"".join(bytes_field(1, _node_def(op)) for op in ops)


def _node_def(op) -> bytes:
    inputs = [t.op.name if t.value_index == 0 else t.name for t in op.inputs]
    inputs += [f"^{c.name}" for c in op.control_inputs]
    attrs = {name: value for name, value in op.attrs.items() if value is not None}
    attrs["_output_shapes"] = [t.shape for t in op.outputs]
    out = string_field(1, op.name) + string_field(2, op.type)
    out += b"".join(bytes_field(3, name.encode()) for name in inputs)
    out += string_field(4, op.device)
    for name, value in attrs.items():
        out += bytes_field(5, bytes_field(1, name.encode()) + bytes_field(2, attr_value(name, value)))
    return out


def attr_value(name: str, value) -> bytes:
    """A serialized AttrValue; a value with no AttrValue form (a callable, an object) is written as its text."""
    if name == "_class":  # tfnb keeps colocation as node names; TF writes 'loc:@name'
        value = [v if str(v).startswith("loc:@") else f"loc:@{v}" for v in value]
    if isinstance(value, list | tuple):
        return bytes_field(1, _list_value(value))
    if isinstance(value, bool | np.bool_):
        return varint_field(5, bool(value))
    if isinstance(value, int | np.integer):
        return varint_field(3, int(value))
    if isinstance(value, float | np.floating):
        return float_field(4, float(value))
    if isinstance(value, DType):
        return varint_field(6, _data_type(value))
    if isinstance(value, TensorShape):
        return bytes_field(7, shape_proto(value))
    if isinstance(value, np.ndarray):
        return bytes_field(8, tensor_proto(value))
    return bytes_field(2, value if isinstance(value, bytes) else str(value).encode())


def _list_value(values: list | tuple) -> bytes:
    """A ListValue; its kind is the first item's (TF's lists hold one kind)."""
    if not values:
        return b""
    first = values[0]
    if isinstance(first, bool | np.bool_):
        return packed_varints(5, [bool(v) for v in values])
    if isinstance(first, int | np.integer):
        return packed_varints(3, values)
    if isinstance(first, float | np.floating):
        return packed_floats(4, values)
    if isinstance(first, DType):
        return packed_varints(6, [_data_type(v) for v in values])
    if isinstance(first, TensorShape):
        return b"".join(bytes_field(7, shape_proto(v)) for v in values)
    return b"".join(bytes_field(2, v if isinstance(v, bytes) else str(v).encode()) for v in values)


def _data_type(dtype: DType) -> int:
    return DATA_TYPES.get(dtype.name, 0)


def shape_proto(shape: TensorShape | tuple | list | None) -> bytes:
    """A serialized TensorShapeProto; unknown dims are -1, an unknown rank is `unknown_rank`."""
    dims = shape.as_tuple() if isinstance(shape, TensorShape) else shape
    if dims is None:
        return varint_field(3, True)
    return b"".join(bytes_field(2, varint_field(1, -1 if d is None else d)) for d in dims)


def tensor_proto(array: np.ndarray) -> bytes:
    """A serialized TensorProto: dtype, shape, and the values (raw little-endian bytes, or strings)."""
    out = varint_field(1, DATA_TYPES.get(_numpy_type_name(array), 0)) + bytes_field(2, shape_proto(array.shape))
    if array.dtype == object or array.dtype.kind in "SU":
        return out + b"".join(bytes_field(8, v if isinstance(v, bytes) else str(v).encode()) for v in array.flat)
    return out + bytes_field(4, array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes())


def _numpy_type_name(array: np.ndarray) -> str:
    return "string" if array.dtype == object or array.dtype.kind in "SU" else array.dtype.name


def run_metadata_bytes(run_metadata) -> bytes:
    """The serialized RunMetadata of a traced run: step stats per device, and each device's partition graph."""
    step_stats = b"".join(bytes_field(1, _device_step_stats(device)) for device in run_metadata.step_stats.dev_stats)
    partitions = b"".join(bytes_field(3, _partition_graph(device, names))
                          for device, names in run_metadata.partition_graphs.items())
    return bytes_field(1, step_stats) + partitions


def _device_step_stats(device) -> bytes:
    return string_field(1, device.device) + b"".join(bytes_field(2, _node_exec_stats(s)) for s in device.node_stats)


def _node_exec_stats(stats) -> bytes:
    start, duration = round(stats.all_start_micros), round(stats.all_end_rel_micros)
    out = string_field(1, stats.node_name) + optional_varint_field(2, start)
    out += optional_varint_field(4, duration) + optional_varint_field(5, duration)
    total = sum(stats.output_bytes)
    if total:
        out += bytes_field(6, string_field(1, "cpu") + varint_field(2, total))
    for slot, (shape, dtype, size) in enumerate(zip(stats.output_shapes, stats.output_dtypes, stats.output_bytes)):
        allocation = varint_field(1, size) + varint_field(2, size)
        description = (varint_field(1, DATA_TYPES.get(dtype, 0)) + bytes_field(2, shape_proto(tuple(shape)))
                       + bytes_field(4, allocation))
        out += bytes_field(7, optional_varint_field(1, slot) + bytes_field(3, description))
    out += string_field(8, stats.timeline_label) + optional_varint_field(10, stats.thread_id % 2**32)
    return out


def _partition_graph(device: str, names: list[str]) -> bytes:
    """A device's partition as a GraphDef of its nodes' names and device (what TensorBoard lists per device)."""
    return b"".join(bytes_field(1, string_field(1, name) + string_field(4, device)) for name in names)
