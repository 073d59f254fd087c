"""Matrix products in blocks that stay in the CPU caches, split across the run's threads.

BLAS multiplies a skinny product (one side of a few rows: a fully connected layer's step on a small
batch) at a fraction of memory speed: it packs the large operand into a buffer, and clears a large
result in a pass of its own before adding into it. Cut into blocks of about 256 KiB of the large
operand, each block's packing and clearing stay in a core's cache and the large operand is read or
written once: measured 2 to 3 times faster on the dense layers of the paper's models at batch 4.
Where the run's threads own the cores (a plan with convolutions runs BLAS in one thread), each reads
only its share of a large weight matrix: bands of the result taken in turns, or, where the matrix is
read along the summed axis (a layer's forward product x @ w), a contiguous share of its rows summed
into a partial result of each thread's own.

On a batch of one or two rows (the paper's models at batch 2 on this CPU), a product is one or two
matrix-vector products (GEMV), which BLAS streams without packing, over blocks of 1 MiB: each block read from
memory once, and from the cache for the second row. Measured against the blocked GEMM on AlexNet's dense layers
at batch 2, two threads: 0.65-0.75x the time of an input gradient (dy @ w.T), 0.8-0.95x of a forward product
(x @ w). At batch 4 matrix-vector products made the forward product slower, and a training step of dense layers
took 1.05x. An outer product (a summed axis of one: a weight gradient at batch 1) is a broadcast
multiplication, in 0.2x BLAS's time. Other products are one BLAS call each: with OpenBLAS 0.3.31, a band of a
weight gradient on a small batch (64x4 @ 4x4096, one thread) took 150 us in one call and 153 in two pieces sized
for its kernels for small matrices (an earlier OpenBLAS: 158 against 41), bands of 262x4 @ 4x1000 68 against 76;
AlexNet's training step took 0.99x the time of the pieces (alternating steps in one process). Winograd's transforms
keep the pieces (product_in_pieces).
"""

from __future__ import annotations

import numpy as np

from tfnb.kernels.conv.scratch import slices_in_turns
from tfnb.kernels.intra_op import parallel_parts, run_width

_BLOCK_BYTES = 256 << 10
SKINNY = 32  # the short side of a skinny product, at most: one cut into blocks, or summing few terms
_LARGE_BYTES = 1 << 20  # the large operand of a product cut into blocks, at least
_VECTOR_BLOCK_BYTES = 1 << 20  # a block of the large operand read by matrix-vector products
VECTOR_ROWS = 2  # a product with at most this many rows is computed by matrix-vector products
# Multiply-adds per piece of a product summing few terms (product_in_pieces): small enough for OpenBLAS's kernels
# for small matrices, which skip packing the operands.
_SMALL_PRODUCT = 1 << 19
# A product of fewer output columns than this from a larger left operand (a classifier's logits) is one BLAS call:
# cut into rows, each piece packs b again, and with so few columns that costs more than a second thread saves.
# (64, 128, 256, 512)x4096 @ 4096x10 took 0.35-0.66x the time of the split in one call (two threads); at 16 columns
# the split took 0.8x the call's time.
_NARROW_COLUMNS = 16


def matmul_into(xp, a, b, out):
    """out = a @ b for 2-D float arrays (out C-contiguous): in cache-sized blocks, in bands across threads; a narrow
    product (under _NARROW_COLUMNS columns) in one call."""
    rows, cols = out.shape
    if xp is np and cols < _NARROW_COLUMNS <= rows:
        product_into(xp, a, b, out)
        return out
    if xp is not np or run_width() == 1:  # other array modules run products on a device
        _blocked(xp, a, b, out)
        return out
    work = rows * cols * a.shape[1]
    if _blocking(xp, a, b, out) == "sums":
        _split_sums(xp, a, b, out, work)
    elif rows >= cols:
        slices_in_turns(lambda band: _blocked(xp, a[band], b, out[band]), rows, work)
    else:
        slices_in_turns(lambda band: _blocked(xp, a, b[:, band], out[:, band]), cols, work)
    return out


def _split_sums(xp, a, b, out, work: float) -> None:
    """out = a @ b, each thread summing a contiguous share of the summed axis; the shares then added up.

    A share of a weight matrix's rows is one contiguous run of memory: measured 0.63-0.85x the time of
    bands of its columns for the dense layers of the paper's models at batch 2 (two threads).
    """
    def share(part: slice):
        into = out if part.start == 0 else xp.empty_like(out)
        _reduction_blocks(xp, a[:, part], b[part], into)
        return into

    for partial in parallel_parts(share, a.shape[1], work)[1:]:
        xp.add(out, partial, out=out)


def _blocking(xp, a, b, out) -> str | None:
    """How out = a @ b is cut into blocks of its largest operand: None (a skinny product only, and large),
    "rows" of out and a, "columns" of out and b, or "sums" along the summed axis."""
    (m, k), n = a.shape, b.shape[1]
    if xp is not np or min(m, n, k) > SKINNY:
        return None
    sizes = {"a": m * k, "b": k * n, "out": m * n}
    largest = max(sizes, key=sizes.get)
    if sizes[largest] * out.itemsize < _LARGE_BYTES:
        return None
    if largest == "out":  # blocks along its long side
        return "rows" if m >= n else "columns"
    if largest == "b":
        # Shares of the summed axis are partial results of out's size: only worth it where b is at least as tall
        # as it is wide (a transposed view lies contiguous along its columns: it is read in columns).
        return "sums" if _rows_contiguous(b) and k >= n else "columns"
    return "rows" if _rows_contiguous(a) else "sums"


def product_into(xp, a, b, out) -> None:
    """out = a @ b: an outer product (a summed axis of one) as a broadcast multiplication, which BLAS does several
    times slower; other products in one BLAS call."""
    if a.shape[1] == 1:
        xp.multiply(a, b, out=out)
    else:
        xp.matmul(a, b, out=out)


def product_in_pieces(xp, a, b, out) -> None:
    """out = a @ b, a product summing few terms (Winograd's transform of tiles) in pieces of at most _SMALL_PRODUCT
    multiply-adds along out's longer side: single calls of 6x6 @ 6x1.2M (one thread) took 1.06x the time, of
    4x6 @ 6x600k 1.36x, of 6x4 @ 4x300k 0.74x."""
    (rows, summed), columns = a.shape, b.shape[1]
    if xp is not np or summed > SKINNY or rows * columns * summed <= _SMALL_PRODUCT:
        product_into(xp, a, b, out)
    elif rows >= columns:
        for part in _blocks(rows, _SMALL_PRODUCT // (columns * summed)):
            xp.matmul(a[part], b, out=out[part])
    else:
        for part in _blocks(columns, _SMALL_PRODUCT // (rows * summed)):
            xp.matmul(a, b[:, part], out=out[:, part])


def _blocked(xp, a, b, out) -> None:
    """out = a @ b, block by block of its largest operand where the product is skinny and large."""
    blocking = _blocking(xp, a, b, out)
    if blocking is None:
        product_into(xp, a, b, out)
    elif blocking == "rows":
        _row_blocks(xp, a, b, out)
    elif blocking == "sums":
        _reduction_blocks(xp, a, b, out)
    elif a.shape[0] <= VECTOR_ROWS and b.strides[0] == b.itemsize:  # b.T: the weight matrix, rows contiguous
        for cols in _vector_blocks(b.shape[1], a.shape[1] * out.itemsize, a.shape[0]):
            for row in range(a.shape[0]):
                xp.dot(b.T[cols], a[row], out=out[row, cols])
    else:
        height = max(a.shape)  # of the blocks of b and out
        for cols in _blocks(b.shape[1], _BLOCK_BYTES // (height * out.itemsize)):
            xp.matmul(a, b[:, cols], out=out[:, cols])


def _rows_contiguous(matrix) -> bool:
    return matrix.strides[1] == matrix.itemsize


def _blocks(length: int, step: int) -> list[slice]:
    step = max(step, 1)
    return [slice(first, min(first + step, length)) for first in range(0, length, step)]


def _vector_blocks(length: int, line_bytes: int, rows: int) -> list[slice]:
    """Blocks of the large operand's lines for matrix-vector products: of 1 MiB for two rows, whole for one (each
    element is read once: blocks would only add calls)."""
    return _blocks(length, _VECTOR_BLOCK_BYTES // line_bytes if rows > 1 else length)


def _row_blocks(xp, a, b, out) -> None:
    """Blocks of rows of a and out (out's rows or a's rows are the large operand)."""
    width = max(a.shape[1], out.shape[1])
    for rows in _blocks(out.shape[0], _BLOCK_BYTES // (width * out.itemsize)):
        product_into(xp, a[rows], b, out[rows])


def _reduction_blocks(xp, a, b, out) -> None:
    """Blocks along the summed axis (rows of b, columns of a), their products added up in out."""
    k = a.shape[1]
    if a.shape[0] <= VECTOR_ROWS:
        term = xp.empty(out.shape[1], out.dtype)
        for index, part in enumerate(_vector_blocks(k, b.shape[1] * out.itemsize, a.shape[0])):
            for row in range(a.shape[0]):
                if index == 0:
                    xp.dot(a[row, part], b[part], out=out[row])
                else:
                    out[row] += xp.dot(a[row, part], b[part], out=term)
        return
    width = max(a.shape[0], b.shape[1])
    term = None
    for index, part in enumerate(_blocks(k, _BLOCK_BYTES // (width * out.itemsize))):
        if index == 0:
            xp.matmul(a[:, part], b[part], out=out)
            continue
        term = xp.matmul(a[:, part], b[part], out=term)
        xp.add(out, term, out=out)
