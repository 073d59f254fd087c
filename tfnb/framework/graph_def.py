"""tfnb's graph format: a GraphDef as plain JSON, its encoding of ops and its validating decoder.

A GraphDef is {"format": "tfnb.GraphDef", "version": 1, "node": [NodeDef, ...]}, nodes in creation
order. A NodeDef is {"name", "op", "input", "device", "attr"}; inputs follow TF ("op" for output 0,
"op:i", "^op" for a control input) and every attr value that is not plain JSON carries a type tag,
e.g. {"type": "shape", "dims": [2, null]}, so it comes back exactly. No pickle, no eval.
tfnb differs from TF: there is no function library, so a graph holding a traced function (a dataset's
`map` or `filter`) cannot be exported; `as_graph_def` says so with a ValueError.
Importing a GraphDef into a graph is tfnb/framework/importer.py.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from dataclasses import dataclass

import numpy as np

from tfnb.framework import device_spec, dtypes
from tfnb.framework.tensor_shape import TensorShape

__all__ = ["DecodeError", "GraphDef", "NodeDef", "graph_to_json", "node_to_json"]

FORMAT = "tfnb.GraphDef"
VERSION = 1
_GRAPH_FIELDS = ("format", "version", "node")
_NODE_FIELDS = ("name", "op", "input", "device", "attr")
_DTYPES = {d.name: d for d in dtypes.ALL}
_NONFINITE = ("nan", "inf", "-inf")
VALID_NODE_NAME = re.compile(r"[A-Za-z0-9.][A-Za-z0-9_.\-/>]*")  # TF's rule; always fullmatch it
# Bounds on what a GraphDef may be, so that no document makes the decoder recurse or allocate without end:
# TF's 2 GB limit on a serialized GraphDef, and nesting and ranks far beyond any real graph's.
MAX_BYTES = 2**31 - 1
MAX_ATTR_DEPTH = 32
MAX_RANK = 254
_MAX_DIM = 2**63 - 1
_NUMERIC_DTYPES = {d.name: d.np_dtype for d in dtypes.ALL if d.np_dtype.kind in "biufc"}


class DecodeError(ValueError):
    """Data that is not a GraphDef (protobuf's DecodeError in TF); also a ValueError, as tfnb raised before."""


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
        """A GraphDef from JSON-compatible data; DecodeError naming the node and field if it is malformed."""
        try:
            return cls._checked(data)
        except ValueError as error:
            raise DecodeError(str(error)) from None

    @classmethod
    def _checked(cls, data) -> GraphDef:
        if not isinstance(data, dict):
            raise ValueError(f"A GraphDef must be a JSON object, got {type(data).__name__}")
        _check_fields(data, _GRAPH_FIELDS, "GraphDef")
        if data["format"] != FORMAT:
            raise ValueError(f"GraphDef: field 'format' must be {FORMAT!r}, got {data['format']!r}")
        if type(data["version"]) is not int or data["version"] != VERSION:
            raise ValueError(f"GraphDef: field 'version' must be {VERSION}, got {data['version']!r}")
        if type(data["node"]) is not list:
            raise ValueError(f"GraphDef: field 'node' must be a list, got {type(data['node']).__name__}")
        parse_nodes(data["node"])
        return cls(data["node"])

    @classmethod
    def from_json(cls, text: str | bytes) -> GraphDef:
        """A GraphDef from its JSON text; DecodeError (a ValueError) if the text is not JSON or not a GraphDef."""
        if not isinstance(text, str | bytes | bytearray):
            raise TypeError(f"A GraphDef is read from str or bytes, got {type(text).__name__}")
        if len(text) > MAX_BYTES:
            raise DecodeError(f"Error parsing message with type 'GraphDef': {len(text)} bytes, over the limit of "
                              f"{MAX_BYTES}")
        try:
            data = json.loads(text, parse_constant=_reject_constant)
        except (ValueError, RecursionError) as error:  # RecursionError: nested deeper than the parser goes
            raise DecodeError(f"Error parsing message with type 'GraphDef': not valid JSON ({error})") from None
        return cls.from_dict(data)

    def SerializeToString(self) -> bytes:
        """The GraphDef as bytes (UTF-8 JSON)."""
        return self.to_json().encode()

    @classmethod
    def FromString(cls, data: bytes) -> GraphDef:
        """The GraphDef that `SerializeToString` wrote."""
        return cls.from_json(data)

    def ParseFromString(self, data: bytes) -> int:
        """Replaces this GraphDef's nodes by those in `data`; returns the number of bytes read."""
        self.node = GraphDef.from_json(data).node
        return len(data)

    def ByteSize(self) -> int:
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


def graph_to_json(graph) -> GraphDef:
    """The GraphDef of `graph`, nodes in creation order."""
    return GraphDef(node_to_json(op) for op in graph.get_operations())


def node_to_json(op) -> NodeDef:
    """The NodeDef of `op`: name, type, inputs ('x', 'x:1', '^c'), requested device, encoded attrs."""
    inputs = [t.op.name if t.value_index == 0 else t.name for t in op.inputs]
    inputs += [f"^{c.name}" for c in op.control_inputs]
    return NodeDef(name=op.name, op=op.type, input=inputs, device=op.device, attr=encode_attrs(op.attrs, op.name))


def encode_attrs(attrs: dict, node: str) -> dict:
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
class ParsedNode:
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


def parse_nodes(nodes) -> list[ParsedNode]:
    parsed, names = [], set()
    for position, data in enumerate(nodes):
        node = _parse_node(data, position)
        if node.name in names:
            raise ValueError(f"Node '{node.name}' appears twice in the GraphDef")
        names.add(node.name)
        parsed.append(node)
    return parsed


def _parse_node(data, position: int) -> ParsedNode:
    where = f"GraphDef node {position}"
    if not isinstance(data, dict):
        raise ValueError(f"{where} must be a JSON object, got {type(data).__name__}")
    if isinstance(data.get("name"), str):
        where = f"Node '{data['name']}'"
    _check_fields(data, _NODE_FIELDS, where)
    name, op, device = (_typed(data, field, str, where) for field in ("name", "op", "device"))
    if not VALID_NODE_NAME.fullmatch(name):
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
        attrs[key] = _decode(value, f"{where}: attr '{key}'", MAX_ATTR_DEPTH)
    colocated = attrs.get("_class", [])
    if type(colocated) is not list or not all(isinstance(c, str) and VALID_NODE_NAME.fullmatch(c) for c in colocated):
        raise ValueError(f"{where}: attr '_class' must be a list of node names, got {colocated!r}")
    return ParsedNode(position, name, op, inputs, controls, device, attrs)


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
            controls.append(control_ref(ref, f"{where}: field 'input'"))
        elif controls:
            raise ValueError(f"{where}: field 'input' has data input '{ref}' after a control input")
        else:
            inputs.append(tensor_ref(ref, f"{where}: field 'input'"))
    return tuple(inputs), tuple(controls)


def tensor_ref(ref: str, where: str) -> tuple[str, int]:
    name, colon, index = ref.partition(":")
    if not VALID_NODE_NAME.fullmatch(name) or colon and not (index.isascii() and index.isdigit()):
        raise ValueError(f"{where}: '{ref}' is not a tensor name ('op' or 'op:index')")
    return name, int(index) if colon else 0


def control_ref(ref: str, where: str) -> str:
    if not VALID_NODE_NAME.fullmatch(ref[1:]):
        raise ValueError(f"{where}: '{ref}' is not a control input ('^op')")
    return ref[1:]


def ref_text(ref: tuple[str, int]) -> str:
    return f"{ref[0]}:{ref[1]}"


def _decode(data, where: str, depth: int):
    if depth <= 0:
        raise ValueError(f"{where}: nested more than {MAX_ATTR_DEPTH} levels deep")
    if data is None or type(data) in (bool, str):
        return data
    if type(data) is int:
        if not -2**63 <= data < 2**64:
            raise ValueError(f"{where}: {data} does not fit in 64 bits")
        return data
    if type(data) is float:
        return data
    if type(data) is list:
        return [_decode(item, where, depth - 1) for item in data]
    if type(data) is not dict:
        raise ValueError(f"{where}: a {type(data).__name__} is not an attr value")
    tag = data.get("type")
    if not isinstance(tag, str) or tag not in _DECODERS:
        raise ValueError(f"{where}: unknown type tag {tag!r} (expected one of {', '.join(_DECODERS)})")
    fields, decoder = _DECODERS[tag]
    _check_fields(data, ("type",) + fields, where)
    return decoder(data, where, depth - 1)


def _decode_float(data: dict, where: str, depth: int) -> float:
    if data["value"] not in _NONFINITE:
        raise ValueError(f"{where}: a tagged float must be one of {', '.join(_NONFINITE)}, got {data['value']!r}")
    return float(data["value"])


def _decode_tuple(data: dict, where: str, depth: int) -> tuple:
    if type(data["items"]) is not list:
        raise ValueError(f"{where}: field 'items' of a tuple must be a list")
    return tuple(_decode(item, where, depth - 1) for item in data["items"])


def _decode_dtype(data: dict, where: str, depth: int) -> dtypes.DType:
    name = data["name"]
    if not isinstance(name, str) or name not in _DTYPES:
        raise ValueError(f"{where}: {name!r} is not a dtype name")
    return _DTYPES[name]


def _decode_shape(data: dict, where: str, depth: int) -> TensorShape:
    dims = data["dims"]
    if dims is not None and (type(dims) is not list or len(dims) > MAX_RANK
                             or not all(d is None or _is_size(d) for d in dims)):
        raise ValueError(f"{where}: shape dims must be null or a list of sizes and nulls, got {dims!r}")
    return TensorShape(dims)


def _decode_tensor(data: dict, where: str, depth: int) -> np.ndarray:
    shape = data["shape"]
    if type(shape) is not list or len(shape) > MAX_RANK or not all(_is_size(d) for d in shape):
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


def _decode_scalar(data: dict, where: str, depth: int) -> np.generic:
    np_dtype = _numeric_dtype(data["dtype"], where)
    raw = _b64decode(data["data"], where)
    if len(raw) != np_dtype.itemsize:
        raise ValueError(f"{where}: {len(raw)} bytes of data for a {np_dtype.name} scalar")
    return np.frombuffer(raw, np_dtype.newbyteorder("<")).astype(np_dtype)[0]


def _numeric_dtype(name, where: str) -> np.dtype:
    if not isinstance(name, str) or name not in _NUMERIC_DTYPES:
        raise ValueError(f"{where}: {name!r:.40} is not a numeric dtype name")
    return _NUMERIC_DTYPES[name]


def _is_size(value) -> bool:
    return type(value) is int and 0 <= value <= _MAX_DIM


def _b64decode(text, where: str) -> bytes:
    if not isinstance(text, str):
        raise ValueError(f"{where}: data must be a base64 string, got {type(text).__name__}")
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as error:
        raise ValueError(f"{where}: invalid base64 data ({error})") from None


_DECODERS = {
    "float": (("value",), _decode_float),
    "bytes": (("data",), lambda data, where, depth: _b64decode(data["data"], where)),
    "tuple": (("items",), _decode_tuple),
    "dtype": (("name",), _decode_dtype),
    "shape": (("dims",), _decode_shape),
    "tensor": (("dtype", "shape", "data"), _decode_tensor),
    "scalar": (("dtype", "data"), _decode_scalar),
}
