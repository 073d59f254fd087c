"""Each device's partition runs on its own thread: devices work at the same time, a failure on one stops all."""

import threading

import numpy as np
import pytest

import tfnb as tf
from tfnb.framework.op_registry import _OPS, register_op
from tfnb.kernels import kernel
from tfnb.kernels.registry import _KERNELS
from tfnb.ops.inference import same_as_input

FULL_TRACE = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)


@pytest.fixture
def rendezvous_op():
    """A test-only op 'Meet': each call waits until another thread calls it too (a threading.Barrier of 2)."""
    barrier = threading.Barrier(2, timeout=10)
    threads = []
    register_op("Meet", same_as_input(0))

    @kernel("Meet")
    def meet(node):
        def run(x):
            threads.append(threading.get_ident())
            barrier.wait()
            return x.copy()
        return run

    def build(x, name=None):
        return tf.get_default_graph().create_op("Meet", [tf.convert_to_tensor(x)], None, name).outputs[0]

    yield build, threads, barrier
    del _OPS["Meet"]
    del _KERNELS[("Meet", "*")]


def towers(build):
    x = tf.placeholder(tf.float32, [3], name="x")
    outs = []
    for i in range(2):
        with tf.device(f"/cpu:{i}"):
            outs.append(build(x * float(i + 1), name=f"meet_{i}"))
    with tf.device("/cpu:0"):
        return x, tf.add(outs[0], outs[1], name="total")


@pytest.mark.parametrize("traced", [False, True], ids=["generated", "reference"])
def test_two_devices_run_at_the_same_time(rendezvous_op, traced):
    build, threads, _ = rendezvous_op
    x, total = towers(build)
    options = FULL_TRACE if traced else None
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        # Each Meet waits for the other: this only finishes if both devices run at once, on two threads.
        np.testing.assert_array_equal(sess.run(total, {x: [1, 2, 3]}, options, tf.RunMetadata()), [3, 6, 9])
        assert "def _make" in sess.last_plan().source and sess.last_plan().source.count("def _make") == 2
    assert len(set(threads)) == 2


def test_one_inter_op_thread_runs_the_devices_one_after_another(rendezvous_op):
    build, threads, barrier = rendezvous_op
    x, total = towers(build)
    config = tf.ConfigProto(device_count={"CPU": 2}, inter_op_parallelism_threads=1)
    barrier._timeout = 0.2  # alone on one thread, the first Meet waits in vain
    with tf.Session(config=config) as sess:
        assert sess.plan(total, {x: None}).source.count("def _make") == 1
        with pytest.raises(tf.errors.InvalidArgumentError, match="BrokenBarrierError"):
            sess.run(total, {x: [1, 2, 3]})


@pytest.mark.parametrize("traced", [False, True], ids=["generated", "reference"])
def test_a_failure_on_one_device_aborts_the_step_on_all(traced):
    x = tf.placeholder(tf.float32, [None], name="x")
    with tf.device("/cpu:1"):
        bad = tf.reshape(x, [2, 2], name="bad_reshape")        # fails for 3 values
    with tf.device("/cpu:0"):
        total = tf.reduce_sum(bad, name="total") + tf.reduce_sum(x)   # CPU:0 waits for bad's Recv
    options = FULL_TRACE if traced else None
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as caught:
            sess.run(total, {x: [1.0, 2.0, 3.0]}, options, tf.RunMetadata())
        assert caught.value.op is bad.op and "CPU:1" in str(caught.value)
        assert sess.run(total, {x: [1.0, 2.0, 3.0, 4.0]}) == 20.0, "the session stays usable"


def test_traced_concurrent_runs_record_each_device_on_its_own_thread():
    x = tf.placeholder(tf.float32, [64, 64], name="x")
    with tf.device("/cpu:1"):
        right = tf.reduce_sum(tf.matmul(x, x), name="right")
    with tf.device("/cpu:0"):
        left = tf.reduce_sum(tf.matmul(x, tf.transpose(x)), name="left")
        total = tf.add(left, right, name="total")
    metadata = tf.RunMetadata()
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        sess.run(total, {x: np.ones((64, 64))}, FULL_TRACE, metadata)
    threads = {d.device[-5:]: {s.thread_id for s in d.node_stats} for d in metadata.step_stats.dev_stats}
    assert len(threads) == 2 and all(len(ids) == 1 for ids in threads.values())
    assert threads["CPU:0"] != threads["CPU:1"]
    assert [e[0] for e in metadata.executor_record.events].count("run") == len(metadata.node_stats())
