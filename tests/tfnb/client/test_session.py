"""Session semantics: fetch nests, feeds, partial execution, plan caching, freeing, lifetime."""

import collections
import gc

import numpy as np
import pytest

import tfnb as tf
from tfnb.framework.op_registry import _OPS, register_op
from tfnb.kernels import kernel
from tfnb.kernels.registry import _KERNELS
from tfnb.ops.inference import same_as_input


def test_fetch_nests_of_every_kind():
    a = tf.constant(1.0, name="a")
    b = tf.constant([2, 3], name="b")
    Pair = collections.namedtuple("Pair", "x y")
    with tf.Session() as sess:
        assert sess.run(a) == 1.0 and isinstance(sess.run(a), np.float32)
        out = sess.run({"p": Pair(a, [b, (a,)]), "name": "b:0", "op": b.op})
    assert isinstance(out["p"], Pair) and out["p"].x == 1.0
    np.testing.assert_array_equal(out["p"].y[0], [2, 3])
    assert out["p"].y[1] == (1.0,)
    np.testing.assert_array_equal(out["name"], [2, 3])
    assert out["op"] is None


def test_feed_by_tensor_and_by_name_with_conversion():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    y = x + 1.0
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {x: [[1, 2]]}), [[2, 3]])
        np.testing.assert_array_equal(sess.run(y, {"x:0": np.zeros((3, 2))}), np.ones((3, 2)))
        assert sess.run(y, {x: np.zeros((1, 2), np.float64)}).dtype == np.float32


def test_bad_feeds_fail_before_any_kernel(probe):
    build, runs = probe
    x = tf.placeholder(tf.int32, [2], name="x")
    y = build(x)
    with tf.Session() as sess:
        with pytest.raises(ValueError, match=r"shape \(3,\) for Tensor x:0"):
            sess.run(y, {x: [1, 2, 3]})
        with pytest.raises(TypeError, match="dtype float64.*int32"):
            sess.run(y, {x: np.array([1.5, 2.0])})
        with pytest.raises(tf.errors.InvalidArgumentError, match="must feed a value for placeholder tensor 'x'"):
            sess.run(y)
    assert runs == []


def test_any_tensor_can_be_fed_and_cuts_the_graph(probe):
    build, runs = probe
    x = tf.placeholder(tf.float32, [], name="x")
    middle = build(x, name="middle")
    out = build(middle, name="out")
    with tf.Session() as sess:
        assert sess.run(out, {middle: 5.0}) == 5.0
        assert [name for name, _ in runs] == ["out"]
        assert sess.run(out, {x: 1.0}) == 1.0
        assert [name for name, _ in runs] == ["out", "middle", "out"]


def test_only_the_transitive_closure_runs(probe):
    build, runs = probe
    a = build(tf.constant(1.0), name="needed")
    build(tf.constant(2.0), name="unneeded")
    with tf.Session() as sess:
        sess.run(a)
    assert [name for name, _ in runs] == ["needed"]


def test_control_inputs_and_targets_run(probe):
    build, runs = probe
    side = build(tf.constant(1.0), name="side")
    with tf.control_dependencies([side]):
        out = tf.identity(tf.constant(2.0))
    with tf.Session() as sess:
        sess.run(out)
        assert [name for name, _ in runs] == ["side"]
        assert sess.run(tf.group(side)) is None
        assert len(runs) == 2


def test_plans_are_cached_per_signature_and_graph_version():
    x = tf.placeholder(tf.float32, [])
    y = x + 1.0
    with tf.Session() as sess:
        for value in range(3):
            sess.run(y, {x: value})
        first = sess.last_plan()
        assert sess.plan(y, {x: None}) is first
        sess.run([y], {x: 1.0})
        assert sess.last_plan() is not first and sess.plan([y], {x: None}) is sess.last_plan()
        z = y + 1.0  # the graph grew: the session picks up the new op
        assert sess.run(z, {x: 1.0}) == 3.0
        sess.run(y, {x: 1.0})
        assert sess.last_plan() is not first, "a plan compiled for an older graph version was reused"


def test_intermediates_are_freed_after_their_last_consumer(probe):
    build, runs = probe
    x = tf.placeholder(tf.float32, [1000])
    a = build(x, name="a")      # a's output feeds b only
    b = build(a, name="b")
    c = build(b, name="c")      # when c runs, a's output is gone
    with tf.Session() as sess:
        result = sess.run(c, {x: np.ones(1000, np.float32)})
        plan = sess.last_plan()
    by_name = dict(runs)
    gc.collect()
    assert by_name["b"]() is None, "a's output survived its last consumer"
    assert by_name["c"]() is None, "b's output survived its last consumer"
    assert result.shape == (1000,)
    assert plan.source.count("del ") == 3


def test_fetched_variable_like_values_are_copies():
    c = tf.constant([1.0, 2.0])
    with tf.Session() as sess:
        first = sess.run(c)
        first[0] = 100.0
        assert sess.run(c)[0] == 1.0


def test_closed_session_and_context_manager():
    c = tf.constant(1.0)
    sess = tf.Session()
    with sess:
        assert tf.get_default_session() is sess
        assert c.eval() == 1.0
    assert tf.get_default_session() is None
    with pytest.raises(RuntimeError, match="closed Session"):
        sess.run(c)


def test_eval_and_run_need_a_session():
    c = tf.constant(1.0)
    with pytest.raises(ValueError, match="No default session"):
        c.eval()
    g = tf.Graph()
    with g.as_default():
        other = tf.constant(2.0)
    with tf.Session() as sess:
        with pytest.raises(ValueError, match="graph is different"):
            other.eval(session=sess)
        c.op.run()


def test_interactive_session_installs_itself():
    c = tf.constant(3.0)
    sess = tf.InteractiveSession()
    try:
        assert c.eval() == 3.0
        assert tf.get_default_session() is sess
    finally:
        sess.close()
    assert tf.get_default_session() is None


def test_make_callable():
    x = tf.placeholder(tf.float32, [])
    y = x + 2.0
    with tf.Session() as sess:
        run = sess.make_callable([y], [x])
        assert run(1.0) == [3.0]


def test_fetching_a_missing_name_suggests_a_close_one():
    tf.constant(1.0, name="logits")
    with tf.Session() as sess:
        with pytest.raises(ValueError, match="Did you mean 'logits'"):
            sess.run("logit:0")
        with pytest.raises(TypeError):
            sess.run(None)


def test_cycle_is_reported_before_running():
    a = tf.identity(tf.constant(1.0), name="a")
    b = tf.identity(a, name="b")
    a.op._add_control_input(b.op)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="cycle.*(a -> b -> a|b -> a -> b)"):
            sess.run(b)


def test_kernel_failure_names_the_op_its_device_and_line(probe):
    build, _ = probe
    x = tf.placeholder(tf.float32, None)
    y = build(x, name="fails")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(y, {x: np.float32(-1.0)})
    text = str(info.value)
    assert "'fails' (type Probe)" in text
    assert "/job:localhost/replica:0/task:0/device:CPU:0" in text
    assert "conftest.py" in text and "create_op(\"Probe\"" in text  # the user-side line that built it
    assert info.value.op is y.op


def test_two_sessions_have_separate_resources():
    with tf.Session() as one, tf.Session() as two:
        assert one.resources is not two.resources


def test_intra_op_threads_limit_blas_during_a_run():
    from threadpoolctl import threadpool_info
    seen = []
    register_op("BlasProbe", same_as_input(0))

    @kernel("BlasProbe")
    def blas_probe(node):
        def run(x):
            seen.append([info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"])
            return x
        return run

    try:
        y = tf.get_default_graph().create_op("BlasProbe", [tf.placeholder(tf.float32, [])]).outputs[0]
        config = tf.ConfigProto(intra_op_parallelism_threads=1)
        with tf.Session(config=config) as sess:
            sess.run(y, {y.op.inputs[0]: 1.0})
    finally:
        del _OPS["BlasProbe"]
        del _KERNELS[("BlasProbe", "*")]
    assert seen and all(n == 1 for n in seen[0])
