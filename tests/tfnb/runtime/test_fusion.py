"""Kernel fusion in plans: which lines fuse, that fused plans compute what unfused ones do, errors."""

import collections
import re
import threading

import numpy as np
import pytest

import tfnb as tf
from tfnb.framework.common_shapes import geometry_from_attrs
from tfnb.kernels import KernelNode, conv, find_kernel, intra_op
from tfnb.kernels.conv import choice, convolution, fft, pooling
from tfnb.kernels.conv.arguments import pool_geometry_or_fail
from tfnb.ops.conv_ops import max_pool_grad
from tfnb.ops.nn_ops import relu_grad
from tfnb.runtime import codegen, fusion

UNFUSED = tf.ConfigProto(graph_options=tf.GraphOptions(
    optimizer_options=tf.OptimizerOptions(do_kernel_fusion=False)))


def plan_source(sess: tf.Session) -> str:
    return sess.last_plan().source


def fused_lines(sess: tf.Session) -> list[str]:
    return [line.split("# fused ")[1] for line in plan_source(sess).splitlines() if "# fused " in line]


def fused_and_unfused(fetches, feeds: dict) -> tuple:
    """(values of a plan with fused kernels, of an unfused plan, the fused plan's fused lines), fresh sessions."""
    results = []
    for config in (None, UNFUSED):
        with tf.Session(config=config) as sess:
            results.append(sess.run(fetches, feeds))
            if config is None:
                lines = fused_lines(sess)
    return results[0], results[1], lines


def conv_layer(x, channels: int, seed: int, relu: bool = True):
    rng = np.random.default_rng(seed)
    w = tf.Variable(rng.standard_normal((3, 3, x.shape.as_list()[-1], channels)).astype(np.float32) * 0.3)
    b = tf.Variable(rng.standard_normal(channels).astype(np.float32))
    y = tf.nn.bias_add(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME"), b)
    return tf.nn.relu(y) if relu else y


def small_cnn():
    """Two conv layers (the second on 16 channels, so its gradients may use FFT) and a training step."""
    x = tf.placeholder(tf.float32, [8, 12, 12, 3])
    h = tf.nn.max_pool(conv_layer(x, 16, 0), [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    h = conv_layer(h, 16, 1)
    loss = tf.reduce_mean(tf.square(h))
    train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    return x, loss, train


def test_conv_bias_relu_and_gradient_pairs_fuse_and_train_as_unfused_plans():
    x, loss, train = small_cnn()
    data = np.random.default_rng(2).standard_normal((8, 12, 12, 3)).astype(np.float32)
    conv.clear_algorithm_cache()
    results = []
    for config in (None, UNFUSED):
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            results.append([sess.run([loss, train], {x: data})[0] for _ in range(4)])
            if config is None:
                lines = fused_lines(sess)
    assert sum("Conv2D + " in line and "BiasAdd" in line and "Relu" in line for line in lines) == 2
    assert any("Conv2DBackpropInput + " in line and "Conv2DBackpropFilter" in line for line in lines)
    assert any("MaxPoolGrad + " in line and "ReluGrad" in line for line in lines)
    np.testing.assert_allclose(results[0], results[1], rtol=1e-5)


def test_the_gradient_pair_uses_one_transform_of_dy_when_both_directions_chose_fft(monkeypatch):
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((4, 10, 10, 8)).astype(np.float32), rng.standard_normal((5, 5, 8, 6)).astype(np.float32)
    dy = rng.standard_normal((4, 10, 10, 6)).astype(np.float32)
    geo = geometry_from_attrs({"strides": [1, 1, 1, 1], "padding": "SAME"}, (10, 10), (5, 5))
    for direction, a, b in (("backprop_input", dy, w), ("backprop_filter", x, dy)):
        monkeypatch.setitem(choice._CHOSEN, choice._key(direction, a, b, geo, np), "fft")
    calls = []
    monkeypatch.setattr(convolution, "fft_backprop", lambda *args: _recorded(calls, *args))
    attrs = {"strides": [1, 1, 1, 1], "padding": "SAME", "dilations": [1, 1, 1, 1], "data_format": "NHWC",
             "explicit_paddings": []}
    node = KernelNode("Conv2DBackpropInput", "bi", attrs, (np.dtype(np.int32),) + (np.dtype(np.float32),) * 2,
                      (np.dtype(np.float32),))
    both = convolution.conv2d_backprop_input(node).with_filter_gradient
    dx, dw = both(np.array(x.shape, np.int32), w, dy, x, np.array(w.shape, np.int32))
    assert len(calls) == 1
    np.testing.assert_allclose(dx, fft.fft_backprop_input(conv.Scratch(np), dy, w, geo), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(dw, fft.fft_backprop_filter(conv.Scratch(np), x, dy, geo), rtol=1e-4, atol=1e-3)


_fft_backprop = fft.fft_backprop


def _recorded(calls: list, *args):
    calls.append(args)
    return _fft_backprop(*args)


def _gemm_and(way: str):
    """An unmeasured choice (choice._measure): im2col for each direction (where both chose FFT, a gradient pair
    shares one spectrum of dy instead), and `way` for a gradient pair."""

    def pick(scratch, candidates: dict, args):
        name = "gemm" if "gemm" in candidates else way
        return name, candidates[name](scratch, *args)

    return pick


def _convolution_gradients():
    """The input and filter gradients of a 3x3 convolution's squares: (tensors, filter variable)."""
    rng = np.random.default_rng(4)
    x = tf.constant(rng.standard_normal((2, 10, 10, 6)).astype(np.float32))
    w = tf.Variable(rng.standard_normal((3, 3, 6, 8)).astype(np.float32))
    loss = tf.reduce_sum(tf.square(tf.nn.conv2d(x * 1.0, w, [1, 1, 1, 1], "SAME")))
    return tf.gradients(loss, [x, w])


def test_a_gradient_pair_computes_its_two_directions_side_by_side(monkeypatch):
    monkeypatch.setattr(intra_op, "PARALLEL_WORK", 0)
    monkeypatch.setattr(choice, "_measure", _gemm_and("side by side"))
    conv.clear_algorithm_cache()
    gradients = _convolution_gradients()
    threads = []
    side_by_side = convolution.side_by_side
    both_running = threading.Barrier(2, timeout=10)  # broken unless the two directions run at once

    def recording(task):
        def run():
            both_running.wait()
            threads.append(threading.get_ident())
            return task()
        return run

    def recorded(tasks, work):
        return side_by_side([recording(task) for task in tasks], work)

    monkeypatch.setattr(convolution, "side_by_side", recorded)
    results = []
    for config in (tf.ConfigProto(intra_op_parallelism_threads=2), UNFUSED):
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            results.append(sess.run(gradients))
            if config is not UNFUSED:
                assert any("Conv2DBackpropInput + " in line for line in fused_lines(sess))
    conv.clear_algorithm_cache()
    assert len(threads) == 2 and threads[0] != threads[1]
    for fused, unfused in zip(*results):
        np.testing.assert_allclose(fused, unfused, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("way", ["side by side", "one after the other"])
def test_a_gradient_pair_runs_the_way_measured_faster_once_per_key(monkeypatch, way):
    """Side by side (a direction per thread) or one after the other (each split across the threads): measured on
    first sight of the shapes, as the algorithms are, then kept; not measured with one thread."""
    monkeypatch.setattr(intra_op, "PARALLEL_WORK", 0)
    measured, pick = [], _gemm_and(way)

    def recorded(scratch, candidates: dict, args):
        if "gemm" not in candidates:
            measured.append(sorted(candidates))
        return pick(scratch, candidates, args)

    monkeypatch.setattr(choice, "_measure", recorded)
    side_by_side_calls = []
    side_by_side = convolution.side_by_side
    monkeypatch.setattr(convolution, "side_by_side",
                        lambda tasks, work: side_by_side_calls.append(len(tasks)) or side_by_side(tasks, work))
    conv.clear_algorithm_cache()
    gradients = _convolution_gradients()
    results = []
    for config in (tf.ConfigProto(intra_op_parallelism_threads=2), UNFUSED):
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            results.append([sess.run(gradients), sess.run(gradients)])
    assert measured == [["one after the other", "side by side"]]
    assert [name for key, name in conv.chosen_algorithms().items() if key[0] == "gradients"] == [way]
    assert side_by_side_calls == ([2, 2] if way == "side by side" else [])
    side_by_side_calls.clear()
    with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=1)) as sess:
        sess.run(tf.global_variables_initializer())
        results.append([sess.run(gradients)])
    conv.clear_algorithm_cache()
    assert len(measured) == 1 and side_by_side_calls == [2]
    for run_results in results[1:]:
        for fused, unfused in zip(results[0][-1], run_results[-1]):
            np.testing.assert_allclose(fused, unfused, rtol=1e-5, atol=1e-4)
    for first, second in zip(*results[0]):
        np.testing.assert_array_equal(first, second)


def test_values_read_elsewhere_or_fetched_are_not_fused_away():
    x = tf.placeholder(tf.float32, [2, 6, 6, 3])
    data = np.random.default_rng(4).standard_normal((2, 6, 6, 3)).astype(np.float32)
    pre_activation = conv_layer(x, 4, 5, relu=False)
    activation = tf.nn.relu(pre_activation)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        both, fused_only = sess.run([activation, pre_activation], {x: data})
        assert [line.split(" + ")[1].split(" = ")[1] for line in fused_lines(sess)] == ["BiasAdd"]  # no Relu
        np.testing.assert_array_equal(both, np.maximum(fused_only, 0))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run([activation, pre_activation.op.inputs[0]], {x: data})  # the convolution's own output is fetched
        assert fused_lines(sess) == []


def test_traced_runs_record_every_op_of_fused_lines():
    x = tf.placeholder(tf.float32, [2, 6, 6, 3])
    y = conv_layer(x, 4, 6)
    data = np.random.default_rng(7).standard_normal((2, 6, 6, 3)).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        plain = sess.run(y, {x: data})
        metadata = tf.RunMetadata()
        traced = sess.run(y, {x: data}, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                          run_metadata=metadata)
    np.testing.assert_array_equal(plain, traced)
    recorded = {s.op_type for d in metadata.step_stats.dev_stats for s in d.node_stats}
    assert {"Conv2D", "BiasAdd", "Relu"} <= recorded


@pytest.mark.parametrize("bad", ["bias", "filter"])
def test_a_failing_fused_line_names_the_op_that_fails(bad):
    x = tf.placeholder(tf.float32, [2, 6, 6, 3])
    w = tf.placeholder(tf.float32, [3, 3, None, 4])
    b = tf.placeholder(tf.float32, [None])
    y = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME", name="conv"), b, name="bias"))
    feeds = {x: np.zeros((2, 6, 6, 3), np.float32), w: np.zeros((3, 3, 3, 4), np.float32), b: np.zeros(4, np.float32)}
    if bad == "bias":
        feeds[b] = np.zeros(5, np.float32)
    else:
        feeds[w] = np.zeros((3, 3, 2, 4), np.float32)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(y, feeds)
        assert fused_lines(sess)
    assert info.value.op.name == ("bias" if bad == "bias" else "conv")


@pytest.mark.parametrize("ksize,strides", [(2, 2), (3, 2)])  # tiling windows and overlapping ones
def test_pool_gradient_fused_with_relu_gradient_is_exact(ksize, strides):
    x = tf.placeholder(tf.float32, [4, 9, 9, 5])
    pooled = tf.nn.max_pool(tf.nn.relu(x), [1, ksize, ksize, 1], [1, strides, strides, 1], "SAME")
    grad = tf.gradients(tf.reduce_sum(pooled * pooled), x)[0]
    data = np.random.default_rng(8).standard_normal((4, 9, 9, 5)).astype(np.float32)
    fused, unfused, lines = fused_and_unfused(grad, {x: data})
    assert any("MaxPoolGrad + " in line for line in lines)
    np.testing.assert_array_equal(fused, unfused)


def test_a_relu_gradient_of_other_features_is_not_fused_into_the_pool_gradient():
    """The fused variant masks by the pool's own input; a ReluGrad of different features must run apart."""
    x = tf.placeholder(tf.float32, [2, 4, 4, 3])
    other = tf.placeholder(tf.float32, [2, 4, 4, 3])
    pooled = tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    pool_grad = tf.gradients(tf.reduce_sum(pooled * pooled), x)[0]
    masked = relu_grad(pool_grad, other)
    rng = np.random.default_rng(3)
    data, features = (rng.standard_normal((2, 4, 4, 3)).astype(np.float32) for _ in range(2))
    with tf.Session() as sess:
        fused = sess.run(masked, {x: data, other: features})
        assert not any("MaxPoolGrad + " in line for line in fused_lines(sess))
    with tf.Session(config=UNFUSED) as sess:
        np.testing.assert_array_equal(fused, sess.run(masked, {x: data, other: features}))


def max_pool_kernel(attrs: dict):
    """The CPU MaxPool kernel for these attrs (float32), as a plan builds it."""
    return find_kernel("MaxPool", "CPU").factory(KernelNode("MaxPool", "p", attrs, (np.float32,), (np.float32,)))


@pytest.mark.parametrize("shape,ksize,strides,padding", [
    ((3, 9, 9, 4), [1, 3, 3, 1], [1, 1, 1, 1], "SAME"),   # overlapping, padded (an inception module's pool)
    ((3, 10, 10, 4), [1, 2, 2, 1], [1, 2, 2, 1], "VALID"),  # tiling
    ((3, 9, 9, 4), [1, 2, 2, 1], [1, 2, 2, 1], "SAME"),   # tiling but padded
    ((3, 11, 11, 4), [1, 3, 3, 1], [1, 2, 2, 1], "VALID"),  # AlexNet's overlapping pool
    ((3, 8, 10, 4), [1, 3, 3, 1], [1, 2, 2, 1], "SAME"),  # GoogLeNet's stride-2 pools: padded after, read in place
    ((3, 9, 9, 4), [1, 4, 4, 1], [1, 3, 3, 1], "SAME"),   # three phases of columns, the last tap one output short
    ((3, 8, 7, 4), [1, 1, 3, 1], [1, 1, 2, 1], "SAME"),   # one row tap
    ((3, 8, 7, 4), [1, 3, 1, 1], [1, 2, 1, 1], "SAME"),   # one column tap
])
@pytest.mark.parametrize("values", ["random", "ties", "non-finite"])
@pytest.mark.parametrize("relu", [False, True])
def test_max_pool_keeps_where_its_maxima_are_for_its_gradient(shape, ksize, strides, padding, values, relu):
    """The gradient reads the pool's workspace (where each window's first maximum is) and matches
    MaxPoolGrad finding the maxima again, ties (ReLU's zeros) and padding beside -inf and NaN included.
    Windows of ksize == strides keep none: their gradient compares each tap with the pool's output. Over a ReLU,
    the gradient takes ReluGrad where dy goes (y > 0), or over x where a maximum is NaN."""
    rng = np.random.default_rng(9)
    data = rng.standard_normal(shape).astype(np.float32)
    if values == "ties":
        data = np.maximum(np.round(data), 0)
    elif values == "non-finite":
        data[0, :2] = -np.inf
        data[1, 1, 1, :2] = np.nan
    x = tf.placeholder(tf.float32, shape)
    pooled = tf.nn.max_pool(tf.nn.relu(x) if relu else x, ksize, strides, padding)
    weights = tf.constant(rng.standard_normal(pooled.shape.as_list()).astype(np.float32))
    grad = tf.gradients(tf.reduce_sum(pooled * weights), x)[0]
    results = []
    for config in (None, UNFUSED):
        with tf.Session(config=config) as sess:
            results.append(sess.run([pooled, grad], {x: data}))
            if config is None:
                kept = ksize != strides
                assert ("MaxPool_workspace = max_pool_kernel(" in plan_source(sess)) == kept
                read = re.search(r"max_pool_grad_kernel\((Placeholder|Relu), MaxPool, \w+, MaxPool_workspace\)",
                                 plan_source(sess))
                assert bool(read) == kept
                assert ("# fused gradients/MaxPool_grad/MaxPoolGrad = MaxPoolGrad + " in plan_source(sess)) == relu
    np.testing.assert_array_equal(results[0][0], results[1][0])
    # The same terms in another order where windows overlap: a scatter adds them window by window.
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize("ksize,strides", [(2, 2), (3, 3), (3, 2)])
def test_a_pool_workspace_split_in_parts_across_threads_gives_the_unfused_gradient(monkeypatch, ksize, strides):
    """Overlapping windows keep a flat index, tiling ones nothing (their gradient compares taps with the output):
    either way, in parts of a few images."""
    monkeypatch.setattr(intra_op, "PARALLEL_WORK", 0)
    monkeypatch.setattr(pooling, "_POOL_STEP_BYTES", 1)  # an image a part
    x = tf.placeholder(tf.float32, [5, 12, 12, 3])
    pooled = tf.nn.max_pool(tf.nn.relu(x), [1, ksize, ksize, 1], [1, strides, strides, 1], "VALID")
    grad = tf.gradients(tf.reduce_sum(pooled * pooled), x)[0]
    data = np.maximum(np.round(np.random.default_rng(12).standard_normal((5, 12, 12, 3)) * 2), -1).astype(np.float32)
    results = []
    for config in (tf.ConfigProto(intra_op_parallelism_threads=2), UNFUSED):
        with tf.Session(config=config) as sess:
            results.append(sess.run([pooled, grad], {x: data}))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-6, atol=1e-5)
    attrs = {"ksize": [1, ksize, ksize, 1], "strides": [1, strides, strides, 1], "padding": "VALID",
             "data_format": "NHWC"}
    pool = max_pool_kernel(attrs)
    assert hasattr(pool, "with_workspace") == (ksize != strides)


@pytest.mark.parametrize("shape,size,stride", [((3, 8, 10, 4), 3, 2), ((2, 9, 9, 3), 4, 3), ((2, 7, 9, 3), 2, 2)])
def test_a_pool_padded_only_after_its_input_reads_it_in_place(monkeypatch, shape, size, stride):
    """SAME windows whose padding all comes after the input read the input itself, the taps past its end covering
    fewer outputs (overlapping ones from phase planes of its columns): values and where each window's first
    maximum is, ties included, as on a canvas padded with the lowest value."""
    monkeypatch.setattr(intra_op, "PARALLEL_WORK", 0)
    data = np.maximum(np.round(np.random.default_rng(15).standard_normal(shape) * 2), 0).astype(np.float32)
    attrs = {"ksize": [1, size, size, 1], "strides": [1, stride, stride, 1], "padding": "SAME", "data_format": "NHWC"}
    pool = max_pool_kernel(attrs)
    canvases, original = [], pooling.on_canvas

    def on_canvas(*args):
        canvases.append(args[1].shape)
        return original(*args)

    monkeypatch.setattr(pooling, "on_canvas", on_canvas)
    with intra_op.RunThreads(2, 1):
        in_place = [pool(data).copy()] + ([a.copy() for a in pool.with_workspace(data)] if size != stride else [])
        assert canvases == []
        monkeypatch.setattr(pooling, "_in_place_or_padded", pooling._padded)
        on_a_canvas = [pool(data)] + (list(pool.with_workspace(data)) if size != stride else [])
    assert canvases
    for a, b in zip(in_place, on_a_canvas, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("shape", [(2, 9, 9, 3), (1, 7, 64, 300)])  # offsets held by int16; by int32 only
def test_a_strided_pool_workspace_is_each_window_s_first_maximum(shape):
    """Overlapping windows at stride 2 keep the flat index of each window's first maximum (ties included), their
    offsets from the window's first tap summed in the narrowest integers that hold the largest one."""
    data = np.maximum(np.round(np.random.default_rng(16).standard_normal(shape) * 2), 0).astype(np.float32)
    attrs = {"ksize": [1, 3, 3, 1], "strides": [1, 2, 2, 1], "padding": "VALID", "data_format": "NHWC"}
    geo = pool_geometry_or_fail(attrs, data.shape)
    assert ((2 * shape[2] * shape[3] + 2 * shape[3]) < 1 << 15) == (shape[3] == 3)
    pooled, first = max_pool_kernel(attrs).with_workspace(data)
    np.testing.assert_array_equal(first, pooling._first_max_flat(pooling.Scratch(np), data, geo, -np.inf))
    np.testing.assert_array_equal(pooled, data.reshape(-1)[first])


@pytest.mark.parametrize("values", ["ties", "signed zeros", "wide range", "infinity"])
@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_packed_pool_maxima_find_the_first_maximum_as_the_search_does(monkeypatch, values, padding):
    """Windows at every position over values of no sign (a ReLU's) find the value and the first of equal maxima
    from float64 maxima with position codes; an infinity takes the search over taps instead."""
    monkeypatch.setattr(intra_op, "PARALLEL_WORK", 0)
    monkeypatch.setattr(pooling, "_POOL_STEP_BYTES", 1)  # an image a part: codes counted from each part's start
    rng = np.random.default_rng(14)
    data = np.maximum(np.round(rng.standard_normal((3, 9, 8, 5)) * 2), 0).astype(np.float32)
    if values == "signed zeros":
        data[rng.random(data.shape) < 0.5] = -0.0
    elif values == "wide range":  # subnormals, neighbouring floats and the largest finite value
        data = np.abs(rng.standard_normal(data.shape)).astype(np.float32) * np.float32(1e-42)
        data[1] = np.nextafter(np.float32(1), np.float32(2)) * (rng.random((9, 8, 5)) < 0.5) + np.float32(1)
        data[2, 3, 3] = np.finfo(np.float32).max
    elif values == "infinity":
        data[1, 4, 4, 2] = np.inf
    attrs = {"ksize": [1, 3, 3, 1], "strides": [1, 1, 1, 1], "padding": padding, "data_format": "NHWC"}
    pool = max_pool_kernel(attrs)
    geo = pool_geometry_or_fail(attrs, data.shape)
    assert pooling._packs(data, geo)
    packed = [array.copy() for array in pool.with_workspace(data)]
    monkeypatch.setattr(pooling, "_packs", lambda *args: False)
    searched = pool.with_workspace(data)
    np.testing.assert_array_equal(packed[0], searched[0])
    assert not np.signbit(packed[0]).any()  # a window of zeros gives +0 (the search, its first zero: equal)
    np.testing.assert_array_equal(packed[1], searched[1])
    flat = pooling._first_max_flat(pooling.Scratch(np), data, geo, -np.inf)  # argmax over each window
    np.testing.assert_array_equal(packed[1], flat)


@pytest.mark.parametrize("stride", [1, 2])
def test_each_part_of_a_pools_batch_finds_its_maxima_by_its_own_values(monkeypatch, stride):
    """Each part of the batch takes its way in its own thread: the packed maxima over values of no sign, the
    search over taps, or, where a window might pick padding (a NaN, the lowest value), the exact indices."""
    monkeypatch.setattr(intra_op, "PARALLEL_WORK", 0)
    monkeypatch.setattr(pooling, "_POOL_STEP_BYTES", 1)  # an image a part
    rng = np.random.default_rng(18)
    data = np.maximum(np.round(rng.standard_normal((4, 8, 10, 3)) * 2), 0).astype(np.float32)
    data[1, 3, 4, 1], data[2, 0, 0, 0] = np.nan, -np.inf  # a NaN, and the lowest value
    data[3] -= 1  # values of both signs
    attrs = {"ksize": [1, 3, 3, 1], "strides": [1, stride, stride, 1], "padding": "SAME", "data_format": "NHWC"}
    pool = max_pool_kernel(attrs)
    geo = pool_geometry_or_fail(attrs, data.shape)
    ways = collections.Counter()
    for way in ("_max_pool_packed", "_max_pool_with_first_maxima", "_first_max_flat"):
        monkeypatch.setattr(pooling, way, lambda *args, way=way, real=getattr(pooling, way): ways.update([way])
                            or real(*args))
    with intra_op.RunThreads(2, 1):
        pooled, first = (array.copy() for array in pool.with_workspace(data))
        expected = pool(data)
    packed = 1 if stride == 1 else 0  # the first image: values of no sign
    assert ways == collections.Counter(_max_pool_packed=packed, _max_pool_with_first_maxima=2 - packed,
                                       _first_max_flat=2)
    np.testing.assert_array_equal(pooled, expected)
    ways.clear()
    np.testing.assert_array_equal(first, pooling._first_max_flat(pooling.Scratch(np), data, geo, -np.inf))


def test_packed_pool_maxima_are_only_for_strides_of_one_over_values_of_no_sign():
    geo, strided = (pool_geometry_or_fail({"ksize": [1, 3, 3, 1], "strides": [1, s, s, 1], "padding": "SAME",
                                           "data_format": "NHWC"}, (1, 5, 5, 2)) for s in (1, 2))
    data = np.ones((1, 5, 5, 2), np.float32)
    assert pooling._packs(data, geo) and not pooling._packs(data, strided)
    assert not pooling._packs(data.astype(np.float64), geo)
    data[0, 2, 2, 1] = -1e-30
    assert not pooling._packs(data, geo)


@pytest.mark.parametrize("values", ["random", "ties", "signed zeros", "infinities", "nan", "dy non-finite",
                                    "output not the maximum"])
@pytest.mark.parametrize("relu", [False, True])
def test_a_tiling_pool_gradient_goes_to_the_first_tap_equal_to_the_output_as_the_search_does(monkeypatch, values,
                                                                                                relu):
    """Over tiling windows MaxPoolGrad puts dy at the first tap (row-major) equal to the pool's output, fused with
    ReluGrad or not; where a window's dy finds no such tap (NaN, a non-finite dy, an output that is not the
    maximum), its part takes the search over taps. Either way the search's gradient."""
    monkeypatch.setattr(intra_op, "PARALLEL_WORK", 0)
    monkeypatch.setattr(pooling, "_POOL_STEP_BYTES", 1)  # an image a part
    rng = np.random.default_rng(15)
    data = np.round(rng.standard_normal((3, 6, 8, 5)) * 2).astype(np.float32)
    dy = rng.standard_normal((3, 3, 4, 5)).astype(np.float32)
    if values == "ties":
        data = np.maximum(data, 0)
    elif values == "signed zeros":
        data = np.where(rng.random(data.shape) < 0.5, np.float32(-0.0), np.float32(0))
    elif values == "infinities":
        data[0, :2, :2] = np.inf
        data[1, 2:4] = -np.inf
    elif values == "nan":
        data[1, 2, 3, 1] = np.nan
    elif values == "dy non-finite":
        dy[0, 1, 1, 0], dy[2, 0, 0, 4] = np.inf, np.nan
    attrs = {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "VALID", "data_format": "NHWC"}
    pool = max_pool_kernel(attrs)
    grad = find_kernel("MaxPoolGrad", "CPU").factory(KernelNode("MaxPoolGrad", "g", attrs, (np.float32,) * 3,
                                                                (np.float32,)))
    run = grad.with_relu_grad if relu else grad
    pooled = pool(data).copy()
    if values == "output not the maximum":
        pooled[2, 1, 1, 2] = pooled[2, 1, 1, 2] + 1
        dy[2, 1, 1, 2] = 1
    # Per image: the upsampled comparison, where it declines the per-tap one, where that declines the search.
    ways, handled = ("_tiled_max_pool_grad_by_upsampling", "_tiled_max_pool_grad_by_equality"), []
    for name in ways:
        way = getattr(pooling, name)
        monkeypatch.setattr(pooling, name, lambda *args, way=way, first=name == ways[0]: handled.append(
            (first, way(*args))) or handled[-1][1])
    compared = run(data, pooled, dy).copy()
    searched = {"nan": {1}, "dy non-finite": {0, 2}, "output not the maximum": {2}}.get(values, set())
    per_image = []
    for first, done in handled:
        per_image += [done] if first else []
        per_image[-1] = done
    assert per_image == [image not in searched for image in range(3)]
    for name in ways:
        monkeypatch.setattr(pooling, name, lambda *args: False)
    np.testing.assert_array_equal(compared, run(data, pooled, dy))


@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("ksize,shape", [(2, (4, 8, 10, 6)), (3, (2, 7, 9, 4))], ids=["2x2", "3x3 odd sizes"])
def test_a_tiling_pool_gradient_by_upsampling_takes_windows_of_one_maximum_and_leaves_ties(relu, ksize, shape):
    attrs = {"ksize": [1, ksize, ksize, 1], "strides": [1, ksize, ksize, 1], "padding": "VALID",
             "data_format": "NHWC"}
    rng = np.random.default_rng(18)
    data = rng.standard_normal(shape).astype(np.float32)
    geo = pool_geometry_or_fail(attrs, data.shape)
    scratch = pooling.Scratch(np)
    for tied in (False, True):
        if tied:
            data[1, 0, 1, 2] = data[1, 0, 0, 2] = np.abs(data[1, :ksize, :ksize, 2]).max() + 1
        pooled = max_pool_kernel(attrs)(data).copy()
        dy = rng.standard_normal(pooled.shape).astype(np.float32)
        upsampled, compared = np.full_like(data, np.nan), np.full_like(data, np.nan)
        done = pooling._tiled_max_pool_grad_by_upsampling(scratch, data, pooled, dy, geo, upsampled, relu)
        assert done is not tied
        assert pooling._tiled_max_pool_grad_by_equality(scratch, data, pooled, dy, geo, compared, relu)
        if done:
            np.testing.assert_array_equal(upsampled, compared)


def test_a_tiling_pool_gradient_of_infinities_and_nans_puts_them_at_the_maxima_only():
    x = tf.placeholder(tf.float32, [2, 4, 4, 3])
    pooled = tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    weights = np.ones((2, 2, 2, 3), np.float32)
    weights[0, 0, 0, 0], weights[1, 1, 1, 2] = np.inf, np.nan
    grad = tf.gradients(tf.reduce_sum(pooled * weights), x)[0]
    fused, unfused, _ = fused_and_unfused(grad, {x: np.random.default_rng(13).standard_normal((2, 4, 4, 3))})
    np.testing.assert_array_equal(fused, unfused)
    assert np.isinf(fused).sum() == 1 and np.isnan(fused).sum() == 1 and (fused == 1).sum() == 22


def test_steps_running_at_once_each_read_their_own_pool_workspace():
    rng = np.random.default_rng(6)
    x = tf.placeholder(tf.float32, [8, 12, 12, 3])
    w = tf.Variable(rng.standard_normal((3, 3, 3, 8)).astype(np.float32))
    pooled = tf.nn.max_pool(tf.nn.relu(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")), [1, 3, 3, 1], [1, 2, 2, 1], "SAME")
    gradient = tf.gradients(tf.reduce_sum(pooled * pooled), w)[0]
    batches = [rng.standard_normal((8, 12, 12, 3)).astype(np.float32) for _ in range(4)]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        expected = [sess.run(gradient, {x: batch}) for batch in batches]
        assert "_workspace" in plan_source(sess)
        wrong = []

        def steps(index: int) -> None:
            for _ in range(50):
                if not np.allclose(sess.run(gradient, {x: batches[index]}), expected[index], rtol=1e-5, atol=1e-5):
                    wrong.append(index)

        threads = [threading.Thread(target=steps, args=(index,)) for index in range(len(batches))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert wrong == []


def test_a_pool_gradient_of_another_input_or_output_does_not_read_the_workspace():
    x, other = tf.placeholder(tf.float32, [2, 4, 4, 3]), tf.placeholder(tf.float32, [2, 4, 4, 3])
    pooled = tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    dy = tf.ones_like(pooled)
    grads = [max_pool_grad(other, pooled, dy, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
             max_pool_grad(x, pooled * 2, dy, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
             max_pool_grad(x, pooled, dy, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")]
    rng = np.random.default_rng(5)
    feeds = {x: rng.standard_normal((2, 4, 4, 3)).astype(np.float32),
             other: rng.standard_normal((2, 4, 4, 3)).astype(np.float32)}
    with tf.Session() as sess:
        fused = sess.run(grads, feeds)
        assert "_workspace" not in plan_source(sess)
    with tf.Session(config=UNFUSED) as sess:
        for got, expected in zip(fused, sess.run(grads, feeds)):
            np.testing.assert_array_equal(got, expected)


def dense_regression(rows: int, columns: int, seed: int = 0):
    """A linear layer trained by gradient descent: (w, x, y, train) with feeds for one batch of 8."""
    rng = np.random.default_rng(seed)
    x = tf.placeholder(tf.float32, [8, rows])
    y = tf.placeholder(tf.float32, [8, columns])
    w = tf.Variable(rng.standard_normal((rows, columns)).astype(np.float32), name="w")
    loss = tf.reduce_sum(tf.square(tf.matmul(x, w) - y))
    train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    feeds = {x: rng.standard_normal((8, rows)).astype(np.float32),
             y: rng.standard_normal((8, columns)).astype(np.float32)}
    return w, x, y, loss, train, feeds


@pytest.mark.parametrize("rows,columns", [(3, 4), (1024, 2048)], ids=["whole", "in-bands"])
def test_a_weight_gradient_read_only_by_its_descent_is_computed_into_the_variable(rows, columns):
    w, x, y, _, train, feeds = dense_regression(rows, columns)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        before = sess.run(w)
        held = sess.run(w.read_value())             # a value read earlier keeps what it read
        sess.run(train, feeds)
        after = sess.run(w)
        fused = [line for line in sess.plan(train, feeds).source.splitlines() if "fused" in line]
    assert any("MatMul_grad/MatMul_1 = MatMul + GradientDescent/update_w" in line for line in fused)
    gradient = 2 * feeds[x].T @ (feeds[x] @ before - feeds[y])
    np.testing.assert_allclose(after, before - 0.01 * gradient, rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(held, before)


UPDATES = {"momentum": (lambda: tf.train.MomentumOptimizer(0.01, 0.9), "ResourceApplyMomentum"),
           "nesterov": (lambda: tf.train.MomentumOptimizer(0.01, 0.9, use_nesterov=True), None),
           "adam": (lambda: tf.train.AdamOptimizer(0.01), "ResourceApplyAdam")}


@pytest.mark.parametrize("batch,columns,device", [(2, 8, "/device:CPU:0"), (4, 1024, "/device:CPU:0"),
                                                  (8, 1024, "/device:CPU:0"), (4, 8, "/device:STRICT:0")])
@pytest.mark.parametrize("update", sorted(UPDATES))
def test_a_weight_gradient_read_only_by_its_momentum_or_adam_update_is_computed_into_it(batch, columns, device,
                                                                                        update):
    """As with_descent (1024 columns: the update goes in bands), but not Nesterov's momentum step: the fused line
    trains as the unfused plan does."""
    optimizer, fused_op = UPDATES[update]
    rng = np.random.default_rng(11)
    with tf.device(device):
        x = tf.placeholder(tf.float32, [batch, 300])
        w = tf.Variable(rng.standard_normal((300, columns)).astype(np.float32) * 0.05, name="w")
        loss = tf.reduce_sum(tf.tanh(tf.matmul(x, w)))
        train = optimizer().minimize(loss)
    feeds = {x: rng.standard_normal((batch, 300)).astype(np.float32)}
    devices = {"STRICT": 1} if "STRICT" in device else {}
    fused, lines = trained([loss], train, feeds, [w], tf.ConfigProto(device_count=devices))
    unfused, _ = trained([loss], train, feeds, [w], tf.ConfigProto(device_count=devices,
                                                                   graph_options=UNFUSED.graph_options))
    update_lines = [line for line in lines if "update_w/ResourceApply" in line]
    assert update_lines == ([] if fused_op is None else [
        f"gradients/MatMul_grad/MatMul_1 = MatMul + {train.name.split('/')[0]}/update_w/{fused_op} = {fused_op}"])
    assert_same_steps(fused, unfused)


def test_a_weight_gradient_that_is_fetched_is_not_fused_into_the_descent():
    w, _, _, loss, train, feeds = dense_regression(3, 4)
    gradient = tf.gradients(loss, w)[0]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert "update_w" not in "".join(line for line in sess.plan([train, gradient], feeds).source.splitlines()
                                         if "fused" in line)




def two_dense_layers(batch: int, width: int, relu: bool, seed: int = 9):
    """x -> (relu) x @ w1 -> @ w2, a squared loss and a descent step: (w1, w2, x, loss, optimizer, feeds)."""
    rng = np.random.default_rng(seed)
    x = tf.placeholder(tf.float32, [batch, 16])
    w1 = tf.Variable(rng.standard_normal((16, width)).astype(np.float32) * 0.2, name="w1")
    w2 = tf.Variable(rng.standard_normal((width, width)).astype(np.float32) * 0.05, name="w2")
    hidden = tf.matmul(x, w1)
    if relu:
        hidden = tf.nn.relu(hidden)
    loss = tf.reduce_sum(tf.square(tf.matmul(hidden, w2) - 1.0))
    return w1, w2, x, loss, tf.train.GradientDescentOptimizer(0.001), {x: rng.standard_normal((batch, 16)).astype(
        np.float32)}


def trained(fetches: list, train, feeds: dict, variables: list, config=None, steps: int = 3) -> tuple:
    """(per training step, the values of `fetches` and then of the variables; the step's fused lines), in a fresh
    session. The variables are read in runs of their own: read in the step, they would be read twice."""
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        values = [sess.run([train] + fetches, feeds)[1:] + sess.run(variables) for _ in range(steps)]
        return values, [line.split("# fused ")[1] for line in sess.plan([train] + fetches, feeds).source.splitlines()
                        if "# fused " in line]


def assert_same_steps(fused: list, unfused: list) -> None:
    """Each value of each step as the unfused plan's, to float32 rounding of sums of terms as large as its largest."""
    for fused_step, unfused_step in zip(fused, unfused):
        for got, expected in zip(fused_step, unfused_step):
            np.testing.assert_allclose(got, expected, rtol=2e-5, atol=2e-5 * np.abs(expected).max())


@pytest.fixture
def fused_updates(monkeypatch) -> list:
    """The input gradients that descents computed (MatMul's with_weight_update, not its lines one by one)."""
    from tfnb.kernels import math as math_kernels
    descend, done = math_kernels.descend_by_product, []

    def recording(*args, input_gradient=None):
        descend(*args, input_gradient=input_gradient)
        if input_gradient is not None:
            done.append(input_gradient[1].shape)

    monkeypatch.setattr(math_kernels, "descend_by_product", recording)
    return done


# Batches of up to four take matrix-vector products; of eight, dy times the weights transposed where they have few
# columns (8), else one product of the weights with dy transposed; of 64, dy times the weights transposed, into
# out's columns; 1024 columns make the descent go in bands.
@pytest.mark.parametrize("batch,width,relu", [(2, 8, False), (8, 8, True), (2, 1024, True), (4, 1024, True),
                                              (8, 1024, False), (64, 1024, True)])
def test_an_input_gradient_and_its_weights_descent_are_one_line_and_train_as_unfused_plans(batch, width, relu,
                                                                                           fused_updates):
    w1, w2, x, loss, optimizer, feeds = two_dense_layers(batch, width, relu)
    train = optimizer.minimize(loss)
    fetches = [loss, tf.gradients(loss, x)[0]]
    fused, lines = trained(fetches, train, feeds, [w1, w2])
    unfused, _ = trained(fetches, train, feeds, [w1, w2], UNFUSED)
    line = next(line for line in lines if line.startswith("gradients/MatMul_1_grad/MatMul = MatMul"))
    assert "GradientDescent/update_w2/ResourceApplyGradientDescent" in line
    assert ("ReluGrad" in line) == relu
    assert not any("update_w2" in other for other in lines if other != line)
    assert fused_updates.count((batch, width)) == 3  # w2's input gradient, once a step
    assert_same_steps(fused, unfused)



@pytest.mark.parametrize("batch,width,device", [(2, 8, "/device:CPU:0"), (4, 1024, "/device:CPU:0"),
                                                (8, 1024, "/device:CPU:0"), (2, 256, "/device:STRICT:0")])
@pytest.mark.parametrize("update", sorted(UPDATES))
def test_an_input_gradient_and_its_weights_momentum_or_adam_update_are_one_line_and_train_as_unfused_plans(
        batch, width, device, update, monkeypatch):
    """As with the descent: the input gradient of w2 is computed from each band of w2 before its update, except
    where the update is not one line with its weight gradient (Nesterov's momentum step)."""
    from tfnb.kernels import math as math_kernels
    name = "adam_by_product" if update == "adam" else "momentum_by_product"
    by_product, done = getattr(math_kernels, name), []

    def recording(*args, input_gradient=None):
        by_product(*args, input_gradient=input_gradient)
        if input_gradient is not None:
            done.append(input_gradient[1].shape)

    monkeypatch.setattr(math_kernels, name, recording)
    optimizer, fused_op = UPDATES[update]
    with tf.device(device):
        w1, w2, x, loss, _, feeds = two_dense_layers(batch, width, True)
        train = optimizer().minimize(loss)
        fetches = [loss, tf.gradients(loss, x)[0]]
    devices = {"STRICT": 1} if "STRICT" in device else {}
    fused, lines = trained(fetches, train, feeds, [w1, w2], tf.ConfigProto(device_count=devices))
    unfused, _ = trained(fetches, train, feeds, [w1, w2], tf.ConfigProto(device_count=devices,
                                                                         graph_options=UNFUSED.graph_options))
    line = next(line for line in lines if line.startswith("gradients/MatMul_1_grad/MatMul = MatMul"))
    assert (f"update_w2/{fused_op} = {fused_op}" in line) == (fused_op is not None)
    assert done.count((batch, width)) == (0 if fused_op is None else 3)  # w2's input gradient, once a step
    assert_same_steps(fused, unfused)

@pytest.mark.parametrize("device", ["/device:STRICT:0", pytest.param("/device:GPU:0", marks=pytest.mark.gpu)])
@pytest.mark.parametrize("batch", [2, 8])
def test_an_input_gradient_and_its_weights_descent_on_a_device_are_one_line_and_train_as_on_the_cpu(
        batch, device, fused_updates):
    with tf.device(device):
        w1, w2, x, loss, optimizer, feeds = two_dense_layers(batch, 256, True)
        train = optimizer.minimize(loss)
        fetches = [loss, tf.gradients(loss, x)[0]]
    on_device, lines = trained(fetches, train, feeds, [w1, w2],
                               tf.ConfigProto(device_count={"STRICT": 1}) if "STRICT" in device else None)
    assert fused_updates.count((batch, 256)) == 3
    on_cpu, _ = trained(fetches, train, feeds, [w1, w2],
                        tf.ConfigProto(device_count={"GPU": 0}, allow_soft_placement=True))
    assert any("update_w2" in line and line.startswith("gradients/MatMul_1_grad/MatMul = MatMul") for line in lines)
    assert_same_steps(on_device, on_cpu)

def test_a_descent_is_not_moved_up_past_what_it_waits_for_or_where_its_variable_is_read_again():
    w1, w2, x, loss, _, feeds = two_dense_layers(2, 8, True)
    optimizer = tf.train.GradientDescentOptimizer(tf.constant(0.001))  # made here: no op of the update's waits
    gradients = optimizer.compute_gradients(loss)
    # The update waits for the gradient of the input, computed after w2's input gradient.
    with tf.control_dependencies([tf.reduce_sum(tf.gradients(loss, x)[0])]):
        train = optimizer.apply_gradients(gradients)
    fused, lines = trained([loss], train, feeds, [w2])
    unfused, _ = trained([loss], train, feeds, [w2], UNFUSED)
    assert not any("update_w2" in line and "MatMul_1_grad/MatMul = " in line for line in lines)
    assert_same_steps(fused, unfused)
    w1, w2, x, loss, optimizer, feeds = two_dense_layers(2, 8, True)
    train = optimizer.minimize(loss)
    with tf.control_dependencies([tf.gradients(loss, x)[0]]):  # read again after w2's input gradient
        again = w2.read_value()
    (before,), = trained([], tf.no_op(), feeds, [w2], steps=1)[0]
    (read_again, after), = trained([again], train, feeds, [w2], steps=1)[0]
    np.testing.assert_array_equal(read_again, before)  # reads come before the update, as unfused plans run them
    assert not np.array_equal(after, before)


def test_an_input_gradient_with_its_descent_that_fails_runs_the_lines_one_by_one(monkeypatch):
    from tfnb.kernels import math as math_kernels
    descend = math_kernels.descend_by_product

    def refusing(*args, input_gradient=None):  # the fused line's call fails, the update line's own call runs
        if input_gradient is not None:
            raise tf.errors.InvalidArgumentError(None, None, "refused")
        descend(*args)

    w1, w2, x, loss, optimizer, feeds = two_dense_layers(2, 1024, True)
    train = optimizer.minimize(loss)
    fetches = [loss, tf.gradients(loss, x)[0]]
    unfused, _ = trained(fetches, train, feeds, [w2], UNFUSED)
    monkeypatch.setattr(math_kernels, "descend_by_product", refusing)
    fused, lines = trained(fetches, train, feeds, [w2])
    assert any("update_w2" in line and "MatMul_1_grad/MatMul = " in line for line in lines)
    assert_same_steps(fused, unfused)  # each update made once

@pytest.mark.parametrize("addend", ["bias", "bias_add", "matrix", "scalar", "widening"])
def test_dense_layers_add_their_bias_and_activation_and_gradient_mask_on_the_product(addend):
    rng = np.random.default_rng(8)
    shapes = {"bias": [6], "bias_add": [6], "matrix": [5, 6], "scalar": [], "widening": [2, 1, 6]}
    x = tf.placeholder(tf.float32, [5, 4])
    w = tf.Variable(rng.standard_normal((4, 6)).astype(np.float32))
    b = tf.constant(rng.standard_normal(shapes[addend]).astype(np.float32))
    hidden = tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w), b) if addend == "bias_add" else tf.matmul(x, w) + b)
    if addend == "widening":  # the sum is wider than the product: Add makes a new array
        hidden = tf.reduce_sum(hidden, axis=0)
    w2 = tf.Variable(rng.standard_normal((6, 3)).astype(np.float32))
    logits = tf.matmul(hidden, w2) + 1.0
    loss = tf.reduce_mean(tf.square(logits))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    feeds = {x: rng.standard_normal((5, 4)).astype(np.float32)}
    results = []
    for config in (None, UNFUSED):
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            results.append([sess.run([loss, train], feeds)[0] for _ in range(3)])
            if config is None:
                lines = fused_lines(sess)
            results[-1].append(sess.run(w))
    first_layer = "BiasAdd = BiasAdd" if addend == "bias_add" else "add = Add"
    assert any(line.startswith(f"MatMul = MatMul + {first_layer} + Relu = Relu") for line in lines)
    assert any("MatMul + " in line and "ReluGrad = ReluGrad" in line for line in lines) == (addend != "widening")
    assert results[0][0] == results[1][0]  # the first loss: the same arithmetic in the same order
    # The fused descent scales the input by the learning rate before the product: last bits of the weights differ.
    for fused, unfused in zip(results[0][1:], results[1][1:]):
        np.testing.assert_allclose(fused, unfused, rtol=1e-5)


def test_a_product_with_a_bias_of_another_width_runs_the_lines_one_by_one_and_names_bias_add():
    x, b = tf.placeholder(tf.float32, [None, 3]), tf.placeholder(tf.float32, [None])
    hidden = tf.nn.bias_add(tf.matmul(x, tf.ones([3, 4])), b, name="gates")
    with tf.Session() as sess:
        feeds = {x: np.ones((2, 3), np.float32), b: np.ones(4, np.float32)}
        np.testing.assert_array_equal(sess.run(hidden, feeds), np.full((2, 4), 4.0, np.float32))
        assert any(line.startswith("MatMul = MatMul + gates = BiasAdd") for line in fused_lines(sess))
        with pytest.raises(tf.errors.InvalidArgumentError, match="gates"):
            sess.run(hidden, {x: np.ones((2, 3), np.float32), b: np.ones(1, np.float32)})


def test_a_product_read_elsewhere_keeps_its_own_line_before_the_bias():
    x = tf.placeholder(tf.float32, [2, 3])
    product = tf.matmul(x, tf.ones([3, 4]))
    hidden = tf.nn.relu(product + tf.ones([4]))
    with tf.Session() as sess:
        values = sess.run([hidden, product], {x: np.ones((2, 3), np.float32)})
        assert not any("Add" in line for line in fused_lines(sess))
    np.testing.assert_array_equal(values[0], np.full((2, 4), 4.0, np.float32))
    np.testing.assert_array_equal(values[1], np.full((2, 4), 3.0, np.float32))


# -- elementwise groups, on a device that compiles them (tests/tfnb/runtime/test_strict_device.py) ----------

STRICT = "/device:STRICT:0"
ON_STRICT = tf.ConfigProto(device_count={"STRICT": 1})


def elementwise_model():
    x, b = tf.placeholder(tf.float32, [16, 8], name="x"), tf.placeholder(tf.float32, [8], name="b")
    with tf.device(STRICT):
        y = tf.tanh(x * 2.0 + b, name="y")
        z = tf.multiply(tf.nn.relu(y - 0.5), y, name="z")
        total = tf.reduce_sum(z, name="total")
    rng = np.random.default_rng(5)
    return (x, b), (y, z, total), {x: rng.standard_normal((16, 8)).astype(np.float32),
                                   b: rng.standard_normal(8).astype(np.float32)}


def test_an_elementwise_chain_on_a_device_that_compiles_it_is_one_line():
    _, (_, _, total), feeds = elementwise_model()
    with tf.Session(config=ON_STRICT) as sess:
        fused = sess.run(total, feeds)
        lines = fused_lines(sess)
    with tf.Session(config=tf.ConfigProto(device_count={"STRICT": 1}, graph_options=UNFUSED.graph_options)) as sess:
        unfused = sess.run(total, feeds)
    assert [line.count(" = ") for line in lines] == [6]    # Mul, Add, Tanh, Sub, Relu, Mul; the Sum ends it
    assert "y = Tanh" in lines[0] and "z = Mul" in lines[0]
    np.testing.assert_allclose(fused, unfused, rtol=1e-6)
    with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:   # NumPy has no fuse
        np.testing.assert_allclose(sess.run(total, feeds), fused, rtol=1e-5)
        assert not fused_lines(sess)


def test_an_elementwise_group_still_gives_the_values_fetched_or_read_outside_it():
    _, (y, z, total), feeds = elementwise_model()
    with tf.device(STRICT):
        scaled = y / tf.reduce_max(y)     # the reduction reads y before the division: y's group ends there
    with tf.Session(config=ON_STRICT) as sess:
        values = sess.run([y, z, total, scaled], feeds)
        lines = fused_lines(sess)
    with tf.Session(config=tf.ConfigProto(device_count={"STRICT": 1}, graph_options=UNFUSED.graph_options)) as sess:
        expected = sess.run([y, z, total, scaled], feeds)
    assert lines and not any("truediv" in line for line in lines)
    for value, reference in zip(values, expected):
        np.testing.assert_allclose(value, reference, rtol=1e-6)


def test_a_failing_elementwise_group_names_the_op_that_fails():
    x, y = tf.placeholder(tf.float32, [None], name="x"), tf.placeholder(tf.float32, [None], name="y")
    with tf.device(STRICT):
        out = tf.exp(tf.add(x * 2.0, y, name="sum"))
    with tf.Session(config=ON_STRICT) as sess:
        np.testing.assert_allclose(sess.run(out, {x: [0.0, 1.0], y: [1.0, 0.0]}), np.exp([1.0, 2.0]), rtol=1e-6)
        assert len(fused_lines(sess)) == 1
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(out, {x: np.zeros(3, np.float32), y: np.zeros(4, np.float32)})
    assert info.value.op.name == "sum"


@pytest.mark.gpu
def test_an_elementwise_chain_on_a_gpu_is_one_cupy_kernel_and_matches_the_cpu():
    x, b = tf.placeholder(tf.float32, [64, 32]), tf.placeholder(tf.float32, [32])
    with tf.device("/device:GPU:0"):
        y = tf.nn.relu(tf.tanh(x * 2.0 + b) - 0.5) * tf.sigmoid(x)
        grad = tf.gradients(tf.reduce_sum(y * y), [x, b])
    rng = np.random.default_rng(6)
    feeds = {x: rng.standard_normal((64, 32)).astype(np.float32), b: rng.standard_normal(32).astype(np.float32)}
    with tf.Session() as sess:
        on_gpu = sess.run([y] + grad, feeds)
        assert fused_lines(sess)
    with tf.Session(config=tf.ConfigProto(device_count={"GPU": 0}, allow_soft_placement=True)) as sess:
        on_cpu = sess.run([y] + grad, feeds)
    for gpu_value, cpu_value in zip(on_gpu, on_cpu):
        np.testing.assert_allclose(gpu_value, cpu_value, rtol=1e-5, atol=1e-6)


def test_elementwise_ops_run_only_as_targets_stay_unfused_and_run():
    x = tf.placeholder(tf.float32, [4])
    with tf.device(STRICT):
        y = tf.tanh(x * 2.0)
    with tf.Session(config=ON_STRICT) as sess:
        assert sess.run(tf.group(y), {x: np.ones(4)}) is None
        assert not fused_lines(sess) and "Tanh(" in plan_source(sess)


def inception_module(x, widths=(6, 4, 3), kernel_sizes=(1, 1, 1), seed: int = 20):
    """Convolutions of x (each with bias and ReLU) beside a 3x3 max pool, concatenated: an inception module."""
    rng = np.random.default_rng(seed)
    branches, channels = [], x.shape.as_list()[-1]
    for index, (width, size) in enumerate(zip(widths, kernel_sizes)):
        w = tf.Variable(rng.standard_normal((size, size, channels, width)).astype(np.float32) * 0.3, name=f"w{index}")
        b = tf.Variable(rng.standard_normal(width).astype(np.float32), name=f"b{index}")
        branches.append(tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME", name=f"conv{index}"), b,
                                                  name=f"bias{index}")))
    branches.append(tf.nn.max_pool(x, [1, 3, 3, 1], [1, 1, 1, 1], "SAME"))
    return tf.concat(branches, axis=3)


def merged_lines(sess: tf.Session) -> list[str]:
    """The fused lines that compute several convolutions of one input as one."""
    return [line for line in fused_lines(sess) if len(re.findall(r"= Conv2D(?:BackpropInput)?\b", line)) > 1]


# 1x1 filters run as products of the input's rows (kernels/conv/pointwise.py), 3x3 ones as one convolution with the
# filters side by side.
@pytest.mark.parametrize("size", [1, 3])
def test_convolutions_of_one_input_run_as_one_forward_and_backward_and_train_as_unfused_plans(monkeypatch, size):
    calls = []
    for name in ("pointwise_forward", "pointwise_gradients"):
        real = getattr(convolution, name)
        monkeypatch.setattr(convolution, name, lambda *args, real=real, name=name: calls.append(name) or real(*args))
    x = tf.placeholder(tf.float32, [2, 7, 7, 5])
    module = inception_module(x, kernel_sizes=(size,) * 3)
    loss = tf.reduce_mean(tf.square(inception_module(module, (3, 2), (size,) * 2, seed=21)))
    grads = tf.gradients(loss, [x] + tf.trainable_variables())
    train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    data = np.random.default_rng(22).standard_normal((2, 7, 7, 5)).astype(np.float32)
    results, merged = [], []
    for config in (None, UNFUSED):
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            first = sess.run([module, loss] + grads, {x: data})
            merged.append(merged_lines(sess))
            for _ in range(3):
                sess.run(train, {x: data})
            merged.append(merged_lines(sess))
            results.append(first + sess.run([loss] + tf.trainable_variables(), {x: data}))
    # Forward, both modules' convolutions; backward, their gradient pairs, each with the AddN summing the input
    # gradients. Training takes no gradient of x: the first module's filter gradients run apart, unpaired.
    assert [len(lines) for lines in merged] == [4, 3, 0, 0]
    assert [sum("= AddN" in line for line in lines) for lines in merged[:2]] == [2, 1]
    assert set(calls) == ({"pointwise_forward", "pointwise_gradients"} if size == 1 else set())
    for fused, unfused in zip(*results):
        np.testing.assert_allclose(fused, unfused, rtol=1e-5, atol=1e-5)


def test_convolutions_of_one_input_with_filters_of_other_sizes_run_apart():
    x = tf.placeholder(tf.float32, [2, 6, 6, 4])
    module = inception_module(x, widths=(3, 4, 2), kernel_sizes=(1, 3, 1))
    data = np.random.default_rng(23).standard_normal((2, 6, 6, 4)).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        value = sess.run(module, {x: data})
        (line,) = merged_lines(sess)
        assert "conv0 = Conv2D" in line and "conv2 = Conv2D" in line and "conv1 = Conv2D" not in line
    with tf.Session(config=UNFUSED) as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_allclose(value, sess.run(module, {x: data}), rtol=1e-6, atol=1e-6)


def test_a_merged_line_whose_arrays_do_not_line_up_runs_each_convolution_and_names_the_op_that_fails():
    x = tf.placeholder(tf.float32, [2, 5, 5, 3])
    biases = [tf.placeholder(tf.float32, [None], name=f"b{index}") for index in range(2)]
    filters = [tf.constant(np.full((1, 1, 3, 4), index + 1, np.float32)) for index in range(2)]
    outputs = [tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME"), b, name=f"bias{index}"))
               for index, (w, b) in enumerate(zip(filters, biases))]
    data = np.ones((2, 5, 5, 3), np.float32)
    with tf.Session() as sess:
        good = sess.run(outputs, {x: data, biases[0]: np.zeros(4, np.float32), biases[1]: np.ones(4, np.float32)})
        assert len(merged_lines(sess)) == 1
        np.testing.assert_array_equal(good[0], np.full((2, 5, 5, 4), 3, np.float32))
        np.testing.assert_array_equal(good[1], np.full((2, 5, 5, 4), 7, np.float32))
        # Biases of 3 and 5 channels: 8 in all, as many as the filters side by side, but each wrong for its filter.
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(outputs, {x: data, biases[0]: np.zeros(3, np.float32), biases[1]: np.zeros(5, np.float32)})
    assert info.value.op.name == "bias0"


def test_peer_convolutions_compute_at_the_last_one_only_while_nothing_has_read_the_earlier_ones():
    lines = [(["x"], ["a"]), (["x"], ["b"]), (["a"], ["c"]), (["x"], ["d"]), (["x"], ["e"]), (["b", "d", "e"], ["f"])]
    steps = [codegen.Step(None, None, False, args, outputs) for args, outputs in lines]
    readers = {"x": [0, 1, 3, 4], "a": [2], "b": [5], "c": [], "d": [5], "e": [5], "f": []}
    # a is read at line 2: the run of 0 and 1 ends there; 3 and 4 start another.
    assert fusion._runs_until_read(steps, [0, 1, 3, 4], readers) == [[0, 1], [3, 4]]


def test_a_timed_run_types_a_line_of_peers_by_the_ops_each_computes_and_their_count():
    x = tf.placeholder(tf.float32, [2, 5, 5, 4])
    loss = tf.reduce_sum(tf.square(inception_module(x)))
    train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    grad_x = tf.gradients(loss, x)[0]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        metadata = tf.RunMetadata()
        sess.run([train, grad_x], {x: np.ones((2, 5, 5, 4), np.float32)},
                 options=tf.RunOptions(trace_level=tf.RunOptions.SOFTWARE_TRACE), run_metadata=metadata)
    types = {s.op_type for s in metadata.node_stats()}
    # The forward line also runs the module's pool, beside the convolutions.
    assert {"MaxPool+3x(Conv2D+BiasAdd+Relu)", "3x(Conv2DBackpropInput+Conv2DBackpropFilter)+AddN"} <= types


def beside_lines(lines: list[str]) -> list[str]:
    """Those of the fused lines that run a pool beside a convolution."""
    return [line for line in lines if re.search(r"= (MaxPool|AvgPool)\w* \+ .*= Conv2D", line)]


@pytest.fixture
def pools_beside(monkeypatch) -> list:
    """Every split run: PARALLEL_WORK 0, so the pools' tasks run on a helper; records the thread each task ran on."""
    monkeypatch.setattr(intra_op, "PARALLEL_WORK", 0)
    threads = []
    run_beside = intra_op.run_beside
    monkeypatch.setattr(fusion, "run_beside", lambda task, then: run_beside(
        lambda: threads.append(threading.get_ident()) or task(), then))
    return threads


def test_a_pool_runs_beside_the_convolutions_that_do_not_wait_for_it_and_trains_as_unfused_plans(pools_beside):
    x = tf.placeholder(tf.float32, [2, 7, 7, 5])
    module = inception_module(x)
    loss = tf.reduce_mean(tf.square(inception_module(module, (3, 2), seed=21)))
    train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    feeds = {x: np.random.default_rng(24).standard_normal((2, 7, 7, 5)).astype(np.float32)}
    fused, lines = trained([loss], train, feeds, tf.trainable_variables())
    unfused, _ = trained([loss], train, feeds, tf.trainable_variables(), UNFUSED)
    # Each module's pool beside its 1x1 convolutions (the first module's pool moved down past the variables' reads).
    lines = beside_lines(lines)
    assert len(lines) == 2 and all(line.split(" = ")[1].startswith("MaxPool + ") for line in lines)
    assert pools_beside and threading.get_ident() not in pools_beside
    assert_same_steps(fused, unfused)


def pooled_module(x):
    """A convolution, then a 3x3 max pool beside a 1x1 and a 3x3 convolution (an inception module's pool branch, with
    no projection, and one other branch): the pool's gradient flows back into the first one."""
    rng = np.random.default_rng(26)

    def conv(h, size, width, name):
        w = tf.Variable(rng.standard_normal((size, size, h.shape.as_list()[-1], width)).astype(np.float32) * 0.3)
        return tf.nn.relu(tf.nn.conv2d(h, w, [1, 1, 1, 1], "SAME", name=name))

    h = conv(x, 3, 5, "stem")
    pooled = tf.nn.max_pool(h, [1, 3, 3, 1], [1, 1, 1, 1], "SAME", name="pool")
    return tf.concat([pooled, conv(conv(h, 1, 4, "reduce"), 3, 4, "wide")], axis=3)


def test_a_pool_gradient_runs_beside_the_convolution_gradients_that_do_not_wait_for_it(pools_beside):
    x = tf.placeholder(tf.float32, [2, 7, 7, 3])
    loss = tf.reduce_mean(tf.square(pooled_module(x)))
    train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    feeds = {x: np.random.default_rng(27).standard_normal((2, 7, 7, 3)).astype(np.float32)}
    fused, lines = trained([loss], train, feeds, tf.trainable_variables())
    unfused, _ = trained([loss], train, feeds, tf.trainable_variables(), UNFUSED)
    lines = beside_lines(lines)
    # Forward, the pool beside the 1x1 convolution of the same input; backward, the pool's gradient beside the 3x3
    # convolution's gradients, which run when it does.
    assert [line.split(" + ")[0].split(" = ")[1] for line in lines] == ["MaxPool", "MaxPoolGrad"]
    assert "wide_grad/Conv2DBackpropInput = Conv2DBackpropInput" in lines[1]
    assert_same_steps(fused, unfused)


def test_a_pool_does_not_run_beside_a_convolution_reading_it_or_waiting_for_it():
    x = tf.placeholder(tf.float32, [2, 6, 6, 4])
    w = tf.constant(np.ones((1, 1, 4, 3), np.float32))
    data = np.random.default_rng(25).standard_normal((2, 6, 6, 4)).astype(np.float32)

    def pool(name):
        return tf.nn.max_pool(x, [1, 3, 3, 1], [1, 1, 1, 1], "SAME", name=name)

    read = pool("read")
    waited = pool("waited")
    with tf.control_dependencies([waited]):
        after_waited = tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME", name="after_waited")
    free = pool("free")
    cases = {"read": [tf.nn.conv2d(read, w, [1, 1, 1, 1], "SAME")], "waited": [waited, after_waited],
             "free": [free, tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME", name="conv")]}
    lines = {}
    for name, fetches in cases.items():
        fused, unfused, _ = fused_and_unfused(fetches, {x: data})
        with tf.Session() as sess:
            sess.run(fetches, {x: data})
            lines[name] = beside_lines(fused_lines(sess))
        for a, b in zip(fused, unfused):
            np.testing.assert_array_equal(a, b)
    assert lines["read"] == [] and lines["waited"] == []
    (line,) = lines["free"]
    assert "free = MaxPool" in line and "conv = Conv2D" in line


def test_a_failing_pool_beside_a_convolution_names_the_pool():
    x = tf.placeholder(tf.float32, [None, None, None, 2])
    pooled = tf.nn.max_pool(x, [1, 3, 3, 1], [1, 1, 1, 1], "VALID", name="pool")
    conv = tf.nn.conv2d(x, tf.constant(np.ones((1, 1, 2, 2), np.float32)), [1, 1, 1, 1], "SAME", name="conv")
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(pooled, {x: np.ones((1, 3, 3, 2), np.float32)}), np.ones((1, 1, 1, 2)))
        fetches = [pooled, conv]
        sess.run(fetches, {x: np.ones((1, 3, 3, 2), np.float32)})
        assert len(beside_lines(fused_lines(sess))) == 1
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(fetches, {x: np.ones((1, 1, 1, 2), np.float32)})  # a window larger than the input
    assert info.value.op.name == "pool"


def branched_module(x):
    """An inception module as GoogLeNet's: a 1x1 convolution, a 3x3 and a 5x5 one after 1x1 reductions, and a 1x1
    projection of a 3x3 max pool, concatenated (each convolution with a ReLU)."""
    rng = np.random.default_rng(30)

    def conv(h, size, width, name):
        w = tf.Variable(rng.standard_normal((size, size, h.shape.as_list()[-1], width)).astype(np.float32) * 0.3)
        return tf.nn.relu(tf.nn.conv2d(h, w, [1, 1, 1, 1], "SAME", name=name))

    pooled = tf.nn.max_pool(x, [1, 3, 3, 1], [1, 1, 1, 1], "SAME", name="pool")
    return tf.concat([conv(x, 1, 4, "ones"), conv(conv(x, 1, 3, "reduce3"), 3, 4, "threes"),
                      conv(conv(x, 1, 2, "reduce5"), 5, 3, "fives"), conv(pooled, 1, 3, "projection")], axis=3)


def branched_training(x):
    stem = np.random.default_rng(32).standard_normal((3, 3, 4, 6)).astype(np.float32) * 0.3
    h = tf.nn.relu(tf.nn.conv2d(x, tf.Variable(stem), [1, 1, 1, 1], "SAME", name="stem"))
    loss = tf.reduce_mean(tf.square(branched_module(h)))
    return loss, tf.train.GradientDescentOptimizer(0.01).minimize(loss)


def test_independent_gradient_pairs_and_a_pool_gradient_run_as_one_line_and_train_as_unfused_plans(monkeypatch):
    monkeypatch.setattr(intra_op, "PARALLEL_WORK", 0)
    calls, threads = [], set()
    side_by_side = fusion.side_by_side
    monkeypatch.setattr(fusion, "side_by_side", lambda tasks, work, waits: calls.append(waits) or side_by_side(
        [lambda task=task: threads.add(threading.get_ident()) or task() for task in tasks], work, waits))
    x = tf.placeholder(tf.float32, [2, 8, 8, 4])
    loss, train = branched_training(x)
    feeds = {x: np.random.default_rng(31).standard_normal((2, 8, 8, 4)).astype(np.float32)}
    fused, lines = trained([loss], train, feeds, tf.trainable_variables())
    unfused, _ = trained([loss], train, feeds, tf.trainable_variables(), UNFUSED)
    # The projection's, the 5x5's and the 3x3's gradient pairs, then the lines of one thread's work after them: the
    # pool's gradient (which reads the projection's input gradient) and the reductions' ReLU gradients (which read
    # the 3x3's and 5x5's), each waiting for the task that makes what it reads.
    (line,) = [line for line in lines if "pool_grad/MaxPoolGrad" in line]
    assert re.findall(r"gradients/(\w+)_grad/Conv2DBackpropFilter", line) == ["projection", "fives", "threes"]
    assert line.split(" + ")[6:] == ["gradients/pool_grad/MaxPoolGrad = MaxPoolGrad",
                                     "gradients/Relu_4_grad/ReluGrad = ReluGrad", "gradients/Relu_2_grad/ReluGrad = ReluGrad"]
    assert calls and all(len(waits) == 9 and sorted(map(len, waits)) == [0] * 6 + [1] * 3 for waits in calls)
    assert len(threads) == 2
    assert_same_steps(fused, unfused)


def test_gradient_pairs_run_together_only_while_no_line_reads_what_they_compute():
    x, z = tf.placeholder(tf.float32, [2, 6, 6, 3]), tf.placeholder(tf.float32, [2, 6, 6, 3])
    w = [tf.constant(np.full((3, 3, 3, 3), 0.1 * k, np.float32)) for k in (1, 2, 3)]
    first = tf.nn.conv2d(x, w[0], [1, 1, 1, 1], "SAME", name="first")
    second = tf.nn.conv2d(tf.nn.relu(first), w[1], [1, 1, 1, 1], "SAME", name="second")  # reads first's output
    beside = tf.nn.conv2d(z, w[2], [1, 1, 1, 1], "SAME", name="beside")
    gradients = tf.gradients(tf.reduce_sum(tf.square(second)) + tf.reduce_sum(tf.square(beside)), [x, z] + w)
    rng = np.random.default_rng(33)
    feeds = {x: rng.standard_normal((2, 6, 6, 3)).astype(np.float32),
             z: rng.standard_normal((2, 6, 6, 3)).astype(np.float32)}
    fused, unfused, lines = fused_and_unfused(gradients, feeds)
    for a, b in zip(fused, unfused):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    # second's and beside's pairs run together; first's waits for second's input gradient.
    together = [line for line in lines if line.count("= Conv2DBackpropFilter") > 1]
    assert len(together) == 1 and "first_grad" not in together[0]
    assert "second_grad" in together[0] and "beside_grad" in together[0]


def test_a_failing_pair_run_together_names_the_op_that_fails(monkeypatch):
    x = tf.placeholder(tf.float32, [2, 8, 8, 4])
    loss, train = branched_training(x)
    run_convolution = convolution.run_convolution

    def failing(scratch, direction, a, b, geo, epilogue=None):
        if direction == "backprop_filter" and b.shape[3] == 3 and geo.h.taps == 5:  # the 5x5's filter gradient
            conv.arguments.fail("a filter gradient that fails")
        return run_convolution(scratch, direction, a, b, geo, epilogue)

    monkeypatch.setattr(convolution, "run_convolution", failing)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(train, {x: np.ones((2, 8, 8, 4), np.float32)})
        assert any(re.findall(r"gradients/(\w+)_grad/Conv2DBackpropFilter", line) == ["projection", "fives", "threes"]
                   for line in fused_lines(sess))
    assert info.value.op.name == "gradients/fives_grad/Conv2DBackpropFilter"


def test_tasks_go_longest_path_first():
    # Task 3 waits for task 0: 0's path is 1 + 2, longer than task 1's 2.5.
    assert fusion._longest_paths_first([1, 2.5, 1, 2], [[], [], [], [0]]) == [0, 1, 3, 2]


def test_a_line_with_a_control_input_on_a_pair_of_a_group_runs_after_the_group():
    x, z = tf.placeholder(tf.float32, [2, 6, 6, 3]), tf.placeholder(tf.float32, [2, 6, 6, 3])
    w = [tf.constant(np.full((3, 3, 3, 3), 0.1 * k, np.float32)) for k in (1, 2)]
    loss = sum(tf.reduce_sum(tf.square(tf.nn.conv2d(v, f, [1, 1, 1, 1], "SAME", name=name)))
               for v, f, name in ((x, w[0], "left"), (z, w[1], "right")))
    gradients = tf.gradients(loss, [x, z] + w)
    with tf.control_dependencies([gradients[0].op]):  # after the left pair, reading none of its values
        after = tf.square(z, name="after")
    rng = np.random.default_rng(34)
    feeds = {x: rng.standard_normal((2, 6, 6, 3)).astype(np.float32),
             z: rng.standard_normal((2, 6, 6, 3)).astype(np.float32)}
    fused, unfused, lines = fused_and_unfused(gradients + [after], feeds)
    for a, b in zip(fused, unfused):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    (together,) = [line for line in lines if line.count("= Conv2DBackpropFilter") == 2]
    assert "after = Square" not in together
