"""The ops on backward paths from ys to xs, and the sum of the partial gradients those paths bring to a tensor."""

from __future__ import annotations

from tfnb.framework.indexed_slices import IndexedSlices
from tfnb.framework.operation import Operation
from tfnb.framework.tensor import Tensor
from tfnb.ops.array.joining import concat
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.math.arithmetic import add_n


def ops_between(graph, ys, xs, stops) -> set[Operation]:
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


def sum_partials(parts):
    """The sum of partial gradients; sparse parts stay sparse when all parts are sparse."""
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    if all(isinstance(p, IndexedSlices) for p in parts):
        return IndexedSlices(concat([p.values for p in parts], 0), concat([p.indices for p in parts], 0),
                             parts[0].dense_shape)
    return add_n([convert_to_tensor(p) for p in parts])
