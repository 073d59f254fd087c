"""Conditional accumulators: gradients from several replicas, averaged, the stale ones dropped (OSDI paper, 4.4).

An accumulator is a resource, as a queue is (kernels/conditional_accumulators.py holds it). Each replica applies
its gradient with the step it computed it at (`local_step`); a gradient older than the accumulator's own step
is silently dropped. `take_grad(n)` waits until n gradients have arrived, returns their mean (or sum), resets
the sum and advances the accumulator's step, so the gradients of late replicas (backup workers' stragglers)
no longer count. tf.train.SyncReplicasOptimizer aggregates with them.
"""

from __future__ import annotations

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.graph import get_default_graph
from tfnb.framework.indexed_slices import IndexedSlices
from tfnb.framework.op_registry import Example, not_differentiable, register_op
from tfnb.framework.operation import Operation
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape, as_shape, unknown_shape
from tfnb.ops.constant_op import convert_to_tensor

__all__ = ["ConditionalAccumulator", "ConditionalAccumulatorBase", "SparseConditionalAccumulator"]

REDUCTIONS = ("MEAN", "SUM")
_HANDLE_TYPES = ("ConditionalAccumulatorV2", "SparseConditionalAccumulatorV2")


class ConditionalAccumulatorBase:
    """What both accumulators share: the handle, how many gradients wait, the accumulator's global step."""

    def __init__(self, dtype, shape, accumulator_ref: Tensor) -> None:
        self._dtype, self._shape, self._accumulator_ref = dtypes.as_dtype(dtype), as_shape(shape), accumulator_ref

    @property
    def accumulator_ref(self) -> Tensor:
        return self._accumulator_ref

    @property
    def name(self) -> str:
        return self._accumulator_ref.op.name

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    def num_accumulated(self, name: str | None = None) -> Tensor:
        """An int32 scalar: how many gradients the accumulator holds now."""
        return get_default_graph().create_op("AccumulatorNumAccumulatedV2", (self._accumulator_ref,), None,
                                             name or "num_accumulated").outputs[0]

    def set_global_step(self, new_global_step, name: str | None = None) -> Operation:
        """An op setting the accumulator's step: gradients computed before it are dropped from then on."""
        step = convert_to_tensor(new_global_step, dtype=dtypes.int64)
        return get_default_graph().create_op("AccumulatorSetGlobalStepV2", (self._accumulator_ref, step), None,
                                             name or "SetGlobalStep")


class ConditionalAccumulator(ConditionalAccumulatorBase):
    """Accumulates dense gradients (TF1's tf.ConditionalAccumulator)."""

    def __init__(self, dtype, shape=None, shared_name: str | None = None, name: str = "conditional_accumulator",
                 reduction_type: str = "MEAN") -> None:
        ref = _accumulator("ConditionalAccumulatorV2", dtype, shape, shared_name, name, reduction_type)
        super().__init__(dtype, shape, ref)

    def apply_grad(self, grad, local_step=0, name: str | None = None) -> Operation:
        """An op adding `grad`, computed at `local_step`, unless that step is older than the accumulator's."""
        grad = convert_to_tensor(grad, dtype=self._dtype)
        if not grad.shape.is_compatible_with(self._shape):
            raise ValueError(f"Shapes {grad.shape} and {self._shape} are incompatible")
        step = convert_to_tensor(local_step, dtype=dtypes.int64)
        return get_default_graph().create_op("AccumulatorApplyGradientV2", (self._accumulator_ref, step, grad),
                                             None, name or "AccumulatorApplyGradient")

    def take_grad(self, num_required, name: str | None = None) -> Tensor:
        """The mean (or sum) of `num_required` gradients, once that many arrived; the accumulator then starts over."""
        required = convert_to_tensor(num_required, dtype=dtypes.int32)
        return get_default_graph().create_op("AccumulatorTakeGradientV2", (self._accumulator_ref, required),
                                             {"dtype": self._dtype}, name or "AccumulatorTakeGradient").outputs[0]


class SparseConditionalAccumulator(ConditionalAccumulatorBase):
    """Accumulates IndexedSlices gradients (TF1's tf.SparseConditionalAccumulator): rows by index.

    With reduction "MEAN" each row is divided by the number of gradients that had it, as in TF.
    """

    def __init__(self, dtype, shape=None, shared_name: str | None = None,
                 name: str = "sparse_conditional_accumulator", reduction_type: str = "MEAN") -> None:
        ref = _accumulator("SparseConditionalAccumulatorV2", dtype, shape, shared_name, name, reduction_type)
        super().__init__(dtype, shape, ref)

    def apply_indexed_slices_grad(self, grad: IndexedSlices, local_step=0, name: str | None = None) -> Operation:
        """`apply_grad` of an IndexedSlices."""
        return self.apply_grad(grad.indices, grad.values, grad.dense_shape, local_step, name)

    def apply_grad(self, grad_indices, grad_values, grad_shape=None, local_step=0, name: str | None = None) \
            -> Operation:
        """An op adding the rows `grad_values` at `grad_indices`, unless `local_step` is older than the
        accumulator's step."""
        indices = convert_to_tensor(grad_indices, dtype=dtypes.int64)
        values = convert_to_tensor(grad_values, dtype=self._dtype)
        if grad_shape is None:
            grad_shape = self._shape.as_list() if self._shape.is_fully_defined() else [0] * max(values.shape.ndims, 1)
        shape = convert_to_tensor(grad_shape, dtype=dtypes.int64)
        step = convert_to_tensor(local_step, dtype=dtypes.int64)
        return get_default_graph().create_op("SparseAccumulatorApplyGradientV2",
                                             (self._accumulator_ref, step, indices, values, shape), None,
                                             name or "SparseAccumulatorApplyGradient")

    def take_grad(self, num_required, name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
        """(indices, values, shape) of the mean of `num_required` gradients, once that many arrived."""
        return tuple(self._take(num_required, name).outputs)

    def take_indexed_slices_grad(self, num_required, name: str | None = None) -> IndexedSlices:
        """`take_grad` as an IndexedSlices."""
        indices, values, shape = self._take(num_required, name).outputs
        return IndexedSlices(values, indices, shape)

    def _take(self, num_required, name: str | None) -> Operation:
        required = convert_to_tensor(num_required, dtype=dtypes.int32)
        return get_default_graph().create_op("SparseAccumulatorTakeGradientV2", (self._accumulator_ref, required),
                                             {"dtype": self._dtype}, name or "SparseAccumulatorTakeGradient")


def _accumulator(op_type: str, dtype, shape, shared_name, name: str, reduction_type: str) -> Tensor:
    if reduction_type not in REDUCTIONS:
        raise ValueError(f"reduction_type must be one of {list(REDUCTIONS)}, got {reduction_type!r}")
    attrs = {"dtype": dtypes.as_dtype(dtype), "shape": as_shape(shape) if shape is not None else unknown_shape(),
             "container": "", "shared_name": shared_name or "", "reduction_type": reduction_type}
    return get_default_graph().create_op(op_type, (), attrs, name).outputs[0]


# -- shape and dtype rules ----------------------------------------------------------------------------


def _check_handle(op) -> None:
    if op.inputs[0].dtype is not dtypes.resource:
        raise TypeError(f"Input 0 of {op.type} must be an accumulator handle, got {op.inputs[0].dtype.name}")


def _accumulated_shape(op) -> TensorShape:
    """The shape of the accumulator behind op's handle input (unknown if it is not an accumulator op)."""
    source = op.inputs[0].op
    return source.attrs["shape"] if source.type in _HANDLE_TYPES else unknown_shape()


def _infer_handle(op):
    return [(dtypes.resource, TensorShape([]))]


def _infer_nothing(op):
    _check_handle(op)
    return []


def _infer_take(op):
    _check_handle(op)
    return [(op.attrs["dtype"], _accumulated_shape(op))]


def _infer_sparse_take(op):
    _check_handle(op)
    shape = _accumulated_shape(op)
    rows = TensorShape([None]).concatenate(shape[1:]) if shape.ndims else unknown_shape()
    return [(dtypes.int64, TensorShape([None])), (op.attrs["dtype"], rows),
            (dtypes.int64, TensorShape([shape.ndims]))]


# -- examples: each accumulates the gradients given and takes their mean -----------------------------


def _mean_of(*grads):
    accumulator = ConditionalAccumulator(grads[0].dtype, grads[0].shape)
    applied = [accumulator.apply_grad(g) for g in grads]
    with get_default_graph().control_dependencies(applied):
        return accumulator.take_grad(len(grads))


def _count_of(*grads):
    accumulator = ConditionalAccumulator(grads[0].dtype, grads[0].shape)
    with get_default_graph().control_dependencies([accumulator.apply_grad(g) for g in grads]):
        return accumulator.num_accumulated()


def _stale_dropped(fresh, stale):
    accumulator = ConditionalAccumulator(fresh.dtype, fresh.shape)
    with get_default_graph().control_dependencies([accumulator.set_global_step(5)]):
        applied = [accumulator.apply_grad(fresh, local_step=5), accumulator.apply_grad(stale, local_step=4)]
    with get_default_graph().control_dependencies(applied):
        return accumulator.take_grad(1)


def _sparse_mean_of(rows, other):
    accumulator = SparseConditionalAccumulator(rows.dtype, [4, 2])
    applied = [accumulator.apply_grad([0, 2], rows), accumulator.apply_grad([2, 3], other)]
    with get_default_graph().control_dependencies(applied):
        return list(accumulator.take_grad(2))


def _sparse_reference(rows, other):
    sums = {0: rows[0], 2: rows[1] + other[0], 3: other[1]}
    counts = {0: 1, 2: 2, 3: 1}
    values = np.stack([sums[i] / np.asarray(counts[i], rows.dtype) for i in (0, 2, 3)])
    return [np.array([0, 2, 3], np.int64), values.astype(rows.dtype), np.array([4, 2], np.int64)]


_FLOATS = (dtypes.float32, dtypes.float64)
_MEAN = Example(_mean_of, lambda *g: (sum(g) / np.asarray(len(g), g[0].dtype)).astype(g[0].dtype),
                inputs=((2, 3), (2, 3), (2, 3)), dtypes=_FLOATS, atol=1e-5, differentiable=False)
_STALE = Example(_stale_dropped, lambda fresh, stale: fresh, inputs=((3,), (3,)), dtypes=_FLOATS,
                 differentiable=False)
_COUNT = Example(_count_of, lambda *g: np.array(len(g), np.int32), inputs=((2,), (2,)), dtypes=_FLOATS,
                 differentiable=False)
_SPARSE = Example(_sparse_mean_of, _sparse_reference, inputs=((2, 2), (2, 2)), dtypes=_FLOATS, atol=1e-5,
                  differentiable=False)
_ACCUMULATOR_ATTRS = {"dtype": "type", "shape": "shape", "container": "string", "shared_name": "string",
                      "reduction_type": "string"}

register_op("ConditionalAccumulatorV2", _infer_handle, dtypes=_FLOATS, stateful=True, examples=[_MEAN, _STALE],
            attrs=_ACCUMULATOR_ATTRS)
register_op("SparseConditionalAccumulatorV2", _infer_handle, dtypes=_FLOATS, stateful=True, examples=[_SPARSE],
            attrs=_ACCUMULATOR_ATTRS)
register_op("AccumulatorApplyGradientV2", _infer_nothing, dtypes=_FLOATS, stateful=True, examples=[_MEAN, _STALE])
register_op("SparseAccumulatorApplyGradientV2", _infer_nothing, dtypes=_FLOATS, stateful=True, examples=[_SPARSE])
register_op("AccumulatorTakeGradientV2", _infer_take, dtypes=_FLOATS, stateful=True, examples=[_MEAN, _STALE],
            attrs={"dtype": "type"})
register_op("SparseAccumulatorTakeGradientV2", _infer_sparse_take, dtypes=_FLOATS, stateful=True,
            examples=[_SPARSE], attrs={"dtype": "type"})
register_op("AccumulatorNumAccumulatedV2", lambda op: _check_handle(op) or [(dtypes.int32, TensorShape([]))],
            dtypes=_FLOATS, stateful=True, examples=[_COUNT])
register_op("AccumulatorSetGlobalStepV2", _infer_nothing, dtypes=_FLOATS, stateful=True, examples=[_STALE])
not_differentiable(*_HANDLE_TYPES, "AccumulatorApplyGradientV2", "SparseAccumulatorApplyGradientV2",
                   "AccumulatorTakeGradientV2", "SparseAccumulatorTakeGradientV2", "AccumulatorNumAccumulatedV2",
                   "AccumulatorSetGlobalStepV2")
