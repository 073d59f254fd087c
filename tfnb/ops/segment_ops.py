"""Segment ops: sums over segments of rows (the dense form of sparse gradients, per-segment totals)."""

from __future__ import annotations

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.graph import get_default_graph
from tfnb.framework.op_registry import Example, register_gradient, register_op
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape, unknown_shape
from tfnb.ops import array_ops, math_ops
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.inference import check_dtype_in, constant_value

__all__ = ["unsorted_segment_sum", "segment_sum"]


def _segment_shape(op, data: Tensor, segment_ids: Tensor, rows: int | None) -> TensorShape:
    """[rows] + the dims of data after those that segment_ids covers; segment_ids' shape must prefix data's."""
    check_dtype_in(op, data.dtype, op.op_def.dtypes, "data")
    check_dtype_in(op, segment_ids.dtype, dtypes.INDEX, "segment_ids")
    data_dims, id_dims = data.shape.as_tuple(), segment_ids.shape.as_tuple()
    if data_dims is None or id_dims is None:
        return unknown_shape()
    if not TensorShape(data_dims[:len(id_dims)]).is_compatible_with(TensorShape(id_dims)):
        raise ValueError(f"segment_ids.shape = {segment_ids.shape} does not prefix data.shape = {data.shape}")
    return TensorShape((rows,) + data_dims[len(id_dims):])


def _infer_unsorted_segment_sum(op):
    data, segment_ids, num_segments = op.inputs
    check_dtype_in(op, num_segments.dtype, dtypes.INDEX, "num_segments")
    if num_segments.shape.ndims not in (None, 0):
        raise ValueError(f"num_segments must be a scalar; got shape {num_segments.shape}")
    value = constant_value(num_segments)
    return [(data.dtype, _segment_shape(op, data, segment_ids, None if value is None else int(value)))]


def _np_unsorted_segment_sum(data, segment_ids, num_segments):
    out = np.zeros((int(num_segments),) + data.shape[segment_ids.ndim:], data.dtype)
    kept = segment_ids >= 0
    np.add.at(out, segment_ids[kept], data[kept])
    return out


_IDS = np.array([0, 2, 0, 4, 2, 2], np.int32)

register_op("UnsortedSegmentSum", _infer_unsorted_segment_sum, dtypes=dtypes.NUMERIC, examples=[
    Example(lambda x: unsorted_segment_sum(x, _IDS, 5), lambda x: _np_unsorted_segment_sum(x, _IDS, 5),
            inputs=((6, 3),)),
    Example(lambda x: unsorted_segment_sum(x, [[3, 0, -1], [1, 3, 0]], 4),
            lambda x: _np_unsorted_segment_sum(x, np.array([[3, 0, -1], [1, 3, 0]]), 4), inputs=((2, 3, 2),)),
    Example(lambda x, i, n: unsorted_segment_sum(x, i, n), _np_unsorted_segment_sum,
            inputs=((5,), np.array([1, -1, 1, 0, -3], np.int64), np.array(3, np.int64)), differentiable=False),
    Example(lambda x, i, n: unsorted_segment_sum(x, i, n), _np_unsorted_segment_sum,
            inputs=((0, 4), np.zeros([0], np.int32), np.array(2, np.int32)), differentiable=False),
])


def unsorted_segment_sum(data, segment_ids, num_segments, name: str | None = None) -> Tensor:
    """Row i of the result sums the slices data[j] with segment_ids[j] == i; negative ids are dropped.

    An id >= num_segments fails the run with InvalidArgumentError, as on TF's CPU.
    """
    inputs = (convert_to_tensor(data), convert_to_tensor(segment_ids),
              convert_to_tensor(num_segments, preferred_dtype=dtypes.int32))
    return get_default_graph().create_op("UnsortedSegmentSum", inputs, None, name).outputs[0]


@register_gradient("UnsortedSegmentSum")
def _unsorted_segment_sum_grad(op, grad):
    """Each slice of data receives the gradient row of its segment; dropped slices receive zeros."""
    return [_gather_drop_negatives(grad, op.inputs[1]), None, None]


def _gather_drop_negatives(params: Tensor, ids: Tensor) -> Tensor:
    """gather(params, ids), with zero slices where an id is negative."""
    gathered = array_ops.gather(params, math_ops.maximum(ids, 0))
    keep = math_ops.greater_equal(ids, 0)
    rank = params.shape.ndims
    if rank != 1:  # keep gets a trailing 1 per slice dim, so it broadcasts against the slices
        trailing = (array_ops.fill(array_ops.expand_dims(array_ops.rank(params) - 1, 0), 1) if rank is None
                    else convert_to_tensor([1] * (rank - 1), dtype=dtypes.int32))
        keep = array_ops.reshape(keep, array_ops.concat([array_ops.shape(ids), trailing], 0))
    return math_ops.where_v2(keep, gathered, array_ops.zeros_like(gathered))


def _infer_segment_sum(op):
    data, segment_ids = op.inputs
    if segment_ids.shape.ndims not in (None, 1):
        raise ValueError(f"segment_ids must be a vector; got shape {segment_ids.shape}")
    ids, rows = constant_value(segment_ids), None
    if ids is not None:  # TF leaves the rows unknown; a constant tells them
        rows = int(ids[-1]) + 1 if ids.size else 0
    return [(data.dtype, _segment_shape(op, data, segment_ids, rows))]


def _np_segment_sum(data, segment_ids):
    return _np_unsorted_segment_sum(data, segment_ids, segment_ids[-1] + 1 if segment_ids.size else 0)


register_op("SegmentSum", _infer_segment_sum, dtypes=dtypes.NUMERIC, examples=[
    Example(lambda x: segment_sum(x, [0, 0, 1, 3, 3]), lambda x: _np_segment_sum(x, np.array([0, 0, 1, 3, 3])),
            inputs=((5, 2),)),
    Example(lambda x, i: segment_sum(x, i), _np_segment_sum, inputs=((3,), np.array([1, 1, 2], np.int64)),
            differentiable=False),
])


def segment_sum(data, segment_ids, name: str | None = None) -> Tensor:
    """Row i sums the slices data[j] with segment_ids[j] == i; ids must be sorted and non-negative."""
    inputs = (convert_to_tensor(data), convert_to_tensor(segment_ids))
    return get_default_graph().create_op("SegmentSum", inputs, None, name).outputs[0]


@register_gradient("SegmentSum")
def _segment_sum_grad(op, grad):
    return [array_ops.gather(grad, op.inputs[1]), None]
