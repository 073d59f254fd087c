"""Plan rewrites: constant folding and common-subexpression elimination, and when they must not apply."""

import numpy as np

import tfnb as tf


def traced(sess, fetches, feed_dict=None):
    metadata = tf.RunMetadata()
    value = sess.run(fetches, feed_dict, tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), metadata)
    return value, [s.node_name for s in metadata.node_stats()]


def test_constant_subgraphs_are_folded_before_the_run():
    x = tf.placeholder(tf.float32, [], name="x")
    folded = tf.add(tf.constant(1.0), tf.constant(2.0), name="folded")
    out = tf.add(x, folded, name="out")
    with tf.Session() as sess:
        value, ran = traced(sess, out, {x: 10.0})
        removed = sess.last_plan().removed
    assert value == 13.0
    assert "folded" not in ran and "out" in ran
    assert removed["folded"] == "folded"


def test_common_subexpressions_run_once():
    x = tf.placeholder(tf.float32, [], name="x")
    one = tf.add(x, 1.0, name="one")
    same = tf.add(x, 1.0, name="same")
    out = tf.add(one, same, name="out")
    with tf.Session() as sess:
        value, ran = traced(sess, [out, same], {x: 1.0})
        removed = sess.last_plan().removed
    assert value == [4.0, 2.0]
    assert "one" in ran and "same" not in ran
    assert removed["same"] == "same as one"


def test_rewrites_can_be_switched_off():
    folded = tf.add(tf.constant(1.0), 2.0, name="folded")
    config = tf.ConfigProto(graph_options=tf.GraphOptions(tf.OptimizerOptions(opt_level=tf.OptimizerOptions.L0)))
    with tf.Session(config=config) as sess:
        value, ran = traced(sess, folded)
    assert value == 3.0 and "folded" in ran


def test_fed_tensors_and_control_dependencies_are_not_folded():
    c = tf.add(tf.constant(1.0), 2.0, name="c")
    d = tf.add(c, 1.0, name="d")
    with tf.control_dependencies([d]):
        gated = tf.add(tf.constant(5.0), 1.0, name="gated")
    with tf.Session() as sess:
        assert sess.run(d, {c: 10.0}) == 11.0
        value, ran = traced(sess, gated)
    assert value == 6.0 and "gated" in ran


def test_folded_fetches_are_returned_as_copies():
    folded = tf.add(tf.constant([1.0, 2.0]), 1.0)
    with tf.Session() as sess:
        first = sess.run(folded)
        first[0] = 99.0
        np.testing.assert_array_equal(sess.run(folded), [2.0, 3.0])


def test_ops_that_read_only_a_static_shape_fold_and_what_fed_them_is_dropped():
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    doubled = tf.multiply(x, 2.0, name="doubled")
    ones, shape = tf.ones_like(doubled, name="ones"), tf.shape(doubled, name="shape")
    with tf.Session() as sess:
        (ones_value, shape_value), ran = traced(sess, [ones, shape], {x: np.zeros((2, 3), np.float32)})
        removed = sess.last_plan().removed
    np.testing.assert_array_equal(ones_value, np.ones((2, 3), np.float32))
    assert shape_value.tolist() == [2, 3]
    assert removed["ones"] == removed["shape"] == "folded" and removed["doubled"] == "unused after folding"
    assert "doubled" not in ran


def test_unknown_dims_and_control_dependencies_stay():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    counter = tf.Variable(0, name="counter")
    bump = tf.assign_add(counter, 1, name="bump")
    constant_chain = tf.multiply(tf.ones([2]), 3.0, name="constant_chain")
    with tf.control_dependencies([bump]):
        rows = tf.shape(x, name="rows")
    with tf.Session() as sess:
        sess.run(counter.initializer)
        value = sess.run([rows, tf.shape(tf.identity(constant_chain))], {x: np.zeros((4, 3), np.float32)})
        assert value[0].tolist() == [4, 3] and value[1].tolist() == [2]
        assert sess.run(counter) == 1  # the control input ran
