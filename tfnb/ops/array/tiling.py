"""Tile: a tensor repeated along each dimension (tf.tile); its gradient sums the copies."""

from __future__ import annotations

import numpy as np

from tfnb.framework.graph import get_default_graph
from tfnb.framework.op_registry import Example, register_gradient, register_op
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape, unknown_shape
from tfnb.ops.array import ranges
from tfnb.ops.array.packing import index_tensor, stack
from tfnb.ops.array.permuting import transpose
from tfnb.ops.array.reshaping import reshape
from tfnb.ops.array.shapes import shape, shape_elements, size
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.inference import ARRAY_AND_STRING, check_claimed, check_index_input, constant_ints
from tfnb.ops.math.reduce_sum import reduce_sum


def _infer_tile(op):
    x, multiples = op.inputs
    check_claimed(op)
    check_index_input(op, 1, "multiples")
    dims, counts = x.shape.as_tuple(), shape_elements(multiples)
    if dims is None and counts is None:
        return [(x.dtype, unknown_shape())]
    if dims is not None and counts is not None and len(counts) != len(dims):
        raise ValueError(f"Expected multiples argument to be a vector of length {len(dims)} but got length "
                         f"{len(counts)}")
    dims = dims or (None,) * len(counts)
    counts = [c if isinstance(c, int) else None for c in counts or (None,) * len(dims)]
    return [(x.dtype, TensorShape([_product(d, c) for d, c in zip(dims, counts)]))]


def _product(a: int | None, b: int | None) -> int | None:
    """a * b where either may be unknown; zero times anything is still known."""
    if a == 0 or b == 0:
        return 0
    return None if a is None or b is None else a * b


register_op("Tile", _infer_tile, dtypes=ARRAY_AND_STRING, examples=[
    Example(lambda x: tile(x, [2, 1, 3]), lambda x: np.tile(x, [2, 1, 3]), inputs=((2, 3, 1),)),
    Example(lambda x, m: tile(x, m), lambda x, m: np.tile(x, m), inputs=((2, 3), np.array([1, 2], np.int64))),
    Example(lambda x: tile(x, [0, 2]), lambda x: np.tile(x, [0, 2]), inputs=((2, 3),)),
])


@register_gradient("Tile")
def _tile_grad(op, grad):
    """The gradient seen as [m0, d0, m1, d1, ...] (copy k of dim i in axis 2i), summed over the copies."""
    x, multiples = op.inputs
    counts = constant_ints(multiples)
    if counts is not None and x.shape.is_fully_defined():
        split_shape = [n for pair in zip(counts, x.shape.as_list()) for n in pair]
        copies = list(range(0, len(split_shape), 2))
    else:
        split_shape = reshape(transpose(stack([multiples, shape(x, out_type=multiples.dtype)])), [-1])
        copies = ranges.range(0, size(split_shape), 2)
    summed = reduce_sum(reshape(grad, split_shape), copies)
    summed.set_shape(x.shape)
    return [summed, None]


def tile(input, multiples, name: str | None = None) -> Tensor:
    """`input` repeated `multiples[i]` times along each dimension i."""
    inputs = [convert_to_tensor(input), index_tensor(multiples)]
    return get_default_graph().create_op("Tile", inputs, None, name).outputs[0]
