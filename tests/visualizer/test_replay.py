"""ExecutionReplay: executor states at each step, checked against a hand-run of Kahn's algorithm."""

import numpy as np
import pytest

import tfnb as tf
from tfnb.visualizer import ExecutionReplay, GraphView
from tfnb.visualizer.graph_view import FADED
from tfnb.visualizer.replay import (
    DEAD,
    DONE,
    READY,
    RUNNING,
    RUNNING_DEAD,
    frame_path,
    frame_tag,
)


def diamond():
    """x (fed) -> a = x + 1, b = x * 2; c = a + b; d = relu(a); e = c + d."""
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    a = tf.add(x, 1.0, name="a")          # its constant is named Const
    b = tf.multiply(x, 2.0, name="b")     # Const_1
    c = tf.add(a, b, name="c")
    d = tf.nn.relu(a, name="d")
    e = tf.add(c, d, name="e")
    return x, e


def traced(fetch, feeds, config):
    metadata = tf.RunMetadata()
    with tf.Session(config=config) as sess:
        sess.run(fetch, feeds, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=metadata)
        view = GraphView(sess)
    return metadata, view


@pytest.fixture
def replay():
    x, e = diamond()
    config = tf.ConfigProto(graph_options=tf.GraphOptions(tf.OptimizerOptions(opt_level=tf.OptimizerOptions.L0)))
    metadata, view = traced(e, {x: np.ones((2, 3))}, config)
    return ExecutionReplay(metadata, view)


# Kahn's algorithm by hand, FIFO queue, ties in creation order (x is fed, so it never runs):
# start: counts Const 0, Const_1 0, a 1, b 1, c 2, d 1, e 2; queue [Const, Const_1]
# run Const -> a 0: queue [Const_1, a]; run Const_1 -> b 0: [a, b]; run a -> c 1, d 0: [b, d]
# run b -> c 0: [d, c]; run d -> e 1: [c]; run c -> e 0: [e]; run e.
KAHN_ORDER = ["Const", "Const_1", "a", "b", "d", "c", "e"]
STATES = {   # step: (running, ready queue, counts of the ops not finished)
    0: ("Const", ["Const_1"], {"Const": 0, "Const_1": 0, "a": 1, "b": 1, "d": 1, "c": 2, "e": 2}),
    2: ("a", ["b"], {"a": 0, "b": 0, "d": 1, "c": 2, "e": 2}),
    3: ("b", ["d"], {"b": 0, "d": 0, "c": 1, "e": 2}),
    5: ("c", [], {"c": 0, "e": 1}),
    7: (None, [], {}),
}


def test_the_run_follows_kahns_order(replay):
    assert [i.label for i in replay.instances] == KAHN_ORDER
    assert replay.slider.max == replay.play.max == len(KAHN_ORDER)


@pytest.mark.parametrize("step", sorted(STATES))
def test_states_at_each_step(replay, step):
    running, queue, counts = STATES[step]
    replay.step = step
    assert replay.lit == KAHN_ORDER[:step]
    assert replay.running == running
    assert replay.ready_queue == queue
    assert replay.counts == counts
    assert f"step {step}/7" in replay.panel.value
    assert f"ready queue: [{', '.join(queue)}]" in replay.panel.value
    waiting = ", ".join(f"{name}: {n}" for name, n in counts.items() if n)
    assert f"counts: {{{waiting}}}" in replay.panel.value


def test_the_slider_drives_the_step_and_the_view_styles(replay):
    replay.slider.value = 3
    assert replay.step == 3
    styles = replay.view.node_styles
    assert styles["b"] == RUNNING
    assert styles["d"] == READY
    assert [name for name, style in styles.items() if style == DONE] == ["Const", "Const_1", "a"]
    assert styles["c"]["opacity"] == "0.55" and styles["e"]["opacity"] == "0.55"
    replay.view.selected = "c"
    assert "replay step 3: waiting (count 1: b)" in replay.view.card
    replay.view.selected = "d"
    assert "replay step 3: ready (count 0)" in replay.view.card


def test_a_graph_view_shows_ops_that_did_not_run_faded():
    x, e = diamond()
    tf.constant(3.0, name="unused")
    config = tf.ConfigProto(graph_options=tf.GraphOptions(tf.OptimizerOptions(opt_level=tf.OptimizerOptions.L0)))
    metadata, _ = traced(e, {x: np.ones((2, 3))}, config)
    replay = ExecutionReplay(metadata, tf.get_default_graph())
    assert [i.label for i in replay.instances] == KAHN_ORDER
    replay.step = 5
    assert replay.ready_queue == [] and replay.counts == {"c": 0, "e": 1}
    assert replay.view.node_styles["x"] == FADED and replay.view.node_styles["unused"] == FADED


def test_collapsed_scopes_take_the_state_of_their_ops():
    x = tf.placeholder(tf.float32, [2], name="x")
    with tf.name_scope("block"):
        h = tf.add(x, 1.0, name="first")
        h = tf.add(h, 2.0, name="second")
    out = tf.identity(h, name="out")
    config = tf.ConfigProto(graph_options=tf.GraphOptions(tf.OptimizerOptions(opt_level=tf.OptimizerOptions.L0)))
    metadata, _ = traced(out, {x: np.ones(2)}, config)
    replay = ExecutionReplay(metadata, GraphView(tf.get_default_graph(), collapse_above=1))
    assert "block/" in replay.view.units
    ran = [i.label for i in replay.instances]
    replay.step = ran.index("block/second")
    assert replay.view.node_styles["block/"] == RUNNING
    replay.step = ran.index("out")
    assert replay.view.node_styles["block/"] == DONE


# -- control flow: node instances tagged with frame and iteration, dead instances ------------------------


def traced_session_run(fetch, feeds=None):
    metadata = tf.RunMetadata()
    with tf.Session() as sess:
        sess.run(fetch, feeds, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=metadata)
        view = GraphView(sess)
    return ExecutionReplay(metadata, view)


@pytest.fixture
def loop_replay():
    """i, x = 0, 1.0; while i < 2: i, x = i + 1, x * 2.0; y = x (the Exit of i is pruned: nothing fetches it)."""
    i = tf.constant(0, name="i")
    x = tf.constant(1.0, name="x")
    _, x_out = tf.while_loop(lambda i, x: i < 2, lambda i, x: (i + 1, x * 2.0), [i, x], name="loop")
    return traced_session_run(tf.identity(x_out, name="y"))


def tagged(name, iteration):
    return f"loop/{name} [loop:{iteration}]"


def one_iteration(iteration, last=False):
    """The 16 instances of one iteration, in the order the FIFO executor runs them (checked by hand below)."""
    names = ["Merge", "Merge_1", "Const", "Less", "LoopCond", "Switch", "Switch_1", "Identity", "Exit_1",
             "Identity_1", "Const_1", "Const_2", "add", "mul", "NextIteration", "NextIteration_1"]
    order = [tagged(n, iteration) for n in names]
    if last:          # y runs as soon as the live Exit_1 has run, before the dead rest of the body
        order.insert(order.index(tagged("Const_2", iteration)) + 1, "y")
    return order


LOOP_ORDER = ["i", "x", "loop/Enter", "loop/Enter_1", *one_iteration(0), *one_iteration(1), *one_iteration(2, True)]

# By hand, FIFO queue: the Enters start iteration 0; LoopCond feeds both Switches; Switch feeds Identity
# (true side) and, had i's Exit been fetched, an Exit; Switch_1's false side feeds Exit_1, dead while
# i < 2; Identity (the pivot) gives the body's constants their control input; NextIteration k starts
# iteration k+1 of its Merge. In iteration 2 the predicate is false: the true sides and the body are dead.
# Root-frame instances are always counted; an instance in the loop once one of its inputs has arrived.
LOOP_STATES = {   # step: (running, ready queue, counts)
    0: ("i", ["x"], {"i": 0, "x": 0, "loop/Enter": 1, "loop/Enter_1": 1, "y": 1}),
    4: (tagged("Merge", 0), [tagged("Merge_1", 0)], {tagged("Merge", 0): 0, tagged("Merge_1", 0): 0, "y": 1}),
    9: (tagged("Switch", 0), [tagged("Switch_1", 0)], {tagged("Switch", 0): 0, tagged("Switch_1", 0): 0, "y": 1}),
    12: (tagged("Exit_1", 0), [tagged("Identity_1", 0), tagged("Const_1", 0), tagged("Const_2", 0)],
         {tagged("Exit_1", 0): 0, tagged("Identity_1", 0): 0, tagged("Const_1", 0): 0, tagged("Const_2", 0): 0,
          tagged("add", 0): 1, "y": 1}),
    20: (tagged("Merge", 1), [tagged("Merge_1", 1)], {tagged("Merge", 1): 0, tagged("Merge_1", 1): 0, "y": 1}),
    43: (tagged("Identity", 2), [tagged("Exit_1", 2), tagged("Identity_1", 2)],
         {tagged("Identity", 2): 0, tagged("Exit_1", 2): 0, tagged("Identity_1", 2): 0, "y": 1}),
    48: ("y", [tagged("add", 2), tagged("mul", 2)], {"y": 0, tagged("add", 2): 0, tagged("mul", 2): 0}),
    53: (None, [], {}),
}
LOOP_DEAD = [tagged("Exit_1", 0), tagged("Exit_1", 1)] + [
    tagged(n, 2) for n in ("Identity", "Identity_1", "Const_1", "Const_2", "add", "mul", "NextIteration",
                           "NextIteration_1")]


def test_a_loop_runs_as_instances_tagged_with_frame_and_iteration(loop_replay):
    assert [i.label for i in loop_replay.instances] == LOOP_ORDER
    assert [i.label for i in loop_replay.instances if i.dead] == LOOP_DEAD
    assert loop_replay.slider.max == 53


@pytest.mark.parametrize("step", sorted(LOOP_STATES))
def test_loop_states_at_each_step(loop_replay, step):
    running, queue, counts = LOOP_STATES[step]
    loop_replay.step = step
    assert loop_replay.running == running
    assert loop_replay.ready_queue == queue
    assert loop_replay.counts == counts


def test_the_panel_tags_instances_greys_dead_ones_and_counts_per_iteration(loop_replay):
    loop_replay.step = 12
    panel = loop_replay.panel.value
    assert '<code><span style="color:#999" title="runs dead">loop/Exit_1 [loop:0]</span></code> (dead' in panel
    assert "ready queue: [loop/Identity_1 [loop:0], loop/Const_1 [loop:0], loop/Const_2 [loop:0]]" in panel
    assert "counts: {loop/add [loop:0]: 1, y: 1}" in panel
    assert "finished per iteration: loop:0: 8</div>" in panel
    loop_replay.step = 43
    assert loop_replay.per_iteration == {"loop:0": (16, 1), "loop:1": (16, 1), "loop:2": (7, 0)}
    assert '<span style="color:#999" title="runs dead">loop/Identity_1 [loop:2]</span>' in loop_replay.panel.value
    loop_replay.step = 53
    assert loop_replay.per_iteration == {"loop:0": (16, 1), "loop:1": (16, 1), "loop:2": (16, 8)}
    assert 'loop:2: 16 (<span style="color:#999">8 dead</span>)' in loop_replay.panel.value


def test_the_view_shows_dead_instances_grey(loop_replay):
    loop_replay.step = 12
    styles = loop_replay.view.node_styles
    assert styles["loop/Exit_1"] == RUNNING_DEAD
    assert styles["loop/Identity_1"] == READY and styles["loop/Merge"] == DONE
    loop_replay.step = 20          # iteration 1 starts: its Merge runs, the body shows iteration 0's outcome
    assert loop_replay.view.node_styles["loop/Merge"] == RUNNING
    assert loop_replay.view.node_styles["loop/add"] == DONE
    loop_replay.view.selected = "loop/add"
    assert "replay step 20: done</div><div>[loop:0] done</div>" in loop_replay.view.card
    loop_replay.step = 53          # the last iteration's body ran dead
    styles = loop_replay.view.node_styles
    assert styles["loop/add"] == DEAD and styles["loop/mul"] == DEAD
    assert styles["loop/Exit_1"] == DONE and styles["loop/Merge"] == DONE and styles["y"] == DONE
    assert "[loop:2] dead" in loop_replay.view.card


def test_a_collapsed_frame_is_done_when_the_loop_is(loop_replay):
    loop_replay.view.collapse("loop/")
    loop_replay.step = 30
    assert loop_replay.view.node_styles["loop/"] == RUNNING
    loop_replay.step = 53
    assert loop_replay.view.node_styles["loop/"] == DONE


def test_a_cond_merge_waits_only_for_its_live_input():
    p = tf.placeholder(tf.bool, [], name="p")
    x = tf.constant(3.0, name="x")
    out = tf.cond(p, lambda: x * 2.0, lambda: x - 1.0)
    replay = traced_session_run(out, {p: False})
    labels = [i.label for i in replay.instances]
    assert [i.label for i in replay.instances if i.dead] == ["cond/switch_t", "cond/Const", "cond/mul"]
    assert labels.index("cond/sub") < labels.index("cond/mul") < labels.index("cond/Merge")
    replay.step = labels.index("cond/mul")      # the true branch's mul runs dead; Merge already has sub's value
    assert replay.ready_queue == ["cond/Merge"]
    assert replay.view.node_styles["cond/mul"] == RUNNING_DEAD
    replay.step = labels.index("cond/sub")
    assert replay.ready_queue == ["cond/mul"]
    assert '<span style="color:#999" title="runs dead">cond/mul</span>' in replay.panel.value
    replay.step = len(labels)
    styles = replay.view.node_styles
    assert styles["cond/mul"] == DEAD and styles["cond/Const"] == DEAD and styles["cond/switch_t"] == DEAD
    assert styles["cond/sub"] == DONE and styles["cond/Merge"] == DONE


def test_nested_loops_replay_as_the_fifo_executor_ran_them():
    """The rebuilt ready queue is always the next instances in run order: the executor's queue is FIFO."""
    def body(i, total):
        total = tf.cond(total > 2, lambda: total - 1, lambda: total + 2)
        inner = tf.while_loop(lambda j: j < i, lambda j: j + 1, [tf.constant(0)])
        return i + 1, total + inner
    replay = traced_session_run(tf.while_loop(lambda i, t: i < 3, body, [tf.constant(0), tf.constant(0)]))
    labels = [i.label for i in replay.instances]
    assert "while/while/Merge [while:2/while/while:2]" in labels
    assert "while/while/Merge [while:2/while/while:3]" not in labels
    for step in range(len(labels)):
        replay.step = step
        queue = replay.ready_queue
        assert queue == labels[step + 1:step + 1 + len(queue)], step
        assert all(n > 0 for label, n in replay.counts.items() if label not in queue and label != labels[step])


def test_frame_tags_parse_with_slashes_in_frame_names():
    path = frame_path("while:1/while/while:0")
    assert path == [("while", 1), ("while/while", 0)]
    assert frame_tag(path) == "while:1/while/while:0" and frame_path("") == []


def test_the_record_says_which_arrival_made_an_instance_ready():
    p = tf.placeholder(tf.bool, [], name="p")
    x = tf.constant(3.0, name="x")
    out = tf.cond(p, lambda: x * 2.0, lambda: x - 1.0)
    replay = traced_session_run(out, {p: False})
    labels = [i.label for i in replay.instances]
    assert replay.readied_by(labels.index("cond/Merge")) == "cond/sub"   # the live branch, not the dead one
    assert replay.readied_by(labels.index("x")) is None


def test_a_loop_replay_has_an_iteration_slider_per_frame(loop_replay):
    (slider,) = loop_replay.iteration_sliders.values()
    assert slider.description == "loop iteration" and (slider.min, slider.max) == (0, 2)
    slider.value = 1                       # jumps to the first step of iteration 1
    assert loop_replay.step == LOOP_ORDER.index(tagged("Merge", 1))
    loop_replay.step = LOOP_ORDER.index(tagged("add", 2))
    assert slider.value == 2               # follows the step
    loop_replay.step = 0
    assert slider.value == 2               # a root-frame instance leaves it where it was


def test_nested_frames_jump_within_the_outer_iteration_shown():
    def body(i):
        inner = tf.while_loop(lambda j: j < 2, lambda j: j + 1, [tf.constant(0)])
        return i + inner - 1
    replay = traced_session_run(tf.while_loop(lambda i: i < 3, body, [tf.constant(0)]))
    assert list(replay.iteration_sliders) == ["while", "while/while"]
    outer, inner = replay.iteration_sliders.values()
    outer.value = 1
    assert frame_path(replay.instances[replay.step].frame)[0] == ("while", 1)
    inner.value = 2
    assert frame_path(replay.instances[replay.step].frame) == [("while", 1), ("while/while", 2)]
    assert outer.value == 1


def test_play_speed_is_set_in_steps_per_second(replay):
    assert replay.speed.value == pytest.approx(2.5) and replay.play.interval == 400
    replay.speed.value = 20.0
    assert replay.play.interval == 50


def test_the_view_follows_the_running_node(replay):
    replay.step = 3
    assert replay.view.focus["id"] == "b" and replay.view.focus["mode"] == "keep"
    replay.step = 4
    assert replay.view.focus["id"] == "d"


def test_the_step_slider_spans_the_cell(replay):
    assert replay.slider.layout.flex == "1 1 auto"
    assert replay.children[0].layout.width == "100%"
