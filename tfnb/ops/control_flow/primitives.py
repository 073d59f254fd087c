"""The paper's control-flow primitives (2015, section 4.4): Switch, Merge, Enter, Exit, NextIteration.

Their meaning lives in the executor (tfnb/runtime/executor.py), which tags every value with a frame
and an iteration and propagates "dead" values down the branch a Switch did not take:
- Switch(data, pred) forwards data to output 1 if pred else output 0; the other output is dead.
- Merge(inputs) forwards the first live input, and its index; dead only if every input is dead.
- Enter(data) moves a value into a child frame (a loop); a constant Enter feeds every iteration.
- NextIteration(data) moves a value to the next iteration of its frame; Exit(data) leaves the frame.
- LoopCond(pred) marks a loop's predicate.

A Switch or Merge has a gradient only as part of a tf.cond (tfnb/ops/control_flow/cond.py); a
tf.while_loop is differentiated as a whole (tfnb/autodiff/while_grad.py).
"""

from __future__ import annotations

from tfnb.framework import dtypes
from tfnb.framework.graph import get_default_graph
from tfnb.framework.op_registry import register_op
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape
from tfnb.ops.inference import same_as_input

CONTROL_FLOW_OP_TYPES = frozenset({"Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond"})


def _infer_switch(op):
    data, pred = op.inputs
    if pred.dtype is not dtypes.bool_:
        raise TypeError(f"The predicate of a Switch must be bool, got {pred.dtype.name}")
    if pred.shape.ndims not in (None, 0):
        raise ValueError(f"The predicate of a Switch must be a scalar, got shape {pred.shape}")
    return [(data.dtype, data.shape), (data.dtype, data.shape)]


def _infer_merge(op):
    first = op.inputs[0]
    shape = first.shape
    for tensor in op.inputs[1:]:
        if tensor.dtype is not first.dtype:
            raise TypeError(f"Merge inputs must have one dtype, got {first.dtype.name} and {tensor.dtype.name}")
        shape = _most_specific_common(shape, tensor.shape)
    return [(first.dtype, shape), (dtypes.int32, TensorShape([]))]


def _most_specific_common(a: TensorShape, b: TensorShape) -> TensorShape:
    if a.ndims is None or b.ndims is None or a.ndims != b.ndims:
        return TensorShape(None)
    return TensorShape([x if x == y else None for x, y in zip(a.as_tuple(), b.as_tuple())])


register_op("Switch", _infer_switch, dtypes=dtypes.ALL, control_flow=True)
register_op("Merge", _infer_merge, dtypes=dtypes.ALL, control_flow=True)
register_op("Enter", same_as_input(0), dtypes=dtypes.ALL, control_flow=True,
            attrs={"frame_name": "string", "is_constant": "bool", "parallel_iterations": "int"})
register_op("Exit", same_as_input(0), dtypes=dtypes.ALL, control_flow=True)
register_op("NextIteration", same_as_input(0), dtypes=dtypes.ALL, control_flow=True)
register_op("LoopCond", same_as_input(0), dtypes=(dtypes.bool_,), control_flow=True)


def switch(data: Tensor, pred: Tensor, name: str | None = None) -> tuple[Tensor, Tensor]:
    """(output_false, output_true): data goes to the output that pred selects; the other is dead."""
    op = get_default_graph().create_op("Switch", (data, pred), None, name or "Switch")
    return op.outputs[0], op.outputs[1]


def merge(inputs, name: str | None = None) -> tuple[Tensor, Tensor]:
    """(output, value_index): the first of `inputs` to arrive alive."""
    op = get_default_graph().create_op("Merge", tuple(inputs), None, name or "Merge")
    return op.outputs[0], op.outputs[1]


def enter(data: Tensor, frame_name: str, is_constant: bool = False, parallel_iterations: int = 10,
          name: str | None = None) -> Tensor:
    """`data` inside the loop frame `frame_name`; a constant enter is available to every iteration."""
    attrs = {"frame_name": frame_name, "is_constant": bool(is_constant), "parallel_iterations": int(parallel_iterations)}
    return get_default_graph().create_op("Enter", (data,), attrs, name or "Enter").outputs[0]


def exit(data: Tensor, name: str | None = None) -> Tensor:  # noqa: A001  (TF's name)
    """`data` leaving its loop frame, once the loop ends."""
    return get_default_graph().create_op("Exit", (data,), None, name or "Exit").outputs[0]


def next_iteration(data: Tensor, name: str | None = None) -> Tensor:
    """`data` passed to the next iteration of its frame."""
    return get_default_graph().create_op("NextIteration", (data,), None, name or "NextIteration").outputs[0]


def loop_cond(pred: Tensor, name: str | None = None) -> Tensor:
    """A loop's termination predicate (the Switches of the loop variables read it)."""
    return get_default_graph().create_op("LoopCond", (pred,), None, name or "LoopCond").outputs[0]
