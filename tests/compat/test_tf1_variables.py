"""TF1 variables: initialization, assignment, collections, get_variable, variable scopes and reuse."""

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



@program
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



@program
def identity_of_a_variable_and_shape_of_a_variable(tf):
    v = tf.Variable([[1.0, 2.0, 3.0]])
    return (shapes(tf.identity(v), tf.shape(v)),
            run(tf, [tf.identity(v), tf.shape(v), tf.convert_to_tensor(v)], init=True))



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
