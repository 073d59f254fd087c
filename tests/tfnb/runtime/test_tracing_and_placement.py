"""Traced runs (RunMetadata, Chrome trace) and placement across logical devices with Send/Recv."""

import json

import numpy as np
import pytest

import tfnb as tf
from tfnb.kernels import intra_op

CPU = "/job:localhost/replica:0/task:0/device:CPU:{}"


def no_rewrites(**kwargs) -> tf.ConfigProto:
    """A config with constant folding and CSE off, so every op of these small graphs is placed and run."""
    options = tf.OptimizerOptions(opt_level=tf.OptimizerOptions.L0)
    return tf.ConfigProto(graph_options=tf.GraphOptions(options), **kwargs)


def traced_run(sess, fetches, feed_dict=None):
    metadata = tf.RunMetadata()
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    value = sess.run(fetches, feed_dict, options=options, run_metadata=metadata)
    return value, metadata


def test_full_trace_records_every_node():
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    y = tf.add(x, tf.constant(1.0, name="one"), name="y")
    z = tf.add(y, y, name="z")
    with tf.Session() as sess:
        value, metadata = traced_run(sess, z, {x: np.zeros((2, 3))})
    np.testing.assert_array_equal(value, np.full((2, 3), 2.0))
    stats = {s.node_name: s for s in metadata.node_stats()}
    assert set(stats) == {"one", "y", "z"}
    assert stats["z"].output_shapes == [(2, 3)]
    assert stats["z"].output_bytes == [24]
    assert stats["z"].device == CPU.format(0)
    assert stats["y"].all_start_micros <= stats["z"].all_start_micros
    assert metadata.execution_order.index("y") < metadata.execution_order.index("z")
    assert all(s.all_end_rel_micros >= 0 for s in stats.values())


def test_untraced_runs_leave_metadata_empty():
    c = tf.constant(1.0)
    metadata = tf.RunMetadata()
    with tf.Session() as sess:
        sess.run(c, run_metadata=metadata)
    assert metadata.node_stats() == []


def test_chrome_trace_export(tmp_path):
    y = tf.add(tf.constant([1.0]), 2.0, name="y")
    with tf.Session(config=no_rewrites()) as sess:
        _, metadata = traced_run(sess, y)
    trace = metadata.to_chrome_trace()
    names = {e["name"] for e in trace["traceEvents"] if e["ph"] == "X"}
    assert "y" in names
    path = tmp_path / "trace.json"
    metadata.save_chrome_trace(str(path))
    assert json.loads(path.read_text())["traceEvents"]
    timeline = tf.Timeline(metadata.step_stats)
    assert json.loads(timeline.generate_chrome_trace_format())["traceEvents"]


def test_requested_devices_are_honoured_and_cross_device_edges_become_send_recv():
    config = no_rewrites(device_count={"CPU": 2})
    with tf.device("/cpu:0"):
        a = tf.add(tf.constant([1.0, 2.0]), 1.0, name="a")
    with tf.device("/cpu:1"):
        b = tf.add(a, a, name="b")
        c = tf.add(a, b, name="c")
    with tf.Session(config=config) as sess:
        value, metadata = traced_run(sess, c)
    np.testing.assert_array_equal(value, [6.0, 9.0])
    assert a.op.assigned_device == CPU.format(0)
    assert b.op.assigned_device == CPU.format(1)
    partitions = metadata.partition_graphs
    assert partitions[CPU.format(0)].count("_Send/a:0->cpu1") == 1
    assert partitions[CPU.format(1)].count("_Recv/a:0->cpu1") == 1  # once per device, not per consumer
    recvs = [s for s in metadata.node_stats() if s.op_type == "_Recv"]
    assert len(recvs) == 1 and recvs[0].device == CPU.format(1)


def test_missing_device_is_an_error_unless_soft_placement():
    with tf.device("/device:GPU:7"):
        x = tf.add(tf.constant(1.0), 1.0, name="on_gpu")
    with tf.Session(config=no_rewrites()) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot assign a device for operation 'Const'.*GPU:7"):
            sess.run(x)
    with tf.Session(config=no_rewrites(allow_soft_placement=True)) as sess:
        assert sess.run(x) == 2.0
        assert x.op.assigned_device == CPU.format(0)


def test_placer_spreads_independent_work_and_records_reasons():
    config = no_rewrites(device_count={"CPU": 2})
    left = tf.add(tf.constant(np.ones(100000, np.float32)), 1.0, name="left")
    right = tf.add(tf.constant(np.ones(100000, np.float32)), 1.0, name="right")
    with tf.Session(config=config) as sess:
        sess.run([left, right])
    assert {left.op.assigned_device, right.op.assigned_device} == {CPU.format(0), CPU.format(1)}
    reasons = right.op.placement_reasons["estimated_finish_us"]
    assert set(reasons) == {CPU.format(0), CPU.format(1)}


def test_colocated_ops_share_a_device():
    config = no_rewrites(device_count={"CPU": 2})
    with tf.device("/cpu:1"):
        anchor = tf.constant(1.0, name="anchor")
    with tf.colocate_with(anchor):
        follower = tf.identity(anchor, name="follower")
    with tf.Session(config=config) as sess:
        sess.run(follower)
    assert follower.op.assigned_device == CPU.format(1)


def test_lossy_transfer_compression_truncates_to_16_bits():
    config = no_rewrites(device_count={"CPU": 2})
    config.graph_options.enable_bfloat16_sendrecv = True
    with tf.device("/cpu:0"):
        a = tf.identity(tf.constant(np.float32(1.0 + 2 ** -20)))
    with tf.device("/cpu:1"):
        b = tf.identity(a)
    with tf.Session(config=config) as sess:
        assert sess.run(b) == np.float32(1.0)
    with tf.Session(config=no_rewrites(device_count={"CPU": 2})) as sess:
        assert sess.run(b) == np.float32(1.0 + 2 ** -20)


def test_bfloat16_transfers_halve_the_bytes_moved_and_training_still_learns():
    def train(bfloat16: bool) -> tuple[list, int]:
        graph = tf.Graph()
        with graph.as_default():
            rng = np.random.default_rng(0)
            x = tf.placeholder(tf.float32, [32, 8])
            y = tf.placeholder(tf.float32, [32, 1])
            with tf.device("/cpu:0"):
                w1 = tf.Variable(rng.normal(size=(8, 16)).astype(np.float32) * 0.3)
                hidden = tf.nn.tanh(tf.matmul(x, w1))
            with tf.device("/cpu:1"):
                w2 = tf.Variable(rng.normal(size=(16, 1)).astype(np.float32) * 0.3)
                loss = tf.reduce_mean(tf.square(tf.matmul(hidden, w2) - y))
                train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        config = tf.ConfigProto(device_count={"CPU": 2},
                                graph_options=tf.GraphOptions(enable_bfloat16_sendrecv=bfloat16))
        data = np.random.default_rng(1).normal(size=(32, 8)).astype(np.float32)
        target = np.sin(data.sum(axis=1, keepdims=True))
        losses = []
        with tf.Session(graph=graph, config=config) as sess:
            sess.run(tf.variables_initializer([w1, w2]))
            for _ in range(60):
                losses.append(sess.run([train_op, loss], {x: data, y: target})[1])
            metadata = tf.RunMetadata()
            sess.run(train_op, {x: data, y: target}, tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), metadata)
        return losses, metadata.bytes_moved()

    exact, exact_bytes = train(False)
    lossy, lossy_bytes = train(True)
    assert lossy_bytes * 2 == exact_bytes > 0
    assert lossy[-1] < 0.5 * lossy[0] and exact[-1] < 0.5 * exact[0]
    assert lossy != exact  # the low bits were lost on the way, and the run shows it


def test_a_variable_stays_on_the_device_its_first_plan_gave_it():
    # Unconstrained ops go where the cost model says; a stateful op keeps the device of its first plan, as in TF,
    # so a variable initialized on one device is updated there, whatever later plans would choose.
    x = tf.placeholder(tf.float32, [4, 3], name="x")
    w = tf.Variable(np.ones((3, 3), np.float32), name="w")
    with tf.device("/device:STRICT:0"):
        loss = tf.reduce_sum(tf.square(tf.matmul(x, w)))
    train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    with tf.Session(config=tf.ConfigProto(device_count={"STRICT": 1})) as sess:
        sess.run(tf.global_variables_initializer())
        first = w.op.assigned_device
        losses = [sess.run([loss, train], {x: np.ones((4, 3), np.float32)})[0] for _ in range(2)]
        updates = [op for op in sess.last_plan().ops if op.type == "ResourceApplyGradientDescent"]
        assert w.op.assigned_device == first and updates[0].assigned_device == first
    assert losses[1] < losses[0]


def timed_run(sess, fetches, feed_dict=None, level=tf.RunOptions.SOFTWARE_TRACE):
    metadata = tf.RunMetadata()
    value = sess.run(fetches, feed_dict, options=tf.RunOptions(trace_level=level), run_metadata=metadata)
    return value, metadata


@pytest.mark.parametrize("level", [tf.RunOptions.SOFTWARE_TRACE, tf.RunOptions.HARDWARE_TRACE])
def test_a_timed_run_times_each_line_of_the_executed_plan_fused_lines_as_one(level):
    rng = np.random.default_rng(3)
    x = tf.placeholder(tf.float32, [2, 8, 8, 3], name="x")
    w = tf.Variable(rng.standard_normal((3, 3, 3, 4)).astype(np.float32), name="w")
    b = tf.Variable(np.zeros(4, np.float32), name="b")
    y = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME", name="conv"), b, name="bias"), name="act")
    loss = tf.reduce_sum(y, name="loss")
    train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    data = rng.standard_normal((2, 8, 8, 3)).astype(np.float32)
    results = []
    for timed in (False, True):
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            if timed:
                (value, _), metadata = timed_run(sess, [loss, train], {x: data}, level)
                source = sess.last_plan().source
            else:
                value, _ = sess.run([loss, train], {x: data})
            results.append((value, sess.run(w)))
    assert results[0][0] == results[1][0]
    np.testing.assert_array_equal(results[0][1], results[1][1])  # the timed step updated w as an untraced one
    stats = metadata.node_stats()
    fused = [s for s in stats if s.op_type == "Conv2D+BiasAdd+Relu"]
    assert [s.node_name for s in fused] == ["act"] and fused[0].timeline_label.startswith("fused conv = Conv2D")
    assert not any(s.node_name in ("conv", "bias") for s in stats)  # not run apart: no entries of their own
    kernel_lines = [line for line in source.splitlines() if "  # " in line and " = feeds" not in line]
    assert len(stats) == len(kernel_lines)
    assert [s.order for s in stats] == list(range(len(stats)))
    assert all(s.all_end_rel_micros >= 0 and s.device == CPU.format(0) for s in stats)
    assert all(a.all_start_micros <= b.all_start_micros for a, b in zip(stats, stats[1:]))
    assert metadata.execution_order == [s.node_name for s in stats]
    assert {"act"} <= {e["name"] for e in metadata.to_chrome_trace()["traceEvents"] if e["ph"] == "X"}


def test_a_timed_line_records_the_process_cpu_time_it_took(monkeypatch):
    # Each line reads the process's CPU time before and after: a fake clock that each read advances by 1 ms shows
    # one pair of reads per line, and the untimed trace levels leave the field empty.
    from tfnb.runtime import codegen
    reads = iter(range(10**6))
    monkeypatch.setattr(codegen.time, "process_time", lambda: next(reads) * 1e-3)
    x = tf.placeholder(tf.float32, [3], name="x")
    y = tf.reduce_sum(tf.square(x, name="sq"), name="y")
    with tf.Session() as sess:
        value, metadata = timed_run(sess, y, {x: np.arange(3, dtype=np.float32)})
        _, full = timed_run(sess, y, {x: np.arange(3, dtype=np.float32)}, tf.RunOptions.FULL_TRACE)
    assert value == 5.0
    stats = metadata.node_stats()
    assert stats and all(s.cpu_micros == pytest.approx(1000.0) for s in stats)
    assert all(e["args"]["cpu_us"] == pytest.approx(1000.0)
               for e in metadata.to_chrome_trace()["traceEvents"] if e["ph"] == "X")
    assert all(s.cpu_micros is None for s in full.node_stats())
    assert not any("cpu_us" in e["args"] for e in full.to_chrome_trace()["traceEvents"] if e["ph"] == "X")


@pytest.mark.skipif(intra_op.default_width() < 2, reason="needs two cores")
def test_a_convolution_split_across_two_threads_keeps_more_than_one_core_busy():
    # cpu_micros counts the helper thread's share too: above the line's wall time when both cores work. A busy
    # machine may take the second core away for a step, so the best of eight steps counts.
    rng = np.random.default_rng(0)
    x = tf.placeholder(tf.float32, [8, 64, 64, 32], name="x")
    w = tf.constant(rng.standard_normal((3, 3, 32, 64)).astype(np.float32))
    y = tf.reduce_sum(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME", name="conv"), name="y")
    feed = {x: rng.standard_normal((8, 64, 64, 32)).astype(np.float32)}
    busy = {}
    for threads in (1, 2):
        with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=threads)) as sess:
            sess.run(y, feed)
            ratios = []
            for _ in range(8):
                _, metadata = timed_run(sess, y, feed)
                conv = next(s for s in metadata.node_stats() if s.op_type == "Conv2D")
                ratios.append(conv.cpu_micros / conv.all_end_rel_micros)
        busy[threads] = ratios
    assert max(busy[2]) > 1.2
    assert min(busy[1]) < 1.2


def test_a_timed_run_waits_for_a_device_that_queues_work_before_each_of_its_lines_ends(monkeypatch):
    # A GPU's kernel returns once its work is queued: its line's time must wait for the work (LocalDevice.finish).
    from tfnb.runtime.devices import LocalDevice
    finished = []
    monkeypatch.setattr(LocalDevice, "queues_work", property(lambda device: device.device_type == "STRICT"))
    monkeypatch.setattr(LocalDevice, "finish", lambda device: finished.append(device.name))
    x = tf.placeholder(tf.float32, [4, 4], name="x")
    with tf.device("/device:STRICT:0"):
        y = tf.reduce_sum(tf.matmul(x, x) * 2.0, name="y")
    with tf.device(CPU.format(0)):
        z = tf.add(y, 1.0, name="z")
    with tf.Session(config=tf.ConfigProto(device_count={"STRICT": 1})) as sess:
        value, metadata = timed_run(sess, z, {x: np.ones((4, 4), np.float32)})
    assert value == 129.0
    on_strict = [s for s in metadata.node_stats() if s.device.endswith("STRICT:0")]
    assert on_strict and finished == [on_strict[0].device] * len(on_strict)
    assert any(s.node_name == "z" and s.device == CPU.format(0) for s in metadata.node_stats())


def test_a_timed_loop_records_a_line_per_iteration():
    i = tf.constant(0, name="i")
    total = tf.while_loop(lambda i: i < 5, lambda i: tf.add(i, 1, name="step"), [i])
    with tf.Session() as sess:
        value, metadata = timed_run(sess, total)
    assert value == 5
    assert [s.node_name for s in metadata.node_stats()].count("while/step") == 5


def test_devices_running_at_once_each_time_their_own_lines():
    with tf.device(CPU.format(0)):
        a = tf.reduce_sum(tf.ones([64, 64]) * 2.0, name="a")
    with tf.device(CPU.format(1)):
        b = tf.reduce_sum(tf.ones([64, 64]) * 3.0, name="b")
    with tf.Session(config=no_rewrites(device_count={"CPU": 2}, inter_op_parallelism_threads=2)) as sess:
        value, metadata = timed_run(sess, a + b)
    assert value == 64 * 64 * 5
    stats = {s.node_name: s for s in metadata.node_stats()}
    assert stats["a"].device == CPU.format(0) and stats["b"].device == CPU.format(1)
    assert stats["a"].thread_id != stats["b"].thread_id
    assert {d.device for d in metadata.step_stats.dev_stats} == {CPU.format(0), CPU.format(1)}


def test_a_failing_timed_run_names_the_op_that_failed():
    x, w = tf.placeholder(tf.float32, [None, None], name="x"), tf.placeholder(tf.float32, [None, None], name="w")
    y = tf.nn.relu(tf.matmul(x, w, name="product"), name="act")
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="product"):
        timed_run(sess, y, {x: np.ones((2, 3), np.float32), w: np.ones((4, 2), np.float32)})
