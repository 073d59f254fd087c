"""IndexedSlices: a sparse gradient, rows `indices` of a dense tensor of shape `dense_shape`.

The gradient of a gather (an embedding lookup) touches only the rows looked up; optimizers apply
it to those rows alone. Where a dense tensor is needed it is converted by summing rows per index
(convert_to_tensor does it, with the conversion that tfnb/ops/array/gathering.py registers).
"""

from __future__ import annotations

import collections

from tfnb.framework.tensor import Tensor

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

    def __repr__(self) -> str:
        return f"IndexedSlices(indices={self.indices.name}, values={self.values.name}, dense_shape={self.dense_shape})"

