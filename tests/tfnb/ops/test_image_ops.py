"""tf.image beyond the TF1 programs: the resize gradient against the transposed linear map, decoding errors."""

import numpy as np
import pytest

import tfnb as tf


@pytest.mark.parametrize("resize", [tf.image.resize_bilinear, tf.image.resize_nearest_neighbor])
@pytest.mark.parametrize("align_corners", [False, True])
def test_resize_gradient_is_the_transpose_of_the_resize(resize, align_corners):
    """A resize is linear: <resize(x), g> == <x, gradient(g)> for any x and g."""
    rng = np.random.default_rng(0)
    x_value, g_value = rng.standard_normal((2, 5, 4, 3)), rng.standard_normal((2, 3, 7, 3))
    x = tf.placeholder(tf.float64, [2, 5, 4, 3])
    g = tf.placeholder(tf.float32, [2, 3, 7, 3])
    y = tf.cast(resize(x, [3, 7], align_corners=align_corners), tf.float32)
    grad = tf.gradients(y, x, grad_ys=g)[0]
    with tf.Session() as sess:
        y_value, grad_value = sess.run([y, grad], {x: x_value, g: g_value})
    np.testing.assert_allclose(np.sum(y_value * g_value), np.sum(x_value * grad_value), rtol=1e-5)


def test_decoding_garbage_is_an_invalid_argument():
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="Invalid PNG"):
        sess.run(tf.image.decode_png(b"not a picture"))


def test_unsupported_resize_methods_say_so():
    with pytest.raises(ValueError, match="BICUBIC"):
        tf.image.resize_images(tf.zeros([4, 4, 1]), [2, 2], method=tf.image.ResizeMethod.BICUBIC)
