"""IndexedSlices: a sparse gradient, rows `indices` of a dense tensor of shape `dense_shape`.

The gradient of a gather (an embedding lookup) touches only the rows looked up; optimizers apply
it to those rows alone. Where a dense tensor is needed it is converted by summing rows per index.
"""

from __future__ import annotations

import collections

from tfnb.framework.tensor import Tensor
from tfnb.ops.constant_op import register_tensor_conversion_function

IndexedSlicesValue = collections.namedtuple("IndexedSlicesValue", ["values", "indices", "dense_shape"])
IndexedSlicesValue.__doc__ = "What Session.run gives for an IndexedSlices: values, indices and dense_shape (or None)."


class IndexedSlices:
    """`values[i]` is row `indices[i]` of a tensor of shape `dense_shape`; repeated indices add up."""

    def __init__(self, values: Tensor, indices: Tensor, dense_shape: Tensor | None = None) -> None:
        self.values = values
        self.indices = indices
        self.dense_shape = dense_shape

    @property
    def dtype(self):
        return self.values.dtype

    @property
    def graph(self):
        return self.values.graph

    @property
    def op(self):
        return self.values.op

    @property
    def name(self) -> str:
        return self.values.name

    @property
    def shape(self):
        return self.values.shape

    def to_dense(self, name: str | None = None) -> Tensor:
        """The dense tensor these slices stand for."""
        from tfnb.ops.array_ops import gather
        from tfnb.ops.segment_ops import unsorted_segment_sum
        rows = gather(self.dense_shape, 0)
        return unsorted_segment_sum(self.values, self.indices, rows, name=name or "IndexedSlices_to_dense")

    def __repr__(self) -> str:
        return f"IndexedSlices(indices={self.indices.name}, values={self.values.name}, dense_shape={self.dense_shape})"


def _to_dense(value: IndexedSlices, dtype=None, name=None, as_ref=False) -> Tensor:
    dense = value.to_dense(name)
    if dtype is not None and dense.dtype is not dtype:
        raise ValueError(f"Cannot convert IndexedSlices of dtype {dense.dtype.name} to {dtype.name}")
    return dense


register_tensor_conversion_function(IndexedSlices, _to_dense)
