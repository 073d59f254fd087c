"""Accumulators: the values a forward loop saves, one per iteration, for its gradient loop.

An `accumulator` op makes a new, empty accumulator each time it runs: once per step at the top
level, once per iteration when it sits in an enclosing loop (one per frame instance, as TF1's
stacks). `accumulator_push(handle, index, value)` stores a value under an iteration index and
`accumulator_read(handle, index)` gives it back, so the backward loop can read iteration k's
values however the forward iterations overlapped. Values live as long as the handle does.
"""

from __future__ import annotations

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.graph import get_default_graph
from tfnb.framework.op_registry import Example, not_differentiable, register_op
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape, as_shape
from tfnb.ops.constant_op import constant, convert_to_tensor


def accumulator(dtype, shape=None, name: str = "accumulator") -> Tensor:
    """A handle to a new accumulator of `dtype` values keyed by iteration (one per run of this op)."""
    attrs = {"dtype": dtypes.as_dtype(dtype), "shape": as_shape(shape)}
    return get_default_graph().create_op("Accumulator", (), attrs, name).outputs[0]


def accumulator_push(handle: Tensor, index, value, name: str = "AccumulatorPush") -> Tensor:
    """Stores `value` under iteration `index`; outputs the index once it is stored."""
    index = convert_to_tensor(index, dtypes.int32)
    return get_default_graph().create_op("AccumulatorPush", (handle, index, convert_to_tensor(value)), None,
                                         name).outputs[0]


def accumulator_read(handle: Tensor, index, dtype, shape=None, name: str = "AccumulatorRead") -> Tensor:
    """The value stored under iteration `index` (InvalidArgumentError at run time if there is none)."""
    attrs = {"dtype": dtypes.as_dtype(dtype), "shape": as_shape(shape)}
    return get_default_graph().create_op("AccumulatorRead", (handle, convert_to_tensor(index, dtypes.int32)),
                                         attrs, name).outputs[0]


def _check_handle_and_index(op) -> None:
    handle, index = op.inputs[0], op.inputs[1]
    if handle.dtype is not dtypes.resource:
        raise TypeError(f"Input 0 of {op.type} must be an accumulator handle, got {handle.dtype.name}")
    if index.dtype is not dtypes.int32 or index.shape.ndims not in (None, 0):
        raise ValueError(f"The index of {op.type} must be an int32 scalar, got {index.dtype.name} {index.shape}")


def _infer_push(op):
    _check_handle_and_index(op)
    return [(dtypes.int32, TensorShape([]))]


def _infer_read(op):
    _check_handle_and_index(op)
    return [(op.attrs["dtype"], op.attrs["shape"])]


def _round_trip(value):
    """Pushes `value` under index 2 and reads it back after the push."""
    handle = accumulator(value.dtype, value.shape)
    pushed = accumulator_push(handle, 2, value)
    with get_default_graph().control_dependencies([pushed]):
        return [pushed, accumulator_read(handle, constant(2), value.dtype, value.shape)]


def _round_trip_reference(value):
    return [np.int32(2), value]


_EXAMPLES = [Example(_round_trip, _round_trip_reference, inputs=((2, 3),), differentiable=False)]
register_op("Accumulator", lambda op: [(dtypes.resource, TensorShape([]))], dtypes=dtypes.ALL, stateful=True,
            examples=_EXAMPLES, attrs={"dtype": "type", "shape": "shape"})
register_op("AccumulatorPush", _infer_push, dtypes=dtypes.ALL, stateful=True, examples=_EXAMPLES)
register_op("AccumulatorRead", _infer_read, dtypes=dtypes.ALL, stateful=True, examples=_EXAMPLES,
            attrs={"dtype": "type", "shape": "shape"})
not_differentiable("Accumulator", "AccumulatorPush", "AccumulatorRead")
