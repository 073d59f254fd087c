"""tfnb.test: the helpers for testing ops and executors, checked on cases where they must pass and must fail."""

import pytest

import tfnb as tf
from tfnb.test import run_both_executors


def test_run_both_executors_returns_what_both_agree_on():
    x = tf.placeholder(tf.float32, [])
    total = tf.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s + x), [0, 0.0])[1]
    assert run_both_executors([total, {"x": x}], {x: 2.0}) == [6.0, {"x": 2.0}]


def test_run_both_executors_fails_when_the_two_runs_differ():
    counter = tf.Variable(0)
    with tf.Session() as sess:
        sess.run(counter.initializer)
        with pytest.raises(AssertionError, match="the executors disagree"):
            run_both_executors(counter.assign_add(1), session=sess)  # 1 untraced, then 2 traced
        assert sess.run(counter) == 2


def test_run_both_executors_runs_in_a_new_session_by_default():
    counter = tf.Variable(5)
    with pytest.raises(tf.errors.FailedPreconditionError):
        run_both_executors(counter.read_value())
