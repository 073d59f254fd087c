"""gather_nd, scatter_nd, boolean_mask, top_k, tensordot and einsum: errors, composites and their gradients."""

import numpy as np
import pytest

import tfnb as tf

X = np.arange(12, dtype=np.float64).reshape(3, 4)


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default():
        yield


# -- gather_nd and scatter_nd ---------------------------------------------------------------------


def test_gather_nd_out_of_range_names_the_index():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = \[3, 0\] does not index into param "
                                                             r"shape \[3,4\]"):
        run(tf.gather_nd(X, [[0, 1], [3, 0]]))


def test_gather_nd_negative_index_fails():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[0\] = \[-1\]"):
        run(tf.gather_nd(X, [[-1]]))


def test_gather_nd_index_deeper_than_params_is_a_value_error():
    with pytest.raises(ValueError, match="must be <= params.rank"):
        tf.gather_nd(X, [[0, 1, 2]])


def test_gather_nd_batch_dims():
    params = np.arange(24.0).reshape(2, 3, 4)
    indices = np.array([[[2, 1], [0, 3]], [[1, 1], [2, 0]]], np.int64)
    got = run(tf.gather_nd(params, indices, batch_dims=1))
    np.testing.assert_array_equal(got, [[params[0, 2, 1], params[0, 0, 3]], [params[1, 1, 1], params[1, 2, 0]]])


def test_gather_nd_unknown_shapes_propagate():
    params = tf.placeholder(tf.float32, [None, 4])
    indices = tf.placeholder(tf.int32, [None, 1])
    assert tf.gather_nd(params, indices).shape.as_list() == [None, 4]
    assert tf.gather_nd(params, tf.placeholder(tf.int32)).shape.ndims is None


def test_gather_nd_gradient_is_a_dense_scatter_that_sums_repeats():
    params = tf.constant(X)
    grad, = tf.gradients(tf.gather_nd(params, [[0, 1], [0, 1], [2, 3]]), [params])
    assert grad.op.type == "ScatterNd"
    expected = np.zeros_like(X)
    expected[0, 1], expected[2, 3] = 2, 1
    np.testing.assert_array_equal(run(grad), expected)


def test_scatter_nd_out_of_range_names_the_index():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = \[5\] does not index into shape \[4\]"):
        run(tf.scatter_nd([[0], [5]], [1.0, 2.0], [4]))


def test_scatter_nd_updates_must_match_indices():
    with pytest.raises(ValueError, match="updates must have shape"):
        tf.scatter_nd([[0], [1]], [1.0, 2.0, 3.0], [4])


def test_scatter_nd_shape_takes_the_indices_dtype():
    result = tf.scatter_nd(tf.constant([[1]], tf.int64), [[1.0, 2.0]], [2, 2])
    assert result.op.inputs[2].dtype is tf.int64
    np.testing.assert_array_equal(run(result), [[0, 0], [1, 2]])


def test_scatter_nd_with_an_unknown_shape():
    shape = tf.placeholder(tf.int32, [2])
    result = tf.scatter_nd([[1], [1]], [[1.0, 2.0], [3.0, 4.0]], shape)
    assert result.shape.as_list() == [None, None]
    np.testing.assert_array_equal(run(result, {shape: [3, 2]}), [[0, 0], [4, 6], [0, 0]])


# -- boolean_mask and bool indexing ---------------------------------------------------------------


def test_boolean_mask_matches_numpy_indexing():
    mask = np.array([[True, False, True, True], [False, False, True, False], [True, True, False, False]])
    np.testing.assert_array_equal(run(tf.boolean_mask(X, mask)), X[mask])
    np.testing.assert_array_equal(run(tf.boolean_mask(X, mask[0], axis=1)), X[:, mask[0]])


def test_boolean_mask_with_unknown_dims():
    x = tf.placeholder(tf.float64, [None, None, 2])
    mask = tf.placeholder(tf.bool, [None, None])
    masked = tf.boolean_mask(x, mask)
    assert masked.shape.as_list() == [None, 2]
    values, picks = np.arange(12.0).reshape(2, 3, 2), np.array([[True, False, True], [False, True, False]])
    np.testing.assert_array_equal(run(masked, {x: values, mask: picks}), values[picks])


def test_boolean_mask_errors():
    with pytest.raises(ValueError, match="mask cannot be scalar"):
        tf.boolean_mask(X, True)
    with pytest.raises(ValueError, match="mask dimensions must be specified"):
        tf.boolean_mask(X, tf.placeholder(tf.bool))
    with pytest.raises(ValueError):
        tf.boolean_mask(X, [True, False])


def test_boolean_mask_gradient():
    mask = np.array([True, False, True])
    tf.test.check_gradients(lambda x: tf.boolean_mask(x, mask), [X])
    tf.test.check_gradients(lambda x: tf.boolean_mask(x, [True, False, False, True], axis=1), [X])


def test_bool_tensor_index_is_a_boolean_mask():
    x = tf.constant(X)
    picked = x[x > 5.0]
    assert picked.name == "boolean_mask/GatherV2:0"
    np.testing.assert_array_equal(run(picked), X[X > 5])
    np.testing.assert_array_equal(run(x[np.array([False, True, True])]), X[1:])
    np.testing.assert_array_equal(run(x[1:, 2]), X[1:, 2])  # other indices still slice


def test_bool_index_on_a_variable():
    v = tf.Variable([1.0, -2.0, 3.0])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(v[v > 0]), [1.0, 3.0])


# -- top_k ----------------------------------------------------------------------------------------


def test_top_k_ties_take_the_lower_index_first():
    values, indices = run(tf.nn.top_k([1, 3, 3, 2, 3], 3))
    np.testing.assert_array_equal(values, [3, 3, 3])
    np.testing.assert_array_equal(indices, [1, 2, 4])


def test_top_k_returns_named_values_and_int32_indices():
    result = tf.math.top_k(tf.constant(X), k=2)
    assert result.values.dtype is tf.float64 and result.indices.dtype is tf.int32
    assert result.values.shape.as_list() == [3, 2]
    assert result.values.name == "TopKV2:0" and result.indices.name == "TopKV2:1"


def test_top_k_static_errors():
    with pytest.raises(ValueError, match="last dimension >= k = 5"):
        tf.nn.top_k([1.0, 2.0, 3.0], 5)
    with pytest.raises(ValueError, match="Need k >= 0"):
        tf.nn.top_k([1.0, 2.0, 3.0], -1)
    with pytest.raises(ValueError, match="at least rank 1"):
        tf.nn.top_k(3.0)
    with pytest.raises(TypeError):
        tf.nn.top_k([True, False])


def test_top_k_too_few_columns_at_run_time():
    x = tf.placeholder(tf.float32, [None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="at least k columns. Had 3, needed 5"):
        run(tf.nn.top_k(x, 5).values, {x: [1.0, 2.0, 3.0]})


def test_top_k_with_a_k_tensor():
    k = tf.placeholder(tf.int32, [])
    values = tf.nn.top_k(tf.constant(X), k).values
    assert values.shape.as_list() == [3, None]
    np.testing.assert_array_equal(run(values, {k: 3}), X[:, :0:-1])


def test_top_k_gradient_goes_to_the_picked_elements():
    x = tf.constant([[1.0, 5.0, 3.0], [4.0, 4.0, 0.0]])
    grad, = tf.gradients(tf.nn.top_k(x, 2).values, [x])
    np.testing.assert_array_equal(run(grad), [[0, 1, 1], [1, 1, 0]])


# -- tensordot ------------------------------------------------------------------------------------


@pytest.mark.parametrize("axes", [1, 0, [[1], [0]], [1, 0], [[0, 1], [1, 0]]])
def test_tensordot_matches_numpy(axes):
    a, b = np.arange(6.0).reshape(2, 3), np.arange(6.0).reshape(3, 2)
    np.testing.assert_allclose(run(tf.tensordot(a, b, axes)), np.tensordot(a, b, axes))


def test_tensordot_higher_rank_and_unknown_dims():
    a, b = np.random.default_rng(0).standard_normal((2, 3, 4)), np.random.default_rng(1).standard_normal((4, 3, 5))
    pa, pb = tf.placeholder(tf.float64, [None, 3, 4]), tf.placeholder(tf.float64, [4, 3, None])
    product = tf.tensordot(pa, pb, [[1, 2], [1, 0]])
    assert product.shape.as_list() == [None, None]
    np.testing.assert_allclose(run(product, {pa: a, pb: b}), np.tensordot(a, b, [[1, 2], [1, 0]]))


def test_tensordot_errors():
    with pytest.raises(ValueError, match="must not be larger"):
        tf.tensordot(tf.ones([2, 3]), tf.ones([3, 2]), 3)
    with pytest.raises(ValueError, match="Different number of contraction axes"):
        tf.tensordot(tf.ones([2, 3]), tf.ones([3, 2]), [[1], [0, 1]])
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tf.tensordot(tf.ones([2, 3]), tf.ones([4, 2]), 1)


def test_tensordot_gradient():
    rng = np.random.default_rng(2)
    tf.test.check_gradients(lambda a, b: tf.tensordot(a, b, [[0, 2], [2, 1]]),
                            [rng.standard_normal((2, 3, 4)), rng.standard_normal((5, 4, 2))])


# -- einsum ---------------------------------------------------------------------------------------


def test_einsum_errors():
    with pytest.raises(ValueError, match="Got 1 inputs"):
        tf.einsum("ij,jk->ik", tf.ones([2, 3]))
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tf.einsum("ij,jk->ik", tf.ones([2, 3]), tf.ones([4, 2]))
    with pytest.raises(ValueError, match="rank 2"):
        tf.einsum("ij->ji", tf.ones([3]))
    with pytest.raises(ValueError, match="does not appear"):
        tf.einsum("ij->k", tf.ones([2, 3]))
    with pytest.raises(ValueError, match="Invalid subscripts"):
        tf.einsum("i1->i", tf.ones([2, 3]))
    with pytest.raises(TypeError, match="float32"):
        tf.einsum("i,i->", tf.ones([2]), tf.ones([2], tf.float64))


def test_einsum_implicit_output_and_spaces():
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    product = tf.einsum("ij, jk", a, b)
    assert product.op.attrs["equation"] == "ij,jk->ik"
    np.testing.assert_allclose(run(product), a @ b)
    assert tf.einsum("ba", a).op.attrs["equation"] == "ba->ab"


def test_einsum_static_shapes():
    a = tf.placeholder(tf.float32, [None, 2, 3])
    assert tf.einsum("...ij,jk->...ik", a, tf.ones([3, 5])).shape.as_list() == [None, 2, 5]
    assert tf.einsum("...ij,jk->...ik", tf.placeholder(tf.float32), tf.ones([3, 5])).shape.ndims is None
    assert tf.einsum("...ij,jk->ik", tf.placeholder(tf.float32), tf.ones([3, 5])).shape.as_list() == [None, 5]
    assert tf.einsum("bij,bjk->bik", a, tf.placeholder(tf.float32, [4, None, None])).shape.as_list() == [4, 2, None]


def test_einsum_gradient_over_broadcast_ellipsis_and_own_sums():
    rng = np.random.default_rng(3)
    tf.test.check_gradients(lambda a, b: tf.einsum("...ij,...jk->...ik", a, b),
                            [rng.standard_normal((2, 1, 2, 3)), rng.standard_normal((4, 3, 2))])
    tf.test.check_gradients(lambda a, b: tf.einsum("ijk,j->i", a, b),
                            [rng.standard_normal((2, 3, 4)), rng.standard_normal(3)])


def test_einsum_gradient_with_unknown_dims():
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    pa, pb = tf.placeholder(tf.float64, [None, None]), tf.placeholder(tf.float64, [None, 4])
    ga, gb = tf.gradients(tf.einsum("ij,jk->ik", pa, pb), [pa, pb])
    got_a, got_b = run([ga, gb], {pa: a, pb: b})
    np.testing.assert_allclose(got_a, np.ones((2, 4)) @ b.T)
    np.testing.assert_allclose(got_b, a.T @ np.ones((2, 4)))


def test_einsum_repeated_label_has_no_gradient():
    x = tf.constant(np.eye(3))
    with pytest.raises(ValueError, match="repeats a label"):
        tf.gradients(tf.einsum("ii->i", x), [x])
