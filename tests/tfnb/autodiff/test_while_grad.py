"""Gradients through tf.while_loop: a backward loop in its own frame reads the values each forward
iteration saved; checked against finite differences and run by both executors."""

import numpy as np
import pytest

import tfnb as tf

FULL_TRACE = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)


def run_both(fetches, feed_dict=None):
    """Runs both executors (which must agree), and checks that the untraced run compiled its loops to Python `while`."""
    with tf.Session() as sess:
        values = tf.test.run_both_executors(fetches, feed_dict, sess)
        source = next(iter(sess._cache.values())).plan.source
    assert "while True:" in source, "the untraced run did not compile its loops"
    return values


def check(build, inputs):
    """Gradients of `build` against finite differences, then the same gradients from both executors."""
    inputs = [np.asarray(v) for v in inputs]
    tf.test.check_gradients(build, inputs)
    feeds = [tf.placeholder(tf.as_dtype(v.dtype), v.shape) for v in inputs]
    outputs = build(*feeds)
    outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    xs = [f for f, v in zip(feeds, inputs) if v.dtype.kind == "f"]
    grads = tf.gradients([tf.reduce_sum(y) for y in outputs], xs)
    assert all(g is not None for g in grads)
    return run_both([tf.convert_to_tensor(g) for g in grads], dict(zip(feeds, inputs)))


def power(x, n):
    """x**n by n multiplications."""
    return tf.while_loop(lambda i, p: i < n, lambda i, p: (i + 1, p * x), [tf.constant(0), tf.ones_like(x)])[1]


@pytest.mark.parametrize("n", [1, 2, 5])
def test_power_by_repeated_multiplication(n):
    x = np.array([1.3, -0.7, 2.0])
    (grad,) = check(power, [x, np.int32(n)])
    np.testing.assert_allclose(grad, n * x ** (n - 1))


def test_two_loop_variables_interacting():
    def build(a, b):
        return tf.while_loop(lambda i, a, b: i < 3, lambda i, a, b: (i + 1, a * b, a + tf.sin(b)),
                             [tf.constant(0), a, b])[1:]
    check(build, [np.array([0.5, 1.2]), np.array([0.3, -0.4])])


def test_swapped_and_unused_loop_variables():
    swap = lambda a, b: tf.while_loop(lambda i, a, b: i < 3, lambda i, a, b: (i + 1, b * 2.0, a + b),  # noqa: E731
                                      [tf.constant(0), a, b])[1:]
    np.testing.assert_allclose(check(swap, [np.array([0.5]), np.array([0.3])]), [[5.0], [11.0]])  # 2a+6b, 3a+5b
    unused = lambda x: tf.while_loop(lambda i, a, b: i < 3, lambda i, a, b: (i + 1, a * x, tf.exp(b)),  # noqa: E731
                                     [tf.constant(0), x, x])[1]
    check(unused, [np.array([0.5, 0.2])])


def rnn(w, h0, sequence):
    """h = tanh(W h + x_t) over the sequence, x_t gathered by the iteration counter."""
    def body(t, h):
        return t + 1, tf.tanh(tf.matmul(w, h) + tf.reshape(tf.gather(sequence, t), [-1, 1]))
    return tf.while_loop(lambda t, h: t < tf.shape(sequence)[0], body, [tf.constant(0), h0])[1]


def test_rnn_with_a_captured_weight():
    rng = np.random.default_rng(0)
    check(rnn, [rng.standard_normal((3, 3)) * 0.5, rng.standard_normal((3, 1)), rng.standard_normal((4, 3))])


def test_cond_inside_the_loop_body():
    def build(x):
        def body(i, v):
            return i + 1, tf.cond(tf.equal(i % 2, 0), lambda: v * x, lambda: tf.sin(v) + x)
        return tf.while_loop(lambda i, v: i < 5, body, [tf.constant(0), x])[1]
    check(build, [np.array([0.4, 1.3])])


def test_nested_conds_over_more_iterations_than_parallel_iterations():
    def build(x):
        def body(i, v):
            inner = lambda: tf.cond(tf.equal(i % 3, 0), lambda: v * x, lambda: v + x * x)  # noqa: E731
            return i + 1, tf.cond(i % 2 > 0, inner, lambda: tf.cos(v))
        return tf.while_loop(lambda i, v: i < 30, body, [tf.constant(0), x])[1]
    check(build, [np.array([0.4, 0.3])])


def test_a_branch_that_does_not_use_a_value():
    def build(x):
        def body(i, v):
            return i + 1, tf.cond(i < 2, lambda: v * 2.0, lambda: tf.zeros_like(v)) + v * x
        return tf.while_loop(lambda i, v: i < 4, body, [tf.constant(0), x])[1]
    check(build, [np.array([0.4, 0.3])])


def test_nested_loops():
    def build(x):
        def outer(i, a):
            inner = tf.while_loop(lambda j, b: j < i, lambda j, b: (j + 1, b * x + 0.1), [tf.constant(0), a])[1]
            return i + 1, tf.sin(inner)
        return tf.while_loop(lambda i, a: i < 4, outer, [tf.constant(0), x])[1]
    check(build, [np.array([0.9, -0.6])])  # the inner loop runs 0, 1, 2, 3 times


def test_cond_in_a_nested_loop_and_a_loop_in_a_cond():
    def cond_in_inner(x):
        def outer(i, a):
            def inner_body(j, b):
                return j + 1, tf.cond(j > i, lambda: b * x, lambda: b + x)
            return i + 1, tf.sin(tf.while_loop(lambda j, b: j < 3, inner_body, [tf.constant(0), a])[1])
        return tf.while_loop(lambda i, a: i < 3, outer, [tf.constant(0), x])[1]
    check(cond_in_inner, [np.array([0.4, 0.7])])

    def loop_in_branch(x):
        def body(i, a):
            looped = lambda: tf.while_loop(lambda j, b: j < i, lambda j, b: (j + 1, b * x),  # noqa: E731
                                           [tf.constant(0), a])[1]
            return i + 1, tf.cond(i % 2 > 0, looped, lambda: a + x)
        return tf.while_loop(lambda i, a: i < 5, body, [tf.constant(0), x])[1]
    check(loop_in_branch, [np.array([0.9, 0.7])])


def test_loop_inside_a_cond():
    def build(x):
        return tf.cond(tf.reduce_sum(x) > 0, lambda: power(x, 3), lambda: x * 3.0)
    check(build, [np.array([0.4, 0.3])])
    check(build, [np.array([-0.4, 0.3])])


def test_maximum_iterations():
    def build(x):
        return tf.while_loop(lambda v: tf.reduce_sum(v) < 1e9, lambda v: v * x, [x], maximum_iterations=3)
    x = np.array([1.5, 0.8])
    np.testing.assert_allclose(check(build, [x])[0], 4 * x ** 3)


def test_a_loop_that_runs_zero_times():
    def build(x):
        return tf.while_loop(lambda i, v: i < 0, lambda i, v: (i + 1, v * x), [tf.constant(0), x * 2.0])[1]
    np.testing.assert_allclose(check(build, [np.array([1.5, 0.8])])[0], [2.0, 2.0])


def test_shapes_that_grow_and_shapes_known_only_at_run_time():
    def grow(x):
        return tf.while_loop(lambda v: tf.size(v) < 8, lambda v: tf.concat([v, tf.sin(v) * x[0]], 0), [x],
                             shape_invariants=[tf.TensorShape([None])])
    check(grow, [np.array([0.4, 0.3])])
    x = tf.placeholder(tf.float64, [None])
    y = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * x), [tf.constant(0), tf.ones_like(x)])[1]
    grad = tf.gradients(tf.reduce_sum(y), x)[0]
    np.testing.assert_allclose(run_both(grad, {x: [2.0, -1.0]}), [12.0, 3.0])


def test_the_backward_loop_has_its_own_frame_and_as_many_iterations():
    x = tf.placeholder(tf.float64, [])
    grad = tf.gradients(power(x, 4), x)[0]
    metadata = tf.RunMetadata()
    with tf.Session() as sess:
        assert sess.run(grad, {x: 3.0}, FULL_TRACE, metadata) == 4 * 27.0
    graph = tf.get_default_graph()

    def frames(op_type):
        return [s.frame for s in metadata.node_stats()
                if graph.get_operation_by_name(s.node_name).type == op_type and not s.dead]
    assert frames("AccumulatorPush") == [f"while:{k}" for k in range(4)]
    assert frames("AccumulatorRead") == [f"gradients/while_grad:{k}" for k in range(4)]


def test_loop_invariants_are_read_directly_not_saved():
    x = tf.placeholder(tf.float64, [2])
    y = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * x), [tf.constant(0), x])[1]
    tf.gradients(tf.reduce_sum(y), x)
    saved = [op for op in tf.get_default_graph().get_operations() if op.type == "AccumulatorPush"]
    assert [op.inputs[2].op.name for op in saved] == ["while/Identity_1"]  # v per iteration; x is not saved


def test_gradients_built_twice_share_the_saved_values():
    x = tf.placeholder(tf.float64, [])
    y = power(x, 3)
    first = tf.gradients(y, x)[0]
    second = tf.gradients(y * y, x)[0]
    pushes = [op for op in tf.get_default_graph().get_operations() if op.type == "AccumulatorPush"]
    assert len(pushes) == 1
    assert run_both([first, second], {x: 2.0}) == [12.0, 2 * 8.0 * 12.0]


def test_parallel_iterations_one():
    x = tf.placeholder(tf.float64, [2])
    y = tf.while_loop(lambda i, v: i < 12, lambda i, v: (i + 1, tf.sin(v) * x), [tf.constant(0), x],
                      parallel_iterations=1)[1]
    run_both([y, tf.gradients(tf.reduce_sum(y), x)[0]], {x: [0.4, 0.3]})


def test_back_prop_false_passes_no_gradient():
    x = tf.placeholder(tf.float32, [])
    y = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * x), [0, x], back_prop=False)[1]
    assert tf.gradients(y, x) == [None]
    assert tf.gradients(y + x, x)[0] is not None  # the path around the loop still counts


def test_unsupported_gradients_say_why():
    x = tf.placeholder(tf.float64, [])
    inside = []

    def body(i, v):
        inside.append(v * x)
        return i + 1, inside[-1]
    y = tf.while_loop(lambda i, v: i < 3, body, [tf.constant(0), x])[1]
    with pytest.raises(LookupError, match="inside the body"):
        tf.gradients(y, inside[0])
    grad = tf.gradients(y, x)[0]
    with pytest.raises(LookupError, match="second order"):
        tf.gradients(grad, x)


def test_reading_an_iteration_that_was_not_saved_is_an_error():
    from tfnb.ops.accumulator_ops import accumulator, accumulator_read
    read = accumulator_read(accumulator(tf.float32, []), 3, tf.float32, [])
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="no value for iteration 3"):
        sess.run(read)


def test_training_an_rnn_reduces_its_loss():
    rng = np.random.default_rng(1)
    sequences = tf.placeholder(tf.float32, [8, 5, 2])
    targets = tf.placeholder(tf.float32, [8, 1])
    w = tf.Variable(rng.standard_normal((4, 4)).astype(np.float32) * 0.3, name="w")
    u = tf.Variable(rng.standard_normal((2, 4)).astype(np.float32) * 0.3, name="u")
    out = tf.Variable(np.zeros((4, 1), np.float32), name="out")

    def body(t, h):
        return t + 1, tf.tanh(tf.matmul(h, w) + tf.matmul(sequences[:, t, :], u))
    h = tf.while_loop(lambda t, h: t < 5, body, [tf.constant(0), tf.zeros([8, 4])])[1]
    loss = tf.reduce_mean(tf.square(tf.matmul(h, out) - targets))
    step = tf.train.GradientDescentOptimizer(0.3).minimize(loss)
    feed = {sequences: rng.standard_normal((8, 5, 2)).astype(np.float32),
            targets: rng.standard_normal((8, 1)).astype(np.float32)}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        losses = [sess.run([loss, step], feed)[0] for _ in range(20)]
        sess.run(step, feed, FULL_TRACE, tf.RunMetadata())  # a traced training step runs the frame executor
        traced_loss = sess.run(loss, feed)
    assert losses[-1] < 0.5 * losses[0]
    assert traced_loss < losses[-1]
