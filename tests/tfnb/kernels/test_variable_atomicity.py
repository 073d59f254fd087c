"""A read of a variable sees a whole value, before or after an update, never one half written."""

import threading
import time

import numpy as np
import pytest

import tfnb as tf
from tfnb.framework.tensor_shape import TensorShape
from tfnb.kernels import KernelNode, find_kernel
from tfnb.kernels.state import update_variable

SIZE = 1000


def _bound(op_type: str, values: dict, **attrs):
    """The CPU kernel of `op_type` bound to the container `values` (as a session binds it)."""
    class Resources:
        @staticmethod
        def container(name):
            return values
    node = KernelNode(op_type, "v", attrs, (), (), resources=Resources())
    return find_kernel(op_type, "CPU").factory(node)


def test_a_read_during_an_in_place_update_waits_for_the_whole_update():
    values = {}
    handle = _bound("VarHandleOp", values, container="", shared_name="v", dtype=tf.float32,
                    shape=TensorShape([SIZE]))()
    _bound("AssignVariableOp", values, dtype=tf.float32, shape=TensorShape([SIZE]))(handle, np.zeros(SIZE, np.float32))
    read = _bound("ReadVariableOp", values, dtype=tf.float32)
    half_written, read_done = threading.Event(), threading.Event()

    def add_one_in_two_halves(old, out):
        assert out is old  # nothing else holds the value: the update is in place
        out[:SIZE // 2] += 1
        half_written.set()
        read_done.wait(0.5)  # a read that does not wait for the update takes its value now
        out[SIZE // 2:] += 1

    seen = []

    def reader():
        half_written.wait()
        seen.append(read(handle).copy())
        read_done.set()

    thread = threading.Thread(target=reader)
    thread.start()
    update_variable(handle, np, add_one_in_two_halves)
    thread.join(10)
    assert not thread.is_alive()
    np.testing.assert_array_equal(seen[0], np.ones(SIZE))


def test_reads_in_a_session_never_see_part_of_an_update():
    v = tf.Variable(np.zeros(200_000, np.float32))
    add = v.assign_add(tf.ones([200_000]), read_value=False)
    descend = tf.train.GradientDescentOptimizer(1.0).apply_gradients([(-tf.ones([200_000]), v)])
    value = v.value() + 0.0
    torn, reads, stop = [], [0], threading.Event()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())

        def write(op):
            while not stop.is_set():
                sess.run(op)

        def check():
            while not stop.is_set():
                seen = sess.run(value)
                reads[0] += 1
                if seen.min() != seen.max():
                    torn.append((seen.min(), seen.max()))
        threads = [threading.Thread(target=write, args=(op,)) for op in (add, descend)] + [
            threading.Thread(target=check)]
        for thread in threads:
            thread.start()
        time.sleep(1.5)
        stop.set()
        for thread in threads:
            thread.join(30)
        assert reads[0] > 10 and torn == []
        total = sess.run(v)
        assert total.min() == total.max() > 0


def test_an_update_that_fails_leaves_the_stored_array_read_only():
    values = {}
    handle = _bound("VarHandleOp", values, container="", shared_name="v", dtype=tf.float32,
                    shape=TensorShape([SIZE]))()
    _bound("AssignVariableOp", values, dtype=tf.float32, shape=TensorShape([SIZE]))(handle, np.zeros(SIZE, np.float32))

    def fail_midway(old, out):
        assert out is old and out.flags.writeable
        raise ValueError("midway")

    with pytest.raises(ValueError, match="midway"):
        update_variable(handle, np, fail_midway)
    assert not values["v"].flags.writeable
