"""Reductions over axes (Mean, Prod, Max, Min, Any, All, reduce_logsumexp; ArgMax, ArgMin) and their gradients.

A reduction's gradient is spread back over the axes it removed: the incoming gradient is reshaped to
keep those axes as size 1 and tiled along them. Shapes known while building give constant shapes;
otherwise they are computed from tf.shape at run time. Sum's row lives below, in
tfnb/ops/math/reduce_sum.py (broadcasting gradients, Tile's and Fill's need it); its gradient is here.
"""

from __future__ import annotations

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.graph import name_scope
from tfnb.framework.op_registry import Example, no_gradient, not_differentiable, register_gradient, register_op
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import unknown_shape
from tfnb.ops.array import ranges
from tfnb.ops.array.filling import ones_like
from tfnb.ops.array.gathering import gather
from tfnb.ops.array.identity import stop_gradient
from tfnb.ops.array.joining import concat
from tfnb.ops.array.permuting import transpose
from tfnb.ops.array.reshaping import expand_dims, reshape
from tfnb.ops.array.shapes import rank, shape, size
from tfnb.ops.array.tiling import tile
from tfnb.ops.constant_op import constant, convert_to_tensor
from tfnb.ops.inference import check_dtype_in, constant_value, deprecated_alias
from tfnb.ops.math.arithmetic import add, div, floordiv, floormod, maximum, realdiv, subtract
from tfnb.ops.math.cast import cast
from tfnb.ops.math.comparison import equal, logical_not
from tfnb.ops.math.operands import create, to_tensor
from tfnb.ops.math.reduce_sum import (
    infer_reduction,
    reduce_sum,
    reduced_shape,
    reduction,
    reduction_cost,
    reduction_examples,
)
from tfnb.ops.math.scans import cumprod
from tfnb.ops.math.select import where, where_v2
from tfnb.ops.math.unary import conj, exp, is_finite, log


def reduce_mean(input_tensor, axis=None, keepdims=None, name: str | None = None, reduction_indices=None,
                keep_dims=None) -> Tensor:
    """The mean over `axis`; for integers the division truncates toward zero, as in TF."""
    return reduction("Mean", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_max(input_tensor, axis=None, keepdims=None, name: str | None = None, reduction_indices=None,
               keep_dims=None) -> Tensor:
    """The maximum over `axis` (-inf, or the dtype's minimum, over no elements)."""
    return reduction("Max", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_min(input_tensor, axis=None, keepdims=None, name: str | None = None, reduction_indices=None,
               keep_dims=None) -> Tensor:
    """The minimum over `axis` (+inf, or the dtype's maximum, over no elements)."""
    return reduction("Min", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_prod(input_tensor, axis=None, keepdims=None, name: str | None = None, reduction_indices=None,
                keep_dims=None) -> Tensor:
    """The product over `axis`."""
    return reduction("Prod", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_any(input_tensor, axis=None, keepdims=None, name: str | None = None, reduction_indices=None,
               keep_dims=None) -> Tensor:
    """Logical OR over `axis`, for bool tensors."""
    return reduction("Any", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_all(input_tensor, axis=None, keepdims=None, name: str | None = None, reduction_indices=None,
               keep_dims=None) -> Tensor:
    """Logical AND over `axis`, for bool tensors."""
    return reduction("All", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_logsumexp(input_tensor, axis=None, keepdims=None, name: str | None = None, reduction_indices=None,
                     keep_dims=None) -> Tensor:
    """log(sum(exp(x))) over `axis`, computed stably by subtracting the (finite) maximum first."""
    axis = deprecated_alias("axis", axis, "reduction_indices", reduction_indices)
    keepdims = bool(deprecated_alias("keepdims", keepdims, "keep_dims", keep_dims))
    with name_scope(name, "ReduceLogSumExp", [input_tensor]) as scope:
        x = convert_to_tensor(input_tensor)
        raw_max = reduce_max(x, axis, keepdims=True)
        shift = stop_gradient(where_v2(is_finite(raw_max), raw_max, constant(0, dtype=x.dtype)))
        result = log(reduce_sum(exp(subtract(x, shift)), axis, keepdims=keepdims))
        if not keepdims:
            shift = reduce_sum(shift, axis)  # drops the reduced size-1 axes
        return add(result, shift, name=scope)  # named as the scope itself, as TF names it


def _np_mean(x, axis=None, keepdims=False):
    if x.dtype.kind in "iu":
        return np.trunc(np.mean(x, axis=axis, dtype=np.float64, keepdims=keepdims)).astype(x.dtype)
    return np.mean(x, axis=axis, keepdims=keepdims)


def _np_prod(x, axis=None, keepdims=False):
    return np.prod(x, axis=axis, keepdims=keepdims, dtype=x.dtype)


# -- gradients ------------------------------------------------------------------------------------

def _reduced_axes_mask(x: Tensor, axes: Tensor) -> Tensor:
    """A bool vector over x's axes, true for those that `axes` reduces."""
    value, rank_ = constant_value(axes), x.shape.ndims
    if value is not None and rank_ is not None:
        reduced = {int(a) % rank_ for a in np.reshape(value, [-1])}
        return constant(np.array([i in reduced for i in range(rank_)], dtype=bool))
    rank_ = rank(x)
    axes = floormod(reshape(cast(axes, dtypes.int32), [-1]), rank_)
    matches = equal(expand_dims(ranges.range(rank_), 1), expand_dims(axes, 0))
    return reduce_any(matches, axis=1)


def _kept_dims_shape(x: Tensor, axes: Tensor):
    """x's shape with the reduced axes as 1: a list where it is known while building, else an int32 tensor."""
    static = reduced_shape(x.shape, axes, keep_dims=True)
    if static.is_fully_defined():
        return static.as_list()
    dims = shape(x)
    return where(_reduced_axes_mask(x, axes), ones_like(dims), dims)


def _reshaped(tensor: Tensor, dims) -> Tensor:
    """`tensor` reshaped to `dims` (a list or a shape tensor); no op when its static shape already is `dims`."""
    if isinstance(dims, list) and tensor.shape.as_tuple() == tuple(dims):
        return tensor
    return reshape(tensor, dims)


def _tiled_like(grad: Tensor, x: Tensor, kept) -> Tensor:
    """grad, of x's shape with the reduced axes as 1 (`kept`), repeated along those axes to x's shape."""
    if isinstance(kept, list) and x.shape.is_fully_defined():
        multiples = [d // max(k, 1) for d, k in zip(x.shape.as_list(), kept)]
        return tile(grad, multiples) if any(m != 1 for m in multiples) else grad
    divisor = [max(k, 1) for k in kept] if isinstance(kept, list) else maximum(kept, 1)  # 0 keeps 0
    tiled = tile(grad, floordiv(shape(x), divisor))
    tiled.set_shape(x.shape)
    return tiled


def _sum_grad(op, grad):
    x, axes = op.inputs
    kept = _kept_dims_shape(x, axes)
    return [_tiled_like(_reshaped(grad, kept), x, kept), None]


def _mean_grad(op, grad):
    """Sum's gradient divided by the number of elements averaged."""
    x, y = op.inputs[0], op.outputs[0]
    if x.shape.is_fully_defined() and y.shape.is_fully_defined():
        count = constant(x.shape.num_elements() // max(y.shape.num_elements(), 1), dtype=grad.dtype)
    else:
        count = cast(floordiv(size(x), maximum(size(y), 1)), grad.dtype)
    return [realdiv(_sum_grad(op, grad)[0], count), None]


def _extremum_grad(op, grad):
    """Max or Min: the gradient goes to the elements equal to the result, split equally among ties (as TF)."""
    x, axes = op.inputs
    kept = _kept_dims_shape(x, axes)
    chosen = cast(equal(_reshaped(op.outputs[0], kept), x), grad.dtype)
    return [div(chosen, reduce_sum(chosen, axes, keepdims=True)) * _reshaped(grad, kept), None]


def _true_positions(mask: Tensor) -> Tensor:
    return cast(reshape(where(mask), [-1]), dtypes.int32)


def _reduction_permutation(x: Tensor, axes: Tensor) -> tuple:
    """(perm, inverse, reduced, rest): a transpose of x bringing its reduced axes first, then the rest, and its
    inverse; lists where known while building, else tensors."""
    value, rank_ = constant_value(axes), x.shape.ndims
    if value is not None and rank_ is not None:
        reduced = sorted({int(a) % rank_ for a in np.reshape(value, [-1])})
        rest = [i for i in range(rank_) if i not in reduced]
        return reduced + rest, np.argsort(reduced + rest).tolist(), reduced, rest
    mask = _reduced_axes_mask(x, axes)
    reduced, rest = _true_positions(mask), _true_positions(logical_not(mask))
    perm = concat([reduced, rest], 0)
    # inverse[i] is the position in perm that holds axis i.
    holds = equal(expand_dims(ranges.range(rank(x)), 1), expand_dims(perm, 0))
    return perm, argmax(cast(holds, dtypes.int32), axis=1, output_type=dtypes.int32), reduced, rest


def _prod_grad(op, grad):
    """Each element gets the product of the others it was reduced with, from two exclusive cumprods over the
    reduced axes flattened into one, so zeros are handled (as in TF)."""
    x, axes = op.inputs
    kept = _kept_dims_shape(x, axes)
    grad = _tiled_like(_reshaped(grad, kept), x, kept)
    perm, inverse, reduced, rest = _reduction_permutation(x, axes)
    dims = shape(x)
    permuted = transpose(x, perm)
    rows = reshape(permuted, [reduce_prod(gather(dims, reduced)), reduce_prod(gather(dims, rest))])
    others = cumprod(rows, 0, exclusive=True) * cumprod(rows, 0, exclusive=True, reverse=True)
    others = transpose(reshape(others, shape(permuted)), inverse)
    return [reshape(grad * conj(others), dims), None]


register_gradient("Sum")(_sum_grad)

# reduce_logsumexp has no op of its own; its case is Max's (it also builds IsFinite, SelectV2, Sub, Exp, Sum,
# Log and Add).
_LOGSUMEXP_EXAMPLE = Example(lambda x: reduce_logsumexp(x, axis=1),
                             lambda x: np.log(np.exp(x.astype(np.float64)).sum(axis=1)), inputs=((2, 3),),
                             dtypes=dtypes.FLOATS)

for _type, _claimed, _build, _reference, _gradient, _extra in [
        ("Mean", dtypes.NUMERIC, lambda *a, **k: reduce_mean(*a, **k), _np_mean, _mean_grad, []),
        ("Prod", dtypes.NUMERIC, lambda *a, **k: reduce_prod(*a, **k), _np_prod, _prod_grad, []),
        ("Max", dtypes.REAL, lambda *a, **k: reduce_max(*a, **k), np.max, _extremum_grad, [_LOGSUMEXP_EXAMPLE]),
        ("Min", dtypes.REAL, lambda *a, **k: reduce_min(*a, **k), np.min, _extremum_grad, []),
        ("Any", (dtypes.bool_,), lambda *a, **k: reduce_any(*a, **k), np.any, no_gradient, []),
        ("All", (dtypes.bool_,), lambda *a, **k: reduce_all(*a, **k), np.all, no_gradient, [])]:
    register_op(_type, infer_reduction, dtypes=_claimed, cost=reduction_cost, attrs={"keep_dims": "bool"},
                examples=reduction_examples(_build, _reference, differentiable=_gradient is not no_gradient) + _extra)
    register_gradient(_type)(_gradient)


# -- arg reductions -------------------------------------------------------------------------------

def _infer_arg_reduction(op):
    x, axis = op.inputs
    check_dtype_in(op, x.dtype, op.op_def.dtypes)
    check_dtype_in(op, axis.dtype, dtypes.INDEX, "dimension")
    check_dtype_in(op, op.attrs["output_type"], dtypes.INDEX, "output_type")
    shape_ = reduced_shape(x.shape, axis, keep_dims=False)
    if x.shape.ndims is not None and shape_.ndims is None:
        shape_ = unknown_shape(x.shape.ndims - 1)
    return [(op.attrs["output_type"], shape_)]


def _arg_examples(build, reference) -> list[Example]:
    return [
        Example(lambda x: build(x), lambda x: reference(x, axis=0), inputs=((4, 3),), differentiable=False),
        Example(lambda x: build(x, axis=-1, output_type=dtypes.int32),
                lambda x: reference(x, axis=-1).astype(np.int32), inputs=((2, 3, 4),), differentiable=False),
        Example(lambda x: build(x, dimension=1), lambda x: reference(x, axis=1), inputs=((2, 5),),
                low=-1, high=1, differentiable=False),
    ]


register_op("ArgMax", _infer_arg_reduction, dtypes=dtypes.REAL + (dtypes.bool_,), cost=reduction_cost,
            examples=_arg_examples(lambda *a, **k: argmax(*a, **k), np.argmax) + [
                Example(lambda x: arg_max(x, 1), lambda x: np.argmax(x, 1), inputs=((2, 5),), differentiable=False)],
            attrs={"output_type": "type"})
register_op("ArgMin", _infer_arg_reduction, dtypes=dtypes.REAL + (dtypes.bool_,), cost=reduction_cost,
            examples=_arg_examples(lambda *a, **k: argmin(*a, **k), np.argmin) + [
                Example(lambda x: arg_min(x, 0), lambda x: np.argmin(x, 0), inputs=((4, 3),), differentiable=False)],
            attrs={"output_type": "type"})
not_differentiable("ArgMax", "ArgMin")


def argmax(input, axis=None, name: str | None = None, dimension=None, output_type=dtypes.int64) -> Tensor:  # noqa: A002
    """The index of the largest value along `axis` (0 if None); ties give the first index."""
    return _arg_reduction("ArgMax", input, axis, name, dimension, output_type)


def argmin(input, axis=None, name: str | None = None, dimension=None, output_type=dtypes.int64) -> Tensor:  # noqa: A002
    """The index of the smallest value along `axis` (0 if None); ties give the first index."""
    return _arg_reduction("ArgMin", input, axis, name, dimension, output_type)


def arg_max(input, dimension, output_type=dtypes.int64, name: str | None = None) -> Tensor:  # noqa: A002
    """TF1's older argmax: the index of the largest value along `dimension` (no default axis)."""
    return _arg_reduction("ArgMax", input, dimension, name, None, output_type)


def arg_min(input, dimension, output_type=dtypes.int64, name: str | None = None) -> Tensor:  # noqa: A002
    """TF1's older argmin: the index of the smallest value along `dimension` (no default axis)."""
    return _arg_reduction("ArgMin", input, dimension, name, None, output_type)


def _arg_reduction(op_type: str, input, axis, name, dimension, output_type) -> Tensor:  # noqa: A002
    axis = deprecated_alias("axis", axis, "dimension", dimension)
    axis = to_tensor(0 if axis is None else axis, dtypes.int32)
    return create(op_type, (convert_to_tensor(input), axis), {"output_type": dtypes.as_dtype(output_type)}, name)
