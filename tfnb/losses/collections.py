"""tf.losses' collections: the losses added so far, and the total of the losses and regularization losses."""

from __future__ import annotations

from tfnb.framework.graph import GraphKeys, add_to_collection, get_collection
from tfnb.framework.tensor import Tensor
from tfnb.ops import math_ops
from tfnb.ops.constant_op import constant

__all__ = ["add_loss", "get_losses", "get_regularization_losses", "get_regularization_loss", "get_total_loss"]


def add_loss(loss: Tensor, loss_collection: str = GraphKeys.LOSSES) -> None:
    """Adds `loss` to `loss_collection` (none if it is None or empty), so get_total_loss counts it."""
    if loss_collection:
        add_to_collection(loss_collection, loss)


def get_losses(scope: str | None = None, loss_collection: str = GraphKeys.LOSSES) -> list[Tensor]:
    """The losses in `loss_collection`, those whose names match `scope` if given."""
    return get_collection(loss_collection, scope)


def get_regularization_losses(scope: str | None = None) -> list[Tensor]:
    """The regularization losses (from get_variable's regularizers), those matching `scope` if given."""
    return get_collection(GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope: str | None = None, name: str = "total_regularization_loss") -> Tensor:
    """The sum of the regularization losses, or a constant 0.0 if there are none."""
    losses = get_regularization_losses(scope)
    return math_ops.add_n(losses, name=name) if losses else constant(0.0)


def get_total_loss(add_regularization_losses: bool = True, name: str = "total_loss",
                   scope: str | None = None) -> Tensor:
    """The sum of the collected losses and, by default, the regularization losses; ValueError if there are none."""
    losses = get_losses(scope)
    if add_regularization_losses:
        losses = losses + get_regularization_losses(scope)
    if not losses:
        raise ValueError("No losses to sum: add some with tf.losses.add_loss or a regularizer")
    return math_ops.add_n(losses, name=name)
