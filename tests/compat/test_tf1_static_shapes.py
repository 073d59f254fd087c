"""TF1 static shape inference through unknown dims and ranks."""

from __future__ import annotations

from program_registry import (
    Programs,
    shapes,
    test_program_does_what_tensorflow_does,  # noqa: F401 (pytest collects it from here)
)

PROGRAMS = Programs()
program = PROGRAMS.register


@program
def static_shapes_of_gather_one_hot_and_where(tf):
    x = tf.placeholder(tf.float32, [None, 4])
    i = tf.placeholder(tf.int32, [None, 2])
    depth = tf.placeholder(tf.int32, [])
    u = tf.placeholder(tf.float32)
    return shapes(tf.gather(x, i), tf.gather(x, [1, 2], axis=1), tf.gather(u, [0]), tf.one_hot(i, depth),
                  tf.one_hot(tf.placeholder(tf.int32), 3), tf.where(x > 0), tf.where(u > 0), tf.where(x > 0, x, x))



@program
def static_shapes_of_layout_ops(tf):
    x = tf.placeholder(tf.float32, [None, 4])
    u = tf.placeholder(tf.float32)
    axis = tf.placeholder(tf.int32, [])
    paddings = tf.placeholder(tf.int32, [2, 2])
    return shapes(tf.concat([x, x], axis), tf.stack([x, x], 1), tf.stack([u, u]), tf.split(x, 2, 1)[0],
                  tf.split(x, 2, 0)[0], tf.squeeze(u), tf.expand_dims(u, -1), tf.expand_dims(x, -1),
                  tf.reshape(u, [-1]),
                  tf.reshape(u, [2, -1]), tf.pad(x, paddings), tf.tile(u, [2, 2]), tf.transpose(x, [1, 0]),
                  tf.reverse(x, [1]), tf.slice(x, [0, 1], [-1, 2]), tf.slice(x, [1, 1], [2, -1]))



@program
def static_shapes_from_shape_arithmetic(tf):
    x = tf.placeholder(tf.float32, [None, 6])
    batch = tf.shape(x)[0]
    return shapes(tf.fill([batch, 3], 0.0), tf.zeros(tf.shape(x)[0:1]), tf.reshape(x, tf.stack([batch, 3, 2])),
                  tf.ones([batch, tf.shape(x)[1] // 2]), tf.zeros(tf.shape(x)[1:]),
                  tf.range(batch), tf.reshape(x, tf.concat([[batch], [2, 3]], 0)))



@program
def static_shapes_of_math_on_unknown_ranks(tf):
    u = tf.placeholder(tf.float32)
    x = tf.placeholder(tf.float32, [None, 3])
    return shapes(u + x, tf.reduce_sum(u, keepdims=True), tf.reduce_mean(u, [0, 1]), tf.argmax(u, 0),
                  tf.argmax(x, 1), tf.matmul(u, u), tf.nn.softmax(u), tf.nn.bias_add(u, [1.0, 2.0]),
                  tf.cumsum(u), tf.cast(u, tf.int32), u[0], u[:, 1], u[..., 0], tf.nn.l2_loss(u), tf.size(u),
                  tf.nn.moments(x, [0])[0], tf.nn.softmax_cross_entropy_with_logits_v2(labels=u, logits=u))



@program
def static_shapes_of_variables_and_assigns(tf):
    v = tf.Variable(tf.zeros([2, 3]))
    w = tf.Variable(tf.placeholder_with_default([1.0], [None]), validate_shape=False)
    return shapes(v.assign(tf.ones([2, 3])), v + 1.0, v.read_value(), tf.assign_add(v, tf.ones([2, 3]))), w.shape.ndims
