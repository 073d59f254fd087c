"""Reverse-mode differentiation on the graph (OSDI 2016, section 4.1).

Find the ops on backward paths from `ys` to `xs`, then visit them from the outputs back,
each once all its consumers on those paths have contributed; partial gradients reaching the
same tensor are summed. The result is ordinary graph: it can be fetched, traced and drawn.
"""

from __future__ import annotations

import enum

from tfnb.autodiff import while_grad
from tfnb.autodiff.backward_paths import ops_between, sum_partials
from tfnb.framework.graph import get_default_graph
from tfnb.framework.operation import Operation
from tfnb.framework.tensor import Tensor
from tfnb.ops.array.filling import ones_like, zeros_like
from tfnb.ops.constant_op import convert_to_tensor


class UnconnectedGradients(enum.Enum):
    """What tf.gradients gives for an x that ys do not depend on: None, or zeros shaped like x."""

    NONE = "none"
    ZERO = "zero"


def gradients(ys, xs, grad_ys=None, name: str = "gradients", colocate_gradients_with_ops: bool = False,
              gate_gradients: bool = False, aggregation_method=None, stop_gradients=None,
              unconnected_gradients=UnconnectedGradients.NONE) -> list:
    """d(sum of ys)/d(x) for each x in xs, as tensors; for an x that ys do not depend on, None (or zeros with
    unconnected_gradients='zero')."""
    unconnected = UnconnectedGradients(unconnected_gradients.value if isinstance(
        unconnected_gradients, UnconnectedGradients) else unconnected_gradients)
    ys = [_as_tensor(y) for y in _as_list(ys)]
    given_xs = _as_list(xs)
    xs = [_as_tensor(x) for x in given_xs]
    grad_ys = _as_list(grad_ys) if grad_ys is not None else [None] * len(ys)
    stops = {_as_tensor(s) for s in _as_list(stop_gradients or [])}
    graph = _common_graph(ys + xs + list(stops) + [g for g in grad_ys if isinstance(g, Tensor)])
    with graph.as_default(), graph.name_scope(name):
        between = ops_between(graph, ys, xs, stops)
        grads: dict[Tensor, list[Tensor]] = {}
        for y, grad_y in zip(ys, grad_ys):
            seed = ones_like(y, name="grad_ys") if grad_y is None else convert_to_tensor(grad_y, y.dtype)
            grads.setdefault(y, []).append(seed)
        backprop(graph, between, grads, stops)
        results = [sum_partials(grads.get(x)) if _differentiable(x) else None for x in xs]
        if unconnected is UnconnectedGradients.ZERO:
            results = [zeros_like(convert_to_tensor(given)) if result is None else result
                       for result, given in zip(results, given_xs)]
        return results


def _differentiable(tensor: Tensor) -> bool:
    """Floating, complex and resource (a variable's handle) tensors have gradients; integers do not, as in TF."""
    dtype = tensor.dtype
    return dtype.is_floating or dtype.is_complex or dtype.name == "resource"


def backprop(graph, between: set[Operation], grads: dict, stops) -> None:
    """Visits the ops of `between` from the outputs back, adding their inputs' gradients to `grads`.

    A while loop is differentiated as a whole when the visit reaches its Exits: its backward loop
    (tfnb/autodiff/while_grad.py) takes the gradients of all its Exits and gives those of its inputs.
    """
    handled: set[Operation] = set()
    for op in sorted(between, key=lambda o: o._id, reverse=True):
        if op in handled:
            continue
        loop = while_grad.loop_left_by(op)
        if loop is not None:
            handled |= while_grad.backprop_loop(loop, between, grads, stops, sweep=backprop)
            continue
        out_grads = [sum_partials(grads.get(t)) for t in op.outputs]
        if all(g is None for g in out_grads) or any(t in stops for t in op.outputs):
            continue  # a stop tensor gets its own gradient, but nothing flows through it
        if not any(t.op in between and t not in stops for t in op.inputs):
            continue  # an x with nothing differentiable upstream: its gradient is complete
        rule = op.op_def.gradient
        if rule is None:
            raise LookupError(f"No gradient defined for operation '{op.name}' (op type: {op.type}), "
                              f"created at {op.creation_site}")
        out_grads = [g if g is not None else zeros_like(t) for g, t in zip(out_grads, op.outputs)]
        with graph.name_scope(f"{op.name}_grad"):
            in_grads = rule(op, *out_grads)
        in_grads = list(in_grads) if isinstance(in_grads, (list, tuple)) else [in_grads]
        if len(in_grads) != len(op.inputs):
            raise ValueError(f"The gradient of {op.type} returned {len(in_grads)} gradients for "
                             f"{len(op.inputs)} inputs")
        for tensor, grad in zip(op.inputs, in_grads):
            if grad is not None and tensor.op in between:
                grads.setdefault(tensor, []).append(grad)


def _common_graph(tensors: list[Tensor]):
    """The graph of all `tensors` (the default graph if there are none); ValueError, as TF, if they differ."""
    if not tensors:
        return get_default_graph()
    first = tensors[0]
    for tensor in tensors[1:]:
        if tensor.graph is not first.graph:
            raise ValueError(f"{tensor} must be from the same graph as {first} (graphs are {tensor.graph} and "
                             f"{first.graph}).")
    return first.graph


def _as_list(value) -> list:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _as_tensor(value) -> Tensor:
    if isinstance(value, Tensor):
        return value
    if hasattr(value, "_gradient_tensor"):
        return value._gradient_tensor()
    return convert_to_tensor(value)
