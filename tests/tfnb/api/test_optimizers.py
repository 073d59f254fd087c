"""Optimizers against NumPy re-implementations of TF1's update rules; global step, schedules, L-BFGS."""

import numpy as np
import pytest

import tfnb as tf

STEPS = 5
RNG = np.random.default_rng(7)
A = RNG.normal(size=(4, 3))
B = RNG.normal(size=(4, 2))
X0 = RNG.normal(size=(3, 2))


# -- NumPy references, written from the documented formulas --------------------------------------
# Each takes (var, slots, grad, t) with t the 1-based step and returns the new (var, slots). As in TF,
# Python hyperparameters become float32 tensors before they are cast to the variable's dtype.


def f32(*values):
    return [float(np.float32(v)) for v in values]


def sgd(lr):
    lr, = f32(lr)
    return lambda var, slots, g, t: (var - lr * g, slots)


def momentum(lr, mu, nesterov=False):
    lr, mu = f32(lr, mu)
    def step(var, slots, g, t):
        accum = mu * slots["momentum"] + g
        var = var - lr * (g + mu * accum) if nesterov else var - lr * accum
        return var, {"momentum": accum}
    return step


def adagrad(lr):
    lr, = f32(lr)
    def step(var, slots, g, t):
        accum = slots["accumulator"] + g * g
        return var - lr * g / np.sqrt(accum), {"accumulator": accum}
    return step


def adadelta(lr, rho, eps):
    lr, rho, eps = f32(lr, rho, eps)
    def step(var, slots, g, t):
        accum = rho * slots["accum"] + (1 - rho) * g * g
        update = np.sqrt(slots["accum_update"] + eps) / np.sqrt(accum + eps) * g
        accum_update = rho * slots["accum_update"] + (1 - rho) * update * update
        return var - lr * update, {"accum": accum, "accum_update": accum_update}
    return step


def rmsprop(lr, decay, mu, eps, centered=False):
    lr, decay, mu, eps = f32(lr, decay, mu, eps)
    def step(var, slots, g, t):
        ms = decay * slots["rms"] + (1 - decay) * g * g
        new = {"rms": ms}
        denominator = ms + eps
        if centered:
            new["mg"] = decay * slots["mg"] + (1 - decay) * g
            denominator = ms - new["mg"] ** 2 + eps
        new["momentum"] = mu * slots["momentum"] + lr * g / np.sqrt(denominator)
        return var - new["momentum"], new
    return step


def adam(lr, beta1, beta2, eps):
    """beta1^t and beta2^t are float32 variables, multiplied by float32 beta1 and beta2 after each step."""
    lr, eps = f32(lr, eps)

    def power(beta, t):
        result = np.float32(beta)
        for _ in range(t - 1):
            result = result * np.float32(beta)
        return float(result)

    beta1, beta2 = f32(beta1, beta2)

    def step(var, slots, g, t):
        lr_t = lr * np.sqrt(1 - power(beta2, t)) / (1 - power(beta1, t))
        m = beta1 * slots["m"] + (1 - beta1) * g
        v = beta2 * slots["v"] + (1 - beta2) * g * g
        return var - lr_t * m / (np.sqrt(v) + eps), {"m": m, "v": v}
    return step


# name: (optimizer factory, reference step, initial slot values as multiples of ones)
CASES = {
    "sgd": (lambda: tf.train.GradientDescentOptimizer(0.1), sgd(0.1), {}),
    "momentum": (lambda: tf.train.MomentumOptimizer(0.05, 0.9), momentum(0.05, 0.9), {"momentum": 0.0}),
    "nesterov": (lambda: tf.train.MomentumOptimizer(0.05, 0.9, use_nesterov=True), momentum(0.05, 0.9, True),
                 {"momentum": 0.0}),
    "adagrad": (lambda: tf.train.AdagradOptimizer(0.3), adagrad(0.3), {"accumulator": 0.1}),
    "adagrad_initial": (lambda: tf.train.AdagradOptimizer(0.3, initial_accumulator_value=2.0), adagrad(0.3),
                        {"accumulator": 2.0}),
    "adadelta_defaults": (lambda: tf.train.AdadeltaOptimizer(), adadelta(0.001, 0.95, 1e-8),
                          {"accum": 0.0, "accum_update": 0.0}),
    "adadelta": (lambda: tf.train.AdadeltaOptimizer(1.0, rho=0.9, epsilon=1e-6), adadelta(1.0, 0.9, 1e-6),
                 {"accum": 0.0, "accum_update": 0.0}),
    "rmsprop": (lambda: tf.train.RMSPropOptimizer(0.01), rmsprop(0.01, 0.9, 0.0, 1e-10),
                {"rms": 1.0, "momentum": 0.0}),
    "rmsprop_momentum": (lambda: tf.train.RMSPropOptimizer(0.01, decay=0.8, momentum=0.5, epsilon=1e-3),
                         rmsprop(0.01, 0.8, 0.5, 1e-3), {"rms": 1.0, "momentum": 0.0}),
    "rmsprop_centered": (lambda: tf.train.RMSPropOptimizer(0.01, momentum=0.5, centered=True),
                         rmsprop(0.01, 0.9, 0.5, 1e-10, centered=True), {"rms": 1.0, "mg": 0.0, "momentum": 0.0}),
    "adam": (lambda: tf.train.AdamOptimizer(0.1), adam(0.1, 0.9, 0.999, 1e-8), {"m": 0.0, "v": 0.0}),
    "adam_defaults": (lambda: tf.train.AdamOptimizer(), adam(0.001, 0.9, 0.999, 1e-8), {"m": 0.0, "v": 0.0}),
    "adam_betas": (lambda: tf.train.AdamOptimizer(0.05, beta1=0.5, beta2=0.9, epsilon=1e-3),
                   adam(0.05, 0.5, 0.9, 1e-3), {"m": 0.0, "v": 0.0}),
}
SPARSE_CASES = ["sgd", "momentum", "nesterov", "adagrad", "adadelta", "rmsprop_momentum", "rmsprop_centered", "adam"]


def least_squares_gradient(x):
    """The gradient of 0.5 * ||A x - B||^2, built from forward ops only."""
    a, b = tf.constant(A), tf.constant(B)
    return tf.matmul(a, tf.matmul(a, x) - b, transpose_a=True)


def reference_dense(step, initial_slots):
    var, slots = X0.copy(), {name: np.full(X0.shape, value) for name, value in initial_slots.items()}
    for t in range(1, STEPS + 1):
        var, slots = step(var, slots, A.T @ (A @ var - B), t)
    return var, slots


def run(optimizer, variable, grads_and_vars, slot_names, feeds=lambda step: {}):
    train = optimizer.apply_gradients(grads_and_vars)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(STEPS):
            sess.run(train, feeds(step))
        return sess.run(variable), {name: sess.run(optimizer.get_slot(variable, name)) for name in slot_names}


@pytest.mark.parametrize("case", sorted(CASES))
def test_dense_updates_match_tf1_rules(case):
    make, step, initial_slots = CASES[case]
    x = tf.Variable(X0, name="x")
    var, slots = run(make(), x, [(least_squares_gradient(x), x)], initial_slots)
    expected_var, expected_slots = reference_dense(step, initial_slots)
    np.testing.assert_allclose(var, expected_var, rtol=1e-12, atol=1e-14)
    for name in initial_slots:
        np.testing.assert_allclose(slots[name], expected_slots[name], rtol=1e-12, atol=1e-14, err_msg=name)


def test_float32_adam_matches_in_float32_precision():
    make, step, initial_slots = CASES["adam"]
    x = tf.Variable(X0.astype(np.float32), name="x")
    var, slots = run(make(), x, [(tf.cast(least_squares_gradient(tf.cast(x, tf.float64)), tf.float32), x)],
                     initial_slots)
    assert var.dtype == np.float32 and slots["m"].dtype == np.float32
    np.testing.assert_allclose(var, reference_dense(step, initial_slots)[0], rtol=1e-5, atol=1e-6)


EMBEDDING = RNG.normal(size=(6, 2))
TARGETS = RNG.normal(size=(6, 2))
# The rows looked up at each step: a row missed at some step shows that sparse rules leave it alone
# there, and repeated rows that their gradients add up.
IDS = [[4, 1, 4, 0], [1, 2], [4, 4, 5], [0, 2, 1], [5]]


def reference_sparse(case, step, initial_slots):
    """Sparse rules touch only the looked-up rows, with repeated ids summed; TF1's Adam decays every row."""
    var = EMBEDDING.copy()
    slots = {name: np.full(var.shape, value) for name, value in initial_slots.items()}
    for t, ids in enumerate(IDS, start=1):
        rows = np.unique(ids)
        dense = np.zeros_like(var)
        np.add.at(dense, ids, var[ids] - TARGETS[ids])
        if case == "adam":
            var, slots = step(var, slots, dense, t)
            continue
        new_rows, new_slots = step(var[rows], {n: s[rows] for n, s in slots.items()}, dense[rows], t)
        var[rows] = new_rows
        for name, value in new_slots.items():
            slots[name][rows] = value
    return var, slots


@pytest.mark.parametrize("case", SPARSE_CASES)
def test_sparse_updates_match_tf1_rules(case):
    make, step, initial_slots = CASES[case]
    embedding = tf.Variable(EMBEDDING, name="embedding")
    ids = tf.placeholder(tf.int64, [None])
    # The gradient of 0.5 * ||rows - targets||^2 with respect to the looked-up rows.
    rows = tf.gather(embedding, ids) - tf.gather(tf.constant(TARGETS), ids)
    grad = tf.IndexedSlices(rows, ids, tf.constant([6, 2]))
    var, slots = run(make(), embedding, [(grad, embedding)], initial_slots, lambda step: {ids: IDS[step]})
    assert any(op.type.startswith("ResourceSparseApply") for op in tf.get_default_graph().get_operations())
    expected_var, expected_slots = reference_sparse(case, step, initial_slots)
    np.testing.assert_allclose(var, expected_var, rtol=1e-12, atol=1e-14)
    for name in initial_slots:
        np.testing.assert_allclose(slots[name], expected_slots[name], rtol=1e-12, atol=1e-14, err_msg=name)


def test_gather_gradient_is_applied_sparsely():
    embedding = tf.Variable(np.ones((5, 3)), name="embedding")
    weights = tf.constant(np.arange(12.0).reshape(4, 3))
    loss = tf.gather(embedding, tf.constant([3, 0, 3, 1])) * weights
    optimizer = tf.train.GradientDescentOptimizer(0.5)
    (grad, _), = optimizer.compute_gradients(loss, [embedding])
    assert isinstance(grad, tf.IndexedSlices)
    train = optimizer.apply_gradients([(grad, embedding)])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        value = sess.run(embedding)
    expected = np.ones((5, 3))
    np.subtract.at(expected, [3, 0, 3, 1], 0.5 * np.arange(12.0).reshape(4, 3))
    np.testing.assert_allclose(value, expected)


def test_sparse_index_out_of_range_fails_the_run():
    embedding = tf.Variable(np.zeros((3, 2)), name="embedding")
    grad = tf.IndexedSlices(tf.constant(np.ones((1, 2))), tf.constant([3]), tf.constant([3, 2]))
    train = tf.train.MomentumOptimizer(0.1, 0.9).apply_gradients([(grad, embedding)])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
            sess.run(train)


# -- the Optimizer API --------------------------------------------------------------------------


def test_minimize_increments_the_global_step_after_the_update():
    x = tf.Variable([1.0, -2.0], name="x")
    global_step = tf.train.get_or_create_global_step()
    train = tf.train.GradientDescentOptimizer(0.25).minimize(tf.reduce_sum(tf.square(x)), global_step=global_step)
    assert train.name == "GradientDescent"
    assert train in tf.get_collection(tf.GraphKeys.TRAIN_OP)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run(train)
        assert tf.train.global_step(sess, global_step) == 3
        np.testing.assert_allclose(sess.run(x), np.array([1.0, -2.0]) * 0.5 ** 3)


def test_minimize_default_var_list_is_the_trainable_variables():
    x = tf.Variable(3.0, name="x")
    frozen = tf.Variable(5.0, name="frozen", trainable=False)
    optimizer = tf.train.GradientDescentOptimizer(0.5)
    assert [v for _, v in optimizer.compute_gradients(x * frozen)] == [x]
    train = optimizer.minimize(x * frozen)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        assert sess.run([x, frozen]) == [0.5, 5.0]


def test_apply_gradients_skips_none_gradients():
    x, y = tf.Variable(1.0, name="x"), tf.Variable(1.0, name="y")
    optimizer = tf.train.MomentumOptimizer(0.5, 0.9)
    train = optimizer.apply_gradients([(None, x), (tf.constant(2.0), y)])
    assert optimizer.get_slot(x, "momentum") is None
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        assert sess.run([x, y]) == [1.0, 0.0]


def test_no_gradient_for_any_variable_is_an_error():
    x, unused = tf.Variable(1.0, name="x"), tf.Variable(1.0, name="unused")
    optimizer = tf.train.GradientDescentOptimizer(0.1)
    with pytest.raises(ValueError, match="No gradients provided for any variable"):
        optimizer.apply_gradients([(None, x)])
    with pytest.raises(ValueError, match="No gradients provided for any variable"):
        optimizer.minimize(x * 2.0, var_list=[unused])
    with pytest.raises(ValueError, match="No variables to optimize"):
        optimizer.compute_gradients(tf.constant(1.0), var_list=[])
    with pytest.raises(ValueError, match="Invalid type int32"):
        optimizer.compute_gradients(tf.constant(1), var_list=[x])


def test_slots_are_named_like_tf_non_trainable_and_colocated():
    x = tf.Variable(np.zeros((2, 3), np.float32), name="layer/x")
    optimizer = tf.train.AdamOptimizer()
    optimizer.minimize(tf.reduce_sum(tf.square(x)))
    assert optimizer.get_slot_names() == ["m", "v"]
    m, v = optimizer.get_slot(x, "m"), optimizer.get_slot(x, "v")
    assert (m.name, v.name) == ("layer/x/Adam:0", "layer/x/Adam_1:0")
    assert m.shape == x.shape and m.dtype == tf.float32
    assert [var.name for var in optimizer.variables()] == ["beta1_power:0", "beta2_power:0", "layer/x/Adam:0",
                                                          "layer/x/Adam_1:0"]
    assert tf.trainable_variables() == [x]
    assert set(optimizer.variables()) <= set(tf.global_variables())
    assert m.op.colocation_groups() == [b"loc:@layer/x"]
    assert optimizer.get_slot(x, "nonexistent") is None


def test_centered_rmsprop_slot_names():
    x = tf.Variable([1.0], name="x")
    optimizer = tf.train.RMSPropOptimizer(0.1, centered=True)
    optimizer.apply_gradients([(tf.constant([1.0]), x)])
    assert optimizer.get_slot_names() == ["mg", "momentum", "rms"]
    assert [optimizer.get_slot(x, n).op.name for n in ("rms", "mg", "momentum")] == ["x/RMSProp", "x/RMSProp_1",
                                                                                   "x/RMSProp_2"]


def test_gate_graph_gives_the_same_update():
    x = tf.Variable(X0, name="x")
    loss = tf.reduce_sum(tf.square(tf.matmul(tf.constant(A), x) - tf.constant(B))) * 0.5
    optimizer = tf.train.GradientDescentOptimizer(0.125)
    train = optimizer.minimize(loss, gate_gradients=tf.train.Optimizer.GATE_GRAPH)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        np.testing.assert_allclose(sess.run(x), X0 - 0.125 * A.T @ (A @ X0 - B), rtol=1e-12)


def test_adagrad_needs_a_positive_initial_accumulator():
    with pytest.raises(ValueError, match="initial_accumulator_value must be positive"):
        tf.train.AdagradOptimizer(0.1, initial_accumulator_value=0.0)


def test_update_ops_check_shapes_and_dtypes_when_built():
    x = tf.Variable(np.zeros((2, 3)), name="x")
    optimizer = tf.train.GradientDescentOptimizer(0.1)
    with pytest.raises(ValueError, match="same shape"):
        optimizer.apply_gradients([(tf.constant(np.zeros((3, 2))), x)])
    with pytest.raises(TypeError, match="dtype"):
        optimizer.apply_gradients([(tf.constant(np.zeros((2, 3), np.float32)), x)])


def test_uninitialized_slot_fails_the_run():
    x = tf.Variable([1.0], name="x")
    optimizer = tf.train.AdagradOptimizer(0.1)
    train = optimizer.apply_gradients([(tf.constant([1.0]), x)])
    with tf.Session() as sess:
        sess.run(x.initializer)
        with pytest.raises(tf.errors.FailedPreconditionError, match="x/Adagrad"):
            sess.run(train)


# -- learning rates --------------------------------------------------------------------------------


def test_learning_rate_may_be_a_tensor_or_a_callable():
    rate = tf.placeholder(tf.float64, [])
    x = tf.Variable(1.0, dtype=tf.float64, name="x")
    by_tensor = tf.train.GradientDescentOptimizer(rate).apply_gradients([(tf.constant(1.0, tf.float64), x)])
    by_callable = tf.train.GradientDescentOptimizer(lambda: 0.25).apply_gradients([(tf.constant(1.0, tf.float64), x)])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(by_tensor, {rate: 0.5})
        sess.run(by_tensor, {rate: 0.125})
        sess.run(by_callable)
        assert sess.run(x) == 1.0 - 0.5 - 0.125 - 0.25


def schedule_values(build, steps):
    """The schedule's value at each of `steps`, the global step assigned in between."""
    global_step = tf.train.get_or_create_global_step()
    value = build(global_step)
    step = tf.placeholder(tf.int64, [])
    assign = global_step.assign(step)
    with tf.Session() as sess:
        results = []
        for s in steps:
            sess.run(assign, {step: s})
            results.append(sess.run(value))
        return np.array(results)


STEPS_TO_CHECK = [0, 1, 9, 10, 11, 25, 100]


def test_exponential_decay_staircase_and_smooth():
    steps = np.array(STEPS_TO_CHECK, np.float64)
    smooth = schedule_values(lambda gs: tf.train.exponential_decay(0.1, gs, 10, 0.5), steps.astype(int))
    stairs = schedule_values(lambda gs: tf.train.exponential_decay(0.1, gs, 10, 0.5, staircase=True),
                             steps.astype(int))
    np.testing.assert_allclose(smooth, 0.1 * 0.5 ** (steps / 10), rtol=1e-6)
    np.testing.assert_allclose(stairs, 0.1 * 0.5 ** np.floor(steps / 10), rtol=1e-6)
    assert smooth.dtype == np.float32


def test_piecewise_constant():
    values = schedule_values(lambda gs: tf.train.piecewise_constant(gs, [10, 20], [1.0, 0.5, 0.1]),
                             [0, 10, 11, 20, 21, 1000])
    np.testing.assert_allclose(values, [1.0, 1.0, 0.5, 0.5, 0.1, 0.1])
    with pytest.raises(ValueError, match="1 less than"):
        tf.train.piecewise_constant(tf.constant(0), [1, 2], [1.0, 0.5])
    with pytest.raises(ValueError, match="same dtype as x"):
        tf.train.piecewise_constant(tf.constant(0.0), [1], [1.0, 0.5])


def test_inverse_time_and_polynomial_decay():
    steps = np.array(STEPS_TO_CHECK, np.float64)
    inverse = schedule_values(lambda gs: tf.train.inverse_time_decay(0.1, gs, 10, 0.5, staircase=True), steps.astype(int))
    np.testing.assert_allclose(inverse, 0.1 / (1 + 0.5 * np.floor(steps / 10)), rtol=1e-6)
    tf.reset_default_graph()
    polynomial = schedule_values(lambda gs: tf.train.polynomial_decay(0.1, gs, 20, 0.01, power=2.0),
                                 steps.astype(int))
    np.testing.assert_allclose(polynomial, 0.09 * (1 - np.minimum(steps, 20) / 20) ** 2 + 0.01, rtol=1e-6)
    tf.reset_default_graph()
    cycled = schedule_values(lambda gs: tf.train.polynomial_decay(0.1, gs, 20, 0.01, cycle=True), steps.astype(int))
    periods = 20 * np.maximum(np.ceil(steps / 20), 1)
    np.testing.assert_allclose(cycled, 0.09 * (1 - steps / periods) + 0.01, rtol=1e-6)


def test_schedule_drives_an_optimizer():
    global_step = tf.train.get_or_create_global_step()
    rate = tf.train.exponential_decay(1.0, global_step, 2, 0.5, staircase=True)
    x = tf.Variable(0.0, name="x")
    train = tf.train.GradientDescentOptimizer(rate).minimize(-x, global_step=global_step)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(5):
            sess.run(train)
        assert sess.run(x) == pytest.approx(1 + 1 + 0.5 + 0.5 + 0.25)


# -- global step ---------------------------------------------------------------------------------


def test_global_step_is_one_int64_scalar_variable():
    assert tf.train.get_global_step() is None
    global_step = tf.train.get_or_create_global_step()
    assert global_step.op.name == "global_step" and global_step.dtype == tf.int64 and global_step.shape == []
    assert tf.get_collection(tf.GraphKeys.GLOBAL_STEP) == [global_step]
    assert global_step not in tf.trainable_variables() and global_step in tf.global_variables()
    assert tf.train.get_or_create_global_step() is global_step
    assert tf.train.get_global_step() is global_step
    with pytest.raises(ValueError, match="already exists"):
        tf.train.create_global_step()
    with tf.Session() as sess:
        sess.run(global_step.initializer)
        assert tf.train.global_step(sess, global_step) == 0


def test_a_variable_named_global_step_is_found():
    step = tf.Variable(0, name="global_step", trainable=False)
    assert tf.train.get_global_step() is step
    tf.reset_default_graph()
    tf.Variable(0.5, name="global_step")
    with pytest.raises(TypeError, match="integer type"):
        tf.train.get_global_step()


# -- in-place updates --------------------------------------------------------------------------------


def test_updates_write_into_the_stored_arrays():
    x = tf.Variable(X0, name="x")
    train = tf.train.AdamOptimizer(0.1).apply_gradients([(least_squares_gradient(x), x)])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        store = sess.resources.container("")
        sess.run(train)
        stored = {name: id(store[name]) for name in ("x", "x/Adam", "x/Adam_1")}
        for _ in range(3):
            sess.run(train)
        assert {name: id(store[name]) for name in stored} == stored


def test_a_fetched_value_is_not_changed_by_later_steps():
    x = tf.Variable(X0, name="x")
    train = tf.train.MomentumOptimizer(0.1, 0.9).apply_gradients([(least_squares_gradient(x), x)])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        before = sess.run(x)
        read, _ = sess.run([x.value(), train])  # the read runs before the update
        sess.run(train)
        np.testing.assert_array_equal(before, X0)
        np.testing.assert_array_equal(read, X0)
        assert not np.array_equal(sess.run(x), X0)


# -- L-BFGS through scipy ----------------------------------------------------------------------------


def test_scipy_lbfgs_solves_least_squares():
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(8, 3)), rng.normal(size=(8, 2))
    w = tf.Variable(np.zeros((3, 2)), name="w")
    c = tf.Variable(np.zeros(2), name="c")
    loss = tf.reduce_sum(tf.square(tf.matmul(tf.constant(a), w) + c - tf.constant(b)))
    optimizer = tf.contrib.opt.ScipyOptimizerInterface(loss, options={"ftol": 1e-15, "gtol": 1e-12})
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        optimizer.minimize(sess, fetches=[loss], loss_callback=losses.append)
        solved_w, solved_c = sess.run([w, c])
    design = np.hstack([a, np.ones((8, 1))])
    solution = np.linalg.lstsq(design, b, rcond=None)[0]
    np.testing.assert_allclose(solved_w, solution[:3], atol=1e-6)
    np.testing.assert_allclose(solved_c, solution[3], atol=1e-6)
    assert losses[0] == pytest.approx(np.sum(b ** 2)) and losses[-1] < losses[0]


def test_scipy_bounds_and_variables_unchanged_until_the_end():
    x = tf.Variable([0.0, 0.0], name="x")
    loss = tf.reduce_sum(tf.square(x - tf.constant([3.0, -3.0])))
    optimizer = tf.contrib.opt.ScipyOptimizerInterface(loss, var_to_bounds={x: (-1.0, 1.0)})
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        stored, seen = sess.resources.container(""), []
        optimizer.minimize(sess, loss_callback=lambda: seen.append(stored["x"].copy()))
        assert len(seen) > 1 and all(np.array_equal(value, [0.0, 0.0]) for value in seen)
        np.testing.assert_allclose(sess.run(x), [1.0, -1.0], atol=1e-6)
