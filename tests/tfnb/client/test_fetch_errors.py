"""Bad fetches, fetched IndexedSlices, cond's predicate and while_loop's result structure (beyond tests/compat)."""

from __future__ import annotations

import collections

import numpy as np
import pytest

import tfnb as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default():
        yield


def test_a_missing_name_is_a_value_error_that_names_it_and_suggests_one():
    tf.constant(1.0, name="logits")
    with tf.Session() as sess:
        with pytest.raises(ValueError, match=r"'logit:0' cannot be interpreted as a Tensor.*Did you mean 'logits'"):
            sess.run({"a": ["logit:0"]})
        with pytest.raises(ValueError, match="only has 1 outputs"):
            sess.run("logits:1")
        with pytest.raises(TypeError, match="must be a string or Tensor"):
            sess.run(1.5)


def test_an_element_of_another_graph_is_a_value_error():
    other = tf.Graph()
    with other.as_default():
        v = tf.Variable(1.0)
    tf.constant(0.0)
    with tf.Session() as sess:
        with pytest.raises(ValueError, match="is not an element of this graph"):
            sess.run(v)
        with pytest.raises(ValueError, match="is not an element of this graph"):
            sess.make_callable(v.initializer)


def test_indexed_slices_value_is_public_and_a_namedtuple():
    value = tf.IndexedSlicesValue(np.ones((1, 2)), np.array([0]), np.array([3, 2]))
    assert value._fields == ("values", "indices", "dense_shape")
    values, indices, dense_shape = value
    assert dense_shape.tolist() == [3, 2]


def test_fetching_indexed_slices_runs_a_cached_plan_and_make_callable():
    params = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    x = tf.placeholder(tf.float32, [])
    grad = tf.gradients(tf.reduce_sum(tf.gather(params, [2, 2, 0])) * x, params)[0]
    assert isinstance(grad, tf.IndexedSlices)
    with tf.Session() as sess:
        for scale in (1.0, 2.0):
            fetched = sess.run([grad], {x: scale})[0]
            assert isinstance(fetched, tf.IndexedSlicesValue)
            np.testing.assert_array_equal(fetched.values, np.full((3, 2), scale, np.float32))
            assert fetched.indices.tolist() == [2, 2, 0] and fetched.dense_shape.tolist() == [3, 2]
        assert sess.plan([grad], {x: None}) is sess.last_plan()
        call = sess.make_callable({"g": grad}, [x])
        assert call(4.0)["g"].values[0, 0] == 4.0
        assert call(5.0)["g"].values[0, 0] == 5.0


def test_cond_rejects_a_python_bool_inside_its_name_scope_as_tf():
    with pytest.raises(TypeError, match="must not be a Python bool"):
        tf.cond(False, lambda: tf.constant(1), lambda: tf.constant(2))
    chosen = tf.cond(tf.constant(False), lambda: tf.constant(1), lambda: tf.constant(2))
    assert chosen.name == "cond_1/Merge:0"
    with tf.Session() as sess:
        assert sess.run(chosen) == 2


def test_case_rejects_non_tensor_predicates_and_non_callables():
    with pytest.raises(TypeError, match="pred must be a Tensor"):
        tf.case({np.bool_(True): lambda: tf.constant(1)})
    with pytest.raises(TypeError, match="must be callable"):
        tf.case([(tf.constant(True), tf.constant(1))], default=lambda: tf.constant(2))


def test_while_loop_results_follow_the_body_and_check_its_structure():
    Pair = collections.namedtuple("Pair", ["a", "b"])
    looped = tf.while_loop(lambda i, p: i < 3, lambda i, p: (i + 1, Pair(p.a * 2, p.b)), [0, Pair(1, 5)])
    assert isinstance(looped, tuple) and isinstance(looped[1], Pair)
    with tf.Session() as sess:
        assert sess.run(looped) == (3, Pair(8, 5))
    with pytest.raises(TypeError, match="same sequence type"):
        tf.while_loop(lambda i, p: i < 3, lambda i, p: (i + 1, (p.a, p.b)), [0, Pair(1, 5)])
    with pytest.raises(ValueError, match="same set of keys"):
        tf.while_loop(lambda i, d: i < 3, lambda i, d: (i + 1, {"y": d["x"]}), [0, {"x": 1}])
    with pytest.raises(ValueError, match="number of elements"):
        tf.while_loop(lambda i, j: i < 3, lambda i, j: (i + 1, j, j), [0, 1])
    with pytest.raises(ValueError, match="must be provided"):
        tf.while_loop(lambda: True, lambda: (), [])


def test_while_loop_maximum_iterations_passes_a_single_loop_var_bare():
    seen = []
    capped = tf.while_loop(lambda v: seen.append(v) or v < 100, lambda v: v + 1, [tf.constant(0)],
                           maximum_iterations=tf.constant(4, tf.int64))
    assert isinstance(seen[0], tf.Tensor)
    with tf.Session() as sess:
        assert sess.run(capped) == 4
    with pytest.raises(ValueError, match="must be a scalar"):
        tf.while_loop(lambda v: v < 1, lambda v: v + 1, [0], maximum_iterations=[3])
