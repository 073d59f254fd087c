"""Whole files as strings: tf.read_file (ReadFile) and tf.write_file (WriteFile)."""

from __future__ import annotations

import os
import tempfile

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.graph import get_default_graph
from tfnb.framework.op_registry import Example, not_differentiable, register_op
from tfnb.framework.operation import Operation
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape
from tfnb.ops.array.reshaping import reshape
from tfnb.ops.constant_op import convert_to_tensor

__all__ = ["read_file", "write_file"]


def _check_scalar_strings(op) -> None:
    for tensor in op.inputs:
        if tensor.dtype is not dtypes.string:
            raise TypeError(f"{op.type} takes string tensors, got {tensor.dtype.name}")
        if tensor.shape.ndims not in (None, 0):
            raise ValueError(f"{op.type} takes scalars, got shape {tensor.shape}")


def _infer_read_file(op):
    _check_scalar_strings(op)
    return [(dtypes.string, TensorShape([]))]


def _infer_write_file(op):
    _check_scalar_strings(op)
    return []


_example_dir: tempfile.TemporaryDirectory | None = None


def _example_path(name: str) -> str:
    """A path in a temporary directory for the registry's examples, removed when Python exits."""
    global _example_dir
    if _example_dir is None:
        _example_dir = tempfile.TemporaryDirectory(prefix="tfnb-file-examples-")
    return os.path.join(_example_dir.name, name)


def _written_then_read(contents):
    """The contents read back after writing them (as a vector: a fetched string scalar comes back as bytes)."""
    path = _example_path("round-trip.bin")
    with get_default_graph().control_dependencies([write_file(path, contents)]):
        return reshape(read_file(path), [1])


_ROUND_TRIP = Example(_written_then_read, lambda contents: contents.reshape(1),
                      inputs=(np.array(b"\x00bytes\xff", object),), differentiable=False)
register_op("ReadFile", _infer_read_file, dtypes=(dtypes.string,), stateful=True, examples=[_ROUND_TRIP])
register_op("WriteFile", _infer_write_file, dtypes=(dtypes.string,), stateful=True, examples=[_ROUND_TRIP])
not_differentiable("ReadFile", "WriteFile")


def read_file(filename, name: str | None = None) -> Tensor:
    """The whole contents of the file `filename`, as a string scalar."""
    filename = convert_to_tensor(filename, dtype=dtypes.string, name="filename")
    return get_default_graph().create_op("ReadFile", (filename,), None, name).outputs[0]


def write_file(filename, contents, name: str | None = None) -> Operation:
    """The op writing the string scalar `contents` to the file `filename` (replacing it)."""
    inputs = (convert_to_tensor(filename, dtype=dtypes.string, name="filename"),
              convert_to_tensor(contents, dtype=dtypes.string, name="contents"))
    return get_default_graph().create_op("WriteFile", inputs, None, name)
