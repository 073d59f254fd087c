"""Losses over a sample of the classes, for large vocabularies: tf.nn.nce_loss (noise-contrastive estimation,
Mnih and Teh 2012) and tf.nn.sampled_softmax_loss (Jean et al. 2014), as TF1 builds them.

Both score each example against its true class(es) and a few sampled classes only: the rows of `weights` and
`biases` for those classes are gathered (an embedding lookup, so their gradient is an IndexedSlices), and each
logit has the log of its class's expected count in the sample subtracted. NCE then treats every logit as a
binary (logistic) decision; the sampled softmax takes a softmax over the sampled logits.
"""

from __future__ import annotations

from tfnb.framework import dtypes
from tfnb.framework.graph import name_scope
from tfnb.framework.tensor import Tensor
from tfnb.ops import array_ops, math_ops, nn_ops
from tfnb.ops.candidate_sampling_ops import compute_accidental_hits, log_uniform_candidate_sampler
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.nn_impl import embedding_lookup
from tfnb.ops.selection_ops import scatter_nd
from tfnb.ops.variables import Variable

__all__ = ["nce_loss", "sampled_softmax_loss"]


def _sum_rows(x: Tensor) -> Tensor:
    """The sum of each row, as a product with a column of ones (whose gradient is cheaper than reduce_sum's)."""
    ones = array_ops.ones(array_ops.stack([array_ops.shape(x)[1], 1]), x.dtype)
    return array_ops.reshape(math_ops.matmul(x, ones), [-1])


def _sampled_logits(weights, biases, labels, inputs, num_sampled: int, num_classes: int, num_true: int,
                    sampled_values, remove_accidental_hits: bool, partition_strategy: str, seed=None):
    """(logits [batch, num_true + num_sampled], their target probabilities): true classes first."""
    weights = [weights] if isinstance(weights, (Variable, Tensor)) else list(weights)
    labels = math_ops.cast(convert_to_tensor(labels, name="labels"), dtypes.int64)
    inputs = convert_to_tensor(inputs, name="inputs")
    flat_labels = array_ops.reshape(labels, [-1])
    if sampled_values is None:
        sampled_values = log_uniform_candidate_sampler(labels, num_true, num_sampled, True, num_classes, seed=seed)
    sampled, true_expected, sampled_expected = (array_ops.stop_gradient(convert_to_tensor(v)) for v in sampled_values)
    sampled = math_ops.cast(sampled, dtypes.int64)
    all_ids = array_ops.concat([flat_labels, sampled], 0)
    true_count = array_ops.shape(flat_labels)[0]
    all_weights = math_ops.cast(embedding_lookup(weights, all_ids, partition_strategy=partition_strategy),
                                inputs.dtype)
    true_weights = array_ops.slice(all_weights, [0, 0], array_ops.stack([true_count, -1]))
    sampled_weights = array_ops.slice(all_weights, array_ops.stack([true_count, 0]), [-1, -1])
    all_biases = math_ops.cast(embedding_lookup(biases, all_ids, partition_strategy=partition_strategy), inputs.dtype)
    true_biases = array_ops.slice(all_biases, [0], array_ops.reshape(true_count, [1]))
    sampled_biases = array_ops.slice(all_biases, array_ops.reshape(true_count, [1]), [-1])
    depth = array_ops.shape(true_weights)[1:2]
    # Each example's dot product with each of its num_true true rows.
    per_row = math_ops.multiply(array_ops.expand_dims(inputs, 1),
                                array_ops.reshape(true_weights, array_ops.concat([[-1, num_true], depth], 0)))
    true_logits = array_ops.reshape(_sum_rows(array_ops.reshape(per_row, array_ops.concat([[-1], depth], 0))),
                                    [-1, num_true])
    true_logits += array_ops.reshape(true_biases, [-1, num_true])
    sampled_logits = math_ops.matmul(inputs, sampled_weights, transpose_b=True) + sampled_biases
    if remove_accidental_hits:
        rows, positions, hit_weights = compute_accidental_hits(labels, sampled, num_true=num_true)
        indices = array_ops.stack([rows, math_ops.cast(positions, dtypes.int32)], axis=1)
        shape = array_ops.stack([array_ops.shape(labels)[0], num_sampled])
        sampled_logits += scatter_nd(indices, math_ops.cast(hit_weights, sampled_logits.dtype), shape)
    true_logits -= math_ops.log(math_ops.cast(true_expected, true_logits.dtype))
    sampled_logits -= math_ops.log(math_ops.cast(sampled_expected, sampled_logits.dtype))
    logits = array_ops.concat([true_logits, sampled_logits], 1)
    targets = array_ops.concat([array_ops.ones_like(true_logits) / num_true, array_ops.zeros_like(sampled_logits)], 1)
    return logits, targets


def nce_loss(weights, biases, labels, inputs, num_sampled: int, num_classes: int, num_true: int = 1,
             sampled_values=None, remove_accidental_hits: bool = False, partition_strategy: str = "mod",
             name: str = "nce_loss") -> Tensor:
    """Per example, the noise-contrastive loss: logistic losses of the true classes against num_sampled classes
    drawn (by default) log-uniformly from [0, num_classes); weights are [num_classes, dim], inputs [batch, dim]."""
    with name_scope(name, "nce_loss", [biases, labels, inputs]):
        logits, targets = _sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes, num_true,
                                          sampled_values, remove_accidental_hits, partition_strategy)
        losses = nn_ops.sigmoid_cross_entropy_with_logits(labels=targets, logits=logits, name="sampled_losses")
        return _sum_rows(losses)


def sampled_softmax_loss(weights, biases, labels, inputs, num_sampled: int, num_classes: int, num_true: int = 1,
                         sampled_values=None, remove_accidental_hits: bool = True, partition_strategy: str = "mod",
                         name: str = "sampled_softmax_loss", seed: int | None = None) -> Tensor:
    """Per example, the softmax cross entropy over its true class and num_sampled classes drawn (by default)
    log-uniformly, a stand-in for the full softmax while training."""
    with name_scope(name, "sampled_softmax_loss", [biases, labels, inputs]):
        logits, targets = _sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes, num_true,
                                          sampled_values, remove_accidental_hits, partition_strategy, seed)
        return nn_ops.softmax_cross_entropy_with_logits_v2(labels=array_ops.stop_gradient(targets), logits=logits,
                                                          name="sampled_losses")

