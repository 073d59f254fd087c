"""Timeline: one lane per device and thread, labelled bars, a legend, loop iterations; BokehJS loaded first."""

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
    assert {"CPU:0 · thread 0", "CPU:0 · thread 1"} <= rows


def test_a_timeline_loads_bokehjs_first(monkeypatch):
    loads = []
    monkeypatch.setattr(timeline_module, "load_bokehjs", lambda: loads.append("BokehJS"))
    Timeline(two_device_run())
    assert loads == ["BokehJS"]


def test_lanes_are_tall_bars_labelled_and_op_types_in_a_legend():
    timeline = Timeline(two_device_run())
    figure = timeline.figure
    assert figure.height >= timeline_module.MIN_HEIGHT_PX
    data = timeline.data
    span = max(data["end"])
    for row in set(data["row"]):
        bars = [i for i, r in enumerate(data["row"]) if r == row]
        longest = max(bars, key=lambda i: data["duration"][i])
        assert data["label"][longest] == data["name"][longest]      # every lane names its longest bar
        for i in bars:
            wide = data["duration"][i] >= timeline_module.LABEL_SHARE * span
            longest_too = data["duration"][i] == data["duration"][longest]
            assert data["label"][i] == (data["name"][i] if wide or longest_too else "")
    assert any(type(r.glyph).__name__ == "Text" for r in figure.renderers)
    (legend,) = figure.legend
    assert legend in figure.right and legend.title == "op type"
    assert {item.label.field for item in legend.items} == {"op_type"}


def loop_run() -> tf.RunMetadata:
    i = tf.constant(0, name="i")
    out = tf.while_loop(lambda i: i < 2, lambda i: i + 1, [i], name="loop")
    metadata = tf.RunMetadata()
    with tf.Session() as sess:
        sess.run(out, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=metadata)
    return metadata


def test_loop_instances_carry_frame_and_iteration_in_the_timeline_and_the_chrome_trace():
    metadata = loop_run()
    data = timeline_module.timeline_data(metadata)
    assert "loop/add [loop:1]" in data["name"]
    dead = data["name"].index("loop/add [loop:2]")
    assert data["op_type"][dead] == "Add (dead)" and data["colour"][dead] == timeline_module.DEAD_COLOUR
    events = [e for e in metadata.to_chrome_trace()["traceEvents"] if e["ph"] == "X"]
    adds = [e for e in events if e["args"]["op"] == "Add"]
    assert [(e["name"], e["args"]["frame"], e["args"]["iteration"]) for e in adds] == [
        ("loop/add [loop:0]", "loop", 0), ("loop/add [loop:1]", "loop", 1), ("loop/add [loop:2]", "loop", 2)]
    assert adds[-1]["args"]["dead"] is True and "dead" not in adds[0]["args"]
    outside = next(e for e in events if e["name"] == "i")
    assert "frame" not in outside["args"]


def test_a_timed_step_draws_its_fused_lines_as_one_bar_each():
    x = tf.placeholder(tf.float32, [2, 4], name="x")
    w = tf.Variable(np.ones((4, 3), np.float32), name="w")
    hidden = tf.nn.relu(tf.matmul(x, w, name="product") + tf.ones([3]), name="hidden")
    metadata = tf.RunMetadata()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(hidden, {x: np.ones((2, 4), np.float32)},
                 options=tf.RunOptions(trace_level=tf.RunOptions.SOFTWARE_TRACE), run_metadata=metadata)
    data = Timeline(metadata).data
    assert "hidden" in data["name"] and "product" not in data["name"]
    assert data["op_type"][data["name"].index("hidden")] == "MatMul+Add+Relu"
