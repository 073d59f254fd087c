"""Each device's partition runs on its own thread: devices work at the same time, a failure on one stops all."""

import threading
import warnings

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
def test_each_device_s_thread_computes_with_the_run_s_numpy_settings(traced):
    """inf * 0 is NaN on either device, as in TF, without a RuntimeWarning from the second device's thread."""
    x = tf.placeholder(tf.float32, [3], name="x")
    products = []
    for i in range(2):
        with tf.device(f"/cpu:{i}"):
            products.append(x * 0.0)
    options = FULL_TRACE if traced else None
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess, \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        values = sess.run(products, {x: [np.inf] * 3}, options, tf.RunMetadata())
        assert sess.last_plan().source.count("def _make") == 2  # a partition per device, on threads of their own
    assert np.isnan(values).all() and [str(w.message) for w in caught] == []


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


def test_delayed_recvs_keep_less_alive_on_the_receiving_device():
    x = tf.placeholder(tf.float32, [256, 256], name="x")
    with tf.device("/cpu:0"):
        early = tf.tanh(x, name="early")                     # sent to CPU:1 at once, read there only at the end
    with tf.device("/cpu:1"):
        h = tf.identity(x)
        for k in range(4):                                   # CPU:1 works on two values of its own meanwhile
            h = tf.add(tf.multiply(h, 2.0, name=f"twice_{k}"), h, name=f"chain_{k}")
        total = tf.reduce_sum(h + early, name="total")
    peaks, values = {}, {}
    for delay in (True, False):
        # One thread: the executor's order, not the threads' timing, decides when the Recv runs.
        config = tf.ConfigProto(device_count={"CPU": 2}, inter_op_parallelism_threads=1, graph_options=tf.GraphOptions(
            tf.OptimizerOptions(do_kernel_fusion=False, delay_recvs=delay)))
        metadata = tf.RunMetadata()
        with tf.Session(config=config) as sess:
            values[delay] = sess.run(total, {x: np.ones((256, 256))}, FULL_TRACE, metadata)
            assert values[delay] == sess.run(total, {x: np.ones((256, 256))})
        peaks[delay] = metadata.peak_bytes()["/job:localhost/replica:0/task:0/device:CPU:1"]
    assert values[True] == values[False]
    megabyte = 256 * 256 * 4
    assert peaks[True] <= peaks[False] - megabyte, peaks   # the received copy is not alive during the chain


def tower_loss(x, y, scope):
    """One tower of a data-parallel model: shared variables, its own slice of the batch."""
    with tf.variable_scope("model", reuse=tf.AUTO_REUSE):
        w = tf.get_variable("w", [4, 1], initializer=tf.zeros_initializer())
        b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    return tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y), name=f"{scope}loss")


def test_towers_average_their_gradients_as_tf1_programs_write_it():
    """The multi-GPU pattern: variables on the CPU, one tower per '/gpu:%d' (soft placement onto logical CPUs)."""
    rng = np.random.default_rng(0)
    data = rng.normal(size=(64, 4)).astype(np.float32)
    target = data @ np.array([[1.0], [-2.0], [0.5], [3.0]], np.float32) + 0.25
    x, y = tf.placeholder(tf.float32, [64, 4]), tf.placeholder(tf.float32, [64, 1])
    optimizer = tf.train.GradientDescentOptimizer(0.1)
    tower_grads = []
    for i, (xs, ys) in enumerate(zip(tf.split(x, 2), tf.split(y, 2))):
        with tf.device(f"/gpu:{i}"), tf.name_scope(f"tower_{i}") as scope:
            tower_grads.append(optimizer.compute_gradients(tower_loss(xs, ys, scope)))
    averaged = [(tf.add_n([g for g, _ in pairs]) / 2.0, pairs[0][1]) for pairs in zip(*tower_grads)]
    train = optimizer.apply_gradients(averaged)
    loss = tower_loss(x, y, "all/")
    config = tf.ConfigProto(device_count={"CPU": 2}, allow_soft_placement=True)
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss, {x: data, y: target})
        for _ in range(200):
            sess.run(train, {x: data, y: target})
        assert sess.run(loss, {x: data, y: target}) < 1e-3 * first
        devices = {op.assigned_device[-5:] for op in sess.plan(train, {x: None, y: None}).ops
                   if op.name.startswith("tower_")}
    assert devices == {"CPU:0", "CPU:1"}, "the towers should spread over both devices"


def test_model_parallel_layers_on_two_devices_train_like_one():
    rng = np.random.default_rng(1)
    data = rng.normal(size=(32, 8)).astype(np.float32)
    target = np.tanh(data[:, :1])
    losses = {}
    for devices in (1, 2):
        graph = tf.Graph()
        with graph.as_default():
            tf.set_random_seed(3)
            x, y = tf.placeholder(tf.float32, [32, 8]), tf.placeholder(tf.float32, [32, 1])
            with tf.device("/cpu:0"):
                hidden = tf.layers.dense(x, 16, activation=tf.nn.tanh)
            with tf.device(f"/cpu:{devices - 1}"):
                loss = tf.losses.mean_squared_error(y, tf.layers.dense(hidden, 1))
            train = tf.train.AdamOptimizer(0.01).minimize(loss)
            with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
                sess.run(tf.global_variables_initializer())
                losses[devices] = [sess.run([train, loss], {x: data, y: target})[1] for _ in range(50)]
    np.testing.assert_allclose(losses[2], losses[1], rtol=1e-5)
    assert losses[2][-1] < 0.5 * losses[2][0]
