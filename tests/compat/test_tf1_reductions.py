"""TF1 reductions: reduce_* spellings, axes and keepdims, empty and unknown shapes, argmax, cumsum."""

from __future__ import annotations

import numpy as np
from program_registry import (
    X23,
    Programs,
    run,
    shapes,
    test_program_does_what_tensorflow_does,  # noqa: F401 (pytest collects it from here)
)

PROGRAMS = Programs()
program = PROGRAMS.register


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



@program
def both_axis_and_reduction_indices_is_a_value_error(tf):
    return tf.reduce_sum(tf.ones([2, 2]), axis=0, reduction_indices=0)



@program
def both_axis_and_dimension_is_a_value_error(tf):
    return tf.argmax(tf.ones([2, 2]), axis=0, dimension=0)



@program
def reduce_sum_of_bools_is_a_type_error(tf):
    return tf.reduce_sum(tf.constant([True, False]))



@program
def reductions_of_empty_tensors(tf):
    empty = tf.zeros([0, 3])
    return run(tf, [tf.reduce_sum(empty, 0), tf.reduce_mean(empty, 0), tf.reduce_max(empty, 0),
                    tf.reduce_min(empty, 0), tf.reduce_prod(empty, 0), tf.reduce_any(tf.zeros([0], tf.bool)),
                    tf.reduce_all(tf.zeros([0], tf.bool))])
