"""A plan: one compiled run of a graph, as `Session.plan(fetches, feed_dict)` hands it out.

Compiling a request (tfnb/runtime/pipeline.py) prunes the graph to what the fetches need, orders
the ops, rewrites them, places them on devices and partitions them per device, adding a Send and a
Recv wherever a value crosses devices (2015 paper, sections 3.2.2 and 4.2). The plan keeps every
stage's result, so it can be read and drawn: the ops that run and those the rewrites removed, each
op's device, the partitions with their transfers, and the generated Python that runs them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tfnb.framework.device_spec import short_device
from tfnb.framework.operation import Operation
from tfnb.framework.tensor import Tensor

FEED, OUTPUT, CONSTANT = "feed", "output", "constant"


@dataclass(eq=False)
class Value:
    """A value flowing in a plan: a node's output, a fed value, or a constant known before the run.

    `name` is its identifier in the generated code, after the op that computes it; a value received
    on another device is a separate Value of the same tensor (`dense_MatMul_on_cpu1`).
    """

    name: str
    tensor: Tensor
    device: str
    kind: str = OUTPUT
    producer: Node | None = None
    index: int = 0

    def __repr__(self) -> str:
        return f"<Value {self.name} ({self.kind} of {self.tensor.name}) on {self.device}>"


@dataclass(eq=False)
class Node:
    """A node of a plan: an op on its assigned device, or a Send or Recv that the partition step added.

    A Send takes the value to transfer and has no outputs; its Recv, on the other device, has no inputs
    and outputs the received value. The two meet in the rendezvous under `key` (for a control edge
    across devices, `tensor` is None and nothing but the signal passes).
    """

    name: str
    type: str
    device: str
    op: Operation | None = None
    inputs: list[Value] = field(default_factory=list)
    control_inputs: list[Node] = field(default_factory=list)
    outputs: list[Value] = field(default_factory=list)
    key: str = ""
    tensor: Tensor | None = None
    peer: Node | None = None

    @property
    def is_transfer(self) -> bool:
        return self.op is None

    def describe(self) -> str:
        """One line: `name = Type(inputs)` for an op, the tensor and devices for a Send or Recv."""
        if self.op is None:
            what = self.tensor.name if self.tensor is not None else f"^{self.key.rsplit('^', 1)[-1]}"
            other = "to " + short_device(self.peer.device) if self.type == "_Send" else "from " + short_device(self.peer.device)
            return f"{self.type} {what} {other}"
        return f"{self.op.name} = {self.op.type}({', '.join(t.name for t in self.op.inputs)})"

    def __repr__(self) -> str:
        return f"<Node {self.name} ({self.type}) on {self.device}>"


@dataclass(eq=False)
class Plan:
    """A compiled run: what runs, where and in what order, and the code that runs it.

    - `ops`: the graph's ops that run, in execution order (after the rewrites);
    - `removed`: op name -> why the rewrites removed it ("folded", "same as x", ...);
    - `placement`: op -> assigned device name; each op's `placement_reasons` say why;
    - `partitions`: device -> its nodes, ops and the Sends and Recvs the partition step added;
    - `nodes`: every node in the order one thread runs them;
    - `source`: the generated Python function (`print(plan.source)`).
    """

    feeds: tuple[Tensor, ...]
    fetches: tuple
    targets: tuple[Operation, ...]
    ops: list[Operation]
    dependencies: dict[Operation, list[Operation]]
    placement: dict[Operation, str] = field(default_factory=dict)
    removed: dict[str, str] = field(default_factory=dict)
    nodes: list[Node] = field(default_factory=list)
    feed_values: list[Value] = field(default_factory=list)
    fetch_values: list[Value | None] = field(default_factory=list)
    constants: dict[str, object] = field(default_factory=dict)
    substitutes: dict[Tensor, Tensor] = field(default_factory=dict)
    source: str = ""
    plain: bool = False

    def resolve(self, tensor: Tensor) -> Tensor:
        """The tensor whose value the plan uses for `tensor` (itself, or the one it was merged with)."""
        return self.substitutes.get(tensor, tensor)

    @property
    def partitions(self) -> dict[str, list[Node]]:
        """Device name -> the nodes that run there, in order (what each device's executor runs)."""
        result: dict[str, list[Node]] = {}
        for node in self.nodes:
            result.setdefault(node.device, []).append(node)
        return result

    @property
    def transfers(self) -> list[Node]:
        """The Recv nodes: one per (tensor, destination device), however many consumers read it there."""
        return [node for node in self.nodes if node.type == "_Recv"]

    @property
    def devices(self) -> list[str]:
        return list(self.partitions)

    def node_of(self, op: Operation) -> Node | None:
        """The node that runs `op`, or None when the rewrites removed it."""
        return next((node for node in self.nodes if node.op is op), None)

    def describe(self) -> str:
        """The plan as text: per device, its nodes in order; then what the rewrites removed."""
        lines = []
        for device, nodes in self.partitions.items():
            lines.append(f"{device}:")
            lines += [f"  {node.describe()}" for node in nodes]
        if self.removed:
            lines.append("removed by the rewrites:")
            lines += [f"  {name}: {why}" for name, why in self.removed.items()]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"<Plan: {len(self.ops)} ops on {len(self.partitions)} device(s), {len(self.transfers)} transfer(s), "
                f"{len(self.removed)} removed by rewrites>")
