"""A task's share of a plan: what the master registers with each task (OSDI paper, section 3.3).

The master compiles a request once for the whole cluster (tfnb/runtime/pipeline.py: prune, order,
rewrite, place on every task's devices, partition with Send/Recv pairs). Each task then gets the nodes
placed on its devices, described by names only (`TaskPlanDef`): the ops by their names in the graph the
task mirrors, the values by their identifiers in the plan, each Send and Recv by its rendezvous key and
the device at its other end. The task rebuilds the nodes on its copy of the graph (`rebuild`) and generates
their code as any plan's, one function per device. Fed values and constants come with the step or with
the registration; a Send whose Recv is on another task crosses the cluster's comms instead of a local
rendezvous (tfnb/distributed/task_runtime.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tfnb.framework.device_spec import task_of
from tfnb.framework.graph import Graph
from tfnb.runtime.naming import Names
from tfnb.runtime.pipeline import CompileOptions
from tfnb.runtime.plan import CONSTANT, FEED, Node, Plan, Value


@dataclass(frozen=True)
class ValueEntry:
    """A value by its identifier in the plan, the tensor it holds, its device and kind (feed, output, constant)."""

    name: str
    tensor: str
    device: str
    kind: str
    index: int = 0


@dataclass(frozen=True)
class NodeEntry:
    """A node by names: its op in the graph (None for a Send or Recv), its input values and control inputs (all on
    the same task), its outputs, and for a Send or Recv the key and the (name, device) of the node at the other end."""

    name: str
    type: str
    device: str
    op: str | None
    inputs: tuple[str, ...]
    control_inputs: tuple[str, ...]
    outputs: tuple[ValueEntry, ...]
    key: str = ""
    tensor: str | None = None
    peer: tuple[str, str] | None = None


@dataclass
class TaskPlanDef:
    """What one task runs of a plan: its nodes in order, the fed values it reads (in the order each step sends them,
    `feed_positions` saying which of the plan's feeds they are), the constants it reads, and which of the plan's
    fetches it computes (position, value name)."""

    nodes: tuple[NodeEntry, ...]
    feeds: tuple[ValueEntry, ...]
    feed_positions: tuple[int, ...]
    constants: dict[str, tuple[ValueEntry, object]]
    fetches: tuple[tuple[int, str], ...]
    options: CompileOptions = field(default_factory=CompileOptions)

    @property
    def peer_devices(self) -> set[str]:
        """The devices of other tasks that this task's Sends and Recvs meet."""
        return {node.peer[1] for node in self.nodes if node.peer is not None} - {node.device for node in self.nodes}


def task_plans(plan: Plan, options: CompileOptions) -> dict[str, TaskPlanDef]:
    """Each task's share of `plan` (task name -> its TaskPlanDef), for the tasks that run any node."""
    by_task: dict[str, list[Node]] = {}
    for node in plan.nodes:
        by_task.setdefault(task_of(node.device), []).append(node)
    feed_position = {id(value): k for k, value in enumerate(plan.feed_values)}
    return {task: _describe(task, nodes, plan, feed_position, options) for task, nodes in by_task.items()}


def _describe(task: str, nodes: list[Node], plan: Plan, feed_position: dict, options: CompileOptions) -> TaskPlanDef:
    read = {id(value): value for node in nodes for value in node.inputs if value.kind in (FEED, CONSTANT)}
    feeds = sorted((v for v in read.values() if v.kind == FEED), key=lambda v: feed_position[id(v)])
    constants = {v.name: (_entry(v), plan.constants[v.name]) for v in read.values() if v.kind == CONSTANT}
    fetches = tuple((k, v.name) for k, v in enumerate(plan.fetch_values)
                    if v is not None and v.producer is not None and task_of(v.device) == task)
    return TaskPlanDef(tuple(_node_entry(node) for node in nodes), tuple(_entry(v) for v in feeds),
                       tuple(feed_position[id(v)] for v in feeds), constants, fetches, options)


def _entry(value: Value) -> ValueEntry:
    return ValueEntry(value.name, value.tensor.name, value.device, value.kind, value.index)


def _node_entry(node: Node) -> NodeEntry:
    peer = (node.peer.name, node.peer.device) if node.peer is not None else None
    return NodeEntry(node.name, node.type, node.device, node.op.name if node.op is not None else None,
                     tuple(value.name for value in node.inputs), tuple(c.name for c in node.control_inputs),
                     tuple(_entry(value) for value in node.outputs), node.key,
                     node.tensor.name if node.tensor is not None else None, peer)


def rebuild(definition: TaskPlanDef, graph: Graph) -> tuple[Plan, Names]:
    """The task's nodes as a Plan on `graph` (the task's copy of the master's graph), and the identifiers taken."""
    names = Names()
    values: dict[str, Value] = {}

    def value_of(entry: ValueEntry, producer: Node | None = None) -> Value:
        value = Value(entry.name, graph.get_tensor_by_name(entry.tensor), entry.device, entry.kind, producer,
                      entry.index)
        if names.new(entry.name) != entry.name:
            raise ValueError(f"value {entry.name} is named twice in a task's plan")
        values[entry.name] = value
        return value

    feed_values = [value_of(entry) for entry in definition.feeds]
    constants = {}
    for name, (entry, array) in definition.constants.items():
        value_of(entry)
        constants[name] = array
    nodes: dict[str, Node] = {}
    for entry in definition.nodes:
        op = graph.get_operation_by_name(entry.op) if entry.op is not None else None
        tensor = graph.get_tensor_by_name(entry.tensor) if entry.tensor is not None else None
        node = nodes[entry.name] = Node(entry.name, entry.type, entry.device, op, key=entry.key, tensor=tensor)
        node.outputs = [value_of(output, node) for output in entry.outputs]
    for entry in definition.nodes:  # inputs once every output exists: a loop's Merge reads a later NextIteration
        node = nodes[entry.name]
        node.inputs = [values[name] for name in entry.inputs]
        node.control_inputs = [nodes[name] for name in entry.control_inputs]
        if entry.peer is not None:
            node.peer = nodes.get(entry.peer[0]) or _remote_peer(node, *entry.peer)
    ordered = list(nodes.values())
    ops = [node.op for node in ordered if node.op is not None]
    plan = Plan(tuple(v.tensor for v in feed_values), (), (), ops, {}, {n.op: n.device for n in ordered if n.op},
                nodes=ordered, feed_values=feed_values, fetch_values=[values[name] for _, name in definition.fetches],
                constants=constants, plain=definition.options.plain)
    return plan, names


def _remote_peer(node: Node, name: str, device: str) -> Node:
    """The Send or Recv at the other end of `node`, in another task: what the code generators read of it (its
    device; a Send's input or, for a control edge, the node whose signal it carries)."""
    if node.type == "_Recv":
        peer = Node(name, "_Send", device, key=node.key, tensor=node.tensor, peer=node)
        if node.tensor is not None:
            peer.inputs = [Value(node.tensor.name, node.tensor, device)]
        else:
            peer.control_inputs = [Node(node.key.rsplit("^", 1)[-1], "NoOp", device)]
        return peer
    return Node(name, "_Recv", device, key=node.key, tensor=node.tensor, peer=node)
