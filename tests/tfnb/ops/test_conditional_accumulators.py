"""Conditional accumulators (tf.ConditionalAccumulator): the mean of n gradients, stale ones dropped, a take that
waits for enough of them and stops when its run's deadline passes or its container is reset."""

import threading

import numpy as np
import pytest

import tfnb as tf
from tfnb.kernels.conditional_accumulators import Accumulator


def test_take_grad_waits_for_the_gradients_it_needs_and_then_starts_over():
    accumulator = tf.ConditionalAccumulator(tf.float32, shape=[2], shared_name="acc")
    grad = tf.placeholder(tf.float32, [2])
    apply = accumulator.apply_grad(grad)
    take = accumulator.take_grad(2)
    with tf.Session() as sess:
        sess.run(apply, {grad: [1, 2]})
        taken = []
        taker = threading.Thread(target=lambda: taken.append(sess.run(take)))
        taker.start()
        sess.run(apply, {grad: [3, 6]})   # the second gradient lets the waiting take finish
        taker.join()
        np.testing.assert_array_equal(taken[0], [2, 4])
        assert sess.run(accumulator.num_accumulated()) == 0


def test_a_gradient_older_than_the_accumulators_step_is_dropped():
    accumulator = tf.ConditionalAccumulator(tf.float32, shape=[])
    grad, step = tf.placeholder(tf.float32, []), tf.placeholder(tf.int64, [])
    apply = accumulator.apply_grad(grad, local_step=step)
    with tf.Session() as sess:
        sess.run(accumulator.set_global_step(3))
        sess.run(apply, {grad: 10.0, step: 2})
        assert sess.run(accumulator.num_accumulated()) == 0
        sess.run(apply, {grad: 4.0, step: 3})
        sess.run(apply, {grad: 8.0, step: 5})
        assert sess.run(accumulator.take_grad(2)) == 6.0
        sess.run(apply, {grad: 1.0, step: 3})   # take_grad moved the accumulator to step 4
        assert sess.run(accumulator.num_accumulated()) == 0


def test_a_sparse_accumulator_averages_each_row_over_the_gradients_that_had_it():
    accumulator = tf.SparseConditionalAccumulator(tf.float32, shape=[5, 2])
    first = accumulator.apply_indexed_slices_grad(tf.IndexedSlices(tf.ones([2, 2]), tf.constant([0, 3], tf.int64)))
    second = accumulator.apply_grad([3], [[3.0, 5.0]])
    with tf.Session() as sess:
        sess.run([first, second])
        indices, values, shape = sess.run(accumulator.take_grad(2))
    np.testing.assert_array_equal(indices, [0, 3])
    np.testing.assert_array_equal(values, [[1, 1], [2, 3]])
    np.testing.assert_array_equal(shape, [5, 2])


def test_a_take_stops_at_its_runs_deadline():
    accumulator = tf.ConditionalAccumulator(tf.float32, shape=[])
    with tf.Session() as sess, pytest.raises(tf.errors.DeadlineExceededError):
        sess.run(accumulator.take_grad(1), options=tf.RunOptions(timeout_in_ms=50))


def test_a_waiting_take_is_cancelled_when_its_container_is_reset():
    accumulator = Accumulator("acc", np.dtype(np.float32), (), True, "definition")
    failures = []

    def take():
        try:
            accumulator.take(1, None)
        except tf.errors.CancelledError as error:
            failures.append(error)
    taker = threading.Thread(target=take)
    taker.start()
    accumulator.cancel()   # whether the take waits already or not yet, it ends
    taker.join()
    assert len(failures) == 1


def test_bad_gradients_and_counts_are_invalid_arguments():
    accumulator = tf.ConditionalAccumulator(tf.float32, shape=[2])
    grad = tf.placeholder(tf.float32, [None])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Shape mismatch"):
            sess.run(accumulator.apply_grad(grad), {grad: [1.0, 2.0, 3.0]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="num_required must be positive"):
            sess.run(accumulator.take_grad(0))
    with pytest.raises(ValueError, match="incompatible"):
        accumulator.apply_grad(tf.zeros([3]))
