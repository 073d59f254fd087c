"""Matrix products in cache-sized blocks (kernels/products.py) against NumPy's, through every kind of block."""

import numpy as np
import pytest

from tfnb.kernels import intra_op, products
from tfnb.kernels.conv import scratch

# (rows, summed, columns, transpose a, transpose b): each skinny on one side, so that each kind of block runs;
# a narrow product (3 columns), one call;
# one and two rows, as matrix-vector products, forward (x @ w) and as an input gradient (dy @ w.T); outer products.
SHAPES = [(3, 50, 40, False, False), (3, 50, 40, False, True), (50, 3, 40, True, False), (50, 40, 20, False, False),
          (50, 40, 20, True, False), (50, 40, 3, False, False), (6, 7, 5, False, False), (40, 45, 50, True, True),
          (1, 50, 40, False, False), (2, 50, 40, False, False), (1, 50, 40, False, True), (2, 50, 40, False, True),
          (50, 1, 40, True, False), (50, 1, 40, False, False),
          (4, 9, 60, False, False), (4, 9, 60, True, False), (9, 4, 60, False, False)]


@pytest.mark.parametrize("m,k,n,transpose_a,transpose_b", SHAPES)
@pytest.mark.parametrize("threads", [1, 2])
def test_blocked_products_match_numpy(monkeypatch, m, k, n, transpose_a, transpose_b, threads):
    monkeypatch.setattr(products, "_BLOCK_BYTES", 64)  # a few rows or columns a block
    monkeypatch.setattr(products, "_VECTOR_BLOCK_BYTES", 1024)
    monkeypatch.setattr(products, "_LARGE_BYTES", 0)
    monkeypatch.setattr(intra_op, "PARALLEL_WORK", 0)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((k, m) if transpose_a else (m, k))
    b = rng.standard_normal((n, k) if transpose_b else (k, n))
    a, b = (a.T if transpose_a else a), (b.T if transpose_b else b)
    with intra_op.RunThreads(threads, 1):
        out = products.matmul_into(np, a, b, np.full((m, n), np.nan))
    np.testing.assert_allclose(out, a @ b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("m,k,n,blocking", [
    (9, 36, 80_000, "columns"),  # a Winograd filter gradient back from the transform positions: b wide
    (36, 9, 80_000, "columns"),  # a Winograd filter transform: out wide
    (2, 9216, 4096, "sums"),  # a dense layer's forward product at batch 2: b tall
    (9216, 2, 4096, "rows"),  # its weight gradient: out tall
])
def test_products_are_cut_along_the_long_side(m, k, n, blocking):
    a, b = np.empty((m, k), np.float32), np.empty((k, n), np.float32)
    assert products._blocking(np, a, b, np.empty((m, n), np.float32)) == blocking


@pytest.mark.parametrize("m,k,n,calls", [
    (4, 6, 200_000, 10),  # a Winograd output transform: pieces of columns
    (300_000, 6, 6, 21),  # tall: pieces of rows
    (6, 6, 10_000, 1),  # small enough for one call
    (64, 64, 4096, 1),  # a product summing many terms: one call
])
def test_products_of_few_terms_in_pieces_are_multiplied_in_small_pieces(monkeypatch, m, k, n, calls):
    pieces = _counted_product(monkeypatch, products.product_in_pieces, m, k, n)
    assert len(pieces) == calls and sum(pieces) == m * k * n
    assert calls == 1 or max(pieces) <= products._SMALL_PRODUCT


@pytest.mark.parametrize("m,k,n", [(64, 4, 4096), (262, 4, 1000), (4, 4, 70_000)])
def test_other_products_of_few_terms_are_one_call(monkeypatch, m, k, n):
    """A band of AlexNet's first weight gradient at batch 4, of its last layer's, a wide one: one BLAS call each."""
    pieces = _counted_product(monkeypatch, products.product_into, m, k, n)
    assert pieces == [m * k * n]


def _counted_product(monkeypatch, product, m: int, k: int, n: int) -> list[int]:
    """The multiply-adds of each np.matmul call of out = a @ b by `product`, its out checked against float64."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((k, m)).astype(np.float32).T, rng.standard_normal((k, n)).astype(np.float32)
    matmul, pieces = np.matmul, []

    def counted(x, y, out):
        pieces.append(x.shape[0] * x.shape[1] * y.shape[1])
        return matmul(x, y, out=out)

    monkeypatch.setattr(np, "matmul", counted)
    out = np.full((m, n), np.nan, np.float32)
    product(np, a, b, out)
    monkeypatch.undo()
    np.testing.assert_allclose(out, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)
    return pieces


@pytest.mark.parametrize("columns,calls", [(10, 1), (16, 8)])
def test_narrow_products_of_a_run_split_only_from_sixteen_columns(monkeypatch, columns, calls):
    """A classifier's logits (the CNN benchmark's 64x4096 @ 4096x10) are one BLAS call in a run of two threads; a
    product of 16 columns is cut into bands taken in turns."""
    monkeypatch.setattr(scratch, "PARALLEL_WORK", 0)  # split however small
    with intra_op.RunThreads(2, 1):
        pieces = _counted_product(monkeypatch, products.matmul_into, 64, 64, columns)
    assert len(pieces) == calls and sum(pieces) == 64 * 64 * columns
