"""Gradients through tf.while_loop: a backward loop runs the forward iterations in reverse (TF1's structure).

When tf.gradients reaches a loop's Exits, it differentiates the loop as a whole:
- The forward loop gets an iteration counter (a loop variable, "f_count"). Every forward value that a
  gradient rule of a body op needs is pushed, each iteration, into an accumulator under the iteration
  index; the push gates the counter's NextIteration, so the count leaves the loop only once every
  iteration's values are saved.
- The backward loop (its own frame, "<forward loop>_grad") counts that count down to 0. Its loop
  variables are the gradient of each differentiable forward loop variable, starting from the gradient
  of its Exit, and a running sum for each tensor the body captured (a weight used every iteration).
  Its body is the gradient of the forward body, built by tf.gradients' own sweep inside the backward
  context: there a forward value reads as saved in the matching iteration, and a loop invariant (a
  constant Enter) as itself.
- Its Exits are the gradients of the loop variables' initial values and of the captured tensors.
Nested loops and conds need nothing more: an inner loop's count and accumulators are forward values of
the outer loop, saved like any other, and a value from a cond branch is read only in the iterations
that took the branch (the index is switched on the saved predicate, so elsewhere the read is dead).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from tfnb.autodiff.backward_paths import ops_between, sum_partials
from tfnb.framework import dtypes
from tfnb.framework.indexed_slices import IndexedSlices
from tfnb.framework.operation import Operation
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape
from tfnb.ops import array_ops, math_ops
from tfnb.ops.accumulator_ops import accumulator, accumulator_push, accumulator_read
from tfnb.ops.constant_op import constant, convert_to_tensor
from tfnb.ops.control_flow.context import CondContext, WhileContext
from tfnb.ops.control_flow.primitives import (
    enter,
    exit,
    loop_cond,
    merge,
    next_iteration,
    switch,
)


def loop_left_by(op: Operation) -> WhileContext | None:
    """The while loop that `op` exits, if `op` is the Exit of a tf.while_loop."""
    if op.type != "Exit":
        return None
    context = op.inputs[0].op._control_flow_context
    return context if isinstance(context, WhileContext) else None


def backprop_loop(loop: WhileContext, between: set, grads: dict, stops, sweep: Callable) -> set:
    """Builds `loop`'s backward loop from its Exits' gradients in `grads`, adding those of the tensors
    entering it; returns the loop's ops in `between`, which the caller's sweep must not visit again.

    `sweep(graph, ops, grads, stops)` is tf.gradients' own sweep (tfnb/autodiff/gradients.py): it builds the
    gradient of the loop's body inside the backward loop.
    """
    handled = {op for op in between if _inside(op, loop)}
    if isinstance(loop, GradWhileContext):
        raise LookupError(f"Gradients of the gradient loop '{loop.frame_name}' (second order) are not supported")
    if not any(op.type == "Enter" and op._control_flow_context is loop for op in handled):
        raise LookupError(f"Gradients with respect to tensors inside the body of '{loop.frame_name}' are not "
                          "supported: a loop is differentiated as a whole, from its Exits back to its inputs")
    exit_grads = [_dense(sum_partials(grads.get(e))) if e.op.inputs[0].op in between else None
                  for e in loop.exits]
    if not loop.back_prop:
        return handled  # as TF1: the loop passes no gradient back
    relevant, captured, body, body_stops = _body_to_differentiate(loop, exit_grads, between, stops)
    if relevant:
        for entered, grad in _backward_loop(loop, exit_grads, relevant, captured, body, body_stops, sweep):
            _add_gradient(grads, entered.op.inputs[0], grad, between, stops)
    return handled


def _backward_loop(loop: WhileContext, exit_grads: list, relevant: list, captured: list, body: set,
                   body_stops: set, sweep: Callable) -> list[tuple[Tensor, Tensor]]:
    """Builds the backward loop; returns (Enter of the forward loop, gradient of the value it enters)."""
    graph = loop.graph
    count = _history(loop).count
    with graph.name_scope(f"{loop.frame_name.rsplit('/', 1)[-1]}_grad") as scope, graph.control_dependencies(None):
        backward = GradWhileContext(graph, graph._control_flow_context, scope.rstrip("/"), loop)
        backward.count_down(count)
        carried = {i: _loop_variable(backward, _zeros_like(loop.exits[i]) if exit_grads[i] is None else exit_grads[i],
                                     loop.body_inputs[i].shape, "b_grad") for i in relevant}
        body_grads: dict = {}
        for i in relevant:
            body_grads.setdefault(loop.results[i], []).append(carried[i][1])
        with _building_in(graph, backward):
            sweep(graph, body, body_grads, body_stops)
            for i in relevant:
                merged, value, _ = carried[i]
                grad = _dense(sum_partials(body_grads.get(loop.body_inputs[i])))
                _close(merged, array_ops.zeros_like(value) if grad is None else grad, "b_grad")
            per_iteration = [(e, _dense(sum_partials(body_grads.get(e)))) for e in captured]
        sums = [(e, _summed(backward, e, grad)) for e, grad in per_iteration if grad is not None]
    return [(loop.enters[i], carried[i][2]) for i in relevant] + sums


def _body_to_differentiate(loop: WhileContext, exit_grads: list, between: set, stops) -> tuple:
    """(the loop variables carrying gradient, the captured Enters needing one, the body ops, the body's stops).

    A loop variable carries gradient if its Exit has one, or if the body makes one that does from it.
    """
    floats = [i for i, x in enumerate(loop.body_inputs) if _differentiable(x.dtype)]
    invariants = list(loop._routed.values())
    captured = [e for e in invariants if (_differentiable(e.dtype) or e.dtype is dtypes.resource)
                and e.op.inputs[0].op in between and e.op.inputs[0] not in stops]
    body_stops = {x.op.inputs[0] for x in loop.body_inputs} | {e.op.inputs[0] for e in invariants} | set(stops)
    xs = [loop.body_inputs[i] for i in floats] + captured
    relevant = {i for i in floats if exit_grads[i] is not None}
    while True:
        body = ops_between(loop.graph, [loop.results[i] for i in sorted(relevant)], xs, body_stops)
        grown = relevant | {i for i in floats if loop.body_inputs[i].op in body}
        if grown == relevant:
            return sorted(relevant), [e for e in captured if e.op in body], body, body_stops
        relevant = grown


class GradWhileContext(WhileContext):
    """The frame of a backward loop: a value of its forward loop reads as saved in the matching iteration."""

    def __init__(self, graph, outer, frame_name: str, forward: WhileContext) -> None:
        super().__init__(graph, outer, frame_name, forward.parallel_iterations)
        self.forward = forward
        self.index: Tensor | None = None
        self._guarded: dict[tuple, Tensor] = {}

    def count_down(self, count: Tensor) -> None:
        """Builds the counter running from `count` down to 0; the body sees forward indices count-1 ... 0."""
        graph = self.graph
        with _building_in(graph, self.outer):
            entered = enter(count, self.frame_name, parallel_iterations=self.parallel_iterations, name="b_count")
        entered.op._control_flow_context = self
        with _building_in(graph, self):
            merged = merge([entered, entered], name="b_count")[0]
            self.pivot = merged
            self.loop_cond = loop_cond(math_ops.greater(merged, 0, name="b_count"), name="b_count")
            remaining = switch(merged, self.loop_cond, name="b_count")[1]
            self.index = math_ops.subtract(remaining, 1, name="b_count")
            merged.op._update_input(1, next_iteration(self.index, name="b_count"))
            self.pivot = self.index

    def route(self, tensor: Tensor) -> Tensor:
        """`tensor` as seen in this frame: forward loop values are read back from their accumulators."""
        if not _within(tensor.op._control_flow_context, self.forward):
            return super().route(tensor)
        view = self._routed.get(tensor)
        if view is None:
            view = self._routed[tensor] = self._saved_view(tensor)
        return view

    def _saved_view(self, tensor: Tensor) -> Tensor:
        op = tensor.op
        if op.type == "Enter" and op.attrs["is_constant"] and op._control_flow_context is self.forward:
            return self.route(op.inputs[0])  # a loop invariant: the value itself
        if op.type == "Switch":  # a cond's: switched again here, on the saved predicate
            with _building_in(self.graph, self):
                return switch(op.inputs[0], op.inputs[1], name="b_switch")[tensor.value_index]
        conditions = _conditions(tensor, self.forward)
        handle = _history(self.forward).saved(tensor, conditions)
        with _building_in(self.graph, self):
            return accumulator_read(handle, self._index_where(conditions), tensor.dtype, tensor.shape, name="b_acc")

    def _index_where(self, conditions: tuple) -> Tensor:
        """The forward index, alive only in the iterations where `conditions` held in the forward loop."""
        if not conditions:
            return self.index
        found = self._guarded.get(conditions)
        if found is None:
            pred, branch = conditions[-1]
            with _building_in(self.graph, self):
                found = switch(self._index_where(conditions[:-1]), pred, name="b_acc")[branch]
            self._guarded[conditions] = found
        return found


class _History:
    """What a forward loop keeps for its gradients: its iteration count and values saved per iteration."""

    def __init__(self, loop: WhileContext) -> None:
        self.loop = loop
        graph = loop.graph
        with graph.name_scope(loop.frame_name + "/"), graph.control_dependencies(None):
            with _building_in(graph, loop.outer):
                zero = constant(0, name="f_count")
            merged, self.index, self.count = _loop_variable(loop, zero, TensorShape([]), "f_count")
            with _building_in(graph, loop):
                self.next_count = _close(merged, math_ops.add(self.index, 1, name="f_count"), "f_count")
        self.accumulators: dict[Tensor, Tensor] = {}
        self.switches: dict[tuple, tuple] = {}

    def saved(self, tensor: Tensor, conditions: tuple) -> Tensor:
        """The handle of the accumulator holding `tensor` for every iteration (pushed from now on)."""
        handle = self.accumulators.get(tensor)
        if handle is not None:
            return handle
        graph, loop = self.loop.graph, self.loop
        with graph.name_scope(loop.frame_name + "/"), graph.control_dependencies(None):
            with _building_in(graph, loop.outer):
                handle = self.accumulators[tensor] = accumulator(tensor.dtype, tensor.shape, name="f_acc")
            with _building_in(graph, loop):
                stored = accumulator_push(handle, self.index, tensor, name="f_acc")
                if conditions:
                    # Exactly one input is alive in each iteration: the push if its branches ran, else the
                    # index on the side of the first condition that failed. So the Merge is never dead.
                    failed = [self._switched(conditions[:k + 1])[1 - branch]
                              for k, (_, branch) in enumerate(conditions)]
                    stored = merge([stored, *failed], name="f_acc")[0]
        self.next_count.op._add_control_input(stored.op)
        return handle

    def _switched(self, conditions: tuple) -> tuple[Tensor, Tensor]:
        """Switch(index, last predicate), in the iterations where the other conditions held."""
        found = self.switches.get(conditions)
        if found is None:
            base = self.index if len(conditions) == 1 else self._switched(conditions[:-1])[conditions[-2][1]]
            found = self.switches[conditions] = switch(base, conditions[-1][0], name="f_acc")
        return found


def _history(loop: WhileContext) -> _History:
    if loop.history is None:
        loop.history = _History(loop)
    return loop.history


def _conditions(tensor: Tensor, loop: WhileContext) -> tuple:
    """The (predicate, branch) pairs, outermost first, of the cond branches around `tensor` in `loop`.

    They say in which iterations `tensor` is alive, as for every op that tf.cond creates in a branch
    (a Switch's outputs, alive on one side, are not read from accumulators but switched again).
    """
    found = []
    context = tensor.op._control_flow_context
    while context is not loop:
        if not isinstance(context, CondContext):
            raise LookupError(f"'{tensor.name}' is inside a loop nested in '{loop.frame_name}'; only that loop's "
                              "gradient can read it")
        found.append((context.pred, context.branch))
        context = context.outer
    found.reverse()
    return tuple(found)


def _loop_variable(context: WhileContext, initial: Tensor, shape: TensorShape, name: str) -> tuple:
    """A loop variable added to `context`'s loop: (its Merge, its value in the body, its Exit); see `_close`."""
    graph = context.graph
    with _building_in(graph, context.outer):
        entered = enter(initial, context.frame_name, parallel_iterations=context.parallel_iterations, name=name)
    entered.op._control_flow_context = context
    with _building_in(graph, context):
        merged = merge([entered, entered], name=name)[0]
        merged._shape = shape
        false_side, true_side = switch(merged, context.loop_cond, name=name)
    with _building_in(graph, context.outer):
        result = exit(false_side, name=name)
    return merged, true_side, result


def _close(merged: Tensor, value: Tensor, name: str) -> Tensor:
    """Makes `value`, built in the body, the loop variable's next value; returns the NextIteration."""
    with _building_in(merged.graph, merged.op._control_flow_context):
        following = next_iteration(value, name=name)
    merged.op._update_input(1, following)
    return following


def _summed(backward: GradWhileContext, entered: Tensor, grad: Tensor) -> Tensor:
    """The Exit of a backward loop variable adding up a captured tensor's gradient over the iterations."""
    graph = backward.graph
    with _building_in(graph, backward.outer):
        if grad.shape.is_fully_defined():
            zero, shape = array_ops.zeros(grad.shape, grad.dtype, name="b_acc"), grad.shape
        elif entered.dtype is not dtypes.resource:
            zero, shape = array_ops.zeros_like(entered.op.inputs[0], name="b_acc"), grad.shape
        else:  # a variable of unknown shape: the first addition broadcasts the scalar zero
            zero, shape = constant(0, grad.dtype, name="b_acc"), TensorShape(None)
    merged, total, result = _loop_variable(backward, zero, shape, "b_acc")
    with _building_in(graph, backward):
        _close(merged, math_ops.add(total, grad, name="b_acc"), "b_acc")
    return result


def _zeros_like(tensor: Tensor) -> Tensor:
    if tensor.shape.is_fully_defined():
        return array_ops.zeros(tensor.shape, tensor.dtype)
    return array_ops.zeros_like(tensor)


def _add_gradient(grads: dict, tensor: Tensor, grad: Tensor, between: set, stops) -> None:
    if tensor.op in between and tensor not in stops:
        grads.setdefault(tensor, []).append(grad)


def _dense(grad):
    return convert_to_tensor(grad) if isinstance(grad, IndexedSlices) else grad


def _differentiable(dtype) -> bool:
    return dtype.is_floating or dtype.is_complex


def _inside(op: Operation, loop: WhileContext) -> bool:
    return loop_left_by(op) is loop or _within(op._control_flow_context, loop)


def _within(context, loop: WhileContext) -> bool:
    while context is not None:
        if context is loop:
            return True
        context = context.outer
    return False


@contextlib.contextmanager
def _building_in(graph, context):
    """Creates ops in `context` (None: outside every cond and loop) for the duration of the block."""
    saved = graph._control_flow_context
    graph._control_flow_context = context
    try:
        yield
    finally:
        graph._control_flow_context = saved
