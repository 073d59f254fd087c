"""tf.layers programs, each run under TensorFlow (tf.compat.v1.layers) and under tfnb: same names, shapes, values.

TensorFlow 2.16+ serves tf.compat.v1.layers from the `tf_keras` package only when TF_USE_LEGACY_KERAS is set;
without tf_keras these programs skip. Initializers are fixed so that values compare.
"""

from __future__ import annotations

import numpy as np
import pytest
from program_registry import (
    Programs,
    shapes,
    test_program_does_what_tensorflow_does,  # noqa: F401 (pytest collects it from here)
)
from program_registry import run as run_in_session

pytestmark = [pytest.mark.filterwarnings("ignore:`tf.layers.*is deprecated:UserWarning"),
              pytest.mark.usefixtures("legacy_layers")]

PROGRAMS = Programs()
program = PROGRAMS.register


@pytest.fixture
def legacy_layers(monkeypatch):
    """TensorFlow's tf.compat.v1.layers, which it serves from tf_keras when TF_USE_LEGACY_KERAS is set."""
    pytest.importorskip("tf_keras", reason="TensorFlow's tf.compat.v1.layers needs the tf_keras package")
    monkeypatch.setenv("TF_USE_LEGACY_KERAS", "1")


def run(tf, fetches, feed_dict=None):
    """`fetches` run in a new Session after the global variables' initializer."""
    return run_in_session(tf, fetches, feed_dict, init=True)


def names(variables) -> list:
    return [v.name for v in variables]


RNG = np.random.RandomState(0)
X = RNG.uniform(-1, 1, (3, 4)).astype(np.float32)
IMAGES = RNG.uniform(-1, 1, (2, 7, 6, 3)).astype(np.float32)
KERNEL = RNG.uniform(-1, 1, (4, 5)).astype(np.float32)


def ramp(tf, scale: float = 0.1):
    """An initializer giving scale * (0, 1, 2, ...) - 1, reshaped: fixed and different per entry."""
    return lambda shape, dtype=None, partition_info=None: tf.constant(
        (np.arange(np.prod(shape)) * scale - 1).reshape(shape).astype(np.float32))


# -- dense -----------------------------------------------------------------------------------------


@program
def dense_names_shapes_and_values(tf):
    x = tf.constant(X)
    y = tf.layers.dense(x, 5, activation=tf.nn.relu, kernel_initializer=tf.constant_initializer(KERNEL),
                        bias_initializer=tf.constant_initializer(0.25))
    z = tf.layers.dense(y, 2, use_bias=False, kernel_initializer=tf.ones_initializer())
    return names(tf.trainable_variables()), y.name, z.name, shapes(y, z), run(tf, [y, z])


@program
def dense_of_a_3d_input_uses_the_last_axis(tf):
    x = tf.placeholder(tf.float32, [None, 2, 4])
    y = tf.layers.dense(x, 5, kernel_initializer=tf.constant_initializer(KERNEL))
    return shapes(y), run(tf, y, {x: np.stack([X[:2], X[1:]])})


@program
def dense_layer_object_shares_its_variables(tf):
    layer = tf.layers.Dense(5, kernel_initializer=tf.constant_initializer(KERNEL), name="fc")
    x = tf.placeholder(tf.float32, [None, 4])
    first, second = layer(x), layer.apply(x * 2)
    return (names(layer.variables), names(layer.trainable_variables), layer.kernel.name, layer.bias.name,
            first.name, second.name, len(tf.global_variables()), run(tf, [first, second], {x: X}))


@program
def unnamed_dense_layers_get_numbered_scopes(tf):
    x = tf.constant(X)
    outputs = [tf.layers.dense(x, 2) for _ in range(3)]
    with tf.variable_scope("net"):
        outputs.append(tf.layers.dense(x, 2))
    return names(tf.global_variables()), [y.name for y in outputs]


@program
def dense_reuse_by_name_shares_variables(tf):
    x = tf.constant(X)
    a = tf.layers.dense(x, 5, name="fc", kernel_initializer=tf.constant_initializer(KERNEL))
    b = tf.layers.dense(x * 2, 5, name="fc", reuse=True)
    with tf.variable_scope("tower", reuse=tf.AUTO_REUSE):
        c = tf.layers.dense(x, 3, name="head")
        d = tf.layers.dense(x, 3, name="head")
    values = run(tf, [a, b, c, d])
    return names(tf.global_variables()), values[0] * 2 - values[1], values[2] - values[3]


@program
def layer_objects_are_named_by_class_and_count(tf):
    layers = [tf.layers.Dense(2), tf.layers.Dense(2), tf.layers.Conv2D(1, 1), tf.layers.Conv2DTranspose(1, 1),
              tf.layers.MaxPooling2D(2, 2), tf.layers.BatchNormalization(), tf.layers.Dense(2, name="out")]
    return [layer.name for layer in layers]


@program
def dense_of_float64_makes_float64_variables(tf):
    y = tf.layers.dense(tf.constant(X, tf.float64), 5, kernel_initializer=tf.constant_initializer(KERNEL))
    return y.dtype.name, run(tf, [y, tf.global_variables()])


@program
def dense_twice_by_name_without_reuse_is_an_error(tf):
    x = tf.constant(X)
    tf.layers.dense(x, 2, name="fc")
    return tf.layers.dense(x, 2, name="fc")


@program
def dense_needs_a_known_last_dimension(tf):
    return tf.layers.dense(tf.placeholder(tf.float32, [None, None]), 2)


@program
def regularizers_add_to_the_regularization_losses(tf):
    x = tf.constant(X)
    tf.layers.dense(x, 5, kernel_initializer=tf.constant_initializer(KERNEL), bias_initializer=tf.ones_initializer(),
                    kernel_regularizer=lambda w: 0.5 * tf.reduce_sum(tf.square(w)),
                    bias_regularizer=lambda b: tf.reduce_sum(b), name="fc")
    tf.layers.dense(x, 5, name="fc", reuse=True, kernel_regularizer=tf.nn.l2_loss)
    losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    return [t.name for t in losses], run(tf, losses)


@program
def untrainable_layers_make_untrainable_variables(tf):
    tf.layers.dense(tf.constant(X), 2, trainable=False)
    return names(tf.global_variables()), names(tf.trainable_variables())


# -- convolution and pooling -----------------------------------------------------------------------


@program
def conv2d_paddings_strides_and_dilations(tf):
    x = tf.constant(IMAGES)
    init = ramp(tf, 0.02)
    ys = [tf.layers.conv2d(x, 4, 3, kernel_initializer=init, bias_initializer=tf.constant_initializer(0.5)),
          tf.layers.conv2d(x, 2, (3, 2), strides=2, padding="SAME", kernel_initializer=init, activation=tf.nn.relu),
          tf.layers.conv2d(x, 2, 2, strides=(1, 2), padding="Same", kernel_initializer=init, use_bias=False),
          tf.layers.conv2d(x, 3, 2, dilation_rate=2, kernel_initializer=init)]
    return names(tf.global_variables()), shapes(*ys), [y.name for y in ys], run(tf, ys)


@program
def conv2d_of_unknown_batch_and_size(tf):
    x = tf.placeholder(tf.float32, [None, None, None, 3])
    y = tf.layers.conv2d(x, 2, 3, padding="same", kernel_initializer=ramp(tf, 0.03))
    return shapes(y), run(tf, y, {x: IMAGES})


@program
def conv2d_transpose_sizes_and_values(tf):
    x = tf.constant(IMAGES)
    init = ramp(tf, 0.05)
    ys = [tf.layers.conv2d_transpose(x, 2, 3, strides=2, kernel_initializer=init),
          tf.layers.conv2d_transpose(x, 2, 1, strides=2, padding="same", kernel_initializer=init),
          tf.layers.conv2d_transpose(x, 3, (2, 3), strides=(1, 2), kernel_initializer=init,
                                     bias_initializer=tf.constant_initializer(-0.5), activation=tf.nn.relu)]
    return names(tf.global_variables()), shapes(*ys), run(tf, ys)


@program
def conv2d_transpose_of_an_unknown_size(tf):
    x = tf.placeholder(tf.float32, [None, None, 6, 3])
    y = tf.layers.conv2d_transpose(x, 2, 3, strides=2, padding="same", kernel_initializer=ramp(tf))
    return shapes(y), run(tf, y, {x: IMAGES})


@program
def conv2d_channels_first(tf):
    x = tf.constant(IMAGES.transpose(0, 3, 1, 2))
    return run(tf, tf.layers.conv2d(x, 2, 3, data_format="channels_first", kernel_initializer=ramp(tf, 0.02)))


@program
def pooling_layers(tf):
    x = tf.constant(IMAGES)
    ys = [tf.layers.max_pooling2d(x, 2, 2), tf.layers.max_pooling2d(x, (3, 2), (2, 1), padding="same"),
          tf.layers.average_pooling2d(x, 3, 2, padding="SAME"), tf.layers.AveragePooling2D(2, 1)(x),
          tf.layers.MaxPooling2D(2, 2, name="pool").apply(x)]
    return [y.name for y in ys], shapes(*ys), run(tf, ys)


@program
def bad_padding_is_an_error(tf):
    return tf.layers.conv2d(tf.constant(IMAGES), 2, 3, padding="full")


@program
def flatten_keeps_what_is_known(tf):
    ys = [tf.layers.flatten(tf.constant(IMAGES)), tf.layers.flatten(tf.placeholder(tf.float32, [None, 2, 3])),
          tf.layers.flatten(tf.placeholder(tf.float32, [4, None, 3])),
          tf.layers.flatten(tf.placeholder(tf.float32, [None, None, 3]))]
    return [y.name for y in ys], shapes(*ys), run(tf, ys[0])


# -- dropout ---------------------------------------------------------------------------------------


@program
def dropout_is_the_identity_unless_training(tf):
    x = tf.constant(IMAGES)
    training = tf.placeholder(tf.bool, [])
    ys = [tf.layers.dropout(x), tf.layers.dropout(x, 0.9, training=training), tf.layers.Dropout(0.3)(x)]
    return [y.name for y in ys], shapes(*ys), run(tf, ys, {training: False})


@program
def dropout_training_keeps_the_shape_and_scales(tf):
    x = tf.ones([50, 40])
    y = tf.layers.dropout(x, 0.5, training=True, noise_shape=[None, 1])
    value = run(tf, y)
    return shapes(y), sorted(set(np.unique(value).tolist()) | {0.0, 2.0}), bool(np.all(value == value[:, :1]))


# -- batch normalization ---------------------------------------------------------------------------


def _batch_norm_run(tf, inputs, **kwargs):
    x = tf.constant(inputs)
    y = tf.layers.batch_normalization(x, gamma_initializer=tf.constant_initializer(1.5),
                                      beta_initializer=tf.constant_initializer(-0.5),
                                      moving_variance_initializer=tf.constant_initializer(2.0), **kwargs)
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        before = sess.run(y)
        sess.run(updates)
        sess.run(updates)
        moving = sess.run(tf.global_variables()[2:])
    return names(tf.global_variables()), names(tf.trainable_variables()), shapes(y), before, moving


@program
def batch_normalization_training_of_images_updates_moving_statistics(tf):
    return _batch_norm_run(tf, IMAGES, training=True, momentum=0.9)


@program
def batch_normalization_training_of_vectors(tf):
    return _batch_norm_run(tf, X, training=True, epsilon=0.01)


@program
def batch_normalization_over_axis_1(tf):
    return _batch_norm_run(tf, IMAGES, axis=1, training=True, momentum=0.5)


@program
def batch_normalization_inference_uses_moving_statistics(tf):
    names_, trainable, shape, before, moving = _batch_norm_run(tf, IMAGES, training=False, center=False)
    return names_, trainable, shape, before, moving, len(tf.get_collection(tf.GraphKeys.UPDATE_OPS))


@program
def batch_normalization_training_as_a_tensor(tf):
    x = tf.placeholder(tf.float32, [None, 4])
    training = tf.placeholder(tf.bool, [])
    layer = tf.layers.BatchNormalization(momentum=0.5)
    y = layer(x, training=training)
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        frozen = sess.run([y, updates], {x: X, training: False})[0]
        unchanged = sess.run(layer.moving_mean)
        trained = sess.run([y, updates], {x: X, training: True})[0]
        moving = sess.run([layer.moving_mean, layer.moving_variance])
    return (names(layer.variables), names(layer.trainable_variables), len(layer.updates), shapes(y),
            frozen, unchanged, trained, moving)
