"""The compile pipeline: the public plan, names in generated code, plain plans, partitions with Send/Recv
in every kind of plan, and values released after their last reader in loop plans."""

import io
import threading
import time
import weakref
from contextlib import redirect_stderr

import numpy as np
import pytest

import tfnb as tf
from tfnb.framework.op_registry import _OPS, register_op
from tfnb.kernels import kernel
from tfnb.kernels.registry import _KERNELS
from tfnb.ops.inference import same_as_input
from tfnb.runtime.rendezvous import Rendezvous

FULL_TRACE = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
TWO_CPUS = tf.ConfigProto(device_count={"CPU": 2})
CPU1 = "/job:localhost/replica:0/task:0/device:CPU:1"


def both_executors(sess, fetches, feed_dict=None):
    """Runs untraced (generated code) and traced (reference executor); returns the first after checking they agree."""
    generated = sess.run(fetches, feed_dict)
    reference = sess.run(fetches, feed_dict, FULL_TRACE, tf.RunMetadata())
    assert repr(generated) == repr(reference)
    return generated


# -- the public plan ---------------------------------------------------------------------------------


def test_a_session_hands_out_the_plan_of_a_request():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    with tf.name_scope("conv1"):
        h = tf.matmul(x, tf.constant(np.ones((3, 2), np.float32), name="w"), name="Conv2D")
    unused = tf.constant(5.0, name="unused")
    with tf.Session() as sess:
        plan = sess.plan(h, {x: None})
        assert sess.plan(h, {x: np.ones((1, 3))}) is plan, "only what is fed matters, not the values"
        assert [op.name for op in plan.ops] == ["conv1/w", "conv1/Conv2D"] and unused.op not in plan.ops
        assert plan.placement[h.op] == "/job:localhost/replica:0/task:0/device:CPU:0"
        assert list(plan.partitions) == ["/job:localhost/replica:0/task:0/device:CPU:0"] and not plan.transfers
        assert "conv1_Conv2D = mat_mul_kernel(x, conv1_w)  # conv1/Conv2D = MatMul(x:0, conv1/w:0)" in plan.source
        sess.run(h, {x: np.ones((1, 3))})
        assert sess.last_plan() is plan
        assert "conv1/Conv2D = MatMul(x:0, conv1/w:0)" in plan.describe()


def test_names_from_any_graph_become_distinct_identifiers():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        a = tf.add(x, 1.0, name="a-b")
        b = tf.add(a, 2.0, name="a_b")
        c = tf.add(b, 3.0, name="3.d>e")
        d = tf.add(c, 4.0, name="feeds")
    with tf.Session(graph=graph) as sess:
        assert sess.run(d, {x: 0.0}) == 10.0
        source = sess.plan(d, {x: None}).source
    assert "a_b = add_kernel(x, Const_s)" in source and "a_b_2 = add_kernel_2(a_b, " in source
    assert "v3_d_e = " in source and "vfeeds = " in source


def test_a_plain_plan_has_neither_fusion_nor_buffer_reuse():
    x = tf.placeholder(tf.float32, [4, 8, 8, 3], name="x")
    conv = tf.nn.conv2d(x, tf.ones([3, 3, 3, 4]), [1, 1, 1, 1], "SAME")
    y = tf.nn.relu(tf.nn.bias_add(conv, tf.ones([4])))
    z = tf.tanh(y * 2.0)
    value = np.random.default_rng(0).normal(size=(4, 8, 8, 3)).astype(np.float32)
    with tf.Session() as sess:
        optimized = sess.plan(z, {x: None})
        plain = sess.plan(z, {x: None}, plain=True)
        assert plain is not optimized and sess.plan(z, {x: None}) is optimized
        assert "# fused" in optimized.source and "out=" in optimized.source
        assert "# fused" not in plain.source and "out=" not in plain.source and ".inplace" not in plain.source
        assert plain.plain and not optimized.plain
        # The convolution's algorithm is whichever was fastest when the process first met these shapes (Winograd or
        # FFT under load): F(4x4, 3x3)'s float32 sums differ from a direct one by up to 2e-5 here.
        np.testing.assert_allclose(sess.run(z, {x: value}),
                                   np.tanh(2 * np.maximum(_conv_same(value) + 1.0, 0)), rtol=1e-4, atol=1e-4)


def _conv_same(x):
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(1, 2))
    return np.repeat(windows.sum(axis=(3, 4, 5))[..., None], 4, axis=-1)


def test_log_device_placement_prints_each_op_and_its_device():
    y = tf.add(tf.placeholder(tf.float32, [], name="x"), 1.0, name="y")
    with tf.Session(config=tf.ConfigProto(log_device_placement=True)) as sess, redirect_stderr(io.StringIO()) as err:
        sess.run(y, {"x:0": 1.0})
    assert "y: (Add): /job:localhost/replica:0/task:0/device:CPU:0" in err.getvalue()


# -- partitions ----------------------------------------------------------------------------------------


def test_a_value_crossing_devices_is_received_once_per_device():
    x = tf.placeholder(tf.float32, [3], name="x")
    with tf.device("/cpu:0"):
        a = tf.multiply(x, 2.0, name="a")
    with tf.device("/cpu:1"):
        b = tf.add(a, 1.0, name="b")
        c = tf.multiply(a, b, name="c")
    with tf.Session(config=TWO_CPUS) as sess:
        np.testing.assert_array_equal(both_executors(sess, c, {x: [1, 2, 3]}), [6, 20, 42])
        plan = sess.plan(c, {x: None})
    (recv,) = plan.transfers
    assert recv.device == CPU1 and recv.tensor is a and recv.peer.type == "_Send" and recv.peer.tensor is a
    assert recv.key == f"/job:localhost/replica:0/task:0/device:CPU:0;{CPU1};a:0"
    assert [node.name for node in plan.partitions[CPU1]] == ["Const_1", "_Recv/a:0->cpu1", "b", "c"]
    assert "a_on_cpu1 = recv_kernel(step)" in plan.source
    assert "b = add_kernel(a_on_cpu1, Const_1)" in plan.source and "c = mul_kernel_2(a_on_cpu1, b" in plan.source


def test_loop_plans_partition_too_and_both_executors_run_the_transfers():
    x = tf.placeholder(tf.float32, [2], name="x")

    def body(i, v):
        with tf.device("/cpu:1"):
            w = tf.multiply(v, 2.0, name="on_cpu1")
        return i + 1, w + 1.0

    with tf.device("/cpu:0"):
        _, out = tf.while_loop(lambda i, v: i < 3, body, [tf.constant(0), x])
    with tf.Session(config=TWO_CPUS) as sess:
        np.testing.assert_array_equal(both_executors(sess, out, {x: [0.0, 1.0]}), [7.0, 15.0])
        plan = sess.plan(out, {x: None})
    received = {(node.tensor.name if node.tensor is not None else None, node.device) for node in plan.transfers}
    assert ("while/Identity_1:0", CPU1) in received
    assert ("while/on_cpu1:0", "/job:localhost/replica:0/task:0/device:CPU:0") in received
    assert "while True:" in plan.source and "while_on_cpu1_on_cpu0 = recv_kernel" in plan.source


def test_a_cond_branch_on_another_device_passes_dead_values_through_the_rendezvous():
    x = tf.placeholder(tf.float32, [], name="x")
    with tf.device("/cpu:0"):
        pred = x > 0

    def on_cpu1():
        with tf.device("/cpu:1"):
            return x * 10.0

    y = tf.cond(pred, on_cpu1, lambda: x - 1.0)
    with tf.Session(config=TWO_CPUS) as sess:
        assert both_executors(sess, y, {x: 2.0}) == 20.0
        assert both_executors(sess, y, {x: -2.0}) == -3.0
        assert sess.plan(y, {x: None}).transfers


def test_a_control_edge_across_devices_becomes_a_send_recv_of_a_signal():
    counter = tf.Variable(0.0, name="counter")
    with tf.device("/cpu:0"):
        bump = counter.assign_add(1.0)
    with tf.device("/cpu:1"):
        with tf.control_dependencies([bump]):
            after = tf.constant(7.0, name="after") * 2.0
    with tf.Session(config=TWO_CPUS) as sess:
        sess.run(counter.initializer)
        assert both_executors(sess, after) == 14.0
        assert sess.run(counter) == 2.0
        plan = sess.plan(after)
    signals = [node for node in plan.transfers if node.tensor is None]
    assert len(signals) == 1 and signals[0].device == CPU1 and signals[0].key.endswith(f";^{bump.op.name}")


def test_a_recv_waits_for_its_send():
    rendezvous = Rendezvous()
    received = []
    reader = threading.Thread(target=lambda: received.append(rendezvous.recv("k")))
    reader.start()
    rendezvous.send("k", 42)
    reader.join(5)
    assert received == [42]


# -- releasing values in loop plans --------------------------------------------------------------------


@pytest.fixture
def tracked():
    """A test-only op 'Track' copying its input; `live` holds, per call, how many Track outputs were alive."""
    outputs, live = [], []
    register_op("Track", same_as_input(0))

    @kernel("Track")
    def track(node):
        def run(x):
            live.append(sum(ref() is not None for ref in outputs))
            result = x.copy()
            outputs.append(weakref.ref(result))
            return result
        return run

    def build(x, name=None):
        return tf.get_default_graph().create_op("Track", [tf.convert_to_tensor(x)], None, name).outputs[0]

    yield build, live
    del _OPS["Track"]
    del _KERNELS[("Track", "*")]


def test_a_loop_body_releases_each_value_after_its_last_reader(tracked):
    build, live = tracked

    def body(i, v):
        return i + 1, build(build(build(v, "first"), "second"), "third")

    x = tf.placeholder(tf.float32, [1000], name="x")
    _, out = tf.while_loop(lambda i, v: i < 4, body, [tf.constant(0), build(x, "start")])
    with tf.Session() as sess:
        sess.run(out, {x: np.zeros(1000, np.float32)})
        source = sess.plan(out, {x: None}).source
    assert "while True:" in source
    # When "third" runs, only the loop variable and "second"'s output are alive: "first"'s is already released.
    third_calls = live[3::3]
    assert third_calls and max(third_calls) == 2, live


def test_a_value_is_not_overwritten_while_a_view_of_it_is_still_read():
    x = tf.placeholder(tf.float32, [4, 4], name="x")
    m = tf.matmul(x, x)
    r = tf.reshape(m, [16])                       # a view of m's array
    with tf.control_dependencies([r]):
        y = tf.nn.relu(m)                         # m's last direct reader: it could write into m
    with tf.control_dependencies([y]):
        q = r * 1.0                               # reads the view afterwards
    z = tf.reshape(y, [16]) * 0.0 + q
    value = np.arange(16, dtype=np.float32).reshape(4, 4) - 8
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(z, {x: value}), (value @ value).reshape(16))


# -- runs that can be stopped --------------------------------------------------------------------------


@pytest.mark.parametrize("traced", [False, True], ids=["generated", "reference"])
def test_a_loop_that_never_ends_is_stopped_by_the_runs_deadline(traced):
    i = tf.while_loop(lambda i: i >= 0, lambda i: i + 1, [tf.constant(0)], name="forever")
    options = tf.RunOptions(timeout_in_ms=200, trace_level=tf.RunOptions.FULL_TRACE if traced else 0)
    with tf.Session() as sess:
        started = time.monotonic()
        with pytest.raises(tf.errors.DeadlineExceededError, match="Timed out after 200 ms") as caught:
            sess.run(i, options=options, run_metadata=tf.RunMetadata())
        assert 0.2 <= time.monotonic() - started < 2.0
        assert caught.value.op is not None and caught.value.op.name.startswith("forever/")
        bounded = tf.while_loop(lambda k: k < 10, lambda k: k + 1, [tf.constant(0)])
        assert sess.run(bounded, options=tf.RunOptions(timeout_in_ms=200)) == 10, "the session stays usable"


@pytest.fixture
def interruptible():
    """A test-only op 'Interruptible': a copy of its input, or a KeyboardInterrupt (as Ctrl-C) for a negative one."""
    register_op("Interruptible", same_as_input(0))

    @kernel("Interruptible")
    def interruptible_kernel(node):
        def run(x):
            if np.any(x < 0):
                raise KeyboardInterrupt
            return x.copy()
        return run

    yield lambda x: tf.get_default_graph().create_op("Interruptible", [tf.convert_to_tensor(x)]).outputs[0]
    del _OPS["Interruptible"]
    del _KERNELS[("Interruptible", "*")]


@pytest.mark.parametrize("devices", [1, 2])
def test_an_interrupted_run_leaves_the_session_usable(interruptible, devices):
    counter = tf.Variable(0.0)
    x = tf.placeholder(tf.float32, [2])
    with tf.device(f"/cpu:{devices - 1}"):
        y = interruptible(x) + counter.assign_add(1.0)
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        sess.run(counter.initializer)
        with pytest.raises(KeyboardInterrupt):
            sess.run(y, {x: [-1.0, 2.0]})
        value = sess.run(y, {x: [3.0, 4.0]})
        np.testing.assert_array_equal(value, np.array([3.0, 4.0]) + sess.run(counter))
