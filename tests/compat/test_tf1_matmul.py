"""TF1 matmul and batch matmul: variants, broadcast batch dims, unknown shapes and errors."""

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
