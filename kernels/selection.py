"""Selection kernels: gather_nd and scatter_nd by linear row indices, and top_k by a stable sort."""

from __future__ import annotations

import math

import numpy as np

from tfnb.framework.errors import InvalidArgumentError
from tfnb.kernels.registry import kernel
from tfnb.kernels.segment import (  # scatter_nd sums rows per index as segments do
    _segment_rows,
    _uses_bincount,
)


def _fail(message: str):
    raise InvalidArgumentError(None, None, message)


def _dims(shape) -> str:
    return "[" + ",".join(map(str, shape)) + "]"


def _rows_at(xp, indices, outer: tuple, into: str):
    """The index vectors of `indices` as linear row numbers into `outer`; an out-of-range vector fails the run.

    `into` names what the indices index into, for the error (TF's "param shape [2,3]" or "shape [4]").
    """
    vectors = indices.reshape(math.prod(indices.shape[:-1]), len(outer))
    if vectors.size:
        bad = (vectors < 0) | (vectors >= xp.asarray(outer, dtype=vectors.dtype))
        if bool(bad.any()):
            row = int(xp.argmax(bad.any(axis=1)))
            vector = ", ".join(str(int(v)) for v in vectors[row])
            _fail(f"indices[{row}] = [{vector}] does not index into {into}")
    strides = np.cumprod((1,) + outer[:0:-1], dtype=np.int64)[::-1].copy()
    return vectors.astype(np.int64) @ xp.asarray(strides) if outer else xp.zeros(len(vectors), np.int64)


@kernel("GatherNd", fresh_output=True)
def gather_nd(node):
    xp = node.xp

    def run(params, indices):
        depth = indices.shape[-1]
        if depth > params.ndim:
            _fail(f"indices.shape[-1] must be <= params.rank, but saw indices shape {_dims(indices.shape)} "
                  f"and params shape {_dims(params.shape)}")
        outer, inner = params.shape[:depth], params.shape[depth:]
        rows = _rows_at(xp, indices, outer, f"param shape {_dims(params.shape)}")
        gathered = params.reshape((math.prod(outer),) + inner)[rows]
        return gathered.reshape(indices.shape[:-1] + inner)

    return run


@kernel("ScatterNd", fresh_output=True)
def scatter_nd(node):
    xp, use_bincount = node.xp, _uses_bincount(node)

    def run(indices, updates, shape):
        shape = tuple(int(d) for d in shape)
        if any(d < 0 for d in shape):
            _fail(f"shape must be non-negative, got {_dims(shape)}")
        depth = indices.shape[-1]
        if depth > len(shape):
            _fail(f"indices.shape[-1] = {depth} must be <= the rank of shape {_dims(shape)}")
        outer, inner = shape[:depth], shape[depth:]
        if updates.shape != indices.shape[:-1] + inner:
            _fail(f"updates must have shape {_dims(indices.shape[:-1] + inner)}, got {_dims(updates.shape)}")
        rows = _rows_at(xp, indices, outer, f"shape {_dims(shape)}")
        if rows.size == 0 or math.prod(inner) == 0:
            return xp.zeros(shape, updates.dtype)
        summed = _segment_rows(xp, updates.reshape(rows.size, -1), rows, math.prod(outer), use_bincount)
        return summed.reshape(shape)

    return run


@kernel("TopKV2", fresh_output=True)
def top_k(node):
    xp = node.xp

    def run(x, k):
        k, width = int(k), x.shape[-1]
        if k < 0:
            _fail(f"Need k >= 0, got {k}")
        if width < k:
            _fail(f"input must have at least k columns. Had {width}, needed {k}")
        # A stable ascending sort of the reversed row, read backwards, puts ties in ascending index order.
        order = xp.argsort(x[..., ::-1], axis=-1, kind="stable")[..., ::-1][..., :k]
        indices = (width - 1 - order).astype(np.int32)
        return xp.take_along_axis(x, indices, -1), indices

    return run
