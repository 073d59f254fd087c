"""Reshaping: the same elements in a new shape (Reshape), with a size-1 dimension added (ExpandDims) or removed
(Squeeze)."""

from __future__ import annotations

import math
import numbers

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.graph import get_default_graph
from tfnb.framework.op_registry import Example, register_gradient, register_op
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape, unknown_shape
from tfnb.ops.array.packing import index_tensor
from tfnb.ops.array.shapes import DimOf, shape, shape_elements, shape_of
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.inference import (
    ARRAY_AND_STRING,
    check_claimed,
    check_index_input,
    constant_int,
    deprecated_alias,
)


def _describe(elements: list) -> str:
    return "[" + ",".join(str(e) if isinstance(e, int) else "?" for e in elements) + "]"


def _reshaped_dims(x: Tensor, out: list) -> list:
    """Static dims of x reshaped to the shape elements `out`, inferring its -1 where the known dims allow."""
    if sum(1 for e in out if e == -1) > 1:
        raise ValueError(f"Cannot infer multiple unknown dimensions in shape {_describe(out)}")
    for i, e in enumerate(out):
        if isinstance(e, int) and e < -1:
            raise ValueError(f"Size {i} must be non-negative, not {e}")
    dims = [e if isinstance(e, int) and e >= 0 else None for e in out]
    if x.shape.ndims is None:
        return dims
    # An entry that is tf.shape(x)[k] cancels x's dim k: both are the same number, known or not.
    rest_in = dict(enumerate(x.shape.as_tuple()))
    rest_out = []
    for e in out:
        if isinstance(e, DimOf) and e.tensor is x and e.index in rest_in:
            del rest_in[e.index]
        else:
            rest_out.append(e)
    if None in rest_in.values() or any(not isinstance(e, int) for e in rest_out):
        return dims
    known_in = math.prod(rest_in.values())
    known_out = math.prod(e for e in rest_out if e != -1)
    if -1 not in rest_out:
        if known_in != known_out:
            raise ValueError(f"Cannot reshape a tensor with {known_in} elements to shape {_describe(out)} "
                             f"({known_out} elements)")
    elif known_out > 0:
        if known_in % known_out:
            raise ValueError(f"Cannot reshape a tensor with {known_in} elements to shape {_describe(out)}: "
                             f"{known_in} is not a multiple of {known_out}")
        dims[out.index(-1)] = known_in // known_out
    return dims


def _infer_reshape(op):
    x, shape_ = op.inputs
    check_claimed(op)
    check_index_input(op, 1, "shape")
    out = shape_elements(shape_)
    return [(x.dtype, unknown_shape() if out is None else TensorShape(_reshaped_dims(x, out)))]


register_op("Reshape", _infer_reshape, dtypes=ARRAY_AND_STRING, forwards_input=0, examples=[
    Example(lambda x: reshape(x, [3, -1]), lambda x: x.reshape(3, -1), inputs=((2, 3, 2),)),
    # A fetched 0-d string is bytes, which the generic test cannot check as tf.string: these examples skip it.
    Example(lambda x: reshape(x, []), lambda x: x.reshape(()), inputs=((1, 1),), dtypes=dtypes.ARRAY),
    Example(lambda x: reshape(x, [shape(x)[0], -1]), lambda x: x.reshape(2, -1), inputs=((2, 3, 4),)),
    Example(lambda x, s: reshape(x, s), lambda x, s: x.reshape(s), inputs=((2, 6), np.array([4, -1, 3], np.int64))),
])


@register_gradient("Reshape")
def _reshape_grad(op, grad):
    return [reshape(grad, shape_of(op.inputs[0])), None]


def reshape(tensor, shape, name: str | None = None) -> Tensor:
    """`tensor` with its elements in a new shape; one entry of `shape` may be -1, inferred from the size."""
    tensor = convert_to_tensor(tensor)
    return get_default_graph().create_op("Reshape", [tensor, index_tensor(shape)], None, name).outputs[0]


def _infer_expand_dims(op):
    x, dim = op.inputs
    check_claimed(op)
    check_index_input(op, 1, "dim", rank=None)
    if dim.shape.num_elements() not in (None, 1):
        raise ValueError(f"'dim' input must be a tensor with a single value, got shape {dim.shape}")
    dims, axis = x.shape.as_tuple(), constant_int(dim)
    if dims is None:
        return [(x.dtype, unknown_shape())]
    if axis is None:
        return [(x.dtype, unknown_shape(len(dims) + 1))]
    if not -len(dims) - 1 <= axis <= len(dims):
        raise ValueError(f"Tried to expand dim index {axis} for tensor with {len(dims)} dimensions.")
    axis = axis + len(dims) + 1 if axis < 0 else axis
    return [(x.dtype, TensorShape(dims[:axis] + (1,) + dims[axis:]))]


register_op("ExpandDims", _infer_expand_dims, dtypes=ARRAY_AND_STRING, forwards_input=0, examples=[
    Example(lambda x: expand_dims(x, 0), lambda x: x[None], inputs=((2, 3),)),
    Example(lambda x: expand_dims(x, -1), lambda x: x[..., None], inputs=((2, 3),)),
    Example(lambda x: expand_dims(x, dim=1), lambda x: x[:, None], inputs=((2, 3),)),
    Example(lambda x: expand_dims(x, [0]), lambda x: x[None], inputs=((),)),
])


@register_gradient("ExpandDims")
def _expand_dims_grad(op, grad):
    return [reshape(grad, shape_of(op.inputs[0])), None]


def expand_dims(input, axis=None, name: str | None = None, dim=None) -> Tensor:
    """`input` with a new dimension of size 1 inserted at `axis` (TF1 also calls it `dim`)."""
    axis = deprecated_alias("axis", axis, "dim", dim)
    if axis is None:
        raise ValueError("Must specify an axis argument to tf.expand_dims()")
    inputs = [convert_to_tensor(input), index_tensor(axis)]
    return get_default_graph().create_op("ExpandDims", inputs, None, name).outputs[0]


def _infer_squeeze(op):
    x = op.inputs[0]
    check_claimed(op)
    dims = x.shape.as_tuple()
    if dims is None:
        return [(x.dtype, unknown_shape())]
    axes = set()
    for axis in op.attrs["squeeze_dims"]:
        if not -len(dims) <= axis < len(dims):
            raise ValueError(f"Tried to squeeze dim index {axis} for tensor with {len(dims)} dimensions.")
        axis %= len(dims)
        if dims[axis] not in (None, 1):
            raise ValueError(f"Can not squeeze dim[{axis}], expected a dimension of 1, got {dims[axis]}")
        axes.add(axis)
    if axes:
        return [(x.dtype, TensorShape([d for i, d in enumerate(dims) if i not in axes]))]
    if None in dims:
        # Any unknown dim may turn out to be 1 and be squeezed, so even the rank is unknown.
        return [(x.dtype, unknown_shape())]
    return [(x.dtype, TensorShape([d for d in dims if d != 1]))]


register_op("Squeeze", _infer_squeeze, dtypes=ARRAY_AND_STRING, forwards_input=0, examples=[
    Example(lambda x: squeeze(x), np.squeeze, inputs=((1, 3, 1),)),
    Example(lambda x: squeeze(x, [0]), lambda x: x[0], inputs=((1, 3, 1),)),
    Example(lambda x: squeeze(x, axis=-1), lambda x: x[..., 0], inputs=((2, 1),)),
    Example(lambda x: squeeze(x, squeeze_dims=[0, 2]), lambda x: x[0, :, 0], inputs=((1, 2, 1),)),
], attrs={"squeeze_dims": "list(int)"})


@register_gradient("Squeeze")
def _squeeze_grad(op, grad):
    return [reshape(grad, shape_of(op.inputs[0]))]


def squeeze(input, axis=None, name: str | None = None, squeeze_dims=None) -> Tensor:
    """`input` without its size-1 dimensions (only those in `axis`, if given; TF1 also calls it `squeeze_dims`)."""
    axis = deprecated_alias("axis", axis, "squeeze_dims", squeeze_dims)
    axes = [axis] if isinstance(axis, numbers.Integral) else list(axis or ())
    attrs = {"squeeze_dims": [int(a) for a in axes]}
    return get_default_graph().create_op("Squeeze", [convert_to_tensor(input)], attrs, name).outputs[0]
