"""tf.math.confusion_matrix: counts (or weights) of label/prediction pairs, built from existing ops."""

from __future__ import annotations

from tfnb.framework import dtypes
from tfnb.framework.graph import name_scope
from tfnb.framework.tensor import Tensor
from tfnb.ops import array_ops, math_ops
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.selection_ops import scatter_nd

__all__ = ["confusion_matrix"]


def confusion_matrix(labels, predictions, num_classes=None, dtype=dtypes.int32, name: str | None = None,
                     weights=None) -> Tensor:
    """A [num_classes, num_classes] matrix whose (i, j) entry counts the examples of label i predicted as j
    (or sums their weights); num_classes defaults to one more than the largest label or prediction.

    tfnb differs: a label or prediction out of range fails in the ScatterNd kernel, not in an assert op.
    """
    with name_scope(name, "confusion_matrix", [predictions, labels, num_classes, weights]) as scope:
        labels = math_ops.cast(convert_to_tensor(labels, name="labels"), dtypes.int64)
        predictions = math_ops.cast(convert_to_tensor(predictions, name="predictions"), dtypes.int64)
        if num_classes is None:
            num_classes = math_ops.maximum(math_ops.reduce_max(predictions), math_ops.reduce_max(labels)) + 1
        else:
            num_classes = math_ops.cast(convert_to_tensor(num_classes, name="num_classes"), dtypes.int64)
        indices = array_ops.stack([labels, predictions], axis=1)
        values = (array_ops.ones_like(predictions, dtype=dtype) if weights is None
                  else math_ops.cast(convert_to_tensor(weights, name="weights"), dtype))
        shape = array_ops.stack([num_classes, num_classes])
        return scatter_nd(indices, values, shape, name=scope)
