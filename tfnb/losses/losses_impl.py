"""TF1's loss functions (tf.compat.v1.losses): per-element losses, weighted and reduced by compute_weighted_loss.

Each is built from existing ops, so tf.gradients differentiates it, and each adds its result to a loss
collection. Weights are a scalar or have the losses' rank with each dim 1 or the losses' dim (TF's rule).
tfnb differs: weights whose shape is unknown while the graph is built are not checked at run time (TF adds an
Assert); a bad shape then fails in the multiply, or broadcasts where NumPy allows it.
"""

from __future__ import annotations

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.graph import GraphKeys, name_scope
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape
from tfnb.losses.collections import add_loss
from tfnb.ops import array_ops, math_ops, nn_ops
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.control_flow.cond import cond

__all__ = ["Reduction", "compute_weighted_loss", "absolute_difference", "mean_squared_error", "huber_loss",
           "log_loss", "hinge_loss", "cosine_distance", "mean_pairwise_squared_error", "sigmoid_cross_entropy",
           "softmax_cross_entropy", "sparse_softmax_cross_entropy"]


class Reduction:
    """How a loss function reduces the weighted per-element losses (TF1's tf.losses.Reduction keys)."""

    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls) -> tuple[str, ...]:
        """Every reduction key, the alias included (as TF lists them)."""
        return (cls.NONE, cls.SUM, cls.MEAN, cls.SUM_OVER_BATCH_SIZE, cls.SUM_OVER_NONZERO_WEIGHTS,
                cls.SUM_BY_NONZERO_WEIGHTS)

    @classmethod
    def validate(cls, key: str) -> None:
        """Raises ValueError unless `key` is one of Reduction.all()."""
        if key not in cls.all():
            raise ValueError(f"Invalid Reduction Key {key}. Key should be one of {cls.all()}.")


# -- weights and reductions -----------------------------------------------------------------------


def _check_broadcastable(w: TensorShape, v: TensorShape) -> None:
    """TF's static check of weights' shape w against values' shape v: a scalar, or v's rank with each dim 1 or v's."""
    if w.ndims is None or v.ndims is None or w.ndims == 0:
        return
    prefix = "weights can not be broadcast to values."
    if w.ndims != v.ndims:
        raise ValueError(f"{prefix} values.rank={v.ndims}. weights.rank={w.ndims}. values.shape={v}. "
                         f"weights.shape={w}.")
    if w.is_fully_defined() and v.is_fully_defined():
        for i, (w_dim, v_dim) in enumerate(zip(w.as_list(), v.as_list())):
            if w_dim not in (1, v_dim):
                raise ValueError(f"{prefix} Mismatch at dim {i}. values.shape={v.as_list()}, "
                                 f"weights.shape={w.as_list()}.")


def _broadcast_weights(weights: Tensor, values: Tensor) -> Tensor:
    """weights broadcast to values' shape (as weights * ones_like(values)), after the broadcastable check."""
    with name_scope(None, "broadcast_weights", (weights, values)) as scope:
        weights = math_ops.cast(weights, values.dtype)
        if (weights.shape.is_fully_defined() and values.shape.is_fully_defined()
                and weights.shape.is_compatible_with(values.shape)):
            return weights
        _check_broadcastable(weights.shape, values.shape)
        return math_ops.multiply(weights, array_ops.ones_like(values), name=scope)


def _weights_shape(weights) -> TensorShape:
    """The static shape of weights (a tensor or a Python value); None is TF's ValueError."""
    if weights is None:
        raise ValueError("None values not supported.")
    return weights.shape if isinstance(weights, Tensor) else TensorShape(np.shape(weights))


def _to_float32(value) -> Tensor:
    """value cast to float32; a Python value becomes the constant 'Cast/x' first, so op names follow TF's."""
    if isinstance(value, Tensor):
        return math_ops.cast(value, dtypes.float32)
    with name_scope(None, "Cast", ()) as scope:
        return math_ops.cast(convert_to_tensor(value, name="x"), dtypes.float32, name=scope)


def _div_no_nan(x: Tensor, y: Tensor, name: str = "value") -> Tensor:
    """x / y, and 0 where y is 0; the divisor is made safe first so no NaN reaches the gradient either."""
    with name_scope(None, name, (x, y)) as scope:
        zero = math_ops.equal(y, 0.0)
        safe_y = math_ops.where_v2(zero, array_ops.ones_like(y), y)
        return math_ops.where_v2(zero, array_ops.zeros_like(x), math_ops.truediv(x, safe_y), name=scope)


def _num_elements(losses: Tensor) -> Tensor:
    """The number of elements of losses, in losses' dtype."""
    with name_scope(None, "num_elements", (losses,)) as scope:
        return math_ops.cast(array_ops.size(losses, name=scope), losses.dtype)


def _num_present(losses: Tensor, weights: Tensor, per_batch: bool = False) -> Tensor:
    """How many elements of losses have a nonzero weight once weights are broadcast: in all, or per batch row."""
    with name_scope(None, "num_present", (losses, weights)) as scope:
        weights = math_ops.cast(weights, dtypes.float32)
        present = math_ops.where(math_ops.equal(weights, 0.0), array_ops.zeros_like(weights),
                                 array_ops.ones_like(weights))
        present = _broadcast_weights(present, losses)
        if per_batch:
            axis = array_ops.range(1, array_ops.rank(present))
            return math_ops.reduce_sum(present, axis=axis, keepdims=True, name=scope)
        return math_ops.reduce_sum(present, name=scope)


def _reduced(weighted_losses: Tensor, losses: Tensor, weights: Tensor, reduction: str) -> Tensor:
    """The weighted losses reduced as `reduction` says; a mean over nothing is 0."""
    if reduction == Reduction.NONE:
        return weighted_losses
    loss = math_ops.reduce_sum(weighted_losses)
    if reduction == Reduction.MEAN:
        total_weight = math_ops.reduce_sum(array_ops.ones_like(losses) * weights)
        return _div_no_nan(math_ops.reduce_sum(loss), total_weight)
    if reduction == Reduction.SUM_BY_NONZERO_WEIGHTS:
        return _div_no_nan(math_ops.reduce_sum(loss), _num_present(losses, weights))
    if reduction == Reduction.SUM_OVER_BATCH_SIZE:
        return _div_no_nan(math_ops.reduce_sum(loss), _num_elements(losses))
    return loss


def compute_weighted_loss(losses, weights=1.0, scope: str | None = None,
                          loss_collection: str | None = GraphKeys.LOSSES,
                          reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """losses * weights, reduced as `reduction` says (computed in float32), in losses' dtype; added to loss_collection.

    Gradients flow into weights too: wrap them in tf.stop_gradient if they depend on trained variables.
    """
    Reduction.validate(reduction)
    with name_scope(scope, "weighted_loss", (losses, weights)):
        losses = convert_to_tensor(losses)
        _check_broadcastable(_weights_shape(weights), losses.shape)
        input_dtype = losses.dtype
        losses = math_ops.cast(losses, dtypes.float32)
        weights = _to_float32(weights)
        weighted_losses = math_ops.multiply(losses, weights)
        loss = math_ops.cast(_reduced(weighted_losses, losses, weights, reduction), input_dtype)
        add_loss(loss, loss_collection)
        return loss


# -- regression losses ----------------------------------------------------------------------------


def _require(**arguments) -> None:
    """TF's ValueError for the first required argument that is None."""
    for name, value in arguments.items():
        if value is None:
            raise ValueError(f"Argument `{name}` must not be None.")


def _as_float_pair(labels, predictions) -> tuple[Tensor, Tensor]:
    """labels and predictions cast to float32; ValueError if their shapes cannot match."""
    predictions = _to_float32(predictions)
    labels = _to_float32(labels)
    predictions.shape.assert_is_compatible_with(labels.shape)
    return labels, predictions


def absolute_difference(labels, predictions, weights=1.0, scope: str | None = None,
                        loss_collection: str | None = GraphKeys.LOSSES,
                        reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """The weighted |predictions - labels| (an L1 loss), reduced as `reduction` says."""
    _require(labels=labels, predictions=predictions)
    with name_scope(scope, "absolute_difference", (predictions, labels, weights)) as scope:
        labels, predictions = _as_float_pair(labels, predictions)
        losses = math_ops.abs(math_ops.subtract(predictions, labels))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def mean_squared_error(labels, predictions, weights=1.0, scope: str | None = None,
                       loss_collection: str | None = GraphKeys.LOSSES,
                       reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """The weighted (predictions - labels)**2, reduced as `reduction` says."""
    _require(labels=labels, predictions=predictions)
    with name_scope(scope, "mean_squared_error", (predictions, labels, weights)) as scope:
        labels, predictions = _as_float_pair(labels, predictions)
        losses = math_ops.squared_difference(predictions, labels)
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def huber_loss(labels, predictions, weights=1.0, delta: float = 1.0, scope: str | None = None,
               loss_collection: str | None = GraphKeys.LOSSES,
               reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """The weighted Huber loss: 0.5 * e**2 where |e| <= delta, else delta * (|e| - 0.5 * delta), for e = error."""
    _require(labels=labels, predictions=predictions)
    with name_scope(scope, "huber_loss", (predictions, labels, weights)) as scope:
        labels, predictions = _as_float_pair(labels, predictions)
        abs_error = math_ops.abs(math_ops.subtract(predictions, labels))
        quadratic = math_ops.minimum(abs_error, delta)
        linear = math_ops.subtract(abs_error, quadratic)
        losses = math_ops.add(math_ops.multiply(0.5, math_ops.multiply(quadratic, quadratic)),
                              math_ops.multiply(delta, linear))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def log_loss(labels, predictions, weights=1.0, epsilon: float = 1e-7, scope: str | None = None,
             loss_collection: str | None = GraphKeys.LOSSES,
             reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """The weighted binary cross-entropy of probabilities: -y log(p + eps) - (1 - y) log(1 - p + eps)."""
    _require(labels=labels, predictions=predictions)
    with name_scope(scope, "log_loss", (predictions, labels, weights)) as scope:
        labels, predictions = _as_float_pair(labels, predictions)
        losses = (-math_ops.multiply(labels, math_ops.log(predictions + epsilon))
                  - math_ops.multiply(1 - labels, math_ops.log(1 - predictions + epsilon)))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def hinge_loss(labels, logits, weights=1.0, scope: str | None = None,
               loss_collection: str | None = GraphKeys.LOSSES,
               reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """The weighted hinge loss max(0, 1 - (2 * labels - 1) * logits), for labels in {0, 1}."""
    _require(labels=labels, logits=logits)
    with name_scope(scope, "hinge_loss", (logits, labels, weights)) as scope:
        labels, logits = _as_float_pair(labels, logits)
        all_ones = array_ops.ones_like(labels)
        signs = math_ops.subtract(2 * labels, all_ones)
        losses = nn_ops.relu(math_ops.subtract(all_ones, math_ops.multiply(signs, logits)))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def cosine_distance(labels, predictions, axis: int | None = None, weights=1.0, scope: str | None = None,
                    loss_collection: str | None = GraphKeys.LOSSES,
                    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS, dim: int | None = None) -> Tensor:
    """The weighted 1 - sum(labels * predictions, axis), axis kept, for unit-length inputs; `dim` is deprecated."""
    if dim is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'dim'")
        axis = dim
    if axis is None:
        raise ValueError("You must specify argument `axis`.")
    _require(labels=labels, predictions=predictions)
    with name_scope(scope, "cosine_distance_loss", (predictions, labels, weights)) as scope:
        labels, predictions = _as_float_pair(labels, predictions)
        radial_diffs = math_ops.multiply(predictions, labels)
        losses = 1 - math_ops.reduce_sum(radial_diffs, axis=(axis,), keepdims=True)
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def mean_pairwise_squared_error(labels, predictions, weights=1.0, scope: str | None = None,
                                loss_collection: str | None = GraphKeys.LOSSES) -> Tensor:
    """The weighted mean, over each batch row, of the squared differences between all pairs of (predictions - labels).

    Only pairs of elements with nonzero weight count; weights are a scalar or have the labels' rank.
    """
    _require(labels=labels, predictions=predictions)
    with name_scope(scope, "mean_pairwise_squared_error", (predictions, labels, weights)):
        _weights_shape(weights)  # for its ValueError on None, as TF gives
        weights = _to_float32(weights)
        labels = _to_float32(labels)
        _check_broadcastable(weights.shape, labels.shape)
        predictions = _to_float32(predictions)
        predictions.shape.assert_is_compatible_with(labels.shape)
        diffs = math_ops.subtract(predictions, labels)
        axis = array_ops.range(1, array_ops.rank(diffs))
        sum_squares_per_batch = math_ops.reduce_sum(math_ops.square(diffs), axis=axis, keepdims=True)
        present_per_batch = _num_present(diffs, weights, per_batch=True)
        term1 = 2.0 * _div_no_nan(sum_squares_per_batch, math_ops.maximum(present_per_batch - 1, 0.0))
        sum_diff = math_ops.reduce_sum(diffs, axis=axis, keepdims=True)
        pairs = math_ops.maximum(math_ops.multiply(present_per_batch, present_per_batch - 1), 0.0)
        term2 = 2.0 * _div_no_nan(math_ops.square(sum_diff), pairs)
        loss = math_ops.reduce_sum(math_ops.multiply(term1 - term2, weights))
        mean_loss = math_ops.where(math_ops.reduce_sum(present_per_batch) > 0, loss, array_ops.zeros_like(loss),
                                   name="value")
        add_loss(mean_loss, loss_collection)
        return mean_loss


# -- classification losses ------------------------------------------------------------------------


def sigmoid_cross_entropy(multi_class_labels, logits, weights=1.0, label_smoothing: float = 0,
                          scope: str | None = None, loss_collection: str | None = GraphKeys.LOSSES,
                          reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """The weighted sigmoid cross-entropy of logits; label_smoothing moves labels toward 1/2."""
    _require(multi_class_labels=multi_class_labels, logits=logits)
    with name_scope(scope, "sigmoid_cross_entropy_loss", (logits, multi_class_labels, weights)) as scope:
        logits = convert_to_tensor(logits)
        labels = math_ops.cast(multi_class_labels, logits.dtype)
        logits.shape.assert_is_compatible_with(labels.shape)
        if label_smoothing > 0:
            labels = labels * (1 - label_smoothing) + 0.5 * label_smoothing
        losses = nn_ops.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def softmax_cross_entropy(onehot_labels, logits, weights=1.0, label_smoothing: float = 0,
                          scope: str | None = None, loss_collection: str | None = GraphKeys.LOSSES,
                          reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """The weighted softmax cross-entropy over the last axis; label_smoothing mixes labels with 1/num_classes.

    No gradient flows into the labels.
    """
    _require(onehot_labels=onehot_labels, logits=logits)
    with name_scope(scope, "softmax_cross_entropy_loss", (logits, onehot_labels, weights)) as scope:
        logits = convert_to_tensor(logits)
        labels = math_ops.cast(onehot_labels, logits.dtype)
        logits.shape.assert_is_compatible_with(labels.shape)
        if label_smoothing > 0:
            num_classes = math_ops.cast(array_ops.shape(labels)[-1], logits.dtype)
            labels = labels * (1.0 - label_smoothing) + label_smoothing / num_classes
        labels = array_ops.stop_gradient(labels, name="labels_stop_gradient")
        losses = nn_ops.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def _last_dim_may_be_one(shape: TensorShape) -> bool:
    return shape.ndims is None or (shape.ndims > 0 and shape.dims[-1].is_compatible_with(1))


def _squeezed_if(tensor: Tensor, rank_diff: Tensor, wanted: int) -> Tensor:
    """tensor without its last dim where rank_diff turns out to be `wanted` at run time."""
    return cond(math_ops.equal(wanted, rank_diff), lambda: array_ops.squeeze(tensor, [-1]), lambda: tensor)


def _squeezed_labels(labels: Tensor, logits: Tensor) -> tuple[Tensor, Tensor]:
    """Labels of logits' rank, or logits of labels' rank + 2, lose a last dim of 1 (at run time for unknown ranks)."""
    labels_rank, logits_rank = labels.shape.ndims, logits.shape.ndims
    if labels_rank is not None and logits_rank is not None:
        if logits_rank - labels_rank == 2 and _last_dim_may_be_one(logits.shape):
            logits = array_ops.squeeze(logits, [-1])
        elif logits_rank == labels_rank and _last_dim_may_be_one(labels.shape):
            labels = array_ops.squeeze(labels, [-1])
        return labels, logits
    rank_diff = array_ops.rank(logits) - array_ops.rank(labels)
    if _last_dim_may_be_one(logits.shape):
        logits = _squeezed_if(logits, rank_diff, 2)
    if _last_dim_may_be_one(labels.shape):
        labels = _squeezed_if(labels, rank_diff, 0)
    return labels, logits


def _remove_squeezable_dimensions(labels, logits, weights) -> tuple[Tensor, Tensor, Tensor | None]:
    """Labels of shape [batch, 1], and weights of the labels' rank + 1, lose their last dim, as TF squeezes them."""
    logits, labels = convert_to_tensor(logits), convert_to_tensor(labels)
    with name_scope(None, "remove_squeezable_dimensions", (labels, logits)):
        labels, logits = _squeezed_labels(labels, logits)
    if weights is None:
        return labels, logits, weights
    weights = convert_to_tensor(weights)
    if labels.shape.ndims is not None and weights.shape.ndims is not None:
        if weights.shape.ndims - labels.shape.ndims == 1:
            weights = array_ops.squeeze(weights, [-1])
    elif _last_dim_may_be_one(weights.shape):
        weights = _squeezed_if(weights, array_ops.rank(weights) - array_ops.rank(labels), 1)
    return labels, logits, weights


def sparse_softmax_cross_entropy(labels, logits, weights=1.0, scope: str | None = None,
                                 loss_collection: str | None = GraphKeys.LOSSES,
                                 reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """The weighted softmax cross-entropy of logits [batch, ..., classes] for class indices labels [batch, ...]."""
    _require(labels=labels, logits=logits)
    with name_scope(scope, "sparse_softmax_cross_entropy_loss", (logits, labels, weights)) as scope:
        labels, logits, weights = _remove_squeezable_dimensions(labels, logits, weights)
        losses = nn_ops.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)
