"""Graph documents are validated before anything is built: names, op types, attrs, nesting; TF's error classes."""

import json

import pytest
from registry_cases import CASES, call_example, example_values

import tfnb as tf
from tfnb.framework.graph_def import DecodeError, GraphDef
from tfnb.framework.op_registry import registered_ops


def _loop_document() -> dict:
    with tf.Graph().as_default() as graph:
        tf.while_loop(lambda i: i < 3, lambda i: i + 1, [tf.constant(0)], name="loop")
    return graph.as_graph_def().to_dict()


def _import(document: dict):
    with tf.Graph().as_default() as graph:
        try:
            tf.import_graph_def(GraphDef.from_dict(document), name="")
        finally:
            assert graph.get_operations() == [] or document is None


def test_a_name_ending_in_a_newline_is_refused_at_import_and_when_building():
    document = _loop_document()
    document["node"][0]["name"] += "\n"
    with pytest.raises(ValueError, match="is not a valid node name"):
        GraphDef.from_dict(document)
    with pytest.raises(ValueError, match="is not a valid node name"):
        tf.constant(1.0, name="c\n")


def test_an_enter_without_its_frame_name_is_refused_before_anything_runs():
    document = _loop_document()
    enter = next(node for node in document["node"] if node["op"] == "Enter")
    del enter["attr"]["frame_name"]
    with pytest.raises(ValueError, match="NodeDef missing attr 'frame_name' from Op<name=Enter"):
        _import(document)
    enter["attr"]["frame_name"] = 3
    with pytest.raises(ValueError, match="attr 'frame_name' must be of type string, got int"):
        _import(document)


def test_a_count_attr_past_its_bound_is_refused():
    with tf.Graph().as_default() as graph:
        tf.split(tf.zeros([4]), 2, name="split")
    document = graph.as_graph_def().to_dict()
    next(node for node in document["node"] if node["op"] == "Split")["attr"]["num_split"] = 10**9
    with pytest.raises(ValueError, match="attr 'num_split' must be of type count"):
        _import(document)


@pytest.mark.parametrize("text", ["[" * 900 + "]" * 900, "[" * 100_000 + "]" * 100_000, "\xff garbage }{", "",
                                  '{"format": "tfnb.GraphDef", "version": 1, "node": [{"name": "a"}]}'])
def test_text_that_is_not_a_graph_def_is_a_decode_error(text):
    with pytest.raises(DecodeError):
        GraphDef.from_json(text)
    with pytest.raises(DecodeError):
        GraphDef().ParseFromString(text.encode("utf-8", "surrogateescape"))


def test_deeply_nested_attr_values_are_a_decode_error_not_a_recursion_error():
    document = _loop_document()
    value = 1
    for _ in range(900):
        value = [value]
    document["node"][0]["attr"]["_deep"] = value
    with pytest.raises(DecodeError, match="nested more than"):
        GraphDef.from_json(json.dumps(document))


def test_an_unknown_op_type_is_a_not_found_error_and_leaves_the_graph_as_it_was():
    document = _loop_document()
    document["node"][-1]["op"] = "NoSuchOp"
    with pytest.raises(tf.errors.NotFoundError, match="Op type not registered 'NoSuchOp'"):
        _import(document)
    with tf.Graph().as_default() as graph:
        tf.constant(1.0, name="kept")
        with pytest.raises(tf.errors.NotFoundError):
            tf.import_graph_def(GraphDef.from_dict(document))
        assert [op.name for op in graph.get_operations()] == ["kept"]


def test_import_meta_graph_of_garbage_is_a_decode_error(tmp_path):
    (tmp_path / "bad.meta.json").write_bytes(b"\x00\x01 not json")
    with pytest.raises(DecodeError):
        tf.train.import_meta_graph(str(tmp_path / "bad.meta.json"))


@pytest.mark.parametrize("op_type,index,example", CASES, ids=[f"{t}-{i}" for t, i, _ in CASES])
def test_every_example_op_carries_exactly_the_attrs_its_op_type_declares(op_type, index, example):
    """The registry's attr declarations are complete: an op built by its constructor passes the import's check."""
    from tfnb.framework.op_registry import attr_problems
    for dtype, values in example_values(op_type, index, example):
        with tf.Graph().as_default() as graph:
            call_example(example.build, [tf.placeholder(tf.as_dtype(v.dtype) if v.dtype != object else tf.string, v.shape)
                                  for v in values], dtype)
        for op in graph.get_operations():
            assert attr_problems(registered_ops()[op.type], op.attrs) == [], op.name
        break
