"""Shapes: Shape, Size and Rank, and what shape vectors are known to hold while a graph is built.

A shape vector built from `tf.shape(x)`, stacks, concatenations and slices of it keeps, entry by
entry, what is known of it (TF's constant_value_as_shape), so `tf.reshape(x, [tf.shape(x)[0], -1])`
gets a static shape.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.common_shapes import strided_slice_index
from tfnb.framework.graph import get_default_graph
from tfnb.framework.op_registry import Example, not_differentiable, register_op
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape, unknown_shape
from tfnb.ops.constant_op import constant, convert_to_tensor
from tfnb.ops.inference import ARRAY_AND_STRING, check_dtype_in, constant_int, constant_ints, constant_value


def _infer_shape(op):
    check_dtype_in(op, op.attrs["out_type"], dtypes.INDEX, "out_type")
    return [(op.attrs["out_type"], TensorShape([op.inputs[0].shape.ndims]))]


register_op("Shape", _infer_shape, dtypes=ARRAY_AND_STRING, reads_shape_only=True, examples=[
    Example(lambda x: shape(x), lambda x: np.array(x.shape, np.int32), inputs=((2, 3),), differentiable=False),
    Example(lambda x: shape(x, out_type=dtypes.int64), lambda x: np.array(x.shape, np.int64), inputs=((4, 0, 1),),
            differentiable=False),
    Example(lambda x: shape(x), lambda x: np.zeros([0], np.int32), inputs=((),), differentiable=False),
], attrs={"out_type": "type"})
not_differentiable("Shape")


def shape(input, name: str | None = None, out_type=dtypes.int32) -> Tensor:
    """The shape of `input` as a 1-D tensor (a Shape op even where the static shape is known)."""
    attrs = {"out_type": dtypes.as_dtype(out_type)}
    return get_default_graph().create_op("Shape", [convert_to_tensor(input)], attrs, name).outputs[0]


def _infer_size(op):
    check_dtype_in(op, op.attrs["out_type"], dtypes.INDEX, "out_type")
    return [(op.attrs["out_type"], TensorShape([]))]


register_op("Size", _infer_size, dtypes=ARRAY_AND_STRING, reads_shape_only=True, examples=[
    Example(lambda x: size(x), lambda x: np.array(x.size, np.int32), inputs=((2, 3),), differentiable=False),
    Example(lambda x: size(x, out_type=dtypes.int64), lambda x: np.array(x.size, np.int64), inputs=((3, 0),),
            differentiable=False),
], attrs={"out_type": "type"})
not_differentiable("Size")


def size(input, name: str | None = None, out_type=dtypes.int32) -> Tensor:
    """The number of elements of `input`, as a scalar tensor (a Size op where TF1 folds a known shape)."""
    attrs = {"out_type": dtypes.as_dtype(out_type)}
    return get_default_graph().create_op("Size", [convert_to_tensor(input)], attrs, name).outputs[0]


def _infer_rank(op):
    return [(dtypes.int32, TensorShape([]))]


register_op("Rank", _infer_rank, dtypes=ARRAY_AND_STRING, reads_shape_only=True, examples=[
    Example(lambda x: rank(x), lambda x: np.array(x.ndim, np.int32), inputs=((2, 1, 3),), differentiable=False),
    Example(lambda x: rank(x), lambda x: np.array(0, np.int32), inputs=((),), differentiable=False),
])
not_differentiable("Rank")


def rank(input, name: str | None = None) -> Tensor:
    """The number of dimensions of `input`, as a scalar int32 tensor (a Rank op where TF1 folds a known rank)."""
    return get_default_graph().create_op("Rank", [convert_to_tensor(input)], None, name).outputs[0]


def shape_of(x: Tensor, dtype: dtypes.DType = dtypes.int32) -> Tensor:
    """x's shape as a 1-D tensor of `dtype`: a constant when it is known while building, so no Shape op runs."""
    if x.shape.is_fully_defined():
        return constant(x.shape.as_list(), dtype=dtype)
    return shape(x, out_type=dtype)


# -- shape vectors known while building -----------------------------------------------------------

@dataclass(frozen=True, eq=False)
class DimOf:
    """Dim `index` of `tensor` (from tf.shape(tensor)): unknown while building, but the same wherever it is used."""

    tensor: Tensor
    index: int


def shape_elements(tensor: Tensor) -> list | None:
    """The entries of a 1-D int tensor as far as they are known while building (TF's constant_value_as_shape).

    Each entry is an int, a DimOf, or None; the result is None when even the length is unknown. Follows
    tf.shape, Pack, ConcatV2 and StridedSlice, so `[tf.shape(x)[0], -1]` keeps that its first entry is x's dim 0.
    """
    if tensor.shape.ndims not in (None, 1):
        return None
    value = constant_value(tensor)
    if value is not None:
        return [int(v) for v in np.reshape(value, [-1])]
    op = tensor.op
    if op.type == "Shape":
        dims = op.inputs[0].shape.as_tuple()
        return None if dims is None else [DimOf(op.inputs[0], k) if d is None else d for k, d in enumerate(dims)]
    if op.type == "Pack" and op.inputs[0].shape.ndims == 0:
        return [_scalar_element(t) for t in op.inputs]
    if op.type == "ConcatV2" and constant_int(op.inputs[-1]) in (0, -1):
        parts = [shape_elements(t) for t in op.inputs[:-1]]
        return None if any(p is None for p in parts) else [e for p in parts for e in p]
    if op.type == "StridedSlice":
        picked = _sliced_elements(op)
        if isinstance(picked, list):
            return picked
    if op.type in ("Identity", "Cast"):
        return shape_elements(op.inputs[0])
    dims = tensor.shape.as_tuple()
    return [None] * dims[0] if dims is not None and len(dims) == 1 and dims[0] is not None else None


# Integer arithmetic on known shape elements, as TF's shape inference folds `tf.shape(x)[1] // 2`.
_ELEMENT_ARITHMETIC = {"Add": operator.add, "Sub": operator.sub, "Mul": operator.mul, "FloorDiv": operator.floordiv}


def _scalar_element(tensor: Tensor):
    value = constant_value(tensor)
    if value is not None:
        return int(value) if np.ndim(value) == 0 else None
    if tensor.op.type == "StridedSlice":
        picked = _sliced_elements(tensor.op)
        return None if isinstance(picked, list) else picked
    if tensor.op.type in _ELEMENT_ARITHMETIC:
        x, y = (_scalar_element(t) for t in tensor.op.inputs)
        if type(x) is int and type(y) is int and (y != 0 or tensor.op.type != "FloorDiv"):
            return _ELEMENT_ARITHMETIC[tensor.op.type](x, y)
    return None


def _sliced_elements(op):
    """What a StridedSlice with known bounds picks from a vector of shape elements: a list, or one element."""
    source = shape_elements(op.inputs[0])
    bounds = [constant_ints(t) for t in op.inputs[1:]]
    if source is None or any(b is None for b in bounds):
        return None
    vector = np.empty(len(source), dtype=object)
    vector[:] = source
    try:
        return vector[strided_slice_index(op.attrs)(*bounds)].tolist()
    except (IndexError, ValueError):
        return None


def shape_from(tensor: Tensor) -> TensorShape:
    """The static shape that a 1-D shape tensor describes, as far as it is known while building."""
    elements = shape_elements(tensor)
    if elements is None:
        return unknown_shape()
    return TensorShape([e if isinstance(e, int) and e >= 0 else None for e in elements])
