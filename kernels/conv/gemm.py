"""The "gemm" algorithm: im2col through a strided view, then one large matrix product per batch chunk.

It handles any stride, dilation and padding. The input gradient of any forward algorithm is that
algorithm run on dy spread onto the input's canvas, with the filter flipped (`via_forward`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from tfnb.framework.common_shapes import Axis, Geometry
from tfnb.kernels.conv.scratch import Scratch, each_chunk, on_canvas, row_pieces, window_view

# Bytes of im2col columns per chunk, at least: a chunk stays near the CPU caches between its copy and its product.
_CHUNK_BYTES = 2 << 20


def _im2col_products(scratch: Scratch, x, geo: Geometry, product, outputs: int, chunk_bytes: int = 0) -> list:
    """product(positions, columns) per chunk of x's im2col matrix, in order; chunks taken in turns by the threads.

    The column matrix has one row per output position (image-major, then output rows and columns) and
    kh*kw*C columns; chunks are even runs of whole output rows, of about `chunk_bytes` (at least _CHUNK_BYTES),
    as many as a multiple of the run's threads (each_chunk). `positions` are the chunk's rows of the flattened
    output. `outputs` is the products' column count: a small input with many filters is work for every thread.
    """
    xp, canvas = scratch.xp, on_canvas(scratch, x, geo, geo.h.canvas, geo.w.canvas)
    taps, width = geo.h.taps * geo.w.taps * x.shape[3], geo.w.out
    pointwise = taps == x.shape[3] and canvas is x and geo.h.stride == geo.w.stride == 1

    def run(rows: slice):
        positions = slice(rows.start * width, rows.stop * width)
        if pointwise:  # a 1x1 window at every position: the input itself is the column matrix
            return product(positions, x.reshape(-1, taps)[positions])
        columns = scratch("columns", ((rows.stop - rows.start) * width, taps), x.dtype)
        offset = 0
        for images, first, end in row_pieces(rows, geo.h.out):
            window = window_view(xp, canvas[images], geo)[:, first:end]
            size = (images.stop - images.start) * (end - first) * width
            xp.copyto(columns[offset:offset + size].reshape(window.shape), window)
            offset += size
        return product(positions, columns)

    count = x.shape[0] * geo.h.out
    return each_chunk(run, count, width * taps * x.itemsize, scratch.chunk_bytes(max(chunk_bytes, _CHUNK_BYTES)),
                      work=count * width * taps * outputs)


def gemm_forward(scratch: Scratch, x, w, geo: Geometry, epilogue=None):
    """Conv2D as im2col and one matrix product per chunk of output rows (then `epilogue` on the chunk's outputs)."""
    out = scratch.output((x.shape[0], geo.h.out, geo.w.out, w.shape[3]), x.dtype)
    flat, matrix = out.reshape(-1, w.shape[3]), filter_matrix(scratch.xp, w)

    def product(positions, columns):
        rows = scratch.xp.matmul(columns, matrix, out=flat[positions])
        if epilogue is not None:
            epilogue(rows)

    _im2col_products(scratch, x, geo, product, w.shape[3])
    return out


def gemm_backprop_filter(scratch: Scratch, x, dy, geo: Geometry):
    """Conv2DBackpropFilter as im2col(x)^T @ dy, summed over chunks in order.

    Chunks hold at least four filter gradients' bytes of columns: each chunk's product is a partial sum
    of that size, and longer chunks make longer, faster products."""
    flat_dy = dy.reshape(-1, dy.shape[3])
    gradient_bytes = geo.h.taps * geo.w.taps * x.shape[3] * dy.shape[3] * x.itemsize
    parts = _im2col_products(scratch, x, geo, lambda positions, columns: columns.T @ flat_dy[positions],
                             dy.shape[3], 4 * gradient_bytes)
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
    if dy.shape[1:3] == (h.size, w.size) and geo.h.stride == geo.w.stride == 1 and i0 == j0 == r0 == c0 == 0:
        return dy, Geometry(h, w)  # dy already lies where the spread would put it (a 1x1 filter)
    e = scratch("spread", (dy.shape[0], h.size, w.size, dy.shape[3]), dy.dtype)
    e.fill(0)
    n_h = max(0, min(dy.shape[1] - i0, -(-(h.size - r0) // geo.h.stride)))
    n_w = max(0, min(dy.shape[2] - j0, -(-(w.size - c0) // geo.w.stride)))
    e[:, r0:r0 + n_h * geo.h.stride:geo.h.stride, c0:c0 + n_w * geo.w.stride:geo.w.stride] = \
        dy[:, i0:i0 + n_h, j0:j0 + n_w]
    return e, Geometry(h, w)


def flipped(xp, w, dy):
    """The filter rotated by 180 degrees with its channel axes swapped, (kh, kw, out, in), for dy's gradient.

    A filter with more elements than dy stays a view of w, which the forward algorithms take as it is
    (filter_matrix, the winograd filter transform): its contiguous copy would transpose every tap's matrix,
    a copy NumPy makes an element at a time (43 ms for a 3x3x1024x1024 filter, an Overfeat layer, whose input
    gradient then took 73 ms instead of 43). A smaller filter is copied: products with a transposed filter
    took up to 1.2x longer at OxfordNet's 56x56 and 112x112 layers, and the copy costs less than that.
    """
    view = w[::-1, ::-1].transpose(0, 1, 3, 2)
    return view if w.size > dy.size else xp.ascontiguousarray(view)


def filter_matrix(xp, w):
    """A (kh, kw, C, F) filter as the (kh*kw*C, F) matrix of a product, never through a transposing copy.

    A view whose C axis is the contiguous one (a flipped filter) is copied with C innermost, a copy of
    whole rows, and the matrix is a transposed view of that, which BLAS reads as it lies.
    """
    if w.strides[2] == w.itemsize and w.strides[3] != w.itemsize and w.shape[2] > 1:
        w = xp.ascontiguousarray(w.transpose(3, 0, 1, 2)).transpose(1, 2, 3, 0)
    return w.reshape(-1, w.shape[3])


def via_forward(forward: Callable) -> Callable:
    """A Conv2DBackpropInput algorithm from a forward one: correlate spread dy with the flipped filter."""

    def backprop_input(scratch: Scratch, dy, w, geo: Geometry):
        e, spread_geo = _spread(scratch, dy, geo)
        return forward(scratch, e, flipped(scratch.xp, w, dy), spread_geo)

    return backprop_input

