"""The first step of compiling a run: the ops the fetches need, with fed tensors cutting the graph.

Partial execution (2015 paper, section 4.2): only the transitive closure of the fetches and targets
runs, and a fed tensor's producer (with everything only it needed) does not run at all.
"""

from __future__ import annotations

from tfnb.framework.errors import InvalidArgumentError
from tfnb.framework.operation import Operation
from tfnb.framework.tensor import Tensor


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
