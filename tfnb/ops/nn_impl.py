"""Composite neural-network functions: dropout, moments, batch normalization, LRN, embeddings.

Most are built from existing ops, as TF builds them, so their gradients come from those ops' rules;
local response normalization is an op of its own (LRN, with LRNGrad for its gradient).
"""

from __future__ import annotations

import numbers

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.graph import colocate_with, get_default_graph, name_scope
from tfnb.framework.op_registry import Example, register_gradient, register_op
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape, as_shape
from tfnb.ops import array_ops, math_ops, nn_ops
from tfnb.ops.array.gathering import unsorted_segment_sum
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.inference import check_dtype_in, constant_value, deprecated_alias
from tfnb.ops.partitioned_variables import PartitionedVariable
from tfnb.ops.random_ops import random_uniform
from tfnb.ops.variables import Variable

__all__ = ["dropout", "moments", "batch_normalization", "fused_batch_norm", "l2_normalize",
           "local_response_normalization", "lrn", "embedding_lookup", "weighted_cross_entropy_with_logits",
           "xw_plus_b"]


# -- dropout --------------------------------------------------------------------------------------


def dropout(x, keep_prob=None, noise_shape=None, seed: int | None = None, name: str | None = None,
            rate=None) -> Tensor:
    """Each element (or noise_shape block) of x kept with probability keep_prob and scaled by 1/keep_prob, else 0.

    Give exactly one of keep_prob and rate (= 1 - keep_prob); either may be a scalar tensor.
    """
    if keep_prob is None and rate is None:
        raise ValueError("You must provide a rate to dropout.")
    if keep_prob is not None and rate is not None:
        raise ValueError("Cannot specify both 'keep_prob' and 'rate'.")
    with name_scope(name, "dropout", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_floating:
            raise ValueError(f"x has to be a floating point tensor since it's going to be scaled. "
                             f"Got a {x.dtype.name} tensor instead.")
        keep = _keep_probability(keep_prob, rate, x.dtype)
        if constant_value(keep) == 1:
            return x
        # keep + U[0, 1) is >= 1, so floors to 1, with probability keep; else it floors to 0.
        kept = math_ops.floor(keep + random_uniform(_noise_shape(x, noise_shape), seed=seed, dtype=x.dtype))
        result = math_ops.multiply(x / keep, kept, name=scope)
        result.set_shape(x.shape)
        return result


def _keep_probability(keep_prob, rate, dtype: dtypes.DType) -> Tensor:
    """keep_prob, or 1 - rate, as a scalar tensor of `dtype`; Python numbers are range-checked."""
    if isinstance(keep_prob, numbers.Real) and not 0 < keep_prob <= 1:
        raise ValueError(f"keep_prob must be a scalar tensor or a float in the range (0, 1], got {keep_prob:g}")
    if isinstance(rate, numbers.Real) and not 0 <= rate < 1:
        raise ValueError(f"rate must be a scalar tensor or a float in the range [0, 1), got {rate:g}")
    if keep_prob is None:
        keep = 1 - rate if isinstance(rate, numbers.Real) else math_ops.subtract(1, convert_to_tensor(rate, dtype))
    else:
        keep = keep_prob
    keep = convert_to_tensor(keep, dtype=dtype, name="keep_prob")
    if keep.shape.ndims not in (None, 0):
        raise ValueError(f"keep_prob must be a scalar; got shape {keep.shape}")
    return keep


def _noise_shape(x: Tensor, noise_shape):
    """noise_shape, with its unknown dims taken from x's static shape; x's shape if None."""
    if noise_shape is None:
        return array_ops.shape(x)
    if isinstance(noise_shape, Tensor):
        return noise_shape
    requested = as_shape(noise_shape)
    if x.shape.ndims is None or requested.ndims != x.shape.ndims:
        return noise_shape
    return TensorShape([n if n is not None else d for n, d in zip(requested.as_tuple(), x.shape.as_tuple())])


# -- moments and normalization --------------------------------------------------------------------


def moments(x, axes, shift=None, name: str | None = None, keep_dims=None, keepdims=None) -> tuple[Tensor, Tensor]:
    """The mean and (biased) variance of x over `axes`; float16 is computed in float32. `shift` is unused, as in TF."""
    keepdims = bool(deprecated_alias("keepdims", keepdims, "keep_dims", keep_dims))
    with name_scope(name, "moments", [x, axes]):
        x = convert_to_tensor(x)
        y = math_ops.cast(x, dtypes.float32) if x.dtype is dtypes.float16 else x
        mean = math_ops.reduce_mean(y, axes, keepdims=True, name="mean")
        # The mean's share of the variance's gradient is zero anyway: stop_gradient only saves work.
        variance = math_ops.reduce_mean(math_ops.squared_difference(y, array_ops.stop_gradient(mean)), axes,
                                        keepdims=True, name="variance")
        if not keepdims:
            mean, variance = array_ops.squeeze(mean, axes), array_ops.squeeze(variance, axes)
        if x.dtype is dtypes.float16:
            return math_ops.cast(mean, dtypes.float16), math_ops.cast(variance, dtypes.float16)
        return mean, variance


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon: float,
                        name: str | None = None) -> Tensor:
    """(x - mean) / sqrt(variance + variance_epsilon) * scale + offset; offset and scale may be None."""
    with name_scope(name, "batchnorm", [x, mean, variance, scale, offset]):
        x, mean = convert_to_tensor(x), convert_to_tensor(mean)
        inv = math_ops.rsqrt(convert_to_tensor(variance) + variance_epsilon)
        if scale is not None:
            inv = inv * convert_to_tensor(scale)
        # TF's form: one multiply-add over x, the rest on the (smaller) statistics.
        shift = -mean * inv if offset is None else convert_to_tensor(offset) - mean * inv
        return x * math_ops.cast(inv, x.dtype) + math_ops.cast(shift, x.dtype)


def fused_batch_norm(x, scale, offset, mean=None, variance=None, epsilon: float = 0.001,
                     data_format: str = "NHWC", is_training: bool = True,
                     name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """Batch normalization of a 4-D x per channel: (y, batch mean, batch variance).

    tfnb differs: it is composed of moments and batch_normalization, not one FusedBatchNorm op.
    """
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"data_format must be NHWC or NCHW; got {data_format!r}")
    with name_scope(name, "FusedBatchNorm", [x, scale, offset]):
        x = convert_to_tensor(x)
        if x.shape.ndims not in (None, 4):
            raise ValueError(f"x must be 4-D; got shape {x.shape}")
        axes, channel_shape = ([0, 1, 2], [-1]) if data_format == "NHWC" else ([0, 2, 3], [-1, 1, 1])
        epsilon = max(epsilon, 1.001e-5)  # TF's floor, which cuDNN requires
        if is_training:
            mean, variance = moments(x, axes)
            count = math_ops.cast(array_ops.size(x) // array_ops.size(mean), mean.dtype)
            # TF reports the unbiased variance (for moving averages) but normalizes with the biased one.
            reported = variance * count / math_ops.maximum(count - 1, 1)
        else:
            if mean is None or variance is None:
                raise ValueError("fused_batch_norm needs mean and variance when is_training is False")
            reported = variance = convert_to_tensor(variance)
            mean = convert_to_tensor(mean)
        mean_, variance_, offset_, scale_ = (array_ops.reshape(t, channel_shape)
                                             for t in (mean, variance, offset, scale))
        y = batch_normalization(x, mean_, variance_, offset_, scale_, epsilon)
        return y, mean, reported


def l2_normalize(x, axis=None, epsilon: float = 1e-12, name: str | None = None, dim=None) -> Tensor:
    """x / sqrt(max(sum(x ** 2, axis), epsilon)): unit L2 norm along `axis` (all axes if None)."""
    axis = deprecated_alias("axis", axis, "dim", dim)
    with name_scope(name, "l2_normalize", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        square_sum = math_ops.reduce_sum(math_ops.square(x), axis, keepdims=True)
        return math_ops.multiply(x, math_ops.rsqrt(math_ops.maximum(square_sum, epsilon)), name=scope)


def weighted_cross_entropy_with_logits(targets=None, logits=None, pos_weight=None, name: str | None = None,
                                       labels=None) -> Tensor:
    """sigmoid_cross_entropy_with_logits with the positive term weighted by `pos_weight` (TF1 names the labels
    `targets`; `labels` is TF's later name)."""
    targets = deprecated_alias("targets", targets, "labels", labels)
    with name_scope(name, "logistic_loss", [logits, targets]) as scope:
        logits = convert_to_tensor(logits, name="logits")
        targets = convert_to_tensor(targets, dtype=logits.dtype, name="targets")
        if not logits.shape.is_compatible_with(targets.shape):
            raise ValueError(f"logits and targets must have the same shape ({logits.shape} vs {targets.shape})")
        # (1 - z) * x + (1 + (q - 1) * z) * log(1 + exp(-x)), with log(1 + exp(-x)) computed without overflow.
        log_weight = 1 + (pos_weight - 1) * targets
        softplus_of_negative = math_ops.log1p(math_ops.exp(-math_ops.abs(logits))) + nn_ops.relu(-logits)
        return math_ops.add((1 - targets) * logits, log_weight * softplus_of_negative, name=scope)


def xw_plus_b(x, weights, biases, name: str | None = None) -> Tensor:
    """matmul(x, weights) + biases, as one bias_add."""
    with name_scope(name, "xw_plus_b", [x, weights, biases]) as scope:
        product = math_ops.matmul(convert_to_tensor(x, name="x"), convert_to_tensor(weights, name="weights"))
        return nn_ops.bias_add(product, convert_to_tensor(biases, name="biases"), name=scope)


# -- local response normalization -----------------------------------------------------------------


def _infer_lrn(op):
    x = op.inputs[0]
    check_dtype_in(op, x.dtype, op.op_def.dtypes)
    if x.shape.ndims not in (None, 4):
        raise ValueError(f"input must be 4-dimensional; got shape {x.shape}")
    return [(x.dtype, x.shape)]


def _infer_lrn_grad(op):
    check_dtype_in(op, op.inputs[0].dtype, op.op_def.dtypes)
    for i in (1, 2):
        if op.inputs[i].dtype is not op.inputs[0].dtype:
            raise TypeError(f"LRNGrad inputs have dtypes {op.inputs[0].dtype.name} and {op.inputs[i].dtype.name}")
    shape = op.inputs[0].shape.merge_with(op.inputs[1].shape).merge_with(op.inputs[2].shape)
    return [(op.inputs[0].dtype, shape)]


def _np_lrn_norm(x, radius: int, bias: float, alpha: float):
    """bias + alpha * sum of squares over the depth window, one channel at a time (the slow reference)."""
    depth = x.shape[-1]
    squares = x.astype(np.float64) ** 2
    sums = np.stack([squares[..., max(0, d - radius):d + radius + 1].sum(-1) for d in range(depth)], -1)
    return bias + alpha * sums


def _np_lrn(x, radius=5, bias=1.0, alpha=1.0, beta=0.5):
    return x * _np_lrn_norm(x, radius, bias, alpha) ** -beta


def _np_lrn_grad(grads, x, radius=5, bias=1.0, alpha=1.0, beta=0.5):
    """The chain rule through every (output channel, input channel) pair of a window, one pair at a time."""
    x64, norm = x.astype(np.float64), _np_lrn_norm(x, radius, bias, alpha)
    result = grads * norm ** -beta
    depth = x.shape[-1]
    for i in range(depth):
        for j in range(max(0, i - radius), min(depth, i + radius + 1)):
            result[..., j] -= grads[..., i] * x64[..., i] * 2 * alpha * beta * x64[..., j] * norm[..., i] ** (-beta - 1)
    return result


_LRN_ARGS = {"depth_radius": 2, "bias": 1.5, "alpha": 0.3, "beta": 0.75}

register_op("LRN", _infer_lrn, dtypes=dtypes.FLOATS, examples=[
    Example(lambda x: local_response_normalization(x), _np_lrn, inputs=((2, 2, 3, 8),), atol=1e-5),
    Example(lambda x: lrn(x, **_LRN_ARGS), lambda x: _np_lrn(x, 2, 1.5, 0.3, 0.75), inputs=((1, 3, 2, 7),),
            atol=1e-5),
    Example(lambda x: lrn(x, depth_radius=4, alpha=0.1), lambda x: _np_lrn(x, 4, 1.0, 0.1), inputs=((1, 1, 2, 3),)),
], attrs={"alpha": "float", "beta": "float", "bias": "float", "depth_radius": "int"})

register_op("LRNGrad", _infer_lrn_grad, dtypes=dtypes.FLOATS, examples=[
    Example(lambda g, x: _lrn_grad(g, x, lrn(x, **_LRN_ARGS), _LRN_ARGS),
            lambda g, x: _np_lrn_grad(g, x, 2, 1.5, 0.3, 0.75), inputs=((2, 1, 2, 7), (2, 1, 2, 7)),
            atol=1e-5, differentiable=False),
    Example(lambda g, x: _lrn_grad(g, x, lrn(x), {"depth_radius": 5, "bias": 1.0, "alpha": 1.0, "beta": 0.5}),
            _np_lrn_grad, inputs=((1, 2, 2, 4), (1, 2, 2, 4)), atol=1e-5, differentiable=False),
], attrs={"alpha": "float", "beta": "float", "bias": "float", "depth_radius": "int"})


def local_response_normalization(input, depth_radius: int = 5, bias: float = 1.0, alpha: float = 1.0,
                                 beta: float = 0.5, name: str | None = None) -> Tensor:
    """input / (bias + alpha * sum of input^2 over depth_radius channels each side) ** beta, on the last axis.

    tfnb differs: float64 is accepted too (TF's LRN takes float16 and float32).
    """
    attrs = {"depth_radius": int(depth_radius), "bias": float(bias), "alpha": float(alpha), "beta": float(beta)}
    return get_default_graph().create_op("LRN", (convert_to_tensor(input),), attrs, name).outputs[0]


lrn = local_response_normalization


def _lrn_grad(grads: Tensor, x: Tensor, y: Tensor, attrs: dict) -> Tensor:
    return get_default_graph().create_op("LRNGrad", (grads, x, y), dict(attrs), None).outputs[0]


@register_gradient("LRN")
def _lrn_gradient(op, grad):
    return [_lrn_grad(grad, op.inputs[0], op.outputs[0], op.attrs)]


# -- embeddings -----------------------------------------------------------------------------------


def embedding_lookup(params, ids, partition_strategy: str = "mod", name: str | None = None,
                     validate_indices: bool = True, max_norm=None) -> Tensor:
    """The rows of `params` at `ids`; `params` may be a list of shards split by 'mod' or 'div' of the id.

    With a variable as params, the gradient is an IndexedSlices holding only the rows looked up.
    """
    shards = [_as_shard(p) for p in (params if isinstance(params, (list, tuple, PartitionedVariable)) else [params])]
    if not shards:
        raise ValueError("Need at least one param")
    if partition_strategy not in ("mod", "div"):
        raise ValueError(f"Unrecognized partition strategy: {partition_strategy}")
    with name_scope(name, "embedding_lookup", [ids]) as scope:
        ids = convert_to_tensor(ids, name="ids")
        if len(shards) == 1:
            with colocate_with(shards[0]):
                rows = _clip_by_norm(array_ops.gather(shards[0], ids, name=scope), ids, max_norm)
            return array_ops.identity(rows)
        return _clip_by_norm(_sharded_lookup(shards, ids, partition_strategy), ids, max_norm)


def _sharded_lookup(shards: list, ids: Tensor, strategy: str) -> Tensor:
    """Each id's row gathered from its shard, then put back in the order of `ids`."""
    flat_ids = array_ops.reshape(ids, [-1])
    shard_of, row_in_shard = (_mod_assignment if strategy == "mod" else _div_assignment)(shards, flat_ids)
    positions, rows = [], []
    for index, shard in enumerate(shards):
        with colocate_with(shard):
            picked = array_ops.reshape(math_ops.where(math_ops.equal(shard_of, index)), [-1])
            positions.append(picked)
            rows.append(array_ops.gather(shard, array_ops.gather(row_in_shard, picked)))
    # positions together are a permutation of 0..n-1, so this sum only scatters each row to its place.
    stitched = unsorted_segment_sum(array_ops.concat(rows, 0), array_ops.concat(positions, 0),
                                    array_ops.size(flat_ids, out_type=flat_ids.dtype))
    row_shape = array_ops.shape(shards[0])[1:]
    result = array_ops.reshape(stitched, array_ops.concat([array_ops.shape(ids), row_shape], 0))
    result.set_shape(ids.shape.concatenate(shards[0].shape[1:]))
    return result


def _as_shard(params):
    """A variable as it is (a gather reads it, so its gradient can be sparse); anything else as a tensor."""
    return params if isinstance(params, (Tensor, Variable)) else convert_to_tensor(params, name="params")


def _mod_assignment(shards: list, flat_ids: Tensor) -> tuple[Tensor, Tensor]:
    """'mod': id i lives in shard i % n, at row i // n."""
    count = len(shards)
    return flat_ids % count, flat_ids // count


def _div_assignment(shards: list, flat_ids: Tensor) -> tuple[Tensor, Tensor]:
    """'div': ids split into contiguous ranges, the first (total % n) shards one row longer."""
    count = len(shards)
    first_dims = [shard.shape.as_tuple()[0] for shard in shards]
    if None in first_dims:
        sizes = array_ops.stack([array_ops.shape(shard, out_type=flat_ids.dtype)[0] for shard in shards])
        total = math_ops.reduce_sum(sizes)
    else:
        total = convert_to_tensor(sum(first_dims), dtype=flat_ids.dtype)
    per_shard, extras = total // count, total % count
    shard_of = math_ops.maximum(flat_ids // (per_shard + 1), (flat_ids - extras) // per_shard)
    row_in_shard = math_ops.where(shard_of < extras, flat_ids % (per_shard + 1), (flat_ids - extras) % per_shard)
    return shard_of, row_in_shard


def _clip_by_norm(embeddings: Tensor, ids: Tensor, max_norm) -> Tensor:
    """Each embedding (the dims after ids' dims) scaled down to L2 norm max_norm where it is longer."""
    if max_norm is None:
        return embeddings
    id_rank, rank = ids.shape.ndims, embeddings.shape.ndims
    axes = (list(range(id_rank, rank)) if id_rank is not None and rank is not None
            else array_ops.range(array_ops.rank(ids), array_ops.rank(embeddings)))
    squares = math_ops.reduce_sum(embeddings * embeddings, axes, keepdims=True)
    # sqrt has an infinite gradient at 0: take it only where the sum is positive.
    positive = squares > 0
    norm = math_ops.where(positive, math_ops.sqrt(math_ops.where(positive, squares, array_ops.ones_like(squares))),
                          squares)
    return embeddings * max_norm / math_ops.maximum(norm, max_norm)
