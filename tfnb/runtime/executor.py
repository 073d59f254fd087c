"""The reference executor: the paper's dependency counts and ready queue, with frames (2015, 3.1 and 4.4).

It runs any plan, with or without control flow, and defines what a plan means: the generated code
(tfnb/runtime/codegen.py, loop_codegen.py) is its fast twin and is tested against it.

Every value carries a tag (frame instance, iteration). A node instance (node, frame, iteration)
counts its unfinished inputs, data and control, and joins the ready queue at zero; the executor
takes instances from the queue in order, runs them, and passes their outputs on. Independent
iterations of a loop overlap in the queue as their data allow, up to its `parallel_iterations`.
A Switch sends a "dead" value down the side it does not take; a node with a dead input is dead in
turn without running, so an untaken branch costs a few bookkeeping steps. Merge forwards the first
live input. Enter opens a child frame (a constant Enter's value reaches every iteration);
NextIteration moves a value to the next iteration; Exit hands the final value to the parent frame.
A Send leaves its value in the step's rendezvous under its key and frame tag; its Recv takes it.

A traced run records, as it goes, each instance's timing and the executor's events: an instance
joining the ready queue, being taken from it, and the count of its unfinished inputs after each
arrival (`ExecutorRecord`), which the replay widget shows.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from tfnb.framework.errors import DeadlineExceededError, InvalidArgumentError
from tfnb.framework.operation import is_loop_back_edge
from tfnb.runtime.concurrent import InterOpThreads, run_partitions
from tfnb.runtime.plan import CONSTANT, FEED, Plan
from tfnb.runtime.rendezvous import StepAborted
from tfnb.runtime.tracing import ExecutorRecord, summarize

DEAD = None  # a dead value: kernels never see it; values are arrays or scalars, never None

NORMAL, SWITCH, MERGE, ENTER, EXIT, NEXT, SEND, RECV = range(8)
_KINDS = {"Switch": SWITCH, "Merge": MERGE, "Enter": ENTER, "Exit": EXIT, "NextIteration": NEXT,
          "_Send": SEND, "_Recv": RECV}


@dataclass
class Slot:
    """A plan node with its wiring resolved to indices."""

    index: int
    node: object
    kind: int
    kernel: Callable | None
    needs_step: bool
    n_data: int                                      # data inputs, constants included
    template: list                                   # input values: constants filled in, the rest DEAD
    waits: int = 0                                   # inputs to wait for: data (not constants) and control
    outputs: list = field(default_factory=list)      # per output: [(consumer index, slot)]
    controls: list = field(default_factory=list)     # consumers through control edges
    back_edges: int = 0                              # Merge inputs that come from NextIteration
    control_slots: dict = field(default_factory=dict)  # producer index -> input slot of its control edge
    fetch_slots: list = field(default_factory=list)  # per output: fetch positions it fills
    move: Callable | None = None                     # a Recv's conversion to its device's arrays
    input_names: list = field(default_factory=list)  # per input slot: the node (or fed tensor) it comes from


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


class ReferenceExecutor:
    """Runs a plan's nodes; `run(feeds, step)` returns the fetched values, as the generated code does.

    `bind(node)` gives a node's kernel callable and whether it takes the step; `move(node)` gives a Recv's
    conversion to its device's arrays; `compress` packs float32 values that Sends leave (bfloat16 transfers).
    """

    def __init__(self, plan: Plan, bind: Callable, move: Callable, compress: Callable | None = None) -> None:
        self.plan = plan
        self.compress = compress
        index = {id(node): i for i, node in enumerate(plan.nodes)}
        self.slots = [self._slot(i, node, bind, move) for i, node in enumerate(plan.nodes)]
        self.feed_targets: list[list] = [[] for _ in plan.feed_values]
        self.start_values: list = []                 # (consumer, slot, value): constants a Merge reads
        feed_position = {id(value): k for k, value in enumerate(plan.feed_values)}
        for slot in self.slots:
            self._wire(slot, index, feed_position)
        self.fetch_count = len(plan.fetch_values)
        self.targets_done = [value is None for value in plan.fetch_values]  # targets have no value to await
        self.fed_fetches: list = []
        self.constant_fetches: list = []
        for position, value in enumerate(plan.fetch_values):
            if value is None:
                continue
            if value.kind == FEED:
                self.fed_fetches.append((position, feed_position[id(value)]))
            elif value.kind == CONSTANT:
                self.constant_fetches.append((position, plan.constants[value.name]))
            else:
                self.slots[index[id(value.producer)]].fetch_slots[value.index].append(position)
        self.sources = [slot.index for slot in self.slots if slot.waits == 0]
        self.enters_per_frame = Counter(node.op.attrs["frame_name"] for node in plan.nodes if node.type == "Enter")
        self.root_slots = _root_frame_nodes(plan, index)
        self.devices = list(dict.fromkeys(node.device for node in plan.nodes))
        self.concurrent = len(self.devices) > 1 and not any(node.op is not None and node.op.op_def.control_flow
                                                              for node in plan.nodes)

    def _slot(self, i: int, node, bind: Callable, move: Callable) -> Slot:
        kernel, needs_step = bind(node) if node.op is not None else (None, False)
        template = [DEAD] * len(node.inputs)
        for k, value in enumerate(node.inputs):
            if value.kind == CONSTANT:
                template[k] = self.plan.constants[value.name]
        slot = Slot(i, node, _KINDS.get(node.type, NORMAL), kernel, needs_step, len(node.inputs), template)
        slot.outputs = [[] for _ in node.outputs] if node.type != "_Send" else [[]]
        slot.fetch_slots = [[] for _ in node.outputs]
        slot.move = move(node) if node.type == "_Recv" else None
        return slot

    def _wire(self, slot: Slot, index: dict, feed_position: dict) -> None:
        node = slot.node
        for k, value in enumerate(node.inputs):
            if value.kind == FEED:
                self.feed_targets[feed_position[id(value)]].append((slot.index, k))
            elif value.kind == CONSTANT:
                if slot.kind != MERGE:
                    continue  # filled in from the start; a Merge instead receives it, as it receives any input
                self.start_values.append((slot.index, k, slot.template[k]))
            else:
                self.slots[index[id(value.producer)]].outputs[value.index].append((slot.index, k))
                if slot.kind == MERGE and is_loop_back_edge(node.op, value.tensor):
                    slot.back_edges += 1
            slot.waits += 1
        slot.input_names = [v.producer.name if v.producer is not None else v.tensor.name for v in node.inputs]
        if node.type == "_Recv" and id(node.peer) in index:
            # The Send -> Recv edge: the Recv waits for its Send, whose value it takes from the rendezvous.
            self.slots[index[id(node.peer)]].outputs[0].append((slot.index, 0))
            slot.template, slot.n_data, slot.waits, slot.input_names = [DEAD], 1, 1, [node.peer.name]
        elif node.type == "_Recv":
            # Its Send runs in another task of a cluster (outside every loop): the Recv waits in the rendezvous.
            slot.template, slot.n_data, slot.waits, slot.input_names = [True], 1, 0, [node.peer.name]
        for control in node.control_inputs:
            slot.input_names.append(control.name)
            producer = index[id(control)]
            slot.control_slots[producer] = len(slot.template) + len(slot.control_slots)
            self.slots[producer].controls.append(slot.index)
            slot.waits += 1


    def run(self, feeds, step, record: ExecutorRecord | None = None, threads: InterOpThreads | None = None) -> list:
        """Runs the plan once; with `record`, every instance's timing and the ready queue's events go there.

        With `threads`, a plan on several devices and without control flow runs one executor per device, each on a
        thread of its own (the first device's on this one), as the paper's devices do.
        """
        if threads is None or not self.concurrent:
            return _Execution(self, feeds, step, record).check_fetched()
        executions = {device: _DeviceExecution(self, feeds, step, record, device) for device in self.devices}
        first, *others = executions.values()
        for execution in executions.values():
            execution.connect(first, executions)
        step.rendezvous.on_abort(lambda: abort_devices(executions.values()))
        run_partitions(first.run, [execution.run for execution in others], threads, step)
        return first.check_fetched()


class _Execution:
    """The state of one run: node instances waiting for inputs, the ready queue, the frames."""

    def __init__(self, executor: ReferenceExecutor, feeds, step, record: ExecutorRecord | None) -> None:
        self.executor = executor
        self.slots = executor.slots
        self.step = step
        self.record = record
        self.instance_ids: dict = {}
        self.pending: dict = {}
        self.ready: deque = deque()
        self.root = Frame("", None, 0, 1)
        self.root.live = True
        self.results = [None] * executor.fetch_count
        self.filled = list(executor.targets_done)
        for position, k in executor.fed_fetches:
            self.results[position], self.filled[position] = feeds[k], True
        for position, value in executor.constant_fetches:
            self.results[position], self.filled[position] = value, True
        self.start(feeds)

    def start(self, feeds) -> None:
        """Fills the ready queue: sources, and nodes whose inputs are all fed, in plan order (the generated code's)."""
        if self.record is not None:
            # As TF's executor does for a frame's iteration, the root frame's counts start at the number of inputs.
            for index in self.executor.root_slots:
                if self.slots[index].waits and self.mine(index):
                    self.note(("count", self.instance_id(index, self.root, 0), self.slots[index].waits, None))
        self.starting: list | None = []
        for index in self.executor.sources:
            if self.mine(index):
                self.root.open[0] += 1
                self.enqueue((index, self.root, 0, list(self.slots[index].template)))
        for k, targets in enumerate(self.executor.feed_targets):
            for consumer, slot in targets:
                if self.mine(consumer):
                    self.deliver(consumer, slot, feeds[k], self.root, 0)
        for consumer, slot, value in self.executor.start_values:
            if self.mine(consumer):
                self.deliver(consumer, slot, value, self.root, 0)
        starting, self.starting = sorted(self.starting, key=lambda instance: instance[0]), None
        for instance in starting:
            self.enqueue(instance)

    def mine(self, index: int) -> bool:
        """Whether this execution runs node `index` (all of them; one device's with a DeviceExecution)."""
        return True

    def check_fetched(self) -> list:
        """Runs the plan (for this class), then the fetched values; an error if a fetch was never computed."""
        self.run()
        missing = [i for i, done in enumerate(self.filled) if not done]
        if missing:
            raise InvalidArgumentError(None, None, f"Fetch {missing[0]} was not computed: it is on a branch that "
                                       "was not taken, or after a loop that did not end")
        return self.results

    # -- the main loop: take a ready node instance, run it, pass its outputs on --------------------

    def run(self) -> None:
        deadline = self.step.deadline
        while self.ready:
            instance = self.ready.popleft()
            index, frame, iteration, values = instance
            slot = self.slots[index]
            if deadline is not None and time.monotonic() > deadline:
                self.time_out(slot, frame, iteration)
            if self.record is None:
                outputs, dead = self.fire(slot, frame, iteration, values)
            else:
                outputs, dead = self.fire_recorded(slot, frame, iteration, values)
            self.propagate(slot, frame, iteration, outputs, dead)
            self.finish_instance(frame, iteration)

    def fire_recorded(self, slot: Slot, frame: Frame, iteration: int, values: list) -> tuple[list, bool]:
        """`fire`, timed, with the instance's "run" event and its trace entry recorded."""
        self.note(("run", self.instance_id(slot.index, frame, iteration)))
        start = time.perf_counter()
        outputs, dead = self.fire(slot, frame, iteration, values)
        end = time.perf_counter()
        self.step.trace.append((slot.index, start, end, threading.get_ident(),
                                summarize([o for o in outputs if o is not DEAD]), frame.label(iteration), dead))
        return outputs, dead

    def fire(self, slot: Slot, frame: Frame, iteration: int, values: list) -> tuple[list, bool]:
        """Runs one instance: its outputs, and whether it is dead (then its outputs are all dead)."""
        kind = slot.kind
        if kind == MERGE:
            return values, values[0] is DEAD  # (value, index) or [DEAD, DEAD], decided on arrival
        if any(value is DEAD for value in values):
            return [DEAD] * len(slot.outputs), True
        if kind == SWITCH:
            data, pred = values[0], values[1]
            return ([DEAD, data] if bool(pred) else [data, DEAD]), False
        if kind == SEND:
            return self.send(slot, frame, iteration, values), False
        if kind == RECV:
            value = self.step.rendezvous.recv(_tagged(slot.node.key, frame, iteration))
            return ([slot.move(value)] if slot.outputs else []), False  # a control edge's Recv has no output
        data_values = values[:slot.n_data]
        try:
            result = slot.kernel(self.step, *data_values) if slot.needs_step else slot.kernel(*data_values)
        except Exception as error:
            error.tfnb_op = slot.node.op
            raise
        if len(slot.outputs) == 1:
            return [result], False
        return (list(result) if slot.outputs else []), False

    def send(self, slot: Slot, frame: Frame, iteration: int, values: list) -> list:
        value = values[0] if slot.n_data else True  # a control edge's Send passes only a signal
        if self.executor.compress is not None and slot.n_data:
            value = self.executor.compress(value)
        self.step.rendezvous.send(_tagged(slot.node.key, frame, iteration), value)
        return [value]

    def propagate(self, slot: Slot, frame: Frame, iteration: int, outputs: list, dead: bool) -> None:
        kind = slot.kind
        out_frame = frame.parent if kind == EXIT else frame
        for k, value in enumerate(outputs):
            if out_frame is self.root and value is not DEAD and kind not in (ENTER, NEXT, SEND):
                for position in slot.fetch_slots[k]:
                    self.results[position], self.filled[position] = value, True
            if kind == ENTER:
                self.enter(slot, frame, iteration, value)
            elif kind == NEXT:
                if value is not DEAD:
                    self.next_iteration(slot, frame, iteration + 1, value)
            elif kind == EXIT:
                if value is not DEAD or not frame.live:
                    for consumer, input_slot in slot.outputs[k]:
                        self.deliver(consumer, input_slot, value, frame.parent, frame.parent_iteration)
            else:
                for consumer, input_slot in slot.outputs[k]:
                    self.deliver(consumer, input_slot, value, frame, iteration)
        if slot.controls:
            target_frame, target_iteration = (frame.parent, frame.parent_iteration) if kind == EXIT else (frame, iteration)
            signal = DEAD if dead and kind != SWITCH else True
            for consumer in slot.controls:
                self.deliver(consumer, self.slots[consumer].control_slots[slot.index], signal, target_frame,
                             target_iteration)

    # -- frames ---------------------------------------------------------------------------------

    def enter(self, slot: Slot, frame: Frame, iteration: int, value) -> None:
        attrs = slot.node.op.attrs
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
            child.constants.append((slot, value))
            for it in range(child.started):
                if it in child.open:
                    self.pass_on(slot, child, it, value)
        else:
            self.pass_on(slot, child, 0, value)
        if not child.awaited and child.open.get(0) == 0:
            self.close(child, 0)

    def next_iteration(self, slot: Slot, frame: Frame, iteration: int, value) -> None:
        if iteration >= frame.started:
            active = sum(1 for it in frame.open if it < iteration)
            if active >= frame.limit:
                frame.deferred.append((slot, iteration, value))
                return
            frame.started = iteration + 1
            frame.open.setdefault(iteration, 0)
            for constant_slot, constant_value in frame.constants:
                self.pass_on(constant_slot, frame, iteration, constant_value)
        self.pass_on(slot, frame, iteration, value)

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
            slot, it, value = frame.deferred[0]
            # Values for an iteration already started go in; a new iteration waits for a free slot.
            if it >= frame.started and sum(1 for i in frame.open if i < it) >= frame.limit:
                break
            frame.deferred.popleft()
            self.next_iteration(slot, frame, it, value)

    def pass_on(self, slot: Slot, frame: Frame, iteration: int, value) -> None:
        for consumer, input_slot in slot.outputs[0]:
            self.deliver(consumer, input_slot, value, frame, iteration)

    # -- arrival of one input -------------------------------------------------------------------

    def deliver(self, consumer: int, input_slot: int, value, frame: Frame, iteration: int) -> None:
        slot = self.slots[consumer]
        key = (consumer, frame, iteration)
        state = self.pending.get(key)
        if state is None:
            if slot.kind == MERGE:
                # A loop's Merge waits for its Enters in iteration 0, for its NextIterations after; a cond's for all.
                later = iteration > 0 and slot.back_edges
                expected = slot.back_edges if later else slot.waits - slot.back_edges
                state = [expected, None, False]  # remaining, values, fired
            else:
                state = [slot.waits, list(slot.template) + [DEAD] * len(slot.control_slots), False]
            self.pending[key] = state
            frame.open[iteration] = frame.open.get(iteration, 0) + 1
        if slot.kind == MERGE:
            self.arrive_at_merge(slot, key, state, input_slot, value, frame, iteration)
            return
        state[1][input_slot] = value
        state[0] -= 1
        if self.record is not None:
            self.note(("count", self.instance_id(consumer, frame, iteration), state[0], slot.input_names[input_slot]))
        if state[0] == 0:
            del self.pending[key]
            self.enqueue((consumer, frame, iteration, state[1]))

    def arrive_at_merge(self, slot: Slot, key, state, input_slot: int, value, frame: Frame, iteration: int) -> None:
        """A Merge fires on its first live input, or dead once every expected input came dead."""
        state[0] -= 1
        live = value is not DEAD and input_slot < slot.n_data  # a control input only counts
        if not state[2]:
            if self.record is not None:
                self.note(("count", self.instance_id(slot.index, frame, iteration), 0 if live else state[0],
                           slot.input_names[input_slot]))
            if live or state[0] == 0:
                state[2] = True
                fired = [value, np.int32(input_slot)] if live else [DEAD, DEAD]
                self.enqueue((slot.index, frame, iteration, fired))
        if state[0] == 0:
            del self.pending[key]

    def time_out(self, slot: Slot, frame: Frame, iteration: int) -> None:
        """Ends the run: its deadline (RunOptions.timeout_in_ms) passed before `slot`'s node could run."""
        where = f" in iteration {frame.label(iteration)}" if frame.name else ""
        raise DeadlineExceededError(None, slot.node.op if slot.node.op is not None else None,
                                    f"Timed out after {self.step.timeout_in_ms} ms: the run's deadline passed before "
                                    f"{slot.node.name} could run{where}")

    # -- the record -----------------------------------------------------------------------------

    def enqueue(self, instance: tuple) -> None:
        if self.starting is not None:
            self.starting.append(instance)
            return
        self.ready.append(instance)
        if self.record is not None:
            self.note(("ready", self.instance_id(*instance[:3])))

    def note(self, event: tuple) -> None:
        self.record.events.append(event)

    def instance_id(self, index: int, frame: Frame, iteration: int) -> int:
        """The record's number for a node instance, given when the executor first meets it."""
        key = (index, id(frame), iteration)
        number = self.instance_ids.get(key)
        if number is None:
            number = self.instance_ids[key] = len(self.record.instances)
            slot = self.slots[index]
            self.record.instances.append((slot.node.name, frame.label(iteration)))
            self.record.inputs.setdefault(slot.node.name, [n for n in slot.input_names if n is not None])
        return number


class _DeviceExecution(_Execution):
    """One device's executor in a concurrent run of a plan without control flow: it runs that device's nodes.

    Values reach another device only from a Send to its Recv: the Send's device puts the arrival in the Recv
    device's inbox, which that device's thread takes in turn with its ready instances.
    """

    def __init__(self, executor: ReferenceExecutor, feeds, step, record, device: str) -> None:
        self.device = device
        self.inbox: queue.SimpleQueue = queue.SimpleQueue()
        self.remaining = sum(1 for slot in executor.slots if slot.node.device == device)
        self.lock = threading.Lock()
        super().__init__(executor, feeds, step, record)

    def connect(self, first: _Execution, executions: dict) -> None:
        """Shares the first device's fetched values, record numbering and lock; knows the others' inboxes."""
        self.results, self.filled = first.results, first.filled
        self.instance_ids, self.lock = first.instance_ids, first.lock
        self.peers = executions

    def mine(self, index: int) -> bool:
        return self.slots[index].node.device == self.device

    def run(self) -> None:
        while self.ready or self.remaining:
            # Arrivals first: a Recv is ready as soon as its value is here, as in a single executor.
            while not self.inbox.empty() or not self.ready:
                consumer, input_slot, value = self.inbox.get()
                if consumer is None:
                    raise StepAborted(f"the step was aborted on another device than {self.device}")
                super().deliver(consumer, input_slot, value, self.root, 0)
            index, frame, iteration, values = self.ready.popleft()
            slot = self.slots[index]
            if self.step.deadline is not None and time.monotonic() > self.step.deadline:
                self.time_out(slot, frame, iteration)
            if self.record is None:
                outputs, dead = self.fire(slot, frame, iteration, values)
            else:
                outputs, dead = self.fire_recorded(slot, frame, iteration, values)
            self.remaining -= 1
            self.propagate(slot, frame, iteration, outputs, dead)

    def deliver(self, consumer: int, input_slot: int, value, frame: Frame, iteration: int) -> None:
        device = self.slots[consumer].node.device
        if device == self.device:
            super().deliver(consumer, input_slot, value, frame, iteration)
        else:
            self.peers[device].inbox.put((consumer, input_slot, value))

    def note(self, event: tuple) -> None:
        with self.lock:
            self.record.events.append(event)

    def instance_id(self, index: int, frame: Frame, iteration: int) -> int:
        with self.lock:
            return super().instance_id(index, frame, iteration)


def abort_devices(executions) -> None:
    """Wakes every device's executor waiting on its inbox, so that it stops."""
    for execution in executions:
        execution.inbox.put((None, None, None))


def _root_frame_nodes(plan: Plan, index: dict) -> list[int]:
    """The nodes outside every loop frame: those not reached through an Enter without passing its Exit."""
    depth: dict[int, int] = {}
    for i, node in enumerate(plan.nodes):
        sources = [v.producer for v in node.inputs if v.producer is not None and not (
            node.op is not None and is_loop_back_edge(node.op, v.tensor))] + list(node.control_inputs)
        if node.type == "_Recv" and id(node.peer) in index:
            sources.append(node.peer)
        depth[i] = max((depth[index[id(s)]] + (s.type == "Enter") - (s.type == "Exit") for s in sources), default=0)
    return [i for i, d in depth.items() if d == 0]


def _tagged(key: str, frame: Frame, iteration: int) -> str:
    """A rendezvous key with the frame and iteration of the value, as TF tags its keys inside loops."""
    label = frame.label(iteration)
    return f"{key};{label}" if label else key
