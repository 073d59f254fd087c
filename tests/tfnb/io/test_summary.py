"""tf.summary ops (names, tags, collections, errors) and event files read back by TensorBoard's own reader."""

import glob
import os
import re

import numpy as np
import pytest

import tfnb as tf
from tfnb.framework.summary_proto import Histogram, parse_summary
from tfnb.io.event_file import crc32c, tfrecord


def run(fetch, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetch, feed_dict)


def test_names_and_tags_follow_tf1():
    x = tf.constant(0.5)
    loss = tf.summary.scalar("loss", x)
    again = tf.summary.scalar("loss", x)
    family = tf.summary.scalar("acc", x, family="train")
    with tf.name_scope("layer"):
        weights = tf.summary.histogram("w:0 values", tf.constant([1.0, 2.0]))
    assert [s.op.name for s in (loss, again, family, weights)] == ["loss", "loss_1", "train/acc", "layer/w_0_values"]
    tags = [v.tag for s in run([loss, again, family, weights]) for v in parse_summary(s)]
    assert tags == ["loss", "loss_1", "train/train/acc", "layer/w_0_values"]


def test_collections_and_merge_all():
    assert tf.summary.merge_all() is None
    a = tf.summary.scalar("a", tf.constant(1.0))
    tf.summary.scalar("hidden", tf.constant(2.0), collections=[])
    b = tf.summary.histogram("b", tf.constant([3.0]), collections=["extra", tf.GraphKeys.SUMMARIES])
    assert tf.get_collection(tf.GraphKeys.SUMMARIES) == [a, b]
    assert tf.get_collection("extra") == [b]
    merged = tf.summary.merge_all()
    assert merged.op.type == "MergeSummary" and merged.op.name == "Merge/MergeSummary"
    values = parse_summary(run(merged))
    assert [(v.tag, v.kind) for v in values] == [("a", "scalar"), ("b", "histogram")]
    assert values[0].value == 1.0 and values[1].value.num == 1 and values[1].value.sum == 3.0


def test_scalar_summary_of_every_real_dtype_is_a_float32():
    for dtype in (tf.int32, tf.int64, tf.float16, tf.float64, tf.uint8):
        value = parse_summary(run(tf.summary.scalar("v", tf.constant(3, dtype))))[0]
        assert (value.kind, value.value) == ("scalar", 3.0)
    assert parse_summary(run(tf.summary.scalar("third", tf.constant(1 / 3, tf.float64))))[0].value == np.float32(1 / 3)


def test_scalar_summary_needs_a_scalar():
    with pytest.raises(ValueError, match="tags and values not the same shape"):
        tf.summary.scalar("v", tf.constant([1.0, 2.0]))
    x = tf.placeholder(tf.float32, None)
    summary = tf.summary.scalar("v", x)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"not the same shape: \[\] != \[2\]"):
        run(summary, {x: [1.0, 2.0]})


def test_histogram_rejects_non_finite_values_naming_the_op():
    x = tf.placeholder(tf.float32, [None])
    summary = tf.summary.histogram("activations", x)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Nan in summary histogram for: activations") as error:
        run(summary, {x: [1.0, np.nan]})
    assert error.value.op is summary.op


def test_merge_rejects_duplicate_tags_and_garbage():
    a = tf.summary.scalar("a", tf.constant(1.0))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Duplicate tag a found in summary inputs"):
        run(tf.summary.merge([a, a]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Could not parse one of the summary inputs"):
        run(tf.summary.merge([a, tf.constant(b"\x0a\x05ab")]))


def test_histogram_statistics_and_collapsed_buckets():
    values = np.array([-2.0, 0.0, 0.0, 1e-3, 5.0])
    histogram = Histogram.of(values)
    assert (histogram.min, histogram.max, histogram.num) == (-2.0, 5.0, 5.0)
    assert histogram.sum == pytest.approx(3.001) and histogram.sum_squares == pytest.approx(29.000001)
    full = histogram.bucket > 0
    assert histogram.bucket[full].tolist() == [1.0, 2.0, 1.0, 1.0]
    assert not np.any(~full[:-1] & ~full[1:]), "runs of empty buckets collapse into one"
    assert histogram.bucket_limit[full][1] == 1e-12
    assert Histogram.decode(histogram.encode()).bucket_limit.tolist() == histogram.bucket_limit.tolist()


def test_histogram_percentiles_interpolate_within_buckets():
    histogram = Histogram.of(np.linspace(0.0, 10.0, 10001))
    low, median, high = histogram.percentiles(np.array([0.0, 0.5, 1.0]))
    assert (low, high) == (0.0, 10.0)
    assert median == pytest.approx(5.0, rel=0.05)
    assert np.isnan(Histogram.of(np.zeros(0)).percentiles(np.array([0.5]))).all()


def test_crc32c_and_tfrecord_framing():
    assert crc32c(b"123456789") == 0xE3069283  # the CRC-32C check value
    assert crc32c(b"") == 0
    record = tfrecord(b"abc")
    assert len(record) == 8 + 4 + 3 + 4 and record[:8] == (3).to_bytes(8, "little") and record[12:15] == b"abc"


def test_parse_summary_rejects_what_is_not_a_summary():
    with pytest.raises(ValueError):
        parse_summary(b"\x10\x01")
    with pytest.raises(ValueError, match="truncated"):
        parse_summary(b"\x0a\x05ab")


def write_training_run(logdir):
    """Five steps of a loss and a histogram, with the graph, through a FileWriter; returns the writer."""
    x = tf.placeholder(tf.float32, [None], name="inputs")
    tf.summary.scalar("loss", tf.reduce_mean(x))
    tf.summary.histogram("x", x)
    merged = tf.summary.merge_all()
    with tf.Session() as sess, tf.summary.FileWriter(logdir, sess.graph) as writer:
        for step in range(5):
            writer.add_summary(sess.run(merged, {x: np.arange(4.0) * step}), global_step=step * 10)
    return writer


def test_event_file_name_and_first_event(tmp_path):
    writer = write_training_run(str(tmp_path / "run"))
    assert re.fullmatch(r"events\.out\.tfevents\.\d{10}\.[^/]+", os.path.basename(writer.path))
    loader = pytest.importorskip("tensorboard.backend.event_processing.event_file_loader",
                                 reason="tensorboard (the optional `tensorboard` extra) is not installed")
    graph_pb2 = pytest.importorskip("tensorboard.compat.proto.graph_pb2")
    events = list(loader.EventFileLoader(writer.path).Load())
    assert events[0].file_version == "brain.Event:2"
    assert events[1].step == 0 and {"inputs", "loss", "x"} <= {
        n.name for n in graph_pb2.GraphDef.FromString(events[1].graph_def).node}
    # TensorBoard's loader follows a graph with a summary of its own, '__run_graph__', as it does for TF's files
    summaries = [e for e in events[2:] if e.summary.value[0].tag != "__run_graph__"]
    assert [e.step for e in summaries] == [0, 10, 20, 30, 40]


def test_tensorboard_reads_scalars_and_histograms(tmp_path):
    accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator",
                                      reason="tensorboard (the optional `tensorboard` extra) is not installed")
    write_training_run(str(tmp_path))
    events = accumulator.EventAccumulator(str(tmp_path), size_guidance={"histograms": 0, "scalars": 0}).Reload()
    assert set(events.Tags()["scalars"]) == {"loss"} and set(events.Tags()["histograms"]) == {"x"}
    assert [(s.step, s.value) for s in events.Scalars("loss")] == [(10 * i, 1.5 * i) for i in range(5)]
    last = events.Histograms("x")[-1]
    assert last.step == 40
    stats = last.histogram_value
    assert (stats.min, stats.max, stats.num, stats.sum, stats.sum_squares) == (0.0, 12.0, 4.0, 24.0, 224.0)
    assert sum(stats.bucket) == 4 and stats.bucket_limit[-1] == np.finfo(np.float64).max


def test_file_writer_lifecycle(tmp_path):
    writer = tf.summary.FileWriter(str(tmp_path / "new" / "dir"), filename_suffix=".v2")
    first = writer.path
    assert writer.get_logdir() == str(tmp_path / "new" / "dir") and first.endswith(".v2")
    writer.add_summary(run(tf.summary.scalar("a", tf.constant(1.0))), 1)
    writer.close()
    with pytest.raises(RuntimeError, match="closed"):
        writer.add_summary(b"", 2)
    writer.reopen()
    assert writer.path != first
    writer.close()
    assert len(glob.glob(str(tmp_path / "new" / "dir" / "events.out.tfevents.*"))) == 2


def test_file_writer_flushes_after_max_queue_events(tmp_path):
    writer = tf.summary.FileWriter(str(tmp_path), max_queue=2)
    size = os.path.getsize(writer.path)
    summary = run(tf.summary.scalar("a", tf.constant(1.0)))
    writer.add_summary(summary, 1)
    assert os.path.getsize(writer.path) == size
    writer.add_summary(summary, 2)
    assert os.path.getsize(writer.path) > size
    writer.close()


def test_file_writer_cache_shares_one_writer_per_logdir(tmp_path):
    try:
        writer = tf.summary.FileWriterCache.get(str(tmp_path))
        assert tf.summary.FileWriterCache.get(str(tmp_path)) is writer
    finally:
        tf.summary.FileWriterCache.clear()
    assert tf.summary.FileWriterCache.get(str(tmp_path)) is not writer
    tf.summary.FileWriterCache.clear()


@pytest.mark.filterwarnings("ignore:Cannot activate TF2 compatibility")
def test_histograms_match_tensorflow():
    tensorflow = pytest.importorskip("tensorflow", reason="TensorFlow (the `bench` extra) is not installed")
    rng = np.random.default_rng(0)
    for values in (rng.normal(size=300), rng.uniform(-1e6, 1e6, size=50), np.array([0.0, 1e-20, -1e25])):
        expected = parse_summary(tensorflow.compat.v1.summary.histogram("h", values).numpy())[0].value
        actual = parse_summary(run(tf.summary.histogram("h", values)))[0].value
        assert (actual.min, actual.max, actual.num) == (expected.min, expected.max, expected.num)
        assert actual.sum == pytest.approx(expected.sum) and actual.sum_squares == pytest.approx(expected.sum_squares)
        np.testing.assert_array_equal(actual.bucket_limit, expected.bucket_limit)
        np.testing.assert_array_equal(actual.bucket, expected.bucket)
