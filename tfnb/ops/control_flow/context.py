"""Control-flow contexts: while a cond branch or a loop body is built, route outside values in.

As in TF1, only ops created inside a branch are conditional: a value from outside a cond branch
enters through a Switch on the predicate, and a value from outside a loop through a constant
Enter into the loop's frame. Ops with no inputs get a control edge from the context's pivot, so
they too are dead in an untaken branch and run once per iteration in a loop.
"""

from __future__ import annotations

from tfnb.framework.tensor import Tensor
from tfnb.ops.control_flow.primitives import enter, switch


class ControlFlowContext:
    """A cond branch or a loop being built; contexts nest through `outer`."""

    def __init__(self, graph, outer) -> None:
        self.graph = graph
        self.outer = outer
        self.pivot: Tensor | None = None
        self._routed: dict[Tensor, Tensor] = {}

    def contains(self, tensor: Tensor) -> bool:
        """Whether `tensor` was created in this context or one nested in it."""
        context = getattr(tensor.op, "_control_flow_context", None)
        while context is not None:
            if context is self:
                return True
            context = context.outer
        return False

    def route(self, tensor: Tensor) -> Tensor:
        """`tensor` as seen from inside this context (routed in once, then reused)."""
        if self.contains(tensor) or self._is_own_plumbing(tensor):
            return tensor
        routed = self._routed.get(tensor)
        if routed is None:
            saved = self.graph._control_flow_context
            self.graph._control_flow_context = self.outer
            try:
                outer_view = self.outer.route(tensor) if self.outer is not None else tensor
                routed = self._route_in(outer_view)
            finally:
                self.graph._control_flow_context = saved
            routed.op._control_flow_context = self
            self._routed[tensor] = routed
        return routed

    def _is_own_plumbing(self, tensor: Tensor) -> bool:
        return False

    def _route_in(self, tensor: Tensor) -> Tensor:
        raise NotImplementedError

    def __enter__(self):
        self._saved = self.graph._control_flow_context
        self.graph._control_flow_context = self
        return self

    def __exit__(self, *exc) -> None:
        self.graph._control_flow_context = self._saved


class CondContext(ControlFlowContext):
    """One branch of a cond: outside values enter through Switch(value, pred)[branch]."""

    def __init__(self, graph, outer, pred: Tensor, pivot: Tensor, branch: int) -> None:
        super().__init__(graph, outer)
        self.pred = pred
        self.pivot = pivot
        self.branch = branch

    def _route_in(self, tensor: Tensor) -> Tensor:
        return switch(tensor, self.pred)[self.branch]


class WhileContext(ControlFlowContext):
    """A loop's frame: outside values enter through constant Enters; `frame_name` tags its iterations."""

    def __init__(self, graph, outer, frame_name: str, parallel_iterations: int, back_prop: bool = True) -> None:
        super().__init__(graph, outer)
        self.frame_name = frame_name
        self.parallel_iterations = parallel_iterations
        self.back_prop = back_prop
        # The loop's structure, per loop variable, as tf.while_loop records it for the gradient.
        self.loop_cond: Tensor | None = None
        self.enters: list[Tensor] = []
        self.body_inputs: list[Tensor] = []
        self.results: list[Tensor] = []
        self.exits: list[Tensor] = []
        self.history = None  # the iteration counter and saved values, once a gradient needs them

    def _route_in(self, tensor: Tensor) -> Tensor:
        return enter(tensor, self.frame_name, is_constant=True, parallel_iterations=self.parallel_iterations)
