"""FileWriter writes the graph and traced runs as TF's GraphDef and RunMetadata, read back by TensorBoard's reader."""

import numpy as np
import pytest

import tfnb as tf
from tfnb.io.graph_proto import attr_value, shape_proto

accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator",
                                  reason="tensorboard (the optional `tensorboard` extra) is not installed")
attr_value_pb2 = pytest.importorskip("tensorboard.compat.proto.attr_value_pb2")
tensor_shape_pb2 = pytest.importorskip("tensorboard.compat.proto.tensor_shape_pb2")


def small_cnn():
    """A CNN as tf.layers builds it, with an Adam training step: about 200 ops."""
    images = tf.placeholder(tf.float32, [None, 8, 8, 1], name="images")
    labels = tf.placeholder(tf.int32, [None], name="labels")
    with tf.device("/cpu:0"):
        h = tf.layers.conv2d(images, 4, 3, padding="same", activation=tf.nn.relu)
    h = tf.layers.max_pooling2d(h, 2, 2)
    logits = tf.layers.dense(tf.layers.flatten(h), 10)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    train = tf.train.AdamOptimizer(0.01).minimize(loss)
    return images, labels, train


def read(logdir) -> accumulator.EventAccumulator:
    return accumulator.EventAccumulator(str(logdir)).Reload()


def test_tensorboard_reads_the_graph_with_devices_shapes_and_attrs(tmp_path):
    small_cnn()
    graph = tf.get_default_graph()
    with tf.Session() as sess, tf.summary.FileWriter(str(tmp_path), sess.graph):
        pass
    events = read(tmp_path)
    assert events.Tags()["graph"]
    nodes = {node.name: node for node in events.Graph().node}
    assert len(nodes) == len(graph.get_operations()) > 150
    conv = nodes["conv2d/Conv2D"]
    assert conv.op == "Conv2D" and conv.device == "/device:CPU:0"
    assert conv.input[0] == "images"
    assert conv.attr["padding"].s == b"SAME" and list(conv.attr["strides"].list.i) == [1, 1, 1, 1]
    assert [d.size for d in conv.attr["_output_shapes"].list.shape[0].dim] == [-1, 8, 8, 4]
    assert nodes["images"].attr["dtype"].type == 1                                    # DT_FLOAT
    assert any(name.startswith("^") for node in nodes.values() for name in node.input)  # control inputs


def test_add_graph_writes_a_graph_def_and_add_run_metadata_a_tagged_run(tmp_path):
    images, labels, train = small_cnn()
    metadata = tf.RunMetadata()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train, {images: np.ones((2, 8, 8, 1)), labels: [1, 2]},
                 options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=metadata)
        writer = tf.summary.FileWriter(str(tmp_path))
        writer.add_graph(sess.graph, global_step=3)
        writer.add_run_metadata(metadata, "step 3", global_step=3)
        writer.close()
    events = read(tmp_path)
    assert len(events.Graph().node) == len(tf.get_default_graph().get_operations())
    assert events.Tags()["run_metadata"] == ["step 3"]
    run = events.RunMetadata("step 3")
    (device,) = run.step_stats.dev_stats
    assert device.device == "/job:localhost/replica:0/task:0/device:CPU:0"
    stats = {s.node_name: s for s in device.node_stats}
    assert len(stats) == len(metadata.node_stats())
    conv = stats["conv2d/Conv2D"]
    assert conv.all_end_rel_micros >= 0 and conv.timeline_label.startswith("conv2d/Conv2D = Conv2D")
    (output,) = conv.output
    assert [d.size for d in output.tensor_description.shape.dim] == [2, 8, 8, 4]
    assert output.tensor_description.allocation_description.requested_bytes == 2 * 8 * 8 * 4 * 4
    assert conv.memory[0].total_bytes == 2 * 8 * 8 * 4 * 4
    assert {node.name for node in run.partition_graphs[0].node} == set(metadata.partition_graphs[device.device])


def test_a_json_graph_def_is_written_as_tensorflows(tmp_path):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    tf.nn.relu(tf.matmul(x, tf.constant(np.ones((3, 2), np.float32), name="w")), name="y")
    with tf.summary.FileWriter(str(tmp_path), graph_def=tf.get_default_graph().as_graph_def()):
        pass
    nodes = {node.name: node for node in read(tmp_path).Graph().node}
    assert set(nodes) == {"x", "w", "MatMul", "y"}
    value = nodes["w"].attr["value"].tensor
    assert value.dtype == 1 and [d.size for d in value.tensor_shape.dim] == [3, 2]
    assert np.frombuffer(value.tensor_content, "<f4").tolist() == [1.0] * 6


@pytest.mark.parametrize("value, field, expected", [
    (True, "b", True), (0, "i", 0), (-3, "i", -3), (0.5, "f", 0.5), ("SAME", "s", b"SAME"),
    (tf.int64, "type", 9), ([], "list", attr_value_pb2.AttrValue.ListValue()),
])
def test_attr_values_decode_as_tensorflows(value, field, expected):
    decoded = attr_value_pb2.AttrValue.FromString(attr_value("a", value))
    assert decoded.WhichOneof("value") == field and getattr(decoded, field) == expected


def test_shapes_keep_unknown_dims_and_ranks():
    assert [d.size for d in tensor_shape_pb2.TensorShapeProto.FromString(
        shape_proto(tf.TensorShape([None, 3]))).dim] == [-1, 3]
    assert tensor_shape_pb2.TensorShapeProto.FromString(shape_proto(tf.TensorShape(None))).unknown_rank
    assert not tensor_shape_pb2.TensorShapeProto.FromString(shape_proto(tf.TensorShape([]))).dim
