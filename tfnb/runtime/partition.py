"""The partition step: one subgraph per device, joined by Send/Recv pairs (2015 paper, section 3.2.2).

Every op becomes a node on its assigned device. Where a node reads a value from another device,
a Send on the value's device and a Recv on the reader's are added, once per (value, destination
device) however many nodes read it there, keyed as the paper's rendezvous. A control edge across
devices becomes a Send/Recv pair carrying only the signal. Fed values and constants that the
rewrites folded live on the host device, as if received from the client; in a distributed plan they come
with the step to each task that reads them, so they cross devices only inside a task (`inputs_home`).

In the single order that one thread runs (`Plan.nodes`), a Send follows its producer at once. A
Recv comes right before its first reader and, in a plan without control flow, waits through a control
edge for the node that precedes it on its device (the paper's added control edges, section 3.2.2; in
a loop or a cond such an edge would carry deadness): a received copy then lives no longer than it is
needed. With `delay_recvs=False` a Recv follows its Send at once instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tfnb.framework.operation import Operation, is_loop_back_edge
from tfnb.framework.tensor import Tensor
from tfnb.runtime.devices import LocalDevice
from tfnb.runtime.naming import Names
from tfnb.runtime.plan import CONSTANT, FEED, Node, Value
from tfnb.runtime.rendezvous import rendezvous_key
from tfnb.runtime.rewrites import Rewritten


@dataclass
class Partitioned:
    """The partition step's result: nodes in run order, the values fed and fetched, the constants."""

    nodes: list[Node]
    feed_values: list[Value]
    fetch_values: list[Value | None]
    constants: dict[str, object] = field(default_factory=dict)
    names: Names = field(default_factory=Names)   # the identifiers given so far; code generation adds its own


def partition(rewritten: Rewritten, feeds, fetches, placement: dict[Operation, LocalDevice],
              host: LocalDevice, delay_recvs: bool = True, inputs_home: Callable[[str], str] | None = None) -> Partitioned:
    """Nodes for the rewritten ops on their devices, with the Send/Recv pairs that join the devices.

    `inputs_home(device)`, in a distributed plan, is the device of `device`'s task where fed values and constants
    arrive with the step (the host device otherwise).
    """
    builder = _Builder(rewritten, placement, host, inputs_home)
    feed_values = [builder.home_value(t, FEED) for t in feeds]
    for op in rewritten.ops:
        builder.add(op)
    builder.close_loops()
    fetch_values = [builder.home_value(rewritten.resolve(leaf)) if isinstance(leaf, Tensor) else None
                    for leaf in fetches]
    control_flow = any(op.op_def.control_flow for op in rewritten.ops)
    nodes = builder.delayed_order(waits=not control_flow) if delay_recvs else builder.early_order()
    return Partitioned(nodes, feed_values, fetch_values, builder.constants, builder.names)


class _Builder:
    """Creates the nodes and transfers, remembering where each Send and Recv goes in the run order."""

    def __init__(self, rewritten: Rewritten, placement: dict[Operation, LocalDevice], host: LocalDevice,
                 inputs_home: Callable[[str], str] | None) -> None:
        self.rewritten, self.placement, self.host, self.inputs_home = rewritten, placement, host, inputs_home
        self.names = Names()
        self.values: dict[Tensor, Value] = {}
        self.nodes: dict[Operation, Node] = {}
        self.received: dict[tuple[object, str], Node] = {}   # (value or source node, device) -> its Recv
        self.sends_after: dict[object, list[Node]] = {}     # producer node (or None: run start) -> Sends
        self.recvs_before: dict[Node, list[Node]] = {}      # first reader -> Recvs
        self.constants: dict[str, object] = {}
        self.back_edges: list[tuple[Node, int, Tensor]] = []  # loop Merge inputs from a later NextIteration
        for tensor, value in rewritten.folded.items():
            self.home_value(tensor, CONSTANT)
            self.constants[self.values[tensor].name] = value
        self.order: list[Node] = []

    def home_value(self, tensor: Tensor, kind: str | None = None) -> Value:
        """The value of `tensor` on the device that computes it (feeds and constants: the host)."""
        value = self.values.get(tensor)
        if value is None:
            value = Value(self.names.value(tensor), tensor, self.host.name, kind)
            self.values[tensor] = value
        return value

    def add(self, op: Operation) -> None:
        device = self.placement[op].name
        node = Node(op.name, op.type, device, op)
        node.inputs = []
        for k, tensor in enumerate(self.rewritten.resolve(t) for t in op.inputs):
            if is_loop_back_edge(op, tensor):
                self.back_edges.append((node, k, tensor))
                node.inputs.append(None)
            else:
                node.inputs.append(self._on(device, self.home_value(tensor), node))
        for control in op._control_inputs:
            source = self.nodes.get(self.rewritten.replaced_ops.get(control, control))
            if source is not None and source not in node.control_inputs:
                node.control_inputs.append(self._control_on(device, source, node))
        node.outputs = [Value(self.names.value(t), t, device, producer=node, index=t.value_index) for t in op.outputs]
        for value in node.outputs:
            self.values[value.tensor] = value
        self.nodes[op] = node
        self.order.append(node)

    def close_loops(self) -> None:
        """Connects each loop's Merge to its NextIteration, now that it exists (the placer keeps them together)."""
        for node, k, tensor in self.back_edges:
            node.inputs[k] = self.values[tensor]

    def _on(self, device: str, value: Value, reader: Node) -> Value:
        """`value` as `reader` on `device` reads it: itself, or the output of a Recv there."""
        source = value.device
        if value.kind in (FEED, CONSTANT) and self.inputs_home is not None:
            source = self.inputs_home(device)
        if source == device:
            return value
        recv = self.received.get((value, device))
        if recv is None:
            short = self.placement[reader.op].short_name
            key = rendezvous_key(source, device, value.tensor.name)
            send = Node(f"_Send/{value.tensor.name}->{short}", "_Send", source, inputs=[value], key=key,
                        tensor=value.tensor)
            recv = Node(f"_Recv/{value.tensor.name}->{short}", "_Recv", device, key=key, tensor=value.tensor,
                        peer=send)
            recv.outputs = [Value(self.names.value(value.tensor, "_on_" + short), value.tensor, device, producer=recv)]
            send.peer = recv
            self._schedule(send, recv, value.producer, reader)
            self.received[(value, device)] = recv
        return recv.outputs[0]

    def _control_on(self, device: str, source: Node, reader: Node) -> Node:
        """`source` as a control input of `reader`: itself, or a Recv of its signal on reader's device."""
        if source.device == device:
            return source
        recv = self.received.get((source, device))
        if recv is None:
            short = self.placement[reader.op].short_name
            key = rendezvous_key(source.device, device, "^" + source.name)
            send = Node(f"_Send/^{source.name}->{short}", "_Send", source.device, control_inputs=[source], key=key)
            recv = Node(f"_Recv/^{source.name}->{short}", "_Recv", device, key=key, peer=send)
            send.peer = recv
            self._schedule(send, recv, source, reader)
            self.received[(source, device)] = recv
        return recv

    def _schedule(self, send: Node, recv: Node, producer: Node | None, reader: Node) -> None:
        self.sends_after.setdefault(producer, []).append(send)
        self.recvs_before.setdefault(reader, []).append(recv)

    def delayed_order(self, waits: bool) -> list[Node]:
        """Op nodes in order; each Send right after its producer, each Recv right before its first reader (and,
        when `waits`, waiting for the node before it on its device)."""
        result = list(self.sends_after.get(None, ()))
        last_on: dict[str, Node] = {node.device: node for node in result}
        for node in self.order:
            for recv in self.recvs_before.get(node, []):
                previous = last_on.get(recv.device)
                if waits and previous is not None and previous is not recv.peer:
                    recv.control_inputs.append(previous)
                result.append(recv)
                last_on[recv.device] = recv
            result.append(node)
            last_on[node.device] = node
            for send in self.sends_after.get(node, []):
                result.append(send)
                last_on[send.device] = send
        return result

    def early_order(self) -> list[Node]:
        """Op nodes in order; each Send right after its producer and its Recv right after it."""
        result = []
        for send in self.sends_after.get(None, ()):
            result += [send, send.peer]
        for node in self.order:
            result.append(node)
            for send in self.sends_after.get(node, []):
                result += [send, send.peer]
        return result
