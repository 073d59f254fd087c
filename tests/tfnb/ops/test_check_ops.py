"""The debugging ops: check_numerics, Assert and the assert_* family, strings.to_number, unique."""

import numpy as np
import pytest

import tfnb as tf


def _error(fetch, feed_dict=None) -> tf.errors.OpError:
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError) as caught:
        sess.run(fetch, feed_dict)
    return caught.value


def test_check_numerics_names_its_op_and_the_kind_of_value_and_passes_finite_values():
    x = tf.placeholder(tf.float64, [3])
    y = tf.check_numerics(x, "after the layer", name="checked")
    error = _error(y, {x: [1.0, np.nan, np.inf]})
    assert error.message == "after the layer : Tensor had Inf and NaN values" and error.op.name == "checked"
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {x: [1.0, 2.0, 3.0]}), [1.0, 2.0, 3.0])


def test_check_numerics_checks_the_gradient_too():
    x = tf.constant([1.0, 0.0])
    (grad,) = tf.gradients(tf.reduce_sum(tf.log(tf.check_numerics(x, "forward"))), x)
    assert "detected in gradient. forward : Tensor had Inf values" in _error(grad).message


def test_assert_shows_its_data_as_tf_summarizes_it():
    check = tf.Assert(tf.constant(False), ["big", tf.range(10), tf.constant([[1.5, 2.0], [3.0, 4.0]]),
                                           tf.constant(b"text"), tf.constant([True, False])])
    assert _error(check).message == "assertion failed: [big] [0 1 2...] [[1.5 2][3...]...] [text] [1 0]"
    everything = tf.Assert(tf.constant(False), [tf.range(4)], summarize=-1)
    assert _error(everything).message == "assertion failed: [0 1 2 3]"


def test_assert_equal_checks_known_values_at_once_and_others_when_run():
    with pytest.raises(tf.errors.InvalidArgumentError, match="x == y did not hold"):
        tf.assert_equal(tf.constant([1, 2]), [1, 3], message="built")
    x = tf.placeholder(tf.int32, [2], name="x")
    with tf.control_dependencies([tf.assert_equal(x, [1, 2], message="run")]):
        y = tf.identity(x)
    error = _error(y, {x: [1, 3]})
    assert error.message.startswith("assertion failed: [run] [Condition x == y did not hold element-wise:] "
                                    "[x (x:0) = ] [1 3]")
    with tf.Session() as sess:  # a failed check leaves the session usable
        np.testing.assert_array_equal(sess.run(y, {x: [1, 2]}), [1, 2])


def test_to_number_parses_as_tf_and_names_a_string_it_cannot():
    values = tf.strings.to_number(tf.constant([[" 1.5", "1e40"], ["-inf", "0x1F"]]))
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(values), np.array([[1.5, np.inf], [-np.inf, 31]], np.float32))
    bad = tf.strings.to_number(tf.constant(["12", "1_0"]), out_type=tf.int64)
    assert _error(bad).message == "StringToNumberOp could not correctly convert string: 1_0"


def test_unique_keeps_the_order_of_first_appearance():
    y, idx = tf.unique(tf.constant([5.0, 2.0, 5.0, 7.0, 2.0]), out_idx=tf.int64)
    with tf.Session() as sess:
        values, indices = sess.run([y, idx])
    np.testing.assert_array_equal(values, [5.0, 2.0, 7.0])
    assert indices.dtype == np.int64 and indices.tolist() == [0, 1, 0, 2, 1]
