"""Containers (paper section 4.7): resources in a named container outlive a session until Session.reset."""

import threading

import numpy as np
import pytest

import tfnb as tf


@pytest.fixture
def target(request):
    """A session target of this test's own, whose named containers are cleared afterwards."""
    name = f"test-containers/{request.node.name}"
    yield name
    tf.Session.reset(name)


def test_container_scopes_set_the_container_of_stateful_ops():
    with tf.container("experiment") as name:
        v = tf.Variable(1.0, name="v")
        q = tf.FIFOQueue(2, tf.int32)
        with tf.container("inner"):
            w = tf.Variable(2.0, name="w")
        reader = tf.TextLineReader()
    u = tf.Variable(3.0, name="u")
    assert name == "experiment"
    assert v.op.get_attr("container") == "experiment" and q.queue_ref.op.get_attr("container") == "experiment"
    assert reader.reader_ref.op.get_attr("container") == "experiment"
    assert w.op.get_attr("container") == "inner" and u.op.get_attr("container") == ""


def test_a_variable_in_a_named_container_outlives_its_session(target):
    with tf.container("kept"):
        kept = tf.Variable(1.0, name="kept")
    mine = tf.Variable(1.0, name="mine")
    with tf.Session(target) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run([kept.assign(5.0), mine.assign(5.0)])
    with tf.Session(target) as sess:
        assert sess.run(kept) == 5.0
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value mine"):
            sess.run(mine)
    with tf.Session(target + "-other") as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value kept"):
            sess.run(kept)
    tf.Session.reset(target, ["kept"])
    with tf.Session(target) as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value kept"):
            sess.run(kept)


def test_a_queue_in_a_named_container_keeps_its_elements(target):
    with tf.container("queues"):
        q = tf.FIFOQueue(5, tf.int32)
    with tf.Session(target) as sess:
        sess.run(q.enqueue_many([[1, 2, 3]]))
    with tf.Session(target) as first, tf.Session(target) as second:
        assert first.run(q.dequeue()) == 1
        assert second.run(q.dequeue()) == 2  # two live sessions on one target share the container
    tf.Session.reset(target)
    with tf.Session(target) as sess:
        assert sess.run(q.size()) == 0


def test_reset_clears_only_the_containers_named(target):
    with tf.container("a"):
        a = tf.Variable(np.arange(3), name="a")
    with tf.container("b"):
        b = tf.Variable(7, name="b")
    with tf.Session(target) as sess:
        sess.run(tf.global_variables_initializer())
        tf.Session.reset(target, ["a", "missing"])
        assert sess.run(b) == 7 and not sess.run(a.is_initialized())
        tf.Session.reset(target)
        assert not sess.run(b.is_initialized())


def test_reset_cancels_ops_waiting_on_a_queue_it_clears(target):
    with tf.container("waiting"):
        q = tf.FIFOQueue(1, tf.int32)
    box = []
    with tf.Session(target) as sess:
        sess.run(q.size())  # creates the queue

        def wait():
            try:
                sess.run(q.dequeue())
            except tf.errors.CancelledError as error:
                box.append(error)
        thread = threading.Thread(target=wait, daemon=True)
        thread.start()
        thread.join(0.1)
        tf.Session.reset(target, ["waiting"])
        thread.join(5)
    assert len(box) == 1 and "Dequeue operation was cancelled" in str(box[0])
