"""Ordering a plan: the paper's dependency-count executor run ahead of time (2015, section 3.1).

Each node counts its unfinished inputs (data and control); a node whose count reaches zero joins
the ready queue. The order in which nodes leave the queue is the order a plan's code runs them.
"""

from __future__ import annotations

from collections import deque

from tfnb.framework.errors import InvalidArgumentError
from tfnb.framework.operation import Operation, is_loop_back_edge


def dependencies_of(ops, feeds, rewritten=None) -> dict[Operation, list[Operation]]:
    """For each op, the distinct ops it waits for (producers of unfed inputs, and control inputs).

    After rewrites, inputs are resolved to the tensors that replace them, and folded values wait for nothing.
    A loop's back edge (NextIteration -> Merge) is left out: it is waited for per iteration, at run time.
    """
    fed = set(feeds)
    present = set(ops)
    result = {}
    for op in ops:
        deps = []
        for t in op.inputs:
            if rewritten is not None:
                t = rewritten.resolve(t)
                if t in rewritten.folded:
                    continue
            if t not in fed and t.op not in deps and not is_loop_back_edge(op, t):
                deps.append(t.op)
        for control in op._control_inputs:
            if rewritten is not None:
                control = rewritten.replaced_ops.get(control, control)
            if control in present and control not in deps:
                deps.append(control)
        result[op] = deps
    return result


def writes_state(op: Operation) -> bool:
    """Whether an op changes a resource it takes as input (an assign, an optimizer's update)."""
    return op.op_def.writes_state and any(t.dtype.name == "resource" for t in op.inputs)


def order(ops: set[Operation], dependencies: dict[Operation, list[Operation]]) -> list[Operation]:
    """Ops in the order the dependency-count executor runs them (ties broken by creation order).

    Ready ops that write state wait while other ops are ready: reads of a variable are then done
    with before it is updated, so the update can reuse the variable's memory (see kernels/state.py).
    """
    pending = {op: len(dependencies[op]) for op in ops}
    consumers: dict[Operation, list[Operation]] = {op: [] for op in ops}
    for op in sorted(ops, key=lambda o: o._id):
        for dep in dependencies[op]:
            consumers[dep].append(op)
    ready: deque = deque()
    writes: deque = deque()
    for op in sorted((op for op, count in pending.items() if count == 0), key=lambda o: o._id):
        (writes if writes_state(op) else ready).append(op)
    ordered = []
    while ready or writes:
        op = ready.popleft() if ready else writes.popleft()
        ordered.append(op)
        for consumer in consumers[op]:
            pending[consumer] -= 1
            if pending[consumer] == 0:
                (writes if writes_state(consumer) else ready).append(consumer)
    if len(ordered) != len(ops):
        raise InvalidArgumentError(None, None, "The graph has a cycle among the ops needed for this run: "
                                   + " -> ".join(op.name for op in find_cycle(ops, dependencies)))
    return ordered


def find_cycle(ops: set[Operation], dependencies) -> list[Operation]:
    """One dependency cycle among `ops`, as a closed path of ops (depth-first, without recursion)."""
    state: dict[Operation, int] = {}
    for start in sorted(ops, key=lambda o: o._id):
        if start in state:
            continue
        path = [start]
        pending = [iter(dependencies[start])]
        state[start] = 1
        while pending:
            dep = next(pending[-1], None)
            if dep is None:
                state[path.pop()] = 2
                pending.pop()
            elif state.get(dep) == 1:
                return path[path.index(dep):] + [dep]
            elif dep not in state:
                state[dep] = 1
                path.append(dep)
                pending.append(iter(dependencies[dep]))
    return []
