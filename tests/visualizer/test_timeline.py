"""Timeline: one Gantt row per device, one bar per op, hover details, BokehJS loaded first."""

import numpy as np
from bokeh.models import HoverTool

import tfnb as tf
from tfnb.visualizer import Timeline
from tfnb.visualizer import timeline as timeline_module


def two_device_run() -> tf.RunMetadata:
    with tf.device("/cpu:0"):
        a = tf.constant(np.ones((4, 4), np.float32), name="a")
        b = tf.matmul(a, a, name="b")
    with tf.device("/cpu:1"):
        c = tf.nn.relu(b, name="c")
    options = tf.OptimizerOptions(opt_level=tf.OptimizerOptions.L0)
    config = tf.ConfigProto(device_count={"CPU": 2}, graph_options=tf.GraphOptions(options))
    metadata = tf.RunMetadata()
    with tf.Session(config=config) as sess:
        sess.run(c, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=metadata)
    return metadata


def test_one_bar_per_op_on_its_devices_row():
    metadata = two_device_run()
    timeline = Timeline(metadata)
    data = timeline.data
    bars = dict(zip(data["name"], data["row"]))
    assert bars["a"] == bars["b"] == "CPU:0"
    assert bars["c"] == "CPU:1"
    assert len(data["name"]) == len(metadata.node_stats())
    assert all(end >= start for start, end in zip(data["start"], data["end"]))
    b = data["name"].index("b")
    assert data["shapes"][b] == "(4, 4)" and data["op_type"][b] == "MatMul"
    assert list(timeline.figure.y_range.factors) == ["CPU:1", "CPU:0"]     # CPU:0 drawn on top


def test_hover_names_op_type_duration_and_shapes():
    timeline = Timeline(two_device_run())
    hover = next(tool for tool in timeline.figure.tools if isinstance(tool, HoverTool))
    assert [label for label, _ in hover.tooltips] == ["op", "type", "duration", "outputs", "device"]
    assert timeline.render_bundle["docs_json"]


def test_rows_split_by_thread_when_a_device_used_several():
    metadata = two_device_run()
    stats = metadata.node_stats()
    stats[0].thread_id, stats[1].thread_id = 111, 222
    stats[1].device = stats[0].device
    rows = set(timeline_module.timeline_data(metadata)["row"])
    assert {"CPU:0 thread 0", "CPU:0 thread 1"} <= rows


def test_a_timeline_loads_bokehjs_first(monkeypatch):
    loads = []
    monkeypatch.setattr(timeline_module, "load_bokehjs", lambda: loads.append("BokehJS"))
    Timeline(two_device_run())
    assert loads == ["BokehJS"]
