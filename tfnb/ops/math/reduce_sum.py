"""Sum over axes (reduce_sum), and the rules every reduction shares: axes, static shape, cost, example cases.

Sum sits below the other reductions: summing a gradient back over broadcast axes (tfnb/ops/broadcast_grad.py)
needs it, and so do the gradients of Tile and Fill. Its own gradient tiles, so it is registered with the other
reductions' gradients in tfnb/ops/math/reductions.py.
"""

from __future__ import annotations

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.op_registry import Example, register_op
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape, unknown_shape
from tfnb.ops.array import ranges
from tfnb.ops.array.shapes import rank
from tfnb.ops.constant_op import constant, convert_to_tensor
from tfnb.ops.inference import check_dtype_in, constant_value, deprecated_alias, elements_for_cost
from tfnb.ops.math.operands import create, to_tensor


def reduced_shape(shape: TensorShape, axes: Tensor, keep_dims: bool) -> TensorShape:
    """The static shape after reducing `shape` over the axes tensor's value, as far as it is known."""
    value = constant_value(axes)
    rank_ = shape.ndims
    if value is None or rank_ is None:
        return unknown_shape(rank_ if keep_dims else None)
    reduced = set()
    for axis in np.reshape(value, [-1]).tolist():
        if not -rank_ <= axis < rank_:
            raise ValueError(f"Invalid reduction dimension {axis} for input with {rank_} dimensions")
        reduced.add(axis % rank_)
    dims = shape.as_tuple()
    if keep_dims:
        return TensorShape([1 if i in reduced else d for i, d in enumerate(dims)])
    return TensorShape([d for i, d in enumerate(dims) if i not in reduced])


def infer_reduction(op) -> list:
    """Infer rule of the reductions over an axes input (Sum, Mean, Max, ...), with their keep_dims attr."""
    x, axes = op.inputs
    check_dtype_in(op, x.dtype, op.op_def.dtypes)
    check_dtype_in(op, axes.dtype, dtypes.INDEX, "reduction_indices")
    return [(x.dtype, reduced_shape(x.shape, axes, op.attrs["keep_dims"]))]


def reduction_cost(op) -> float:
    """A reduction reads every element of its input once."""
    return elements_for_cost(op.inputs[0].shape)


def _reduction_axes(x: Tensor, axis) -> Tensor:
    """The axes to reduce as an int32 tensor; None means every axis."""
    if axis is not None:
        return to_tensor(axis, dtypes.int32)
    if x.shape.ndims is not None:
        return constant(np.arange(x.shape.ndims, dtype=np.int32))
    return ranges.range(0, rank(x))


def reduction(op_type: str, input_tensor, axis, keepdims, name, reduction_indices, keep_dims) -> Tensor:
    """A reduction op over `axis` (all axes if None), with TF1's older argument names accepted."""
    axis = deprecated_alias("axis", axis, "reduction_indices", reduction_indices)
    keepdims = bool(deprecated_alias("keepdims", keepdims, "keep_dims", keep_dims))
    x = convert_to_tensor(input_tensor)
    result = create(op_type, (x, _reduction_axes(x, axis)), {"keep_dims": keepdims}, name)
    if axis is None and not keepdims:
        result.set_shape(())
    return result


def reduction_examples(build, reference, differentiable: bool) -> list[Example]:
    """Reductions over all axes, one axis, negative axes with keepdims, TF1's old argument names, no axes."""
    cases = [(lambda x: build(x), lambda x: reference(x), (2, 3)),
             (lambda x: build(x, axis=1), lambda x: reference(x, axis=1), (2, 3)),
             (lambda x: build(x, axis=[0, -1], keepdims=True), lambda x: reference(x, axis=(0, 2), keepdims=True),
              (2, 3, 2)),
             (lambda x: build(x, reduction_indices=-2, keep_dims=True), lambda x: reference(x, axis=0, keepdims=True),
              (2, 3)),
             (lambda x: build(x, axis=[]), lambda x: reference(x, axis=()), (3,))]
    return [Example(b, r, inputs=(shape,), differentiable=differentiable) for b, r, shape in cases]


def reduce_sum(input_tensor, axis=None, keepdims=None, name: str | None = None, reduction_indices=None,
               keep_dims=None) -> Tensor:
    """The sum over `axis` (an int, a list, or None for all axes); keepdims keeps reduced axes as size 1."""
    return reduction("Sum", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def _np_sum(x, axis=None, keepdims=False):
    return np.sum(x, axis=axis, keepdims=keepdims, dtype=x.dtype)


register_op("Sum", infer_reduction, dtypes=dtypes.NUMERIC, cost=reduction_cost,
            examples=reduction_examples(lambda *a, **k: reduce_sum(*a, **k), _np_sum, differentiable=True),
            attrs={"keep_dims": "bool"})
