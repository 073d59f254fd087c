"""The "fft" algorithm: the product in the frequency domain, on the smallest canvas that the outputs read.

The 2-D DFTs of such small canvases (tens of points a side) run as matrix products with DFT matrices:
at these sizes BLAS beats numpy.fft's per-line transforms several times over. Strides, dilations and
paddings only change which canvas positions the matrices visit.

Spectra use rfft along the canvas height (F = Th // 2 + 1 frequencies) and a full DFT along its
width (G = Tw); they are stored as real planes (F, re/im, G, rows, cols) and multiplied as such.
Data enters in (H, W, B, C) layout, so that every transform is a matrix product over the leading axis.

The real and imaginary parts of a frequency row each lie in one contiguous run over all of G, where the complex
products add their terms. NumPy copies an operand through buffers when its runs are shorter than about half a
buffer (8192 elements by default): held as (F, G, re/im, rows, cols), with runs of rows * cols, those sums took
3.4x the time of contiguous ones, and the CNN benchmark's training step 1.08x the time it takes now (alternating
in one process).
"""

from __future__ import annotations

import functools

import numpy as np

from tfnb.framework.common_shapes import Geometry
from tfnb.kernels.conv.scratch import Scratch, each_chunk
from tfnb.kernels.intra_op import even_slices, parallel_parts

# Spectrum bytes of a group of images. A group's products run frequency by frequency over all its images, the
# frequencies shared out among the threads: each product then has as many rows as the group has images, where
# chunks of the batch per thread gave them a few (the CNN benchmark's second layer: 16 rows, at 17 GFLOP/s on one
# core; GoogLeNet's at batch 4: 2). Transforms still run per cache-sized chunk of images.
_GROUP_BYTES = 32 << 20


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
    second = np.stack([np.concatenate([c, s], 1), np.concatenate([-s, c], 1)])  # rows (re/im, g)
    return (xp.asarray(first.reshape(-1, len(rows)), dtype=dtype),
            xp.asarray(second.reshape(2 * extent_w, 2 * len(cols)), dtype=dtype))


@functools.lru_cache(maxsize=256)
def _synthesis_matrices(xp, dtype: str, extent_h: int, extent_w: int, rows: tuple, cols: tuple):
    """Matrices taking a spectrum back to real values at canvas rows x cols: (2Wq, 2G), (Hq, 2F)."""
    rows, cols = np.array(rows), np.array(cols)
    angle = 2 * np.pi * np.outer(cols, np.arange(extent_w)) / extent_w
    c, s = np.cos(angle), np.sin(angle)
    first = np.stack([np.concatenate([c, -s], 1), np.concatenate([s, c], 1)]) * _inside(cols, extent_w)[:, None]
    # (re/im, j, (re/im, g))
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


def _spectrum(scratch: Scratch, name: str, data, geo: Geometry, where: str, split: bool = False, into=None):
    """Spectrum planes (F, 2, G, B, C) of data laid out (H, W, B, C) at the canvas positions `where`, in scratch or
    written into `into`.

    With `split`, on the host, the B*C columns are shared out among the run's threads, each transforming its own
    (a filter's spectrum, which every chunk of the data waits for): the height's transform then runs per column of
    the data, as W products instead of one. A device takes the whole transform in two products, as a chunk.
    """
    xp, (height, width, batch, channels) = scratch.xp, data.shape
    rows, cols = _positions(geo, where)
    first, second = _analysis_matrices(xp, data.dtype.str, geo.h.canvas, geo.w.canvas, tuple(rows.tolist()),
                                       tuple(cols.tolist()))
    freqs = first.shape[0] // 2
    half = scratch(name + ".half", (2 * freqs, width, batch * channels), data.dtype)
    planes = scratch(name, (freqs, 2, geo.w.canvas, batch, channels), data.dtype) if into is None else into
    by_frequency = planes.reshape(freqs, 2 * geo.w.canvas, -1)
    if not split or xp is not np:
        xp.matmul(first, data.reshape(height, -1), out=half.reshape(2 * freqs, -1))
        xp.matmul(second, half.reshape(freqs, 2 * width, -1), out=by_frequency)
        return planes
    by_column = data.reshape(height, width, -1)

    def transform(chosen: slice) -> None:
        xp.matmul(first, by_column[:, :, chosen].transpose(1, 0, 2), out=half[:, :, chosen].transpose(1, 0, 2))
        xp.matmul(second, half.reshape(freqs, 2 * width, -1)[:, :, chosen], out=by_frequency[:, :, chosen])

    parallel_parts(transform, batch * channels, planes.size * (height + 2 * width))
    return planes


def _data_spectrum(scratch: Scratch, name: str, data, geo: Geometry, where: str, into=None):
    """Spectrum planes (F, 2, G, B, C) of NHWC data at the canvas positions `where` ('input' or 'output'), in
    scratch or written into `into` (a view of a group's planes)."""
    spatial_first = scratch(name + ".hwbc", (data.shape[1], data.shape[2], data.shape[0], data.shape[3]), data.dtype)
    scratch.xp.copyto(spatial_first, data.transpose(1, 2, 0, 3))
    return _spectrum(scratch, name, spatial_first, geo, where, into=into)


def _signal(scratch: Scratch, planes, geo: Geometry, where: str, out, split: bool = False):
    """Real values (Hq, Wq, B, C) into `out`, at the canvas positions `where`, of spectrum planes (F, 2, G, B, C).

    With `split`, on the host, the B*C columns are shared out among the run's threads (a filter gradient's, which
    comes after every chunk), the height's transform then as Wq products, one per output column."""
    xp, (freqs, _, _, batch, channels) = scratch.xp, planes.shape
    rows, cols = _positions(geo, where)
    first, second = _synthesis_matrices(xp, planes.dtype.str, geo.h.canvas, geo.w.canvas, tuple(rows.tolist()),
                                        tuple(cols.tolist()))
    half = scratch("signal.half", (freqs, first.shape[0], batch * channels), planes.dtype)
    by_frequency = planes.reshape(freqs, -1, batch * channels)
    if not split or xp is not np:
        xp.matmul(first, by_frequency, out=half)
        return xp.matmul(second, half.reshape(2 * freqs, -1), out=out.reshape(len(rows), -1))
    columns = first.shape[0] // 2
    by_column, half_by_column = out.reshape(len(rows), columns, -1), half.reshape(2 * freqs, columns, -1)

    def transform(chosen: slice) -> None:
        xp.matmul(first, by_frequency[:, :, chosen], out=half[:, :, chosen])
        xp.matmul(second, half_by_column[:, :, chosen].transpose(1, 0, 2), out=by_column[:, :, chosen].transpose(1, 0, 2))

    parallel_parts(transform, batch * channels, planes.size * (first.shape[0] + len(rows)))
    return out.reshape(len(rows), -1)


def _nhwc_signal(scratch: Scratch, planes, geo: Geometry, where: str, out) -> None:
    """The signal of spectrum planes (F, 2, G, B, C) at the positions `where`, into NHWC `out`."""
    values = _signal(scratch, planes, geo, where, scratch("signal", out.shape[1:3] + (out.shape[0], out.shape[3]),
                                                          planes.dtype))
    scratch.xp.copyto(out, values.reshape(out.shape[1:3] + (out.shape[0], out.shape[3])).transpose(2, 0, 1, 3))


def _complex_matmul(scratch: Scratch, a, b, conjugate: bool, out):
    """out = a @ b, or a @ conj(b), of complex matrices held as real planes (..., 2, rows, cols): four real products."""
    xp = scratch.xp
    a_re, a_im, b_re, b_im = a[:, 0], a[:, 1], b[:, 0], b[:, 1]
    re, im = out[:, 0], out[:, 1]
    term = scratch("product.term", re.shape, a.dtype)
    xp.matmul(a_re, b_re, out=re)
    xp.matmul(a_im, b_re, out=im)
    (xp.add if conjugate else xp.subtract)(re, xp.matmul(a_im, b_im, out=term), out=re)
    (xp.subtract if conjugate else xp.add)(im, xp.matmul(a_re, b_im, out=term), out=im)
    return out


def _spectrum_bytes(geo: Geometry, channels: int, itemsize: int) -> int:
    """Bytes of one image's spectrum planes."""
    return (geo.h.canvas // 2 + 1) * geo.w.canvas * 2 * channels * itemsize


def _groups(scratch: Scratch, count: int, per_image: int) -> list[slice]:
    """Even consecutive groups of `count` images, of about _GROUP_BYTES of spectrum each (`per_image` bytes an
    image) or fewer."""
    return even_slices(count, min(count, max(1, -(-count * per_image // scratch.chunk_bytes(_GROUP_BYTES)))))


def _group_spectrum(scratch: Scratch, name: str, data, geo: Geometry, where: str):
    """Spectrum planes (F, 2, G, B, C) of a group of NHWC images, transformed per cache-sized chunk of them, the
    chunks taken in turns by the run's threads."""
    planes = scratch(name + ".group", (geo.h.canvas // 2 + 1, 2, geo.w.canvas, data.shape[0], data.shape[3]),
                     data.dtype)
    each_chunk(lambda images: _data_spectrum(scratch, name, data[images], geo, where, into=planes[:, :, :, images]),
               data.shape[0], _spectrum_bytes(geo, data.shape[3], data.itemsize), scratch.chunk_bytes())
    return planes


def _products_by_frequency(scratch: Scratch, a, b, conjugate: bool, out):
    """out = a @ b, or a @ conj(b), of planes (F, 2, G, rows, cols): the frequencies shared out among the run's
    threads, each product over every image of the group."""
    parallel_parts(lambda chosen: _complex_matmul(scratch, a[chosen], b[chosen], conjugate, out[chosen]),
                   a.shape[0], out.size * a.shape[-1])
    return out


def _group_signal(scratch: Scratch, planes, geo: Geometry, where: str, out, epilogue=None) -> None:
    """The NHWC signal of a group's spectrum planes at the positions `where` into `out`, per cache-sized chunk of
    images taken in turns by the run's threads (then `epilogue` on each chunk)."""
    def chunk(images):
        _nhwc_signal(scratch, planes[:, :, :, images], geo, where, out[images])
        if epilogue is not None:
            epilogue(out[images])

    each_chunk(chunk, out.shape[0], _spectrum_bytes(geo, planes.shape[4], planes.itemsize), scratch.chunk_bytes())


def fft_forward(scratch: Scratch, x, w, geo: Geometry, epilogue=None):
    """Conv2D as spectrum(x) times the conjugate spectrum of w, back at the strided output positions."""
    ws = _spectrum(scratch, "w", w, geo, "tap", split=True)
    out = scratch.output((x.shape[0], geo.h.out, geo.w.out, w.shape[3]), x.dtype)
    for images in _groups(scratch, x.shape[0], _spectrum_bytes(geo, x.shape[3] + w.shape[3], x.itemsize)):
        xs = _group_spectrum(scratch, "x", x[images], geo, "input")
        product = scratch("fft.product", xs.shape[:4] + (w.shape[3],), x.dtype)
        _group_signal(scratch, _products_by_frequency(scratch, xs, ws, True, product), geo, "output", out[images],
                      epilogue)
    return out


def _transposed_filter_spectrum(scratch: Scratch, w, geo: Geometry):
    """The spectrum of w with its channel axes swapped, (F, 2, G, out, in), for the input gradient."""
    return _spectrum(scratch, "w", scratch.xp.ascontiguousarray(w.transpose(0, 1, 3, 2)), geo, "tap", split=True)


def _input_gradient_of_group(scratch: Scratch, ys, ws, geo: Geometry, out) -> None:
    """A group's input gradient into `out`, from its spectrum of dy and the transposed filter spectrum."""
    product = scratch("fft.product", ys.shape[:4] + (ws.shape[4],), ys.dtype)
    _group_signal(scratch, _products_by_frequency(scratch, ys, ws, False, product), geo, "input", out)


def fft_backprop_input(scratch: Scratch, dy, w, geo: Geometry):
    """Conv2DBackpropInput as spectrum(dy) times the transposed spectrum of w, read back at the input positions."""
    ws = _transposed_filter_spectrum(scratch, w, geo)
    out = scratch.output((dy.shape[0], geo.h.size, geo.w.size, w.shape[2]), dy.dtype)
    for images in _groups(scratch, dy.shape[0], _spectrum_bytes(geo, dy.shape[3] + w.shape[2], dy.itemsize)):
        _input_gradient_of_group(scratch, _group_spectrum(scratch, "dy", dy[images], geo, "output"), ws, geo,
                                 out[images])
    return out


def fft_backprop_filter(scratch: Scratch, x, dy, geo: Geometry, each_dy_spectrum=None):
    """Conv2DBackpropFilter as the batch sum of spectrum(x) times conj(spectrum(dy)), read at the taps.

    `each_dy_spectrum(images, spectrum)` also gets each group's spectrum of dy (see fft_backprop).
    """
    xp, total = scratch.xp, None
    for images in _groups(scratch, x.shape[0], _spectrum_bytes(geo, x.shape[3] + 2 * dy.shape[3], x.itemsize)):
        ys = _group_spectrum(scratch, "dy", dy[images], geo, "output")
        if each_dy_spectrum is not None:
            each_dy_spectrum(images, ys)
        xs = _group_spectrum(scratch, "x", x[images], geo, "input")
        shape = xs.shape[:3] + (x.shape[3], dy.shape[3])
        product = _products_by_frequency(scratch, xs.swapaxes(3, 4), ys, True, scratch(
            "fft.filter_product" if total is None else "fft.product", shape, x.dtype))
        total = product if total is None else xp.add(total, product, out=total)
    out = scratch.output((geo.h.taps, geo.w.taps, x.shape[3], dy.shape[3]), x.dtype)
    return _signal(scratch, total, geo, "tap", out, split=True).reshape(out.shape)


def fft_backprop(scratch: Scratch, x, w, dy, geo: Geometry) -> tuple:
    """Both gradients of a convolution, (input, filter), from one spectrum of each group of dy."""
    ws = _transposed_filter_spectrum(scratch, w, geo)
    dx = scratch.output((x.shape[0], geo.h.size, geo.w.size, w.shape[2]), dy.dtype)
    filter_gradient = fft_backprop_filter(
        scratch, x, dy, geo, lambda images, ys: _input_gradient_of_group(scratch, ys, ws, geo, dx[images]))
    return dx, filter_gradient
