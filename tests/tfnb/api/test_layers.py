"""tf.layers: shapes, variable scopes and reuse, regularization losses, update ops, training flags, and a model."""

import itertools

import numpy as np
import pytest

import tfnb as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()


def _run(fetches, feed_dict=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed_dict)


IMAGES = np.random.RandomState(0).uniform(-1, 1, (2, 7, 6, 3)).astype(np.float32)


# -- shapes ----------------------------------------------------------------------------------------


def test_output_shapes_follow_padding_strides_and_unknown_dims():
    x = tf.placeholder(tf.float32, [None, 9, None, 3])
    assert tf.layers.conv2d(x, 4, 3).shape.as_list() == [None, 7, None, 4]
    assert tf.layers.conv2d(x, 4, (3, 1), strides=2, padding="SAME").shape.as_list() == [None, 5, None, 4]
    assert tf.layers.conv2d_transpose(x, 2, 3, strides=2).shape.as_list() == [None, 19, None, 2]
    assert tf.layers.max_pooling2d(x, 2, 2).shape.as_list() == [None, 4, None, 3]
    assert tf.layers.average_pooling2d(x, 2, 2, padding="same").shape.as_list() == [None, 5, None, 3]
    assert tf.layers.flatten(tf.placeholder(tf.float32, [None, 2, 3])).shape.as_list() == [None, 6]
    assert tf.layers.dense(tf.placeholder(tf.float32, [None, 2, 3]), 5).shape.as_list() == [None, 2, 5]


def test_conv2d_transpose_of_an_unknown_size_runs():
    x = tf.placeholder(tf.float32, [None, None, None, 3])
    y = tf.layers.conv2d_transpose(x, 2, 3, strides=2)
    assert _run(y, {x: IMAGES}).shape == (2, 15, 13, 2)


def test_channels_first_matches_channels_last():
    init, bias = tf.constant_initializer(np.linspace(-1, 1, 3 * 3 * 3 * 2)), tf.constant_initializer([0.5, -1.0])
    nhwc, nchw = tf.constant(IMAGES), tf.constant(IMAGES.transpose(0, 3, 1, 2))
    pairs = [(tf.layers.conv2d(nhwc, 2, 3, kernel_initializer=init, bias_initializer=bias, padding="same"),
              tf.layers.conv2d(nchw, 2, 3, kernel_initializer=init, bias_initializer=bias, padding="same",
                               data_format="channels_first")),
             (tf.layers.max_pooling2d(nhwc, 2, 2), tf.layers.max_pooling2d(nchw, 2, 2, data_format="channels_first")),
             (tf.layers.flatten(nhwc), tf.layers.flatten(nchw, data_format="channels_first"))]
    for last, first in _run(pairs):
        np.testing.assert_allclose(first if first.ndim == 2 else first.transpose(0, 2, 3, 1), last, rtol=1e-5, atol=1e-6)


def test_bad_arguments_are_value_errors():
    x = tf.constant(IMAGES)
    with pytest.raises(ValueError, match="padding"):
        tf.layers.conv2d(x, 2, 3, padding="full")
    with pytest.raises(ValueError, match="data_format"):
        tf.layers.max_pooling2d(x, 2, 2, data_format="NHWC")
    with pytest.raises(ValueError, match="kernel_size"):
        tf.layers.conv2d(x, 2, (3, 3, 3))
    with pytest.raises(ValueError, match="dilation_rate"):
        tf.layers.conv2d(x, 2, 3, strides=2, dilation_rate=2)
    with pytest.raises(ValueError, match="last dimension"):
        tf.layers.dense(tf.placeholder(tf.float32, [None, None]), 2)
    with pytest.raises(ValueError, match="ndim=4"):
        tf.layers.conv2d(tf.placeholder(tf.float32, [None, 3]), 2, 3)


# -- variables, scopes and reuse -------------------------------------------------------------------


def test_variables_are_named_by_layer_scope():
    x = tf.constant(IMAGES)
    tf.layers.conv2d(x, 2, 3)
    tf.layers.conv2d(x, 2, 3, use_bias=False)
    with tf.variable_scope("head"):
        tf.layers.dense(tf.layers.flatten(x), 2, name="logits")
    assert [v.name for v in tf.trainable_variables()] == [
        "conv2d/kernel:0", "conv2d/bias:0", "conv2d_1/kernel:0", "head/logits/kernel:0", "head/logits/bias:0"]


def test_a_layer_object_shares_its_variables_across_calls():
    layer = tf.layers.Dense(3, activation=tf.nn.relu)
    x = tf.placeholder(tf.float32, [None, 4])
    first, second = layer(x), layer.apply(x)
    assert layer.variables == [layer.kernel, layer.bias] == layer.trainable_variables
    assert layer.scope_name == "dense" and len(tf.global_variables()) == 2
    assert first.name == "dense/Relu:0" and second.name == "dense/Relu_1:0"
    a, b = _run([first, second], {x: np.ones((2, 4))})
    np.testing.assert_array_equal(a, b)


def test_reuse_by_name_and_auto_reuse():
    x = tf.constant(np.ones((2, 4), np.float32))
    tf.layers.dense(x, 3, name="fc")
    tf.layers.dense(x, 3, name="fc", reuse=True)
    with pytest.raises(ValueError, match="already exists"):
        tf.layers.dense(x, 3, name="fc")
    with pytest.raises(ValueError, match="does not exist"):
        tf.layers.dense(x, 3, name="new", reuse=True)
    for _ in range(2):
        with tf.variable_scope("tower", reuse=tf.AUTO_REUSE):
            tf.layers.conv2d(tf.constant(IMAGES), 2, 3, name="conv")
    assert [v.name for v in tf.global_variables()] == ["fc/kernel:0", "fc/bias:0", "tower/conv/kernel:0",
                                                       "tower/conv/bias:0"]


def test_scope_initializer_and_untrainable_layers():
    with tf.variable_scope("net", initializer=tf.ones_initializer()):
        y = tf.layers.dense(tf.constant([[1.0, 2.0]]), 3, trainable=False)
    np.testing.assert_array_equal(_run(y), [[3.0, 3.0, 3.0]])
    assert tf.trainable_variables() == [] and len(tf.global_variables()) == 2


def test_regularizers_add_losses_once_per_variable():
    x = tf.constant(np.ones((2, 4), np.float32))
    layer = tf.layers.Dense(3, kernel_initializer=tf.ones_initializer(), bias_initializer=tf.ones_initializer(),
                            kernel_regularizer=tf.contrib.layers.l2_regularizer(0.5),
                            bias_regularizer=tf.contrib.layers.l1_regularizer(2.0), activity_regularizer=tf.reduce_sum)
    layer(x)
    layer(x)
    losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert [t.name for t in losses[:2]] == ["dense/kernel/Regularizer/l2_regularizer:0",
                                            "dense/bias/Regularizer/l1_regularizer:0"]
    assert layer.losses == losses and len(losses) == 4  # two activity losses: one per call
    # 0.5 * sum(1^2) / 2 over 12 weights, 2 * 3 biases, and sum(outputs (5 each)) / batch of 2
    np.testing.assert_allclose(_run(losses), [3.0, 6.0, 15.0, 15.0])


# -- dropout and batch normalization -----------------------------------------------------------------


def test_dropout_with_a_training_tensor():
    x = tf.ones([200, 50])
    training = tf.placeholder(tf.bool, [])
    y = tf.layers.dropout(x, rate=0.25, training=training, seed=1)
    np.testing.assert_array_equal(_run(y, {training: False}), np.ones((200, 50)))
    dropped = _run(y, {training: True})
    assert set(np.unique(dropped).tolist()) == {0.0, np.float32(1 / 0.75)}
    assert 0.2 < np.mean(dropped == 0) < 0.3
    assert tf.layers.dropout(x, training=tf.constant(False)).op.type == "Identity"


def test_batch_normalization_update_ops_and_training_tensor():
    x = tf.placeholder(tf.float32, [None, 3])
    training = tf.placeholder(tf.bool, [])
    layer = tf.layers.BatchNormalization(momentum=0.5, center=False)
    y = layer(x, training=training)
    assert [v.name for v in layer.variables] == ["batch_normalization/gamma:0", "batch_normalization/moving_mean:0",
                                                 "batch_normalization/moving_variance:0"]
    assert layer.trainable_variables == [layer.gamma]
    assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == layer.updates and len(layer.updates) == 2
    batch = np.array([[1.0, 2.0, 3.0], [3.0, 6.0, 3.0]], np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        inferred = sess.run([y, layer.updates], {x: batch, training: False})[0]
        np.testing.assert_allclose(inferred, batch / np.sqrt(1.001), rtol=1e-6)
        np.testing.assert_array_equal(sess.run(layer.moving_mean), [0, 0, 0])
        trained = sess.run([y, layer.updates], {x: batch, training: True})[0]
        np.testing.assert_allclose(trained, [[-1, -1, 0], [1, 1, 0]], atol=2e-3)
        np.testing.assert_allclose(sess.run(layer.moving_mean), [1.0, 2.0, 1.5])
        np.testing.assert_allclose(sess.run(layer.moving_variance), [1.0, 2.5, 0.5])


def test_batch_normalization_inference_adds_no_updates():
    tf.layers.batch_normalization(tf.constant(IMAGES), training=False)
    assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == []
    with pytest.raises(ValueError, match="renorm"):
        tf.layers.batch_normalization(tf.constant(IMAGES), renorm=True)


# -- a model ---------------------------------------------------------------------------------------


def test_a_small_cnn_of_layers_learns_the_digits():
    images, labels = tf.datasets.load_digits(as_images=True)
    x_train, x_test, y_train, y_test = tf.datasets.train_test_split(images, labels, test_size=0.25, seed=0)
    tf.set_random_seed(0)
    x = tf.placeholder(tf.float32, [None, 8, 8, 1])
    y = tf.placeholder(tf.int32, [None])
    training = tf.placeholder_with_default(False, [])
    net = tf.layers.conv2d(x, 8, 3, padding="same", activation=tf.nn.relu)
    net = tf.layers.max_pooling2d(net, 2, 2)
    net = tf.layers.batch_normalization(net, training=training)
    net = tf.layers.dropout(tf.layers.flatten(net), 0.1, training=training)
    logits = tf.layers.dense(net, 10, kernel_regularizer=tf.contrib.layers.l2_regularizer(1e-4))
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    loss += tf.add_n(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES))
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train_op = tf.train.AdamOptimizer(0.02).minimize(loss)
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1, output_type=tf.int32), y), tf.float32))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        batches = tf.datasets.minibatches((x_train, y_train), 64, seed=0)
        for bx, by in itertools.islice(batches, 150):
            sess.run(train_op, {x: bx, y: by, training: True})
        assert sess.run(accuracy, {x: x_test, y: y_test}) > 0.9
