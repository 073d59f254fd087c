"""TF1 gradients: tf.gradients through math, layout and nn ops, control flow and variables."""

from __future__ import annotations

import numpy as np
from program_registry import (
    CUBE,
    LOGITS,
    X23,
    Programs,
    run,
    shapes,
    test_program_does_what_tensorflow_does,  # noqa: F401 (pytest collects it from here)
)

PROGRAMS = Programs()
program = PROGRAMS.register


def gradient_values(tf, ys, xs, feed_dict=None, init: bool = False, **options):
    """tf.gradients(ys, xs, **options), run as dense values (None where no gradient flows)."""
    grads = [None if g is None else tf.convert_to_tensor(g) for g in tf.gradients(ys, xs, **options)]
    present = [g for g in grads if g is not None]
    values = iter(run(tf, present, feed_dict, init))
    return [None if g is None else next(values) for g in grads]


@program
def gradient_of_a_polynomial(tf):
    x = tf.constant([1.0, -2.0, 3.0])
    y = tf.reduce_sum(3 * x ** 2 - 2 * x + 1)
    return gradient_values(tf, y, x) + gradient_values(tf, [y, tf.reduce_sum(x)], [x])



@program
def gradient_of_a_dense_layer_loss(tf):
    x = tf.constant(X23)
    w = tf.constant([[0.1, -0.2], [0.3, 0.4], [-0.5, 0.6]])
    b = tf.constant([0.1, -0.1])
    labels = tf.constant([0, 1])
    logits = tf.matmul(tf.nn.relu(x - 2.0), w) + b
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    return gradient_values(tf, loss, [x, w, b])



@program
def gradients_of_broadcasting_ops(tf):
    x = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    r = tf.constant([1.0, 2.0, 3.0])
    c = tf.constant([[2.0], [3.0]])
    s = tf.constant(2.0)
    y = tf.reduce_sum((x + r) * c / s - tf.maximum(x, r) + tf.squared_difference(x, c) - tf.pow(x, s))
    return gradient_values(tf, y, [x, r, c, s])



@program
def gradients_of_unary_math(tf):
    x = tf.constant([0.5, 1.0, 2.0])
    ys = [tf.exp(x), tf.log(x), tf.sqrt(x), tf.rsqrt(x), tf.tanh(x), tf.sigmoid(x), tf.sin(x), tf.cos(x),
          tf.abs(x - 1.0), tf.square(x), tf.reciprocal(x), tf.log1p(x), tf.nn.softplus(x), tf.nn.elu(x - 1.0),
          tf.nn.relu6(x * 4.0), tf.nn.leaky_relu(x - 1.0), tf.nn.softsign(x)]
    return [gradient_values(tf, y, x)[0] for y in ys]



@program
def gradients_of_reductions(tf):
    x = tf.constant([[1.0, 3.0, 3.0], [2.0, -1.0, 0.5]])
    ys = [tf.reduce_sum(x, 1), tf.reduce_mean(x), tf.reduce_max(x, 1), tf.reduce_min(x), tf.reduce_prod(x, 0),
          tf.reduce_logsumexp(x, 1), tf.reduce_mean(x, 0, keepdims=True), tf.cumsum(x, 1), tf.cumprod(x, 1)]
    return [gradient_values(tf, y, x)[0] for y in ys]



@program
def gradients_of_layout_ops(tf):
    x = tf.constant(CUBE[0])
    ys = [tf.reshape(x, [4, 3]), tf.transpose(x), tf.concat([x, 2 * x], 1), tf.split(x, 2, 1)[1], x[1:, ::-2],
          tf.tile(x, [2, 1]), tf.pad(x, [[1, 0], [0, 2]]), tf.gather(x, [2, 0, 2]), tf.stack([x, x], 1),
          tf.expand_dims(x, 0), tf.reverse(x, [1]), tf.slice(x, [1, 1], [2, 2]), tf.unstack(x)[1]]
    return [gradient_values(tf, tf.reduce_sum(y * y), x)[0] for y in ys]



@program
def gradients_of_nn_ops(tf):
    x = tf.constant(LOGITS)
    labels = tf.constant([[0.0, 1.0, 0.0], [0.2, 0.3, 0.5]])
    weights = tf.constant([[1.0, -1.0, 2.0], [0.5, 0.0, 3.0]])
    ys = [tf.nn.softmax(x), tf.nn.log_softmax(x), tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=x),
          tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=x), tf.nn.l2_loss(x),
          tf.nn.l2_normalize(x, 1), tf.nn.bias_add(x, [1.0, 2.0, 3.0])]
    return [gradient_values(tf, tf.reduce_sum(y * weights), x)[0] for y in ys]



@program
def gradient_of_cross_entropy_wrt_labels(tf):
    x = tf.constant(LOGITS)
    labels = tf.constant([[0.0, 1.0, 0.0], [0.2, 0.3, 0.5]])
    loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=x)
    old = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=x)
    return gradient_values(tf, loss, labels) + gradient_values(tf, old, labels)



@program
def gradient_of_moments_and_batch_norm(tf):
    x = tf.constant([[1.0, 2.0], [3.0, 6.0], [5.0, 11.0]])
    mean, variance = tf.nn.moments(x, [0])
    y = tf.nn.batch_normalization(x, mean, variance, tf.constant([0.5, 0.0]), tf.constant([1.0, 2.0]), 1e-3)
    return gradient_values(tf, tf.reduce_sum(y * tf.constant([[1.0, 0.0], [2.0, 1.0], [0.0, 3.0]])), x)



@program
def gradient_with_grad_ys(tf):
    x = tf.constant([1.0, 2.0])
    y = x * x
    return gradient_values(tf, y, x, grad_ys=tf.constant([10.0, -1.0]))



@program
def gradient_of_an_unconnected_tensor_is_none(tf):
    x, z = tf.constant(1.0), tf.constant(2.0)
    return gradient_values(tf, x * 3.0, [x, z])



@program
def stop_gradient_and_stop_gradients(tf):
    x = tf.constant(3.0)
    a = x * x
    y = a + tf.stop_gradient(x) * x
    return gradient_values(tf, y, x) + gradient_values(tf, y, x, stop_gradients=[a])



@program
def gradient_wrt_a_stopped_tensor(tf):
    x = tf.constant(3.0)
    a = x * x
    return gradient_values(tf, a + x, [x, a], stop_gradients=[a])



@program
def gradient_through_where_and_integer_paths(tf):
    x = tf.constant([-1.0, 2.0, -3.0])
    y = tf.where(x > 0, x * x, -x) + tf.cast(tf.cast(x, tf.int32), tf.float32)
    return gradient_values(tf, tf.reduce_sum(y), x)



@program
def gradient_of_a_gather_is_sparse(tf):
    params = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    y = tf.reduce_sum(tf.gather(params, [2, 0, 2]) * tf.constant([[1.0], [2.0], [3.0]]))
    grad = tf.gradients(y, params)[0]
    return type(grad).__name__, run(tf, tf.convert_to_tensor(grad))



@program
def gradient_of_embedding_lookup_and_segment_sum(tf):
    params = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    data = tf.constant([1.0, 2.0, 3.0])
    y = tf.reduce_sum(tf.nn.embedding_lookup(params, [[1, 1], [0, 2]]) ** 2)
    z = tf.reduce_sum(tf.unsorted_segment_sum(data, [1, 0, 1], 2) * tf.constant([3.0, 4.0]))
    return (run(tf, tf.convert_to_tensor(tf.gradients(y, params)[0])), gradient_values(tf, z, data))



@program
def gradient_wrt_variables(tf):
    w = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    b = tf.get_variable("b", initializer=tf.constant([0.5, -0.5]))
    loss = tf.reduce_sum(tf.square(tf.matmul(tf.constant([[1.0, 1.0]]), w) + b)) + tf.reduce_sum(w)
    return gradient_values(tf, loss, [w, b], init=True)



@program
def gradient_of_an_int_tensor_is_none(tf):
    x = tf.constant([1.0, 2.0])
    n = tf.constant(3)
    return gradient_values(tf, x * tf.cast(n, tf.float32), [n])



@program
def gradient_through_cond(tf):
    x = tf.constant(2.0)
    p = tf.placeholder(tf.bool, [])
    y = tf.cond(p, lambda: x * x, lambda: x * 3.0)
    grad = tf.gradients(y, x)[0]
    return run(tf, grad, {p: True}), run(tf, grad, {p: False})



@program
def second_order_gradient(tf):
    x = tf.constant([1.0, 2.0])
    y = tf.reduce_sum(x ** 3)
    g = tf.gradients(y, x)[0]
    return run(tf, tf.gradients(g, x, grad_ys=tf.ones([2]))[0])



@program
def gradients_with_unknown_shapes(tf):
    x = tf.placeholder(tf.float32, [None, 3])
    w = tf.constant([[1.0], [2.0], [3.0]])
    labels = tf.placeholder(tf.int32, [None])
    logits = tf.concat([tf.matmul(x, w), tf.reduce_mean(x, 1, keepdims=True)], 1)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    loss += tf.reduce_sum(tf.reshape(x, [-1]) ** 2) + tf.reduce_max(x) + tf.reduce_sum(tf.gather(x, [0]))
    grads = [tf.convert_to_tensor(g) for g in tf.gradients(loss, [x, w])]
    return shapes(*grads), run(tf, grads, {x: X23, labels: [0, 1]})



@program
def gradients_summed_over_ys(tf):
    x = tf.constant([1.0, 2.0])
    y1, y2 = x * 3.0, tf.reduce_sum(x ** 2)
    return gradient_values(tf, [y1, y2], x) + gradient_values(tf, [y1, y2], x, grad_ys=[tf.ones([2]), 2.0])



@program
def gradients_of_casts_and_edges(tf):
    x = tf.constant([0.0, 1.0, -2.0])
    ys = [tf.cast(tf.cast(x, tf.float64) * 2.0, tf.float32), tf.nn.relu(x), tf.abs(x), tf.maximum(x, 0.0),
          tf.minimum(x, 1.0), tf.clip_by_value(x, -1.0, 0.5), tf.sign(x), tf.round(x), tf.floor(x), tf.pow(x, 2.0),
          tf.where(x > 0.5, x, tf.zeros_like(x))]
    return [gradient_values(tf, tf.reduce_sum(y), x)[0] for y in ys]



@program
def gradient_of_an_integer_tensor(tf):
    x = tf.constant([1, 2])
    return gradient_values(tf, tf.reduce_sum(x * x), x)



@program
def gradient_of_a_placeholder_fed_value(tf):
    x = tf.placeholder(tf.float32, [2])
    y = tf.reduce_sum(tf.exp(x) * x)
    return gradient_values(tf, y, x, {x: [0.5, 1.0]})



@program
def gradient_of_softmax_cross_entropy_with_unknown_batch(tf):
    logits = tf.placeholder(tf.float32, [None, 3])
    labels = tf.placeholder(tf.float32, [None, 3])
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits))
    return gradient_values(tf, loss, logits, {logits: LOGITS, labels: [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]})



@program
def gradient_through_a_variable_read_twice(tf):
    v = tf.Variable(3.0)
    loss = v * v + 2.0 * v
    return gradient_values(tf, loss, v, init=True)



@program
def gradient_of_a_tensor_wrt_itself(tf):
    x = tf.constant([1.0, 2.0])
    return gradient_values(tf, x, x)



@program
def gradient_of_dropout_and_l2_loss(tf):
    x = tf.constant(X23)
    y = tf.nn.l2_loss(tf.nn.dropout(x, keep_prob=1.0)) + tf.nn.l2_loss(x[:, 1:])
    return gradient_values(tf, y, x)



@program
def gradients_of_batch_matmul_and_broadcast(tf):
    a = tf.constant(np.arange(12, dtype=np.float32).reshape(2, 2, 3) / 10)
    b = tf.constant(np.arange(6, dtype=np.float32).reshape(3, 2) / 10)
    return gradient_values(tf, tf.reduce_sum(tf.matmul(a, b) ** 2), [a, b])



@program
def gradients_of_local_response_normalization(tf):
    x = tf.constant(CUBE.reshape(1, 2, 3, 4) / 10.0)
    return gradient_values(tf, tf.reduce_sum(tf.nn.lrn(x, depth_radius=1) * tf.range(4.0)), x)



@program
def gradient_through_fused_batch_norm(tf):
    x = tf.constant(CUBE.reshape(2, 1, 3, 4) / 10.0)
    scale, offset = tf.constant([1.0, 2.0, 0.5, 1.0]), tf.constant([0.0, 1.0, 0.0, -1.0])
    y, _, _ = tf.nn.fused_batch_norm(x, scale, offset, epsilon=1e-3)
    return gradient_values(tf, tf.reduce_sum(tf.sin(y)), [x, scale, offset])



@program
def gradient_through_a_while_loop(tf):
    x = tf.constant(1.5)
    w = tf.constant([1.0, 2.0])
    _, y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * x + tf.reduce_sum(w)), (tf.constant(0), x))
    _, v = tf.while_loop(lambda i, v: i < 2, lambda i, v: (i + 1, tf.tanh(v) * w), (tf.constant(0), w * x))
    return gradient_values(tf, y, [x, w]) + gradient_values(tf, tf.reduce_sum(v), [x, w])
