"""Graph functions: a Python function traced once into a graph of its own (the body of tf.data's `map`).

Tracing calls the function on placeholders (its arguments) inside a FunctionGraph. A tensor of the
enclosing graph that the body uses (a constant, a variable's value) is captured: it becomes one more
placeholder inside, and the op that calls the function takes the outer tensor as an extra input, so
the session computes it and hands it over with each call (tfnb/runtime/functions.py runs the body).
"""

from __future__ import annotations

from collections.abc import Callable

from tfnb.framework import nest
from tfnb.framework.graph import Graph, get_default_graph
from tfnb.framework.operation import Operation
from tfnb.framework.tensor import Tensor
from tfnb.ops.array.placeholders import placeholder
from tfnb.ops.constant_op import convert_to_tensor


class FunctionGraph(Graph):
    """A graph for a function's body; tensors of the enclosing graph used in it become captured placeholders."""

    def __init__(self, outer: Graph, name: str) -> None:
        super().__init__()
        self.outer = outer
        self.name = name
        self.seed = outer.seed
        self.captures: dict[Tensor, Tensor] = {}

    def create_op(self, op_type: str, inputs=(), attrs: dict | None = None, name: str | None = None) -> Operation:
        inputs = [self.capture(t) if isinstance(t, Tensor) and t.graph is not self else t for t in inputs]
        return super().create_op(op_type, inputs, attrs, name)

    def capture(self, tensor: Tensor) -> Tensor:
        """The placeholder standing for an outer tensor inside this graph (made on first use)."""
        inner = self.captures.get(tensor)
        if inner is None:
            with self.as_default(), self.name_scope(None):
                inner = self.captures[tensor] = placeholder(tensor.dtype, tensor.shape, name="captured")
        return inner


class Function:
    """A traced function: its graph, argument placeholders, returned tensors (flat, in `structure`), and the
    outer tensors it captured (passed as extra arguments after the element's)."""

    def __init__(self, graph: FunctionGraph, arguments: list[Tensor], outputs: list[Tensor], structure) -> None:
        self.graph = graph
        self.arguments = arguments
        self.outputs = outputs
        self.structure = structure
        self.captured = list(graph.captures)

    @property
    def inputs(self) -> list[Tensor]:
        """What a call feeds: the arguments, then the placeholders of the captured tensors."""
        return self.arguments + [self.graph.captures[t] for t in self.captured]

    def __repr__(self) -> str:
        return (f"<Function {self.graph.name}: {len(self.arguments)} argument(s), {len(self.captured)} captured, "
                f"{len(self.graph.get_operations())} ops>")


def trace(fn: Callable, name: str, argument_types: list, argument_shapes: list, pack: Callable) -> Function:
    """Traces `fn` on placeholders of the given dtypes and shapes; `pack(placeholders)` makes fn's arguments
    (a tuple is spread over positional parameters)."""
    graph = FunctionGraph(get_default_graph(), name)
    with graph.as_default():
        arguments = [placeholder(dtype, shape, name="args") for dtype, shape in zip(argument_types, argument_shapes)]
        packed = pack(arguments)
        returned = fn(*packed) if isinstance(packed, tuple) and not hasattr(packed, "_fields") else fn(packed)
        structure = as_structure(returned)
        outputs = [convert_to_tensor(t) for t in nest.flatten(structure)]
    return Function(graph, arguments, outputs, structure)


def as_structure(value):
    """An element or a function's result as a nest of tensors: tuples and dicts are structure, a list is one
    tensor (as TF)."""
    if isinstance(value, dict):
        return {key: as_structure(item) for key, item in value.items()}
    if isinstance(value, tuple):
        items = [as_structure(item) for item in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    return convert_to_tensor(value)
