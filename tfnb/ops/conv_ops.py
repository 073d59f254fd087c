"""Convolution and pooling ops of `tf.nn` (NHWC), with their gradient ops and gradient rules.

As in TF, the gradients of a convolution are ops of their own (Conv2DBackpropInput, which
conv2d_transpose also builds, and Conv2DBackpropFilter), as are those of pooling (MaxPoolGrad,
AvgPoolGrad, and MaxPoolGradGrad for second derivatives). The kernels (tfnb/kernels/conv.py)
pick an algorithm per shape by measuring.
"""

from __future__ import annotations

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.common_shapes import Geometry, conv_axis, geometry_from_attrs, pool_geometry
from tfnb.framework.errors import UnimplementedError
from tfnb.framework.graph import get_default_graph
from tfnb.framework.op_registry import Example, register_gradient, register_op
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape
from tfnb.ops.array.filling import zeros_like
from tfnb.ops.array.shapes import shape_from, shape_of
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.inference import check_dtype_in, check_same_dtype

__all__ = ["conv2d", "conv2d_backprop_input", "conv2d_backprop_filter", "conv2d_transpose", "max_pool", "avg_pool"]


def _op(op_type: str, inputs, attrs: dict, name: str | None) -> Tensor:
    return get_default_graph().create_op(op_type, inputs, attrs, name or op_type).outputs[0]


# -- attrs ----------------------------------------------------------------------------------------


def _spatial(value, what: str) -> list[int]:
    """TF1's int or list of 1, 2 or 4 ints (strides, dilations, ksize) as the NHWC list [1, h, w, 1]."""
    if value is None:
        raise ValueError(f"{what} must be given")
    values = [int(value)] if np.ndim(value) == 0 else [int(v) for v in value]
    if len(values) == 1:
        values = values * 2
    if len(values) == 2:
        values = [1, *values, 1]
    if len(values) != 4:
        raise ValueError(f"{what} should be of length 1, 2 or 4 but was {len(values)}")
    if values[0] != 1 or values[3] != 1:
        raise ValueError(f"Current implementation does not yet support {what} in the batch and depth dimensions.")
    if min(values) < 1:
        raise ValueError(f"{what} must be positive: {values}")
    return values


def _padding(padding) -> dict:
    """'SAME', 'VALID', or explicit [[0, 0], [top, bottom], [left, right], [0, 0]] as attrs."""
    if isinstance(padding, (str, bytes)):
        padding = padding.decode() if isinstance(padding, bytes) else padding
        if padding.upper() not in ("SAME", "VALID"):
            raise ValueError(f"padding must be 'SAME', 'VALID' or a list of pairs, got {padding!r}")
        return {"padding": padding.upper(), "explicit_paddings": []}
    pairs = [[int(v) for v in pair] for pair in padding]
    if len(pairs) != 4 or any(len(pair) != 2 for pair in pairs):
        raise ValueError(f"explicit padding must be 4 pairs [[0, 0], [top, bottom], [left, right], [0, 0]]: {padding}")
    if pairs[0] != [0, 0] or pairs[3] != [0, 0] or min(sum(pairs, [])) < 0:
        raise ValueError(f"explicit padding of the batch and depth dimensions must be zero, others >= 0: {padding}")
    return {"padding": "EXPLICIT", "explicit_paddings": sum(pairs, [])}


def _nhwc(data_format: str, what: str) -> str:
    if data_format != "NHWC":
        raise UnimplementedError(None, None, f"tfnb's {what} supports data_format='NHWC' only, not {data_format!r}")
    return data_format


def _conv_attrs(strides, padding, dilations, data_format: str, what: str) -> dict:
    return {"strides": _spatial(strides, "strides"), **_padding(padding),
            "dilations": _spatial([1, 1, 1, 1] if dilations is None else dilations, "dilations"),
            "data_format": _nhwc(data_format, what)}


def _pool_attrs(ksize, strides, padding, data_format: str, what: str) -> dict:
    attrs = {"ksize": _spatial(ksize, "ksize"), "strides": _spatial(strides, "strides"), **_padding(padding),
             "data_format": _nhwc(data_format, what)}
    if attrs["padding"] == "EXPLICIT":
        raise ValueError(f"{what} takes padding 'SAME' or 'VALID'")
    del attrs["explicit_paddings"]
    return attrs


def _conv_attrs_of(op) -> dict:
    return {k: op.attrs[k] for k in ("strides", "padding", "explicit_paddings", "dilations", "data_format")}


def _pool_attrs_of(op) -> dict:
    return {k: op.attrs[k] for k in ("ksize", "strides", "padding", "data_format")}


# -- static shapes --------------------------------------------------------------------------------


def _rank4(tensor: Tensor, what: str) -> tuple:
    shape = tensor.shape
    if shape.ndims not in (None, 4):
        raise ValueError(f"{what} must be 4-dimensional, got shape {shape}")
    return shape.with_rank(4).as_tuple()


def _same(a, b, what_a: str, what_b: str):
    """The dimension two tensors must share: the known one, ValueError if both are known and differ."""
    if a is not None and b is not None and a != b:
        raise ValueError(f"{what_a} ({a}) must match {what_b} ({b})")
    return a if a is not None else b


def _out_size(attrs: dict, axis: int, size, taps, dilation: int):
    """One output dimension, or None when it cannot be known while building."""
    if attrs["padding"] == "SAME" and size is not None:
        return -(-size // attrs["strides"][axis + 1])
    if size is None or taps is None:
        return None
    explicit = attrs.get("explicit_paddings") or [0] * 8
    return conv_axis(size, taps, attrs["strides"][axis + 1], dilation, attrs["padding"],
                     explicit[2 * axis + 2:2 * axis + 4]).out


def _conv_out_hw(attrs: dict, in_hw, filter_hw) -> list:
    return [_out_size(attrs, i, in_hw[i], filter_hw[i], attrs["dilations"][i + 1]) for i in range(2)]


def _claimed_dtype(op, *indices: int) -> dtypes.DType:
    dtype = check_same_dtype(op, *indices)
    check_dtype_in(op, dtype, op.op_def.dtypes, "input")
    return dtype


def _sizes(op, index: int) -> tuple:
    """The static shape that a sizes input (input_sizes, filter_sizes, orig_input_shape) describes."""
    tensor = op.inputs[index]
    check_dtype_in(op, tensor.dtype, dtypes.INDEX, "sizes")
    shape = shape_from(tensor)
    if tensor.shape.ndims not in (None, 1) or shape.ndims not in (None, 4):
        raise ValueError(f"sizes must be a 4-element vector, got {tensor.shape} tensor {shape}")
    return shape.with_rank(4).as_tuple()


def _check_out_backprop(attrs: dict, in_hw, filter_hw, dy: tuple) -> None:
    for axis, (want, got) in enumerate(zip(_conv_out_hw(attrs, in_hw, filter_hw), dy[1:3])):
        _same(want, got, f"computed output size {'HW'[axis]}", f"out_backprop dimension {axis + 1}")


# -- conv2d ---------------------------------------------------------------------------------------


def _np_canvas(x: np.ndarray, geo: Geometry) -> np.ndarray:
    """x zero-padded to the canvas that the outputs read, in float64 (for the NumPy references)."""
    canvas = np.zeros((x.shape[0], max(geo.h.canvas, geo.h.pad + x.shape[1]),
                       max(geo.w.canvas, geo.w.pad + x.shape[2]), x.shape[3]))
    canvas[:, geo.h.pad:geo.h.pad + x.shape[1], geo.w.pad:geo.w.pad + x.shape[2]] = x
    return canvas


def _np_tap(canvas: np.ndarray, geo: Geometry, a: int, b: int) -> np.ndarray:
    """The canvas elements that tap (a, b) of every output window reads: (B, Ho, Wo, C)."""
    h, w = geo.h, geo.w
    return canvas[:, a * h.dilation::h.stride, b * w.dilation::w.stride][:, :h.out, :w.out]


def _np_conv2d(x, w, strides=1, padding="VALID", dilations=1):
    """Direct NumPy Conv2D in float64: for each filter tap, a shifted input times that tap's matrix."""
    attrs = _conv_attrs(strides, padding, dilations, "NHWC", "conv2d")
    geo = geometry_from_attrs(attrs, x.shape[1:3], w.shape[:2])
    canvas = _np_canvas(x, geo)
    return sum(_np_tap(canvas, geo, a, b) @ w[a, b].astype(np.float64)
               for a in range(w.shape[0]) for b in range(w.shape[1]))


def _np_conv2d_backprop_input(sizes, w, dy, strides=1, padding="VALID", dilations=1):
    """Direct NumPy input gradient: each tap scatters dy times its transposed matrix back onto the canvas."""
    attrs = _conv_attrs(strides, padding, dilations, "NHWC", "conv2d")
    geo = geometry_from_attrs(attrs, sizes[1:3], w.shape[:2])
    canvas = _np_canvas(np.zeros(sizes), geo)
    for a in range(w.shape[0]):
        for b in range(w.shape[1]):
            _np_tap(canvas, geo, a, b)[...] += dy @ w[a, b].T.astype(np.float64)
    return canvas[:, geo.h.pad:geo.h.pad + sizes[1], geo.w.pad:geo.w.pad + sizes[2]]


def _np_conv2d_backprop_filter(x, sizes, dy, strides=1, padding="VALID", dilations=1):
    """Direct NumPy filter gradient: per tap, the batch and position sum of input^T dy."""
    attrs = _conv_attrs(strides, padding, dilations, "NHWC", "conv2d")
    geo = geometry_from_attrs(attrs, x.shape[1:3], sizes[:2])
    canvas = _np_canvas(x, geo)
    dy = dy.astype(np.float64)
    return np.array([[np.tensordot(_np_tap(canvas, geo, a, b), dy, axes=([0, 1, 2], [0, 1, 2]))
                      for b in range(sizes[1])] for a in range(sizes[0])])


def _infer_conv2d(op):
    dtype = _claimed_dtype(op)
    x, w = _rank4(op.inputs[0], "input"), _rank4(op.inputs[1], "filter")
    _same(x[3], w[2], "input depth", "filter in_depth")
    return [(dtype, TensorShape([x[0], *_conv_out_hw(op.attrs, x[1:3], w[:2]), w[3]]))]


# The attrs of a convolution and of a pooling, in each direction.
_CONV_ATTRS = {"strides": "list(int)", "padding": "string", "explicit_paddings": "list(int)", "dilations": "list(int)",
               "data_format": "string", "use_cudnn_on_gpu": "bool"}
_POOL_ATTRS = {"ksize": "list(int)", "strides": "list(int)", "padding": "string", "data_format": "string"}

register_op("Conv2D", _infer_conv2d, dtypes=dtypes.FLOATS, examples=[
    Example(lambda x, w: conv2d(x, w, 1, "SAME"), lambda x, w: _np_conv2d(x, w, 1, "SAME"),
            inputs=((2, 5, 5, 3), (3, 3, 3, 4))),
    Example(lambda x, w: conv2d(x, w, [1, 2, 2, 1], "VALID"), lambda x, w: _np_conv2d(x, w, 2, "VALID"),
            inputs=((1, 7, 6, 2), (2, 3, 2, 3))),
    Example(lambda x, w: conv2d(x, w, [2, 3], "SAME"), lambda x, w: _np_conv2d(x, w, [2, 3], "SAME"),
            inputs=((2, 6, 7, 3), (3, 2, 3, 2))),
    Example(lambda x, w: conv2d(x, w, 1, "SAME", dilations=2), lambda x, w: _np_conv2d(x, w, 1, "SAME", 2),
            inputs=((1, 7, 6, 2), (3, 2, 2, 2))),
    Example(lambda x, w: conv2d(x, w, [1, 2], [[0, 0], [1, 2], [0, 1], [0, 0]]),
            lambda x, w: _np_conv2d(x, w, [1, 2], [[0, 0], [1, 2], [0, 1], [0, 0]]),
            inputs=((2, 4, 5, 2), (2, 3, 2, 3))),
    Example(lambda x, w: conv2d(x, w, 1, "SAME"), lambda x, w: _np_conv2d(x, w, 1, "SAME"),
            inputs=((2, 8, 8, 4), (5, 5, 4, 6)), low=-1, high=1, atol=1e-5),
],
            attrs=_CONV_ATTRS)


def conv2d(input, filter=None, strides=None, padding=None, use_cudnn_on_gpu: bool = True,  # noqa: A002
           data_format: str = "NHWC", dilations=(1, 1, 1, 1), name: str | None = None, filters=None) -> Tensor:
    """2-D cross-correlation of NHWC `input` with a [height, width, in, out] filter, as tf.nn.conv2d.

    tfnb differs: data_format 'NCHW' raises UnimplementedError.
    """
    filter = filters if filter is None else filter
    attrs = _conv_attrs(strides, padding, dilations, data_format, "conv2d")
    attrs["use_cudnn_on_gpu"] = bool(use_cudnn_on_gpu)
    input = convert_to_tensor(input)
    return _op("Conv2D", (input, convert_to_tensor(filter, dtype=input.dtype)), attrs, name)


@register_gradient("Conv2D")
def _conv2d_grad(op, grad):
    x, w = op.inputs
    attrs = _conv_attrs_of(op)
    return [_op("Conv2DBackpropInput", (shape_of(x), w, grad), attrs, None),
            _op("Conv2DBackpropFilter", (x, shape_of(w), grad), attrs, None)]


# -- conv2d_backprop_input and conv2d_transpose ----------------------------------------------------


def _infer_backprop_input(op):
    dtype = _claimed_dtype(op, 1, 2)
    sizes = _sizes(op, 0)
    w, dy = _rank4(op.inputs[1], "filter"), _rank4(op.inputs[2], "out_backprop")
    shape = [_same(sizes[0], dy[0], "input_sizes batch", "out_backprop batch"), sizes[1], sizes[2],
             _same(sizes[3], w[2], "input_sizes depth", "filter in_depth")]
    _same(w[3], dy[3], "filter out_depth", "out_backprop depth")
    _check_out_backprop(op.attrs, shape[1:3], w[:2], dy)
    return [(dtype, TensorShape(shape))]


register_op("Conv2DBackpropInput", _infer_backprop_input, dtypes=dtypes.FLOATS, examples=[
    Example(lambda w, dy: conv2d_backprop_input([2, 5, 5, 3], w, dy, [1, 1, 1, 1], "SAME"),
            lambda w, dy: _np_conv2d_backprop_input((2, 5, 5, 3), w, dy, 1, "SAME"),
            inputs=((3, 3, 3, 4), (2, 5, 5, 4))),
    Example(lambda w, dy: conv2d_transpose(dy, w, [2, 6, 7, 2], [1, 2, 2, 1], "SAME"),
            lambda w, dy: _np_conv2d_backprop_input((2, 6, 7, 2), w, dy, 2, "SAME"),
            inputs=((3, 3, 2, 4), (2, 3, 4, 4))),
    Example(lambda w, dy: conv2d_backprop_input([1, 7, 6, 2], w, dy, [1, 2, 1, 1], "VALID", dilations=[1, 1, 2, 1]),
            lambda w, dy: _np_conv2d_backprop_input((1, 7, 6, 2), w, dy, [2, 1], "VALID", [1, 2]),
            inputs=((2, 3, 2, 3), (1, 3, 2, 3))),
    Example(lambda w, dy: conv2d_backprop_input([2, 4, 5, 2], w, dy, [1, 2], [[0, 0], [1, 2], [0, 1], [0, 0]]),
            lambda w, dy: _np_conv2d_backprop_input((2, 4, 5, 2), w, dy, [1, 2],
                                                    [[0, 0], [1, 2], [0, 1], [0, 0]]),
            inputs=((2, 3, 2, 3), (2, 6, 2, 3))),
],
            attrs=_CONV_ATTRS)


def conv2d_backprop_input(input_sizes, filter=None, out_backprop=None, strides=None, padding=None,  # noqa: A002
                          use_cudnn_on_gpu: bool = True, data_format: str = "NHWC", dilations=(1, 1, 1, 1),
                          name: str | None = None, filters=None) -> Tensor:
    """The gradient of conv2d with respect to its input, of shape `input_sizes`, given dy = `out_backprop`.

    tfnb differs: data_format 'NCHW' raises UnimplementedError.
    """
    filter = filters if filter is None else filter
    attrs = _conv_attrs(strides, padding, dilations, data_format, "conv2d_backprop_input")
    attrs["use_cudnn_on_gpu"] = bool(use_cudnn_on_gpu)
    filter = convert_to_tensor(filter)
    inputs = (convert_to_tensor(input_sizes, dtype=dtypes.int32), filter,
              convert_to_tensor(out_backprop, dtype=filter.dtype))
    return _op("Conv2DBackpropInput", inputs, attrs, name)


def conv2d_transpose(value=None, filter=None, output_shape=None, strides=None, padding: str = "SAME",  # noqa: A002
                     data_format: str = "NHWC", name: str | None = None, input=None, filters=None,  # noqa: A002
                     dilations=None) -> Tensor:
    """The transpose of conv2d (the gradient of conv2d with respect to its input), as tf.nn.conv2d_transpose.

    The filter is [height, width, output channels, value channels]. tfnb differs: 'NCHW' raises UnimplementedError.
    """
    value = value if value is not None else input
    filter = filter if filter is not None else filters
    return conv2d_backprop_input(output_shape, filter, value, strides, padding, data_format=data_format,
                                 dilations=dilations, name=name or "conv2d_transpose")


@register_gradient("Conv2DBackpropInput")
def _conv2d_backprop_input_grad(op, grad):
    _, w, dy = op.inputs
    attrs = _conv_attrs_of(op)
    return [None, _op("Conv2DBackpropFilter", (grad, shape_of(w), dy), attrs, None),
            _op("Conv2D", (grad, w), attrs, None)]


# -- conv2d_backprop_filter -----------------------------------------------------------------------


def _infer_backprop_filter(op):
    dtype = _claimed_dtype(op, 0, 2)
    sizes = _sizes(op, 1)
    x, dy = _rank4(op.inputs[0], "input"), _rank4(op.inputs[2], "out_backprop")
    _same(x[0], dy[0], "input batch", "out_backprop batch")
    shape = [sizes[0], sizes[1], _same(sizes[2], x[3], "filter_sizes in_depth", "input depth"),
             _same(sizes[3], dy[3], "filter_sizes out_depth", "out_backprop depth")]
    _check_out_backprop(op.attrs, x[1:3], shape[:2], dy)
    return [(dtype, TensorShape(shape))]


register_op("Conv2DBackpropFilter", _infer_backprop_filter, dtypes=dtypes.FLOATS, examples=[
    Example(lambda x, dy: conv2d_backprop_filter(x, [3, 3, 3, 4], dy, [1, 1, 1, 1], "SAME"),
            lambda x, dy: _np_conv2d_backprop_filter(x, (3, 3, 3, 4), dy, 1, "SAME"),
            inputs=((2, 5, 5, 3), (2, 5, 5, 4))),
    Example(lambda x, dy: conv2d_backprop_filter(x, [2, 3, 2, 3], dy, [1, 2, 2, 1], "VALID"),
            lambda x, dy: _np_conv2d_backprop_filter(x, (2, 3, 2, 3), dy, 2, "VALID"),
            inputs=((1, 7, 6, 2), (1, 3, 2, 3))),
    Example(lambda x, dy: conv2d_backprop_filter(x, [3, 2, 2, 2], dy, [1, 1, 1, 1], "SAME", dilations=2),
            lambda x, dy: _np_conv2d_backprop_filter(x, (3, 2, 2, 2), dy, 1, "SAME", 2),
            inputs=((1, 7, 6, 2), (1, 7, 6, 2))),
],
            attrs=_CONV_ATTRS)


def conv2d_backprop_filter(input, filter_sizes, out_backprop, strides, padding,  # noqa: A002
                           use_cudnn_on_gpu: bool = True, data_format: str = "NHWC", dilations=(1, 1, 1, 1),
                           name: str | None = None) -> Tensor:
    """The gradient of conv2d with respect to its filter, of shape `filter_sizes`, given dy = `out_backprop`.

    tfnb differs: data_format 'NCHW' raises UnimplementedError.
    """
    attrs = _conv_attrs(strides, padding, dilations, data_format, "conv2d_backprop_filter")
    attrs["use_cudnn_on_gpu"] = bool(use_cudnn_on_gpu)
    input = convert_to_tensor(input)
    inputs = (input, convert_to_tensor(filter_sizes, dtype=dtypes.int32),
              convert_to_tensor(out_backprop, dtype=input.dtype))
    return _op("Conv2DBackpropFilter", inputs, attrs, name)


@register_gradient("Conv2DBackpropFilter")
def _conv2d_backprop_filter_grad(op, grad):
    x, _, dy = op.inputs
    attrs = _conv_attrs_of(op)
    return [_op("Conv2DBackpropInput", (shape_of(x), grad, dy), attrs, None), None,
            _op("Conv2D", (x, grad), attrs, None)]


# -- pooling --------------------------------------------------------------------------------------


def _pool_out_shape(attrs: dict, x: tuple) -> TensorShape:
    taps = attrs["ksize"][1:3]
    return TensorShape([x[0], *(_out_size(attrs, i, x[i + 1], taps[i], 1) for i in range(2)), x[3]])


def _infer_pool(op):
    dtype = _claimed_dtype(op)
    return [(dtype, _pool_out_shape(op.attrs, _rank4(op.inputs[0], "input")))]


def _np_pool_windows(x, ksize, strides, padding, fill):
    """Every pooling window as (B, Ho, Wo, C, kh*kw), padding filled with `fill` (NumPy reference)."""
    attrs = _pool_attrs(ksize, strides, padding, "NHWC", "pool")
    geo = pool_geometry(attrs, x.shape[1:3])
    canvas = _np_canvas(np.zeros(x.shape), geo) + fill
    canvas[:, geo.h.pad:geo.h.pad + x.shape[1], geo.w.pad:geo.w.pad + x.shape[2]] = x
    return np.stack([_np_tap(canvas, geo, a, b) for a in range(geo.h.taps) for b in range(geo.w.taps)], -1), geo


def _np_max_pool(x, ksize, strides, padding):
    windows, _ = _np_pool_windows(x.astype(np.float64), ksize, strides, padding, -np.inf)
    return windows.max(-1).astype(x.dtype)


def _np_avg_pool(x, ksize, strides, padding):
    windows, _ = _np_pool_windows(x.astype(np.float64), ksize, strides, padding, np.nan)
    return np.nanmean(windows, -1)


_POOL_CASES = [((2, 2), (2, 2), "VALID", (2, 4, 6, 3)), ((3, 3), (2, 2), "SAME", (2, 5, 6, 3)),
               ((2, 2), (1, 1), "VALID", (1, 4, 5, 2)), ((2, 3), (2, 3), "SAME", (1, 5, 7, 2)),
               ((3, 2), (1, 2), "SAME", (2, 4, 5, 2)), ((2, 2), (2, 2), "SAME", (1, 4, 6, 2)),
               ((3, 2), (3, 2), "VALID", (2, 7, 5, 2))]

register_op("MaxPool", _infer_pool, dtypes=dtypes.REAL, examples=[
    Example(lambda x, k=k, s=s, p=p: max_pool(x, k, s, p), lambda x, k=k, s=s, p=p: _np_max_pool(x, k, s, p),
            inputs=(shape,)) for k, s, p, shape in _POOL_CASES],
            attrs=_POOL_ATTRS)


def max_pool(value=None, ksize=None, strides=None, padding=None, data_format: str = "NHWC", name: str | None = None,
             input=None) -> Tensor:  # noqa: A002
    """The maximum of each ksize window of NHWC `value`, windows `strides` apart, as tf.nn.max_pool.

    tfnb differs: data_format 'NCHW' raises UnimplementedError.
    """
    value = value if value is not None else input
    attrs = _pool_attrs(ksize, strides, padding, data_format, "max_pool")
    return _op("MaxPool", (convert_to_tensor(value),), attrs, name)


register_op("AvgPool", _infer_pool, dtypes=dtypes.FLOATS, examples=[
    Example(lambda x, k=k, s=s, p=p: avg_pool(x, k, s, p), lambda x, k=k, s=s, p=p: _np_avg_pool(x, k, s, p),
            inputs=(shape,)) for k, s, p, shape in _POOL_CASES],
            attrs=_POOL_ATTRS)


def avg_pool(value=None, ksize=None, strides=None, padding=None, data_format: str = "NHWC", name: str | None = None,
             input=None) -> Tensor:  # noqa: A002
    """The mean of each ksize window of NHWC `value`; with SAME padding only real elements count, as TF.

    tfnb differs: data_format 'NCHW' raises UnimplementedError.
    """
    value = value if value is not None else input
    attrs = _pool_attrs(ksize, strides, padding, data_format, "avg_pool")
    return _op("AvgPool", (convert_to_tensor(value),), attrs, name)


# -- pooling gradients ----------------------------------------------------------------------------


def _np_first_max_taps(x, ksize, strides, padding):
    """(flat input index, window geometry) of each window's first maximum, for the NumPy references."""
    windows, geo = _np_pool_windows(x.astype(np.float64), ksize, strides, padding, -np.inf)
    taps = windows.argmax(-1)
    rows = geo.h.output_positions()[:, None, None] + taps // geo.w.taps - geo.h.pad
    cols = geo.w.output_positions()[None, :, None] + taps % geo.w.taps - geo.w.pad
    batch = np.arange(x.shape[0])[:, None, None, None]
    return np.ravel_multi_index((batch, rows, cols, np.arange(x.shape[3])), x.shape)


def _np_max_pool_grad(x, dy, ksize, strides, padding):
    flat = _np_first_max_taps(x, ksize, strides, padding)
    return np.bincount(flat.ravel(), dy.astype(np.float64).ravel(), x.size).reshape(x.shape)


def _np_max_pool_grad_grad(x, ddx, ksize, strides, padding):
    return ddx.ravel()[_np_first_max_taps(x, ksize, strides, padding)]


def _np_avg_pool_grad(shape, dy, ksize, strides, padding):
    windows, geo = _np_pool_windows(np.zeros(shape), ksize, strides, padding, np.nan)
    share = dy / (~np.isnan(windows)).sum(-1)
    canvas = _np_canvas(np.zeros(shape), geo)
    for a in range(geo.h.taps):
        for b in range(geo.w.taps):
            _np_tap(canvas, geo, a, b)[...] += share
    return canvas[:, geo.h.pad:geo.h.pad + shape[1], geo.w.pad:geo.w.pad + shape[2]]


def _infer_max_pool_grad(op):
    dtype = _claimed_dtype(op)
    x, y, dy = (_rank4(t, what) for t, what in zip(op.inputs, ("orig_input", "orig_output", "grad")))
    out = _pool_out_shape(op.attrs, x).merge_with(y).merge_with(dy)
    return [(dtype, TensorShape([out.as_tuple()[0], x[1], x[2], out.as_tuple()[3]]))]


register_op("MaxPoolGrad", _infer_max_pool_grad, dtypes=dtypes.FLOATS, examples=[
    Example(lambda x, dy, k=k, s=s, p=p: max_pool_grad(x, max_pool(x, k, s, p), dy, k, s, p),
            lambda x, dy, k=k, s=s, p=p: _np_max_pool_grad(x, dy, k, s, p),
            inputs=(shape, _np_max_pool(np.zeros(shape), k, s, p).shape)) for k, s, p, shape in _POOL_CASES],
            attrs=_POOL_ATTRS)


def max_pool_grad(orig_input, orig_output, grad, ksize, strides, padding, data_format: str = "NHWC",
                  name: str | None = None) -> Tensor:
    """The gradient of max_pool: each window's grad goes to its first maximum in orig_input (the MaxPoolGrad op)."""
    attrs = _pool_attrs(ksize, strides, padding, data_format, "max_pool_grad")
    orig_input = convert_to_tensor(orig_input)
    inputs = (orig_input, *(convert_to_tensor(t, dtype=orig_input.dtype) for t in (orig_output, grad)))
    return _op("MaxPoolGrad", inputs, attrs, name)


@register_gradient("MaxPool")
def _max_pool_grad(op, grad):
    return [_op("MaxPoolGrad", (op.inputs[0], op.outputs[0], grad), _pool_attrs_of(op), None)]


def _infer_max_pool_grad_grad(op):
    dtype = _claimed_dtype(op)
    x, y, ddx = (_rank4(t, what) for t, what in zip(op.inputs, ("orig_input", "orig_output", "grad")))
    if not TensorShape(x).is_compatible_with(ddx):
        raise ValueError(f"grad {TensorShape(ddx)} must have the shape of orig_input {TensorShape(x)}")
    return [(dtype, _pool_out_shape(op.attrs, x).merge_with(y))]


register_op("MaxPoolGradGrad", _infer_max_pool_grad_grad, dtypes=dtypes.FLOATS, examples=[
    Example(lambda x, ddx, k=k, s=s, p=p: max_pool_grad_grad(x, max_pool(x, k, s, p), ddx, k, s, p),
            lambda x, ddx, k=k, s=s, p=p: _np_max_pool_grad_grad(x, ddx, k, s, p),
            inputs=(shape, shape)) for k, s, p, shape in _POOL_CASES[:3]],
            attrs=_POOL_ATTRS)


def max_pool_grad_grad(orig_input, orig_output, grad, ksize, strides, padding, data_format: str = "NHWC",
                       name: str | None = None) -> Tensor:
    """The gradient of max_pool_grad with respect to its grad: grad read at each window's first maximum."""
    attrs = _pool_attrs(ksize, strides, padding, data_format, "max_pool_grad_grad")
    orig_input = convert_to_tensor(orig_input)
    inputs = (orig_input, *(convert_to_tensor(t, dtype=orig_input.dtype) for t in (orig_output, grad)))
    return _op("MaxPoolGradGrad", inputs, attrs, name)


@register_gradient("MaxPoolGrad")
def _max_pool_grad_grad(op, grad):
    x, y, _ = op.inputs
    return [zeros_like(x), zeros_like(y), _op("MaxPoolGradGrad", (x, y, grad), _pool_attrs_of(op), None)]


@register_gradient("MaxPoolGradGrad")
def _max_pool_grad_grad_grad(op, grad):
    x, y, _ = op.inputs
    return [zeros_like(x), zeros_like(y), _op("MaxPoolGrad", (x, y, grad), _pool_attrs_of(op), None)]


def _infer_avg_pool_grad(op):
    dtype = _claimed_dtype(op, 1)
    sizes = _sizes(op, 0)
    dy = _rank4(op.inputs[1], "grad")
    out = _pool_out_shape(op.attrs, sizes).merge_with(dy).as_tuple()
    return [(dtype, TensorShape([out[0], sizes[1], sizes[2], out[3]]))]


register_op("AvgPoolGrad", _infer_avg_pool_grad, dtypes=dtypes.FLOATS, examples=[
    Example(lambda dy, k=k, s=s, p=p, shape=shape: avg_pool_grad(shape, dy, k, s, p),
            lambda dy, k=k, s=s, p=p, shape=shape: _np_avg_pool_grad(shape, dy, k, s, p),
            inputs=(_np_max_pool(np.zeros(shape), k, s, p).shape,)) for k, s, p, shape in _POOL_CASES],
            attrs=_POOL_ATTRS)


def avg_pool_grad(orig_input_shape, grad, ksize, strides, padding, data_format: str = "NHWC",
                  name: str | None = None) -> Tensor:
    """The gradient of avg_pool: each window's grad shared among its real input elements (the AvgPoolGrad op)."""
    attrs = _pool_attrs(ksize, strides, padding, data_format, "avg_pool_grad")
    inputs = (convert_to_tensor(orig_input_shape, dtype=dtypes.int32), convert_to_tensor(grad))
    return _op("AvgPoolGrad", inputs, attrs, name)


@register_gradient("AvgPool")
def _avg_pool_grad(op, grad):
    return [_op("AvgPoolGrad", (shape_of(op.inputs[0]), grad), _pool_attrs_of(op), None)]


@register_gradient("AvgPoolGrad")
def _avg_pool_grad_grad(op, grad):
    return [None, _op("AvgPool", (grad,), _pool_attrs_of(op), None)]
