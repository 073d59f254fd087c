"""The "winograd" algorithm, F(2x2, 3x3): for 3x3 filters at stride 1 without dilation.

Each 4x4 input tile (tiles overlap by 2) and each filter go through fixed transforms, the transformed
tiles and filters multiply as 16 batched matrix products, and each product goes back to a 2x2 output tile.
"""

from __future__ import annotations

import functools

import numpy as np

from tfnb.framework.common_shapes import Geometry
from tfnb.kernels.conv.scratch import Scratch, on_canvas, per_chunk

_WINOGRAD_BT = np.array([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]], np.float64)
_WINOGRAD_G = np.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]], np.float64)
_WINOGRAD_AT = np.array([[1, 1, 1, 0], [0, 1, -1, -1]], np.float64)


@functools.lru_cache(maxsize=None)
def _winograd_matrices(xp, dtype: str):
    """The 2-D transforms as Kronecker products: input (16x16), filter (16x9), output (4x16)."""
    return tuple(xp.asarray(np.kron(m, m), dtype=dtype) for m in (_WINOGRAD_BT, _WINOGRAD_G, _WINOGRAD_AT))



def winograd_claims(geo: Geometry) -> bool:
    """Whether F(2x2, 3x3) applies: 3x3 filters at stride 1 without dilation."""
    return all(a.taps == 3 and a.stride == 1 and a.dilation == 1 for a in (geo.h, geo.w))


def winograd_forward(scratch: Scratch, x, w, geo: Geometry, epilogue=None):
    """Conv2D with F(2x2, 3x3): 4x4 input tiles at stride 2, 16 batched matrix products, 2x2 output tiles."""
    xp = scratch.xp
    channels, filters = x.shape[3], w.shape[3]
    tiles_h, tiles_w = -(-geo.h.out // 2), -(-geo.w.out // 2)
    canvas = on_canvas(scratch, x, geo, 2 * tiles_h + 2, 2 * tiles_w + 2)
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
    per_chunk(lambda selection: [chunk(images) for images in selection], x.shape[0],
              16 * tiles_h * tiles_w * max(channels, filters) * x.itemsize)
    return out

