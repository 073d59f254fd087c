"""The "banded" algorithm: im2col whose rows each cover a group of adjacent outputs, for few input channels.

A row of the column matrix holds the canvas window that G adjacent outputs of an output row read together: kh
rows of `span = (G - 1) * stride + (kw - 1) * dilation + 1` columns. The filter becomes a banded matrix of
(kh * span * C) x (G * F), whose block g holds the filter's taps at the columns output g reads, zeros elsewhere.
The products then do span / kw times im2col's multiply-adds, but their column matrix is about G * kw / span times
smaller, copied in runs of span * C elements instead of kw * C, and they are G times wider, which OpenBLAS runs
faster: with 3 input channels and 32 filters (the small CNN's first layer, G = 4), 16384 x 120 @ 120 x 128 ran at
75 GFLOP/s where im2col's 65536 x 75 @ 75 x 32 ran at 50 (two threads), and the CNN benchmark's training step took
0.96-0.97x the time. At the first layers of OxfordNet and GoogLeNet (G = 2, batch 4) it took 0.9-1.4x gemm's
time, and timing on first sight picks between them. The band is im2col's own view with a wider window at G times
the stride, so the products are the "gemm" algorithm's.
"""

from __future__ import annotations

from tfnb.framework.common_shapes import Axis, Geometry
from tfnb.kernels.conv.gemm import gemm_backprop_filter, gemm_forward
from tfnb.kernels.conv.scratch import Scratch

# Outputs of a group times filters: the products' width, at most.
_GROUP_COLUMNS = 128
# Input channels at most: with more, im2col's runs are long enough, and the band's extra multiply-adds cost more.
_FEW_CHANNELS = 4


def group_size(w: Axis, filters: int) -> int:
    """G: the most adjacent outputs along the width, dividing the output width, whose products have at most
    _GROUP_COLUMNS columns (1 where no group pays)."""
    return max(g for g in range(1, max(_GROUP_COLUMNS // max(filters, 1), 1) + 1) if w.out % g == 0)


def banded_claims(geo: Geometry, channels: int, filters: int) -> bool:
    """Whether the band applies: few input channels, and a group of more than one output."""
    return channels <= _FEW_CHANNELS and group_size(geo.w, filters) > 1


def _grouped(geo: Geometry, group: int) -> Geometry:
    """The geometry whose windows are the groups': `group` outputs' columns each, at `group` times the stride."""
    w = geo.w
    span = (group - 1) * w.stride + (w.taps - 1) * w.dilation + 1
    return Geometry(geo.h, Axis(w.size, span, group * w.stride, 1, w.pad, w.out // group))


def _tap_columns(w: Axis, g: int) -> slice:
    """The columns of a group's window that output g of the group reads, one per filter tap."""
    return slice(g * w.stride, g * w.stride + (w.taps - 1) * w.dilation + 1, w.dilation)


def _band(scratch: Scratch, w, geo: Geometry, grouped: Geometry):
    """The (kh, span, C, G * F) filter of the groups' windows: filter w at each output's columns, zeros elsewhere."""
    kh, _, channels, filters = w.shape
    group = geo.w.out // grouped.w.out
    band = scratch("band.filter", (kh, grouped.w.taps, channels, group, filters), w.dtype)
    band.fill(0)
    for g in range(group):
        band[:, _tap_columns(geo.w, g), :, g] = w
    return band.reshape(band.shape[:3] + (group * filters,))


def banded_forward(scratch: Scratch, x, w, geo: Geometry, epilogue=None):
    """Conv2D as im2col of output groups and one product with the band per chunk (then `epilogue` per chunk)."""
    filters = w.shape[3]
    grouped = _grouped(geo, group_size(geo.w, filters))
    rows_epilogue = None if epilogue is None else (lambda rows: epilogue(rows.reshape(-1, filters)))
    out = gemm_forward(scratch, x, _band(scratch, w, geo, grouped), grouped, rows_epilogue)
    return out.reshape(out.shape[:2] + (geo.w.out, filters))


def banded_backprop_filter(scratch: Scratch, x, dy, geo: Geometry):
    """Conv2DBackpropFilter as the band's gradient, im2col of output groups transposed times dy (each group's
    outputs one row), with each output's block folded back onto the filter's taps."""
    filters, group = dy.shape[3], group_size(geo.w, dy.shape[3])
    grouped = _grouped(geo, group)
    dy_rows = dy.reshape(dy.shape[0], dy.shape[1], grouped.w.out, group * filters)
    band = gemm_backprop_filter(scratch, x, dy_rows, grouped).reshape(
        geo.h.taps, grouped.w.taps, x.shape[3], group, filters)
    gradient = band[:, _tap_columns(geo.w, 0), :, 0].copy()
    for g in range(1, group):
        scratch.xp.add(gradient, band[:, _tap_columns(geo.w, g), :, g], out=gradient)
    return gradient
