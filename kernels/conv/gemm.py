"""The "gemm" algorithm: im2col through a strided view, then one large matrix product per batch chunk.

It handles any stride, dilation and padding. The input gradient of any forward algorithm is that
algorithm run on dy spread onto the input's canvas, with the filter flipped (`via_forward`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from tfnb.framework.common_shapes import Axis, Geometry
from tfnb.kernels.conv.scratch import Scratch, on_canvas, window_view
from tfnb.kernels.intra_op import parallel_parts


def _im2col_products(scratch: Scratch, x, geo: Geometry, product) -> list:
    """product(images, columns) per batch chunk of x's im2col matrix, chunks spread across threads.

    The column matrix has one row per output position and kh*kw*C columns; chunks of about 2 MiB
    keep it near the CPU caches between its copy and its product.
    """
    xp, canvas = scratch.xp, on_canvas(scratch, x, geo, geo.h.canvas, geo.w.canvas)
    taps, per_image = geo.h.taps * geo.w.taps * x.shape[3], geo.h.out * geo.w.out
    step = max(1, (2 << 20) // max(per_image * taps * x.itemsize, 1))
    chunks = [slice(first, min(first + step, x.shape[0])) for first in range(0, x.shape[0], step)]

    def run(part):
        results = []
        for images in chunks[part]:
            window = window_view(xp, canvas[images], geo)
            columns = scratch("columns", (step * per_image, taps), x.dtype)[:window.shape[0] * per_image]
            xp.copyto(columns.reshape(window.shape), window)
            results.append(product(images, columns))
        return results

    return [r for results in parallel_parts(run, len(chunks), x.shape[0] * per_image * taps) for r in results]


def _rows(images: slice, per_image: int) -> slice:
    return slice(images.start * per_image, images.stop * per_image)


def gemm_forward(scratch: Scratch, x, w, geo: Geometry, epilogue=None):
    """Conv2D as im2col and one matrix product per batch chunk (then `epilogue` on the chunk's outputs)."""
    out = scratch.output("out", (x.shape[0], geo.h.out, geo.w.out, w.shape[3]), x.dtype)
    flat, matrix, per_image = out.reshape(-1, w.shape[3]), w.reshape(-1, w.shape[3]), geo.h.out * geo.w.out

    def product(images, columns):
        rows = scratch.xp.matmul(columns, matrix, out=flat[_rows(images, per_image)])
        if epilogue is not None:
            epilogue(rows)

    _im2col_products(scratch, x, geo, product)
    return out


def gemm_backprop_filter(scratch: Scratch, x, dy, geo: Geometry):
    """Conv2DBackpropFilter as im2col(x)^T @ dy, summed over batch chunks."""
    flat_dy, per_image = dy.reshape(-1, dy.shape[3]), geo.h.out * geo.w.out
    parts = _im2col_products(scratch, x, geo, lambda images, columns: columns.T @ flat_dy[_rows(images, per_image)])
    return functools.reduce(scratch.xp.add, parts).reshape(geo.h.taps, geo.w.taps, x.shape[3], dy.shape[3])


def _transposed_axis(a: Axis) -> tuple[Axis, int, int]:
    """The stride-1 axis of the input gradient as a forward correlation, and where dy rows land.

    dx[h] = sum over taps t of e[h + t * dilation] * w[taps - 1 - t], where e holds dy[i] at
    i * stride + (taps - 1) * dilation - pad: returns (axis, first dy row kept, its row in e).
    """
    rows = a.size + (a.taps - 1) * a.dilation
    shift = (a.taps - 1) * a.dilation - a.pad
    first = max(0, -(shift // a.stride))
    return Axis(rows, a.taps, 1, a.dilation, 0, a.size), first, first * a.stride + shift


def _spread(scratch: Scratch, dy, geo: Geometry):
    """dy spread onto the stride-1 canvas of the input gradient (zeros between strided rows)."""
    (h, i0, r0), (w, j0, c0) = _transposed_axis(geo.h), _transposed_axis(geo.w)
    e = scratch("spread", (dy.shape[0], h.size, w.size, dy.shape[3]), dy.dtype)
    e.fill(0)
    n_h = max(0, min(dy.shape[1] - i0, -(-(h.size - r0) // geo.h.stride)))
    n_w = max(0, min(dy.shape[2] - j0, -(-(w.size - c0) // geo.w.stride)))
    e[:, r0:r0 + n_h * geo.h.stride:geo.h.stride, c0:c0 + n_w * geo.w.stride:geo.w.stride] = \
        dy[:, i0:i0 + n_h, j0:j0 + n_w]
    return e, Geometry(h, w)


def _flipped(xp, w):
    """The filter rotated by 180 degrees with its channel axes swapped: (kh, kw, out, in)."""
    return xp.ascontiguousarray(w[::-1, ::-1].transpose(0, 1, 3, 2))


def via_forward(forward: Callable) -> Callable:
    """A Conv2DBackpropInput algorithm from a forward one: correlate spread dy with the flipped filter."""

    def backprop_input(scratch: Scratch, dy, w, geo: Geometry):
        e, spread_geo = _spread(scratch, dy, geo)
        return forward(scratch, e, _flipped(scratch.xp, w), spread_geo)

    return backprop_input

