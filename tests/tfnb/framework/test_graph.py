"""Graph building: names and scopes, devices, control dependencies, collections, lookups."""

import numpy as np
import pytest

import tfnb as tf


def test_names_are_uniquified_as_tf_does():
    a = tf.constant(1.0, name="c")
    b = tf.constant(1.0, name="c")
    c = tf.constant(1.0, name="c")
    assert [a.op.name, b.op.name, c.op.name] == ["c", "c_1", "c_2"]
    assert a.name == "c:0"


def test_nested_name_scopes():
    with tf.name_scope("outer"):
        with tf.name_scope("inner"):
            first = tf.constant(1, name="c")
        with tf.name_scope("inner") as scope:
            second = tf.constant(1, name="c")
            assert scope == "outer/inner_1/"
    assert first.op.name == "outer/inner/c"
    assert second.op.name == "outer/inner_1/c"


def test_name_scope_reset_and_absolute():
    with tf.name_scope("outer"):
        with tf.name_scope(None):
            top = tf.constant(1, name="top")
        with tf.name_scope("abs/"):
            absolute = tf.constant(1, name="x")
    assert top.op.name == "top"
    assert absolute.op.name == "abs/x"


def test_default_op_name_is_its_type():
    x = tf.constant(1.0)
    y = x + x
    z = x + y
    w = tf.add(x, z)
    assert (x.op.name, y.op.name, z.op.name, w.op.name) == ("Const", "add", "add_1", "Add_2")  # TF matches names case-insensitively


def test_tensor_lookup_and_close_match_suggestion():
    graph = tf.get_default_graph()
    loss = tf.constant(1.0, name="loss")
    assert graph.get_tensor_by_name("loss:0") is loss
    assert graph.get_operation_by_name("loss") is loss.op
    with pytest.raises(KeyError, match="Did you mean 'loss'"):
        graph.get_tensor_by_name("los:0")
    with pytest.raises(KeyError):
        graph.get_operation_by_name("lossy")
    with pytest.raises(ValueError):
        graph.get_tensor_by_name("loss")


def test_device_scopes_merge_partial_specs():
    with tf.device("/job:worker/task:1"):
        with tf.device("/device:GPU:0"):
            inner = tf.constant(1.0)
        outer = tf.constant(1.0)
    with tf.device("/cpu:0"):
        legacy = tf.constant(1.0)
    assert inner.op.device == "/job:worker/task:1/device:GPU:0"
    assert outer.op.device == "/job:worker/task:1"
    assert legacy.device == "/device:CPU:0"


def test_device_spec_parse_and_merge():
    spec = tf.DeviceSpec.from_string("/job:ps/replica:0/task:2/device:CPU:*")
    assert (spec.job, spec.task, spec.device_type, spec.device_index) == ("ps", 2, "CPU", None)
    merged = spec.merge_from(tf.DeviceSpec.from_string("/device:GPU:1"))
    assert merged.to_string() == "/job:ps/replica:0/task:2/device:GPU:1"
    with pytest.raises(ValueError):
        tf.DeviceSpec.from_string("/nonsense:x:y:z")


def test_control_dependencies_are_recorded_and_cleared():
    a = tf.constant(1.0, name="a")
    b = tf.constant(2.0, name="b")
    with tf.control_dependencies([a]):
        c = tf.identity(b)
        with tf.control_dependencies([b.op]):
            d = tf.identity(b)
        with tf.control_dependencies(None):
            e = tf.identity(b)
    assert c.op.control_inputs == [a.op]
    assert d.op.control_inputs == [a.op]  # b is already a data input of d
    assert e.op.control_inputs == []


def test_collections():
    x = tf.constant(1.0, name="layer1/x")
    y = tf.constant(2.0, name="layer2/y")
    tf.add_to_collection("stuff", x)
    tf.add_to_collections(["stuff", "other"], y)
    assert tf.get_collection("stuff") == [x, y]
    assert tf.get_collection("stuff", scope="layer2") == [y]
    assert tf.get_default_graph().get_all_collection_keys() == ["stuff", "other"]
    tf.get_collection_ref("other").clear()
    assert tf.get_collection("other") == []


def test_version_grows_and_finalize_blocks_new_ops():
    graph = tf.Graph()
    with graph.as_default():
        v0 = graph.version
        tf.constant(1.0)
        assert graph.version > v0
        graph.finalize()
        with pytest.raises(RuntimeError, match="finalized"):
            tf.constant(2.0)


def test_default_graph_stack_and_reset():
    outer = tf.get_default_graph()
    g = tf.Graph()
    with g.as_default():
        assert tf.get_default_graph() is g
        with pytest.raises(AssertionError):
            tf.reset_default_graph()
    assert tf.get_default_graph() is outer
    tf.reset_default_graph()
    assert tf.get_default_graph() is not outer


def test_tensors_from_other_graphs_are_rejected():
    g = tf.Graph()
    with g.as_default():
        other = tf.constant(1.0)
    with pytest.raises(ValueError, match="same graph"):
        tf.constant(1.0) + other


def test_static_shapes_and_set_shape():
    x = tf.placeholder(tf.float32, [None, 3])
    assert x.get_shape().as_list() == [None, 3]
    assert x.shape[1].value == 3 and x.shape[0].value is None
    x.set_shape([5, None])
    assert x.shape.as_list() == [5, 3]
    with pytest.raises(ValueError):
        x.set_shape([4, 3])
    unknown = tf.placeholder(tf.float32)
    assert unknown.shape.ndims is None
    y = x + tf.placeholder(tf.float32, [None, 1, 1, 3])
    assert y.shape.as_list() == [None, 1, 5, 3]


def test_broadcast_shape_error_names_op_and_line():
    a = tf.placeholder(tf.float32, [2, 3])
    b = tf.placeholder(tf.float32, [4])
    with pytest.raises(ValueError, match=r"Dimensions must be equal, but are 3 and 4 for '\{\{node add\}\} = Add\(Placeholder, Placeholder_1\)' "
                       r"with input shapes: \[2,3\], \[4\]") as info:
        _ = a + b
    assert "test_graph.py" in str(info.value)


def test_mixing_dtypes_names_both():
    a = tf.placeholder(tf.float32, [2])
    b = tf.placeholder(tf.int32, [2])
    with pytest.raises(TypeError, match="int32.*float32|float32.*int32"):
        tf.add(a, b)


def test_tensor_is_not_a_python_bool_and_hashes_by_identity():
    x = tf.constant(1.0)
    with pytest.raises(TypeError):
        bool(x)
    assert {x: 1}[x] == 1
    assert x == x and not (x == tf.constant(1.0))


def test_creation_site_points_at_user_code():
    x = tf.constant(np.ones(2))
    filename, line, function = x.op.traceback
    assert filename.endswith("test_graph.py") and function == "test_creation_site_points_at_user_code"
    assert "x = tf.constant(np.ones(2))" in x.op.creation_site


def test_colocate_with_sets_class_attr():
    a = tf.constant(1.0, name="anchor")
    with tf.colocate_with(a):
        b = tf.identity(a)
    assert b.op.attrs["_class"] == ["anchor"]
    assert b.op.colocation_groups() == [b"loc:@anchor"]
