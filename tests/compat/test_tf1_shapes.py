"""TF1 shape and layout ops: reshape, transpose, concat, stack, split, squeeze, tile, pad, fill, range, one_hot."""

from __future__ import annotations

import numpy as np
from program_registry import (
    CUBE,
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
def like_ops_of_variables_bools_and_strings(tf):
    v = tf.Variable([1.0, 2.0])
    results = [tf.zeros_like(v), tf.ones_like(v), tf.zeros_like(tf.constant([True])), tf.zeros_like(tf.constant(["a"])),
               tf.ones_like(tf.constant([1], tf.int64))]
    return [t.dtype.name for t in results], run(tf, results, init=True)
