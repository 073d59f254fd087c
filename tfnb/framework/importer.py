"""Importing a GraphDef into a graph: `import_graph_def`, and the 2015 paper's Extend.

Every node is validated before any is built: its name (TF's rule), its op type (a NotFoundError if
it is not registered), its attrs against the op's declared attrs, its inputs. Nodes are then created
in dependency order; a loop's NextIteration -> Merge back edges are closed after every node exists,
then static shapes are refined until they hold on every iteration. A failed import leaves the graph
as it was.
"""

from __future__ import annotations

import contextlib
import heapq

from tfnb.framework import device_spec
from tfnb.framework.errors import NotFoundError
from tfnb.framework.graph import Graph, get_default_graph
from tfnb.framework.graph_def import (
    GraphDef,
    ParsedNode,
    control_ref,
    encode_attrs,
    parse_nodes,
    ref_text,
    tensor_ref,
)
from tfnb.framework.op_registry import attr_problems, registered_ops
from tfnb.framework.operation import Operation
from tfnb.framework.tensor import Tensor

__all__ = ["extend_graph", "import_graph_def"]


def import_graph_def(graph_def: GraphDef | dict, input_map: dict | None = None, return_elements: list | None = None,
                     name: str | None = None, op_dict=None, producer_op_list=None) -> list | None:
    """Imports `graph_def` into the default graph under the name scope `name` ('import'); returns `return_elements`.

    `op_dict` and `producer_op_list` are accepted for TF compatibility and ignored.
    """
    nodes = _nodes_of(graph_def)
    by_name = {node.name: node for node in nodes}
    tensor_map, control_map = _parse_input_map(input_map or {})
    _check_input_map_used(nodes, tensor_map, control_map)
    back = _back_edges(nodes)
    deps = _dependencies(nodes, set(), tensor_map, control_map, back)
    order = _order(nodes, deps)
    requests = [_return_request(element, by_name) for element in return_elements or ()]
    graph = get_default_graph()
    created: dict[str, Operation] = {}
    with _atomic(graph), graph.name_scope("import" if name is None else name):
        tensors = {ref: _mapped_tensor(value, graph) for ref, value in tensor_map.items()}
        controls = {key: _mapped_op(value, graph) for key, value in control_map.items()}
        for node in order:
            inputs = [tensors[ref] if ref in tensors else _output(created[ref[0]], ref, node)
                      for ref in _forward_inputs(node, back)]
            control_ops = [controls[c] if c in controls else created[c] for c in node.controls]
            # As in TF, the enclosing control dependencies go only to nodes fed by no other imported node.
            is_root = all(ref in tensors for ref in node.inputs) and all(c in controls for c in node.controls)
            attrs = _with_colocation(node.attrs, [created[c].name for c in node.colocated])
            created[node.name] = _create(graph, node, inputs, control_ops, attrs, node.name, is_root)
        _close_loops(back, by_name, created, [created[node.name] for node in order])
        _check_mapped_dtypes(nodes, created, tensors)
        results = [_returned(request, created, tensors) for request in requests]
    return results if return_elements is not None else None


def extend_graph(graph: Graph, graph_def: GraphDef | dict) -> list[Operation]:
    """Adds the nodes of `graph_def` that `graph` lacks, with their exact names (the 2015 paper's Session.Extend).

    Nodes already in the graph must be identical to those in `graph_def`. Returns the new ops.
    """
    nodes = _nodes_of(graph_def)
    ops = {op.name: op for op in graph.get_operations()}
    for node in nodes:
        if node.name in ops:
            _check_same(ops[node.name], node)
    new = [node for node in nodes if node.name not in ops]
    back = _back_edges(new)
    order = _order(new, _dependencies(new, ops, back=back))
    with _atomic(graph), graph.name_scope(""), graph.device(None), graph.control_dependencies(None), \
            graph.colocate_with(None, ignore_existing=True):
        for node in order:
            inputs = [_output(ops[ref[0]], ref, node) for ref in _forward_inputs(node, back)]
            # A trailing '/' makes create_op use the name as it is, outside any scope.
            ops[node.name] = _create(graph, node, inputs, [ops[c] for c in node.controls], node.attrs,
                                     node.name + "/", True)
        _close_loops(back, {node.name: node for node in new}, ops, [ops[node.name] for node in order])
    return [ops[node.name] for node in order]


def _nodes_of(graph_def) -> list[ParsedNode]:
    if isinstance(graph_def, dict):
        graph_def = GraphDef.from_dict(graph_def)
    if not isinstance(graph_def, GraphDef):
        raise TypeError(f"graph_def must be a GraphDef, got {type(graph_def).__name__}")
    nodes = parse_nodes(graph_def.node)
    known = registered_ops()
    for node in nodes:
        if node.op not in known:
            raise NotFoundError(None, None, f"Op type not registered '{node.op}' in binary running on this "
                                f"process (node '{node.name}')")
        problems = attr_problems(known[node.op], node.attrs)
        if problems:
            raise ValueError(f"Node '{node.name}' (op {node.op}): {'; '.join(problems)}")
    return nodes


def _parse_input_map(input_map: dict) -> tuple[dict, dict]:
    if not isinstance(input_map, dict):
        raise TypeError(f"input_map must be a dict from tensor names to Tensors, got {type(input_map).__name__}")
    tensors, controls = {}, {}
    for key, value in input_map.items():
        if not isinstance(key, str):
            raise TypeError(f"input_map keys must be strings, got {key!r}")
        if key.startswith("^"):
            controls[control_ref(key, "input_map")] = value
        else:
            tensors[tensor_ref(key, "input_map")] = value
    return tensors, controls


def _check_input_map_used(nodes: list[ParsedNode], tensors: dict, controls: dict) -> None:
    used = {ref for node in nodes for ref in node.inputs}
    used_controls = {c for node in nodes for c in node.controls}
    unused = [ref_text(ref) for ref in tensors if ref not in used]
    unused += [f"^{c}" for c in controls if c not in used_controls]
    if unused:
        raise ValueError(f"Attempted to map inputs that were not found in graph_def: [{', '.join(unused)}]")


def _back_edges(nodes: list[ParsedNode]) -> set[tuple[str, int]]:
    """(Merge node, input position) of each input fed by a NextIteration among `nodes`: a loop's edge back.

    The dataflow graph of a while loop has a cycle through these edges (the papers' NextIteration ->
    Merge). They are left out of the import order and closed once their source exists.
    """
    types = {node.name: node.op for node in nodes}
    return {(node.name, position) for node in nodes if node.op == "Merge"
            for position, (src, _) in enumerate(node.inputs) if types.get(src) == "NextIteration"}


def _forward_inputs(node: ParsedNode, back: set) -> list:
    """node's input refs with each back edge replaced by the node's first other input (a stand-in until closed)."""
    forward = [ref for position, ref in enumerate(node.inputs) if (node.name, position) not in back]
    return [forward[0] if (node.name, position) in back else ref for position, ref in enumerate(node.inputs)]


def _close_loops(back: set, by_name: dict, created: dict, new_ops: list) -> None:
    """Connects each back edge to its NextIteration, then refines static shapes until they hold on every iteration."""
    if not back:
        return
    for name, position in back:
        ref = by_name[name].inputs[position]
        created[name]._update_input(position, _output(created[ref[0]], ref, by_name[name]))
    changed = True
    while changed:  # Merge shapes only ever relax, so this ends
        changed = False
        for op in new_ops:
            for tensor, (_, shape) in zip(op.outputs, op.op_def.infer(op)):
                if tensor.shape != shape:
                    tensor._shape, changed = shape, True


def _dependencies(nodes: list[ParsedNode], outside, tensors=(), controls=(), back=()) -> dict[str, set[str]]:
    """For each node, the nodes among `nodes` it needs first; a name in neither `nodes` nor `outside` is an error.

    Back edges (`_back_edges`) are not dependencies.
    """
    names = {node.name for node in nodes}
    deps = {}
    for node in nodes:
        refs = [(src, f"input '{ref_text((src, i))}'") for position, (src, i) in enumerate(node.inputs)
                if (src, i) not in tensors and (node.name, position) not in back]
        refs += [(c, f"input '^{c}'") for c in node.controls if c not in controls]
        refs += [(c, "attr '_class'") for c in node.colocated]
        for src, field in refs:
            if src not in names and src not in outside:
                raise ValueError(f"Node '{node.name}': {field} names node '{src}', which does not exist")
        deps[node.name] = {src for src, _ in refs if src in names}
    return deps


def _order(nodes: list[ParsedNode], deps: dict[str, set[str]]) -> list[ParsedNode]:
    """`nodes` in topological order, otherwise in GraphDef order; a cycle is a ValueError listing it."""
    by_name = {node.name: node for node in nodes}
    waiting = {name: len(needs) for name, needs in deps.items()}
    users: dict[str, list[str]] = {name: [] for name in deps}
    for name, needs in deps.items():
        for src in needs:
            users[src].append(name)
    ready = [(node.position, node.name) for node in nodes if not waiting[node.name]]
    heapq.heapify(ready)
    order = []
    while ready:
        _, name = heapq.heappop(ready)
        order.append(by_name[name])
        for user in users[name]:
            waiting[user] -= 1
            if not waiting[user]:
                heapq.heappush(ready, (by_name[user].position, user))
    if len(order) < len(nodes):
        stuck = {name for name, count in waiting.items() if count}
        raise ValueError(f"The GraphDef has a cycle: {' -> '.join(_cycle(stuck, deps))}")
    return order


def _cycle(stuck: set[str], deps: dict[str, set[str]]) -> list[str]:
    """A cycle among `stuck` nodes, in dataflow order, its first node repeated at the end."""
    path: list[str] = []
    seen: dict[str, int] = {}
    name = min(stuck)
    while name not in seen:
        seen[name] = len(path)
        path.append(name)
        name = min(deps[name] & stuck)  # every stuck node waits on another stuck node
    loop = path[seen[name]:][::-1]
    start = loop.index(min(loop))
    loop = loop[start:] + loop[:start]
    return loop + loop[:1]


def _return_request(element, by_name: dict) -> tuple[str, int] | str:
    if not isinstance(element, str):
        raise TypeError(f"return_elements must be names, got {element!r}")
    request = tensor_ref(element, "return_elements") if ":" in element else element
    if (request[0] if isinstance(request, tuple) else request) not in by_name:
        raise ValueError(f"Requested return_element '{element}' not found in graph_def.")
    return request


def _returned(request, created: dict, tensors: dict):
    if isinstance(request, str):
        return created[request]
    if request in tensors:
        return tensors[request]
    op = created[request[0]]
    if request[1] >= len(op.outputs):
        raise ValueError(f"Requested return_element '{ref_text(request)}' not found in graph_def: "
                         f"'{request[0]}' has {len(op.outputs)} output(s).")
    return op.outputs[request[1]]


def _mapped_tensor(value, graph: Graph) -> Tensor:
    tensor = value._as_graph_element() if hasattr(value, "_as_graph_element") else value
    if not isinstance(tensor, Tensor):
        raise TypeError(f"input_map value {value!r} must be a Tensor")
    if tensor.graph is not graph:
        raise ValueError(f"input_map value {tensor.name} is not in the graph being imported into")
    return tensor


def _mapped_op(value, graph: Graph) -> Operation:
    op = value.op if isinstance(value, Tensor) else value
    if not isinstance(op, Operation) or op.graph is not graph:
        raise ValueError(f"input_map value {value!r} for a control input must be an Operation of this graph")
    return op


def _output(op: Operation, ref: tuple[str, int], node: ParsedNode) -> Tensor:
    if ref[1] >= len(op.outputs):
        raise ValueError(f"Node '{node.name}': input '{ref_text(ref)}' names output {ref[1]} of '{ref[0]}', "
                         f"which has {len(op.outputs)} output(s)")
    return op.outputs[ref[1]]


def _check_mapped_dtypes(nodes: list[ParsedNode], created: dict, tensors: dict) -> None:
    for node in nodes:
        for ref in node.inputs:
            if ref in tensors:
                expected = _output(created[ref[0]], ref, node).dtype
                if tensors[ref].dtype is not expected:
                    raise ValueError(f"Node '{node.name}': input '{ref_text(ref)}' of dtype {expected.name} is "
                                     f"mapped to {tensors[ref].name} of dtype {tensors[ref].dtype.name}")


def _with_colocation(attrs: dict, names: list[str]) -> dict:
    return {**attrs, "_class": names} if "_class" in attrs else attrs


def _create(graph: Graph, node: ParsedNode, inputs: list, controls: list, attrs: dict, name: str,
            keep_outer_dependencies: bool) -> Operation:
    outer = contextlib.nullcontext() if keep_outer_dependencies else graph.control_dependencies(None)
    # Inside an enclosing colocate_with, as in TF, every imported op goes with the colocated op, its device too.
    device = graph.device(node.device) if not graph._colocation_stack else contextlib.nullcontext()
    with outer, graph.control_dependencies(controls), device:
        try:
            return graph.create_op(node.op, inputs, attrs, name)
        except KeyError as error:
            raise ValueError(f"Node '{node.name}' (op {node.op}): missing attr {error}") from error
        except (ValueError, TypeError, IndexError, AttributeError) as error:
            raise ValueError(f"Node '{node.name}' (op {node.op}) cannot be imported: {error}") from error


def _check_same(op: Operation, node: ParsedNode) -> None:
    """Extend accepts a node already in the graph only if it is the same node."""
    fields = {
        "op": (op.type, node.op),
        "input": ([(t.op.name, t.value_index) for t in op.inputs], list(node.inputs)),
        "control input": ([c.name for c in op.control_inputs], list(node.controls)),
        "device": (op.device, device_spec.canonical(node.device)),
        "attr": (encode_attrs(op.attrs, op.name), encode_attrs(node.attrs, node.name)),
    }
    for field, (mine, theirs) in fields.items():
        if mine != theirs:
            raise ValueError(f"Node '{node.name}' is already in the graph with a different {field}: "
                             f"{mine!r} in the graph, {theirs!r} in the GraphDef")


@contextlib.contextmanager
def _atomic(graph: Graph):
    """Removes the ops a failed import added, as TF leaves the graph unchanged when an import fails."""
    count, names = len(graph._ops), dict(graph._names_in_use)
    try:
        yield
    except BaseException:
        for op in graph._ops[count:]:
            del graph._ops_by_name[op.name]
        del graph._ops[count:]
        graph._names_in_use = names
        graph._bump_version()
        raise
