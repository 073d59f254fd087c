"""Convolution and pooling kernels (NHWC), written against `xp`.

A 2-D convolution has three directions: forward (Conv2D), the gradient with respect to its input
(Conv2DBackpropInput, which is also conv2d_transpose) and with respect to its filter
(Conv2DBackpropFilter). As cuDNN does, each direction has several algorithms:

- "gemm": im2col through a strided view and one large matrix product; any stride, dilation, padding.
- "fft": the product in the frequency domain, on the smallest canvas that the outputs read. The 2-D
  DFTs of such small canvases (tens of points a side) run as matrix products with DFT matrices:
  at these sizes BLAS beats numpy.fft's per-line transforms several times over. Strides, dilations
  and paddings only change which canvas positions the matrices visit.
- "rows": for few input channels: the kw*C columns of every canvas row's windows, copied once, then
  one product per window row over views of them (kh times less copying than im2col); stride 1 in height.
- "winograd": F(2x2, 3x3), for 3x3 filters at stride 1 without dilation.

The first time a direction meets a (shapes, strides, dilations, paddings, dtype) key, every
algorithm that claims it runs and is timed; the fastest is kept for that key, process-wide.

The kernels are registered `parallel`: during a session's run they split their batch across the
run's threads (kernels/intra_op.py), each chunk through every stage in one thread, near the caches,
while BLAS runs in one thread. Large temporaries and outputs are reused from step to step (`Scratch`).
"""

from __future__ import annotations

import functools
import math
import sys
import threading
import time

import numpy as np

from tfnb.framework.common_shapes import Axis, Geometry, geometry_from_attrs, pool_geometry
from tfnb.framework.errors import InvalidArgumentError
from tfnb.kernels.intra_op import parallel_parts, run_width
from tfnb.kernels.registry import kernel


def _geometry_or_fail(attrs: dict, in_hw, filter_hw) -> Geometry:
    try:
        return geometry_from_attrs(attrs, in_hw, filter_hw)
    except ValueError as error:
        raise InvalidArgumentError(None, None, str(error)) from None


# -- scratch arrays, canvases and windows ---------------------------------------------------------


class Scratch:
    """Named arrays that a kernel reuses from call to call, one set per thread.

    Large arrays would otherwise be fresh memory every step, and the page faults of touching fresh
    memory cost as much as the arithmetic. Temporaries are simply reused; an output is reused once
    nothing but this scratch refers to it (the reference-count test of copy-on-write variables).
    """

    def __init__(self, xp) -> None:
        self.xp = xp
        self._local = threading.local()

    def _arrays(self) -> dict:
        return self._local.__dict__.setdefault("arrays", {})

    def __call__(self, name: str, shape: tuple, dtype):
        """A temporary array, valid until the next call for the same name in this thread."""
        arrays, size = self._arrays(), math.prod(shape)
        flat = arrays.get(name)
        if flat is None or flat.size < size or flat.dtype != dtype:
            flat = arrays[name] = self.xp.empty(size, dtype=dtype)
        return flat[:size].reshape(shape)

    def output(self, name: str, shape: tuple, dtype):
        """An array to return: the last one of this name if only the scratch still refers to it, else a new one."""
        arrays = self._arrays()
        array = arrays.get(name)
        # While this runs, an unshared array has three references: the dict, `array`, getrefcount's argument.
        if array is None or array.shape != tuple(shape) or array.dtype != dtype or sys.getrefcount(array) > 3:
            array = arrays[name] = self.xp.empty(shape, dtype=dtype)
        return array


def _placed(h: Axis, rows: int) -> tuple[int, int]:
    """(first, end) of canvas rows [0, rows) that input rows land on, as positions pad + h."""
    first = min(h.pad, rows)
    return first, max(min(h.pad + h.size, rows), first)


def _canvas(scratch: Scratch, x, geo: Geometry, rows: int, cols: int, fill=0):
    """x placed on a (scratch) canvas of rows x cols at the geometry's padding; x itself when it already fits."""
    if geo.h.pad == 0 and geo.w.pad == 0 and x.shape[1:3] == (rows, cols):
        return x
    canvas = scratch("canvas", (x.shape[0], rows, cols, x.shape[3]), x.dtype)
    canvas.fill(fill)
    (r0, r1), (c0, c1) = _placed(geo.h, rows), _placed(geo.w, cols)
    canvas[:, r0:r1, c0:c1] = x[:, :r1 - r0, :c1 - c0]
    return canvas


def _windows(xp, canvas, geo: Geometry, taps_last: bool = False):
    """A strided view of every window of a canvas: (B, Ho, Wo, kh, kw, C), or (B, Ho, Wo, C, kh, kw)."""
    sb, sh, sw, sc = canvas.strides
    h, w = geo.h, geo.w
    if taps_last:
        shape = (canvas.shape[0], h.out, w.out, canvas.shape[3], h.taps, w.taps)
        strides = (sb, h.stride * sh, w.stride * sw, sc, h.dilation * sh, w.dilation * sw)
    elif w.dilation == 1:
        # A window row of kw taps is kw*C adjacent elements: one merged axis copies in long runs.
        shape = (canvas.shape[0], h.out, w.out, h.taps, w.taps * canvas.shape[3])
        strides = (sb, h.stride * sh, w.stride * sw, h.dilation * sh, sc)
    else:
        shape = (canvas.shape[0], h.out, w.out, h.taps, w.taps, canvas.shape[3])
        strides = (sb, h.stride * sh, w.stride * sw, h.dilation * sh, w.dilation * sw, sc)
    return xp.lib.stride_tricks.as_strided(canvas, shape, strides)


def _im2col_products(scratch: Scratch, x, geo: Geometry, product) -> list:
    """product(images, columns) per batch chunk of x's im2col matrix, chunks spread across threads.

    The column matrix has one row per output position and kh*kw*C columns; chunks of about 2 MiB
    keep it near the CPU caches between its copy and its product.
    """
    xp, canvas = scratch.xp, _canvas(scratch, x, geo, geo.h.canvas, geo.w.canvas)
    taps, per_image = geo.h.taps * geo.w.taps * x.shape[3], geo.h.out * geo.w.out
    step = max(1, (2 << 20) // max(per_image * taps * x.itemsize, 1))
    chunks = [slice(first, min(first + step, x.shape[0])) for first in range(0, x.shape[0], step)]

    def run(part):
        results = []
        for images in chunks[part]:
            window = _windows(xp, canvas[images], geo)
            columns = scratch("columns", (step * per_image, taps), x.dtype)[:window.shape[0] * per_image]
            xp.copyto(columns.reshape(window.shape), window)
            results.append(product(images, columns))
        return results

    return [r for results in parallel_parts(run, len(chunks), x.shape[0] * per_image * taps) for r in results]


# -- gemm -----------------------------------------------------------------------------------------


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


def _via_forward(forward):
    """A Conv2DBackpropInput algorithm from a forward one: correlate spread dy with the flipped filter."""

    def backprop_input(scratch: Scratch, dy, w, geo: Geometry):
        e, spread_geo = _spread(scratch, dy, geo)
        return forward(scratch, e, _flipped(scratch.xp, w), spread_geo)

    return backprop_input


# -- winograd F(2x2, 3x3) -------------------------------------------------------------------------

_WINOGRAD_BT = np.array([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]], np.float64)
_WINOGRAD_G = np.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]], np.float64)
_WINOGRAD_AT = np.array([[1, 1, 1, 0], [0, 1, -1, -1]], np.float64)


@functools.lru_cache(maxsize=None)
def _winograd_matrices(xp, dtype: str):
    """The 2-D transforms as Kronecker products: input (16x16), filter (16x9), output (4x16)."""
    return tuple(xp.asarray(np.kron(m, m), dtype=dtype) for m in (_WINOGRAD_BT, _WINOGRAD_G, _WINOGRAD_AT))


# -- row taps ("rows") ----------------------------------------------------------------------------
#
# For few input channels the im2col matrix is narrow (kh*kw*C columns) and its copy costs as much as
# its product. Copying only the kw*C columns of each window row, for every canvas row, makes a matrix
# kh times smaller; window row kh of every output is then a contiguous run of its rows, so the
# convolution is kh products over views of it, accumulated.


def rows_claims(geo: Geometry) -> bool:
    return geo.h.stride == 1  # output rows one canvas row apart: each tap row's windows are one view


def _row_columns(scratch: Scratch, canvas, geo: Geometry):
    """(images, canvas rows, Wo, kw*C): each canvas row's windows along the width, in a thread's scratch."""
    xp, (count, rows, _, channels), (sb, sh, sw, sc) = scratch.xp, canvas.shape, canvas.strides
    w = geo.w
    view = xp.lib.stride_tricks.as_strided(canvas, (count, rows, w.out, w.taps, channels),
                                           (sb, sh, w.stride * sw, w.dilation * sw, sc))
    columns = scratch("row.columns", (count, rows, w.out, w.taps * channels), canvas.dtype)
    xp.copyto(columns.reshape(view.shape), view)
    return columns


def _tap_rows(columns, geo: Geometry, tap: int):
    """The row-columns that window row `tap` of every output reads: (images, Ho*Wo, kw*C), a view."""
    first = tap * geo.h.dilation
    part = columns[:, first:first + geo.h.out]
    return part.reshape(part.shape[0], -1, part.shape[3])


def _row_columns_bytes(geo: Geometry, channels: int, itemsize: int) -> int:
    """Bytes of one image's row-columns (for the chunk sizes)."""
    return geo.h.canvas * geo.w.out * geo.w.taps * channels * itemsize


def rows_forward(scratch: Scratch, x, w, geo: Geometry, epilogue=None):
    """Conv2D as kh products per batch chunk, one per window row, over the row-columns of the input."""
    xp = scratch.xp
    canvas = _canvas(scratch, x, geo, geo.h.canvas, geo.w.canvas)
    matrices = w.reshape(geo.h.taps, -1, w.shape[3])
    out = scratch.output("out", (x.shape[0], geo.h.out, geo.w.out, w.shape[3]), x.dtype)

    def chunks(selection):
        for images in selection:
            columns = _row_columns(scratch, canvas[images], geo)
            flat = out[images].reshape(columns.shape[0], -1, w.shape[3])
            xp.matmul(_tap_rows(columns, geo, 0), matrices[0], out=flat)
            term = scratch("row.term", flat.shape, x.dtype)
            for tap in range(1, geo.h.taps):
                xp.add(flat, xp.matmul(_tap_rows(columns, geo, tap), matrices[tap], out=term), out=flat)
            if epilogue is not None:
                epilogue(out[images])

    _per_chunk(chunks, x.shape[0], _row_columns_bytes(geo, x.shape[3], x.itemsize))
    return out


def rows_backprop_filter(scratch: Scratch, x, dy, geo: Geometry):
    """Conv2DBackpropFilter as, per window row, the row-columns of x transposed times dy, summed over images."""
    xp = scratch.xp
    canvas = _canvas(scratch, x, geo, geo.h.canvas, geo.w.canvas)

    def chunks(selection):
        total = scratch.output("filter.sum", (geo.h.taps, geo.w.taps * x.shape[3], dy.shape[3]), x.dtype)
        total.fill(0)
        for images in selection:
            columns = _row_columns(scratch, canvas[images], geo)
            gradient = dy[images].reshape(columns.shape[0], -1, dy.shape[3])
            for tap in range(geo.h.taps):
                total[tap] += xp.matmul(_tap_rows(columns, geo, tap).transpose(0, 2, 1), gradient).sum(0)
        return total

    total, *others = _per_chunk(chunks, x.shape[0], _row_columns_bytes(geo, x.shape[3], x.itemsize))
    for other in others:
        xp.add(total, other, out=total)
    return total.reshape(geo.h.taps, geo.w.taps, x.shape[3], dy.shape[3])


def winograd_claims(geo: Geometry) -> bool:
    return all(a.taps == 3 and a.stride == 1 and a.dilation == 1 for a in (geo.h, geo.w))


def winograd_forward(scratch: Scratch, x, w, geo: Geometry, epilogue=None):
    """Conv2D with F(2x2, 3x3): 4x4 input tiles at stride 2, 16 batched matrix products, 2x2 output tiles."""
    xp = scratch.xp
    channels, filters = x.shape[3], w.shape[3]
    tiles_h, tiles_w = -(-geo.h.out // 2), -(-geo.w.out // 2)
    canvas = _canvas(scratch, x, geo, 2 * tiles_h + 2, 2 * tiles_w + 2)
    bt, g, at = _winograd_matrices(xp, x.dtype.str)
    u = (g @ w.reshape(9, channels * filters)).reshape(16, channels, filters)
    out = scratch.output("out", (x.shape[0], geo.h.out, geo.w.out, filters), x.dtype)

    def chunk(images):
        part = canvas[images]
        batch, (sb, sh, sw, sc) = part.shape[0], part.strides
        tiles = xp.lib.stride_tricks.as_strided(part, (4, 4, batch, tiles_h, tiles_w, channels),
                                                (sh, sw, sb, 2 * sh, 2 * sw, sc))
        count = batch * tiles_h * tiles_w
        data = scratch("tiles", (16, count * channels), x.dtype)
        xp.copyto(data.reshape(tiles.shape), tiles)
        v = xp.matmul(bt, data, out=scratch("v", data.shape, x.dtype)).reshape(16, count, channels)
        m = xp.matmul(v, u, out=scratch("m", (16, count, filters), x.dtype))
        y = xp.matmul(at, m.reshape(16, -1), out=scratch("y", (4, count * filters), x.dtype))
        y = y.reshape(2, 2, batch, tiles_h, tiles_w, filters).transpose(2, 3, 0, 4, 1, 5)
        xp.copyto(out[images], y.reshape(batch, 2 * tiles_h, 2 * tiles_w, filters)[:, :geo.h.out, :geo.w.out])
        if epilogue is not None:
            epilogue(out[images])

    # A 4x4 tile of C floats becomes 16 rows of the transformed matrix: chunks as for spectra.
    _per_chunk(lambda selection: [chunk(images) for images in selection], x.shape[0],
               16 * tiles_h * tiles_w * max(channels, filters) * x.itemsize)
    return out


# -- frequency domain ("fft") ---------------------------------------------------------------------
#
# Spectra use rfft along the canvas height (F = Th // 2 + 1 frequencies) and a full DFT along its
# width (G = Tw); they are stored as real planes (F, G, re/im, rows, cols) and multiplied as such.
# Data enters in (H, W, B, C) layout, so that every transform is a matrix product over the leading axis.


def _inside(positions: np.ndarray, extent: int) -> np.ndarray:
    """1 where a position lies on the canvas, else 0 (those rows or columns drop out)."""
    return ((positions >= 0) & (positions < extent)).astype(np.float64)


@functools.lru_cache(maxsize=256)
def _analysis_matrices(xp, dtype: str, extent_h: int, extent_w: int, rows: tuple, cols: tuple):
    """Matrices taking data at canvas rows x cols to its spectrum: (2F, H) real, (2G, 2W) complex."""
    rows, cols = np.array(rows), np.array(cols)
    angle = 2 * np.pi * np.outer(np.arange(extent_h // 2 + 1), rows) / extent_h
    inside = _inside(rows, extent_h)
    first = np.stack([np.cos(angle) * inside, -np.sin(angle) * inside], 1)      # rows (f, re/im)
    angle = 2 * np.pi * np.outer(np.arange(extent_w), cols) / extent_w
    c, s = np.cos(angle) * _inside(cols, extent_w), np.sin(angle) * _inside(cols, extent_w)
    second = np.stack([np.concatenate([c, s], 1), np.concatenate([-s, c], 1)], 1)  # rows (g, re/im)
    return (xp.asarray(first.reshape(-1, len(rows)), dtype=dtype),
            xp.asarray(second.reshape(2 * extent_w, 2 * len(cols)), dtype=dtype))


@functools.lru_cache(maxsize=256)
def _synthesis_matrices(xp, dtype: str, extent_h: int, extent_w: int, rows: tuple, cols: tuple):
    """Matrices taking a spectrum back to real values at canvas rows x cols: (2Wq, 2G), (Hq, 2F)."""
    rows, cols = np.array(rows), np.array(cols)
    angle = 2 * np.pi * np.outer(cols, np.arange(extent_w)) / extent_w
    inside = _inside(cols, extent_w)[:, None, None]
    c, s = np.cos(angle)[:, :, None], np.sin(angle)[:, :, None]
    first = np.stack([np.concatenate([c, -s], 2), np.concatenate([s, c], 2)]) * inside  # (re/im, j, g, re/im)
    freqs = extent_h // 2 + 1
    # Only F of the Th height frequencies are stored: the others are conjugates, counted twice.
    weight = np.full(freqs, 2.0)
    weight[0] = 1.0
    if extent_h % 2 == 0:
        weight[-1] = 1.0
    weight /= extent_h * extent_w
    angle = 2 * np.pi * np.outer(rows, np.arange(freqs)) / extent_h
    second = np.stack([np.cos(angle) * weight, -np.sin(angle) * weight], 2) * _inside(rows, extent_h)[:, None, None]
    return (xp.asarray(first.reshape(2 * len(cols), 2 * extent_w), dtype=dtype),
            xp.asarray(second.reshape(len(rows), 2 * freqs), dtype=dtype))


def _positions(geo: Geometry, where: str) -> tuple[np.ndarray, np.ndarray]:
    """Canvas rows and columns of the input, the output or the filter taps."""
    return tuple(getattr(a, f"{where}_positions")() for a in (geo.h, geo.w))


def _spectrum(scratch: Scratch, name: str, data, geo: Geometry, where: str):
    """Spectrum planes (F, G, 2, B, C) of data laid out (H, W, B, C) at the canvas positions `where`."""
    xp, (height, width, batch, channels) = scratch.xp, data.shape
    rows, cols = _positions(geo, where)
    first, second = _analysis_matrices(xp, data.dtype.str, geo.h.canvas, geo.w.canvas, tuple(rows.tolist()),
                                       tuple(cols.tolist()))
    freqs = first.shape[0] // 2
    half = xp.matmul(first, data.reshape(height, -1), out=scratch(name + ".half", (2 * freqs, width * batch * channels),
                                                                   data.dtype))
    planes = scratch(name, (freqs, geo.w.canvas, 2, batch, channels), data.dtype)
    xp.matmul(second, half.reshape(freqs, 2 * width, -1), out=planes.reshape(freqs, 2 * geo.w.canvas, -1))
    return planes


def _data_spectrum(scratch: Scratch, name: str, data, geo: Geometry, where: str):
    """Spectrum planes (F, G, 2, B, C) of NHWC data at the canvas positions `where` ('input' or 'output')."""
    spatial_first = scratch(name + ".hwbc", (data.shape[1], data.shape[2], data.shape[0], data.shape[3]), data.dtype)
    scratch.xp.copyto(spatial_first, data.transpose(1, 2, 0, 3))
    return _spectrum(scratch, name, spatial_first, geo, where)


def _signal(scratch: Scratch, planes, geo: Geometry, where: str, out):
    """Real values (Hq, Wq, B, C) into `out`, at the canvas positions `where`, of spectrum planes (F, G, 2, B, C)."""
    xp, (freqs, _, _, batch, channels) = scratch.xp, planes.shape
    rows, cols = _positions(geo, where)
    first, second = _synthesis_matrices(xp, planes.dtype.str, geo.h.canvas, geo.w.canvas, tuple(rows.tolist()),
                                        tuple(cols.tolist()))
    half = scratch("signal.half", (freqs, first.shape[0], batch * channels), planes.dtype)
    xp.matmul(first, planes.reshape(freqs, -1, batch * channels), out=half)
    return xp.matmul(second, half.reshape(2 * freqs, -1), out=out.reshape(len(rows), -1))


def _nhwc_signal(scratch: Scratch, planes, geo: Geometry, where: str, out) -> None:
    """The signal of spectrum planes (F, G, 2, B, C) at the positions `where`, into NHWC `out`."""
    values = _signal(scratch, planes, geo, where, scratch("signal", out.shape[1:3] + (out.shape[0], out.shape[3]),
                                                          planes.dtype))
    scratch.xp.copyto(out, values.reshape(out.shape[1:3] + (out.shape[0], out.shape[3])).transpose(2, 0, 1, 3))


def _complex_matmul(scratch: Scratch, a, b, conjugate: bool, out):
    """out = a @ b, or a @ conj(b), of complex matrices held as real planes (..., 2, rows, cols): four real products."""
    xp = scratch.xp
    a_re, a_im, b_re, b_im = a[:, :, 0], a[:, :, 1], b[:, :, 0], b[:, :, 1]
    re, im = out[:, :, 0], out[:, :, 1]
    term = scratch("product.term", re.shape, a.dtype)
    xp.matmul(a_re, b_re, out=re)
    xp.matmul(a_im, b_re, out=im)
    (xp.add if conjugate else xp.subtract)(re, xp.matmul(a_im, b_im, out=term), out=re)
    (xp.subtract if conjugate else xp.add)(im, xp.matmul(a_re, b_im, out=term), out=im)
    return out


def _product(scratch: Scratch, a, b, conjugate: bool):
    """a @ b, or a @ conj(b), into scratch planes."""
    return _complex_matmul(scratch, a, b, conjugate, scratch("product", a.shape[:3] + (a.shape[3], b.shape[4]),
                                                             a.dtype))


def _batch_chunks(batch: int, per_image: int, chunk_bytes: int = 2 << 20) -> list[slice]:
    """Even slices of the batch, as many as a multiple of the threads that share them.

    Where the kernels split work across threads, a chunk holds about `chunk_bytes` of spectrum (or
    tiles): 2 MiB keeps every stage of a chunk near the CPU caches. Where BLAS has threads of its
    own, chunks are at least 16 MiB, so that its matrix products are large enough for them.
    """
    threads = run_width()
    limit = chunk_bytes if threads > 1 else max(chunk_bytes, 16 << 20)
    count = min(batch, -(-math.ceil(batch * per_image / limit) // threads) * threads)
    bounds = [batch * i // count for i in range(count + 1)]
    return [slice(a, b) for a, b in zip(bounds, bounds[1:])]


def _per_chunk(fn, batch: int, per_image: int, chunk_bytes: int = 2 << 20) -> list:
    """fn(list of batch chunks) per thread, each thread given consecutive chunks; the results in order."""
    chunks = _batch_chunks(batch, per_image, chunk_bytes)
    return parallel_parts(lambda part: fn(chunks[part]), len(chunks), batch * per_image)


def _spectrum_bytes(geo: Geometry, channels: int, itemsize: int) -> int:
    """Bytes of one image's spectrum planes."""
    return (geo.h.canvas // 2 + 1) * geo.w.canvas * 2 * channels * itemsize


def fft_forward(scratch: Scratch, x, w, geo: Geometry, epilogue=None):
    """Conv2D as spectrum(x) times the conjugate spectrum of w, back at the strided output positions."""
    ws = _spectrum(scratch, "w", w, geo, "tap")
    out = scratch.output("out", (x.shape[0], geo.h.out, geo.w.out, w.shape[3]), x.dtype)

    def chunks(selection):
        for images in selection:
            xs = _data_spectrum(scratch, "x", x[images], geo, "input")
            _nhwc_signal(scratch, _product(scratch, xs, ws, True), geo, "output", out[images])
            if epilogue is not None:
                epilogue(out[images])

    _per_chunk(chunks, x.shape[0], _spectrum_bytes(geo, max(x.shape[3], w.shape[3]), x.itemsize))
    return out


def fft_backprop_input(scratch: Scratch, dy, w, geo: Geometry):
    """Conv2DBackpropInput as spectrum(dy) times the transposed spectrum of w, read back at the input positions."""
    ws = _spectrum(scratch, "w", scratch.xp.ascontiguousarray(w.transpose(0, 1, 3, 2)), geo, "tap")
    out = scratch.output("out", (dy.shape[0], geo.h.size, geo.w.size, w.shape[2]), dy.dtype)

    def chunks(selection):
        for images in selection:
            ys = _data_spectrum(scratch, "dy", dy[images], geo, "output")
            _nhwc_signal(scratch, _product(scratch, ys, ws, False), geo, "input", out[images])

    _per_chunk(chunks, dy.shape[0], _spectrum_bytes(geo, max(dy.shape[3], w.shape[2]), dy.itemsize))
    return out


def fft_backprop_filter(scratch: Scratch, x, dy, geo: Geometry, each_dy_spectrum=None):
    """Conv2DBackpropFilter as the batch sum of spectrum(x) times conj(spectrum(dy)), read at the taps.

    `each_dy_spectrum(images, spectrum)` also gets each chunk's spectrum of dy (see fft_backprop).
    """
    xp = scratch.xp

    def chunks(selection):
        total = None
        for images in selection:
            ys = _data_spectrum(scratch, "dy", dy[images], geo, "output")
            if each_dy_spectrum is not None:
                each_dy_spectrum(images, ys)
            xs = _data_spectrum(scratch, "x", x[images], geo, "input")
            shape = xs.shape[:3] + (x.shape[3], dy.shape[3])
            # The sum goes back to the calling thread: an output array, not this thread's scratch.
            into = scratch.output("filter.sum", shape, x.dtype) if total is None else scratch("product", shape, x.dtype)
            product = _complex_matmul(scratch, xs.swapaxes(3, 4), ys, True, into)
            total = product if total is None else xp.add(total, product, out=total)
        return total

    # Large chunks: the products sum over a chunk's images, and few images make them short (measured:
    # 16 MiB chunks take the CNN benchmark's filter and input gradients from 15 to 11 ms).
    total, *others = _per_chunk(chunks, x.shape[0], _spectrum_bytes(geo, x.shape[3] + dy.shape[3], x.itemsize),
                                16 << 20)
    for other in others:
        xp.add(total, other, out=total)
    out = scratch.output("out", (geo.h.taps, geo.w.taps, x.shape[3], dy.shape[3]), x.dtype)
    return _signal(scratch, total, geo, "tap", out).reshape(out.shape)


def fft_backprop(scratch: Scratch, x, w, dy, geo: Geometry) -> tuple:
    """Both gradients of a convolution, (input, filter), from one spectrum of each chunk of dy."""
    ws = _spectrum(scratch, "w", scratch.xp.ascontiguousarray(w.transpose(0, 1, 3, 2)), geo, "tap")
    dx = scratch.output("dx", (x.shape[0], geo.h.size, geo.w.size, w.shape[2]), dy.dtype)

    def input_gradient(images, ys):
        _nhwc_signal(scratch, _product(scratch, ys, ws, False), geo, "input", dx[images])

    return dx, fft_backprop_filter(scratch, x, dy, geo, input_gradient)


# -- algorithm choice -----------------------------------------------------------------------------


def _always(geo: Geometry) -> bool:
    return True


ALGORITHMS = {
    "forward": {"gemm": (_always, gemm_forward), "fft": (_always, fft_forward), "rows": (rows_claims, rows_forward),
                "winograd": (winograd_claims, winograd_forward)},
    "backprop_input": {"gemm": (_always, _via_forward(gemm_forward)), "fft": (_always, fft_backprop_input),
                       "rows": (_always, _via_forward(rows_forward)),  # the spread input has stride 1
                       "winograd": (winograd_claims, _via_forward(winograd_forward))},
    "backprop_filter": {"gemm": (_always, gemm_backprop_filter), "fft": (_always, fft_backprop_filter),
                        "rows": (rows_claims, rows_backprop_filter)},
}
"""direction -> algorithm name -> (claims(geometry) -> bool, fn(scratch, a, b, geometry) -> result)."""

_CHOSEN: dict[tuple, str] = {}


def chosen_algorithms() -> dict[tuple, str]:
    """The algorithm picked so far per key (direction, shape a, shape b, geometry, dtype, array module)."""
    return dict(_CHOSEN)


def clear_algorithm_cache() -> None:
    """Forgets every choice, so the next call of each key measures again."""
    _CHOSEN.clear()


def _synchronize(xp) -> None:
    if hasattr(xp, "cuda"):
        xp.cuda.get_current_stream().synchronize()


def _seconds(scratch: Scratch, fn, args) -> tuple[float, object]:
    start = time.perf_counter()
    result = fn(scratch, *args)
    _synchronize(scratch.xp)
    return time.perf_counter() - start, result


def _measure(scratch: Scratch, candidates: dict, args, rounds: int = 3) -> tuple[str, object]:
    """The fastest candidate and its result: each runs once to build its plans, then in alternating rounds.

    The minimum over rounds is the time kept: other load on the machine only ever adds to it.
    """
    results = {name: fn(scratch, *args) for name, fn in candidates.items()}
    if len(candidates) == 1:
        return next(iter(results.items()))
    best = dict.fromkeys(candidates, math.inf)
    for _ in range(rounds):
        for name, fn in candidates.items():
            elapsed, results[name] = _seconds(scratch, fn, args)
            best[name] = min(best[name], elapsed)
    name = min(best, key=best.get)
    return name, results[name]


def _key(direction: str, a, b, geo: Geometry, xp) -> tuple:
    return direction, a.shape, b.shape, geo, a.dtype.str, xp.__name__


def run_convolution(scratch: Scratch, direction: str, a, b, geo: Geometry, epilogue=None):
    """One direction of a convolution by the algorithm chosen for this key (measured on first sight).

    `epilogue` (forward only) runs on each chunk of outputs as soon as they are written.
    """
    key, args = _key(direction, a, b, geo, scratch.xp), (a, b, geo) + ((epilogue,) if epilogue is not None else ())
    name = _CHOSEN.get(key)
    if name is not None:
        return ALGORITHMS[direction][name][1](scratch, *args)
    candidates = {n: fn for n, (claims, fn) in ALGORITHMS[direction].items() if claims(geo)}
    name, result = _measure(scratch, candidates, args)
    _CHOSEN[key] = name
    return result


# -- convolution kernels --------------------------------------------------------------------------


def _compute_dtype(np_dtype):
    # float16 products lose too many digits: compute in float32 and round once at the end.
    return np.dtype(np.float32) if np_dtype == np.float16 else np.dtype(np_dtype)


def _fail(message: str):
    raise InvalidArgumentError(None, None, message)


def _check_rank4(**arrays) -> None:
    for what, array in arrays.items():
        if array.ndim != 4:
            _fail(f"{what} must be 4-dimensional: {list(array.shape)}")


def _sizes(array) -> tuple:
    sizes = tuple(int(v) for v in array.reshape(-1).tolist())
    if len(sizes) != 4:
        _fail(f"sizes must be a 4-element vector, got {list(sizes)}")
    return sizes


def _convolve(scratch: Scratch, out_dtype, direction: str, a, b, geo: Geometry, out_shape: tuple, epilogue=None):
    """Runs one direction in the compute dtype, returning the op's dtype; empty shapes short-cut."""
    xp = scratch.xp
    if 0 in a.shape or 0 in b.shape or 0 in out_shape:
        out = xp.zeros(out_shape, dtype=out_dtype)
        if epilogue is not None:
            epilogue(out)
        return out
    compute = _compute_dtype(out_dtype)
    a, b = xp.ascontiguousarray(a, dtype=compute), xp.ascontiguousarray(b, dtype=compute)
    return run_convolution(scratch, direction, a, b, geo, epilogue).astype(out_dtype, copy=False)


def _bias_epilogue(xp, bias, channels: int, relu: bool):
    """Adds bias (and applies ReLU) in place to a chunk of NHWC outputs: a fused BiasAdd (+ Relu)."""
    if bias.shape != (channels,):
        _fail(f"Must provide as many biases as the channel dimension of the input tensor: {list(bias.shape)} vs. "
              f"{channels} channels")
    zero = bias.dtype.type(0)

    def epilogue(values):
        xp.add(values, bias, out=values)
        if relu:
            xp.maximum(values, zero, out=values)

    return epilogue


@kernel("Conv2D", parallel=True, fresh_output=True)
def conv2d(node):
    attrs, scratch, out_dtype = node.attrs, Scratch(node.xp), node.output_dtypes[0]

    def run(x, w, epilogue=None):
        _check_rank4(input=x, filter=w)
        if x.shape[3] != w.shape[2]:
            _fail(f"input depth must match filter in_depth: {x.shape[3]} vs {w.shape[2]}")
        geo = _geometry_or_fail(attrs, x.shape[1:3], w.shape[:2])
        return _convolve(scratch, out_dtype, "forward", x, w, geo, (x.shape[0], geo.h.out, geo.w.out, w.shape[3]),
                         epilogue)

    if _compute_dtype(out_dtype) == out_dtype and attrs.get("data_format", "NHWC") == "NHWC":
        # Fused variants for tfnb/runtime/fusion.py; the same arithmetic in the same order as the separate ops.
        run.with_bias = lambda x, w, bias: run(x, w, _bias_epilogue(node.xp, bias, w.shape[3], False))
        run.with_bias_relu = lambda x, w, bias: run(x, w, _bias_epilogue(node.xp, bias, w.shape[3], True))
    return run


def _input_gradient_geometry(attrs: dict, input_sizes, w, dy) -> tuple[tuple, Geometry]:
    """Conv2DBackpropInput's checked (input sizes, geometry)."""
    _check_rank4(filter=w, out_backprop=dy)
    sizes = _sizes(input_sizes)
    geo = _geometry_or_fail(attrs, sizes[1:3], w.shape[:2])
    expected = (sizes[0], geo.h.out, geo.w.out, w.shape[3])
    if dy.shape != expected or sizes[3] != w.shape[2]:
        _fail(f"Conv2DBackpropInput: out_backprop of shape {list(dy.shape)} does not match input_sizes "
              f"{list(sizes)} and filter {list(w.shape)} (expected {list(expected)})")
    return sizes, geo


def _filter_gradient_geometry(attrs: dict, x, filter_sizes, dy) -> tuple[tuple, Geometry]:
    """Conv2DBackpropFilter's checked (filter sizes, geometry)."""
    _check_rank4(input=x, out_backprop=dy)
    sizes = _sizes(filter_sizes)
    geo = _geometry_or_fail(attrs, x.shape[1:3], sizes[:2])
    expected = (x.shape[0], geo.h.out, geo.w.out, sizes[3])
    if dy.shape != expected or sizes[2] != x.shape[3]:
        _fail(f"Conv2DBackpropFilter: out_backprop of shape {list(dy.shape)} does not match input "
              f"{list(x.shape)} and filter_sizes {list(sizes)} (expected {list(expected)})")
    return sizes, geo


@kernel("Conv2DBackpropInput", parallel=True, fresh_output=True)
def conv2d_backprop_input(node):
    attrs, scratch, out_dtype, xp = node.attrs, Scratch(node.xp), node.output_dtypes[0], node.xp

    def run(input_sizes, w, dy):
        sizes, geo = _input_gradient_geometry(attrs, input_sizes, w, dy)
        return _convolve(scratch, out_dtype, "backprop_input", dy, w, geo, sizes)

    filter_gradient = conv2d_backprop_filter(node)

    def with_filter_gradient(input_sizes, w, dy, x, filter_sizes):
        """(Conv2DBackpropInput, Conv2DBackpropFilter) of one dy: one spectrum of dy where both use FFT."""
        sizes, geo = _input_gradient_geometry(attrs, input_sizes, w, dy)
        _, filter_geo = _filter_gradient_geometry(attrs, x, filter_sizes, dy)
        if (filter_geo == geo and x.shape == sizes and x.dtype == dy.dtype == w.dtype == out_dtype
                and 0 not in x.shape + w.shape + dy.shape and x.flags.c_contiguous and dy.flags.c_contiguous
                and _CHOSEN.get(_key("backprop_input", dy, w, geo, xp)) == "fft"
                and _CHOSEN.get(_key("backprop_filter", x, dy, geo, xp)) == "fft"):
            return fft_backprop(scratch, x, xp.ascontiguousarray(w), dy, geo)
        return run(input_sizes, w, dy), filter_gradient(x, filter_sizes, dy)

    if _compute_dtype(out_dtype) == out_dtype:
        run.with_filter_gradient = with_filter_gradient  # for tfnb/runtime/fusion.py
    return run


@kernel("Conv2DBackpropFilter", parallel=True, fresh_output=True)
def conv2d_backprop_filter(node):
    attrs, scratch, out_dtype = node.attrs, Scratch(node.xp), node.output_dtypes[0]

    def run(x, filter_sizes, dy):
        sizes, geo = _filter_gradient_geometry(attrs, x, filter_sizes, dy)
        return _convolve(scratch, out_dtype, "backprop_filter", x, dy, geo, sizes)

    return run


# -- pooling --------------------------------------------------------------------------------------
#
# Non-overlapping windows (k == stride, no padding) reduce in two stages over strided views: the kh
# row taps, then the kw column taps, each stage a few whole-array ufuncs, with the batch split
# across threads. Where a gradient goes is chosen with bit masks: np.where and masked copies are
# several times slower on unpredictable masks.


# Input bytes per step of a pooling pass: with them, a step's several passes stay in a core's L2 cache.
_POOL_STEP_BYTES = 1 << 20


def _in_cache_sized_parts(fn, x) -> None:
    """fn(images) over slices of x's batch: split across the run's threads, each thread's share in cache-sized steps."""
    step = max(1, _POOL_STEP_BYTES // max(x[0].nbytes, 1)) if x.shape[0] else 1

    def share(images: slice) -> None:
        for first in range(images.start, images.stop, step):
            fn(slice(first, min(first + step, images.stop)))

    parallel_parts(share, x.shape[0], x.size)


def _pool_geometry_or_fail(attrs: dict, shape: tuple) -> Geometry:
    if len(shape) != 4:
        _fail(f"input must be 4-dimensional: {list(shape)}")
    try:
        return pool_geometry(attrs, shape[1:3])
    except ValueError as error:
        raise InvalidArgumentError(None, None, str(error)) from None


def _tiling(geo: Geometry) -> bool:
    return geo.h.is_tiling() and geo.w.is_tiling()


def _pooled_shape(shape: tuple, geo: Geometry) -> tuple:
    return (shape[0], geo.h.out, geo.w.out, shape[3])


def _row_taps(x, h: Axis) -> list:
    """Per window row tap, the strided view of the input rows it reads: (B, Ho, W, C) each."""
    return [x[:, a:h.out * h.taps:h.taps] for a in range(h.taps)]


def _col_taps(x, w: Axis) -> list:
    """Per window column tap, the strided view of the input columns it reads: (B, H, Wo, C) each."""
    return [x[:, :, b:w.out * w.taps:w.taps] for b in range(w.taps)]


def _fold_into(xp, fn, views, out):
    """The binary ufunc fn folded over the views, written into out."""
    if len(views) == 1:
        xp.copyto(out, views[0])
        return out
    fn(views[0], views[1], out=out)
    for view in views[2:]:
        fn(out, view, out=out)
    return out


def _tiled_reduce(scratch: Scratch, fn, x, geo: Geometry, out):
    """fn folded over every non-overlapping window of x, rows first, into out (B, Ho, Wo, C)."""
    rows = scratch("pool.rows", (x.shape[0], geo.h.out, x.shape[2], x.shape[3]), out.dtype)
    return _fold_into(scratch.xp, fn, _col_taps(_fold_into(scratch.xp, fn, _row_taps(x, geo.h), rows), geo.w), out)


def _first_max(xp, views, need_max: bool = True):
    """The elementwise maximum of views (None if not needed), and which view first reaches it.

    Strict > comparisons keep the first of equal maxima.
    """
    best, index = views[0], None
    for i, view in enumerate(views[1:], start=1):
        later = xp.greater(view, best)
        if need_max or i < len(views) - 1:
            best = xp.maximum(best, view)
        # Indices only grow, so the latest view that was strictly greater is max(index, i * later).
        index = later if index is None else xp.maximum(index, xp.multiply(later, np.int8(i)))
    return (best if need_max else None), index


def _tap_masks(xp, index, taps: int) -> list:
    """Per tap, where `index` picked it: bool arrays (None for a single tap)."""
    if index is None:
        return [None]
    if taps == 2:
        return [xp.logical_not(index), index]
    return [xp.equal(index, t) for t in range(taps)]


def _tiled_first_max(xp, x, geo: Geometry):
    """Where each window's first maximum (row-major, as TF) is: masks per column tap, then per row tap.

    Columns go first, so that within the first row holding the maximum the first column wins.
    """
    columns, column_index = _first_max(xp, _col_taps(x[:, :geo.h.out * geo.h.taps], geo.w))
    _, row_index = _first_max(xp, _row_taps(columns, geo.h), need_max=False)
    return _tap_masks(xp, column_index, geo.w.taps), _tap_masks(xp, row_index, geo.h.taps)


_INT_OF_SIZE = {2: np.int16, 4: np.int32, 8: np.int64}


def _select(xp, values, mask, out):
    """values where mask, else exact zeros (all of values when mask is None), written into out."""
    if mask is None:
        xp.copyto(out, values)
        return out
    ints = np.dtype(_INT_OF_SIZE[values.dtype.itemsize])
    bits = xp.multiply(mask, ints.type(-1), dtype=ints)
    xp.bitwise_and(values.view(ints), bits, out=out.view(ints))
    return out


def _pool_windows(scratch: Scratch, x, geo: Geometry, fill):
    """Every window of x as a view (B, Ho, Wo, C, kh, kw) of a canvas padded with `fill`."""
    canvas = _canvas(scratch, x, geo, max(geo.h.canvas, 1), max(geo.w.canvas, 1), fill)
    return _windows(scratch.xp, canvas, geo, taps_last=True)


def _lowest(np_dtype):
    np_dtype = np.dtype(np_dtype)
    return -np.inf if np_dtype.kind == "f" else np.iinfo(np_dtype).min


def _window_counts(xp, geo: Geometry, dtype):
    """How many input elements (not padding) each output window covers, as (Ho, Wo, 1)."""
    def per_axis(a: Axis):
        start = a.output_positions() - a.pad
        return np.minimum(start + a.taps, a.size) - np.maximum(start, 0)

    return xp.asarray(np.outer(per_axis(geo.h), per_axis(geo.w))[:, :, None], dtype=dtype)


@kernel("MaxPool", parallel=True)
def max_pool(node):
    xp, attrs, fill, scratch = node.xp, node.attrs, _lowest(node.output_dtypes[0]), Scratch(node.xp)

    def run(x):
        geo = _pool_geometry_or_fail(attrs, x.shape)
        if 0 in _pooled_shape(x.shape, geo):
            return xp.zeros(_pooled_shape(x.shape, geo), dtype=x.dtype)
        if _tiling(geo):
            out = scratch.output("out", _pooled_shape(x.shape, geo), x.dtype)
            _in_cache_sized_parts(lambda part: _tiled_reduce(scratch, xp.maximum, x[part], geo, out[part]), x)
            return out
        return _pool_windows(scratch, x, geo, fill).max(axis=(4, 5))

    return run


@kernel("AvgPool", parallel=True)
def avg_pool(node):
    xp, attrs, out_dtype, scratch = node.xp, node.attrs, node.output_dtypes[0], Scratch(node.xp)
    compute = _compute_dtype(out_dtype)

    def run(x):
        geo = _pool_geometry_or_fail(attrs, x.shape)
        if 0 in _pooled_shape(x.shape, geo):
            return xp.zeros(_pooled_shape(x.shape, geo), dtype=out_dtype)
        if _tiling(geo):
            sums = xp.empty(_pooled_shape(x.shape, geo), dtype=compute)
            x = x.astype(compute, copy=False)
            _in_cache_sized_parts(lambda part: _tiled_reduce(scratch, xp.add, x[part], geo, sums[part]), x)
            return xp.multiply(sums, compute.type(1 / (geo.h.taps * geo.w.taps))).astype(out_dtype, copy=False)
        sums = _pool_windows(scratch, x, geo, 0).sum(axis=(4, 5), dtype=compute)
        return (sums / _window_counts(xp, geo, compute)).astype(out_dtype, copy=False)

    return run


def _first_max_flat(scratch: Scratch, x, geo: Geometry, fill):
    """For every output window, the flat index into x of its first maximum (padding never wins)."""
    xp, windows = scratch.xp, _pool_windows(scratch, x, geo, fill)
    taps = windows.reshape(windows.shape[:4] + (-1,)).argmax(axis=4)
    batch, height, width, channels = x.shape
    # Only a window of lowest values can pick padding; clipping then lands on its first real element, as TF.
    row = xp.clip(xp.asarray(geo.h.output_positions())[:, None, None] + taps // geo.w.taps - geo.h.pad, 0, height - 1)
    col = xp.clip(xp.asarray(geo.w.output_positions())[None, :, None] + taps % geo.w.taps - geo.w.pad, 0, width - 1)
    images = xp.arange(batch).reshape(-1, 1, 1, 1) * height
    return ((images + row) * width + col) * channels + xp.arange(channels)


def _tiled_max_pool_grad(scratch: Scratch, x, dy, geo: Geometry, dx) -> None:
    """Each window's dy into dx at the window's first maximum (dx zero elsewhere, rows past the windows included)."""
    xp = scratch.xp
    column_masks, row_masks = _tiled_first_max(xp, x, geo)
    rows = scratch("pool.grad_rows", (x.shape[0], geo.h.out * geo.h.taps, geo.w.out, x.shape[3]), dx.dtype)
    for view, mask in zip(_row_taps(rows, geo.h), row_masks):
        _select(xp, dy, mask, view)
    for view, mask in zip(_col_taps(dx, geo.w), column_masks):
        _select(xp, rows, mask, view[:, :rows.shape[1]])
    dx[:, rows.shape[1]:] = 0
    dx[:, :rows.shape[1], geo.w.out * geo.w.taps:] = 0


def _tiled_max_pool_grad_grad(scratch: Scratch, x, ddx, geo: Geometry, ddy) -> None:
    """ddx read at each window's first maximum, into ddy."""
    xp = scratch.xp
    column_masks, row_masks = _tiled_first_max(xp, x, geo)
    columns = _col_taps(ddx[:, :geo.h.out * geo.h.taps], geo.w)
    picked = [_select(xp, view, mask, xp.empty(view.shape, ddy.dtype)) for view, mask in zip(columns, column_masks)]
    rows = _fold_into(xp, xp.add, picked, picked[0])
    picked = [_select(xp, view, mask, xp.empty(view.shape, ddy.dtype))
              for view, mask in zip(_row_taps(rows, geo.h), row_masks)]
    _fold_into(xp, xp.add, picked, ddy)


@kernel("MaxPoolGrad", parallel=True, fresh_output=True)
def max_pool_grad(node):
    xp, attrs, out_dtype, scratch = node.xp, node.attrs, node.output_dtypes[0], Scratch(node.xp)
    fill = _lowest(out_dtype)

    def run(x, y, dy, relu_grad: bool = False):
        geo = _pool_geometry_or_fail(attrs, x.shape)
        if dy.shape != _pooled_shape(x.shape, geo):
            _fail(f"MaxPoolGrad: grad of shape {list(dy.shape)} does not match orig_input {list(x.shape)}")
        if x.size == 0 or dy.size == 0:
            return xp.zeros(x.shape, dtype=out_dtype)
        if _tiling(geo):
            dx = scratch.output("out", x.shape, out_dtype)

            def part_of(part):
                _tiled_max_pool_grad(scratch, x[part], dy[part], geo, dx[part])
                if relu_grad:  # ReluGrad's product, while the part is in the caches
                    xp.multiply(dx[part], x[part] > zero, out=dx[part])

            _in_cache_sized_parts(part_of, x)
            return dx
        flat = _first_max_flat(scratch, x, geo, fill).reshape(-1)
        dx = xp.bincount(flat, weights=dy.reshape(-1), minlength=x.size).astype(out_dtype, copy=False).reshape(x.shape)
        return xp.multiply(dx, x > zero, out=dx) if relu_grad else dx

    zero = np.dtype(out_dtype).type(0)
    # For tfnb/runtime/fusion.py: ReluGrad(MaxPoolGrad(x, y, dy), x), with ReluGrad's arithmetic.
    run.with_relu_grad = lambda x, y, dy: run(x, y, dy, True)
    return run


@kernel("MaxPoolGradGrad", parallel=True)
def max_pool_grad_grad(node):
    xp, attrs, out_dtype, scratch = node.xp, node.attrs, node.output_dtypes[0], Scratch(node.xp)
    fill = _lowest(out_dtype)

    def run(x, y, ddx):
        geo = _pool_geometry_or_fail(attrs, x.shape)
        if ddx.shape != x.shape:
            _fail(f"MaxPoolGradGrad: grad of shape {list(ddx.shape)} does not match orig_input {list(x.shape)}")
        ddy = xp.empty(_pooled_shape(x.shape, geo), dtype=out_dtype)
        if ddy.size == 0:
            return ddy
        if _tiling(geo):
            _in_cache_sized_parts(lambda part: _tiled_max_pool_grad_grad(scratch, x[part], ddx[part], geo, ddy[part]),
                                  x)
            return ddy
        return ddx.reshape(-1)[_first_max_flat(scratch, x, geo, fill)]

    return run


@kernel("AvgPoolGrad", parallel=True, fresh_output=True)
def avg_pool_grad(node):
    xp, attrs, out_dtype = node.xp, node.attrs, node.output_dtypes[0]
    compute = _compute_dtype(out_dtype)

    def run(input_shape, dy):
        shape = _sizes(input_shape)
        geo = _pool_geometry_or_fail(attrs, shape)
        if dy.shape != _pooled_shape(shape, geo):
            _fail(f"AvgPoolGrad: grad of shape {list(dy.shape)} does not match orig_input_shape {list(shape)}")
        dx = xp.zeros(shape, dtype=compute)
        if dx.size == 0 or dy.size == 0:
            return dx.astype(out_dtype, copy=False)
        share = dy.astype(compute, copy=False) / _window_counts(xp, geo, compute)
        if _tiling(geo):
            # Every input element of a window gets the same share: broadcast it over the window's taps.
            windows = xp.lib.stride_tricks.as_strided(
                dx, (shape[0], geo.h.out, geo.h.taps, geo.w.out, geo.w.taps, shape[3]),
                (dx.strides[0], geo.h.taps * dx.strides[1], dx.strides[1], geo.w.taps * dx.strides[2], dx.strides[2],
                 dx.strides[3]))
            windows[...] = share[:, :, None, :, None]
            return dx.astype(out_dtype, copy=False)
        return _scatter_windows(xp, share, geo, dx).astype(out_dtype, copy=False)

    return run


def _scatter_windows(xp, share, geo: Geometry, dx):
    """dx plus each output's share added to every input element of its window (overlapping windows)."""
    rows, cols = max(geo.h.canvas, 1), max(geo.w.canvas, 1)
    canvas = xp.zeros((dx.shape[0], rows, cols, dx.shape[3]), dtype=dx.dtype)
    windows = _windows(xp, canvas, geo, taps_last=True)
    # Windows overlap, so a vectorized += would drop repeats: add one tap at a time (kh*kw small passes).
    for a in range(geo.h.taps):
        for b in range(geo.w.taps):
            windows[..., a, b] += share
    (r0, r1), (c0, c1) = _placed(geo.h, rows), _placed(geo.w, cols)
    dx[:, :r1 - r0, :c1 - c0] = canvas[:, r0:r1, c0:c1]
    return dx
