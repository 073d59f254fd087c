"""Accumulator kernels: the per-iteration values a forward loop saves for its gradient loop.

An accumulator is a plain object made by each run of its Accumulator op and passed along as that
op's value, so it lives for one step (or one iteration of an enclosing loop), as TF1's stacks live
in the step's container, and is freed with its handle.
"""

from __future__ import annotations

from tfnb.framework.errors import InvalidArgumentError
from tfnb.kernels.registry import kernel


class Accumulator:
    """Values keyed by iteration index."""

    __slots__ = ("name", "values")

    def __init__(self, name: str) -> None:
        self.name = name
        self.values: dict[int, object] = {}


@kernel("Accumulator")
def accumulator(node):
    name = node.name
    return lambda: Accumulator(name)


@kernel("AccumulatorPush")
def accumulator_push(node):
    def push(acc, index, value):
        acc.values[int(index)] = value
        return index
    return push


@kernel("AccumulatorRead")
def accumulator_read(node):
    def read(acc, index):
        value = acc.values.get(int(index))
        if value is None:
            raise InvalidArgumentError(None, None, f"Accumulator {acc.name} holds no value for iteration {int(index)}")
        return value
    return read
