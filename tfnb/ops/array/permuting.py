"""Permutations: of a tensor's axes (Transpose, InvertPermutation), and of its elements along axes (ReverseV2)."""

from __future__ import annotations

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.graph import get_default_graph, name_scope
from tfnb.framework.op_registry import Example, not_differentiable, register_gradient, register_op
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape, unknown_shape
from tfnb.ops.array import ranges
from tfnb.ops.array.packing import index_tensor
from tfnb.ops.array.shapes import rank
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.inference import (
    ARRAY_AND_STRING,
    check_claimed,
    check_index_input,
    constant_ints,
    normalize_axis,
)


def _infer_transpose(op):
    x, perm = op.inputs
    check_claimed(op)
    check_index_input(op, 1, "perm")
    dims, order = x.shape.as_tuple(), constant_ints(perm)
    rank_ = len(dims) if dims is not None else len(order) if order is not None else perm.shape[0].value
    if rank_ is None:
        return [(x.dtype, unknown_shape())]
    if order is None:
        return [(x.dtype, unknown_shape(rank_))]
    if sorted(order) != list(range(rank_)):
        raise ValueError(f"perm {order} is not a permutation of [0 .. {rank_})")
    dims = dims or (None,) * rank_
    return [(x.dtype, TensorShape([dims[i] for i in order]))]


register_op("Transpose", _infer_transpose, dtypes=ARRAY_AND_STRING, forwards_input=0, examples=[
    Example(lambda x: transpose(x), np.transpose, inputs=((2, 3, 4),)),
    Example(lambda x: transpose(x, [1, 0, 2]), lambda x: x.transpose(1, 0, 2), inputs=((2, 3, 4),)),
    Example(lambda x, p: transpose(x, p), lambda x, p: x.transpose(p), inputs=((2, 3, 1), np.array([2, 0, 1]))),
    Example(lambda x: transpose(x), lambda x: x, inputs=((),), dtypes=dtypes.ARRAY),
])
register_op("ConjugateTranspose", _infer_transpose, dtypes=dtypes.COMPLEX, examples=[
    Example(lambda x: transpose(x, conjugate=True), lambda x: np.conj(x.T), inputs=((2, 3),)),
])


def _inverse_perm(perm: Tensor):
    """The permutation that undoes `perm`: a constant when perm is known while building."""
    order = constant_ints(perm)
    return invert_permutation(perm) if order is None else np.argsort(order).astype(np.int32)


@register_gradient("Transpose")
def _transpose_grad(op, grad):
    return [transpose(grad, _inverse_perm(op.inputs[1])), None]


@register_gradient("ConjugateTranspose")
def _conjugate_transpose_grad(op, grad):
    return [transpose(grad, _inverse_perm(op.inputs[1]), conjugate=True), None]


def transpose(a, perm=None, name: str = "transpose", conjugate: bool = False) -> Tensor:
    """`a` with its dimensions permuted by `perm` (reversed by default); `conjugate` also conjugates complex values."""
    with name_scope(name, "transpose", [a]) as scope:
        a = convert_to_tensor(a, name="a")
        if perm is None:
            ndims = a.shape.ndims
            perm = (np.arange(ndims - 1, -1, -1, dtype=np.int32) if ndims is not None
                    else reverse(ranges.range(rank(a)), [0]))
        op_type = "ConjugateTranspose" if conjugate and a.dtype.is_complex else "Transpose"
        return get_default_graph().create_op(op_type, [a, index_tensor(perm)], None, scope).outputs[0]


def _infer_invert_permutation(op):
    check_index_input(op, 0, "x")
    return [(op.inputs[0].dtype, op.inputs[0].shape)]


register_op("InvertPermutation", _infer_invert_permutation, dtypes=dtypes.INDEX, examples=[
    Example(lambda p: invert_permutation(p), np.argsort, inputs=(np.array([2, 0, 3, 1], np.int32),),
            differentiable=False),
    Example(lambda p: invert_permutation(p), np.argsort, inputs=(np.zeros([0], np.int64),), differentiable=False),
])
not_differentiable("InvertPermutation")


def invert_permutation(x, name: str | None = None) -> Tensor:
    """The inverse y of the permutation x of [0, n): y[x[i]] = i."""
    x = convert_to_tensor(x, preferred_dtype=dtypes.int32)
    return get_default_graph().create_op("InvertPermutation", [x], None, name).outputs[0]


def _infer_reverse(op):
    x, axis = op.inputs
    check_claimed(op)
    check_index_input(op, 1, "axis")
    axes, rank_ = constant_ints(axis), x.shape.ndims
    if axes is not None and rank_ is not None:
        normalized = [normalize_axis(a, rank_) for a in axes]
        if len(set(normalized)) != len(normalized):
            raise ValueError(f"An axis is specified more than once in {axes}")
    return [(x.dtype, x.shape)]


register_op("ReverseV2", _infer_reverse, dtypes=ARRAY_AND_STRING, forwards_input=0, examples=[
    Example(lambda x: reverse(x, [1]), lambda x: x[:, ::-1], inputs=((2, 3),)),
    Example(lambda x: reverse(x, [0, -1]), lambda x: x[::-1, :, ::-1], inputs=((2, 3, 4),)),
    Example(lambda x, a: reverse(x, a), lambda x, a: x[::-1], inputs=((3, 2), np.array([0], np.int64))),
])


@register_gradient("ReverseV2")
def _reverse_grad(op, grad):
    return [reverse(grad, op.inputs[1]), None]


def reverse(tensor, axis, name: str | None = None) -> Tensor:
    """`tensor` with the order of its elements reversed along each dimension in `axis` (ReverseV2)."""
    inputs = [convert_to_tensor(tensor), index_tensor(axis)]
    return get_default_graph().create_op("ReverseV2", inputs, None, name).outputs[0]


reverse_v2 = reverse


def _infer_reverse_sequence(op):
    x, lengths = op.inputs
    check_claimed(op)
    if lengths.dtype not in dtypes.INDEX:
        raise TypeError(f"seq_lengths must be int32 or int64, not {lengths.dtype.name}")
    if lengths.shape.ndims not in (None, 1):
        raise ValueError(f"seq_lengths must be 1-dimensional, got shape {lengths.shape}")
    rank_ = x.shape.ndims
    if rank_ is not None:
        seq_dim, batch_dim = op.attrs["seq_dim"], op.attrs["batch_dim"]
        if seq_dim == batch_dim or not (0 <= seq_dim < rank_ and 0 <= batch_dim < rank_):
            raise ValueError(f"seq_dim {seq_dim} and batch_dim {batch_dim} must be different axes of a tensor of "
                             f"rank {rank_}")
        if not x.shape[batch_dim].is_compatible_with(lengths.shape[0] if lengths.shape.ndims else None):
            raise ValueError(f"Length of seq_lengths ({lengths.shape[0]}) != input.dims({batch_dim}) "
                             f"({x.shape[batch_dim]})")
    return [(x.dtype, x.shape)]


def _np_reverse_sequence(x, lengths, seq_dim: int, batch_dim: int):
    out = x.copy()
    for b, length in enumerate(lengths):
        index = [slice(None)] * x.ndim
        index[batch_dim], index[seq_dim] = b, slice(0, int(length))
        out[tuple(index)] = np.flip(x[tuple(index)], axis=seq_dim - (batch_dim < seq_dim))
    return out


register_op("ReverseSequence", _infer_reverse_sequence, dtypes=ARRAY_AND_STRING, examples=[
    Example(lambda x: reverse_sequence(x, [3, 0, 1], seq_axis=1, batch_axis=0),
            lambda x: _np_reverse_sequence(x, [3, 0, 1], 1, 0), inputs=((3, 4, 2),)),
    Example(lambda x, n: reverse_sequence(x, n, seq_axis=0, batch_axis=1),
            lambda x, n: _np_reverse_sequence(x, n, 0, 1), inputs=((4, 2), np.array([2, 4], np.int64))),
], attrs={"batch_dim": "int", "seq_dim": "int"})


@register_gradient("ReverseSequence")
def _reverse_sequence_grad(op, grad):
    return [reverse_sequence(grad, op.inputs[1], seq_axis=op.attrs["seq_dim"], batch_axis=op.attrs["batch_dim"]),
            None]


def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=None, name: str | None = None,  # noqa: A002
                     seq_dim=None, batch_dim=None) -> Tensor:
    """For each index b along batch_axis, the first seq_lengths[b] slices along seq_axis in reverse order."""
    seq_axis = seq_axis if seq_axis is not None else seq_dim
    batch_axis = batch_axis if batch_axis is not None else (batch_dim if batch_dim is not None else 0)
    if seq_axis is None:
        raise ValueError("reverse_sequence needs seq_axis")
    x = convert_to_tensor(input, name="input")
    rank_ = x.shape.ndims
    attrs = {"seq_dim": normalize_axis(seq_axis, rank_) if rank_ is not None else int(seq_axis),
             "batch_dim": normalize_axis(batch_axis, rank_) if rank_ is not None else int(batch_axis)}
    lengths = convert_to_tensor(seq_lengths, preferred_dtype=dtypes.int64, name="seq_lengths")
    return get_default_graph().create_op("ReverseSequence", (x, lengths), attrs, name).outputs[0]
