"""Selection by a condition: Select (tf.where with x and y), SelectV2 (broadcasting), and Where (true coordinates)."""

from __future__ import annotations

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.op_registry import Example, not_differentiable, register_gradient, register_op
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape
from tfnb.ops.array.filling import zeros_like
from tfnb.ops.broadcast_grad import sum_to_shape_of
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.inference import broadcast_shapes, check_dtype_in, check_same_dtype
from tfnb.ops.math.operands import convert_pair, create, to_tensor


def _infer_select(op):
    condition, x, y = op.inputs
    check_dtype_in(op, condition.dtype, (dtypes.bool_,), "condition")
    dtype = check_same_dtype(op, 1, 2)
    check_dtype_in(op, dtype, op.op_def.dtypes)
    shape = x.shape.merge_with(y.shape)
    rank, condition_rank = shape.ndims, condition.shape.ndims
    if rank is None or condition_rank is None or condition_rank == 0:
        return [(dtype, shape)]
    if condition_rank == 1 and rank > 1:
        if not condition.shape[0].is_compatible_with(shape[0]):
            raise ValueError(f"A vector condition must match the first dimension of x, but has {condition.shape[0]} "
                             f"elements for x of shape {shape}")
        return [(dtype, TensorShape([condition.shape[0].merge_with(shape[0])]).concatenate(shape[1:]))]
    return [(dtype, shape.merge_with(condition.shape))]


def _infer_select_v2(op):
    condition, x, y = op.inputs
    check_dtype_in(op, condition.dtype, (dtypes.bool_,), "condition")
    dtype = check_same_dtype(op, 1, 2)
    check_dtype_in(op, dtype, op.op_def.dtypes)
    return [(dtype, broadcast_shapes(condition.shape, broadcast_shapes(x.shape, y.shape)))]


def _infer_where(op):
    check_dtype_in(op, op.inputs[0].dtype, op.op_def.dtypes)
    return [(dtypes.int64, TensorShape([None, op.inputs[0].shape.ndims]))]


_MASK = np.array([[True, False, True], [False, False, True]])
register_op("Select", _infer_select, dtypes=dtypes.ARRAY + (dtypes.string,), examples=[
    Example(lambda c, x, y: where(c, x, y), np.where, inputs=(_MASK, (2, 3), (2, 3))),
    Example(lambda c, x, y: where(c, x, y), lambda c, x, y: np.where(c[:, None, None], x, y),
            inputs=(np.array([False, True]), (2, 3, 2), (2, 3, 2))),
    Example(lambda c, x, y: where(c, x, y), np.where, inputs=(np.array(True), (3,), (3,))),
])


@register_gradient("Select")
def _select_grad(op, grad):
    """The gradient goes to x where the condition holds and to y elsewhere; the condition gets none."""
    condition, x, _ = op.inputs
    zeros = zeros_like(x)
    return [None, where(condition, grad, zeros), where(condition, zeros, grad)]


register_op("SelectV2", _infer_select_v2, dtypes=dtypes.ARRAY + (dtypes.string,), examples=[
    Example(lambda c, x, y: where_v2(c, x, y), np.where, inputs=(_MASK[0], (2, 1), ())),
    Example(lambda c, x, y: where_v2(c, x, y), np.where, inputs=(_MASK[:, :1], (3,), (2, 1))),
])


@register_gradient("SelectV2")
def _select_v2_grad(op, grad):
    """As Select's, each part summed back to the shape of x or y."""
    condition, x, y = op.inputs
    return [None, sum_to_shape_of(where_v2(condition, grad, 0), x), sum_to_shape_of(where_v2(condition, 0, grad), y)]


register_op("Where", _infer_where, dtypes=dtypes.ARRAY, examples=[
    Example(lambda c: where(c), np.argwhere, inputs=(_MASK,), differentiable=False),
    Example(lambda x: where(x), np.argwhere, inputs=((2, 2, 3),), low=-1, high=1, differentiable=False),
])
not_differentiable("Where")


def where(condition, x=None, y=None, name: str | None = None) -> Tensor:
    """With x and y: x where condition is true, else y (TF1's Select); alone: the int64 coordinates of true elements.

    With x and y, condition has x's shape, or is a vector picking whole rows of x, or a scalar.
    """
    if x is None and y is None:
        return create("Where", (convert_to_tensor(condition, preferred_dtype=dtypes.bool_),), None, name)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    return create("Select", (to_tensor(condition, dtypes.bool_), *convert_pair(x, y)), None, name)


def where_v2(condition, x=None, y=None, name: str | None = None) -> Tensor:
    """Like `where`, but condition, x and y broadcast against each other (TF2's tf.where)."""
    if x is None and y is None:
        return where(condition, name=name)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    return create("SelectV2", (to_tensor(condition, dtypes.bool_), *convert_pair(x, y)), None, name)
