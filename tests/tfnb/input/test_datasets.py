"""tf.data beyond the TF1 programs: ops in the graph, iterators as session resources, prefetch threads, and the
cost of the input pipeline."""

import threading
import time

import numpy as np
import pytest

import tfnb as tf

FEATURES = np.arange(20, dtype=np.float32).reshape(10, 2)


def test_pipeline_is_ops_in_the_graph():
    dataset = tf.data.Dataset.from_tensor_slices(FEATURES).map(lambda x: x + 1).shuffle(4).batch(3).prefetch(1)
    dataset.make_one_shot_iterator().get_next()
    types = [op.type for op in tf.get_default_graph().get_operations()]
    for expected in ("TensorSliceDataset", "MapDataset", "ShuffleDataset", "BatchDatasetV2", "PrefetchDataset",
                     "OneShotIterator", "IteratorGetNext"):
        assert expected in types


def test_each_session_has_its_own_iterator():
    element = tf.data.Dataset.range(3).make_one_shot_iterator().get_next()
    with tf.Session() as first, tf.Session() as second:
        assert [first.run(element), first.run(element), second.run(element)] == [0, 1, 0]


def test_map_reads_a_captured_variable():
    scale = tf.Variable(3.0)
    iterator = tf.data.Dataset.from_tensor_slices(FEATURES).map(lambda x: x * scale).make_initializable_iterator()
    element = iterator.get_next()
    with tf.Session() as sess:
        sess.run(scale.initializer)
        sess.run(iterator.initializer)
        np.testing.assert_array_equal(sess.run(element), FEATURES[0] * 3)
        sess.run(scale.assign(10.0))
        sess.run(iterator.initializer)
        np.testing.assert_array_equal(sess.run(element), FEATURES[0] * 10)


def test_map_may_draw_random_numbers_per_element():
    dataset = tf.data.Dataset.range(50).map(lambda i: tf.random_uniform([]))
    element = dataset.batch(50).make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        assert len(set(sess.run(element).tolist())) == 50


def test_filter_needs_a_scalar_bool():
    with pytest.raises(ValueError, match="scalar boolean"):
        tf.data.Dataset.range(3).filter(lambda v: v + 1)


def test_batching_elements_of_different_shapes_fails():
    dataset = tf.data.Dataset.range(1, 4).map(lambda n: tf.zeros(tf.cast(n, tf.int32))).batch(2)
    element = dataset.make_one_shot_iterator().get_next()
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="different shapes"):
        sess.run(element)


def test_closing_the_session_stops_prefetch_threads():
    element = tf.data.Dataset.range(10**6).prefetch(4).make_one_shot_iterator().get_next()
    before = threading.active_count()
    with tf.Session() as sess:
        sess.run(element)
        assert threading.active_count() == before + 1
    deadline = time.monotonic() + 5
    while threading.active_count() > before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert threading.active_count() == before


def test_errors_in_a_prefetched_pipeline_reach_get_next():
    three = tf.cast(tf.random_uniform([1], 3, 4), tf.int32)  # known only when the step runs
    dataset = tf.data.Dataset.from_tensors(tf.constant([1.0, 2.0])).map(lambda v: tf.reshape(v, three)).prefetch(1)
    element = dataset.make_one_shot_iterator().get_next()
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(element)


def test_input_time_is_a_small_part_of_a_training_step():
    """The digits through shuffle, repeat, batch and prefetch: IteratorGetNext under 5 % of a CNN step."""
    images, labels = tf.datasets.load_digits()
    dataset = tf.data.Dataset.from_tensor_slices((images.reshape(-1, 8, 8, 1).astype(np.float32),
                                                  labels.astype(np.int32)))
    x, y = dataset.shuffle(1000, seed=0).repeat().batch(64).prefetch(1).make_one_shot_iterator().get_next()
    h = tf.layers.conv2d(x, 16, 3, padding="same", activation=tf.nn.relu)
    logits = tf.layers.dense(tf.layers.flatten(h), 10)
    train = tf.train.AdamOptimizer(1e-3).minimize(tf.losses.sparse_softmax_cross_entropy(y, logits))
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    shares = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run(train)
        for _ in range(10):
            metadata = tf.RunMetadata()
            sess.run(train, options=options, run_metadata=metadata)
            stats = metadata.node_stats()
            reading = sum(s.all_end_rel_micros for s in stats if s.op_type == "IteratorGetNext")
            shares.append(reading / sum(s.all_end_rel_micros for s in stats))
    assert np.median(shares) < 0.05
