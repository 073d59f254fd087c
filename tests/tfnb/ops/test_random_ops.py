"""Random ops: TF1 seeding rules, per-session streams, distributions, bounds and shapes."""

import numpy as np
import pytest

import tfnb as tf
from tfnb.framework.op_registry import get_op_def
from tfnb.ops import math_ops, random_ops

N = 100_000

# A mean, stddev or range other than the defaults is applied with math_ops' Mul, Sub and Add.
needs_math = pytest.mark.skipif(not hasattr(math_ops, "multiply") or not hasattr(math_ops, "subtract"),
                                reason="math_ops.multiply/subtract not available yet")


def values_of(tensor, runs: int = 1, graph=None) -> list:
    """`runs` successive values of `tensor` in one new session."""
    with tf.Session(graph=graph) as sess:
        return [sess.run(tensor) for _ in range(runs)]


# -- seeds ----------------------------------------------------------------------------------------


def test_get_seed_follows_tf1_rules():
    assert tf.get_seed(None) == (None, None)
    assert tf.get_seed(5) == (random_ops.DEFAULT_GRAPH_SEED, 5)
    tf.set_random_seed(3)
    assert tf.get_default_graph().seed == 3
    assert tf.get_seed(None) == (3, 0)
    tf.constant(1.0)
    assert tf.get_seed(None) == (3, 1)
    assert tf.get_seed(5) == (3, 5)
    tf.set_random_seed(0)
    assert tf.get_seed(0) == (0, 2**31 - 1)


def test_seeds_become_op_attrs():
    tf.set_random_seed(7)
    op = tf.random_normal([2], seed=11).op
    assert (op.get_attr("seed"), op.get_attr("seed2")) == (7, 11)
    tf.set_random_seed(None)
    op = tf.random_uniform([2]).op
    assert (op.get_attr("seed"), op.get_attr("seed2")) == (0, 0)


@pytest.mark.parametrize("make", [lambda s: tf.random_normal([5], seed=s), lambda s: tf.random_uniform([5], seed=s),
                                  lambda s: tf.truncated_normal([5], seed=s),
                                  lambda s: tf.random_uniform([5], maxval=100, dtype=tf.int32, seed=s)])
def test_new_session_replays_the_sequence_and_runs_differ(make):
    tensor = make(42)
    first = values_of(tensor, runs=2)
    second = values_of(tensor, runs=2)
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[0], first[1])


def test_different_op_seeds_differ():
    a, b = tf.random_normal([5], seed=1), tf.random_normal([5], seed=2)
    with tf.Session() as sess:
        x, y = sess.run([a, b])
    assert not np.array_equal(x, y)


def test_graph_seed_alone_makes_ops_distinct_and_reproducible():
    def build():
        graph = tf.Graph()
        with graph.as_default():
            tf.set_random_seed(1234)
            return graph, tf.random_normal([5]), tf.random_normal([5])
    graph, a, b = build()
    x, y = values_of([a, b], graph=graph)[0]
    assert not np.array_equal(x, y)
    other_graph, c, d = build()
    z, w = values_of([c, d], graph=other_graph)[0]
    np.testing.assert_array_equal(x, z)
    np.testing.assert_array_equal(y, w)


def test_op_seed_alone_is_reproducible_across_graphs():
    def value():
        graph = tf.Graph()
        with graph.as_default():
            tf.constant(0.0)
            return values_of(tf.random_uniform([4], seed=9), graph=graph)[0]
    np.testing.assert_array_equal(value(), value())


def test_no_seed_is_nondeterministic():
    tensor = tf.random_normal([8])
    assert not np.array_equal(values_of(tensor)[0], values_of(tensor)[0])


def test_random_ops_are_stateful():
    for op_type in ("RandomStandardNormal", "RandomUniform", "TruncatedNormal", "RandomUniformInt"):
        assert get_op_def(op_type).stateful


# -- distributions --------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [tf.float16, tf.float32, tf.float64])
def test_standard_normal_moments(dtype):
    tensor = tf.random_normal([N], dtype=dtype, seed=1)
    assert tensor.dtype is dtype and tensor.op.type == "RandomStandardNormal"
    sample = values_of(tensor)[0]
    assert sample.dtype == dtype.np_dtype
    assert abs(sample.astype(np.float64).mean()) < 0.02
    assert abs(sample.astype(np.float64).std() - 1) < 0.02


@needs_math
def test_normal_mean_and_stddev():
    sample = values_of(tf.random_normal([N], mean=2.0, stddev=3.0, seed=1))[0]
    assert abs(sample.mean() - 2) < 0.05
    assert abs(sample.std() - 3) < 0.05


def test_truncated_normal_bound_and_std():
    sample = values_of(tf.truncated_normal([N], seed=3))[0]
    assert np.abs(sample).max() <= 2
    assert abs(sample.mean()) < 0.02
    # The std of a standard normal truncated at 2 (the constant of TF's glorot_normal).
    assert abs(sample.std() - 0.87962566103423978) < 0.01


@needs_math
def test_truncated_normal_scaled():
    sample = values_of(tf.truncated_normal([N], mean=-1.0, stddev=0.5, seed=3, dtype=tf.float64))[0]
    assert sample.dtype == np.float64
    assert np.abs(sample + 1).max() <= 1.0
    assert abs(sample.mean() + 1) < 0.01


@pytest.mark.parametrize("dtype", [tf.float16, tf.float32, tf.float64])
def test_uniform_unit_range(dtype):
    sample = values_of(tf.random_uniform([N], dtype=dtype, seed=5))[0]
    assert sample.dtype == dtype.np_dtype
    assert sample.min() >= 0 and sample.max() < 1
    assert abs(sample.astype(np.float64).mean() - 0.5) < 0.01


@needs_math
def test_uniform_bounds():
    sample = values_of(tf.random_uniform([N], minval=-2.0, maxval=3.0, seed=5))[0]
    assert sample.min() >= -2 and sample.max() < 3
    assert abs(sample.mean() - 0.5) < 0.05
    scaled = values_of(tf.random_uniform([N], maxval=4.0, seed=5))[0]
    assert scaled.min() >= 0 and scaled.max() < 4


@pytest.mark.parametrize("dtype", [tf.int32, tf.int64])
def test_uniform_int(dtype):
    tensor = tf.random_uniform([N], minval=-3, maxval=4, dtype=dtype, seed=8)
    assert tensor.op.type == "RandomUniformInt" and tensor.op.name == "random_uniform"
    sample = values_of(tensor)[0]
    assert sample.dtype == dtype.np_dtype
    assert set(np.unique(sample)) == set(range(-3, 4))


def test_uniform_int_errors():
    with pytest.raises(ValueError, match="Must specify maxval"):
        tf.random_uniform([2], dtype=tf.int32)
    with pytest.raises(ValueError, match="scalar"):
        tf.random_uniform([2], maxval=tf.constant([3, 4]), dtype=tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Need minval < maxval"):
        values_of(tf.random_uniform([2], 5, 5, dtype=tf.int32))


# -- shapes and dtypes ----------------------------------------------------------------------------


def test_shape_from_a_tensor():
    dims = tf.placeholder(tf.int32, [2])
    tensor = tf.random_normal(dims, seed=1)
    assert tensor.shape == tf.TensorShape([None, None])
    with tf.Session() as sess:
        assert sess.run(tensor, {dims: [3, 4]}).shape == (3, 4)
        assert sess.run(tensor, {dims: [1, 2]}).shape == (1, 2)
    assert tf.random_uniform(tf.constant([2, 5], tf.int64)).shape == tf.TensorShape([2, 5])
    assert tf.truncated_normal(tf.TensorShape([3])).shape == tf.TensorShape([3])
    assert tf.random_normal(tf.placeholder(tf.int32, [None])).shape.ndims is None


def test_scalar_shape():
    tensor = tf.random_uniform([])
    assert tensor.shape == tf.TensorShape([])
    assert np.ndim(values_of(tensor)[0]) == 0


def test_bad_shapes_and_dtypes():
    with pytest.raises(TypeError, match="shape"):
        tf.random_normal(tf.constant([2.0]))
    with pytest.raises(ValueError, match="rank 1"):
        tf.random_normal(tf.constant(2))
    with pytest.raises(TypeError):
        tf.random_normal([2], dtype=tf.int32)
    with pytest.raises(ValueError, match="Invalid dtype"):
        tf.random_uniform([2], dtype=tf.string)
    with pytest.raises(tf.errors.InvalidArgumentError):
        values_of(tf.random_normal([-1, 2]))


def test_names():
    assert tf.random_normal([2]).op.name == "random_normal"
    assert tf.random_normal([2]).op.name == "random_normal_1"
    assert tf.truncated_normal([2], name="init").op.name == "init"
    assert tf.random_uniform([2]).op.name == "random_uniform/RandomUniform"
    assert tf.get_default_graph().get_operation_by_name("random_normal/shape").type == "Const"
