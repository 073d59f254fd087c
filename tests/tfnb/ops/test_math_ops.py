"""Math ops beyond the generic forward cases: operators, dtype rules and errors, where, reductions, matmul."""

import numpy as np
import pytest

import tfnb as tf


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


# -- operators ------------------------------------------------------------------------------------


def test_binary_operators_build_tf1_ops_with_tf1_names():
    x, y = tf.constant([7.0, -7.0, 2.5]), tf.constant([2.0, 2.0, -1.0])
    xv, yv = np.array([7.0, -7.0, 2.5], np.float32), np.array([2.0, 2.0, -1.0], np.float32)
    cases = [(x + y, "Add", "add", xv + yv), (x - y, "Sub", "sub", xv - yv), (x * y, "Mul", "mul", xv * yv),
             (x / y, "RealDiv", "truediv", xv / yv), (x // y, "FloorDiv", "floordiv", np.floor(xv / yv)),
             (x % y, "FloorMod", "mod", np.mod(xv, yv)), (x ** y, "Pow", "pow", xv ** yv)]
    values = run([t for t, *_ in cases])
    for (tensor, op_type, name, expected), value in zip(cases, values):
        assert (tensor.op.type, tensor.op.name, tensor.dtype) == (op_type, name, tf.float32)
        np.testing.assert_allclose(value, expected, rtol=1e-6)


def test_reflected_operators_convert_the_python_operand_to_the_tensor_dtype():
    x = tf.placeholder(tf.float32, [3])
    v = np.array([1.0, 2.0, 4.0], np.float32)
    fetches = [2.0 - x, 2 + x, 3 * x, 1 / x, 7 // x, 7 % x, 2 ** x, np.ones(3, np.float32) - x]
    expected = [2 - v, 2 + v, 3 * v, 1 / v, 7 // v, 7 % v, 2 ** v, 1 - v]
    for tensor in fetches:
        assert isinstance(tensor, tf.Tensor) and tensor.dtype is tf.float32
    for value, want in zip(run(fetches, {x: v}), expected):
        np.testing.assert_allclose(value, want)


def test_int_tensor_with_a_float_operand_is_a_type_error():
    i = tf.constant([1, 2])
    for build in (lambda: i + 1.5, lambda: 1.5 * i, lambda: i - 0.5, lambda: tf.maximum(i, 2.5)):
        with pytest.raises(TypeError, match="int32"):
            build()


def test_comparison_operators_build_bool_ops_but_equality_stays_identity():
    x, y = tf.constant([1.0, 2.0, 3.0]), tf.constant([2.0, 2.0, 2.0])
    cases = [(x < y, "Less"), (x <= y, "LessEqual"), (x > y, "Greater"), (x >= y, "GreaterEqual"), (2.0 < x, "Greater")]
    for tensor, op_type in cases:
        assert tensor.op.type == op_type and tensor.dtype is tf.bool
    assert [v.tolist() for v in run([t for t, _ in cases])] == [
        [True, False, False], [True, True, False], [False, False, True], [False, True, True], [False, False, True]]
    assert (x == x) is True and (x == y) is False and (x != y) is True
    assert {x: 1, y: 2}[y] == 2


def test_bool_operators_are_logical_ops():
    a, b = tf.constant([True, True, False, False]), tf.constant([True, False, True, False])
    fetches = [a & b, a | b, a ^ b, ~a, True & b, False | b]
    assert [t.op.type for t in fetches] == ["LogicalAnd", "LogicalOr", "LogicalAnd", "LogicalNot", "LogicalAnd",
                                           "LogicalOr"]
    assert [v.tolist() for v in run(fetches)] == [[True, False, False, False], [True, True, True, False],
                                                  [False, True, True, False], [False, False, True, True],
                                                  [True, False, True, False], [True, False, True, False]]
    with pytest.raises(TypeError):
        ~tf.constant([1, 2])
    with pytest.raises(TypeError):
        tf.constant([1.0]) & tf.constant([2.0])


def test_unary_operators():
    x = tf.constant([-1.5, 2.0])
    neg, magnitude = -x, abs(x)
    z = abs(tf.constant([3 + 4j], dtype=tf.complex64))
    assert (neg.op.type, magnitude.op.type, z.op.type, z.dtype) == ("Neg", "Abs", "ComplexAbs", tf.float32)
    assert [v.tolist() for v in run([neg, magnitude, z])] == [[1.5, -2.0], [1.5, 2.0], [5.0]]


def test_matmul_operator():
    a, b = tf.constant([[1.0, 2.0]]), tf.constant([[3.0], [4.0]])
    product, reflected = a @ b, [[1.0], [1.0]] @ a
    assert (product.op.type, product.op.name) == ("MatMul", "matmul")
    assert [v.tolist() for v in run([product, reflected])] == [[[11.0]], [[1.0, 2.0], [1.0, 2.0]]]


# -- dtype rules ----------------------------------------------------------------------------------


@pytest.mark.parametrize("build", [
    lambda f, i: tf.add(f, i), lambda f, i: f - i, lambda f, i: tf.maximum(f, i), lambda f, i: tf.equal(f, i),
    lambda f, i: tf.floormod(f, i), lambda f, i: tf.add_n([f, i]), lambda f, i: tf.where([True, False], f, i),
    lambda f, i: tf.matmul(tf.constant([[1.0, 2.0]]), tf.constant([[1], [2]])), lambda f, i: f / i,
    lambda f, i: tf.div(f, i),
], ids=["add", "sub", "maximum", "equal", "floormod", "add_n", "where", "matmul", "truediv", "div"])
def test_mixing_dtypes_is_a_type_error_naming_both(build):
    f, i = tf.constant([1.0, 2.0]), tf.constant([1, 2])
    with pytest.raises(TypeError) as error:
        build(f, i)
    assert "float32" in str(error.value) and "int32" in str(error.value)


@pytest.mark.parametrize("dtype,expected", [
    (tf.int8, tf.float32), (tf.int16, tf.float32), (tf.uint8, tf.float32), (tf.uint16, tf.float32),
    (tf.int32, tf.float64), (tf.int64, tf.float64), (tf.float16, tf.float16), (tf.float32, tf.float32),
    (tf.float64, tf.float64), (tf.complex64, tf.complex64)])
def test_truediv_casts_integers_as_tf(dtype, expected):
    x, y = tf.constant([7, 2], dtype=dtype), tf.constant([2, 4], dtype=dtype)
    results = [tf.truediv(x, y), tf.divide(x, y), x / y]
    assert all(t.dtype is expected for t in results)
    for value in run(results):
        np.testing.assert_allclose(value, [3.5, 0.5])


def test_truediv_rejects_bool():
    with pytest.raises(TypeError, match="bool"):
        tf.truediv(tf.constant([True]), tf.constant([True]))


def test_div_is_python2_division_and_realdiv_truncates_integers():
    i, j = tf.constant([-7, 7]), tf.constant([2, 2])
    f, g = tf.constant([-7.0, 7.0]), tf.constant([2.0, 2.0])
    assert [v.tolist() for v in run([tf.div(i, j), tf.div(f, g), tf.realdiv(i, j), tf.realdiv(f, g)])] == [
        [-4, 3], [-3.5, 3.5], [-3, 3], [-3.5, 3.5]]
    assert tf.div(i, j).dtype is tf.int32 and tf.div(i, j).op.type == "FloorDiv"


def test_floor_and_truncate_division_signs():
    x, y = tf.constant([-7, 7, -7, 7]), tf.constant([2, 2, -2, -2])
    fx, fy = tf.cast(x, tf.float32), tf.cast(y, tf.float32)
    values = run([tf.floordiv(x, y), tf.floormod(x, y), tf.mod(fx, fy), tf.truncatediv(x, y), tf.truncatemod(x, y),
                  tf.floordiv(fx, fy)])
    assert [v.tolist() for v in values] == [[-4, 3, 3, -4], [1, 1, -1, -1], [1, 1, -1, -1], [-3, 3, 3, -3],
                                            [-1, 1, -1, 1], [-4, 3, 3, -4]]


def test_float_floordiv_is_floor_of_the_quotient():
    # TF computes floor(x / y); Python's and NumPy's // give 9 here.
    assert run(tf.floordiv(tf.constant(1.0), tf.constant(0.1))) == 10.0


@pytest.mark.parametrize("build", [tf.floordiv, tf.floormod, tf.truncatediv, tf.truncatemod, tf.realdiv, tf.div,
                                   lambda x, y: x // y, lambda x, y: x % y],
                         ids=["floordiv", "floormod", "truncatediv", "truncatemod", "realdiv", "div", "//", "%"])
@pytest.mark.parametrize("dtype", [tf.int32, tf.int64, tf.uint8])
def test_integer_division_by_zero_is_an_invalid_argument(build, dtype):
    x, y = tf.constant([6, 4], dtype=dtype), tf.constant([3, 0], dtype=dtype)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Integer division by zero"):
        run(build(x, y))


def test_float_division_by_zero_gives_inf_and_nan():
    values = run([tf.realdiv(tf.constant([1.0, 0.0]), 0.0), tf.floormod(tf.constant([1.0]), 0.0)])
    assert values[0][0] == np.inf and np.isnan(values[0][1]) and np.isnan(values[1][0])


def test_integers_to_negative_powers_fail_when_run():
    with pytest.raises(tf.errors.InvalidArgumentError, match="negative integer powers"):
        run(tf.pow(tf.constant([2]), tf.constant([-1])))


def test_cast_rules():
    floats = tf.constant([-2.7, -0.5, 0.5, 2.7])
    values = run([tf.cast(floats, tf.int32), tf.cast(floats, tf.bool), tf.cast(tf.constant([True, False]), tf.float32),
                  tf.cast(tf.constant([1.5 - 2j]), tf.float64), tf.to_int64(floats), tf.cast(1.9, tf.int32)])
    assert [np.asarray(v).tolist() for v in values] == [[-2, 0, 0, 2], [True, True, True, True], [1.0, 0.0], [1.5],
                                                        [-2, 0, 0, 2], 1]
    assert tf.cast(floats, tf.float32) is floats
    assert tf.to_float(tf.constant([1])).op.name == "ToFloat" and tf.to_double(floats).dtype is tf.float64
    assert tf.to_int32(floats).op.attrs["DstT"] is tf.int32


def test_round_is_half_to_even_and_keeps_integers():
    assert run(tf.round(tf.constant([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5]))).tolist() == [-2, -2, 0, 0, 2, 2]
    i = tf.constant([1, 2])
    assert tf.round(i) is i


def test_sigmoid_is_stable_for_large_magnitudes():
    x = tf.constant([-1000.0, -100.0, 0.0, 100.0, 1000.0], dtype=tf.float64)
    value = run(tf.sigmoid(x))
    assert np.all(np.isfinite(value))
    np.testing.assert_allclose(value, [0.0, np.exp(-100.0), 0.5, 1.0, 1.0], rtol=1e-12, atol=0)


def test_gradients_of_tanh_and_sigmoid_are_tf_s_gradient_ops_and_have_second_derivatives():
    x = tf.constant(np.linspace(-2, 2, 7), dtype=tf.float64)
    tanh, sigmoid = tf.tanh(x), tf.sigmoid(x)
    first = [tf.gradients(tf.reduce_sum(y), x)[0] for y in (tanh, sigmoid)]
    assert [g.op.type for g in first] == ["TanhGrad", "SigmoidGrad"]
    second = [tf.gradients(tf.reduce_sum(g), x)[0] for g in first]
    t, s = np.tanh(np.linspace(-2, 2, 7)), 1 / (1 + np.exp(-np.linspace(-2, 2, 7)))
    values = run(first + second)
    for value, expected in zip(values, [1 - t * t, s * (1 - s), -2 * t * (1 - t * t), s * (1 - s) * (1 - 2 * s)]):
        np.testing.assert_allclose(value, expected, rtol=1e-12, atol=1e-15)


def test_is_nan_inf_finite():
    x = tf.constant([0.0, np.nan, np.inf, -np.inf])
    assert [v.tolist() for v in run([tf.is_nan(x), tf.is_inf(x), tf.is_finite(x)])] == [
        [False, True, False, False], [False, False, True, True], [True, False, False, False]]


# -- where, clip, add_n ---------------------------------------------------------------------------


def test_where_with_x_and_y_selects():
    x, y = tf.constant([[1, 2], [3, 4]]), tf.constant([[-1, -2], [-3, -4]])
    same, rows, scalar = tf.where([[True, False], [False, True]], x, y), tf.where([False, True], x, y), \
        tf.where(True, x, y)
    assert same.op.type == "Select"
    assert [v.tolist() for v in run([same, rows, scalar])] == [[[1, -2], [-3, 4]], [[-1, -2], [3, 4]],
                                                               [[1, 2], [3, 4]]]


def test_where_static_shapes_and_errors():
    a, b = tf.placeholder(tf.float32, [None, 3]), tf.placeholder(tf.float32, [2, None])
    assert tf.where(tf.placeholder(tf.bool, [None, None]), a, b).shape.as_list() == [2, 3]
    assert tf.where(tf.placeholder(tf.bool, [None]), a, b).shape.as_list() == [2, 3]
    with pytest.raises(ValueError):
        tf.where(tf.placeholder(tf.bool, [3]), a, b)
    with pytest.raises(ValueError):
        tf.where(True, tf.constant([1.0, 2.0]), tf.constant([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="both"):
        tf.where(True, a)
    with pytest.raises(TypeError, match="condition"):
        tf.where(tf.constant([1.0, 0.0]), tf.constant([1, 2]), tf.constant([3, 4]))


def test_where_checks_shapes_when_run():
    x, y = tf.placeholder(tf.float32, [None]), tf.placeholder(tf.float32, [None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="same size"):
        run(tf.where(tf.constant([True, False]), x, y), {x: [1.0, 2.0], y: [1.0, 2.0, 3.0]})


def test_where_alone_gives_int64_coordinates():
    condition = tf.placeholder(tf.bool, [None, 3])
    coordinates = tf.where(condition)
    assert coordinates.op.type == "Where" and coordinates.dtype is tf.int64
    assert coordinates.shape.as_list() == [None, 2]
    assert tf.where(tf.placeholder(tf.bool)).shape.as_list() == [None, None]
    value = run(coordinates, {condition: [[True, False, True], [False, False, True]]})
    assert value.dtype == np.int64 and value.tolist() == [[0, 0], [0, 2], [1, 2]]
    assert run(tf.where(tf.constant([0, 3, 0, 1]))).tolist() == [[1], [3]]


def test_where_v2_broadcasts():
    value = run(tf.where_v2(tf.constant([True, False]), tf.constant([[1.0], [2.0]]), 0.0))
    assert value.tolist() == [[1.0, 0.0], [2.0, 0.0]]


def test_clip_by_value():
    x = tf.constant([[-2.0, 0.5, 3.0]])
    assert run(tf.clip_by_value(x, -1.0, 1.0)).tolist() == [[-1.0, 0.5, 1.0]]
    assert run(tf.clip_by_value(x, [-1.0, 0.0, 0.0], 2.0)).tolist() == [[-1.0, 0.5, 2.0]]
    with pytest.raises(ValueError):
        tf.clip_by_value(x, np.zeros((3, 1), np.float32), 1.0)  # would broadcast t to a larger shape


def test_add_n():
    a, b, c = tf.constant([1, 2]), tf.constant([10, 20]), tf.constant([100, 200])
    total = tf.add_n([a, b, c])
    assert total.op.type == "AddN" and len(total.op.inputs) == 3
    assert run(total).tolist() == [111, 222]
    assert tf.add_n([a]) is a and tf.add_n([a], name="one").op.type == "Identity"
    assert run(tf.accumulate_n([a, b], shape=[2], tensor_dtype=tf.int32)).tolist() == [11, 22]
    with pytest.raises(ValueError):
        tf.add_n([])
    with pytest.raises(ValueError):
        tf.add_n([a, tf.constant([1, 2, 3])])


# -- reductions and scans -------------------------------------------------------------------------


def test_reduction_shapes_with_unknown_dims():
    x = tf.placeholder(tf.float32, [None, 3])
    assert tf.reduce_sum(x, 0).shape.as_list() == [3]
    assert tf.reduce_sum(x, 1).shape.as_list() == [None]
    assert tf.reduce_mean(x, -1, keepdims=True).shape.as_list() == [None, 1]
    assert tf.reduce_max(x).shape.as_list() == []
    assert tf.reduce_min(x, [0, 1], keep_dims=True).shape.as_list() == [1, 1]
    assert tf.reduce_sum(x, 0).op.inputs[1].dtype is tf.int32
    value = run([tf.reduce_sum(x, 0), tf.reduce_sum(x, 1), tf.reduce_max(x)], {x: [[1, 2, 3], [4, 5, 6]]})
    assert [np.asarray(v).tolist() for v in value] == [[5, 7, 9], [6, 15], 6]


def test_reduction_over_a_fed_axis_and_unknown_rank():
    x, axis = tf.placeholder(tf.float32), tf.placeholder(tf.int32, [])
    assert tf.reduce_sum(x, 1).shape.ndims is None
    matrix = tf.placeholder(tf.float32, [2, 3])
    assert tf.reduce_sum(matrix, axis).shape.ndims is None
    assert tf.reduce_sum(matrix, axis, keepdims=True).shape.as_list() == [None, None]
    assert run(tf.reduce_sum(matrix, axis), {matrix: np.ones((2, 3)), axis: 1}).tolist() == [3, 3]
    everything = tf.reduce_sum(x)
    assert everything.shape.as_list() == []
    assert run(everything, {x: np.ones((2, 3, 4))}) == 24


def test_a_reduction_reads_fed_axes_every_run():
    # The kernel remembers the axes it read last: an array changed in place must be read again.
    matrix, axes = tf.placeholder(tf.float32, [2, 3]), tf.placeholder(tf.int32, [None])
    value = np.arange(6, dtype=np.float32).reshape(2, 3)
    axis_value = np.array([0], np.int32)
    with tf.Session() as sess:
        summed = tf.reduce_sum(matrix, axes)
        assert sess.run(summed, {matrix: value, axes: axis_value}).tolist() == [3, 5, 7]
        axis_value[0] = 1
        assert sess.run(summed, {matrix: value, axes: axis_value}).tolist() == [3, 12]
        assert sess.run(summed, {matrix: value, axes: np.array([1, 0], np.int32)}) == 15
        assert sess.run(summed, {matrix: value, axes: np.array([1], np.int32)}).tolist() == [3, 12]


def test_reduction_axis_errors():
    x = tf.placeholder(tf.float32, [2, 3])
    with pytest.raises(ValueError, match="Invalid reduction dimension"):
        tf.reduce_sum(x, 2)
    axis = tf.placeholder(tf.int32, [])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid reduction dimension"):
        run(tf.reduce_sum(x, axis), {x: np.ones((2, 3)), axis: -3})
    with pytest.raises(ValueError, match="both"):
        tf.reduce_sum(x, axis=0, reduction_indices=0)
    with pytest.raises(ValueError, match="both"):
        tf.reduce_sum(x, keepdims=True, keep_dims=True)


def test_integer_mean_truncates_toward_zero():
    values = run([tf.reduce_mean(tf.constant([-7, 0])), tf.reduce_mean(tf.constant([7, 0])),
                  tf.reduce_mean(tf.constant([[1, 2], [3, 5]], dtype=tf.int8), axis=1)])
    assert [np.asarray(v).tolist() for v in values] == [-3, 3, [1, 4]]
    assert values[2].dtype == np.int8


def test_reductions_keep_the_input_dtype_and_handle_empty_inputs():
    i = tf.constant([[100, 100], [100, 100]], dtype=tf.int8)
    assert run(tf.reduce_sum(i, 0)).dtype == np.int8
    empty = tf.placeholder(tf.float32, [0, 2])
    values = run([tf.reduce_max(empty, 0), tf.reduce_min(empty, 0), tf.reduce_sum(empty, 0),
                  tf.reduce_prod(empty, 0)], {empty: np.zeros((0, 2))})
    assert [v.tolist() for v in values] == [[-np.inf, -np.inf], [np.inf, np.inf], [0, 0], [1, 1]]
    assert run(tf.reduce_max(tf.constant([], tf.int32))) == np.iinfo(np.int32).min


def test_bool_reductions():
    b = tf.constant([[True, False], [True, True]])
    values = run([tf.reduce_any(b), tf.reduce_all(b), tf.reduce_all(b, 1), tf.reduce_any(b, 0, keepdims=True)])
    assert [np.asarray(v).tolist() for v in values] == [True, False, [False, True], [[True, True]]]
    with pytest.raises(TypeError):
        tf.reduce_any(tf.constant([1.0]))


def test_reduce_logsumexp_is_stable():
    x = tf.constant([[1000.0, 1000.0], [-np.inf, -np.inf], [0.0, np.log(3.0)]], dtype=tf.float64)
    result = tf.reduce_logsumexp(x, axis=1)
    kept = tf.reduce_logsumexp(x, axis=1, keepdims=True)
    assert result.shape.as_list() == [3] and kept.shape.as_list() == [3, 1]
    value, kept_value, total = run([result, kept, tf.reduce_logsumexp(tf.constant([0.0, 0.0]))])
    np.testing.assert_allclose(value, [1000.0 + np.log(2.0), -np.inf, np.log(4.0)])
    np.testing.assert_allclose(kept_value[:, 0], value)
    np.testing.assert_allclose(total, np.log(2.0))


def test_argmax_and_argmin():
    x = tf.constant([[1.0, 5.0, 2.0], [7.0, 0.0, 7.0]])
    results = [tf.argmax(x), tf.argmax(x, 1), tf.argmin(x, axis=-1, output_type=tf.int32), tf.argmax(x, dimension=1)]
    assert [t.dtype for t in results] == [tf.int64, tf.int64, tf.int32, tf.int64]
    assert [t.shape.as_list() for t in results] == [[3], [2], [2], [2]]
    assert [v.tolist() for v in run(results)] == [[1, 0, 1], [1, 0], [0, 1], [1, 0]]
    with pytest.raises(ValueError, match="both"):
        tf.argmax(x, axis=0, dimension=0)
    assert tf.argmax(x, tf.placeholder(tf.int32, [])).shape.as_list() == [None]


def test_cumsum_and_cumprod_flags():
    x = tf.constant([1, 2, 3, 4])
    values = run([tf.cumsum(x), tf.cumsum(x, exclusive=True), tf.cumsum(x, reverse=True),
                  tf.cumsum(x, exclusive=True, reverse=True), tf.cumprod(x, exclusive=True),
                  tf.cumsum(tf.constant([[1, 2], [3, 4]]), axis=1)])
    assert [v.tolist() for v in values] == [[1, 3, 6, 10], [0, 1, 3, 6], [10, 9, 7, 4], [9, 7, 4, 0], [1, 1, 2, 6],
                                            [[1, 3], [3, 7]]]
    with pytest.raises(ValueError):
        tf.cumsum(x, axis=1)


# -- matmul ---------------------------------------------------------------------------------------


def test_matmul_static_shapes():
    assert tf.matmul(tf.placeholder(tf.float32, [2, 3]), tf.placeholder(tf.float32, [3, 4])).shape.as_list() == [2, 4]
    unknown = tf.matmul(tf.placeholder(tf.float32, [None, 3]), tf.placeholder(tf.float32, [None, None]))
    assert unknown.shape.as_list() == [None, None]
    transposed = tf.matmul(tf.placeholder(tf.float32, [3, 2]), tf.placeholder(tf.float32, [5, 3]), transpose_a=True,
                           transpose_b=True)
    assert transposed.shape.as_list() == [2, 5]


def test_matmul_shape_and_dtype_errors():
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 4"):
        tf.matmul(tf.constant(np.zeros((2, 3), np.float32)), tf.constant(np.zeros((4, 5), np.float32)))
    with pytest.raises(ValueError, match="rank 2"):
        tf.matmul(tf.constant([1.0, 2.0]), tf.constant([[1.0], [2.0]]))
    with pytest.raises(ValueError, match="Only one"):
        tf.matmul(tf.constant([[1.0]]), tf.constant([[1.0]]), transpose_a=True, adjoint_a=True)
    with pytest.raises(TypeError) as error:
        tf.matmul(tf.constant([[1.0]]), tf.constant([[1]]))
    assert "float32" in str(error.value) and "int32" in str(error.value)


def test_batched_matmul_broadcasts_batch_dims():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(2, 1, 2, 3)), rng.normal(size=(3, 3, 4))
    product = tf.matmul(tf.constant(a), tf.constant(b))
    assert product.op.type == "BatchMatMulV2" and product.shape.as_list() == [2, 3, 2, 4]
    np.testing.assert_allclose(run(product), a @ b)
    unknown_batch = tf.matmul(tf.placeholder(tf.float64, [None, 2, 3]), tf.placeholder(tf.float64, [5, 3, 4]))
    assert unknown_batch.shape.as_list() == [5, 2, 4]
    assert tf.matmul(tf.placeholder(tf.float64), tf.constant(b)).shape.ndims is None
    with pytest.raises(ValueError):
        tf.matmul(tf.constant(np.zeros((2, 2, 3))), tf.constant(np.zeros((3, 3, 4))))
    x = tf.placeholder(tf.float64, [None, 2, 3])
    with pytest.raises(tf.errors.InvalidArgumentError):
        run(tf.matmul(x, tf.constant(b)), {x: np.zeros((2, 2, 3))})


def test_matmul_adjoint_conjugates_complex_operands():
    a = np.array([[1 + 2j, 3 - 1j], [0 + 1j, 2 + 0j]], np.complex128)
    b = np.array([[2 - 1j], [1 + 1j]], np.complex128)
    ta, tb = tf.constant(a), tf.constant(b)
    values = run([tf.matmul(ta, tb, adjoint_a=True), tf.matmul(ta, tb, transpose_a=True),
                  tf.matmul(tf.constant(a[None]), tb, adjoint_a=True)])
    np.testing.assert_allclose(values[0], a.conj().T @ b)
    np.testing.assert_allclose(values[1], a.T @ b)
    np.testing.assert_allclose(values[2][0], a.conj().T @ b)


def test_cost_estimates():
    matmul = tf.matmul(tf.placeholder(tf.float32, [2, 3]), tf.placeholder(tf.float32, [3, 4])).op
    batched = tf.matmul(tf.placeholder(tf.float32, [5, 3, 2]), tf.placeholder(tf.float32, [5, 3, 4]),
                        transpose_a=True).op
    reduction = tf.reduce_sum(tf.placeholder(tf.float32, [10, 20]), 1).op
    assert matmul.op_def.cost(matmul) == 2 * 2 * 4 * 3
    assert batched.op_def.cost(batched) == 2 * 5 * 2 * 4 * 3
    assert reduction.op_def.cost(reduction) == 200


def test_math_namespace():
    assert tf.math.reduce_sum is tf.reduce_sum and tf.math.floormod is tf.mod and tf.math.sigmoid is tf.sigmoid
    assert run(tf.math.squared_difference(tf.constant([1.0]), 3.0)).tolist() == [4.0]
