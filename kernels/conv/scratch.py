"""What the convolution and pooling algorithms share: scratch arrays, padded canvases, window views, batch chunks."""

from __future__ import annotations

import math
import sys
import threading
from collections.abc import Callable

from tfnb.framework.common_shapes import Axis, Geometry
from tfnb.kernels.intra_op import parallel_parts, run_width


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


def placed(h: Axis, rows: int) -> tuple[int, int]:
    """(first, end) of canvas rows [0, rows) that input rows land on, as positions pad + h."""
    first = min(h.pad, rows)
    return first, max(min(h.pad + h.size, rows), first)


def on_canvas(scratch: Scratch, x, geo: Geometry, rows: int, cols: int, fill: float = 0):
    """x placed on a (scratch) canvas of rows x cols at the geometry's padding; x itself when it already fits."""
    if geo.h.pad == 0 and geo.w.pad == 0 and x.shape[1:3] == (rows, cols):
        return x
    canvas = scratch("canvas", (x.shape[0], rows, cols, x.shape[3]), x.dtype)
    canvas.fill(fill)
    (r0, r1), (c0, c1) = placed(geo.h, rows), placed(geo.w, cols)
    canvas[:, r0:r1, c0:c1] = x[:, :r1 - r0, :c1 - c0]
    return canvas


def window_view(xp, canvas, geo: Geometry, taps_last: bool = False):
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


def per_chunk(fn: Callable[[list[slice]], object], batch: int, per_image: int, chunk_bytes: int = 2 << 20) -> list:
    """fn(list of batch chunks) per thread, each thread given consecutive chunks; the results in order."""
    chunks = _batch_chunks(batch, per_image, chunk_bytes)
    return parallel_parts(lambda part: fn(chunks[part]), len(chunks), batch * per_image)

