"""Gradient descent on large variables (kernels/training.py): in cache-sized blocks, across the run's threads."""

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
