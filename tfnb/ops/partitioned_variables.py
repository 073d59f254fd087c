"""Partitioned variables (OSDI paper, section 4.2): one large variable stored as parts, e.g. on several ps tasks.

`tf.get_variable(name, shape, partitioner=...)` makes the parts `name/part_0`, `name/part_1`, ... along one axis,
the first ones one row longer when the size does not divide evenly (as TF splits). Each part is an ordinary
variable, so `tf.train.replica_device_setter` gives each its own ps task, and `tf.nn.embedding_lookup` reads
each id's row from the part that holds it: the gradient of a lookup updates only the rows used, where they are.
"""

from __future__ import annotations

import math

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape
from tfnb.ops import array_ops
from tfnb.ops.constant_op import register_tensor_conversion_function
from tfnb.ops.variables import Variable

__all__ = ["PartitionedVariable", "fixed_size_partitioner", "min_max_variable_partitioner",
           "variable_axis_size_partitioner"]


def fixed_size_partitioner(num_shards: int, axis: int = 0):
    """A partitioner making `num_shards` parts along `axis`."""

    def partitioner(shape, dtype) -> list[int]:
        partitions = [1] * len(TensorShape(shape))
        partitions[axis] = num_shards
        return partitions
    return partitioner


def min_max_variable_partitioner(max_partitions: int = 1, axis: int = 0, min_slice_size: int = 256 << 10,
                                 bytes_per_string_element: int = 16):
    """A partitioner making parts of at least `min_slice_size` bytes along `axis`, at most `max_partitions` of them
    (and never more than the axis has rows)."""
    if min_slice_size <= 0:
        raise ValueError(f"min_slice_size must be positive, got {min_slice_size}")

    def partitioner(shape, dtype) -> list[int]:
        shape = TensorShape(shape)
        dtype = dtypes.as_dtype(dtype)
        element_bytes = bytes_per_string_element if dtype is dtypes.string else dtype.size
        wanted = math.ceil(shape.num_elements() * element_bytes / min_slice_size)
        partitions = [1] * len(shape)
        partitions[axis] = max(1, min(shape.as_list()[axis], max_partitions, wanted))
        return partitions
    return partitioner


def variable_axis_size_partitioner(max_shard_bytes: int, axis: int = 0, bytes_per_string_element: int = 16,
                                   max_shards: int | None = None):
    """A partitioner making parts of at most `max_shard_bytes` bytes along `axis` (at most `max_shards` of them)."""
    if max_shard_bytes < 1:
        raise ValueError(f"max_shard_bytes must be positive, got {max_shard_bytes}")

    def partitioner(shape, dtype) -> list[int]:
        shape = TensorShape(shape)
        dtype = dtypes.as_dtype(dtype)
        element_bytes = bytes_per_string_element if dtype is dtypes.string else dtype.size
        rows = shape.as_list()[axis]
        slice_bytes = shape.num_elements() // rows * element_bytes
        shards = math.ceil(rows / max(1, max_shard_bytes // slice_bytes))
        partitions = [1] * len(shape)
        partitions[axis] = max(1, min(rows, shards, max_shards or shards))
        return partitions
    return partitioner


def checked_partitions(name: str, shape: TensorShape, partitions) -> tuple[int, int]:
    """(axis, count) of a partitioner's answer: one count per dimension, more than 1 on one axis at most."""
    partitions = list(partitions)
    if len(partitions) != len(shape) or any(not isinstance(p, int | np.integer) or p < 1 for p in partitions):
        raise ValueError(f"Partitioner returned {partitions} for variable {name} of shape {shape}: it must give a "
                         f"positive count for each of its {len(shape)} dimensions")
    axes = [axis for axis, count in enumerate(partitions) if count > 1]
    if len(axes) > 1:
        raise ValueError(f"Can only slice a variable along one dimension: {name} got partitions {partitions}")
    axis = axes[0] if axes else 0
    if partitions[axis] > shape.as_list()[axis]:
        raise ValueError(f"Partitioner wants {partitions[axis]} parts of {name}, whose axis {axis} has only "
                         f"{shape.as_list()[axis]} rows")
    return axis, int(partitions[axis])


def part_shapes(shape: TensorShape, axis: int, count: int) -> list[list[int]]:
    """The shape of each part: the axis split evenly, the first (size % count) parts one longer, as TF splits."""
    dims = shape.as_list()
    size = dims[axis]
    return [dims[:axis] + [size // count + (1 if k < size % count else 0)] + dims[axis + 1:] for k in range(count)]


class PartitionedVariable:
    """A variable stored as parts along one axis: iterate it for the parts (each a Variable), or use it as a tensor
    (their concatenation)."""

    def __init__(self, name: str, shape: TensorShape, dtype: dtypes.DType, parts: list[Variable], axis: int) -> None:
        self._name, self._shape, self._dtype, self._parts, self._axis = name, shape, dtype, list(parts), axis

    def __iter__(self):
        return iter(self._parts)

    def __len__(self) -> int:
        return len(self._parts)

    def _get_variable_list(self) -> list[Variable]:
        return list(self._parts)

    def _get_partitions(self) -> list[int]:
        partitions = [1] * len(self._shape)
        partitions[self._axis] = len(self._parts)
        return partitions

    @property
    def name(self) -> str:
        return self._name

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def shape(self) -> TensorShape:
        return self._shape

    def get_shape(self) -> TensorShape:
        return self._shape

    def as_tensor(self) -> Tensor:
        """The whole variable: its parts' values concatenated."""
        return array_ops.concat([part.value() for part in self._parts], self._axis, name=self._name + "/concat")

    def __repr__(self) -> str:
        return f"<tf.PartitionedVariable '{self._name}' shape={self._shape} parts={len(self._parts)}>"


register_tensor_conversion_function(PartitionedVariable, lambda value, dtype=None, name=None, as_ref=False:
                                    value.as_tensor())
