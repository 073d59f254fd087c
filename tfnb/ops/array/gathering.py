"""Gathering rows and summing them back: GatherV2 (tf.gather) and the segment sums, each the other's gradient.

The gradient of a gather along axis 0 is sparse (IndexedSlices: the gathered rows' gradients and their
indices); where a dense tensor is needed, rows with the same index are summed (unsorted_segment_sum).
"""

from __future__ import annotations

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.graph import get_default_graph
from tfnb.framework.indexed_slices import IndexedSlices
from tfnb.framework.op_registry import Example, register_gradient, register_op
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape, unknown_shape
from tfnb.ops.array import ranges
from tfnb.ops.array.filling import fill, zeros_like
from tfnb.ops.array.joining import concat, front_axis
from tfnb.ops.array.packing import index_tensor
from tfnb.ops.array.permuting import transpose
from tfnb.ops.array.reshaping import expand_dims, reshape
from tfnb.ops.array.shapes import rank, shape, shape_of, size
from tfnb.ops.constant_op import convert_to_tensor, register_tensor_conversion_function
from tfnb.ops.inference import (
    ARRAY_AND_STRING,
    check_claimed,
    check_dtype_in,
    check_index_input,
    constant_int,
    constant_value,
    normalize_axis,
)
from tfnb.ops.math.arithmetic import maximum
from tfnb.ops.math.comparison import greater_equal
from tfnb.ops.math.select import where_v2


def _infer_gather(op):
    params, indices, axis = op.inputs
    check_claimed(op)
    check_index_input(op, 1, "indices", rank=None)
    check_index_input(op, 2, "axis", rank=0)
    dims, index_dims = params.shape.as_tuple(), indices.shape.as_tuple()
    if dims is None or index_dims is None:
        return [(params.dtype, unknown_shape())]
    if not dims:
        raise ValueError("Shape must be at least rank 1 but is rank 0 for params")
    position = constant_int(axis)
    if position is None:
        return [(params.dtype, unknown_shape(len(dims) + len(index_dims) - 1))]
    position = normalize_axis(position, len(dims))
    return [(params.dtype, TensorShape(dims[:position] + index_dims + dims[position + 1:]))]


register_op("GatherV2", _infer_gather, dtypes=ARRAY_AND_STRING, examples=[
    Example(lambda x, i: gather(x, i), lambda x, i: x[i], inputs=((4, 3), np.array([[0, 3], [1, 1]], np.int32))),
    Example(lambda x, i: gather(x, i, axis=1), lambda x, i: x[:, i], inputs=((2, 3), np.array([2, 0], np.int64))),
    Example(lambda x, i: gather(x, i, axis=-1), lambda x, i: x[..., i], inputs=((2, 3), np.array(1, np.int32))),
    Example(lambda x, i: gather(x, i), lambda x, i: x[i], inputs=((3,), np.zeros([0], np.int32))),
    Example(lambda x, i: gather(x, i, axis=1), lambda x, i: x[:, i], inputs=((2, 3, 2), np.array([[2, 0], [2, 2]]))),
], attrs={"batch_dims": "int"})


@register_gradient("GatherV2")
def _gather_grad(op, grad):
    """Along axis 0, IndexedSlices: the gathered rows' gradients and their indices (TF's sparse gradient)."""
    params, indices, axis = op.inputs
    if constant_int(axis) != 0:
        return [_gather_dense_grad(grad, params, indices, axis), None, None]
    count, tail = indices.shape.num_elements(), params.shape[1:] if params.shape.ndims else None
    if count is not None and tail is not None and tail.is_fully_defined():
        flat, values_shape = [count], [count] + tail.as_list()
    else:
        flat = expand_dims(size(indices), 0)
        values_shape = concat([flat, shape(params)[1:]], 0)
    return [IndexedSlices(reshape(grad, values_shape), reshape(indices, flat), shape_of(params)), None, None]


def _gather_dense_grad(grad: Tensor, params: Tensor, indices: Tensor, axis: Tensor) -> Tensor:
    """The gradient of a gather along another axis: move that axis to the front, sum rows per index, move it back."""
    axis = front_axis(axis, params)
    params_shape = shape(params)
    outer, inner = params_shape[:axis], params_shape[axis + 1:]
    outer_rank, inner_rank = size(outer), size(inner)
    inner_axes = ranges.range(outer_rank + 1, outer_rank + 1 + inner_rank)
    values = reshape(grad, concat([outer, [-1], inner], 0))
    to_front = concat([expand_dims(outer_rank, 0), ranges.range(outer_rank), inner_axes], 0)
    summed = unsorted_segment_sum(transpose(values, to_front), reshape(indices, [-1]), params_shape[axis])
    result = transpose(summed, concat([ranges.range(1, outer_rank + 1), [0], inner_axes], 0))
    result.set_shape(params.shape)
    return result


def gather(params, indices, validate_indices=None, name: str | None = None, axis=None, batch_dims: int = 0) -> Tensor:
    """The slices of `params` along `axis` at `indices` (GatherV2); an index out of range fails the run, as on TF's CPU.

    tfnb supports only batch_dims=0.
    """
    if batch_dims != 0:
        raise ValueError("tfnb's gather supports only batch_dims=0")
    params = convert_to_tensor(params)
    axis = index_tensor(0 if axis is None else axis)
    inputs = [params, index_tensor(indices), axis]
    return get_default_graph().create_op("GatherV2", inputs, {"batch_dims": 0}, name).outputs[0]


# -- segment sums ---------------------------------------------------------------------------------

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
    gathered = gather(params, maximum(ids, 0))
    keep = greater_equal(ids, 0)
    rank_ = params.shape.ndims
    if rank_ != 1:  # keep gets a trailing 1 per slice dim, so it broadcasts against the slices
        trailing = (fill(expand_dims(rank(params) - 1, 0), 1) if rank_ is None
                    else convert_to_tensor([1] * (rank_ - 1), dtype=dtypes.int32))
        keep = reshape(keep, concat([shape(ids), trailing], 0))
    return where_v2(keep, gathered, zeros_like(gathered))


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
    return [gather(grad, op.inputs[1]), None]


# -- sparse gradients made dense ------------------------------------------------------------------

def _dense_from_slices(value: IndexedSlices, dtype=None, name=None, as_ref=False) -> Tensor:
    """The dense tensor an IndexedSlices stands for: its rows summed per index into dense_shape's rows."""
    rows = gather(value.dense_shape, 0)
    dense = unsorted_segment_sum(value.values, value.indices, rows, name=name or "IndexedSlices_to_dense")
    if dtype is not None and dense.dtype is not dtype:
        raise ValueError(f"Cannot convert IndexedSlices of dtype {dense.dtype.name} to {dtype.name}")
    return dense


register_tensor_conversion_function(IndexedSlices, _dense_from_slices)
