"""TF1 random ops: shapes, dtypes, ranges and seeds."""

from __future__ import annotations

import numpy as np
from program_registry import (
    Programs,
    run,
    shapes,
    test_program_does_what_tensorflow_does,  # noqa: F401 (pytest collects it from here)
)

PROGRAMS = Programs()
program = PROGRAMS.register


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



@program
def random_op_seeds(tf):
    a = tf.random_uniform([4], seed=3)
    b = tf.random_uniform([4], seed=3)
    with tf.Session() as sess:
        first = sess.run([a, b])
    with tf.Session() as sess:
        second = sess.run([a, b])
    return bool(np.array_equal(first[0], first[1])), bool(np.array_equal(first[0], second[0]))
