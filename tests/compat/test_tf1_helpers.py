"""The ops and helpers that published TF1 programs lean on, run under TensorFlow and under tfnb: in_top_k, selu,
weighted cross entropy, xw_plus_b, arg_min/arg_max, eye, linspace, clipping by norm, confusion matrices,
sampled losses (with fixed samples, so values compare), moving averages, unconnected gradients, feedability."""

from __future__ import annotations

import numpy as np
from program_registry import (
    LOGITS,
    X23,
    Programs,
    run,
    shapes,
    test_program_does_what_tensorflow_does,  # noqa: F401 (pytest collects it from here)
)

PROGRAMS = Programs()
program = PROGRAMS.register

RNG = np.random.RandomState(5)
EMBEDDINGS = RNG.uniform(-1, 1, (6, 3)).astype(np.float32)
INPUTS = RNG.uniform(-1, 1, (4, 3)).astype(np.float32)


@program
def in_top_k_with_ties_and_nan(tf):
    predictions = tf.constant([[0.1, 0.5, 0.5, 0.2], [np.nan, 0.3, 0.2, 0.1], [0.4, 0.3, 0.2, 0.1]])
    targets = tf.constant([2, 1, 3])
    return run(tf, [tf.nn.in_top_k(predictions, targets, 1), tf.nn.in_top_k(predictions, targets, 2),
                    tf.math.in_top_k(predictions, tf.constant([0, 0, 0], tf.int64), 1)])


@program
def selu_values_and_gradient(tf):
    x = tf.constant([-2.0, -0.1, 0.0, 0.5, 3.0])
    y = tf.nn.selu(x)
    return run(tf, [y, tf.gradients(tf.reduce_sum(y * y), x)[0]])


@program
def weighted_cross_entropy(tf):
    logits = tf.constant([[-2.0, 0.0, 3.0], [50.0, -50.0, 1.0]])
    targets = tf.constant([[0.0, 1.0, 1.0], [1.0, 0.0, 0.5]])
    loss = tf.nn.weighted_cross_entropy_with_logits(targets, logits, 2.5)
    return run(tf, [loss, tf.gradients(tf.reduce_sum(loss), logits)[0]])


@program
def xw_plus_b_is_an_affine_map(tf):
    y = tf.nn.xw_plus_b(tf.constant(X23), tf.constant(np.ones((3, 2), np.float32)), tf.constant([0.5, -1.0]))
    return shapes(y), run(tf, y)


@program
def arg_min_and_arg_max_name_the_axis(tf):
    x = tf.constant(LOGITS)
    results = [tf.arg_max(x, 1), tf.arg_min(x, 0), tf.arg_max(x, 0, output_type=tf.int32)]
    return [r.dtype.name for r in results], run(tf, results)


@program
def eye_square_rectangular_and_batched(tf):
    results = [tf.eye(3), tf.eye(2, 4, dtype=tf.int32), tf.eye(2, batch_shape=[3]), tf.eye(tf.constant(2))]
    return shapes(*results), run(tf, results)


@program
def linspace_and_lin_space(tf):
    results = [tf.linspace(-1.0, 2.3, 7), tf.lin_space(0.0, 1.0, 1), tf.linspace(tf.constant(2.0, tf.float64), 4.0, 3)]
    return shapes(*results), run(tf, results)


@program
def clip_by_norm_and_global_norm(tf):
    a, b = tf.constant([3.0, 4.0]), tf.constant([[1.0, 2.0], [2.0, 0.0]])
    clipped, norm = tf.clip_by_global_norm([a, None, b], 2.0)
    small, same_norm = tf.clip_by_global_norm([a], 100.0)
    return run(tf, [tf.clip_by_norm(a, 1.0), tf.clip_by_norm(b, 1.0, axes=[1]), tf.clip_by_norm(tf.zeros([2]), 1.0),
                    clipped[0], clipped[2], norm, tf.global_norm([a, b]), small[0], same_norm])


@program
def clip_by_global_norm_of_sparse_gradients(tf):
    table = tf.Variable(EMBEDDINGS)
    looked_up = tf.nn.embedding_lookup(table, [1, 3, 1])
    grad = tf.gradients(tf.reduce_sum(looked_up * 3.0), table)[0]
    clipped, norm = tf.clip_by_global_norm([grad], 1.0)
    return type(clipped[0]).__name__, run(tf, [tf.convert_to_tensor(clipped[0]), norm], init=True)


@program
def clip_by_norm_gradient_at_zero_is_finite(tf):
    x = tf.zeros([3])
    return run(tf, tf.gradients(tf.reduce_sum(tf.clip_by_norm(x, 1.0)), x)[0])


@program
def confusion_matrices(tf):
    labels, predictions = tf.constant([1, 2, 4, 1]), tf.constant([2, 2, 4, 1])
    results = [tf.math.confusion_matrix(labels, predictions),
               tf.confusion_matrix(labels, predictions, num_classes=6, weights=tf.constant([1.0, 2.0, 3.0, 4.0]),
                                   dtype=tf.float32)]
    return [r.dtype.name for r in results], run(tf, results)


@program
def random_shuffle_keeps_the_rows(tf):
    shuffled = tf.random_shuffle(tf.constant(np.arange(12).reshape(6, 2)))
    return shapes(shuffled), sorted(map(tuple, run(tf, shuffled).tolist()))


def sampled(tf):
    """A fixed sample (classes 0, 5, 2) with its expected counts, so that the losses compare exactly."""
    return (tf.constant([0, 5, 2], tf.int64), tf.constant([[0.3], [0.2], [0.25], [0.4]]),
            tf.constant([0.5, 0.1, 0.35]))


@program
def nce_loss_with_a_given_sample(tf):
    weights, biases = tf.Variable(EMBEDDINGS), tf.Variable(np.linspace(-0.5, 0.5, 6).astype(np.float32))
    labels = tf.constant([[1], [2], [5], [3]])
    loss = tf.nn.nce_loss(weights, biases, labels, tf.constant(INPUTS), 3, 6, sampled_values=sampled(tf))
    grads = tf.gradients(tf.reduce_sum(loss), [weights, biases])
    return shapes(loss), run(tf, [loss] + [tf.convert_to_tensor(g) for g in grads], init=True)


@program
def nce_loss_removing_accidental_hits(tf):
    weights, biases = tf.Variable(EMBEDDINGS), tf.Variable(np.zeros(6, np.float32))
    labels = tf.constant([[1], [2], [5], [3]])
    loss = tf.nn.nce_loss(weights, biases, labels, tf.constant(INPUTS), 3, 6, sampled_values=sampled(tf),
                          remove_accidental_hits=True)
    return run(tf, loss, init=True)


@program
def sampled_softmax_loss_with_a_given_sample(tf):
    weights, biases = tf.Variable(EMBEDDINGS), tf.Variable(np.linspace(0.2, -0.3, 6).astype(np.float32))
    labels = tf.constant([[1], [2], [5], [3]], tf.int64)
    loss = tf.nn.sampled_softmax_loss(weights, biases, labels, tf.constant(INPUTS), 3, 6, sampled_values=sampled(tf))
    grads = tf.gradients(tf.reduce_mean(loss), [weights, biases])
    return shapes(loss), run(tf, [loss] + [tf.convert_to_tensor(g) for g in grads], init=True)


@program
def nce_loss_with_two_true_classes(tf):
    weights, biases = tf.Variable(EMBEDDINGS), tf.Variable(np.zeros(6, np.float32))
    labels = tf.constant([[1, 0], [2, 3], [5, 4], [3, 1]])
    values = (tf.constant([0, 5, 2], tf.int64), tf.fill([4, 2], 0.3), tf.constant([0.5, 0.1, 0.35]))
    return run(tf, tf.nn.nce_loss(weights, biases, labels, tf.constant(INPUTS), 3, 6, num_true=2,
                                  sampled_values=values), init=True)


@program
def candidate_sampler_shapes_and_ranges(tf):
    true_classes = tf.constant([[1], [3]], tf.int64)
    samples = [tf.nn.log_uniform_candidate_sampler(true_classes, 1, 5, True, 10),
               tf.nn.uniform_candidate_sampler(true_classes, 1, 8, False, 4)]
    values = run(tf, samples)
    unique = len(set(values[0][0].tolist())) == 5
    in_range = all(0 <= v < 10 for v in values[0][0]) and all(0 <= v < 4 for v in values[1][0])
    return [shapes(*s) for s in samples], unique, in_range, values[1][1], values[1][2]


@program
def exponential_moving_average(tf):
    w = tf.Variable([1.0, 2.0], name="w")
    b = tf.Variable(0.0, name="b")
    step = tf.Variable(0, trainable=False, name="step")
    ema = tf.train.ExponentialMovingAverage(0.9, num_updates=step)
    update = ema.apply([w, b])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run([w.assign([3.0, 0.0]), b.assign(1.0)])
        sess.run(update)
        sess.run(step.assign(100))
        sess.run(update)
        values = sess.run([ema.average(w), ema.average(b)])
    return (ema.average_name(w), ema.average(w).name, sorted(ema.variables_to_restore()),
            [v.name for v in tf.get_collection(tf.GraphKeys.MOVING_AVERAGE_VARIABLES)], values)


@program
def gradients_of_unconnected_tensors(tf):
    x, y = tf.constant([1.0, 2.0]), tf.constant(3.0)
    loss = tf.reduce_sum(x * 2.0)
    zero = tf.gradients(loss, [x, y], unconnected_gradients=tf.UnconnectedGradients.ZERO)
    none = tf.gradients(loss, [y], unconnected_gradients="none")
    return none, run(tf, zero)


@program
def tensors_are_feedable_unless_prevented(tf):
    x = tf.placeholder(tf.float32, [])
    y = x * 2.0
    graph = tf.get_default_graph()
    before = [graph.is_feedable(x), graph.is_feedable(y)]
    graph.prevent_feeding(y)
    return before, graph.is_feedable(y), graph.is_fetchable(y)


@program
def feeding_a_prevented_tensor_is_a_value_error(tf):
    x = tf.placeholder(tf.float32, [])
    y = x * 2.0
    tf.get_default_graph().prevent_feeding(y)
    return run(tf, y, {y: 1.0})
