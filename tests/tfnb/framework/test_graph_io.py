"""The JSON graph format: export, exact attr round trips, import_graph_def, Session.extend, malformed input."""

import copy
import json
import math

import numpy as np
import pytest
from registry_cases import CASES, call_example, sample

import tfnb as tf
from tfnb.framework.graph_def import GraphDef
from tfnb.framework.importer import extend_graph
from tfnb.framework.op_registry import registered_ops
from tfnb.input.function_graph import Function

NUMERIC_VALUES = {
    tf.bool: [[True, False]],
    tf.int8: [-128, 127],
    tf.int16: [[-3], [30000]],
    tf.int32: [[1, -2, 3]],
    tf.int64: [2**62, -(2**62)],
    tf.uint8: [0, 255],
    tf.uint16: [65535],
    tf.float16: [1.5, np.nan, np.inf, -0.0, 6.1e-5],
    tf.float32: [[np.nan, -np.inf], [1e-38, 3.4e38]],
    tf.float64: [math.pi, np.nan, -0.0],
    tf.complex64: [1 + 2j, np.nan - 1j],
    tf.complex128: [[1e300 + 1e-300j]],
}


def build_model() -> tf.Graph:
    """A graph with many op types and attr kinds: consts of every dtype, placeholders, scopes."""
    graph = tf.Graph()
    with graph.as_default():
        for dtype, value in NUMERIC_VALUES.items():
            tf.constant(value, dtype=dtype, name=f"const_{dtype.name}")
        tf.constant(np.float32(2.5), name="scalar")
        tf.constant(np.zeros((0, 3), np.int32), name="empty")
        tf.constant([[b"ab", b""], [b"\x00\xff", "\u00e9".encode()]], name="strings")
        tf.constant(b"one", name="string_scalar")
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        tf.placeholder(tf.int32, None, name="anything")
        with tf.name_scope("layer"):
            with tf.device("/device:CPU:0"):
                y = tf.add(x, [1.0, 2.0, 3.0], name="y")
            with tf.colocate_with(y):
                z = tf.identity(y, name="z")
            w = tf.stop_gradient(z + 1.0)
        d = tf.placeholder_with_default(tf.constant([[1.0, 2.0, 3.0]]), [None, 3], name="d")
        with tf.control_dependencies([w, d]):
            tf.no_op(name="done")
        out = tf.add(w, d, name="out")
        first, _, third = tf.split(out, 3, axis=1, name="split")
        pieces = tf.unstack(tf.concat([first, third], 1), axis=1)
        product = tf.matmul(tf.reshape(tf.cast(pieces[1], tf.float64), [-1, 1]), [[2.0]], transpose_b=True)
        tf.identity(tf.squeeze(product, [1]), name="result")
    return graph


def json_types_only(value) -> bool:
    if isinstance(value, dict):
        return all(isinstance(k, str) and json_types_only(v) for k, v in value.items())
    if isinstance(value, list):
        return all(json_types_only(v) for v in value)
    return value is None or type(value) in (str, int, float, bool)


def assert_same_value(a, b):
    assert type(a) is type(b), (a, b)
    if isinstance(a, np.ndarray | np.generic):
        assert a.dtype == b.dtype and np.shape(a) == np.shape(b)
        if a.dtype == object:
            assert a.tolist() == b.tolist()
        else:
            assert np.asarray(a).tobytes() == np.asarray(b).tobytes()
    elif isinstance(a, list | tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert_same_value(x, y)
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b)
    else:
        assert a == b and repr(a) == repr(b)


def node_dict(graph_def: GraphDef, name: str) -> dict:
    data = copy.deepcopy(graph_def.to_dict())
    return next(node for node in data["node"] if node["name"] == name), data


def malformed(mutate, node: str | None = "y") -> dict:
    """The to_dict form of a small graph, with `mutate(node_or_graph_dict)` applied."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        tf.identity(x, name="y")
    data = copy.deepcopy(graph.as_graph_def().to_dict())
    target = next(n for n in data["node"] if n["name"] == node) if node else data
    mutate(target)
    return data


# -- export and round trip ------------------------------------------------------------------------


def test_export_is_plain_json_in_creation_order():
    graph = build_model()
    graph_def = graph.as_graph_def()
    assert [n.name for n in graph_def.node] == [op.name for op in graph.get_operations()]
    text = graph_def.to_json()
    data = json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in JSON"))
    assert json_types_only(data) and data["format"] == "tfnb.GraphDef" and data["version"] == 1
    assert b"\x80\x04" not in graph_def.SerializeToString() and "pickle" not in text
    assert text == json.dumps(data, sort_keys=True)


def test_node_def_format():
    graph = build_model()
    node = graph.get_operation_by_name("done").node_def
    assert node == {"name": "done", "op": "NoOp", "input": ["^layer/StopGradient", "^d"], "device": "", "attr": {}}
    assert node.op == "NoOp" and node.input == ["^layer/StopGradient", "^d"]
    with pytest.raises(AttributeError):
        node.missing
    y = graph.get_operation_by_name("layer/y")
    assert y.node_def.input == ["x", y.inputs[1].op.name] and y.node_def.device == "/device:CPU:0"
    assert graph.get_operation_by_name("layer/z").node_def.attr == {"_class": ["layer/y"]}
    assert graph.get_operation_by_name("x").node_def.attr["shape"] == {"type": "shape", "dims": [None, 3]}
    assert graph.get_operation_by_name("anything").node_def.attr["shape"] == {"type": "shape", "dims": None}
    assert graph.get_operation_by_name("concat").node_def.input[:2] == ["split", "split:2"]


def test_input_spelled_with_index_zero_exports_as_op_name():
    data = malformed(lambda n: n.update(input=["x:0"]))
    with tf.Graph().as_default() as target:
        tf.import_graph_def(data, name="")
        assert target.get_operation_by_name("y").node_def.input == ["x"]


def test_round_trip_is_exact():
    graph_def = build_model().as_graph_def()
    restored = GraphDef.FromString(graph_def.SerializeToString())
    assert restored == graph_def and restored is not graph_def
    with tf.Graph().as_default() as target:
        tf.import_graph_def(restored, name="")
    assert target.as_graph_def() == graph_def
    assert target.as_graph_def().to_json() == graph_def.to_json()


def test_round_trip_restores_every_attr_value():
    source = build_model()
    with tf.Graph().as_default() as target:
        tf.import_graph_def(GraphDef.from_json(source.as_graph_def().to_json()), name="")
    for op in source.get_operations():
        imported = target.get_operation_by_name(op.name)
        assert imported.attrs.keys() == op.attrs.keys()
        for key, value in op.attrs.items():
            assert_same_value(imported.attrs[key], value)
        assert [t.shape for t in imported.outputs] == [t.shape for t in op.outputs]
        assert [t.dtype for t in imported.outputs] == [t.dtype for t in op.outputs]
    value = target.get_operation_by_name("const_float16").attrs["value"]
    assert not value.flags.writeable


ATTRS = {
    "int": 7, "big": 2**63 - 1, "neg": -2**63, "float": 0.1, "negzero": -0.0, "nan": float("nan"),
    "inf": float("inf"), "-inf": float("-inf"), "bool": True, "false": False, "str": "h\u00e9",
    "bytes": b"\x00\xff", "none": None, "list": [1, 2.5, "a", None], "tuple": (1, (2, 3), [4]),
    "empty_tuple": (), "dtype": tf.complex128, "dtypes": [tf.float16, tf.string],
    "shape": tf.TensorShape([2, None]), "unknown_rank": tf.TensorShape(None), "scalar_shape": tf.TensorShape([]),
    "np_int": np.int64(-5), "np_float": np.float16(1.5), "np_bool": np.bool_(True), "np_complex": np.complex64(1j),
    "array0d": np.array(3, np.uint16), "bool_array": np.array([[True], [False]]),
    "string_array": np.array([[b"a"], [b""]], dtype=object), "string_0d": np.array(b"x", dtype=object),
    "big_endian": np.array([1.5, 2.5], dtype=">f8"), "strided": np.arange(12, dtype=np.int32).reshape(3, 4)[:, ::2],
}


@pytest.mark.parametrize("key", list(ATTRS))
def test_attr_kinds_round_trip(key):
    # An internal attr ('_' prefix), as NoOp declares no attrs of its own.
    graph = tf.Graph()
    with graph.as_default():
        graph.create_op("NoOp", (), {f"_{key}": ATTRS[key]}, name="holder")
    text = graph.as_graph_def().to_json()
    assert json_types_only(json.loads(text))
    with tf.Graph().as_default() as target:
        tf.import_graph_def(GraphDef.from_json(text), name="")
    restored = target.get_operation_by_name("holder").attrs[f"_{key}"]
    expected = ATTRS[key]
    if isinstance(expected, np.ndarray):
        expected = expected.astype(expected.dtype.newbyteorder("="))
    assert_same_value(restored, expected)
    assert target.as_graph_def().to_json() == text


@pytest.mark.parametrize("value", [lambda: 1, object(), np.array(["unicode"]), np.array([1, "a"], dtype=object),
                                   {"a": 1}, np.datetime64("2020-01-01"), 1 + 2j], ids=repr)
def test_unsupported_attr_values_are_named(value):
    graph = tf.Graph()
    with graph.as_default():
        graph.create_op("NoOp", (), {"weird": value}, name="holder")
    with pytest.raises(ValueError, match="Node 'holder': attr 'weird'"):
        graph.as_graph_def()


@pytest.mark.parametrize("op_type,index,example", CASES, ids=[f"{t}-{i}" for t, i, _ in CASES])
def test_every_example_graph_round_trips(op_type, index, example):
    """Every registered op's attrs survive export and import exactly, in every dtype it claims."""
    rng = np.random.default_rng(index)
    for dtype in example.dtypes or registered_ops()[op_type].dtypes:
        if dtype is tf.resource:
            continue
        values = [sample(spec, dtype, example.low, example.high, rng) for spec in example.inputs]
        source = tf.Graph()
        with source.as_default():
            call_example(example.build, [tf.placeholder(tf.as_dtype(v.dtype) if v.dtype != object else tf.string, v.shape)
                                  for v in values], dtype)
        if any(isinstance(value, Function) for op in source.get_operations() for value in op.attrs.values()):
            # tfnb differs: the graph format has no function library, so a dataset's map or filter says so.
            with pytest.raises(ValueError, match="a Function value cannot be written to a GraphDef"):
                source.as_graph_def()
            continue
        graph_def = source.as_graph_def()
        with tf.Graph().as_default() as target:
            tf.import_graph_def(GraphDef.from_json(graph_def.to_json()), name="")
        assert target.as_graph_def() == graph_def, f"{op_type} example {index} in {dtype.name}"
        for op in source.get_operations():
            imported = target.get_operation_by_name(op.name)
            assert [(t.dtype, t.shape) for t in imported.outputs] == [(t.dtype, t.shape) for t in op.outputs]


def test_graph_def_equality_and_parsing():
    graph_def = build_model().as_graph_def()
    other = GraphDef()
    assert other != graph_def and graph_def != graph_def.to_dict()
    assert other.ParseFromString(graph_def.SerializeToString()) == graph_def.ByteSize()
    assert other == graph_def
    other.node[0]["name"] = "renamed"
    assert other != graph_def
    assert GraphDef.from_dict(json.loads(graph_def.to_json())) == graph_def
    assert "nodes" in repr(graph_def)


# -- import_graph_def -----------------------------------------------------------------------------


def test_imported_graph_computes_the_same():
    source = build_model()
    feed = np.arange(6, dtype=np.float32).reshape(2, 3)
    with tf.Session(graph=source) as sess:
        expected = sess.run(["result:0", "out:0", "layer/z:0", "const_float16:0", "strings:0"], {"x:0": feed})
    with tf.Graph().as_default() as target:
        tf.import_graph_def(source.as_graph_def())
        with tf.Session() as sess:
            actual = sess.run(["import/result:0", "import/out:0", "import/layer/z:0", "import/const_float16:0",
                               "import/strings:0"], {"import/x:0": feed})
            sess.run(target.get_operation_by_name("import/done"), {"import/x:0": feed})
    for a, b in zip(actual, expected):
        np.testing.assert_array_equal(a, b)
        assert a.dtype == b.dtype


def test_name_scopes_and_uniquified_duplicates():
    graph_def = build_model().as_graph_def()
    with tf.Graph().as_default() as target:
        tf.import_graph_def(graph_def)
        tf.import_graph_def(graph_def)
        tf.import_graph_def(graph_def, name="mine")
        with tf.name_scope("outer"):
            tf.import_graph_def(graph_def)
        tf.import_graph_def(graph_def, name="")
        tf.import_graph_def(graph_def, name="")
        names = {op.name for op in target.get_operations()}
        assert {"import/layer/y", "import_1/layer/y", "mine/layer/y", "outer/import/layer/y", "layer/y",
                "layer/y_1"} <= names
        assert target.get_tensor_by_name("import_1/out:0").op.inputs[0].name == "import_1/layer/StopGradient:0"
        assert target.get_operation_by_name("layer/y_1").inputs[0].op.name == "x_1"
        assert target.get_operation_by_name("import/layer/z").attrs["_class"] == ["import/layer/y"]
        assert target.get_operation_by_name("layer/z_1").attrs["_class"] == ["layer/y_1"]
        assert tf.constant(0.0, name="x").op.name == "x_2"


def test_import_records_the_callers_line():
    with tf.Graph().as_default() as target:
        tf.import_graph_def(build_model().as_graph_def())
        op = target.get_operation_by_name("import/out")
    assert op.traceback[0] == __file__ and "tf.import_graph_def(build_model()" in op.creation_site


def test_input_map_replaces_inputs():
    graph_def = build_model().as_graph_def()
    with tf.Graph().as_default() as target:
        fed = tf.constant([[1.0, 1.0, 1.0]], name="fed")
        gate = tf.no_op(name="gate")
        out, y, x = tf.import_graph_def(graph_def, input_map={"x:0": fed, "^d": gate, "layer/StopGradient": fed},
                                        return_elements=["out:0", "layer/y:0", "x:0"])
        assert y.op.inputs[0] is fed and x is fed
        assert out.op.inputs[0] is fed
        done = target.get_operation_by_name("import/done")
        assert done.control_inputs == [target.get_operation_by_name("import/layer/StopGradient"), gate]
        assert target.get_operation_by_name("import/x").type == "Placeholder"
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(y), [[2.0, 3.0, 4.0]])
            np.testing.assert_array_equal(sess.run(out), [[2.0, 3.0, 4.0]])


def test_input_map_errors():
    graph_def = build_model().as_graph_def()
    with tf.Graph().as_default() as target:
        with pytest.raises(ValueError, match=r"not found in graph_def: \[nothere:0, \^x\]"):
            tf.import_graph_def(graph_def, input_map={"nothere": tf.constant(1.0), "^x": tf.no_op()})
        with pytest.raises(ValueError, match="Node 'y': input 'x:0' of dtype float32 is mapped to .* of dtype int32"):
            tf.import_graph_def(malformed(lambda n: None), input_map={"x:0": tf.constant([1, 2])})
        with pytest.raises(ValueError, match="is not a tensor name"):
            tf.import_graph_def(graph_def, input_map={"x:zero": tf.constant(1.0)})
        with pytest.raises(TypeError, match="input_map"):
            tf.import_graph_def(graph_def, input_map=[("x:0", 1)])
        count = len(target.get_operations())
        with pytest.raises(ValueError, match="Operation of this graph"):
            tf.import_graph_def(graph_def, input_map={"^d": "gate"})
        assert len(target.get_operations()) == count
    with tf.Graph().as_default():
        other_graph_tensor = tf.constant(1.0)
    with tf.Graph().as_default(), pytest.raises(ValueError, match="not in the graph"):
        tf.import_graph_def(graph_def, input_map={"x:0": other_graph_tensor})


def test_return_elements():
    graph_def = build_model().as_graph_def()
    with tf.Graph().as_default() as target:
        assert tf.import_graph_def(graph_def) is None
        out, done = tf.import_graph_def(graph_def, return_elements=["out:0", "done"], name="b")
        assert out is target.get_tensor_by_name("b/out:0") and done is target.get_operation_by_name("b/done")
        assert tf.import_graph_def(graph_def, return_elements=[], name="c") == []
        with pytest.raises(ValueError, match="'nope:0' not found in graph_def"):
            tf.import_graph_def(graph_def, return_elements=["nope:0"])
        with pytest.raises(ValueError, match="'out:3' not found in graph_def"):
            tf.import_graph_def(graph_def, return_elements=["out:3"], name="e")
        with pytest.raises(ValueError, match="is not a tensor name"):
            tf.import_graph_def(graph_def, return_elements=["out:x"])
        assert not any(op.name.startswith("e/") for op in target.get_operations())


def test_enclosing_scopes_apply_as_in_tf():
    graph_def = build_model().as_graph_def()
    with tf.Graph().as_default() as target:
        first = tf.no_op(name="first")
        anchor = tf.constant(0.0, name="anchor")
        with tf.control_dependencies([first]), tf.device("/job:worker/task:1"):
            tf.import_graph_def(graph_def)
        x = target.get_operation_by_name("import/x")
        y = target.get_operation_by_name("import/layer/y")
        assert x.control_inputs == [first] and y.control_inputs == []
        assert x.device == "/job:worker/task:1" and y.device == "/job:worker/task:1/device:CPU:0"
        assert "_class" not in x.attrs and target.get_operation_by_name("import/layer/z").attrs["_class"] == [
            "import/layer/y"]
        # Inside colocate_with, every imported op goes with the anchor, whatever its own device and colocation.
        with tf.device("/job:worker/task:1"), tf.colocate_with(anchor):
            tf.import_graph_def(graph_def, name="colocated")
        for name in ("colocated/x", "colocated/layer/y", "colocated/layer/z"):
            op = target.get_operation_by_name(name)
            assert op.device == "" and op.colocation_groups() == [b"loc:@anchor"], name


def test_nodes_in_any_order():
    source = build_model()
    data = source.as_graph_def().to_dict()
    data["node"].reverse()
    with tf.Graph().as_default() as target:
        tf.import_graph_def(GraphDef.from_dict(data), name="")
    original = {n.name: n for n in source.as_graph_def().node}
    imported = target.as_graph_def().node
    assert {n.name: n for n in imported} == original
    created = [n.name for n in imported]
    for node in imported:
        for ref in node.input:
            assert created.index(ref.lstrip("^").partition(":")[0]) < created.index(node.name)
    # Where the order is free, the GraphDef's order is kept.
    assert created.index("string_scalar") < created.index("strings") < created.index("const_bool")


def cyclic(*edges, control=()):
    """A GraphDef of Identity nodes: edges are (producer, consumer); `control` edges are control inputs."""
    names = sorted({n for edge in edges + tuple(control) for n in edge} - {"free"})
    nodes = []
    for name in names:
        inputs = [src for src, dst in edges if dst == name] + [f"^{src}" for src, dst in control if dst == name]
        nodes.append({"name": name, "op": "Identity", "input": inputs, "device": "", "attr": {}})
    nodes.append({"name": "free", "op": "Const", "input": [], "device": "", "attr": {
        "dtype": {"type": "dtype", "name": "float32"},
        "value": {"type": "tensor", "dtype": "float32", "shape": [], "data": "AAAAAA=="}}})
    return {"format": "tfnb.GraphDef", "version": 1, "node": nodes}


@pytest.mark.parametrize("edges, control, message", [
    ((("a", "b"), ("b", "a")), (), "a -> b -> a"),
    ((("a", "a"),), (), "a -> a"),
    ((("a", "b"), ("b", "c"), ("c", "a"), ("free", "d"), ("c", "d")), (), "a -> b -> c -> a"),
    ((("a", "b"),), (("b", "a"),), "a -> b -> a"),
])
def test_cycles_are_errors_that_list_them(edges, control, message):
    graph_def = cyclic(*edges, control=control)
    with tf.Graph().as_default() as target:
        with pytest.raises(ValueError, match=f"cycle: {message}$"):
            tf.import_graph_def(graph_def)
        assert target.get_operations() == []


def test_input_map_can_break_a_cycle():
    with tf.Graph().as_default() as target:
        start = tf.constant(4.0)
        (b,) = tf.import_graph_def(cyclic(("a", "b"), ("b", "a")), input_map={"b:0": start}, return_elements=["b:0"])
        assert target.get_operation_by_name("import/a").inputs[0] is start
        with tf.Session() as sess:
            assert sess.run(b) == 4.0


def test_failed_import_leaves_graph_unchanged():
    data = build_model().as_graph_def().to_dict()
    data["node"].append({"name": "bad", "op": "Add", "input": ["x", "const_int32"], "device": "", "attr": {}})
    with tf.Graph().as_default() as target:
        tf.constant(1.0, name="kept")
        version = target.version
        with pytest.raises(ValueError, match="Node 'bad' \\(op Add\\) cannot be imported: .*int32"):
            tf.import_graph_def(data)
        assert [op.name for op in target.get_operations()] == ["kept"]
        assert target.version > version
        tf.import_graph_def(build_model().as_graph_def())
        assert target.get_operation_by_name("import/out")


# -- malformed input ------------------------------------------------------------------------------


def test_not_json():
    with pytest.raises(ValueError, match="not valid JSON"):
        GraphDef.from_json("{nope")
    with pytest.raises(ValueError, match="not valid JSON"):
        GraphDef.FromString(b"\xff\xfe\x00")
    with pytest.raises(ValueError, match="NaN is not JSON"):
        GraphDef.from_json('{"format": NaN}')
    with pytest.raises(ValueError, match="must be a JSON object, got list"):
        GraphDef.from_json("[]")
    with pytest.raises(TypeError, match="must be a GraphDef"):
        tf.import_graph_def(build_model().as_graph_def().to_json())


@pytest.mark.parametrize("mutate, message", [
    (lambda g: g.pop("node"), "GraphDef: missing field 'node'"),
    (lambda g: g.pop("format"), "GraphDef: missing field 'format'"),
    (lambda g: g.update(extra=1), "GraphDef: unknown field 'extra'"),
    (lambda g: g.update(format="tf.GraphDef"), "field 'format' must be 'tfnb.GraphDef'"),
    (lambda g: g.update(version=2), "field 'version' must be 1"),
    (lambda g: g.update(version=True), "field 'version' must be 1"),
    (lambda g: g.update(node={}), "field 'node' must be a list, got dict"),
    (lambda g: g["node"].append(["x"]), "GraphDef node 2 must be a JSON object, got list"),
    (lambda g: g["node"].append(dict(g["node"][0])), "Node 'x' appears twice"),
], ids=lambda v: v if isinstance(v, str) else "")
def test_malformed_graph(mutate, message):
    data = malformed(mutate, node=None)
    with pytest.raises(ValueError, match=message):
        GraphDef.from_dict(data)
    with pytest.raises(ValueError, match=message):
        GraphDef.from_json(json.dumps(data))


@pytest.mark.parametrize("mutate, message", [
    (lambda n: n.pop("op"), "Node 'y': missing field 'op'"),
    (lambda n: n.pop("name"), "GraphDef node 1: missing field 'name'"),
    (lambda n: n.pop("attr"), "Node 'y': missing field 'attr'"),
    (lambda n: n.update(inputs=[]), "Node 'y': unknown field 'inputs'"),
    (lambda n: n.update(name=3), "GraphDef node 1: field 'name' must be a str, got int"),
    (lambda n: n.update(name="bad name"), "Node 'bad name': field 'name' is not a valid node name"),
    (lambda n: n.update(op=None), "Node 'y': field 'op' must be a str, got NoneType"),
    (lambda n: n.update(op=""), "Node 'y': field 'op' is empty"),
    (lambda n: n.update(input="x"), "Node 'y': field 'input' must be a list, got str"),
    (lambda n: n.update(input=[1]), "Node 'y': field 'input' holds 1"),
    (lambda n: n.update(input=["x:a"]), "Node 'y': field 'input': 'x:a' is not a tensor name"),
    (lambda n: n.update(input=["x:-1"]), "Node 'y': field 'input': 'x:-1' is not a tensor name"),
    (lambda n: n.update(input=["^x:0"]), "Node 'y': field 'input': '\\^x:0' is not a control input"),
    (lambda n: n.update(input=["^x", "x"]), "Node 'y': field 'input' has data input 'x' after a control input"),
    (lambda n: n.update(device=0), "Node 'y': field 'device' must be a str"),
    (lambda n: n.update(device="/gpu:zero:1"), "Node 'y': field 'device': Invalid device"),
    (lambda n: n.update(attr=[]), "Node 'y': field 'attr' must be a dict, got list"),
    (lambda n: n["attr"].update(k={"dims": [1]}), "Node 'y': attr 'k': unknown type tag None"),
    (lambda n: n["attr"].update(k={"type": "pickle", "data": ""}), "Node 'y': attr 'k': unknown type tag 'pickle'"),
    (lambda n: n["attr"].update(k={"type": ["shape"]}), "unknown type tag \\['shape'\\]"),
    (lambda n: n["attr"].update(k={"type": "shape"}), "Node 'y': attr 'k': missing field 'dims'"),
    (lambda n: n["attr"].update(k={"type": "shape", "dims": [-1]}), "attr 'k': shape dims must be null or"),
    (lambda n: n["attr"].update(k={"type": "shape", "dims": [True]}), "attr 'k': shape dims must be null or"),
    (lambda n: n["attr"].update(k={"type": "shape", "dims": None, "x": 1}), "attr 'k': unknown field 'x'"),
    (lambda n: n["attr"].update(k={"type": "dtype", "name": "float"}), "attr 'k': 'float' is not a dtype name"),
    (lambda n: n["attr"].update(k={"type": "float", "value": "1.0"}), "attr 'k': a tagged float must be"),
    (lambda n: n["attr"].update(k={"type": "bytes", "data": "a!=="}), "attr 'k': invalid base64"),
    (lambda n: n["attr"].update(k={"type": "bytes", "data": 5}), "attr 'k': data must be a base64 string"),
    (lambda n: n["attr"].update(k={"type": "tuple", "items": {}}), "attr 'k': field 'items' of a tuple"),
    (lambda n: n["attr"].update(k=[{"type": "tuple"}]), "attr 'k': missing field 'items'"),
    (lambda n: n["attr"].update(k={"type": "tensor", "dtype": "float32", "shape": [2], "data": "AAAAAA=="}),
     "attr 'k': 4 bytes of data for a float32 tensor of shape \\[2\\]"),
    (lambda n: n["attr"].update(k={"type": "tensor", "dtype": "object", "shape": [], "data": ""}),
     "attr 'k': 'object' is not a numeric dtype name"),
    (lambda n: n["attr"].update(k={"type": "tensor", "dtype": "f4", "shape": [], "data": "AAAAAA=="}),
     "attr 'k': 'f4' is not a numeric dtype name"),
    (lambda n: n["attr"].update(k={"type": "tensor", "dtype": "int8", "shape": 2, "data": "AA=="}),
     "attr 'k': tensor shape must be a list of sizes"),
    (lambda n: n["attr"].update(k={"type": "tensor", "dtype": "string", "shape": [2], "data": ["AA=="]}),
     "attr 'k': a string tensor of shape \\[2\\] needs a list of 2 base64 strings"),
    (lambda n: n["attr"].update(k={"type": "scalar", "dtype": "int16", "data": "AA=="}),
     "attr 'k': 1 bytes of data for a int16 scalar"),
    (lambda n: n["attr"].update(_class="x"), "attr '_class' must be a list of node names"),
], ids=lambda v: v if isinstance(v, str) else "")
def test_malformed_node(mutate, message):
    data = malformed(mutate)
    with pytest.raises(ValueError, match=message):
        GraphDef.from_dict(data)
    with tf.Graph().as_default() as target:
        with pytest.raises(ValueError, match=message):
            tf.import_graph_def(GraphDef(data["node"]))
        assert target.get_operations() == []


@pytest.mark.parametrize("mutate, message", [
    (lambda n: n.update(input=["nothere"]), "Node 'y': input 'nothere:0' names node 'nothere', which does not"),
    (lambda n: n.update(input=["x", "^ghost"]), "Node 'y': input '\\^ghost' names node 'ghost'"),
    (lambda n: n["attr"].update(_class=["ghost"]), "Node 'y': attr '_class' names node 'ghost'"),
    (lambda n: n.update(input=["x:1"]), "Node 'y': input 'x:1' names output 1 of 'x', which has 1 output"),
    (lambda n: n.update(input=[]), "Node 'y' \\(op Identity\\) cannot be imported"),
    (lambda n: n.update(op="Placeholder", input=[]),
     "Node 'y' \\(op Placeholder\\): NodeDef missing attrs 'dtype', 'shape' from Op<name=Placeholder"),
    (lambda n: n.update(op="Const", input=[], attr={"dtype": {"type": "dtype", "name": "int8"}, "value": [1]}),
     "Node 'y' \\(op Const\\): attr 'value' must be of type tensor, got list"),
    (lambda n: n["attr"].update(k=1), "Node 'y' \\(op Identity\\): NodeDef mentions attr 'k' not in Op<name=Identity"),
], ids=lambda v: v if isinstance(v, str) else "")
def test_import_errors_name_the_node(mutate, message):
    graph_def = GraphDef.from_dict(malformed(mutate))
    with tf.Graph().as_default() as target:
        with pytest.raises(ValueError, match=message):
            tf.import_graph_def(graph_def)
        assert target.get_operations() == []


def test_an_unknown_op_type_is_not_found_as_in_tf():
    graph_def = GraphDef.from_dict(malformed(lambda n: n.update(op="Frobnicate")))
    with tf.Graph().as_default() as target:
        with pytest.raises(tf.errors.NotFoundError, match="Op type not registered 'Frobnicate'"):
            tf.import_graph_def(graph_def)
        assert target.get_operations() == []


# -- extend ---------------------------------------------------------------------------------------


def test_extend_adds_new_nodes_with_exact_names():
    full = build_model()
    nodes = full.as_graph_def().node
    first = GraphDef(nodes[: len(nodes) // 2])
    with tf.Graph().as_default() as target:
        tf.import_graph_def(first, name="")
        with tf.name_scope("somewhere"), tf.device("/job:ps"), tf.control_dependencies([tf.no_op(name="other")]):
            added = extend_graph(target, full.as_graph_def())
        assert [op.name for op in added] == [n.name for n in nodes[len(nodes) // 2:]]
        assert [n for n in target.as_graph_def().node if n.name != "somewhere/other"] == nodes
        assert extend_graph(target, full.as_graph_def()) == []
        assert tf.constant(0.0, name="out").op.name == "out_1"


def test_session_extend_then_run():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        base = graph.as_graph_def()
        y = tf.add(x, 2.0, name="y")
        grown = graph.as_graph_def()
    with tf.Session(graph=tf.Graph()) as sess:
        sess.extend(base)
        assert [op.name for op in sess.graph.get_operations()] == ["x"]
        sess.extend(grown)
        assert sess.run("y:0", {"x:0": 1.0}) == 3.0
        assert sess.graph.as_graph_def() == grown
    assert y.name == "y:0"


def test_extend_inputs_may_name_existing_nodes():
    with tf.Graph().as_default() as target:
        tf.constant(2.0, name="two")
        delta = {"format": "tfnb.GraphDef", "version": 1, "node": [
            {"name": "double", "op": "Add", "input": ["two", "two:0"], "device": "", "attr": {}}]}
        (double,) = extend_graph(target, delta)
        with tf.Session() as sess:
            assert sess.run(double.outputs[0]) == 4.0


@pytest.mark.parametrize("mutate, field", [
    (lambda n: n.update(op="StopGradient"), "op"),
    (lambda n: n.update(input=["z"]), "input"),
    (lambda n: n.update(input=["x", "^z"]), "control input"),
    (lambda n: n.update(device="/cpu:0"), "device"),
    (lambda n: n["attr"].update(_k=1), "attr"),
])
def test_extend_rejects_conflicting_nodes(mutate, field):
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        tf.identity(x, name="y")
        tf.identity(x, name="z")
    data = copy.deepcopy(graph.as_graph_def().to_dict())
    data["node"].append({"name": "new", "op": "NoOp", "input": [], "device": "", "attr": {}})
    mutate(data["node"][1])
    count = len(graph.get_operations())
    with pytest.raises(ValueError, match=f"Node 'y' is already in the graph with a different {field}:"):
        extend_graph(graph, data)
    assert len(graph.get_operations()) == count


def test_extend_unchanged_after_failure():
    graph = tf.Graph()
    with graph.as_default():
        tf.constant(1.0, name="a")
    delta = {"format": "tfnb.GraphDef", "version": 1, "node": [
        {"name": "b", "op": "Identity", "input": ["a"], "device": "", "attr": {}},
        {"name": "c", "op": "Identity", "input": ["a:4"], "device": "", "attr": {}}]}
    with pytest.raises(ValueError, match="Node 'c': input 'a:4' names output 4 of 'a'"):
        extend_graph(graph, delta)
    assert [op.name for op in graph.get_operations()] == ["a"]
    with graph.as_default():
        assert tf.constant(1.0, name="b").op.name == "b"


def test_round_trip_of_variables_random_and_nn_ops():
    source = tf.Graph()
    with source.as_default():
        v = tf.Variable(np.array([1.0, -2.0], np.float32), name="v")
        noise = tf.random_uniform([2], seed=3, name="noise")
        out = tf.nn.relu(v + noise, name="out")
        init = tf.global_variables_initializer()
    with tf.Session(graph=source) as sess:
        sess.run(init)
        expected = sess.run(out)
    graph_def = source.as_graph_def()
    with tf.Graph().as_default() as target:
        tf.import_graph_def(GraphDef.from_json(graph_def.to_json()), name="")
        assert target.as_graph_def() == graph_def
        with tf.Session() as sess:
            sess.run(init.name)
            np.testing.assert_array_equal(sess.run(out.name), expected)


# -- loops ----------------------------------------------------------------------------------------


def build_loops():
    """A graph with a loop whose shape grows (shape_invariants), a two-variable loop and a cond after them."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.constant([1.0], name="x")
        tf.while_loop(lambda x: tf.size(x) < 4, lambda x: tf.concat([x, x * 2.0], 0), [x],
                      shape_invariants=[tf.TensorShape([None])], name="grow")
        count, total = tf.while_loop(lambda i, t: i < 10, lambda i, t: (i + 1, t + tf.cast(i, tf.float32)),
                                     [tf.constant(0), tf.constant(0.0)], name="sum")
        tf.identity(count, name="count")
        tf.cond(total > 3.0, lambda: total * 2, lambda: total, name="doubled")
    return graph


LOOP_FETCHES = ["grow/Exit:0", "count:0", "sum/Exit_1:0", "doubled/Merge:0"]


def run_plain_and_traced(graph: tf.Graph) -> list:
    with tf.Session(graph=graph) as sess:
        traced = sess.run(LOOP_FETCHES, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                          run_metadata=tf.RunMetadata())
        return [sess.run(LOOP_FETCHES), traced]


def test_loop_graphs_round_trip_through_json_and_run_the_same():
    source = build_loops()
    expected = run_plain_and_traced(source)[0]
    with tf.Graph().as_default() as target:
        tf.import_graph_def(json.loads(json.dumps(source.as_graph_def().to_dict())), name="")
    for got in run_plain_and_traced(target):
        for a, b in zip(got, expected):
            np.testing.assert_array_equal(a, b)
    merge = target.get_operation_by_name("grow/Merge")
    assert merge.inputs[1].op.name == "grow/NextIteration"
    # Static shapes hold on every iteration: the growing loop variable's length is unknown, as in the source.
    assert target.get_tensor_by_name("grow/Exit:0").shape.as_list() == [None]
    assert target.get_tensor_by_name("sum/Exit_1:0").shape.as_list() == []


def test_extend_adds_a_loop():
    source = build_loops()
    with tf.Session(graph=tf.Graph()) as sess:
        sess.extend(source.as_graph_def())
        for a, b in zip(sess.run(LOOP_FETCHES), run_plain_and_traced(source)[0]):
            np.testing.assert_array_equal(a, b)
