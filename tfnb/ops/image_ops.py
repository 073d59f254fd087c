"""tf.image: decoding (DecodeJpeg, DecodePng), resizing (ResizeBilinear, ResizeNearestNeighbor, with their
gradients), and the conversions and random distortions of input pipelines, built from existing ops.

Images are [height, width, channels] (or a batch of them, [batch, height, width, channels]).
"""

from __future__ import annotations

import enum
import io

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.graph import get_default_graph, name_scope
from tfnb.framework.op_registry import Example, not_differentiable, register_gradient, register_op
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape
from tfnb.ops import array_ops, math_ops
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.control_flow.cond import cond
from tfnb.ops.inference import constant_ints
from tfnb.ops.random_ops import random_uniform

__all__ = ["decode_jpeg", "decode_png", "resize_images", "resize_bilinear", "resize_nearest_neighbor",
           "ResizeMethod", "convert_image_dtype", "per_image_standardization", "flip_left_right", "flip_up_down",
           "random_flip_left_right", "random_flip_up_down", "random_crop", "adjust_brightness",
           "random_brightness", "adjust_contrast", "random_contrast"]


# -- decoding ---------------------------------------------------------------------------------------------


def _infer_decode(op):
    contents = op.inputs[0]
    if contents.dtype is not dtypes.string:
        raise TypeError(f"{op.type} decodes a string tensor, got {contents.dtype.name}")
    if contents.shape.ndims not in (None, 0):
        raise ValueError(f"contents must be a scalar, got shape {contents.shape}")
    channels = op.attrs["channels"]
    if channels not in (0, 1, 3, 4) or (op.type == "DecodeJpeg" and channels == 4):
        raise ValueError(f"channels must be 0, 1, 3{'' if op.type == 'DecodeJpeg' else ' or 4'}, got {channels}")
    return [(op.attrs.get("dtype", dtypes.uint8), TensorShape([None, None, channels or None]))]


def _encoded(array: np.ndarray, image_format: str) -> np.ndarray:
    """An image encoded by Pillow, as a string scalar (what the examples decode)."""
    from PIL import Image  # noqa: PLC0415 (Pillow is optional: needed only to decode or encode images)
    buffer = io.BytesIO()
    pixels = array[:, :, 0] if array.shape[2] == 1 else array
    Image.fromarray(pixels).save(buffer, format=image_format, **({"quality": 100} if image_format == "JPEG" else {}))
    return np.array(buffer.getvalue(), dtype=object)


_PIXELS = np.arange(4 * 5 * 3, dtype=np.uint8).reshape(4, 5, 3) * 4
_GRAY = np.full((6, 4, 1), 128, np.uint8)

register_op("DecodePng", _infer_decode, dtypes=(dtypes.uint8, dtypes.uint16), examples=[
    Example(lambda: decode_png(_encoded(_PIXELS, "PNG")), lambda: _PIXELS, differentiable=False),
    Example(lambda: decode_png(_encoded(_PIXELS, "PNG"), channels=4),
            lambda: np.concatenate([_PIXELS, np.full((4, 5, 1), 255, np.uint8)], 2), differentiable=False),
    Example(lambda: decode_png(_encoded(_GRAY, "PNG"), dtype=dtypes.uint16), lambda: _GRAY.astype(np.uint16) * 257,
            differentiable=False),
], attrs={"channels": "int", "dtype": "type"})
register_op("DecodeJpeg", _infer_decode, dtypes=(dtypes.uint8,), examples=[
    Example(lambda: decode_jpeg(_encoded(_GRAY, "JPEG")), lambda: _GRAY, differentiable=False),
    Example(lambda: decode_jpeg(_encoded(_GRAY, "JPEG"), channels=3), lambda: np.repeat(_GRAY, 3, axis=2),
            differentiable=False),
], attrs={"channels": "int"})
not_differentiable("DecodePng", "DecodeJpeg")


def decode_png(contents, channels: int = 0, dtype=dtypes.uint8, name: str | None = None) -> Tensor:
    """A PNG file's pixels, [height, width, channels]: as stored (channels=0), gray (1), RGB (3) or RGBA (4).

    tfnb decodes with Pillow.
    """
    attrs = {"channels": int(channels), "dtype": dtypes.as_dtype(dtype)}
    contents = convert_to_tensor(contents, dtype=dtypes.string)
    return get_default_graph().create_op("DecodePng", (contents,), attrs, name).outputs[0]


def decode_jpeg(contents, channels: int = 0, ratio: int = 1, fancy_upscaling: bool = True,
                try_recover_truncated: bool = False, acceptable_fraction: float = 1, dct_method: str = "",
                name: str | None = None) -> Tensor:
    """A JPEG file's pixels as uint8 [height, width, channels]: as stored (channels=0), gray (1) or RGB (3).

    tfnb decodes with Pillow (values may differ from libjpeg's by a unit); ratio and the tuning flags are ignored.
    """
    contents = convert_to_tensor(contents, dtype=dtypes.string)
    return get_default_graph().create_op("DecodeJpeg", (contents,), {"channels": int(channels)}, name).outputs[0]


# -- resizing -----------------------------------------------------------------------------------------------


class ResizeMethod(enum.IntEnum):
    """TF1's resize methods (tf.image.ResizeMethod)."""

    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


def _infer_resize(op):
    images, size = op.inputs
    if images.dtype not in op.op_def.dtypes:
        raise TypeError(f"{op.type} does not take {images.dtype.name} images")
    if images.shape.ndims not in (None, 4):
        raise ValueError(f"images must be 4-dimensional, got shape {images.shape}")
    if size.dtype is not dtypes.int32 or size.shape.ndims not in (None, 1):
        raise ValueError(f"size must be an int32 vector [new_height, new_width], got {size.dtype.name} {size.shape}")
    new = constant_ints(size) or [None, None]
    batch, channels = (images.shape[0].value, images.shape[3].value) if images.shape.ndims else (None, None)
    dtype = dtypes.float32 if op.type == "ResizeBilinear" else images.dtype
    return [(dtype, TensorShape([batch, new[0], new[1], channels]))]


def _infer_resize_grad(op):
    grads, original = op.inputs
    return [(original.dtype, original.shape)]


def _taps(i: int, size_in: int, size_out: int, align_corners: bool, nearest: bool) -> list[tuple[int, float]]:
    """The input positions that output position i reads and their weights: TF's legacy rule samples input
    position i * scale, scale = in / out, or (in - 1) / (out - 1) with align_corners."""
    scale = (size_in - 1) / (size_out - 1) if align_corners and size_out > 1 else size_in / size_out
    position = i * scale
    if nearest:
        return [(min(int(np.floor(position + 0.5) if align_corners else np.floor(position)), size_in - 1), 1.0)]
    low = min(int(np.floor(position)), size_in - 1)
    return [(low, 1.0 - (position - low)), (min(low + 1, size_in - 1), position - low)]


def _np_resize(images, size, align_corners=False, nearest=False):
    """The NumPy reference, pixel by pixel."""
    _, height, width, _ = images.shape
    out = np.zeros((images.shape[0], size[0], size[1], images.shape[3]))
    for i in range(size[0]):
        for j in range(size[1]):
            for y, wy in _taps(i, height, size[0], align_corners, nearest):
                for x, wx in _taps(j, width, size[1], align_corners, nearest):
                    out[:, i, j] += wy * wx * images[:, y, x]
    return out.astype(np.float32) if not nearest else out.astype(images.dtype)


def _np_resize_grad(grads, original, align_corners=False, nearest=False):
    """Each output pixel's gradient handed back to the input pixels it read, with their weights."""
    _, height, width, _ = original.shape
    out = np.zeros(original.shape)
    for i in range(grads.shape[1]):
        for j in range(grads.shape[2]):
            for y, wy in _taps(i, height, grads.shape[1], align_corners, nearest):
                for x, wx in _taps(j, width, grads.shape[2], align_corners, nearest):
                    out[:, y, x] += wy * wx * grads[:, i, j]
    return out.astype(original.dtype)


_RESIZABLE = (dtypes.uint8, dtypes.int32, dtypes.int64, dtypes.float16, dtypes.float32, dtypes.float64)

# ResizeBilinear gives float32 whatever its input, too coarse for finite differences: its gradient is checked
# through ResizeBilinearGrad's examples and tests/tfnb/ops/test_image_ops.py.
register_op("ResizeBilinear", _infer_resize, dtypes=_RESIZABLE, examples=[
    Example(lambda x: resize_bilinear(x, [5, 3]), lambda x: _np_resize(x, [5, 3]), inputs=((2, 3, 4, 2),),
            low=0, high=9, differentiable=False),
    Example(lambda x: resize_bilinear(x, [2, 7], align_corners=True), lambda x: _np_resize(x, [2, 7], True),
            inputs=((1, 4, 3, 1),), low=0, high=9, differentiable=False),
], attrs={"align_corners": "bool", "half_pixel_centers": "bool"})
register_op("ResizeNearestNeighbor", _infer_resize, dtypes=_RESIZABLE, examples=[
    Example(lambda x: resize_nearest_neighbor(x, [5, 2]), lambda x: _np_resize(x, [5, 2], nearest=True),
            inputs=((2, 3, 4, 1),), low=0, high=9),
    Example(lambda x: resize_nearest_neighbor(x, [3, 6], align_corners=True),
            lambda x: _np_resize(x, [3, 6], True, nearest=True), inputs=((1, 4, 3, 2),), low=0, high=9),
], attrs={"align_corners": "bool", "half_pixel_centers": "bool"})


register_op("ResizeBilinearGrad", _infer_resize_grad, dtypes=dtypes.FLOATS, examples=[
    Example(lambda g, x: resize_grad("ResizeBilinearGrad", g, x, False), lambda g, x: _np_resize_grad(g, x),
            inputs=((2, 5, 3, 2), (2, 3, 4, 2))),
], attrs={"align_corners": "bool"})
register_op("ResizeNearestNeighborGrad", _infer_resize_grad, dtypes=dtypes.FLOATS, examples=[
    Example(lambda g, x: resize_grad("ResizeNearestNeighborGrad", g, x, True),
            lambda g, x: _np_resize_grad(g, x, True, nearest=True), inputs=((1, 3, 6, 2), (1, 4, 3, 2))),
], attrs={"align_corners": "bool"})


def resize_grad(op_type: str, grads: Tensor, original: Tensor, align_corners: bool) -> Tensor:
    """The gradient of a resize with respect to its images, shaped like `original`."""
    return get_default_graph().create_op(op_type, (grads, original), {"align_corners": bool(align_corners)},
                                         None).outputs[0]


@register_gradient("ResizeBilinear")
def _resize_bilinear_grad(op, grad):
    images = op.inputs[0]
    if not images.dtype.is_floating:
        return [None, None]
    return [resize_grad("ResizeBilinearGrad", math_ops.cast(grad, images.dtype), images, op.attrs["align_corners"]),
            None]


@register_gradient("ResizeNearestNeighbor")
def _resize_nearest_grad(op, grad):
    images = op.inputs[0]
    if not images.dtype.is_floating:
        return [None, None]
    return [resize_grad("ResizeNearestNeighborGrad", grad, images, op.attrs["align_corners"]), None]


@register_gradient("ResizeBilinearGrad")
def _resize_bilinear_grad_grad(op, grad):
    size = array_ops.shape(op.inputs[0])[1:3]
    return [resize_bilinear(grad, size, op.attrs["align_corners"]), None]


@register_gradient("ResizeNearestNeighborGrad")
def _resize_nearest_grad_grad(op, grad):
    size = array_ops.shape(op.inputs[0])[1:3]
    return [resize_nearest_neighbor(grad, size, op.attrs["align_corners"]), None]


def _resize(op_type: str, images, size, align_corners: bool, name: str | None) -> Tensor:
    images = convert_to_tensor(images, name="images")
    size = convert_to_tensor(size, dtype=dtypes.int32, name="size")
    return get_default_graph().create_op(op_type, (images, size), {"align_corners": bool(align_corners),
                                                                   "half_pixel_centers": False}, name).outputs[0]


def resize_bilinear(images, size, align_corners: bool = False, name: str | None = None,
                    half_pixel_centers: bool = False) -> Tensor:
    """Images [batch, h, w, c] resized to size [new_h, new_w] by bilinear interpolation, as float32.

    tfnb differs: half_pixel_centers=True is not implemented (ValueError).
    """
    if half_pixel_centers:
        raise ValueError("tfnb's resize_bilinear samples as TF1 does: half_pixel_centers is not implemented")
    return _resize("ResizeBilinear", images, size, align_corners, name)


def resize_nearest_neighbor(images, size, align_corners: bool = False, name: str | None = None,
                            half_pixel_centers: bool = False) -> Tensor:
    """Images [batch, h, w, c] resized to size [new_h, new_w] by taking the nearest pixel (dtype kept).

    tfnb differs: half_pixel_centers=True is not implemented (ValueError).
    """
    if half_pixel_centers:
        raise ValueError("tfnb's resize_nearest_neighbor samples as TF1 does: half_pixel_centers is not implemented")
    return _resize("ResizeNearestNeighbor", images, size, align_corners, name)


def resize_images(images, size, method=ResizeMethod.BILINEAR, align_corners: bool = False,
                  preserve_aspect_ratio: bool = False, name: str | None = None) -> Tensor:
    """An image [h, w, c] or a batch of them resized to size [new_h, new_w]; bilinear gives float32.

    tfnb differs: BICUBIC, AREA and preserve_aspect_ratio are not implemented (ValueError).
    """
    method = ResizeMethod(method)
    if method not in (ResizeMethod.BILINEAR, ResizeMethod.NEAREST_NEIGHBOR) or preserve_aspect_ratio:
        raise ValueError(f"tfnb's resize_images implements BILINEAR and NEAREST_NEIGHBOR only, not {method.name}"
                         + (" with preserve_aspect_ratio" if preserve_aspect_ratio else ""))
    with name_scope(name, "resize", [images, size]):
        images = convert_to_tensor(images, name="images")
        single = images.shape.ndims == 3
        if images.shape.ndims not in (3, 4):
            raise ValueError("'images' must have either 3 or 4 dimensions.")
        batch = array_ops.expand_dims(images, 0) if single else images
        resize = resize_bilinear if method is ResizeMethod.BILINEAR else resize_nearest_neighbor
        resized = resize(batch, size, align_corners)
        return array_ops.squeeze(resized, [0]) if single else resized


# -- dtype conversion and standardization ----------------------------------------------------------------------


def convert_image_dtype(image, dtype, saturate: bool = False, name: str | None = None) -> Tensor:
    """Pixel values rescaled to `dtype`: floats in [0, 1), integers over their whole range (uint8 255 -> 1.0)."""
    dtype = dtypes.as_dtype(dtype)
    with name_scope(name, "convert_image", [image]) as scope:
        image = convert_to_tensor(image, name="image")
        source = image.dtype
        if source is dtype:
            return array_ops.identity(image, name=scope)
        if source.is_integer and dtype.is_integer:
            if source.size > dtype.size:  # drop the low bits, as TF does
                return math_ops.cast(math_ops.floordiv(image, (source.max + 1) // (dtype.max + 1)), dtype, name=scope)
            return math_ops.multiply(math_ops.cast(image, dtype), (dtype.max + 1) // (source.max + 1), name=scope)
        if source.is_floating and dtype.is_floating:
            return math_ops.cast(image, dtype, name=scope)
        if source.is_integer:
            return math_ops.multiply(math_ops.cast(image, dtype), 1.0 / source.max, name=scope)
        scaled = math_ops.multiply(image, dtype.max + 0.5)
        if saturate:
            scaled = math_ops.clip_by_value(scaled, float(dtype.min), float(dtype.max))
        return math_ops.cast(scaled, dtype, name=scope)


def per_image_standardization(image) -> Tensor:
    """Each image scaled to mean 0 and variance 1: (x - mean) / max(stddev, 1 / sqrt(number of values)), float32."""
    with name_scope(None, "per_image_standardization", [image]) as scope:
        image = convert_to_tensor(image, name="image")
        if image.shape.ndims not in (None, 3, 4):
            raise ValueError(f"'image' must be at least three-dimensional, got shape {image.shape}")
        image = math_ops.cast(image, dtypes.float32)
        axes = [-1, -2, -3]
        count = math_ops.cast(math_ops.reduce_prod(array_ops.shape(image)[-3:]), dtypes.float32)
        mean = math_ops.reduce_mean(image, axes, keepdims=True)
        stddev = math_ops.sqrt(math_ops.reduce_mean(math_ops.square(image - mean), axes, keepdims=True))
        adjusted = math_ops.maximum(stddev, math_ops.rsqrt(count))
        return math_ops.truediv(image - mean, adjusted, name=scope)


# -- flips, crops and distortions ------------------------------------------------------------------------------


def _flip(image, axis_of_single: int, name: str | None, default_name: str) -> Tensor:
    with name_scope(name, default_name, [image]) as scope:
        image = convert_to_tensor(image, name="image")
        rank = image.shape.ndims
        if rank not in (3, 4):
            raise ValueError("'image' must have either 3 or 4 dimensions.")
        return array_ops.reverse(image, [axis_of_single + (rank - 3)], name=scope)


def flip_left_right(image) -> Tensor:
    """The image (or each of a batch) mirrored left to right."""
    return _flip(image, 1, None, "flip_left_right")


def flip_up_down(image) -> Tensor:
    """The image (or each of a batch) mirrored top to bottom."""
    return _flip(image, 0, None, "flip_up_down")


def _random_flip(image, axis_of_single: int, seed, default_name: str) -> Tensor:
    with name_scope(None, default_name, [image]) as scope:
        image = convert_to_tensor(image, name="image")
        rank = image.shape.ndims
        if rank == 3:  # one coin for the image
            flip = random_uniform([], 0, 1.0, seed=seed) < 0.5
            return cond(flip, lambda: array_ops.reverse(image, [axis_of_single]), lambda: image, name=scope)
        if rank == 4:  # one coin per image of the batch
            batch = array_ops.shape(image)[0]
            flips = random_uniform(array_ops.reshape(batch, [1]), 0, 1.0, seed=seed) < 0.5
            flips = array_ops.reshape(flips, array_ops.concat([array_ops.reshape(batch, [1]), [1, 1, 1]], 0))
            flipped = array_ops.reverse(image, [axis_of_single + 1])
            return math_ops.where_v2(flips, flipped, image, name=scope)
        raise ValueError("'image' must have either 3 or 4 dimensions.")


def random_flip_left_right(image, seed: int | None = None) -> Tensor:
    """The image mirrored left to right with probability 1/2 (each image of a batch on its own)."""
    return _random_flip(image, 1, seed, "random_flip_left_right")


def random_flip_up_down(image, seed: int | None = None) -> Tensor:
    """The image mirrored top to bottom with probability 1/2 (each image of a batch on its own)."""
    return _random_flip(image, 0, seed, "random_flip_up_down")


def random_crop(value, size, seed: int | None = None, name: str | None = None) -> Tensor:
    """A window of `size` (one size per dimension) at a uniformly random offset in `value`."""
    with name_scope(name, "random_crop", [value, size]) as scope:
        value = convert_to_tensor(value, name="value")
        size = convert_to_tensor(size, dtype=dtypes.int32, name="size")
        shape = array_ops.shape(value)
        limit = shape - size + 1
        offset = random_uniform(array_ops.shape(shape), dtype=dtypes.int32, maxval=dtypes.int32.max, seed=seed) % limit
        cropped = array_ops.slice(value, offset, size, name=scope)
        known = constant_ints(size)
        if known is not None:
            cropped.set_shape(known)
        return cropped


def adjust_brightness(image, delta) -> Tensor:
    """image + delta (computed in float for integer images, then converted back)."""
    with name_scope(None, "adjust_brightness", [image, delta]) as scope:
        image = convert_to_tensor(image, name="image")
        as_float = convert_image_dtype(image, dtypes.float32)
        adjusted = math_ops.add(as_float, math_ops.cast(delta, dtypes.float32))
        return convert_image_dtype(adjusted, image.dtype, saturate=True, name=scope) if not \
            image.dtype.is_floating else math_ops.cast(adjusted, image.dtype, name=scope)


def random_brightness(image, max_delta: float, seed: int | None = None) -> Tensor:
    """adjust_brightness by a delta drawn uniformly from [-max_delta, max_delta)."""
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    return adjust_brightness(image, random_uniform([], -max_delta, max_delta, seed=seed))


def adjust_contrast(images, contrast_factor) -> Tensor:
    """(x - mean) * contrast_factor + mean, the mean taken per channel over each image's pixels."""
    with name_scope(None, "adjust_contrast", [images, contrast_factor]) as scope:
        images = convert_to_tensor(images, name="images")
        as_float = convert_image_dtype(images, dtypes.float32)
        mean = math_ops.reduce_mean(as_float, [-3, -2], keepdims=True)
        adjusted = (as_float - mean) * math_ops.cast(contrast_factor, dtypes.float32) + mean
        return convert_image_dtype(adjusted, images.dtype, saturate=True, name=scope)


def random_contrast(image, lower: float, upper: float, seed: int | None = None) -> Tensor:
    """adjust_contrast by a factor drawn uniformly from [lower, upper)."""
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    return adjust_contrast(image, random_uniform([], lower, upper, seed=seed))

