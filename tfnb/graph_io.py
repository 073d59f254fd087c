"""tfnb's graph format: a GraphDef as plain JSON, its export, `import_graph_def`, and the paper's Extend.

A GraphDef is {"format": "tfnb.GraphDef", "version": 1, "node": [NodeDef, ...]}, nodes in creation
order. A NodeDef is {"name", "op", "input", "device", "attr"}; inputs follow TF ("op" for output 0,
"op:i", "^op" for a control input) and every attr value that is not plain JSON carries a type tag,
e.g. {"type": "shape", "dims": [2, null]}, so it comes back exactly. No pickle, no eval.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import heapq
import json
import math
from dataclasses import dataclass

import numpy as np

from tfnb import device_spec, dtypes
from tfnb.graph import _VALID_OP_NAME, Graph, get_default_graph
from tfnb.op_registry import registered_ops
from tfnb.operation import Operation
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.tensor import Tensor
from tfnb.tensor_shape import TensorShape

__all__ = ["GraphDef", "NodeDef", "extend_graph", "graph_to_json", "import_graph_def", "node_to_json"]

FORMAT = "tfnb.GraphDef"
VERSION = 1
_GRAPH_FIELDS = ("format", "version", "node")
_NODE_FIELDS = ("name", "op", "input", "device", "attr")
_DTYPES = {d.name: d for d in dtypes.ALL}
_NONFINITE = ("nan", "inf", "-inf")


class NodeDef(dict):
    """One node: {"name", "op", "input", "device", "attr"}; fields also read as attributes (`node.op`)."""

    def __getattr__(self, field: str):
        try:
            return self[field]
        except KeyError:
            raise AttributeError(field) from None


class GraphDef:
    """A graph as plain JSON data: {"format": "tfnb.GraphDef", "version": 1, "node": [NodeDef, ...]}.

    tfnb differs from TF: the serialized form is UTF-8 JSON text, not a protocol buffer.
    """

    def __init__(self, node=()) -> None:
        self.node: list[NodeDef] = [NodeDef(n) for n in node]

    def to_dict(self) -> dict:
        """The GraphDef as JSON-compatible dicts and lists."""
        return {"format": FORMAT, "version": VERSION, "node": [dict(n) for n in self.node]}

    def to_json(self, indent: int | None = None) -> str:
        """The GraphDef as JSON text, keys sorted so equal graphs give equal text."""
        return json.dumps(self.to_dict(), sort_keys=True, indent=indent, allow_nan=False)

    @classmethod
    def from_dict(cls, data) -> GraphDef:
        """A GraphDef from JSON-compatible data; ValueError naming the node and field if it is malformed."""
        if not isinstance(data, dict):
            raise ValueError(f"A GraphDef must be a JSON object, got {type(data).__name__}")
        _check_fields(data, _GRAPH_FIELDS, "GraphDef")
        if data["format"] != FORMAT:
            raise ValueError(f"GraphDef: field 'format' must be {FORMAT!r}, got {data['format']!r}")
        if type(data["version"]) is not int or data["version"] != VERSION:
            raise ValueError(f"GraphDef: field 'version' must be {VERSION}, got {data['version']!r}")
        if type(data["node"]) is not list:
            raise ValueError(f"GraphDef: field 'node' must be a list, got {type(data['node']).__name__}")
        _parse_nodes(data["node"])
        return cls(data["node"])

    @classmethod
    def from_json(cls, text: str | bytes) -> GraphDef:
        """A GraphDef from its JSON text; ValueError if the text is not JSON or not a GraphDef."""
        try:
            data = json.loads(text, parse_constant=_reject_constant)
        except ValueError as error:
            raise ValueError(f"GraphDef is not valid JSON: {error}") from None
        return cls.from_dict(data)

    def SerializeToString(self) -> bytes:  # noqa: N802 - TF's protobuf name
        """The GraphDef as bytes (UTF-8 JSON)."""
        return self.to_json().encode()

    @classmethod
    def FromString(cls, data: bytes) -> GraphDef:  # noqa: N802
        """The GraphDef that `SerializeToString` wrote."""
        return cls.from_json(data)

    def ParseFromString(self, data: bytes) -> int:  # noqa: N802
        """Replaces this GraphDef's nodes by those in `data`; returns the number of bytes read."""
        self.node = GraphDef.from_json(data).node
        return len(data)

    def ByteSize(self) -> int:  # noqa: N802
        """The length of the serialized GraphDef in bytes."""
        return len(self.SerializeToString())

    def __eq__(self, other) -> bool:
        return isinstance(other, GraphDef) and self.to_dict() == other.to_dict()

    __hash__ = None

    def __repr__(self) -> str:
        return f"<tfnb.GraphDef with {len(self.node)} nodes>"


def _reject_constant(name: str):
    raise ValueError(f"{name} is not JSON")


# -- export ---------------------------------------------------------------------------------------


def graph_to_json(graph: Graph) -> GraphDef:
    """The GraphDef of `graph`, nodes in creation order."""
    return GraphDef(node_to_json(op) for op in graph.get_operations())


def node_to_json(op: Operation) -> NodeDef:
    """The NodeDef of `op`: name, type, inputs ('x', 'x:1', '^c'), requested device, encoded attrs."""
    inputs = [t.op.name if t.value_index == 0 else t.name for t in op.inputs]
    inputs += [f"^{c.name}" for c in op.control_inputs]
    return NodeDef(name=op.name, op=op.type, input=inputs, device=op.device, attr=_encode_attrs(op.attrs, op.name))


def _encode_attrs(attrs: dict, node: str) -> dict:
    return {key: _encode(value, f"Node '{node}': attr '{key}'") for key, value in attrs.items()}


def _encode(value, where: str):
    kind = type(value)
    if value is None or kind in (bool, int, str):
        return value
    if kind is float:
        return value if math.isfinite(value) else {"type": "float", "value": repr(value)}
    if kind is bytes:
        return {"type": "bytes", "data": _b64encode(value)}
    if kind is list:
        return [_encode(item, where) for item in value]
    if kind is tuple:
        return {"type": "tuple", "items": [_encode(item, where) for item in value]}
    if isinstance(value, dtypes.DType):
        return {"type": "dtype", "name": value.name}
    if isinstance(value, TensorShape):
        dims = value.as_tuple()
        return {"type": "shape", "dims": None if dims is None else list(dims)}
    if isinstance(value, np.ndarray):
        return _encode_array(value, where)
    if isinstance(value, np.generic) and value.dtype.kind in "biufc":
        return {"type": "scalar", "dtype": value.dtype.name, "data": _b64encode(_little_endian(np.asarray(value)))}
    raise ValueError(f"{where}: a {kind.__name__} value cannot be written to a GraphDef")


def _encode_array(array: np.ndarray, where: str) -> dict:
    shape = list(array.shape)
    if array.dtype == object:
        if not all(type(item) is bytes for item in array.flat):
            raise ValueError(f"{where}: an object array must hold bytes to be written to a GraphDef")
        return {"type": "tensor", "dtype": "string", "shape": shape, "data": [_b64encode(s) for s in array.flat]}
    if array.dtype.kind not in "biufc":
        raise ValueError(f"{where}: an array of dtype {array.dtype} cannot be written to a GraphDef")
    return {"type": "tensor", "dtype": array.dtype.name, "shape": shape, "data": _b64encode(_little_endian(array))}


def _little_endian(array: np.ndarray) -> bytes:
    # Fixed byte order, so a GraphDef written on one machine reads the same on any other.
    return array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()


def _b64encode(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


# -- parsing and attr decoding --------------------------------------------------------------------


@dataclass(frozen=True)
class _Node:
    """A validated node: data inputs as (op name, output index), control inputs as names, decoded attrs."""

    position: int
    name: str
    op: str
    inputs: tuple
    controls: tuple
    device: str
    attrs: dict

    @property
    def colocated(self) -> list:
        return self.attrs.get("_class", [])


def _parse_nodes(nodes) -> list[_Node]:
    parsed, names = [], set()
    for position, data in enumerate(nodes):
        node = _parse_node(data, position)
        if node.name in names:
            raise ValueError(f"Node '{node.name}' appears twice in the GraphDef")
        names.add(node.name)
        parsed.append(node)
    return parsed


def _parse_node(data, position: int) -> _Node:
    where = f"GraphDef node {position}"
    if not isinstance(data, dict):
        raise ValueError(f"{where} must be a JSON object, got {type(data).__name__}")
    if isinstance(data.get("name"), str):
        where = f"Node '{data['name']}'"
    _check_fields(data, _NODE_FIELDS, where)
    name, op, device = (_typed(data, field, str, where) for field in ("name", "op", "device"))
    if not _VALID_OP_NAME.match(name):
        raise ValueError(f"{where}: field 'name' is not a valid node name")
    if not op:
        raise ValueError(f"{where}: field 'op' is empty")
    try:
        device_spec.canonical(device)
    except ValueError as error:
        raise ValueError(f"{where}: field 'device': {error}") from None
    inputs, controls = _parse_inputs(_typed(data, "input", list, where), where)
    attrs = {}
    for key, value in _typed(data, "attr", dict, where).items():
        if not isinstance(key, str):
            raise ValueError(f"{where}: field 'attr' has a key {key!r} that is not a string")
        attrs[key] = _decode(value, f"{where}: attr '{key}'")
    colocated = attrs.get("_class", [])
    if type(colocated) is not list or not all(isinstance(c, str) and _VALID_OP_NAME.match(c) for c in colocated):
        raise ValueError(f"{where}: attr '_class' must be a list of node names, got {colocated!r}")
    return _Node(position, name, op, inputs, controls, device, attrs)


def _check_fields(data: dict, fields: tuple, where: str) -> None:
    for field in fields:
        if field not in data:
            raise ValueError(f"{where}: missing field '{field}'")
    for field in data:
        if field not in fields:
            raise ValueError(f"{where}: unknown field {field!r} (expected {', '.join(fields)})")


def _typed(data: dict, field: str, kind: type, where: str):
    value = data[field]
    if type(value) is not kind:
        raise ValueError(f"{where}: field '{field}' must be a {kind.__name__}, got {type(value).__name__}")
    return value


def _parse_inputs(refs: list, where: str) -> tuple[tuple, tuple]:
    inputs, controls = [], []
    for ref in refs:
        if not isinstance(ref, str):
            raise ValueError(f"{where}: field 'input' holds {ref!r}, which is not a string")
        if ref.startswith("^"):
            controls.append(_control_ref(ref, f"{where}: field 'input'"))
        elif controls:
            raise ValueError(f"{where}: field 'input' has data input '{ref}' after a control input")
        else:
            inputs.append(_tensor_ref(ref, f"{where}: field 'input'"))
    return tuple(inputs), tuple(controls)


def _tensor_ref(ref: str, where: str) -> tuple[str, int]:
    name, colon, index = ref.partition(":")
    if not _VALID_OP_NAME.match(name) or colon and not (index.isascii() and index.isdigit()):
        raise ValueError(f"{where}: '{ref}' is not a tensor name ('op' or 'op:index')")
    return name, int(index) if colon else 0


def _control_ref(ref: str, where: str) -> str:
    if not _VALID_OP_NAME.match(ref[1:]):
        raise ValueError(f"{where}: '{ref}' is not a control input ('^op')")
    return ref[1:]


def _ref_text(ref: tuple[str, int]) -> str:
    return f"{ref[0]}:{ref[1]}"


def _decode(data, where: str):
    if data is None or type(data) in (bool, int, float, str):
        return data
    if type(data) is list:
        return [_decode(item, where) for item in data]
    if type(data) is not dict:
        raise ValueError(f"{where}: a {type(data).__name__} is not an attr value")
    tag = data.get("type")
    if not isinstance(tag, str) or tag not in _DECODERS:
        raise ValueError(f"{where}: unknown type tag {tag!r} (expected one of {', '.join(_DECODERS)})")
    fields, decoder = _DECODERS[tag]
    _check_fields(data, ("type",) + fields, where)
    return decoder(data, where)


def _decode_float(data: dict, where: str) -> float:
    if data["value"] not in _NONFINITE:
        raise ValueError(f"{where}: a tagged float must be one of {', '.join(_NONFINITE)}, got {data['value']!r}")
    return float(data["value"])


def _decode_tuple(data: dict, where: str) -> tuple:
    if type(data["items"]) is not list:
        raise ValueError(f"{where}: field 'items' of a tuple must be a list")
    return tuple(_decode(item, where) for item in data["items"])


def _decode_dtype(data: dict, where: str) -> dtypes.DType:
    name = data["name"]
    if not isinstance(name, str) or name not in _DTYPES:
        raise ValueError(f"{where}: {name!r} is not a dtype name")
    return _DTYPES[name]


def _decode_shape(data: dict, where: str) -> TensorShape:
    dims = data["dims"]
    if dims is not None and (type(dims) is not list or not all(d is None or _is_size(d) for d in dims)):
        raise ValueError(f"{where}: shape dims must be null or a list of sizes and nulls, got {dims!r}")
    return TensorShape(dims)


def _decode_tensor(data: dict, where: str) -> np.ndarray:
    shape = data["shape"]
    if type(shape) is not list or not all(_is_size(d) for d in shape):
        raise ValueError(f"{where}: tensor shape must be a list of sizes, got {shape!r}")
    count = math.prod(shape)
    if data["dtype"] == "string":
        items = data["data"]
        if type(items) is not list or len(items) != count:
            raise ValueError(f"{where}: a string tensor of shape {shape} needs a list of {count} base64 strings")
        array = np.empty(count, dtype=object)
        array[:] = [_b64decode(item, where) for item in items]
    else:
        np_dtype = _numeric_dtype(data["dtype"], where)
        raw = _b64decode(data["data"], where)
        if len(raw) != count * np_dtype.itemsize:
            raise ValueError(f"{where}: {len(raw)} bytes of data for a {np_dtype.name} tensor of shape {shape}")
        array = np.frombuffer(raw, np_dtype.newbyteorder("<")).astype(np_dtype, copy=False)
    array = array.reshape(shape)
    array.flags.writeable = False
    return array


def _decode_scalar(data: dict, where: str) -> np.generic:
    np_dtype = _numeric_dtype(data["dtype"], where)
    raw = _b64decode(data["data"], where)
    if len(raw) != np_dtype.itemsize:
        raise ValueError(f"{where}: {len(raw)} bytes of data for a {np_dtype.name} scalar")
    return np.frombuffer(raw, np_dtype.newbyteorder("<")).astype(np_dtype)[0]


def _numeric_dtype(name, where: str) -> np.dtype:
    try:
        np_dtype = np.dtype(name) if isinstance(name, str) else None
    except TypeError:
        np_dtype = None
    if np_dtype is None or np_dtype.kind not in "biufc" or np_dtype.name != name:
        raise ValueError(f"{where}: {name!r} is not a numeric dtype name")
    return np_dtype


def _is_size(value) -> bool:
    return type(value) is int and value >= 0


def _b64decode(text, where: str) -> bytes:
    if not isinstance(text, str):
        raise ValueError(f"{where}: data must be a base64 string, got {type(text).__name__}")
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as error:
        raise ValueError(f"{where}: invalid base64 data ({error})") from None


_DECODERS = {
    "float": (("value",), _decode_float),
    "bytes": (("data",), lambda data, where: _b64decode(data["data"], where)),
    "tuple": (("items",), _decode_tuple),
    "dtype": (("name",), _decode_dtype),
    "shape": (("dims",), _decode_shape),
    "tensor": (("dtype", "shape", "data"), _decode_tensor),
    "scalar": (("dtype", "data"), _decode_scalar),
}


# -- import and extend ----------------------------------------------------------------------------


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
    with _atomic(graph), graph.name_scope("import" if name is None else name), \
            graph.colocate_with(None, ignore_existing=True):
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


def _nodes_of(graph_def) -> list[_Node]:
    if isinstance(graph_def, dict):
        graph_def = GraphDef.from_dict(graph_def)
    if not isinstance(graph_def, GraphDef):
        raise TypeError(f"graph_def must be a GraphDef, got {type(graph_def).__name__}")
    nodes = _parse_nodes(graph_def.node)
    known = registered_ops()
    for node in nodes:
        if node.op not in known:
            raise ValueError(f"Node '{node.name}': op type '{node.op}' is not registered")
    return nodes


def _parse_input_map(input_map: dict) -> tuple[dict, dict]:
    if not isinstance(input_map, dict):
        raise TypeError(f"input_map must be a dict from tensor names to Tensors, got {type(input_map).__name__}")
    tensors, controls = {}, {}
    for key, value in input_map.items():
        if not isinstance(key, str):
            raise TypeError(f"input_map keys must be strings, got {key!r}")
        if key.startswith("^"):
            controls[_control_ref(key, "input_map")] = value
        else:
            tensors[_tensor_ref(key, "input_map")] = value
    return tensors, controls


def _check_input_map_used(nodes: list[_Node], tensors: dict, controls: dict) -> None:
    used = {ref for node in nodes for ref in node.inputs}
    used_controls = {c for node in nodes for c in node.controls}
    unused = [_ref_text(ref) for ref in tensors if ref not in used]
    unused += [f"^{c}" for c in controls if c not in used_controls]
    if unused:
        raise ValueError(f"Attempted to map inputs that were not found in graph_def: [{', '.join(unused)}]")


def _back_edges(nodes: list[_Node]) -> set[tuple[str, int]]:
    """(Merge node, input position) of each input fed by a NextIteration among `nodes`: a loop's edge back.

    The dataflow graph of a while loop has a cycle through these edges (the papers' NextIteration ->
    Merge). They are left out of the import order and closed once their source exists.
    """
    types = {node.name: node.op for node in nodes}
    return {(node.name, position) for node in nodes if node.op == "Merge"
            for position, (src, _) in enumerate(node.inputs) if types.get(src) == "NextIteration"}


def _forward_inputs(node: _Node, back: set) -> list:
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


def _dependencies(nodes: list[_Node], outside, tensors=(), controls=(), back=()) -> dict[str, set[str]]:
    """For each node, the nodes among `nodes` it needs first; a name in neither `nodes` nor `outside` is an error.

    Back edges (`_back_edges`) are not dependencies.
    """
    names = {node.name for node in nodes}
    deps = {}
    for node in nodes:
        refs = [(src, f"input '{_ref_text((src, i))}'") for position, (src, i) in enumerate(node.inputs)
                if (src, i) not in tensors and (node.name, position) not in back]
        refs += [(c, f"input '^{c}'") for c in node.controls if c not in controls]
        refs += [(c, "attr '_class'") for c in node.colocated]
        for src, field in refs:
            if src not in names and src not in outside:
                raise ValueError(f"Node '{node.name}': {field} names node '{src}', which does not exist")
        deps[node.name] = {src for src, _ in refs if src in names}
    return deps


def _order(nodes: list[_Node], deps: dict[str, set[str]]) -> list[_Node]:
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
    request = _tensor_ref(element, "return_elements") if ":" in element else element
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
        raise ValueError(f"Requested return_element '{_ref_text(request)}' not found in graph_def: "
                         f"'{request[0]}' has {len(op.outputs)} output(s).")
    return op.outputs[request[1]]


def _mapped_tensor(value, graph: Graph) -> Tensor:
    tensor = convert_to_tensor(value)
    if tensor.graph is not graph:
        raise ValueError(f"input_map value {tensor.name} is not in the graph being imported into")
    return tensor


def _mapped_op(value, graph: Graph) -> Operation:
    op = value.op if isinstance(value, Tensor) else value
    if not isinstance(op, Operation) or op.graph is not graph:
        raise ValueError(f"input_map value {value!r} for a control input must be an Operation of this graph")
    return op


def _output(op: Operation, ref: tuple[str, int], node: _Node) -> Tensor:
    if ref[1] >= len(op.outputs):
        raise ValueError(f"Node '{node.name}': input '{_ref_text(ref)}' names output {ref[1]} of '{ref[0]}', "
                         f"which has {len(op.outputs)} output(s)")
    return op.outputs[ref[1]]


def _check_mapped_dtypes(nodes: list[_Node], created: dict, tensors: dict) -> None:
    for node in nodes:
        for ref in node.inputs:
            if ref in tensors:
                expected = _output(created[ref[0]], ref, node).dtype
                if tensors[ref].dtype is not expected:
                    raise ValueError(f"Node '{node.name}': input '{_ref_text(ref)}' of dtype {expected.name} is "
                                     f"mapped to {tensors[ref].name} of dtype {tensors[ref].dtype.name}")


def _with_colocation(attrs: dict, names: list[str]) -> dict:
    return {**attrs, "_class": names} if "_class" in attrs else attrs


def _create(graph: Graph, node: _Node, inputs: list, controls: list, attrs: dict, name: str,
            keep_outer_dependencies: bool) -> Operation:
    outer = contextlib.nullcontext() if keep_outer_dependencies else graph.control_dependencies(None)
    with outer, graph.control_dependencies(controls), graph.device(node.device):
        try:
            return graph.create_op(node.op, inputs, attrs, name)
        except KeyError as error:
            raise ValueError(f"Node '{node.name}' (op {node.op}): missing attr {error}") from error
        except (ValueError, TypeError, IndexError, AttributeError) as error:
            raise ValueError(f"Node '{node.name}' (op {node.op}) cannot be imported: {error}") from error


def _check_same(op: Operation, node: _Node) -> None:
    """Extend accepts a node already in the graph only if it is the same node."""
    fields = {
        "op": (op.type, node.op),
        "input": ([(t.op.name, t.value_index) for t in op.inputs], list(node.inputs)),
        "control input": ([c.name for c in op.control_inputs], list(node.controls)),
        "device": (op.device, device_spec.canonical(node.device)),
        "attr": (_encode_attrs(op.attrs, op.name), _encode_attrs(node.attrs, node.name)),
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
