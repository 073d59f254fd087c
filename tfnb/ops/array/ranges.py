"""Range and LinSpace: evenly spaced numbers from a start up to a limit (tf.range), or a given count of them
from a start to a stop (tf.linspace)."""

from __future__ import annotations

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.common_shapes import range_length
from tfnb.framework.errors import InvalidArgumentError
from tfnb.framework.graph import get_default_graph, name_scope
from tfnb.framework.op_registry import Example, not_differentiable, register_op
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape, unknown_shape
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.inference import check_claimed, check_same_dtype, constant_value
from tfnb.ops.math.cast import cast


def _infer_range(op):
    dtype = check_same_dtype(op)
    check_claimed(op)
    for tensor, what in zip(op.inputs, ("start", "limit", "delta")):
        if tensor.shape.ndims not in (None, 0):
            raise ValueError(f"{what} must be a scalar, not shape {tensor.shape}")
    values = [constant_value(t) for t in op.inputs]
    if any(v is None for v in values):
        return [(dtype, unknown_shape(1))]
    try:
        return [(dtype, TensorShape([range_length(*(np.asarray(v, dtype.np_dtype)[()] for v in values))]))]
    except InvalidArgumentError as error:
        raise ValueError(error.message) from None


register_op("Range", _infer_range, dtypes=(dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64), examples=[
    Example(lambda dtype: range(1, 10, 3, dtype=dtype), lambda dtype: np.arange(1, 10, 3, dtype=dtype.np_dtype),
            differentiable=False),
    Example(lambda: range(5), lambda: np.arange(5, dtype=np.int32), differentiable=False),
    Example(lambda: range(0.5, 2), lambda: np.arange(0.5, 2, dtype=np.float32), differentiable=False),
    Example(lambda s, l, d: range(s, l, d), lambda s, l, d: np.arange(s, l, d, dtype=np.int64),
            inputs=(np.array(10, np.int64), np.array(0, np.int64), np.array(-3, np.int64)), differentiable=False),
    Example(lambda s, l, d: range(s, l, d), lambda s, l, d: np.arange(s, l, d, dtype=np.float32),
            inputs=(np.array(0.5, np.float32), np.array(2, np.float32), np.array(0.25, np.float32)),
            differentiable=False),
    Example(lambda: range(3, 3), lambda: np.arange(0, dtype=np.int32), differentiable=False),
])
not_differentiable("Range")


def range(start, limit=None, delta=1, dtype=None, name: str = "range") -> Tensor:  # noqa: A001
    """The numbers from `start` up to (not including) `limit` in steps of `delta`; int32 for ints, float32 for floats."""
    if limit is None:
        start, limit = 0, start
    args = [start, limit, delta]
    with name_scope(name, "Range", args) as scope:
        if dtype is None:
            order = [dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64]
            kinds = [v.dtype if isinstance(v, Tensor) else dtypes.dtype_of_value(v) for v in args]
            dtype = max(kinds, key=lambda d: order.index(d) if d in order else -1)
        dtype = dtypes.as_dtype(dtype)
        tensors = [cast(v, dtype) if isinstance(v, Tensor) else convert_to_tensor(v, dtype=dtype, name=label)
                   for v, label in zip(args, ("start", "limit", "delta"))]
        return get_default_graph().create_op("Range", tensors, None, scope).outputs[0]


def _infer_lin_space(op):
    start, stop, num = op.inputs
    dtype = check_same_dtype(op, 0, 1)
    check_claimed(op)
    if num.dtype not in dtypes.INDEX:
        raise TypeError(f"num must be int32 or int64, not {num.dtype.name}")
    for tensor, what in zip(op.inputs, ("start", "stop", "num")):
        if tensor.shape.ndims not in (None, 0):
            raise ValueError(f"{what} must be a scalar, not shape {tensor.shape}")
    count = constant_value(num)
    if count is not None and count <= 0:
        raise ValueError(f"Requires num > 0: {int(count)}")
    return [(dtype, TensorShape([None if count is None else int(count)]))]


register_op("LinSpace", _infer_lin_space, dtypes=(dtypes.float32, dtypes.float64), examples=[
    Example(lambda dtype: linspace(convert_to_tensor(-1.0, dtype=dtype), convert_to_tensor(2.0, dtype=dtype), 7),
            lambda dtype: np.linspace(-1.0, 2.0, 7, dtype=dtype.np_dtype), differentiable=False),
    Example(lambda a, b: lin_space(a, b, 1), lambda a, b: np.array([a], dtype=a.dtype), inputs=((), ()),
            differentiable=False),
    Example(lambda a, b: linspace(a, b, 4), lambda a, b: np.linspace(a, b, 4, dtype=a.dtype), inputs=((), ()),
            differentiable=False),
])
not_differentiable("LinSpace")


def linspace(start, stop, num, name: str | None = None) -> Tensor:
    """`num` evenly spaced values from `start` to `stop`, both included (float32 or float64)."""
    start = convert_to_tensor(start, name="start")
    stop = convert_to_tensor(stop, dtype=start.dtype, name="stop")
    num = convert_to_tensor(num, name="num")
    return get_default_graph().create_op("LinSpace", (start, stop, num), None, name).outputs[0]


lin_space = linspace
