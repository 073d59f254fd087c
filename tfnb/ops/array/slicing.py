"""Slicing and padding, each the other's gradient: Slice, StridedSlice (and `tensor[...]`), Pad and MirrorPad."""

from __future__ import annotations

import builtins
import math
import numbers

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.graph import get_default_graph, name_scope
from tfnb.framework.op_registry import Example, register_gradient, register_op
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import Dimension, TensorShape, as_shape, unknown_shape
from tfnb.ops.array.filling import ones_like
from tfnb.ops.array.packing import index_tensor, stack
from tfnb.ops.array.shapes import shape, shape_from, shape_of
from tfnb.ops.constant_op import constant, contains_tensor, convert_all, convert_to_tensor
from tfnb.ops.inference import (
    ARRAY_AND_STRING,
    check_claimed,
    check_index_input,
    check_same_dtype,
    constant_ints,
    example_values,
)
from tfnb.ops.math.cast import cast

newaxis = None

# This module defines TF's `slice`; its helpers use Python's.
_py_slice = builtins.slice


def _infer_slice(op):
    x, begin, size = op.inputs
    check_claimed(op)
    check_same_dtype(op, 1, 2)
    check_index_input(op, 1, "begin")
    check_index_input(op, 2, "size")
    dims, starts, sizes = x.shape.as_tuple(), constant_ints(begin), constant_ints(size)
    lengths = {n for n in (begin.shape[0].value, size.shape[0].value, None if dims is None else len(dims))} - {None}
    if len(lengths) > 1:
        raise ValueError(f"Expected begin and size arguments to be 1-D tensors of size {len(dims or ())}, but got "
                         f"shapes {begin.shape} and {size.shape}")
    if not lengths:
        return [(x.dtype, unknown_shape())]
    dims = dims or (None,) * lengths.pop()
    if sizes is None:
        return [(x.dtype, unknown_shape(len(dims)))]
    out = []
    for i, (dim, length) in enumerate(zip(dims, sizes)):
        start = None if starts is None else starts[i]
        if length < -1 or (start is not None and start < 0):
            raise ValueError(f"Expected begin[{i}] >= 0 and size[{i}] >= -1, got {start} and {length}")
        if dim is not None and start is not None and start + max(length, 0) > dim:
            raise ValueError(f"Expected size[{i}] in [0, {dim - start}], but got {length}")
        out.append(length if length != -1 else None if dim is None or start is None else dim - start)
    return [(x.dtype, TensorShape(out))]


register_op("Slice", _infer_slice, dtypes=ARRAY_AND_STRING, forwards_input=0, examples=[
    Example(lambda x: slice(x, [1, 0], [2, -1]), lambda x: x[1:3, 0:], inputs=((3, 4),)),
    Example(lambda x, b, s: slice(x, b, s), lambda x, b, s: x[0:1, 1:, 1:3],
            inputs=((2, 3, 4), np.array([0, 1, 1]), np.array([1, -1, 2]))),
    Example(lambda x: slice(x, [3], [0]), lambda x: x[3:3], inputs=((3,),)),
])


@register_gradient("Slice")
def _slice_grad(op, grad):
    """The gradient padded with zeros back to the input's shape."""
    x, begin, _ = op.inputs
    y = op.outputs[0]
    starts = constant_ints(begin)
    if starts is not None and x.shape.is_fully_defined() and y.shape.is_fully_defined():
        after = [d - s - n for d, s, n in zip(x.shape.as_list(), starts, y.shape.as_list())]
        paddings = np.array([starts, after], np.int32).T.reshape(-1, 2)
    else:
        after = shape_of(x, begin.dtype) - begin - shape_of(y, begin.dtype)
        paddings = stack([begin, after], axis=1)
    return [pad(grad, paddings), None, None]


def slice(input_, begin, size, name: str | None = None) -> Tensor:  # noqa: A001
    """The part of `input_` that starts at `begin` and has shape `size` (-1: to the end of that dimension)."""
    begin, size = convert_all([begin, size], dtypes.int32)
    inputs = [convert_to_tensor(input_), begin, size]
    return get_default_graph().create_op("Slice", inputs, None, name).outputs[0]


# -- strided slices -------------------------------------------------------------------------------

def _dense_spec(n: int, rank: int, attrs: dict) -> tuple[list, list]:
    """TF's dense form of a strided-slice spec of `n` entries over `rank` dims, its ellipsis expanded.

    Returns one (spec position or None, begin masked, end masked, shrunk) per input dim, and the output's
    dims in order, as input dim indices or None for a new axis.
    """
    ellipsis, new_axis = attrs["ellipsis_mask"], attrs["new_axis_mask"]
    if not ellipsis & ((1 << n) - 1):
        ellipsis, n = 1 << n, n + 1
    at = (ellipsis & -ellipsis).bit_length() - 1
    new_after = sum(1 for i in range(at + 1, n) if new_axis >> i & 1)
    dense, final = [], []
    for i in range(n):
        if ellipsis >> i & 1:
            while len(dense) < min(rank - (n - i) + 1 + new_after, rank):
                final.append(len(dense))
                dense.append((None, True, True, False))
        elif new_axis >> i & 1:
            final.append(None)
        else:
            if len(dense) == rank:
                raise ValueError(f"Index out of range using input dim {rank}; input has only {rank} dims")
            shrink = bool(attrs["shrink_axis_mask"] >> i & 1)
            if not shrink:
                final.append(len(dense))
            dense.append((i, bool(attrs["begin_mask"] >> i & 1), bool(attrs["end_mask"] >> i & 1), shrink))
    return dense, final


def _bound(x: int, dim: int, stride: int, masked: bool, is_end: bool) -> int:
    """A begin or end index made explicit and clamped, as TF's strided slice does."""
    lo, hi = (0, dim) if stride > 0 else (-1, dim - 1)
    if masked:
        return (hi if is_end else lo) if stride > 0 else (lo if is_end else hi)
    x = x + dim if x < 0 else x
    return min(max(x, lo), hi)


def _slice_count(begin: int, end: int, stride: int) -> int:
    length = end - begin
    if length == 0 or (length < 0) != (stride < 0):
        return 0
    return -(-abs(length) // abs(stride))


def _strided_slice_dims(dims: tuple, begin: list | None, end: list | None, strides: list, attrs: dict) -> list:
    """The static output dims of a strided slice (TF's ValidateStridedSliceOp), where begin/end may be unknown."""
    dense, final = _dense_spec(len(strides), len(dims), attrs)
    known = begin is not None and end is not None
    sizes = []
    for k, ((i, begin_masked, end_masked, shrink), dim) in enumerate(zip(dense, dims)):
        stride = 1 if i is None else strides[i]
        if stride == 0:
            raise ValueError(f"strides[{i}] must be non-zero")
        if dim is None:
            sizes.append(1 if shrink else None)
            continue
        if shrink and stride <= 0:
            raise ValueError("only stride 1 allowed on non-range indexing.")
        b, e = (0, 0) if i is None or not known else (begin[i], end[i])
        if shrink:
            if known and not -dim <= b < dim:
                raise ValueError(f"slice index {b} of dimension {k} out of bounds.")
            sizes.append(1)
        elif known or (begin_masked and end_masked):
            sizes.append(_slice_count(_bound(b, dim, stride, begin_masked, False),
                                      _bound(e, dim, stride, end_masked, True), stride))
        else:
            sizes.append(None)
    return [1 if d is None else sizes[d] for d in final]


def _infer_strided_slice(op):
    x, begin, end, strides = op.inputs
    check_claimed(op)
    check_same_dtype(op, 1, 2, 3)
    for index, what in ((1, "begin"), (2, "end"), (3, "strides")):
        check_index_input(op, index, what)
    lengths = {t.shape[0].value for t in op.inputs[1:]} - {None}
    if len(lengths) > 1:
        raise ValueError("Expected begin, end, and strides to be 1D equal size tensors")
    if op.attrs["ellipsis_mask"] & (op.attrs["ellipsis_mask"] - 1):
        raise ValueError("Multiple ellipses in slice spec not allowed")
    steps = constant_ints(strides)
    if x.shape.ndims is None or steps is None:
        return [(x.dtype, unknown_shape())]
    return [(x.dtype, TensorShape(_strided_slice_dims(x.shape.as_tuple(), constant_ints(begin), constant_ints(end),
                                                      steps, op.attrs)))]


_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")
_MASK_ATTRS = dict.fromkeys(_MASKS, "int")  # StridedSlice's and StridedSliceGrad's bit masks
register_op("StridedSlice", _infer_strided_slice, dtypes=ARRAY_AND_STRING, forwards_input=0, examples=[
    Example(lambda x: x[1:, ::-1], lambda x: x[1:, ::-1], inputs=((3, 4),)),
    Example(lambda x: x[..., 0], lambda x: x[..., 0], inputs=((2, 3, 4),)),
    Example(lambda x: x[:, newaxis, -1], lambda x: x[:, None, -1], inputs=((2, 3),)),
    Example(lambda x: x[::2, -2:0:-2, None, ...], lambda x: x[::2, -2:0:-2, None, ...], inputs=((5, 6, 2),)),
    Example(lambda x: x[-1], lambda x: x[-1], inputs=((3,),), dtypes=dtypes.ARRAY),
    Example(lambda x: x[1, ..., 1:2, None], lambda x: x[1, ..., 1:2, None], inputs=((2, 3, 4, 5),)),
    Example(lambda x: x[7:-9:-1, 10:], lambda x: x[7:-9:-1, 10:], inputs=((4, 3),)),
    Example(lambda x, i: x[i, :i], lambda x, i: x[i, :i], inputs=((3, 4), np.array(2, np.int32))),
    Example(lambda x: strided_slice(x, [0, 1], [2, 3], [1, 1], begin_mask=2, end_mask=1, shrink_axis_mask=1),
            lambda x: x[0, :3], inputs=((3, 4),)),
], attrs=_MASK_ATTRS)


@register_gradient("StridedSlice")
def _strided_slice_grad(op, grad):
    x, begin, end, strides = op.inputs
    masks = {k: op.attrs[k] for k in _MASKS}
    return [strided_slice_grad(shape_of(x, begin.dtype), begin, end, strides, grad, **masks), None, None, None]


def strided_slice(input_, begin, end, strides=None, begin_mask: int = 0, end_mask: int = 0, ellipsis_mask: int = 0,
                  new_axis_mask: int = 0, shrink_axis_mask: int = 0, var=None, name: str | None = None) -> Tensor:
    """The elements of `input_` from `begin` to `end` (exclusive) in steps of `strides`, with TF's mask flags.

    tfnb has no sliced assignment, so `var` must be None.
    """
    if var is not None:
        raise NotImplementedError("tfnb's strided_slice does not support `var` (sliced assignment)")
    if strides is None:
        count = len(begin) if not isinstance(begin, Tensor) else begin.shape[0].value
        strides = [1] * count if count is not None else ones_like(begin)
    begin, end, strides = convert_all([begin, end, strides], dtypes.int32)
    masks = {"begin_mask": begin_mask, "end_mask": end_mask, "ellipsis_mask": ellipsis_mask,
             "new_axis_mask": new_axis_mask, "shrink_axis_mask": shrink_axis_mask}
    inputs = [convert_to_tensor(input_), begin, end, strides]
    return get_default_graph().create_op("StridedSlice", inputs, masks, name).outputs[0]


def _infer_strided_slice_grad(op):
    check_same_dtype(op, 0, 1, 2, 3)
    for index, what in ((0, "shape"), (1, "begin"), (2, "end"), (3, "strides")):
        check_index_input(op, index, what)
    return [(check_claimed(op, 4), shape_from(op.inputs[0]))]


def _np_strided_slice_grad(shape_, index: tuple, dy):
    out = np.zeros(shape_, dy.dtype)
    out[index] = dy
    return out


register_op("StridedSliceGrad", _infer_strided_slice_grad, dtypes=dtypes.ARRAY, examples=[
    Example(lambda dy: strided_slice_grad([3, 4], [1, 0], [0, 0], [1, -1], dy, begin_mask=2, end_mask=3),
            lambda dy: _np_strided_slice_grad((3, 4), np.s_[1:, ::-1], dy), inputs=((2, 4),)),
    Example(lambda dy: strided_slice_grad([2, 3, 4, 5], [1, 0, 1, 0], [2, 0, 2, 0], [1, 1, 1, 1], dy,
                                          ellipsis_mask=2, new_axis_mask=8, shrink_axis_mask=1),
            lambda dy: _np_strided_slice_grad((2, 3, 4, 5), np.s_[1, ..., 1:2, None], dy), inputs=((3, 4, 1, 1),)),
    Example(lambda s, dy: strided_slice_grad(s, [0, -2, 0, 0], [0, 0, 0, 0], [2, -2, 1, 1], dy, begin_mask=1,
                                             end_mask=1, new_axis_mask=4, ellipsis_mask=8),
            lambda s, dy: _np_strided_slice_grad(tuple(s), np.s_[::2, -2:0:-2, None, ...], dy),
            inputs=(np.array([5, 6, 2], np.int64), (3, 2, 1, 2))),
], attrs=_MASK_ATTRS)


@register_gradient("StridedSliceGrad")
def _strided_slice_grad_grad(op, grad):
    """StridedSliceGrad is linear in dy; its adjoint is the slice itself."""
    _, begin, end, strides, _ = op.inputs
    masks = {k: op.attrs[k] for k in _MASKS}
    return [None, None, None, None, strided_slice(grad, begin, end, strides, **masks)]


def strided_slice_grad(shape, begin, end, strides, dy, begin_mask: int = 0, end_mask: int = 0, ellipsis_mask: int = 0,
                       new_axis_mask: int = 0, shrink_axis_mask: int = 0, name: str | None = None) -> Tensor:
    """A tensor of `shape`, zero except where strided_slice with these arguments would pick: those are `dy`."""
    shape, begin, end, strides = convert_all([shape, begin, end, strides], dtypes.int32)
    masks = {"begin_mask": begin_mask, "end_mask": end_mask, "ellipsis_mask": ellipsis_mask,
             "new_axis_mask": new_axis_mask, "shrink_axis_mask": shrink_axis_mask}
    inputs = [shape, begin, end, strides, convert_to_tensor(dy)]
    return get_default_graph().create_op("StridedSliceGrad", inputs, masks, name).outputs[0]


# -- tensor[...] ----------------------------------------------------------------------------------

_SLICE_TYPE_ERROR = ("Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar "
                     "tf.int32/tf.int64 tensors are valid indices")


def _dtype_of(value) -> dtypes.DType | None:
    """The dtype of a tensor or NumPy value; None for a Python number."""
    dtype = getattr(value, "dtype", None)
    return None if dtype is None else dtypes.as_dtype(dtype)


def _index_value(value):
    """A Python index entry as TF1 accepts it: an int, a Dimension, or a scalar int32/int64 tensor."""
    if isinstance(value, Dimension):
        return int(value)
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
        return value
    if _dtype_of(value) in dtypes.INDEX and as_shape(getattr(value, "shape", None)).ndims in (None, 0):
        return value
    raise TypeError(f"{_SLICE_TYPE_ERROR}, got {value!r}")


def _slice_helper(tensor: Tensor, slice_spec) -> Tensor:
    """tensor[slice_spec], built as TF1 does: one StridedSlice whose masks encode the Python index."""
    if isinstance(slice_spec, (bool, np.bool_)) or _dtype_of(slice_spec) is dtypes.bool_:
        raise TypeError("Indexing with booleans (tf.boolean_mask) is not supported by tfnb")
    if not isinstance(slice_spec, (list, tuple)):
        slice_spec = [slice_spec]
    begin, end, strides = [], [], []
    masks = dict.fromkeys(_MASKS, 0)
    for index, item in enumerate(slice_spec):
        bit = 1 << index
        if isinstance(item, _py_slice):
            for bounds, value, mask in ((begin, item.start, "begin_mask"), (end, item.stop, "end_mask")):
                if value is None:
                    masks[mask] |= bit
                bounds.append(0 if value is None else _index_value(value))
            strides.append(1 if item.step is None else _index_value(item.step))
            continue
        if item is Ellipsis or item is newaxis:
            masks["ellipsis_mask" if item is Ellipsis else "new_axis_mask"] |= bit
            first, last = 0, 0
        else:
            first = _index_value(item)
            last = first + 1
            masks["shrink_axis_mask"] |= bit
        begin.append(first)
        end.append(last)
        strides.append(1)
    with name_scope(None, "strided_slice", [tensor]) as scope:
        if not begin:
            begin = end = strides = constant([], dtype=dtypes.int32)
        else:
            begin, end, strides = _packed_indices(begin, end, strides)
        return strided_slice(tensor, begin, end, strides, name=scope, **masks)


def _packed_indices(*lists) -> list[Tensor]:
    """Each list of index entries as one 1-D tensor, all int64 if any entry is, else int32."""
    wide = any(_dtype_of(v) is dtypes.int64 for values in lists for v in values)
    dtype = dtypes.int64 if wide else dtypes.int32
    return [stack([cast(v, dtype) if isinstance(v, Tensor) else v for v in values]) if contains_tensor(values)
            else constant(values, dtype=dtype, name="stack") for values in lists]


Tensor._override_operator("__getitem__", _slice_helper)


# -- padding: the adjoint of slicing --------------------------------------------------------------

def _infer_pad(op):
    x, paddings = op.inputs[:2]
    check_claimed(op)
    check_index_input(op, 1, "paddings", rank=2)
    if op.type == "PadV2":
        check_same_dtype(op, 0, 2)
        if op.inputs[2].shape.ndims not in (None, 0):
            raise ValueError(f"constant_values must be a scalar, got shape {op.inputs[2].shape}")
    rows, columns = paddings.shape.as_tuple() or (None, None)
    dims = x.shape.as_tuple()
    if columns not in (None, 2) or None not in (rows, dims) and rows != len(dims):
        raise ValueError(f"paddings must be a matrix of shape [rank of input, 2] = [{len(dims or ())}, 2], "
                         f"got {paddings.shape}")
    rank = len(dims) if dims is not None else rows
    widths = constant_ints(paddings)
    if rank is None or widths is None:
        return [(x.dtype, unknown_shape(rank))]
    pairs = list(zip(widths[::2], widths[1::2]))
    if min(widths, default=0) < 0:
        raise ValueError(f"Paddings must be non-negative, got {[list(p) for p in pairs]}")
    dims = dims or (None,) * rank
    # REFLECT leaves out the edge, so it can pad at most dim - 1; SYMMETRIC repeats it, up to dim.
    reach = {"REFLECT": 1, "SYMMETRIC": 0}.get(op.attrs.get("mode"))
    for (before, after), dim in zip(pairs, dims):
        if reach is not None and dim is not None and max(before, after) > dim - reach:
            raise ValueError(f"paddings {before}, {after} are too large for {op.attrs['mode']} mode on a "
                             f"dimension of size {dim}")
    return [(x.dtype, TensorShape([None if d is None else d + b + a for (b, a), d in zip(pairs, dims)]))]


def _np_pad(x: np.ndarray, widths, value):
    out = np.full([b + d + a for (b, a), d in zip(widths, x.shape)], value, dtype=x.dtype)
    out[tuple(_py_slice(b, b + d) for (b, _), d in zip(widths, x.shape))] = x
    return out


register_op("Pad", _infer_pad, dtypes=ARRAY_AND_STRING, examples=[
    Example(lambda x: pad(x, [[1, 0], [2, 3]]), lambda x: _np_pad(x, [[1, 0], [2, 3]], b"" if x.dtype == object else 0),
            inputs=((2, 3),)),
    Example(lambda x, p: pad(x, p, "constant"), lambda x, p: np.pad(x, p), inputs=((3,), np.array([[0, 2]])),
            dtypes=dtypes.ARRAY),
])
register_op("PadV2", _infer_pad, dtypes=ARRAY_AND_STRING, examples=[
    Example(lambda x, dtype: pad(x, [[1, 2], [0, 1]], constant_values=example_values(dtype)[0]),
            lambda x, dtype: _np_pad(x, [[1, 2], [0, 1]], example_values(dtype)[0]), inputs=((2, 2),)),
])
register_op("MirrorPad", _infer_pad, dtypes=ARRAY_AND_STRING, examples=[
    Example(lambda x: pad(x, [[1, 1], [2, 0]], "REFLECT"), lambda x: np.pad(x, [[1, 1], [2, 0]], "reflect"),
            inputs=((3, 4),)),
    Example(lambda x: pad(x, [[2, 1], [0, 3]], "symmetric"), lambda x: np.pad(x, [[2, 1], [0, 3]], "symmetric"),
            inputs=((2, 3),)),
], attrs={"mode": "string"})


@register_gradient("Pad")
@register_gradient("PadV2")
def _pad_grad(op, grad):
    """The middle of the gradient, where the input was; as in TF, constant_values get no gradient."""
    x, paddings = op.inputs[:2]
    widths = constant_ints(paddings)
    if widths is not None and x.shape.is_fully_defined():
        begin, sizes = np.array(widths[::2], np.int32), np.array(x.shape.as_list(), np.int32)
    else:
        begin, sizes = paddings[:, 0], shape(x, out_type=paddings.dtype)
    return [slice(grad, begin, sizes)] + [None] * (len(op.inputs) - 1)


@register_gradient("MirrorPad")
def _mirror_pad_grad(op, grad):
    return [mirror_pad_grad(grad, op.inputs[1], op.attrs["mode"]), None]


def _infer_mirror_pad_grad(op):
    grad, paddings = op.inputs
    check_claimed(op)
    check_index_input(op, 1, "paddings", rank=2)
    dims, widths = grad.shape.as_tuple(), constant_ints(paddings)
    if dims is None or widths is None:
        return [(grad.dtype, unknown_shape(len(dims) if dims is not None else paddings.shape[0].value))]
    if len(widths) != 2 * len(dims):
        raise ValueError(f"paddings must be a matrix of shape [{len(dims)}, 2], got {paddings.shape}")
    return [(grad.dtype, TensorShape([None if d is None else d - b - a
                                      for d, b, a in zip(dims, widths[::2], widths[1::2])]))]


def _np_mirror_pad_grad(grad, widths, mode: str):
    """The adjoint of np.pad: each padded element's gradient added to the input element it copies."""
    shape_ = tuple(d - b - a for d, (b, a) in zip(grad.shape, widths))
    sources = np.pad(np.arange(math.prod(shape_)).reshape(shape_), widths, mode)
    out = np.zeros(math.prod(shape_), grad.dtype)
    np.add.at(out, sources.ravel(), grad.ravel())
    return out.reshape(shape_)


register_op("MirrorPadGrad", _infer_mirror_pad_grad, dtypes=dtypes.NUMERIC, forwards_input=0, examples=[
    Example(lambda g: mirror_pad_grad(g, [[1, 1], [2, 0]], "REFLECT"),
            lambda g: _np_mirror_pad_grad(g, [[1, 1], [2, 0]], "reflect"), inputs=((5, 6),)),
    Example(lambda g: mirror_pad_grad(g, [[2, 1], [0, 3], [0, 0]], "SYMMETRIC"),
            lambda g: _np_mirror_pad_grad(g, [[2, 1], [0, 3], [0, 0]], "symmetric"), inputs=((5, 6, 2),)),
    Example(lambda g, p: mirror_pad_grad(g, p, "REFLECT"), lambda g, p: _np_mirror_pad_grad(g, p, "reflect"),
            inputs=((7,), np.array([[2, 2]], np.int64))),
], attrs={"mode": "string"})


@register_gradient("MirrorPadGrad")
def _mirror_pad_grad_grad(op, grad):
    return [pad(grad, op.inputs[1], op.attrs["mode"]), None]


def mirror_pad_grad(input, paddings, mode: str, name: str | None = None) -> Tensor:
    """The gradient of a REFLECT or SYMMETRIC pad: each padded element's value added to the element it copies."""
    inputs = [convert_to_tensor(input), index_tensor(paddings)]
    return get_default_graph().create_op("MirrorPadGrad", inputs, {"mode": mode.upper()}, name).outputs[0]


def pad(tensor, paddings, mode: str = "CONSTANT", name: str | None = None, constant_values=0) -> Tensor:
    """`tensor` padded by paddings[i] = [before, after] along each dimension i; mode CONSTANT, REFLECT or SYMMETRIC."""
    tensor, paddings = convert_to_tensor(tensor), index_tensor(paddings)
    mode = mode.upper()
    graph = get_default_graph()
    if mode == "CONSTANT":
        if isinstance(constant_values, numbers.Number) and constant_values == 0:
            return graph.create_op("Pad", [tensor, paddings], None, name).outputs[0]
        value = convert_to_tensor(constant_values, dtype=tensor.dtype)
        return graph.create_op("PadV2", [tensor, paddings, value], None, name).outputs[0]
    if mode in ("REFLECT", "SYMMETRIC"):
        return graph.create_op("MirrorPad", [tensor, paddings], {"mode": mode}, name).outputs[0]
    raise ValueError(f"Unknown padding mode: {mode}")
