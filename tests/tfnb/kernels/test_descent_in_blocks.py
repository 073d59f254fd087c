"""Gradient descent on large variables (kernels/training.py): in cache-sized blocks, across the run's threads."""

import threading

import numpy as np
import pytest

import tfnb as tf
from tfnb.kernels import intra_op, training


@pytest.mark.parametrize("threads", [1, 2])
def test_descent_in_blocks_matches_the_formula(monkeypatch, threads):
    monkeypatch.setattr(training, "_DESCENT_BLOCK", 7)
    monkeypatch.setattr(training, "_DESCENT_WHOLE", 112)  # 247 elements: the blocked path, 36 blocks
    monkeypatch.setattr(intra_op, "PARALLEL_WORK", 0)
    rng = np.random.default_rng(0)
    var, grad = rng.standard_normal((13, 19)), rng.standard_normal((13, 19))
    expected = var - 0.25 * grad
    with intra_op.RunThreads(threads, 1):
        training._descend_in_blocks(np, var, grad, 0.25)
    np.testing.assert_allclose(var, expected, rtol=1e-15)


@pytest.mark.parametrize("batch", [1, 3])  # one example: the weight gradient is an outer product
def test_a_training_step_descends_a_large_variable_where_its_gradient_lies(monkeypatch, batch):
    monkeypatch.setattr(training, "_DESCENT_BLOCK", 64)
    monkeypatch.setattr(training, "_DESCENT_WHOLE", 1024)
    value = np.random.default_rng(1).standard_normal((40, 50)).astype(np.float32)
    w = tf.Variable(value)
    x = tf.placeholder(tf.float32, [batch, 40])
    loss = tf.reduce_sum(tf.matmul(x, w) ** 2)
    train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    inputs = np.random.default_rng(2).standard_normal((batch, 40)).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train, {x: inputs})
        updated = sess.run(w)
    expected = value - 0.01 * (inputs.T @ (2 * inputs @ value))
    np.testing.assert_allclose(updated, expected, rtol=1e-4, atol=1e-5)


OPTIMIZERS = {"momentum": lambda: tf.train.MomentumOptimizer(0.01, 0.9),
              "nesterov": lambda: tf.train.MomentumOptimizer(0.01, 0.9, use_nesterov=True),
              "adagrad": lambda: tf.train.AdagradOptimizer(0.1), "adadelta": lambda: tf.train.AdadeltaOptimizer(1.0),
              "rmsprop": lambda: tf.train.RMSPropOptimizer(0.01, momentum=0.5, centered=True),
              "adam": lambda: tf.train.AdamOptimizer(0.01)}


def optimizer_steps(make, steps: int = 3) -> list:
    """A variable's values after each of `steps` steps of an optimizer, in a plan with a convolution: its run has
    two threads."""
    graph = tf.Graph()
    with graph.as_default():
        w = tf.Variable(np.random.default_rng(3).standard_normal((13, 19)).astype(np.float32))
        x = tf.constant(np.random.default_rng(4).standard_normal((5, 13)).astype(np.float32))
        image = tf.placeholder(tf.float32, [1, 4, 4, 1])
        convolved = tf.nn.conv2d(image, tf.ones([3, 3, 1, 1]), [1, 1, 1, 1], "SAME")
        train = make().minimize(tf.reduce_sum(tf.tanh(tf.matmul(x, w))))
        init = tf.global_variables_initializer()
    with tf.Session(graph=graph, config=tf.ConfigProto(intra_op_parallelism_threads=2)) as sess:
        sess.run(init)
        values = []
        for _ in range(steps):
            sess.run([train, convolved], {image: np.ones((1, 4, 4, 1), np.float32)})
            values.append(sess.run(w))
        return values


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_dense_updates_of_large_variables_go_in_blocks_across_threads_with_the_same_result(monkeypatch, name):
    monkeypatch.setattr(intra_op, "PARALLEL_WORK", 0)
    monkeypatch.setattr(training, "_DESCENT_BLOCK", 16)  # 247 elements: 16 blocks, the last of 7
    monkeypatch.setattr(training, "_DESCENT_WHOLE", 1 << 40)  # whole arrays
    whole = optimizer_steps(OPTIMIZERS[name])
    threads, parallel_parts = set(), training.parallel_parts

    def recorded(fn, n, work):
        return parallel_parts(lambda part: threads.add(threading.get_ident()) or fn(part), n, work)

    monkeypatch.setattr(training, "parallel_parts", recorded)
    monkeypatch.setattr(training, "_DESCENT_WHOLE", 100)
    blocked = optimizer_steps(OPTIMIZERS[name])
    assert len(threads) == 2
    for got, expected in zip(blocked, whole):
        np.testing.assert_array_equal(got, expected)  # elementwise rules: the same values, bit for bit


def dense_descent_bands(monkeypatch, with_convolution: bool) -> tuple[int, np.ndarray]:
    """(Bands of a dense layer's descent fused with its weight gradient, its weights after one step): 13x19
    weights, under _DESCENT_WHOLE and over two blocks, in a plan with a convolution (two threads) or without."""
    monkeypatch.setattr(intra_op, "PARALLEL_WORK", 0)
    monkeypatch.setattr(training, "_DESCENT_BLOCK", 38)  # two rows of 19
    bands, product_into = [], training.product_into
    monkeypatch.setattr(training, "product_into", lambda xp, a, b, out: bands.append(a.shape[0]) or
                        product_into(xp, a, b, out))
    graph = tf.Graph()
    with graph.as_default():
        w = tf.Variable(np.random.default_rng(3).standard_normal((13, 19)).astype(np.float32))
        x = tf.placeholder(tf.float32, [5, 13])
        image = tf.placeholder(tf.float32, [1, 4, 4, 1])
        fetches = [tf.train.GradientDescentOptimizer(0.1).minimize(tf.reduce_sum(tf.tanh(tf.matmul(x, w))))]
        if with_convolution:
            fetches.append(tf.nn.conv2d(image, tf.ones([3, 3, 1, 1]), [1, 1, 1, 1], "SAME"))
        init = tf.global_variables_initializer()
    with tf.Session(graph=graph, config=tf.ConfigProto(intra_op_parallelism_threads=2)) as sess:
        sess.run(init)
        sess.run(fetches, {x: np.random.default_rng(4).standard_normal((5, 13)).astype(np.float32),
                           image: np.ones((1, 4, 4, 1), np.float32)})
        return len(bands), sess.run(w)


def test_a_fused_dense_descent_goes_in_bands_across_threads_where_they_own_the_cores(monkeypatch):
    """With a convolution in the plan, BLAS has one core: the fused descent of a variable under _DESCENT_WHOLE goes
    in bands across the threads; without one, BLAS has the cores and the variable is one band."""
    banded, banded_value = dense_descent_bands(monkeypatch, True)
    whole, whole_value = dense_descent_bands(monkeypatch, False)
    assert (banded, whole) == (7, 1)
    np.testing.assert_allclose(banded_value, whole_value, rtol=1e-6)
