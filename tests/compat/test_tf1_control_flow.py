"""TF1 control flow: cond, case, while_loop, control dependencies and groups."""

from __future__ import annotations

import collections

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
