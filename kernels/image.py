"""Image kernels: PNG and JPEG decoding (with Pillow) and resizing by separable interpolation matrices.

Resizing is linear in the pixels: each output row mixes input rows, each output column input columns, so
a resize is two small matrix products (one per axis) and its gradient the same products transposed.
The matrices (TF's legacy sampling rule) are built once per pair of sizes.
"""

from __future__ import annotations

import functools
import io

import numpy as np

from tfnb.framework.errors import InvalidArgumentError
from tfnb.kernels.registry import kernel


def _decoded(contents, channels: int, what: str):
    """Pillow's image of `contents`, and the Pillow mode for `channels` (None for 0: as stored)."""
    from PIL import Image, UnidentifiedImageError  # noqa: PLC0415 (Pillow is needed only to decode images)
    try:
        image = Image.open(io.BytesIO(bytes(contents)))
        if what == "JPEG" and channels == 1:
            image.draft("L", image.size)  # as TF: libjpeg decodes straight to its luma channel
        image.load()
    except (UnidentifiedImageError, OSError) as error:
        raise InvalidArgumentError(None, None, f"Invalid {what} data or crop window: {error}") from None
    return image, {1: "L", 3: "RGB", 4: "RGBA"}.get(channels)


def _gray(rgb: np.ndarray) -> np.ndarray:
    """libpng's RGB to gray, as TF's decoder asks for it: 15-bit fixed-point weights, rounded down."""
    r, g, b = (rgb[:, :, i].astype(np.int64) for i in range(3))
    return ((r * 9797 + g * 19234 + b * 3737) >> 15).astype(np.uint8)[:, :, None]


def _pixels(image, mode: str | None) -> np.ndarray:
    if image.mode in ("P", "1", "CMYK", "LA", "I", "F") or (mode is not None and mode != "L" and image.mode != mode):
        image = image.convert(mode or ("RGBA" if "transparency" in image.info or image.mode == "LA" else "RGB"))
    pixels = np.asarray(image)
    pixels = pixels[:, :, None] if pixels.ndim == 2 else pixels
    if mode == "L" and pixels.shape[2] >= 3:
        return _gray(pixels)
    return pixels


@kernel("DecodePng")
def decode_png(node):
    channels, wide = node.attrs["channels"], node.output_dtypes[0] == np.uint16
    to_device = (lambda a: a) if node.xp is np else node.xp.asarray

    def run(contents):
        image, mode = _decoded(contents.item() if hasattr(contents, "item") else contents, channels, "PNG")
        if image.mode.startswith("I;16") or image.mode == "I":
            values = np.asarray(image).astype(np.uint16)[:, :, None]
            pixels = values if wide else (values >> 8).astype(np.uint8)
            if mode in ("RGB", "RGBA"):
                pixels = np.repeat(pixels, 3, axis=2)
                if mode == "RGBA":
                    opaque = np.iinfo(pixels.dtype).max
                    pixels = np.concatenate([pixels, np.full(pixels.shape[:2] + (1,), opaque, pixels.dtype)], 2)
        else:
            pixels = _pixels(image, mode)
            pixels = pixels.astype(np.uint16) * 257 if wide else pixels.astype(np.uint8)
        return to_device(np.ascontiguousarray(pixels))

    return run


@kernel("DecodeJpeg")
def decode_jpeg(node):
    channels = node.attrs["channels"]
    to_device = (lambda a: a) if node.xp is np else node.xp.asarray

    def run(contents):
        image, mode = _decoded(contents.item() if hasattr(contents, "item") else contents, channels, "JPEG")
        return to_device(np.ascontiguousarray(_pixels(image, mode).astype(np.uint8)))

    return run


@functools.lru_cache(maxsize=256)
def _matrix(size_in: int, size_out: int, align_corners: bool, nearest: bool) -> np.ndarray:
    """[size_out, size_in]: output position i samples input position i * scale (TF's legacy rule: scale is
    in / out, or (in - 1) / (out - 1) with align_corners), nearest pixel or linear between the two around it."""
    scale = (size_in - 1) / (size_out - 1) if align_corners and size_out > 1 else size_in / size_out
    position = np.arange(size_out) * scale
    matrix = np.zeros((size_out, size_in))
    rows = np.arange(size_out)
    if nearest:
        index = np.floor(position + 0.5) if align_corners else np.floor(position)  # C's roundf: halves go up
        matrix[rows, np.minimum(index.astype(int), size_in - 1)] = 1.0
        return matrix
    low = np.minimum(np.floor(position).astype(int), size_in - 1)
    high = np.minimum(low + 1, size_in - 1)
    weight = position - low
    np.add.at(matrix, (rows, low), 1.0 - weight)
    np.add.at(matrix, (rows, high), weight)
    return matrix


def _resized(xp, images, height: int, width: int, align_corners: bool, nearest: bool):
    rows = xp.asarray(_matrix(images.shape[1], height, align_corners, nearest))
    columns = xp.asarray(_matrix(images.shape[2], width, align_corners, nearest))
    return xp.einsum("ih,bhwc,jw->bijc", rows, images.astype(xp.float64), columns, optimize=True)


def _resize_kernel(nearest: bool):
    def factory(node):
        xp, dtype, align = node.xp, node.output_dtypes[0], node.attrs["align_corners"]

        def run(images, size):
            height, width = (int(v) for v in size.tolist())
            if height <= 0 or width <= 0:
                raise InvalidArgumentError(None, None, f"output dimensions must be positive, got {[height, width]}")
            return _resized(xp, images, height, width, align, nearest).astype(dtype)

        return run
    return factory


kernel("ResizeBilinear")(_resize_kernel(nearest=False))
kernel("ResizeNearestNeighbor")(_resize_kernel(nearest=True))


def _resize_grad_kernel(nearest: bool):
    def factory(node):
        xp, dtype, align = node.xp, node.output_dtypes[0], node.attrs["align_corners"]

        def run(grads, original):
            rows = xp.asarray(_matrix(original.shape[1], grads.shape[1], align, nearest))
            columns = xp.asarray(_matrix(original.shape[2], grads.shape[2], align, nearest))
            return xp.einsum("ih,bijc,jw->bhwc", rows, grads.astype(xp.float64), columns, optimize=True).astype(dtype)

        return run
    return factory


kernel("ResizeBilinearGrad")(_resize_grad_kernel(nearest=False))
kernel("ResizeNearestNeighborGrad")(_resize_grad_kernel(nearest=True))
