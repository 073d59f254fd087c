"""Pooling kernels (NHWC): MaxPool, AvgPool, their gradients, and MaxPoolGradGrad.

Max pools, and average pools over non-overlapping windows (k == stride, no padding), reduce in two
stages over strided views: the kh row taps, then the kw column taps, each stage a few whole-array
ufuncs, with the batch split across threads; padded windows read a canvas filled with the lowest
value, but for padding after the input only (SAME at stride 2 over an even size), where the forward pool reads
the input in place and the taps past its end cover fewer outputs. Where windows overlap at a stride above one, the
search for each window's first maximum reads its column taps from the input's columns copied apart by phase.
Where a gradient goes is chosen with bit masks: np.where and masked copies are
several times slower on unpredictable masks. Other windows are read from a padded canvas.

Over tiling windows, MaxPoolGrad puts each window's dy at the first tap equal to the pool's output, one comparison
per tap (_tiled_max_pool_grad_by_equality). For other windows, in a plan holding both, MaxPool also returns where
each window's first maximum is (a workspace, as oneDNN's pools keep): flat indices into the input, which
MaxPoolGrad scatters dy to in one ufunc.at instead of finding the maxima again (tfnb/runtime/fusion.py). Windows at
every position over a ReLU's output find value and index together, as the maxima of the inputs widened to float64
with a position code in their spare bits (_max_pool_packed).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from tfnb.framework.common_shapes import Axis, Geometry
from tfnb.kernels.conv.arguments import compute_dtype, fail, pool_geometry_or_fail, size_vector
from tfnb.kernels.conv.scratch import Scratch, in_turns, on_canvas, placed, window_view
from tfnb.kernels.registry import Epilogue, Workspace, kernel

# Input bytes per step of a pooling pass: with them, a step's several passes stay in a core's L2 cache.
_POOL_STEP_BYTES = 1 << 20


def _in_cache_sized_parts(scratch: Scratch, fn, x) -> list:
    """[fn(images)] over cache-sized slices of x's batch, taken in turns by the run's threads; on a device (a GPU),
    parts of Scratch.chunk_bytes, the whole batch in practice: each of a part's dozens of kernel launches costs as
    much as a small part's work there (an H200 took 147 ms for AlexNet's first pool gradient in 128 parts).
    """
    step = max(1, scratch.chunk_bytes(_POOL_STEP_BYTES) // max(x[0].nbytes, 1)) if x.shape[0] else 1
    parts = [slice(first, min(first + step, x.shape[0])) for first in range(0, x.shape[0], step)]
    return in_turns(lambda index: fn(parts[index]), len(parts), x.size)


def _tiling(geo: Geometry) -> bool:
    return geo.h.is_tiling() and geo.w.is_tiling()


def _pooled_shape(shape: tuple, geo: Geometry) -> tuple:
    return (shape[0], geo.h.out, geo.w.out, shape[3])


def _tap_reads(a: Axis) -> list[slice]:
    """Per window tap along an axis, the canvas positions it reads for every output: one slice each."""
    return [slice(t, t + a.stride * (a.out - 1) + 1, a.stride) for t in range(a.taps)]


def _row_taps(x, h: Axis) -> list:
    """Per window row tap, the strided view of the (canvas) rows it reads: (B, Ho, W, C) each."""
    return [x[:, rows] for rows in _tap_reads(h)]


def _col_taps(x, w: Axis) -> list:
    """Per window column tap, the strided view of the (canvas) columns it reads: (B, H, Wo, C) each."""
    return [x[:, :, cols] for cols in _tap_reads(w)]


def _phase_col_taps(scratch: Scratch, x, w: Axis) -> list:
    """_col_taps, read from x's columns copied apart by phase (column index modulo the stride) where windows overlap
    at a stride above one: each tap is then a contiguous run of one phase's columns.

    A strided tap's view runs contiguously over one pixel's channels only, and NumPy's loops over such runs cost
    2-3x those over contiguous data (GoogLeNet's first pool: 0.33-0.44 ms a pass against 0.12-0.21), while three
    taps over two phases read every column 1.5 times in 3 passes each; the copies cost about one such pass.
    """
    if w.stride == 1 or w.taps <= w.stride:
        return _col_taps(x, w)
    phases = []
    for phase in range(w.stride):
        columns = x[:, :, phase::w.stride]
        phases.append(scratch(f"pool.phase{phase}", columns.shape, x.dtype))
        scratch.xp.copyto(phases[-1], columns)
    return [phases[tap % w.stride][:, :, tap // w.stride:tap // w.stride + w.out] for tap in range(w.taps)]


def _covered(view, full):
    """The leading block of `full` that a tap's view covers: all of it, or the outputs before the last few, whose
    tap lies in trailing padding (x read in place: _in_place_or_padded)."""
    return full if view.shape == full.shape else full[tuple(map(slice, view.shape))]


def _fold_into(xp, fn, views, out):
    """The binary ufunc fn folded over the views (the first covering out, later ones maybe less), into out."""
    if len(views) == 1 or views[1].shape != out.shape:
        xp.copyto(out, views[0])
        later = views[1:]
    else:
        fn(views[0], views[1], out=out)
        later = views[2:]
    for view in later:
        covered = _covered(view, out)
        fn(covered, view, out=covered)
    return out


def _separable_reduce(scratch: Scratch, fn, x, geo: Geometry, out):
    """fn folded over every window of x (a canvas, or read in place: _in_place_or_padded), rows first, into out."""
    rows = scratch("pool.rows", (x.shape[0], geo.h.out, x.shape[2], x.shape[3]), out.dtype)
    return _fold_into(scratch.xp, fn, _col_taps(_fold_into(scratch.xp, fn, _row_taps(x, geo.h), rows), geo.w), out)


def _first_max(scratch: Scratch, views, best, name: str):
    """The elementwise maximum of views, written into best, and which view first reaches it: an int8 scratch
    array named `name` (None for a single view). Strict > comparisons keep the first of equal maxima."""
    xp = scratch.xp
    if len(views) == 1:
        xp.copyto(best, views[0])
        return None
    index = scratch(name, best.shape, np.int8)
    if views[1].shape == best.shape:
        xp.greater(views[1], views[0], out=index.view(np.bool_))  # 1 where the second view is the first maximum
        xp.maximum(views[0], views[1], out=best)
        start = 2
    else:  # the second tap covers fewer outputs (_covered)
        xp.copyto(best, views[0])
        index.fill(0)
        start = 1
    if len(views) > start:
        later, picked = scratch("pool.later", best.shape, np.bool_), scratch("pool.later_index", best.shape, np.int8)
    for i, view in enumerate(views[start:], start=start):
        best_part, later_part, picked_part, index_part = (_covered(view, a) for a in (best, later, picked, index))
        xp.greater(view, best_part, out=later_part)
        xp.maximum(best_part, view, out=best_part)
        # Indices only grow, so the latest view that was strictly greater is max(index, i * later). The mask is
        # read as int8: a bool operand is cast in buffers, and the product took 1.55x the time.
        xp.multiply(later_part.view(np.int8), np.int8(i), out=picked_part)
        xp.maximum(index_part, picked_part, out=index_part)
    return index


def _tap_masks(xp, index, taps: int) -> list:
    """Per tap, where `index` picked it: bool arrays (None for a single tap)."""
    if index is None:
        return [None]
    if taps == 2:
        return [xp.logical_not(index), index.astype(bool)]
    return [xp.equal(index, t) for t in range(taps)]


def _first_maxima(scratch: Scratch, canvas, geo: Geometry, out):
    """Each window's maximum, written into out, and where the first one (row-major, as TF) is: the column tap per
    canvas row and output column, and the row tap per output (int8 scratch arrays, None for a single tap).

    Columns go first, over every canvas row that a window reads, so that within the first row holding
    the maximum the first column wins.
    """
    rows = min(canvas.shape[1], geo.h.canvas)  # fewer where x is read in place (_in_place_or_padded)
    columns = scratch("pool.columns", (canvas.shape[0], rows, geo.w.out, canvas.shape[3]), out.dtype)
    column_index = _first_max(scratch, _phase_col_taps(scratch, canvas[:, :rows], geo.w), columns, "pool.column_index")
    return column_index, _first_max(scratch, _row_taps(columns, geo.h), out, "pool.row_index")


def _first_max_masks(scratch: Scratch, canvas, geo: Geometry):
    """Where each window's first maximum is: bool masks per column tap, then per row tap (see _first_maxima)."""
    maxima = scratch("pool.maxima", _pooled_shape(canvas.shape, geo), canvas.dtype)
    column_index, row_index = _first_maxima(scratch, canvas, geo, maxima)
    return _tap_masks(scratch.xp, column_index, geo.w.taps), _tap_masks(scratch.xp, row_index, geo.h.taps)


def _column_at_first_maximum(scratch: Scratch, column_index, row_index, geo: Geometry, shape: tuple):
    """The column tap of each window's first maximum, in the row that holds it: the column index at that row
    (int8 scratch, None for windows one column wide)."""
    if column_index is None:
        return None
    xp, taps = scratch.xp, _row_taps(column_index, geo.h)
    column = scratch("pool.column_at", shape, np.int8)
    xp.copyto(column, taps[0])
    if row_index is not None:
        chosen, step = scratch("pool.chosen", shape, np.bool_), scratch("pool.column_step", shape, np.int8)
        for row, view in enumerate(taps[1:], start=1):
            chosen_part, step_part, first_row, column_part = (_covered(view, array)
                                                              for array in (chosen, step, taps[0], column))
            xp.equal(_covered(view, row_index), np.int8(row), out=chosen_part)
            xp.subtract(view, first_row, out=step_part)
            xp.multiply(step_part, chosen_part.view(np.int8), out=step_part)
            column_part += step_part
    return column


def _max_pool_with_first_maxima(scratch: Scratch, x, geo: Geometry, fill, out, base, first) -> None:
    """MaxPool of x written into out and, into first, where each window's first maximum is as a flat index into
    the input: base (the flat index of each window's first tap, which padding makes negative) plus its offset.

    For inputs above `fill` or windows inside them (padding never wins), as the gradient's masks choose it. The
    offsets are summed in the narrowest integers that hold them: over int16, GoogLeNet's first pool took 0.52x the
    time of the same passes over int64 (0.131 against 0.252 ms an image), its 28x28x480 one 0.53x.
    """
    xp, (_, _, width, channels) = scratch.xp, x.shape
    column_index, row_index = _first_maxima(scratch, _in_place_or_padded(scratch, x, geo, fill), geo, out)
    column = _column_at_first_maximum(scratch, column_index, row_index, geo, out.shape)
    largest = (geo.h.taps - 1) * width * channels + (geo.w.taps - 1) * channels
    integers = np.int16 if largest < 1 << 15 else np.int32 if largest < 1 << 31 else np.intp
    offset = None
    if row_index is not None:
        offset = xp.multiply(row_index, integers(width * channels), dtype=integers,
                             out=scratch("pool.offset", out.shape, integers))
    if column is not None:
        step = xp.multiply(column, integers(channels), dtype=integers,
                           out=scratch("pool.column_offset", out.shape, integers))
        offset = step if offset is None else xp.add(offset, step, out=offset)
    if offset is None:
        xp.copyto(first, base)
    else:
        xp.add(base, offset, out=first)


# A float32 widened to float64 leaves 29 low mantissa bits zero. A code in the low 28 of them, below half a
# float32 ulp, orders equal values without changing what they round back to.
_CODE_MASK = (1 << 28) - 1


@functools.lru_cache(maxsize=16)
def _position_codes(image_shape: tuple):
    """Per element of an image (H, W, C), _CODE_MASK minus its flat index: earlier elements get larger codes.
    Read-only, made once per shape."""
    codes = _CODE_MASK - np.arange(math.prod(image_shape), dtype=np.int64).reshape(image_shape)
    codes.flags.writeable = False
    return codes


def _packs(x, geo: Geometry, lowest=None) -> bool:
    """Whether MaxPool finds its workspace by packed maxima (_max_pool_packed): windows at every position (strides
    of one, as an inception module's pool) over float32 inputs with no value below +0 (a ReLU's). `lowest` is
    x.min() where the caller has taken it already.

    Measured against the search over taps for GoogLeNet's inception pools, two threads: 0.73-0.84x the time. At
    stride two, where the output is a quarter of the input, 0.97-1.09x.
    """
    return (x.dtype == np.float32 and geo.h.stride == geo.w.stride == 1 and x[0].size <= _CODE_MASK
            and bool((x.min() if lowest is None else lowest) >= 0))


def _max_pool_packed(scratch: Scratch, x, geo: Geometry, out, first, first_index: int) -> bool:
    """MaxPool of x (no value below +0) into out and, into first, the flat index of each window's first maximum,
    counted from first_index: False, both left partly written, where x holds an infinity.

    Each element is widened to float64 with its position's code in the spare mantissa bits, so that the maximum of
    a window gives both its value and, among equal values, the first of them: float64 maxima over the taps
    instead of a search over float32 ones. Padding holds -inf and never wins.
    """
    xp, (batch, _, _, channels) = scratch.xp, x.shape
    canvas = scratch("pool.packed", (batch, geo.h.canvas, geo.w.canvas, channels), np.float64)
    (r0, r1), (c0, c1) = placed(geo.h, geo.h.canvas), placed(geo.w, geo.w.canvas)
    canvas[:, :r0] = canvas[:, r1:] = canvas[:, r0:r1, :c0] = canvas[:, r0:r1, c1:] = -np.inf
    inside = canvas[:, r0:r1, c0:c1]
    xp.add(x[:, :r1 - r0, :c1 - c0], np.float32(0), out=inside)  # -0 becomes +0: equal maxima, told apart by place
    bits = inside.view(np.int64)
    xp.bitwise_or(bits, _position_codes(x.shape[1:])[:r1 - r0, :c1 - c0], out=bits)
    packed = _separable_reduce(scratch, xp.maximum, canvas, geo, scratch("pool.packed_max", out.shape, np.float64))
    with np.errstate(invalid="ignore"):  # an infinity with a code is NaN, which the maxima carry to the output
        xp.copyto(out, packed, casting="same_kind")  # rounds the code away
    if not out.max() < np.inf:
        return False
    xp.bitwise_and(packed.view(np.int64), _CODE_MASK, out=first)
    starts = np.arange(batch, dtype=np.intp).reshape(-1, 1, 1, 1) * math.prod(x.shape[1:])
    xp.subtract(starts + (first_index + _CODE_MASK), first, out=first)
    return True


def _tiled_max_pool_grad_by_upsampling(scratch: Scratch, x, y, dy, geo: Geometry, dx, relu_grad: bool) -> bool:
    """Each window's dy into dx where x equals the window's maximum y, over tiling windows, when every window has
    exactly one such tap (dx zero elsewhere, rows past the windows included); with relu_grad, only windows whose
    maximum is above zero (ReluGrad of the pool's input, which is y there). False, leaving dx to the per-tap
    comparison, where a window has ties, a NaN, or dy is not finite.

    y and dy are repeated along the columns to one window row, which broadcasts over the window's rows, so that the
    comparison and the product run over contiguous rows: a tap's strided view of x is contiguous over one pixel's
    channels only, and NumPy's loops over such short runs cost several times those over long ones. Repeated up to
    x's size instead (a pass more each), the small CNN's pool gradients took 1.05x and 1.13x the time, its training
    step 1.02x, OxfordNet's 1.016x (alternating in one process). Whether every window had one tap is a count: each
    window that counts has at least one (its maximum is one of its taps), so the matches equal the windows only if
    each has one.
    """
    xp = scratch.xp
    if not xp.isfinite(dy).all():  # inf times a mask of zero is NaN
        return False
    (batch, _, _, channels), (h, w) = x.shape, (geo.h, geo.w)
    rows, cols = h.out * h.taps, w.out * w.taps
    counted = scratch("pool.counted", y.shape, np.bool_)
    maxima = y
    if relu_grad:  # windows whose maximum is not above zero get no tap: their maximum lowered below it
        xp.less_equal(y, 0, out=counted)
        maxima = xp.subtract(y, counted, out=scratch("pool.lowered", y.shape, y.dtype))
        xp.logical_not(counted, out=counted)
    else:
        xp.equal(y, y, out=counted)  # a NaN maximum is not counted: it leaves the count short
    windows = int(xp.count_nonzero(counted))
    if not relu_grad and windows < counted.size:
        return False
    up = scratch("pool.upsampled", (batch, h.out, 1, cols * channels), y.dtype)
    columns = up.reshape(batch, h.out, w.out, w.taps, channels)
    xp.copyto(columns, maxima.reshape(batch, h.out, w.out, 1, channels))
    equal = scratch("pool.equal", (batch, h.out, h.taps, cols * channels), np.bool_)
    xp.equal(x[:, :rows, :cols].reshape(equal.shape), up, out=equal)
    if int(xp.count_nonzero(equal)) != windows:
        return False
    xp.copyto(columns, dy.reshape(batch, h.out, w.out, 1, channels))
    xp.multiply(up, equal, out=dx[:, :rows, :cols].reshape(equal.shape))
    dx[:, rows:] = 0
    dx[:, :rows, cols:] = 0
    return True


def _tiled_max_pool_grad_by_equality(scratch: Scratch, x, y, dy, geo: Geometry, dx, relu_grad: bool) -> bool:
    """Each window's dy into dx at the first tap (row-major) equal to the window's maximum y, over tiling windows
    (dx zero elsewhere, rows past the windows included); with relu_grad, only where that maximum is above zero
    (ReluGrad of the pool's input, which is y there). False where some window's dy found no tap (y not the
    maximum, NaN, or a non-finite dy): that part is then for the search.

    Per tap, one comparison gives where it equals y, bit masks keep the first tap that does (equal to y where no
    earlier tap was), and one product places dy there. Against keeping each window's tap in the forward pool (a
    byte per window), the same training step time (small CNN 0.983-1.005x, OxfordNet 0.993-1.007x, alternating
    in one process) with no workspace and a forward pool that does only the maxima: x and dx come from memory.
    """
    xp, taps = scratch.xp, geo.h.taps * geo.w.taps
    rows, cols = geo.h.out * geo.h.taps, geo.w.out * geo.w.taps
    placed, first = scratch("pool.placed", dy.shape, np.bool_), scratch("pool.first_tap", dy.shape, np.bool_)
    masked = scratch("pool.masked_dy", dy.shape, dx.dtype)
    if relu_grad:  # NaN maxima keep their dy, so that they go to the search
        xp.logical_not(xp.less_equal(y, 0, out=placed), out=placed)
        dy = xp.multiply(dy, placed, out=masked)
    with np.errstate(invalid="ignore"):  # a non-finite dy times a mask of zero is NaN
        for tap in range(taps):
            row, column = divmod(tap, geo.w.taps)
            view = dx[:, row:rows:geo.h.taps, column:cols:geo.w.taps]
            xp.equal(x[:, row:rows:geo.h.taps, column:cols:geo.w.taps], y, out=placed if tap == 0 else first)
            if tap:  # equal to y, and no earlier tap was: the first maximum
                xp.greater(first, placed, out=first)
                xp.logical_or(placed, first, out=placed)
            xp.multiply(dy, placed if tap == 0 else first, out=view)
        # dy that found no tap, and a non-finite dy anywhere (it left NaN beside it), go to the search.
        unplaced = xp.multiply(dy, xp.logical_not(placed, out=placed), out=masked)
    dx[:, rows:] = 0
    dx[:, :rows, cols:] = 0
    return not unplaced.any()


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


def _inside(geo: Geometry) -> bool:
    """Whether every window lies inside the input (no padding)."""
    return all(a.pad == 0 and a.canvas <= a.size for a in (geo.h, geo.w))


def _above(x, fill) -> bool:
    """Whether every element of x is above `fill` (no NaN either): one reduction, NaN propagating through it."""
    return bool(x.min() > fill)


def _padded(scratch: Scratch, x, geo: Geometry, fill):
    """x itself where every window lies inside it, else x on a (scratch) canvas padded with `fill`."""
    if _inside(geo):
        return x
    return on_canvas(scratch, x, geo, geo.h.canvas, geo.w.canvas, fill)


def _in_place_or_padded(scratch: Scratch, x, geo: Geometry, fill):
    """x itself where padding comes only after it (SAME at stride 2 over an even size), else _padded.

    Read in place, a tap's view stops short of the padding: it covers the leading outputs only (_covered), as
    padding that never wins. For the reductions over taps that handle such views (_fold_into, _first_max): the
    canvas copy took 0.5 of 3.3 ms at GoogLeNet's first pool (one thread), and with the taps read from phase
    planes instead (_phase_col_taps), a pool and its workspace take 0.82-0.99x the time at GoogLeNet's four
    stride-2 pools (one thread, inputs from memory), its training step 0.984-0.990x (alternating in one process).
    """
    if all(a.pad == 0 and (a.out - 1) * a.stride < a.size for a in (geo.h, geo.w)):
        return x
    return _padded(scratch, x, geo, fill)


def _pool_windows(scratch: Scratch, x, geo: Geometry, fill):
    """Every window of x as a view (B, Ho, Wo, C, kh, kw) of a canvas padded with `fill`."""
    canvas = on_canvas(scratch, x, geo, max(geo.h.canvas, 1), max(geo.w.canvas, 1), fill)
    return window_view(scratch.xp, canvas, geo, taps_last=True)


def _lowest(np_dtype):
    np_dtype = np.dtype(np_dtype)
    return -np.inf if np_dtype.kind == "f" else np.iinfo(np_dtype).min


def _window_counts(xp, geo: Geometry, dtype):
    """How many input elements (not padding) each output window covers, as (Ho, Wo, 1)."""
    def per_axis(a: Axis):
        start = a.output_positions() - a.pad
        return np.minimum(start + a.taps, a.size) - np.maximum(start, 0)

    return xp.asarray(np.outer(per_axis(geo.h), per_axis(geo.w))[:, :, None], dtype=dtype)


# As oneDNN's pools do, the forward pool can keep where each window's first maximum is (its workspace) for the
# gradient, which then scatters dy there instead of finding the maxima again (tfnb/runtime/fusion.py).
@kernel("MaxPool", parallel=True, fresh_output=True, streams=True,
        workspaces=(Workspace("MaxPoolGrad", "with_workspace", "from_workspace", reads=1),))
def max_pool(node):
    xp, attrs, fill, scratch = node.xp, node.attrs, _lowest(node.output_dtypes[0]), Scratch(node.xp)

    def maxima_into(images, geo: Geometry, out) -> None:
        _separable_reduce(scratch, xp.maximum, _in_place_or_padded(scratch, images, geo, fill), geo, out)

    def run(x):
        geo = pool_geometry_or_fail(attrs, x.shape)
        if 0 in _pooled_shape(x.shape, geo):
            return xp.zeros(_pooled_shape(x.shape, geo), dtype=x.dtype)
        out = scratch.output(_pooled_shape(x.shape, geo), x.dtype)
        _in_cache_sized_parts(scratch, lambda part: maxima_into(x[part], geo, out[part]), x)
        return out

    def with_workspace(x):
        """(MaxPool of x, where each window's first maximum is): MaxPoolGrad's workspace, a flat index into x."""
        geo = pool_geometry_or_fail(attrs, x.shape)
        shape = _pooled_shape(x.shape, geo)
        if 0 in shape:
            return xp.zeros(shape, dtype=x.dtype), xp.zeros(shape, dtype=np.intp)
        out, first = scratch.output(shape, x.dtype), scratch.output(shape, np.intp)
        base = _window_bases(x.shape, geo)

        def part_of(part):
            """The part's pool and workspace, each part checking its own images in its own thread."""
            images, start = x[part], part.start * x[0].size
            lowest = None if _inside(geo) else images.min()  # one reduction, NaN propagating through it
            if lowest is not None and not lowest > fill:  # a window might pick padding: the exact indices
                maxima_into(images, geo, out[part])
                xp.add(_first_max_flat(scratch, images, geo, fill), start, out=first[part])
            elif not (_packs(images, geo, lowest)
                      and _max_pool_packed(scratch, images, geo, out[part], first[part], start)):
                _max_pool_with_first_maxima(scratch, images, geo, fill, out[part], base[part], first[part])

        _in_cache_sized_parts(scratch, part_of, x)
        return out, first

    # A flat-index scatter is NumPy's ufunc.at. Windows that tile the input (ksize == strides) keep no workspace:
    # their gradient finds each window's first maximum as the first tap equal to the pool's output.
    if xp is np and attrs["ksize"][1:3] != attrs["strides"][1:3]:
        run.with_workspace = with_workspace
    return run


@functools.lru_cache(maxsize=16)
def _window_bases(shape: tuple, geo: Geometry):
    """Per output of a pool over an input of `shape`, the flat index of its window's first tap (padding: < 0);
    read-only, made once per shape and geometry."""
    rows = (geo.h.output_positions() - geo.h.pad)[:, None, None]
    columns = (geo.w.output_positions() - geo.w.pad)[None, :, None]
    bases = _flat_indices(np, shape, rows, columns).astype(np.intp)
    bases.flags.writeable = False
    return bases


@kernel("AvgPool", parallel=True, fresh_output=True, streams=True)
def avg_pool(node):
    xp, attrs, out_dtype, scratch = node.xp, node.attrs, node.output_dtypes[0], Scratch(node.xp)
    compute = compute_dtype(out_dtype)

    def run(x):
        geo = pool_geometry_or_fail(attrs, x.shape)
        if 0 in _pooled_shape(x.shape, geo):
            return xp.zeros(_pooled_shape(x.shape, geo), dtype=out_dtype)
        if _tiling(geo):
            sums = xp.empty(_pooled_shape(x.shape, geo), dtype=compute)
            x = x.astype(compute, copy=False)
            _in_cache_sized_parts(scratch, lambda part: _separable_reduce(scratch, xp.add, x[part], geo, sums[part]),
                                  x)
            return xp.multiply(sums, compute.type(1 / (geo.h.taps * geo.w.taps))).astype(out_dtype, copy=False)
        sums = _pool_windows(scratch, x, geo, 0).sum(axis=(4, 5), dtype=compute)
        return (sums / _window_counts(xp, geo, compute)).astype(out_dtype, copy=False)

    return run


def _first_max_flat(scratch: Scratch, x, geo: Geometry, fill):
    """For every output window, the flat index into x of its first maximum (padding never wins)."""
    xp, windows = scratch.xp, _pool_windows(scratch, x, geo, fill)
    taps = windows.reshape(windows.shape[:4] + (-1,)).argmax(axis=4)
    _, height, width, _ = x.shape
    # Only a window of lowest values can pick padding; clipping then lands on its first real element, as TF.
    row = xp.clip(xp.asarray(geo.h.output_positions())[:, None, None] + taps // geo.w.taps - geo.h.pad, 0, height - 1)
    col = xp.clip(xp.asarray(geo.w.output_positions())[None, :, None] + taps % geo.w.taps - geo.w.pad, 0, width - 1)
    return _flat_indices(xp, x.shape, row, col)


def _flat_indices(xp, shape: tuple, rows, columns):
    """The flat indices into an NHWC array of `shape` of the elements at (rows, columns) of every image and
    channel: rows and columns broadcast against (batch, out rows, out columns, channels)."""
    batch, height, width, channels = shape
    images = xp.arange(batch).reshape(-1, 1, 1, 1) * height
    return ((images + rows) * width + columns) * channels + xp.arange(channels)


def _tiled_max_pool_grad(scratch: Scratch, x, dy, geo: Geometry, dx) -> None:
    """Each window's dy into dx at the window's first maximum (dx zero elsewhere, rows past the windows included)."""
    xp = scratch.xp
    column_masks, row_masks = _first_max_masks(scratch, x, geo)
    rows = scratch("pool.grad_rows", (x.shape[0], geo.h.out * geo.h.taps, geo.w.out, x.shape[3]), dx.dtype)
    for view, mask in zip(_row_taps(rows, geo.h), row_masks):
        _select(xp, dy, mask, view)
    for view, mask in zip(_col_taps(dx, geo.w), column_masks):
        _select(xp, rows, mask, view[:, :rows.shape[1]])
    dx[:, rows.shape[1]:] = 0
    dx[:, :rows.shape[1], geo.w.out * geo.w.taps:] = 0


def _overlapping_max_pool_grad(scratch: Scratch, x, dy, geo: Geometry, fill, dx) -> None:
    """Each window's dy added at the window's first maximum, for windows that overlap or reach into padding.

    As for tiling windows, in two stages, each tap a strided view: rows first, into a gradient per canvas
    row and output column, then columns, into a gradient canvas; windows that overlap add up.
    """
    xp, (batch, _, _, channels) = scratch.xp, x.shape
    column_masks, row_masks = _first_max_masks(scratch, _padded(scratch, x, geo, fill), geo)
    rows = scratch("pool.grad_rows", (batch, geo.h.canvas, geo.w.out, channels), dx.dtype)
    rows.fill(0)
    _scatter_taps(xp, dy, row_masks, _row_taps(rows, geo.h), scratch("pool.picked", dy.shape, dx.dtype))
    canvas = scratch("pool.grad_canvas", (batch, geo.h.canvas, geo.w.canvas, channels), dx.dtype)
    canvas.fill(0)
    _scatter_taps(xp, rows, column_masks, _col_taps(canvas, geo.w), scratch("pool.picked_rows", rows.shape, dx.dtype))
    (r0, r1), (c0, c1) = placed(geo.h, geo.h.canvas), placed(geo.w, geo.w.canvas)
    dx[:, :r1 - r0, :c1 - c0] = canvas[:, r0:r1, c0:c1]
    dx[:, r1 - r0:] = 0
    dx[:, :r1 - r0, c1 - c0:] = 0


def _scatter_taps(xp, values, masks: list, views: list, picked) -> None:
    """Per tap, `values` where its mask is set added into its view; `picked` holds each tap's selection."""
    for view, mask in zip(views, masks):
        xp.add(view, _select(xp, values, mask, picked), out=view)


def _tiled_max_pool_grad_grad(scratch: Scratch, x, ddx, geo: Geometry, ddy) -> None:
    """ddx read at each window's first maximum, into ddy."""
    xp = scratch.xp
    column_masks, row_masks = _first_max_masks(scratch, x, geo)
    columns = _col_taps(ddx[:, :geo.h.out * geo.h.taps], geo.w)
    picked = [_select(xp, view, mask, xp.empty(view.shape, ddy.dtype)) for view, mask in zip(columns, column_masks)]
    rows = _fold_into(xp, xp.add, picked, picked[0])
    picked = [_select(xp, view, mask, xp.empty(view.shape, ddy.dtype))
              for view, mask in zip(_row_taps(rows, geo.h), row_masks)]
    _fold_into(xp, xp.add, picked, ddy)


@kernel("MaxPoolGrad", parallel=True, fresh_output=True, streams=True,
        # ReluGrad of the pool's own input (a ReLU before the pool): its features are the pool's input 0.
        epilogues=(Epilogue(("ReluGrad",), "with_relu_grad", reused=(((0, 1), 0),)),))
def max_pool_grad(node):
    xp, attrs, out_dtype, scratch = node.xp, node.attrs, node.output_dtypes[0], Scratch(node.xp)
    fill = _lowest(out_dtype)

    def run(x, y, dy, relu_grad: bool = False):
        geo = pool_geometry_or_fail(attrs, x.shape)
        if dy.shape != _pooled_shape(x.shape, geo):
            fail(f"MaxPoolGrad: grad of shape {list(dy.shape)} does not match orig_input {list(x.shape)}")
        if x.size == 0 or dy.size == 0:
            return xp.zeros(x.shape, dtype=out_dtype)
        # A window reaching into padding picks it only on a tie with the fill value (or beside a NaN): inputs
        # where that could happen take the exact path by flat indices.
        if _inside(geo) or _above(x, fill):
            dx = scratch.output(x.shape, out_dtype)
            by_equality = _tiling(geo) and y.shape == dy.shape

            def part_of(part):
                if by_equality and any(way(scratch, x[part], y[part], dy[part], geo, dx[part], relu_grad) for way in (
                        _tiled_max_pool_grad_by_upsampling, _tiled_max_pool_grad_by_equality)):
                    return
                if _tiling(geo):
                    _tiled_max_pool_grad(scratch, x[part], dy[part], geo, dx[part])
                else:
                    _overlapping_max_pool_grad(scratch, x[part], dy[part], geo, fill, dx[part])
                if relu_grad:  # ReluGrad's product, while the part is in the caches
                    xp.multiply(dx[part], x[part] > zero, out=dx[part])

            _in_cache_sized_parts(scratch, part_of, x)
            return dx
        flat = _first_max_flat(scratch, x, geo, fill).reshape(-1)
        dx = xp.bincount(flat, weights=dy.reshape(-1), minlength=x.size).astype(out_dtype, copy=False).reshape(x.shape)
        return xp.multiply(dx, x > zero, out=dx) if relu_grad else dx

    def from_workspace(x, y, dy, first, relu_grad: bool = False):
        """MaxPoolGrad given where MaxPool found each window's first maximum (with_workspace): dy scattered there.

        With relu_grad, ReluGrad of the pool's input is taken where each window's dy goes: the input there is the
        window's maximum, so dy is masked by y > 0 at the pooled size instead of dx by x > 0 at the input's (two
        passes over x saved; a NaN maximum, which may not be the chosen element, takes the passes over x).
        """
        geo = pool_geometry_or_fail(attrs, x.shape)
        if dy.shape != _pooled_shape(x.shape, geo) or first.shape != dy.shape or y.shape != dy.shape:
            fail(f"MaxPoolGrad: grad of shape {list(dy.shape)} does not match orig_input {list(x.shape)}")
        if x.size == 0 or dy.size == 0:
            return xp.zeros(x.shape, dtype=out_dtype)
        dx = scratch.output(x.shape, out_dtype)
        flat = dx.reshape(-1)
        masks_dy = relu_grad and not np.isnan(y.max())

        def part_of(part):
            dx[part] = 0
            values = dy[part]
            if masks_dy:
                values = xp.multiply(values, y[part] > zero, out=scratch("pool.masked_dy", values.shape, values.dtype))
            np.add.at(flat, first[part].reshape(-1), values.reshape(-1))
            if relu_grad and not masks_dy:
                xp.multiply(dx[part], x[part] > zero, out=dx[part])

        _in_cache_sized_parts(scratch, part_of, x)
        return dx

    zero = np.dtype(out_dtype).type(0)
    # For tfnb/runtime/fusion.py: ReluGrad(MaxPoolGrad(x, y, dy), x), with ReluGrad's arithmetic.
    run.with_relu_grad = lambda x, y, dy: run(x, y, dy, True)
    if xp is np:  # MaxPool's workspace, as with_workspace makes it on NumPy
        from_workspace.with_relu_grad = lambda x, y, dy, first: from_workspace(x, y, dy, first, True)
        run.from_workspace = from_workspace
    return run


@kernel("MaxPoolGradGrad", parallel=True, fresh_output=True)
def max_pool_grad_grad(node):
    xp, attrs, out_dtype, scratch = node.xp, node.attrs, node.output_dtypes[0], Scratch(node.xp)
    fill = _lowest(out_dtype)

    def run(x, y, ddx):
        geo = pool_geometry_or_fail(attrs, x.shape)
        if ddx.shape != x.shape:
            fail(f"MaxPoolGradGrad: grad of shape {list(ddx.shape)} does not match orig_input {list(x.shape)}")
        ddy = xp.empty(_pooled_shape(x.shape, geo), dtype=out_dtype)
        if ddy.size == 0:
            return ddy
        if _tiling(geo):
            _in_cache_sized_parts(scratch, lambda part: _tiled_max_pool_grad_grad(
                scratch, x[part], ddx[part], geo, ddy[part]), x)
            return ddy
        return ddx.reshape(-1)[_first_max_flat(scratch, x, geo, fill)]

    return run


@kernel("AvgPoolGrad", parallel=True, fresh_output=True, streams=True)
def avg_pool_grad(node):
    xp, attrs, out_dtype = node.xp, node.attrs, node.output_dtypes[0]
    compute = compute_dtype(out_dtype)

    def run(input_shape, dy):
        shape = size_vector(input_shape)
        geo = pool_geometry_or_fail(attrs, shape)
        if dy.shape != _pooled_shape(shape, geo):
            fail(f"AvgPoolGrad: grad of shape {list(dy.shape)} does not match orig_input_shape {list(shape)}")
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
    windows = window_view(xp, canvas, geo, taps_last=True)
    # Windows overlap, so a vectorized += would drop repeats: add one tap at a time (kh*kw small passes).
    for a in range(geo.h.taps):
        for b in range(geo.w.taps):
            windows[..., a, b] += share
    (r0, r1), (c0, c1) = placed(geo.h, rows), placed(geo.w, cols)
    dx[:, :r1 - r0, :c1 - c0] = canvas[:, r0:r1, c0:c1]
    return dx
