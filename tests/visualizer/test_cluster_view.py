"""ClusterView on a local cluster: tasks' health, partitions and live step times; the other views colour and lay out
by task when a graph spans several."""

import os
import re
import signal
import time
from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("distributed", reason="needs Dask distributed (pip install 'tfnb[distributed]')")

import tfnb as tf
from tfnb.framework.device_spec import short_device, task_of
from tfnb.visualizer import ClusterView, GraphView, PlacementView
from tfnb.visualizer.cluster_view import STEP, task_times_ms
from tfnb.visualizer.graph_view import DEVICE_COLOURS
from tfnb.visualizer.timeline import timeline_data, timeline_figure

PS0, WORKER0, WORKER1 = (f"/job:{job}/replica:0/task:{index}" for job, index in (("ps", 0), ("worker", 0),
                                                                                  ("worker", 1)))
SPEC = {"ps": ["localhost:0"], "worker": ["localhost:0"] * 2}
RESTART_WAIT_S = 30.0


@pytest.fixture(scope="module")
def server():
    """A cluster of its own (one of its tasks gets killed), each task with two CPUs; stopped when the tests end."""
    with tf.train.Server(tf.train.ClusterSpec(SPEC), config=tf.ConfigProto(device_count={"CPU": 2})) as started:
        yield started


@pytest.fixture
def model(server):
    """A linear regression on the cluster: parameters on the ps task, the work on both workers, and its feed."""
    with tf.device(tf.train.replica_device_setter(cluster=server.cluster_spec)):
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        w = tf.get_variable("w", [2, 1], initializer=tf.zeros_initializer())
        with tf.device("/job:worker/task:0"):
            left = tf.matmul(x, w, name="left")
        with tf.device("/job:worker/task:1"):
            right = tf.matmul(x, [[2.0], [-1.0]], name="right")
        loss = tf.reduce_mean(tf.square(left - right), name="loss")
        step = tf.train.get_or_create_global_step()
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    tf.Session.reset(server.target)
    feed = {x: np.random.RandomState(0).randn(8, 2).astype(np.float32)}
    yield SimpleNamespace(x=x, loss=loss, train=train, feed=feed)
    tf.Session.reset(server.target)


def traced_step(sess, fetches, feed):
    metadata = tf.RunMetadata()
    sess.run(fetches, feed, tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), metadata)
    return metadata


def test_every_task_is_alive_with_the_partitions_of_the_plan(server, model):
    with tf.Session(server.target) as sess:
        sess.run(tf.global_variables_initializer())
        plan = sess.plan(model.train, {model.x: None})
    view = ClusterView(server, plan)
    rows = {row["task"]: row for row in view.rows()}
    assert list(rows) == [PS0, WORKER0, WORKER1]
    assert {task: row["health"] for task, row in rows.items()} == dict.fromkeys(rows, "alive")
    assert view.addresses == server.cluster.tasks()
    for device, nodes in plan.partitions.items():
        counts = rows[task_of(device)]["devices"][short_device(device)]
        assert counts.get("ops", 0) == sum(not node.is_transfer for node in nodes)
        assert counts.get("Recvs", 0) == sum(node.type == "_Recv" for node in nodes)
    assert all(rows[task]["devices"] for task in rows)   # the plan spans every task
    table = view.table_html()
    for label in ("ps:0", "worker:0", "worker:1"):
        assert f"{label}</td>" in table
    assert table.count(">alive</td>") == 3
    signals = [recv for recv in plan.transfers if recv.tensor is None]   # the step's increment waits on the updates
    assert signals and all(f'id="{recv.name}"' in PlacementView(plan).dot() for recv in signals)


def test_traced_steps_give_each_task_its_time_while_the_loop_runs(server, model):
    view = ClusterView(server, trace_every=2, refresh_secs=0.0)
    seen_during_loop = []
    with tf.Session(server.target) as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(6):
            view.run(sess, model.train, model.feed)
            seen_during_loop.append(len(view.data(WORKER1)["step"]))
        metadata = traced_step(sess, model.train, model.feed)
    assert seen_during_loop == [0, 1, 1, 2, 2, 3]   # sent to the browser as the steps ran, not at the end
    assert view.steps == 6 and view.traced == 3
    for task in (PS0, WORKER0, WORKER1):
        points = view.data(task)
        assert points["step"] == [2, 4, 6] and all(ms > 0 for ms in points["ms"])
    assert view.data(STEP)["step"] == [2, 3, 4, 5, 6]    # the first step compiles: not drawn
    # partitions come from the traced step when no plan was given
    rows = {row["task"]: row for row in view.rows()}
    for device, names in metadata.partition_graphs.items():
        counts = rows[task_of(device)]["devices"][short_device(device)]
        assert sum(counts.values()) == len(names)
    # a task's time spans its nodes in the traced step, within the step
    times = task_times_ms(metadata)
    assert set(times) == {PS0, WORKER0, WORKER1}
    step_ms = max(s.all_start_micros + s.all_end_rel_micros for s in metadata.node_stats()) / 1e3
    assert all(0 < ms <= step_ms for ms in times.values())
    view.flush()
    assert sorted(stored_points(view)) == [3, 3, 3, 5]   # the plot re-sent whole, for views rendered later


def stored_points(view: ClusterView) -> list[int]:
    """Points per line in the widget's stored state (what a view rendered later shows)."""
    shapes = []

    def walk(node):
        if isinstance(node, dict):
            if node.get("name") == "ColumnDataSource":
                shapes.extend(len(values) if isinstance(values, list) else values["shape"][0]
                              for column, values in node["attributes"]["data"]["entries"] if column == "step")
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(view.chart.render_bundle["docs_json"])
    return shapes


def test_a_task_no_worker_holds_is_lost(server):
    spec = tf.train.ClusterSpec({**SPEC, "worker": ["localhost:0"] * 3})   # a third worker no Dask worker hosts
    view = ClusterView(SimpleNamespace(cluster=server.cluster, cluster_spec=spec))
    rows = {row["task"]: row["health"] for row in view.rows()}
    assert rows.pop("/job:worker/replica:0/task:2") == "lost" and set(rows.values()) == {"alive"}
    assert ">lost</td>" in view.table_html()


def test_a_killed_task_shows_as_restarted_once_its_nanny_starts_it_again(server, model):
    view = ClusterView(server)
    with tf.Session(server.target) as sess:
        sess.run(tf.global_variables_initializer())
        view.run(sess, model.train, model.feed)
        os.kill(server.cluster.worker_pids()[WORKER1], signal.SIGKILL)
        with pytest.raises(tf.errors.UnavailableError):
            view.run(sess, model.train, model.feed)
    deadline = time.monotonic() + RESTART_WAIT_S
    while not view.restarts[WORKER1] and time.monotonic() < deadline:
        time.sleep(0.2)
        view.refresh()
    assert view.restarts == {WORKER1: 1} and view.health[WORKER1] == "alive"
    assert "alive · restarted ×1" in view.table_html()


def test_graph_and_placement_views_colour_by_task_when_the_graph_spans_tasks(server):
    with tf.device("/job:ps/task:0"):
        a = tf.Variable([1.0, 2.0], name="a")
    with tf.device("/job:worker/task:0/cpu:0"):
        b = tf.multiply(a, 2.0, name="b")
    with tf.device("/job:worker/task:0/cpu:1"):
        c = tf.reduce_sum(b, name="c")
    by_task = GraphView(tf.get_default_graph())
    assert by_task.colour_by == "task" and "requested task" in by_task.legend
    assert "ps:0</span>" in by_task.legend and "worker:0</span>" in by_task.legend
    assert fill(by_task, "b") == fill(by_task, "c") != fill(by_task, "a")
    by_device = GraphView(tf.get_default_graph(), colour_by="device")
    assert by_device.colour_by == "device" and fill(by_device, "b") != fill(by_device, "c")
    with pytest.raises(ValueError, match="colour_by"):
        GraphView(tf.get_default_graph(), colour_by="job")

    with tf.Session(server.target) as sess:
        plan = sess.plan(c, plain=True)   # no fusion: b and c stay nodes of their own
    devices = {node.name: device for device, nodes in plan.partitions.items() for node in nodes}
    placed = PlacementView(plan)
    assert placed.colours[devices["b"]] == placed.colours[devices["c"]] != placed.colours[devices["a"]]
    assert set(placed.colours.values()) <= set(DEVICE_COLOURS)
    apart = PlacementView(plan, colour_by="device")
    assert apart.colours[devices["b"]] != apart.colours[devices["c"]]


def fill(view: GraphView, op_name: str) -> str:
    return re.search(r'fillcolor="(#[0-9a-f]+)"', next(line for line in view.dot.splitlines()
                                                      if line.strip().startswith((op_name + " ", f'"{op_name}"'))))[1]


def test_the_timeline_of_a_traced_distributed_step_has_a_lane_per_task_and_device(server, model):
    with tf.Session(server.target) as sess:
        sess.run(tf.global_variables_initializer())
        metadata = traced_step(sess, model.train, model.feed)
    data = timeline_data(metadata)
    devices = {stats.device for stats in metadata.node_stats()}
    assert {task_of(device) for device in devices} == {PS0, WORKER0, WORKER1}
    assert set(data["row"]) == {short_device(device) for device in devices}
    assert all(re.fullmatch(r"(ps|worker):\d CPU:\d", row) for row in data["row"])
    lanes = list(timeline_figure(data).y_range.factors)[::-1]   # top to bottom
    assert lanes == sorted(lanes) and lanes[0].startswith("ps:0")
    data["row"] = [row.replace("worker:1", "worker:10").replace("worker:0", "worker:2") for row in data["row"]]
    lanes = list(timeline_figure(data).y_range.factors)[::-1]
    assert [lane.split()[0] for lane in lanes if lane.startswith("worker")][-1] == "worker:10"
