"""Joining and splitting along an existing axis: ConcatV2 (tf.concat) and Split/SplitV (tf.split), each the
other's gradient."""

from __future__ import annotations

import numbers

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.graph import get_default_graph
from tfnb.framework.op_registry import Example, register_gradient, register_op
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import Dimension, TensorShape, unknown_shape
from tfnb.ops.array.identity import identity
from tfnb.ops.array.packing import index_tensor
from tfnb.ops.array.reshaping import reshape
from tfnb.ops.array.shapes import rank, shape
from tfnb.ops.constant_op import convert_all, convert_to_tensor
from tfnb.ops.inference import (
    ARRAY_AND_STRING,
    check_claimed,
    check_index_input,
    check_same_dtype,
    constant_int,
    constant_ints,
    normalize_axis,
)
from tfnb.ops.math.arithmetic import floormod
from tfnb.ops.math.cast import cast


def front_axis(axis: Tensor, like: Tensor) -> int | Tensor:
    """An axis argument of an op on `like`, counted from the front: an int if known while building, else a tensor."""
    value, rank_ = constant_int(axis), like.shape.ndims
    if value is not None and (value >= 0 or rank_ is not None):
        return value % rank_ if rank_ else value
    return floormod(cast(axis, dtypes.int32), rank(like))


def size_along(x: Tensor, axis: int | Tensor) -> int | Tensor:
    """x's size along `axis`: an int if known while building, else a scalar tensor."""
    if isinstance(axis, int) and x.shape.ndims is not None and x.shape[axis].value is not None:
        return x.shape[axis].value
    return shape(x)[axis]


def _infer_concat(op):
    values = op.inputs[:-1]
    dtype = check_same_dtype(op, *range(len(values)))
    check_claimed(op)
    check_index_input(op, len(values), "axis", rank=0)
    ranks = {t.shape.ndims for t in values} - {None}
    if not ranks:
        return [(dtype, unknown_shape())]
    if len(ranks) > 1:
        raise ValueError(f"Shapes of all inputs must have the same rank, got ranks {sorted(ranks)}")
    rank_ = ranks.pop()
    if rank_ == 0:
        raise ValueError("Can't concatenate scalars (use tf.stack instead)")
    axis = constant_int(op.inputs[-1])
    if axis is None:
        return [(dtype, unknown_shape(rank_))]
    axis = normalize_axis(axis, rank_)
    merged, total = unknown_shape(rank_), 0
    for t in values:
        dims = list(t.shape.as_tuple() or (None,) * rank_)
        total = None if total is None or dims[axis] is None else total + dims[axis]
        dims[axis] = None
        merged = merged.merge_with(dims)
    dims = list(merged.as_tuple())
    dims[axis] = total
    return [(dtype, TensorShape(dims))]


register_op("ConcatV2", _infer_concat, dtypes=ARRAY_AND_STRING, examples=[
    Example(lambda x, y: concat([x, y], 0), lambda x, y: np.concatenate([x, y], 0), inputs=((2, 3), (1, 3))),
    Example(lambda x, y, z: concat([x, y, z], -1), lambda x, y, z: np.concatenate([x, y, z], -1),
            inputs=((2, 1), (2, 2), (2, 3))),
    Example(lambda x, y, a: concat([x, y], a), lambda x, y, a: np.concatenate([x, y], a),
            inputs=((2, 2), (2, 1), np.array(1, np.int64))),
    # A shape built by concatenating slices of tf.shape keeps its known entries (see shape_elements).
    Example(lambda x: reshape(x, concat([shape(x)[-1:], [-1]], 0)), lambda x: x.reshape(4, -1), inputs=((2, 3, 4),)),
], attrs={"N": "count"})


@register_gradient("ConcatV2")
def _concat_grad(op, grad):
    """The gradient cut back into the inputs' sizes along the axis."""
    values = op.inputs[:-1]
    axis = front_axis(op.inputs[-1], values[0])
    return split(grad, [size_along(v, axis) for v in values], axis, num=len(values)) + [None]


def concat(values, axis, name: str = "concat") -> Tensor:
    """`values` joined along the existing dimension `axis` (negative counts from the end)."""
    values = list(values) if isinstance(values, (list, tuple)) else [values]
    if len(values) == 1:
        return identity(values[0], name=name)
    values = convert_all(values)
    inputs = [*values, index_tensor(axis)]
    return get_default_graph().create_op("ConcatV2", inputs, {"N": len(values)}, name).outputs[0]


def _split_axis(x: Tensor, axis: Tensor) -> tuple[tuple | None, int | None]:
    """x's static dims and the split axis made non-negative; None for what is not known while building."""
    dims = x.shape.as_tuple()
    split_dim = constant_int(axis) if dims is not None else None
    return dims, None if split_dim is None else normalize_axis(split_dim, len(dims), "split_dim")


def _infer_split(op):
    axis, x = op.inputs
    check_claimed(op, 1)
    check_index_input(op, 0, "split_dim", rank=0)
    num = op.attrs["num_split"]
    dims, split_dim = _split_axis(x, axis)
    if split_dim is None:
        return [(x.dtype, unknown_shape(None if dims is None else len(dims)))] * num
    out = list(dims)
    if dims[split_dim] is not None:
        if dims[split_dim] % num:
            raise ValueError(f"Dimension size must be evenly divisible by {num} but is {dims[split_dim]}")
        out[split_dim] = dims[split_dim] // num
    return [(x.dtype, TensorShape(out))] * num


register_op("Split", _infer_split, dtypes=ARRAY_AND_STRING, forwards_input=1, examples=[
    Example(lambda x: split(x, 2, axis=1), lambda x: np.split(x, 2, axis=1), inputs=((3, 4),)),
    Example(lambda x: split(x, 3), lambda x: np.split(x, 3), inputs=((6,),)),
    Example(lambda x: split(x, 1, axis=-1), lambda x: [x], inputs=((2, 3),)),
], attrs={"num_split": "count"})


@register_gradient("Split")
def _split_grad(op, *grads):
    return [None, concat(list(grads), op.inputs[0])]


def _split_v_dims(dims: tuple, axis: int, sizes: list | None, num: int) -> list[tuple]:
    if sizes is None:
        return [dims[:axis] + (None,) + dims[axis + 1:]] * num
    total, known = dims[axis], sum(s for s in sizes if s != -1)
    if -1 in sizes and total is not None:
        if known > total:
            raise ValueError(f"Sizes {sizes} add up to more than the {total} elements of split_dim")
        sizes = [total - known if s == -1 else s for s in sizes]
    elif total is not None and known != total:
        raise ValueError("Determined shape must either match input shape along split_dim exactly if fully specified, "
                         f"or be less than the size of the input along split_dim if not fully specified.  Got: {known}")
    return [dims[:axis] + (None if s == -1 else s,) + dims[axis + 1:] for s in sizes]


def _infer_split_v(op):
    x, size_splits, axis = op.inputs
    check_claimed(op)
    check_index_input(op, 1, "size_splits")
    check_index_input(op, 2, "split_dim", rank=0)
    num, sizes = op.attrs["num_split"], constant_ints(size_splits)
    if sizes is not None:
        if len(sizes) != num:
            raise ValueError(f"size_splits has {len(sizes)} entries but num_split is {num}")
        if sizes.count(-1) > 1:
            raise ValueError(f"Only one dimension can have a value of -1, got size_splits {sizes}")
        if any(s < -1 for s in sizes):
            raise ValueError(f"size_splits must be non-negative or -1, got {sizes}")
    dims, split_dim = _split_axis(x, axis)
    if split_dim is None:
        return [(x.dtype, unknown_shape(None if dims is None else len(dims)))] * num
    return [(x.dtype, TensorShape(d)) for d in _split_v_dims(dims, split_dim, sizes, num)]


register_op("SplitV", _infer_split_v, dtypes=ARRAY_AND_STRING, forwards_input=0, examples=[
    Example(lambda x: split(x, [1, -1, 2], axis=-1), lambda x: np.split(x, [1, 4], axis=-1), inputs=((2, 6),)),
    Example(lambda x: split(x, [2, 1]), lambda x: np.split(x, [2]), inputs=((3, 2),)),
    Example(lambda x, s: split(x, s, 1, num=2), lambda x, s: np.split(x, [1], axis=1),
            inputs=((2, 3), np.array([1, -1], np.int32))),
    Example(lambda x: split(x, [-1]), lambda x: [x], inputs=((3,),)),
], attrs={"num_split": "count"})


@register_gradient("SplitV")
def _split_v_grad(op, *grads):
    return [concat(list(grads), op.inputs[2]), None, None]


def split(value, num_or_size_splits, axis=0, num: int | None = None, name: str = "split") -> list[Tensor]:
    """`value` cut along `axis` into `num_or_size_splits` equal parts, or parts of the given sizes (one may be -1)."""
    value = convert_to_tensor(value)
    graph = get_default_graph()
    if isinstance(num_or_size_splits, (numbers.Integral, Dimension)):
        parts = int(num_or_size_splits)
        return list(graph.create_op("Split", [index_tensor(axis), value], {"num_split": parts}, name).outputs)
    size_splits = index_tensor(num_or_size_splits)
    if size_splits.shape.ndims == 0:
        raise ValueError("Rank-0 tensors are not supported as the num_or_size_splits argument to split. "
                         f"Argument provided: {num_or_size_splits}")
    num = num if num is not None else size_splits.shape[0].value
    if num is None:
        raise ValueError(f"Cannot infer num from shape {size_splits.shape}")
    inputs = [value, size_splits, index_tensor(axis)]
    return list(graph.create_op("SplitV", inputs, {"num_split": int(num)}, name).outputs)
