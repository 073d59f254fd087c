"""Convolution and pooling: every algorithm against slow direct references, TF's padding and tie rules,
the algorithm cache, static shapes, errors, and gradients at realistic sizes."""

import itertools
import threading

import numpy as np
import pytest

import tfnb as tf
from tfnb.framework.common_shapes import geometry_from_attrs
from tfnb.kernels import conv, intra_op
from tfnb.kernels.conv import banded, choice, fft, gemm, pooling, scratch, winograd
from tfnb.kernels.conv import rows as row_products
from tfnb.kernels.conv.fft import fft_backprop_filter, fft_forward
from tfnb.kernels.conv.gemm import gemm_backprop_filter
from tfnb.kernels.conv.rows import rows_backprop_filter, rows_claims, rows_forward
from tfnb.kernels.conv.winograd import WINOGRAD_3X3, WINOGRAD_5X5, winograd_matrices


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


# -- slow references: explicit loops over output positions and filter taps ------------------------


def same_pads(size, k, stride, dilation):
    """TF's SAME padding of one axis: (output size, padding before)."""
    out = -(-size // stride)
    total = max((out - 1) * stride + (k - 1) * dilation + 1 - size, 0)
    return out, total // 2


def axis_plan(size, k, stride, dilation, padding):
    """(output size, padding before) of one axis for 'SAME', 'VALID' or an explicit (before, after) pair."""
    if padding == "SAME":
        return same_pads(size, k, stride, dilation)
    before, after = (0, 0) if padding == "VALID" else padding
    return (size + before + after - (k - 1) * dilation - 1) // stride + 1, before


def plans(x_hw, k_hw, strides, dilations, padding):
    explicit = padding if isinstance(padding, list) else None
    return [axis_plan(x_hw[i], k_hw[i], strides[i], dilations[i], explicit[i + 1] if explicit else padding)
            for i in range(2)]


def taps(out_hw, k_hw, strides, dilations, pads, x_hw):
    """Every (output i, j, tap a, b, input r, c) whose input position lies inside the input."""
    for i, j, a, b in itertools.product(range(out_hw[0]), range(out_hw[1]), range(k_hw[0]), range(k_hw[1])):
        r, c = i * strides[0] + a * dilations[0] - pads[0], j * strides[1] + b * dilations[1] - pads[1]
        if 0 <= r < x_hw[0] and 0 <= c < x_hw[1]:
            yield i, j, a, b, r, c


def ref_conv(x, w, strides, dilations, padding):
    (ho, ph), (wo, pw) = plans(x.shape[1:3], w.shape[:2], strides, dilations, padding)
    y = np.zeros((x.shape[0], ho, wo, w.shape[3]))
    for i, j, a, b, r, c in taps((ho, wo), w.shape[:2], strides, dilations, (ph, pw), x.shape[1:3]):
        y[:, i, j] += x[:, r, c].astype(np.float64) @ w[a, b]
    return y


def ref_backprop_input(shape, w, dy, strides, dilations, padding):
    (_, ph), (_, pw) = plans(shape[1:3], w.shape[:2], strides, dilations, padding)
    dx = np.zeros(shape)
    for i, j, a, b, r, c in taps(dy.shape[1:3], w.shape[:2], strides, dilations, (ph, pw), shape[1:3]):
        dx[:, r, c] += dy[:, i, j].astype(np.float64) @ w[a, b].T
    return dx


def ref_backprop_filter(x, shape, dy, strides, dilations, padding):
    (_, ph), (_, pw) = plans(x.shape[1:3], shape[:2], strides, dilations, padding)
    dw = np.zeros(shape)
    for i, j, a, b, r, c in taps(dy.shape[1:3], shape[:2], strides, dilations, (ph, pw), x.shape[1:3]):
        dw[a, b] += x[:, r, c].T.astype(np.float64) @ dy[:, i, j]
    return dw


def ref_pool(x, k, s, padding, reduce):
    """Each window's real elements (TF never counts padding) reduced by `reduce`."""
    (ho, ph), (wo, pw) = plans(x.shape[1:3], k, s, (1, 1), padding)
    y = np.zeros((x.shape[0], ho, wo, x.shape[3]))
    for i, j in itertools.product(range(ho), range(wo)):
        rows = slice(max(i * s[0] - ph, 0), min(i * s[0] - ph + k[0], x.shape[1]))
        cols = slice(max(j * s[1] - pw, 0), min(j * s[1] - pw + k[1], x.shape[2]))
        y[:, i, j] = reduce(x[:, rows, cols].reshape(x.shape[0], -1, x.shape[3]).astype(np.float64), axis=1)
    return y


def ref_max_pool_grad(x, dy, k, s, padding):
    """dy of each window added at its first maximum, in row-major window order (TF's CPU kernel)."""
    (ho, ph), (wo, pw) = plans(x.shape[1:3], k, s, (1, 1), padding)
    dx = np.zeros(x.shape)
    for n, i, j, ch in itertools.product(range(x.shape[0]), range(ho), range(wo), range(x.shape[3])):
        best = None
        for a, b in itertools.product(range(k[0]), range(k[1])):
            r, c = i * s[0] + a - ph, j * s[1] + b - pw
            if 0 <= r < x.shape[1] and 0 <= c < x.shape[2] and (best is None or x[n, r, c, ch] > x[best]):
                best = (n, r, c, ch)
        dx[best] += dy[n, i, j, ch]
    return dx


def ref_avg_pool_grad(shape, dy, k, s, padding):
    (ho, ph), (wo, pw) = plans(shape[1:3], k, s, (1, 1), padding)
    dx = np.zeros(shape)
    for i, j in itertools.product(range(ho), range(wo)):
        rows = slice(max(i * s[0] - ph, 0), min(i * s[0] - ph + k[0], shape[1]))
        cols = slice(max(j * s[1] - pw, 0), min(j * s[1] - pw + k[1], shape[2]))
        count = (rows.stop - rows.start) * (cols.stop - cols.start)
        dx[:, rows, cols] += dy[:, i:i + 1, j:j + 1] / count
    return dx


# -- convolutions against the references ----------------------------------------------------------

CONV_CASES = [  # (x shape, filter shape, strides, dilations, padding)
    ((2, 7, 6, 3), (3, 3, 3, 4), (1, 1), (1, 1), "SAME"),
    ((2, 7, 6, 3), (3, 3, 3, 4), (1, 1), (1, 1), "VALID"),
    ((1, 9, 8, 2), (5, 5, 2, 3), (1, 1), (1, 1), "SAME"),
    ((2, 8, 9, 3), (2, 3, 3, 2), (2, 2), (1, 1), "SAME"),
    ((2, 9, 7, 1), (3, 2, 1, 5), (2, 3), (1, 1), "VALID"),
    ((1, 10, 9, 2), (3, 3, 2, 2), (1, 1), (2, 3), "SAME"),
    ((1, 11, 10, 3), (2, 3, 3, 2), (3, 2), (2, 2), "VALID"),
    ((2, 5, 6, 2), (3, 2, 2, 3), (2, 1), (1, 1), [[0, 0], [2, 1], [0, 3], [0, 0]]),
    ((1, 6, 5, 4), (1, 1, 4, 3), (2, 2), (1, 1), "SAME"),
    ((1, 4, 4, 2), (4, 4, 2, 2), (1, 1), (1, 1), "VALID"),
    ((2, 5, 4, 3), (1, 1, 3, 4), (1, 1), (1, 1), "SAME"),
    ((2, 9, 8, 3), (5, 5, 3, 2), (1, 1), (1, 1), "VALID"),
]


def case_id(case):
    x, w, s, d, p = case
    return f"x{x[1]}x{x[2]}-k{w[0]}x{w[1]}-s{s[0]}{s[1]}-d{d[0]}{d[1]}-{p if isinstance(p, str) else 'explicit'}"


def conv_inputs(case, dtype, seed=0):
    x_shape, w_shape, strides, dilations, padding = case
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, x_shape).astype(dtype)
    w = rng.uniform(-1, 1, w_shape).astype(dtype)
    dy_shape = ref_conv(x, w, strides, dilations, padding).shape
    return x, w, rng.uniform(-1, 1, dy_shape).astype(dtype)


@pytest.mark.parametrize("case", CONV_CASES, ids=[case_id(c) for c in CONV_CASES])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv_ops_match_direct_loops(case, dtype):
    x, w, dy = conv_inputs(case, dtype)
    _, _, strides, dilations, padding = case
    ops = [tf.nn.conv2d(x, w, strides, padding, dilations=dilations),
           tf.nn.conv2d_backprop_input(list(x.shape), w, dy, strides, padding, dilations=dilations),
           tf.nn.conv2d_backprop_filter(x, list(w.shape), dy, strides, padding, dilations=dilations)]
    expected = [ref_conv(x, w, strides, dilations, padding),
                ref_backprop_input(x.shape, w, dy, strides, dilations, padding),
                ref_backprop_filter(x, w.shape, dy, strides, dilations, padding)]
    tol = 1e-4 if dtype == np.float32 else 1e-10
    for op, actual, reference in zip(ops, run(ops), expected):
        assert actual.dtype == dtype and op.shape.as_list() == list(reference.shape)
        np.testing.assert_allclose(actual, reference, rtol=tol, atol=tol, err_msg=op.op.type)


@pytest.mark.parametrize("case", CONV_CASES, ids=[case_id(c) for c in CONV_CASES])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_algorithm_matches_the_reference_where_it_claims(case, dtype):
    x, w, dy = conv_inputs(case, dtype, seed=1)
    _, _, strides, dilations, padding = case
    attrs = {"strides": [1, *strides, 1], "dilations": [1, *dilations, 1],
             "padding": padding if isinstance(padding, str) else "EXPLICIT",
             "explicit_paddings": [] if isinstance(padding, str) else sum(padding, [])}
    geo = geometry_from_attrs(attrs, x.shape[1:3], w.shape[:2])
    cases = {"forward": ((x, w), ref_conv(x, w, strides, dilations, padding)),
             "backprop_input": ((dy, w), ref_backprop_input(x.shape, w, dy, strides, dilations, padding)),
             "backprop_filter": ((x, dy), ref_backprop_filter(x, w.shape, dy, strides, dilations, padding))}
    tol = 1e-4 if dtype == np.float32 else 1e-10
    checked = 0
    for direction, ((a, b), reference) in cases.items():
        for name, (claims, algorithm) in conv.ALGORITHMS[direction].items():
            if claims(*choice.claim_arguments(direction, a, b, geo)):
                actual = algorithm(conv.Scratch(np), a, b, geo)
                assert actual.dtype == dtype
                np.testing.assert_allclose(actual, reference, rtol=tol, atol=tol, err_msg=f"{direction} {name}")
                checked += 1
    assert checked >= 6


@pytest.mark.parametrize("size,channels,filters,copied", [(4, 8, 16, False), (8, 4, 2, True)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_input_gradients_read_a_large_flipped_filter_in_place(size, channels, filters, copied, dtype):
    rng = np.random.default_rng(4)
    w = rng.standard_normal((3, 3, channels, filters)).astype(dtype)
    dy = rng.standard_normal((1, size, size, filters)).astype(dtype)
    assert np.shares_memory(gemm.flipped(np, w, dy), w) is not copied  # more filter than dy: a view of it
    geo = geometry_from_attrs({"strides": [1, 1, 1, 1], "padding": "SAME"}, (size, size), (3, 3))
    reference = ref_backprop_input((1, size, size, channels), w, dy, (1, 1), (1, 1), "SAME")
    tol = 1e-4 if dtype == np.float32 else 1e-10
    names = [name for name, (claims, _) in conv.ALGORITHMS["backprop_input"].items()
             if claims(*choice.claim_arguments("backprop_input", dy, w, geo))]
    assert {"gemm", "rows", "winograd", "winograd 4x4"} <= set(names)
    for name in names:
        actual = conv.ALGORITHMS["backprop_input"][name][1](conv.Scratch(np), dy, w, geo)
        np.testing.assert_allclose(actual, reference, rtol=tol, atol=tol, err_msg=name)


def test_a_flipped_filter_is_a_product_matrix_without_a_transposing_copy():
    w = np.arange(3 * 3 * 5 * 7, dtype=np.float32).reshape(3, 3, 5, 7)
    view = w[::-1, ::-1].transpose(0, 1, 3, 2)
    matrix = gemm.filter_matrix(np, view)
    np.testing.assert_array_equal(matrix, np.ascontiguousarray(view).reshape(-1, 5))
    assert matrix.flags.f_contiguous  # what BLAS reads as a transposed operand


def test_winograd_claims_exactly_its_filter_size_at_stride_1_undilated():
    def geo(k, s, d):
        return geometry_from_attrs({"strides": [1, s, s, 1], "dilations": [1, d, d, 1], "padding": "SAME"},
                                   (8, 8), (k, k))

    assert WINOGRAD_3X3.claims(geo(3, 1, 1), 8, 8) and WINOGRAD_5X5.claims(geo(5, 1, 1), 8, 8)
    assert not any(WINOGRAD_3X3.claims(geo(*args), 8, 8) for args in [(5, 1, 1), (3, 2, 1), (3, 1, 2)])
    assert not WINOGRAD_5X5.claims(geo(3, 1, 1), 8, 8)


@pytest.mark.parametrize("m,r", [(2, 3), (4, 3), (2, 5)])
def test_winograd_matrices_compute_a_correlation_exactly(m, r):
    at, g, bt = winograd_matrices(m, r)
    rng = np.random.default_rng(3)
    d, w = rng.standard_normal(m + r - 1), rng.standard_normal(r)
    np.testing.assert_allclose(at @ ((g @ w) * (bt @ d)), np.correlate(d, w, "valid"), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("m,r", [(2, 3), (4, 3), (2, 5)])
def test_a_tile_transform_along_each_axis_is_the_kronecker_square_s_product(m, r):
    at, _, bt = winograd_matrices(m, r)
    rng = np.random.default_rng(4)
    for a in (bt, at, at.T):  # input tiles, output tiles, and output-gradient tiles (the filter gradient's)
        tiles = rng.standard_normal((a.shape[1] ** 2, 10))
        out = np.empty((a.shape[0] ** 2, 10))
        winograd._tile_transform(scratch.Scratch(np), a, tiles, out)
        np.testing.assert_allclose(out, np.kron(a, a) @ tiles, rtol=1e-12, atol=1e-12)


def test_a_task_side_by_side_takes_cache_sized_chunks_and_blas_threads_large_ones(monkeypatch):
    # In a run, BLAS computes in the thread that calls it, also in a task side by side (one direction of a
    # convolution's gradients): chunks stay near that core's caches. Outside one, BLAS splits each product.
    monkeypatch.setattr(intra_op, "PARALLEL_WORK", 0)

    def chunks():
        return len(scratch._even_chunks(8, 1 << 20, 2 << 20))  # 8 items of 1 MiB, chunks of 2 MiB

    with intra_op.RunThreads(2, 1):
        assert intra_op.side_by_side([chunks, chunks], work=1 << 30) == [4, 4]
    assert chunks() == 1  # at least 16 MiB


def test_rows_claims_stride_1_in_height_and_windows_wider_than_a_column():
    def geo(strides):
        return geometry_from_attrs({"strides": [1, *strides, 1], "dilations": [1, 2, 2, 1], "padding": "SAME"},
                                   (8, 8), (3, 3))

    assert rows_claims(geo((1, 1)), 3, 8) and rows_claims(geo((1, 2)), 3, 8)
    assert not rows_claims(geo((2, 1)), 3, 8)
    pointwise = geometry_from_attrs({"strides": [1, 1, 1, 1], "padding": "SAME"}, (8, 8), (3, 1))
    assert not rows_claims(pointwise, 3, 8)


def test_banded_claims_few_input_channels_and_groups_that_divide_the_output_width():
    def geo(width, stride=1):
        return geometry_from_attrs({"strides": [1, 1, stride, 1], "padding": "SAME"}, (8, width), (5, 5))

    assert banded.group_size(geo(32).w, 32) == 4 and banded.group_size(geo(32).w, 64) == 2
    assert banded.group_size(geo(30).w, 32) == 3  # the largest divisor of 30 with at most 128 columns
    assert banded.group_size(geo(32).w, 128) == 1 and banded.group_size(geo(31).w, 32) == 1
    assert banded.banded_claims(geo(32), 3, 32) and banded.banded_claims(geo(32, 2), 4, 64)
    assert not banded.banded_claims(geo(32), 5, 32)  # im2col's runs are long enough
    assert not banded.banded_claims(geo(32), 3, 128) and not banded.banded_claims(geo(31), 3, 32)


@pytest.mark.parametrize("strides,dilations", [((1, 1), (1, 1)), ((1, 2), (1, 1)), ((1, 1), (1, 2))])
def test_banded_matches_gemm_with_a_bias_epilogue_and_for_the_filter_gradient(strides, dilations):
    rng = np.random.default_rng(8)
    x = rng.standard_normal((3, 12, 16, 3)).astype(np.float32)
    w = rng.standard_normal((5, 3, 3, 16)).astype(np.float32)
    bias = rng.standard_normal(16).astype(np.float32)
    attrs = {"strides": [1, *strides, 1], "dilations": [1, *dilations, 1], "padding": "SAME"}
    geo = geometry_from_attrs(attrs, x.shape[1:3], w.shape[:2])
    assert banded.group_size(geo.w, 16) > 1

    def add_bias(rows):
        assert rows.shape[1:] == (16,)  # the epilogue sees one filter per column, as with gemm
        rows += bias

    expected = gemm.gemm_forward(conv.Scratch(np), x, w, geo, add_bias).copy()
    np.testing.assert_allclose(banded.banded_forward(conv.Scratch(np), x, w, geo, add_bias), expected,
                               rtol=1e-4, atol=1e-4)
    dy = rng.standard_normal(expected.shape).astype(np.float32)
    np.testing.assert_allclose(banded.banded_backprop_filter(conv.Scratch(np), x, dy, geo),
                               gemm_backprop_filter(conv.Scratch(np), x, dy, geo), rtol=1e-4, atol=1e-3)


def test_algorithms_agree_at_a_realistic_size():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((8, 16, 16, 16)).astype(np.float32)
    w = rng.standard_normal((3, 3, 16, 8)).astype(np.float32)
    geo = geometry_from_attrs({"strides": [1, 1, 1, 1], "padding": "SAME"}, (16, 16), (3, 3))
    outputs = {name: fn(conv.Scratch(np), x, w, geo) for name, (claims, fn) in conv.ALGORITHMS["forward"].items()
               if claims(*choice.claim_arguments("forward", x, w, geo))}
    for name, out in outputs.items():
        np.testing.assert_allclose(out, outputs["gemm"], rtol=1e-4, atol=1e-4, err_msg=name)


def test_conv2d_transpose_is_the_input_gradient_op():
    w = np.random.default_rng(3).uniform(-1, 1, (3, 3, 2, 4)).astype(np.float32)
    value = np.random.default_rng(4).uniform(-1, 1, (2, 3, 4, 4)).astype(np.float32)
    out = tf.nn.conv2d_transpose(value, w, [2, 6, 7, 2], [1, 2, 2, 1], "SAME")
    assert out.op.type == "Conv2DBackpropInput" and out.shape.as_list() == [2, 6, 7, 2]
    np.testing.assert_allclose(run(out), ref_backprop_input((2, 6, 7, 2), w, value, (2, 2), (1, 1), "SAME"),
                               rtol=1e-5, atol=1e-5)


# -- the algorithm cache --------------------------------------------------------------------------


def test_the_algorithm_is_measured_once_per_key(monkeypatch):
    conv.clear_algorithm_cache()
    x = np.random.default_rng(5).standard_normal((2, 9, 9, 3)).astype(np.float32)
    w = np.random.default_rng(6).standard_normal((3, 3, 3, 4)).astype(np.float32)
    first = run(tf.nn.conv2d(x, w, 1, "SAME"))
    key = next(k for k in conv.chosen_algorithms() if k[0] == "forward" and k[1] == x.shape)
    assert conv.chosen_algorithms()[key] in conv.ALGORITHMS["forward"]

    def measure_again(*args, **kwargs):
        raise AssertionError("measured a key that was already chosen")

    monkeypatch.setattr(choice, "_measure", measure_again)
    np.testing.assert_array_equal(run(tf.nn.conv2d(x, w, 1, "SAME")), first)
    with pytest.raises(tf.errors.OpError, match="measured a key"):
        run(tf.nn.conv2d(x, w, 2, "SAME"))  # a new key: strides differ


def test_outputs_do_not_share_scratch_memory():
    x = tf.placeholder(tf.float32, [2, 8, 8, 3])
    w = tf.constant(np.random.default_rng(7).standard_normal((5, 5, 3, 4)).astype(np.float32))
    y = tf.nn.conv2d(x, w, 1, "SAME")
    rng = np.random.default_rng(8)
    with tf.Session() as sess:
        first_input = rng.standard_normal((2, 8, 8, 3)).astype(np.float32)
        first = sess.run(y, {x: first_input})
        kept = first.copy()
        sess.run(y, {x: rng.standard_normal((2, 8, 8, 3)).astype(np.float32)})
    np.testing.assert_array_equal(first, kept)


def test_parallel_parts_give_the_serial_result(monkeypatch):
    rng = np.random.default_rng(9)
    x, w = rng.standard_normal((16, 12, 12, 8)).astype(np.float32), rng.standard_normal((5, 5, 8, 8)).astype(np.float32)
    geo = geometry_from_attrs({"strides": [1, 1, 1, 1], "padding": "SAME"}, (12, 12), (5, 5))
    serial = fft_forward(conv.Scratch(np), x, w, geo)
    dy = rng.standard_normal((16, 12, 12, 8)).astype(np.float32)
    reference = ref_backprop_filter(x, w.shape, dy, (1, 1), (1, 1), "SAME")
    monkeypatch.setattr(intra_op, "PARALLEL_WORK", 0)
    threads = []
    with intra_op.RunThreads(3, 1):
        for module, splitter in (("fft", "parallel_parts"), ("fft", "each_chunk"), ("rows", "each_chunk"),
                                 ("winograd", "each_chunk")):
            # the algorithms that split their batch in chunks
            monkeypatch.setattr(f"tfnb.kernels.conv.{module}.{splitter}",
                                _recording(getattr(scratch, splitter), threads, splitter))
        np.testing.assert_allclose(fft_forward(conv.Scratch(np), x, w, geo), serial, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(fft_backprop_filter(conv.Scratch(np), x, dy, geo), reference,
                                   rtol=1e-4, atol=1e-3)
        np.testing.assert_allclose(gemm_backprop_filter(conv.Scratch(np), x, dy, geo), reference,
                                   rtol=1e-4, atol=1e-3)
        np.testing.assert_allclose(rows_backprop_filter(conv.Scratch(np), x, dy, geo), reference,
                                   rtol=1e-4, atol=1e-3)
        np.testing.assert_allclose(rows_forward(conv.Scratch(np), x, w, geo), serial, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(WINOGRAD_5X5.forward(conv.Scratch(np), x, w, geo), serial, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(WINOGRAD_5X5.backprop_filter(conv.Scratch(np), x, dy, geo), reference,
                                   rtol=1e-4, atol=1e-3)
    # Every call that split its work statically (FFT products by frequency) ran beside helper threads (in_turns is
    # tested apart).
    assert threads and all(len(names) > 1 for names, splitter in threads if splitter == "parallel_parts")
    assert any(splitter == "parallel_parts" for _, splitter in threads)


@pytest.mark.parametrize("group_bytes", [1, 4 << 10])
def test_fft_in_groups_of_images_gives_the_reference_results(monkeypatch, group_bytes):
    # Groups of one image each, or of one, two and two images: each group's products by frequency,
    # the filter gradient summed over the groups, the input gradient written group by group.
    monkeypatch.setattr(fft, "_GROUP_BYTES", group_bytes)
    monkeypatch.setattr(intra_op, "PARALLEL_WORK", 0)
    rng = np.random.default_rng(11)
    x = rng.standard_normal((5, 7, 6, 3)).astype(np.float32)
    w = rng.standard_normal((3, 3, 3, 4)).astype(np.float32)
    dy = rng.standard_normal((5, 7, 6, 4)).astype(np.float32)
    geo = geometry_from_attrs({"strides": [1, 1, 1, 1], "padding": "SAME"}, (7, 6), (3, 3))
    groups = fft._groups(conv.Scratch(np), 5, fft._spectrum_bytes(geo, 7, 4))
    assert len(groups) == (5 if group_bytes == 1 else 3) and groups[-1].stop == 5
    expected_input = ref_backprop_input(x.shape, w, dy, (1, 1), (1, 1), "SAME")
    expected_filter = ref_backprop_filter(x, w.shape, dy, (1, 1), (1, 1), "SAME")
    with intra_op.RunThreads(2, 1):
        np.testing.assert_allclose(fft_forward(conv.Scratch(np), x, w, geo),
                                   ref_conv(x, w, (1, 1), (1, 1), "SAME"), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(fft.fft_backprop_input(conv.Scratch(np), dy, w, geo), expected_input,
                                   rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(fft_backprop_filter(conv.Scratch(np), x, dy, geo), expected_filter,
                                   rtol=1e-4, atol=1e-3)
        dx, dw = fft.fft_backprop(conv.Scratch(np), x, w, dy, geo)
    np.testing.assert_allclose(dx, expected_input, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(dw, expected_filter, rtol=1e-4, atol=1e-3)


def test_a_filters_spectrum_and_its_gradients_synthesis_split_by_columns_give_the_whole_products(monkeypatch):
    # The filter's spectrum and the filter gradient's way back to the taps run with their columns shared among the
    # threads (each thread its own columns, W products for the height's transform): the same values as in one piece.
    rng = np.random.default_rng(10)
    w = rng.standard_normal((5, 3, 6, 7)).astype(np.float32)
    geo = geometry_from_attrs({"strides": [1, 1, 1, 1], "padding": "SAME"}, (9, 8), (5, 3))
    whole = fft._spectrum(conv.Scratch(np), "w", w, geo, "tap").copy()
    monkeypatch.setattr(intra_op, "PARALLEL_WORK", 0)
    threads = set()
    real = fft.parallel_parts
    monkeypatch.setattr(fft, "parallel_parts", lambda fn, n, work: real(
        lambda part: threads.add(threading.get_ident()) or fn(part), n, work))
    with intra_op.RunThreads(2, 1):
        split = fft._spectrum(conv.Scratch(np), "w", w, geo, "tap", split=True)
        np.testing.assert_allclose(split, whole, rtol=1e-5, atol=1e-5)
        taps = fft._signal(conv.Scratch(np), whole, geo, "tap", np.empty(w.shape, np.float32), split=True)
    expected = fft._signal(conv.Scratch(np), whole, geo, "tap", np.empty(w.shape, np.float32))
    np.testing.assert_allclose(taps, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(taps.reshape(w.shape), w, rtol=1e-4, atol=1e-4)  # the spectrum's way back
    assert len(threads) == 2
    # A device (STRICT here, as a GPU) keeps its two whole products: W small ones would each be a kernel launch.
    from tfnb.runtime.strict_numpy import STRICT_XP
    threads.clear()
    with intra_op.RunThreads(2, 1):
        on_device = fft._spectrum(conv.Scratch(STRICT_XP), "w", STRICT_XP.asarray(w), geo, "tap", split=True)
    np.testing.assert_allclose(on_device.get(), whole, rtol=1e-5, atol=1e-5)
    assert not threads


def test_winograd_chunks_of_tile_rows_that_span_images(monkeypatch):
    rng = np.random.default_rng(13)
    x, w = rng.standard_normal((3, 10, 9, 4)), rng.standard_normal((3, 3, 4, 5))
    dy = rng.standard_normal((3, 10, 9, 5))
    geo = geometry_from_attrs({"strides": [1, 1, 1, 1], "padding": "SAME"}, (10, 9), (3, 3))
    per_row = 36 * 3 * 5 * 8  # F(4x4, 3x3): 3 tiles a row, 5 channels at most, float64
    monkeypatch.setattr(winograd, "_CHUNK_BYTES", per_row * 9 // 4)  # 9 tile rows in 4 chunks: [0, 2), [2, 4), ...
    algorithm, pieces = winograd.WINOGRAD_4X4_3X3, _chunk_sizes(monkeypatch, winograd)
    with intra_op.RunThreads(2, 1):  # chunks of _CHUNK_BYTES where kernels split work (16 MiB at least otherwise)
        np.testing.assert_allclose(algorithm.forward(conv.Scratch(np), x, w, geo),
                                   ref_conv(x, w, (1, 1), (1, 1), "SAME"), rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(algorithm.backprop_filter(conv.Scratch(np), x, dy, geo),
                                   ref_backprop_filter(x, w.shape, dy, (1, 1), (1, 1), "SAME"), rtol=1e-10,
                                   atol=1e-10)
    assert pieces == [[2, 2, 2, 3], [1, 1, 1, 1, 1, 1, 1, 2]]  # filter gradient: x and dy tiles


@pytest.mark.parametrize("name", ["winograd", "winograd 4x4", "winograd 5x5"])
def test_winograd_filter_transforms_in_blocks_of_channel_pairs(monkeypatch, name):
    # The filter's transform, a flipped filter's (the input gradient's) and the filter gradient's way back run over
    # blocks of channel pairs: 7 blocks of 5 columns and one of 4 here, the same values as the direct loops.
    rng = np.random.default_rng(17)
    r = 5 if name == "winograd 5x5" else 3
    x, w, dy = rng.standard_normal((2, 7, 6, 3)), rng.standard_normal((r, r, 3, 13)), rng.standard_normal((2, 7, 6, 13))
    n = {"winograd": 4, "winograd 4x4": 6, "winograd 5x5": 6}[name]
    monkeypatch.setattr(winograd, "_SEPARABLE_BLOCK_BYTES", n * r * 8 * 5)  # float64
    geo = geometry_from_attrs({"strides": [1, 1, 1, 1], "padding": "SAME"}, (7, 6), (r, r))
    expected = {"forward": ((x, w), ref_conv(x, w, (1, 1), (1, 1), "SAME")),
                "backprop_input": ((dy, w), ref_backprop_input(x.shape, w, dy, (1, 1), (1, 1), "SAME")),
                "backprop_filter": ((x, dy), ref_backprop_filter(x, w.shape, dy, (1, 1), (1, 1), "SAME"))}
    for direction, ((a, b), reference) in expected.items():
        np.testing.assert_allclose(conv.ALGORITHMS[direction][name][1](conv.Scratch(np), a, b, geo), reference,
                                   rtol=1e-10, atol=1e-10, err_msg=direction)


def test_im2col_chunks_of_output_rows_that_span_images(monkeypatch):
    rng = np.random.default_rng(15)
    x, w = rng.standard_normal((3, 7, 6, 2)), rng.standard_normal((3, 2, 2, 4))
    dy = rng.standard_normal((3, 4, 3, 4))
    geo = geometry_from_attrs({"strides": [1, 2, 2, 1], "padding": "SAME"}, (7, 6), (3, 2))
    # Images of 4 output rows; chunks of 3 (forward) and 5.3 (filter gradient: 4 gradients' bytes) rows, so
    # 4 and 3 chunks, rounded up to a multiple of the 2 threads: 4 even chunks of 3 rows each time.
    monkeypatch.setattr(gemm, "_CHUNK_BYTES", 3 * 3 * 12 * 8)  # 3 rows of 3 positions of 12 float64 columns
    pieces = _chunk_sizes(monkeypatch, gemm)
    with intra_op.RunThreads(2, 1):
        np.testing.assert_allclose(gemm.gemm_forward(conv.Scratch(np), x, w, geo),
                                   ref_conv(x, w, (2, 2), (1, 1), "SAME"), rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(gemm.gemm_backprop_filter(conv.Scratch(np), x, dy, geo),
                                   ref_backprop_filter(x, w.shape, dy, (2, 2), (1, 1), "SAME"), rtol=1e-10,
                                   atol=1e-10)
    assert pieces == [[3, 3, 3, 3]] * 2


def _chunk_sizes(monkeypatch, module) -> list[list[int]]:
    """The sizes of the chunks each each_chunk call of `module` makes, recorded as they are made."""
    sizes = []

    def recorded(fn, count, per_item, chunk_bytes, work=None):
        sizes.append([])

        def sized(chunk):
            sizes[-1].append(chunk.stop - chunk.start)
            return fn(chunk)

        return scratch.each_chunk(sized, count, per_item, chunk_bytes, work=work)

    monkeypatch.setattr(module, "each_chunk", recorded)
    return sizes


@pytest.mark.parametrize("device", ["strict", pytest.param("gpu", marks=pytest.mark.gpu)])
@pytest.mark.parametrize("module,algorithm", [(gemm, gemm.gemm_forward), (row_products, rows_forward)],
                         ids=["gemm", "rows"])
def test_on_a_device_a_convolution_takes_its_batch_in_one_chunk(monkeypatch, module, algorithm, device):
    # Chunks sized for a CPU's caches would cost a GPU a round of kernel launches each (DEVICE_CHUNK_BYTES).
    if device == "gpu":
        import cupy as xp
    else:
        from tfnb.runtime.strict_numpy import STRICT_XP as xp
    rng = np.random.default_rng(17)
    x, w = rng.standard_normal((32, 64, 64, 16), np.float32), rng.standard_normal((3, 3, 16, 16), np.float32)
    geo = geometry_from_attrs({"strides": [1, 1, 1, 1], "padding": "SAME"}, (64, 64), (3, 3))
    sizes = _chunk_sizes(monkeypatch, module)
    on_host = algorithm(conv.Scratch(np), x, w, geo)
    on_device = algorithm(conv.Scratch(xp), xp.asarray(x), xp.asarray(w), geo)
    assert len(sizes[0]) > 1 and sizes[1] == [sum(sizes[0])]
    # cuBLAS may sum in another order than the host's BLAS: float32 rounding of sums of 144 products
    np.testing.assert_allclose(on_device.get(), on_host, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("device", ["strict", pytest.param("gpu", marks=pytest.mark.gpu)])
@pytest.mark.parametrize("name", ["winograd", "winograd 4x4", "winograd 5x5"])
def test_on_a_device_winograd_transforms_a_filter_in_one_block(monkeypatch, name, device):
    # A block of channel pairs per pair of products suits a CPU's caches; on a device each product is a launch.
    if device == "gpu":
        import cupy as xp
    else:
        from tfnb.runtime.strict_numpy import STRICT_XP as xp
    monkeypatch.setattr(winograd, "_SEPARABLE_BLOCK_BYTES", 64)  # a few columns a block on the host
    products = []
    real_separable = winograd._separable_into

    def counted(scratch_, a, source, out):
        products.append(scratch_.xp is np)
        return real_separable(scratch_, a, source, out)

    monkeypatch.setattr(winograd, "_separable_into", counted)
    rng = np.random.default_rng(19)
    r = 5 if name == "winograd 5x5" else 3
    x, w = rng.standard_normal((2, 9, 8, 6), np.float32), rng.standard_normal((r, r, 6, 7), np.float32)
    dy = rng.standard_normal((2, 9, 8, 7), np.float32)
    geo = geometry_from_attrs({"strides": [1, 1, 1, 1], "padding": "SAME"}, (9, 8), (r, r))
    for direction, (a, b) in {"forward": (x, w), "backprop_input": (dy, w), "backprop_filter": (x, dy)}.items():
        algorithm = conv.ALGORITHMS[direction][name][1]
        on_host = algorithm(conv.Scratch(np), a, b, geo)
        on_device = algorithm(conv.Scratch(xp), xp.asarray(a), xp.asarray(b), geo)
        np.testing.assert_allclose(on_device.get(), on_host, rtol=1e-4, atol=1e-4, err_msg=direction)
    assert products.count(False) == 3 and products.count(True) == 3
    blocks = []
    real_matmul = xp.matmul
    monkeypatch.setattr(xp, "matmul", lambda *args, **kwargs: blocks.append(1) or real_matmul(*args, **kwargs))
    real_separable(conv.Scratch(xp), xp.asarray(np.ones((r + 1, r), np.float32)), xp.asarray(np.ones((r, r, 42),
                   np.float32)), xp.empty(((r + 1) ** 2, 42), np.float32))
    assert len(blocks) == 2  # the whole width in one block: two products


def test_a_small_input_with_many_filters_is_work_for_every_thread(monkeypatch):
    # 2 x 4 x 4 positions of 8 channels (1 KiB of columns), each multiplied by 2,048 filters: 262,144 multiply-adds
    # per direction, as many as the threads need to share it.
    rng = np.random.default_rng(16)
    x, w = rng.standard_normal((2, 4, 4, 8)), rng.standard_normal((1, 1, 8, 2048))
    dy = rng.standard_normal((2, 4, 4, 2048))
    geo = geometry_from_attrs({"strides": [1, 1, 1, 1], "padding": "VALID"}, (4, 4), (1, 1))
    works = []

    def recorded(fn, count, per_item, chunk_bytes, work):
        works.append(work)
        return scratch.each_chunk(fn, count, per_item, chunk_bytes, work=work)

    monkeypatch.setattr(gemm, "each_chunk", recorded)
    np.testing.assert_allclose(gemm.gemm_forward(conv.Scratch(np), x, w, geo),
                               ref_conv(x, w, (1, 1), (1, 1), "VALID"), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(gemm.gemm_backprop_filter(conv.Scratch(np), x, dy, geo),
                               ref_backprop_filter(x, w.shape, dy, (1, 1), (1, 1), "VALID"), rtol=1e-10, atol=1e-10)
    assert works == [2 * 4 * 4 * 8 * 2048] * 2 and works[0] >= intra_op.PARALLEL_WORK


def test_row_pieces_split_chunks_at_image_boundaries_and_keep_whole_images_together():
    assert scratch.row_pieces(slice(2, 7), 3) == [(slice(0, 1), 2, 3), (slice(1, 2), 0, 3), (slice(2, 3), 0, 1)]
    assert scratch.row_pieces(slice(2, 13), 3) == [(slice(0, 1), 2, 3), (slice(1, 4), 0, 3), (slice(4, 5), 0, 1)]
    assert scratch.row_pieces(slice(3, 12), 3) == [(slice(1, 4), 0, 3)]
    assert scratch.row_pieces(slice(4, 5), 3) == [(slice(1, 2), 1, 2)]
    assert scratch.row_pieces(slice(0, 5), 3) == [(slice(0, 1), 0, 3), (slice(1, 2), 0, 2)]


def _recording(splitter, threads: list, label: str):
    """A chunk splitter of scratch.py that also records which threads ran the parts of each call, with `label`."""

    def recorded(fn, *sizes, **work):
        names = set()

        def part(selection):
            names.add(threading.current_thread().name)
            return fn(selection)

        result = splitter(part, *sizes, **work)
        threads.append((names, label))
        return result

    return recorded


def test_in_turns_runs_parts_in_every_thread_and_returns_them_in_order(monkeypatch):
    monkeypatch.setattr(intra_op, "PARALLEL_WORK", 0)
    both_started = threading.Barrier(2, timeout=10)  # broken, and failing, unless two threads take parts

    def part(index):
        if index < 2:
            both_started.wait()
        return index, threading.current_thread().name

    with intra_op.RunThreads(2, 1):
        results = scratch.in_turns(part, 6, work=1)
    assert [index for index, _ in results] == list(range(6))
    assert len({name for _, name in results[:2]}) == 2


# -- pooling --------------------------------------------------------------------------------------

POOL_CASES = [((2, 2), (2, 2), "VALID", (2, 6, 8, 3)), ((2, 2), (2, 2), "SAME", (2, 7, 5, 3)),
              ((3, 3), (2, 2), "SAME", (1, 7, 8, 2)), ((3, 2), (1, 2), "VALID", (2, 6, 7, 2)),
              ((2, 3), (2, 3), "VALID", (1, 7, 8, 2)), ((1, 1), (1, 1), "VALID", (1, 3, 3, 2)),
              ((4, 4), (3, 3), "SAME", (1, 9, 10, 2)), ((3, 3), (3, 3), "SAME", (1, 6, 6, 2)),
              # padded only after the input, which the pools read in place
              ((3, 3), (2, 2), "SAME", (2, 8, 6, 3)), ((4, 4), (3, 3), "SAME", (1, 9, 9, 2))]


def test_pooling_in_cache_sized_steps_across_threads_gives_the_same_values(monkeypatch):
    value = np.random.default_rng(12).standard_normal((6, 8, 8, 3)).astype(np.float32)
    x = tf.placeholder(tf.float32, value.shape)  # fed, so that nothing is folded while the plan is built
    pooled = [tf.nn.max_pool(x, 2, 2, "VALID"), tf.nn.avg_pool(x, 2, 2, "VALID")]
    fetches = pooled + [tf.gradients(tf.reduce_sum(p * p), x)[0] for p in pooled]
    fetches.append(tf.gradients(tf.gradients(tf.reduce_sum(pooled[0] * pooled[0]), x)[0], x, grad_ys=x)[0])
    whole = run(fetches, {x: value})
    monkeypatch.setattr(pooling, "_POOL_STEP_BYTES", 1)  # one image per step
    monkeypatch.setattr(intra_op, "PARALLEL_WORK", 0)
    stepped = run(fetches, {x: value})  # the session's run owns the cores: its threads split the batch
    for a, b in zip(stepped, whole):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("k,s,padding,shape", POOL_CASES)
def test_pools_match_direct_loops(k, s, padding, shape):
    x = np.random.default_rng(10).standard_normal(shape).astype(np.float32)
    ops = [tf.nn.max_pool(x, k, s, padding), tf.nn.avg_pool(x, k, s, padding)]
    max_out, avg_out = run(ops)
    np.testing.assert_array_equal(max_out, ref_pool(x, k, s, padding, np.max).astype(np.float32))
    np.testing.assert_allclose(avg_out, ref_pool(x, k, s, padding, np.mean), rtol=1e-6, atol=1e-6)
    assert ops[0].shape.as_list() == list(max_out.shape)


@pytest.mark.parametrize("k,s,padding,shape", POOL_CASES)
@pytest.mark.parametrize("values", ["random", "ties"])
def test_pool_gradients_match_direct_loops(k, s, padding, shape, values):
    rng = np.random.default_rng(11)
    # Small integers make many windows with several equal maxima: the first (row-major) one must win.
    x = (rng.integers(0, 3, shape) if values == "ties" else rng.standard_normal(shape)).astype(np.float32)
    x_tensor = tf.constant(x)
    y, average = tf.nn.max_pool(x_tensor, k, s, padding), tf.nn.avg_pool(x_tensor, k, s, padding)
    dy = rng.standard_normal(y.shape.as_list()).astype(np.float32)
    max_grad, avg_grad = (tf.gradients(out, x_tensor, grad_ys=dy)[0] for out in (y, average))
    both = tf.gradients([y, average], x_tensor, grad_ys=[dy, dy])[0]
    max_value, avg_value, both = run([max_grad, avg_grad, both])
    np.testing.assert_allclose(max_value, ref_max_pool_grad(x, dy, k, s, padding), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(avg_value, ref_avg_pool_grad(x.shape, dy, k, s, padding), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(both, max_value + avg_value, rtol=1e-6, atol=1e-6)


def test_max_pool_grad_of_an_all_equal_window_goes_to_its_first_element():
    x = tf.zeros([1, 4, 4, 1])
    dx = run(tf.gradients(tf.nn.max_pool(x, 2, 2, "VALID"), x)[0])
    np.testing.assert_array_equal(dx[0, :, :, 0], [[1, 0, 1, 0], [0, 0, 0, 0], [1, 0, 1, 0], [0, 0, 0, 0]])


def test_max_pool_grad_keeps_exact_zeros_beside_infinite_gradients():
    x = tf.constant(np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1))
    y = tf.nn.max_pool(x, 2, 2, "VALID")
    dx = run(tf.gradients(y, x, grad_ys=np.full((1, 2, 2, 1), np.inf, np.float32))[0])
    assert np.isinf(dx[0, 1::2, 1::2]).all() and (dx[0, 0::2] == 0).all() and (dx[0, :, 0::2] == 0).all()


@pytest.mark.parametrize("s", [1, 2])
def test_max_pool_grad_of_lowest_values_beside_padding_goes_to_real_elements(s):
    x = np.full((1, 5, 5, 2), -np.inf, np.float32)
    x[0, 2, 2, 0], x[0, 0, 4, 1] = 1, np.nan  # some windows all -inf, one reaching a NaN
    dy = np.random.default_rng(14).standard_normal((1, -(-5 // s), -(-5 // s), 2)).astype(np.float32)
    x_tensor = tf.constant(x)
    dx = run(tf.gradients(tf.nn.max_pool(x_tensor, 3, s, "SAME"), x_tensor, grad_ys=dy)[0])
    np.testing.assert_allclose(dx[..., 0], ref_max_pool_grad(x, dy, (3, 3), (s, s), "SAME")[..., 0], rtol=1e-6)


def test_max_pool_on_integers_pads_with_the_lowest_value():
    x = np.full((1, 3, 3, 1), -5, np.int32)
    np.testing.assert_array_equal(run(tf.nn.max_pool(x, 2, 2, "SAME")), np.full((1, 2, 2, 1), -5))


# -- static shapes and errors ---------------------------------------------------------------------


def test_static_shapes_with_unknown_batch():
    x, w = tf.placeholder(tf.float32, [None, 32, 31, 3]), tf.zeros([5, 5, 3, 8])
    y = tf.nn.conv2d(x, w, [1, 2, 2, 1], "SAME")
    assert y.shape.as_list() == [None, 16, 16, 8]
    assert tf.nn.conv2d(x, w, 1, "VALID", dilations=2).shape.as_list() == [None, 24, 23, 8]
    assert tf.nn.max_pool(y, 3, 2, "VALID").shape.as_list() == [None, 7, 7, 8]
    dx, dw = tf.gradients(tf.reduce_sum(y), [x, w])
    assert dx.shape.as_list() == [None, 32, 31, 3] and dw.shape.as_list() == [5, 5, 3, 8]
    unknown = tf.placeholder(tf.float32, [None, None, None, 3])
    assert tf.nn.conv2d(unknown, tf.zeros([3, 3, 3, 2]), 1, "SAME").shape.as_list() == [None, None, None, 2]


def test_shape_and_argument_errors():
    x = tf.zeros([1, 8, 8, 3])
    with pytest.raises(ValueError, match="depth"):
        tf.nn.conv2d(x, tf.zeros([3, 3, 4, 2]), 1, "SAME")
    with pytest.raises(ValueError, match="batch and depth"):
        tf.nn.conv2d(x, tf.zeros([3, 3, 3, 2]), [2, 1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="padding"):
        tf.nn.conv2d(x, tf.zeros([3, 3, 3, 2]), 1, "FULL")
    with pytest.raises(ValueError, match="negative"):
        tf.nn.conv2d(x, tf.zeros([10, 3, 3, 2]), 1, "VALID")
    with pytest.raises(ValueError, match="4-dimensional"):
        tf.nn.max_pool(tf.zeros([8, 8, 3]), 2, 2, "VALID")
    with pytest.raises(TypeError):
        tf.nn.conv2d(tf.zeros([1, 8, 8, 3], tf.int32), tf.zeros([3, 3, 3, 2], tf.int32), 1, "SAME")
    with pytest.raises(tf.errors.UnimplementedError, match="NHWC"):
        tf.nn.conv2d(x, tf.zeros([3, 3, 3, 2]), 1, "SAME", data_format="NCHW")


def test_sizes_that_disagree_at_run_time_fail_in_the_kernel():
    sizes = tf.placeholder(tf.int32, [4])
    out = tf.nn.conv2d_backprop_input(sizes, tf.zeros([3, 3, 2, 4]), tf.zeros([1, 5, 5, 4]), 1, "SAME")
    with tf.Session() as sess:
        assert sess.run(out, {sizes: [1, 5, 5, 2]}).shape == (1, 5, 5, 2)
        with pytest.raises(tf.errors.InvalidArgumentError, match="does not match"):
            sess.run(out, {sizes: [1, 6, 5, 2]})


# -- gradients at realistic sizes, float32 against float64 references -----------------------------


@pytest.mark.parametrize("kernel,strides,padding", [((5, 5), 1, "SAME"), ((3, 3), 1, "SAME"), ((3, 3), 2, "VALID")])
def test_conv_gradients_at_realistic_sizes(kernel, strides, padding):
    rng = np.random.default_rng(12)
    x_value = rng.standard_normal((8, 16, 16, 16)).astype(np.float32)
    w_value = (rng.standard_normal(kernel + (16, 24)) / 10).astype(np.float32)
    x, w = tf.placeholder(tf.float32, x_value.shape), tf.Variable(w_value)
    y = tf.nn.conv2d(x, w, strides, padding)
    dy = rng.standard_normal(y.shape.as_list()).astype(np.float32)
    dx, dw = tf.gradients(y, [x, w], grad_ys=dy)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        dx_value, dw_value = sess.run([dx, dw], {x: x_value})
    s = (strides, strides)
    np.testing.assert_allclose(dx_value, ref_backprop_input(x_value.shape, w_value.astype(np.float64), dy, s, (1, 1),
                                                            padding), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(dw_value, ref_backprop_filter(x_value.astype(np.float64), w_value.shape, dy, s, (1, 1),
                                                             padding), rtol=1e-4, atol=2e-3)
