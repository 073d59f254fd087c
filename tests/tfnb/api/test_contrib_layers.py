"""tf.contrib.layers (no TensorFlow 2 has it to compare with): names, collections and values against NumPy."""

import numpy as np
import pytest

import tfnb as tf

X = np.random.default_rng(0).uniform(-1, 1, (4, 3)).astype(np.float32)
W = np.random.default_rng(1).uniform(-1, 1, (3, 5)).astype(np.float32)


def test_fully_connected_is_relu_of_an_affine_map_with_contrib_names():
    y = tf.contrib.layers.fully_connected(tf.constant(X), 5, weights_initializer=tf.constant_initializer(W),
                                          biases_initializer=tf.constant_initializer(0.5))
    z = tf.contrib.layers.fully_connected(y, 2, activation_fn=None)
    assert [v.name for v in tf.global_variables()] == ["fully_connected/weights:0", "fully_connected/biases:0",
                                                       "fully_connected_1/weights:0", "fully_connected_1/biases:0"]
    assert tf.model_variables() == tf.global_variables()
    assert z.shape.as_list() == [4, 2]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_allclose(sess.run(y), np.maximum(X @ W + 0.5, 0), rtol=1e-6)


def test_reuse_by_scope_shares_the_weights():
    x = tf.constant(X)
    tf.contrib.layers.fully_connected(x, 2, scope="shared")
    tf.contrib.layers.fully_connected(x, 2, scope="shared", reuse=True)
    assert len(tf.global_variables()) == 2


def test_conv2d_and_pooling_and_flatten():
    images = tf.placeholder(tf.float32, [None, 6, 6, 2])
    h = tf.contrib.layers.conv2d(images, 4, [3, 3], weights_initializer=tf.ones_initializer())
    pooled = tf.contrib.layers.max_pool2d(h, 2)
    flat = tf.contrib.layers.flatten(pooled)
    assert [v.name for v in tf.global_variables()] == ["Conv/weights:0", "Conv/biases:0"]
    assert tf.global_variables()[0].shape.as_list() == [3, 3, 2, 4]
    assert (h.shape.as_list(), pooled.shape.as_list(), flat.shape.as_list()) == ([None, 6, 6, 4], [None, 3, 3, 4],
                                                                                  [None, 36])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out = sess.run(h, {images: np.ones((1, 6, 6, 2), np.float32)})
    assert out[0, 2, 2, 0] == 18 and out[0, 0, 0, 0] == 8  # SAME padding: 9 or 4 taps of 2 channels


def test_xavier_initializer_limits():
    values = tf.contrib.layers.xavier_initializer(seed=1)([200, 300])
    normal = tf.contrib.layers.xavier_initializer(uniform=False, seed=1)([200, 300])
    with tf.Session() as sess:
        uniform_values, normal_values = sess.run([values, normal])
    limit = np.sqrt(6 / 500)
    assert np.abs(uniform_values).max() <= limit and np.abs(uniform_values).max() > 0.95 * limit
    assert np.std(normal_values) == pytest.approx(np.sqrt(1.3 * 2 / 500) * 0.88, rel=0.05)  # truncated at 2 stddev


def test_batch_norm_trains_on_batch_statistics_and_collects_updates():
    x = tf.constant(X)
    y = tf.contrib.layers.batch_norm(x, decay=0.5, is_training=True)
    names = [v.name for v in tf.global_variables()]
    assert names == ["BatchNorm/beta:0", "BatchNorm/moving_mean:0", "BatchNorm/moving_variance:0"]
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    assert len(updates) == 2
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out, _ = sess.run([y, updates])
        moving_mean, moving_variance = sess.run(tf.global_variables()[1:])
    np.testing.assert_allclose(out, (X - X.mean(0)) / np.sqrt(X.var(0) + 1e-3), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(moving_mean, X.mean(0) / 2, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(moving_variance, 0.5 + X.var(0, ddof=1) / 2, rtol=1e-5)  # unbiased, as TF's fused


def test_batch_norm_without_an_updates_collection_updates_in_place():
    x = tf.constant(X)
    y = tf.contrib.layers.batch_norm(x, scale=True, updates_collections=None)
    assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(y)
        assert not np.allclose(sess.run(tf.global_variables()[2]), 0)  # moving_mean moved


def test_fully_connected_with_batch_norm_as_normalizer_has_no_biases():
    tf.contrib.layers.fully_connected(tf.constant(X), 2, normalizer_fn=tf.contrib.layers.batch_norm)
    assert [v.name for v in tf.trainable_variables()] == ["fully_connected/weights:0",
                                                          "fully_connected/BatchNorm/beta:0"]
