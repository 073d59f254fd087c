"""Gradients of the array and nn ops beyond the generic finite-difference checks: strided-slice masks,
gather's sparse gradient, unknown static shapes, stable cross-entropy gradients, variables read twice."""

import numpy as np
import pytest

import tfnb as tf

RNG = np.random.default_rng(7)


def run_gradients(build, value: np.ndarray, known_shape: bool = True, seed: np.ndarray | None = None):
    """(gradient of build(x) w.r.t. x, the weights it was seeded with), x fed `value`."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.as_dtype(value.dtype), value.shape if known_shape else [None] * value.ndim)
        y = build(x)
        with tf.Session() as sess:
            weights = RNG.standard_normal(np.shape(sess.run(y, {x: value}))) if seed is None else seed
            grad = tf.gradients(y, x, grad_ys=weights)[0]
            return sess.run(tf.convert_to_tensor(grad), {x: value}), weights


def scatter(shape, index, weights) -> np.ndarray:
    """What a slice's gradient must be: the weights placed where the slice came from, zeros elsewhere."""
    out = np.zeros(shape)
    out[index] = weights
    return out


SLICES = [np.s_[1:, ::-1], np.s_[..., 0], np.s_[:, None, -1], np.s_[::2, -2:0:-2, None, ...], np.s_[-1],
          np.s_[1, ..., 1:2, None], np.s_[7:-9:-1, 1:], np.s_[None, ..., None], np.s_[-3:, :, ::3]]


@pytest.mark.parametrize("known_shape", [True, False], ids=["static", "unknown"])
@pytest.mark.parametrize("index", SLICES, ids=[str(i) for i in range(len(SLICES))])
def test_strided_slice_gradient_places_the_gradient_where_the_slice_came_from(index, known_shape):
    x = RNG.standard_normal((4, 5, 3))
    grad, weights = run_gradients(lambda t: t[index], x, known_shape)
    np.testing.assert_array_equal(grad, scatter(x.shape, index, weights))


def test_strided_slice_gradient_with_explicit_masks():
    x = RNG.standard_normal((3, 4, 2))
    grad, weights = run_gradients(lambda t: tf.strided_slice(t, [0, 3, 1], [2, 0, 2], [1, -2, 1], begin_mask=1,
                                                             end_mask=2, shrink_axis_mask=4), x)
    np.testing.assert_array_equal(grad, scatter(x.shape, np.s_[:2, 3::-2, 1], weights))


def test_strided_slice_gradient_with_bounds_known_only_at_run_time():
    x = RNG.standard_normal((5, 3))
    with tf.Graph().as_default():
        t = tf.placeholder(tf.float64, [None, 3])
        i = tf.placeholder(tf.int32, [])
        grad = tf.gradients(t[i:, i], t)[0]
        with tf.Session() as sess:
            actual = sess.run(grad, {t: x, i: 2})
    np.testing.assert_array_equal(actual, scatter(x.shape, np.s_[2:, 2], 1.0))


def test_gather_gradient_is_indexed_slices_as_tf_returns_them():
    params = RNG.standard_normal((5, 3))
    ids = np.array([[4, 0], [4, 4]], np.int32)
    weights = RNG.standard_normal((2, 2, 3))
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float64, [5, 3])
        grad = tf.gradients(tf.gather(p, ids), p, grad_ys=weights)[0]
        assert isinstance(grad, tf.IndexedSlices)
        assert grad.indices.dtype is tf.int32 and grad.dense_shape.dtype is tf.int32
        assert grad.values.shape.as_list() == [4, 3]
        with tf.Session() as sess:
            values, indices, dense_shape, dense = sess.run(
                [grad.values, grad.indices, grad.dense_shape, tf.convert_to_tensor(grad)], {p: params})
    np.testing.assert_array_equal(values, weights.reshape(4, 3))
    np.testing.assert_array_equal(indices, ids.ravel())
    np.testing.assert_array_equal(dense_shape, [5, 3])
    expected = np.zeros((5, 3))
    np.add.at(expected, ids.ravel(), weights.reshape(4, 3))  # repeated rows add up
    np.testing.assert_allclose(dense, expected)


def test_gather_gradients_of_two_gathers_concatenate_and_stay_sparse():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [None, 2])
        loss = tf.reduce_sum(tf.gather(p, [1, 1])) + tf.reduce_sum(tf.gather(p, [0]))
        grad = tf.gradients(loss, p)[0]
        assert isinstance(grad, tf.IndexedSlices)
        with tf.Session() as sess:
            indices, dense = sess.run([grad.indices, tf.convert_to_tensor(grad)], {p: np.zeros((3, 2))})
    np.testing.assert_array_equal(sorted(indices), [0, 1, 1])
    np.testing.assert_array_equal(dense, [[1, 1], [2, 2], [0, 0]])


@pytest.mark.parametrize("known_shape", [True, False], ids=["static", "unknown"])
def test_gather_gradient_along_an_inner_axis_is_dense_and_sums_repeats(known_shape):
    params = RNG.standard_normal((2, 4, 3))
    ids = np.array([3, 1, 3], np.int64)
    grad, weights = run_gradients(lambda p: tf.gather(p, ids, axis=-2), params, known_shape)
    expected = np.zeros_like(params)
    np.add.at(expected, (slice(None), ids), weights)
    np.testing.assert_allclose(grad, expected)


def test_tile_gradient_with_unknown_shapes():
    x = RNG.standard_normal((2, 3))
    with tf.Graph().as_default():
        t = tf.placeholder(tf.float64, [None, None])
        multiples = tf.placeholder(tf.int32, [2])
        y = tf.tile(t, multiples)
        weights = tf.placeholder(tf.float64, [None, None])
        grad = tf.gradients(y, t, grad_ys=weights)[0]
        assert grad.shape.as_list() == [None, None]
        w = RNG.standard_normal((6, 6))
        with tf.Session() as sess:
            actual = sess.run(grad, {t: x, multiples: [3, 2], weights: w})
    np.testing.assert_allclose(actual, w.reshape(3, 2, 2, 3).sum((0, 2)))


@pytest.mark.parametrize("mode", ["CONSTANT", "REFLECT", "SYMMETRIC"])
def test_pad_gradient_with_unknown_shapes(mode):
    x = RNG.standard_normal((3, 4))
    widths = [[2, 1], [0, 3]]
    grad, weights = run_gradients(lambda t: tf.pad(t, widths, mode), x, known_shape=False)
    # Each padded position's source element, -1 for the constant fill.
    positions = np.arange(x.size).reshape(x.shape)
    if mode == "CONSTANT":
        sources = np.pad(positions, widths, constant_values=-1)
    else:
        sources = np.pad(positions, widths, mode.lower())
    expected = np.zeros(x.size)
    picked = sources.ravel() >= 0
    np.add.at(expected, sources.ravel()[picked], weights.ravel()[picked])
    np.testing.assert_allclose(grad, expected.reshape(x.shape))


def test_pad_gradient_gives_constant_values_none_as_tf():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2])
        value = tf.placeholder(tf.float32, [])
        assert tf.gradients(tf.pad(x, [[1, 1]], constant_values=value), [x, value])[1] is None


def test_concat_gradient_with_unknown_shapes_and_axis():
    a, b = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 1))
    with tf.Graph().as_default():
        x, y = tf.placeholder(tf.float64, [None, None]), tf.placeholder(tf.float64, None)
        axis = tf.placeholder(tf.int32, [])
        weights = tf.placeholder(tf.float64)
        grads = tf.gradients(tf.concat([x, y], axis), [x, y], grad_ys=weights)
        w = RNG.standard_normal((2, 4))
        with tf.Session() as sess:
            ga, gb = sess.run(grads, {x: a, y: b, axis: -1, weights: w})
    np.testing.assert_array_equal(ga, w[:, :3])
    np.testing.assert_array_equal(gb, w[:, 3:])


def test_transpose_gradient_with_a_permutation_known_only_at_run_time():
    x = RNG.standard_normal((2, 3, 4))
    with tf.Graph().as_default():
        t = tf.placeholder(tf.float64, [2, 3, 4])
        perm = tf.placeholder(tf.int32, [3])
        weights = tf.placeholder(tf.float64)
        grad = tf.gradients(tf.transpose(t, perm), t, grad_ys=weights)[0]
        assert any(op.type == "InvertPermutation" for op in tf.get_default_graph().get_operations())
        w = RNG.standard_normal((4, 2, 3))
        with tf.Session() as sess:
            actual = sess.run(grad, {t: x, perm: [2, 0, 1], weights: w})
    np.testing.assert_array_equal(actual, w.transpose(1, 2, 0))


def test_invert_permutation_rejects_what_is_not_a_permutation():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.int32, [None])
        inverse = tf.invert_permutation(p)
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(inverse, {p: [1, 2, 0]}), [2, 0, 1])
            for bad in ([0, 0, 1], [0, 3, 1]):
                with pytest.raises(tf.errors.InvalidArgumentError):
                    sess.run(inverse, {p: bad})


def test_not_differentiable_ops_give_none():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 3])
        through = [tf.stop_gradient(x), tf.zeros_like(x), tf.ones_like(x), tf.cast(tf.shape(x), tf.float32),
                   tf.cast(tf.size(x), tf.float32), tf.cast(tf.rank(x), tf.float32)]
        assert tf.gradients(through, x) == [None]


def test_fill_gradient_sums_into_the_value():
    with tf.Graph().as_default():
        value = tf.placeholder(tf.float64, [])
        weights = RNG.standard_normal((2, 3))
        grad = tf.gradients(tf.fill([2, 3], value), value, grad_ys=weights)[0]
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(grad, {value: 1.5}), weights.sum())


def test_bias_add_gradient_sums_all_but_the_channel_axis():
    value, bias = RNG.standard_normal((2, 3, 4, 5)), RNG.standard_normal(3)
    weights = RNG.standard_normal((2, 3, 4, 5))
    with tf.Graph().as_default():
        v, b = tf.placeholder(tf.float64, [None, 3, None, None]), tf.placeholder(tf.float64, [3])
        grads = tf.gradients(tf.nn.bias_add(v, b, data_format="NCHW"), [v, b], grad_ys=weights)
        assert grads[1].op.type == "BiasAddGrad" and grads[1].shape.as_list() == [3]
        with tf.Session() as sess:
            gv, gb = sess.run(grads, {v: value, b: bias})
    np.testing.assert_array_equal(gv, weights)
    np.testing.assert_allclose(gb, weights.sum((0, 2, 3)))


# -- cross-entropy gradients on large logits, against hand-derived formulas ---------------------------

LOGITS = np.array([[1000.0, 0.0, -1000.0, 999.0], [-1000.0, -1000.0, -999.0, -1000.0], [0.5, -0.25, 3.0, 1.0]])


def np_softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def np_log_softmax(x):
    shifted = x - x.max(-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))


def xent_gradients(loss_fn, logits, labels, label_dtype=tf.float64):
    """Gradients of sum(w * loss) for logits and labels, and w."""
    weights = RNG.standard_normal(logits.shape[:-1])
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, logits.shape)
        z = tf.placeholder(label_dtype, labels.shape)
        grads = tf.gradients(loss_fn(labels=z, logits=x), [x, z], grad_ys=weights)
        with tf.Session() as sess:
            present = sess.run([g for g in grads if g is not None], {x: logits, z: labels})
    return present, grads, weights


def test_softmax_cross_entropy_gradients_on_large_logits():
    labels = np_softmax(RNG.standard_normal(LOGITS.shape))
    (g_logits, g_labels), _, w = xent_gradients(tf.nn.softmax_cross_entropy_with_logits_v2, LOGITS, labels)
    assert np.isfinite(g_logits).all() and np.isfinite(g_labels).all()
    np.testing.assert_allclose(g_logits, w[:, None] * (np_softmax(LOGITS) - labels), atol=1e-12)
    np.testing.assert_allclose(g_labels, -w[:, None] * np_log_softmax(LOGITS))


def test_deprecated_softmax_cross_entropy_gives_labels_no_gradient():
    labels = np_softmax(RNG.standard_normal(LOGITS.shape))
    (g_logits,), grads, w = xent_gradients(tf.nn.softmax_cross_entropy_with_logits, LOGITS, labels)
    assert grads[1] is None
    np.testing.assert_allclose(g_logits, w[:, None] * (np_softmax(LOGITS) - labels), atol=1e-12)


def test_sparse_softmax_cross_entropy_gradient_on_large_logits():
    labels = np.array([0, 2, 1], np.int32)
    (g_logits,), grads, w = xent_gradients(tf.nn.sparse_softmax_cross_entropy_with_logits, LOGITS, labels, tf.int32)
    assert grads[1] is None
    expected = w[:, None] * (np_softmax(LOGITS) - np.eye(4)[labels])
    np.testing.assert_allclose(g_logits, expected, atol=1e-12)


def test_sigmoid_cross_entropy_gradients_on_large_logits():
    labels = RNG.uniform(0, 1, LOGITS.shape)
    weights = RNG.standard_normal(LOGITS.shape)
    with tf.Graph().as_default():
        x, z = tf.placeholder(tf.float64, LOGITS.shape), tf.placeholder(tf.float64, LOGITS.shape)
        grads = tf.gradients(tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x), [x, z], grad_ys=weights)
        with tf.Session() as sess:
            g_logits, g_labels = sess.run(grads, {x: LOGITS, z: labels})
    decay = np.exp(-np.abs(LOGITS))  # sigmoid without overflow: 1 / (1 + e^-|x|) for x >= 0, e^-|x| / (1 + e^-|x|) below
    sigmoid = np.where(LOGITS >= 0, 1, decay) / (1 + decay)
    np.testing.assert_allclose(g_logits, weights * (sigmoid - labels), atol=1e-12)
    np.testing.assert_allclose(g_labels, -weights * LOGITS)


@pytest.mark.parametrize("fn,reference", [(tf.nn.softmax, np_softmax), (tf.nn.log_softmax, np_log_softmax)])
def test_softmax_gradients_stay_finite_on_large_logits(fn, reference):
    grad, weights = run_gradients(fn, LOGITS)
    y = reference(LOGITS)
    if fn is tf.nn.softmax:
        expected = (weights - (weights * y).sum(-1, keepdims=True)) * y
    else:
        expected = weights - np.exp(y) * weights.sum(-1, keepdims=True)
    np.testing.assert_allclose(grad, expected, atol=1e-12)


# -- variables --------------------------------------------------------------------------------------

def test_gradient_of_a_variable_read_twice_adds_up():
    with tf.Graph().as_default():
        v = tf.Variable([1.0, -2.0, 3.0], dtype=tf.float64)
        grad = tf.gradients(v * v + v, v)[0]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_allclose(sess.run(grad), [3.0, -3.0, 7.0])


def test_gradient_of_a_gathered_variable_is_sparse():
    with tf.Graph().as_default():
        v = tf.Variable(np.arange(8.0).reshape(4, 2))
        grad = tf.gradients(tf.reduce_sum(tf.gather(v, [3, 1, 3])), v)[0]
        assert isinstance(grad, tf.IndexedSlices)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(grad.indices), [3, 1, 3])
            np.testing.assert_array_equal(sess.run(tf.convert_to_tensor(grad)), [[0, 0], [1, 1], [0, 0], [2, 2]])
