"""TF1 neural-network ops: activations, softmax and cross entropies, dropout, normalization, embeddings, conv."""

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


@program
def activations(tf):
    x = tf.constant([-3.0, -0.5, 0.0, 0.5, 7.0])
    return run(tf, [tf.nn.relu(x), tf.nn.relu6(x), tf.nn.elu(x), tf.nn.softplus(x), tf.nn.softsign(x),
                    tf.nn.leaky_relu(x), tf.nn.leaky_relu(x, alpha=0.1), tf.nn.sigmoid(x), tf.nn.tanh(x),
                    tf.nn.relu(tf.constant([-1, 2]))])



@program
def softmax_and_log_softmax(tf):
    x = tf.constant(LOGITS)
    results = [tf.nn.softmax(x), tf.nn.softmax(x, axis=0), tf.nn.softmax(x, dim=0), tf.nn.log_softmax(x),
               tf.nn.log_softmax(x, axis=0), tf.nn.softmax(tf.constant([1000.0, 0.0])),
               tf.nn.softmax(tf.constant(CUBE), axis=1)]
    return run(tf, results)



@program
def softmax_cross_entropies(tf):
    logits = tf.constant(LOGITS)
    labels = tf.constant([[0.0, 1.0, 0.0], [0.2, 0.3, 0.5]])
    sparse = tf.constant([1, 2])
    results = [tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits),
               tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits),
               tf.nn.sparse_softmax_cross_entropy_with_logits(labels=sparse, logits=logits),
               tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.cast(sparse, tf.int64), logits=logits),
               tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, axis=0)]
    return shapes(*results), run(tf, results)



@program
def sigmoid_cross_entropy(tf):
    logits = tf.constant([[-2.0, 0.0, 3.0], [100.0, -100.0, 1.0]])
    labels = tf.constant([[0.0, 1.0, 1.0], [1.0, 0.0, 0.5]])
    return run(tf, tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits))



@program(differs="TF 1.x's _sentinel argument rejects positional labels and logits, as tfnb does; TF 2's compat.v1 "
                 "accepts them")
def positional_cross_entropy_arguments_are_a_value_error(tf):
    return tf.nn.softmax_cross_entropy_with_logits(tf.ones([2, 3]), tf.ones([2, 3]))



@program
def sparse_cross_entropy_label_out_of_range_fails(tf):
    labels = tf.placeholder(tf.int32, [2])
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=tf.constant(LOGITS))
    return run(tf, loss, {labels: [0, 3]})



@program
def sparse_cross_entropy_with_dense_labels_is_a_value_error(tf):
    return tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant([[0, 1]]), logits=tf.ones([1, 2]))



@program
def cross_entropy_shapes_must_agree(tf):
    return tf.nn.softmax_cross_entropy_with_logits_v2(labels=tf.ones([2, 4]), logits=tf.ones([2, 3]))



@program
def cross_entropy_of_unknown_batch(tf):
    logits = tf.placeholder(tf.float32, [None, 3])
    labels = tf.placeholder(tf.int64, [None])
    return shapes(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits),
                  tf.nn.softmax_cross_entropy_with_logits_v2(labels=tf.one_hot(labels, 3), logits=logits),
                  tf.nn.softmax(logits))



@program
def bias_add(tf):
    x = tf.constant(CUBE.reshape(1, 2, 3, 4))
    results = [tf.nn.bias_add(x, tf.constant([1.0, 2.0, 3.0, 4.0])),
               tf.nn.bias_add(x, tf.constant([10.0, 20.0]), data_format="NCHW"),
               tf.nn.bias_add(tf.constant(X23), [1.0, 0.0, -1.0])]
    return shapes(*results), run(tf, results)



@program
def bias_add_of_a_wrong_size_is_a_value_error(tf):
    return tf.nn.bias_add(tf.ones([2, 3]), tf.ones([2]))



@program
def dropout_keeping_everything_is_identity(tf):
    x = tf.constant(X23)
    keep = tf.placeholder_with_default(1.0, [])
    return run(tf, [tf.nn.dropout(x, keep_prob=1.0), tf.nn.dropout(x, keep), tf.nn.dropout(x, rate=0.0)])



@program
def dropout_scales_what_it_keeps(tf):
    x = tf.ones([100, 100])
    y = tf.nn.dropout(x, keep_prob=0.5, seed=1)
    kept = tf.reduce_mean(tf.cast(y > 0, tf.float32))
    values = run(tf, [tf.reduce_max(y), tf.round(kept * 10)])
    return shapes(y), values



@program
def dropout_keep_prob_out_of_range_is_a_value_error(tf):
    return tf.nn.dropout(tf.ones([2]), keep_prob=1.5)



@program
def moments(tf):
    x = tf.constant([[1.0, 2.0], [3.0, 6.0], [5.0, 10.0]])
    mean, variance = tf.nn.moments(x, [0])
    mean_all, variance_all = tf.nn.moments(x, axes=[0, 1])
    kept = tf.nn.moments(x, [1], keep_dims=True)
    return shapes(mean, mean_all, *kept), run(tf, [mean, variance, mean_all, variance_all, kept])



@program
def batch_normalization(tf):
    x = tf.constant(CUBE.reshape(2, 1, 3, 4))
    mean, variance = tf.nn.moments(x, [0, 1, 2])
    y = tf.nn.batch_normalization(x, mean, variance, offset=tf.zeros([4]), scale=tf.ones([4]), variance_epsilon=1e-3)
    plain = tf.nn.batch_normalization(x, mean, variance, None, None, 1e-3)
    fused = tf.nn.fused_batch_norm(x, tf.ones([4]), tf.zeros([4]), epsilon=1e-3)
    return shapes(y, *fused), run(tf, [y, plain, fused[0], fused[1]])



@program
def fused_batch_norm_inference(tf):
    x = tf.constant(CUBE.reshape(2, 1, 3, 4))
    y, _, _ = tf.nn.fused_batch_norm(x, tf.ones([4]) * 2, tf.ones([4]), mean=tf.fill([4], 10.0),
                                     variance=tf.fill([4], 4.0), epsilon=0.0, is_training=False)
    return run(tf, y)



@program
def l2_loss_and_l2_normalize(tf):
    x = tf.constant([[3.0, 4.0], [0.0, 0.0]])
    return run(tf, [tf.nn.l2_loss(x), tf.nn.l2_normalize(x, 1), tf.nn.l2_normalize(x, axis=0),
                    tf.nn.l2_normalize(x, dim=1), tf.nn.l2_normalize(x)])



@program
def local_response_normalization(tf):
    x = tf.constant(CUBE.reshape(1, 2, 3, 4) / 10.0)
    return run(tf, [tf.nn.lrn(x, depth_radius=1, bias=1.0, alpha=0.5, beta=0.75),
                    tf.nn.local_response_normalization(x)])



@program
def embedding_lookup(tf):
    params = tf.constant(np.arange(12, dtype=np.float32).reshape(6, 2))
    shards = [tf.constant([[0.0], [3.0]]), tf.constant([[1.0], [4.0]]), tf.constant([[2.0], [5.0]])]
    div_shards = [tf.constant([[0.0], [1.0]]), tf.constant([[2.0], [3.0]]), tf.constant([[4.0], [5.0]])]
    ids = tf.constant([[5, 0], [3, 3]])
    results = [tf.nn.embedding_lookup(params, ids), tf.nn.embedding_lookup(shards, [4, 0, 5]),
               tf.nn.embedding_lookup(div_shards, [4, 0, 5], partition_strategy="div"),
               tf.nn.embedding_lookup(params, [1, 2], max_norm=1.0)]
    return shapes(*results), run(tf, results)



@program
def segment_sums(tf):
    data = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]])
    results = [tf.unsorted_segment_sum(data, [2, 0, 2, -1], 3), tf.unsorted_segment_sum(data, [1, 1, 0, 0], 4),
               tf.math.unsorted_segment_sum(tf.constant([1, 2, 3]), tf.constant([0, 0, 1]), 2),
               tf.segment_sum(data, [0, 0, 1, 1]), tf.segment_sum(data, [0, 2, 2, 3])]
    return shapes(*results[:3]), run(tf, results)



@program(differs="tfnb counts the segments of constant ids while building; TF leaves that dim unknown")
def segment_sum_of_constant_ids_has_a_known_size(tf):
    return shapes(tf.segment_sum(tf.ones([4, 2]), [0, 0, 1, 1]))



@program
def segment_ids_out_of_range_fail(tf):
    ids = tf.placeholder(tf.int32, [2])
    return run(tf, tf.unsorted_segment_sum(tf.ones([2]), ids, 2), {ids: [0, 5]})



@program
def math_namespace_aliases(tf):
    x = tf.constant([[1.0, 4.0], [9.0, 16.0]])
    return run(tf, [tf.math.sqrt(x), tf.math.reduce_sum(x, 1), tf.math.argmax(x, 1), tf.math.log(x),
                    tf.math.maximum(x, 5.0), tf.math.divide(x, 2.0), tf.math.floormod(x, 5.0), tf.math.cumsum(x)])



@program
def softmax_of_ints_is_a_type_error(tf):
    return tf.nn.softmax(tf.constant([1, 2]))



@program
def relu_of_bools_is_a_type_error(tf):
    return tf.nn.relu(tf.constant([True]))



@program
def embedding_id_out_of_range_fails(tf):
    ids = tf.placeholder(tf.int32, [1])
    return run(tf, tf.nn.embedding_lookup(tf.ones([3, 2]), ids), {ids: [3]})



@program
def dropout_with_a_noise_shape(tf):
    y = tf.nn.dropout(tf.ones([50, 4]), keep_prob=0.5, noise_shape=[50, 1], seed=2)
    values = run(tf, y)
    return shapes(y), bool(np.all(values.min(1) == values.max(1)))



@program
def moments_with_keep_dims_and_a_shift(tf):
    x = tf.constant(CUBE)
    mean, variance = tf.nn.moments(x, [0, 2], keep_dims=True)
    shifted = tf.nn.moments(x, [1], shift=tf.constant(5.0))
    return shapes(mean, variance, *shifted), run(tf, [mean, variance, shifted])



@program
def segment_sums_of_rank_2_ids(tf):
    data = tf.constant(CUBE)
    ids = tf.constant([[0, 1, 0], [2, 2, 1]])
    return run(tf, [tf.unsorted_segment_sum(data, ids, 3), tf.unsorted_segment_sum(data, ids, tf.constant(4))])



@program
def unsorted_segment_sum_of_unknown_segment_count(tf):
    n = tf.placeholder(tf.int32, [])
    y = tf.unsorted_segment_sum(tf.ones([3, 2]), [0, 1, 0], n)
    return shapes(y), run(tf, y, {n: 3})



@program
def embedding_lookup_of_unknown_ids(tf):
    ids = tf.placeholder(tf.int64, [None, 2])
    y = tf.nn.embedding_lookup(tf.ones([5, 3]), ids)
    return shapes(y), run(tf, tf.shape(y), {ids: [[1, 2]]})



@program
def conv2d_and_pooling(tf):
    x = tf.constant(CUBE.reshape(1, 2, 3, 4) / 10.0)
    k = tf.constant(np.linspace(-1, 1, 2 * 2 * 4 * 2, dtype=np.float32).reshape(2, 2, 4, 2))
    results = [tf.nn.conv2d(x, k, [1, 1, 1, 1], "SAME"), tf.nn.conv2d(x, k, strides=[1, 1, 1, 1], padding="VALID"),
               tf.nn.max_pool(x, [1, 2, 2, 1], [1, 1, 1, 1], "VALID"),
               tf.nn.avg_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")]
    return shapes(*results), [t.name for t in results], run(tf, results)



@program
def sigmoid_cross_entropy_shapes_must_agree(tf):
    return tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.ones([2, 3]), logits=tf.ones([3, 2]))



@program
def softmax_cross_entropy_with_dim(tf):
    logits = tf.constant(np.array(LOGITS, np.float32).T)
    labels = tf.constant(np.array([[0.0, 1.0, 0.0], [0.2, 0.3, 0.5]], np.float32).T)
    return run(tf, [tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits, dim=0),
                    tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, dim=0)])



@program
def extreme_values_stay_finite(tf):
    x = tf.constant([-1000.0, -50.0, 0.0, 50.0, 1000.0])
    labels = tf.constant([0.0, 1.0, 0.5, 0.0, 1.0])
    return run(tf, [tf.sigmoid(x), tf.nn.softplus(x), tf.nn.log_softmax(x), tf.nn.softmax(x), tf.nn.elu(x),
                    tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=x), tf.tanh(x), tf.nn.softsign(x),
                    tf.reduce_logsumexp(x), tf.exp(x),
                    tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=x)])
