"""TF1 programs for gather_nd, scatter_nd, boolean_mask, top_k, tensordot and einsum, under TensorFlow and tfnb."""

from __future__ import annotations

import numpy as np
from program_registry import (
    CUBE,
    Programs,
    described,
    run,
    test_program_does_what_tensorflow_does,  # noqa: F401 (pytest collects it from here)
)

PROGRAMS = Programs()
program = PROGRAMS.register


MATRIX = np.array([[1.0, 5.0, 3.0, 5.0], [4.0, -4.0, 0.0, 4.0], [2.0, 2.0, 2.0, 2.0]], np.float32)


# -- gather_nd and scatter_nd ---------------------------------------------------------------------


@program
def gather_nd_picks_elements_and_slices(tf):
    params = tf.constant(CUBE)
    results = [tf.gather_nd(params, [[1, 2, 3], [0, 0, 1]]), tf.gather_nd(params, [[1], [0]]),
               tf.gather_nd(params, tf.constant([[[0, 2]], [[1, 1]]], tf.int64)), tf.gather_nd(params, [1, 2]),
               tf.gather_nd(params, tf.zeros([2, 0], tf.int32)),
               tf.gather_nd(tf.constant([[1, 2], [3, 4]]), [[1, 0]])]
    return described(*results), run(tf, results)


@program
def gather_nd_with_batch_dims(tf):
    result = tf.gather_nd(tf.constant(CUBE), [[[2], [0]], [[1], [1]]], batch_dims=1)
    return result.shape.as_list(), run(tf, result)


@program
def gather_nd_unknown_dims(tf):
    params, indices = tf.placeholder(tf.float32, [None, 3, 4]), tf.placeholder(tf.int32, [None, 2])
    result = tf.gather_nd(params, indices)
    return described(result), run(tf, result, {params: CUBE, indices: [[1, 2], [0, 0]]})


@program
def gather_nd_out_of_range_is_an_invalid_argument(tf):
    return run(tf, tf.gather_nd(tf.constant(CUBE), [[0, 1], [2, 0]]))


@program
def gather_nd_too_deep_index_is_a_value_error(tf):
    return tf.gather_nd(tf.ones([2, 3]), [[0, 1, 1]])


@program
def gather_nd_gradient_sums_repeated_indices(tf):
    params = tf.constant(CUBE)
    picked = tf.gather_nd(params, [[0, 1], [0, 1], [1, 2]])
    return run(tf, tf.gradients(picked * picked, [params]))


@program
def scatter_nd_sums_duplicates(tf):
    results = [tf.scatter_nd([[1], [3], [1]], [1.0, 2.0, 3.0], [5]),
               tf.scatter_nd([[0, 1], [0, 1]], [[1, 2], [3, 4]], [2, 2, 2]),
               tf.scatter_nd(tf.constant([[2]], tf.int64), [[1.5, 2.5]], tf.constant([3, 2], tf.int64))]
    return described(*results), run(tf, results)


@program
def scatter_nd_gradient_gathers(tf):
    updates = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    scattered = tf.scatter_nd([[1], [0], [1]], updates, [3, 2])
    return run(tf, tf.gradients(scattered * tf.constant(MATRIX[:, :2]), [updates]))


@program
def scatter_nd_out_of_range_is_an_invalid_argument(tf):
    return run(tf, tf.scatter_nd([[0], [5]], [1.0, 2.0], [4]))


@program
def scatter_nd_mismatched_updates_are_a_value_error(tf):
    return tf.scatter_nd([[0], [1]], [1.0, 2.0, 3.0], [4])


# -- boolean_mask and bool indexing ---------------------------------------------------------------


@program
def boolean_mask_keeps_the_true_slices(tf):
    x = tf.constant(CUBE)
    results = [tf.boolean_mask(x, [True, False]), tf.boolean_mask(x, [[True, False, True], [False, False, True]]),
               tf.boolean_mask(x, [False, True, True, False], axis=2), tf.boolean_mask(x, x > 20.0)]
    return described(*results), run(tf, results)


@program
def boolean_mask_with_a_fed_mask(tf):
    x, mask = tf.placeholder(tf.float32, [None, 4]), tf.placeholder(tf.bool, [None])
    result = tf.boolean_mask(x, mask)
    return described(result), run(tf, result, {x: MATRIX, mask: [True, False, True]})


@program
def boolean_mask_gradient(tf):
    x = tf.constant(MATRIX)
    return run(tf, tf.gradients(tf.boolean_mask(x, [True, False, True]) * 2.0, [x]))


@program
def boolean_mask_scalar_mask_is_a_value_error(tf):
    return tf.boolean_mask(tf.ones([2]), True)


@program
def boolean_mask_mismatched_mask_is_a_value_error(tf):
    return tf.boolean_mask(tf.ones([2]), [True])


@program
def bool_tensor_index_masks(tf):
    x = tf.constant(MATRIX)
    picked = x[x > 2.0]
    return described(picked), run(tf, [picked, x[np.array([True, False, True])]])


# -- top_k ----------------------------------------------------------------------------------------


@program
def top_k_values_and_indices(tf):
    results = [*tf.nn.top_k(MATRIX, 2), *tf.math.top_k(tf.constant([1, 3, 3, 2, 3]), k=3),
               *tf.nn.top_k(tf.constant(CUBE)), *tf.nn.top_k(tf.constant(MATRIX, tf.float64), 0)]
    return described(*results), run(tf, results)


@program
def top_k_gradient(tf):
    x = tf.constant(MATRIX)
    values, _ = tf.nn.top_k(x, 2)
    return run(tf, tf.gradients(values * tf.constant([[1.0, 2.0]]), [x]))


@program
def top_k_with_a_fed_k(tf):
    k = tf.placeholder(tf.int32, [])
    values, indices = tf.nn.top_k(MATRIX, k)
    return described(values, indices), run(tf, [values, indices], {k: 3})


@program
def top_k_static_k_too_large_is_a_value_error(tf):
    return tf.nn.top_k([1.0, 2.0, 3.0], 5)


@program
def top_k_fed_k_too_large_is_an_invalid_argument(tf):
    x = tf.placeholder(tf.float32, [None])
    return run(tf, tf.nn.top_k(x, 5), {x: [1.0, 2.0, 3.0]})


@program
def top_k_negative_k_is_a_value_error(tf):
    return tf.nn.top_k([1.0, 2.0, 3.0], -1)


# -- tensordot ------------------------------------------------------------------------------------


@program
def tensordot_axes_forms(tf):
    a, b = tf.constant(CUBE), tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3))
    results = [tf.tensordot(a, b, 1), tf.tensordot(a, b, [[1, 2], [1, 0]]), tf.tensordot(a, b, [2, 0]),
               tf.tensordot(MATRIX, MATRIX, 0), tf.tensordot(MATRIX, MATRIX, [[0, 1], [0, 1]])]
    return [r.shape.as_list() for r in results], run(tf, results)


@program
def tensordot_unknown_dims(tf):
    a = tf.placeholder(tf.float32, [None, 3, 4])
    result = tf.tensordot(a, MATRIX, [[1], [0]])
    return result.shape.as_list(), run(tf, result, {a: CUBE})


@program
def tensordot_gradient(tf):
    a, b = tf.constant(CUBE), tf.constant(MATRIX)
    return run(tf, tf.gradients(tf.tensordot(a, b, [[1], [0]]), [a, b]))


@program
def tensordot_axes_mismatch_is_a_value_error(tf):
    return tf.tensordot(tf.ones([2, 3]), tf.ones([3, 2]), [[1], [0, 1]])


@program
def tensordot_too_many_axes_is_a_value_error(tf):
    return tf.tensordot(tf.ones([2, 3]), tf.ones([3, 2]), 3)


# -- einsum ---------------------------------------------------------------------------------------


@program
def einsum_equations(tf):
    a, m = tf.constant(CUBE), tf.constant(MATRIX)
    results = [tf.einsum("ij,jk->ik", m, tf.transpose(m)), tf.einsum("bij,jk->bik", a, tf.transpose(m)),
               tf.einsum("ij->ji", m), tf.einsum("ijk->k", a), tf.einsum("i,j", m[0], m[1]), tf.einsum("ij,ij", m, m),
               tf.einsum("ii->i", m[:, :3]), tf.einsum("...jk,k->...j", a, m[0]),
               tf.einsum("ij, jk -> ik", m, tf.transpose(m)),
               tf.einsum("ij,jk->ik", tf.constant([[1, 2]]), tf.constant([[3], [4]]))]
    return described(*results), run(tf, results)


@program
def einsum_of_three_inputs(tf):
    m = tf.constant(MATRIX)
    return run(tf, tf.einsum("ij,jk,kl->il", m, tf.transpose(m), m))  # tfnb: one Einsum op, TF: two


@program
def einsum_unknown_dims(tf):
    a = tf.placeholder(tf.float32, [None, 3, None])
    result = tf.einsum("bij,kj->bik", a, MATRIX)
    return result.shape.as_list(), run(tf, result, {a: CUBE})


@program
def einsum_gradients(tf):
    a, b, m = tf.constant(CUBE), tf.constant(CUBE[0]), tf.constant(MATRIX)
    results = [tf.einsum("bij,ij->bi", a, b), tf.einsum("ijk,j->i", a, m[:, 0]), tf.einsum("...ij,kj->...ik", a, m)]
    return run(tf, tf.gradients(results, [a, b, m]))


@program
def einsum_wrong_input_count_is_a_value_error(tf):
    return tf.einsum("ij,jk->ik", tf.ones([2, 3]))


@program
def einsum_mismatched_dims_are_a_value_error(tf):
    return tf.einsum("ij,jk->ik", tf.ones([2, 3]), tf.ones([4, 2]))


@program
def einsum_wrong_rank_is_a_value_error(tf):
    return tf.einsum("ij->ji", tf.ones([3]))
