"""TF1 slicing and indexing: Python slices, tensor indices, strided_slice, gather, boolean masks."""

from __future__ import annotations

from program_registry import (
    CUBE,
    Programs,
    run,
    shapes,
    test_program_does_what_tensorflow_does,  # noqa: F401 (pytest collects it from here)
)

PROGRAMS = Programs()
program = PROGRAMS.register


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
