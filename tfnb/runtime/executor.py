"""The executor for graphs with control flow: the paper's tagged dataflow (2015, section 4.4).

Every value carries a tag (frame instance, iteration). A node instance (node, frame, iteration)
counts its unfinished inputs and joins the ready queue at zero; independent iterations of a loop
overlap in that queue as their data allow, up to the loop's `parallel_iterations`. A Switch sends
a "dead" value down the side it does not take, and a node with a dead input is dead in turn
without running, so an untaken branch costs a few bookkeeping steps. Merge forwards the first
live input. Enter opens a child frame; a constant Enter's value reaches every iteration;
NextIteration moves a value to the next iteration; Exit hands the final value to the parent.

Graphs without these ops never come here: they run as straight-line code (tfnb/runtime/codegen.py).
"""

from __future__ import annotations

import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from tfnb.framework.errors import InvalidArgumentError
from tfnb.framework.tensor import Tensor
from tfnb.runtime.codegen import Step, summarize

DEAD = None  # a dead value: kernels never see it; values are arrays or scalars, never None

NORMAL, SWITCH, MERGE, ENTER, EXIT, NEXT = range(6)
_KINDS = {"Switch": SWITCH, "Merge": MERGE, "Enter": ENTER, "Exit": EXIT, "NextIteration": NEXT}


@dataclass
class Node:
    """A plan node with its wiring resolved to indices."""

    index: int
    op: object
    kind: int
    kernel: Callable | None
    needs_step: bool
    n_inputs: int
    outputs: list = field(default_factory=list)      # per output: [(consumer index, slot)]
    controls: list = field(default_factory=list)     # consumers through control edges
    back_edges: int = 0                              # Merge inputs that come from NextIteration
    control_slots: dict = field(default_factory=dict)  # producer index -> input slot of its control edge
    fetch_slots: list = field(default_factory=list)  # per output: fetch positions it fills


class Frame:
    """One execution of a loop (or the root): its iterations and its constant inputs."""

    __slots__ = ("name", "parent", "parent_iteration", "children", "constants", "started", "live", "limit",
                 "open", "deferred", "awaited")

    def __init__(self, name: str, parent, parent_iteration: int, limit: int) -> None:
        self.name, self.parent, self.parent_iteration, self.limit = name, parent, parent_iteration, limit
        self.children: dict = {}
        self.constants: list = []
        self.started = 0                  # iterations started: 0 .. started-1
        self.live = False                 # whether any live value entered
        self.open: dict[int, int] = {0: 0}  # node instances not yet finished, per iteration
        self.deferred: deque = deque()    # NextIteration deliveries waiting for a free iteration slot
        self.awaited = 0                  # Enters not yet arrived: until they have, iteration 0 stays open

    def label(self, iteration: int) -> str:
        path, frame, it = [], self, iteration
        while frame is not None and frame.name:
            path.append(f"{frame.name}:{it}")
            frame, it = frame.parent, frame.parent_iteration
        return "/".join(reversed(path))


class FrameExecutor:
    """Runs a control-flow plan; `run(feeds, step)` returns the fetched values, as straight-line plans do."""

    def __init__(self, ops, feeds, fetches, placement, bind, traced: bool) -> None:
        self.ops = ops
        self.traced = traced
        self.steps = [Step(op, None, False, placement[op].name, [], []) for op in ops]
        self.line_ops: dict = {}
        self.source = "# control flow: run by the frame executor (tfnb/runtime/executor.py)\n"
        index = {op: i for i, op in enumerate(ops)}
        self.nodes = [self._node(i, op, bind(op, placement[op]), index) for i, op in enumerate(ops)]
        self.feed_targets: list[list] = []
        fed = {t: k for k, t in enumerate(feeds)}
        for node in self.nodes:
            for slot, tensor in enumerate(node.op.inputs):
                if tensor in fed:
                    self._feed_consumers(fed[tensor]).append((node.index, slot))
                else:
                    self.nodes[index[tensor.op]].outputs[tensor.value_index].append((node.index, slot))
                    if node.kind == MERGE and tensor.op.type == "NextIteration":
                        node.back_edges += 1
            for control in node.op._control_inputs:
                if control in index:
                    node.control_slots[index[control]] = len(node.op.inputs) + len(node.control_slots)
                    self.nodes[index[control]].controls.append(node.index)
        self.fetch_count = len(fetches)
        self.targets_done = [not isinstance(fetch, Tensor) for fetch in fetches]  # targets have no value to await
        self.fed_fetches: list = []
        for position, fetch in enumerate(fetches):
            if isinstance(fetch, Tensor):
                if fetch in fed:
                    self.fed_fetches.append((position, fed[fetch]))
                else:
                    self.nodes[index[fetch.op]].fetch_slots[fetch.value_index].append(position)
        self.sources = [n.index for n in self.nodes if n.n_inputs == 0]
        self.enters_per_frame = Counter(op.attrs["frame_name"] for op in ops if op.type == "Enter")

    def _feed_consumers(self, k: int) -> list:
        while len(self.feed_targets) <= k:
            self.feed_targets.append([])
        return self.feed_targets[k]

    def _node(self, i: int, op, bound, index: dict) -> Node:
        kernel, needs_step = bound
        n_inputs = len(op.inputs) + sum(1 for c in op._control_inputs if c in index)
        node = Node(i, op, _KINDS.get(op.type, NORMAL), kernel, needs_step, n_inputs)
        node.outputs = [[] for _ in op.outputs]
        node.fetch_slots = [[] for _ in op.outputs]
        return node

    @property
    def run(self) -> Callable:
        return self._run

    def _run(self, feeds, step):
        return _Execution(self, feeds, step).run()


class _Execution:
    """The state of one run: node instances waiting for inputs, the ready queue, the frames."""

    def __init__(self, executor: FrameExecutor, feeds, step) -> None:
        self.executor = executor
        self.nodes = executor.nodes
        self.step = step
        self.pending: dict = {}
        self.ready: deque = deque()
        self.root = Frame("", None, 0, 1)
        self.root.live = True
        self.results = [None] * executor.fetch_count
        self.filled = list(executor.targets_done)
        for position, k in executor.fed_fetches:
            self.results[position], self.filled[position] = feeds[k], True
        for k, targets in enumerate(executor.feed_targets):
            for consumer, slot in targets:
                self.deliver(consumer, slot, feeds[k], self.root, 0)
        for index in executor.sources:
            self.root.open[0] += 1
            self.ready.append((index, self.root, 0, []))

    # -- the main loop: take a ready node instance, run it, pass its outputs on --------------------

    def run(self) -> list:
        trace = self.step.trace if self.executor.traced else None
        while self.ready:
            index, frame, iteration, values = self.ready.popleft()
            node = self.nodes[index]
            start = time.perf_counter() if trace is not None else 0.0
            outputs = self.fire(node, frame, iteration, values)
            if trace is not None:
                dead = bool(outputs) and all(o is DEAD for o in outputs)
                trace.append((index, start, time.perf_counter(), threading.get_ident(),
                              _summaries(outputs), frame.label(iteration), dead))
            self.propagate(node, frame, iteration, outputs)
            self.finish_instance(frame, iteration)
        missing = [i for i, done in enumerate(self.filled) if not done]
        if missing:
            raise InvalidArgumentError(None, None, f"Fetch {missing[0]} was not computed: it is on a branch that "
                                       "was not taken, or after a loop that did not end")
        return self.results

    def fire(self, node: Node, frame: Frame, iteration: int, values: list) -> list:
        kind = node.kind
        if kind == MERGE:
            return values  # (value, index) or [DEAD, DEAD], decided on arrival
        if any(v is DEAD for v in values[:len(node.op.inputs)]) or values[len(node.op.inputs):].count(DEAD):
            return [DEAD] * len(node.outputs)
        if kind == SWITCH:
            data, pred = values[0], values[1]
            return [DEAD, data] if bool(pred) else [data, DEAD]
        data_values = values[:len(node.op.inputs)]
        try:
            result = node.kernel(self.step, *data_values) if node.needs_step else node.kernel(*data_values)
        except Exception as error:
            error.tfnb_op = node.op
            raise
        if len(node.outputs) == 1:
            return [result]
        return list(result) if node.outputs else []

    def propagate(self, node: Node, frame: Frame, iteration: int, outputs: list) -> None:
        kind = node.kind
        out_frame = frame.parent if kind == EXIT else frame
        for k, value in enumerate(outputs):
            if out_frame is self.root and value is not DEAD and kind not in (ENTER, NEXT):
                for position in node.fetch_slots[k]:
                    self.results[position], self.filled[position] = value, True
            if kind == ENTER:
                self.enter(node, frame, iteration, value)
            elif kind == NEXT:
                if value is not DEAD:
                    self.next_iteration(node, frame, iteration + 1, value)
            elif kind == EXIT:
                if value is not DEAD or not frame.live:
                    for consumer, slot in node.outputs[k]:
                        self.deliver(consumer, slot, value, frame.parent, frame.parent_iteration)
            else:
                for consumer, slot in node.outputs[k]:
                    self.deliver(consumer, slot, value, frame, iteration)
        dead = bool(outputs) and all(v is DEAD for v in outputs) if kind != SWITCH else False
        if node.controls:
            target_frame, target_iteration = (frame.parent, frame.parent_iteration) if kind == EXIT else (frame, iteration)
            for consumer in node.controls:
                self.deliver(consumer, self.nodes[consumer].control_slots[node.index],
                             DEAD if dead else True, target_frame, target_iteration)

    # -- frames ---------------------------------------------------------------------------------

    def enter(self, node: Node, frame: Frame, iteration: int, value) -> None:
        attrs = node.op.attrs
        key = (attrs["frame_name"], iteration)
        child = frame.children.get(key)
        if child is None:
            child = frame.children[key] = Frame(attrs["frame_name"], frame, iteration, attrs["parallel_iterations"])
            child.started = 1
            child.awaited = self.executor.enters_per_frame[attrs["frame_name"]]
        child.awaited -= 1
        if value is not DEAD:
            child.live = True
        if attrs["is_constant"]:
            child.constants.append((node, value))
            for it in range(child.started):
                if it in child.open:
                    self.send(node, child, it, value)
        else:
            self.send(node, child, 0, value)
        if not child.awaited and child.open.get(0) == 0:
            self.close(child, 0)

    def next_iteration(self, node: Node, frame: Frame, iteration: int, value) -> None:
        if iteration >= frame.started:
            active = sum(1 for it in frame.open if it < iteration)
            if active >= frame.limit:
                frame.deferred.append((node, iteration, value))
                return
            frame.started = iteration + 1
            frame.open.setdefault(iteration, 0)
            for constant_node, constant_value in frame.constants:
                self.send(constant_node, frame, iteration, constant_value)
        self.send(node, frame, iteration, value)

    def finish_instance(self, frame: Frame, iteration: int) -> None:
        open_count = frame.open.get(iteration)
        if open_count is None:
            return
        open_count -= 1
        if open_count > 0 or (iteration == 0 and frame.awaited):
            frame.open[iteration] = open_count
            return
        self.close(frame, iteration)

    def close(self, frame: Frame, iteration: int) -> None:
        """Ends an iteration: no node instance in it is unfinished, and every Enter has arrived."""
        del frame.open[iteration]
        while frame.deferred:
            node, it, value = frame.deferred[0]
            # Values for an iteration already started go in; a new iteration waits for a free slot.
            if it >= frame.started and sum(1 for i in frame.open if i < it) >= frame.limit:
                break
            frame.deferred.popleft()
            self.next_iteration(node, frame, it, value)

    def send(self, node: Node, frame: Frame, iteration: int, value) -> None:
        for consumer, slot in node.outputs[0]:
            self.deliver(consumer, slot, value, frame, iteration)

    # -- arrival of one input -------------------------------------------------------------------

    def deliver(self, consumer: int, slot: int, value, frame: Frame, iteration: int) -> None:
        node = self.nodes[consumer]
        key = (consumer, frame, iteration)
        state = self.pending.get(key)
        if state is None:
            if node.kind == MERGE:
                # A loop's Merge waits for its Enters in iteration 0, for its NextIterations after; a cond's for all.
                later = iteration > 0 and node.back_edges
                expected = node.back_edges if later else len(node.op.inputs) - node.back_edges
                state = [expected, None, False]  # remaining, values, fired
            else:
                state = [node.n_inputs, [DEAD] * node.n_inputs, False]
            self.pending[key] = state
            frame.open[iteration] = frame.open.get(iteration, 0) + 1
        if node.kind == MERGE:
            self.arrive_at_merge(node, key, state, slot, value, frame, iteration)
            return
        state[1][slot] = value
        state[0] -= 1
        if state[0] == 0:
            del self.pending[key]
            self.ready.append((consumer, frame, iteration, state[1]))

    def arrive_at_merge(self, node: Node, key, state, slot: int, value, frame: Frame, iteration: int) -> None:
        """A Merge fires on its first live input, or dead once every expected input came dead."""
        state[0] -= 1
        if not state[2] and (value is not DEAD or state[0] == 0):
            state[2] = True
            fired = [value, np.int32(slot)] if value is not DEAD else [DEAD, DEAD]
            self.ready.append((node.index, frame, iteration, fired))
        if state[0] == 0:
            del self.pending[key]


def _summaries(outputs) -> tuple:
    return summarize([o for o in outputs if o is not DEAD])
