"""TF1 programs using TensorArray, map_fn, scan, foldl and foldr, run under TensorFlow and under tfnb.

The harness is in conftest.py, the registry and helpers in program_registry.py.
"""

from __future__ import annotations

import numpy as np
from program_registry import (
    Programs,
    run,
    shapes,
    test_program_does_what_tensorflow_does,  # noqa: F401 (pytest collects it from here)
)

PROGRAMS = Programs()
program = PROGRAMS.register


X = np.arange(12, dtype=np.float32).reshape(4, 3) / 4.0


# -- the TensorArray API ------------------------------------------------------------------------------


@program
def write_read_stack_and_static_shapes(tf):
    ta = tf.TensorArray(tf.float32, size=3)
    w = ta.write(0, [1.0, 2.0]).write(1, [3.0, 4.0]).write(2, [5.0, 6.0])
    fixed = tf.TensorArray(tf.float32, 3, element_shape=[2])
    static = shapes(ta.handle, ta.flow, w.read(1), w.gather([0, 1]), w.stack(), w.concat(), fixed.read(0),
                    fixed.gather([0, 1]), fixed.stack())
    return static, w.flow.op.name, w.read(0).op.type, ta.element_shape.as_list(), run(tf, [w.stack(), w.size()])


@program
def unstack_gather_scatter_split_concat(tf):
    x = tf.constant(X)
    ta = tf.TensorArray(tf.float32, 4, clear_after_read=False).unstack(x)
    scattered = tf.TensorArray(tf.float32, 4).scatter([2, 0, 3, 1], x)
    split = tf.TensorArray(tf.float32, 2, infer_shape=False).split(x, [1, 3])
    return run(tf, [ta.gather([3, 1]), ta.read(2), ta.size(), scattered.stack(), split.concat()])


@program
def dynamic_size_grows(tf):
    ta = tf.TensorArray(tf.int32, size=0, dynamic_size=True).write(4, 7).write(1, 2)
    return run(tf, [ta.size(), ta.read(4), ta.read(1)])


@program
def unwritten_index_with_a_known_shape_reads_zeros(tf):
    return run(tf, [tf.TensorArray(tf.float32, 3, element_shape=[2]).read(1),
                    tf.TensorArray(tf.float32, 3).write(0, [1.0, 2.0]).read(2)])


@program
def unwritten_index_of_unknown_shape_fails(tf):
    return run(tf, tf.TensorArray(tf.float32, 2).read(1))


@program
def writing_twice_fails(tf):
    return run(tf, tf.TensorArray(tf.float32, 2).write(0, 1.0).write(0, 2.0).flow)


@program
def reading_twice_after_clear_fails(tf):
    ta = tf.TensorArray(tf.float32, 1).write(0, 1.0)
    first = ta.read(0)
    with tf.control_dependencies([first]):
        second = ta.read(0)
    return run(tf, [first, second])


@program
def reading_twice_without_clear(tf):
    ta = tf.TensorArray(tf.float32, 1, clear_after_read=False).write(0, 1.0)
    first = ta.read(0)
    with tf.control_dependencies([first]):
        second = ta.read(0)
    return run(tf, [first, second])


@program
def writing_past_the_size_fails(tf):
    return run(tf, tf.TensorArray(tf.float32, 2).write(2, 1.0).flow)


@program
def writing_another_dtype_fails(tf):
    ta = tf.TensorArray(tf.float32, 2)
    return run(tf, tf.TensorArray(tf.int32, handle=ta.handle, flow=ta.flow).write(0, 3).flow)


@program
def inconsistent_static_shapes_fail_when_built(tf):
    return tf.TensorArray(tf.float32, 2).write(0, [1.0, 2.0]).write(1, [1.0])


@program
def empty_array_stacks_with_a_known_shape(tf):
    return run(tf, tf.TensorArray(tf.float32, 0, element_shape=[3]).stack())


@program
def empty_array_of_unknown_shape_cannot_stack(tf):
    return run(tf, tf.TensorArray(tf.float32, 0).stack())


# -- loops --------------------------------------------------------------------------------------------


@program
def while_loop_writes_a_tensor_array(tf):
    x = tf.placeholder(tf.float32, [None, 3])
    n = tf.shape(x)[0]
    inputs = tf.TensorArray(tf.float32, n).unstack(x)
    _, out = tf.while_loop(lambda i, out: i < n,
                           lambda i, out: (i + 1, out.write(i, inputs.read(i) * tf.cast(i, tf.float32))),
                           [0, tf.TensorArray(tf.float32, n)])
    stacked = out.stack()
    return shapes(stacked), type(out).__name__, run(tf, stacked, {x: X})


@program
def map_fn_nested(tf):
    a, b = tf.constant(X), tf.constant([1, 2, 3, 4])
    doubled = tf.map_fn(lambda x: x * 2.0, a)
    pair = tf.map_fn(lambda e: (e[0] * tf.cast(e[1], tf.float32), e[1] + 1), (a, b), dtype=(tf.float32, tf.int32))
    return shapes(doubled, *pair), run(tf, [doubled, pair])


@program
def map_fn_of_unknown_length(tf):
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.map_fn(lambda r: tf.reduce_sum(r), x)
    return shapes(y), run(tf, y, {x: X})


@program
def scan_forward_reverse_and_nested(tf):
    x = tf.constant(X)
    plain = tf.scan(lambda a, e: a + e, x)
    reverse = tf.scan(lambda a, e: a * 2.0 + e, x, initializer=tf.ones([3]), reverse=True)
    nested = tf.scan(lambda a, e: (a[0] + e, a[1] * e), x, initializer=(tf.zeros([3]), tf.ones([3])))
    return shapes(plain, reverse, *nested), run(tf, [plain, reverse, nested])


@program
def foldl_and_foldr(tf):
    x = tf.constant(X)
    return run(tf, [tf.foldl(lambda a, e: a - e, x), tf.foldr(lambda a, e: a - e, x),
                    tf.foldl(lambda a, e: a + tf.reduce_sum(e), x, initializer=tf.constant(1.0)),
                    tf.foldr(lambda a, e: a * 2.0 + e, x, initializer=tf.zeros([3]))])


@program
def map_fn_of_a_scalar_fails(tf):
    return tf.map_fn(lambda x: x, tf.constant(1.0))


# -- gradients ----------------------------------------------------------------------------------------


@program
def gradients_through_tensor_arrays(tf):
    x = tf.constant(X)
    stacked = tf.TensorArray(tf.float32, 4).unstack(x).stack()
    written = tf.TensorArray(tf.float32, 2).write(0, x[1] * 3.0).write(1, x[0]).read(0)
    gathered = tf.TensorArray(tf.float32, 4).scatter([3, 0, 2, 1], x).gather([1, 3])
    return run(tf, tf.gradients([stacked * stacked, written, gathered * x[:2]], x))


@program
def gradients_through_map_fn_scan_and_folds(tf):
    x = tf.constant(X)
    w = tf.constant([0.5, -1.0, 2.0])
    mapped = tf.map_fn(lambda r: tf.sin(r) * w, x)
    scanned = tf.scan(lambda a, r: a * r + w, x)
    folded = tf.foldl(lambda a, r: a * r, x) + tf.foldr(lambda a, r: a + r * w, x, initializer=tf.zeros([3]))
    return run(tf, [tf.gradients(mapped, [x, w]), tf.gradients(scanned, [x, w]), tf.gradients(folded, [x, w])])


@program
def gradient_of_a_hand_written_rnn(tf):
    x = tf.constant(X)
    w = tf.constant([0.5, -0.3, 0.8])
    n = tf.shape(x)[0]
    inputs = tf.TensorArray(tf.float32, n).unstack(x)

    def body(i, h, out):
        h = tf.tanh(h * w + inputs.read(i))
        return i + 1, h, out.write(i, h)

    _, h, out = tf.while_loop(lambda i, h, out: i < n, body, [0, tf.zeros([3]), tf.TensorArray(tf.float32, n)])
    loss = tf.reduce_sum(out.stack()) + tf.reduce_sum(h)
    return run(tf, [loss, tf.gradients(loss, [x, w])])
