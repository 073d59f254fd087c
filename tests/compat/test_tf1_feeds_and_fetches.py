"""TF1 placeholders, constants and dtypes, sessions, feeds and fetches."""

from __future__ import annotations

import collections

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



@program
def constant_of_a_tensor_is_an_error(tf):
    return tf.constant(tf.constant(1.0))



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
