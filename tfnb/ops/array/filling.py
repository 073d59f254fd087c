"""Filling: tensors of one repeated value (Fill, tf.zeros, tf.ones), and the zeros or ones shaped like another."""

from __future__ import annotations

import math

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.graph import get_default_graph, name_scope
from tfnb.framework.op_registry import Example, not_differentiable, register_gradient, register_op
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import as_shape
from tfnb.ops.array.packing import index_tensor
from tfnb.ops.array.reshaping import reshape
from tfnb.ops.array.shapes import shape, shape_elements, shape_from
from tfnb.ops.constant_op import constant, convert_to_tensor
from tfnb.ops.inference import ARRAY_AND_STRING, check_claimed, check_index_input, constant_ints, same_as_input
from tfnb.ops.math.reduce_sum import reduce_sum


def _infer_fill(op):
    dims, value = op.inputs
    check_claimed(op, 1)
    check_index_input(op, 0, "dims")
    if value.shape.ndims not in (None, 0):
        raise ValueError(f"value must be a scalar, got shape {value.shape}")
    if any(isinstance(e, int) and e < 0 for e in shape_elements(dims) or ()):
        raise ValueError(f"Fill dimensions must be >= 0, got {constant_ints(dims)}")
    return [(value.dtype, shape_from(dims))]


register_op("Fill", _infer_fill, dtypes=ARRAY_AND_STRING, examples=[
    Example(lambda v: fill([2, 3], v), lambda v: np.full([2, 3], v), inputs=((),)),
    Example(lambda d, v: fill(d, v), lambda d, v: np.full(d, v), inputs=(np.array([2, 0, 1], np.int64), ())),
    Example(lambda x, v: fill([shape(x)[1], 2], v), lambda x, v: np.full([x.shape[1], 2], v), inputs=((1, 3), ())),
])


@register_gradient("Fill")
def _fill_grad(op, grad):
    return [None, reduce_sum(grad)]


def fill(dims, value, name: str | None = None) -> Tensor:
    """A tensor of shape `dims` with every element equal to the scalar `value`."""
    inputs = [index_tensor(dims), convert_to_tensor(value)]
    return get_default_graph().create_op("Fill", inputs, None, name).outputs[0]


def _filled(shape_, dtype: dtypes.DType, value, name: str | None, default_name: str) -> Tensor:
    """A tensor of `shape_` filled with `value`: a constant when the shape is known and small, as TF1 makes it."""
    with name_scope(name, default_name, [shape_]) as scope:
        if not isinstance(shape_, Tensor):
            try:
                dims = [int(d) for d in as_shape(shape_).as_list()]
            except (TypeError, ValueError):
                dims = None
            if dims is not None and math.prod(dims) < 1000:
                return constant(value, dtype=dtype, shape=dims, name=scope)
            shape_ = index_tensor(shape_ if dims is None else dims)
        if shape_.shape.ndims == 0:
            shape_ = reshape(shape_, [-1])
        return fill(shape_, constant(value, dtype=dtype), name=scope)


def zeros(shape, dtype=dtypes.float32, name: str | None = None) -> Tensor:
    """A tensor of `shape` with all elements zero (empty strings for tf.string, False for tf.bool)."""
    dtype = dtypes.as_dtype(dtype)
    zero = "" if dtype is dtypes.string else False if dtype is dtypes.bool_ else 0
    return _filled(shape, dtype, zero, name, "zeros")


def ones(shape, dtype=dtypes.float32, name: str | None = None) -> Tensor:
    """A tensor of `shape` with all elements one (True for tf.bool)."""
    dtype = dtypes.as_dtype(dtype)
    if dtype is dtypes.string:
        raise TypeError("Expected string, but got 1 of type 'int'.")
    return _filled(shape, dtype, True if dtype is dtypes.bool_ else 1, name, "ones")


register_op("ZerosLike", same_as_input(0), dtypes=ARRAY_AND_STRING, reads_shape_only=True, examples=[
    Example(lambda x: zeros_like(x), lambda x: np.full(x.shape, b"") if x.dtype == object else np.zeros_like(x),
            inputs=((2, 3),), differentiable=False),
])
register_op("OnesLike", same_as_input(0), dtypes=dtypes.ARRAY, reads_shape_only=True, examples=[
    Example(lambda x: ones_like(x), np.ones_like, inputs=((2, 3),), differentiable=False),
])
not_differentiable("ZerosLike", "OnesLike")


def _filled_like(op_type: str, make, tensor, dtype, name: str | None, default_name: str) -> Tensor:
    with name_scope(name, default_name, [tensor]) as scope:
        tensor = convert_to_tensor(tensor)
        if dtype is None or dtypes.as_dtype(dtype) is tensor.dtype:
            return get_default_graph().create_op(op_type, [tensor], None, scope).outputs[0]
        filled = make(tensor.shape if tensor.shape.is_fully_defined() else shape(tensor), dtype, name=scope)
        filled.set_shape(tensor.shape)
        return filled


def zeros_like(tensor, dtype=None, name: str | None = None, optimize: bool = True) -> Tensor:
    """Zeros with the shape of `tensor`, in its dtype or `dtype`; tfnb keeps a ZerosLike op where TF folds a known shape."""
    return _filled_like("ZerosLike", zeros, tensor, dtype, name, "zeros_like")


def ones_like(tensor, dtype=None, name: str | None = None, optimize: bool = True) -> Tensor:
    """Ones with the shape of `tensor`, in its dtype or `dtype` (a OnesLike op where TF1 builds Fill)."""
    return _filled_like("OnesLike", ones, tensor, dtype, name, "ones_like")
