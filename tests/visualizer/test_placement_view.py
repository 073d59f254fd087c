"""PlacementView: partitions per device with their transfers, the placer's reasons, moves; MemoryView of a step."""

import numpy as np
import pytest

import tfnb as tf
from tfnb.visualizer import MemoryView, PlacementView

CPU0, CPU1 = "/job:localhost/replica:0/task:0/device:CPU:0", "/job:localhost/replica:0/task:0/device:CPU:1"


@pytest.fixture
def traced_plan():
    x = tf.placeholder(tf.float32, [64, 64], name="x")
    with tf.device("/cpu:1"):
        right = tf.reduce_sum(tf.matmul(x, x, name="right_matmul"), name="right")
    with tf.device("/cpu:0"):
        left = tf.reduce_sum(tf.matmul(x, tf.transpose(x), name="left_matmul"), name="left")
    total = tf.add(left, right, name="total")  # no request: the cost model decides
    metadata = tf.RunMetadata()
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        sess.run(total, {x: np.ones((64, 64))}, tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), metadata)
        plan = sess.plan(total, {x: None})
    return plan, metadata


def test_the_partitions_are_drawn_per_device_with_their_transfers(traced_plan):
    plan, metadata = traced_plan
    view = PlacementView(plan, metadata)
    dot = view.dot()
    assert dot.count("subgraph cluster_") == 2 and 'label="CPU:0"' in dot and 'label="CPU:1"' in dot
    for recv in plan.transfers:
        assert f'id="{recv.name}"' in dot and f'id="{recv.peer.name}"' in dot
    assert "<svg" in view.drawing.value and 'id="_Recv/x:0&#45;&gt;cpu1"' in view.drawing.value


def test_the_table_counts_ops_and_compares_estimated_with_measured_time(traced_plan):
    plan, metadata = traced_plan
    table = PlacementView(plan, metadata).table_html()
    counts = {device: sum(1 for op in plan.ops if plan.placement[op] == device) for device in (CPU0, CPU1)}
    assert f"CPU:0</td><td>{counts[CPU0]}</td>" in table and f"CPU:1</td><td>{counts[CPU1]}</td>" in table
    measured = {d.device: sum(s.all_end_rel_micros for s in d.node_stats) for d in metadata.step_stats.dev_stats}
    assert f"<td>{measured[CPU1]:.1f}</td></tr>" in table
    assert "the placer's simulated step" in PlacementView(plan).table_html()


def test_a_node_card_gives_every_candidate_and_what_decided(traced_plan):
    plan, _ = traced_plan
    view = PlacementView(plan)
    view.node.value = "right"
    assert "requested device /device:CPU:1" in view.card.value and "CPU:1 ✔" in view.card.value
    free = next(op for op in plan.ops if not op.device and len(op.placement_reasons["estimated_finish_us"]) > 1)
    view.node.value = free.name
    assert "CPU:0" in view.card.value and "CPU:1" in view.card.value and "the soonest estimated finish" in view.card.value


def test_moving_a_node_shows_the_simulated_step_time_change(traced_plan):
    plan, _ = traced_plan
    view = PlacementView(plan)
    before, serial = view.move_node("right_matmul", CPU0)    # both matmuls on one device: one after the other
    assert serial > 1.8 * before / 1.05
    assert view.move_node("right_matmul", CPU1) == (before, before)
    assert view.move_node("right", CPU0)[1] < 1.1 * before   # a small reduction moves cheaply
    view.node.value, view.device.value = "right_matmul", "CPU:0"
    view.move.click()
    assert "moved to CPU:0" in view.card.value and view.moved["after_us"] == serial


def test_the_memory_view_shows_bytes_alive_per_device_and_the_recvs(traced_plan):
    _, metadata = traced_plan
    view = MemoryView(metadata)
    assert set(view.data) == {CPU0, CPU1}
    for device, series in view.data.items():
        assert max(series["live"]) == metadata.peak_bytes()[device]
        assert len(series["order"]) == len(series["node"]) == len(series["live"])
    assert any(view.data[CPU0]["recv"]) and any(view.data[CPU1]["recv"])
