"""tf.data programs (TF1 style: one-shot and initializable iterators), run under TensorFlow and under tfnb:
the same elements, dtypes, static shapes and end-of-data errors."""

from __future__ import annotations

import numpy as np
from program_registry import (
    Programs,
    shapes,
    test_program_does_what_tensorflow_does,  # noqa: F401 (pytest collects it from here)
)

PROGRAMS = Programs()
program = PROGRAMS.register

FEATURES = np.arange(12, dtype=np.float32).reshape(6, 2)
LABELS = np.array([0, 1, 0, 1, 1, 0], np.int64)


def drain(tf, element, feed_dict=None, initializer=None, limit: int = 20) -> list:
    """Every element a session reads from `element` until OutOfRangeError (at most `limit`)."""
    values = []
    with tf.Session() as sess:
        if initializer is not None:
            sess.run(initializer, feed_dict)
        try:
            for _ in range(limit):
                values.append(sess.run(element))
        except tf.errors.OutOfRangeError:
            values.append("end")
    return values


@program
def slices_of_a_tuple_batched(tf):
    dataset = tf.data.Dataset.from_tensor_slices((FEATURES, LABELS)).batch(4)
    x, y = dataset.make_one_shot_iterator().get_next()
    return [str(t) for t in dataset.output_types], shapes(x, y), drain(tf, (x, y))


@program
def slices_of_a_dict_mapped(tf):
    dataset = tf.data.Dataset.from_tensor_slices({"x": FEATURES, "y": LABELS})
    dataset = dataset.map(lambda d: {"x": d["x"] * 2.0, "y": tf.cast(d["y"], tf.int32) + 10})
    element = dataset.make_one_shot_iterator().get_next()
    return sorted(element), shapes(element["x"], element["y"]), drain(tf, element)


@program
def map_over_a_tuple_spreads_its_parts(tf):
    dataset = tf.data.Dataset.from_tensor_slices((FEATURES, LABELS)).map(lambda x, y: (tf.reduce_sum(x), y * 2))
    return drain(tf, dataset.make_one_shot_iterator().get_next())


@program
def map_captures_a_tensor(tf):
    scale = tf.constant([1.0, -1.0])
    dataset = tf.data.Dataset.from_tensor_slices(FEATURES).map(lambda x: x * scale)
    return drain(tf, dataset.make_one_shot_iterator().get_next(), limit=3)


@program
def repeat_and_batch_with_a_last_partial_batch(tf):
    dataset = tf.data.Dataset.from_tensor_slices(LABELS).repeat(2).batch(5)
    return drain(tf, dataset.make_one_shot_iterator().get_next())


@program
def batch_dropping_the_remainder_has_a_static_batch_size(tf):
    dataset = tf.data.Dataset.from_tensor_slices(FEATURES).batch(4, drop_remainder=True)
    element = dataset.make_one_shot_iterator().get_next()
    return shapes(element), drain(tf, element)


@program
def range_take_skip_and_filter(tf):
    dataset = tf.data.Dataset.range(3, 30, 2).skip(2).filter(lambda v: v % 3 > 0).take(5)
    return str(dataset.output_types), drain(tf, dataset.make_one_shot_iterator().get_next())


@program
def from_tensors_is_one_element(tf):
    dataset = tf.data.Dataset.from_tensors(FEATURES)
    element = dataset.make_one_shot_iterator().get_next()
    return shapes(element), drain(tf, element)


@program
def zip_and_concatenate(tf):
    left = tf.data.Dataset.range(4)
    right = tf.data.Dataset.from_tensor_slices(FEATURES[:3])
    zipped = tf.data.Dataset.zip((left, right))
    both = zipped.concatenate(tf.data.Dataset.zip((tf.data.Dataset.range(9, 10), right.take(1))))
    return drain(tf, both.make_one_shot_iterator().get_next())


@program
def shuffle_keeps_every_element_once_per_epoch(tf):
    dataset = tf.data.Dataset.range(10).shuffle(4, seed=7).repeat(2).batch(10)
    first, second, end = drain(tf, dataset.make_one_shot_iterator().get_next())
    return sorted(first.tolist()), sorted(second.tolist()), end


@program
def prefetch_gives_the_same_elements(tf):
    dataset = tf.data.Dataset.from_tensor_slices(LABELS).map(lambda v: v + 1).prefetch(2)
    return drain(tf, dataset.make_one_shot_iterator().get_next())


@program
def initializable_iterator_over_a_placeholder(tf):
    data = tf.placeholder(tf.float32, [None, 2])
    iterator = tf.data.Dataset.from_tensor_slices(data).batch(2).make_initializable_iterator()
    element = iterator.get_next()
    with tf.Session() as sess:
        sess.run(iterator.initializer, {data: FEATURES})
        first = sess.run(element)
        sess.run(iterator.initializer, {data: FEATURES[4:]})
        again = [sess.run(element)]
        try:
            sess.run(element)
        except tf.errors.OutOfRangeError:
            again.append("end")
    return shapes(element), first, again


@program
def get_next_before_the_initializer_fails(tf):
    iterator = tf.data.Dataset.range(3).make_initializable_iterator()
    with tf.Session() as sess:
        return sess.run(iterator.get_next())


@program
def one_shot_iterator_cannot_capture_a_placeholder(tf):
    data = tf.placeholder(tf.float32, [None])
    return tf.data.Dataset.from_tensor_slices(data).make_one_shot_iterator()


@program
def reinitializable_iterator_from_structure(tf):
    train = tf.data.Dataset.range(5).batch(2)
    test = tf.data.Dataset.range(10, 13).batch(2)
    iterator = tf.data.Iterator.from_structure(train.output_types, train.output_shapes)
    element = iterator.get_next()
    with tf.Session() as sess:
        sess.run(iterator.make_initializer(train))
        seen = [sess.run(element)]
        sess.run(iterator.make_initializer(test))
        seen += [sess.run(element), sess.run(element)]
    return shapes(element), seen


@program
def make_one_shot_iterator_function(tf):
    dataset = tf.data.Dataset.from_tensor_slices(FEATURES[:2])
    return drain(tf, tf.data.make_one_shot_iterator(dataset).get_next())


@program
def dataset_elements_train_a_model(tf):
    dataset = tf.data.Dataset.from_tensor_slices((FEATURES, LABELS)).repeat().batch(3)
    x, y = dataset.make_one_shot_iterator().get_next()
    w = tf.get_variable("w", [2, 2], initializer=tf.constant_initializer([[0.1, -0.2], [0.3, 0.05]]))
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=tf.matmul(x, w)))
    train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(4):
            losses.append(sess.run([loss, train])[0])
        return losses, sess.run(w)
