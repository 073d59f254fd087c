"""What the kernels that split their work share: scratch arrays and a pool of outputs, padded canvases, window
views, and chunks of work that the run's threads take in turns."""

from __future__ import annotations

import itertools
import math
import sys
import threading
from collections.abc import Callable

import numpy as np

from tfnb.framework.common_shapes import Axis, Geometry
from tfnb.kernels.intra_op import PARALLEL_WORK, blas_in_one_thread, even_slices, parallel_parts, run_width

# Outputs of at least this many bytes come from the pool (Scratch.output): below it, a new array costs less.
POOLED_BYTES = 4 << 20
# A chunk of a kernel's work on the host: 2 MiB keeps every stage of a chunk near the CPU caches (_even_chunks).
HOST_CHUNK_BYTES = 2 << 20
# On a device (a GPU) a chunk's work must outlast its kernel launches many times over: 1 GiB of columns or
# spectrum is milliseconds of work there, and still fits beside a model's activations.
DEVICE_CHUNK_BYTES = 1 << 30


class Scratch:
    """Arrays that kernels reuse from call to call: temporaries per thread, outputs from a shared pool.

    Large arrays would otherwise be fresh memory every step, and the page faults of touching fresh
    memory cost as much as the arithmetic. A temporary lives only during its kernel's call and a
    thread runs one kernel at a time, so all kernels of a thread share their temporaries (by name):
    they take the memory of the largest, not of the sum. Outputs come from a pool shared by every
    kernel and thread: an array of the asked shape and dtype that nothing but the pool refers to any
    more (the reference-count test of copy-on-write variables), so once a plan drops a value after
    its last reader, the next kernel asking for that shape writes into it.
    """

    def __init__(self, xp) -> None:
        self.xp = xp

    def __call__(self, name: str, shape: tuple, dtype):
        """A temporary array, valid until the next call for the same name in this thread (by any kernel)."""
        arrays, size = _temporaries(self.xp), math.prod(shape)
        flat = arrays.get(name)
        if flat is None or flat.size < size or flat.dtype != dtype:
            flat = arrays[name] = self.xp.empty(size, dtype=dtype)
        return flat[:size].reshape(shape)

    def chunk_bytes(self, host_bytes: int = HOST_CHUNK_BYTES) -> int:
        """The bytes of a chunk of work (each_chunk): `host_bytes` on the host, DEVICE_CHUNK_BYTES on a device."""
        return host_bytes if self.xp is np else DEVICE_CHUNK_BYTES

    def output(self, shape: tuple, dtype):
        """An array to return: one of the pool's that nothing else refers to, else a new one added to the pool.

        NumPy arrays only: a NumPy view refers to the array it views, so the pool sees it; other array
        modules (CuPy keeps freed device memory in a pool of its own) get a new array. So do arrays under
        POOLED_BYTES: the allocator serves them from memory it holds already, and an array that the pool does
        not refer to is one the ops after the kernel may write their outputs into.
        """
        if self.xp is not np or math.prod(shape) * np.dtype(dtype).itemsize < POOLED_BYTES:
            return self.xp.empty(shape, dtype=dtype)
        return _OUTPUTS.take(tuple(shape), dtype)


_thread_temporaries = threading.local()
_every_thread_temporaries: list[dict] = []  # each thread's {module name: {name: array}}, for release_unused


def _temporaries(xp) -> dict:
    """This thread's temporaries of array module xp, by name."""
    by_module = getattr(_thread_temporaries, "by_module", None)
    if by_module is None:
        by_module = _thread_temporaries.by_module = {}
        _every_thread_temporaries.append(by_module)
    return by_module.setdefault(xp.__name__, {})


def release_unused() -> None:
    """Forgets every temporary and every pooled output that nothing uses: their memory goes back.

    Called after timing algorithms on first sight of a shape, whose losers' arrays would otherwise stay.
    A kernel running meanwhile keeps the arrays it holds; the next request makes new ones.
    """
    for by_module in list(_every_thread_temporaries):
        by_module.clear()
    _OUTPUTS.drop_free()


class _OutputPool:
    """Every NumPy output array the kernels made, by (shape, dtype); see Scratch.output."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # two threads must not both take the same free array
        self._arrays: dict[tuple, list] = {}

    def take(self, shape: tuple, dtype):
        key = (shape, str(dtype))
        with self._lock:
            arrays = self._arrays.setdefault(key, [])
            for index in range(len(arrays)):
                # A free array has two references here: the pool's list and getrefcount's argument.
                if sys.getrefcount(arrays[index]) == 2:
                    if _writeable(arrays[index]):
                        return arrays[index]
                    del arrays[index]  # frozen by its last holder (a folded constant): not the pool's to reuse
                    break
            array = np.empty(shape, dtype=dtype)
            arrays.append(array)
            return array

    def drop_free(self) -> None:
        """Forgets the arrays that nothing but the pool refers to."""
        with self._lock:
            for arrays in self._arrays.values():
                # Three references to a free array: the list, `array`, getrefcount's argument.
                arrays[:] = [array for array in arrays if sys.getrefcount(array) > 3]


def _writeable(array) -> bool:
    flags = getattr(array, "flags", None)
    return getattr(flags, "writeable", True)


_OUTPUTS = _OutputPool()


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


def row_pieces(rows: slice, height: int) -> list[tuple[slice, int, int]]:
    """The (images, first row, end row) pieces of a slice of image-major rows, for images `height` rows high:
    the whole images in one piece, a partly covered first or last image in a piece of its own, so that each piece
    is one strided copy (on a GPU one kernel launch, not one per image)."""
    first_image, last_image = rows.start // height, (rows.stop - 1) // height
    head, tail = rows.start - first_image * height, rows.stop - last_image * height
    if first_image == last_image:
        return [(slice(first_image, first_image + 1), head, tail)]
    whole = slice(first_image + (head > 0), last_image + (tail == height))
    return ([(slice(first_image, first_image + 1), head, height)] if head else []) + \
        ([(whole, 0, height)] if whole.stop > whole.start else []) + \
        ([(slice(last_image, last_image + 1), 0, tail)] if tail < height else [])


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


def _even_chunks(count: int, per_item: int, chunk_bytes: int = HOST_CHUNK_BYTES) -> list[slice]:
    """Even slices of range(count) (images, or rows of them) of `per_item` bytes each, as many as a multiple
    of the threads that share them.

    Where the kernels split work across threads, or BLAS runs in the calling thread (as in a task side by side:
    one direction of a convolution's gradients), a chunk holds about `chunk_bytes` of spectrum (or tiles, or
    columns): 2 MiB keeps every stage of a chunk near the CPU caches. Chunks of a task side by side were 16 MiB
    before, and AlexNet's training step took 1.05x the time (GoogLeNet's 1.02x; batch 4). Where BLAS has threads
    of its own, chunks are at least 16 MiB, so that its matrix products are large enough for them.
    """
    threads = run_width()
    limit = chunk_bytes if threads > 1 or blas_in_one_thread() else max(chunk_bytes, 16 << 20)
    return even_slices(count, min(count, -(-math.ceil(count * per_item / limit) // threads) * threads))


def in_turns(fn: Callable[[int], object], count: int, work: float) -> list:
    """[fn(i) for i in range(count)], the run's threads each taking the next i when done with the last.

    On a machine busy with other work, a thread that loses its core takes fewer parts instead of
    holding up the others; the parts must write disjoint data, and the results come in order.
    """
    results: list = [None] * count
    claimed = itertools.count()  # next() on it is one atomic step under the GIL

    def take_turns(_):
        while (index := next(claimed)) < count:
            results[index] = fn(index)

    parallel_parts(take_turns, max(run_width(), 1), work)
    return results


def slices_in_turns(fn: Callable[[slice], object], n: int, work: float, per_thread: int = 4) -> list:
    """[fn(part) for about `per_thread` slices per thread covering range(n)], taken in turns (in_turns)."""
    if n == 0:
        return []
    threads = run_width()
    parts = even_slices(n, min(n, per_thread * threads) if threads > 1 and work >= PARALLEL_WORK else 1)
    return in_turns(lambda index: fn(parts[index]), len(parts), work)


def each_chunk(fn: Callable[[slice], object], count: int, per_item: int, chunk_bytes: int = HOST_CHUNK_BYTES,
               work: float | None = None) -> list:
    """[fn(chunk) for each even chunk of range(count)], chunks taken in turns by the run's threads (in_turns).

    `work` (element operations, for parallel_parts) defaults to the chunks' bytes.
    """
    chunks = _even_chunks(count, per_item, chunk_bytes)
    return in_turns(lambda index: fn(chunks[index]), len(chunks), count * per_item if work is None else work)
