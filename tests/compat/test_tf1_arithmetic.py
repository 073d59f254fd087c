"""TF1 arithmetic: operators, Python operands, dtypes and casts, comparisons, and tensors under Python's protocols."""

from __future__ import annotations

import numpy as np
from program_registry import (
    X23,
    Programs,
    described,
    run,
    shapes,
    test_program_does_what_tensorflow_does,  # noqa: F401 (pytest collects it from here)
)

PROGRAMS = Programs()
program = PROGRAMS.register


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



@program(differs="tfnb rejects a cast of strings while building (TypeError); TF fails when run (UnimplementedError)")
def cast_of_a_string_is_an_error(tf):
    return run(tf, tf.cast(tf.constant(["1"]), tf.float32))



@program
def adding_float_and_int_variables_is_a_type_error(tf):
    return tf.Variable(1.0) + tf.Variable(2)



@program
def tensor_str_and_repr(tf):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = x + 1.0
    with tf.device("/cpu:0"):
        z = tf.placeholder(tf.int32)
    return [str(y), repr(y), str(z), str(x.shape), repr(x.shape[1]), repr(tf.float32), str(tf.int32)]



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
def clip_by_value_of_ints_with_float_bounds_is_a_type_error(tf):
    return tf.clip_by_value(tf.constant([1, 2]), 0.5, 1.5)



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
