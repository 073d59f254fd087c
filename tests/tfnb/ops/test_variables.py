"""Variables, variable scopes and initializers: TF1 behaviour beyond single forward cases."""

import math

import numpy as np
import pytest

import tfnb as tf


def _initialized_session(*variables):
    sess = tf.Session()
    sess.run(tf.variables_initializer(list(variables)) if variables else tf.global_variables_initializer())
    return sess


# -- names and structure ----------------------------------------------------------------------------


def test_names_are_the_scope_name_and_uniquified():
    v = tf.Variable(1.0, name="v")
    w = tf.Variable(2.0, name="v")
    u = tf.Variable(3.0)
    with tf.name_scope("outer"):
        x = tf.Variable(4.0, name="x")
    assert (v.op.name, v.name, w.op.name, w.name) == ("v", "v:0", "v_1", "v_1:0")
    assert u.op.name == "Variable" and x.op.name == "outer/x"
    assert v.op.type == "VarHandleOp" and v.dtype is tf.float32 and v.shape == tf.TensorShape([])
    assert v.initializer.type == "AssignVariableOp" and v.initializer.name == "v/Assign"
    assert v.initial_value.name.startswith("v/Initializer/")
    assert v.graph is tf.get_default_graph() and v.get_shape() == v.shape
    assert repr(v) == "<tf.Variable 'v:0' shape=() dtype=float32>"
    assert len({v, w, u, x}) == 4


def test_initial_value_may_be_a_tensor_a_value_or_a_callable():
    a = tf.Variable(tf.constant([1, 2]), name="a")
    b = tf.Variable(lambda: tf.constant([[1.5]]), name="b")
    c = tf.Variable(np.arange(3, dtype=np.float64), name="c")
    d = tf.Variable([1, 2], dtype=tf.float32, name="d")
    assert b.initial_value.op.name.startswith("b/Initializer/")
    with _initialized_session() as sess:
        values = sess.run([a, b, c, d])
    np.testing.assert_array_equal(values[0], [1, 2])
    np.testing.assert_array_equal(values[1], [[1.5]])
    assert values[2].dtype == np.float64 and values[3].dtype == np.float32


def test_initial_value_needs_a_static_shape_unless_validate_shape_is_false():
    p = tf.placeholder(tf.float32, [None])
    with pytest.raises(ValueError, match="initial_value must have a shape specified"):
        tf.Variable(p)
    with pytest.raises(ValueError, match="not compatible"):
        tf.Variable([1.0, 2.0], shape=[3])
    v = tf.Variable([1.0, 2.0], validate_shape=False)
    assert v.shape.ndims is None
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(v.assign([1.0, 2.0, 3.0])), [1, 2, 3])


def test_a_variable_ignores_control_dependencies_around_its_creation():
    gate = tf.no_op()
    with tf.control_dependencies([gate]):
        v = tf.Variable(1.0)
        read = v.value()
    assert v.initializer.control_inputs == [] and v.op.control_inputs == []
    assert read.op.control_inputs == [gate]


def test_reads_are_colocated_with_the_variable():
    with tf.device("/cpu:1"):
        v = tf.Variable(1.0, name="v")
    read = v.value()
    assert read.op.type == "ReadVariableOp" and read.op.attrs["_class"] == ["v"]
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        sess.run(v.initializer)
        assert sess.run(read) == 1.0
        assert read.op.assigned_device == v.op.assigned_device == "/job:localhost/replica:0/task:0/device:CPU:1"


# -- running ----------------------------------------------------------------------------------------


def test_initializer_runs_and_fetching_a_variable_reads_it():
    v = tf.Variable([[1.0, 2.0]], name="v")
    with tf.Session() as sess:
        assert sess.run(v.initializer) is None
        value = sess.run(v)
        assert value.dtype == np.float32
        np.testing.assert_array_equal(value, [[1, 2]])


def test_reading_an_uninitialized_variable_is_a_failed_precondition_naming_it():
    v = tf.Variable(1.0, name="weights")
    read = v.value()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="Attempting to use uninitialized value weights") \
                as info:
            sess.run(read)
        assert info.value.op is read.op
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value weights"):
            sess.run(v.assign_add(1.0))


def test_assigns_return_the_new_value():
    v = tf.Variable(10, name="v")
    with _initialized_session() as sess:
        assert sess.run(v.assign(3)) == 3
        assert sess.run(v.assign_add(4)) == 7
        assert sess.run(v.assign_sub(2)) == 5
        assert sess.run(tf.assign(v, 1)) == 1
        assert sess.run(tf.assign_add(v, 5)) == 6
        assert sess.run(tf.assign_sub(v, 6)) == 0
        op = v.assign(8, read_value=False)
        assert isinstance(op, tf.Operation) and sess.run(op) is None and sess.run(v) == 8


def test_assign_ops_check_dtype_and_shape_when_built():
    v = tf.Variable([1.0, 2.0])
    with pytest.raises(ValueError, match="incompatible"):
        v.assign([1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="Input 'value' of 'AssignAddVariableOp' Op has type int32"):
        v.assign_add(tf.constant([1, 2]))
    with pytest.raises(ValueError, match="Incompatible type conversion"):
        tf.convert_to_tensor(v, dtype=tf.int32)
    from tfnb.ops import state_ops
    with pytest.raises(TypeError, match="has type int32 that does not match type float32 of argument 'resource'"):
        state_ops.assign_variable_op(v.handle, tf.placeholder(tf.int32, [2]))
    with pytest.raises(TypeError, match="of dtype float32 as int32"):
        state_ops.read_variable_op(v.handle, tf.int32)
    assert v.value().shape == v.shape == tf.TensorShape([2])


def test_a_read_under_control_dependencies_sees_the_assign():
    v = tf.Variable(0.0)
    with tf.control_dependencies([v.assign_add(1.0)]):
        read = v.read_value()
        plus_zero = v + 0
    with _initialized_session() as sess:
        assert sess.run(read) == 1.0
        assert sess.run(read) == 2.0
        assert sess.run(plus_zero) == 3.0
        assert sess.run(v) == 3.0


def test_a_read_before_an_assign_in_one_step_keeps_the_old_value():
    v = tf.Variable([1.0, 2.0])
    before = v.value()
    with tf.control_dependencies([before]):
        after = v.assign_add([10.0, 10.0])
    with _initialized_session() as sess:
        old, new = sess.run([before, after])
    np.testing.assert_array_equal(old, [1, 2])
    np.testing.assert_array_equal(new, [11, 12])


def test_two_sessions_on_one_graph_do_not_share_values():
    v = tf.Variable(1.0)
    first, second = tf.Session(), tf.Session()
    first.run(v.initializer)
    first.run(v.assign(5.0))
    with pytest.raises(tf.errors.FailedPreconditionError):
        second.run(v)
    second.run(v.initializer)
    assert (first.run(v), second.run(v)) == (5.0, 1.0)
    first.close()
    second.close()


def test_a_failed_assign_leaves_the_old_value():
    v = tf.Variable([1.0, 2.0])
    fed = tf.placeholder(tf.float32, [None])
    assign = v.assign(fed)
    add = v.assign_add(fed)
    with _initialized_session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="wrong shape"):
            sess.run(assign, {fed: [1.0, 2.0, 3.0]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="shapes must be equal"):
            sess.run(add, {fed: [1.0]})
        np.testing.assert_array_equal(sess.run(v), [1, 2])


def test_mutating_fetched_arrays_does_not_change_the_variable():
    v = tf.Variable([1.0, 2.0])
    fed = tf.placeholder(tf.float32, [2])
    assign = v.assign(fed)
    with _initialized_session() as sess:
        fetched = sess.run(v)
        fetched[0] = 100.0
        new = sess.run(assign, {fed: np.array([3.0, 4.0], np.float32)})
        new[1] = 100.0
        np.testing.assert_array_equal(sess.run(v), [3, 4])
        source = np.array([5.0, 6.0], np.float32)
        sess.run(assign, {fed: source})
        source[0] = 100.0
        np.testing.assert_array_equal(sess.run(v), [5, 6])


def test_load_and_eval():
    v = tf.Variable([1, 2])
    with tf.Session() as sess:
        v.load([7, 8])
        np.testing.assert_array_equal(v.eval(), [7, 8])
        np.testing.assert_array_equal(v.eval(session=sess), [7, 8])
    with pytest.raises(ValueError, match="No default session"):
        v.eval()


def test_initialized_value_initializes_first():
    v = tf.Variable(3.0)
    w = tf.Variable(v.initialized_value() + 1.0)
    with tf.Session() as sess:
        sess.run(w.initializer)
        assert (sess.run(w), sess.run(v)) == (4.0, 3.0)


def test_variables_convert_to_tensors_in_operators_and_ops():
    v = tf.Variable(2.0)
    w = tf.Variable(3.0)
    total = tf.add(v, w)
    with _initialized_session() as sess:
        assert sess.run([v + w, 1.0 + v, total]) == [5.0, 3.0, 5.0]
    with pytest.raises(TypeError, match="not iterable"):
        iter(v)


# -- collections and initialization ops -------------------------------------------------------------


def test_collections_and_trainable_variables():
    a = tf.Variable(1.0, name="a")
    b = tf.Variable(1.0, name="b", trainable=False)
    c = tf.Variable(1.0, name="c", collections=[tf.GraphKeys.LOCAL_VARIABLES], trainable=False)
    with tf.name_scope("s"):
        d = tf.Variable(1.0, name="d")
    assert tf.global_variables() == [a, b, d]
    assert tf.trainable_variables() == [a, d]
    assert tf.local_variables() == [c]
    assert tf.global_variables("s") == [d]
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        assert sess.run(c) == 1.0
        with pytest.raises(tf.errors.FailedPreconditionError):
            sess.run(a)


def test_global_variables_initializer_is_an_op_named_init_even_without_variables():
    init = tf.global_variables_initializer()
    assert isinstance(init, tf.Operation) and init.name == "init"
    with tf.Session() as sess:
        assert sess.run(init) is None
    v = tf.Variable(1.0)
    init = tf.initialize_all_variables()
    assert init.name == "init_1" and v.initializer in init.control_inputs


def test_is_variable_initialized_and_report_uninitialized_variables():
    a = tf.Variable(1.0, name="a")
    with tf.variable_scope("s"):
        b = tf.get_variable("b", [2], initializer=tf.zeros_initializer())
    flag = tf.is_variable_initialized(a)
    report = tf.report_uninitialized_variables()
    assert report.dtype is tf.string and report.shape.as_list() == [None]
    with tf.Session() as sess:
        assert not sess.run(flag)
        assert sess.run(report).tolist() == [b"a", b"s/b"]
        sess.run(a.initializer)
        assert sess.run(flag)
        assert sess.run(report).tolist() == [b"s/b"]
        assert sess.run(tf.report_uninitialized_variables([a])).tolist() == []
        sess.run(b.initializer)
        assert sess.run(report).tolist() == []
        assert sess.run(tf.report_uninitialized_variables([])).tolist() == []


# -- variable scopes --------------------------------------------------------------------------------


def test_get_variable_names_come_from_variable_scopes_only():
    with tf.name_scope("ns"):
        with tf.variable_scope("scope"):
            w = tf.get_variable("w", [1])
            c = tf.constant(1.0, name="c")
    assert w.op.name == "scope/w" and c.op.name == "ns/scope/c"
    with tf.variable_scope("scope", reuse=True):
        assert tf.get_variable("w", [1]) is w


def test_reentering_a_scope_by_name_opens_a_new_name_scope():
    names = []
    for reuse in (None, True):
        with tf.variable_scope("scope", reuse=reuse):
            names.append((tf.get_variable("w", [1]).name, tf.constant(1.0, name="c").op.name))
    assert names == [("scope/w:0", "scope/c"), ("scope/w:0", "scope_1/c")]


def test_creating_a_variable_twice_without_reuse_is_an_error():
    with tf.variable_scope("scope"):
        tf.get_variable("w", [1])
    with pytest.raises(ValueError) as info, tf.variable_scope("scope"):
        tf.get_variable("w", [1])
    assert str(info.value) == ("Variable scope/w already exists, disallowed. Did you mean to set reuse=True or "
                               "reuse=tf.AUTO_REUSE in VarScope?")


def test_reusing_a_missing_variable_is_an_error():
    with pytest.raises(ValueError) as info, tf.variable_scope("scope", reuse=True):
        tf.get_variable("w", [1])
    assert str(info.value) == ("Variable scope/w does not exist, or was not created with tf.get_variable(). "
                               "Did you mean to set reuse=tf.AUTO_REUSE in VarScope?")
    tf.Variable(1.0, name="scope/v")
    with pytest.raises(ValueError, match="does not exist"), tf.variable_scope("scope", reuse=True):
        tf.get_variable("v", [])


def test_reuse_checks_shape_and_dtype():
    with tf.variable_scope("s"):
        tf.get_variable("w", [2, 3])
    with tf.variable_scope("s", reuse=True):
        assert tf.get_variable("w").shape == tf.TensorShape([2, 3])
        with pytest.raises(ValueError, match="Trying to share variable s/w, but specified shape"):
            tf.get_variable("w", [3, 2])
        with pytest.raises(ValueError, match="specified dtype int32 and found dtype float32"):
            tf.get_variable("w", [2, 3], dtype=tf.int32)


def test_auto_reuse_creates_then_reuses():
    def layer():
        with tf.variable_scope("layer", reuse=tf.AUTO_REUSE):
            return tf.get_variable("w", [2])
    assert layer() is layer()
    assert len(tf.global_variables()) == 1


def test_reuse_is_inherited_and_reuse_variables_turns_it_on():
    with tf.variable_scope("a") as scope:
        w = tf.get_variable("inner/w", [1])
        assert scope.reuse is False
        scope.reuse_variables()
        assert tf.get_variable("inner/w", [1]) is w
        with tf.variable_scope("inner", reuse=False) as inner:
            assert inner.reuse is True and tf.get_variable("w", [1]) is w
    with tf.variable_scope("b", reuse=True):
        with tf.variable_scope("c") as inner:
            assert inner.reuse is True


def test_reentering_a_scope_object():
    with tf.variable_scope("model") as scope:
        w = tf.get_variable("w", [1])
    assert scope.name == "model" and scope.original_name_scope == "model/"
    with tf.variable_scope("other"):
        with tf.variable_scope(scope, reuse=True) as again:
            assert again.name == "model" and again.original_name_scope == "model/"
            assert tf.get_variable("w", [1]) is w
            assert tf.get_variable_scope() is again
            assert tf.constant(0, name="c").op.name == "other/model/c"
    assert tf.get_variable_scope().name == ""


def test_default_names_are_made_unique():
    names = []
    for _ in range(3):
        with tf.variable_scope(None, default_name="dense") as scope:
            names.append((scope.name, tf.get_variable("w", [1]).op.name))
    assert names == [("dense", "dense/w"), ("dense_1", "dense_1/w"), ("dense_2", "dense_2/w")]
    with pytest.raises(TypeError, match="name_or_scope is required"):
        tf.variable_scope(None)
    with pytest.raises(ValueError, match="reuse=True cannot be used without a name_or_scope"):
        tf.variable_scope(None, default_name="x", reuse=True)


def test_scope_initializer_and_dtype_are_defaults_for_get_variable():
    with tf.variable_scope("s", initializer=tf.constant_initializer(0.5), dtype=tf.float64):
        w = tf.get_variable("w", [2])
        with tf.variable_scope("inner"):
            u = tf.get_variable("u", [1], initializer=tf.ones_initializer())
    with _initialized_session() as sess:
        w_value, u_value = sess.run([w, u])
    assert w.dtype is tf.float64 and u.dtype is tf.float64
    np.testing.assert_array_equal(w_value, [0.5, 0.5])
    np.testing.assert_array_equal(u_value, [1.0])


def test_get_variable_with_a_value_initializer_and_trainable_flags():
    w = tf.get_variable("w", initializer=tf.constant([1, 2]))
    b = tf.get_variable("b", initializer=np.zeros([2], np.float64), trainable=False)
    local = tf.get_local_variable("step", [], dtype=tf.int64)
    assert w.dtype is tf.int32 and w.shape == tf.TensorShape([2]) and b.dtype is tf.float64
    assert tf.trainable_variables() == [w] and tf.local_variables() == [local]
    with pytest.raises(ValueError, match="do not specify shape"):
        tf.get_variable("x", [2], initializer=[1.0, 2.0])
    with pytest.raises(ValueError, match="don't match"):
        tf.get_variable("y", dtype=tf.int32, initializer=[1.0, 2.0])
    with pytest.raises(ValueError, match="initializer passed is not valid"):
        tf.get_variable("z", initializer=tf.zeros_initializer())


def test_get_variable_default_initializers():
    w = tf.get_variable("w", [30, 70])
    n = tf.get_variable("n", [3], dtype=tf.int32)
    flag = tf.get_variable("flag", [2], dtype=tf.bool)
    with _initialized_session() as sess:
        w_value, n_value, flag_value = sess.run([w, n, flag])
    limit = math.sqrt(6.0 / (30 + 70))
    assert np.abs(w_value).max() <= limit and np.abs(w_value).max() > 0.9 * limit
    assert abs(w_value.std() - limit / math.sqrt(3.0)) < 0.1 * limit
    np.testing.assert_array_equal(n_value, [0, 0, 0])
    np.testing.assert_array_equal(flag_value, [False, False])
    with pytest.raises(ValueError, match="initializer for variable c of complex64 is required"):
        tf.get_variable("c", [1], dtype=tf.complex64)


def test_regularizer_losses_and_custom_getters():
    def getter(next_getter, name, *args, **kwargs):
        seen.append(name)
        return next_getter(name, *args, **kwargs)

    seen = []
    with tf.variable_scope("s", regularizer=lambda v: tf.add(v, 1.0), custom_getter=getter):
        w = tf.get_variable("w", [])
    (loss,) = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert seen == ["s/w"] and loss.op.name.startswith("s/w/Regularizer/")
    with _initialized_session(w) as sess:
        assert sess.run(loss) == sess.run(w) + 1.0


# -- initializers -----------------------------------------------------------------------------------


def _sample(initializer, shape, dtype=tf.float32):
    with tf.Session() as sess:
        return sess.run(initializer(shape, dtype=dtype))


def test_constant_initializers():
    np.testing.assert_array_equal(_sample(tf.zeros_initializer(), [2, 2]), np.zeros([2, 2]))
    assert _sample(tf.ones_initializer(dtype=tf.int32), [3], None).dtype == np.int32
    np.testing.assert_array_equal(_sample(tf.constant_initializer(7.0), [2]), [7.0, 7.0])
    np.testing.assert_array_equal(_sample(tf.constant_initializer([1, 2, 3, 4]), [2, 2]), [[1, 2], [3, 4]])
    np.testing.assert_array_equal(_sample(tf.initializers.zeros(), [1], tf.string), [b""])


def test_random_initializers_have_the_right_distributions():
    normal = _sample(tf.random_normal_initializer(1.0, 2.0, seed=1), [20000])
    assert abs(normal.mean() - 1.0) < 0.1 and abs(normal.std() - 2.0) < 0.1
    uniform = _sample(tf.random_uniform_initializer(-3.0, 5.0, seed=2), [20000])
    assert uniform.min() >= -3.0 and uniform.max() < 5.0 and abs(uniform.mean() - 1.0) < 0.1
    truncated = _sample(tf.truncated_normal_initializer(0.0, 0.5, seed=3), [20000])
    assert np.abs(truncated).max() <= 1.0 and abs(truncated.std() - 0.5 * 0.8796) < 0.02


def test_glorot_and_variance_scaling_use_tf_fans():
    assert tf.initializers.variance_scaling is tf.variance_scaling_initializer
    from tfnb.ops.init_ops import compute_fans
    assert compute_fans([3, 3, 16, 32]) == (144, 288) and compute_fans([5]) == (5, 5) and compute_fans([]) == (1, 1)
    glorot = _sample(tf.initializers.glorot_normal(seed=4), [100, 300])
    assert abs(glorot.std() - math.sqrt(2.0 / 400)) < 0.05 * math.sqrt(2.0 / 400)
    assert np.abs(glorot).max() <= 2 * math.sqrt(2.0 / 400) / 0.87962566103423978 + 1e-6
    conv = _sample(tf.glorot_uniform_initializer(seed=5), [3, 3, 16, 32])
    limit = math.sqrt(6.0 / (144 + 288))
    assert np.abs(conv).max() <= limit and np.abs(conv).max() > 0.9 * limit
    he = _sample(tf.variance_scaling_initializer(2.0, "fan_in", "untruncated_normal", seed=6), [200, 100])
    assert abs(he.std() - math.sqrt(2.0 / 200)) < 0.05 * math.sqrt(2.0 / 200)
    with pytest.raises(ValueError, match="Invalid `mode`"):
        tf.variance_scaling_initializer(mode="fan_max")
    with pytest.raises(ValueError, match="Expected floating point type"):
        tf.glorot_uniform_initializer()([2, 2], dtype=tf.int32)
