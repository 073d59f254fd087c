"""OneHot: indices encoded as one-hot vectors along a new axis (tf.one_hot)."""

from __future__ import annotations

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.graph import get_default_graph, name_scope
from tfnb.framework.op_registry import Example, not_differentiable, register_op
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape, unknown_shape
from tfnb.ops.array.packing import index_tensor
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.inference import (
    ARRAY_AND_STRING,
    check_claimed,
    check_dtype_in,
    check_same_dtype,
    constant_int,
    example_values,
)


def _infer_one_hot(op):
    indices, depth = op.inputs[:2]
    check_dtype_in(op, indices.dtype, (dtypes.uint8, dtypes.int32, dtypes.int64), "indices")
    check_dtype_in(op, depth.dtype, (dtypes.int32,), "depth")
    dtype = check_same_dtype(op, 2, 3)
    check_claimed(op, 2)
    for tensor in op.inputs[1:]:
        if tensor.shape.ndims not in (None, 0):
            raise ValueError(f"depth, on_value and off_value must be scalars, got shape {tensor.shape}")
    dims, axis, count = indices.shape.as_tuple(), op.attrs["axis"], constant_int(depth)
    if count is not None and count < 0:
        raise ValueError(f"depth must be non-negative, got: {count}")
    if dims is None:
        return [(dtype, unknown_shape())]
    if not -1 <= axis <= len(dims):
        raise ValueError(f"Expected axis to be -1 or between [0, {len(dims)}].  But received: {axis}")
    out = list(dims)
    out.insert(len(dims) if axis == -1 else axis, count)
    return [(dtype, TensorShape(out))]


def _np_one_hot(indices, depth: int, axis: int, dtype: dtypes.DType):
    on, off = example_values(dtype)
    hot = np.where(indices[..., None] == np.arange(depth), on, off).astype(dtype.np_dtype)
    return np.moveaxis(hot, -1, axis)


register_op("OneHot", _infer_one_hot, dtypes=ARRAY_AND_STRING, examples=[
    Example(lambda i, dtype: one_hot(i, 4, *example_values(dtype), dtype=dtype),
            lambda i, dtype: _np_one_hot(i, 4, -1, dtype), inputs=(np.array([0, 3, 5, -1, 2], np.int32),),
            differentiable=False),
    Example(lambda i, dtype: one_hot(i, 3, *example_values(dtype), axis=0),
            lambda i, dtype: _np_one_hot(i, 3, 0, dtype), inputs=(np.array([[1, 0], [2, 7]], np.int64),),
            differentiable=False),
    Example(lambda i: one_hot(i, 3, axis=1), lambda i: np.moveaxis(np.eye(3, dtype=np.float32)[i], -1, 1),
            inputs=(np.array([[1, 0], [2, 2]], np.uint8),), dtypes=(dtypes.float32,), differentiable=False),
], attrs={"axis": "int"})
not_differentiable("OneHot")


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name: str | None = None) -> Tensor:
    """A one-hot encoding of `indices` with `depth` positions along a new `axis` (last by default).

    Each position is `on_value` (1) where it equals the index, else `off_value` (0); an index outside
    [0, depth) gives a row of `off_value`. The dtype comes from `dtype`, the given values, or float32.
    """
    with name_scope(name, "one_hot", [indices, depth, on_value, off_value]) as scope:
        dtype = None if dtype is None else dtypes.as_dtype(dtype)
        on = None if on_value is None else convert_to_tensor(on_value, name="on_value")
        off = None if off_value is None else convert_to_tensor(off_value, name="off_value")
        for tensor, what in ((on, "on_value"), (off, "off_value")):
            if tensor is not None and dtype is not None and tensor.dtype is not dtype:
                raise TypeError(f"dtype {tensor.dtype.name} of {what} does not match dtype parameter {dtype.name}")
        dtype = dtype or next((t.dtype for t in (on, off) if t is not None), dtypes.float32)
        on = on if on is not None else convert_to_tensor(1, dtype, name="on_value")
        off = off if off is not None else convert_to_tensor(0, dtype, name="off_value")
        if on.dtype is not off.dtype:
            raise TypeError(f"dtype {on.dtype.name} of on_value does not match dtype {off.dtype.name} of off_value")
        inputs = [index_tensor(indices), convert_to_tensor(depth, dtypes.int32), on, off]
        attrs = {"axis": -1 if axis is None else int(axis)}
        return get_default_graph().create_op("OneHot", inputs, attrs, scope).outputs[0]
