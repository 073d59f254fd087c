"""Compiling a run: prune to what the fetches need, check feeds, and order the nodes.

The order is the paper's single-device executor run ahead of time: each node counts its
unfinished inputs (data and control), and a node whose count reaches zero joins the ready queue.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from tfnb.framework.errors import InvalidArgumentError
from tfnb.framework.operation import Operation
from tfnb.framework.tensor import Tensor


@dataclass
class Plan:
    """A compiled run: which ops run, in what order, on which devices, and the code that runs them."""

    feeds: tuple[Tensor, ...]
    fetches: tuple
    targets: tuple[Operation, ...]
    ops: list[Operation]
    dependencies: dict[Operation, list[Operation]]
    placement: dict[Operation, str] = field(default_factory=dict)
    source: str = ""
    run: object = None
    line_ops: dict[int, Operation] = field(default_factory=dict)
    copy_on_fetch: tuple[bool, ...] = ()
    feed_checks: tuple = ()
    rewritten: object = None


def prune(fetches, targets, feeds) -> set[Operation]:
    """The ops that must run to compute `fetches` and run `targets`; fed tensors cut the graph."""
    fed = set(feeds)
    needed: set[Operation] = set()
    stack = [t.op for t in fetches if isinstance(t, Tensor) and t not in fed]
    stack += [op for op in fetches if isinstance(op, Operation)]
    stack += list(targets)
    while stack:
        op = stack.pop()
        if op in needed:
            continue
        needed.add(op)
        stack.extend(t.op for t in op.inputs if t not in fed)
        stack.extend(op._control_inputs)
    return needed


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
            if t not in fed and t.op not in deps and not (op.type == "Merge" and t.op.type == "NextIteration"):
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


def check_placeholders_fed(ops, feeds) -> None:
    """Raises before anything runs if a placeholder that the run needs has no feed."""
    fed_ops = {t.op for t in feeds}
    for op in sorted(ops, key=lambda o: o._id):
        if op.type == "Placeholder" and op not in fed_ops:
            shape = op.attrs["shape"]
            shape_text = "<unknown>" if shape.ndims is None else "[" + ",".join(
                "?" if d is None else str(d) for d in shape.as_list()) + "]"
            raise InvalidArgumentError(None, op, f"You must feed a value for placeholder tensor '{op.name}' "
                                       f"with dtype {op.attrs['dtype'].name} and shape {shape_text}")
