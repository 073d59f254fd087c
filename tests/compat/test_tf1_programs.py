"""Small TF1 programs, each run under TensorFlow and under tfnb: the same values, dtypes, shapes, names and errors.

Each `program(tf)` is written as a TF1 user writes it, against the module it is given. A program
marked `differs=...` documents a deliberate or accepted difference (a strict xfail, so it is
noticed when the difference goes away). The harness is in conftest.py.
"""

from __future__ import annotations

import collections

import numpy as np
import pytest
from program_registry import Programs, described, run, shapes

PROGRAMS = Programs()
program = PROGRAMS.register


X23 = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
CUBE = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


# -- arithmetic ------------------------------------------------------------------------------------


@program
def python_scalars_take_the_float_tensor_dtype(tf):
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    return run(tf, [x + 1, 2 * x, x - 0.5, 1 - x, x / 2, 2 / x, x ** 2, 2 ** x, -x, abs(-x), x // 3, x % 3, 7 % x])


@program
def int32_operators(tf):
    x = tf.constant([7, -7, 3, -2])
    return run(tf, [x + 1, x * 3, x - 10, x // 2, x % 3, -x, 7 // x, x % -3, x ** 2, abs(x), 1 - x])


@program
def int_true_division_gives_floats_by_width(tf):
    values = [tf.constant([7, 8, 9], dtype=d) / tf.constant([2, 4, 5], dtype=d)
              for d in (tf.int8, tf.int16, tf.int32, tf.int64, tf.uint8)]
    return [v.dtype.name for v in values], run(tf, values)


@program
def int_operator_division(tf):
    x = tf.constant([7, -7, 9])
    return run(tf, [x / 2, 2 / x, x // 2, x / x])


@program
def div_floors_integers_and_divides_floats(tf):
    a, b = tf.constant([7, -7, 7, -7]), tf.constant([2, 2, -2, -2])
    fa, fb = tf.cast(a, tf.float32), tf.cast(b, tf.float32)
    return run(tf, [tf.div(a, b), tf.div(fa, fb), tf.divide(a, b), tf.truediv(a, b), tf.floordiv(a, b),
                    tf.floordiv(fa, fb), tf.floormod(a, b), tf.mod(fa, fb), tf.truncatediv(a, b),
                    tf.truncatemod(a, b), tf.realdiv(fa, fb), tf.truncatediv(fa * 1.5, fb),
                    tf.truncatemod(fa * 1.5, fb)])


@program
def broadcasting_shapes_and_values(tf):
    column, row = tf.constant([[1.0], [2.0], [3.0]]), tf.constant([[10.0, 20.0, 30.0, 40.0]])
    scaled = tf.ones([2, 3]) * tf.constant([1.0, 2.0, 3.0])
    cube = tf.zeros([2, 1, 3]) - tf.ones([4, 1])
    return shapes(column + row, scaled, cube), run(tf, [column + row, scaled, cube])


@program
def broadcasting_with_unknown_dims(tf):
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.placeholder(tf.float32, [None, 1, None])
    z = tf.placeholder(tf.float32)
    return shapes(x + 1.0, x * y, x + z, x + tf.ones([3])), run(tf, x * y, {x: [[1, 2, 3]], y: [[[2]], [[3]]]})


@program
def python_lists_and_numpy_operands(tf):
    x = tf.constant([1.0, 2.0])
    i = tf.constant([1, 2])
    return run(tf, [x + [3.0, 4.0], [1.0, 1.0] - x, x * np.float32(2), np.array([1.0, 2.0], np.float32) + x,
                    i + [3, 4], i * np.int32(3)])


@program
def numpy_float64_operand_for_a_float32_tensor(tf):
    x = tf.constant([1.0, 2.0])
    return run(tf, [x + np.array([0.5, 0.25]), x * np.float64(2.0)])


@program
def string_tensors_concatenate(tf):
    s = tf.constant(["ab", "c"])
    return run(tf, [s + "!", tf.add(s, tf.constant(["x", "y"]))])


@program
def mixing_int_and_float_tensors_is_a_type_error(tf):
    return tf.constant(1) + tf.constant(1.0)


@program
def float_python_operand_for_an_int_tensor_is_a_type_error(tf):
    return tf.constant([1, 2]) * 1.5


@program
def float32_with_float64_is_a_type_error(tf):
    return tf.add(tf.constant(1.0), tf.constant(1.0, tf.float64))


@program
def bool_arithmetic_is_a_type_error(tf):
    return tf.constant(True) + tf.constant(False)


@program
def string_for_a_float_tensor_is_a_type_error(tf):
    return tf.constant(1.0) + "a"


@program
def incompatible_static_shapes_are_a_value_error(tf):
    return tf.ones([2, 3]) + tf.ones([4])


@program
def incompatible_fed_shapes_fail_at_run_time(tf):
    x, y = tf.placeholder(tf.float32, [None]), tf.placeholder(tf.float32, [None])
    return run(tf, x + y, {x: [1, 2], y: [1, 2, 3]})


@program
def int_division_by_zero_fails_at_run_time(tf):
    x = tf.placeholder(tf.int32, [2])
    return run(tf, x // tf.constant([1, 0]), {x: [4, 5]})


@program
def float_division_by_zero_gives_inf_and_nan(tf):
    x = tf.constant([1.0, -1.0, 0.0])
    return run(tf, [x / 0.0, x // 0.0, tf.log(x), tf.sqrt(x - 0.5)])


@program
def comparisons_and_logical_operators(tf):
    x, y = tf.constant([1, 2, 3]), tf.constant([3, 2, 1])
    a, b = x < y, x >= 2
    return run(tf, [a, b, x <= 2, x > y, 2 < x, tf.equal(x, y), tf.not_equal(x, 2), a & b, a | b, a ^ b, ~a,
                    tf.logical_xor(a, b), tf.logical_not(b), tf.logical_and(a, True)])


@program
def equality_operator_compares_identity(tf):
    x, y = tf.constant(1), tf.constant(1)
    return [x == x, x == y, x != y, {x: 1, y: 2}[y]]


@program
def tensor_as_python_bool_is_a_type_error(tf):
    if tf.constant(True):
        return 1
    return 0


@program
def logical_ops_need_bools(tf):
    return tf.logical_and(tf.constant([1, 0]), tf.constant([1, 1]))


@program
def unary_math(tf):
    x = tf.constant([0.25, 0.5, 1.0, 2.0])
    return run(tf, [tf.exp(x), tf.log(x), tf.sqrt(x), tf.rsqrt(x), tf.square(x), tf.sin(x), tf.cos(x), tf.tan(x),
                    tf.tanh(x), tf.sigmoid(x), tf.log1p(x), tf.expm1(x), tf.reciprocal(x), tf.sign(x - 1.0),
                    tf.floor(x * 3), tf.ceil(x * 3), tf.negative(x), tf.abs(x - 1), tf.is_nan(x / 0 - x / 0),
                    tf.is_inf(x / 0), tf.is_finite(x)])


@program
def unary_math_on_ints(tf):
    x = tf.constant([-3, 0, 4])
    return run(tf, [tf.abs(x), tf.sign(x), tf.square(x), tf.negative(x)])


@program
def sqrt_of_an_int_is_a_type_error(tf):
    return tf.sqrt(tf.constant([4, 9]))


@program
def round_halves_to_even_and_cast_truncates(tf):
    x = tf.constant([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.7, -2.7])
    return run(tf, [tf.round(x), tf.cast(x, tf.int32), tf.cast(x, tf.bool), tf.cast(tf.constant([0, 3]), tf.bool),
                    tf.cast(tf.constant([True, False]), tf.float32), tf.to_int32(x), tf.to_float(tf.constant([1, 2])),
                    tf.to_double(x), tf.to_int64(x), tf.cast(x, tf.float16), tf.cast(tf.constant([3, 4]), tf.int64),
                    tf.round(tf.constant([3, -2]))])


@program
def cast_keeps_names_and_shapes(tf):
    x = tf.placeholder(tf.float32, [None, 2])
    y = tf.cast(x, tf.int32)
    same = tf.cast(x, tf.float32)
    return described(y, tf.to_float(y)), same is x


@program
def clip_by_value(tf):
    x = tf.constant([[-2.0, 0.5], [3.0, 10.0]])
    return run(tf, [tf.clip_by_value(x, 0.0, 1.0), tf.clip_by_value(x, [0.0, 1.0], 5.0),
                    tf.clip_by_value(tf.constant([-5, 0, 5]), -1, 1)])


@program
def maximum_minimum_and_squared_difference_broadcast(tf):
    x = tf.constant([[1.0, 5.0], [3.0, -2.0]])
    return run(tf, [tf.maximum(x, 2.0), tf.minimum(x, [0.0, 4.0]), tf.squared_difference(x, 1.0),
                    tf.maximum(tf.constant([1, 7]), 3), tf.pow(tf.constant([2, 3]), 3), tf.pow(x, 0.5)])


@program
def add_n_and_accumulate_n(tf):
    a, b = tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])
    return run(tf, [tf.add_n([a, b, a]), tf.add_n([a]), tf.accumulate_n([a, b])])


@program
def add_n_of_different_shapes_is_a_value_error(tf):
    return tf.add_n([tf.ones([2]), tf.ones([3])])


@program
def where_selects_and_finds_coordinates(tf):
    c = tf.constant([True, False, True])
    x, y = tf.constant([1, 2, 3]), tf.constant([10, 20, 30])
    m = tf.constant([[True, False], [False, True]])
    rows = tf.where(tf.constant([True, False]), tf.ones([2, 3]), tf.zeros([2, 3]))
    return run(tf, [tf.where(c, x, y), tf.where(m), rows, tf.where_v2(c, x, 0), tf.where(x > 1)])


@program
def where_with_mismatched_shapes_is_a_value_error(tf):
    return tf.where(tf.constant([True, False, True]), tf.ones([2, 2]), tf.zeros([2, 2]))


@program
def dimension_arithmetic(tf):
    x = tf.placeholder(tf.float32, [None, 3, 4])
    d = x.shape[1] * x.shape[2]
    return [d.value, (x.shape[0] + 1).value, x.shape[1] == 3, x.shape[0] == 3, int(x.shape[2]),
            x.get_shape()[1:].as_list(), x.shape.ndims, len(x.shape), x.shape.is_fully_defined(),
            x.shape[1:].num_elements()]


# -- reductions ------------------------------------------------------------------------------------


@program
def reduce_sum_argument_spellings(tf):
    x = tf.constant(X23)
    sums = [tf.reduce_sum(x), tf.reduce_sum(x, 0), tf.reduce_sum(x, axis=1), tf.reduce_sum(x, -1),
            tf.reduce_sum(x, [0, 1]), tf.reduce_sum(x, (1,)), tf.reduce_sum(x, 1, keepdims=True),
            tf.reduce_sum(x, 1, keep_dims=True), tf.reduce_sum(x, reduction_indices=[1]),
            tf.reduce_sum(x, reduction_indices=0), tf.reduce_sum(x, axis=[]), tf.reduce_sum(x, tf.constant(1)),
            tf.reduce_sum(x, axis=[-1, 0], keepdims=True), tf.reduce_sum(x, np.int64(1))]
    return shapes(*sums), run(tf, sums)


@program
def reductions_of_each_kind(tf):
    x = tf.constant([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]])
    b = tf.constant([[True, False], [True, True]])
    return run(tf, [tf.reduce_mean(x), tf.reduce_mean(x, 0), tf.reduce_max(x, 1), tf.reduce_min(x, -1, keepdims=True),
                    tf.reduce_prod(x, 0), tf.reduce_logsumexp(x, 1), tf.reduce_logsumexp(x), tf.reduce_any(b, 1),
                    tf.reduce_all(b, 0), tf.reduce_all(b)])


@program
def integer_mean_truncates(tf):
    x = tf.constant([[1, 2], [4, 4], [-3, 0]])
    return run(tf, [tf.reduce_mean(x), tf.reduce_mean(x, 0), tf.reduce_mean(x, 1), tf.reduce_sum(x, 0),
                    tf.reduce_prod(x, 1), tf.reduce_max(x)])


@program
def reduce_logsumexp_is_stable(tf):
    x = tf.constant([[1000.0, 1000.0], [-1000.0, -1001.0]])
    return run(tf, [tf.reduce_logsumexp(x, 1), tf.reduce_logsumexp(x, 1, keepdims=True)])


@program
def reductions_of_unknown_shapes(tf):
    x = tf.placeholder(tf.float32, [None, 3])
    u = tf.placeholder(tf.float32)
    axis = tf.placeholder(tf.int32)
    results = [tf.reduce_sum(x, 0), tf.reduce_sum(x, 1), tf.reduce_mean(x, 0, keepdims=True), tf.reduce_max(x),
               tf.reduce_sum(u), tf.reduce_sum(u, 1), tf.reduce_sum(x, axis), tf.reduce_sum(x, axis, keepdims=True)]
    return shapes(*results), run(tf, results[:2] + [results[6]], {x: X23, axis: 1})


@program
def reduction_axis_out_of_range_is_a_value_error(tf):
    return tf.reduce_sum(tf.ones([2, 3]), 2)


@program
def reduce_any_of_floats_is_a_type_error(tf):
    return tf.reduce_any(tf.ones([2]))


@program
def argmax_and_argmin(tf):
    x = tf.constant([[1.0, 9.0, 9.0], [7.0, 2.0, 7.0]])
    results = [tf.argmax(x), tf.argmax(x, 1), tf.argmax(x, axis=-1), tf.argmax(x, dimension=1),
               tf.argmax(x, 1, output_type=tf.int32), tf.argmin(x, 0), tf.argmin(x, 1),
               tf.argmax(tf.constant([3, 1, 3]), 0), tf.argmax(tf.constant([[False, True], [True, True]]), 0),
               tf.argmin(tf.constant([True, False, False]), 0)]
    return [t.dtype.name for t in results], shapes(*results), run(tf, results)


@program
def cumsum_and_cumprod(tf):
    x = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    return run(tf, [tf.cumsum(x), tf.cumsum(x, 1), tf.cumsum(x, axis=1, exclusive=True),
                    tf.cumsum(x, 1, reverse=True), tf.cumsum(x, -1, exclusive=True, reverse=True),
                    tf.cumprod(x, 1), tf.cumprod(x, 0, exclusive=True), tf.cumsum(tf.constant([1, 2, 3]))])


# -- matmul ----------------------------------------------------------------------------------------


@program
def matmul_variants(tf):
    a = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    b = tf.constant([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    results = [tf.matmul(a, b), tf.matmul(a, a, transpose_b=True), tf.matmul(a, a, transpose_a=True),
               tf.matmul(b, a, transpose_a=True, transpose_b=True), a @ b, tf.matmul(a, b, adjoint_a=False),
               tf.matmul(tf.constant([[1, 2]]), tf.constant([[3], [4]]))]
    return shapes(*results), run(tf, results)


@program
def batch_matmul_broadcasts_batch_dims(tf):
    a = tf.constant(np.arange(12, dtype=np.float32).reshape(2, 2, 3))
    b = tf.constant(np.arange(6, dtype=np.float32).reshape(3, 2))
    c = tf.constant(np.ones((1, 3, 2), np.float32))
    results = [tf.matmul(a, b), tf.matmul(a, c), tf.matmul(a, a, transpose_b=True), a @ c]
    return shapes(*results), run(tf, results)


@program
def matmul_of_unknown_batch(tf):
    x = tf.placeholder(tf.float32, [None, 3])
    w = tf.ones([3, 5])
    y = tf.matmul(x, w)
    seq = tf.placeholder(tf.float32, [None, None, 3])
    return shapes(y, tf.matmul(seq, w), tf.matmul(x, x, transpose_b=True)), run(tf, y, {x: X23})


@program
def matmul_inner_dims_must_agree(tf):
    return tf.matmul(tf.ones([2, 3]), tf.ones([2, 3]))


@program
def matmul_of_a_vector_is_a_value_error(tf):
    return tf.matmul(tf.ones([3]), tf.ones([3, 2]))


@program
def matmul_dtypes_must_match(tf):
    return tf.matmul(tf.ones([2, 2]), tf.ones([2, 2], tf.float64))


@program
def matmul_with_a_python_list(tf):
    x = tf.constant([[1.0, 2.0]])
    return run(tf, [tf.matmul(x, [[1.0], [2.0]]), tf.matmul([[2.0, 0.0]], tf.transpose(x))])


# -- shapes and layout -----------------------------------------------------------------------------


@program
def reshape_forms(tf):
    x = tf.constant(CUBE)
    results = [tf.reshape(x, [6, 4]), tf.reshape(x, [-1]), tf.reshape(x, [2, -1]), tf.reshape(x, (4, 3, 2)),
               tf.reshape(x, tf.constant([3, 8])), tf.reshape(x, [-1, 2, 2]), tf.reshape(tf.constant([5.0]), [])]
    return shapes(*results), run(tf, results)


@program
def reshape_of_unknown_batch(tf):
    x = tf.placeholder(tf.float32, [None, 2, 3])
    flat = tf.reshape(x, [-1, 6])
    by_shape = tf.reshape(x, [tf.shape(x)[0], -1])
    unknown = tf.reshape(x, tf.placeholder(tf.int32, [3]))
    return shapes(flat, unknown, tf.reshape(x, [2, -1, 3])), run(tf, by_shape, {x: CUBE[:, :2, :3]})


@program(differs="tfnb infers the -1 (6) since the batch entry is x's own shape(x)[0]; TF leaves it unknown")
def reshape_by_its_own_batch_dim_infers_the_rest(tf):
    x = tf.placeholder(tf.float32, [None, 2, 3])
    return shapes(tf.reshape(x, [tf.shape(x)[0], -1]))


@program
def reshape_to_a_wrong_size_is_a_value_error(tf):
    return tf.reshape(tf.ones([2, 3]), [4, 2])


@program(differs="tfnb rejects while building what TF rejects when run (a ValueError, not an InvalidArgumentError)")
def reshape_with_two_unknowns_is_an_error(tf):
    return tf.reshape(tf.ones([2, 3]), [-1, -1])


@program
def reshape_to_a_wrong_fed_size_fails_at_run_time(tf):
    x = tf.placeholder(tf.float32, [None])
    return run(tf, tf.reshape(x, [2, 2]), {x: [1.0, 2.0, 3.0]})


@program
def transpose_forms(tf):
    x = tf.constant(CUBE)
    results = [tf.transpose(x), tf.transpose(x, [0, 2, 1]), tf.transpose(x, perm=(2, 0, 1)),
               tf.transpose(tf.constant(X23)), tf.transpose(x, tf.constant([1, 0, 2]))]
    return shapes(*results), run(tf, results)


@program(differs="tfnb rejects while building what TF rejects when run (a ValueError, not an InvalidArgumentError)")
def transpose_with_a_bad_perm_is_an_error(tf):
    return tf.transpose(tf.ones([2, 3]), [0, 0])


@program
def concat_forms(tf):
    a, b = tf.constant([[1, 2], [3, 4]]), tf.constant([[5, 6]])
    c = tf.constant([[7], [8]])
    results = [tf.concat([a, b], 0), tf.concat([a, c], 1), tf.concat([a, c], -1), tf.concat([a], 0),
               tf.concat([a, [[9, 9]]], axis=0), tf.concat((a, b), tf.constant(0))]
    return shapes(*results), run(tf, results)


@program
def concat_of_unknown_dims(tf):
    x = tf.placeholder(tf.float32, [None, 2])
    y = tf.placeholder(tf.float32, [3, None])
    return shapes(tf.concat([x, y], 0), tf.concat([x, y], 1), tf.concat([x, tf.ones([4, 2])], 0))


@program
def concat_of_mismatched_shapes_is_a_value_error(tf):
    return tf.concat([tf.ones([2, 3]), tf.ones([2, 2])], 0)


@program
def concat_of_mismatched_dtypes_is_an_error(tf):
    return tf.concat([tf.ones([2]), tf.constant([1, 2])], 0)


@program
def stack_and_unstack(tf):
    a, b = tf.constant([1, 2, 3]), tf.constant([4, 5, 6])
    results = [tf.stack([a, b]), tf.stack([a, b], axis=1), tf.stack([a, b], -1), tf.stack([[1, 2], [3, 4]]),
               tf.stack([a, [7, 8, 9]])]
    parts = tf.unstack(tf.constant(CUBE), axis=1)
    return shapes(*results, *parts), run(tf, results + parts + tf.unstack(a))


@program
def convert_list_of_tensors_packs_them(tf):
    a = tf.constant(1.0)
    packed = tf.convert_to_tensor([a, 2.0, [3.0][0]])
    return shapes(packed), run(tf, [packed, tf.reshape(tf.ones([4]), [2, tf.constant(2)])])


@program
def stack_of_mismatched_shapes_is_a_value_error(tf):
    return tf.stack([tf.ones([2]), tf.ones([3])])


@program
def unstack_of_an_unknown_dim_is_a_value_error(tf):
    return tf.unstack(tf.placeholder(tf.float32, [None, 2]))


@program
def split_forms(tf):
    x = tf.constant(np.arange(12).reshape(2, 6))
    parts = [tf.split(x, 3, axis=1), tf.split(x, [1, 2, 3], 1), tf.split(x, [4, -1], axis=1), tf.split(x, 2),
             tf.split(x, num_or_size_splits=2, axis=-1)]
    return [shapes(*p) for p in parts], run(tf, parts)


@program
def split_into_unequal_parts_is_a_value_error(tf):
    return tf.split(tf.ones([2, 5]), 2, axis=1)


@program
def expand_dims_and_squeeze(tf):
    x = tf.constant([[[1.0], [2.0]]])
    results = [tf.expand_dims(x, 0), tf.expand_dims(x, -1), tf.expand_dims(x, axis=2), tf.expand_dims(x, dim=1),
               tf.squeeze(x), tf.squeeze(x, [0]), tf.squeeze(x, axis=-1), tf.squeeze(x, squeeze_dims=[0, 2])]
    return shapes(*results), run(tf, results)


@program
def squeeze_of_unknown_dims(tf):
    x = tf.placeholder(tf.float32, [None, 1, None, 1])
    return shapes(tf.squeeze(x), tf.squeeze(x, [1]), tf.squeeze(x, [3, 1]), tf.expand_dims(x, 1))


@program
def squeeze_of_a_dim_not_1_is_a_value_error(tf):
    return tf.squeeze(tf.ones([1, 2]), [1])


@program
def tile_and_pad(tf):
    x = tf.constant([[1, 2], [3, 4]])
    results = [tf.tile(x, [2, 3]), tf.tile(x, tf.constant([1, 2])), tf.pad(x, [[1, 0], [0, 2]]),
               tf.pad(x, [[1, 1], [1, 1]], constant_values=9), tf.pad(x, [[1, 1], [1, 1]], "REFLECT"),
               tf.pad(x, [[0, 2], [2, 0]], mode="SYMMETRIC"), tf.pad(tf.constant([1.0, 2.0]), [[2, 1]])]
    return shapes(*results), run(tf, results)


@program
def pad_of_unknown_dims(tf):
    x = tf.placeholder(tf.float32, [None, 3])
    return shapes(tf.pad(x, [[1, 1], [2, 0]]), tf.tile(x, [2, 2]), tf.tile(x, tf.placeholder(tf.int32, [2])))


@program(differs="tfnb rejects while building what TF rejects when run (a ValueError, not an InvalidArgumentError)")
def reflect_pad_too_large_fails(tf):
    x = tf.placeholder(tf.float32, [2])
    return run(tf, tf.pad(x, [[2, 0]], "REFLECT"), {x: [1.0, 2.0]})


@program
def fill_zeros_ones_and_likes(tf):
    x = tf.constant([[1, 2, 3], [4, 5, 6]])
    results = [tf.fill([2, 2], 7), tf.fill([3], 0.5), tf.zeros([2, 3]), tf.ones([2], tf.int32), tf.zeros([]),
               tf.ones((2, 1), dtype=tf.bool), tf.zeros_like(x), tf.ones_like(x), tf.zeros_like(x, dtype=tf.float32),
               tf.ones_like(tf.constant([True])), tf.zeros(tf.constant([2])), tf.ones([0, 2]),
               tf.zeros([2], dtype=tf.string)]
    return [t.dtype.name for t in results], shapes(*results), run(tf, results)


@program
def fill_from_unknown_shapes(tf):
    x = tf.placeholder(tf.float32, [None, 4])
    n = tf.placeholder(tf.int32, [])
    results = [tf.zeros_like(x), tf.ones(tf.shape(x)), tf.fill(tf.shape(x), 2.0), tf.zeros([n, 2]),
               tf.ones([n]), tf.fill([n, 3], 1)]
    return shapes(*results), run(tf, results[3:], {n: 2})


@program
def range_forms(tf):
    results = [tf.range(5), tf.range(2, 8, 2), tf.range(5, 0, -1), tf.range(0.0, 1.0, 0.25),
               tf.range(3, dtype=tf.float32),
               tf.range(1, 2.5, 0.5), tf.range(tf.constant(4)), tf.range(0, 10, 3, dtype=tf.int64), tf.range(3, 3)]
    return [t.dtype.name for t in results], shapes(*results), run(tf, results)


@program
def range_of_unknown_limit(tf):
    n = tf.placeholder(tf.int32, [])
    return shapes(tf.range(n)), run(tf, tf.range(n), {n: 3})


@program
def shape_size_and_rank(tf):
    x = tf.placeholder(tf.float32, [None, 3])
    results = [tf.shape(x), tf.size(x), tf.rank(x), tf.shape(x, out_type=tf.int64), tf.shape(tf.constant(CUBE))[1:]]
    return shapes(*results), [t.dtype.name for t in results], run(tf, results, {x: X23})


@program
def shape_of_an_unknown_rank(tf):
    x = tf.placeholder(tf.float32)
    return shapes(tf.shape(x), tf.rank(x), tf.size(x)), run(tf, [tf.shape(x), tf.rank(x)], {x: CUBE})


@program
def reverse_forms(tf):
    x = tf.constant(CUBE)
    results = [tf.reverse(x, [0]), tf.reverse(x, [-1, 1]), tf.reverse_v2(x, [2]), tf.reverse(x, axis=[])]
    return run(tf, results)


@program
def one_hot_forms(tf):
    i = tf.constant([0, 2, -1, 1])
    results = [tf.one_hot(i, 3), tf.one_hot(i, 3, on_value=5, off_value=-1), tf.one_hot(i, 3, axis=0),
               tf.one_hot(i, 3, dtype=tf.int32), tf.one_hot(tf.constant([[0, 1], [2, 0]]), 3),
               tf.one_hot(i, 2, 1.0, 0.0), tf.one_hot(tf.constant([1], tf.int64), tf.constant(2)),
               tf.one_hot(i, 3, on_value=True, off_value=False)]
    return [t.dtype.name for t in results], shapes(*results), run(tf, results)


@program
def one_hot_of_unknown_indices(tf):
    i = tf.placeholder(tf.int32, [None])
    return shapes(tf.one_hot(i, 4), tf.one_hot(i, 4, axis=0)), run(tf, tf.one_hot(i, 4), {i: [3, 0]})


@program
def one_hot_of_mixed_on_off_dtypes_is_a_type_error(tf):
    return tf.one_hot([0, 1], 2, on_value=1.0, off_value=0)


@program
def identity_and_stop_gradient(tf):
    x = tf.constant([1.0, 2.0])
    return described(tf.identity(x), tf.identity(x, name="same"), tf.stop_gradient(x)), run(tf, tf.identity(x))


@program
def placeholder_with_default(tf):
    x = tf.placeholder_with_default(tf.constant([1.0, 2.0]), [None])
    y = x * 2
    with tf.Session() as sess:
        return shapes(x), sess.run(y), sess.run(y, {x: [5.0, 6.0, 7.0]})


# -- slicing ---------------------------------------------------------------------------------------


@program
def python_slicing(tf):
    x = tf.constant(CUBE)
    results = [x[0], x[-1], x[1:], x[:, 1], x[..., 2], x[:, ::2], x[::-1], x[:, :, ::-2], x[0, 1, 2], x[0, -1],
               x[1:, -2:, 1:3], x[tf.newaxis], x[:, None, 1], x[..., None], x[0, ..., 1], x[:, tf.newaxis, :, 0],
               x[-5:5], x[:, 1:1], x[1, :, tf.newaxis], x[..., ::-1, 1]]
    return shapes(*results), run(tf, results)


@program
def slicing_with_tensor_indices(tf):
    x = tf.constant(CUBE)
    i = tf.constant(1)
    n = tf.placeholder(tf.int32, [])
    results = [x[i], x[:, i], x[i:], x[:n], x[n, 1:], x[:, n:n + 2, i], x[tf.constant(-1)]]
    return shapes(*results), run(tf, results, {n: 1})


@program
def slicing_of_unknown_dims(tf):
    x = tf.placeholder(tf.float32, [None, 4, None])
    return shapes(x[0], x[:, 1:3], x[1:], x[..., 0], x[:, ::2, ::-1], x[:, -1], x[tf.newaxis, :2])


@program
def slicing_a_vector_by_a_tensor_and_python_step(tf):
    v = tf.constant([10, 20, 30, 40, 50])
    k = tf.constant(2)
    return run(tf, [v[k:], v[:-k], v[::k], v[k], v[-1], v[1::2], v[3:0:-1]])


@program
def index_out_of_range_is_a_value_error(tf):
    return tf.ones([2, 3])[5]


@program
def index_out_of_range_for_a_fed_shape_fails_at_run_time(tf):
    x = tf.placeholder(tf.float32, [None])
    return run(tf, x[3], {x: [1.0, 2.0]})


@program
def too_many_indices_is_a_value_error(tf):
    return tf.ones([2, 3])[0, 0, 0]


@program
def float_index_is_a_type_error(tf):
    return tf.ones([2, 3])[0.5]


@program
def slice_and_strided_slice(tf):
    x = tf.constant(CUBE)
    results = [tf.slice(x, [0, 1, 0], [1, 2, -1]), tf.slice(x, [1, 0, 2], [-1, -1, 2]),
               tf.strided_slice(x, [0, 0, 0], [2, 3, 4], [1, 2, 2]),
               tf.strided_slice(x, [1, 0], [2, 2], shrink_axis_mask=1),
               tf.strided_slice(x, [0, 1], [0, 3], begin_mask=1, end_mask=1)]
    return shapes(*results), run(tf, results)


@program
def gather_forms(tf):
    params = tf.constant([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    results = [tf.gather(params, [2, 0]), tf.gather(params, [[0, 1], [2, 2]]), tf.gather(params, 1),
               tf.gather(params, [0, 2], axis=1), tf.gather(params, tf.constant([1], tf.int64)),
               tf.gather(tf.constant(["a", "b"]), [1, 1, 0])]
    return shapes(*results), run(tf, results)


@program
def gather_out_of_range_fails_at_run_time(tf):
    return run(tf, tf.gather(tf.constant([1, 2, 3]), [5]))


@program
def gather_of_float_indices_is_a_type_error(tf):
    return tf.gather(tf.constant([1, 2]), tf.constant([0.0]))


# -- neural-network ops ----------------------------------------------------------------------------


LOGITS = [[2.0, 1.0, 0.1], [0.5, 2.5, -1.0]]


@program
def activations(tf):
    x = tf.constant([-3.0, -0.5, 0.0, 0.5, 7.0])
    return run(tf, [tf.nn.relu(x), tf.nn.relu6(x), tf.nn.elu(x), tf.nn.softplus(x), tf.nn.softsign(x),
                    tf.nn.leaky_relu(x), tf.nn.leaky_relu(x, alpha=0.1), tf.nn.sigmoid(x), tf.nn.tanh(x),
                    tf.nn.relu(tf.constant([-1, 2]))])


@program
def softmax_and_log_softmax(tf):
    x = tf.constant(LOGITS)
    results = [tf.nn.softmax(x), tf.nn.softmax(x, axis=0), tf.nn.softmax(x, dim=0), tf.nn.log_softmax(x),
               tf.nn.log_softmax(x, axis=0), tf.nn.softmax(tf.constant([1000.0, 0.0])),
               tf.nn.softmax(tf.constant(CUBE), axis=1)]
    return run(tf, results)


@program
def softmax_cross_entropies(tf):
    logits = tf.constant(LOGITS)
    labels = tf.constant([[0.0, 1.0, 0.0], [0.2, 0.3, 0.5]])
    sparse = tf.constant([1, 2])
    results = [tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits),
               tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits),
               tf.nn.sparse_softmax_cross_entropy_with_logits(labels=sparse, logits=logits),
               tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.cast(sparse, tf.int64), logits=logits),
               tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, axis=0)]
    return shapes(*results), run(tf, results)


@program
def sigmoid_cross_entropy(tf):
    logits = tf.constant([[-2.0, 0.0, 3.0], [100.0, -100.0, 1.0]])
    labels = tf.constant([[0.0, 1.0, 1.0], [1.0, 0.0, 0.5]])
    return run(tf, tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits))


@program(differs="TF 1.x's _sentinel argument rejects positional labels and logits, as tfnb does; TF 2's compat.v1 "
                 "accepts them")
def positional_cross_entropy_arguments_are_a_value_error(tf):
    return tf.nn.softmax_cross_entropy_with_logits(tf.ones([2, 3]), tf.ones([2, 3]))


@program
def sparse_cross_entropy_label_out_of_range_fails(tf):
    labels = tf.placeholder(tf.int32, [2])
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=tf.constant(LOGITS))
    return run(tf, loss, {labels: [0, 3]})


@program
def sparse_cross_entropy_with_dense_labels_is_a_value_error(tf):
    return tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant([[0, 1]]), logits=tf.ones([1, 2]))


@program
def cross_entropy_shapes_must_agree(tf):
    return tf.nn.softmax_cross_entropy_with_logits_v2(labels=tf.ones([2, 4]), logits=tf.ones([2, 3]))


@program
def cross_entropy_of_unknown_batch(tf):
    logits = tf.placeholder(tf.float32, [None, 3])
    labels = tf.placeholder(tf.int64, [None])
    return shapes(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits),
                  tf.nn.softmax_cross_entropy_with_logits_v2(labels=tf.one_hot(labels, 3), logits=logits),
                  tf.nn.softmax(logits))


@program
def bias_add(tf):
    x = tf.constant(CUBE.reshape(1, 2, 3, 4))
    results = [tf.nn.bias_add(x, tf.constant([1.0, 2.0, 3.0, 4.0])),
               tf.nn.bias_add(x, tf.constant([10.0, 20.0]), data_format="NCHW"),
               tf.nn.bias_add(tf.constant(X23), [1.0, 0.0, -1.0])]
    return shapes(*results), run(tf, results)


@program
def bias_add_of_a_wrong_size_is_a_value_error(tf):
    return tf.nn.bias_add(tf.ones([2, 3]), tf.ones([2]))


@program
def dropout_keeping_everything_is_identity(tf):
    x = tf.constant(X23)
    keep = tf.placeholder_with_default(1.0, [])
    return run(tf, [tf.nn.dropout(x, keep_prob=1.0), tf.nn.dropout(x, keep), tf.nn.dropout(x, rate=0.0)])


@program
def dropout_scales_what_it_keeps(tf):
    x = tf.ones([100, 100])
    y = tf.nn.dropout(x, keep_prob=0.5, seed=1)
    kept = tf.reduce_mean(tf.cast(y > 0, tf.float32))
    values = run(tf, [tf.reduce_max(y), tf.round(kept * 10)])
    return shapes(y), values


@program
def dropout_keep_prob_out_of_range_is_a_value_error(tf):
    return tf.nn.dropout(tf.ones([2]), keep_prob=1.5)


@program
def moments(tf):
    x = tf.constant([[1.0, 2.0], [3.0, 6.0], [5.0, 10.0]])
    mean, variance = tf.nn.moments(x, [0])
    mean_all, variance_all = tf.nn.moments(x, axes=[0, 1])
    kept = tf.nn.moments(x, [1], keep_dims=True)
    return shapes(mean, mean_all, *kept), run(tf, [mean, variance, mean_all, variance_all, kept])


@program
def batch_normalization(tf):
    x = tf.constant(CUBE.reshape(2, 1, 3, 4))
    mean, variance = tf.nn.moments(x, [0, 1, 2])
    y = tf.nn.batch_normalization(x, mean, variance, offset=tf.zeros([4]), scale=tf.ones([4]), variance_epsilon=1e-3)
    plain = tf.nn.batch_normalization(x, mean, variance, None, None, 1e-3)
    fused = tf.nn.fused_batch_norm(x, tf.ones([4]), tf.zeros([4]), epsilon=1e-3)
    return shapes(y, *fused), run(tf, [y, plain, fused[0], fused[1]])


@program
def fused_batch_norm_inference(tf):
    x = tf.constant(CUBE.reshape(2, 1, 3, 4))
    y, _, _ = tf.nn.fused_batch_norm(x, tf.ones([4]) * 2, tf.ones([4]), mean=tf.fill([4], 10.0),
                                     variance=tf.fill([4], 4.0), epsilon=0.0, is_training=False)
    return run(tf, y)


@program
def l2_loss_and_l2_normalize(tf):
    x = tf.constant([[3.0, 4.0], [0.0, 0.0]])
    return run(tf, [tf.nn.l2_loss(x), tf.nn.l2_normalize(x, 1), tf.nn.l2_normalize(x, axis=0),
                    tf.nn.l2_normalize(x, dim=1), tf.nn.l2_normalize(x)])


@program
def local_response_normalization(tf):
    x = tf.constant(CUBE.reshape(1, 2, 3, 4) / 10.0)
    return run(tf, [tf.nn.lrn(x, depth_radius=1, bias=1.0, alpha=0.5, beta=0.75),
                    tf.nn.local_response_normalization(x)])


@program
def embedding_lookup(tf):
    params = tf.constant(np.arange(12, dtype=np.float32).reshape(6, 2))
    shards = [tf.constant([[0.0], [3.0]]), tf.constant([[1.0], [4.0]]), tf.constant([[2.0], [5.0]])]
    div_shards = [tf.constant([[0.0], [1.0]]), tf.constant([[2.0], [3.0]]), tf.constant([[4.0], [5.0]])]
    ids = tf.constant([[5, 0], [3, 3]])
    results = [tf.nn.embedding_lookup(params, ids), tf.nn.embedding_lookup(shards, [4, 0, 5]),
               tf.nn.embedding_lookup(div_shards, [4, 0, 5], partition_strategy="div"),
               tf.nn.embedding_lookup(params, [1, 2], max_norm=1.0)]
    return shapes(*results), run(tf, results)


@program
def segment_sums(tf):
    data = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]])
    results = [tf.unsorted_segment_sum(data, [2, 0, 2, -1], 3), tf.unsorted_segment_sum(data, [1, 1, 0, 0], 4),
               tf.math.unsorted_segment_sum(tf.constant([1, 2, 3]), tf.constant([0, 0, 1]), 2),
               tf.segment_sum(data, [0, 0, 1, 1]), tf.segment_sum(data, [0, 2, 2, 3])]
    return shapes(*results[:3]), run(tf, results)


@program(differs="tfnb counts the segments of constant ids while building; TF leaves that dim unknown")
def segment_sum_of_constant_ids_has_a_known_size(tf):
    return shapes(tf.segment_sum(tf.ones([4, 2]), [0, 0, 1, 1]))


@program
def segment_ids_out_of_range_fail(tf):
    ids = tf.placeholder(tf.int32, [2])
    return run(tf, tf.unsorted_segment_sum(tf.ones([2]), ids, 2), {ids: [0, 5]})


@program
def math_namespace_aliases(tf):
    x = tf.constant([[1.0, 4.0], [9.0, 16.0]])
    return run(tf, [tf.math.sqrt(x), tf.math.reduce_sum(x, 1), tf.math.argmax(x, 1), tf.math.log(x),
                    tf.math.maximum(x, 5.0), tf.math.divide(x, 2.0), tf.math.floormod(x, 5.0), tf.math.cumsum(x)])


# -- random ops ------------------------------------------------------------------------------------


@program
def random_ops_have_shapes_dtypes_and_ranges(tf):
    tf.set_random_seed(7)
    results = [tf.random_normal([400, 50], mean=2.0, stddev=0.5), tf.random_uniform([400, 50], 3.0, 5.0),
               tf.truncated_normal([400, 50]), tf.random_uniform([10], 0, 5, dtype=tf.int32),
               tf.random_normal([2], dtype=tf.float64)]
    n, u, t, i, d = run(tf, results)
    return (shapes(*results), [r.dtype.name for r in results], np.round(n.mean(), 1), np.round(n.std(), 1),
            bool(u.min() >= 3.0 and u.max() < 5.0), bool(np.abs(t).max() <= 2.0), bool(i.min() >= 0 and i.max() < 5),
            d.dtype)


@program
def seeded_random_ops_repeat_across_sessions(tf):
    x = tf.random_uniform([3], seed=4)
    tf.set_random_seed(1)
    y = tf.random_normal([3])
    return [bool(np.array_equal(run(tf, x), run(tf, x))), bool(np.array_equal(run(tf, y), run(tf, y)))]


@program
def random_ops_draw_anew_each_run(tf):
    tf.set_random_seed(3)
    x = tf.random_uniform([5])
    with tf.Session() as sess:
        return bool(np.array_equal(sess.run(x), sess.run(x)))


@program
def random_uniform_of_ints_needs_maxval(tf):
    return tf.random_uniform([2], dtype=tf.int32)


@program
def random_shape_from_a_placeholder(tf):
    n = tf.placeholder(tf.int32, [])
    x = tf.random_normal([n, 3])
    return shapes(x), run(tf, tf.shape(x), {n: 4})


# -- variables -------------------------------------------------------------------------------------


@program
def variable_basics(tf):
    v = tf.Variable([1.0, 2.0])
    w = tf.Variable(3, name="w")
    u = tf.Variable(tf.zeros([2, 3]), dtype=tf.float32)
    d = tf.Variable([1, 2], dtype=tf.float64)
    return ([v.name, w.name, u.name, d.name, v.dtype.base_dtype.name, w.dtype.base_dtype.name,
             d.dtype.base_dtype.name, v.shape.as_list(),
             u.get_shape().as_list(), v.op.name, [x.name for x in tf.global_variables()]],
            run(tf, [v, w, u, d, v * 2, w + 1, v[1]], init=True))


@program
def variable_assignments(tf):
    v = tf.Variable([1.0, 2.0])
    with tf.Session() as sess:
        sess.run(v.initializer)
        values = [sess.run(v.assign([5.0, 6.0])), sess.run(tf.assign_add(v, [1.0, 1.0])),
                  sess.run(v.assign_sub([0.5, 0.5])), sess.run(tf.assign(v, [0.0, 1.0])), sess.run(v.assign_add(v * 2))]
        sess.run(v.assign([9.0, 9.0]).op)
        values.append(sess.run(v))
        return values + [v.eval(session=sess), sess.run(v.read_value()), sess.run(v.value())]


@program
def control_dependencies_order_assigns(tf):
    v = tf.Variable(0)
    first = tf.assign(v, 10)
    with tf.control_dependencies([first]):
        second = tf.assign_add(v, 5)
    with tf.control_dependencies([second]):
        read = tf.identity(v)
        doubled = v * 2
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(read), sess.run(doubled), sess.run(v)


@program
def control_dependencies_on_a_tensor_and_group(tf):
    v = tf.Variable(1.0)
    w = tf.Variable(2.0)
    step = tf.group(tf.assign(v, 3.0), tf.assign(w, 4.0))
    with tf.control_dependencies([step]):
        total = tf.identity(v + w)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(total), sess.run(step), sess.run([v, w])


@program
def variables_keep_values_across_runs_but_not_sessions(tf):
    counter = tf.Variable(0)
    increment = tf.assign_add(counter, 1)
    values = []
    for _ in range(2):
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            values.append([sess.run(increment) for _ in range(3)])
    return values


@program(differs="tfnb's variables are resource variables: the dtype is float32, not TF1's float32_ref")
def variable_dtype_is_a_reference_dtype(tf):
    return tf.Variable(1.0).dtype.name


@program
def reading_an_uninitialized_variable_fails(tf):
    v = tf.Variable([1.0])
    return run(tf, v * 2)


@program
def report_uninitialized_variables(tf):
    a = tf.Variable(1.0, name="a")
    tf.Variable(2.0, name="b")
    with tf.Session() as sess:
        before = sess.run(tf.report_uninitialized_variables())
        sess.run(tf.variables_initializer([a]))
        after = sess.run(tf.report_uninitialized_variables())
        return before, after, sess.run(tf.is_variable_initialized(a))


@program
def variable_initialized_from_another(tf):
    a = tf.Variable([1.0, 2.0])
    b = tf.Variable(a.initialized_value() * 3)
    c = tf.Variable(a.initial_value + 1)
    return run(tf, [b, c], init=True)


@program
def trainable_and_collections(tf):
    tf.Variable(1.0, name="w")
    tf.Variable(2.0, name="step", trainable=False)
    tf.Variable(3.0, name="local", collections=[tf.GraphKeys.LOCAL_VARIABLES])
    return ([v.name for v in tf.global_variables()], [v.name for v in tf.trainable_variables()],
            [v.name for v in tf.local_variables()],
            [v.name for v in tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES)])


@program
def assign_of_a_wrong_shape_is_a_value_error(tf):
    v = tf.Variable([1.0, 2.0])
    return tf.assign(v, [1.0, 2.0, 3.0])


@program(differs="tfnb's variables are resource variables, which raise ValueError here (TF1's reference "
                 "variables raise TypeError)")
def assign_of_a_wrong_dtype_is_a_type_error(tf):
    v = tf.Variable([1.0, 2.0])
    return v.assign(tf.constant([1, 2]))


@program
def variable_without_initial_value_is_a_value_error(tf):
    return tf.Variable()


@program
def get_variable_with_initializers(tf):
    a = tf.get_variable("a", [2, 3], initializer=tf.zeros_initializer())
    b = tf.get_variable("b", [2], initializer=tf.constant_initializer(1.5))
    c = tf.get_variable("c", initializer=tf.constant([1, 2]))
    d = tf.get_variable("d", [2, 2], dtype=tf.int32, initializer=tf.ones_initializer())
    e = tf.get_variable("e", [3], initializer=tf.constant_initializer([1.0, 2.0, 3.0]))
    f = tf.get_variable("f", [2], tf.float64, tf.constant_initializer(2))
    g = tf.get_variable("g", [2, 2], initializer=tf.constant_initializer([[1, 2], [3, 4]]))
    variables = [a, b, c, d, e, f, g]
    return [(v.name, v.dtype.base_dtype.name, v.shape.as_list()) for v in variables], run(tf, variables, init=True)


@program
def get_variable_random_initializers_have_shapes(tf):
    tf.set_random_seed(0)
    variables = [tf.get_variable("default", [20, 30]),
                 tf.get_variable("n", [5], initializer=tf.random_normal_initializer()),
                 tf.get_variable("u", [5], initializer=tf.random_uniform_initializer(-1, 1)),
                 tf.get_variable("t", [5], initializer=tf.truncated_normal_initializer(stddev=0.1)),
                 tf.get_variable("x", [4, 4], initializer=tf.glorot_uniform_initializer()),
                 tf.get_variable("v", [4, 4], initializer=tf.variance_scaling_initializer())]
    values = run(tf, variables, init=True)
    limit = np.sqrt(6.0 / 50)
    return [v.shape.as_list() for v in variables], bool(np.abs(values[0]).max() <= limit), bool(values[0].std() > 0)


@program
def variable_scopes_name_variables(tf):
    with tf.variable_scope("layer1"):
        w1 = tf.get_variable("w", [1])
        with tf.variable_scope("inner"):
            w2 = tf.get_variable("w", [1])
        op1 = tf.add(w1, 1.0)
    with tf.variable_scope("layer1", reuse=True):
        same = tf.get_variable("w", [1])
        op2 = tf.add(same, 1.0)
    with tf.name_scope("ns"):
        w3 = tf.get_variable("w3", [1])
        v4 = tf.Variable(1.0, name="v4")
    return [w1.name, w2.name, same is w1, op1.name, op2.name, w3.name, v4.name]


@program
def get_variable_twice_without_reuse_is_a_value_error(tf):
    tf.get_variable("w", [1])
    return tf.get_variable("w", [1])


@program
def get_variable_reuse_of_a_missing_variable_is_a_value_error(tf):
    with tf.variable_scope("s", reuse=True):
        return tf.get_variable("missing", [1])


@program
def get_variable_reuse_with_another_shape_is_a_value_error(tf):
    with tf.variable_scope("s"):
        tf.get_variable("w", [1])
    with tf.variable_scope("s", reuse=True):
        return tf.get_variable("w", [2])


@program
def get_variable_without_a_shape_is_a_value_error(tf):
    return tf.get_variable("w")


@program
def auto_reuse_and_reuse_variables(tf):
    def layer():
        with tf.variable_scope("dense", reuse=tf.AUTO_REUSE):
            return tf.get_variable("kernel", [2], initializer=tf.ones_initializer())
    first, second = layer(), layer()
    with tf.variable_scope("model") as scope:
        a = tf.get_variable("a", [1])
        scope.reuse_variables()
        b = tf.get_variable("a", [1])
    return [first is second, first.name, a is b, scope.name, len(tf.global_variables())]


@program
def variable_scope_default_names_and_reentry(tf):
    with tf.variable_scope(None, default_name="block"):
        a = tf.get_variable("v", [1])
    with tf.variable_scope(None, default_name="block"):
        b = tf.get_variable("v", [1])
        c = tf.constant(1.0, name="c")
    with tf.variable_scope("outer") as outer:
        pass
    with tf.variable_scope(outer):
        d = tf.get_variable("d", [1])
        e = tf.constant(2.0, name="e")
    return [a.name, b.name, c.name, d.name, e.name, tf.get_variable_scope().name]


@program
def variable_scope_initializer_and_dtype_defaults(tf):
    with tf.variable_scope("s", initializer=tf.constant_initializer(4.0)):
        a = tf.get_variable("a", [2])
        with tf.variable_scope("t", dtype=tf.float64):
            b = tf.get_variable("b", [1])
    return [b.dtype.base_dtype.name], run(tf, [a, b], init=True)


@program
def regularizer_losses(tf):
    with tf.variable_scope("s", regularizer=lambda w: tf.reduce_sum(w) * 0.5):
        tf.get_variable("w", [2], initializer=tf.constant_initializer(3.0))
    losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    return len(losses), run(tf, losses, init=True)


@program
def variable_slicing_and_operators(tf):
    v = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    return run(tf, [v[0], v[:, 1], -v, v @ v, v + v, tf.reduce_sum(v), tf.matmul(v, [[1.0], [1.0]]), 2.0 - v],
               init=True)


# -- names -----------------------------------------------------------------------------------------


@program
def operator_op_names(tf):
    x, y = tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])
    m = tf.constant([[1.0]])
    results = [x + y, x - y, x * y, x / y, x // y, x % y, x ** y, -x, abs(x), m @ m, x < y, x <= y, x > y,
               x >= y, 1.0 + x, 2.0 * x, x[0], x[1:], (x < y) & (x > y), (x < y) | (x > y), ~(x < y),
               (x < y) ^ (x > y)]
    return [t.name for t in results]


@program
def function_op_names(tf):
    x = tf.constant([[1.0, 2.0]])
    i = tf.constant([1, 0])
    results = [tf.add(x, x), tf.multiply(x, x), tf.subtract(x, x), tf.divide(x, x), tf.matmul(x, x, transpose_b=True),
               tf.nn.relu(x), tf.nn.softmax(x), tf.sigmoid(x), tf.tanh(x), tf.reduce_sum(x), tf.reduce_mean(x),
               tf.reduce_max(x, 1), tf.argmax(x, 1), tf.reshape(x, [-1]), tf.transpose(x), tf.concat([x, x], 0),
               tf.stack([x, x]), tf.expand_dims(x, 0), tf.squeeze(x), tf.cast(x, tf.int32), tf.ones([2]),
               tf.zeros([2]), tf.fill([2], 1.0), tf.zeros_like(x), tf.ones_like(x), tf.gather(x, [0]),
               tf.one_hot(i, 2), tf.shape(x), tf.size(x), tf.rank(x), tf.range(3), tf.identity(x), tf.tile(x, [1, 2]),
               tf.pad(x, [[0, 0], [1, 1]]), tf.nn.l2_loss(x), tf.nn.bias_add(x, [1.0, 2.0]), tf.square(x),
               tf.clip_by_value(x, 0.0, 1.0), tf.where(x > 1.0), tf.maximum(x, x), tf.exp(x), tf.add_n([x, x]),
               tf.nn.log_softmax(x)]
    return [t.name for t in results]


@program
def composite_op_names(tf):
    logits, labels = tf.constant([[1.0, 2.0]]), tf.constant([[0.0, 1.0]])
    results = [tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant([1]), logits=logits),
               tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant([1]), logits=logits, name="loss"),
               tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits),
               *tf.nn.moments(logits, [0]), tf.nn.l2_normalize(logits, 1), tf.unstack(logits)[0],
               tf.split(logits, 2, 1)[1], tf.nn.embedding_lookup(logits, [0]), tf.reduce_logsumexp(logits),
               tf.nn.dropout(logits, keep_prob=1.0)]
    return [t.name for t in results]


@program(differs="tfnb's softmax cross-entropy is one op named for the function; TF's result is the last of "
                 "several ops ('softmax_cross_entropy_with_logits/Reshape_2')")
def softmax_cross_entropy_op_name(tf):
    return tf.nn.softmax_cross_entropy_with_logits_v2(labels=tf.ones([1, 2]), logits=tf.ones([1, 2])).name


@program
def explicit_names_are_made_unique(tf):
    a = tf.constant(1.0, name="c")
    b = tf.constant(2.0, name="c")
    c = tf.add(a, b, name="c")
    d = tf.constant(3.0, name="c_1")
    e = tf.identity(a, name="C")
    return [t.name for t in (a, b, c, d, e, tf.constant(0.0), tf.constant(0.0), tf.placeholder(tf.float32),
                             tf.placeholder(tf.float32, name="x"), tf.Variable(0.0), tf.Variable(0.0))]


@program
def name_scopes(tf):
    with tf.name_scope("outer"):
        a = tf.constant(1.0, name="a")
        with tf.name_scope("inner"):
            b = tf.constant(1.0, name="b")
        with tf.name_scope("inner"):
            c = tf.constant(1.0, name="b")
        with tf.name_scope("inner/"):
            pass
    with tf.name_scope("outer") as scope:
        d = tf.add(a, b)
    with tf.name_scope(scope):
        e = tf.constant(1.0, name="e")
    with tf.name_scope(None, "default", [a]) as default_scope:
        f = tf.constant(1.0)
    with tf.name_scope("outer/inner/"):
        g = tf.constant(1.0, name="g")
    with tf.name_scope(""):
        h = tf.constant(1.0, name="h")
    return [a.name, b.name, c.name, d.name, scope, e.name, default_scope, f.name, g.name, h.name,
            tf.get_default_graph().get_name_scope()]


@program
def variable_names_in_name_scopes(tf):
    with tf.name_scope("ns"):
        v = tf.Variable(1.0)
        w = tf.Variable(1.0, name="w")
        x = v + 1.0
    return [v.name, w.name, v.op.name, x.name]


@program
def invalid_op_name_is_a_value_error(tf):
    return tf.constant(1.0, name="bad name!")


@program
def graph_lookups(tf):
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.multiply(x, 2.0, name="y")
    graph = tf.get_default_graph()
    same = graph.get_tensor_by_name("y:0") is y and graph.get_operation_by_name("y") is y.op
    return same, y.op.inputs[0] is x, y.op.type, run(tf, "y:0", {"x:0": [1.0, 2.0]})


@program(differs="TF's generated op functions convert Python inputs inside a scope named for the op ('y/y'); "
                 "tfnb names the constant 'Const'")
def python_operands_become_constants_named_for_the_op(tf):
    return tf.multiply(tf.constant(1.0), 3.0, name="y").op.inputs[1].name


@program
def looking_up_a_missing_tensor_is_a_key_error(tf):
    return tf.get_default_graph().get_tensor_by_name("nothing:0")


@program
def looking_up_an_op_by_a_tensor_name_is_a_value_error(tf):
    tf.constant(1.0, name="c")
    return tf.get_default_graph().get_operation_by_name("c:0")


# -- gradients -------------------------------------------------------------------------------------


def gradient_values(tf, ys, xs, feed_dict=None, init: bool = False, **options):
    """tf.gradients(ys, xs, **options), run as dense values (None where no gradient flows)."""
    grads = [None if g is None else tf.convert_to_tensor(g) for g in tf.gradients(ys, xs, **options)]
    present = [g for g in grads if g is not None]
    values = iter(run(tf, present, feed_dict, init))
    return [None if g is None else next(values) for g in grads]


@program
def gradient_of_a_polynomial(tf):
    x = tf.constant([1.0, -2.0, 3.0])
    y = tf.reduce_sum(3 * x ** 2 - 2 * x + 1)
    return gradient_values(tf, y, x) + gradient_values(tf, [y, tf.reduce_sum(x)], [x])


@program
def gradient_of_a_dense_layer_loss(tf):
    x = tf.constant(X23)
    w = tf.constant([[0.1, -0.2], [0.3, 0.4], [-0.5, 0.6]])
    b = tf.constant([0.1, -0.1])
    labels = tf.constant([0, 1])
    logits = tf.matmul(tf.nn.relu(x - 2.0), w) + b
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    return gradient_values(tf, loss, [x, w, b])


@program
def gradients_of_broadcasting_ops(tf):
    x = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    r = tf.constant([1.0, 2.0, 3.0])
    c = tf.constant([[2.0], [3.0]])
    s = tf.constant(2.0)
    y = tf.reduce_sum((x + r) * c / s - tf.maximum(x, r) + tf.squared_difference(x, c) - tf.pow(x, s))
    return gradient_values(tf, y, [x, r, c, s])


@program
def gradients_of_unary_math(tf):
    x = tf.constant([0.5, 1.0, 2.0])
    ys = [tf.exp(x), tf.log(x), tf.sqrt(x), tf.rsqrt(x), tf.tanh(x), tf.sigmoid(x), tf.sin(x), tf.cos(x),
          tf.abs(x - 1.0), tf.square(x), tf.reciprocal(x), tf.log1p(x), tf.nn.softplus(x), tf.nn.elu(x - 1.0),
          tf.nn.relu6(x * 4.0), tf.nn.leaky_relu(x - 1.0), tf.nn.softsign(x)]
    return [gradient_values(tf, y, x)[0] for y in ys]


@program
def gradients_of_reductions(tf):
    x = tf.constant([[1.0, 3.0, 3.0], [2.0, -1.0, 0.5]])
    ys = [tf.reduce_sum(x, 1), tf.reduce_mean(x), tf.reduce_max(x, 1), tf.reduce_min(x), tf.reduce_prod(x, 0),
          tf.reduce_logsumexp(x, 1), tf.reduce_mean(x, 0, keepdims=True), tf.cumsum(x, 1), tf.cumprod(x, 1)]
    return [gradient_values(tf, y, x)[0] for y in ys]


@program
def gradients_of_layout_ops(tf):
    x = tf.constant(CUBE[0])
    ys = [tf.reshape(x, [4, 3]), tf.transpose(x), tf.concat([x, 2 * x], 1), tf.split(x, 2, 1)[1], x[1:, ::-2],
          tf.tile(x, [2, 1]), tf.pad(x, [[1, 0], [0, 2]]), tf.gather(x, [2, 0, 2]), tf.stack([x, x], 1),
          tf.expand_dims(x, 0), tf.reverse(x, [1]), tf.slice(x, [1, 1], [2, 2]), tf.unstack(x)[1]]
    return [gradient_values(tf, tf.reduce_sum(y * y), x)[0] for y in ys]


@program
def gradients_of_nn_ops(tf):
    x = tf.constant(LOGITS)
    labels = tf.constant([[0.0, 1.0, 0.0], [0.2, 0.3, 0.5]])
    weights = tf.constant([[1.0, -1.0, 2.0], [0.5, 0.0, 3.0]])
    ys = [tf.nn.softmax(x), tf.nn.log_softmax(x), tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=x),
          tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=x), tf.nn.l2_loss(x),
          tf.nn.l2_normalize(x, 1), tf.nn.bias_add(x, [1.0, 2.0, 3.0])]
    return [gradient_values(tf, tf.reduce_sum(y * weights), x)[0] for y in ys]


@program
def gradient_of_cross_entropy_wrt_labels(tf):
    x = tf.constant(LOGITS)
    labels = tf.constant([[0.0, 1.0, 0.0], [0.2, 0.3, 0.5]])
    loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=x)
    old = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=x)
    return gradient_values(tf, loss, labels) + gradient_values(tf, old, labels)


@program
def gradient_of_moments_and_batch_norm(tf):
    x = tf.constant([[1.0, 2.0], [3.0, 6.0], [5.0, 11.0]])
    mean, variance = tf.nn.moments(x, [0])
    y = tf.nn.batch_normalization(x, mean, variance, tf.constant([0.5, 0.0]), tf.constant([1.0, 2.0]), 1e-3)
    return gradient_values(tf, tf.reduce_sum(y * tf.constant([[1.0, 0.0], [2.0, 1.0], [0.0, 3.0]])), x)


@program
def gradient_with_grad_ys(tf):
    x = tf.constant([1.0, 2.0])
    y = x * x
    return gradient_values(tf, y, x, grad_ys=tf.constant([10.0, -1.0]))


@program
def gradient_of_an_unconnected_tensor_is_none(tf):
    x, z = tf.constant(1.0), tf.constant(2.0)
    return gradient_values(tf, x * 3.0, [x, z])


@program
def stop_gradient_and_stop_gradients(tf):
    x = tf.constant(3.0)
    a = x * x
    y = a + tf.stop_gradient(x) * x
    return gradient_values(tf, y, x) + gradient_values(tf, y, x, stop_gradients=[a])


@program
def gradient_wrt_a_stopped_tensor(tf):
    x = tf.constant(3.0)
    a = x * x
    return gradient_values(tf, a + x, [x, a], stop_gradients=[a])


@program
def gradient_through_where_and_integer_paths(tf):
    x = tf.constant([-1.0, 2.0, -3.0])
    y = tf.where(x > 0, x * x, -x) + tf.cast(tf.cast(x, tf.int32), tf.float32)
    return gradient_values(tf, tf.reduce_sum(y), x)


@program
def gradient_of_a_gather_is_sparse(tf):
    params = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    y = tf.reduce_sum(tf.gather(params, [2, 0, 2]) * tf.constant([[1.0], [2.0], [3.0]]))
    grad = tf.gradients(y, params)[0]
    return type(grad).__name__, run(tf, tf.convert_to_tensor(grad))


@program
def gradient_of_embedding_lookup_and_segment_sum(tf):
    params = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    data = tf.constant([1.0, 2.0, 3.0])
    y = tf.reduce_sum(tf.nn.embedding_lookup(params, [[1, 1], [0, 2]]) ** 2)
    z = tf.reduce_sum(tf.unsorted_segment_sum(data, [1, 0, 1], 2) * tf.constant([3.0, 4.0]))
    return (run(tf, tf.convert_to_tensor(tf.gradients(y, params)[0])), gradient_values(tf, z, data))


@program
def gradient_wrt_variables(tf):
    w = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    b = tf.get_variable("b", initializer=tf.constant([0.5, -0.5]))
    loss = tf.reduce_sum(tf.square(tf.matmul(tf.constant([[1.0, 1.0]]), w) + b)) + tf.reduce_sum(w)
    return gradient_values(tf, loss, [w, b], init=True)


@program
def gradient_of_an_int_tensor_is_none(tf):
    x = tf.constant([1.0, 2.0])
    n = tf.constant(3)
    return gradient_values(tf, x * tf.cast(n, tf.float32), [n])


@program
def gradient_through_cond(tf):
    x = tf.constant(2.0)
    p = tf.placeholder(tf.bool, [])
    y = tf.cond(p, lambda: x * x, lambda: x * 3.0)
    grad = tf.gradients(y, x)[0]
    return run(tf, grad, {p: True}), run(tf, grad, {p: False})


@program
def second_order_gradient(tf):
    x = tf.constant([1.0, 2.0])
    y = tf.reduce_sum(x ** 3)
    g = tf.gradients(y, x)[0]
    return run(tf, tf.gradients(g, x, grad_ys=tf.ones([2]))[0])


# -- placeholders, feeds and fetches ---------------------------------------------------------------


@program
def placeholders_with_partial_shapes(tf):
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.placeholder(tf.int32, shape=[2, None])
    z = tf.placeholder(tf.float32)
    s = tf.placeholder(tf.float32, [])
    return (described(x, y, z, s), x.shape[0].value, z.shape.ndims,
            run(tf, [x * 2, y + 1, z + 0.0, s * 1.0], {x: X23, y: [[1], [2]], z: 5.0, s: 1.5}))


@program(differs="TF returns a fetched feed as the 0-d array it was fed; tfnb returns a NumPy scalar")
def fetching_a_fed_scalar(tf):
    x = tf.placeholder(tf.float32, [])
    return run(tf, x, {x: 5.0})


@program
def feeding_converts_lists_and_numpy(tf):
    x = tf.placeholder(tf.float32, [None])
    i = tf.placeholder(tf.int64, [2])
    b = tf.placeholder(tf.bool, [])
    s = tf.placeholder(tf.string, [None])
    feed = {x: [1, 2], i: np.array([3, 4], np.int32), b: True, s: ["a", b"b"]}
    return run(tf, [x, i, tf.logical_not(b), tf.identity(s)], feed)


@program
def feeding_a_wrong_shape_is_a_value_error(tf):
    x = tf.placeholder(tf.float32, [None, 3])
    return run(tf, x, {x: [1.0, 2.0, 3.0]})


@program
def not_feeding_a_placeholder_fails_at_run_time(tf):
    x = tf.placeholder(tf.float32, [2])
    return run(tf, x + 1.0)


@program(differs="tfnb refuses a lossy feed (floats for an int32 placeholder); TF truncates them")
def feeding_a_float_to_an_int_placeholder(tf):
    x = tf.placeholder(tf.int32, [2])
    return run(tf, x, {x: [1.5, 2.0]})


@program
def feeding_a_string_to_a_float_placeholder_is_a_value_error(tf):
    x = tf.placeholder(tf.float32, [1])
    return run(tf, x, {x: ["a"]})


@program
def feeding_any_tensor_cuts_the_graph(tf):
    a = tf.placeholder(tf.float32, [])
    b = a * 2.0
    c = b + 1.0
    return run(tf, [c, b * 3.0], {b: 10.0})


@program(differs="tfnb's resource variables read anew at each use, so a fed variable is not what `v + 1` reads")
def feeding_a_variable(tf):
    v = tf.Variable(5.0)
    return run(tf, v + 1.0, {v: 2.0})


@program
def feeding_by_name_and_fetching_by_name(tf):
    x = tf.placeholder(tf.float32, [2], name="input")
    tf.multiply(x, 3.0, name="output")
    return run(tf, ["output:0", "input:0"], {"input:0": [1.0, 2.0]})


@program
def fetch_structures(tf):
    a, b = tf.constant(1.0), tf.constant([2, 3])
    Pair = collections.namedtuple("Pair", ["first", "second"])
    with tf.Session() as sess:
        return (sess.run({"a": a, "nested": [a, (b, {"b": b})]}), sess.run((a, b)), sess.run([a]), sess.run(a),
                sess.run([a, a, b]), sess.run([]), tuple(sess.run(Pair(a, b))), type(sess.run(Pair(a, b))).__name__,
                sess.run(collections.OrderedDict([("z", a), ("y", b)])))


@program
def fetching_an_op_gives_none(tf):
    v = tf.Variable(1.0)
    with tf.Session() as sess:
        return sess.run(v.initializer), sess.run([tf.no_op(), v]), sess.run(tf.group(v.initializer)), \
            sess.run(tf.global_variables_initializer())


@program
def fetching_a_variable_gives_its_value(tf):
    v = tf.Variable([[1, 2]])
    return run(tf, {"v": v, "list": [v]}, init=True)


@program
def fetching_a_missing_name_is_a_value_error(tf):
    tf.constant(1.0, name="something")
    return run(tf, "nothing:0")


@program
def fetching_a_missing_operation_name_is_a_value_error(tf):
    tf.constant(1.0, name="something")
    return run(tf, "nothing")


@program
def fetching_a_bad_output_index_is_a_value_error(tf):
    tf.constant(1.0, name="x")
    return run(tf, "x:5")


@program
def fetching_a_malformed_tensor_name_is_a_value_error(tf):
    tf.constant(1.0, name="x")
    return run(tf, "x:first")


@program
def fetching_a_missing_name_inside_a_structure_is_a_value_error(tf):
    x = tf.constant(1.0, name="x")
    return run(tf, {"a": [x, ("x:0", "nothing:0")]})


@program
def fetching_a_number_is_a_type_error(tf):
    tf.constant(1.0)
    return run(tf, [3])


@program
def fetching_names_as_bytes(tf):
    tf.constant(1.0, name="x")
    return run(tf, [b"x:0", b"x"])


@program
def fetching_none_is_a_type_error(tf):
    tf.constant(1.0)
    return run(tf, None)


@program
def eval_and_run_with_a_default_session(tf):
    x = tf.constant([1.0, 2.0])
    v = tf.Variable(3.0)
    with tf.Session() as sess:
        v.initializer.run()
        return x.eval(), (x * 2).eval(feed_dict={x: [5.0, 6.0]}), v.eval(), sess.run(v)


@program
def interactive_session(tf):
    sess = tf.InteractiveSession()
    try:
        return tf.constant([4.0]).eval(), (tf.constant(2) * 3).eval()
    finally:
        sess.close()


@program
def scalar_fetches_are_numpy_scalars(tf):
    with tf.Session() as sess:
        values = sess.run([tf.constant(1.0), tf.constant(2), tf.constant(True), tf.constant("s"),
                           tf.reduce_sum(tf.ones([2]))])
    return [type(v).__name__ for v in values], values


@program
def constants_of_every_kind(tf):
    results = [tf.constant(1), tf.constant(1.0), tf.constant(True), tf.constant("s"), tf.constant([1, 2], tf.float32),
               tf.constant(np.arange(3)), tf.constant(np.float64(2.5)), tf.constant(0.0, shape=[2, 2]),
               tf.constant([1, 2, 3, 4], shape=[2, 2]), tf.constant([[1.0, 2.0]], dtype=tf.float64),
               tf.constant(2 ** 40), tf.constant([1, 2.5]), tf.constant([]), tf.constant(np.array([1, 2], np.uint8)),
               tf.constant(7, tf.int64), tf.constant(-1, shape=[3])]
    return [t.dtype.name for t in results], shapes(*results), run(tf, results)


@program
def constant_of_a_wrong_shape_is_an_error(tf):
    return tf.constant([1, 2, 3], shape=[2, 2])


@program(differs="tfnb refuses a constant out of its dtype's range; TF wraps it around (300 is 44 as uint8)")
def constant_out_of_range_for_its_dtype_is_an_error(tf):
    return tf.constant(300, dtype=tf.uint8)


@program
def constant_of_ragged_lists_is_an_error(tf):
    return tf.constant([[1, 2], [3]])


@program
def convert_to_tensor_forms(tf):
    x = tf.constant([1.0])
    results = [tf.convert_to_tensor(x), tf.convert_to_tensor([1, 2]), tf.convert_to_tensor(3.0, dtype=tf.float64),
               tf.convert_to_tensor(np.ones(2, np.float32)), tf.convert_to_tensor(5, preferred_dtype=tf.int64),
               tf.convert_to_tensor(tf.TensorShape([2, 3])), tf.convert_to_tensor(tf.constant(1.0).shape[0:])]
    return tf.convert_to_tensor(x) is x, [t.dtype.name for t in results], run(tf, results)


@program
def convert_to_tensor_with_a_conflicting_dtype_is_a_value_error(tf):
    return tf.convert_to_tensor(tf.constant(1.0), dtype=tf.int32)


@program
def set_shape_refines_and_checks(tf):
    x = tf.placeholder(tf.float32, [None, 3])
    x.set_shape([4, None])
    y = tf.placeholder(tf.float32)
    y.set_shape([2, 2])
    return shapes(x, y, x + 1.0)


@program
def set_shape_conflict_is_a_value_error(tf):
    x = tf.placeholder(tf.float32, [None, 3])
    x.set_shape([2, 4])


@program
def tensor_shapes_and_dims(tf):
    x = tf.placeholder(tf.float32, [None, 3])
    return [x.shape, x.get_shape(), x.shape[1], x.shape.dims, tf.TensorShape([1, None]), x.shape.merge_with([2, None]),
            x.shape.is_compatible_with([5, 3]), x.shape.concatenate([7]), tf.TensorShape(None), x.shape == [None, 3],
            tf.TensorShape([2]) == [2], str(x.shape), tf.Dimension(4) * 2, tf.Dimension(None) + 1]


@program
def dtypes_and_their_properties(tf):
    kinds = [tf.float32, tf.float64, tf.int32, tf.int64, tf.bool, tf.string, tf.uint8, tf.float16]
    return ([(d.name, d.is_floating, d.is_integer, d.is_bool, d.size if d is not tf.string else 0,
              d.as_numpy_dtype.__name__) for d in kinds], tf.as_dtype("float32") == tf.float32,
            tf.as_dtype(np.int64).name, tf.float32.min, tf.int8.max, tf.float32.real_dtype.name,
            tf.complex64.real_dtype.name)


# -- control flow ----------------------------------------------------------------------------------


@program
def cond_forms(tf):
    p = tf.placeholder(tf.bool, [])
    x = tf.constant(2.0)
    a = tf.cond(p, lambda: x * 10, lambda: x - 10)
    b = tf.cond(p, lambda: (x, x + 1), lambda: (x - 1, x))
    c = tf.cond(tf.constant(False), true_fn=lambda: tf.constant([1, 2]), false_fn=lambda: tf.constant([3, 4]))
    d = tf.cond(x > 1.0, lambda: {"v": x}, lambda: {"v": -x})
    with tf.Session() as sess:
        return shapes(a, c), sess.run([a, b, c, d], {p: True}), sess.run([a, b], {p: False})


@program
def cond_runs_only_the_taken_branch_ops(tf):
    v = tf.Variable(0)
    p = tf.placeholder(tf.bool, [])
    y = tf.cond(p, lambda: tf.assign_add(v, 1), lambda: tf.assign_add(v, 100))
    with tf.Session() as sess:
        sess.run(v.initializer)
        return [sess.run(y, {p: True}), sess.run(y, {p: False}), sess.run(v)]


@program
def cond_branches_with_different_shapes(tf):
    p = tf.placeholder(tf.bool, [])
    y = tf.cond(p, lambda: tf.ones([2, 3]), lambda: tf.zeros([4, 3]))
    return shapes(y), run(tf, y, {p: False})


@program
def cond_with_different_dtypes_is_an_error(tf):
    return tf.cond(tf.constant(True), lambda: tf.constant(1), lambda: tf.constant(1.0))


@program
def cond_with_different_structures_is_an_error(tf):
    return tf.cond(tf.constant(True), lambda: (tf.constant(1), tf.constant(2)), lambda: tf.constant(1))


@program
def cond_of_a_non_bool_pred_is_an_error(tf):
    return run(tf, tf.cond(tf.constant(1), lambda: tf.constant(1), lambda: tf.constant(2)))


@program
def case_picks_the_first_true(tf):
    x = tf.placeholder(tf.int32, [])
    y = tf.case([(tf.less(x, 0), lambda: tf.constant(-1)), (tf.equal(x, 0), lambda: tf.constant(0))],
                default=lambda: tf.constant(1))
    with tf.Session() as sess:
        return [sess.run(y, {x: v}) for v in (-5, 0, 5)]


@program
def while_loop_forms(tf):
    i = tf.constant(0)
    total = tf.while_loop(lambda i: i < 10, lambda i: i + 1, [i])
    pair = tf.while_loop(lambda i, s: i < 5, lambda i, s: (i + 1, s + tf.cast(i, tf.float32)), (i, tf.constant(0.0)))
    capped = tf.while_loop(lambda i: i < 100, lambda i: i + 2, [i], maximum_iterations=4)
    nested = tf.while_loop(lambda i, d: i < 3, lambda i, d: [i + 1, {"x": d["x"] * 2.0}], [i, {"x": tf.constant(1.0)}])
    return run(tf, [total, list(pair), capped, nested])


@program
def while_loop_results_take_the_body_structure(tf):
    return type(tf.while_loop(lambda i, j: i < 3, lambda i, j: (i + 1, j), [0, 1])).__name__


@program
def while_loop_results_take_nested_body_structures(tf):
    Pair = collections.namedtuple("Pair", ["a", "b"])
    looped = tf.while_loop(lambda i, d, p: i < 3,
                           lambda i, d, p: [i + 1, {"x": d["x"] * 2.0, "y": d["y"]}, Pair(p.a + p.b, [p.b[0] + 1])],
                           (0, {"y": tf.constant([1, 2]), "x": 1.0}, Pair(tf.constant(0), [tf.constant(1)])))
    swapped = tf.while_loop(lambda a, b: a < 10, lambda a, b: Pair(a + b, a), Pair(1, 1))
    return type(looped).__name__, type(swapped).__name__, run(tf, [looped, swapped])


@program
def while_loop_single_results_and_return_same_structure(tf):
    bare = tf.while_loop(lambda i: i < 3, lambda i: (i + 1,), [0])
    same = tf.while_loop(lambda i: i < 3, lambda i: (i + 1,), [0], return_same_structure=True)
    listed = tf.while_loop(lambda i: i < 3, lambda i: i + 1, (0,), return_same_structure=True)
    capped = tf.while_loop(lambda a, b: a < 100, lambda a, b: [a + b, b], [1, 2], maximum_iterations=3)
    return run(tf, [bare, same, listed, capped])


@program
def while_loop_nested_list_for_tuple_is_a_type_error(tf):
    return tf.while_loop(lambda i, p: i < 3, lambda i, p: (i + 1, [p[0], p[1]]), [0, (1, 2)])


@program
def while_loop_body_returning_too_few_values_is_a_value_error(tf):
    return tf.while_loop(lambda i, j: i < 3, lambda i, j: i + 1, [0, 1])


@program
def while_loop_with_a_growing_shape(tf):
    x = tf.constant([1.0])
    result = tf.while_loop(lambda x: tf.size(x) < 4, lambda x: tf.concat([x, x * 2.0], 0), [x],
                           shape_invariants=[tf.TensorShape([None])])
    return shapes(result), run(tf, result)


@program
def while_loop_shape_change_without_invariant_is_a_value_error(tf):
    x = tf.constant([1.0])
    return tf.while_loop(lambda x: tf.size(x) < 4, lambda x: tf.concat([x, x], 0), [x])


@program
def while_loop_over_a_fed_value(tf):
    n = tf.placeholder(tf.int32, [])
    fib = tf.while_loop(lambda k, a, b: k < n, lambda k, a, b: [k + 1, b, a + b], [0, 0, 1])
    with tf.Session() as sess:
        return [sess.run(fib, {n: k}) for k in (0, 1, 10)]


@program
def while_loop_with_a_captured_variable(tf):
    v = tf.Variable(2.0)
    result = tf.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * v), (tf.constant(0), tf.constant(1.0)))
    return run(tf, result, init=True)


@program
def variables_read_inside_cond_and_while_loop(tf):
    v = tf.Variable([1.0, 2.0])
    p = tf.placeholder(tf.bool, [])
    picked = tf.cond(p, lambda: v * 2.0, lambda: v + 1.0)
    looped = tf.while_loop(lambda i, x: i < 2, lambda i, x: (i + 1, x + v), (0, tf.zeros([2])))
    with tf.Session() as sess:
        sess.run(v.initializer)
        return shapes(picked, looped[1]), sess.run([picked, looped[1]], {p: True}), sess.run(picked, {p: False})


@program
def assign_inside_a_while_loop(tf):
    v = tf.Variable(0)

    def body(i):
        with tf.control_dependencies([tf.assign_add(v, i)]):
            return i + 1
    n = tf.while_loop(lambda i: i < 5, body, [tf.constant(0)])
    with tf.Session() as sess:
        sess.run(v.initializer)
        return sess.run(n), sess.run(v)


@program
def assign_inside_cond(tf):
    v = tf.Variable(1.0)
    p = tf.placeholder(tf.bool, [])
    y = tf.cond(p, lambda: tf.assign(v, 5.0), lambda: tf.identity(v))
    with tf.Session() as sess:
        sess.run(v.initializer)
        return shapes(y), sess.run(y, {p: False}), sess.run(y, {p: True}), sess.run(v)


@program
def while_loop_body_returning_the_wrong_structure_is_an_error(tf):
    return tf.while_loop(lambda i, j: i < 3, lambda i, j: i + 1, [tf.constant(0), tf.constant(0)])


@program
def tuple_and_group(tf):
    a, b = tf.constant(1.0), tf.constant(2.0)
    joined = tf.tuple([a, b])
    with tf.Session() as sess:
        return sess.run(joined), sess.run(tf.group(a, b)), sess.run(tf.no_op())


# -- more errors -----------------------------------------------------------------------------------


@program
def both_axis_and_reduction_indices_is_a_value_error(tf):
    return tf.reduce_sum(tf.ones([2, 2]), axis=0, reduction_indices=0)


@program
def both_axis_and_dimension_is_a_value_error(tf):
    return tf.argmax(tf.ones([2, 2]), axis=0, dimension=0)


@program
def concat_axis_out_of_range_is_a_value_error(tf):
    return tf.concat([tf.ones([2]), tf.ones([2])], 1)


@program
def expand_dims_axis_out_of_range_is_a_value_error(tf):
    return tf.expand_dims(tf.ones([2]), 3)


@program
def squeeze_axis_out_of_range_is_a_value_error(tf):
    return tf.squeeze(tf.ones([1, 2]), [2])


@program
def tile_multiples_of_a_wrong_length_is_a_value_error(tf):
    return tf.tile(tf.ones([2, 2]), [2])


@program
def pad_with_wrong_paddings_is_a_value_error(tf):
    return tf.pad(tf.ones([2, 2]), [[1, 1]])


@program
def range_with_zero_delta_fails(tf):
    d = tf.placeholder(tf.int32, [])
    return run(tf, tf.range(0, 5, d), {d: 0})


@program
def negative_dims_are_a_value_error(tf):
    return tf.zeros([2, -3])


@program
def one_hot_of_float_indices_is_a_type_error(tf):
    return tf.one_hot(tf.constant([0.0, 1.0]), 2)


@program
def softmax_of_ints_is_a_type_error(tf):
    return tf.nn.softmax(tf.constant([1, 2]))


@program
def relu_of_bools_is_a_type_error(tf):
    return tf.nn.relu(tf.constant([True]))


@program
def reduce_sum_of_bools_is_a_type_error(tf):
    return tf.reduce_sum(tf.constant([True, False]))


@program
def embedding_id_out_of_range_fails(tf):
    ids = tf.placeholder(tf.int32, [1])
    return run(tf, tf.nn.embedding_lookup(tf.ones([3, 2]), ids), {ids: [3]})


@program
def gather_of_a_negative_index_fails(tf):
    i = tf.placeholder(tf.int32, [1])
    return run(tf, tf.gather(tf.constant([1, 2, 3]), i), {i: [-1]})


@program
def list_index_is_a_type_error(tf):
    return tf.ones([3, 2])[[0, 1]]


@program
def bool_tensor_index_is_a_boolean_mask(tf):
    x = tf.ones([3])
    return x[x > 0]


@program
def tensors_of_another_graph_are_a_value_error(tf):
    other = tf.Graph()
    with other.as_default():
        a = tf.constant(1.0)
    return tf.add(a, tf.constant(2.0))


@program
def finalized_graph_is_a_runtime_error(tf):
    graph = tf.get_default_graph()
    tf.constant(1.0)
    graph.finalize()
    return tf.constant(2.0)


@program
def eval_without_a_session_is_a_value_error(tf):
    return tf.constant(1.0).eval()


@program
def running_a_closed_session_is_a_runtime_error(tf):
    x = tf.constant(1.0)
    sess = tf.Session()
    sess.close()
    return sess.run(x)


@program
def fetching_a_tensor_of_another_graph_is_a_value_error(tf):
    other = tf.Graph()
    with other.as_default():
        a = tf.constant(1.0)
    tf.constant(2.0)
    return run(tf, a)


@program
def fetching_an_op_of_another_graph_is_a_value_error(tf):
    other = tf.Graph()
    with other.as_default():
        op = tf.no_op()
    return run(tf, [tf.constant(2.0), op])


@program
def feeding_a_missing_name_is_a_type_error(tf):
    return run(tf, tf.constant(1.0, name="x"), {"nothing:0": 1.0})


@program
def feeding_bad_keys_is_a_type_error(tf):
    x = tf.constant(1.0, name="x")
    other = tf.Graph()
    with other.as_default():
        y = tf.constant(2.0)
    outcomes = []
    for key in ["nothing", "x:3", "x", y, 3]:
        try:
            run(tf, x, {key: 1.0})
        except Exception as error:  # noqa: BLE001 - the class of each error is what is compared
            outcomes.append(type(error).__name__)
    return outcomes


@program
def feeding_a_constant_and_an_intermediate(tf):
    a = tf.constant(2.0)
    b = a * 3.0
    return run(tf, [b, b + 1.0], {a: 5.0}), run(tf, b + 1.0, {b: 0.5})


@program(differs="tfnb rejects a cast of strings while building (TypeError); TF fails when run (UnimplementedError)")
def cast_of_a_string_is_an_error(tf):
    return run(tf, tf.cast(tf.constant(["1"]), tf.float32))


@program
def adding_float_and_int_variables_is_a_type_error(tf):
    return tf.Variable(1.0) + tf.Variable(2)


# -- more shapes and values ------------------------------------------------------------------------


@program
def reductions_of_empty_tensors(tf):
    empty = tf.zeros([0, 3])
    return run(tf, [tf.reduce_sum(empty, 0), tf.reduce_mean(empty, 0), tf.reduce_max(empty, 0),
                    tf.reduce_min(empty, 0), tf.reduce_prod(empty, 0), tf.reduce_any(tf.zeros([0], tf.bool)),
                    tf.reduce_all(tf.zeros([0], tf.bool))])


@program
def range_dtypes_from_mixed_arguments(tf):
    results = [tf.range(0, 1.5), tf.range(1, 5, dtype=tf.float64), tf.range(tf.constant(3, tf.int64)),
               tf.range(2.0), tf.range(-3), tf.range(10, 2, -3)]
    return [t.dtype.name for t in results], shapes(*results), run(tf, results)


@program
def zeros_and_fill_from_int64_shapes(tf):
    shape = tf.constant([2, 3], tf.int64)
    results = [tf.zeros(shape), tf.ones(shape, tf.int64), tf.fill(shape, 1.5), tf.zeros((2,)),
               tf.ones(tf.TensorShape([3]))]
    return shapes(*results), run(tf, results)


@program
def transpose_of_a_vector_and_of_an_unknown_rank(tf):
    u = tf.placeholder(tf.float32)
    return shapes(tf.transpose(tf.ones([3])), tf.transpose(u), tf.transpose(tf.placeholder(tf.float32, [None, 2, 5])))


@program
def unstack_and_split_with_num(tf):
    x = tf.placeholder(tf.float32, [2, None])
    parts = tf.unstack(x, num=2)
    halves = tf.split(tf.ones([4, 6]), tf.constant([2, 4]), axis=1, num=2)
    return shapes(*parts, *halves), run(tf, parts, {x: [[1.0], [2.0]]})


@program
def identity_of_a_variable_and_shape_of_a_variable(tf):
    v = tf.Variable([[1.0, 2.0, 3.0]])
    return (shapes(tf.identity(v), tf.shape(v)),
            run(tf, [tf.identity(v), tf.shape(v), tf.convert_to_tensor(v)], init=True))


@program
def dropout_with_a_noise_shape(tf):
    y = tf.nn.dropout(tf.ones([50, 4]), keep_prob=0.5, noise_shape=[50, 1], seed=2)
    values = run(tf, y)
    return shapes(y), bool(np.all(values.min(1) == values.max(1)))


@program
def moments_with_keep_dims_and_a_shift(tf):
    x = tf.constant(CUBE)
    mean, variance = tf.nn.moments(x, [0, 2], keep_dims=True)
    shifted = tf.nn.moments(x, [1], shift=tf.constant(5.0))
    return shapes(mean, variance, *shifted), run(tf, [mean, variance, shifted])


@program
def segment_sums_of_rank_2_ids(tf):
    data = tf.constant(CUBE)
    ids = tf.constant([[0, 1, 0], [2, 2, 1]])
    return run(tf, [tf.unsorted_segment_sum(data, ids, 3), tf.unsorted_segment_sum(data, ids, tf.constant(4))])


@program
def unsorted_segment_sum_of_unknown_segment_count(tf):
    n = tf.placeholder(tf.int32, [])
    y = tf.unsorted_segment_sum(tf.ones([3, 2]), [0, 1, 0], n)
    return shapes(y), run(tf, y, {n: 3})


@program
def embedding_lookup_of_unknown_ids(tf):
    ids = tf.placeholder(tf.int64, [None, 2])
    y = tf.nn.embedding_lookup(tf.ones([5, 3]), ids)
    return shapes(y), run(tf, tf.shape(y), {ids: [[1, 2]]})


@program
def ops_on_variables_in_name_scopes(tf):
    with tf.name_scope("layer"):
        v = tf.Variable([1.0])
        y = v * 2.0
        z = tf.nn.relu(y, name="act")
    return [y.name, z.name, v.initializer.name, tf.global_variables_initializer().name, tf.no_op().name,
            tf.group(v.initializer).name]


@program
def tensor_str_and_repr(tf):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = x + 1.0
    with tf.device("/cpu:0"):
        z = tf.placeholder(tf.int32)
    return [str(y), repr(y), str(z), str(x.shape), repr(x.shape[1]), repr(tf.float32), str(tf.int32)]


@program(differs="tfnb's `+` builds an Add op; TF since 1.15 builds AddV2 (the other types agree)")
def op_types_of_operators(tf):
    x, y = tf.constant([1.0]), tf.constant([2.0])
    return [t.op.type for t in (x + y, x - y, x * y, x / y, x // y, x % y, -x, x < y, tf.matmul([[1.0]], [[2.0]]),
                                tf.reduce_sum(x), tf.cast(x, tf.int32), x[0], tf.reshape(x, []), tf.stack([x, y]))]


@program
def collection_scopes(tf):
    with tf.variable_scope("layer1"):
        tf.get_variable("w", [1])
    with tf.variable_scope("layer2"):
        tf.get_variable("w", [1], trainable=False)
    tf.add_to_collection("mine", tf.constant(1.0, name="c"))
    tf.get_collection_ref("mine").append(tf.constant(2.0, name="d"))
    return ([v.name for v in tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="layer1")],
            [v.name for v in tf.trainable_variables(scope="layer")], [v.name for v in tf.global_variables("layer2")],
            [t.name for t in tf.get_collection("mine")])


@program
def variable_from_a_callable_and_with_a_tensorshape(tf):
    a = tf.Variable(lambda: tf.ones([2]))
    b = tf.Variable(tf.zeros(tf.TensorShape([1, 2])), name="b")
    c = tf.get_variable("c", tf.TensorShape([2]), initializer=tf.zeros_initializer())
    return [a.shape.as_list(), b.shape.as_list(), c.shape.as_list()], run(tf, [a, b, c], init=True)


@program
def assign_add_converts_python_values(tf):
    v = tf.Variable([1.0, 2.0])
    i = tf.Variable(3)
    return run(tf, [tf.assign_add(v, [1, 1]), i.assign_add(2), i.assign_sub(10), v.assign(7)], init=True)


@program
def variable_load_and_eval(tf):
    v = tf.Variable([1.0, 2.0])
    with tf.Session() as sess:
        sess.run(v.initializer)
        v.load([3.0, 4.0], sess)
        return v.eval(sess), sess.run(v.initial_value)


@program(differs="tfnb has no sliced assignment (v[0].assign) of TF1's reference variables")
def sliced_assignment(tf):
    v = tf.Variable([1.0, 2.0, 3.0])
    return run(tf, v[1:].assign([5.0, 6.0]), init=True)


@program
def global_variables_initializer_with_no_variables(tf):
    with tf.Session() as sess:
        return sess.run(tf.global_variables_initializer()), sess.run(tf.variables_initializer([]))


@program
def session_with_an_explicit_graph(tf):
    graph = tf.Graph()
    with graph.as_default():
        x = tf.constant(3.0)
        inside = tf.get_default_graph() is graph
    with tf.Session(graph=graph) as sess:
        return inside, x.graph is graph, sess.graph is graph, sess.run(x * 2)


@program
def default_session_inside_with(tf):
    x = tf.constant(2.0)
    with tf.Session() as sess:
        same = tf.get_default_session() is sess
        return same, x.eval(), tf.get_default_session() is not None


@program
def run_options_and_metadata_are_accepted(tf):
    x = tf.constant([1.0, 2.0]) * 2.0
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    metadata = tf.RunMetadata()
    with tf.Session() as sess:
        return sess.run(x, options=options, run_metadata=metadata)


# -- more gradients --------------------------------------------------------------------------------


@program
def gradients_with_unknown_shapes(tf):
    x = tf.placeholder(tf.float32, [None, 3])
    w = tf.constant([[1.0], [2.0], [3.0]])
    labels = tf.placeholder(tf.int32, [None])
    logits = tf.concat([tf.matmul(x, w), tf.reduce_mean(x, 1, keepdims=True)], 1)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    loss += tf.reduce_sum(tf.reshape(x, [-1]) ** 2) + tf.reduce_max(x) + tf.reduce_sum(tf.gather(x, [0]))
    grads = [tf.convert_to_tensor(g) for g in tf.gradients(loss, [x, w])]
    return shapes(*grads), run(tf, grads, {x: X23, labels: [0, 1]})


@program
def gradients_summed_over_ys(tf):
    x = tf.constant([1.0, 2.0])
    y1, y2 = x * 3.0, tf.reduce_sum(x ** 2)
    return gradient_values(tf, [y1, y2], x) + gradient_values(tf, [y1, y2], x, grad_ys=[tf.ones([2]), 2.0])


@program
def gradients_of_casts_and_edges(tf):
    x = tf.constant([0.0, 1.0, -2.0])
    ys = [tf.cast(tf.cast(x, tf.float64) * 2.0, tf.float32), tf.nn.relu(x), tf.abs(x), tf.maximum(x, 0.0),
          tf.minimum(x, 1.0), tf.clip_by_value(x, -1.0, 0.5), tf.sign(x), tf.round(x), tf.floor(x), tf.pow(x, 2.0),
          tf.where(x > 0.5, x, tf.zeros_like(x))]
    return [gradient_values(tf, tf.reduce_sum(y), x)[0] for y in ys]


@program
def gradient_of_an_integer_tensor(tf):
    x = tf.constant([1, 2])
    return gradient_values(tf, tf.reduce_sum(x * x), x)


@program
def gradient_of_a_placeholder_fed_value(tf):
    x = tf.placeholder(tf.float32, [2])
    y = tf.reduce_sum(tf.exp(x) * x)
    return gradient_values(tf, y, x, {x: [0.5, 1.0]})


@program
def gradient_of_softmax_cross_entropy_with_unknown_batch(tf):
    logits = tf.placeholder(tf.float32, [None, 3])
    labels = tf.placeholder(tf.float32, [None, 3])
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits))
    return gradient_values(tf, loss, logits, {logits: LOGITS, labels: [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]})


@program
def gradient_through_a_variable_read_twice(tf):
    v = tf.Variable(3.0)
    loss = v * v + 2.0 * v
    return gradient_values(tf, loss, v, init=True)


@program
def gradient_of_a_tensor_wrt_itself(tf):
    x = tf.constant([1.0, 2.0])
    return gradient_values(tf, x, x)


@program
def gradient_of_dropout_and_l2_loss(tf):
    x = tf.constant(X23)
    y = tf.nn.l2_loss(tf.nn.dropout(x, keep_prob=1.0)) + tf.nn.l2_loss(x[:, 1:])
    return gradient_values(tf, y, x)


@program
def gradients_of_batch_matmul_and_broadcast(tf):
    a = tf.constant(np.arange(12, dtype=np.float32).reshape(2, 2, 3) / 10)
    b = tf.constant(np.arange(6, dtype=np.float32).reshape(3, 2) / 10)
    return gradient_values(tf, tf.reduce_sum(tf.matmul(a, b) ** 2), [a, b])


@program
def gradients_of_local_response_normalization(tf):
    x = tf.constant(CUBE.reshape(1, 2, 3, 4) / 10.0)
    return gradient_values(tf, tf.reduce_sum(tf.nn.lrn(x, depth_radius=1) * tf.range(4.0)), x)


@program
def gradient_through_fused_batch_norm(tf):
    x = tf.constant(CUBE.reshape(2, 1, 3, 4) / 10.0)
    scale, offset = tf.constant([1.0, 2.0, 0.5, 1.0]), tf.constant([0.0, 1.0, 0.0, -1.0])
    y, _, _ = tf.nn.fused_batch_norm(x, scale, offset, epsilon=1e-3)
    return gradient_values(tf, tf.reduce_sum(tf.sin(y)), [x, scale, offset])


@program
def gradient_through_a_while_loop(tf):
    x = tf.constant(1.5)
    w = tf.constant([1.0, 2.0])
    _, y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * x + tf.reduce_sum(w)), (tf.constant(0), x))
    _, v = tf.while_loop(lambda i, v: i < 2, lambda i, v: (i + 1, tf.tanh(v) * w), (tf.constant(0), w * x))
    return gradient_values(tf, y, [x, w]) + gradient_values(tf, tf.reduce_sum(v), [x, w])


# -- training and conv (other areas, checked for the report) ---------------------------------------


@program
def optimizers_take_the_same_steps(tf):
    results = []
    for make in (lambda: tf.train.GradientDescentOptimizer(0.1), lambda: tf.train.MomentumOptimizer(0.1, 0.9),
                 lambda: tf.train.AdamOptimizer(0.1), lambda: tf.train.AdagradOptimizer(0.1),
                 lambda: tf.train.RMSPropOptimizer(0.1)):
        with tf.Graph().as_default():
            w = tf.Variable([1.0, -2.0])
            loss = tf.reduce_sum(w ** 2 + w)
            step = make().minimize(loss)
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                for _ in range(3):
                    sess.run(step)
                results.append(sess.run(w))
    return results


@program
def minimize_with_a_global_step(tf):
    w = tf.Variable(2.0)
    step = tf.train.get_or_create_global_step()
    train = tf.train.GradientDescentOptimizer(0.5).minimize(w * w, global_step=step)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        sess.run(train)
        return sess.run([w, step]), step.name


@program
def sparse_update_of_an_embedding_variable(tf):
    table = tf.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    loss = tf.reduce_sum(tf.nn.embedding_lookup(table, [2, 0, 2]) ** 2)
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        return sess.run(table)


@program
def conv2d_and_pooling(tf):
    x = tf.constant(CUBE.reshape(1, 2, 3, 4) / 10.0)
    k = tf.constant(np.linspace(-1, 1, 2 * 2 * 4 * 2, dtype=np.float32).reshape(2, 2, 4, 2))
    results = [tf.nn.conv2d(x, k, [1, 1, 1, 1], "SAME"), tf.nn.conv2d(x, k, strides=[1, 1, 1, 1], padding="VALID"),
               tf.nn.max_pool(x, [1, 2, 2, 1], [1, 1, 1, 1], "VALID"),
               tf.nn.avg_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")]
    return shapes(*results), [t.name for t in results], run(tf, results)


# -- static shapes through unknowns ----------------------------------------------------------------


@program
def static_shapes_of_gather_one_hot_and_where(tf):
    x = tf.placeholder(tf.float32, [None, 4])
    i = tf.placeholder(tf.int32, [None, 2])
    depth = tf.placeholder(tf.int32, [])
    u = tf.placeholder(tf.float32)
    return shapes(tf.gather(x, i), tf.gather(x, [1, 2], axis=1), tf.gather(u, [0]), tf.one_hot(i, depth),
                  tf.one_hot(tf.placeholder(tf.int32), 3), tf.where(x > 0), tf.where(u > 0), tf.where(x > 0, x, x))


@program
def static_shapes_of_layout_ops(tf):
    x = tf.placeholder(tf.float32, [None, 4])
    u = tf.placeholder(tf.float32)
    axis = tf.placeholder(tf.int32, [])
    paddings = tf.placeholder(tf.int32, [2, 2])
    return shapes(tf.concat([x, x], axis), tf.stack([x, x], 1), tf.stack([u, u]), tf.split(x, 2, 1)[0],
                  tf.split(x, 2, 0)[0], tf.squeeze(u), tf.expand_dims(u, -1), tf.expand_dims(x, -1),
                  tf.reshape(u, [-1]),
                  tf.reshape(u, [2, -1]), tf.pad(x, paddings), tf.tile(u, [2, 2]), tf.transpose(x, [1, 0]),
                  tf.reverse(x, [1]), tf.slice(x, [0, 1], [-1, 2]), tf.slice(x, [1, 1], [2, -1]))


@program
def static_shapes_from_shape_arithmetic(tf):
    x = tf.placeholder(tf.float32, [None, 6])
    batch = tf.shape(x)[0]
    return shapes(tf.fill([batch, 3], 0.0), tf.zeros(tf.shape(x)[0:1]), tf.reshape(x, tf.stack([batch, 3, 2])),
                  tf.ones([batch, tf.shape(x)[1] // 2]), tf.zeros(tf.shape(x)[1:]),
                  tf.range(batch), tf.reshape(x, tf.concat([[batch], [2, 3]], 0)))


@program
def static_shapes_of_math_on_unknown_ranks(tf):
    u = tf.placeholder(tf.float32)
    x = tf.placeholder(tf.float32, [None, 3])
    return shapes(u + x, tf.reduce_sum(u, keepdims=True), tf.reduce_mean(u, [0, 1]), tf.argmax(u, 0),
                  tf.argmax(x, 1), tf.matmul(u, u), tf.nn.softmax(u), tf.nn.bias_add(u, [1.0, 2.0]),
                  tf.cumsum(u), tf.cast(u, tf.int32), u[0], u[:, 1], u[..., 0], tf.nn.l2_loss(u), tf.size(u),
                  tf.nn.moments(x, [0])[0], tf.nn.softmax_cross_entropy_with_logits_v2(labels=u, logits=u))


@program
def static_shapes_of_variables_and_assigns(tf):
    v = tf.Variable(tf.zeros([2, 3]))
    w = tf.Variable(tf.placeholder_with_default([1.0], [None]), validate_shape=False)
    return shapes(v.assign(tf.ones([2, 3])), v + 1.0, v.read_value(), tf.assign_add(v, tf.ones([2, 3]))), w.shape.ndims


# -- more Python protocol, scopes and control flow -------------------------------------------------


@program(differs="tfnb iterates over a tensor whose first dim is known; TF1 raises TypeError in graph mode")
def iterating_a_graph_tensor(tf):
    return [t.name for t in tf.constant([1.0, 2.0])]


@program(differs="tfnb gives len of a tensor whose first dim is known; TF1 raises TypeError in graph mode")
def len_of_a_graph_tensor(tf):
    return len(tf.constant([1.0, 2.0]))


@program
def float_of_a_tensor_is_a_type_error(tf):
    return float(tf.constant(1.0))


@program
def constant_of_a_tensor_is_an_error(tf):
    return tf.constant(tf.constant(1.0))


@program
def get_variable_default_initializers_by_dtype(tf):
    i = tf.get_variable("i", [3], dtype=tf.int32)
    b = tf.get_variable("b", [2], dtype=tf.bool)
    f = tf.get_variable("f", [2, 2], dtype=tf.float64)
    values = run(tf, [i, b, f], init=True)
    return values[0], values[1], values[2].dtype, bool(np.all(np.abs(values[2]) <= np.sqrt(6.0 / 4)))


@program
def get_variable_with_a_constant_initializer_and_a_shape_is_a_value_error(tf):
    return tf.get_variable("w", [2], initializer=tf.constant([1.0, 2.0]))


@program
def get_variable_with_a_list_or_array_initializer(tf):
    a = tf.get_variable("a", initializer=[1.0, 2.0])
    b = tf.get_variable("b", initializer=np.array([[1, 2]], np.int64))
    return [(v.name, v.dtype.base_dtype.name, v.shape.as_list()) for v in (a, b)], run(tf, [a, b], init=True)


@program
def reuse_is_inherited_by_inner_scopes(tf):
    with tf.variable_scope("a"):
        with tf.variable_scope("b"):
            w = tf.get_variable("w", [1])
    with tf.variable_scope("a", reuse=True):
        with tf.variable_scope("b"):
            same = tf.get_variable("w", [1])
        inner_reuse = tf.get_variable_scope().reuse
    return same is w, inner_reuse, w.name


@program
def reuse_variables_at_the_top_level(tf):
    w = tf.get_variable("w", [1])
    tf.get_variable_scope().reuse_variables()
    return tf.get_variable("w", [1]) is w


@program
def custom_getter_sees_each_get_variable(tf):
    seen = []

    def getter(getter, name, *args, **kwargs):
        seen.append(name)
        return getter(name, *args, **kwargs)
    with tf.variable_scope("s", custom_getter=getter):
        v = tf.get_variable("w", [2], initializer=tf.ones_initializer())
    return seen, v.name, run(tf, v * 3.0, init=True)


@program
def variables_with_duplicate_names(tf):
    a = tf.Variable(1.0, name="w")
    b = tf.Variable(1.0, name="w")
    c = tf.Variable(1.0, name="outer/w")
    return [a.name, b.name, c.name]


@program
def variable_scope_reentry_opens_a_new_name_scope(tf):
    with tf.variable_scope("model") as scope:
        a = tf.constant(1.0, name="a")
    with tf.variable_scope(scope, reuse=True):
        b = tf.constant(1.0, name="a")
    with tf.variable_scope("model", reuse=True):
        c = tf.constant(1.0, name="a")
    return [a.name, b.name, c.name, scope.original_name_scope]


@program
def variable_scope_with_auxiliary_name_scope_off(tf):
    with tf.variable_scope("vs", auxiliary_name_scope=False):
        w = tf.get_variable("w", [1])
        c = tf.constant(1.0, name="c")
    return w.name, c.name


@program
def cond_with_a_python_bool_is_a_type_error(tf):
    return tf.cond(True, lambda: tf.constant(1), lambda: tf.constant(2))


@program
def cond_with_a_numpy_bool_is_a_constant_predicate(tf):
    return run(tf, [tf.cond(np.bool_(False), lambda: tf.constant(1), lambda: tf.constant(2)),
                    tf.cond(np.array(True), lambda: tf.constant(1), lambda: tf.constant(2))])


@program
def cond_with_an_int_predicate_is_a_type_error(tf):
    return tf.cond(tf.constant(1), lambda: tf.constant(1), lambda: tf.constant(2))


@program
def case_with_a_python_bool_is_a_type_error(tf):
    return tf.case([(True, lambda: tf.constant(1))], default=lambda: tf.constant(2))


@program
def cond_with_non_callables_is_a_type_error(tf):
    return tf.cond(tf.constant(True), tf.constant(1), tf.constant(2))


@program
def cond_inside_while_and_while_inside_cond(tf):
    p = tf.placeholder(tf.bool, [])

    def body(i, total):
        step = tf.cond(tf.equal(i % 2, 0), lambda: i * 10, lambda: i)
        return i + 1, total + step
    looped = tf.while_loop(lambda i, total: i < 5, body, (tf.constant(0), tf.constant(0)))
    inner = tf.cond(p, lambda: tf.while_loop(lambda k: k < 3, lambda k: k + 1, [tf.constant(0)]),
                    lambda: tf.constant(-1))
    with tf.Session() as sess:
        return sess.run(list(looped)), sess.run(inner, {p: True}), sess.run(inner, {p: False})


@program
def nested_while_loops(tf):
    def outer(i, total):
        inner = tf.while_loop(lambda j, s: j < i, lambda j, s: (j + 1, s + j), (tf.constant(0), tf.constant(0)))
        return i + 1, total + inner[1]
    return run(tf, list(tf.while_loop(lambda i, t: i < 4, outer, (tf.constant(0), tf.constant(0)))))


@program
def while_loop_condition_must_be_a_bool_scalar(tf):
    return tf.while_loop(lambda i: i, lambda i: i - 1, [tf.constant(3)])


@program
def while_loop_with_options(tf):
    result = tf.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2.0), (0, tf.constant([1.0, 2.0])),
                           parallel_iterations=1, back_prop=False, name="loop")
    return [t.name.split("/")[0] for t in result], run(tf, list(result))


@program
def case_with_a_dict_and_exclusive(tf):
    x = tf.constant(3)
    y = tf.case({tf.greater(x, 5): lambda: tf.constant(1), tf.greater(x, 1): lambda: tf.constant(2)},
                default=lambda: tf.constant(3), exclusive=True)
    return run(tf, y)


@program
def cond_returning_an_operation_and_a_tensor(tf):
    v = tf.Variable(0.0)
    p = tf.placeholder(tf.bool, [])
    y = tf.cond(p, lambda: tf.assign_add(v, 1.0), lambda: tf.assign_add(v, -1.0))
    with tf.Session() as sess:
        sess.run(v.initializer)
        for value in (True, True, False, True):
            sess.run(y, {p: value})
        return sess.run(v)


@program
def control_dependencies_none_clears(tf):
    v = tf.Variable(1.0)
    update = tf.assign(v, 5.0)
    with tf.control_dependencies([update]):
        with tf.control_dependencies(None):
            free = tf.constant(2.0)
        bound = tf.constant(3.0)
    return free.op.control_inputs, [op is update.op for op in bound.op.control_inputs]


@program
def control_dependencies_need_graph_elements(tf):
    with tf.control_dependencies([1.0]):
        return tf.constant(1.0)


@program
def update_ops_collection_and_group(tf):
    v = tf.Variable(0.0)
    tf.add_to_collection(tf.GraphKeys.UPDATE_OPS, tf.assign_add(v, 1.0))
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train = tf.no_op()
    with tf.Session() as sess:
        sess.run(v.initializer)
        sess.run(train)
        sess.run(train)
        return sess.run(v)


@program
def random_op_seeds(tf):
    a = tf.random_uniform([4], seed=3)
    b = tf.random_uniform([4], seed=3)
    with tf.Session() as sess:
        first = sess.run([a, b])
    with tf.Session() as sess:
        second = sess.run([a, b])
    return bool(np.array_equal(first[0], first[1])), bool(np.array_equal(first[0], second[0]))


@program
def sigmoid_cross_entropy_shapes_must_agree(tf):
    return tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.ones([2, 3]), logits=tf.ones([3, 2]))


@program
def clip_by_value_of_ints_with_float_bounds_is_a_type_error(tf):
    return tf.clip_by_value(tf.constant([1, 2]), 0.5, 1.5)


@program
def softmax_cross_entropy_with_dim(tf):
    logits = tf.constant(np.array(LOGITS, np.float32).T)
    labels = tf.constant(np.array([[0.0, 1.0, 0.0], [0.2, 0.3, 0.5]], np.float32).T)
    return run(tf, [tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits, dim=0),
                    tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, dim=0)])


@program
def like_ops_of_variables_bools_and_strings(tf):
    v = tf.Variable([1.0, 2.0])
    results = [tf.zeros_like(v), tf.ones_like(v), tf.zeros_like(tf.constant([True])), tf.zeros_like(tf.constant(["a"])),
               tf.ones_like(tf.constant([1], tf.int64))]
    return [t.dtype.name for t in results], run(tf, results, init=True)


@program
def dtypes_by_name(tf):
    return [tf.as_dtype(name).name for name in ("float32", "float64", "int32", "int64", "bool", "string", "uint8")] + \
        [tf.as_dtype(t).name for t in (np.float32, np.int64, np.bool_, bool)] + \
        [tf.float32.is_compatible_with(tf.float32)]


@program
def as_dtype_of_an_unknown_name_is_a_type_error(tf):
    return tf.as_dtype("nope")


@program
def fetching_a_sparse_gradient(tf):
    params = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    return run(tf, tf.gradients(tf.reduce_sum(tf.gather(params, [1, 1])), params)[0])


@program
def fetching_sparse_gradients_in_structures(tf):
    params = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    x = tf.placeholder(tf.float32, [])
    grad = tf.gradients(tf.reduce_sum(tf.gather(params, [2, 0]) * x), params)[0]
    with tf.Session() as sess:
        fetched = sess.run({"grad": [grad, grad.values], "pair": (grad.indices, grad)}, {x: 2.0})
        called = sess.make_callable([grad, grad.dense_shape], [x])(3.0)
        return fetched, called, type(fetched["grad"][0]).__name__, list(fetched["grad"][0]._fields)


@program
def fetching_indexed_slices_without_a_dense_shape(tf):
    slices = tf.IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([3]))
    return run(tf, [slices, tf.IndexedSlices(slices.values, slices.indices, tf.constant([5, 2]))])


@program
def extreme_values_stay_finite(tf):
    x = tf.constant([-1000.0, -50.0, 0.0, 50.0, 1000.0])
    labels = tf.constant([0.0, 1.0, 0.5, 0.0, 1.0])
    return run(tf, [tf.sigmoid(x), tf.nn.softplus(x), tf.nn.log_softmax(x), tf.nn.softmax(x), tf.nn.elu(x),
                    tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=x), tf.tanh(x), tf.nn.softsign(x),
                    tf.reduce_logsumexp(x), tf.exp(x),
                    tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=x)])


@program
def float64_and_float16_pipelines(tf):
    results = []
    for dtype in (tf.float64, tf.float16):
        x = tf.constant(X23, dtype=dtype)
        w = tf.constant([[1.0], [0.5], [-1.0]], dtype=dtype)
        y = tf.nn.relu(tf.matmul(x, w) + 0.5)
        results += [y, tf.reduce_mean(x, 1), tf.nn.softmax(x), tf.nn.l2_loss(x), tf.cast(y, tf.int32) // 2]
    return [r.dtype.name for r in results], run(tf, results)


@program
def integer_overflow_wraps(tf):
    x = tf.constant([2 ** 31 - 1], tf.int32)
    u = tf.constant([250], tf.uint8)
    return run(tf, [x + 1, u + tf.constant([10], tf.uint8), x * 2, tf.cast(tf.constant([300]), tf.uint8)])


@program(differs="tfnb refuses a Python operand out of the tensor's dtype range; TF wraps it around (300 is 44)")
def integer_python_operands_out_of_range_are_an_error(tf):
    return tf.constant([1], tf.uint8) + 300


# -- the test --------------------------------------------------------------------------------------


@pytest.mark.parametrize("program", PROGRAMS)
def test_program_does_what_tensorflow_does(program, same_as_tf):
    same_as_tf(program)
