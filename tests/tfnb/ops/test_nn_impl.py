"""Composite tf.nn functions, segment sums and regularization: TF1 semantics beyond the generic op cases."""

import numpy as np
import pytest

import tfnb as tf
from tfnb.ops.nn_impl import _np_lrn


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


def np_segment_sum(data, ids, count):
    out = np.zeros((count,) + data.shape[ids.ndim:], data.dtype)
    kept = ids >= 0
    np.add.at(out, ids[kept], data[kept])
    return out


# -- unsorted_segment_sum -------------------------------------------------------------------------


@pytest.mark.parametrize("rows,width,count", [(50, 3, 7), (20, 4, 500), (300, 1, 40), (8, 0, 3)],
                         ids=["bincount", "sorting", "vector-like", "empty-rows"])
@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.int32, tf.complex64])
def test_unsorted_segment_sum_matches_add_at(rows, width, count, dtype):
    rng = np.random.default_rng(rows)
    data = (rng.standard_normal((rows, width)) * 10).astype(dtype.np_dtype)
    ids = rng.integers(-2, count, rows).astype(np.int64)  # repeated ids, and negative ones TF drops
    result = run(tf.math.unsorted_segment_sum(data, ids, count))
    assert result.dtype == dtype.np_dtype
    np.testing.assert_allclose(result, np_segment_sum(data, ids, count), rtol=1e-5, atol=1e-4)


def test_unsorted_segment_sum_with_matrix_ids_and_fed_count():
    data = np.arange(24.0).reshape(2, 3, 4)
    ids = np.array([[2, 0, 2], [-1, 5, 0]], np.int32)
    count = tf.placeholder(tf.int32, [])
    total = tf.unsorted_segment_sum(data, ids, count)
    assert total.shape.as_list() == [None, 4]
    np.testing.assert_array_equal(run(total, {count: 6}), np_segment_sum(data, ids, 6))


@pytest.mark.parametrize("bad_id", [4, 100])
def test_unsorted_segment_sum_rejects_ids_past_the_end(bad_id):
    total = tf.unsorted_segment_sum(tf.ones([3, 2]), [0, bad_id, 1], 4)
    with pytest.raises(tf.errors.InvalidArgumentError, match=rf"segment_ids\[1\] = {bad_id} is out of range \[0, 4\)"):
        run(total)


def test_unsorted_segment_sum_checks_static_shapes():
    with pytest.raises(ValueError, match="does not prefix"):
        tf.unsorted_segment_sum(tf.ones([3, 2]), [0, 1], 4)
    with pytest.raises(TypeError, match="segment_ids"):
        tf.unsorted_segment_sum(tf.ones([2]), [0.0, 1.0], 4)


def test_unsorted_segment_sum_gradient_gathers_and_drops_negative_ids():
    data = tf.constant(np.ones((4, 2)))
    total = tf.unsorted_segment_sum(data, [2, -1, 0, 2], 3)
    upstream = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    grad = tf.gradients(total, data, grad_ys=upstream)[0]
    np.testing.assert_array_equal(run(grad), [[5, 6], [0, 0], [1, 2], [5, 6]])


def test_segment_sum_needs_sorted_ids():
    np.testing.assert_array_equal(run(tf.math.segment_sum([1.0, 2.0, 3.0, 4.0], [0, 0, 2, 2])), [3, 0, 7])
    with pytest.raises(tf.errors.InvalidArgumentError, match="sorted"):
        run(tf.segment_sum([1.0, 2.0], tf.constant([1, 0])))


def test_indexed_slices_to_dense_keeps_the_static_shape():
    slices = tf.IndexedSlices(tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), tf.constant([3, 0, 3]),
                              tf.shape(tf.zeros([5, 2])))
    dense = tf.convert_to_tensor(slices)
    assert dense.shape.as_list() == [5, 2]
    np.testing.assert_array_equal(run(dense), [[3, 4], [0, 0], [0, 0], [6, 8], [0, 0]])


# -- dropout --------------------------------------------------------------------------------------


def test_dropout_keeps_the_expected_fraction_and_scales_what_it_keeps():
    x = tf.fill([200, 500], 3.0)
    values = run(tf.nn.dropout(x, keep_prob=0.3))
    kept = values != 0
    assert abs(kept.mean() - 0.3) < 0.01  # 100k draws: the standard error is 0.0015
    np.testing.assert_allclose(values[kept], 3.0 / 0.3, rtol=1e-6)


def test_dropout_rate_is_one_minus_keep_prob():
    values = run(tf.nn.dropout(tf.ones([100000]), rate=0.8))
    assert abs((values != 0).mean() - 0.2) < 0.01
    np.testing.assert_allclose(values[values != 0], 5.0, rtol=1e-6)


def test_dropout_with_keep_prob_fed_one_is_the_identity():
    x = tf.constant(np.random.default_rng(0).standard_normal((30, 40)).astype(np.float32))
    keep_prob = tf.placeholder(tf.float32)
    dropped = tf.nn.dropout(x, keep_prob)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(dropped, {keep_prob: 1.0}), sess.run(x))
        assert (sess.run(dropped, {keep_prob: 0.5}) == 0).any()


def test_dropout_keep_prob_one_adds_no_ops():
    x = tf.ones([3])
    assert tf.nn.dropout(x, 1.0) is x
    assert tf.nn.dropout(x, rate=0.0) is x


def test_dropout_seeds_replay_in_a_new_session():
    tf.set_random_seed(7)
    dropped = tf.nn.dropout(tf.ones([1000]), 0.5, seed=3)
    other = tf.nn.dropout(tf.ones([1000]), 0.5, seed=4)
    with tf.Session() as sess:
        first, second, different = sess.run(dropped), sess.run(dropped), sess.run(other)
    assert not np.array_equal(first, second)  # each run draws a new mask
    assert not np.array_equal(first, different)
    np.testing.assert_array_equal(run(dropped), first)  # a new session replays the sequence


def test_dropout_noise_shape_drops_whole_columns():
    x = tf.ones([50, 400])
    values = run(tf.nn.dropout(x, 0.5, noise_shape=[1, 400]))
    assert np.all(values == values[:1])
    assert 0.3 < (values[0] != 0).mean() < 0.7
    rows = run(tf.nn.dropout(tf.ones([400, 3]), 0.5, noise_shape=[None, 1]))  # None takes x's dim, as in TF
    assert np.all(rows == rows[:, :1]) and 0.3 < (rows[:, 0] != 0).mean() < 0.7


@pytest.mark.parametrize("kwargs,message", [
    ({}, "You must provide a rate"),
    ({"keep_prob": 0.5, "rate": 0.5}, "Cannot specify both"),
    ({"keep_prob": 0.0}, r"range \(0, 1\]"),
    ({"rate": 1.0}, r"range \[0, 1\)"),
])
def test_dropout_argument_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        tf.nn.dropout(tf.ones([2]), **kwargs)


def test_dropout_needs_a_float_tensor():
    with pytest.raises(ValueError, match="floating point"):
        tf.nn.dropout(tf.constant([1, 2]), 0.5)


def test_dropout_gradient_is_the_mask_over_keep_prob():
    x = tf.constant(np.full([1000], 2.0))
    dropped = tf.nn.dropout(x, 0.25, seed=1)
    grad = tf.gradients(dropped, x, grad_ys=np.ones([1000]))[0]
    with tf.Session() as sess:
        values, grads = sess.run([dropped, grad])
    np.testing.assert_allclose(grads, (values != 0) * 4.0)


# -- moments and normalization --------------------------------------------------------------------


@pytest.mark.parametrize("axes", [[0], [1, 2], [0, 1, 2], [-1]])
@pytest.mark.parametrize("keep_dims", [False, True])
def test_moments_match_numpy(axes, keep_dims):
    x = np.random.default_rng(1).standard_normal((4, 5, 6)) * 3 + 2
    mean, variance = tf.nn.moments(tf.constant(x), axes, keep_dims=keep_dims)
    expected_shape = np.mean(x, tuple(axes), keepdims=keep_dims).shape
    assert mean.shape.as_list() == variance.shape.as_list() == list(expected_shape)
    got_mean, got_variance = run([mean, variance])
    np.testing.assert_allclose(got_mean, np.mean(x, tuple(axes), keepdims=keep_dims))
    np.testing.assert_allclose(got_variance, np.var(x, tuple(axes), keepdims=keep_dims))


def test_moments_of_float16_are_float16_computed_in_float32():
    x = np.full([4000], 60.0, np.float16)
    mean, variance = tf.nn.moments(tf.constant(x), [0])
    assert mean.dtype is variance.dtype is tf.float16
    np.testing.assert_allclose(run(mean), 60.0)  # a float16 sum would pass 65504 and overflow


def test_moments_gradients_match_finite_differences():
    x = np.random.default_rng(2).standard_normal((3, 4))
    tf.test.check_gradients(lambda t: list(tf.nn.moments(t, [0])), [x])


def test_batch_normalization_matches_the_formula():
    rng = np.random.default_rng(3)
    x, mean, variance = rng.standard_normal((5, 3)), rng.standard_normal(3), rng.random(3) + 0.5
    offset, scale = rng.standard_normal(3), rng.standard_normal(3)
    normalized = tf.nn.batch_normalization(x, mean, variance, offset, scale, 1e-3)
    np.testing.assert_allclose(run(normalized), (x - mean) / np.sqrt(variance + 1e-3) * scale + offset)
    bare = tf.nn.batch_normalization(x, mean, variance, None, None, 1e-3)
    np.testing.assert_allclose(run(bare), (x - mean) / np.sqrt(variance + 1e-3))


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_fused_batch_norm_in_training_and_inference(data_format):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 3, 4, 5)) * 2 + 1
    axes, channel = ((0, 1, 2), (1, 1, 1, -1)) if data_format == "NHWC" else ((0, 2, 3), (1, -1, 1, 1))
    channels = x.shape[3] if data_format == "NHWC" else x.shape[1]
    scale, offset = rng.standard_normal(channels), rng.standard_normal(channels)
    y, mean, variance = run(tf.nn.fused_batch_norm(x, scale, offset, data_format=data_format))
    count = x.size / channels
    np.testing.assert_allclose(mean, x.mean(axes))
    np.testing.assert_allclose(variance, x.var(axes) * count / (count - 1))  # unbiased, as TF reports it
    expected = (x - x.mean(axes).reshape(channel)) / np.sqrt(x.var(axes).reshape(channel) + 1e-3)
    np.testing.assert_allclose(y, expected * scale.reshape(channel) + offset.reshape(channel), atol=1e-12)
    moving_mean, moving_variance = np.zeros(channels), np.full(channels, 4.0)
    y, _, _ = run(tf.nn.fused_batch_norm(x, scale, offset, moving_mean, moving_variance, data_format=data_format,
                                         is_training=False))
    np.testing.assert_allclose(y, x / np.sqrt(4.001) * scale.reshape(channel) + offset.reshape(channel))


def test_l2_normalize_matches_numpy():
    x = np.random.default_rng(5).standard_normal((3, 4))
    np.testing.assert_allclose(run(tf.nn.l2_normalize(x, axis=1)), x / np.linalg.norm(x, axis=1, keepdims=True))
    np.testing.assert_array_equal(run(tf.nn.l2_normalize(np.zeros(3), 0)), np.zeros(3))


# -- local response normalization -----------------------------------------------------------------


def test_lrn_matches_a_slow_reference_on_many_channels():
    x = np.random.default_rng(6).standard_normal((2, 3, 3, 40)).astype(np.float32)
    result = run(tf.nn.local_response_normalization(x, depth_radius=3, bias=2.0, alpha=0.01, beta=0.75))
    np.testing.assert_allclose(result, _np_lrn(x, 3, 2.0, 0.01, 0.75), rtol=1e-5)


def test_lrn_gradient_matches_finite_differences():
    x = np.random.default_rng(7).standard_normal((1, 2, 2, 9))
    tf.test.check_gradients(lambda t: tf.nn.lrn(t, depth_radius=2, bias=1.0, alpha=0.5, beta=0.75), [x])


def test_lrn_needs_4d_input():
    with pytest.raises(ValueError, match="4-dimensional"):
        tf.nn.lrn(tf.ones([2, 3]))


# -- embeddings -----------------------------------------------------------------------------------


def shard(table: np.ndarray, count: int, strategy: str) -> list[np.ndarray]:
    """TF's sharding of a table's rows: 'mod' deals them out; 'div' cuts ranges, the first ones longer."""
    if strategy == "mod":
        return [table[i::count] for i in range(count)]
    return np.array_split(table, count)


IDS = np.array([[9, 0, 4], [4, 3, 10]], np.int64)


def test_embedding_lookup_of_one_table():
    table = np.random.default_rng(8).standard_normal((11, 3)).astype(np.float32)
    rows = tf.nn.embedding_lookup(table, IDS)
    assert rows.shape.as_list() == [2, 3, 3]
    np.testing.assert_array_equal(run(rows), table[IDS])


@pytest.mark.parametrize("strategy", ["mod", "div"])
@pytest.mark.parametrize("count", [2, 3, 4])
def test_embedding_lookup_of_shards(strategy, count):
    table = np.random.default_rng(count).standard_normal((11, 2, 3))
    shards = [tf.constant(s) for s in shard(table, count, strategy)]
    rows = tf.nn.embedding_lookup(shards, IDS, partition_strategy=strategy)
    assert rows.shape.as_list() == [2, 3, 2, 3]
    np.testing.assert_array_equal(run(rows), table[IDS])


def test_embedding_lookup_of_shards_with_unknown_sizes():
    table = np.arange(20.0).reshape(10, 2)
    parts = [tf.placeholder(tf.float64, [None, 2]) for _ in range(3)]
    ids = tf.placeholder(tf.int32, [None])
    rows = tf.nn.embedding_lookup(parts, ids, partition_strategy="div")
    feeds = dict(zip(parts, shard(table, 3, "div")))
    feeds[ids] = [9, 3, 4, 0]
    np.testing.assert_array_equal(run(rows, feeds), table[[9, 3, 4, 0]])


def test_embedding_gradient_of_a_variable_is_sparse():
    table = tf.Variable(np.arange(12.0).reshape(6, 2))
    rows = tf.nn.embedding_lookup(table, [[4, 1], [4, 0]])
    grad = tf.gradients(tf.reduce_sum(rows), table)[0]
    assert isinstance(grad, tf.IndexedSlices)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        indices, values, dense = sess.run([grad.indices, grad.values, tf.convert_to_tensor(grad)])
    np.testing.assert_array_equal(indices.ravel(), [4, 1, 4, 0])
    np.testing.assert_array_equal(values.reshape(-1, 2), np.ones((4, 2)))
    np.testing.assert_array_equal(dense, [[1, 1], [1, 1], [0, 0], [0, 0], [2, 2], [0, 0]])


def test_embedding_gradient_of_sharded_variables_touches_only_their_rows():
    shards = [tf.Variable(np.arange(8.0).reshape(4, 2) + 10 * i) for i in range(2)]
    rows = tf.nn.embedding_lookup(shards, [5, 2, 7, 5], partition_strategy="mod")
    grads = tf.gradients(rows, shards, grad_ys=np.arange(8.0).reshape(4, 2))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        (even_rows, even_values), (odd_rows, odd_values) = sess.run([(g.indices, g.values) for g in grads])
    np.testing.assert_array_equal(even_rows, [1])  # id 2 is row 1 of shard 0
    np.testing.assert_array_equal(even_values, [[2, 3]])
    np.testing.assert_array_equal(odd_rows, [2, 3, 2])  # ids 5, 7, 5 are rows 2, 3, 2 of shard 1
    np.testing.assert_array_equal(odd_values, [[0, 1], [4, 5], [6, 7]])


def test_embedding_lookup_max_norm_clips_long_rows():
    table = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
    rows = run(tf.nn.embedding_lookup(table, [0, 1, 2], max_norm=1.0))
    np.testing.assert_allclose(rows, [[0.6, 0.8], [0.3, 0.4], [0.0, 0.0]])


def test_embedding_lookup_rejects_unknown_strategies():
    with pytest.raises(ValueError, match="partition strategy"):
        tf.nn.embedding_lookup([tf.ones([2, 2])] * 2, [0], partition_strategy="hash")


# -- regularization and the loss collections ------------------------------------------------------


def test_regularizers_of_get_variable_are_collected_and_summed():
    weights = tf.get_variable("w", [3, 2], initializer=tf.constant_initializer(2.0),
                              regularizer=tf.contrib.layers.l2_regularizer(0.1))
    with tf.variable_scope("layer"):
        tf.get_variable("b", [4], initializer=tf.constant_initializer(-1.5),
                        regularizer=tf.contrib.layers.l1_regularizer(0.5))
    tf.get_variable("free", [2], regularizer=tf.contrib.layers.l2_regularizer(0.0))
    losses = tf.losses.get_regularization_losses()
    assert [loss.name for loss in losses] == ["w/Regularizer/l2_regularizer:0",
                                              "layer/b/Regularizer/l1_regularizer:0"]
    tf.losses.add_loss(tf.reduce_sum(weights))
    summed = tf.losses.get_regularization_loss()
    assert summed.op.name == "total_regularization_loss"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        total_reg, scoped, data_only, total = sess.run([
            summed, tf.losses.get_regularization_loss("layer"),
            tf.losses.get_total_loss(add_regularization_losses=False), tf.losses.get_total_loss()])
    assert total_reg == pytest.approx(0.1 * 24 / 2 + 0.5 * 6)
    assert scoped == pytest.approx(3.0)
    assert data_only == pytest.approx(12.0)
    assert total == pytest.approx(12.0 + 4.2)


def test_no_regularization_losses_sum_to_zero():
    assert run(tf.losses.get_regularization_loss()) == 0.0
    with pytest.raises(ValueError):
        tf.losses.get_total_loss()


def test_l1_l2_and_sum_regularizers():
    weights = tf.constant([[1.0, -2.0], [3.0, 0.5]])
    both = tf.contrib.layers.l1_l2_regularizer(0.2, 0.3)(weights)
    assert run(both) == pytest.approx(0.2 * 6.5 + 0.3 * 14.25 / 2)
    assert tf.contrib.layers.sum_regularizer([None]) is None
    penalty = tf.contrib.layers.apply_regularization(tf.contrib.layers.l1_regularizer(1.0), [weights, weights])
    assert run(penalty) == pytest.approx(13.0)
    assert penalty in tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)


@pytest.mark.parametrize("scale,message", [(1, "cannot be an integer"), (-0.5, "less than 0")])
def test_regularizer_scale_errors(scale, message):
    with pytest.raises(ValueError, match=message):
        tf.contrib.layers.l2_regularizer(scale)
