"""Control flow: Switch/Merge/Enter/Exit/NextIteration in the frame executor, cond, case, while_loop."""

import numpy as np
import pytest

import tfnb as tf
from tfnb.test import run_both_executors


def traced(fetches, feed_dict=None):
    metadata = tf.RunMetadata()
    with tf.Session() as sess:
        value = sess.run(fetches, feed_dict, tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), metadata)
    return value, metadata


def test_cond_takes_one_branch_and_the_other_is_dead():
    x = tf.placeholder(tf.float32, [])
    y = tf.cond(x > 0, lambda: tf.multiply(x, 2.0, name="doubled"), lambda: tf.subtract(x, 1.0, name="less"))
    assert run_both_executors(y, {x: 3.0}) == 6.0
    value, metadata = traced(y, {x: -3.0})
    assert value == -4.0
    stats = {s.node_name: s for s in metadata.node_stats()}
    assert not stats["cond/less"].dead
    assert stats["cond/doubled"].dead  # the untaken branch's node is visited, as dead, without running


def test_only_ops_created_in_a_branch_are_conditional():
    x = tf.placeholder(tf.float32, [])
    outside = tf.add(x, 1.0, name="outside")
    y = tf.cond(x > 0, lambda: outside * 2.0, lambda: tf.constant(0.0))
    assert run_both_executors([y, outside], {x: -1.0}) == [0.0, 0.0]
    assert run_both_executors(y, {x: 1.0}) == 4.0


def test_nested_cond_and_case():
    x = tf.placeholder(tf.int32, [])
    nested = tf.cond(x > 0, lambda: tf.cond(x > 10, lambda: tf.constant(2), lambda: tf.constant(1)),
                     lambda: tf.constant(0))
    assert [run_both_executors(nested, {x: v}) for v in (-5, 5, 50)] == [0, 1, 2]
    chosen = tf.case([(x < 0, lambda: tf.constant(-1)), (x < 10, lambda: tf.constant(1))],
                     default=lambda: tf.constant(100))
    assert [run_both_executors(chosen, {x: v}) for v in (-5, 5, 50)] == [-1, 1, 100]


def test_cond_returns_structures():
    x = tf.placeholder(tf.float32, [])
    out = tf.cond(x > 0, lambda: {"a": x, "b": [x + 1.0]}, lambda: {"a": -x, "b": [x - 1.0]})
    result = run_both_executors(out, {x: 2.0})
    assert result == {"a": 2.0, "b": [3.0]}


def test_while_loop_counts_and_tags_iterations():
    i = tf.constant(0)
    total = tf.placeholder(tf.float32, [])
    out = tf.while_loop(lambda i, t: i < 5, lambda i, t: (i + 1, t + tf.cast(i, tf.float32)), [i, total])
    assert run_both_executors(out, {total: 0.5}) == (5, 10.5)
    _, metadata = traced(out, {total: 0.0})
    adds = [s for s in metadata.node_stats() if s.node_name.endswith("/add")]
    assert {s.frame for s in adds if not s.dead} == {f"while:{k}" for k in range(5)}
    assert [s.frame for s in adds if s.dead] == ["while:5"]  # the last test's body is dead


def test_nested_loops_and_conds_inside_loops():
    def outer_body(i, acc):
        inner = tf.while_loop(lambda j, a: j < 3, lambda j, a: (j + 1, a + tf.cast(i, tf.float32)),
                              [tf.constant(0), acc])[1]
        return i + 1, inner
    nested = tf.while_loop(lambda i, a: i < 4, outer_body, [tf.constant(0), tf.constant(0.0)])
    assert run_both_executors(nested)[1] == 18.0
    alternating = tf.while_loop(lambda i, a: i < 6, lambda i, a: (
        i + 1, tf.cond(tf.equal(i % 2, 0), lambda: a + 1.0, lambda: a * 2.0)), [tf.constant(0), tf.constant(1.0)])
    assert run_both_executors(alternating)[1] == 22.0


def test_loop_inside_an_untaken_branch_is_dead_not_stuck():
    x = tf.placeholder(tf.float32, [])
    y = tf.cond(x > 0, lambda: tf.while_loop(lambda k: k < 5.0, lambda k: k + 1.0, [x]), lambda: x)
    assert run_both_executors(y, {x: 1.5}) == 5.5
    assert run_both_executors(y, {x: -2.0}) == -2.0


def test_maximum_iterations_and_structured_loop_vars():
    capped = tf.while_loop(lambda i: i < 100, lambda i: i + 1, [tf.constant(0)], maximum_iterations=3)
    assert run_both_executors(capped) == 3
    state = {"n": tf.constant(0), "v": tf.constant([1.0, 1.0])}
    out = tf.while_loop(lambda s: s["n"] < 3, lambda s: [{"n": s["n"] + 1, "v": s["v"] * 2.0}], [state])
    result = run_both_executors(out)
    assert result[0]["n"] == 3 if isinstance(result, list) else result["n"] == 3


def test_shape_invariants():
    start = tf.zeros([1])
    with pytest.raises(ValueError, match="shape_invariants"):
        tf.while_loop(lambda v: tf.size(v) < 4, lambda v: tf.concat([v, v], 0), [start])
    grown = tf.while_loop(lambda v: tf.size(v) < 4, lambda v: tf.concat([v, v], 0), [start],
                          shape_invariants=[tf.TensorShape([None])])
    assert run_both_executors(grown).shape == (4,)


def test_parallel_iterations_bounds_open_iterations():
    x = tf.placeholder(tf.float32, [])
    out = tf.while_loop(lambda i, v: i < 20, lambda i, v: (i + 1, v * 1.0), [tf.constant(0), x],
                        parallel_iterations=2)
    assert run_both_executors(out, {x: 1.0})[0] == 20


def test_fetching_a_dead_tensor_is_an_error():
    x = tf.placeholder(tf.float32, [])
    branch_values = []

    def true_fn():
        branch_values.append(tf.add(x, 1.0, name="inside"))
        return branch_values[-1]
    tf.cond(x > 0, true_fn, lambda: x)
    with pytest.raises(tf.errors.InvalidArgumentError, match="not computed"):
        run_both_executors(branch_values[0], {x: -1.0})


def test_loops_compile_to_python_while():
    x = tf.placeholder(tf.float32, [])
    out = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * 2.0), [tf.constant(0), x])
    with tf.Session() as sess:
        assert sess.run(out, {x: 1.0}) == (3, 8.0)
        source = sess.plan(out, {x: None}).source
    assert "while True:" in source and "break" in source


def test_straight_line_graphs_do_not_use_the_frame_executor():
    y = tf.add(tf.placeholder(tf.float32, []), 1.0)
    with tf.Session() as sess:
        sess.run(y, {y.op.inputs[0]: 1.0})
        plan = sess.last_plan()
    assert plan.source.startswith("def _make")


def test_gradients_flow_through_the_taken_branch_only():
    x = tf.placeholder(tf.float64, [3])
    pred = tf.placeholder(tf.bool, [])
    y = tf.cond(pred, lambda: x * x, lambda: x * 3.0)
    grad = tf.gradients(tf.reduce_sum(y), x)[0]
    values = np.array([1.0, 2.0, -1.0])
    np.testing.assert_allclose(run_both_executors(grad, {x: values, pred: True}), 2 * values)
    np.testing.assert_allclose(run_both_executors(grad, {x: values, pred: False}), [3.0, 3.0, 3.0])


def test_cond_gradients_match_finite_differences():
    def build(x):
        return tf.cond(tf.reduce_sum(x) > 0, lambda: tf.sin(x) * x, lambda: tf.exp(x))
    tf.test.check_gradients(build, [np.array([0.5, 1.5, -0.2])])
    tf.test.check_gradients(build, [np.array([-0.5, -1.5, 0.2])])


def test_body_ops_fed_only_from_outside_run_once_per_iteration():
    counter = tf.Variable(0, name="counter")
    outside = tf.constant(1)

    def body(i):
        with tf.control_dependencies([counter.assign_add(outside)]):
            return i + 1
    loop = tf.while_loop(lambda i: i < 4, body, [tf.constant(0)])
    for traced_run in (False, True):
        with tf.Session() as sess:
            sess.run(counter.initializer)
            options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE) if traced_run else None
            assert sess.run(loop, options=options, run_metadata=tf.RunMetadata()) == 4
            assert sess.run(counter) == 4
