"""A product added into an array by one GEMM of NumPy's BLAS (kernels/blas.py), and the descent that uses it."""

import numpy as np
import pytest

import tfnb as tf
from tfnb.kernels import blas, training

needs_gemm = pytest.mark.skipif(blas._gemm(np.dtype(np.float32)) is None,
                                reason="NumPy's BLAS is not the scipy-openblas of NumPy's wheels")


@needs_gemm
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("a_transposed,b_transposed", [(False, False), (True, False), (False, True), (True, True)])
def test_a_product_is_added_into_the_array(dtype, a_transposed, b_transposed):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((9, 7)).astype(dtype).T if a_transposed else rng.standard_normal((7, 9)).astype(dtype)
    b = rng.standard_normal((5, 9)).astype(dtype).T if b_transposed else rng.standard_normal((9, 5)).astype(dtype)
    out = rng.standard_normal((7, 5)).astype(dtype)
    expected = out.astype(np.float64) - 0.5 * (a.astype(np.float64) @ b)
    add = blas.product_accumulator(a, b, out)
    add(-0.5, slice(0, 3))
    add(-0.5, slice(3, None))  # two bands of rows
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


@needs_gemm
def test_a_band_of_columns_and_a_band_of_rows_are_added_into_in_place():
    """Strided views as the descent's bands take them: the rest of the array is left as it was."""
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((6, 4)), rng.standard_normal((4, 3))
    canvas = rng.standard_normal((10, 8))
    before = canvas.copy()
    blas.product_accumulator(a, b, canvas[2:8, 3:6])(2.0, slice(1, 4))
    expected = before.copy()
    expected[3:6, 3:6] += 2.0 * a[1:4] @ b
    np.testing.assert_allclose(canvas, expected, rtol=1e-12)


@needs_gemm
@pytest.mark.parametrize("case", ["dtypes", "integers", "columns of out apart", "out read-only", "out overlaps a",
                                  "a row", "shapes", "not NumPy"])
def test_arrays_gemm_cannot_take_are_refused(case):
    rng = np.random.default_rng(2)
    a, b, out = rng.standard_normal((4, 3)), rng.standard_normal((3, 5)), np.zeros((4, 5))
    if case == "dtypes":
        a = a.astype(np.float32)
    elif case == "integers":
        a, b, out = (array.astype(np.int64) for array in (a, b, out))
    elif case == "columns of out apart":
        out = np.zeros((5, 4)).T  # columns contiguous: BLAS would write it transposed
    elif case == "out read-only":
        out.flags.writeable = False
    elif case == "out overlaps a":
        canvas = np.zeros((4, 8))
        a, out = canvas[:, :3], canvas[:, 3:]
    elif case == "a row":
        a, out = a[:1], out[:1]
    elif case == "shapes":
        b = b[:2]
    else:
        a = a.tolist()
    assert blas.product_accumulator(a, b, out) is None


@needs_gemm
def test_rows_not_one_band_are_refused():
    rng = np.random.default_rng(4)
    add = blas.product_accumulator(rng.standard_normal((4, 3)), rng.standard_normal((3, 5)), np.zeros((4, 5)))
    with pytest.raises(ValueError, match="not one band"):
        add(1.0, slice(0, 4, 2))


def dense_step(width: int) -> np.ndarray:
    """A dense layer's weights (width x width) after two descent steps on a batch of 64, from fixed values."""
    rng = np.random.default_rng(3)
    graph = tf.Graph()
    with graph.as_default():
        w = tf.Variable(rng.standard_normal((width, width)).astype(np.float32) * 0.1)
        x = tf.placeholder(tf.float32, [64, width])
        train = tf.train.GradientDescentOptimizer(0.01).minimize(tf.reduce_sum(tf.tanh(tf.matmul(x, w))))
        init = tf.global_variables_initializer()
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        for _ in range(2):
            sess.run(train, {x: rng.standard_normal((64, width)).astype(np.float32)})
        return sess.run(w)


@needs_gemm
def test_the_descent_of_large_weights_adds_its_product_by_gemm_and_trains_as_with_a_product(monkeypatch):
    calls, accumulator = [], training.product_accumulator
    monkeypatch.setattr(training, "product_accumulator", lambda a, b, out: calls.append(out.shape) or
                        accumulator(a, b, out))
    by_gemm = dense_step(256)
    assert calls == [(256, 256)] * 2  # 65536 elements, one band, each step
    monkeypatch.setattr(training, "_ACCUMULATED", 1 << 40)
    np.testing.assert_allclose(by_gemm, dense_step(256), rtol=1e-5, atol=1e-6)
    assert len(calls) == 2


def test_without_numpys_blas_the_descent_makes_the_product(monkeypatch):
    monkeypatch.setattr(training, "_ACCUMULATED", 1 << 40)
    with_product = dense_step(256)
    monkeypatch.setattr(training, "_ACCUMULATED", 1)
    monkeypatch.setattr(blas, "_gemm", lambda dtype: None)
    np.testing.assert_array_equal(dense_step(256), with_product)


@pytest.mark.parametrize("config", ["unknown", "another blas"])
def test_a_numpy_not_built_with_scipy_openblas_gets_no_gemm(monkeypatch, config):
    """A NumPy that cannot say how it was built, or names another BLAS: no GEMM, so descents make the product."""
    def show_config(mode):
        if config == "unknown":
            raise TypeError("show_config() got an unexpected keyword argument 'mode'")
        return {"Build Dependencies": {"blas": {"name": "accelerate"}}}

    monkeypatch.setattr(np, "show_config", show_config)
    blas._gemm.cache_clear()
    try:
        assert blas._gemm(np.dtype(np.float32)) is None
        assert blas.product_accumulator(np.ones((2, 2)), np.ones((2, 2)), np.zeros((2, 2))) is None
    finally:
        monkeypatch.undo()
        blas._gemm.cache_clear()
