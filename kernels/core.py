"""Kernels for constants, placeholders, identity and no_op."""

from __future__ import annotations

from tfnb.framework.errors import InvalidArgumentError
from tfnb.kernels.registry import kernel


@kernel("Const")
def const(node):
    value = node.xp.asarray(node.attrs["value"]) if node.output_dtypes[0].kind != "O" else node.attrs["value"]
    return lambda: value


@kernel("Placeholder")
def placeholder(node):
    def unfed():
        raise InvalidArgumentError(None, None, f"You must feed a value for placeholder tensor '{node.name}' "
                                   f"with dtype {node.attrs['dtype'].name} and shape {node.attrs['shape']}")
    return unfed


def _forward(node):
    return lambda x: x


kernel("Identity")(_forward)
kernel("StopGradient")(_forward)
kernel("PlaceholderWithDefault")(_forward)


@kernel("NoOp")
def no_op(node):
    return lambda: None


@kernel("BroadcastGradientArgs", fresh_output=True)
def broadcast_gradient_args(node):
    xp = node.xp

    def run(shape_x, shape_y):
        x, y = [int(d) for d in shape_x], [int(d) for d in shape_y]
        rank = max(len(x), len(y))
        x, y = [1] * (rank - len(x)) + x, [1] * (rank - len(y)) + y
        out = [max(a, b) for a, b in zip(x, y)]
        axes_x = [i for i in range(rank) if x[i] == 1 and out[i] != 1]
        axes_y = [i for i in range(rank) if y[i] == 1 and out[i] != 1]
        return xp.asarray(axes_x, dtype=xp.int32), xp.asarray(axes_y, dtype=xp.int32)
    return run


# The control-flow primitives forward their input; their frame, iteration and dead-value
# semantics are the executor's (tfnb/runtime/executor.py), which calls these only to pass values on.
for _forwarding_type in ("Enter", "Exit", "NextIteration", "LoopCond"):
    kernel(_forwarding_type)(_forward)


@kernel("Switch")
def switch(node):
    return lambda data, pred: (data, data)


@kernel("Merge")
def merge(node):
    index = node.xp.asarray(0, dtype="int32")
    return lambda *inputs: (inputs[0], index)
