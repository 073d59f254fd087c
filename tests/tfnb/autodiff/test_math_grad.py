"""Gradients of the math ops: shapes unknown while building, broadcasting, reductions, matmul flags,
ties, non-differentiable ops, and a composite loss against a hand-derived NumPy gradient."""

import numpy as np
import pytest
from registry_cases import CASES, call_example, sample

import tfnb as tf
from tfnb.framework.op_registry import registered_ops


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


def grads_of(y, xs, feed_dict=None, grad_ys=None):
    """The values of tf.gradients(y, xs)."""
    return run(tf.gradients(y, xs, grad_ys=grad_ys), feed_dict)


# -- every math example, with shapes unknown while building ---------------------------------------

MATH_CASES = [(t, i, e) for t, i, e in CASES if e.differentiable and e.build.__module__.startswith("tfnb.ops.math.")
              and tf.float64 in (e.dtypes or registered_ops()[t].dtypes)]


def _example_gradients(example, values, unknown: str | None, grad_values=None):
    """The gradients of an example's outputs wrt its float inputs and the grad_ys used: placeholders have the
    values' shapes, or unknown dims (unknown="dims") or rank ("rank"); grad_ys are fed through them too."""
    graph = tf.Graph()
    with graph.as_default():
        def placeholder(v):
            shape = {None: v.shape, "dims": [None] * v.ndim, "rank": None}[unknown]
            return tf.placeholder(tf.as_dtype(v.dtype), shape)

        inputs = [placeholder(v) for v in values]
        outputs = call_example(example.build, inputs, tf.float64)
        outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        feeds = dict(zip(inputs, values))
        with tf.Session(graph=graph) as sess:
            if grad_values is None:
                rng = np.random.default_rng(7)
                grad_values = [rng.standard_normal(np.shape(v)) for v in sess.run(outputs, feeds)]
            seeds = [placeholder(g) for g in grad_values]
            floats = [x for x, v in zip(inputs, values) if v.dtype.kind == "f"]
            grads = tf.gradients(outputs, floats, grad_ys=seeds)
            feeds.update(zip(seeds, grad_values))
            return sess.run([g for g in grads if g is not None], feeds), grad_values


@pytest.mark.parametrize("unknown", ["dims", "rank"])
@pytest.mark.parametrize("op_type,index,example", MATH_CASES, ids=[f"{t}-{i}" for t, i, _ in MATH_CASES])
def test_gradients_with_unknown_shapes_match_static_ones(op_type, index, example, unknown):
    rng = np.random.default_rng(200 + index)
    values = [sample(spec, tf.float64, example.low, example.high, rng) for spec in example.inputs]
    static, seeds = _example_gradients(example, values, None)
    dynamic, _ = _example_gradients(example, values, unknown, seeds)
    assert len(static) == len(dynamic) > 0
    for s, d in zip(static, dynamic):
        assert s.shape == d.shape
        np.testing.assert_allclose(d, s, rtol=1e-12, atol=1e-12)


# -- broadcasting ---------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", ["static", "unknown"])
def test_broadcasting_gradients_sum_back_to_each_input(shape):
    xv, yv = np.array([[1.0], [2.0]]), np.array([3.0, 4.0, 5.0])
    x = tf.placeholder(tf.float64, xv.shape if shape == "static" else [None, None])
    y = tf.placeholder(tf.float64, yv.shape if shape == "static" else [None])
    w = np.arange(6.0).reshape(2, 3)
    feeds = {x: xv, y: yv}
    cases = [(x + y, w.sum(1, keepdims=True), w.sum(0)),
             (x - y, w.sum(1, keepdims=True), -w.sum(0)),
             (x * y, (w * yv).sum(1, keepdims=True), (w * xv).sum(0)),
             (x / y, (w / yv).sum(1, keepdims=True), (-w * xv / yv ** 2).sum(0)),
             (tf.squared_difference(x, y), (2 * w * (xv - yv)).sum(1, keepdims=True), (-2 * w * (xv - yv)).sum(0))]
    for z, want_x, want_y in cases:
        gx, gy = grads_of(z, [x, y], feeds, grad_ys=w)
        np.testing.assert_allclose(gx, want_x)
        np.testing.assert_allclose(gy, want_y)
    if shape == "static":
        assert [g.shape.as_list() for g in tf.gradients(x * y, [x, y])] == [[2, 1], [3]]


def test_scalar_times_matrix_gradient_is_a_scalar():
    s, m = tf.placeholder(tf.float32, []), tf.placeholder(tf.float32, [None, 2])
    gs, gm = tf.gradients(s * m, [s, m])
    values = run([gs, gm], {s: 2.0, m: np.ones([3, 2], np.float32)})
    assert values[0].shape == () and values[0] == 6.0
    np.testing.assert_array_equal(values[1], np.full([3, 2], 2.0))


def test_select_v2_broadcasts_and_the_condition_gets_no_gradient():
    c = tf.placeholder(tf.bool, [None, 1])
    x, y = tf.placeholder(tf.float64, [3]), tf.placeholder(tf.float64, [])
    gc, gx, gy = tf.gradients(tf.where_v2(c, x, y), [c, x, y])
    assert gc is None
    values = run([gx, gy], {c: [[True], [False]], x: [1.0, 2.0, 3.0], y: 5.0})
    np.testing.assert_array_equal(values[0], [1.0, 1.0, 1.0])
    assert values[1] == 3.0


def test_select_routes_the_gradient_by_the_condition():
    x, y = tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])
    gx, gy = grads_of(tf.where([True, False], x, y), [x, y])
    assert gx.tolist() == [1.0, 0.0] and gy.tolist() == [0.0, 1.0]


# -- reductions -----------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", ["static", "unknown-dims", "unknown-rank"])
def test_reduction_gradients_with_keepdims_and_negative_axes(shape):
    xv = np.arange(1.0, 25.0).reshape(2, 3, 4)
    x = tf.placeholder(tf.float64, {"static": xv.shape, "unknown-dims": [None] * 3, "unknown-rank": None}[shape])
    sums = [tf.reduce_sum(x, axis=-1, keepdims=True), tf.reduce_sum(x, [0, -1]), tf.reduce_sum(x)]
    means = [tf.reduce_mean(x, axis=[-2], keepdims=True), tf.reduce_mean(x, axis=-3), tf.reduce_mean(x)]
    axes = tf.placeholder(tf.int32, [None])  # axes known only when run
    fed = [tf.reduce_sum(x, axes), tf.reduce_mean(x, axes, keepdims=True)]
    grads = [tf.gradients(y, x)[0] for y in sums + means + fed]
    values = run(grads, {x: xv, axes: [-1, 1]})
    expected = [1.0] * 3 + [1 / 3, 1 / 2, 1 / 24] + [1.0, 1 / 12]
    for value, want in zip(values, expected):
        np.testing.assert_allclose(value, np.full(xv.shape, want))
    if shape == "static":
        assert all(g.shape.as_list() == [2, 3, 4] for g in grads[:6])


def test_max_and_min_split_the_gradient_among_ties():
    xv = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    for x in (tf.constant(xv), tf.placeholder_with_default(xv, [None, None])):
        values = run([tf.gradients(tf.reduce_max(x, 1), x)[0], tf.gradients(tf.reduce_min(x, -1, keepdims=True), x)[0],
                      tf.gradients(tf.reduce_max(x), x)[0]])
        np.testing.assert_allclose(values[0], [[0, 0.5, 0.5], [1 / 3] * 3])
        np.testing.assert_allclose(values[1], [[1, 0, 0], [1 / 3] * 3])
        np.testing.assert_allclose(values[2], [[0, 0.5, 0.5], [0, 0, 0]])


def test_maximum_and_minimum_send_ties_to_x():
    x, y = tf.constant([1.0, 2.0, 3.0]), tf.constant([2.0, 2.0, 2.0])
    for z, want_x in [(tf.maximum(x, y), [0, 1, 1]), (tf.minimum(x, y), [1, 1, 0])]:
        gx, gy = grads_of(z, [x, y])
        assert gx.tolist() == want_x and gy.tolist() == [1 - g for g in want_x]


def test_clip_by_value_passes_the_gradient_inside_the_bounds_only():
    x = tf.constant([-2.0, 0.0, 0.5, 2.0])
    assert grads_of(tf.clip_by_value(x, -1.0, 1.0), x)[0].tolist() == [0.0, 1.0, 1.0, 0.0]


def test_prod_gradient_handles_zeros():
    xv = np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 4.0], [1.0, 2.0, 5.0]])
    for x in (tf.constant(xv), tf.placeholder_with_default(xv, None)):
        rows, everything = tf.gradients(tf.reduce_prod(x, axis=-1), x)[0], tf.gradients(tf.reduce_prod(x), x)[0]
        columns = tf.gradients(tf.reduce_prod(x, 0, keepdims=True), x)[0]
        values = run([rows, everything, columns])
        np.testing.assert_allclose(values[0], [[6, 0, 0], [0, 0, 0], [10, 5, 2]])
        np.testing.assert_allclose(values[1], np.zeros([3, 3]))
        np.testing.assert_allclose(values[2], [[0, 0, 20], [0, 4, 15], [0, 0, 12]])


@pytest.mark.parametrize("axes", [[-1], [2, 0], [1]])
def test_prod_gradient_over_axes_known_only_when_run(axes):
    xv = np.random.default_rng(4).uniform(0.5, 2.0, [2, 3, 4])
    x, fed_axes = tf.placeholder(tf.float64, None), tf.placeholder(tf.int32, [None])
    grad = grads_of(tf.reduce_prod(x, fed_axes), x, {x: xv, fed_axes: axes})[0]
    np.testing.assert_allclose(grad, np.prod(xv, axis=tuple(axes), keepdims=True) / xv)


def test_cumsum_and_cumprod_gradients_scan_the_other_way():
    x = tf.constant([1.0, 2.0, 3.0])
    values = run([tf.gradients(tf.cumsum(x), x)[0], tf.gradients(tf.cumsum(x, exclusive=True, reverse=True), x)[0],
                  tf.gradients(tf.cumprod(x), x)[0], tf.gradients(tf.cumprod(x, exclusive=True), x)[0]])
    assert [v.tolist() for v in values] == [[3, 2, 1], [0, 1, 2], [1 + 2 + 6, (2 + 6) / 2, 6 / 3], [1 + 2, 1, 0]]


def test_reduce_logsumexp_gradient_is_the_softmax():
    xv = np.array([[1.0, 2.0, 3.0], [1000.0, 1000.0, -np.inf]])
    x = tf.placeholder(tf.float64, [None, 3])
    grad = grads_of(tf.reduce_logsumexp(x, axis=1), x, {x: xv})[0]
    np.testing.assert_allclose(grad, [np.exp([1, 2, 3]) / np.exp([1, 2, 3]).sum(), [0.5, 0.5, 0.0]])


# -- matmul ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("transpose_b", [False, True])
def test_matmul_gradients_follow_the_transpose_flags(transpose_a, transpose_b):
    rng = np.random.default_rng(0)
    av, bv, gv = rng.standard_normal([2, 3]), rng.standard_normal([3, 4]), rng.standard_normal([2, 4])
    a = tf.placeholder(tf.float64, [None, None])
    b = tf.placeholder(tf.float64, [None, None])
    c = tf.matmul(a, b, transpose_a=transpose_a, transpose_b=transpose_b)
    ga, gb = grads_of(c, [a, b], {a: av.T if transpose_a else av, b: bv.T if transpose_b else bv}, grad_ys=gv)
    want_a, want_b = gv @ bv.T, av.T @ gv
    np.testing.assert_allclose(ga, want_a.T if transpose_a else want_a)
    np.testing.assert_allclose(gb, want_b.T if transpose_b else want_b)


@pytest.mark.parametrize("shape", ["static", "unknown"])
def test_batch_matmul_gradients_sum_over_broadcast_batches(shape):
    rng = np.random.default_rng(1)
    av, bv = rng.standard_normal([2, 1, 2, 3]), rng.standard_normal([3, 4, 3])
    a = tf.placeholder(tf.float64, av.shape if shape == "static" else None)
    b = tf.placeholder(tf.float64, bv.shape if shape == "static" else [None, None, None])
    c = tf.matmul(a, b, adjoint_b=True)
    gv = rng.standard_normal([2, 3, 2, 4])
    ga, gb = grads_of(c, [a, b], {a: av, b: bv}, grad_ys=gv)
    np.testing.assert_allclose(ga, (gv @ bv).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(gb, (np.swapaxes(gv, -1, -2) @ av).sum(axis=0))


# -- special cases, casts, what TF leaves without a gradient --------------------------------------


def test_pow_at_zero_has_finite_gradients():
    x, y = tf.constant([0.0, 2.0, -2.0]), tf.constant([2.0, 3.0, 2.0])
    gx, gy = grads_of(tf.pow(x, y), [x, y])
    np.testing.assert_allclose(gx, [0.0, 12.0, -4.0])
    np.testing.assert_allclose(gy, [0.0, 8 * np.log(2.0), 0.0])  # log(x) taken as 0 where x <= 0, as TF


def test_floormod_and_truncatemod_gradients():
    x, y = tf.constant([7.0, -7.0]), tf.constant([2.0, 2.0])
    gx, gy = grads_of(tf.floormod(x, y), [x, y])
    assert gx.tolist() == [1.0, 1.0] and gy.tolist() == [-3.0, 4.0]
    gx, gy = grads_of(tf.truncatemod(x, y), [x, y])
    assert gx.tolist() == [1.0, 1.0] and gy.tolist() == [-3.0, 3.0]


def test_cast_between_floats_passes_the_gradient_back_in_the_source_dtype():
    x = tf.constant([1.0, 2.0], tf.float32)
    grad = tf.gradients(tf.cast(x, tf.float64) * 3.0, x)[0]
    assert grad.dtype is tf.float32 and run(grad).tolist() == [3.0, 3.0]


def test_complex_abs_and_conj_gradients():
    z = tf.constant([3 + 4j, -2j], tf.complex128)
    np.testing.assert_allclose(grads_of(tf.abs(z), z)[0], [0.6 + 0.8j, -1j])
    np.testing.assert_allclose(grads_of(tf.conj(z), z, grad_ys=np.array([1 + 1j, 2j]))[0], [1 - 1j, -2j])


def test_sign_has_a_zero_gradient_and_floor_none():
    x = tf.constant([-1.5, 2.5])
    assert grads_of(tf.sign(x) + x, x)[0].tolist() == [1.0, 1.0]
    assert tf.gradients(tf.floor(x), x) == [None]
    assert grads_of(tf.floor(x) + tf.round(x) + tf.ceil(x) + 2 * x, x)[0].tolist() == [2.0, 2.0]


@pytest.mark.parametrize("build", [
    lambda x: tf.cast(tf.greater(x, 0.0), tf.float32),
    lambda x: tf.cast(tf.argmax(x), tf.float32),
    lambda x: tf.cast(tf.cast(x, tf.int32), tf.float32),
    lambda x: tf.floordiv(x, 2.0),
    lambda x: tf.cast(tf.reduce_any(tf.is_nan(x)), tf.float32),
    lambda x: tf.cast(tf.where(tf.logical_not(tf.is_finite(x))), tf.float32),
], ids=["greater", "argmax", "cast-to-int", "floordiv", "is-nan-any", "where"])
def test_non_differentiable_op_in_the_path_gives_none(build):
    x = tf.placeholder(tf.float32, [3])
    assert tf.gradients(tf.reduce_sum(build(x)), x) == [None]
    y = tf.reduce_sum(build(x)) + tf.reduce_sum(3.0 * x)  # another path still differentiates
    assert grads_of(y, x, {x: [1.0, -2.0, 0.5]})[0].tolist() == [3.0, 3.0, 3.0]


def test_gradients_of_non_differentiable_ops_themselves_are_none():
    x, y = tf.placeholder(tf.float32, [3]), tf.placeholder(tf.float32, [3])
    outputs = [tf.equal(x, y), tf.not_equal(x, y), tf.less(x, y), tf.less_equal(x, y), tf.greater(x, y),
               tf.greater_equal(x, y), tf.argmax(x), tf.argmin(x), tf.is_nan(x), tf.is_inf(x), tf.is_finite(x),
               tf.where(x), tf.floor(x), tf.ceil(x), tf.round(x), tf.floordiv(x, y), tf.logical_not(x > y),
               tf.logical_and(x > y, x < y), tf.logical_or(x > y, x < y), tf.reduce_any(x > y), tf.reduce_all(x > y)]
    for output in outputs:
        assert tf.gradients(output, [x, y]) == [None, None], output.op.type


def test_int_truediv_differentiates_nothing():
    i = tf.placeholder(tf.int32, [2])
    assert tf.gradients(tf.truediv(i, 2), i) == [None]


# -- gradient graphs in use -----------------------------------------------------------------------


def test_a_gradient_graph_is_fetched_and_run_twice():
    x = tf.placeholder(tf.float32, [None])
    grad = tf.gradients(tf.reduce_sum(tf.exp(x) * tf.sin(x)), x)[0]
    with tf.Session() as sess:
        for xv in (np.array([0.0, 1.0], np.float32), np.array([0.5, -1.0, 2.0], np.float32), np.zeros(0, np.float32)):
            for _ in range(2):
                np.testing.assert_allclose(sess.run(grad, {x: xv}), np.exp(xv) * (np.sin(xv) + np.cos(xv)), rtol=1e-6)


def test_logistic_regression_loss_gradient_matches_the_hand_derived_one():
    rng = np.random.default_rng(3)
    features, labels = rng.standard_normal([8, 3]), rng.integers(0, 2, [8, 1]).astype(np.float64)
    wv, bv = rng.standard_normal([3, 1]), np.array([0.2])
    x, y = tf.placeholder(tf.float64, [None, 3]), tf.placeholder(tf.float64, [None, 1])
    w, b = tf.placeholder(tf.float64, [3, 1]), tf.placeholder(tf.float64, [1])
    p = tf.sigmoid(tf.matmul(x, w) + b)
    loss = tf.reduce_mean(-y * tf.log(p) - (1 - y) * tf.log(1 - p))
    gw, gb = grads_of(loss, [w, b], {x: features, y: labels, w: wv, b: bv})
    error = 1 / (1 + np.exp(-(features @ wv + bv))) - labels
    np.testing.assert_allclose(gw, features.T @ error / 8)
    np.testing.assert_allclose(gb, error.mean(0))


def test_variables_differentiate_through_their_reads():
    v = tf.Variable([[1.0, 2.0]])
    loss = tf.reduce_sum(tf.square(tf.matmul(v, [[1.0], [1.0]])))
    grad = tf.gradients(loss, v)[0]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(grad).tolist() == [[6.0, 6.0]]
