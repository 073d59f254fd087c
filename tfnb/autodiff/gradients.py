"""Reverse-mode differentiation on the graph (OSDI 2016, section 4.1).

Find the ops on backward paths from `ys` to `xs`, then visit them from the outputs back,
each once all its consumers on those paths have contributed; partial gradients reaching the
same tensor are summed. The result is ordinary graph: it can be fetched, traced and drawn.
"""

from __future__ import annotations

from tfnb.framework.graph import get_default_graph
from tfnb.framework.indexed_slices import IndexedSlices
from tfnb.framework.operation import Operation
from tfnb.framework.tensor import Tensor


def gradients(ys, xs, grad_ys=None, name: str = "gradients", colocate_gradients_with_ops: bool = False,
              gate_gradients: bool = False, aggregation_method=None, stop_gradients=None) -> list:
    """d(sum of ys)/d(x) for each x in xs, as tensors; None for an x that ys do not depend on."""
    from tfnb.ops import array_ops, math_ops
    from tfnb.ops.constant_op import convert_to_tensor

    ys = [_as_tensor(y) for y in _as_list(ys)]
    xs = [_as_tensor(x) for x in _as_list(xs)]
    grad_ys = _as_list(grad_ys) if grad_ys is not None else [None] * len(ys)
    stops = {_as_tensor(s) for s in _as_list(stop_gradients or [])}
    graph = ys[0].graph if ys else get_default_graph()
    with graph.as_default(), graph.name_scope(name):
        between = _ops_between(graph, ys, xs, stops)
        grads: dict[Tensor, list[Tensor]] = {}
        for y, grad_y in zip(ys, grad_ys):
            seed = array_ops.ones_like(y, name="grad_ys") if grad_y is None else convert_to_tensor(grad_y, y.dtype)
            grads.setdefault(y, []).append(seed)
        backprop(graph, between, grads, stops)
        return [_sum(grads.get(x), math_ops) if _differentiable(x) else None for x in xs]


def _differentiable(tensor: Tensor) -> bool:
    """Floating, complex and resource (a variable's handle) tensors have gradients; integers do not, as in TF."""
    dtype = tensor.dtype
    return dtype.is_floating or dtype.is_complex or dtype.name == "resource"


def backprop(graph, between: set[Operation], grads: dict, stops) -> None:
    """Visits the ops of `between` from the outputs back, adding their inputs' gradients to `grads`.

    A while loop is differentiated as a whole when the visit reaches its Exits: its backward loop
    (tfnb/autodiff/while_grad.py) takes the gradients of all its Exits and gives those of its inputs.
    """
    from tfnb.autodiff import while_grad
    from tfnb.ops import array_ops, math_ops

    handled: set[Operation] = set()
    for op in sorted(between, key=lambda o: o._id, reverse=True):
        if op in handled:
            continue
        loop = while_grad.loop_left_by(op)
        if loop is not None:
            handled |= while_grad.backprop_loop(loop, between, grads, stops)
            continue
        out_grads = [_sum(grads.get(t), math_ops) for t in op.outputs]
        if all(g is None for g in out_grads) or any(t in stops for t in op.outputs):
            continue  # a stop tensor gets its own gradient, but nothing flows through it
        if not any(t.op in between and t not in stops for t in op.inputs):
            continue  # an x with nothing differentiable upstream: its gradient is complete
        rule = op.op_def.gradient
        if rule is None:
            raise LookupError(f"No gradient defined for operation '{op.name}' (op type: {op.type}), "
                              f"created at {op.creation_site}")
        out_grads = [g if g is not None else array_ops.zeros_like(t) for g, t in zip(out_grads, op.outputs)]
        with graph.name_scope(f"{op.name}_grad"):
            in_grads = rule(op, *out_grads)
        in_grads = list(in_grads) if isinstance(in_grads, (list, tuple)) else [in_grads]
        if len(in_grads) != len(op.inputs):
            raise ValueError(f"The gradient of {op.type} returned {len(in_grads)} gradients for "
                             f"{len(op.inputs)} inputs")
        for tensor, grad in zip(op.inputs, in_grads):
            if grad is not None and tensor.op in between:
                grads.setdefault(tensor, []).append(grad)


def _ops_between(graph, ys, xs, stops) -> set[Operation]:
    """Ops on a data path from some x to some y (the x ops included), not crossing stop tensors."""
    consumers: dict[Tensor, list[Operation]] = {}
    for op in graph.get_operations():
        for tensor in op.inputs:
            consumers.setdefault(tensor, []).append(op)
    forward: set[Operation] = set()
    stack = [x.op for x in xs]
    while stack:
        op = stack.pop()
        if op in forward:
            continue
        forward.add(op)
        for tensor in op.outputs:
            if tensor not in stops:
                stack.extend(consumers.get(tensor, ()))
    between: set[Operation] = set()
    stack = [y.op for y in ys]
    while stack:
        op = stack.pop()
        if op in between or op not in forward:
            continue
        between.add(op)
        for tensor in op.inputs:
            if tensor not in stops:
                stack.append(tensor.op)
            elif tensor.op in forward:
                between.add(tensor.op)  # receives its gradient; its own inputs are not visited
    return between


def _sum(parts, math_ops):
    """The sum of partial gradients; sparse parts stay sparse when all parts are sparse."""
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    if all(isinstance(p, IndexedSlices) for p in parts):
        from tfnb.ops.array_ops import concat
        return IndexedSlices(concat([p.values for p in parts], 0), concat([p.indices for p in parts], 0),
                             parts[0].dense_shape)
    from tfnb.ops.constant_op import convert_to_tensor
    return math_ops.add_n([convert_to_tensor(p) for p in parts])


def _as_list(value) -> list:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _as_tensor(value) -> Tensor:
    if isinstance(value, Tensor):
        return value
    if hasattr(value, "_gradient_tensor"):
        return value._gradient_tensor()
    from tfnb.ops.constant_op import convert_to_tensor
    return convert_to_tensor(value)
