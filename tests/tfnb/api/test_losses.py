"""tf.losses: values against NumPy, reductions and weights, the loss collection, gradients and errors."""

from __future__ import annotations

import numpy as np
import pytest

import tfnb as tf
from tfnb import losses
from tfnb.test import check_gradients

Reduction = tf.losses.Reduction
RNG = np.random.default_rng(0)
LABELS = (RNG.random((4, 3)) > 0.5).astype(np.float32)
PREDS = RNG.uniform(0.05, 0.95, (4, 3)).astype(np.float32)
ROW_WEIGHTS = np.array([[1.0], [0.0], [2.0], [0.5]], np.float32)
ONEHOT = np.eye(3, dtype=np.float32)[[0, 2, 1, 1]]


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default() as graph:
        yield graph


def evaluate(tensors, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(tensors, feed_dict)


def nonzero_mean(values, weights) -> float:
    """TF's default reduction: sum(values * weights) over the number of nonzero broadcast weights."""
    weights = np.broadcast_to(weights, values.shape)
    return float(np.sum(values * weights) / np.count_nonzero(weights))


def test_exports_match_tf1():
    assert set(losses.__all__) == {
        "Reduction", "absolute_difference", "add_loss", "compute_weighted_loss", "cosine_distance", "get_losses",
        "get_regularization_loss", "get_regularization_losses", "get_total_loss", "hinge_loss", "huber_loss",
        "log_loss", "mean_pairwise_squared_error", "mean_squared_error", "sigmoid_cross_entropy",
        "softmax_cross_entropy", "sparse_softmax_cross_entropy"}
    assert tf.losses is losses


def test_reduction_keys():
    assert Reduction.SUM_OVER_NONZERO_WEIGHTS == Reduction.SUM_BY_NONZERO_WEIGHTS
    assert len(Reduction.all()) == 6
    Reduction.validate(Reduction.MEAN)
    with pytest.raises(ValueError, match="Invalid Reduction Key"):
        Reduction.validate("mean")


@pytest.mark.parametrize("reduction, expected", [
    (Reduction.NONE, lambda v, w: v * w),
    (Reduction.SUM, lambda v, w: np.sum(v * w)),
    (Reduction.MEAN, lambda v, w: np.sum(v * w) / np.sum(np.broadcast_to(w, v.shape))),
    (Reduction.SUM_OVER_BATCH_SIZE, lambda v, w: np.sum(v * w) / v.size),
    (Reduction.SUM_BY_NONZERO_WEIGHTS, nonzero_mean),
])
def test_compute_weighted_loss_reductions(reduction, expected):
    loss = tf.losses.compute_weighted_loss(PREDS, ROW_WEIGHTS, reduction=reduction)
    np.testing.assert_allclose(evaluate(loss), expected(PREDS, ROW_WEIGHTS), rtol=1e-6)
    assert loss.shape.as_list() == ([4, 3] if reduction == Reduction.NONE else [])


@pytest.mark.parametrize("make_loss, elementwise", [
    (lambda y, p, w: tf.losses.absolute_difference(y, p, w), lambda y, p: np.abs(p - y)),
    (lambda y, p, w: tf.losses.mean_squared_error(y, p, w), lambda y, p: (p - y) ** 2),
    (lambda y, p, w: tf.losses.huber_loss(y, 4 * p, w, delta=0.5),
     lambda y, p: np.where(np.abs(4 * p - y) <= 0.5, 0.5 * (4 * p - y) ** 2, 0.5 * (np.abs(4 * p - y) - 0.25))),
    (lambda y, p, w: tf.losses.log_loss(y, p, w),
     lambda y, p: -y * np.log(p + 1e-7) - (1 - y) * np.log(1 - p + 1e-7)),
    (lambda y, p, w: tf.losses.hinge_loss(y, 2 * p - 1, w), lambda y, p: np.maximum(0, 1 - (2 * y - 1) * (2 * p - 1))),
    (lambda y, p, w: tf.losses.sigmoid_cross_entropy(y, p, w), lambda y, p: np.logaddexp(0, p) - p * y),
    (lambda y, p, w: tf.losses.sigmoid_cross_entropy(y, p, w, label_smoothing=0.2),
     lambda y, p: np.logaddexp(0, p) - p * (0.8 * y + 0.1)),
])
def test_elementwise_losses_match_numpy(make_loss, elementwise):
    loss = make_loss(tf.constant(LABELS), tf.constant(PREDS), tf.constant(ROW_WEIGHTS))
    np.testing.assert_allclose(evaluate(loss), nonzero_mean(elementwise(LABELS, PREDS), ROW_WEIGHTS), rtol=1e-5)


def _np_log_softmax(x):
    shifted = x - x.max(-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))


def test_softmax_cross_entropy_smooths_toward_uniform():
    loss = tf.losses.softmax_cross_entropy(ONEHOT, PREDS, weights=[1.0, 0.0, 2.0, 1.0], label_smoothing=0.3)
    smoothed = ONEHOT * 0.7 + 0.1
    per_row = -np.sum(smoothed * _np_log_softmax(PREDS), -1)
    np.testing.assert_allclose(evaluate(loss), nonzero_mean(per_row, np.array([1.0, 0.0, 2.0, 1.0])), rtol=1e-5)


def test_sparse_softmax_cross_entropy_squeezes_labels_and_weights():
    labels = np.array([[0], [2], [1], [1]], np.int32)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, PREDS, weights=ROW_WEIGHTS, reduction=Reduction.NONE)
    assert loss.shape.as_list() == [4]
    per_row = -_np_log_softmax(PREDS)[np.arange(4), labels[:, 0]]
    np.testing.assert_allclose(evaluate(loss), per_row * ROW_WEIGHTS[:, 0], rtol=1e-5)


def test_cosine_distance_keeps_the_axis():
    loss = tf.losses.cosine_distance(LABELS, PREDS, axis=1, reduction=Reduction.NONE)
    assert loss.shape.as_list() == [4, 1]
    np.testing.assert_allclose(evaluate(loss), 1 - np.sum(LABELS * PREDS, 1, keepdims=True), rtol=1e-6)
    assert tf.losses.cosine_distance(LABELS, PREDS, dim=0).shape.as_list() == []


def test_mean_pairwise_squared_error_counts_pairs():
    labels, preds = np.array([[1.0, 2.0, 3.0]]), np.array([[2.0, 2.0, 6.0]])
    diffs = (preds - labels)[0]
    pairs = [(diffs[i] - diffs[j]) ** 2 for i in range(3) for j in range(3) if i != j]
    np.testing.assert_allclose(evaluate(tf.losses.mean_pairwise_squared_error(labels, preds)), np.mean(pairs),
                               rtol=1e-6)


def test_zero_weights_give_zero_loss_and_finite_gradients():
    preds = tf.constant(PREDS)
    results = [tf.losses.mean_squared_error(LABELS, preds, weights=0.0, reduction=r)
               for r in (Reduction.MEAN, Reduction.SUM_BY_NONZERO_WEIGHTS)]
    results.append(tf.losses.mean_pairwise_squared_error(LABELS, preds, weights=0.0))
    grads = tf.gradients(tf.add_n(results), preds)
    values, (grad,) = evaluate([results, grads])
    assert values == [0.0, 0.0, 0.0]
    assert np.all(grad == 0.0)


def test_losses_keep_the_input_dtype():
    logits = tf.constant(PREDS, tf.float64)
    assert tf.losses.sigmoid_cross_entropy(LABELS, logits).dtype == tf.float64
    assert tf.losses.compute_weighted_loss(tf.constant([1, 2, 3])).dtype == tf.int32
    assert tf.losses.mean_squared_error(LABELS, logits).dtype == tf.float32  # regression losses cast to float32


def test_names_follow_tf():
    loss = tf.losses.absolute_difference(LABELS, PREDS)
    assert loss.name == "absolute_difference/value:0"
    assert tf.losses.mean_squared_error(LABELS, PREDS, reduction=Reduction.SUM).name == "mean_squared_error/Sum:0"
    assert tf.losses.mean_squared_error(LABELS, PREDS, reduction=Reduction.NONE).name == "mean_squared_error_1/Mul:0"
    assert tf.losses.mean_pairwise_squared_error(LABELS, PREDS).name == "mean_pairwise_squared_error/value_2:0"
    with tf.name_scope("model"):
        assert tf.losses.huber_loss(LABELS, PREDS, scope="huber").name == "model/huber/value:0"


def test_losses_are_collected():
    first = tf.losses.mean_squared_error(LABELS, PREDS)
    tf.losses.absolute_difference(LABELS, PREDS, loss_collection=None)
    mine = tf.losses.log_loss(LABELS, PREDS, loss_collection="mine")
    assert tf.losses.get_losses() == [first]
    assert tf.get_collection("mine") == [mine]
    np.testing.assert_allclose(evaluate(tf.losses.get_total_loss()), evaluate(first))


def test_unknown_shapes_run():
    labels = tf.placeholder(tf.float32)
    preds = tf.placeholder(tf.float32, [None, 3])
    weights = tf.placeholder(tf.float32, [None, 1])
    loss = tf.losses.mean_squared_error(labels, preds, weights)
    assert loss.shape.as_list() == []
    feed = {labels: LABELS, preds: PREDS, weights: ROW_WEIGHTS}
    np.testing.assert_allclose(evaluate(loss, feed), nonzero_mean((PREDS - LABELS) ** 2, ROW_WEIGHTS), rtol=1e-6)
    pairwise = tf.losses.mean_pairwise_squared_error(labels, preds, weights)
    assert np.isfinite(evaluate(pairwise, feed))


@pytest.mark.parametrize("make_loss", [
    lambda y, p, w: tf.losses.absolute_difference(y, p, w),
    lambda y, p, w: tf.losses.mean_squared_error(y, p, w, reduction=Reduction.MEAN),
    lambda y, p, w: tf.losses.huber_loss(y, 3 * p, w, delta=0.5),
    lambda y, p, w: tf.losses.log_loss(y, p, w),
    lambda y, p, w: tf.losses.hinge_loss(y, 2 * p - 1, w),
    lambda y, p, w: tf.losses.cosine_distance(y, p, axis=1, weights=w, reduction=Reduction.SUM_OVER_BATCH_SIZE),
    lambda y, p, w: tf.losses.mean_pairwise_squared_error(y, p, w),
    lambda y, p, w: tf.losses.sigmoid_cross_entropy(y, p, w, label_smoothing=0.1),
    # One-hot labels: TF's gradient (softmax - labels) is the derivative only where each row sums to 1.
    lambda y, p, w: tf.losses.softmax_cross_entropy(ONEHOT, p, tf.reshape(w, [4]), label_smoothing=0.1),
    lambda y, p, w: tf.losses.sparse_softmax_cross_entropy([0, 2, 1, 2], p, w, reduction=Reduction.SUM),
    lambda y, p, w: tf.losses.compute_weighted_loss(p, w, reduction=Reduction.NONE),
], ids=["absolute_difference", "mean_squared_error", "huber_loss", "log_loss", "hinge_loss", "cosine_distance",
        "mean_pairwise_squared_error", "sigmoid_cross_entropy", "softmax_cross_entropy",
        "sparse_softmax_cross_entropy", "compute_weighted_loss"])
def test_gradients_match_finite_differences(make_loss):
    # The losses compute in float32 (as TF's do), so the finite differences take float32 steps.
    check_gradients(lambda p, w: make_loss(tf.constant(LABELS), p, w), [PREDS, ROW_WEIGHTS + 0.25],
                    eps=1e-2, rtol=2e-2, atol=1e-3)


@pytest.mark.parametrize("call, message", [
    (lambda: tf.losses.mean_squared_error(None, PREDS), "`labels` must not be None"),
    (lambda: tf.losses.hinge_loss(LABELS, None), "`logits` must not be None"),
    (lambda: tf.losses.sigmoid_cross_entropy(None, PREDS), "`multi_class_labels` must not be None"),
    (lambda: tf.losses.softmax_cross_entropy(None, PREDS), "`onehot_labels` must not be None"),
    (lambda: tf.losses.cosine_distance(LABELS, PREDS), "specify argument `axis`"),
    (lambda: tf.losses.cosine_distance(LABELS, PREDS, axis=1, dim=1), "both 'axis' and 'dim'"),
    (lambda: tf.losses.compute_weighted_loss(PREDS, None), "None values"),
    (lambda: tf.losses.mean_squared_error(LABELS, PREDS[:, :2]), "incompatible"),
    (lambda: tf.losses.mean_squared_error(LABELS, PREDS, weights=np.ones(4)), "values.rank=2. weights.rank=1"),
    (lambda: tf.losses.absolute_difference(LABELS, PREDS, weights=np.ones((4, 2))), "Mismatch at dim 1"),
    (lambda: tf.losses.log_loss(LABELS, PREDS, reduction="sum"), "Invalid Reduction Key"),
])
def test_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()
