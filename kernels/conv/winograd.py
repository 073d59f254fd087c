"""The "winograd" algorithms F(m x m, r x r): for r x r filters at stride 1 without dilation.

Outputs are computed in m x m tiles, each from an n x n tile of the input (n = m + r - 1, tiles
overlapping by r - 1). Input tiles and filters go through fixed linear transforms, multiply pointwise
per transform position and channel pair, which over channels is n * n batched matrix products, and
each product goes back to an output tile: m*m*r*r multiplications become n*n. F(2x2, 3x3) does 2.25
times fewer than a direct convolution, F(4x4, 3x3) 4 times fewer, F(2x2, 5x5) 2.8 times fewer.

The transforms come from polynomial evaluation at the points 0, -1, 1, 1/2, -2 and infinity (Toom-Cook):
the product of a filter row and an input row is a polynomial product, evaluated at n points, multiplied,
and interpolated back. Their 2-D forms are Kronecker products. A tile's transform applies the 1-D one along
each tile axis in turn, two products summing n (or m) rows each instead of one summing n*n: for n = 6, a third
of the multiply-adds: AlexNet's, OxfordNet's and GoogLeNet's training steps in 0.96-0.99x the time (batch 4).

The forward convolution works in chunks of tile rows (of any images), taken in turns by the run's
threads, so that a chunk's transformed tiles stay near the CPU caches between the transforms and the
products. The filter gradient is the same computation transposed: per transform position, the
transformed input tiles times the transformed output-gradient tiles, summed over every tile by one
product (all tiles are transformed first, and the threads take positions in turns).

The filter transforms, and the filter gradient's way back from the transform positions, apply the 1-D transform
along each filter axis in turn too (_separable_into), over blocks of the channel pairs that keep the intermediate
in a core's cache, in the calling thread: a filter's transform is a few hundred microseconds of passes over memory,
which a second thread would share only after waking. Against one product with the 2-D (Kronecker) matrix cut into
blocks across the threads (kernels/products.py), two threads: 0.43-0.58x the time for GoogLeNet's 3x3 layers,
0.26x for a 5x5 one, 0.48-0.52x for the way back; training steps at batch 4, GoogLeNet 0.94-0.99x the time,
AlexNet 0.98x, OxfordNet 0.99x (alternating steps in one process).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from tfnb.framework.common_shapes import Geometry
from tfnb.kernels.conv.scratch import Scratch, each_chunk, in_turns, on_canvas, row_pieces
from tfnb.kernels.products import product_in_pieces

# Interpolation points in the order they are taken: these keep float32 errors near those of a direct sum.
_POINTS = (0.0, -1.0, 1.0, 0.5, -2.0, 2.0, -0.5)

# Bytes of transformed tiles per chunk (see the module docstring), at least.
_CHUNK_BYTES = 2 << 20
# Bytes of the intermediate of a filter's separable transform per block of channel pairs (_separable_into).
_SEPARABLE_BLOCK_BYTES = 256 << 10
# Every chunk of the forward convolution reads the n² transformed filter matrices: its tiles take at least
# this many times their bytes, so that this traffic stays a small part of the chunk's work (measured on the
# 3x3 layers of the paper's models, batch 4).
_FILTER_READS_PER_CHUNK = 1


@functools.lru_cache(maxsize=None)
def winograd_matrices(m: int, r: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(A^T, G, B^T) of the 1-D F(m, r), float64: y = A^T [(G g) * (B^T d)] for a filter g and n inputs d.

    G and A evaluate filter and output polynomials at the points (the last one at infinity: the leading
    coefficient); B^T is the transposed inverse of the n x n evaluation matrix, which interpolates.
    """
    n = m + r - 1
    points = _POINTS[:n - 1]

    def evaluation(degree: int) -> np.ndarray:
        matrix = np.zeros((n, degree))
        matrix[:-1] = np.power.outer(np.array(points), np.arange(degree))
        matrix[-1, -1] = 1.0
        return matrix

    return evaluation(m).T, evaluation(r), np.linalg.inv(evaluation(n)).T


class _Transforms(NamedTuple):
    """The 1-D transforms of F(m, r) as contiguous arrays of one dtype."""

    input: object  # B^T (n x n)
    filter: object  # G (n x r)
    output: object  # A^T (m x n)
    reversed_filter: object  # G with its taps in reverse order: a flipped filter's
    filter_back: object  # G^T: the filter gradient's way back from the transform positions


@functools.lru_cache(maxsize=None)
def _transforms(xp, dtype: str, m: int, r: int) -> _Transforms:
    at, g, bt = winograd_matrices(m, r)
    return _Transforms(*(xp.asarray(np.ascontiguousarray(a), dtype=dtype) for a in (bt, g, at, g[:, ::-1], g.T)))


def _tile_transform(scratch: Scratch, a, tiles, out):
    """out = (a kron a) @ tiles for tiles (k*k, count) whose rows are a k x k tile's positions: a (n x k) applied
    along the tiles' first axis, then along their second."""
    n, k = a.shape
    count = tiles.shape[1]
    half = scratch("half transformed tiles", (n, k * count), tiles.dtype)
    product_in_pieces(scratch.xp, a, tiles.reshape(k, k * count), half)
    scratch.xp.matmul(a, half.reshape(n, k, count), out=out.reshape(n, n, count))
    return out


def _separable_into(scratch: Scratch, a, source, out):
    """out = (a kron a) @ source for source (q, q, columns) and a (p x q), out (p², columns): a applied along
    source's first axis, then along its second, over blocks of columns whose intermediate (q, p, block) stays in
    a core's cache (_SEPARABLE_BLOCK_BYTES; the whole width on a device, where each product is a launch).
    Tiles take _tile_transform instead: their chunks are cache-sized already, and through this, in blocks, AlexNet's
    and GoogLeNet's training steps took 1.02x the time."""
    xp, (p, q), columns = scratch.xp, a.shape, source.shape[2]
    step = max(1, _SEPARABLE_BLOCK_BYTES // (p * q * out.itemsize)) if xp is np else columns
    half = scratch("half transformed filters", (q, p, min(step, columns)), out.dtype)
    out = out.reshape(p, p, columns)
    for first in range(0, columns, step):
        block = slice(first, min(first + step, columns))
        part = half[:, :, :block.stop - block.start]
        xp.matmul(a, source[:, :, block].transpose(1, 0, 2), out=part)  # part[b, i] = sum_a a[i, a] source[a, b]
        xp.matmul(a, part.transpose(1, 0, 2), out=out[:, :, block])  # out[i, j] = sum_b a[j, b] part[b, i]
    return out


@dataclass(frozen=True)
class Winograd:
    """F(m x m, r x r): its claim, its forward convolution and its filter gradient (see the module docstring)."""

    m: int
    r: int

    @property
    def n(self) -> int:
        return self.m + self.r - 1

    def claims(self, geo: Geometry, channels: int, filters: int) -> bool:
        """Whether it applies: r x r filters at stride 1 without dilation."""
        return all(a.taps == self.r and a.stride == 1 and a.dilation == 1 for a in (geo.h, geo.w))

    def _tiles(self, geo: Geometry) -> tuple[int, int]:
        return -(-geo.h.out // self.m), -(-geo.w.out // self.m)

    def _gather(self, scratch: Scratch, name: str, source, pieces, tiles_w: int, size: int, stride: int):
        """Tiles (size x size at `stride`, tile rows given by pieces) of NHWC `source`: (size², tiles, channels)."""
        xp, channels = scratch.xp, source.shape[3]
        count = sum((images.stop - images.start) * (end - first) for images, first, end in pieces) * tiles_w
        data = scratch(name, (size * size, count, channels), source.dtype)
        offset = 0
        for images, first, end in pieces:
            part, rows = source[images, first * stride:], end - first
            sb, sh, sw, sc = part.strides
            tiles = xp.lib.stride_tricks.as_strided(part, (size, size, part.shape[0], rows, tiles_w, channels),
                                                    (sh, sw, sb, stride * sh, stride * sw, sc))
            taken = part.shape[0] * rows * tiles_w
            xp.copyto(data[:, offset:offset + taken].reshape(tiles.shape), tiles)
            offset += taken
        return data

    def _chunks(self, scratch: Scratch, fn, batch: int, tiles_h: int, tiles_w: int, channels: int, itemsize: int,
                least_bytes: int = 0) -> None:
        """fn(pieces, first tile) for chunks of tile rows of every image, of at least `least_bytes` (and
        _CHUNK_BYTES) of transformed tiles each, taken in turns by the run's threads."""
        per_row = self.n * self.n * tiles_w * channels * itemsize
        each_chunk(lambda units: fn(row_pieces(units, tiles_h), units.start * tiles_w), batch * tiles_h, per_row,
                   scratch.chunk_bytes(max(_CHUNK_BYTES, least_bytes)))

    def forward(self, scratch: Scratch, x, w, geo: Geometry, epilogue=None):
        """Conv2D: transformed input tiles times transformed filters, back to output tiles (then `epilogue`)."""
        xp, m, n = scratch.xp, self.m, self.n
        channels, filters = x.shape[3], w.shape[3]
        tiles_h, tiles_w = self._tiles(geo)
        canvas = on_canvas(scratch, x, geo, m * tiles_h + self.r - 1, m * tiles_w + self.r - 1)
        transforms = _transforms(xp, x.dtype.str, m, self.r)
        bt, at = transforms.input, transforms.output
        u = self._filter_transforms(scratch, w, scratch("u", (n * n, channels * filters), x.dtype))
        out = scratch.output((x.shape[0], geo.h.out, geo.w.out, filters), x.dtype)

        def chunk(pieces, _):
            data = self._gather(scratch, "tiles", canvas, pieces, tiles_w, n, m)
            count = data.shape[1]
            v = _tile_transform(scratch, bt, data.reshape(n * n, -1), scratch("v", (n * n, data[0].size), x.dtype))
            products = xp.matmul(v.reshape(n * n, count, channels), u, out=scratch("m", (n * n, count, filters),
                                                                                    x.dtype))
            y = _tile_transform(scratch, at, products.reshape(n * n, -1), scratch("y", (m * m, count * filters),
                                                                                   x.dtype))
            self._scatter(scratch, y.reshape(m, m, count, filters), pieces, tiles_w, out, epilogue)

        self._chunks(scratch, chunk, x.shape[0], tiles_h, tiles_w, max(channels, filters), x.itemsize,
                     _FILTER_READS_PER_CHUNK * u.nbytes)
        return out

    def _filter_transforms(self, scratch: Scratch, w, out):
        """The transformed filters (n*n, C, F) of a (kh, kw, C, F) filter (_separable_into).

        A flipped filter's view (gemm.flipped) is transformed from the filter it views, with the taps in reverse
        order, and the result is read transposed: no copy of the filter at all.
        """
        n, r = self.n, self.r
        transforms = _transforms(scratch.xp, w.dtype.str, self.m, r)
        source = w.transpose(0, 1, 3, 2)[::-1, ::-1]
        if source.flags.c_contiguous and not w.flags.c_contiguous:
            u = _separable_into(scratch, transforms.reversed_filter, source.reshape(r, r, -1), out)
            return u.reshape(n * n, w.shape[3], w.shape[2]).transpose(0, 2, 1)
        u = _separable_into(scratch, transforms.filter, w.reshape(r, r, -1), out)
        return u.reshape(n * n, w.shape[2], w.shape[3])

    def _scatter(self, scratch: Scratch, y, pieces, tiles_w: int, out, epilogue) -> None:
        """Output tiles y (m, m, tiles, F) into NHWC `out` at the pieces' tile rows, cropped to its size."""
        xp, m, offset = scratch.xp, self.m, 0
        width, filters = out.shape[2:]
        for images, first, end in pieces:
            count, rows = images.stop - images.start, end - first
            tiles = y[:, :, offset:offset + count * rows * tiles_w].reshape(m, m, count, rows, tiles_w, filters)
            offset += count * rows * tiles_w
            target = out[images, first * m:end * m]
            if target.shape[1] == rows * m and width == tiles_w * m:
                xp.copyto(target.reshape(count, rows, m, tiles_w, m, filters), tiles.transpose(2, 3, 0, 4, 1, 5))
            else:
                whole = scratch("whole tiles", (count, rows, m, tiles_w, m, filters), out.dtype)
                xp.copyto(whole, tiles.transpose(2, 3, 0, 4, 1, 5))
                xp.copyto(target, whole.reshape(count, rows * m, tiles_w * m, filters)[:, :target.shape[1], :width])
            if epilogue is not None:
                epilogue(target)

    def backprop_filter(self, scratch: Scratch, x, dy, geo: Geometry):
        """Conv2DBackpropFilter: per transform position, input tiles^T times output-gradient tiles over all tiles.

        All tiles are transformed first (chunks of tile rows), then each position's product sums over every
        tile at once (positions taken in turns by the threads): no partial sums, the same result on any run.
        """
        xp, m, n, r = scratch.xp, self.m, self.n, self.r
        channels, filters = x.shape[3], dy.shape[3]
        tiles_h, tiles_w = self._tiles(geo)
        count = x.shape[0] * tiles_h * tiles_w
        canvas = on_canvas(scratch, x, geo, m * tiles_h + r - 1, m * tiles_w + r - 1)
        dy_canvas = _on_whole_tiles(scratch, dy, m * tiles_h, m * tiles_w)
        transforms = _transforms(xp, x.dtype.str, m, r)
        bt, at = transforms.input, transforms.output
        inputs = scratch("input transforms", (n * n, count, channels), x.dtype)
        gradients = scratch("gradient transforms", (n * n, count, filters), x.dtype)

        def transform(pieces, first):
            data = self._gather(scratch, "tiles", canvas, pieces, tiles_w, n, m)
            tiles = slice(first, first + data.shape[1])
            _tile_transform(scratch, bt, data.reshape(n * n, -1), inputs[:, tiles].reshape(n * n, -1))
            data = self._gather(scratch, "dy tiles", dy_canvas, pieces, tiles_w, m, m)
            _tile_transform(scratch, at.T, data.reshape(m * m, -1), gradients[:, tiles].reshape(n * n, -1))

        self._chunks(scratch, transform, x.shape[0], tiles_h, tiles_w, channels + filters, x.itemsize)
        sums = scratch("filter sums", (n * n, channels, filters), x.dtype)
        in_turns(lambda p: xp.matmul(inputs[p].T, gradients[p], out=sums[p]), n * n,
                 n * n * count * channels * filters)
        out = scratch.output((r, r, channels, filters), x.dtype)
        _separable_into(scratch, transforms.filter_back, sums.reshape(n, n, -1), out.reshape(r * r, -1))
        return out


def _on_whole_tiles(scratch: Scratch, dy, rows: int, cols: int):
    """dy, or dy at the top left of a (scratch) canvas of whole output tiles: zeros past its edges add nothing."""
    if dy.shape[1:3] == (rows, cols):
        return dy
    canvas = scratch("dy canvas", (dy.shape[0], rows, cols, dy.shape[3]), dy.dtype)
    canvas.fill(0)
    canvas[:, :dy.shape[1], :dy.shape[2]] = dy
    return canvas


WINOGRAD_3X3 = Winograd(2, 3)
WINOGRAD_4X4_3X3 = Winograd(4, 3)
WINOGRAD_5X5 = Winograd(2, 5)
