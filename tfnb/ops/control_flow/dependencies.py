"""Control ops: no_op, group and tuple (the paper's Switch/Merge/Enter/Exit come with control flow)."""

from __future__ import annotations

from tfnb.framework.graph import as_operation, get_default_graph
from tfnb.framework.op_registry import register_op
from tfnb.framework.operation import Operation
from tfnb.ops.array.identity import identity

__all__ = ["no_op", "group", "tuple"]

register_op("NoOp", lambda op: [], foldable=False)


def no_op(name: str | None = None) -> Operation:
    """An op that does nothing; with control inputs it joins them."""
    return get_default_graph().create_op("NoOp", (), None, name)


def group(*inputs, name: str | None = None) -> Operation:
    """An op that runs after all `inputs` (ops or tensors) and has no output."""
    ops = [as_operation(x) for x in _flatten(inputs)]
    graph = ops[0].graph if ops else get_default_graph()
    with graph.control_dependencies(ops):
        return graph.create_op("NoOp", (), None, name or "group_deps")


def tuple(tensors, name: str | None = None, control_inputs=None) -> list:
    """The same tensors, each available only after all of them (and `control_inputs`) are computed."""
    graph = get_default_graph()
    with graph.name_scope(name or "tuple"):
        gate = group(*[t for t in tensors if t is not None], *(control_inputs or ()))
        with graph.control_dependencies([gate]):
            return [identity(t) if t is not None else None for t in tensors]


def _flatten(items):
    for item in items:
        if isinstance(item, (list, type(()), set)):
            yield from _flatten(item)
        elif isinstance(item, dict):
            yield from _flatten(item.values())
        else:
            yield item
