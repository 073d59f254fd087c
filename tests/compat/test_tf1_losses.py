"""TF1's tf.losses, run under TensorFlow and under tfnb: the same values, names, dtypes and errors."""

from __future__ import annotations

import numpy as np
from program_registry import (
    Programs,
    described,
    run,
    test_program_does_what_tensorflow_does,  # noqa: F401 (pytest collects it from here)
)

PROGRAMS = Programs()
program = PROGRAMS.register


LABELS = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]], np.float32)
PREDS = np.array([[0.9, 0.2, 0.4], [0.1, 0.7, 0.8], [0.6, 0.3, 0.2], [0.5, 0.05, 0.99]], np.float32)
LOGITS = np.array([[2.0, -1.0, 0.5], [-0.5, 1.5, 3.0], [0.2, 0.1, -2.0], [-3.0, 0.0, 1.0]], np.float32)
ROW_WEIGHTS = np.array([[1.0], [0.0], [2.0], [0.5]], np.float32)
FULL_WEIGHTS = np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 0.0], [3.0, 1.0, 0.5], [0.0, 1.0, 1.0]], np.float32)


def _regression_losses(tf, **kwargs) -> list:
    labels, preds = tf.constant(LABELS), tf.constant(PREDS)
    return [tf.losses.absolute_difference(labels, preds, **kwargs),
            tf.losses.mean_squared_error(labels, preds, **kwargs),
            tf.losses.huber_loss(labels, preds * 3.0, delta=0.5, **kwargs),
            tf.losses.log_loss(labels, preds, **kwargs),
            tf.losses.hinge_loss(labels, tf.constant(LOGITS), **kwargs),
            tf.losses.sigmoid_cross_entropy(labels, tf.constant(LOGITS), **kwargs),
            tf.losses.softmax_cross_entropy(labels, tf.constant(LOGITS), **kwargs),
            tf.losses.sparse_softmax_cross_entropy(tf.constant([0, 2, 1, 2]), tf.constant(LOGITS), **kwargs)]


def _each_reduction(tf, weights_fn) -> list:
    results = []
    for reduction in tf.losses.Reduction.all():
        losses = _regression_losses(tf, weights=weights_fn(tf), reduction=reduction)
        results.append((described(*losses), run(tf, losses)))
    return results


# -- reductions and weights ------------------------------------------------------------------------


@program
def reduction_keys(tf):
    reduction = tf.losses.Reduction
    return list(reduction.all()), reduction.SUM_OVER_NONZERO_WEIGHTS, reduction.SUM_BY_NONZERO_WEIGHTS


@program
def invalid_reduction_is_a_value_error(tf):
    return tf.losses.mean_squared_error(tf.constant(LABELS), tf.constant(PREDS), reduction="mean")


@program
def validate_rejects_unknown_keys(tf):
    return tf.losses.Reduction.validate("weighted_sum_by_batch")


@program
def every_reduction_with_default_weights(tf):
    return _each_reduction(tf, lambda tf: 1.0)


@program
def every_reduction_with_scalar_weights(tf):
    return _each_reduction(tf, lambda tf: 2.5)


@program
def every_reduction_with_zero_weights(tf):
    return _each_reduction(tf, lambda tf: 0.0)


@program
def every_reduction_with_per_row_weights(tf):
    return _each_reduction(tf, lambda tf: tf.constant(ROW_WEIGHTS))


@program
def per_class_weights(tf):
    weights = tf.constant([[0.0, 1.0, 2.0]])
    losses = _regression_losses(tf, weights=weights)[:6]
    return described(*losses), run(tf, losses)


@program
def full_weights_with_zeros(tf):
    losses = _regression_losses(tf, weights=tf.constant(FULL_WEIGHTS))[:6]
    return run(tf, losses)


@program
def integer_and_double_weights(tf):
    labels, preds = tf.constant(LABELS), tf.constant(PREDS)
    return run(tf, [tf.losses.mean_squared_error(labels, preds, weights=3),
                    tf.losses.mean_squared_error(labels, preds, weights=tf.constant(ROW_WEIGHTS, tf.float64)),
                    tf.losses.absolute_difference(labels, preds, weights=tf.constant([[2, 0, 1]]))])


@program
def weights_fed_with_unknown_shape(tf):
    weights = tf.placeholder(tf.float32)
    loss = tf.losses.mean_squared_error(tf.constant(LABELS), tf.constant(PREDS), weights=weights)
    return described(loss), [run(tf, loss, {weights: w}) for w in (2.0, ROW_WEIGHTS, FULL_WEIGHTS, 0.0)]


@program
def batch_weights_for_rank_one_losses(tf):
    labels, preds = tf.constant([1.0, 2.0, 3.0]), tf.constant([1.5, 2.0, 0.0])
    return run(tf, [tf.losses.mean_squared_error(labels, preds, weights=tf.constant([1.0, 0.0, 2.0])),
                    tf.losses.huber_loss(labels, preds, weights=[0.0, 1.0, 1.0])])


@program
def batch_weights_for_rank_two_losses_are_a_value_error(tf):
    return tf.losses.mean_squared_error(tf.constant(LABELS), tf.constant(PREDS), weights=tf.constant([1.0] * 4))


@program
def weights_with_a_wrong_dim_are_a_value_error(tf):
    return tf.losses.absolute_difference(tf.constant(LABELS), tf.constant(PREDS), weights=tf.ones([4, 2]))


@program
def weights_none_is_a_value_error(tf):
    return tf.losses.compute_weighted_loss(tf.constant(LABELS), weights=None)


@program
def sparse_weights_none_is_a_value_error(tf):
    return tf.losses.sparse_softmax_cross_entropy([0, 1], tf.constant(LOGITS[:2]), weights=None)


@program
def pairwise_weights_none_is_a_value_error(tf):
    return tf.losses.mean_pairwise_squared_error(tf.constant(LABELS), tf.constant(PREDS), weights=None)


@program
def python_list_arguments(tf):
    results = [tf.losses.mean_squared_error([[1.0, 2.0]], [[0.0, 4.0]], weights=[[2.0, 1.0]]),
               tf.losses.log_loss([1, 0], [0.75, 0.25], weights=[1.0, 3.0]),
               tf.losses.compute_weighted_loss([[1.0, 2.0], [3.0, 4.0]], [[0.5], [2.0]])]
    return described(*results), run(tf, results)


@program
def compute_weighted_loss_in_each_reduction(tf):
    losses = tf.constant(PREDS)
    results = [tf.losses.compute_weighted_loss(losses, ROW_WEIGHTS, reduction=r) for r in tf.losses.Reduction.all()]
    results.append(tf.losses.compute_weighted_loss(losses, scope="mine"))
    return described(*results), run(tf, results)


@program
def compute_weighted_loss_keeps_the_losses_dtype(tf):
    results = [tf.losses.compute_weighted_loss(tf.constant(PREDS, tf.float64), FULL_WEIGHTS),
               tf.losses.compute_weighted_loss(tf.constant(PREDS, tf.float16), 2.0),
               tf.losses.compute_weighted_loss(tf.constant([[3, 4], [5, 7]]), reduction=tf.losses.Reduction.SUM)]
    return described(*results), run(tf, results)


@program
def float64_logits_give_float64_losses(tf):
    logits = tf.constant(LOGITS, tf.float64)
    labels = tf.constant(LABELS)
    results = [tf.losses.sigmoid_cross_entropy(labels, logits, weights=ROW_WEIGHTS),
               tf.losses.softmax_cross_entropy(labels, logits, label_smoothing=0.2),
               tf.losses.sparse_softmax_cross_entropy([1, 0, 2, 2], logits, reduction=tf.losses.Reduction.NONE)]
    return described(*results), run(tf, results)


@program
def empty_losses_reduce_to_zero(tf):
    losses = tf.zeros([0, 3])
    return run(tf, [tf.losses.compute_weighted_loss(losses, reduction=r) for r in tf.losses.Reduction.all()])


# -- each loss --------------------------------------------------------------------------------------


@program
def regression_losses_of_integer_labels(tf):
    labels, preds = tf.constant([[1, 0], [2, 3]]), tf.constant([[0.5, 0.5], [2.5, 1.0]])
    return run(tf, [tf.losses.absolute_difference(labels, preds), tf.losses.mean_squared_error(labels, preds),
                    tf.losses.huber_loss(labels, preds), tf.losses.hinge_loss([[1, 0], [0, 1]], preds)])


@program
def huber_loss_deltas(tf):
    labels, preds = tf.constant(LABELS), tf.constant(PREDS * 4.0 - 1.0)
    return run(tf, [tf.losses.huber_loss(labels, preds, delta=d) for d in (0.1, 1.0, 2.0, 10.0)])


@program
def log_loss_epsilon_keeps_it_finite(tf):
    labels, preds = tf.constant([1.0, 0.0, 1.0, 0.0]), tf.constant([0.0, 1.0, 1.0, 0.0])
    return run(tf, [tf.losses.log_loss(labels, preds), tf.losses.log_loss(labels, preds, epsilon=1e-3)])


@program
def cosine_distance_along_each_axis(tf):
    labels = tf.nn.l2_normalize(tf.constant(LABELS + 0.1), 1)
    preds = tf.nn.l2_normalize(tf.constant(PREDS), 1)
    results = [tf.losses.cosine_distance(labels, preds, axis=1),
               tf.losses.cosine_distance(labels, preds, axis=0, weights=tf.constant([[1.0, 0.0, 2.0]])),
               tf.losses.cosine_distance(labels, preds, dim=1, reduction=tf.losses.Reduction.NONE)]
    return described(*results), run(tf, results)


@program
def cosine_distance_needs_an_axis(tf):
    return tf.losses.cosine_distance(tf.constant(LABELS), tf.constant(PREDS))


@program
def cosine_distance_refuses_axis_and_dim(tf):
    return tf.losses.cosine_distance(tf.constant(LABELS), tf.constant(PREDS), axis=1, dim=1)


@program
def mean_pairwise_squared_error_values(tf):
    labels, preds = tf.constant(LABELS), tf.constant(PREDS * 2.0)
    cube = tf.constant(np.arange(24, dtype=np.float32).reshape(2, 3, 4) ** 0.5)
    results = [tf.losses.mean_pairwise_squared_error(labels, preds),
               tf.losses.mean_pairwise_squared_error(labels, preds, weights=ROW_WEIGHTS),
               tf.losses.mean_pairwise_squared_error(labels, preds, weights=FULL_WEIGHTS),
               tf.losses.mean_pairwise_squared_error(labels, preds, weights=0.0),
               tf.losses.mean_pairwise_squared_error(cube, cube * 0.5, weights=3.0),
               tf.losses.mean_pairwise_squared_error(tf.constant([[1.0], [2.0]]), tf.constant([[0.0], [5.0]]))]
    return described(*results), run(tf, results)


@program
def mean_pairwise_squared_error_with_batch_weights_is_a_value_error(tf):
    return tf.losses.mean_pairwise_squared_error(tf.constant(LABELS), tf.constant(PREDS),
                                                 weights=tf.constant([1.0, 2.0, 0.0, 1.0]))


@program
def sigmoid_cross_entropy_label_smoothing(tf):
    labels, logits = tf.constant(LABELS), tf.constant(LOGITS)
    results = [tf.losses.sigmoid_cross_entropy(labels, logits, label_smoothing=s) for s in (0, 0.1, 0.5, 1.0)]
    results.append(tf.losses.sigmoid_cross_entropy(tf.constant(LABELS.astype(np.int32)), logits, ROW_WEIGHTS, 0.2))
    return described(*results), run(tf, results)


@program
def softmax_cross_entropy_label_smoothing(tf):
    labels, logits = tf.constant(LABELS), tf.constant(LOGITS)
    results = [tf.losses.softmax_cross_entropy(labels, logits, label_smoothing=s) for s in (0, 0.1, 0.5)]
    results.append(tf.losses.softmax_cross_entropy(tf.one_hot([0, 1, 2, 1], 3), logits,
                                                   weights=tf.constant([1.0, 0.0, 2.0, 1.0]), label_smoothing=0.3))
    return described(*results), run(tf, results)


@program
def softmax_cross_entropy_with_unknown_classes(tf):
    labels = tf.placeholder(tf.float32, [None, None])
    loss = tf.losses.softmax_cross_entropy(labels, tf.constant(LOGITS), label_smoothing=0.1)
    return described(loss), run(tf, loss, {labels: LABELS})


@program
def sparse_softmax_cross_entropy_label_and_weight_shapes(tf):
    logits = tf.constant(LOGITS)
    results = [tf.losses.sparse_softmax_cross_entropy(tf.constant([[0], [2], [1], [1]]), logits),
               tf.losses.sparse_softmax_cross_entropy(tf.constant([0, 2, 1, 1], tf.int64), logits,
                                                      weights=tf.constant([1.0, 0.0, 2.0, 3.0])),
               tf.losses.sparse_softmax_cross_entropy([[0], [2], [1], [1]], logits, weights=ROW_WEIGHTS),
               tf.losses.sparse_softmax_cross_entropy([0, 2, 1, 1], logits, weights=ROW_WEIGHTS,
                                                      reduction=tf.losses.Reduction.NONE),
               tf.losses.sparse_softmax_cross_entropy(tf.constant([[0, 1], [2, 2]]),
                                                      tf.reshape(logits, [2, 2, 3]), weights=[[1.0], [0.5]])]
    return described(*results), run(tf, results)


@program
def sparse_softmax_cross_entropy_with_placeholder_labels(tf):
    labels = tf.placeholder(tf.int32, [None])
    loss = tf.losses.sparse_softmax_cross_entropy(labels, tf.constant(LOGITS), weights=ROW_WEIGHTS)
    return described(loss), run(tf, loss, {labels: [2, 2, 0, 1]})


@program
def sparse_softmax_cross_entropy_with_labels_of_unknown_rank(tf):
    labels, weights = tf.placeholder(tf.int32), tf.placeholder(tf.float32)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, tf.constant(LOGITS), weights=weights)
    feeds = [([[2], [2], [0], [1]], ROW_WEIGHTS), ([2, 2, 0, 1], ROW_WEIGHTS), ([2, 2, 0, 1], [1.0, 2.0, 0.0, 1.0]),
             ([[0], [1], [2], [2]], 2.0)]
    return described(loss), [run(tf, loss, {labels: y, weights: w}) for y, w in feeds]


@program
def sparse_softmax_cross_entropy_with_logits_of_unknown_rank(tf):
    logits = tf.placeholder(tf.float32)
    loss = tf.losses.sparse_softmax_cross_entropy([[2], [2], [0], [1]], logits, reduction=tf.losses.Reduction.NONE)
    return run(tf, loss, {logits: LOGITS})


# -- errors -----------------------------------------------------------------------------------------


@program
def labels_none_is_a_value_error(tf):
    return tf.losses.mean_squared_error(None, tf.constant(PREDS))


@program
def predictions_none_is_a_value_error(tf):
    return tf.losses.absolute_difference(tf.constant(LABELS), None)


@program
def logits_none_is_a_value_error(tf):
    return tf.losses.softmax_cross_entropy(tf.constant(LABELS), None)


@program
def multi_class_labels_none_is_a_value_error(tf):
    return tf.losses.sigmoid_cross_entropy(None, tf.constant(LOGITS))


@program
def mismatched_shapes_are_a_value_error(tf):
    return tf.losses.mean_squared_error(tf.constant(LABELS), tf.constant(PREDS[:, :2]))


@program
def mismatched_logits_are_a_value_error(tf):
    return tf.losses.sigmoid_cross_entropy(tf.constant(LABELS), tf.constant(LOGITS[:2]))


@program
def mismatched_hinge_shapes_are_a_value_error(tf):
    return tf.losses.hinge_loss(tf.constant(LABELS), tf.constant(LOGITS.T))


@program
def sparse_labels_of_wrong_rank_are_a_value_error(tf):
    return tf.losses.sparse_softmax_cross_entropy(tf.constant([[[0]], [[1]], [[2]], [[0]]]), tf.constant(LOGITS))


# -- collections and gradients ----------------------------------------------------------------------


@program
def losses_are_collected(tf):
    labels, preds = tf.constant(LABELS), tf.constant(PREDS)
    tf.losses.mean_squared_error(labels, preds)
    tf.losses.absolute_difference(labels, preds, loss_collection=None)
    tf.losses.huber_loss(labels, preds, loss_collection="mine")
    tf.losses.mean_pairwise_squared_error(labels, preds)
    total = tf.losses.get_total_loss()
    return ([t.name for t in tf.losses.get_losses()], [t.name for t in tf.get_collection("mine")],
            [t.name for t in tf.losses.get_losses(loss_collection="mine")], run(tf, total))


@program
def losses_under_a_name_scope(tf):
    with tf.name_scope("model"):
        loss = tf.losses.mean_squared_error(tf.constant(LABELS), tf.constant(PREDS), scope="mse")
        other = tf.losses.softmax_cross_entropy(tf.constant(LABELS), tf.constant(LOGITS))
    return described(loss, other), [t.name for t in tf.losses.get_losses(scope="model/mse")]


@program
def gradients_of_each_loss(tf):
    preds = tf.constant(PREDS)
    weights = tf.constant(ROW_WEIGHTS)
    labels = tf.constant(LABELS)
    losses = [tf.losses.absolute_difference(labels, preds, weights),
              tf.losses.mean_squared_error(labels, preds, weights),
              tf.losses.huber_loss(labels, preds * 4.0, weights, delta=0.5),
              tf.losses.log_loss(labels, preds, weights),
              tf.losses.hinge_loss(labels, preds * 2.0 - 1.0, weights),
              tf.losses.cosine_distance(labels, preds, axis=1, weights=weights),
              tf.losses.mean_pairwise_squared_error(labels, preds, weights),
              tf.losses.sigmoid_cross_entropy(labels, preds, weights, label_smoothing=0.1),
              tf.losses.softmax_cross_entropy(labels, preds, weights, label_smoothing=0.1),
              tf.losses.sparse_softmax_cross_entropy([0, 2, 1, 2], preds, weights)]
    grads = [tf.gradients(loss, [preds, weights]) for loss in losses]
    return run(tf, grads)


@program
def gradients_of_each_reduction(tf):
    preds, weights = tf.constant(PREDS), tf.constant(FULL_WEIGHTS)
    losses = [tf.losses.mean_squared_error(tf.constant(LABELS), preds, weights, reduction=r)
              for r in tf.losses.Reduction.all()]
    return run(tf, [tf.gradients(tf.reduce_sum(loss), [preds, weights]) for loss in losses])
