"""TensorArray, map_fn, scan, foldl, foldr: both control-flow paths, TF's errors, gradients."""

import threading

import numpy as np
import pytest

import tfnb as tf
from tfnb.test import run_both_executors


def fails(fetches, message: str, feed_dict=None, traced: bool = False) -> str:
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE) if traced else None
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match=message) as caught:
        sess.run(fetches, feed_dict, options)
    return str(caught.value)


X = np.arange(12, dtype=np.float64).reshape(4, 3)


# -- the graph API --------------------------------------------------------------------------------


def test_write_read_stack_and_inferred_element_shape():
    ta = tf.TensorArray(tf.float32, size=3)
    assert ta.element_shape.ndims is None
    w = ta.write(0, [1.0, 2.0]).write(1, [3.0, 4.0]).write(2, [5.0, 6.0])
    assert ta.element_shape.as_list() == [2]  # shared by every TensorArray object of the array
    assert w.read(1).shape.as_list() == [2] and w.stack().shape.as_list() == [3, 2]
    assert w.flow.dtype is tf.float32 and ta.handle.dtype is tf.resource and w.dtype is tf.float32
    np.testing.assert_array_equal(run_both_executors(w.stack()), [[1, 2], [3, 4], [5, 6]])
    with pytest.raises(ValueError, match="Inconsistent shapes"):
        ta.write(1, [1.0, 2.0, 3.0])


def test_unstack_gather_scatter_concat_split_size():
    x = tf.constant(X)
    ta = tf.TensorArray(tf.float64, 4, clear_after_read=False).unstack(x)
    gathered, size, last = ta.gather([3, 1]), ta.size(), ta.read(3)
    scattered = tf.TensorArray(tf.float64, 4).scatter([2, 0, 3, 1], x).stack()
    split = tf.TensorArray(tf.float64, 2, infer_shape=False, clear_after_read=False).split(x, [1, 3])
    out = run_both_executors([gathered, size, last, scattered, split.concat(), split.read(1)])
    np.testing.assert_array_equal(out[0], X[[3, 1]])
    assert out[1] == 4
    np.testing.assert_array_equal(out[3], X[[1, 3, 0, 2]])
    np.testing.assert_array_equal(out[4], X)
    np.testing.assert_array_equal(out[5], X[1:])


def test_dynamic_size_grows_and_size_op():
    ta = tf.TensorArray(tf.int32, size=0, dynamic_size=True).write(4, 7)
    assert run_both_executors([ta.size(), ta.read(4)]) == [5, 7]


def test_unwritten_index_reads_zeros_only_with_a_known_element_shape():
    assert run_both_executors(tf.TensorArray(tf.float32, 2, element_shape=[2]).read(1)).tolist() == [0.0, 0.0]
    assert run_both_executors(tf.TensorArray(tf.float32, 2).write(0, [1.0]).read(1)).tolist() == [0.0]
    fails(tf.TensorArray(tf.float32, 2).read(1), "Could not read from TensorArray index 1")


def test_empty_array_stacks_with_a_known_element_shape():
    assert run_both_executors(tf.TensorArray(tf.float32, 0, element_shape=[3]).stack()).shape == (0, 3)
    with tf.Session() as sess, pytest.raises(tf.errors.UnimplementedError, match="size zero"):
        sess.run(tf.TensorArray(tf.float32, 0).stack())


def test_constructor_arguments_as_tf():
    ta = tf.TensorArray(tf.float32, 2)
    with pytest.raises(ValueError, match="size"):
        tf.TensorArray(tf.float32)
    with pytest.raises(ValueError, match="flow"):
        tf.TensorArray(tf.float32, handle=ta.handle)
    with pytest.raises(ValueError, match="both"):
        tf.TensorArray(tf.float32, size=2, handle=ta.handle, flow=ta.flow)
    same = tf.TensorArray(tf.float32, handle=ta.handle, flow=ta.flow).write(0, 1.0).write(1, 2.0)
    assert run_both_executors(same.stack()).tolist() == [1.0, 2.0]


# -- errors, each naming the op ------------------------------------------------------------------------


@pytest.mark.parametrize("traced", [False, True], ids=["compiled", "traced"])
def test_errors_name_the_op(traced):
    one = tf.TensorArray(tf.float32, 1).write(0, 1.0)
    text = fails(one.write(0, 2.0, name="twice").flow, "already been written to", traced=traced)
    assert "twice" in text
    fails(one.write(1, 2.0).flow, "not resizeable and size is: 1", traced=traced)
    first = one.read(0)
    with tf.control_dependencies([first]):
        again = one.read(0, name="again")
    assert "'again'" in fails(again, "cleared after a previous read", traced=traced)
    wrong = tf.TensorArray(tf.int32, handle=one.handle, flow=one.flow)
    fails(wrong.write(0, 3).flow, "TensorArray dtype is float32 but Op is trying to write dtype int32", traced=traced)
    fails(wrong.read(0), "Op is trying to read dtype int32", traced=traced)
    with tf.control_dependencies([one.close()]):
        after = tf.identity(one.flow)
    fails(tf.TensorArray(tf.float32, handle=one.handle, flow=after).read(0), "already been closed", traced=traced)


def test_shape_errors_at_run_time():
    x = tf.placeholder(tf.float32, [None])
    fails(tf.TensorArray(tf.float32, 3).scatter([0, 1], x).flow, r"len\(indices\) == values.shape\[0\]",
          {x: np.ones(3)})
    fails(tf.TensorArray(tf.float32, 2).split(x, [1, 1]).flow, "sum of lengths", {x: np.ones(3)})
    ta = tf.TensorArray(tf.float32, 2, infer_shape=False).write(0, x).write(1, x[1:])
    fails(ta.stack(), "inconsistent shapes", {x: np.ones(3)})
    np.testing.assert_array_equal(run_both_executors(ta.concat(), {x: np.arange(3.0)}), [0, 1, 2, 1, 2])


# -- loops --------------------------------------------------------------------------------------------


def test_while_loop_carries_tensor_arrays():
    x = tf.placeholder(tf.float32, [None, 3])
    n = tf.shape(x)[0]
    inputs = tf.TensorArray(tf.float32, n).unstack(x)

    def body(i, out):
        return i + 1, out.write(i, inputs.read(i) * tf.cast(i, tf.float32))

    i, out = tf.while_loop(lambda i, out: i < n, body, [0, tf.TensorArray(tf.float32, n)])
    assert isinstance(out, tf.TensorArray) and out.element_shape.as_list() == [3]
    np.testing.assert_array_equal(run_both_executors(out.stack(), {x: X}), X * np.arange(4)[:, None])
    single = tf.while_loop(lambda ta: ta.size() < 3, lambda ta: ta.write(ta.size(), 1.0),
                           [tf.TensorArray(tf.float32, 0, dynamic_size=True)])
    assert isinstance(single, tf.TensorArray)
    assert run_both_executors(single.stack()).tolist() == [1.0, 1.0, 1.0]


def test_map_fn_with_nested_elems_and_dtype():
    a, b = tf.constant(X), tf.constant(np.arange(4))
    doubled = tf.map_fn(lambda x: x * 2.0, a)
    assert doubled.shape.as_list() == [4, 3]
    pair = tf.map_fn(lambda e: (e[0] * tf.cast(e[1], tf.float64), e[1] + 1), (a, b), dtype=(tf.float64, tf.int64))
    summed = tf.map_fn(lambda e: {"s": tf.reduce_sum(e["x"])}, {"x": a}, dtype={"s": tf.float64})
    out = run_both_executors([doubled, pair, summed])
    np.testing.assert_array_equal(out[0], X * 2)
    np.testing.assert_array_equal(out[1][0], X * np.arange(4)[:, None])
    np.testing.assert_array_equal(out[1][1], np.arange(1, 5))
    np.testing.assert_array_equal(out[2]["s"], X.sum(1))
    with pytest.raises(ValueError, match="scalar"):
        tf.map_fn(lambda x: x, tf.constant(1.0))


def test_scan_foldl_foldr():
    x = tf.placeholder(tf.float64, [None, 3])
    ones = tf.ones([3], tf.float64)
    fetches = [tf.scan(lambda a, e: a + e, x), tf.scan(lambda a, e: a * 2.0 + e, x, initializer=ones, reverse=True),
               tf.foldl(lambda a, e: a - e, x), tf.foldr(lambda a, e: a - e, x, initializer=tf.zeros([3], tf.float64)),
               tf.scan(lambda a, e: (a[0] + e, a[1] * e), x, initializer=(tf.zeros([3], tf.float64),
                                                                        tf.ones([3], tf.float64)))]
    out = run_both_executors(fetches, {x: X})
    np.testing.assert_array_equal(out[0], np.cumsum(X, 0))
    expected, a = [], np.ones(3)
    for row in X[::-1]:
        a = a * 2 + row
        expected.append(a)
    np.testing.assert_array_equal(out[1], expected[::-1])
    np.testing.assert_array_equal(out[2], X[0] - X[1:].sum(0))
    np.testing.assert_array_equal(out[3], -X.sum(0))
    np.testing.assert_array_equal(out[4][1], np.cumprod(X, 0))


def test_arrays_belong_to_one_step():
    x = tf.placeholder(tf.float32, [None])
    doubled = tf.map_fn(lambda v: v * 2.0, x)
    with tf.Session() as sess:
        results = {}

        def step(k):
            results[k] = sess.run(doubled, {x: np.full(50, float(k))})

        threads = [threading.Thread(target=step, args=(k,)) for k in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert all((results[k] == 2.0 * k).all() for k in range(6))
        assert sess.run(doubled, {x: [1.0]}).tolist() == [2.0]  # a new run writes a new array


# -- gradients ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("build", [
    lambda x: tf.TensorArray(tf.float64, 4).unstack(x).stack() ** 2,
    lambda x: tf.TensorArray(tf.float64, 2).write(0, x[1] * 3.0).write(1, x[0]).read(0),
    lambda x: tf.TensorArray(tf.float64, 4).scatter([3, 0, 2, 1], x).gather([1, 3]) * x[:2],
    lambda x: tf.TensorArray(tf.float64, 2, infer_shape=False).split(x, [1, 3]).concat() * x,
    lambda x: tf.TensorArray(tf.float64, 4, clear_after_read=False).unstack(x).read(2) * 2.0,
], ids=["unstack-stack", "write-read", "scatter-gather", "split-concat", "unread-elements"])
def test_gradients_outside_loops(build):
    tf.test.check_gradients(build, [X + 1.0])


@pytest.mark.parametrize("build", [
    lambda x: tf.map_fn(lambda r: tf.sin(r) * r, x),
    lambda x: tf.scan(lambda a, r: a * r + 1.0, x),
    lambda x: tf.scan(lambda a, r: a * tf.cos(r), x, initializer=tf.ones([3], tf.float64), reverse=True),
    lambda x: tf.foldl(lambda a, r: a * r, x),
    lambda x: tf.foldr(lambda a, r: a * r + a, x, initializer=x[0]),
    lambda x: tf.map_fn(lambda e: (e[0] * e[1], e[1]), (x, x * 2.0), dtype=(tf.float64, tf.float64)),
], ids=["map_fn", "scan", "scan-reverse-init", "foldl", "foldr-init", "map_fn-nested"])
def test_gradients_through_loops(build):
    tf.test.check_gradients(build, [X / 10.0 + 0.5])


def test_gradient_through_a_hand_written_loop_with_a_captured_weight():
    def build(x, w):
        n = tf.shape(x)[0]
        inputs = tf.TensorArray(tf.float64, n).unstack(x)

        def body(i, h, out):
            h = tf.tanh(h * w + inputs.read(i))
            return i + 1, h, out.write(i, h)

        _, _, out = tf.while_loop(lambda i, h, out: i < n, body, [0, tf.zeros([3], tf.float64),
                                                                   tf.TensorArray(tf.float64, n)])
        return out.stack()

    tf.test.check_gradients(build, [X / 10.0, np.array([0.5, -0.3, 0.8])])


def test_gradient_of_nested_map_fn():
    cube = np.arange(12.0).reshape(2, 2, 3) / 10.0
    tf.test.check_gradients(lambda x: tf.map_fn(lambda m: tf.map_fn(lambda r: tf.sin(r) * r, m), x), [cube])


def test_each_gradients_call_has_its_own_gradient_arrays():
    x = tf.placeholder(tf.float64, [None, 3])
    y = tf.reduce_sum(tf.map_fn(lambda r: r * r, x))
    first, second = tf.gradients(y, x)[0], tf.gradients(y * 3.0, x)[0]
    out = run_both_executors([first, second], {x: X})
    np.testing.assert_allclose(out[0], 2 * X)
    np.testing.assert_allclose(out[1], 6 * X)
