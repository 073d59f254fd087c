"""The "rows" algorithm (row taps): for few input channels, at stride 1 in height.

For few input channels the im2col matrix is narrow (kh*kw*C columns) and its copy costs as much as
its product. Copying only the kw*C columns of each window row, for every canvas row, makes a matrix
kh times smaller; window row kh of every output is then a contiguous run of its rows, so the
convolution is kh products over views of it, accumulated.
"""

from __future__ import annotations

from tfnb.framework.common_shapes import Geometry
from tfnb.kernels.conv.gemm import filter_matrix
from tfnb.kernels.conv.scratch import Scratch, each_chunk, on_canvas


def rows_claims(geo: Geometry, channels: int, filters: int) -> bool:
    """Whether row taps apply: stride 1 in height, windows more than one column wide."""
    # Output rows one canvas row apart make each tap row's windows one view; one column per window row
    # would make the row-columns a plain copy of the input, which im2col's products read in place.
    return geo.h.stride == 1 and geo.w.taps > 1


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
    canvas = on_canvas(scratch, x, geo, geo.h.canvas, geo.w.canvas)
    matrices = filter_matrix(xp, w).reshape(geo.h.taps, -1, w.shape[3])
    out = scratch.output((x.shape[0], geo.h.out, geo.w.out, w.shape[3]), x.dtype)

    def chunk(images):
        columns = _row_columns(scratch, canvas[images], geo)
        flat = out[images].reshape(columns.shape[0], -1, w.shape[3])
        xp.matmul(_tap_rows(columns, geo, 0), matrices[0], out=flat)
        term = scratch("row.term", flat.shape, x.dtype)
        for tap in range(1, geo.h.taps):
            xp.add(flat, xp.matmul(_tap_rows(columns, geo, tap), matrices[tap], out=term), out=flat)
        if epilogue is not None:
            epilogue(out[images])

    each_chunk(chunk, x.shape[0], _row_columns_bytes(geo, x.shape[3], x.itemsize), scratch.chunk_bytes(),
               work=out.size * geo.h.taps * geo.w.taps * x.shape[3])  # multiply-adds
    return out


def rows_backprop_filter(scratch: Scratch, x, dy, geo: Geometry):
    """Conv2DBackpropFilter as, per window row, the row-columns of x transposed times dy, summed over images."""
    xp = scratch.xp
    canvas = on_canvas(scratch, x, geo, geo.h.canvas, geo.w.canvas)

    def chunk(images):
        """This chunk's part of the sum (a small array: one filter gradient)."""
        columns = _row_columns(scratch, canvas[images], geo)
        gradient = dy[images].reshape(columns.shape[0], -1, dy.shape[3])
        return xp.stack([xp.matmul(_tap_rows(columns, geo, tap).transpose(0, 2, 1), gradient).sum(0)
                         for tap in range(geo.h.taps)])

    # Summed in chunk order: the same result whichever thread took which chunk.
    total, *others = each_chunk(chunk, x.shape[0], _row_columns_bytes(geo, x.shape[3], x.itemsize),
                                scratch.chunk_bytes(), work=dy.size * geo.h.taps * geo.w.taps * x.shape[3])
    for other in others:
        xp.add(total, other, out=total)
    return total.reshape(geo.h.taps, geo.w.taps, x.shape[3], dy.shape[3])

