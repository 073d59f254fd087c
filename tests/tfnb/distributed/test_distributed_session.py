"""A Session on a cluster: the master partitions each plan per task, the tasks run their partitions by step id,
and values between tasks go from worker to worker (OSDI paper, section 3.3)."""

import numpy as np
import pytest

import tfnb as tf

PS0, WORKER0, WORKER1 = "/job:ps/replica:0/task:0", "/job:worker/replica:0/task:0", "/job:worker/replica:0/task:1"


def bytes_pushed(server) -> dict:
    """Per task, the bytes its Sends have pushed to other tasks so far."""
    cluster = server.cluster
    return {task: cluster.call(address, "tfnb_describe")["bytes_pushed"] for task, address in cluster.tasks().items()}


def two_task_model():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    with tf.device("/job:ps/task:0"):
        w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="w")
    with tf.device("/job:worker/task:1"):
        h = tf.matmul(x, w, name="h")
    y = tf.nn.relu(h - 4.0, name="y")
    return x, w, h, y


def test_a_cluster_session_has_the_devices_of_every_task(target):
    with tf.Session(target) as sess:
        names = [device.name for device in sess.list_devices()]
    assert names == [f"/job:ps/replica:0/task:{i}/device:CPU:0" for i in range(2)] + \
        [f"/job:worker/replica:0/task:{i}/device:CPU:0" for i in range(3)]


def test_a_graph_on_several_tasks_computes_what_one_process_computes(target):
    x, w, h, y = two_task_model()
    feed = {x: np.array([[1, 2, 3], [0, 1, 0]], np.float32)}
    with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as local:  # one CPU for every task
        local.run(w.initializer)
        expected = local.run([y, h], feed)
    with tf.Session(target) as sess:
        sess.run(w.initializer)
        values = sess.run([y, h], feed)
        plan = sess.plan([y, h], feed)
    np.testing.assert_array_equal(values[0], expected[0])
    np.testing.assert_array_equal(values[1], expected[1])
    assert plan.placement[h.op] == WORKER1 + "/device:CPU:0" and plan.placement[w.op] == PS0 + "/device:CPU:0"


def test_each_task_gets_its_partition_joined_to_the_others_by_send_recv_pairs(target):
    x, _, h, y = two_task_model()
    with tf.Session(target) as sess:
        plan = sess.plan(y, {x: None})
    recvs = {(recv.tensor.name, recv.device) for recv in plan.transfers}
    assert recvs == {(h.op.inputs[1].name, WORKER1 + "/device:CPU:0"), ("h:0", WORKER0 + "/device:CPU:0")}
    for recv in plan.transfers:
        assert recv.key == f"{recv.peer.device};{recv.device};{recv.tensor.name}"
    # Each task compiled its own share: the source names the task, then its generated function.
    assert plan.source.count("def run(feeds, step)") == 3
    assert f"# {WORKER1}\n" in plan.source and "mat_mul_kernel" in plan.source


def test_a_traced_step_gathers_each_tasks_node_timings(target):
    x, w, h, y = two_task_model()
    metadata = tf.RunMetadata()
    with tf.Session(target) as sess:
        sess.run(w.initializer)
        sess.run(y, {x: np.ones((2, 3))}, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                 run_metadata=metadata)
    stats = {s.node_name: s for device in metadata.step_stats.dev_stats for s in device.node_stats}
    assert {s.device for s in stats.values()} == {PS0 + "/device:CPU:0", WORKER0 + "/device:CPU:0",
                                                  WORKER1 + "/device:CPU:0"}
    send, recv = stats["_Send/h:0->worker0_cpu0"], stats["_Recv/h:0->worker0_cpu0"]
    assert recv.all_start_micros + recv.all_end_rel_micros >= send.all_start_micros   # one clock for all tasks
    assert metadata.execution_order.index("h") < metadata.execution_order.index("y")
    assert stats["y"].output_shapes == [(2, 2)]


def test_ops_naming_no_job_run_on_the_task_the_target_names(server):
    target = f"{server.scheduler_address}/job:worker/task:2"
    tf.Session.reset(target)
    x = tf.placeholder(tf.float32, [2], name="x")
    with tf.device("/device:CPU:0"):
        y = tf.multiply(x, 2.0, name="y")
    z = tf.add(y, 1.0, name="z")
    with tf.Session(target) as sess:
        np.testing.assert_array_equal(sess.run(z, {x: [1, 2]}), [3, 5])
        plan = sess.plan(z, {x: None})
    assert {plan.placement[op] for op in plan.ops} == {"/job:worker/replica:0/task:2/device:CPU:0"}


def test_a_scheduler_address_is_a_target_too(server, target):
    y = tf.constant(3.0) * 2.0
    with tf.Session(server.scheduler_address) as sess:
        assert sess.run(y) == 6.0


def test_variables_live_on_their_task_and_every_session_sees_them(target):
    with tf.device("/job:ps/task:1"):
        counter = tf.Variable(0.0, name="counter")
    increment = counter.assign_add(1.0)
    with tf.Session(target) as first:
        first.run(counter.initializer)
        first.run(increment)
    with tf.Session(target) as second:  # as on TF's servers, the variable outlives the session that made it
        second.run(increment)
        assert second.run(counter) == 2.0


def test_a_value_between_tasks_goes_from_worker_to_worker(server, target):
    half = tf.placeholder(tf.float32, [], name="half")
    with tf.device("/job:worker/task:1"):
        big = tf.fill([1 << 20], half, name="big")  # 4 MiB of float32
    with tf.device("/job:worker/task:0"):
        total = tf.reduce_sum(big, name="total")
    before = bytes_pushed(server)
    with tf.Session(target) as sess:
        assert sess.run(total, {half: 0.5}) == (1 << 20) * 0.5
    after = bytes_pushed(server)
    assert after[WORKER1] - before[WORKER1] == 4 << 20   # the Send pushed it to worker 0 itself
    assert after[WORKER0] == before[WORKER0]             # and only the scalar came back, in the step's reply


def test_bfloat16_sendrecv_halves_what_crosses_between_tasks(server, target):
    x = tf.placeholder(tf.float32, [None], name="x")
    with tf.device("/job:worker/task:1"):
        values = x * 1.0
    with tf.device("/job:worker/task:0"):
        copy = tf.identity(values)
    config = tf.ConfigProto(graph_options=tf.GraphOptions(enable_bfloat16_sendrecv=True))
    before = bytes_pushed(server)[WORKER1]
    with tf.Session(target, config=config) as sess:
        received, exact = sess.run([copy, values], {x: np.linspace(1, 2, 1 << 16, dtype=np.float32)})
    assert bytes_pushed(server)[WORKER1] - before == (1 << 16) * 2
    assert received.dtype == np.float32 and not np.array_equal(received, exact)
    np.testing.assert_allclose(received, exact, rtol=2 ** -7)


def test_fed_values_come_with_the_step_to_each_task_that_reads_them(target):
    x = tf.placeholder(tf.float32, [3], name="x")
    with tf.device("/job:worker/task:0"):
        a = tf.reduce_sum(x, name="a")
    with tf.device("/job:worker/task:1"):
        b = tf.reduce_max(x, name="b")
    with tf.Session(target) as sess:
        assert sess.run([a, b, x], {x: [1, 5, 2]}) == [8.0, 5.0, pytest.approx([1, 5, 2])]
        plan = sess.plan([a, b], {x: None})
    assert plan.transfers == []


def test_a_failure_on_a_task_names_the_op_and_where_it_was_made(target):
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(1.0, name="v")
    x = tf.placeholder(tf.float32, [None], name="x")
    with tf.device("/job:worker/task:1"):
        reshaped = tf.reshape(x, [3], name="reshaped")
    with tf.Session(target) as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value v") as raised:
            sess.run(v)
        assert raised.value.op is v.value().op or raised.value.op.type == "ReadVariableOp"
        with pytest.raises(tf.errors.InvalidArgumentError, match="2 values") as raised:
            sess.run(reshaped, {x: [1.0, 2.0]})
        assert raised.value.op is reshaped.op and "test_distributed_session.py" in str(raised.value)


def test_a_recv_whose_value_never_comes_fails_naming_the_task_it_waited_for(target):
    queue = tf.FIFOQueue(1, tf.float32, shapes=[[]], shared_name="never_filled")
    with tf.device("/job:worker/task:1"):
        late = tf.identity(queue.dequeue(), name="late")   # the queue stays empty: its Send never runs
    with tf.device("/job:worker/task:0"):
        result = tf.add(late, 1.0, name="result")
    config = tf.ConfigProto(operation_timeout_in_ms=300)
    with tf.Session(target, config=config) as sess:
        with pytest.raises(tf.errors.UnavailableError, match=f"Task {WORKER1} is unavailable: no value"):
            sess.run(result)


def test_a_loop_runs_inside_its_task(target):
    with tf.device("/job:worker/task:1"):
        total = tf.while_loop(lambda i, s: i < 10, lambda i, s: (i + 1, s + tf.cast(i, tf.float32)),
                              [tf.constant(0), tf.constant(0.0)])[1]
    with tf.device("/job:worker/task:0"):
        doubled = total * 2.0
    with tf.Session(target) as sess:
        assert sess.run(doubled) == 90.0
