"""tf.contrib.layers: layer functions (fully_connected, conv2d, flatten, batch_norm, pooling), initializers
(xavier_initializer), and weight regularizers for get_variable(..., regularizer=...) or apply_regularization."""

from __future__ import annotations

import numbers
from collections.abc import Callable

from tfnb.contrib.initializers import variance_scaling_initializer, xavier_initializer
from tfnb.contrib.layer_functions import (
    avg_pool2d,
    batch_norm,
    conv2d,
    convolution2d,
    flatten,
    fully_connected,
    max_pool2d,
)
from tfnb.framework.graph import (
    GraphKeys,
    add_to_collection,
    get_collection,
    name_scope,
)
from tfnb.framework.tensor import Tensor
from tfnb.ops import math_ops, nn_ops
from tfnb.ops.constant_op import constant, convert_to_tensor

__all__ = ["l1_regularizer", "l2_regularizer", "l1_l2_regularizer", "sum_regularizer", "apply_regularization",
           "fully_connected", "conv2d", "convolution2d", "flatten", "batch_norm", "max_pool2d", "avg_pool2d",
           "xavier_initializer", "variance_scaling_initializer"]

_WEIGHTS = "weights"  # TF's GraphKeys.WEIGHTS


def _checked_scale(scale, what: str = "scale") -> bool:
    """Whether `scale` regularizes at all (a Python 0.0 does not); integers and negative numbers are errors."""
    if isinstance(scale, numbers.Integral):
        raise ValueError(f"{what} cannot be an integer: {scale}")
    if isinstance(scale, numbers.Real):
        if scale < 0:
            raise ValueError(f"Setting a scale less than 0 on a regularizer: {scale:g}.")
        return scale != 0
    return True


def _scaled(scale, penalty: Callable, scope: str | None, default_name: str) -> Callable:
    def regularizer(weights) -> Tensor:
        with name_scope(scope, default_name, [weights]) as name:
            factor = convert_to_tensor(scale, dtype=weights.dtype, name="scale")
            return math_ops.multiply(factor, penalty(weights), name=name)

    return regularizer


def l1_regularizer(scale: float, scope: str | None = None) -> Callable:
    """A function weights -> scale * sum(abs(weights)); a scale of 0.0 gives one that returns None."""
    if not _checked_scale(scale):
        return lambda _: None
    return _scaled(scale, lambda w: math_ops.reduce_sum(math_ops.abs(w)), scope, "l1_regularizer")


def l2_regularizer(scale: float, scope: str | None = None) -> Callable:
    """A function weights -> scale * sum(weights ** 2) / 2 (l2_loss); a scale of 0.0 gives one that returns None."""
    if not _checked_scale(scale):
        return lambda _: None
    return _scaled(scale, nn_ops.l2_loss, scope, "l2_regularizer")


def l1_l2_regularizer(scale_l1: float = 1.0, scale_l2: float = 1.0, scope: str | None = None) -> Callable:
    """The sum of an l1_regularizer(scale_l1) and an l2_regularizer(scale_l2)."""
    uses_l1, uses_l2 = _checked_scale(scale_l1, "scale_l1"), _checked_scale(scale_l2, "scale_l2")
    scope = scope or "l1_l2_regularizer"
    if not uses_l1:
        return l2_regularizer(scale_l2, scope)
    if not uses_l2:
        return l1_regularizer(scale_l1, scope)
    return sum_regularizer([l1_regularizer(scale_l1), l2_regularizer(scale_l2)], scope=scope)


def sum_regularizer(regularizer_list: list, scope: str | None = None) -> Callable | None:
    """A regularizer adding up the given ones' penalties (None entries and None penalties are skipped)."""
    regularizers = [r for r in regularizer_list if r is not None]
    if not regularizers:
        return None

    def regularizer(weights) -> Tensor | None:
        with name_scope(scope, "sum_regularizer", [weights]) as name:
            penalties = [p for p in (r(weights) for r in regularizers) if p is not None]
            return math_ops.add_n(penalties, name=name) if penalties else None

    return regularizer


def apply_regularization(regularizer: Callable, weights_list: list | None = None) -> Tensor:
    """regularizer's penalties over weights_list (default: the 'weights' collection), summed and collected."""
    weights_list = weights_list or get_collection(_WEIGHTS)
    if not weights_list:
        raise ValueError("No weights to regularize.")
    with name_scope("get_regularization_penalty", values=weights_list) as scope:
        penalties = [regularizer(w) for w in weights_list]
        penalties = [constant(0.0) if p is None else p for p in penalties]
        for penalty in penalties:
            if penalty.shape.ndims != 0:
                raise ValueError(f"regularizer must return a scalar Tensor instead of a Tensor with rank "
                                 f"{penalty.shape.ndims}.")
        total = math_ops.add_n(penalties, name=scope)
        add_to_collection(GraphKeys.REGULARIZATION_LOSSES, total)
        return total
