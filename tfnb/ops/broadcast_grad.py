"""Undoing broadcasting in gradients: sum a gradient back to the shape of the input it flows to.

Every broadcasting op's gradient rule uses it (the elementwise binary ops, SelectV2, batched matmul,
einsum), so it sits below them, on the ops it builds: Sum, Reshape and Shape.
"""

from __future__ import annotations

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.graph import get_default_graph
from tfnb.framework.op_registry import Example, not_differentiable, register_op
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape
from tfnb.ops.array.reshaping import reshape
from tfnb.ops.array.shapes import shape
from tfnb.ops.math.reduce_sum import reduce_sum


def _infer_broadcast_gradient_args(op):
    return [(dtypes.int32, TensorShape([None])), (dtypes.int32, TensorShape([None]))]


def _np_broadcast_args(x, y):
    rank = max(len(x), len(y))
    x = np.concatenate([np.ones(rank - len(x), x.dtype), x])
    y = np.concatenate([np.ones(rank - len(y), y.dtype), y])
    out = np.maximum(x, y)
    return [i for i in range(rank) if x[i] == 1 and out[i] != 1], [i for i in range(rank) if y[i] == 1 and out[i] != 1]


register_op("BroadcastGradientArgs", _infer_broadcast_gradient_args, dtypes=(dtypes.int32,), examples=[
    Example(lambda x, y: broadcast_gradient_args(x, y),
            lambda x, y: [np.array(a, np.int32) for a in _np_broadcast_args(x, y)],
            inputs=(np.array([2, 1, 3], np.int32), np.array([4, 3], np.int32)), differentiable=False),
])
not_differentiable("BroadcastGradientArgs")


def broadcast_gradient_args(shape_x: Tensor, shape_y: Tensor) -> tuple[Tensor, Tensor]:
    """The axes to sum a gradient over to undo broadcasting shape_x with shape_y (for x, and for y)."""
    op = get_default_graph().create_op("BroadcastGradientArgs", (shape_x, shape_y), None, "BroadcastGradientArgs")
    return op.outputs[0], op.outputs[1]


def sum_to_shape_of(grad: Tensor, like: Tensor) -> Tensor:
    """`grad` summed over the axes along which `like` was broadcast, reshaped to like's shape."""
    grad_dims, like_dims = grad.shape.as_tuple(), like.shape.as_tuple()
    if grad_dims is not None and like_dims is not None and grad_dims == like_dims and None not in like_dims:
        return grad
    if grad_dims is not None and like_dims is not None and None not in grad_dims and None not in like_dims:
        lead = len(grad_dims) - len(like_dims)
        axes = list(range(lead)) + [lead + i for i, d in enumerate(like_dims) if d == 1 and grad_dims[lead + i] != 1]
        summed = reduce_sum(grad, axes) if axes else grad
        return summed if summed.shape.as_tuple() == like_dims else reshape(summed, list(like_dims))
    axes, _ = broadcast_gradient_args(shape(like), shape(grad))
    return reshape(reduce_sum(grad, axes), shape(like))


def sum_to_inputs(op, grad_x: Tensor, grad_y: Tensor) -> list:
    """The gradients of a broadcasting binary op, each summed back to the shape of its input."""
    x, y = op.inputs
    return [sum_to_shape_of(grad_x, x), sum_to_shape_of(grad_y, y)]
