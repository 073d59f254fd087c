"""tf.nn semantics beyond the generic forward cases: stability, TF's argument rules, errors, layouts."""

import numpy as np
import pytest

import tfnb as tf


def zeros(shape, dtype=tf.float32):
    return tf.constant(np.zeros(shape, dtype.np_dtype))


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


# -- numerical stability --------------------------------------------------------------------------


@pytest.mark.parametrize("dtype,huge", [(tf.float32, 1e30), (tf.float64, 1e300)])
def test_huge_logits_give_finite_losses(dtype, huge):
    logits = tf.constant([[huge, -huge, 0.0]], dtype)
    labels = tf.constant([[0.0, 1.0, 0.0]], dtype)
    dense = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
    sparse = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[1], logits=logits)
    sigmoid = tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
    results = run([dense, sparse, sigmoid, tf.nn.softmax(logits), tf.nn.log_softmax(logits),
                   tf.nn.softplus(logits), tf.nn.elu(logits)])
    for value in results:
        assert np.all(np.isfinite(value)), results
    dense_loss, sparse_loss, sigmoid_loss, probs, log_probs, soft, _ = results
    np.testing.assert_allclose(dense_loss, [2 * huge], rtol=1e-6)
    np.testing.assert_allclose(sparse_loss, [2 * huge], rtol=1e-6)
    np.testing.assert_allclose(sigmoid_loss, [[huge, huge, np.log(2)]], rtol=1e-6)
    np.testing.assert_allclose(probs, [[1, 0, 0]])
    np.testing.assert_allclose(log_probs, [[0, -2 * huge, -huge]], rtol=1e-6)
    np.testing.assert_allclose(soft, [[huge, 0, np.log(2)]], rtol=1e-6)


def test_float16_softmax_sums_in_float32():
    logits = tf.constant([[10.0] * 4000], tf.float16)
    probs = run(tf.nn.softmax(logits))
    assert probs.dtype == np.float16
    np.testing.assert_allclose(probs, 1 / 4000, rtol=1e-2)


def test_softplus_of_large_negative_is_tiny_not_zero():
    value = run(tf.nn.softplus(tf.constant([-50.0], tf.float64)))
    np.testing.assert_allclose(value, np.exp(-50.0), rtol=1e-12)


# -- TF's argument rules --------------------------------------------------------------------------


@pytest.mark.parametrize("loss", [tf.nn.sigmoid_cross_entropy_with_logits, tf.nn.softmax_cross_entropy_with_logits_v2,
                                  tf.nn.softmax_cross_entropy_with_logits,
                                  tf.nn.sparse_softmax_cross_entropy_with_logits])
def test_cross_entropies_require_named_arguments(loss):
    labels, logits = tf.constant([1.0, 0.0]), tf.constant([0.5, 0.5])
    with pytest.raises(ValueError, match="Only call .* with named arguments"):
        loss(labels, logits)
    with pytest.raises(ValueError, match="Both labels and logits must be provided"):
        loss(labels=labels)


def test_python_labels_take_the_dtype_of_the_logits():
    logits = tf.constant([[1.0, 2.0]], tf.float64)
    loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=[[0.5, 0.5]], logits=logits)
    assert loss.dtype is tf.float64
    assert tf.nn.sigmoid_cross_entropy_with_logits(labels=[[1.0, 0.0]], logits=logits).dtype is tf.float64


def test_mixed_dtypes_are_an_error_naming_both():
    with pytest.raises(TypeError, match="float64.*float32"):
        tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.constant([1.0], tf.float64), logits=tf.constant([1.0]))


def test_v1_softmax_cross_entropy_stops_gradients_into_labels():
    labels = tf.constant([[0.0, 1.0]])
    loss = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=tf.constant([[1.0, 2.0]]))
    assert loss.op.inputs[1].op.type == "StopGradient"
    v2 = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=tf.constant([[1.0, 2.0]]))
    assert v2.op.inputs[1] is labels
    np.testing.assert_allclose(*run([loss, v2]))


def test_default_names_follow_tf():
    x = tf.constant([[1.0, 2.0]])
    assert tf.nn.relu(x).op.name == "Relu"
    assert tf.nn.softmax(x).op.name == "Softmax"
    assert tf.nn.bias_add(x, [1.0, 2.0]).op.name == "BiasAdd"
    assert tf.nn.l2_loss(x).op.name == "L2Loss"
    assert tf.nn.sigmoid_cross_entropy_with_logits(labels=x, logits=x).op.name == "logistic_loss"
    assert tf.nn.relu(x, name="act").name == "act:0"


def test_leaky_relu_alpha_and_integer_features():
    x = tf.constant([-2.0, 3.0])
    np.testing.assert_allclose(run(tf.nn.leaky_relu(x, alpha=0.1)), [-0.2, 3.0], rtol=1e-6)
    with pytest.raises(TypeError, match="int32"):
        tf.nn.leaky_relu(tf.constant([1, 2]))


def test_relu_keeps_integer_dtypes():
    result = run(tf.nn.relu6(tf.constant([-3, 2, 9], tf.int8)))
    assert result.dtype == np.int8
    np.testing.assert_array_equal(result, [0, 2, 6])


def test_l2_loss_is_a_scalar():
    t = tf.placeholder(tf.float32, [None, 3])
    loss = tf.nn.l2_loss(t)
    assert loss.shape == tf.TensorShape([])
    assert run(loss, {t: [[1, 2, 3], [0, 0, 1]]}) == pytest.approx(7.5)
    with pytest.raises(TypeError):
        tf.nn.l2_loss(tf.constant([1, 2]))


# -- sparse labels --------------------------------------------------------------------------------


@pytest.mark.parametrize("bad,label_dtype", [(5, tf.int32), (-1, tf.int64), (-3, tf.int32), (3, tf.int64)])
def test_sparse_label_out_of_range_is_invalid_argument(bad, label_dtype):
    labels = tf.placeholder(label_dtype, [None])
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=zeros([2, 3]))
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        run(loss, {labels: [1, bad]})
    assert f"Received a label value of {bad} which is outside the valid range of [0, 3)" in str(info.value)
    assert info.value.op is loss.op


def test_sparse_static_checks():
    assert tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=zeros([2, 3], tf.int64), logits=zeros([2, 3, 5])).shape == tf.TensorShape([2, 3])
    with pytest.raises(ValueError, match="Rank mismatch"):
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=zeros([2], tf.int32), logits=zeros([2, 3, 5]))
    with pytest.raises(ValueError, match="Shape mismatch"):
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=zeros([3], tf.int32), logits=zeros([2, 5]))
    with pytest.raises(TypeError, match="labels"):
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=zeros([2]), logits=zeros([2, 5]))
    with pytest.raises(ValueError, match="scalar"):
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=zeros([], tf.int32), logits=zeros([]))


def test_sparse_shapes_checked_when_static_shapes_are_unknown():
    labels = tf.placeholder(tf.int32)
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=zeros([2, 3]))
    assert loss.shape == tf.TensorShape([2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="shape"):
        run(loss, {labels: [1]})


# -- bias_add -------------------------------------------------------------------------------------


def test_bias_add_nchw_adds_along_dimension_one():
    value = np.arange(2 * 3 * 2 * 2, dtype=np.float32).reshape(2, 3, 2, 2)
    bias = np.array([10, 20, 30], np.float32)
    result = tf.nn.bias_add(value, bias, data_format="NCHW")
    assert result.shape == tf.TensorShape([2, 3, 2, 2])
    np.testing.assert_array_equal(run(result), value + bias[:, None, None])
    np.testing.assert_array_equal(run(tf.nn.bias_add(value, [1.0, 2.0], data_format="NHWC")), value + [1, 2])


def test_bias_add_shape_rules():
    x = tf.placeholder(tf.float32, [None, None, 4])
    assert tf.nn.bias_add(x, zeros([3]), data_format="NCHW").shape == tf.TensorShape([None, 3, 4])
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 4"):
        tf.nn.bias_add(zeros([2, 3]), zeros([4]))
    with pytest.raises(ValueError, match="at least rank 3"):
        tf.nn.bias_add(zeros([2, 3]), zeros([3]), data_format="NCHW")
    with pytest.raises(ValueError, match="rank 1"):
        tf.nn.bias_add(zeros([2, 3]), zeros([1, 3]))
    with pytest.raises(ValueError, match="data_format"):
        tf.nn.bias_add(zeros([2, 3]), zeros([3]), data_format="HWCN")
    with pytest.raises(ValueError, match="float64"):
        tf.nn.bias_add(zeros([2, 3]), tf.constant([1.0, 2.0, 3.0], tf.float64))


def test_bias_add_mismatch_found_at_run_time():
    x = tf.placeholder(tf.float32, [None, None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="as many biases"):
        run(tf.nn.bias_add(x, zeros([3])), {x: np.zeros((2, 1))})


# -- softmax axis ---------------------------------------------------------------------------------


def test_softmax_axis_and_dim():
    logits = np.random.default_rng(0).normal(size=(2, 3, 4)).astype(np.float32)
    along_1 = run(tf.nn.softmax(logits, axis=1))
    np.testing.assert_allclose(along_1.sum(axis=1), np.ones((2, 4)), rtol=1e-6)
    np.testing.assert_allclose(run(tf.nn.softmax(logits, dim=1)), along_1)
    np.testing.assert_allclose(run(tf.nn.softmax(logits, axis=-2)), along_1)
    np.testing.assert_allclose(run(tf.nn.softmax(logits)).sum(axis=-1), np.ones((2, 3)), rtol=1e-6)
    np.testing.assert_allclose(np.exp(run(tf.nn.log_softmax(logits, axis=0))).sum(axis=0), np.ones((3, 4)), rtol=1e-6)


def test_softmax_axis_errors():
    with pytest.raises(ValueError, match="Cannot specify both"):
        tf.nn.softmax(zeros([2, 3]), axis=0, dim=0)
    with pytest.raises(ValueError, match="range"):
        tf.nn.softmax(zeros([2, 3]), axis=2)
    with pytest.raises(ValueError, match="at least rank 1"):
        tf.nn.softmax(tf.constant(1.0))
    with pytest.raises(TypeError, match="int32"):
        tf.nn.softmax(tf.constant([1, 2]))
    assert tf.nn.softmax(tf.placeholder(tf.float32), axis=5).shape.ndims is None


def test_softmax_cross_entropy_axis_drops_that_dimension():
    logits = tf.placeholder(tf.float32, [2, 3, None])
    loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=zeros([2, 3, 4]), logits=logits, axis=1)
    assert loss.shape == tf.TensorShape([2, 4])
    with pytest.raises(ValueError, match="same shape"):
        tf.nn.softmax_cross_entropy_with_logits_v2(labels=zeros([2, 4]), logits=zeros([2, 5]))
