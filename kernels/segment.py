"""Segment-sum kernels: rows of data added into the rows their segment ids name.

NumPy's `add.at` is the obvious kernel but slow (an unbuffered loop). Two faster ways, chosen by
size: `bincount` over (segment, column) pairs when the output is not much larger than the data,
else sort the rows by segment and add each run of equal ids with `add.reduceat`.
"""

from __future__ import annotations

import math

from tfnb.framework.errors import InvalidArgumentError
from tfnb.kernels.registry import kernel


def _fail(message: str):
    raise InvalidArgumentError(None, None, message)


def _by_bincount(xp, ids, rows, num_segments: int, dtype):
    """Float rows summed in float64 by bincount, one bin per (segment, column)."""
    width = rows.shape[1]
    bins = (ids.astype(xp.int64, copy=False)[:, None] * width + xp.arange(width)).reshape(-1)  # no int32 overflow
    totals = xp.bincount(bins, weights=rows.reshape(-1), minlength=num_segments * width)
    return totals.astype(dtype, copy=False).reshape(num_segments, width)


def _by_sorting(xp, ids, rows, num_segments: int, dtype):
    """Rows sorted by segment; each run of equal ids added up by reduceat."""
    order = xp.argsort(ids)
    sorted_ids = ids[order]
    starts = xp.flatnonzero(xp.concatenate([xp.ones(1, bool), sorted_ids[1:] != sorted_ids[:-1]]))
    out = xp.zeros((num_segments, rows.shape[1]), dtype)
    out[sorted_ids[starts]] = xp.add.reduceat(rows[order], starts, axis=0, dtype=dtype)
    return out


def _segment_rows(xp, data, segment_ids, num_segments: int, use_bincount: bool):
    """data's slices summed per segment id, as an array of shape [num_segments] + slice shape."""
    id_rank = segment_ids.ndim
    if data.shape[:id_rank] != segment_ids.shape:
        _fail(f"data.shape = {list(data.shape)} does not start with segment_ids.shape = {list(segment_ids.shape)}")
    slice_shape = data.shape[id_rank:]
    ids = segment_ids.reshape(-1)
    rows = data.reshape(ids.size, math.prod(slice_shape))
    if ids.size and int(ids.max()) >= num_segments:
        bad = int(xp.argmax(ids >= num_segments))
        _fail(f"segment_ids[{bad}] = {int(ids[bad])} is out of range [0, {num_segments})")
    if ids.size and int(ids.min()) < 0:  # TF drops the slices of negative ids
        kept = ids >= 0
        ids, rows = ids[kept], rows[kept]
    if ids.size == 0 or rows.shape[1] == 0:
        return xp.zeros((num_segments,) + slice_shape, data.dtype)
    by = _by_bincount if use_bincount and num_segments <= 4 * ids.size else _by_sorting
    return by(xp, ids, rows, num_segments, data.dtype).reshape((num_segments,) + slice_shape)


def _uses_bincount(node) -> bool:
    return node.output_dtypes[0].kind == "f"  # bincount weights are float64: exact for floats, lossy for int64


@kernel("UnsortedSegmentSum", fresh_output=True)
def unsorted_segment_sum(node):
    xp, use_bincount = node.xp, _uses_bincount(node)

    def run(data, segment_ids, num_segments):
        count = int(num_segments)
        if count < 0:
            _fail(f"num_segments must be non-negative; got {count}")
        return _segment_rows(xp, data, segment_ids, count, use_bincount)

    return run


@kernel("SegmentSum", fresh_output=True)
def segment_sum(node):
    xp, use_bincount = node.xp, _uses_bincount(node)

    def run(data, segment_ids):
        if segment_ids.size and (int(segment_ids[0]) < 0 or bool(xp.any(segment_ids[1:] < segment_ids[:-1]))):
            _fail("segment ids must be non-negative and sorted")
        count = int(segment_ids[-1]) + 1 if segment_ids.size else 0
        return _segment_rows(xp, data, segment_ids, count, use_bincount)

    return run
